"""fm.static_equilibrium (issue 12, item 2), each case against an independent solution:

1. a mass on a linear spring under gravity: closed form ``m g / k``;
2. a hanging chain of rigid links pinned at both ends: the discrete catenary from a separate minimization of
   the potential energy over the link angles (scipy.optimize, SLSQP);
3. a NonlinearBeam cantilever under a small tip load: the linear FE static solution ``K u = f`` of the same
   FE model (the geometric nonlinearity changes the tip deflection by O((w/L)^2) ~ 1e-8 here);
4. a shallow two-spring (von Mises) truss below its limit load: the root of the closed-form equilibrium;
   above it: the limit-point error by load control, and with arc length the whole snap-through path on the
   closed-form load-deflection curve; a free mechanism: the error names the free coordinate;
5. a ball pressed into a plane by gravity (Lankarani-Nikravesh contact): the Hertz closed form;
6. the last state starts a dynamic run at rest (simulate(..., initial=res)) that stays there.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy.optimize import brentq, minimize

import flexmb as fm
from flexmb.errors import ConvergenceError, ModelError, RedundantConstraintWarning

G = 9.81


def spring_mass(k=100.0, m=2.0):
    s = fm.System(gravity=(0, 0, -G))
    b = s.add(fm.RigidBody(m, (0.01, 0.01, 0.01), position=(0, 0, -1.0), name="mass"))
    s.add(fm.Prismatic(s.ground, b, (0, 0, -1.0), (0, 0, 1), name="guide"))
    s.add(fm.SpringDamper(s.ground, b, point_a=(0, 0, 0), point_b=(0, 0, -1.0), k=k, name="spring"))
    return s, b


def test_mass_on_spring_matches_closed_form():
    s, b = spring_mass()
    res = fm.static_equilibrium(s, load_steps=4)
    assert res.t.tolist() == [0.0, 0.25, 0.5, 0.75, 1.0]
    # spring is linear: every load step sits at lambda m g / k below the free length
    np.testing.assert_allclose(res.q[:, b.offset + 2], -1.0 - res.t * 2.0 * G / 100.0, rtol=0, atol=1e-12)
    assert not res.v.any() and not res.vd.any()


# -- hanging chain -------------------------------------------------------------------------------
N_LINKS, LINK, SPAN, LINK_MASS = 6, 1.0, 4.0, 0.5


def chain():
    """Six 1 m links, pinned to the ground at (0, 0) and (4, 0), started in a V (gravity -y)."""
    theta0 = np.arccos(SPAN / (N_LINKS * LINK))
    angles = np.r_[[-theta0] * 3, [theta0] * 3]
    s = fm.System(gravity=(0, -G, 0))
    ends = np.vstack([[0.0, 0.0], np.cumsum(LINK * np.column_stack([np.cos(angles), np.sin(angles)]), axis=0)])
    links = []
    for i, th in enumerate(angles):
        c = 0.5 * (ends[i] + ends[i + 1])
        A = np.array([[np.cos(th), -np.sin(th), 0], [np.sin(th), np.cos(th), 0], [0, 0, 1]])
        links.append(s.add(fm.RigidBody(LINK_MASS, (1e-4, LINK_MASS / 12, LINK_MASS / 12), position=(*c, 0.0),
                                        orientation=A, name=f"link{i}")))
    bodies = [s.ground, *links, s.ground]
    for i in range(N_LINKS + 1):
        s.add(fm.Revolute(bodies[i], bodies[i + 1], (*ends[i], 0.0), (0, 0, 1), name=f"pin{i}"))
    return s, links


def catenary_by_energy() -> np.ndarray:
    """Link centres (n, 2) minimizing sum m g y_c over the link angles with the ends closed."""
    def centres(th):
        d = LINK * np.column_stack([np.cos(th), np.sin(th)])
        ends = np.vstack([[0.0, 0.0], np.cumsum(d, axis=0)])
        return 0.5 * (ends[:-1] + ends[1:]), ends[-1]
    closure = {"type": "eq", "fun": lambda th: centres(th)[1] - np.array([SPAN, 0.0])}
    th0 = np.linspace(-0.8, 0.8, N_LINKS)
    sol = minimize(lambda th: LINK_MASS * G * centres(th)[0][:, 1].sum(), th0, constraints=[closure],
                   method="SLSQP", options={"ftol": 1e-15, "maxiter": 500})
    assert sol.success
    return centres(sol.x)[0]


def test_hanging_chain_matches_energy_minimum():
    s, links = chain()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RedundantConstraintWarning)   # a planar loop of revolutes in 3D
        res = fm.static_equilibrium(s, load_steps=5)
    got = np.array([res.position(b)[-1, :2] for b in links])
    # SLSQP converges the angles to ~1e-7 (ftol 1e-15 on an energy of order 10 J)
    np.testing.assert_allclose(got, catenary_by_energy(), atol=1e-6)


# -- beam ---------------------------------------------------------------------------------------
def cantilever():
    x = np.linspace(0.0, 1.0, 9)
    mesh = fm.FEMesh(np.column_stack([x, 0 * x, 0 * x]), {"line": np.column_stack([np.arange(8), np.arange(1, 9)])},
                     node_sets={"root": [0], "tip": [8]})
    fe = fm.FEModel(mesh, fm.Material(E=70e9, nu=0.33, rho=2700.0), sections=fm.BeamSection.rectangle(0.02, 0.04))
    return fe


def test_cantilever_tip_load_matches_linear_fe():
    fe = cantilever()
    s = fm.System()
    beam = s.add(fm.NonlinearBeam(fe, fe.dofs("root"), name="beam"))
    s.add(fm.Fixed(s.ground, beam, name="clamp"))
    F = -2.0                                   # N along -z: tip deflection ~ 1e-4 m on 1 m
    s.add(fm.NodalForce(beam, "tip", (0.0, 0.0, F)))
    res = fm.static_equilibrium(s, load_steps=2)
    f = np.zeros(fe.ndof)
    f[fe.dofs("tip")[2]] = F
    u = fe.static(f, fe.dofs("root"))
    w_ref = u[fe.dofs("tip")[2]]
    w = res.deflection(beam, 8)[-1, 2]
    assert abs(w_ref) > 1e-5
    # geometric nonlinearity: relative change O((w/L)^2) ~ 1e-8; 1e-6 leaves room for round-off only
    assert w == pytest.approx(w_ref, rel=1e-6)


# -- limit point, free mechanism, bad keywords -------------------------------------------------
A_HALF, RISE, K_TRUSS = 1.0, 0.1, 1000.0


def truss(load):
    """A slider on a vertical guide at (0, RISE), held by two springs from (+-A_HALF, 0), pushed down."""
    s = fm.System()
    b = s.add(fm.RigidBody(1.0, (0.01, 0.01, 0.01), position=(0, RISE, 0), name="apex"))
    s.add(fm.Prismatic(s.ground, b, (0, RISE, 0), (0, 1, 0), name="guide"))
    for sign in (-1, 1):
        s.add(fm.SpringDamper(s.ground, b, point_a=(sign * A_HALF, 0, 0), point_b=(0, RISE, 0), k=K_TRUSS))
    s.add(fm.Force(b, (0.0, -load, 0.0), name="push"))
    return s, b


def truss_resistance(y):
    """Upward spring force (N) on the apex at height y: 2 k (L0 - L) y / L (both springs compressed)."""
    L0, L = np.hypot(A_HALF, RISE), np.hypot(A_HALF, y)
    return 2.0 * K_TRUSS * (L0 - L) * y / L


def limit_point() -> tuple[float, float]:
    """Height (m) and load (N) at the maximum of the resistance (sampled every 5e-6 m)."""
    ys = np.linspace(0.0, RISE, 20001)
    k = int(np.argmax(truss_resistance(ys)))
    return float(ys[k]), float(truss_resistance(ys[k]))


def test_truss_below_its_limit_load_matches_closed_form():
    y_limit, P_limit = limit_point()
    P = 0.8 * P_limit
    s, b = truss(P)
    res = fm.static_equilibrium(s, load_steps=4)
    y_ref = brentq(lambda y: truss_resistance(y) - P, y_limit, RISE)      # the branch through the start
    assert res.q[-1, b.offset + 1] == pytest.approx(y_ref, abs=1e-9)


def test_load_past_a_limit_point_is_refused_with_the_load_factor():
    P = 1.5 * limit_point()[1]
    s, _ = truss(P)
    with pytest.raises(ConvergenceError, match="limit point") as info:
        fm.static_equilibrium(s, load_steps=4)
    assert 0.6 < info.value.time < 1.0 / 1.5 + 1e-3      # the limit is at lambda = 1/1.5


def test_free_mechanism_names_the_free_coordinate():
    s = fm.System(gravity=(-G, 0, 0))
    b = s.add(fm.RigidBody(1.0, (0.01, 0.01, 0.01), name="slider"))
    s.add(fm.Prismatic(s.ground, b, (0, 0, 0), (1, 0, 0), name="rail"))
    with pytest.raises(ConvergenceError, match="body 'slider' coordinate x"):
        fm.static_equilibrium(s)


@pytest.mark.parametrize("kw, word", [({"load_steps": 0}, "load_steps"), ({"tol": -1.0}, "tol"),
                                      ({"max_newton": 2.5}, "max_newton"), ({"redundant": "keep"}, "redundant"),
                                      ({"arc_length": "yes"}, "arc_length"), ({"max_arc_steps": 0}, "max_arc_steps"),
                                      ({"t": float("nan")}, "t")])
def test_bad_keywords_are_named(kw, word):
    s, _ = spring_mass()
    with pytest.raises(ModelError, match=word):
        fm.static_equilibrium(s, **kw)


def test_dynamic_run_from_the_equilibrium_stays_at_rest():
    s, b = spring_mass()
    res = fm.static_equilibrium(s, load_steps=2)
    run = fm.simulate(s, 0.2, 1e-2, initial=res)
    # at rest in equilibrium: nothing moves (started from the bodies' initial state it would oscillate by 0.2 m)
    np.testing.assert_allclose(run.q[:, b.offset + 2], res.q[-1, b.offset + 2], rtol=0, atol=1e-10)


def test_initial_must_be_a_result_of_the_same_system():
    s, _ = spring_mass()
    with pytest.raises(ModelError, match="initial"):
        fm.simulate(s, 0.1, 1e-2, initial=np.zeros(14))


def test_ball_resting_on_a_contact_plane_matches_hertz():
    """A 1 kg ball on a vertical guide, pressed into a plane by gravity: K delta^1.5 = m g (the
    Lankarani-Nikravesh law has no damping at rest). It starts touching (1 um), so the contact holds it."""
    from flexmb.contact import LankaraniNikravesh
    m, R, K = 1.0, 0.05, 1e8
    s = fm.System(gravity=(0, -G, 0))
    y0 = R - 1e-6
    ball = s.add(fm.RigidBody(m, (0.4 * m * R * R,) * 3, position=(0, y0, 0), name="ball"))
    s.add(fm.Prismatic(s.ground, ball, (0, y0, 0), (0, 1, 0), name="guide"))
    s.add(fm.SpherePlaneContact(s.ground, ball, point=(0, 0, 0), normal=(0, 1, 0), center=(0, y0, 0), radius=R,
                                law=LankaraniNikravesh(K, e=0.8)))
    res = fm.static_equilibrium(s, load_steps=4)
    delta = R - res.position(ball)[-1, 1]
    assert delta == pytest.approx((m * G / K) ** (2.0 / 3.0), rel=1e-8)


def test_arc_length_follows_the_snap_through_of_the_truss():
    """Past its limit load the truss snaps through: the arc-length path falls in load, crosses to the inverted
    side and rises again to the full load. Every row must lie on the closed-form path P(y) = lambda P."""
    y_limit, P_limit = limit_point()
    P = 1.5 * P_limit
    s, b = truss(P)
    res = fm.static_equilibrium(s, load_steps=4, arc_length=True)
    y = res.q[:, b.offset + 1]
    np.testing.assert_allclose(truss_resistance(y), res.t * P, rtol=0, atol=1e-9 * P)
    peak = res.t[int(np.argmax(np.diff(res.t) < 0))]     # the load factor where it first falls: past the limit
    assert 0.5 < peak <= 1.0 / 1.5                       # the limit point is at lambda = 1/1.5
    assert res.t.min() < 0.0                       # the path went through the pulling part of the inverted branch
    y_far = brentq(lambda yy: truss_resistance(yy) - P, -10 * RISE, -RISE)   # springs in tension below -RISE
    assert res.t[-1] == 1.0 and y[-1] == pytest.approx(y_far, abs=1e-9)


def test_run_at_rest_from_an_equilibrium_raises_no_energy_warning():
    """A loaded arm at rest in its equilibrium: the energy balance sees rounding only (work ~ 1e-19 J against a
    potential of ~ 10 J), which must not be reported as drift (flexmb/solvers/watch.py, ROUNDING_SHARE)."""
    s = fm.System(gravity=(0, 0, -G))
    arm = s.add(fm.RigidBody(2.0, (0.001, 0.02, 0.02), position=(0.3, 0, 0), name="arm"))
    s.add(fm.Revolute(s.ground, arm, (0, 0, 0), (0, 1, 0), name="hinge"))
    s.add(fm.RotationalSpringDamper(s.ground, arm, axis=(0, 1, 0), k=50.0, c=0.5))
    s.add(fm.Force(arm, (0, 0, -5.0), local_point=(0.3, 0, 0)))
    res = fm.static_equilibrium(s, load_steps=2)
    with warnings.catch_warnings():
        warnings.simplefilter("error", fm.errors.FlexmbWarning)
        run = fm.simulate(s, 0.2, 1e-3, initial=res)
    assert np.abs(run.q - res.q[-1]).max() < 1e-10
