"""Start-up cost (issue 11 item 5): a new Python process that imports flexmb and runs 100 steps of the
double pendulum (verification/rigid/models.py), timed as a whole (interpreter start, imports, loading the
compiled kernels from numba's disk cache, building the model, consistent start, 100 steps).

Run:  python benchmarks/startup.py [--repeat 5]   (warm cache: run `flexmb compile-kernels` first)
      python benchmarks/startup.py --cold         (the same process with an empty numba cache: the one-time
                                                  compile of a user's first run without compile-kernels)
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


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--cold", action="store_true", help="one run with an empty numba cache (NUMBA_CACHE_DIR)")
    args = ap.parse_args(argv)
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
