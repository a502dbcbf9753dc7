"""Measured run times of the verification cases, used only to order a parallel run (longest first).

``flexmb verify -j N`` hands cases to N worker processes; handed out in suite order, a long case that comes
last keeps one worker busy after the others have finished. Handing them out longest first (the LPT rule of
list scheduling, Graham 1969) brings the wall time close to the total over N. The times in
``case_costs.json`` (seconds, ``"suite/case"`` by the case's label) are a hint for that order and nothing
else: a case missing from the file counts as :data:`DEFAULT_COST`.

Refresh them from a full run's results (``flexmb verify --out report``):

    python -m verification.costs report/results.json
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from . import case_label, suite_cases

COSTS_FILE = Path(__file__).with_name("case_costs.json")
DEFAULT_COST = 5.0
"""Seconds assumed for a case without a measured time (about the median case)."""


def load() -> dict[str, float]:
    """``{"suite/case": seconds}`` of the last recorded full run ({} when there is none)."""
    try:
        return {str(k): float(v) for k, v in json.loads(COSTS_FILE.read_text()).items()}
    except (OSError, ValueError, AttributeError):
        return {}


def record(results_json: str | Path) -> dict[str, float]:
    """Write ``case_costs.json`` from a results.json of a full (not quick) run; returns the costs. Cases are
    matched to their labels by position (results keep each suite's case order)."""
    doc = json.loads(Path(results_json).read_text())
    costs = {}
    for suite, entry in doc["suites"].items():
        try:
            labels = [case_label(c) for c in suite_cases(suite, quick=False)]
        except Exception:           # a suite that no longer exists
            continue
        for label, case in zip(labels, entry["cases"]):
            costs[f"{suite}/{label}"] = round(float(case["wall_s"]), 1)
    COSTS_FILE.write_text(json.dumps(dict(sorted(costs.items())), indent=1) + "\n")
    return costs


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python -m verification.costs REPORT/results.json")
    print(f"{len(record(sys.argv[1]))} case times written to {COSTS_FILE}")
