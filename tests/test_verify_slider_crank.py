"""`flexmb verify slider-crank --quick`: the rigid rod, the stiffened two-mode rod (coarse step) and the
singular a = b slider-crank; every case must pass and report the issue's metric names."""
from verify_quick import run_quick


def test_verify_slider_crank_quick(tmp_path):
    out = tmp_path / "rep"
    cases = run_quick("slider-crank", out)
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
