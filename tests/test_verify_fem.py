"""`flexmb verify fem --quick` end to end: exit code, the case list, source and tolerance of every case."""
import json
import subprocess
import sys

from verify_quick import assert_no_warning_printed

QUICK_CASES = {"cantilever-beam-euler-bernoulli", "timoshenko-beam", "free-free-beam", "cantilever-solid",
               "free-free-solid", "plate-simply-supported", "plate-cantilever", "patch-tests", "rigid-modes",
               "mass-properties", "craig-bampton-cantilever"}


def test_verify_fem_quick(tmp_path):
    out = tmp_path / "rep"
    proc = subprocess.run([sys.executable, "-m", "flexmb.cli", "verify", "fem", "--quick", "--out", str(out)],
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert_no_warning_printed(proc)
    doc = json.loads((out / "results.json").read_text())
    cases = doc["suites"]["fem"]["cases"]
    names = {c["name"] for c in cases}
    assert names == QUICK_CASES                                # rigid-modes-bracket is slow-only
    for c in cases:
        assert c["passed"] is True, c["name"]
        assert {"name", "passed", "wall_s", "metrics", "tolerance", "source", "notes"} <= set(c)
        assert c["source"] and c["notes"], c["name"]
        assert c["tolerance"] and set(c["tolerance"]) <= set(c["metrics"]), c["name"]
        for metric, tol in c["tolerance"].items():
            kind = tol.split()[0]
            assert kind in ("abs", "rel", "max", "min", "true"), (c["name"], metric, tol)
            if kind in ("abs", "rel"):
                assert metric in c.get("reference", {}), (c["name"], metric)
    html = (out / "report.html").read_text()
    assert "Suite <code>fem</code>" in html and "data:image/png;base64," in html


def test_fem_suite_registered():
    import verification
    from verification import fem
    assert verification.SUITES["fem"] == "verification.fem" and "fem" in verification.DEFAULT_SUITES
    slow = {c.__name__ for c in fem.CASES if getattr(c, "slow", False)}
    assert slow == {"rigid_modes_bracket"}
    assert {c.__name__.replace("_", "-") for c in fem.CASES} == QUICK_CASES | {"rigid-modes-bracket"}
