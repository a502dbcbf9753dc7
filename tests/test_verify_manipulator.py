"""`flexmb verify manipulator --quick`: rigid-arm inverse dynamics of the manipulator of He 1992, §9.5, the
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


def test_node_torque_bends_a_clamped_link_as_beam_theory():
    """The open-loop joint torque on a flexible link's tip node (models._node_torque): its modal generalized
    force Q_eta = R_N^T n' on the clamped link (frame held) gives the static tip rotation M L/(E I) and deflection
    M L^2/(2 E I) of a cantilever under a tip moment (Euler-Bernoulli; exact for cubic elements and the tip
    interface's constraint modes)."""
    link = models.flexible_link(models.L2, models.JOINT_POINTS[0], "link")
    Mz = 250.0
    force = models._node_torque(link, models.N_ELEMENTS, lambda t: Mz, 1.0)
    q = np.zeros(7 + link.n_modes)
    q[3] = 1.0
    Q = force.func(0.0, q, np.zeros_like(q))
    eta = np.linalg.solve(link.modes.K, Q[7:])                 # frame held: K eta = Q_eta
    t_shape, r_shape = link.node_shapes(models.N_ELEMENTS)
    EI = models.ALUMINIUM.E * np.pi / 4 * (0.05 ** 4 - 0.04 ** 4)
    assert np.allclose(r_shape[0] @ eta, [0.0, 0.0, Mz * models.L2 / EI], rtol=1e-9, atol=1e-12)
    assert np.allclose(t_shape[0] @ eta, [0.0, Mz * models.L2 ** 2 / (2 * EI), 0.0], rtol=1e-9, atol=1e-12)
