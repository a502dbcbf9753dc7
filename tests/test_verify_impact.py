"""`flexmb verify impact --quick`: Hertz impact, one restitution case per law, Newton's cradle and the
bouncing ball; the metric names of issue 6 are part of the interface."""
import json
import subprocess
import sys


def test_verify_impact_quick(tmp_path):
    out = tmp_path / "rep"
    proc = subprocess.run([sys.executable, "-m", "flexmb.cli", "verify", "impact", "--quick", "--out", str(out)],
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    cases = {c["name"]: c for c in json.loads((out / "results.json").read_text())["suites"]["impact"]["cases"]}
    assert {"peak_force", "max_penetration", "contact_time"} <= set(cases["hertz-sphere-plane"]["metrics"])
    for law in ("lankarani-nikravesh", "hunt-crossley", "flores"):
        assert "achieved_e" in cases[f"restitution-{law}-e0.5"]["metrics"]
    assert {"newtons-cradle", "bouncing-ball"} <= set(cases)
    assert all(c["passed"] for c in cases.values())
