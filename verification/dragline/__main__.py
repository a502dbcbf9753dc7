"""``python -m verification.dragline [OUTDIR]``: the dragline of suite ``dragline`` (Crous 2000, Ch. 5): the rig at
rest against the statics by hand (``dragline-hang``: rope lengths and tensions, the boom suspension by moments about
the boom foot) and the full 50 s dig-hoist-swing-dump cycle
(``dragline-cycle``: rope tensions, bucket path and energy), written as PNG plots and a JSON summary to OUTDIR
(default ``dragline-out``); docs/theory-ropes.md §8."""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from .cycle import dragline_cycle
from .hang import dragline_hang


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    out = Path(args[0] if args else "dragline-out")
    out.mkdir(parents=True, exist_ok=True)
    summary, ok = {}, True
    for case in (dragline_hang, dragline_cycle):
        t0 = time.perf_counter()
        r = case(False)
        names = ["rig"] if r.name == "dragline-hang" else ["tensions", "bucket_path", "energy"]
        for fig, what in zip(r.figures, names):
            fig.savefig(out / f"{r.name}_{what}.png", dpi=120)
        summary[r.name] = {"checks": [{"metric": c.metric, "value": float(c.value), "reference": c.reference,
                                       "tolerance": c.tolerance, "passed": bool(c.passed)} for c in r.checks],
                           "metrics": {k: float(v) for k, v in r.metrics.items()}, "notes": r.notes,
                           "wall_s": time.perf_counter() - t0}
        print(f"{r.name}: {r.notes}")
        for c in r.checks:
            print(f"  {c.metric}: {c.value:.6g} (reference {c.reference}, {c.tolerance}): "
                  f"{'pass' if c.passed else 'FAIL'}")
            ok &= bool(c.passed)
    (out / "dragline.json").write_text(json.dumps(summary, indent=2))
    print(f"written to {out}/")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
