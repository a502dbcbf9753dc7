"""A flexible pendulum with a rigid tip mass, written for ParaView (issue 14, item 1).

A 1 m aluminium beam (10 beam elements, 4 Craig-Bampton modes, frame at the hub) hangs from a
revolute joint at the origin (axis y), starts horizontal along x and swings down under gravity
(-z); a 2 kg rigid sphere (radius 5 cm) is welded to its tip (Fixed joint), and a 1 kg rigid block
without geometry (drawn as its box of equivalent inertia) hangs on a second revolute joint below
the tip. ``Result.export_paraview(path)`` writes all three bodies and both joints to one
transient VTKHDF file::

    .venv/bin/python -m verification.examples.paraview_pendulum out/pendulum     # -> out/pendulum.vtkhdf

Open it in ParaView (File > Open, Apply) and press Play.
"""
from __future__ import annotations

import sys

import numpy as np

import flexmb as fm

LENGTH = 1.0            # m, beam length
TIP_MASS = 2.0          # kg
TIP_RADIUS = 0.05       # m
BLOCK = (1.0, (0.02, 0.01, 0.015))      # kg and principal moments (kg m^2) of the hanging block


def pendulum(name: str = "pendulum") -> fm.System:
    """The mechanism (not yet simulated)."""
    x = np.linspace(0.0, LENGTH, 11)
    mesh = fm.FEMesh(np.column_stack([x, 0 * x, 0 * x]), {"line": np.column_stack([np.arange(10), np.arange(1, 11)])},
                     node_sets={"hub": [0], "tip": [10]})
    fe = fm.FEModel(mesh, fm.Material(E=70e9, nu=0.33, rho=2700.0), sections=fm.BeamSection.rectangle(0.02, 0.03))
    modes = fm.craig_bampton(fe, {"hub": "hub", "tip": "tip"}, n_modes=4, reference="hub")
    s = fm.System(gravity=(0.0, 0.0, -9.81), name=name)
    beam = s.add(fm.FlexibleBody(modes, damping=0.02, name="beam"))
    inertia = 0.4 * TIP_MASS * TIP_RADIUS ** 2
    tip = s.add(fm.RigidBody(TIP_MASS, [inertia] * 3, position=(LENGTH, 0.0, 0.0), name="tip mass",
                             geometry={"sphere": TIP_RADIUS}))
    block = s.add(fm.RigidBody(BLOCK[0], BLOCK[1], position=(LENGTH, 0.0, -0.3), name="block"))
    s.add(fm.Revolute(s.ground, beam.interface("hub"), (0.0, 0.0, 0.0), (0.0, 1.0, 0.0), name="pivot"))
    s.add(fm.Fixed(beam.interface("tip"), tip, (LENGTH, 0.0, 0.0), name="weld"))
    s.add(fm.Revolute(tip, block, (LENGTH, 0.0, -0.05), (0.0, 1.0, 0.0), name="hanger"))
    return s


def run(t_end: float = 0.5, h: float = 2e-3) -> fm.Result:
    """Simulate the pendulum for ``t_end`` seconds with steps of ``h`` seconds."""
    return fm.simulate(pendulum(), t_end, h)


def main(argv: list[str]) -> None:
    """Simulate and write ``<path>.vtkhdf`` (default ``out/pendulum``, a folder .gitignore covers)."""
    path = argv[0] if argv else "out/pendulum"
    files = run().export_paraview(path)
    print(f"wrote {files['vtkhdf']}")


if __name__ == "__main__":
    main(sys.argv[1:])
