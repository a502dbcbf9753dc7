"""Sphere-settling benchmark (issue 6): N spheres in a box, flexmb side by side with Exudyn.

N steel spheres (R = 10 mm, 32.9 g) start on a jittered cubic lattice (gap 0.2 R) with random velocities
(0.3 m/s rms per component) inside an open box (floor y = 0 and four walls, 5 planes) and fall under gravity
(-y). Every sphere touches every other sphere and the five planes. Each run covers ``--t-end`` (default
0.05 s) at a fixed step h (default 1e-4 s).

flexmb: ``flexmb.contact.mesh.SphereCloudContact`` (broad phase rebuilt per accepted step, narrow phase
vectorized over the candidates), generalized-alpha (rho_inf = 0.9), contact-onset step cutting off
(``contact_tol=inf``: no peer cuts steps at contact onsets either), no energy bookkeeping. Two laws:

* ``flexmb_hertz``: Lankarani-Nikravesh (n = 3/2, the flexmb default), K chosen so that a 0.5 m/s head-on
  impact of two spheres penetrates as deep as with the linear spring below;
* ``flexmb_linear``: the linear spring-damper ``F = k delta + c delta_dot`` (k = 1e5 N/m, c for e = 0.5), the
  law Exudyn's GeneralContact uses.

Exudyn (peer only): ``GeneralContact.AddSphereWithMarker`` per sphere (rigid bodies), the box as 10 static
triangles (``AddTrianglesRigidBodyBased``), search tree of cells ~4 R; Exudyn combines the stiffness of two
items in series and the damping in parallel, so each item gets 2k and c/2 and a pair has exactly k and c.

* ``exudyn_implicit``: generalized-alpha (rho_inf = 0.9), Euler-parameter nodes (as flexmb), EigenSparse,
  one thread, the same h;
* ``exudyn_rk44``: explicit RK4 with rotation-vector (Lie group) nodes, the same h -- the usual way to run
  particles in Exudyn.

Measured per run: time per step of the step loop (set-up excluded), Newton iterations and factorizations
per step, contacts in touch per step (counted afterwards from positions, the same counter for both codes),
"contact pair-steps per second" = (sum over steps of the pairs in touch) / loop time, and for flexmb the
broad-phase candidates per evaluation, the narrow-phase throughput (candidate pairs evaluated per second
of narrow-phase time) and the broad-phase time per rebuild. A second sweep at N = --scan-n varies the
broad-phase margin to vary the number of candidates at fixed dynamics: cost per step against candidates
(log-log slope; 1 = linear).

Run:  python benchmarks/contact_spheres.py [--sizes 100 300 1000] [--t-end 0.05] [--h 1e-4]
      [--no-exudyn] [--out benchmarks/results/contact_spheres.json]
"""
from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
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

R = 0.01                                    # sphere radius (m)
RHO = 7850.0                                # kg/m^3
MASS = RHO * 4.0 / 3.0 * np.pi * R ** 3     # 32.9 g
GRAVITY = (0.0, -9.81, 0.0)
GAP = 0.2 * R                               # lattice gap between neighbours
K_LIN = 1e5                                 # N/m, linear contact stiffness of a pair
E_REST = 0.5                                # restitution the linear damping is calibrated for
V_REF = 0.5                                 # m/s, impact speed at which the Hertz K matches the linear depth
RHO_INF = 0.9


def lattice(n_spheres: int, seed: int = 1):
    """Initial centres (N, 3), velocities (N, 3) and the box side (m)."""
    rng = np.random.default_rng(seed)
    n = int(np.ceil(n_spheres ** (1.0 / 3.0) - 1e-9))
    pitch = 2.0 * R + GAP
    idx = np.array([(i, j, k) for k in range(n) for i in range(n) for j in range(n)])[:n_spheres]
    pos = (idx + 0.5) * pitch
    pos = pos[:, [0, 2, 1]] + rng.uniform(-0.05 * R, 0.05 * R, (n_spheres, 3))   # layers stacked along y
    vel = rng.normal(0.0, 0.3, (n_spheres, 3))
    return pos, vel, n * pitch


def laws():
    from flexmb.contact import LankaraniNikravesh, LinearSpringDamper
    lin = LinearSpringDamper(K_LIN, E_REST, MASS / 2)
    depth = V_REF * np.sqrt(MASS / 2 / K_LIN)                         # linear: delta_max = v sqrt(m/k)
    K = 5.0 * (MASS / 2) * V_REF ** 2 / (4.0 * depth ** 2.5)          # Hertz: delta_max = (5 m v^2 / 4K)^(2/5)
    return {"linear": lin, "hertz": LankaraniNikravesh(K, E_REST)}


def planes(side):
    """(point, inward normal) of the floor and the four walls."""
    return [((0, 0, 0), (0, 1, 0)), ((0, 0, 0), (1, 0, 0)), ((side, 0, 0), (-1, 0, 0)),
            ((0, 0, 0), (0, 0, 1)), ((0, 0, side), (0, 0, -1))]


def count_touching(pos: np.ndarray, side: float) -> int:
    """Pairs in touch (sphere-sphere and sphere-plane) at sphere centres ``pos``."""
    from flexmb.contact.broadphase import sphere_pairs
    i, _ = sphere_pairs(pos, np.full(len(pos), R))
    walls = (np.sum(pos[:, 1] < R) + np.sum(pos[:, 0] < R) + np.sum(pos[:, 0] > side - R)
             + np.sum(pos[:, 2] < R) + np.sum(pos[:, 2] > side - R))
    return int(i.size + walls)


# ---------------------------------------------------------------------------
# flexmb
# ---------------------------------------------------------------------------
def run_flexmb(n: int, t_end: float, h: float, law: str, margin_factor: float = 1.0, count: bool = True) -> dict:
    import flexmb as fm
    from flexmb.contact.mesh import SphereCloudContact
    t0 = time.perf_counter()
    pos, vel, side = lattice(n)
    s = fm.System(gravity=GRAVITY, name=f"spheres{n}")
    bodies = [s.add(fm.RigidBody(MASS, (0.4 * MASS * R * R,) * 3, position=p, velocity=v, name=f"s{k}"))
              for k, (p, v) in enumerate(zip(pos, vel))]
    s.add(SphereCloudContact(bodies, pos, R, laws()[law], planes=[(s.ground, p, nrm) for p, nrm in planes(side)],
                             margin=margin_factor * R, coupling="none"))
    asm = s.compile()
    t_build = time.perf_counter() - t0
    stamps: list[float] = []

    def progress(t, t_end_):
        stamps.append(time.perf_counter())

    from flexmb.solvers import progress as reporter
    every, reporter.CALLBACK_S = reporter.CALLBACK_S, 0.0      # a time stamp after every step (default: every 0.1 s)
    t_call = time.perf_counter()
    try:
        res = fm.simulate(s, t_end, h, rho_inf=RHO_INF, energy=False, contact_tol=np.inf, progress=progress)
    finally:
        reporter.CALLBACK_S = every
    t_done = time.perf_counter()
    steps = int(res.stats["steps"])
    per_step = (stamps[-1] - stamps[0]) / (len(stamps) - 1)
    groups = {type(g).__name__: dict(g.stats) for g in asm.contacts}
    ev = sum(g["evaluations"] for g in groups.values())
    cand = sum(g["candidates_evaluated"] for g in groups.values())
    ev_s = sum(g["evaluate_s"] for g in groups.values())
    rb_s = sum(g["rebuild_s"] for g in groups.values())
    rebuilds = max(g["rebuilds"] for g in groups.values())
    out = {
        "N": n, "law": law, "margin_R": margin_factor, "steps": steps, "build_s": t_build,
        "init_s": max(stamps[0] - t_call - per_step, 0.0), "loop_s": per_step * steps, "per_step_s": per_step,
        "total_s": t_build + (t_done - t_call),
        "newton_per_step": res.stats["newton_iterations"] / steps,
        "factorizations_per_step": res.stats["factorizations"] / steps,
        "rejected": res.stats["rejected"],
        "evaluations_per_step": ev / steps / len(groups),
        "candidates_per_evaluation": cand / max(ev / len(groups), 1),
        "candidates_evaluated": cand,
        "candidate_pairs_per_s_loop": cand / (per_step * steps),
        "narrow_phase_s": ev_s, "narrow_phase_pairs_per_s": cand / ev_s if ev_s else None,
        "broad_phase_s": rb_s, "broad_phase_ms_per_rebuild": 1e3 * rb_s / max(rebuilds, 1),
        "contact_ms_per_step": 1e3 * (ev_s + rb_s) / steps,
        "groups": groups, "missed": sum(g["missed"] for g in groups.values()),
    }
    out["final_mean_height"] = float(res.q[-1].reshape(-1, 7)[:, 1].mean())
    if count:
        touching = [count_touching(q.reshape(-1, 7)[:, :3], side) for q in res.q[1:]]
        out["touching_mean"] = float(np.mean(touching))
        out["pair_steps_per_s"] = float(np.sum(touching) / (per_step * steps))
    return out


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
    except Exception:
        return getattr(exu, "__version__", "unknown")


def build_exudyn(n: int, explicit: bool):
    import exudyn as exu
    from exudyn.utilities import InertiaSphere, MarkerBodyRigid, ObjectGround
    pos, vel, side = lattice(n)
    lin = laws()["linear"]
    sc = exu.SystemContainer()
    mbs = sc.AddSystem()
    ground = mbs.AddObject(ObjectGround())
    mg = mbs.AddMarker(MarkerBodyRigid(bodyNumber=ground))
    gc = mbs.AddGeneralContact()
    gc.verboseMode = 0
    node = exu.NodeType.RotationRotationVector if explicit else exu.NodeType.RotationEulerParameters
    for p, v in zip(pos, vel):
        b = mbs.CreateRigidBody(inertia=InertiaSphere(MASS, R), referencePosition=list(p), initialVelocity=list(v),
                                gravity=list(GRAVITY), nodeType=node, show=False)
        gc.AddSphereWithMarker(mbs.AddMarker(MarkerBodyRigid(bodyNumber=b)), radius=R, contactStiffness=2 * K_LIN,
                               contactDamping=0.5 * lin.c, frictionMaterialIndex=0)
    H = 3.0 * side
    pts = [[0, 0, 0], [side, 0, 0], [side, 0, side], [0, 0, side], [0, H, 0], [side, H, 0], [side, H, side],
           [0, H, side]]
    tris = [[0, 3, 2], [0, 2, 1], [0, 1, 5], [0, 5, 4], [3, 7, 6], [3, 6, 2], [0, 4, 7], [0, 7, 3], [1, 2, 6],
            [1, 6, 5]]                                                        # normals into the box
    gc.AddTrianglesRigidBodyBased(rigidBodyMarkerIndex=mg, contactStiffness=2 * K_LIN, contactDamping=0.5 * lin.c,
                                  frictionMaterialIndex=0, pointList=pts, triangleList=tris, staticTriangles=True)
    gc.SetFrictionPairings(np.zeros((1, 1)))
    cells = max(1, int(side / (4 * R)))
    gc.SetSearchTreeCellSize(numberOfCells=[cells, cells, cells])
    gc.SetSearchTreeBox(pMin=[-R, -R, -R], pMax=[side + R, side + R, side + R])
    mbs.Assemble()
    return sc, mbs, gc, pos, side


def exudyn_settings(t_end, h):
    import exudyn as exu
    ss = exu.SimulationSettings()
    ti = ss.timeIntegration
    ti.numberOfSteps = int(round(t_end / h))
    ti.endTime = t_end
    ti.verboseMode = 0
    ti.generalizedAlpha.spectralRadius = RHO_INF
    ti.explicit.computeEndOfStepAccelerations = False
    ss.solution.file.write = False
    ss.solution.file.writeInitialValues = False
    ss.solution.sensors.active = False
    ss.parallel.numberOfThreads = 1
    ss.linearSolver.solverType = exu.LinearSolverType.EigenSparse
    return ss


def run_exudyn(n: int, t_end: float, h: float, explicit: bool, count: bool = True) -> dict:
    import exudyn as exu
    t0 = time.perf_counter()
    sc, mbs, gc, pos, side = build_exudyn(n, explicit)
    t_build = time.perf_counter() - t0
    ss = exudyn_settings(t_end, h)
    steps = ss.timeIntegration.numberOfSteps
    if explicit:
        solver = exu.MainSolverExplicit()
        ss.timeIntegration.solverType = exu.DynamicSolverType.RK44
    else:
        solver = exu.MainSolverImplicitSecondOrder()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t1 = time.perf_counter()
        solver.InitializeSolver(mbs, ss)
        t2 = time.perf_counter()
        solver.SolveSteps(mbs, ss)
        t3 = time.perf_counter()
        solver.FinalizeSolver(mbs, ss)
    if abs(solver.it.currentTime - t_end) > 1e-9:
        raise RuntimeError(f"Exudyn stopped at t = {solver.it.currentTime} instead of {t_end}")
    per_step = (t3 - t2) / steps
    ncoord = 6 if explicit else 7
    out = {"N": n, "solver": "RK44 explicit" if explicit else "generalized-alpha", "steps": steps,
           "build_s": t_build, "init_s": t2 - t1, "loop_s": t3 - t2, "per_step_s": per_step,
           "total_s": t_build + (t3 - t1)}
    if not explicit:
        out["newton_per_step"] = solver.it.newtonStepsCount / steps
        out["factorizations_per_step"] = solver.it.newtonJacobiCount / steps
    q = np.asarray(mbs.systemData.GetODE2Coordinates()).reshape(-1, ncoord)
    out["final_mean_height"] = float((pos[:, 1] + q[:, 1]).mean())
    if count:     # an untimed second run that samples the positions every step for the contact count
        sc, mbs, gc, pos, side = build_exudyn(n, explicit)
        touching = []

        def pre_step(mbs_, t):
            if t > 0:
                touching.append(count_touching(pos + np.asarray(mbs_.systemData.GetODE2Coordinates()).reshape(
                    -1, ncoord)[:, :3], side))
            return True

        mbs.SetPreStepUserFunction(pre_step)
        mbs.Assemble()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if explicit:
                mbs.SolveDynamic(ss, solverType=exu.DynamicSolverType.RK44)
            else:
                mbs.SolveDynamic(ss)
        out["touching_mean"] = float(np.mean(touching))
        out["pair_steps_per_s"] = float(np.mean(touching) * steps / (t3 - t2))
    return out


# ---------------------------------------------------------------------------
# driver
# ---------------------------------------------------------------------------
def slope(x, y) -> float:
    return float(np.polyfit(np.log(np.asarray(x, float)), np.log(np.asarray(y, float)), 1)[0])


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
    return {"cpu": cpu, "cores": os.cpu_count(), "platform": platform.platform(),
            "blas_threads": os.environ.get("OPENBLAS_NUM_THREADS"),
            "flexmb_step": os.environ.get("FLEXMB_STEP", "auto"), "python": platform.python_version(),
            "numpy": np.__version__, "scipy": scipy.__version__, "flexmb": flexmb.__version__,
            "exudyn": exudyn_version(), "load_average": list(os.getloadavg())}


def markdown(results) -> str:
    cols = ["N", "code / law", "ms/step", "Newton it./step", "factorizations/step", "in touch (mean)",
            "pair-steps/s", "candidates/eval.", "narrow phase (pairs/s)", "broad phase (ms/rebuild)",
            "contact ms/step"]
    rows = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for r in results["sizes"]:
        for key, label in (("flexmb_hertz", "flexmb, Hertz LN"), ("flexmb_linear", "flexmb, linear"),
                           ("exudyn_implicit", "Exudyn implicit, linear"), ("exudyn_rk44", "Exudyn RK44, linear")):
            x = r.get(key)
            if not x:
                continue
            fl = key.startswith("flexmb")
            cells = [r["N"], label, f"{1e3 * x['per_step_s']:.2f}",
                     f"{x['newton_per_step']:.2f}" if "newton_per_step" in x else "-",
                     f"{x['factorizations_per_step']:.2f}" if "factorizations_per_step" in x else "-",
                     f"{x.get('touching_mean', float('nan')):.0f}", f"{x.get('pair_steps_per_s', float('nan')):.3g}",
                     f"{x['candidates_per_evaluation']:.0f}" if fl else "-",
                     f"{x['narrow_phase_pairs_per_s']:.3g}" if fl else "-",
                     f"{x['broad_phase_ms_per_rebuild']:.2f}" if fl else "-",
                     f"{x['contact_ms_per_step']:.2f}" if fl else "-"]
            rows.append("| " + " | ".join(str(c) for c in cells) + " |")
    return "\n".join(rows)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[100, 300, 1000])
    ap.add_argument("--t-end", type=float, default=0.05)
    ap.add_argument("--h", type=float, default=1e-4)
    ap.add_argument("--scan-n", type=int, default=1000)
    ap.add_argument("--scan-t-end", type=float, default=0.01)
    ap.add_argument("--margins", type=float, nargs="+", default=[0.25, 1.0, 2.0, 4.0])
    ap.add_argument("--repeat", type=int, default=2, help="runs per configuration (the fastest is kept)")
    ap.add_argument("--no-exudyn", action="store_true")
    ap.add_argument("--no-linear", action="store_true", help="skip flexmb with the linear law")
    ap.add_argument("--out", default=str(Path(__file__).parent / "results" / "contact_spheres.json"))
    args = ap.parse_args(argv)
    with_exudyn = not args.no_exudyn and exudyn_version() is not None
    out = {"benchmark": "contact_spheres", "date": _dt.datetime.now().isoformat(timespec="seconds"),
           "machine": machine(), "T": args.t_end, "h": args.h, "repeat": args.repeat,
           "model": {"R": R, "mass": MASS, "gap": GAP, "k_linear": K_LIN, "e": E_REST, "laws": {
               k: repr(v) for k, v in laws().items()}}, "sizes": []}
    for n in args.sizes:
        configs = {"flexmb_hertz": lambda c: run_flexmb(n, args.t_end, args.h, "hertz", count=c)}
        if not args.no_linear:
            configs["flexmb_linear"] = lambda c: run_flexmb(n, args.t_end, args.h, "linear", count=c)
        if with_exudyn:
            configs["exudyn_implicit"] = lambda c: run_exudyn(n, args.t_end, args.h, explicit=False, count=c)
            configs["exudyn_rk44"] = lambda c: run_exudyn(n, args.t_end, args.h, explicit=True, count=c)
        runs = {k: [] for k in configs}
        for rep in range(max(1, args.repeat)):        # interleaved, so that all codes share the machine's load
            for k, fn in configs.items():
                runs[k].append(fn(rep == 0))
        r = {"N": n}
        for k, rs in runs.items():
            best = dict(min(rs, key=lambda x: x["per_step_s"]))
            if "touching_mean" in rs[0]:                      # counted in the first run (deterministic)
                best["touching_mean"] = rs[0]["touching_mean"]
                best["pair_steps_per_s"] = rs[0]["touching_mean"] * best["steps"] / best["loop_s"]
            best["per_step_all_s"] = [x["per_step_s"] for x in rs]
            r[k] = best
            print(f"N={n} {k}: {1e3 * best['per_step_s']:.2f} ms/step", flush=True)
        out["sizes"].append(r)
    sz = [r for r in out["sizes"] if r["N"] >= 100]
    if len(sz) >= 2:
        out["growth"] = {
            "flexmb_ms_per_step_vs_N": slope([r["N"] for r in sz], [r["flexmb_hertz"]["per_step_s"] for r in sz]),
            "flexmb_contact_ms_vs_candidates": slope([r["flexmb_hertz"]["candidates_per_evaluation"] for r in sz],
                                                     [r["flexmb_hertz"]["contact_ms_per_step"] for r in sz])}
        if with_exudyn:
            out["growth"]["exudyn_implicit_ms_per_step_vs_N"] = slope(
                [r["N"] for r in sz], [r["exudyn_implicit"]["per_step_s"] for r in sz])
    scan = [run_flexmb(args.scan_n, args.scan_t_end, args.h, "hertz", margin_factor=m, count=False)
            for m in args.margins]
    cands = [x["candidates_per_evaluation"] for x in scan]
    out["margin_scan"] = {
        "N": args.scan_n, "T": args.scan_t_end,
        "runs": [{k: x[k] for k in ("margin_R", "candidates_per_evaluation", "per_step_s", "contact_ms_per_step",
                                    "narrow_phase_pairs_per_s", "broad_phase_ms_per_rebuild", "newton_per_step")}
                 for x in scan],
        "slope_contact_ms_vs_candidates": slope(cands, [x["contact_ms_per_step"] for x in scan]),
        "slope_total_ms_vs_candidates": slope(cands, [x["per_step_s"] for x in scan]),
    }
    for x in scan:
        print(f"margin {x['margin_R']} R: {x['candidates_per_evaluation']:.0f} candidates, "
              f"{1e3 * x['per_step_s']:.2f} ms/step, contact {x['contact_ms_per_step']:.2f} ms/step", flush=True)
    out["load_average_end"] = list(os.getloadavg())
    out["table"] = markdown(out)
    print(out["table"])
    print(json.dumps({k: out[k] for k in ("growth", "margin_scan") if k in out}, indent=1))
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=1, default=float))
    return 0


if __name__ == "__main__":
    sys.exit(main())
