"""Rigid slider-crank benchmark (issue 11): flexmb side by side with Exudyn, time per step.

Model: the spatial slider-crank without redundant constraints (Haug 1989, §9): crank (0.2 m, 1 kg)
on a revolute joint about z at the origin, connecting rod (0.5 m, 1 kg) on a spherical joint at the
crank pin and a universal joint at the slider (the rod's twist held), slider (1 kg) on a prismatic
joint along global x. It starts at rest with the crank at 45 degrees and falls under gravity (-y). Both codes integrate it with index-3
generalized-alpha (rho_inf = 0.9), Euler parameters, the same fixed step h (default 1e-4 s) over the
same T, single-threaded, with the Newton matrix rebuilt at the start of every step (Exudyn's
settings are those of benchmarks/rigid_chain.py).

Measured: time per step of the step loop (flexmb: ``Result.stats["loop_s"]`` / steps, the time-stepping
loop without compile and consistent start; Exudyn: SolveSteps / steps), best of ``--repeat`` interleaved runs, the ratio
flexmb / Exudyn, and the slider position at T from both codes (accuracy cross-check).

Run:  python benchmarks/slider_crank.py [--h 1e-4] [--T 0.2] [--repeat 3] [--no-exudyn]
"""
from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import sys
import time
import warnings
from pathlib import Path

if __name__ == "__main__":
    for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_var, "1")
    # the step compiled for the benchmark model's families (flexmb/compiled/specialization.py; compiled once, in
    # the first run, and excluded from the timing like every compile); FLEXMB_STEP=universal for the other one
    os.environ.setdefault("FLEXMB_STEP", "specialized")

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from rigid_chain import RHO_INF, best_of, exudyn_settings, machine  # noqa: E402

GRAVITY = (0.0, -9.81, 0.0)
CRANK, ROD = 0.2, 0.5                      # lengths (m)
MASS = 1.0                                 # each body (kg)
PHI0 = np.pi / 4                           # initial crank angle


def geometry():
    """Crank pin B and slider point C at the start (m), and the rod's direction angle (rad)."""
    B = CRANK * np.array([np.cos(PHI0), np.sin(PHI0), 0.0])
    C = np.array([B[0] + np.sqrt(ROD ** 2 - B[1] ** 2), 0.0, 0.0])
    return B, C, np.arctan2(C[1] - B[1], C[0] - B[0])


def rod_inertia(length: float) -> tuple[float, float, float]:
    return (1e-4, MASS * length ** 2 / 12, MASS * length ** 2 / 12)


def rotation_z(angle: float) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def build_flexmb():
    import flexmb as fm
    B, C, beta = geometry()
    s = fm.System(gravity=GRAVITY, name="slider-crank")
    crank = s.add(fm.RigidBody(MASS, rod_inertia(CRANK), position=B / 2, orientation=rotation_z(PHI0), name="crank"))
    rod = s.add(fm.RigidBody(MASS, rod_inertia(ROD), position=(B + C) / 2, orientation=rotation_z(beta), name="rod"))
    slider = s.add(fm.RigidBody(MASS, (1e-3, 1e-3, 1e-3), position=C, name="slider"))
    z = (0.0, 0.0, 1.0)
    s.add(fm.Revolute(s.ground, crank, (0.0, 0.0, 0.0), z, name="O"))
    s.add(fm.Spherical(crank, rod, B, name="B"))
    y_rod = rotation_z(beta)[:, 1]
    s.add(fm.Universal(rod, slider, point=C, axis_a=y_rod, axis_b=z, name="C"))
    s.add(fm.Prismatic(s.ground, slider, C, (1.0, 0.0, 0.0), name="rail"))
    return s, slider


def run_flexmb(t_end: float, h: float) -> dict:
    import flexmb as fm
    system, slider = build_flexmb()
    res = fm.simulate(system, t_end=t_end, h=h, rho_inf=RHO_INF)
    steps = int(res.stats["steps"])
    per_step = float(res.stats["loop_s"]) / steps     # the time-stepping loop, as Exudyn's SolveSteps
    return {"steps": steps, "per_step_s": per_step, "steps_per_s": 1.0 / per_step,
            "newton_per_step": res.stats["newton_iterations"] / steps,
            "factorizations_per_step": res.stats["factorizations"] / steps,
            "slider_x": float(res.position(slider)[-1, 0])}


def run_exudyn(t_end: float, h: float, linear: str = "dense") -> dict:
    import exudyn as exu
    from exudyn.utilities import ObjectGround, RigidBodyInertia
    B, C, beta = geometry()
    sc = exu.SystemContainer()
    mbs = sc.AddSystem()
    ground = mbs.AddObject(ObjectGround())

    def body(length, position, angle, inertia=None):
        J = np.diag(inertia if inertia is not None else rod_inertia(length))
        return mbs.CreateRigidBody(inertia=RigidBodyInertia(mass=MASS, inertiaTensor=J), referencePosition=list(position),
                                   referenceRotationMatrix=rotation_z(angle), gravity=list(GRAVITY),
                                   nodeType=exu.NodeType.RotationEulerParameters, show=False)
    crank = body(CRANK, B / 2, PHI0)
    rod = body(ROD, (B + C) / 2, beta)
    slider = body(0.0, C, 0.0, inertia=(1e-3, 1e-3, 1e-3))
    z = [0.0, 0.0, 1.0]
    mbs.CreateRevoluteJoint(itemNumbers=[ground, crank], position=[0.0, 0.0, 0.0], axis=z, useGlobalFrame=True, show=False)
    mbs.CreateSphericalJoint(itemNumbers=[crank, rod], position=list(B), useGlobalFrame=True, show=False)
    # universal joint: relative rotation about the rod's axis (x of the joint frame) held
    mbs.CreateGenericJoint(itemNumbers=[rod, slider], position=list(C), rotationMatrixAxes=rotation_z(beta),
                           constrainedAxes=[1, 1, 1, 1, 0, 0], useGlobalFrame=True, show=False)
    mbs.CreatePrismaticJoint(itemNumbers=[ground, slider], position=list(C), axis=[1.0, 0.0, 0.0],
                             useGlobalFrame=True, show=False)
    mbs.Assemble()
    ss = exudyn_settings(t_end, h, linear, True)
    solver = exu.MainSolverImplicitSecondOrder()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        solver.InitializeSolver(mbs, ss)
        t0 = time.perf_counter()
        solver.SolveSteps(mbs, ss)
        t1 = time.perf_counter()
        solver.FinalizeSolver(mbs, ss)
    steps = ss.timeIntegration.numberOfSteps
    x = mbs.GetObjectOutputBody(slider, exu.OutputVariableType.Position, localPosition=[0, 0, 0],
                                configuration=exu.ConfigurationType.Current)
    return {"steps": steps, "linear_solver": linear, "per_step_s": (t1 - t0) / steps,
            "steps_per_s": steps / (t1 - t0), "newton_per_step": solver.it.newtonStepsCount / steps,
            "slider_x": float(x[0])}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--h", type=float, default=1e-4)
    ap.add_argument("--T", type=float, default=0.2)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-exudyn", action="store_true")
    ap.add_argument("--out", default=str(Path(__file__).parent / "results" / "slider_crank.json"))
    args = ap.parse_args(argv)
    configs = {"flexmb": lambda: run_flexmb(args.T, args.h)}
    if not args.no_exudyn:
        configs["exudyn_dense"] = lambda: run_exudyn(args.T, args.h, "dense")
        configs["exudyn_sparse"] = lambda: run_exudyn(args.T, args.h, "sparse")
    runs = {k: [] for k in configs}
    for _ in range(max(1, args.repeat)):
        for k, fn in configs.items():
            runs[k].append(fn())
    out = {k: best_of(v) for k, v in runs.items()}
    lines = [f"h = {args.h:g} s, T = {args.T:g} s, best of {args.repeat}"]
    for k, r in out.items():
        lines.append(f"{k:14s} {1e3 * r['per_step_s']:8.3f} ms/step  {r['steps_per_s']:9.0f} steps/s  "
                     f"slider x(T) = {r['slider_x']:.9f} m")
    if not args.no_exudyn:
        peer = min(out["exudyn_dense"]["per_step_s"], out["exudyn_sparse"]["per_step_s"])
        out["ratio_per_step"] = out["flexmb"]["per_step_s"] / peer
        out["slider_x_difference"] = abs(out["flexmb"]["slider_x"] - out["exudyn_dense"]["slider_x"])
        lines.append(f"ratio flexmb / Exudyn (faster of dense/sparse): {out['ratio_per_step']:.1f}; "
                     f"slider x difference {out['slider_x_difference']:.2e} m")
    print("\n".join(lines))
    out.update({"h": args.h, "T": args.T, "date": _dt.datetime.now().isoformat(timespec="seconds"),
                "machine": machine()})
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
