"""Particle-chain benchmark (issue 13 item 6): flexmb side by side with Exudyn.

A chain of N point masses (m = 0.1 kg, 0.1 m apart, stretched along +x) joined by linear spring-dampers
(k = 1e5 N/m, c = 1 N s/m, free length 0.1 m) falls under gravity (-y) as a pendulum, its first particle held near
the origin by an isotropic spring-damper (1e6 N/m, 10 N s/m). This is the roller chain of docs/theory-roller-chain.md
without sprockets. flexmb: ``fm.Particles`` + ``fm.ParticleLinks`` + ``fm.ParticleAnchors`` (plus one welded rigid
body: ``System.compile`` wants a body; 7 coordinates and 7 constraint rows). Exudyn: ``CreateMassPoint`` +
``CreateSpringDamper`` + ``CreateCartesianSpringDamper`` to the ground. Both integrate with generalized-alpha
(rho_inf = 0.9, index 3) at the same fixed step, with the Newton matrix rebuilt at every step (benchmarks/
rigid_chain.py ``exudyn_settings``; one thread).

Measured per N: time per step of the step loop (set-up excluded), the ratio flexmb / Exudyn, and the position of
the last particle at T from both codes (accuracy cross-check).

Run:  python benchmarks/particle_chain.py [--sizes 10 100 1000] [--repeat 3]
      [--out benchmarks/results/particle_chain.json]
"""
from __future__ import annotations

import argparse
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
from rigid_chain import best_of, exudyn_settings, exudyn_version, machine  # noqa: E402

SPACING = 0.1           # m
MASS = 0.1              # kg per particle
K, C = 1e5, 1.0         # N/m, N s/m: links
K_PIN, C_PIN = 1e6, 10.0    # N/m, N s/m: the first particle's pin
GRAVITY = (0.0, -9.81, 0.0)
RHO_INF = 0.9
H = 1e-3


def t_end_for(n: int) -> float:
    return 0.5 if n <= 100 else 0.05


def positions(n: int) -> np.ndarray:
    return np.column_stack([SPACING * np.arange(n), np.zeros(n), np.zeros(n)])


def run_flexmb(n: int, t_end: float, h: float) -> dict:
    import flexmb as fm
    t0 = time.perf_counter()
    s = fm.System(gravity=GRAVITY, name=f"particle chain {n}")
    b = s.add(fm.RigidBody(1.0, (1.0, 1.0, 1.0), name="base"))
    s.add(fm.Fixed(s.ground, b, name="weld"))
    P = s.add(fm.Particles(positions(n), MASS, name="chain"))
    s.add(fm.ParticleLinks(P, "chain", K, C, name="links"))
    s.add(fm.ParticleAnchors(P, 0, stiffness=K_PIN, damping=C_PIN, name="pin"))
    t_build = time.perf_counter() - t0
    t_call = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # no per-step progress callback: it would force single steps instead of compiled blocks; the time of
        # the stepping loop is res.stats["loop_s"] (start-up and consistent start excluded, as rigid_chain.py)
        res = fm.simulate(s, t_end=t_end, h=h, rho_inf=RHO_INF, progress=False)
    t_done = time.perf_counter()
    steps = int(res.stats["steps"])
    per_step = float(res.stats["loop_s"]) / steps
    return {"steps": steps, "build_s": t_build, "per_step_s": per_step, "total_s": t_build + (t_done - t_call),
            "newton_per_step": res.stats["newton_iterations"] / steps,
            "tip": [float(x) for x in res.particles("chain")[-1, -1]]}


def run_exudyn(n: int, t_end: float, h: float) -> dict:
    import exudyn as exu
    from exudyn.utilities import ObjectGround
    t0 = time.perf_counter()
    sc = exu.SystemContainer()
    mbs = sc.AddSystem()
    ground = mbs.AddObject(ObjectGround())
    X = positions(n)
    pts = [mbs.CreateMassPoint(referencePosition=list(x), mass=MASS, gravity=list(GRAVITY), show=False) for x in X]
    for a, b in zip(pts[:-1], pts[1:]):
        mbs.CreateSpringDamper(itemNumbers=[a, b], stiffness=K, damping=C, referenceLength=SPACING, show=False)
    mbs.CreateCartesianSpringDamper(itemNumbers=[ground, pts[0]], stiffness=[K_PIN] * 3, damping=[C_PIN] * 3,
                                    show=False)
    mbs.Assemble()
    t_build = time.perf_counter() - t0
    ss = exudyn_settings(t_end, h, "sparse", True)
    solver = exu.MainSolverImplicitSecondOrder()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t1 = time.perf_counter()
        solver.InitializeSolver(mbs, ss)
        t2 = time.perf_counter()
        solver.SolveSteps(mbs, ss)
        t3 = time.perf_counter()
        solver.FinalizeSolver(mbs, ss)
        t4 = time.perf_counter()
    steps = ss.timeIntegration.numberOfSteps
    if abs(solver.it.currentTime - t_end) > 1e-9 * max(1.0, t_end):
        raise RuntimeError(f"Exudyn stopped at t = {solver.it.currentTime} instead of {t_end}")
    tip = mbs.GetObjectOutputBody(pts[-1], exu.OutputVariableType.Position, localPosition=[0.0, 0.0, 0.0])
    return {"steps": steps, "build_s": t_build, "per_step_s": (t3 - t2) / steps, "total_s": t_build + (t4 - t1),
            "newton_per_step": solver.it.newtonStepsCount / steps, "tip": [float(x) for x in tip]}


def measure(n: int, repeat: int, with_exudyn: bool) -> dict:
    t_end = t_end_for(n)
    configs = {"flexmb": lambda: run_flexmb(n, t_end, H)}
    if with_exudyn:
        configs["exudyn"] = lambda: run_exudyn(n, t_end, H)
    runs = {k: [] for k in configs}
    for _ in range(max(1, repeat)):
        for k, fn in configs.items():
            runs[k].append(fn())
    out = {k: best_of(v) for k, v in runs.items()}
    out.update({"N": n, "T": t_end})
    if with_exudyn:
        out["ratio_per_step"] = out["flexmb"]["per_step_s"] / out["exudyn"]["per_step_s"]
        out["tip_difference"] = float(np.linalg.norm(np.subtract(out["flexmb"]["tip"], out["exudyn"]["tip"])))
    return out


def markdown_table(results: list[dict]) -> str:
    cols = ["N", "T (s)", "steps", "flexmb ms/step", "flexmb Newton/step", "Exudyn ms/step", "Exudyn Newton/step",
            "ratio flexmb/Exudyn (per step)", "tip difference (m)"]
    rows = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for r in results:
        f, e = r["flexmb"], r.get("exudyn")
        cells = [r["N"], f"{r['T']:g}", f["steps"], f"{1e3 * f['per_step_s']:.3f}", f"{f['newton_per_step']:.2f}"]
        cells += ([f"{1e3 * e['per_step_s']:.3f}", f"{e['newton_per_step']:.2f}", f"{r['ratio_per_step']:.2f}",
                   f"{r['tip_difference']:.1e}"] if e else ["-"] * 4)
        rows.append("| " + " | ".join(str(c) for c in cells) + " |")
    return "\n".join(rows)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10, 100, 1000])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-exudyn", action="store_true")
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "particle_chain.json")
    a = ap.parse_args(argv)
    with_exudyn = not a.no_exudyn and exudyn_version() is not None
    run_flexmb(10, 0.01, H)                      # load the compiled kernels once
    results = []
    for n in a.sizes:
        r = measure(n, a.repeat, with_exudyn)
        results.append(r)
        print(markdown_table([r]).splitlines()[-1], flush=True)
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps({"machine": machine(), "h": H, "results": results}, indent=2))
    print(markdown_table(results))


if __name__ == "__main__":
    main()
