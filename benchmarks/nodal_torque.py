"""NodalTorque benchmark (issue 27, item 3): the cost per step of a torque on a flexible body's node.

Case ``open_loop_planar``: the manipulator of He 1992, §9.5 with flexible links, the rigid arm's joint torques
applied open loop (verification/manipulator/models.py ``open_loop_manipulator``, root-tangent basis), T = 20 s,
h = 0.0125 s (the full verification setting). Configurations:

* ``nodal_torque``: the joint reactions at the links' tip nodes through ``fm.NodalTorque`` (one compiled call
  per group, ``nodal_torque_kernel``), as the suite runs it now;
* ``user_force``: the same reactions as the suite ran them before, a ``fm.UserForce`` per node with its Python
  function and Jacobian (``_node_torque`` below, copied from the parent commit's models.py: the axis is the
  node's deformed z to first order, so the runs agree to about 1e-8 rad, not bit for bit).

Case ``cantilever``: a clamped modal cantilever (Craig-Bampton, tip interface, 4 modes) under a constant tip
load, T = 1 s, h = 1 ms: ``nodal_torque`` (a tip moment) against ``nodal_force`` (a tip force, the existing
family with the same group machinery): what a torque costs against a force.

All: ``fm.simulate(system, T, h)`` with default settings, no environment variable. Measured: the time per step of
the step loop (``Result.stats["loop_s"]`` / steps), best of ``--repeat`` interleaved runs (the first run of each
compiles and is one of the repeats).

Run:  python benchmarks/nodal_torque.py [--repeat 5] [--out benchmarks/results/nodal_torque.json]
"""
from __future__ import annotations

import argparse
import datetime as _dt
import json
import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parent.parent))
from rigid_chain import best_of, machine  # noqa: E402

import flexmb as fm  # noqa: E402
from flexmb import rotations as rot  # noqa: E402
from flexmb.reduction import craig_bampton  # noqa: E402
from verification.manipulator import models as mdl  # noqa: E402


def _node_torque(body, node, law, sign):
    """The parent commit's joint reaction at a node (a UserForce): ``sign law(t)`` about the node's deformed z,
    ``z - z~ R eta``; ``Q_p = 2 G^T n``, ``Q_eta = R^T n`` with its exact Jacobian."""
    R = body.node_shapes(node)[1][0]
    z = np.array([0.0, 0.0, 1.0])
    Zr = rot.skew(z) @ R

    def func(t, q, v):
        n = sign * law(t) * (z - Zr @ q[7:])
        return np.concatenate([np.zeros(3), 2.0 * rot.G(q[3:7]).T @ n, R.T @ n])

    def jacobian(t, q, v):
        tau = sign * law(t)
        n, dn = tau * (z - Zr @ q[7:]), -tau * Zr
        dGn = np.zeros((4, 4))
        dGn[0, 1:], dGn[1:, 0], dGn[1:, 1:] = -n, n, -rot.skew(n)
        J = np.zeros((q.size, q.size))
        J[3:7, 3:7] = 2.0 * dGn
        J[3:7, 7:] = 2.0 * rot.G(q[3:7]).T @ dn
        J[7:, 7:] = R.T @ dn
        return J, np.zeros_like(J)

    return fm.UserForce(body, func, jacobian, name=f"joint torque at node {node} of {body.name}")


def open_loop(kind: str, t_table: np.ndarray, tau: np.ndarray) -> fm.System:
    """The planar open loop; ``kind="user_force"`` swaps the tip-node reactions for the parent's UserForce."""
    if kind == "user_force":
        original = mdl._joint_torque

        def joint_torque(site, law, sign, name):
            if not isinstance(site, fm.Body) and sign < 0:
                return _node_torque(site.body, site.node, law, sign)
            return original(site, law, sign, name)
        mdl._joint_torque = joint_torque
        try:
            return mdl.open_loop_manipulator(t_table, tau, True).system
        finally:
            mdl._joint_torque = original
    return mdl.open_loop_manipulator(t_table, tau, True).system


def cantilever(kind: str) -> fm.System:
    """A 1 m aluminium cantilever (8 elements, 20 x 40 mm), 2 % modal damping, a tip moment of 1 N m about y or a
    tip force of 1 N along z."""
    x = np.linspace(0.0, 1.0, 9)
    mesh = fm.FEMesh(np.column_stack([x, 0 * x, 0 * x]), {"line": np.column_stack([np.arange(8), np.arange(1, 9)])},
                     node_sets={"root": [0], "tip": [8]})
    fe = fm.FEModel(mesh, fm.Material(E=70e9, nu=0.33, rho=2700.0), sections=fm.BeamSection.rectangle(0.02, 0.04))
    s = fm.System()
    body = s.add(fm.FlexibleBody(craig_bampton(fe, {"root": "root", "tip": "tip"}, n_modes=4, reference="root"),
                                 damping=0.02, name="beam"))
    s.add(fm.Fixed(s.ground, body))
    if kind == "nodal_torque":
        s.add(fm.NodalTorque(body, "tip", (0.0, 1.0, 0.0)))
    else:
        s.add(fm.NodalForce(body, "tip", (0.0, 0.0, 1.0)))
    return s


def run(system: fm.System, T: float, h: float) -> dict:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = fm.simulate(system, T, h, rho_inf=0.5, progress=False)
    st = res.stats
    steps = int(st["steps"])
    return {"steps": steps, "per_step_s": float(st["loop_s"]) / steps,
            "newton_per_step": st["newton_iterations"] / steps,
            "compiled_steps_per_step": st.get("compiled_steps", 0) / steps, "_q": res.q}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--out", default=str(Path(__file__).parent / "results" / "nodal_torque.json"))
    args = ap.parse_args(argv)
    h_arm = 0.0125
    rigid = mdl.rigid_manipulator(mdl.FINAL_PLANAR)
    ref = fm.simulate(rigid.system, mdl.T_END, h_arm, rho_inf=0.5, save_every=1, progress=False)
    tau = mdl.driver_torques(rigid, ref)[:, 1:]
    cases = {"open_loop_planar": ({k: (lambda k=k: run(open_loop(k, ref.t, tau), mdl.T_END, h_arm))
                                   for k in ("nodal_torque", "user_force")}, "user_force", mdl.T_END, h_arm),
             "cantilever": ({k: (lambda k=k: run(cantilever(k), 1.0, 1e-3)) for k in ("nodal_torque", "nodal_force")},
                            "nodal_force", 1.0, 1e-3)}
    out, lines = {}, [f"best of {args.repeat}"]
    for case, (configs, base, T, h) in cases.items():
        runs = {k: [] for k in configs}
        for _ in range(max(1, args.repeat)):
            for k, fn in configs.items():
                runs[k].append(fn())
        q = {k: v[-1]["_q"] for k, v in runs.items()}
        for v in runs.values():
            for r in v:
                del r["_q"]
        res = {k: best_of(v) for k, v in runs.items()}
        res.update(T=T, h=h, ratio_per_step=res["nodal_torque"]["per_step_s"] / res[base]["per_step_s"],
                   ratio_to=base)
        if case == "open_loop_planar":
            res["max_q_difference"] = float(np.max(np.abs(q["nodal_torque"] - q["user_force"])))
        out[case] = res
        lines.append(f"{case}: T = {T:g} s, h = {h:g} s")
        for k in configs:
            r = res[k]
            lines.append(f"  {k:14s} {1e6 * r['per_step_s']:8.1f} us/step  {r['steps']} steps  "
                         f"Newton {r['newton_per_step']:.2f}/step  compiled steps {r['compiled_steps_per_step']:.2f}/step")
        lines.append(f"  ratio nodal_torque / {base} per step: {res['ratio_per_step']:.2f}"
                     + (f"; largest coordinate difference {res['max_q_difference']:.2e}" if "max_q_difference" in res
                        else ""))
    print("\n".join(lines))
    out.update({"date": _dt.datetime.now().isoformat(timespec="seconds"), "machine": machine()})
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
