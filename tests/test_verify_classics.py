"""`flexmb verify classics --quick`: the container crane of seed 001 against the Lagrange closed form
(small swings, free and prescribed cart) and DOP853 on the nonlinear equations (large swing); the
metric names of issue 12 are part of the interface."""
import json
import subprocess
import sys


def test_verify_classics_quick(tmp_path):
    out = tmp_path / "rep"
    proc = subprocess.run([sys.executable, "-m", "flexmb.cli", "verify", "classics", "--quick", "--out", str(out)],
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    cases = {c["name"]: c for c in json.loads((out / "results.json").read_text())["suites"]["classics"]["cases"]}
    assert set(cases) == {"crane-small-swing", "crane-prescribed-cart", "crane-large-swing"}
    for name in ("crane-small-swing", "crane-prescribed-cart"):
        assert {"swing_period", "theta_amplitude", "theta_max_err", "x_err"} <= set(cases[name]["metrics"])
    assert {"x_err", "theta_max_err", "tension_max_rel_err", "energy_balance_rel"} <= set(
        cases["crane-large-swing"]["metrics"])
    assert all(c["passed"] for c in cases.values())
