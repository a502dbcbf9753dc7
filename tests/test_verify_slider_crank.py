"""`flexmb verify slider-crank --quick`: the rigid rod, the stiffened two-mode rod (coarse step) and the
singular a = b slider-crank; every case must pass and report the issue's metric names."""
import json
import subprocess
import sys


def test_verify_slider_crank_quick(tmp_path):
    out = tmp_path / "rep"
    proc = subprocess.run([sys.executable, "-m", "flexmb.cli", "verify", "slider-crank", "--quick", "--out", str(out)],
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    cases = {c["name"]: c for c in json.loads((out / "results.json").read_text())["suites"]["slider-crank"]["cases"]}
    assert {"rigid-rod", "modal-stiffened-2", "singular-a-equals-b"} <= set(cases)
    for name in ("rigid-rod", "modal-stiffened-2"):
        assert {"mid_defl_over_L_max", "mid_defl_over_L_min", "axial_force_max"} <= set(cases[name]["metrics"]), name
    m = cases["modal-stiffened-2"]["metrics"]
    assert 0.01 < m["mid_defl_over_L_max"] < 0.02 and -0.02 < m["mid_defl_over_L_min"] < -0.01
    assert 160.0 < m["axial_force_max"] < 180.0
    s = cases["singular-a-equals-b"]["metrics"]
    assert s["singular_start_raises_singular_configuration_error"] is True
    assert s["singular_positions_passed"] >= 3
    assert all(c["passed"] for c in cases.values())
