"""Rigid-chain benchmark (issue 2): flexmb side by side with Exudyn.

A chain of N rigid links (length L = 0.5 m, mass 1 kg, slender-rod inertia)
hangs from the ground by revolute joints with parallel z axes; it starts at
rest, stretched along +x, and falls under gravity (-y). Both codes integrate it
with the index-3 generalized-alpha method (rho_inf = 0.9) at the same fixed
step h over the same time T, with Euler parameters and a Newton iteration
matrix that is rebuilt at the start of every step and reused while the
iteration contracts.

Measured per N (best of ``--repeat`` runs for the loop time):

* steps per second of the time-step loop (set-up excluded: model building,
  assembly and consistent initial conditions are timed separately);
* total wall time of one run (set-up + steps);
* the ratio flexmb / Exudyn of the time per step;
* the tip position of the last link at T from both codes (accuracy
  cross-check) and the mechanical energy at T;
* the cost-growth exponent: slope of log(time per step) against log(N).

Run:  python benchmarks/rigid_chain.py [--sizes 10 100 1000] [--repeat 3]
      [--no-exudyn] [--out benchmarks/results/rigid_chain.json]
"""
from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import subprocess
import sys
import time
import warnings
from pathlib import Path

if __name__ == "__main__":
    # one BLAS thread unless the caller exported another count: both codes then run single-threaded
    # (Exudyn: parallel.numberOfThreads = 1)
    for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_var, "1")
    # the step compiled for the benchmark model's families (flexmb/compiled/specialization.py; compiled once, in
    # the first run, and excluded from the timing like every compile); FLEXMB_STEP=universal for the other one
    os.environ.setdefault("FLEXMB_STEP", "specialized")

import numpy as np

L = 0.5                                    # link length (m)
MASS = 1.0                                 # link mass (kg)
INERTIA = (1e-4, L * L / 12, L * L / 12)   # principal inertias about the centre of mass (kg m^2)
GRAVITY = (0.0, -9.81, 0.0)                # m/s^2
RHO_INF = 0.9
DEFAULT_H = 1e-3
DEFAULT_SIZES = (10, 30, 100, 300, 1000)
FIT_WINDOW = 0.05   # s: the growth exponent uses the first FIT_WINDOW of motion for every N


def t_end_for(n: int) -> float:
    """Simulated time per chain length: long enough for a stable rate, short for N = 1000."""
    if n <= 100:
        return 0.5
    if n <= 300:
        return 0.1
    return 0.05


# ---------------------------------------------------------------------------
# flexmb
# ---------------------------------------------------------------------------
def build_flexmb(n: int):
    import flexmb as fm
    s = fm.System(gravity=GRAVITY, name=f"chain{n}")
    prev = s.ground
    for i in range(n):
        b = s.add(fm.RigidBody(mass=MASS, inertia=INERTIA, position=((i + 0.5) * L, 0.0, 0.0), name=f"link{i}"))
        s.add(fm.Revolute(prev, b, point=(i * L, 0.0, 0.0), axis=(0.0, 0.0, 1.0)))
        prev = b
    return s, prev


def run_flexmb(n: int, t_end: float, h: float) -> dict:
    import flexmb as fm
    t0 = time.perf_counter()
    system, tip_body = build_flexmb(n)
    t_build = time.perf_counter() - t0
    t_call = time.perf_counter()
    c_call = time.process_time()
    res = fm.simulate(system, t_end=t_end, h=h, rho_inf=RHO_INF)
    t_done = time.perf_counter()
    c_done = time.process_time()
    steps = int(res.stats["steps"])
    # the time-stepping loop (res.stats["loop_s"]): start-up (compile, consistent start) excluded, as
    # Exudyn's SolveSteps
    loop = float(res.stats["loop_s"])
    per_step = loop / steps
    tip = res.position(tip_body, local_point=(L / 2, 0.0, 0.0))[-1]
    en = res.energy()
    return {
        "steps": steps,
        "build_s": t_build,
        "init_s": max((t_done - t_call) - loop, 0.0),
        "loop_s": loop,
        "per_step_s": per_step,
        "steps_per_s": 1.0 / per_step,
        "cpu_per_step_s": (c_done - c_call) / steps,
        "total_s": t_build + (t_done - t_call),
        "newton_per_step": res.stats["newton_iterations"] / steps,
        "factorizations_per_step": res.stats["factorizations"] / steps,
        "tip": [float(x) for x in tip],
        "energy_T": float(en["kinetic"][-1] + en["potential"][-1]),
        "energy_drift": float(en["total"][-1] - en["total"][0]),
    }


# ---------------------------------------------------------------------------
# Exudyn (benchmark peer only)
# ---------------------------------------------------------------------------
def exudyn_version() -> str | None:
    try:
        import exudyn as exu
    except ImportError:
        return None
    try:
        return exu.config.Version()
    except Exception:  # older releases
        return getattr(exu, "__version__", "unknown")


def build_exudyn(n: int):
    import exudyn as exu
    from exudyn.utilities import ObjectGround, RigidBodyInertia
    sc = exu.SystemContainer()
    mbs = sc.AddSystem()
    ground = mbs.AddObject(ObjectGround())
    inertia = RigidBodyInertia(mass=MASS, inertiaTensor=np.diag(INERTIA))   # about the centre of mass
    prev, bodies = ground, []
    for i in range(n):
        b = mbs.CreateRigidBody(inertia=inertia, referencePosition=[(i + 0.5) * L, 0.0, 0.0],
                                gravity=list(GRAVITY), nodeType=exu.NodeType.RotationEulerParameters, show=False)
        mbs.CreateRevoluteJoint(itemNumbers=[prev, b], position=[i * L, 0.0, 0.0], axis=[0.0, 0.0, 1.0],
                                useGlobalFrame=True, show=False)
        bodies.append(b)
        prev = b
    return sc, mbs, bodies


def exudyn_settings(t_end: float, h: float, linear: str, jac_per_step: bool):
    import exudyn as exu
    ss = exu.SimulationSettings()
    ti = ss.timeIntegration
    ti.numberOfSteps = int(round(t_end / h))
    ti.endTime = t_end
    ti.verboseMode = 0
    ti.generalizedAlpha.spectralRadius = RHO_INF
    ti.generalizedAlpha.useIndex2Constraints = False   # index 3, as flexmb
    ti.generalizedAlpha.useNewmark = False
    ti.generalizedAlpha.computeInitialAccelerations = True
    ti.newton.useModifiedNewton = True
    # True: new Jacobian at the start of each step (flexmb's scheme); False: Exudyn's default reuse across steps
    ti.newton.modifiedNewtonJacUpdatePerStep = jac_per_step
    ss.solution.file.write = False
    ss.solution.file.writeInitialValues = False
    ss.solution.sensors.active = False
    ss.parallel.numberOfThreads = 1
    ss.linearSolver.solverType = (exu.LinearSolverType.EigenSparse if linear == "sparse"
                                  else exu.LinearSolverType.EXUdense)
    return ss


def _exudyn_energy(mbs, bodies) -> float:
    import exudyn as exu
    J = np.diag(INERTIA)
    e = 0.0
    for b in bodies:
        v = np.asarray(mbs.GetObjectOutputBody(b, exu.OutputVariableType.Velocity, localPosition=[0, 0, 0]))
        w = np.asarray(mbs.GetObjectOutputBody(b, exu.OutputVariableType.AngularVelocityLocal,
                                               localPosition=[0, 0, 0]))
        r = np.asarray(mbs.GetObjectOutputBody(b, exu.OutputVariableType.Position, localPosition=[0, 0, 0]))
        e += 0.5 * MASS * v @ v + 0.5 * w @ J @ w - MASS * (np.asarray(GRAVITY) @ r)
    return float(e)


def run_exudyn(n: int, t_end: float, h: float, linear: str = "sparse", jac_per_step: bool = True) -> dict:
    import exudyn as exu
    t0 = time.perf_counter()
    sc, mbs, bodies = build_exudyn(n)
    mbs.Assemble()
    t_build = time.perf_counter() - t0
    ss = exudyn_settings(t_end, h, linear, jac_per_step)
    solver = exu.MainSolverImplicitSecondOrder()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t1 = time.perf_counter()
        solver.InitializeSolver(mbs, ss)      # includes the initial accelerations
        t2, c2 = time.perf_counter(), time.process_time()
        solver.SolveSteps(mbs, ss)
        t3, c3 = time.perf_counter(), time.process_time()
        solver.FinalizeSolver(mbs, ss)
        t4 = time.perf_counter()
    steps = ss.timeIntegration.numberOfSteps
    if abs(solver.it.currentTime - t_end) > 1e-9 * max(1.0, t_end):
        raise RuntimeError(f"Exudyn stopped at t = {solver.it.currentTime} instead of {t_end}")
    tip = mbs.GetObjectOutputBody(bodies[-1], exu.OutputVariableType.Position, localPosition=[L / 2, 0.0, 0.0],
                                  configuration=exu.ConfigurationType.Current)
    per_step = (t3 - t2) / steps
    timer = solver.timer
    return {
        "steps": steps,
        "linear_solver": linear,
        "jacobian_every_step": jac_per_step,
        "build_s": t_build,
        "init_s": t2 - t1,
        "loop_s": t3 - t2,
        "per_step_s": per_step,
        "steps_per_s": 1.0 / per_step,
        "cpu_per_step_s": (c3 - c2) / steps,
        "total_s": t_build + (t4 - t1),
        "newton_per_step": solver.it.newtonStepsCount / steps,
        "factorizations_per_step": solver.it.newtonJacobiCount / steps,
        "tip": [float(x) for x in tip],
        "energy_T": _exudyn_energy(mbs, bodies),
        "timer_s": {k: float(getattr(timer, k)) for k in
                    ("factorization", "newtonIncrement", "jacobianODE2", "jacobianAE", "massMatrix",
                     "ODE2RHS", "AERHS", "integrationFormula", "overhead")},
    }


# ---------------------------------------------------------------------------
# driver
# ---------------------------------------------------------------------------
def best_of(runs: list[dict]) -> dict:
    """The run with the smallest time per step, plus the spread over all runs."""
    best = dict(min(runs, key=lambda r: r["per_step_s"]))
    best["repeats"] = len(runs)
    best["per_step_all_s"] = [r["per_step_s"] for r in runs]
    return best


def measure(n: int, t_end: float, h: float, repeat: int, with_exudyn: bool) -> dict:
    """All configurations of one chain, interleaved run by run so they share the machine's load."""
    configs = {"flexmb": lambda: run_flexmb(n, t_end, h), "flexmb_fit_window": lambda: run_flexmb(n, FIT_WINDOW, h)}
    if with_exudyn:
        configs["exudyn"] = lambda: run_exudyn(n, t_end, h, "sparse", True)
        configs["exudyn_default_newton"] = lambda: run_exudyn(n, t_end, h, "sparse", False)
        if n <= 30:   # dense LU is O(n^3): only for small chains
            configs["exudyn_dense"] = lambda: run_exudyn(n, t_end, h, "dense", True)
        configs["exudyn_fit_window"] = lambda: run_exudyn(n, FIT_WINDOW, h, "sparse", True)
    runs = {k: [] for k in configs}
    for _ in range(max(1, repeat)):
        for k, fn in configs.items():
            runs[k].append(fn())
    out = {k: best_of(v) for k, v in runs.items()}
    out["flexmb"]["per_step_fit_window_s"] = out.pop("flexmb_fit_window")["per_step_s"]
    if with_exudyn:
        out["exudyn"]["per_step_fit_window_s"] = out.pop("exudyn_fit_window")["per_step_s"]
    return out


def growth_exponent(sizes, per_step) -> dict:
    sizes = list(sizes)
    x, y = np.log(np.asarray(sizes, float)), np.log(np.asarray(per_step, float))
    out = {"fit_all": float(np.polyfit(x, y, 1)[0]) if len(x) >= 2 else None}
    out["pairwise"] = {f"{sizes[k]}->{sizes[k + 1]}": float((y[k + 1] - y[k]) / (x[k + 1] - x[k]))
                       for k in range(len(x) - 1)}
    big = [k for k, n in enumerate(sizes) if n >= 100]
    out["fit_N>=100"] = float(np.polyfit(x[big], y[big], 1)[0]) if len(big) >= 2 else None
    return out


def machine() -> dict:
    cpu = platform.processor() or ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    import scipy
    import flexmb
    try:
        rev = subprocess.run(["git", "describe", "--always", "--dirty"], cwd=Path(__file__).parent,
                             capture_output=True, text=True, timeout=10).stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        rev = None
    return {"cpu": cpu, "cores": os.cpu_count(), "platform": platform.platform(), "flexmb_git": rev,
            "blas_threads": os.environ.get("OPENBLAS_NUM_THREADS"),
            "flexmb_step": os.environ.get("FLEXMB_STEP", "auto"), "python": platform.python_version(),
            "numpy": np.__version__, "scipy": scipy.__version__,
            "flexmb": flexmb.__version__, "exudyn": exudyn_version()}


def accuracy_check(h: float, with_exudyn: bool, n: int = 10, t_end: float = 0.5) -> dict:
    """Tip of the last link at T from both codes at h and h/2: cross difference and self-convergence."""
    out = {"N": n, "T": t_end, "runs": {}}
    for hh in (h, h / 2):
        key = f"h={hh:g}"
        out["runs"][key] = {"flexmb": run_flexmb(n, t_end, hh)["tip"]}
        if with_exudyn:
            out["runs"][key]["exudyn"] = run_exudyn(n, t_end, hh)["tip"]
    k1, k2 = f"h={h:g}", f"h={h / 2:g}"
    dist = lambda a, b: float(np.linalg.norm(np.subtract(a, b)))   # noqa: E731
    out["flexmb_h_vs_h/2"] = dist(out["runs"][k1]["flexmb"], out["runs"][k2]["flexmb"])
    if with_exudyn:
        out["exudyn_h_vs_h/2"] = dist(out["runs"][k1]["exudyn"], out["runs"][k2]["exudyn"])
        out["flexmb_vs_exudyn_h"] = dist(out["runs"][k1]["flexmb"], out["runs"][k1]["exudyn"])
        out["flexmb_vs_exudyn_h/2"] = dist(out["runs"][k2]["flexmb"], out["runs"][k2]["exudyn"])
    return out


def markdown_table(results: list[dict]) -> str:
    cols = ["N", "T (s)", "steps", "flexmb steps/s", "flexmb ms/step", "flexmb set-up (s)", "flexmb total (s)",
            "Exudyn steps/s", "Exudyn ms/step", "Exudyn total (s)", "ratio flexmb/Exudyn (per step)",
            "Exudyn default Newton ms/step", "ratio vs default", "tip difference (m)"]
    rows = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for r in results:
        f, e, d = r["flexmb"], r.get("exudyn"), r.get("exudyn_default_newton")
        cells = [r["N"], f"{r['T']:g}", f["steps"], f"{f['steps_per_s']:.0f}", f"{1e3 * f['per_step_s']:.2f}",
                 f"{f['init_s']:.2f}", f"{f['total_s']:.2f}"]
        if e:
            cells += [f"{e['steps_per_s']:.0f}", f"{1e3 * e['per_step_s']:.3f}", f"{e['total_s']:.2f}",
                      f"{r['ratio_per_step']:.1f}", f"{1e3 * d['per_step_s']:.3f}",
                      f"{r['ratio_per_step_vs_exudyn_default']:.1f}", f"{r['tip_difference']:.1e}"]
        else:
            cells += ["-"] * 7
        rows.append("| " + " | ".join(str(c) for c in cells) + " |")
    return "\n".join(rows)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=list(DEFAULT_SIZES))
    ap.add_argument("--h", type=float, default=DEFAULT_H)
    ap.add_argument("--repeat", type=int, default=5, help="runs per configuration for N <= 100 (best is kept)")
    ap.add_argument("--repeat-large", type=int, default=2, help="runs per configuration for N > 100")
    ap.add_argument("--no-exudyn", action="store_true", help="flexmb only")
    ap.add_argument("--no-accuracy", action="store_true", help="skip the h, h/2 cross-check")
    ap.add_argument("--out", default=str(Path(__file__).with_name("results") / "rigid_chain.json"))
    args = ap.parse_args(argv)
    with_exudyn = not args.no_exudyn and exudyn_version() is not None
    if not args.no_exudyn and not with_exudyn:
        print("exudyn is not installed (pip install 'flexmb[bench]'); running flexmb only", file=sys.stderr)
    started = _dt.datetime.now().astimezone()
    results = []
    for n in args.sizes:
        t_end = t_end_for(n)
        rep = args.repeat if n <= 100 else args.repeat_large
        print(f"N = {n}: T = {t_end} s, h = {args.h} s, {rep} run(s)", file=sys.stderr, flush=True)
        row = {"N": n, "T": t_end, "h": args.h, "loadavg_before": list(os.getloadavg())}
        row.update(measure(n, t_end, args.h, rep, with_exudyn))
        row["loadavg_after"] = list(os.getloadavg())
        if with_exudyn:
            row["ratio_per_step"] = row["flexmb"]["per_step_s"] / row["exudyn"]["per_step_s"]
            row["ratio_per_step_vs_exudyn_default"] = (row["flexmb"]["per_step_s"]
                                                       / row["exudyn_default_newton"]["per_step_s"])
            row["ratio_total"] = row["flexmb"]["total_s"] / row["exudyn"]["total_s"]
            row["tip_difference"] = float(np.linalg.norm(np.subtract(row["flexmb"]["tip"], row["exudyn"]["tip"])))
            row["energy_difference"] = row["flexmb"]["energy_T"] - row["exudyn"]["energy_T"]
        results.append(row)
    sizes = [r["N"] for r in results]
    # primary: time per step over the same first FIT_WINDOW seconds of motion for every N (same physics,
    # same Newton effort per step); secondary: the table's numbers (longer T for small N)
    growth = {"window_s": FIT_WINDOW,
              "flexmb": growth_exponent(sizes, [r["flexmb"]["per_step_fit_window_s"] for r in results]),
              "table": {"flexmb": growth_exponent(sizes, [r["flexmb"]["per_step_s"] for r in results])}}
    if with_exudyn:
        growth["exudyn"] = growth_exponent(sizes, [r["exudyn"]["per_step_fit_window_s"] for r in results])
        for k in ("exudyn", "exudyn_default_newton"):
            growth["table"][k] = growth_exponent(sizes, [r[k]["per_step_s"] for r in results])
    accuracy = None if args.no_accuracy else accuracy_check(args.h, with_exudyn)
    report = {
        "benchmark": "rigid_chain",
        "started": started.isoformat(timespec="seconds"),
        "wall_s": (_dt.datetime.now().astimezone() - started).total_seconds(),
        "machine": machine(),
        "model": {"link_length_m": L, "mass_kg": MASS, "inertia_kgm2": list(INERTIA), "gravity": list(GRAVITY),
                  "joint": "revolute, axis z", "start": "at rest, stretched along +x"},
        "integrator": {"method": "index-3 generalized-alpha", "rho_inf": RHO_INF, "h": args.h,
                       "newton": "iteration matrix rebuilt at the start of each step, reused while contracting; "
                                 "Exudyn: useModifiedNewton, modifiedNewtonJacUpdatePerStep=True, EigenSparse, "
                                 "1 thread, no solution file"},
        "results": results,
        "growth_exponent": growth,
        "accuracy": accuracy,
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=1) + "\n")
    print(markdown_table(results))
    print(f"growth exponent k (time per step ~ N^k), first {FIT_WINDOW:g} s of motion:")
    for k in ("flexmb", "exudyn"):
        if k in growth:
            g = growth[k]
            pair = ", ".join(f"{a}: {b:.2f}" for a, b in g["pairwise"].items())
            fits = ["-" if g[f] is None else f"{g[f]:.2f}" for f in ("fit_all", "fit_N>=100")]
            print(f"  {k:7s} fit over all N {fits[0]}, fit over N >= 100 {fits[1]}; pairwise {pair}")
    if accuracy:
        print("accuracy:", json.dumps({k: v for k, v in accuracy.items() if k != "runs"}, indent=1))
    print(f"written {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
