"""`flexmb verify ropes --quick`: the rope over a pulley of Crous 2000, App. D.2 against the closed form (smooth limit
for mu = 0, no-slip limit for mu = 0.5 and 0.8) and the static hanging chain against its closed form and the
catenary; the case and metric names of issue 12 are part of the interface."""
from verify_quick import run_quick


def test_verify_ropes_quick(tmp_path):
    cases = run_quick("ropes", tmp_path / "rep")
    names = {"rope-over-pulley-mu0", "rope-over-pulley-mu0.5", "rope-over-pulley-mu0.8"}
    assert names <= set(cases)
    for name in names:
        assert {"x_2", "x_2_5", "rim_speed_ratio", "energy_balance_rel"} <= set(cases[name]["metrics"])
        assert set(cases[name]["reference"]) >= {"x_2", "x_2_5"}
    assert {"sag", "horizontal_tension", "sag_continuum"} <= set(cases["catenary"]["metrics"])
    assert all(c["passed"] for c in cases.values())
