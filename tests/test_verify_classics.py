"""`flexmb verify classics --quick`: the container crane of van der Linde & Schwab 2002, against the Lagrange closed form
(small swings, free and prescribed cart) and DOP853 on the nonlinear equations (large swing); the
metric names of issue 12 are part of the interface."""
from verify_quick import run_quick


def test_verify_classics_quick(tmp_path):
    out = tmp_path / "rep"
    cases = run_quick("classics", out)
    assert set(cases) == {"crane-small-swing", "crane-prescribed-cart", "crane-large-swing"}
    for name in ("crane-small-swing", "crane-prescribed-cart"):
        assert {"swing_period", "theta_amplitude", "theta_max_err", "x_err"} <= set(cases[name]["metrics"])
    assert {"x_err", "theta_max_err", "tension_max_rel_err", "energy_balance_rel"} <= set(
        cases["crane-large-swing"]["metrics"])
    assert all(c["passed"] for c in cases.values())
