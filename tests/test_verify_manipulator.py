"""`flexmb verify manipulator --quick`: rigid-arm inverse dynamics of the manipulator of He 1992, §9.5, the
planar and the 3-D manoeuvre, flexmb's driver torques against the hand-written Lagrange torques, the
flexible arm under both manoeuvres and the rigid-arm torques applied open loop (planar and 3-D); the metric names of issue 13 item 3 are part of the interface."""

import numpy as np

import flexmb as fm

from verification.manipulator import models
from verify_quick import run_quick


def test_verify_manipulator_quick(tmp_path):
    out = tmp_path / "rep"
    cases = run_quick("manipulator", out)
    assert set(cases) == {"rigid-planar-inverse-dynamics", "rigid-3d-inverse-dynamics",
                          "flexible-planar-prescribed-motion", "flexible-3d-prescribed-motion", "open-loop-planar",
                          "open-loop-3d", "exact-beam-reference-planar"}
    joints = {f"torque_{j}_max_rel_err" for j in ("shoulder", "elbow", "wrist")}
    assert joints | {"torque_base_max_rel", "joint_angle_max_err"} <= set(cases["rigid-planar-inverse-dynamics"]["metrics"])
    assert joints | {"torque_base_max_rel_err"} <= set(cases["rigid-3d-inverse-dynamics"]["metrics"])
    flexible = cases["flexible-planar-prescribed-motion"]["metrics"]
    assert {"energy_balance_rel", "link2_mass", "tip_deviation_max", "torque_shoulder_peak_change_rel"} <= set(flexible)
    assert "torque_base_peak_change_rel" in cases["flexible-3d-prescribed-motion"]["metrics"]
    open_loop = cases["open-loop-planar"]["metrics"]
    assert {"rigid_angle_max_err", "rigid_lagrange_angle_max_err", "tip_deviation_at_Ts", "tip_deviation_max",
            "angle_err_wrist_at_Ts", "flexible_energy_balance_rel", "flexible_chord_energy_balance_rel",
            "chord_basis_tip_deviation_max", "chord_basis_chord_angle_err_wrist_max",
            "tangent_basis_tangent_angle_err_wrist_max"} <= set(open_loop)
    assert {"rigid_angle_max_err", "tangent_energy_balance_rel", "chord_energy_balance_rel", "tangent_tip_deviation_max",
            "chord_tip_deviation_at_Ts", "chord_angle_err_base_max"} <= set(cases["open-loop-3d"]["metrics"])
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
    """The open-loop joint torque on a flexible link's tip node (models._joint_torque: fm.NodalTorque about the
    frame's z) on the clamped link (frame fixed) gives the static tip rotation M L/(E I) and deflection
    M L^2/(2 E I) of a cantilever under a tip moment (Euler-Bernoulli; exact for cubic elements and the tip
    interface's constraint modes; the Newton tolerance and the geometric stiffening at a 3e-3 rad tip rotation
    leave 1e-7 relative)."""
    s = fm.System()
    link = s.add(models.flexible_link(models.L2, models.JOINT_POINTS[0], "link"))
    s.add(fm.Fixed(s.ground, link))
    Mz = 250.0
    s.add(models._joint_torque(link.node(models.N_ELEMENTS), lambda t: Mz, 1.0, "tip moment"))
    eta = fm.static_equilibrium(s, load_steps=1).modal_coordinates(link)[-1]
    t_shape, r_shape = link.node_shapes(models.N_ELEMENTS)
    EI = models.ALUMINIUM.E * np.pi / 4 * (0.05 ** 4 - 0.04 ** 4)
    assert np.allclose(r_shape[0] @ eta, [0.0, 0.0, Mz * models.L2 / EI], rtol=1e-6, atol=1e-12)
    assert np.allclose(t_shape[0] @ eta, [0.0, Mz * models.L2 ** 2 / (2 * EI), 0.0], rtol=1e-6, atol=1e-12)


def test_chord_link_has_the_thesis_modal_basis():
    """models.chord_link (He 1992, eqs. 9.19, 9.20): two simply supported modes in the link's x-y plane and two
    cantilever modes in x-z, at the Euler-Bernoulli frequencies (j pi)^2 and (1.8751, 4.6941)^2 times
    sqrt(EI / rho A) / (2 pi L^2) (8 cubic elements: 2e-4 relative measured for the fourth mode, bound 1e-3),
    and no in-plane displacement at either joint (the frame is the chord)."""
    link = models.chord_link(models.L2, models.JOINT_POINTS[0], "link")
    EI = models.ALUMINIUM.E * np.pi / 4 * (0.05 ** 4 - 0.04 ** 4)
    rhoA = models.ALUMINIUM.rho * np.pi * (0.05 ** 2 - 0.04 ** 2)
    scale = np.sqrt(EI / rhoA) / (2 * np.pi * models.L2 ** 2)
    expected = np.sort(np.array([np.pi ** 2, (2 * np.pi) ** 2, 1.8751 ** 2, 4.6941 ** 2]) * scale)
    freq = np.sort(np.sqrt(np.diag(link.modes.K))) / (2 * np.pi)
    np.testing.assert_allclose(freq, expected, rtol=1e-3)
    for node in (0, models.N_ELEMENTS):
        assert np.abs(link.node_shapes(node)[0][0][1]).max() < 1e-12
