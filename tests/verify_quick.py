"""Shared by the tests/test_verify_*.py files: run one suite through the command line, as a user does."""
import json
import re
import subprocess
import sys


def assert_no_warning_printed(proc: subprocess.CompletedProcess) -> None:
    """A verify run prints no Python warning (``path:line: SomeWarning: ...``): a case's warnings belong in its
    results.json entry and the report."""
    printed = re.findall(r"^.*:\d+: \w*Warning: .*$", proc.stdout + proc.stderr, re.MULTILINE)
    assert not printed, f"warnings printed: {printed}"


def run_quick(suite: str, out) -> dict:
    """``flexmb verify <suite> --quick --out <out>`` in a subprocess; it must exit 0 and print no Python warning
    (``path:line: SomeWarning: ...``). Returns the suite's cases from results.json by name."""
    proc = subprocess.run([sys.executable, "-m", "flexmb.cli", "verify", suite, "--quick", "--out", str(out)],
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert_no_warning_printed(proc)
    return {c["name"]: c for c in json.loads((out / "results.json").read_text())["suites"][suite]["cases"]}
