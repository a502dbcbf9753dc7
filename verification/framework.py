"""Running verification cases and writing results.json (schema: docs/verification.md) and report.html.

A suite is a module with ``CASES``, a list of functions ``case(quick) -> CaseResult`` (a function
with ``slow = True`` is left out of ``--quick``). :func:`run_suites` runs them with a progress line
per finished case; :func:`write_report` writes ``results.json`` and one self-contained
``report.html``: a per-suite count with links, a summary table with one row per checked metric,
and per suite a chart of every check's error against its tolerance, then each case's source,
notes, warnings, numbers and figures (PNG data URIs; no external resources, no scripts).
Warnings raised while a case runs are recorded in that case's result (``warnings`` in results.json,
a list under its notes in the report), not printed: a passing run prints only its progress lines.
"""
from __future__ import annotations

import base64
import datetime as _dt
import html
import io
import json
import math
import platform
import re
import time
import traceback
import warnings
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

from . import case_label, suite_cases

FIGURE_DPI = 96          # keeps a full report (tens of figures) at a few MB


@dataclass
class Check:
    """One compared quantity: value vs reference within a tolerance."""

    metric: str
    value: float
    reference: float | None
    tolerance: str          # "abs X", "rel X", "max X" (value <= X), "min X" (value >= X), "true"
    passed: bool = False
    """Refused at construction (:func:`refuse_vacuous`): an ``abs`` tolerance >= |reference| != 0 or a
    ``rel`` tolerance >= 1, either of which passes at value 0."""

    def __post_init__(self) -> None:
        refuse_vacuous(self.metric, self.reference, self.tolerance)

    def evaluate(self) -> "Check":
        kind, _, num = self.tolerance.partition(" ")
        v = float(self.value)
        if kind == "true":
            self.passed = bool(self.value) and not math.isnan(v)
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

    def usage(self) -> float | None:
        """How much of the tolerance the check uses: <= 1 passes (None for "true" and sign-less bounds)."""
        kind, _, num = self.tolerance.partition(" ")
        try:
            v, x = float(self.value), float(num) if num else None
        except (TypeError, ValueError):
            return None
        if kind == "true" or x is None:
            return None
        if not math.isfinite(v):
            return math.inf
        if kind in ("abs", "rel"):
            if self.reference is None:
                return None
            allowed = x if kind == "abs" else x * abs(self.reference)
            err = abs(v - self.reference)
            return err / allowed if allowed > 0 else (0.0 if err == 0 else math.inf)
        if kind == "max" and x > 0:
            return max(v, 0.0) / x
        if kind == "min" and x > 0:
            return x / v if v > 0 else math.inf
        return None


class VacuousToleranceError(ValueError):
    """A check whose tolerance would pass a value of zero against a nonzero reference."""


def refuse_vacuous(metric: str, reference: float | None, tolerance: str) -> None:
    """Refuse a comparison that cannot tell the quantity from its absence: ``abs X`` with
    X >= |reference| != 0, or ``rel X`` with X >= 1, passes at value 0 (the case computed nothing).
    A zero reference keeps its ``abs`` tolerance (the quantity is meant to vanish)."""
    kind, _, num = tolerance.partition(" ")
    if kind not in ("abs", "rel") or reference is None:
        return
    x, ref = float(num), abs(float(reference))
    if kind == "abs" and ref > 0.0 and x >= ref:
        raise VacuousToleranceError(
            f"check {metric!r}: tolerance {tolerance!r} >= |reference| = {ref:.6g}: a value of 0 would pass; "
            "derive the tolerance from the reference's accuracy, or report the metric unchecked")
    if kind == "rel" and x >= 1.0:
        raise VacuousToleranceError(
            f"check {metric!r}: tolerance {tolerance!r} (rel >= 1): a value of 0 would pass against the "
            f"reference {float(reference):.6g}")


@dataclass(frozen=True)
class CaseWarning:
    """A warning raised while a case ran: its category's name, its message and how often it was raised."""

    category: str
    message: str
    count: int

    def to_json(self) -> dict:
        return {"category": self.category, "message": self.message, "count": self.count}


def _case_warnings(caught: list[warnings.WarningMessage]) -> list[CaseWarning]:
    """The caught warnings, one entry per distinct (category, message), in the order first raised."""
    counts = Counter((w.category.__name__, str(w.message)) for w in caught)
    return [CaseWarning(category, message, n) for (category, message), n in counts.items()]


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
    warnings: list[CaseWarning] = field(default_factory=list)   # raised while the case ran (set by run_case)

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
        if self.warnings:
            out["warnings"] = [w.to_json() for w in self.warnings]
        if self.error:
            out["error"] = self.error
        return out


def _num(v):
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, (int, float, np.floating, np.integer)):
        v = float(v)
        return v if np.isfinite(v) else None   # results.json stays strict JSON (no NaN/Infinity)
    if isinstance(v, np.ndarray):
        return [_num(x) for x in v.tolist()]
    if isinstance(v, (list, tuple)):
        return [_num(x) for x in v]
    if v is None or isinstance(v, str):
        return v
    return str(v)


# ----------------------------------------------------------------------------------------------
# running
# ----------------------------------------------------------------------------------------------
def _error_text(exc: BaseException) -> str:
    """First line ``Type: message``, then the innermost frames, where the failure is."""
    tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__, limit=-4))
    return f"{type(exc).__name__}: {exc}\n{tb}"


def run_case(case: Callable, quick: bool) -> CaseResult:
    """Run one case; an exception becomes a failed result carrying its message. Figures are
    rendered to PNG at once (and closed), so a long run does not pile up open figures. Every warning
    raised meanwhile (each occurrence: filter "always") is recorded in the result's ``warnings``
    instead of being printed, so the report names the case that raised it."""
    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            res = case(quick)
            if not isinstance(res, CaseResult):
                raise TypeError(f"case returned {type(res).__name__}, not CaseResult")
        except Exception as exc:   # a failing case is reported, the suite goes on
            res = CaseResult(case_label(case), "", error=_error_text(exc))
        res.wall_s = time.perf_counter() - t0
        res.figures = [_render(fig) for fig in res.figures]
    res.warnings = _case_warnings(caught)
    return res


def run_suite(name: str, quick: bool, progress: Callable[[str], None] = print) -> list[CaseResult]:
    """Run one suite, one progress line per finished case."""
    return run_suites([name], quick, progress)[name]


def run_suites(names: list[str], quick: bool, progress: Callable[[str], None] = print,
               on_start: Callable[[str], None] | None = None, jobs: int = 1) -> dict[str, list[CaseResult]]:
    """Run the suites. ``progress`` gets a header line per suite and a line per finished case
    (``[n/N m:ss] suite/case: pass (wall)``, n counting finished cases, m:ss the time since the start);
    ``on_start``, when given, a line as case n starts (serial runs only).
    ``jobs`` > 1 runs cases in that many worker processes (each case builds its own models, so cases are
    independent); results keep the suites' case order whatever the order they finish in.
    A suite that cannot be imported is reported as one failed case named ``import``."""
    t0 = time.perf_counter()
    plan: list[tuple[str, list, str]] = []
    for name in names:
        try:
            plan.append((name, suite_cases(name, quick), ""))
        except Exception as exc:
            plan.append((name, [], _error_text(exc)))
    total = sum(1 if err else len(cases) for _, cases, err in plan)
    width = len(str(total))
    done = 0

    def stamp(n: int) -> str:
        s = int(time.perf_counter() - t0)
        return f"[{n:>{width}}/{total} {s // 60}:{s % 60:02d}]"

    def finished(name: str, res: CaseResult) -> None:
        nonlocal done
        done += 1
        line = f"{stamp(done)} {name}/{res.name}: {'pass' if res.passed else 'FAIL'} ({res.wall_s:.1f} s)"
        if res.warnings:
            n = sum(w.count for w in res.warnings)
            line += f", {n} warning{'s' if n != 1 else ''} (in the report)"
        if res.error:
            line += f"  {res.error.splitlines()[0]}"
        progress(line)

    results: dict[str, list] = {name: [] for name, _, _ in plan}

    def not_importable(name: str, err: str) -> None:
        nonlocal done
        done += 1
        results[name].append(CaseResult("import", "", error=err))
        progress(f"{stamp(done)} {name}: FAIL (suite not importable: {err.splitlines()[0]})")

    if jobs > 1:
        for name, _, err in plan:
            if err:
                not_importable(name, err)
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor, as_completed
        progress(f"{total} cases of {len(names)} suite(s) on {jobs} worker processes{' (quick)' if quick else ''}")
        import os
        threads = max(1, (os.cpu_count() or 1) // jobs)     # BLAS threads per worker: no oversubscription
        for name, cases, err in plan:
            results[name] = results[name] or [None] * len(cases)
        _prepare_figures()          # once, inherited by the workers
        with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("fork")) as pool:
            futures = {}
            for name, k in _longest_first(plan):
                futures[pool.submit(_run_planned, name, k, quick, threads)] = (name, k)
            for fut in as_completed(futures):
                name, k = futures[fut]
                results[name][k] = fut.result()
                finished(name, results[name][k])
                if all(r is not None for r in results[name]):
                    _usage_figure(name, results[name])      # the report's chart, while the workers go on
        return results
    for name, cases, err in plan:
        if err:
            not_importable(name, err)
            continue
        progress(f"suite {name}: {len(cases)} case{'s' if len(cases) != 1 else ''}{' (quick)' if quick else ''}")
        for case in cases:
            if on_start is not None:
                on_start(f"{stamp(done + 1)} {name}/{case_label(case)} ...")
            res = run_case(case, quick)
            results[name].append(res)
            finished(name, res)
    return results


def _longest_first(plan: list[tuple[str, list, str]]) -> list[tuple[str, int]]:
    """``(suite, case index)`` of every importable case, longest first by the recorded case times
    (verification/costs.py), suite order among equals: the order a parallel run hands them out."""
    from .costs import DEFAULT_COST, load
    costs = load()
    order = [(name, k, costs.get(f"{name}/{case_label(case)}", DEFAULT_COST))
             for name, cases, err in plan if not err for k, case in enumerate(cases)]
    order.sort(key=lambda item: -item[2])       # stable: suite order among equal times
    return [(name, k) for name, k, _ in order]


def _run_planned(name: str, k: int, quick: bool, threads: int) -> CaseResult:
    """Case ``k`` of suite ``name``, in a worker process (cases are found again there by position), with BLAS
    limited to ``threads`` threads so that the workers together use the machine's cores once."""
    from threadpoolctl import threadpool_limits
    with threadpool_limits(limits=threads, user_api="blas"):
        return run_case(suite_cases(name, quick)[k], quick)


def write_report(out: Path, suites: dict[str, list[CaseResult]], wall_s: float, started: str,
                 quick: bool | None = None) -> dict:
    """Write ``out/results.json`` (strict JSON, schema in docs/verification.md) and ``out/report.html``; return the JSON."""
    import flexmb
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    doc = {"flexmb_version": flexmb.__version__, "started": started, "wall_s": round(wall_s, 2), "quick": quick,
           "suites": {s: {"cases": [c.to_json() for c in cases]} for s, cases in suites.items()}}
    (out / "results.json").write_text(json.dumps(doc, indent=1, allow_nan=False))
    (out / "report.html").write_text(_html(doc, suites, quick), encoding="utf-8")
    return doc


@dataclass
class _Png:
    """A rendered figure: base64 PNG (empty if rendering failed), its caption, a rendering error."""

    data: str
    caption: str
    error: str = ""


def _figure_title(fig) -> str:
    sup = getattr(fig, "_suptitle", None)
    if sup is not None and sup.get_text():
        return sup.get_text()
    for ax in getattr(fig, "axes", []):
        for loc in ("center", "left", "right"):
            if ax.get_title(loc):
                return ax.get_title(loc)
    return ""


def _render(fig) -> _Png:
    if isinstance(fig, _Png):
        return fig
    title = ""
    try:
        title = _figure_title(fig)
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=FIGURE_DPI, bbox_inches="tight")
        png = _Png(base64.b64encode(buf.getvalue()).decode(), title)
    except Exception as exc:    # a broken figure must not lose the report
        png = _Png("", title, f"{type(exc).__name__}: {exc}")
    finally:
        try:
            import matplotlib.pyplot as plt
            plt.close(fig)
        except Exception:
            pass
    return png


def _prepare_figures() -> None:
    """Import matplotlib (Agg) and render one small figure with text, so that its import, font list and text
    caches are set up once in the parent process: the case workers forked from it inherit them, and the report's
    charts render without that first-figure cost."""
    try:
        from matplotlib.figure import Figure
        fig = Figure(figsize=(1, 1))
        fig.add_subplot().set_title("warm-up")
        fig.savefig(io.BytesIO(), format="png", dpi=FIGURE_DPI)
    except Exception:   # noqa: BLE001 - no matplotlib: the figures report their own error later
        pass


_USAGE_CHARTS: dict[tuple, _Png | None] = {}
"""Rendered usage charts by suite and checks (a parallel run renders each as its suite completes)."""


def _usage_figure(suite: str, cases: list[CaseResult]) -> _Png | None:
    """Horizontal bars: error / tolerance of every check with a reference or bound (<= 1 passes)."""
    rows = [(f"{c.name}: {k.metric}", k.usage(), k.passed) for c in cases for k in c.checks]
    rows = [r for r in rows if r[1] is not None]
    if not rows:
        return None
    key = (suite, tuple(rows))
    if key not in _USAGE_CHARTS:
        _USAGE_CHARTS[key] = _usage_chart(suite, rows)
    return _USAGE_CHARTS[key]


def _usage_chart(suite: str, rows: list[tuple[str, float, bool]]) -> _Png:
    """The chart of :func:`_usage_figure` for its rows ``(label, |error| / tolerance, passed)``."""
    from matplotlib.figure import Figure
    lo, hi = 1e-6, 1e3
    n = len(rows)
    fig = Figure(figsize=(7.2, 0.9 + 0.19 * n))
    ax = fig.add_subplot()
    y = np.arange(n)[::-1]
    vals = np.clip([hi if math.isnan(u) else u for _, u, _ in rows], lo, hi)
    colors = ["#2a8a3e" if ok else "#c62828" for _, _, ok in rows]
    ax.barh(y, vals - lo, left=lo, color=colors, height=0.7)
    ax.scatter(vals, y, s=14, c=colors, zorder=3)        # so exact agreement (an empty bar) still shows
    ax.axvline(1.0, color="k", lw=1.0, ls="--")
    ax.set_xscale("log")
    ax.set_xlim(lo, hi)
    ax.set_yticks(y, [label if len(label) <= 60 else label[:57] + "..." for label, _, _ in rows], fontsize=7)
    ax.set_ylim(-0.6, n - 0.4)
    ax.set_xlabel("|error| / tolerance  (left of the dashed line: pass; clipped to [1e-6, 1e3])", fontsize=8)
    ax.tick_params(axis="x", labelsize=8)
    ax.grid(alpha=0.3, axis="x", which="major")
    title = f"suite {suite}: |error| / tolerance of every check"
    ax.set_title(title, fontsize=9)
    return _render(fig)


_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Helvetica,Arial,sans-serif;margin:1.5em auto;max-width:1250px;
 padding:0 1em;color:#222;line-height:1.4}
h1{margin-bottom:.2em} h2{border-bottom:2px solid #ddd;padding-bottom:.2em;margin-top:1.8em}
h3{margin:1.4em 0 .3em} code{font-size:95%}
table{border-collapse:collapse;font-size:88%;margin:.5em 0}
th,td{border:1px solid #ccc;padding:3px 7px;vertical-align:top;text-align:left}
th{background:#f0f0f0} thead th{position:sticky;top:0}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td.src{font-size:92%;color:#444;max-width:28em} #summary td{white-space:nowrap}
#summary td.src,#summary td.metric,#summary td.msg{white-space:normal} td.metric{max-width:17em}
tr.fail td{background:#fde0e0} tr.fail td.src{background:#fff}
.badge{display:inline-block;padding:0 .5em;border-radius:.6em;font-size:80%;font-weight:bold;vertical-align:middle}
.badge.pass,td.result.pass{color:#17622a} .badge.pass{background:#dff3e3}
.badge.fail,td.result.fail{color:#a31515} .badge.fail{background:#fde0e0}
.meta{color:#555} .wall{color:#777;font-size:85%;font-weight:normal}
pre.error{background:#fff4f4;border:1px solid #e8b4b4;padding:.6em;overflow-x:auto;font-size:85%}
.figs{display:flex;flex-wrap:wrap;gap:10px}
figure{margin:4px 0;max-width:100%} figure img{max-width:100%;height:auto;border:1px solid #eee}
figcaption{font-size:85%;color:#555;max-width:600px}
figure.usage img{max-width:760px} p.src{font-size:92%;color:#444} nav ul{margin:.3em 0}
div.warnings{background:#fffbe6;border:1px solid #e6d28a;padding:.3em .6em;font-size:90%}
div.warnings ul{margin:.2em 0}
"""


def _slug(*parts: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", "-".join(parts)).strip("-") or "x"


def _esc(s) -> str:
    return html.escape(str(s), quote=True)


def _fmt(v) -> str:
    if v is None:
        return ""
    if isinstance(v, (bool, np.bool_)):
        return str(bool(v))
    if isinstance(v, (int, float, np.floating, np.integer)):
        return f"{float(v):.6g}"
    return _esc(v)


def _wrap(name: str) -> str:
    """Escaped, with line-break opportunities after underscores (long metric names)."""
    return _esc(name).replace("_", "_<wbr>")


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else ""


def _img(png: _Png, alt: str, cls: str = "", caption: str | None = None) -> str:
    """A <figure> with the PNG as a data URI; alt text = ``alt: figure title`` (the case name first)."""
    alt = _esc(f"{alt}" + (f": {png.caption}" if png.caption and png.caption != alt else ""))
    cap = alt if caption is None else _esc(caption)
    if not png.data:
        return (f"<figure class='{cls}'><pre class='error'>figure not rendered: {_esc(png.error)}</pre>"
                f"<figcaption>{cap}</figcaption></figure>")
    return (f"<figure class='{cls}'><img alt='{alt}' title='{alt}' src='data:image/png;base64,{png.data}'/>"
            f"<figcaption>{cap}</figcaption></figure>")


def _warnings_html(caught: list[CaseWarning]) -> str:
    """A case's warnings as a list: category, times raised, message."""
    items = "".join(f"<li><code>{_esc(w.category)}</code> (&times;{w.count}): {_esc(w.message)}</li>"
                    for w in caught)
    return f"<div class='warnings'><b>Warnings raised by the case:</b><ul>{items}</ul></div>"


def _html(doc: dict, suites: dict[str, list[CaseResult]], quick: bool | None = None) -> str:
    anchors: dict[int, str] = {}
    seen: set[str] = set()
    for sname, cases in suites.items():
        for c in cases:
            a = _slug("case", sname, c.name)
            while a in seen:
                a += "-"
            seen.add(a)
            anchors[id(c)] = a

    # per-suite counts (the table of contents)
    toc, tot = [], [0, 0, 0, 0, 0.0]
    for sname, cases in suites.items():
        cp = sum(c.passed for c in cases)
        kp = sum(k.passed for c in cases for k in c.checks)
        kn = sum(len(c.checks) for c in cases)
        wall = sum(c.wall_s for c in cases)
        for i, v in enumerate((cp, len(cases), kp, kn, wall)):
            tot[i] += v
        ok = "pass" if cp == len(cases) else "fail"
        toc.append(f"<tr class='{ok}'><td><a href='#{_slug('suite', sname)}'>{_esc(sname)}</a></td>"
                   f"<td class='num'>{cp}</td><td class='num'>{len(cases) - cp}</td>"
                   f"<td class='num'>{kp} of {kn}</td><td class='num'>{wall:.1f}</td>"
                   f"<td class='result {ok}'>{'pass' if ok == 'pass' else 'FAIL'}</td></tr>")
    all_ok = tot[0] == tot[1]

    # the summary: one row per checked metric; a case without checks (an error) gets one row
    rows = []
    for sname, cases in suites.items():
        for c in cases:
            src = _esc(c.source) if c.source else "<i>not stated</i>"
            case_cell = f"<td><a href='#{anchors[id(c)]}' title='{_esc(c.source)}'>{_esc(c.name)}</a></td>"
            items = []
            for k in c.checks:
                ok = "pass" if k.passed else "fail"
                items.append((ok, f"<td class='metric'>{_wrap(k.metric)}</td><td class='num'>{_fmt(k.value)}</td>"
                                  f"<td class='num'>{_fmt(k.reference)}</td><td>{_esc(k.tolerance)}</td>"
                                  f"<td class='result {ok}'>{'pass' if k.passed else 'FAIL'}</td>"))
            if c.error:
                items.append(("fail", "<td><i>error</i></td><td class='msg' colspan='3'>"
                                      f"<code>{_esc(_first_line(c.error))}</code></td>"
                                      "<td class='result fail'>FAIL</td>"))
            elif not c.checks:
                items.append(("pass", "<td><i>no checked metric</i></td><td colspan='3'></td>"
                                      "<td class='result pass'>pass</td>"))
            for i, (ok, cells) in enumerate(items):
                last = f"<td class='src' rowspan='{len(items)}'>{src}</td>" if i == 0 else ""
                rows.append(f"<tr class='check {ok}'><td>{_esc(sname)}</td>{case_cell}{cells}{last}</tr>")

    # per suite: the tolerance chart, then each case with its numbers and figures
    sections = []
    for sname, cases in suites.items():
        cp = sum(c.passed for c in cases)
        kp = sum(k.passed for c in cases for k in c.checks)
        kn = sum(len(c.checks) for c in cases)
        parts = [f"<section class='suite' id='{_slug('suite', sname)}'>",
                 f"<h2>Suite <code>{_esc(sname)}</code></h2>",
                 f"<p class='meta'>{cp} of {len(cases)} cases passed, {kp} of {kn} checks; "
                 f"{sum(c.wall_s for c in cases):.1f} s. <a href='#summary'>summary</a></p>"]
        usage = _usage_figure(sname, cases)
        if usage is not None:
            parts.append(_img(usage, sname, "usage", caption=(
                "Every check of the suite: its |error| as a fraction of its tolerance (abs and rel: distance "
                "from the reference; max and min: distance to the bound). Bars left of the dashed line pass; "
                "exact agreement sits at the left edge; true/false checks are not drawn.")))
        for c in cases:
            ok = "pass" if c.passed else "fail"
            parts.append(f"<div class='case {ok}' id='{anchors[id(c)]}'>"
                         f"<h3>{_esc(c.name)} <span class='badge {ok}'>{'pass' if c.passed else 'FAIL'}</span> "
                         f"<span class='wall'>{c.wall_s:.1f} s</span></h3>")
            parts.append(f"<p class='src'><b>Source:</b> {_esc(c.source) if c.source else '<i>not stated</i>'}</p>")
            if c.notes:
                parts.append(f"<p class='notes'>{_esc(c.notes)}</p>")
            if c.warnings:
                parts.append(_warnings_html(c.warnings))
            if c.error:
                parts.append(f"<pre class='error'>{_esc(c.error)}</pre>")
            trs = [f"<tr class='{'pass' if k.passed else 'fail'}'><td>{_esc(k.metric)}</td>"
                   f"<td class='num'>{_fmt(k.value)}</td><td class='num'>{_fmt(k.reference)}</td>"
                   f"<td>{_esc(k.tolerance)}</td><td class='result {'pass' if k.passed else 'fail'}'>"
                   f"{'pass' if k.passed else 'FAIL'}</td></tr>" for k in c.checks]
            trs += [f"<tr><td>{_esc(m)}</td><td class='num'>{_fmt(v)}</td><td></td><td></td>"
                    f"<td><i>reported</i></td></tr>" for m, v in c.metrics.items() if m not in
                    {k.metric for k in c.checks}]
            if trs:
                parts.append("<table class='checks'><thead><tr><th>metric</th><th>value</th><th>reference</th>"
                             f"<th>tolerance</th><th>pass/fail</th></tr></thead><tbody>{''.join(trs)}</tbody></table>")
            figs = [_img(_render(f), c.name if len(c.figures) == 1 else f"{c.name} ({i + 1}/{len(c.figures)})")
                    for i, f in enumerate(c.figures)]
            if figs:
                parts.append(f"<div class='figs'>{''.join(figs)}</div>")
            parts.append("</div>")
        parts.append("</section>")
        sections.append("\n".join(parts))

    mode = "" if quick is None else (" — <b>quick subset</b> (<code>--quick</code>)" if quick else " — full suites")
    verdict = (f"<span class='badge {'pass' if all_ok else 'fail'}'>{'ALL PASSED' if all_ok else 'FAILURES'}</span>")
    return f"""<!DOCTYPE html>
<html lang='en'><head><meta charset='utf-8'><meta name='viewport' content='width=device-width,initial-scale=1'>
<title>flexmb verification report</title><style>{_CSS}</style></head><body>
<h1>flexmb verification report {verdict}</h1>
<p class='meta'>flexmb {_esc(doc['flexmb_version'])} on Python {platform.python_version()} ({_esc(platform.machine())})
— started {_esc(doc['started'])} — {doc['wall_s']} s{mode} — <b>{tot[0]} of {tot[1]} cases passed</b>,
{tot[2]} of {tot[3]} checks. Machine-readable results: <a href='results.json'>results.json</a>.</p>
<nav id='contents'><h2>Suites</h2>
<table id='suites'><thead><tr><th>suite</th><th>cases passed</th><th>cases failed</th><th>checks passed</th>
<th>wall time (s)</th><th>pass/fail</th></tr></thead><tbody>
{''.join(toc)}</tbody></table>
<ul><li><a href='#summary'>Summary of all checks</a></li>{''.join(
        f"<li><a href='#{_slug('suite', s)}'>Suite {_esc(s)}</a>: notes and figures</li>" for s in suites)}</ul></nav>
<h2>Summary</h2>
<p class='meta'>One row per checked metric. Tolerances: <code>abs X</code> |value − reference| ≤ X;
<code>rel X</code> |value − reference| ≤ X |reference|; <code>max X</code> value ≤ X; <code>min X</code>
value ≥ X; <code>true</code> the condition holds. Failed rows are red; the case name links to its notes and
figures.</p>
<table id='summary'><thead><tr><th>suite</th><th>case</th><th>metric</th><th>value</th><th>reference</th>
<th>tolerance</th><th>pass/fail</th><th>source</th></tr></thead><tbody>
{''.join(rows)}</tbody></table>
{''.join(sections)}
</body></html>
"""


def now_iso() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
