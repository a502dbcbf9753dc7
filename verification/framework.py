"""Running verification cases and writing results.json (DESIGN.md §9) and report.html."""
from __future__ import annotations

import base64
import datetime as _dt
import html
import importlib
import io
import json
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np


@dataclass
class Check:
    """One compared quantity: value vs reference within a tolerance."""

    metric: str
    value: float
    reference: float | None
    tolerance: str          # "abs X", "rel X", "max X" (value <= X), "min X" (value >= X), "true"
    passed: bool = False

    def evaluate(self) -> "Check":
        kind, _, num = self.tolerance.partition(" ")
        v = float(self.value)
        if kind == "true":
            self.passed = bool(self.value)
        elif kind == "max":
            self.passed = bool(np.isfinite(v) and v <= float(num))
        elif kind == "min":
            self.passed = bool(np.isfinite(v) and v >= float(num))
        elif kind == "abs":
            self.passed = bool(np.isfinite(v) and abs(v - self.reference) <= float(num))
        elif kind == "rel":
            self.passed = bool(np.isfinite(v) and abs(v - self.reference) <= float(num) * abs(self.reference))
        else:
            raise ValueError(f"unknown tolerance {self.tolerance!r}")
        return self


@dataclass
class CaseResult:
    name: str
    source: str
    checks: list[Check] = field(default_factory=list)
    metrics: dict = field(default_factory=dict)        # extra reported numbers (not checked)
    notes: str = ""
    figures: list = field(default_factory=list)        # matplotlib figures for the report
    wall_s: float = 0.0
    error: str = ""

    @property
    def passed(self) -> bool:
        return not self.error and all(c.passed for c in self.checks)

    def check(self, metric, value, reference=None, tolerance="true") -> Check:
        c = Check(metric, value if isinstance(value, bool) else float(value),
                  None if reference is None else float(reference), tolerance).evaluate()
        self.checks.append(c)
        return c

    def to_json(self) -> dict:
        metrics = {c.metric: _num(c.value) for c in self.checks}
        metrics.update({k: _num(v) for k, v in self.metrics.items()})
        out = {"name": self.name, "passed": self.passed, "wall_s": round(self.wall_s, 3), "metrics": metrics,
               "tolerance": {c.metric: c.tolerance for c in self.checks}, "source": self.source,
               "notes": self.notes}
        ref = {c.metric: _num(c.reference) for c in self.checks if c.reference is not None}
        if ref:
            out["reference"] = ref
        if self.error:
            out["error"] = self.error
        return out


def _num(v):
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, (int, float, np.floating, np.integer)):
        v = float(v)
        return v if np.isfinite(v) else None   # results.json stays strict JSON (no NaN/Infinity)
    return v


def run_suite(name: str, quick: bool, progress: Callable[[str], None] = print) -> list[CaseResult]:
    from . import SUITES
    module = importlib.import_module(SUITES[name])
    results = []
    for case in module.CASES:
        if quick and getattr(case, "slow", False):
            continue
        t0 = time.perf_counter()
        try:
            res = case(quick)
        except Exception as exc:   # a failing case is reported, the suite goes on
            res = CaseResult(getattr(case, "__name__", "case").replace("_", "-"), "",
                             error=f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=3)}")
        res.wall_s = time.perf_counter() - t0
        progress(f"  {name}/{res.name}: {'pass' if res.passed else 'FAIL'} ({res.wall_s:.1f} s)")
        results.append(res)
    return results


def write_report(out: Path, suites: dict[str, list[CaseResult]], wall_s: float, started: str) -> dict:
    import flexmb
    out.mkdir(parents=True, exist_ok=True)
    doc = {"flexmb_version": flexmb.__version__, "started": started, "wall_s": round(wall_s, 2),
           "suites": {s: {"cases": [c.to_json() for c in cases]} for s, cases in suites.items()}}
    (out / "results.json").write_text(json.dumps(doc, indent=1, allow_nan=False))
    (out / "report.html").write_text(_html(doc, suites))
    return doc


def _fig_png(fig) -> str:
    import matplotlib.pyplot as plt
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90, bbox_inches="tight")
    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode()


def _html(doc: dict, suites: dict[str, list[CaseResult]]) -> str:
    rows = []
    for sname, cases in suites.items():
        for c in cases:
            cj = c.to_json()
            for metric, value in cj["metrics"].items():
                ref = cj.get("reference", {}).get(metric, "")
                tol = cj["tolerance"].get(metric, "")
                ok = "" if not tol else ("pass" if next(x for x in c.checks if x.metric == metric).passed else "FAIL")
                rows.append(f"<tr class='{ok.lower()}'><td>{sname}</td><td>{html.escape(c.name)}</td>"
                            f"<td>{html.escape(metric)}</td><td>{_fmt(value)}</td><td>{_fmt(ref)}</td>"
                            f"<td>{html.escape(tol)}</td><td>{ok}</td><td>{html.escape(c.source)}</td></tr>")
            if c.error:
                rows.append(f"<tr class='fail'><td>{sname}</td><td>{html.escape(c.name)}</td><td colspan=6>"
                            f"<pre>{html.escape(c.error)}</pre></td></tr>")
    sections = []
    for sname, cases in suites.items():
        parts = [f"<h2>Suite <code>{sname}</code></h2>"]
        for c in cases:
            parts.append(f"<h3>{html.escape(c.name)} — {'pass' if c.passed else 'FAIL'}</h3>"
                         f"<p>{html.escape(c.notes)}</p><p><i>Source:</i> {html.escape(c.source)}</p>")
            for fig in c.figures:
                parts.append(f"<img alt='{html.escape(c.name)}' src='data:image/png;base64,{_fig_png(fig)}'/>")
        sections.append("\n".join(parts))
    n_pass = sum(c.passed for cs in suites.values() for c in cs)
    n_all = sum(len(cs) for cs in suites.values())
    return f"""<!DOCTYPE html><html><head><meta charset='utf-8'><title>flexmb verification report</title>
<style>body{{font-family:sans-serif;margin:2em;max-width:1200px}} table{{border-collapse:collapse;font-size:90%}}
td,th{{border:1px solid #ccc;padding:3px 6px}} tr.fail td{{background:#fdd}} tr.pass td:nth-child(7){{color:#070}}
img{{max-width:560px;margin:4px}}</style></head><body>
<h1>flexmb verification report</h1>
<p>flexmb {doc['flexmb_version']} — started {doc['started']} — {doc['wall_s']} s — {n_pass}/{n_all} cases passed.</p>
<table id='summary'><tr><th>suite</th><th>case</th><th>metric</th><th>value</th><th>reference</th>
<th>tolerance</th><th>pass/fail</th><th>source</th></tr>{''.join(rows)}</table>
{''.join(sections)}</body></html>"""


def _fmt(v) -> str:
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, float):
        return f"{v:.6g}"
    return html.escape(str(v))


def now_iso() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
