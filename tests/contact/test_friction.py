"""Friction of contact pairs (flexmb/contact/friction.py) against closed forms of rigid-body mechanics.

Set-up: a steel sphere, R = 10 mm (m = 32.9 g), on a rigid plane under gravity (g = 9.81), normal law
Lankarani-Nikravesh with the Hertz stiffness, started at its static penetration so the normal force is m g cos
theta from the first step. A "block" is the same sphere with its rotation locked by three coordinate drivers
(e1 = e2 = e3 = 0), so it slides without rolling.

Closed forms (Coulomb friction, coefficient mu):

* a block launched at v on a level plane decelerates at mu g and stops after v^2 / (2 mu g). With the ramp
  law mu min(1, s/v0) the last part below v0 is an exponential decay (time constant v0/(mu g)) that adds
  exactly v0^2 / (2 mu g): the distance is (v^2 + v0^2) / (2 mu g);
* on an incline steeper than atan(mu) the block slides with a = g (sin theta - mu cos theta); on a shallower
  one a regularized law carries the load m g sin theta by a steady creep s* with mu(s*) = tan theta
  (``FrictionLaw.creep_speed``): v0 tan theta / mu for the ramp, below the stiction speed v_s for
  Brown-McPhee while tan theta < mu_s;
* a ball launched sliding without spin (v, omega = 0) slides with slip speed v - R omega falling at
  (7/2) mu g and rolls from t* = 2 v / (7 mu g) on, at 5/7 v (the no-slip transition; e.g. Goldstein-type
  textbook result for a uniform sphere, I = 2/5 m R^2).

Tolerances: the sliding phases have constant forces, so generalized-alpha integrates them to round-off
(deceleration, incline acceleration: rel 1e-6); the stopping distance and rolling transition carry the
O(h^2) error of the transitions (measured 2e-6 and ~5e-5 relative at the steps used: tolerances 1e-4 and
2e-4); the creep speed is a steady state, reached exactly (rel 1e-6).
"""
import math

import numpy as np
import pytest
import scipy.sparse as sp

import flexmb as fm
from flexmb import rotations as rot
from flexmb.contact import (BrownMcPhee, CoulombRamp, LankaraniNikravesh, effective_modulus, sphere_plane,
                            sphere_sphere)
from flexmb.errors import ModelError, NonFiniteError
from flexmb.joints.kernels import extend

R, RHO, E, NU = 0.01, 7850.0, 2.1e11, 0.3
MASS = RHO * 4.0 / 3.0 * np.pi * R ** 3
E_STAR = effective_modulus(E, NU, E, NU)
K = sphere_plane(R, E_STAR)
G = 9.81
MU = 0.3


def on_plane(friction, v0=0.0, theta=0.0, lock=True, h=1e-3, t_end=0.5):
    """Sphere on the plane through the origin inclined by ``theta`` about z (up-slope direction returned)."""
    s = fm.System(gravity=(0, -G, 0))
    n = np.array([-np.sin(theta), np.cos(theta), 0.0])
    up = np.array([np.cos(theta), np.sin(theta), 0.0])
    c = (R - (MASS * G * np.cos(theta) / K) ** (2 / 3)) * n              # static penetration
    ball = s.add(fm.RigidBody(MASS, (0.4 * MASS * R * R,) * 3, position=c, velocity=v0 * up, name="ball"))
    s.add(fm.SpherePlaneContact(s.ground, ball, point=(0, 0, 0), normal=n, center=c, radius=R,
                                law=LankaraniNikravesh(K, 0.5), friction=friction))
    if lock:
        for e in ("e1", "e2", "e3"):
            s.add(fm.Driver(ball, coordinate=e, value=0.0))
    res = fm.simulate(s, t_end, h)
    return res, ball, up


# ---- the laws -----------------------------------------------------------------------------------------------

LAWS = [CoulombRamp(0.3, 1e-2), CoulombRamp(0.25, 2e-2, v_dead=5e-3), CoulombRamp(0.4, 1e-2, shape="tanh"),
        BrownMcPhee(0.5, 0.3, 1e-2), BrownMcPhee(0.3, 0.3, 2e-3)]


@pytest.mark.parametrize("law", LAWS, ids=repr)
def test_coefficient_derivatives_and_ratio(law):
    rng = np.random.default_rng(3)
    s = np.concatenate([rng.uniform(1e-5, 0.1, 500), [0.0, 1e-12]])
    mu, dmu, mus = law.coefficient(s)
    eps = 1e-8
    ref = (law.mu(s + eps) - law.mu(np.maximum(s - eps, 0.0))) / (s + eps - np.maximum(s - eps, 0.0))
    kink = np.zeros(s.shape, bool)
    if isinstance(law, CoulombRamp) and law.shape == "linear":     # one-sided at the ramp's corners
        kink = (np.abs(s - law.v0) < 2 * eps) | (np.abs(s - law.v_dead) < 2 * eps)
    assert np.allclose(dmu[~kink], ref[~kink], rtol=1e-5, atol=1e-4 * np.abs(dmu).max())
    pos = s > 0
    assert np.allclose(mus[pos] * s[pos], mu[pos], rtol=1e-12, atol=1e-15)
    # mu/s at s = 0 is the limit from the right (the law is linear in the slip velocity near rest)
    assert mus[-2] == pytest.approx(float(law.coefficient(np.array([1e-9]))[2][0]), rel=1e-6)
    assert np.all(mu >= 0) and mu[-2] == 0.0


def test_brown_mcphee_peak_and_limits():
    law = BrownMcPhee(0.5, 0.3, 1e-3)
    s = np.linspace(0, 5e-3, 50001)
    mu = law.mu(s)
    assert s[np.argmax(mu)] == pytest.approx(1e-3, rel=2e-2)       # the Stribeck peak sits at v_s
    assert mu.max() == pytest.approx(law.peak(), rel=1e-4)
    assert float(law.mu(1.0)) == pytest.approx(0.3, rel=1e-6)     # dynamic coefficient far from v_s
    assert law.creep_speed(0.45) < 1e-3 and law.creep_speed(0.6) == math.inf


def test_creep_speeds():
    assert CoulombRamp(0.3, 1e-3).creep_speed(0.2) == pytest.approx(1e-3 * 0.2 / 0.3, rel=1e-10)
    assert CoulombRamp(0.3, 1e-3).creep_speed(0.31) == math.inf
    bm = BrownMcPhee(0.4, 0.3, 1e-3)
    s = bm.creep_speed(0.35)
    assert float(bm.mu(s)) == pytest.approx(0.35, rel=1e-12) and s < 1e-3


def test_friction_bad_input():
    with pytest.raises(ModelError, match="v0"):
        CoulombRamp(0.3, 0.0)
    with pytest.raises(ModelError, match="v_dead"):
        CoulombRamp(0.3, 1e-3, v_dead=2e-3)
    with pytest.raises(ModelError, match="shape"):
        CoulombRamp(0.3, 1e-3, shape="cubic")
    with pytest.raises(ModelError, match="mu_s"):
        BrownMcPhee(0.2, 0.3, 1e-3)
    with pytest.raises(ModelError, match="friction coefficient"):
        CoulombRamp(-0.1, 1e-3)
    with pytest.raises(NonFiniteError, match="slip speed"):
        CoulombRamp(0.3, 1e-3).coefficient(np.array([np.nan]))
    s = fm.System()
    ball = s.add(fm.RigidBody(1.0, (1, 1, 1)))
    with pytest.raises(ModelError, match="friction must be a friction law"):
        fm.SpherePlaneContact(s.ground, ball, point=(0, 0, 0), normal=(0, 1, 0), center=(0, 0, 0), radius=0.1,
                              law=LankaraniNikravesh(K, 1.0),
                              friction=0.3)


# ---- sliding block ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("v0", [1e-3, 0.05])
def test_block_decelerates_at_mu_g_and_stops_at_the_coulomb_distance(v0):
    res, ball, up = on_plane(CoulombRamp(MU, v0), v0=1.0, t_end=0.6)
    x = res.position(ball) @ up
    v = res.velocity(ball) @ up
    sliding = (res.t > 0.05) & (res.t < 0.25)                      # v from 0.85 to 0.26 m/s >> v0
    assert np.polyfit(res.t[sliding], v[sliding], 1)[0] == pytest.approx(-MU * G, rel=1e-6)
    assert abs(v[-1]) < 1e-6
    assert x[-1] - x[0] == pytest.approx((1.0 + v0 ** 2) / (2 * MU * G), rel=1e-4)
    e = res.energy()
    assert np.abs(e["total"] - e["total"][0]).max() < 1e-5 * 0.5 * MASS     # friction work closes the balance


# ---- incline ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("law", [CoulombRamp(MU, 1e-3), BrownMcPhee(0.4, MU, 1e-3)], ids=repr)
def test_steep_incline_slides_at_g_sin_minus_mu_cos(law):
    theta = math.radians(30.0)
    res, ball, up = on_plane(law, theta=theta, t_end=0.25)
    v = res.velocity(ball) @ up
    late = res.t > 0.1
    a = np.polyfit(res.t[late], v[late], 1)[0]
    assert a == pytest.approx(-G * (math.sin(theta) - MU * math.cos(theta)), rel=1e-6)


def test_stiction_law_holds_where_coulomb_ramp_slides():
    """tan(theta) = 0.35 lies between mu_d = 0.3 and mu_s = 0.4: Brown-McPhee holds the block (creep below
    v_s = 1 mm/s), the ramp law with mu = mu_d = 0.3 lets it slide."""
    theta = math.atan(0.35)
    bm = BrownMcPhee(0.4, MU, 1e-3)
    res, ball, up = on_plane(bm, theta=theta, t_end=0.3)
    v = res.velocity(ball) @ up
    creep = bm.creep_speed(0.35)
    assert creep < 0.5 * bm.v_s                                    # the stated bound: 0.43 v_s here
    assert -v[-1] == pytest.approx(creep, rel=1e-6)
    x = res.position(ball) @ up
    assert x[0] - x[-1] == pytest.approx(0.3 * creep, rel=2e-2)     # 0.13 mm in 0.3 s (start-up transient 1 %)
    res, ball, up = on_plane(CoulombRamp(MU, 1e-3), theta=theta, t_end=0.3)
    v = res.velocity(ball) @ up
    late = res.t > 0.1
    assert np.polyfit(res.t[late], v[late], 1)[0] == pytest.approx(-G * (math.sin(theta) - MU * math.cos(theta)),
                                                                     rel=1e-6)


def test_ramp_law_creeps_at_v0_tan_over_mu():
    theta = math.atan(0.2)
    law = CoulombRamp(MU, 1e-3)
    res, ball, up = on_plane(law, theta=theta, t_end=0.3)
    v = res.velocity(ball) @ up
    assert -v[-1] == pytest.approx(1e-3 * 0.2 / MU, rel=1e-6)


# ---- rolling transition -------------------------------------------------------------------------------------

def _transition(res, ball, v_of, w_of, radius):
    v, w = v_of(res), w_of(res)
    slip = v + radius * w
    t_star = 2.0 / (7.0 * MU * G)
    fit = np.polyfit(res.t[res.t < 0.8 * t_star], slip[res.t < 0.8 * t_star], 1)
    return v[-1], -fit[1] / fit[0], fit[0], t_star


@pytest.mark.parametrize("law", [CoulombRamp(MU, 1e-3), BrownMcPhee(0.4, MU, 1e-3)], ids=repr)
def test_sliding_ball_starts_rolling_at_2v_over_7_mu_g(law):
    res, ball, _ = on_plane(law, v0=1.0, lock=False, h=5e-4, t_end=0.14)
    v_end, t_roll, slope, t_star = _transition(res, ball, lambda r: r.velocity(ball)[:, 0],
                                               lambda r: r.angular_velocity(ball)[:, 2], R)
    assert slope == pytest.approx(-3.5 * MU * G, rel=2e-4)
    assert t_roll == pytest.approx(t_star, rel=2e-4)
    assert v_end == pytest.approx(5.0 / 7.0, rel=2e-4)
    e = res.energy()
    # kinetic energy lost to friction: m v^2/2 - (m (5v/7)^2/2 + (2/5 m R^2)(5v/(7R))^2/2) = (2/7) m v^2/2
    lost = 0.5 * MASS * 2.0 / 7.0
    assert -e["work_nc"][-1] == pytest.approx(lost, rel=1e-3)
    assert np.abs(e["total"] - e["total"][0]).max() < 1e-3 * lost


def test_sliding_ball_on_a_large_sphere_rolls_like_on_a_plane():
    """The sphere-sphere friction geometry: a ball on top of a fixed sphere of radius 1000 m (curvature effect
    ~ R/1000 m = 1e-5) reaches rolling like on a plane."""
    Rb = 1000.0
    law = LankaraniNikravesh(sphere_sphere(R, Rb, E_STAR), 0.5)
    s = fm.System(gravity=(0, -G, 0))
    gap = (MASS * G / law.K) ** (2 / 3)
    c = np.array([0.0, R - gap, 0.0])
    ball = s.add(fm.RigidBody(MASS, (0.4 * MASS * R * R,) * 3, position=c, velocity=(1.0, 0, 0), name="ball"))
    s.add(fm.SphereSphereContact(s.ground, ball, center_a=(0, -Rb, 0), center_b=c, radius_a=Rb, radius_b=R, law=law,
                                 friction=CoulombRamp(MU, 1e-3)))
    res = fm.simulate(s, 0.14, 5e-4)
    v_end, t_roll, slope, t_star = _transition(res, ball, lambda r: r.velocity(ball)[:, 0],
                                               lambda r: r.angular_velocity(ball)[:, 2], R)
    assert t_roll == pytest.approx(t_star, rel=1e-3)
    assert v_end == pytest.approx(5.0 / 7.0, rel=1e-3)


# ---- Newton blocks on flexible sites ------------------------------------------------------------------------

def _flexible_body():
    from flexmb.fem.materials import Material
    from flexmb.fem.model import FEModel
    from flexmb.fem.sections import BeamSection
    from flexmb.reduction import craig_bampton
    from verification.fem.meshes import line_mesh
    model = FEModel(line_mesh(4, 1.5, direction=(1.0, 0.3, 0.2)), Material(E=2e9, nu=0.3, rho=2000.0),
                    sections=BeamSection.rectangle(0.05, 0.03, nu=0.3))
    modes = craig_bampton(model, {"root": "root", "tip": "tip"}, n_modes=3, reference="root")
    return fm.FlexibleBody(modes, position=(0.2, -0.1, 0.3), orientation=rot.from_axis_angle((0.3, 0.5, 1), 0.7),
                           damping=0.02, stiffening=False, name="f")


def _fd(f, x, eps=1e-6):
    cols = []
    for k in range(x.size):
        d = np.zeros_like(x)
        d[k] = eps
        cols.append((f(x + d) - f(x - d)) / (2 * eps))
    return np.array(cols).T


def test_friction_blocks_on_flexible_sites_match_central_differences():
    """Every friction geometry with a flexible side (an interface and mesh nodes), at random inconsistent
    states where all pairs press (damped laws with a high approach-speed floor, so the clamp stays off)."""
    C = fm.contact
    rng = np.random.default_rng(11)
    s = fm.System(gravity=(0.3, -9.81, 0.2))
    a = s.add(fm.RigidBody(3.0, (0.2, 0.3, 0.4), position=(0.1, 0.2, 0.3),
                           orientation=rot.from_axis_angle((1, 2, 3), 0.4), name="a"))
    b = s.add(fm.RigidBody(2.0, (0.1, 0.15, 0.2), position=(1.0, -0.2, 0.4), name="b"))
    f = s.add(_flexible_body())
    tip = f.initial_frame()[0] + f.initial_frame()[1] @ f.modes.interface("tip").position

    def law(n=1.5):
        return C.LankaraniNikravesh(1e4, 0.8, n=n, min_approach_speed=10.0)

    s.add(C.SpherePlaneContact(f.interface("tip"), a, point=tip, normal=(0.1, 1.0, 0.2), center=(0.1, 0.2, 0.3),
                               radius=0.8, law=law(),
                               friction=C.CoulombRamp(0.3, 5.0)))
    s.add(C.SphereSphereContact(f.node(2), b, center_a=tip - 0.3, center_b=(1.0, -0.2, 0.4), radius_a=0.8, radius_b=0.8,
                                law=law(),
                                friction=C.BrownMcPhee(0.5, 0.3, 0.8)))
    s.add(C.ClearanceJoint(a, f.node(3), point=tip + 0.1, axis=(0.2, 0.3, 1.0), clearance=0.01, radius_pin=0.05,
                           law=law(),
                           friction=C.CoulombRamp(0.2, 2.0, shape="tanh")))
    s.add(C.ClearanceJoint(f.interface("tip"), b, point=tip, axis=(0.2, 0.3, 1.0), clearance=0.01, radius_pin=0.05,
                           law=law(n=1.0),
                           friction=C.CoulombRamp(0.2, 2.0)))
    asm = s.compile()
    for _ in range(2):
        q0, v0 = asm.initial_state()
        q = q0 + 0.05 * rng.standard_normal(q0.size)
        v = v0 + 0.3 * rng.standard_normal(q0.size)
        acc = rng.standard_normal(q0.size)
        lam = rng.standard_normal(asm.m)
        asm.step_end(q, v, lam, 0.7)
        qe, ve = extend(q, v)
        assert all(np.all(g.normal_forces(qe, ve) > 0) for g in asm.contacts)
        for coef, fun, x in [((0, 0, 1, 1, 0), lambda x: asm.residual(x, v, acc, lam, 0.7)[0], q),
                             ((0, 1, 0, 0, 0), lambda x: asm.residual(q, x, acc, lam, 0.7)[0], v)]:
            S = asm.residual(q, v, acc, lam, 0.7, coef=coef)[2]
            S = (S.toarray() if sp.issparse(S) else S)[:asm.nq, :asm.nq]
            ref = _fd(fun, x)
            assert np.abs(S - ref).max() <= 1e-6 * max(1.0, np.abs(ref).max()), coef
