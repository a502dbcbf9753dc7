"""A pendulum hanging on one NonlinearSpring against the same pendulum on one SpringDamper (issue 24: a family added
through the five-file recipe of docs/architecture.md §4 runs as fast as a built-in one).

Model: a 2 kg bob (small isotropic inertia) hanging from the ground's origin on a spring between the origin and its
centre, released at rest 1.005 m from the origin, off the vertical (at (0.6, -0.8, 0.1) m), gravity -y: a swinging,
bouncing spring pendulum. Free length 0.95 m. Cases:

* ``linear``: ``SpringDamper`` with k = 2000 N/m, c = 0.7 N s/m;
* ``nonlinear``: ``NonlinearSpring`` with a 9-point table (a progressive buffer: 2000 N/m about the start,
  stiffening to 20 000 N/m in tension and in compression; the swing crosses several breakpoints) and the same c.

Both at the default settings of ``simulate`` (fixed step ``h``, ``save_every=1``, energy balance on, no environment
variable). Measured: the time per step of the time-stepping loop (``Result.stats["loop_s"]`` / steps: no compile, no
consistent start), best of ``--repeat`` interleaved runs, and the ratio nonlinear / linear: of the best runs, and the
median of the ratios of each interleaved pair of runs (two runs a few seconds apart share the machine's load; the
best runs of a loaded machine may come from different load levels). Goal: <= 1.3.

Run:  python benchmarks/nonlinear_spring.py [--h 1e-3] [--T 10] [--repeat 15]
"""
from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from rigid_chain import best_of, machine  # noqa: E402

GOAL = 1.3
"""Largest ratio nonlinear / linear per step accepted (issue 24: a fast family)."""

X_TABLE = np.array([-0.2, -0.1, -0.05, 0.0, 0.05, 0.1, 0.15, 0.2, 0.3])
F_TABLE = np.array([-2500.0, -600.0, -150.0, 0.0, 100.0, 250.0, 600.0, 1300.0, 3300.0])
"""The buffer's law (m, N): stiffening both ways from 2000-3000 N/m about the free length."""


def pendulum(case: str):
    """The bob on a ``SpringDamper`` (``case == "linear"``) or a ``NonlinearSpring``."""
    import flexmb as fm
    s = fm.System(gravity=(0.0, -9.81, 0.0), name="spring pendulum")
    start = (0.6, -0.8, 0.1)
    bob = s.add(fm.RigidBody(2.0, (0.01, 0.01, 0.01), position=start, name="bob"))
    if case == "linear":
        s.add(fm.SpringDamper(s.ground, bob, point_a=(0, 0, 0), point_b=start, k=2000.0, c=0.7, free_length=0.95,
                              name="spring"))
    else:
        s.add(fm.NonlinearSpring(s.ground, bob, point_a=(0, 0, 0), point_b=start, force=(X_TABLE, F_TABLE),
                                 damping=0.7, length=0.95, name="spring"))
    return s


def run(case: str, t_end: float, h: float) -> dict:
    """One run of ``case``: time per step of the step loop (s), steps, compiled steps, blocks, stretch range (m)."""
    import flexmb as fm
    res = fm.simulate(pendulum(case), t_end, h)
    steps = int(res.stats["steps"])
    e = np.linalg.norm(res.q[:, :3], axis=1) - 0.95
    return {"steps": steps, "per_step_s": float(res.stats["loop_s"]) / steps,
            "compiled_steps": int(res.stats["compiled_steps"]), "blocks": int(res.stats["blocks"]),
            "stretch_range_m": [float(e.min()), float(e.max())]}


CASES = ("linear", "nonlinear")


def measure(t_end: float, h: float, repeat: int) -> dict:
    """Both cases, interleaved run by run; the ratio of the best per-step times."""
    for c in CASES:
        run(c, 10 * h, h)                # loads (or compiles) each compiled step once, outside the timings
    runs = {c: [] for c in CASES}
    for _ in range(max(1, repeat)):
        for c in CASES:
            runs[c].append(run(c, t_end, h))
    best = {c: best_of(r) for c, r in runs.items()}
    ratio = best["nonlinear"]["per_step_s"] / best["linear"]["per_step_s"]
    pairs = [n["per_step_s"] / l["per_step_s"] for l, n in zip(runs["linear"], runs["nonlinear"])]
    median = float(np.median(pairs))
    return {"h": h, "t_end": t_end, "cases": best, "ratio": ratio, "ratio_median_of_pairs": median,
            "ratios_of_pairs": pairs, "goal": GOAL, "goal_met": max(ratio, median) <= GOAL}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--h", type=float, default=1e-3, help="step (s)")
    p.add_argument("--T", type=float, default=10.0, help="simulated time (s)")
    p.add_argument("--repeat", type=int, default=15, help="interleaved runs per case (best taken)")
    p.add_argument("--out", default=str(Path(__file__).parent / "results" / "nonlinear_spring.json"))
    args = p.parse_args(argv)
    load_before = os.getloadavg()[0]
    result = measure(args.T, args.h, args.repeat)
    result["load_average_1min"] = [load_before, os.getloadavg()[0]]
    print(f"spring pendulum, h = {args.h:g} s, T = {args.T:g} s, default settings, best of {args.repeat} "
          f"(load average {result['load_average_1min'][0]:.1f} -> {result['load_average_1min'][1]:.1f}):")
    for c in CASES:
        b = result["cases"][c]
        print(f"  {c:9s} {1e6 * b['per_step_s']:7.2f} us/step  ({b['steps']} steps, {b['compiled_steps']} compiled, "
              f"{b['blocks']} blocks, stretch {b['stretch_range_m'][0]:+.3f}..{b['stretch_range_m'][1]:+.3f} m)")
    print(f"  ratio nonlinear / linear: {result['ratio']:.2f} of the best runs, {result['ratio_median_of_pairs']:.2f} "
          f"median of the interleaved pairs (goal <= {GOAL})")
    result["machine"] = machine()
    result["date"] = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    Path(args.out).write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
