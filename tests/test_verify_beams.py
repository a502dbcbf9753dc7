"""`flexmb verify beams --quick`: ExactBeam against the elastica (tip-loaded cantilever k = 0.5..10, full
circle by an end moment, post-buckled column, a cable's catenary) through fm.static_equilibrium."""
from verify_quick import run_quick


def test_verify_beams_quick(tmp_path):
    out = tmp_path / "rep"
    cases = run_quick("beams", out)
    assert {"cantilever-k0.5", "cantilever-k1", "cantilever-k2", "cantilever-k5", "cantilever-k10", "full-circle",
            "post-buckled-column", "catenary"} <= set(cases)
    for k in ("0.5", "1", "2", "5", "10"):
        m = cases[f"cantilever-k{k}"]["metrics"]
        assert {"tip_v_rel_err_n8", "tip_v_rel_err_n16", "tip_u_rel_err_n16", "tip_rotation_rel_err_n16"} <= set(m)
    assert {"tip_gap_over_L_n16", "tip_rotation_err_n16", "nodes_vs_exact_polygon_n16"} <= set(
        cases["full-circle"]["metrics"])
    assert {"sag_rel_err_n16", "H_rel_err_n16"} <= set(cases["catenary"]["metrics"])
    assert all(c["passed"] for c in cases.values())
