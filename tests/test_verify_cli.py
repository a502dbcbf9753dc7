"""`flexmb verify rigid --quick` end to end: exit code, results.json schema (docs/verification.md), report."""
import json
import re
import subprocess
import sys

import pytest
from verify_quick import assert_no_warning_printed


def test_verify_rigid_quick(tmp_path):
    out = tmp_path / "rep"
    proc = subprocess.run([sys.executable, "-m", "flexmb.cli", "verify", "rigid", "--quick", "--out", str(out)],
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert_no_warning_printed(proc)
    assert re.search(r"^\[\s*\d+/\d+ \d+:\d\d\] rigid/double-pendulum: pass \(", proc.stdout, re.M), proc.stdout
    doc = json.loads((out / "results.json").read_text(), parse_constant=lambda c: pytest.fail(f"non-JSON {c}"))
    assert {"flexmb_version", "started", "wall_s", "suites"} <= set(doc) and doc["quick"] is True
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
        assert_no_warning_printed(proc)
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
    from verification import case_label, suite_cases
    labels = set()
    for suite in SUITES:
        names = [case_label(c) for c in suite_cases(suite, quick=False)]
        assert len(names) == len(set(names)), suite
        labels |= {f"{suite}/{n}" for n in names}
    recorded = costs.load()
    assert recorded and set(recorded) <= labels, sorted(set(recorded) - labels)


def _report(path, suites, quick):
    """A results.json as verify writes it, of ``suites`` (``quick`` None: written before it was recorded)."""
    path.mkdir()
    doc = {"flexmb_version": "0", "started": "", "wall_s": 1.0, "suites": {s: {"cases": []} for s in suites}}
    if quick is not None:
        doc["quick"] = quick
    (path / "results.json").write_text(json.dumps(doc))
    return (path / "results.json").read_text()


@pytest.mark.parametrize("held, quick, argv, holds", [
    (["rigid", "fem"], False, ["impact"], "a report of suites rigid, fem (full)"),
    (["rigid"], False, ["rigid", "--quick"], "a report of suite rigid (full)"),
    (["rigid"], True, ["rigid"], "a report of suite rigid (quick subset)"),
    (["rigid", "impact"], None, ["impact"], "a report of suites rigid, impact;"),
], ids=["other-suites", "full-by-quick", "quick-by-full", "older-report"])
def test_verify_keeps_a_report_of_another_run(tmp_path, capsys, held, quick, argv, holds):
    """A report of other suites, or of the other kind (full / --quick), is not replaced without --force: exit 2,
    a message naming the directory, what it holds and --force, the file untouched, no case run."""
    from flexmb.cli import main
    out = tmp_path / "verification-report"
    before = _report(out, held, quick)
    assert main(["verify", *argv, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"{out}/ holds {holds}" in err and "--force" in err, err
    assert (out / "results.json").read_text() == before


def _no_cases(monkeypatch):
    from verification import framework
    monkeypatch.setattr(framework, "run_suites", lambda names, quick, **kw: {n: [] for n in names})


@pytest.mark.parametrize("held, quick, argv", [
    (["rigid"], True, ["rigid", "--quick"]),                 # the same run again
    (["rigid"], None, ["rigid", "--quick"]),                 # an older report of the same suite
    (["rigid", "fem"], False, ["impact", "--quick", "--force"]),
], ids=["same-run", "older-same-suites", "force"])
def test_verify_replaces_a_report_of_the_same_run_or_with_force(tmp_path, capsys, monkeypatch, held, quick, argv):
    from flexmb.cli import main
    _no_cases(monkeypatch)
    out = tmp_path / "rep"
    _report(out, held, quick)
    assert main(["verify", *argv, "--out", str(out)]) == 0, capsys.readouterr().err
    doc = json.loads((out / "results.json").read_text())
    assert list(doc["suites"]) == [a for a in argv if not a.startswith("--")] and doc["quick"] is True


def test_verify_reads_a_foreign_results_json_as_a_clash(tmp_path, capsys):
    from flexmb.cli import main
    (tmp_path / "results.json").write_text("[1, 2]")
    assert main(["verify", "rigid", "--quick", "--out", str(tmp_path)]) == 2
    assert "holds a results.json that is not a flexmb verification report" in capsys.readouterr().err


def test_verify_refuses_a_file_as_its_report_directory(tmp_path, capsys):
    """--out naming a file: exit 2 with a message (it ran every case, then failed writing with a traceback)."""
    from flexmb.cli import main
    path = tmp_path / "notes.txt"
    path.write_text("mine")
    assert main(["verify", "rigid", "--quick", "--out", str(path)]) == 2
    assert f"--out {path} is a file, not a directory" in capsys.readouterr().err and path.read_text() == "mine"
