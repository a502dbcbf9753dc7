"""Start-up cost (issue 11 item 5): a new Python process that imports flexmb and runs 100 steps of the
double pendulum (verification/rigid/models.py), timed as a whole (interpreter start, imports, loading the
compiled kernels from numba's disk cache, building the model, consistent start, 100 steps).

Run:  python benchmarks/startup.py [--repeat 5]   (warm cache: run `flexmb compile-kernels` first)
      python benchmarks/startup.py --cold         (the same process with an empty numba cache: the one-time
                                                  compile of a user's first run without compile-kernels)
      python benchmarks/startup.py --families     (cold compiles of models with more and more families, each
                                                  in a new process with an empty cache: wall and CPU time and
                                                  the compiles flexmb recorded, into results/startup.json)
The compile of every kernel for every model is measured with `flexmb compile-kernels --clean` (it prints its
wall time).
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ("import flexmb as fm\n"
          "from verification.rigid.models import double_pendulum\n"
          "s, _, _ = double_pendulum()\n"
          "res = fm.simulate(s, 0.1, 1e-3, progress=False)\n"
          "assert res.stats['steps'] == 100\n")


FAMILY_MODELS = {
    "README pendulum (rigid bodies, revolute joints)": "",
    "+ rotational spring": "s.add(fm.RotationalSpringDamper(s.ground, l1, (0, 0, 1), k=5.0, c=0.1))\n",
    "+ spring and sphere-plane contact": (
        "s.add(fm.RotationalSpringDamper(s.ground, l1, (0, 0, 1), k=5.0, c=0.1))\n"
        "s.add(fm.SpherePlaneContact(s.ground, l2, point=(0, -0.6, 0), normal=(0, 1, 0), center=(0.5, 0, 0),"
        " radius=0.05, law=fm.contact.LankaraniNikravesh(1e6, 0.8)))\n"),
}
"""Models for ``--families``: the README's double pendulum with the lines added before the run."""

PENDULUM = ("import flexmb as fm\n"
            "s = fm.System(gravity=(0, -9.81, 0))\n"
            "l1 = s.add(fm.RigidBody(mass=10.0, inertia=(0.01, 10*0.5**2/12, 10*0.5**2/12), position=(0.25, 0, 0)))\n"
            "l2 = s.add(fm.RigidBody(mass=5.0, inertia=(0.01, 5/12, 5/12), position=(1.0, 0, 0)))\n"
            "s.add(fm.Revolute(s.ground, l1, point=(0, 0, 0), axis=(0, 0, 1)))\n"
            "s.add(fm.Revolute(l1, l2, point=(0.5, 0, 0), axis=(0, 0, 1)))\n")


def families(out: Path) -> None:
    """Cold compile of each model of :data:`FAMILY_MODELS` in a new process with an empty numba cache."""
    import json
    import resource
    rows = []
    for name, extra in FAMILY_MODELS.items():
        script = PENDULUM + extra + "res = fm.simulate(s, 2.0, 1e-3, progress=False)\n"
        with tempfile.TemporaryDirectory() as cache:
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.perf_counter()
            run = subprocess.run([sys.executable, "-c", script], cwd=ROOT, check=True, capture_output=True, text=True,
                                 env={**os.environ, "NUMBA_CACHE_DIR": cache})
            wall = time.perf_counter() - t0
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            record = json.loads((Path(cache) / "flexmb-kernels.json").read_text())["entries"]
        compiles = {f"{e['function']} ({e['families']})": e["seconds"] for e in record.values()}
        rows.append({"model": name, "wall_s": round(wall, 1),
                     "cpu_s": round(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, 1),
                     "recorded_compiles_s": compiles, "notices": run.stderr.strip().splitlines()})
        print(f"{name}: {wall:.1f} s wall, {rows[-1]['cpu_s']:.1f} s CPU; " +
              "; ".join(f"{k} {v:.1f} s" for k, v in compiles.items()), flush=True)
    data = json.loads(out.read_text()) if out.exists() else {}
    data["families"] = {"date": time.strftime("%Y-%m-%d"), "cpus": os.cpu_count(), "rows": rows}
    out.write_text(json.dumps(data, indent=1))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--cold", action="store_true", help="one run with an empty numba cache (NUMBA_CACHE_DIR)")
    ap.add_argument("--families", action="store_true", help="cold compiles of models with more families")
    args = ap.parse_args(argv)
    if args.families:
        families(ROOT / "benchmarks" / "results" / "startup.json")
        return 0
    if args.cold:
        with tempfile.TemporaryDirectory() as cache:
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, check=True,
                           env={**os.environ, "NUMBA_CACHE_DIR": cache})
            wall = time.perf_counter() - t0
        print(f"import flexmb + double pendulum, 100 steps, new process, empty numba cache: {wall:.1f} s")
        return 0
    walls = []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, check=True)
        walls.append(time.perf_counter() - t0)
    print(f"import flexmb + double pendulum, 100 steps, new process: best {min(walls):.2f} s, "
          f"median {statistics.median(walls):.2f} s over {len(walls)} runs ({', '.join(f'{w:.2f}' for w in walls)})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
