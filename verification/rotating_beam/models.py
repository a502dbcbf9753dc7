"""Models of the rotating-beam suite: a cantilever spun up about the hub axis.

Data (He 1992, §9.2, eq. 9.18; Kane, Ryan & Banerjee 1987): L = 10 m, EA = 2.8e7 N,
EI = 1.4e4 N m^2, rho A = 1.2 kg/m, clamped at the hub axis (no hub radius), spin about
the vertical z axis, in-plane bending, no gravity. Spin-up law
``Omega(t) = (Omega_s/T_s)[t - (T_s/2 pi) sin(2 pi t/T_s)]`` (t < T_s), then Omega_s.

The beam is an Euler-Bernoulli line mesh along +x from the hub axis; out-of-plane dofs
(uz, rx, ry) are held, so only in-plane bending and stretch remain. The section is any
with the given EA, EI and rho A (A = 4e-3 m^2, I = 2e-6 m^4, E = 7e9 Pa, rho = 300 kg/m^3).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import flexmb as fm
from flexmb.fem.materials import Material
from flexmb.fem.mesh import FEMesh
from flexmb.fem.model import FEModel
from flexmb.fem.sections import BeamSection
from flexmb.reduction import craig_bampton

L, EA, EI, RHO_A = 10.0, 2.8e7, 1.4e4, 1.2
T_S, T_END = 15.0, 20.0
AREA, INERTIA = 4e-3, 2e-6
MATERIAL = Material(E=EA / AREA, nu=0.3, rho=RHO_A / AREA)
SECTION = BeamSection(A=AREA, Iy=INERTIA, Iz=INERTIA, J=2 * INERTIA)
OMEGA_1 = 1.8751040687 ** 2 * np.sqrt(EI / (RHO_A * L ** 4))
"""First clamped-free bending frequency, rad/s (3.80)."""
MODELS = ("modal-stiffened", "nonlinear-beam", "modal-linear")
EXACT_MODELS = ("exact-beam",)
"""Models with their own cases (exact-beam-omega*) outside the three-model comparison of MODELS."""
EXACT_ELEMENTS = 32
"""Elements of the ExactBeam spin-up: the max |tip - elastica| at Omega_s = 10 is 4.5e-3, 1.0e-3, 1.4e-4 m with
8, 16, 32 elements (h = 5 ms); 32 is the coarsest mesh below Exudyn's ANCF cable x 16 (3.5e-4 m)."""


def beam_model(n_elements: int) -> FEModel:
    """Euler-Bernoulli cantilever mesh along +x, node sets ``root`` (x = 0) and ``tip``."""
    x = np.linspace(0.0, L, n_elements + 1)
    points = np.column_stack([x, np.zeros_like(x), np.zeros_like(x)])
    lines = np.column_stack([np.arange(n_elements), np.arange(1, n_elements + 1)])
    mesh = FEMesh(points, {"line": lines}, node_sets={"root": [0], "tip": [n_elements]})
    return FEModel(mesh, MATERIAL, sections=SECTION, beam="euler-bernoulli")


def out_of_plane_dofs(model: FEModel) -> np.ndarray:
    """Dofs held for in-plane motion: uz, rx, ry of every node but the root (clamped anyway)."""
    return model.dofs(np.arange(1, model.n_nodes), ["uz", "rx", "ry"])


def modal_modes(n_modes: int = 4, n_elements: int = 40):
    """Craig-Bampton set with the body frame at the clamped root: the ``n_modes`` lowest
    in-plane cantilever modes (fixed-interface modes; no interface but the reference)."""
    model = beam_model(n_elements)
    return craig_bampton(model, {"root": "root"}, n_modes=n_modes, fixed=out_of_plane_dofs(model),
                         reference="root")


@dataclass
class SpinUp:
    """A built spin-up model: the system, the beam body and how to read the tip deflection."""

    system: fm.System
    beam: fm.FlexibleBody
    tip_shape: np.ndarray  # (m,) tip y displacement per unit modal coordinate

    def tip(self, result) -> np.ndarray:
        """In-plane tip deflection relative to the rotating frame (m), per saved time."""
        o = self.beam.offset + 7
        return result.q[:, o:o + self.beam.n_modes] @ self.tip_shape


def spin_up(model: str, omega_s: float, n_modes: int = 4, n_elements: int | None = None,
            exact_mass: str = "consistent") -> SpinUp:
    """Build the spin-up system for ``model`` in :data:`MODELS` or :data:`EXACT_MODELS` (``exact_mass``:
    the ``mass`` option of ExactBeam)."""
    system = fm.System(name=f"{model}-omega{omega_s:g}")
    if n_elements is None:
        n_elements = {"nonlinear-beam": 16, "exact-beam": EXACT_ELEMENTS}.get(model, 40)
    if model in ("modal-stiffened", "modal-linear"):
        modes = modal_modes(n_modes, n_elements)
        beam = fm.FlexibleBody(modes, stiffening=(model == "modal-stiffened"), name="beam")
        t, _ = beam.node_shapes(modes.nodes.shape[0] - 1)
        tip_shape = t[0, 1]
    elif model in ("nonlinear-beam", "exact-beam"):
        fe = beam_model(n_elements)
        held = np.union1d(fe.dofs("root"), out_of_plane_dofs(fe))
        if model == "nonlinear-beam":
            beam = fm.NonlinearBeam(fe, held, name="beam")
        else:
            beam = fm.ExactBeam(fe, held, mass=exact_mass, name="beam")
        t, _ = beam.node_shapes(n_elements)
        tip_shape = t[0, 1]
    else:
        raise ValueError(f"unknown model {model!r}")
    system.add(beam)
    hub = system.add(fm.Revolute(system.ground, beam, (0.0, 0.0, 0.0), (0.0, 0.0, 1.0), name="hub"))
    system.add(fm.Driver(hub, angle=fm.TimeFunction.spin_up(omega_s, T_S), name="spin"))
    return SpinUp(system, beam, tip_shape)
