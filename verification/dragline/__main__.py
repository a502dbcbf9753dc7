"""``python -m verification.dragline [OUTDIR]``: the dragline rig at rest (suite ``dragline``, case
``dragline-hang``), its rope and chain tensions against the statics by hand, and a plot, written to OUTDIR
(default ``dragline-out``). The dynamic dig-hoist-swing-dump cycle does not run yet (docs/theory-ropes.md §8)."""
from __future__ import annotations

import json
import sys
from pathlib import Path

from .hang import dragline_hang


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    out = Path(args[0] if args else "dragline-out")
    out.mkdir(parents=True, exist_ok=True)
    r = dragline_hang(False)
    for i, fig in enumerate(r.figures):
        fig.savefig(out / f"dragline_hang_{i}.png", dpi=120)
    summary = {"checks": [{"metric": c.metric, "value": float(c.value), "reference": c.reference,
                           "tolerance": c.tolerance, "passed": bool(c.passed)} for c in r.checks],
               "metrics": {k: float(v) for k, v in r.metrics.items()}, "notes": r.notes}
    (out / "dragline_hang.json").write_text(json.dumps(summary, indent=2))
    print(r.notes)
    for c in r.checks:
        print(f"  {c.metric}: {c.value:.6g} (reference {c.reference}, {c.tolerance}): "
              f"{'pass' if c.passed else 'FAIL'}")
    print(f"written to {out}/")
    return 0 if all(c.passed for c in r.checks) else 1


if __name__ == "__main__":
    raise SystemExit(main())
