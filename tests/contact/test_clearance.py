"""Revolute clearance joint (flexmb.contact.ClearanceJoint): geometry, Hertz impact, friction circle, energy.

A steel journal (pin) of radius 9.5 mm in a 10 mm bearing (clearance 0.5 mm), K the Hertz stiffness of the
journal in the bearing (hertz.sphere_sphere with the concave radius, n = 3/2, as in Flores et al.).

* Geometry: the penetration is |e| - c with e the pin-centre offset projected on the plane normal to the hole
  axis (an axial offset does not count), also for a rotated hole body.
* Impact: a pin released at the centre of a fixed bearing under gravity falls through the clearance and hits
  at v = sqrt(2 g c); with e = 1 the first impact's maximum penetration follows from the energy balance
  K d^(5/2) / (5/2) = m g (c + d) (Hertz's (5 m v^2 / 4K)^(2/5) plus the weight's work during the contact;
  100 steps per contact: rel 1e-3) and the energy is conserved over the bounces.
* Friction circle: a journal turned at constant speed in a fixed bearing under its weight W runs where the
  normal force N and the friction mu N balance W: the line of centres makes the friction angle atan(mu) with the
  vertical, displaced against the turning direction. Started there, it stays (to round-off, 1e-9 deg), for both
  friction laws (their coefficient is mu at the slip speed omega R = 0.19 m/s >> the ramp speeds). The driver's
  work goes into friction: the energy balance closes to 1e-6 of the dissipated work.
"""
import math

import numpy as np
import pytest

import flexmb as fm
from flexmb import rotations as rot
from flexmb.contact import (BrownMcPhee, ClearanceJoint, CoulombRamp, LankaraniNikravesh, effective_modulus,
                            hertz_impact, sphere_sphere)
from flexmb.errors import ModelError

RP, RB = 0.0095, 0.010
C = RB - RP
E_STAR = effective_modulus(2.07e11, 0.3, 2.07e11, 0.3)
K = sphere_sphere(RP, -RB, E_STAR)
G = 9.81


def test_penetration_is_the_projected_eccentricity_minus_clearance():
    s = fm.System()
    R = rot.A(rot.from_axis_angle((1.0, 2.0, 0.5), 0.8))
    hole = s.add(fm.RigidBody(1.0, (1, 1, 1), position=(0.3, 0.1, -0.2),
                              orientation=rot.from_axis_angle((1.0, 2.0, 0.5), 0.8)))
    pin = s.add(fm.RigidBody(1.0, (1, 1, 1), position=(0.5, 0.0, 0.1)))
    axis = R @ np.array([0.0, 0.0, 1.0])
    centre = np.array([0.3, 0.1, -0.2]) + R @ np.array([0.01, 0.02, 0.03])
    offset = R @ np.array([3e-4, 4e-4, 0.7])                # |e| = 5e-4 in the plane, 0.7 m along the axis
    s.add(ClearanceJoint(hole, pin, point=centre, axis=axis, clearance=4e-4, radius_pin=RP, law=LankaraniNikravesh(K, 0.9),
                         pin_center=centre + offset))
    s.add(ClearanceJoint(hole, pin, point=centre, axis=axis, clearance=6e-4, radius_pin=RP, law=LankaraniNikravesh(K, 0.9),
                         pin_center=centre + offset))
    asm = s.compile()
    q, v = asm.initial_state()
    pen = asm.contacts[0].penetration(asm.eval_state(q, v, 0 * v, 0.0))
    assert pen == pytest.approx([1e-4, -1e-4], abs=1e-15)
    assert asm.in_contact(q, v) is True


def test_clearance_bad_input():
    s = fm.System()
    a = s.add(fm.RigidBody(1.0, (1, 1, 1)))
    b = s.add(fm.RigidBody(1.0, (1, 1, 1)))
    law = LankaraniNikravesh(K, 0.9)
    with pytest.raises(ModelError, match="clearance must be positive"):
        ClearanceJoint(a, b, point=(0, 0, 0), axis=(0, 0, 1), clearance=0.0, radius_pin=RP, law=law)
    with pytest.raises(ModelError, match="radius_pin must be positive"):
        ClearanceJoint(a, b, point=(0, 0, 0), axis=(0, 0, 1), clearance=C, radius_pin=-1.0, law=law)
    with pytest.raises(ModelError, match="axis .* zero length"):
        ClearanceJoint(a, b, point=(0, 0, 0), axis=(0, 0, 0), clearance=C, radius_pin=RP, law=law)
    with pytest.raises(ModelError, match="itself"):
        ClearanceJoint(a, a, point=(0, 0, 0), axis=(0, 0, 1), clearance=C, radius_pin=RP, law=law)
    with pytest.raises(ModelError, match="friction must be a friction law"):
        ClearanceJoint(a, b, point=(0, 0, 0), axis=(0, 0, 1), clearance=C, radius_pin=RP, law=law, friction="coulomb")


def test_pin_falling_in_a_bearing_hits_with_the_hertz_penetration_and_conserves_energy():
    from scipy.optimize import brentq
    m = 0.2
    v = math.sqrt(2.0 * G * C)
    impact = hertz_impact(m, v, K)
    # gravity keeps pushing during the contact: K d^2.5 / 2.5 = m g (c + d) (0.34 % deeper than Hertz alone)
    d_max = brentq(lambda d: K * d ** 2.5 / 2.5 - m * G * (C + d), 0.5 * impact.max_penetration,
                   2.0 * impact.max_penetration, xtol=1e-20, rtol=1e-14)
    s = fm.System(gravity=(0, -G, 0))
    pin = s.add(fm.RigidBody(m, (1e-5, 1e-5, 0.5 * m * RP * RP), name="pin"))
    s.add(ClearanceJoint(s.ground, pin, point=(0, 0, 0), axis=(0, 0, 1), clearance=C, radius_pin=RP,
                         law=LankaraniNikravesh(K, 1.0)))
    t_fall = math.sqrt(2.0 * C / G)
    res = fm.simulate(s, 2.5 * t_fall, t_fall / 50, h_contact=impact.duration / 100)
    y = res.position(pin)[:, 1]
    first = res.t < 1.5 * t_fall
    assert (-y[first] - C).max() == pytest.approx(d_max, rel=1e-3)
    assert y[-1] > -C                                        # bounced back into the clearance
    e = res.energy()
    drift = np.abs(e["total"] - e["total"][0])
    assert drift[-1] < 1e-5 * m * G * C                      # after the bounce (measured 5e-7)
    assert drift.max() < 1e-3 * m * G * C                    # O(h^2) exchange error inside the contact (2e-4)


def _turning_journal(friction, mu, omega=20.0, m=1.0, t_end=0.1, h=2e-4):
    a = math.atan(mu)
    N = m * G * math.cos(a)
    r0 = C + (N / K) ** (1.0 / 1.5)                          # eccentricity with the static penetration
    P0 = (-r0 * math.sin(a), -r0 * math.cos(a), 0.0)
    s = fm.System(gravity=(0, -G, 0))
    pin = s.add(fm.RigidBody(m, (1e-4, 1e-4, 0.5 * m * RP * RP), position=P0, name="pin"))
    s.add(ClearanceJoint(s.ground, pin, point=(0, 0, 0), axis=(0, 0, 1), clearance=C, radius_pin=RP,
                         law=LankaraniNikravesh(K, 0.9), friction=friction,
                         pin_center=P0))
    for coord in ("z", "e1", "e2"):
        s.add(fm.Driver(pin, coordinate=coord, value=0.0))
    turn = fm.TimeFunction(lambda t: math.sin(omega * t / 2), lambda t: omega / 2 * math.cos(omega * t / 2),
                           lambda t: -(omega / 2) ** 2 * math.sin(omega * t / 2))      # e3 of a turn omega t about z
    s.add(fm.Driver(pin, coordinate="e3", value=turn))
    res = fm.simulate(s, t_end, h)
    return res, pin


@pytest.mark.parametrize("law", [CoulombRamp(0.2, 1e-4), BrownMcPhee(0.3, 0.2, 1e-4)], ids=repr)
def test_turning_journal_runs_at_the_friction_angle(law):
    mu = 0.2
    res, pin = _turning_journal(law, mu)
    p = res.position(pin)
    angle = np.degrees(np.arctan2(-p[:, 0], -p[:, 1]))       # from the downward vertical, towards -x
    assert np.abs(angle - math.degrees(math.atan(mu))).max() < 1e-6
    e = res.energy()
    dissipated = -e["work_nc"][-1]
    # friction power mu N omega R_pin (N = W cos(friction angle)) over the run
    assert dissipated == pytest.approx(mu * G * math.cos(math.atan(mu)) * 20.0 * RP * res.t[-1], rel=1e-6)
    assert np.abs(e["total"] - e["total"][0]).max() < 1e-6 * dissipated
