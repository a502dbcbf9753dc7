"""Speed cliffs of ``simulate`` (issue 24, item 2): one pendulum, per-step time with and without each feature.

Model: a rigid pendulum (1 kg point-like bob, 0.5 m from a revolute pin about z, gravity -y), released from
horizontal. Cases, each against the pendulum alone, all at the default settings of ``simulate`` (fixed step
``h``, ``save_every=1``, energy balance on, no environment variable):

* ``spring``: the same pendulum with one ``RotationalSpringDamper`` at the pin (k = 2 N m/rad, c = 0.01
  N m s/rad): an element with history (the angle's unwrapping reference), which every saved row carries.
* ``progress``: the pendulum alone with a ``progress=`` callback that does nothing.
* ``output``: the pendulum alone writing its history to an ``output=`` directory (default ``chunk_steps``).

Measured: the time per step of the time-stepping loop (``Result.stats["loop_s"]`` / steps: no compile, no
consistent start), best of ``--repeat`` interleaved runs (the cases share the machine's load), and the ratio
of each case to the pendulum alone. Goals (issue 24): spring <= 1.3, progress <= 1.1.

Two passes in the one run: ``default`` (nothing set: the compiled step form each model gets by default,
flexmb/compiled/specialization.py; after ``flexmb compile-kernels`` the pendulum alone has its specialized step
cached and the pendulum with a spring runs on the universal one) and ``universal`` (every case on the universal
step, ``specialization.variant = "universal"`` in this process: the cost of the spring, the callback and the
output alone, without the difference between the two compiled forms).

Run:  python benchmarks/cliffs.py [--h 1e-3] [--T 10] [--repeat 15]
"""
from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from rigid_chain import best_of, machine  # noqa: E402

GOALS = {"spring": 1.3, "progress": 1.1}
"""Largest ratio to the pendulum alone that issue 24 accepts (no goal is set for ``output``)."""


def pendulum(spring: bool):
    """The pendulum, with the rotational spring-damper at its pin when ``spring``."""
    import flexmb as fm
    s = fm.System(gravity=(0.0, -9.81, 0.0), name="pendulum")
    b = s.add(fm.RigidBody(1.0, (0.01, 0.01, 0.01), position=(0.5, 0.0, 0.0), name="bob"))
    s.add(fm.Revolute(s.ground, b, (0.0, 0.0, 0.0), (0.0, 0.0, 1.0), name="pin"))
    if spring:
        s.add(fm.RotationalSpringDamper(s.ground, b, axis=(0.0, 0.0, 1.0), k=2.0, c=0.01, name="spring"))
    return s


def run(case: str, t_end: float, h: float) -> dict:
    """One run of ``case`` ("alone", "spring", "progress", "output"): time per step of the step loop (s)."""
    import flexmb as fm
    calls = [0]

    def progress(t, t_end):
        calls[0] += 1

    kw = {"progress": progress} if case == "progress" else {}
    with tempfile.TemporaryDirectory() as tmp:
        if case == "output":
            kw["output"] = Path(tmp) / "run"
        res = fm.simulate(pendulum(case == "spring"), t_end, h, **kw)
    steps = int(res.stats["steps"])
    out = {"steps": steps, "per_step_s": float(res.stats["loop_s"]) / steps, "blocks": int(res.stats["blocks"]),
           "rows": int(res.t.size)}
    if case == "progress":
        out["callback_calls"] = calls[0]
    return out


CASES = ("alone", "spring", "progress", "output")
PASSES = ("default", "universal")


def in_pass(name: str, case: str, t_end: float, h: float) -> dict:
    """:func:`run` of ``case`` with the compiled step form of pass ``name`` (module docstring)."""
    from flexmb.compiled import specialization
    saved = specialization.variant
    specialization.variant = saved if name == "default" else name
    try:
        return run(case, t_end, h)
    finally:
        specialization.variant = saved


def measure(t_end: float, h: float, repeat: int) -> dict:
    """Every case of every pass, interleaved run by run; per pass the ratios of the best per-step times to the
    pendulum alone."""
    runs = {p: {c: [] for c in CASES} for p in PASSES}
    for p in PASSES:
        for c in CASES:
            in_pass(p, c, 10 * h, h)        # loads each compiled step once, outside the timings
    for _ in range(max(1, repeat)):
        for p in PASSES:
            for c in CASES:
                runs[p][c].append(in_pass(p, c, t_end, h))
    out = {"h": h, "t_end": t_end}
    for p in PASSES:
        best = {c: best_of(r) for c, r in runs[p].items()}
        base = best["alone"]["per_step_s"]
        ratios = {c: best[c]["per_step_s"] / base for c in CASES if c != "alone"}
        out[p] = {"cases": best, "ratios": ratios, "goals_met": {c: ratios[c] <= g for c, g in GOALS.items()}}
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--h", type=float, default=1e-3, help="step (s)")
    p.add_argument("--T", type=float, default=10.0, help="simulated time (s)")
    p.add_argument("--repeat", type=int, default=15, help="interleaved runs per case (best taken)")
    p.add_argument("--out", default=str(Path(__file__).parent / "results" / "cliffs.json"))
    args = p.parse_args(argv)
    load_before = os.getloadavg()[0]
    result = measure(args.T, args.h, args.repeat)
    result["load_average_1min"] = [load_before, os.getloadavg()[0]]     # before and after: other jobs' share
    print(f"pendulum, h = {args.h:g} s, T = {args.T:g} s, save_every = 1, best of {args.repeat} "
          f"(load average {result['load_average_1min'][0]:.1f} -> {result['load_average_1min'][1]:.1f}):")
    for p in PASSES:
        print(f" {p} compiled step form:")
        for c, r in result[p]["cases"].items():
            ratio = result[p]["ratios"].get(c)
            print(f"  {c:9s} {1e6 * r['per_step_s']:8.2f} us/step  {r['blocks']:6d} blocks"
                  + (f"  ratio {ratio:5.2f}" if ratio is not None else "")
                  + (f"  (goal <= {GOALS[c]})" if c in GOALS else ""))
    result["machine"] = machine()
    result["date"] = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    result["command"] = "python benchmarks/cliffs.py " + " ".join(argv if argv is not None else sys.argv[1:])
    Path(args.out).write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
