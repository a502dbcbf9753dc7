"""`flexmb verify train-crash --quick`: the two-car closed form and the eight-car train set into a standing
one at 30 km/h; the metric names of issue 13 (item 5) are part of the interface."""
from verify_quick import run_quick


def test_verify_train_crash_quick(tmp_path):
    out = tmp_path / "rep"
    cases = run_quick("train-crash", out)
    assert set(cases) == {"two-car-closed-form", "train-into-standing-train-30kmh"}
    two = cases["two-car-closed-form"]
    assert {"crush_interface_1", "energy_absorbed_interface_1", "peak_deceleration_car_1_g", "momentum_rel",
            "energy_balance_rel"} <= set(two["reference"]) | set(two["tolerance"])
    train = cases["train-into-standing-train-30kmh"]["metrics"]
    assert {f"crush_interface_{k}" for k in range(1, 16)} <= set(train)
    assert {f"energy_absorbed_interface_{k}" for k in range(1, 16)} <= set(train)
    assert {f"peak_deceleration_car_{k}_g" for k in range(1, 17)} <= set(train)
    assert {"energy_balance_rel", "momentum_rel"} <= set(train)
    assert all(c["passed"] for c in cases.values()), {n: c.get("error") for n, c in cases.items()}
