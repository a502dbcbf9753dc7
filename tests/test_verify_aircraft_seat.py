"""`flexmb verify aircraft-seat --quick`: the three columns of Lankarani, Olivares & Nagarajan (2002) Table I
(component column and the full FAR 25.562 sled run against the sled column: calibration; MADYMO column and the
rig at the sled's head impact: predictions), each against the paper's numbers."""
from verify_quick import run_quick


def test_verify_aircraft_seat_quick(tmp_path):
    cases = run_quick("aircraft-seat", tmp_path / "rep")
    assert set(cases) == {"component-44fps-38deg", "simulation-44fps-42deg", "sled-45fps-38deg",
                          "sled-far25-562"}
    for name in ("component-44fps-38deg", "simulation-44fps-42deg", "sled-45fps-38deg"):
        assert {"hic", "hic_window_ms", "peak_head_g"} <= set(cases[name]["reference"])
    assert cases["component-44fps-38deg"]["reference"]["hic"] == 685.0
    assert cases["simulation-44fps-42deg"]["reference"]["hic"] == 634.0
    assert cases["sled-45fps-38deg"]["reference"]["hic"] == 694.0
    # the full sled run: HIC, window and peak checked against the sled column with the impact speed and angle
    sled = cases["sled-far25-562"]
    assert sled["reference"] == {"hic": 694.0, "hic_window_ms": 23.7, "peak_head_g": 143.0,
                                 "impact_speed_fps": 45.08, "impact_angle_deg": 38.0}
    assert {"hic_vs_component", "hic_vs_simulation"} <= set(sled["metrics"])
    for case in cases.values():                        # FAR 25.562(c)(5): the HIC window lies within the head strike
        assert case["metrics"]["hic_window_ms"] <= case["metrics"]["head_strike_ms"] + 0.5
    for name in cases:                                 # every check at the table's own spread, never wider
        assert set(cases[name]["tolerance"].values()) == {"rel 0.1"}
    assert all(c["passed"] for c in cases.values()), {n: c.get("error") for n, c in cases.items()}


def test_head_strike_samples():
    """The head strike runs from the sample before the first contact to the sample after the last one."""
    import numpy as np
    from verification.aircraft_seat.cases import head_strike
    force = np.array([0.0, 0.0, 5.0, 0.0, 7.0, 0.0, 0.0])
    assert head_strike(force) == slice(1, 6)
    assert head_strike(np.zeros(4)) == slice(None)
    assert head_strike(np.array([3.0, 0.0])) == slice(0, 2)
