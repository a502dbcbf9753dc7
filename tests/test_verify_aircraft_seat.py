"""`flexmb verify aircraft-seat --quick`: the three columns of Lankarani, Olivares & Nagarajan (2002) Table I
(component test: calibration; MADYMO column, sled column and the full sled run: predictions), each against the
paper's numbers."""
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
    # the full sled run: impact speed and angle checked; HIC, window and peak reported beside the paper's
    sled = cases["sled-far25-562"]
    assert set(sled["reference"]) == {"impact_speed_fps", "impact_angle_deg"}
    assert sled["metrics"]["paper_hic"] == 694.0 and "hic" in sled["metrics"]
    for name in ("simulation-44fps-42deg", "sled-45fps-38deg"):     # the predictions held at 10 %
        assert set(cases[name]["tolerance"].values()) == {"rel 0.1"}
    assert all(c["passed"] for c in cases.values()), {n: c.get("error") for n, c in cases.items()}
