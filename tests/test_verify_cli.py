"""`flexmb verify rigid --quick` end to end: exit code, results.json schema (DESIGN.md §9), report."""
import json
import re
import subprocess
import sys

import pytest


def test_verify_rigid_quick(tmp_path):
    out = tmp_path / "rep"
    proc = subprocess.run([sys.executable, "-m", "flexmb.cli", "verify", "rigid", "--quick", "--out", str(out)],
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert re.search(r"^\[\s*\d+/\d+ \d+:\d\d\] rigid/double-pendulum: pass \(", proc.stdout, re.M), proc.stdout
    doc = json.loads((out / "results.json").read_text(), parse_constant=lambda c: pytest.fail(f"non-JSON {c}"))
    assert {"flexmb_version", "started", "wall_s", "suites"} <= set(doc)
    cases = doc["suites"]["rigid"]["cases"]
    names = {c["name"] for c in cases}
    assert {"double-pendulum", "heavy-top-precession", "four-bar", "bricard", "drift-demonstration"} <= names
    for c in cases:
        assert c["passed"] is True
        assert {"name", "passed", "wall_s", "metrics", "tolerance", "source", "notes"} <= set(c)
        assert c["source"] and set(c["tolerance"]) <= set(c["metrics"])
    html = (out / "report.html").read_text()
    assert "<table id='summary'>" in html and "data:image/png;base64," in html
    assert html.count("<img ") >= len(cases) and "<script" not in html


def test_verify_jobs_keeps_the_case_order_of_a_serial_run(tmp_path):
    """--jobs 2 runs cases in worker processes; results.json lists them in the suite's order, as --jobs 1."""
    orders = []
    for jobs in ("1", "2"):
        out = tmp_path / f"rep{jobs}"
        proc = subprocess.run([sys.executable, "-m", "flexmb.cli", "verify", "rigid", "--quick", "--jobs", jobs,
                               "--out", str(out)], capture_output=True, text=True, timeout=900)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        cases = json.loads((out / "results.json").read_text())["suites"]["rigid"]["cases"]
        assert all(c["passed"] for c in cases)
        orders.append([c["name"] for c in cases])
    assert orders[0] == orders[1] and len(orders[0]) >= 5


def test_verify_unknown_suite_fails(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "flexmb.cli", "verify", "nonsense", "--out", str(tmp_path)],
                          capture_output=True, text=True)
    assert proc.returncode == 2 and "unknown suite" in proc.stderr


def test_parallel_runs_hand_out_the_longest_cases_first(monkeypatch):
    """A parallel run submits cases longest first by the recorded times (verification/costs.py), unknown ones at
    the default cost, suite order among equals; every case of every importable suite exactly once."""
    from verification import costs, framework

    def case(name):
        def f(quick):
            return None
        f.__name__ = name
        return f

    plan = [("a", [case("x"), case("y"), case("z")], ""), ("broken", [], "ImportError"), ("b", [case("w")], "")]
    monkeypatch.setattr(costs, "load", lambda: {"a/y": 30.0, "b/w": 12.0, "a/z": 1.0})
    assert framework._longest_first(plan) == [("a", 1), ("b", 0), ("a", 0), ("a", 2)]


def test_recorded_case_times_name_existing_cases():
    """Every entry of verification/case_costs.json names a case of a registered suite (a stale name would
    silently lose its ordering hint), and case labels are unique within a suite."""
    from verification import SUITES, costs
    from verification.framework import case_label, suite_cases
    labels = set()
    for suite in SUITES:
        names = [case_label(c) for c in suite_cases(suite, quick=False)]
        assert len(names) == len(set(names)), suite
        labels |= {f"{suite}/{n}" for n in names}
    recorded = costs.load()
    assert recorded and set(recorded) <= labels, sorted(set(recorded) - labels)
