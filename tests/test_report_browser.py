"""The verification report opened in a real headless Chromium.

Two fake suites go through the real machinery (``run_suites`` with its progress lines, then
``write_report``): one case passes with a figure, one fails a check, one raises, one suite module
does not import. Chromium's rendered DOM must hold the summary table (the eight columns, one row per
checked metric, failed rows marked) and the figures as PNG data URIs with the case names as alt
text; its screenshot must show the figures' colours and the red of the failed rows.

Chromium comes from the Debian package ``chromium`` (``.ci/setup --tests`` installs it). Without it the
browser tests fail under CI (``CI=true``) and are skipped elsewhere.
"""
from __future__ import annotations

import base64
import json
import os
import re
import shutil
import subprocess
import sys
import types
from html.parser import HTMLParser

import pytest

MAGENTA = (255, 0, 255)
TEAL = (0, 160, 160)
FAIL_ROW = (0xFD, 0xE0, 0xE0)          # tr.fail background in the report's CSS
COLUMNS = ["suite", "case", "metric", "value", "reference", "tolerance", "pass/fail", "source"]


def _solid_figure(rgb, title):
    """A figure that is one flat colour (plus its title), easy to find in a screenshot."""
    from matplotlib.figure import Figure
    from matplotlib.patches import Rectangle
    fig = Figure(figsize=(4.0, 2.5))
    ax = fig.add_axes((0.05, 0.05, 0.9, 0.75))
    ax.add_patch(Rectangle((0, 0), 1, 1, color=[c / 255 for c in rgb]))
    ax.set_axis_off()
    ax.set_title(title)
    return fig


def _fake_suites():
    from verification.framework import CaseResult

    def smooth(quick):
        r = CaseResult("smooth-case", "closed form of the smooth case (test source A)", notes="all within tolerance")
        r.check("error_max", 1e-5, None, "max 1e-4")
        r.check("frequency", 10.001, 10.0, "rel 1e-3")
        r.check("order", 2.02, 2.0, "abs 0.3")
        r.metrics["steps"] = 200
        r.figures.append(_solid_figure(MAGENTA, "magenta history"))
        return r

    def rough(quick):
        r = CaseResult("rough-case", "reference B <with markup & quotes '>")
        r.check("drift", 0.5, None, "max 1e-3")          # fails
        r.check("nan_metric", float("nan"), 1.0, "rel 0.1")   # fails; null in results.json
        return r

    def broken(quick):
        raise RuntimeError("solver diverged at t = 0.25 s")

    def teal(quick):
        r = CaseResult("teal-case", "test source C")
        r.check("flag", True)
        r.check("offset", 0.0, 0.0, "abs 1e-9")
        r.figures.append(_solid_figure(TEAL, "teal history"))
        return r

    def slow(quick):                                       # left out by --quick
        raise AssertionError("a slow case ran in a quick run")
    slow.slow = True

    alpha = types.ModuleType("_fake_suite_alpha")
    alpha.CASES = [smooth, rough, slow]
    beta = types.ModuleType("_fake_suite_beta")
    beta.CASES = [broken, teal]
    return alpha, beta


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    import matplotlib
    matplotlib.use("Agg")
    import verification
    from verification import framework
    alpha, beta = _fake_suites()
    lines = []
    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(sys.modules, alpha.__name__, alpha)
        mp.setitem(sys.modules, beta.__name__, beta)
        mp.setitem(verification.SUITES, "alpha", alpha.__name__)
        mp.setitem(verification.SUITES, "beta", beta.__name__)
        mp.setitem(verification.SUITES, "gamma", "_fake_suite_that_does_not_exist")
        results = framework.run_suites(["alpha", "beta", "gamma"], quick=True, progress=lines.append)
    out = tmp_path_factory.mktemp("report")
    doc = framework.write_report(out, results, 1.5, framework.now_iso(), quick=True)
    return out, lines, doc


def test_progress_lines(report):
    _, lines, _ = report
    done = [ln for ln in lines if re.match(r"\[\d/\d \d+:\d\d\] ", ln)]
    assert [re.sub(r" \d+:\d\d\]", "]", ln.split(" (")[0]) for ln in done] == [
        "[1/5] alpha/smooth-case: pass", "[2/5] alpha/rough-case: FAIL", "[3/5] beta/broken: FAIL",
        "[4/5] beta/teal-case: pass", "[5/5] gamma: FAIL"], lines
    assert "RuntimeError: solver diverged at t = 0.25 s" in done[2]
    assert "suite alpha: 2 cases (quick)" in lines


def test_results_json(report):
    out, _, doc = report
    text = (out / "results.json").read_text()
    loaded = json.loads(text, parse_constant=lambda c: pytest.fail(f"non-strict JSON constant {c}"))
    assert loaded == doc and {"flexmb_version", "started", "wall_s", "suites"} <= set(loaded)
    alpha = {c["name"]: c for c in loaded["suites"]["alpha"]["cases"]}
    beta = {c["name"]: c for c in loaded["suites"]["beta"]["cases"]}
    assert set(alpha) == {"smooth-case", "rough-case"} and set(beta) == {"broken", "teal-case"}
    assert alpha["smooth-case"]["passed"] is True and alpha["rough-case"]["passed"] is False
    assert alpha["rough-case"]["metrics"]["nan_metric"] is None
    assert alpha["smooth-case"]["reference"] == {"frequency": 10.0, "order": 2.0}
    assert alpha["smooth-case"]["tolerance"]["error_max"] == "max 1e-4"
    assert beta["broken"]["passed"] is False and "solver diverged" in beta["broken"]["error"]
    gamma = loaded["suites"]["gamma"]["cases"]
    assert len(gamma) == 1 and not gamma[0]["passed"] and "_fake_suite_that_does_not_exist" in gamma[0]["error"]
    for suite in loaded["suites"].values():
        for c in suite["cases"]:
            assert {"name", "passed", "wall_s", "metrics", "tolerance", "source", "notes"} <= set(c)


def test_report_is_self_contained(report):
    out, _, _ = report
    page = (out / "report.html").read_text()
    assert "<script" not in page.lower() and "<link" not in page.lower()
    assert not re.search(r"""(src|href)\s*=\s*['"]?(https?:|//)""", page, re.I)
    assert "url(" not in page


# ----------------------------------------------------------------------------------------------
# in Chromium
# ----------------------------------------------------------------------------------------------
def _chromium():
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    msg = ("no headless browser: none of chromium, chromium-browser, google-chrome is on PATH "
           "(`bash .ci/setup --tests` installs the Debian package 'chromium')")
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(msg)
    pytest.skip(msg)


def _run_chromium(binary, profile, *args):
    cmd = [binary, "--headless", "--disable-gpu", "--no-sandbox", "--disable-dev-shm-usage", "--no-first-run",
           "--hide-scrollbars", f"--user-data-dir={profile}", *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, f"{cmd}\n{proc.stderr[-3000:]}"
    return proc.stdout


class _Dom(HTMLParser):
    """Tables (by id: header cells, and rows of (class, cells, source rowspan)) and images."""

    def __init__(self):
        super().__init__()
        self.tables, self.images, self._table, self._row, self._cell = {}, [], None, None, None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table":
            self._table = self.tables.setdefault(a.get("id") or f"table{len(self.tables)}", {"head": [], "rows": []})
        elif tag == "tr" and self._table is not None:
            self._row = {"class": (a.get("class") or "").split(), "cells": [], "rowspan": {}}
        elif tag in ("td", "th") and self._row is not None:
            self._cell = [tag, ""]
            if "rowspan" in a:
                self._row["rowspan"][len(self._row["cells"])] = int(a["rowspan"])
        elif tag == "img":
            self.images.append(a)

    def handle_data(self, data):
        if self._cell is not None:
            self._cell[1] += data

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self._row["cells"].append((self._cell[0], " ".join(self._cell[1].split())))
            self._cell = None
        elif tag == "tr" and self._row is not None:
            if all(kind == "th" for kind, _ in self._row["cells"]):
                self._table["head"] = [text for _, text in self._row["cells"]]
            else:
                self._table["rows"].append(self._row)
            self._row = None
        elif tag == "table":
            self._table = None


def test_report_renders_in_chromium(report, tmp_path):
    chromium = _chromium()
    out, _, _ = report
    dom = _Dom()
    dom.feed(_run_chromium(chromium, tmp_path / "profile", "--dump-dom", (out / "report.html").as_uri()))
    summary = dom.tables["summary"]
    assert summary["head"] == COLUMNS
    rows = summary["rows"]
    key = [(r["cells"][0][1], r["cells"][1][1], r["cells"][2][1], "fail" in r["class"]) for r in rows]
    assert key == [("alpha", "smooth-case", "error_max", False), ("alpha", "smooth-case", "frequency", False),
                   ("alpha", "smooth-case", "order", False), ("alpha", "rough-case", "drift", True),
                   ("alpha", "rough-case", "nan_metric", True), ("beta", "broken", "error", True),
                   ("beta", "teal-case", "flag", False), ("beta", "teal-case", "offset", False),
                   ("gamma", "import", "error", True)]
    first = rows[0]["cells"]
    assert [c for _, c in first[3:7]] == ["1e-05", "", "max 1e-4", "pass"]
    assert [c for _, c in rows[1]["cells"][3:7]] == ["10.001", "10", "rel 1e-3", "pass"]
    assert rows[3]["cells"][6][1] == "FAIL" and rows[4]["cells"][3][1] == "nan"
    assert "RuntimeError: solver diverged at t = 0.25 s" in rows[5]["cells"][3][1]
    # the source once per case: a rowspan cell on the case's first row
    assert rows[0]["rowspan"] == {7: 3} and first[7][1] == "closed form of the smooth case (test source A)"
    assert rows[3]["rowspan"] == {7: 2} and rows[3]["cells"][7][1] == "reference B <with markup & quotes '>"
    assert all(len(r["cells"]) == 7 for i, r in enumerate(rows) if i in (1, 2, 4))
    # per-suite counts at the top
    suites = {r["cells"][0][1]: [c for _, c in r["cells"][1:]] for r in dom.tables["suites"]["rows"]}
    assert suites == {"alpha": ["1", "1", "3 of 5", suites["alpha"][3], "FAIL"],
                      "beta": ["1", "1", "2 of 2", suites["beta"][3], "FAIL"],
                      "gamma": ["0", "1", "0 of 0", suites["gamma"][3], "FAIL"]}
    # figures: one per case figure plus one tolerance chart per suite with checks, all PNG data URIs
    assert len(dom.images) == 4
    for img in dom.images:
        assert img["src"].startswith("data:image/png;base64,")
        assert base64.b64decode(img["src"].split(",", 1)[1])[:8] == b"\x89PNG\r\n\x1a\n"
        assert img.get("alt")
    alts = [img["alt"] for img in dom.images]
    assert "smooth-case: magenta history" in alts and "teal-case: teal history" in alts
    assert sum(a.startswith(("alpha", "beta")) for a in alts) == 2


def test_report_screenshot_in_chromium(report, tmp_path):
    from PIL import Image
    chromium = _chromium()
    out, _, _ = report
    shot = tmp_path / "report.png"
    _run_chromium(chromium, tmp_path / "profile", "--window-size=1280,4000", f"--screenshot={shot}",
                  (out / "report.html").as_uri())
    assert shot.exists() and shot.stat().st_size > 10_000
    img = Image.open(shot).convert("RGB")
    assert img.size == (1280, 4000)
    colours = img.getcolors(maxcolors=1 << 20)
    assert colours is not None and len(colours) > 50, "the screenshot is (nearly) blank"

    def pixels(rgb, tol=12):
        return sum(n for n, c in colours if all(abs(a - b) <= tol for a, b in zip(c, rgb)))
    # each solid figure is about 4 in x 1.9 in at 96 dpi: tens of thousands of pixels when decoded and drawn
    assert pixels(MAGENTA) > 20_000, "the magenta figure did not render"
    assert pixels(TEAL) > 20_000, "the teal figure did not render"
    assert pixels(FAIL_ROW, tol=4) > 2_000, "failed rows are not highlighted"
