"""Warnings raised inside a verification case are recorded in that case's result (results.json ``warnings``,
the report's case section) and not printed: ``flexmb verify`` prints progress lines only (issue 25, item 5).

A fake suite (registered in ``verification.SUITES`` inside a subprocess) has one case that raises the same
flexmb warning twice and one quiet case; the command line runs it serially and on two worker processes."""
import json
import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent("""
    import sys, types, warnings
    import verification
    from verification.framework import CaseResult
    from flexmb.errors import RedundantConstraintWarning

    def warns_twice(quick):
        for _ in range(2):      # same place twice: the default filter would print it once
            warnings.warn("fake: constraint row 3 is redundant", RedundantConstraintWarning)
        res = CaseResult("warns-twice", "a test case")
        res.check("ran", True)
        return res

    def quiet(quick):
        res = CaseResult("quiet", "a test case")
        res.check("ran", True)
        return res

    suite = types.ModuleType("fake_warning_suite")
    suite.CASES = [warns_twice, quiet]
    sys.modules[suite.__name__] = suite
    verification.SUITES["fake-warnings"] = suite.__name__
    from flexmb.cli import main
    sys.exit(main(["verify", "fake-warnings", "--out", sys.argv[1], "--jobs", sys.argv[2]]))
""")


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_case_warnings_go_to_the_report_not_the_terminal(tmp_path, jobs):
    out = tmp_path / "report"
    proc = subprocess.run([sys.executable, "-c", SCRIPT, str(out), jobs], capture_output=True, text=True,
                          timeout=300)
    printed = proc.stdout + proc.stderr
    assert proc.returncode == 0, printed
    assert "redundant" not in printed and "Warning" not in printed, printed
    assert "fake-warnings/warns-twice: pass" in printed and "2 warnings (in the report)" in printed, printed

    cases = {c["name"]: c for c in json.loads((out / "results.json").read_text())["suites"]["fake-warnings"]["cases"]}
    assert cases["warns-twice"]["warnings"] == [{"category": "RedundantConstraintWarning",
                                                 "message": "fake: constraint row 3 is redundant", "count": 2}]
    assert "warnings" not in cases["quiet"]
    html = (out / "report.html").read_text(encoding="utf-8")
    assert "fake: constraint row 3 is redundant" in html and "RedundantConstraintWarning" in html
