"""`flexmb verify rotating-beam --quick`: one spin-up per model (coarse step; ExactBeam too), the Campbell diagram,
the flapwise Southwell case; every case must pass and report the metric names of docs/verification.md."""
from verify_quick import run_quick


def test_verify_rotating_beam_quick(tmp_path):
    out = tmp_path / "rep"
    cases = run_quick("rotating-beam", out)
    assert {"modal-stiffened-omega2", "modal-linear-omega6", "nonlinear-beam-omega10", "exact-beam-omega10",
            "frequencies-vs-speed", "flapwise-southwell"} <= set(cases)
    assert "max_abs_err_vs_elastica" in cases["exact-beam-omega10"]["metrics"]
    for name in ("modal-stiffened-omega2", "nonlinear-beam-omega10", "modal-linear-omega6", "exact-beam-omega10"):
        m = cases[name]["metrics"]
        assert {"tip_min", "t_tip_min", "tip_7_5", "tip_20", "max_abs_tip_after_Ts", "diverged"} <= set(m), name
    assert cases["modal-linear-omega6"]["metrics"]["diverged"] is True
    assert cases["modal-stiffened-omega2"]["metrics"]["diverged"] is False
    assert all(c["passed"] for c in cases.values())
