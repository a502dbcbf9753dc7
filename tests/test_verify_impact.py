"""`flexmb verify impact --quick`: Hertz impact, one restitution case per law, Newton's cradle and the
bouncing ball; the metric names of issue 6 are part of the interface."""
from verify_quick import run_quick


def test_verify_impact_quick(tmp_path):
    out = tmp_path / "rep"
    cases = run_quick("impact", out)
    assert {"peak_force", "max_penetration", "contact_time"} <= set(cases["hertz-sphere-plane"]["metrics"])
    for law in ("lankarani-nikravesh", "hunt-crossley", "flores"):
        assert "achieved_e" in cases[f"restitution-{law}-e0.5"]["metrics"]
    assert {"newtons-cradle", "bouncing-ball"} <= set(cases)
    assert all(c["passed"] for c in cases.values())
