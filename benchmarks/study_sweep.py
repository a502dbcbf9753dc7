"""A 200-case impact sweep (issue 6): serial against 2 local processes, the same Study code.

The cases are ``flexmb.studies.examples.ball_drop`` (a 4.5 kg head form on a Hertzian contact,
100 steps per contact) over a Latin hypercube of impact speed and stiffness. Reports wall seconds,
seconds per case and the speed-up; the tables of both runs must be identical.

Run:  python benchmarks/study_sweep.py [--cases 200] [--out benchmarks/results/study_sweep.json]
"""
from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

if __name__ == "__main__":
    for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_var, "1")

import numpy as np

from flexmb.studies import Samples, Study
from flexmb.studies.examples import ball_drop, ball_drop_metrics


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=200)
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    study = Study(ball_drop, Samples({"v": (1.0, 8.0), "K": (1e7, 1e9)}, n=args.cases, seed=3, log=("K",)),
                  ball_drop_metrics(), name="sweep")
    rows = {}
    with tempfile.TemporaryDirectory() as tmp:
        for executor, workers in (("serial", None), ("processes", 2)):
            t0 = time.perf_counter()
            res = study.run(Path(tmp) / executor, executor=executor, workers=workers, progress=False)
            wall = time.perf_counter() - t0
            rows[executor] = {"wall_s": wall, "s_per_case": wall / args.cases, "ok": int(np.sum(res["status"] == "ok")),
                              "hic15": res["hic15"].tolist()}
            print(f"{executor:10s} {wall:7.2f} s  {wall / args.cases * 1e3:6.1f} ms/case  ok {rows[executor]['ok']}")
    same = np.allclose(rows["serial"]["hic15"], rows["processes"]["hic15"], rtol=1e-12, equal_nan=True)
    speedup = rows["serial"]["wall_s"] / rows["processes"]["wall_s"]
    print(f"speed-up on 2 processes: {speedup:.2f}; identical tables: {same}; cpus: {os.cpu_count()}")
    if args.out:
        Path(args.out).write_text(json.dumps({"cases": args.cases, "speedup": speedup, "identical": bool(same),
                                              "cpus": os.cpu_count(),
                                              **{k: {kk: vv for kk, vv in v.items() if kk != "hic15"}
                                                 for k, v in rows.items()}}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
