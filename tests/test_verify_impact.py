"""`flexmb verify impact --quick`: Hertz impact, one restitution case per law, Newton's cradle, the
bouncing ball and García Orden's beam on a wall with its rigid bar; the metric names of issues 6 and 26 are
part of the interface."""
from verify_quick import run_quick


def test_verify_impact_quick(tmp_path):
    out = tmp_path / "rep"
    cases = run_quick("impact", out)
    assert {"peak_force", "max_penetration", "contact_time"} <= set(cases["hertz-sphere-plane"]["metrics"])
    for law in ("lankarani-nikravesh", "hunt-crossley", "flores"):
        assert "achieved_e" in cases[f"restitution-{law}-e0.5"]["metrics"]
    assert {"newtons-cradle", "bouncing-ball"} <= set(cases)
    orden = cases["orden-beam-wall"]["metrics"]
    assert {"energy_drift_20el", "momentum_impulse_residual_20el", "first_contact_20el_s"} <= set(orden)
    assert {"omega_after_first_impact", "first_contact_s"} <= set(cases["orden-rigid-bar"]["metrics"])
    assert "orden-beam-convergence" not in cases          # slow: full runs only
    assert all(c["passed"] for c in cases.values())
