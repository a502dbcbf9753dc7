"""`flexmb verify roller-chain --quick`: the two-sprocket drive's static span tensions against T / R_p and the
moment balance (settled dynamically and by the static start under load), the tooth-frequency line of the polygonal
action, no-slip speed and the energy balance; the marine drive's first 0.4 s (energy balance, no skipped tooth,
link forces); the case and metric names are part of the interface."""
from verify_quick import run_quick


def test_verify_roller_chain_quick(tmp_path):
    cases = run_quick("roller-chain", tmp_path / "rep")
    assert {"static-tension", "static-start", "polygonal-action", "marine-start"} <= set(cases)
    assert {"tension_ratio", "torque_balance", "motor_torque"} <= set(cases["static-tension"]["metrics"])
    assert {"tooth_frequency_line", "harmonic_power_fraction", "speed_ratio",
            "energy_balance_rel"} <= set(cases["polygonal-action"]["metrics"])
    assert {"tension_ratio", "torque_balance", "motor_torque"} <= set(cases["static-start"]["metrics"])
    assert {"energy_balance_rel", "cam_crank_angle_over_half_tooth",
            "link_force_peak"} <= set(cases["marine-start"]["metrics"])
    assert all(c["passed"] for c in cases.values())
