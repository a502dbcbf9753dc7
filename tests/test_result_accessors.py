"""Result accessors: bodies and joints by name, joint coordinates, accelerations, validated frame= arguments.

Each accessor is checked against a closed form: the revolute angle against the angle in the body's Euler
parameters, a free slider against uniform acceleration, the point acceleration of a crank turning at constant
speed against omega^2 r, the angular acceleration of a spin-up driver against the driver's second derivative,
and the universal/spherical/cylindrical/planar coordinates against relative rotations and translations
prescribed in synthetic states.
"""
import numpy as np
import pytest

import flexmb as fm
from flexmb import rotations as rot
from flexmb.errors import ModelError


def looping_pendulum():
    """A bar pinned at the origin about z, thrown fast enough to go over the top (several turns in 2 s)."""
    s = fm.System(gravity=(0, -9.81, 0))
    bar = s.add(fm.RigidBody(1.0, (1e-3, 1 / 12, 1 / 12), position=(0.5, 0, 0), velocity=(0, 5.0, 0),
                             angular_velocity=(0, 0, 10.0), name="bar"))
    pin = s.add(fm.Revolute(s.ground, bar, (0, 0, 0), (0, 0, 1), name="pin"))
    return s, bar, pin


@pytest.fixture(scope="module")
def pendulum():
    s, bar, pin = looping_pendulum()
    return fm.simulate(s, 2.0, 2e-3), bar, pin


def test_revolute_angle_is_the_euler_parameter_angle_unwrapped(pendulum):
    res, bar, pin = pendulum
    p = res.euler_parameters(bar)
    theta_ep = np.unwrap(2.0 * np.arctan2(p[:, 3], p[:, 0]))     # p = (cos(theta/2), 0, 0, sin(theta/2))
    theta = res.joint_coordinates(pin)
    assert theta.shape == res.t.shape
    assert theta[-1] > 4 * np.pi                                   # went over the top: unwrapping is exercised
    assert np.abs(np.diff(theta)).max() < 0.1                      # no jumps of 2 pi
    # the same saved states read two ways: equal to round-off of the arctangents (|theta| < 20 rad)
    assert np.abs(theta - theta_ep).max() < 1e-12 * 20 * 100
    assert np.array_equal(res.joint_coordinates("pin"), theta)


def test_revolute_sign_follows_the_axis_and_the_body_order(pendulum):
    from flexmb.joints.coordinates import joint_coordinates
    res, bar, pin = pendulum
    theta = res.joint_coordinates(pin)
    reversed_axis = fm.Revolute(res.system.ground, bar, (0, 0, 0), (0, 0, -1))
    swapped = fm.Revolute(bar, res.system.ground, (0, 0, 0), (0, 0, 1))
    assert np.allclose(joint_coordinates(reversed_axis, res.q), -theta, rtol=0, atol=1e-12)
    assert np.allclose(joint_coordinates(swapped, res.q), -theta, rtol=0, atol=1e-12)


def test_free_slider_displacement_and_acceleration_are_uniform_acceleration():
    g = np.array([0.0, -9.81, 0.0])
    h = np.array([1.0, 1.0, 0.0]) / np.sqrt(2.0)
    s = fm.System(gravity=g)
    block = s.add(fm.RigidBody(2.0, (0.1, 0.1, 0.1), position=(0.3, 0.3, 0), velocity=1.5 * h, name="block"))
    rail = s.add(fm.Prismatic(s.ground, block, (0.3, 0.3, 0), h, name="rail"))
    res = fm.simulate(s, 0.5, 1e-3)
    a_axial = g @ h                                                 # -9.81/sqrt(2) m/s^2 along the rail
    x = 1.5 * res.t + 0.5 * a_axial * res.t ** 2
    # generalized-alpha integrates a constant acceleration exactly; round-off of 500 steps of ~1 m
    assert np.abs(res.joint_coordinates(rail) - x).max() < 1e-9
    assert np.allclose(res.acceleration("block", (0.1, -0.2, 0.05)), a_axial * h, rtol=0, atol=1e-9)
    assert np.allclose(res.angular_acceleration(block), 0.0, atol=1e-9)


def crank(function):
    """A crank on the z axis through the origin, centre of mass at x = 0.2 m, driven by ``function``."""
    s = fm.System()
    arm = s.add(fm.RigidBody(1.5, (0.01, 0.05, 0.05), position=(0.2, 0, 0), name="crank"))
    pin = s.add(fm.Revolute(s.ground, arm, (0, 0, 0), (0, 0, 1), name="pin"))
    drive = s.add(fm.Driver(pin, angle=function, name="drive"))
    return s, arm, pin, drive


def test_constant_speed_crank_point_has_centripetal_acceleration():
    omega, r_tip = 12.0, 0.5                                        # point 0.3 m beyond the centre of mass
    s, arm, pin, drive = crank(fm.TimeFunction.linear(omega))
    res = fm.simulate(s, 0.6, 1e-3)
    tip = res.position(arm, (0.3, 0, 0))
    a = res.acceleration(arm, (0.3, 0, 0))
    assert np.allclose(np.linalg.norm(tip, axis=1), r_tip, rtol=0, atol=1e-10)
    # a = -omega^2 x (towards the axis), |a| = omega^2 r = 72 m/s^2. The saved accelerations of index-3
    # generalized-alpha start with an oscillation (the velocity jumps to omega at t = 0) that rho_inf = 0.9
    # damps out within ~0.1 s; afterwards they are second-order accurate: 1.3e-5 relative at h = 1e-3
    # (observed), checked with a margin of 8.
    late = res.t >= 0.3
    assert np.allclose(a[late], -omega ** 2 * tip[late], rtol=0, atol=1e-4 * omega ** 2 * r_tip)
    assert np.allclose(res.angular_acceleration("crank")[late], 0.0, atol=1e-4 * omega ** 2)
    assert np.allclose(res.joint_coordinates(drive), omega * res.t, rtol=0, atol=1e-9)


def test_spin_up_angular_acceleration_follows_the_driver():
    f = fm.TimeFunction.spin_up(omega_s=6.0, T_s=0.5)
    s, arm, pin, drive = crank(f)
    res = fm.simulate(s, 0.8, 1e-3)
    alpha = np.array([f.acceleration(t) for t in res.t])              # peak 2 omega_s / T_s = 24 rad/s^2
    for frame in ("global", "body"):                                  # the z axes of body and ground coincide
        w_dot = res.angular_acceleration(arm, frame=frame)
        # second-order accurate accelerations of generalized-alpha: 1.5e-5 relative at h = 1e-3 (observed),
        # checked with a margin of 6; the spin-up starts at rest, so there is no start transient
        assert np.allclose(w_dot[:, 2], alpha, rtol=0, atol=1e-4 * np.abs(alpha).max())
        assert np.allclose(w_dot[:, :2], 0.0, atol=1e-9)
    assert np.allclose(res.joint_coordinates("pin"), [f.value(t) for t in res.t], rtol=0, atol=1e-9)
    # tangential acceleration of a point at 0.5 m from the axis: alpha r
    a = res.acceleration("crank", (0.3, 0, 0))
    tangent = np.cross([0, 0, 1.0], res.position(arm, (0.3, 0, 0)))
    assert np.allclose(np.einsum("ni,ni->n", a, tangent), alpha * 0.25, rtol=0, atol=1e-4 * 0.25 * alpha.max())


def test_every_accessor_takes_the_body_and_joint_name(pendulum):
    res, bar, pin = pendulum
    for name in ("orientation", "euler_parameters", "position", "velocity", "acceleration", "angular_velocity",
                 "angular_acceleration"):
        method = getattr(res, name)
        assert np.array_equal(method("bar"), method(bar)), name
    assert all(np.array_equal(x, y) for x, y in zip(res.reaction("pin"), res.reaction(pin)))
    with pytest.raises(ModelError, match="no body named 'bra'"):
        res.position("bra")
    with pytest.raises(ModelError, match="joint 'pni' is not in the simulated system"):
        res.joint_coordinates("pni")


@pytest.mark.parametrize("accessor", ["angular_velocity", "angular_acceleration"])
@pytest.mark.parametrize("frame", ["local", "Global", None, 3])
def test_frame_is_validated(pendulum, accessor, frame):
    res, bar, _ = pendulum
    with pytest.raises(ModelError, match=rf"frame must be one of \('global', 'body'\), got {frame!r}"):
        getattr(res, accessor)(bar, frame=frame)


def test_fixed_joint_has_no_coordinate():
    s = fm.System()
    b = s.add(fm.RigidBody(1.0, (1, 1, 1), name="b"))
    weld = s.add(fm.Fixed(s.ground, b, name="weld"))
    s.compile()
    res = synthetic(s, np.zeros((2, 7)) + [0, 0, 0, 1, 0, 0, 0])
    with pytest.raises(ModelError, match="fixed joint 'weld' has no relative coordinate"):
        res.joint_coordinates(weld)


# -- synthetic states with a prescribed relative motion ------------------------------------------------
def synthetic(system, q):
    n = q.shape[0]
    z = np.zeros_like(q)
    return fm.Result(np.arange(n, dtype=float), q, z, z, np.zeros((n, 0)), np.zeros(n), np.zeros(n), system=system)


def Rot(axis, angle):
    return rot.A(rot.from_axis_angle(axis, angle))


def two_bodies(A_a0, A_b0):
    s = fm.System()
    a = s.add(fm.RigidBody(1.0, (1, 1, 1), position=(0.1, 0.2, 0.3), orientation=rot.from_matrix(A_a0), name="a"))
    b = s.add(fm.RigidBody(1.0, (1, 1, 1), position=(0.4, -0.2, 0.5), orientation=rot.from_matrix(A_b0), name="b"))
    return s, a, b


def states(a, b, C_a, C_b, s_ab, P):
    """q rows for rotations C_a, C_b of the bodies since the start (n, 3, 3) and a joint point that moves by
    s_ab (n, 3) on b relative to its image on a, both carried by a: P_b - P_a = C_a s_ab, P_a = r_a0 + C_a (P - r_a0)."""
    rows = []
    for Ca, Cb, sab in zip(C_a, C_b, s_ab):
        r_a0, A_a0 = a.initial_frame()
        r_b0, A_b0 = b.initial_frame()
        P_a = r_a0 + Ca @ (P - r_a0)
        r_b = P_a + Ca @ sab - Cb @ (P - r_b0)
        rows.append(np.concatenate([r_a0, rot.from_matrix(Ca @ A_a0), r_b, rot.from_matrix(Cb @ A_b0)]))
    return np.array(rows)


A_A0, A_B0 = Rot((1, 2, 3), 0.7), Rot((-1, 0.5, 2), 1.9)
P0 = np.array([0.3, -0.1, 0.2])
T = np.linspace(0.0, 1.0, 201)
C_A = np.array([Rot((0.3, -1, 0.4), 2.5 * t) for t in T])          # body a turns as well


def test_universal_angles_compose_the_relative_rotation():
    s, a, b = two_bodies(A_A0, A_B0)
    u = np.array([0.0, 0.6, 0.8])
    w = np.array([1.0, 0.0, 0.0])
    cross = s.add(fm.Universal(a, b, point=P0, axis_a=u, axis_b=w, name="cross"))
    th1, th2 = 5.0 * T - 1.0, 1.2 * np.sin(4.0 * T)                  # theta_1 sweeps beyond pi
    C_B = np.array([Ca @ Rot(u, t1) @ Rot(w, t2) for Ca, t1, t2 in zip(C_A, th1, th2)])
    s.compile()
    res = synthetic(s, states(a, b, C_A, C_B, np.zeros((T.size, 3)), P0))
    assert np.allclose(res.joint_coordinates(cross), np.column_stack([th1, th2]), rtol=0, atol=1e-12)


def test_spherical_rotation_vector_in_body_a_axes():
    s, a, b = two_bodies(A_A0, A_B0)
    ball = s.add(fm.Spherical(a, b, P0, name="ball"))
    phi = np.column_stack([0.5 * np.sin(3 * T), -1.0 * T, 0.8 * T ** 2])           # |phi| < pi
    C_B = np.array([Ca @ Rot(f, np.linalg.norm(f)) if np.linalg.norm(f) else Ca for Ca, f in zip(C_A, phi)])
    s.compile()
    res = synthetic(s, states(a, b, C_A, C_B, np.zeros((T.size, 3)), P0))
    assert np.allclose(res.joint_coordinates("ball"), phi, rtol=0, atol=1e-12)


def test_cylindrical_and_planar_coordinates():
    s, a, b = two_bodies(A_A0, A_B0)
    h = np.array([0.0, 0.0, 1.0])
    sleeve = s.add(fm.Cylindrical(a, b, P0, h, name="sleeve"))
    theta, x = 7.0 * T, 0.3 * np.sin(2 * T)                            # over a full turn
    C_B = np.array([Ca @ Rot(h, t) for Ca, t in zip(C_A, theta)])
    s.compile()
    res = synthetic(s, states(a, b, C_A, C_B, x[:, None] * h, P0))
    assert np.allclose(res.joint_coordinates(sleeve), np.column_stack([theta, x]), rtol=0, atol=1e-12)

    s, a, b = two_bodies(A_A0, A_B0)
    n = np.array([0.0, 1.0, 1.0]) / np.sqrt(2.0)
    table = s.add(fm.Planar(a, b, P0, n, name="table"))
    xy = np.column_stack([0.2 * T, -0.4 * T ** 2])
    C_B = np.array([Ca @ Rot(n, -t) for Ca, t in zip(C_A, theta)])
    s.compile()
    res = synthetic(s, states(a, b, C_A, C_B, xy @ np.array([table.f, table.g]), P0))
    assert np.allclose(res.joint_coordinates(table), np.column_stack([xy, -theta]), rtol=0, atol=1e-12)


def test_joint_on_a_flexible_site_reads_the_driven_angle():
    """A flexible arm driven at its hub interface: the angle read through the deformed site is the driver's."""
    x = np.linspace(0.0, 2.0, 11)
    mesh = fm.FEMesh(np.column_stack([x, 0 * x, 0 * x]), {"line": np.column_stack([np.arange(10), np.arange(1, 11)])},
                     node_sets={"hub": [0], "tip": [10]})
    fe = fm.FEModel(mesh, fm.Material(E=70e9, nu=0.33, rho=2700.0), sections=fm.BeamSection.rectangle(0.02, 0.04))
    modes = fm.craig_bampton(fe, {"hub": "hub", "tip": "tip"}, n_modes=4, reference="tip")   # frame at the tip
    s = fm.System()
    arm = s.add(fm.FlexibleBody(modes, damping=0.01, name="arm"))
    hub = s.add(fm.Revolute(s.ground, arm.interface("hub"), (0, 0, 0), (0, 0, 1), name="hub"))
    f = fm.TimeFunction.spin_up(omega_s=6.0, T_s=0.2)
    s.add(fm.Driver(hub, angle=f))
    res = fm.simulate(s, 0.25, 5e-3)
    assert np.abs(res.modal_coordinates("arm")).max() > 0            # the hub site does deform
    assert np.allclose(res.joint_coordinates(hub), [f.value(t) for t in res.t], rtol=0, atol=1e-9)
    assert np.array_equal(res.deflection("arm", 10, frame="global"), res.deflection(arm, 10, frame="global"))
    with pytest.raises(ModelError, match=r"frame must be one of \('global', 'body'\), got 'rotating'"):
        res.deflection("arm", 10, frame="rotating")
