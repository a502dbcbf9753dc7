"""`flexmb verify manipulator --quick`: rigid-arm inverse dynamics of the manipulator of seed 002 §9.5, the
planar and the 3-D manoeuvre, flexmb's driver torques against the hand-written Lagrange torques, the
flexible arm under both manoeuvres and the rigid-arm torques applied open loop; the metric names of issue 13 item 3 are part of the interface."""

import numpy as np

from verification.manipulator import models
from verify_quick import run_quick


def test_verify_manipulator_quick(tmp_path):
    out = tmp_path / "rep"
    cases = run_quick("manipulator", out)
    assert set(cases) == {"rigid-planar-inverse-dynamics", "rigid-3d-inverse-dynamics",
                          "flexible-planar-prescribed-motion", "flexible-3d-prescribed-motion", "open-loop-planar",
                          "exact-beam-reference-planar"}
    joints = {f"torque_{j}_max_rel_err" for j in ("shoulder", "elbow", "wrist")}
    assert joints | {"torque_base_max_rel", "joint_angle_max_err"} <= set(cases["rigid-planar-inverse-dynamics"]["metrics"])
    assert joints | {"torque_base_max_rel_err"} <= set(cases["rigid-3d-inverse-dynamics"]["metrics"])
    flexible = cases["flexible-planar-prescribed-motion"]["metrics"]
    assert {"energy_balance_rel", "link2_mass", "tip_deviation_max", "torque_shoulder_peak_change_rel"} <= set(flexible)
    assert "torque_base_peak_change_rel" in cases["flexible-3d-prescribed-motion"]["metrics"]
    open_loop = cases["open-loop-planar"]["metrics"]
    assert {"rigid_angle_max_err", "rigid_lagrange_angle_max_err", "tip_deviation_at_Ts", "tip_deviation_max",
            "angle_err_wrist_at_Ts", "flexible_energy_balance_rel"} <= set(open_loop)
    assert {"modal_first_frequency", "modal_path_diff_max_rel"} <= set(cases["exact-beam-reference-planar"]["metrics"])
    assert all(c["passed"] for c in cases.values())


def test_lagrange_torques_of_a_steady_base_spin():
    """The hand-written reference on a motion with a closed form: the arm stretched out (all pin angles
    zero) and the base turning at a constant rate needs no torque, and a base acceleration alone needs
    J psi'' with J = I_1xx + sum_k (m_k y_k^2 + I_kyy), y_k the centres' distances from the axis."""
    zero = np.zeros((1, 4))
    spin = np.array([[0.7, 0.0, 0.0, 0.0]])
    assert np.abs(models.lagrange_torques(zero, spin, zero)).max() < 1e-12
    y = np.array([models.L2 / 2, models.L2 + models.L3 / 2, models.L2 + models.L3 + models.L4 / 2])
    J = models.INERTIA[0][0] + sum(m * yk ** 2 + inertia[1]
                                   for m, yk, inertia in zip(models.MASS[1:], y, models.INERTIA[1:]))
    tau = models.lagrange_torques(zero, zero, np.array([[2.0, 0.0, 0.0, 0.0]]))
    assert np.allclose(tau[0], [2.0 * J, 0.0, 0.0, 0.0], rtol=1e-12, atol=1e-9)
