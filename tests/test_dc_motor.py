"""DC motor with its own state (flexmb/forces/motor.py) against the closed-form linear ODE.

A motor spins a rigid flywheel (inertia J about the joint axis) from rest with a 60 V step:

    J w' = K_p i - D w,      L_a i' + r_a i + K_p w = V,

a linear system whose exact solution is the matrix exponential. The crank-rocker motor data of
He 1992, §9.4 are used (K_p = 0.678 N m/A, r_a = 0.4 ohm, L_a = 0.05 H, D = 0.226 N m s/rad) with
J = 0.57 kg m^2 (crank plus rotor). The error must fall at order 2 (h = 2 and 1 ms) and stay below
5e-4 of the peak at h = 1 ms (measured 2.7e-4 for omega, 4e-4 for i: generalized-alpha's O(h^2)
error on the 8 rad/s electromechanical pole).
"""
import numpy as np
import pytest
import scipy.linalg as sla

import flexmb as fm
from flexmb.errors import ModelError, NonFiniteError

KP, RA, LA, D, J, V = 0.678, 0.4, 0.05, 0.226, 0.57, 60.0


def motor_system(voltage=V, joint_kind="revolute"):
    s = fm.System()
    wheel = s.add(fm.RigidBody(2.0, (J, J, J), name="wheel"))
    joint = (fm.Revolute(s.ground, wheel, (0, 0, 0), (0, 0, 1)) if joint_kind == "revolute"
             else fm.Spherical(s.ground, wheel, (0, 0, 0)))
    s.add(joint)
    motor = s.add(fm.DCMotor(joint, K_p=KP, r_a=RA, L_a=LA, D=D, voltage=voltage, name="motor"))
    return s, wheel, motor


def exact(t):
    """(omega, i) of the linear motor-flywheel system from rest."""
    A = np.array([[-D / J, KP / J], [-KP / LA, -RA / LA]])
    b = np.array([0.0, V / LA])
    x_inf = -np.linalg.solve(A, b)
    return np.array([x_inf - sla.expm(A * tk) @ x_inf for tk in t])


def errors(h):
    s, wheel, motor = motor_system()
    res = fm.simulate(s, 1.0, h)
    ref = exact(res.t)
    w, i = res.angular_velocity(wheel)[:, 2], res.v[:, motor.offset]
    return (np.abs(w - ref[:, 0]).max() / np.abs(ref[:, 0]).max(),
            np.abs(i - ref[:, 1]).max() / np.abs(ref[:, 1]).max(), res)


def test_motor_spin_up_matches_closed_form():
    ew2, ei2, _ = errors(2e-3)
    ew, ei, res = errors(1e-3)
    assert ew < 5e-4 and ei < 5e-4
    assert 3.0 < ew2 / ew < 5.0 and 3.0 < ei2 / ei < 5.0
    # energy balance: kinetic + magnetic - integral of (V i - r_a i^2 - D w^2) stays at 0
    e = res.energy()
    assert np.abs(e["total"] - e["total"][0]).max() < 1e-3 * e["work_nc"].max()


def test_motor_on_a_joint_without_rotation_axis_is_refused():
    with pytest.raises(ModelError, match="DC motor 'motor'.*rotation axis.*spherical joint"):
        motor_system(joint_kind="spherical")


def test_motor_voltage_nan_is_reported_with_time():
    s, _, _ = motor_system(voltage=lambda t: V if t < 0.05 else float("nan"))
    with pytest.raises(NonFiniteError, match=r"DC motor 'motor'.*t = 0.05"):
        fm.simulate(s, 0.2, 1e-2)


def test_motor_parameters_are_checked():
    s = fm.System()
    w = s.add(fm.RigidBody(1.0, (1, 1, 1)))
    j = s.add(fm.Revolute(s.ground, w, (0, 0, 0), (0, 0, 1)))
    with pytest.raises(ModelError, match="L_a .H. must be positive"):
        fm.DCMotor(j, K_p=1.0, r_a=1.0, L_a=0.0)
