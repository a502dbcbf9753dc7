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
    for name in cases:                                 # every check at the table's own spread, never wider
        assert set(cases[name]["tolerance"].values()) == {"rel 0.1"}
    assert all(c["passed"] for c in cases.values()), {n: c.get("error") for n, c in cases.items()}
