"""State kept between runs (issue 10, item 1): every element with a history (crash elements,
rotational-spring winding, contact approach speeds and broad phase) starts clean on each
``simulate`` and is replayed per saved row by ``Result.energy`` / ``Result.contact_force``.

The second run of one System and a run of a fresh System follow the same code path on the same
numbers, so they must agree bit for bit; 1e-12 is the stated bound.
"""
from __future__ import annotations

import numpy as np
import pytest

import flexmb as fm
from flexmb.contact import LankaraniNikravesh
from flexmb.contact.mesh import SphereCloudContact, SphereMeshContact, TriangleMesh

TOL = 1e-12


# -- one small model per stateful element family -----------------------------------------------
def crush_cart():
    """A 10 kg cart at 4 m/s on a prismatic track into a crush element (it crushes, then rebounds)."""
    s = fm.System(name="crush cart")
    b = s.add(fm.RigidBody(10.0, (0.1, 0.1, 0.1), position=(1.5, 0, 0), velocity=(-4.0, 0, 0), name="cart"))
    s.add(fm.Prismatic(s.ground, b, (1.5, 0, 0), (1, 0, 0), name="track"))
    s.add(fm.CrushElement(s.ground, b, point_a=(0, 0, 0), point_b=(1.5, 0, 0),
                          curve=([0, 0.002, 0.5], [0, 2000.0, 2500.0]), unloading_stiffness=2e6, name="crush"))
    return s, dict(t_end=0.06, h=1e-3)


def plastic_rotor():
    """A rotor on a revolute joint turned past yield by a plastic hinge (then elastic swings)."""
    s = fm.System(name="plastic rotor")
    b = s.add(fm.RigidBody(1.0, (0.5, 0.5, 0.5), angular_velocity=(0, 0, 4.0), name="rotor"))
    s.add(fm.Revolute(s.ground, b, (0, 0, 0), (0, 0, 1), name="rev"))
    s.add(fm.PlasticHinge(s.ground, b, axis=(0, 0, 1), curve=([0, 10.0], [2.0, 2.0]), k_elastic=200.0, name="hinge"))
    return s, dict(t_end=0.3, h=2e-3)


def winding_wheel():
    """A wheel at 20 rad/s on a soft rotational spring: it winds up several radians (past pi)."""
    s = fm.System(name="winding wheel")
    b = s.add(fm.RigidBody(1.0, (0.1, 0.1, 0.1), angular_velocity=(0, 0, 20.0), name="wheel"))
    s.add(fm.Revolute(s.ground, b, (0, 0, 0), (0, 0, 1), name="axle"))
    s.add(fm.RotationalSpringDamper(s.ground, b, axis=(0, 0, 1), k=0.1, c=0.0, name="spring"))
    return s, dict(t_end=0.4, h=2e-3)


R, MASS = 0.01, 0.033
LAW = LankaraniNikravesh(1e9, 0.7)


def _ball(s):
    return s.add(fm.RigidBody(MASS, (1e-6,) * 3, position=(0.0, R + 1e-4, 0.0), velocity=(0.2, -1.0, 0.0),
                              name="ball"))


def sphere_plane_ball():
    """A ball bouncing on the ground plane (approach speed captured at touch)."""
    s = fm.System(gravity=(0, -9.81, 0), name="sphere-plane ball")
    b = _ball(s)
    s.add(fm.SpherePlaneContact(s.ground, b, point=(0, 0, 0), normal=(0, 1, 0), center=(0, R + 1e-4, 0), radius=R,
                                law=LAW, name="floor"))
    return s, dict(t_end=6e-4, h=2e-5, h_contact=4e-6)


def sphere_mesh_ball():
    """The same ball on a two-triangle floor mesh (broad phase rebuilt at accepted steps)."""
    s = fm.System(gravity=(0, -9.81, 0), name="sphere-mesh ball")
    b = _ball(s)
    floor = TriangleMesh([[-1, 0, -1], [1, 0, -1], [1, 0, 1], [-1, 0, 1]], [[0, 2, 1], [0, 3, 2]])
    s.add(SphereMeshContact(s.ground, b, mesh=floor, center=(0, R + 1e-4, 0), radius=R, law=LAW, name="floor"))
    return s, dict(t_end=6e-4, h=2e-5, h_contact=4e-6)


def sphere_cloud():
    """Two spheres of a cloud hitting each other above a plane (candidate set changes size)."""
    s = fm.System(name="sphere cloud")
    pos = [(0.0, R + 1e-4, 0.0), (0.0, 3.1 * R, 0.0)]
    bs = [s.add(fm.RigidBody(MASS, (1e-6,) * 3, position=p, velocity=(0, -1.0 - k, 0), name=f"s{k}"))
          for k, p in enumerate(pos)]
    s.add(SphereCloudContact(bs, centers=pos, radii=R, law=LAW, planes=[(s.ground, (0, 0, 0), (0, 1, 0))], margin=R,
                             name="cloud"))
    return s, dict(t_end=6e-4, h=2e-5, h_contact=4e-6)


def dc_motor():
    """A DC motor spinning up a wheel (its state is a coordinate; it keeps no element history). The step resolves the
    armature's time constant L_a / r_a = 1 ms (h = 0.2 ms: energy drift 0.011); at h = 2 ms the current jumped to
    V / r_a in one step and the supply work missed the magnetic energy (EnergyBalanceWarning, drift 0.995)."""
    s = fm.System(name="dc motor")
    w = s.add(fm.RigidBody(2.0, (0.01, 0.01, 0.01), name="wheel"))
    j = s.add(fm.Revolute(s.ground, w, (0, 0, 0), (0, 0, 1), name="axle"))
    s.add(fm.DCMotor(j, K_p=0.05, r_a=1.0, L_a=1e-3, D=1e-4, voltage=12.0, name="motor"))
    return s, dict(t_end=0.2, h=2e-4)


FAMILIES = {"crush element": crush_cart, "plastic hinge": plastic_rotor, "rotational spring winding": winding_wheel,
            "sphere-plane approach speeds": sphere_plane_ball, "sphere-mesh contact": sphere_mesh_ball,
            "sphere cloud": sphere_cloud, "DC motor": dc_motor}


def assert_same_run(a: fm.Result, b: fm.Result) -> None:
    assert np.array_equal(a.t, b.t)
    for k in ("q", "v", "lam", "work_nc", "history"):
        np.testing.assert_allclose(getattr(a, k), getattr(b, k), rtol=0, atol=TOL, err_msg=k)


@pytest.mark.parametrize("family", FAMILIES)
def test_second_run_equals_a_fresh_system(family):
    s, kw = FAMILIES[family]()
    first, second = fm.simulate(s, **kw), fm.simulate(s, **kw)
    fresh = fm.simulate(FAMILIES[family]()[0], **kw)
    assert_same_run(second, fresh)
    assert_same_run(first, fresh)
    e2, ef = second.energy(), fresh.energy()
    scale = max(1.0, np.abs(ef["kinetic"]).max())
    assert e2["potential"][0] == pytest.approx(ef["potential"][0], abs=TOL * scale)   # t = 0 of the second run
    for k in ("kinetic", "potential", "total"):
        np.testing.assert_allclose(e2[k], ef[k], rtol=0, atol=TOL * scale, err_msg=k)


def test_stateful_families_have_a_history_and_the_motor_none():
    """The models above exercise what they claim: a non-empty history that changes during the run
    (the DC motor keeps its state in a coordinate, not in an element history)."""
    for family, build in FAMILIES.items():
        s, kw = build()
        res = fm.simulate(s, **kw)
        if family == "DC motor":
            assert res.history.shape == (res.t.size, 0)
        else:
            assert res.history.shape[1] > 0 and np.ptp(res.history, axis=0).max() > 0, family


def test_winding_wheel_potential_at_the_start_is_zero_after_many_radians():
    """The found case: a wheel that turned far (here > 5 rad) reported 0.5 k (2 pi n)^2 at t = 0
    because every saved state was unwrapped about the end-of-run angle."""
    s, kw = winding_wheel()
    res = fm.simulate(s, **kw)
    theta = np.unwrap(2.0 * np.arctan2(res.q[:, 6], res.q[:, 3]))     # rotation about z (Euler parameters)
    assert theta.max() > 5.0
    e = res.energy()
    assert e["potential"][0] == 0.0
    np.testing.assert_allclose(e["potential"], 0.5 * 0.1 * theta ** 2, rtol=1e-9, atol=1e-12)


def test_crush_energy_balance_is_the_same_for_any_save_every():
    s, kw = crush_cart()
    every1 = fm.simulate(s, **kw, save_every=1)
    every7 = fm.simulate(s, **kw, save_every=7)
    shared = np.flatnonzero(np.isin(every1.t, every7.t))
    assert shared.size == every7.t.size
    e1, e7 = every1.energy(), every7.energy()
    for k in ("kinetic", "potential", "work", "total"):
        np.testing.assert_allclose(e7[k], e1[k][shared], rtol=0, atol=TOL * 80.0, err_msg=k)
    # the balance closes: 80 J of kinetic energy, crushed and partly returned by the elastic unloading
    assert np.abs(e1["total"] - e1["total"][0]).max() < 2e-3 * e1["kinetic"][0]


def test_contact_force_is_the_same_for_any_save_every():
    s, kw = sphere_plane_ball()
    every1 = fm.simulate(s, **kw, save_every=1)
    every7 = fm.simulate(s, **kw, save_every=7)
    c = s.forces[0]
    shared = np.flatnonzero(np.isin(every1.t, every7.t))
    f1, f7 = every1.contact_force(c), every7.contact_force(c)
    assert f1.max() > 1.0                                   # the ball did hit the floor
    np.testing.assert_allclose(f7, f1[shared], rtol=0, atol=TOL * f1.max())


def test_replay_restores_the_assembly_history():
    s, kw = crush_cart()
    res = fm.simulate(s, **kw)
    asm = s.compile()
    before = asm.history()
    res.energy()
    assert np.array_equal(asm.history(), before)


def test_saved_result_keeps_the_history_for_energy(tmp_path):
    s, kw = winding_wheel()
    res = fm.simulate(s, **kw, save_every=3)
    res.save(tmp_path / "wheel.npz")
    back = fm.load_result(tmp_path / "wheel.npz", system=s)
    assert np.array_equal(back.history, res.history)
    np.testing.assert_array_equal(back.energy()["potential"], res.energy()["potential"])
