"""Velocity (non-holonomic) constraints: derivatives, the integrator, energy, a rolling disc's steady circle."""
import numpy as np
import pytest
import scipy.sparse as sp

import flexmb as fm
from flexmb import rotations as rot
from flexmb.errors import ModelError

rng = np.random.default_rng(11)


def fd(f, x, eps=1e-6):
    cols = []
    for k in range(x.size):
        d = np.zeros_like(x)
        d[k] = eps
        cols.append((f(x + d) - f(x - d)) / (2 * eps))
    return np.array(cols).T


def dense(S):
    return S.toarray() if sp.issparse(S) else np.asarray(S)


def mixed_model():
    """A knife edge, a knife edge projected on a plane, a rolling disc (on a tilted plane) and a spring."""
    s = fm.System(gravity=(0.3, -9.81, 0.2))
    a = s.add(fm.RigidBody(3.0, [[0.2, 0.01, 0.0], [0.01, 0.3, 0.02], [0.0, 0.02, 0.4]], position=(0.1, 0.2, 0.3),
                           orientation=rot.from_axis_angle((1, 2, 3), 0.4), name="a"))
    b = s.add(fm.RigidBody(2.0, (0.1, 0.15, 0.2), position=(1.0, -0.2, 0.4), name="b"))
    d = s.add(fm.RigidBody(1.5, (0.3, 0.2, 0.2), position=(0.0, 0.5, -1.0),
                           orientation=rot.from_axis_angle((0.2, 1, 0.1), 0.3), name="disc"))
    s.add(fm.KnifeEdge(a, point=(0.3, 0.1, 0.2), axis=(0.1, 1.0, 0.3), name="k1"))
    s.add(fm.KnifeEdge(b, point=(1.2, -0.3, 0.4), axis=(0.0, 0.4, 1.0), normal=(0.1, 1.0, 0.0), name="k2"))
    s.add(fm.RollingDisc(d, 0.4, axis=(1.0, 0.1, 0.2), plane_point=(0.0, 0.1, 0.0), plane_normal=(0.1, 1.0, 0.05)))
    s.add(fm.SpringDamper(a, b, point_a=(0.1, 0.2, 0.3), point_b=(1.0, -0.2, 0.4), k=40.0, c=2.0))
    # a user row with b(t): B = (e0, e1 x, 0, 0, sin y, 0, z^2), dB[k, j] = dB_k/dq_j
    row = lambda q: np.array([q[3], q[4] * q[0], 0.0, 0.0, np.sin(q[1]), 0.0, q[2] ** 2])      # noqa: E731

    def derivative(q):
        d = np.zeros((7, 7))
        d[0, 3], d[1, 4], d[1, 0], d[4, 1], d[6, 2] = 1.0, q[0], q[4], np.cos(q[1]), 2.0 * q[2]
        return d
    s.add(fm.VelocityConstraint(b, row, value=fm.TimeFunction(np.sin, np.cos, lambda t: -np.sin(t)),
                                derivative=derivative, name="user"))
    return s


def random_state(asm):
    q0, v0 = asm.initial_state()
    return (q0 + 0.05 * rng.standard_normal(q0.size), v0 + 0.3 * rng.standard_normal(q0.size),
            rng.standard_normal(q0.size), rng.standard_normal(asm.m))


def test_velocity_rows_and_newton_blocks_match_finite_differences():
    """Tolerance 1e-6 of the largest entry: central differences with eps = 1e-6 err by O(eps^2) and
    round-off ~1e-16 |f|/eps ~ 1e-10 (as tests/test_jacobians.py)."""
    asm = mixed_model().compile()
    q, v, a, lam = random_state(asm)
    t = 0.3
    nq, vel = asm.nq, asm.velocity_rows
    assert vel.sum() == 5 and asm.m - vel.sum() == 3 + 1       # 3 normalizations + the disc's contact row
    # K, C, M blocks with the forces B^T lambda (d(B^T lambda)/dq in K)
    for coef, fun, x in [((0, 0, 1, 1, 0), lambda x: asm.residual(x, v, a, lam, t)[0], q),
                         ((0, 1, 0, 0, 0), lambda x: asm.residual(q, x, a, lam, t)[0], v)]:
        S = dense(asm.residual(q, v, a, lam, t, coef=coef)[2])[:nq, :nq]
        ref = fd(fun, x)
        assert np.abs(S - ref).max() <= 1e-6 * max(1.0, np.abs(ref).max())
    c = asm.constraints(q, v, t)
    J = c.jac.toarray()
    phi = lambda x, y, tt=t: asm.constraints(x, y, tt).phi                            # noqa: E731
    # velocity rows: phi = B v - b is linear in v with gradient B; holonomic rows: Phi_q
    assert np.abs(J[vel] - fd(lambda y: phi(q, y), v)[vel]).max() < 1e-8
    assert np.abs(J[~vel] - fd(lambda x: phi(x, v), q)[~vel]).max() < 1e-6
    # (B v)_q: the Newton rows with nh = (0, 1)
    W = dense(asm.residual(q, v, a, lam, t, coef=(0, 0, 0, 0, 0), nh=(0.0, 1.0))[2])[nq:, :nq]
    assert np.abs(W[vel] - fd(lambda x: phi(x, v), q)[vel]).max() < 1e-6
    # gamma: d/dt (B v) = B a - gamma along (q + tau v, v + tau a); d2 Phi/dt2 = Phi_q a - gamma
    h = 1e-4
    path = lambda tau: phi(q + tau * v + 0.5 * tau * tau * a, v + tau * a, t + tau)  # noqa: E731
    d1 = (path(h) - path(-h)) / (2 * h)
    d2 = (path(h) - 2 * path(0) + path(-h)) / h ** 2
    assert np.allclose(d1[vel], (J @ a - c.gamma)[vel], atol=1e-6)
    assert np.allclose(d2[~vel], (J @ a - c.gamma)[~vel], atol=1e-5)
    # the index-3 step's rows: d/dq [(B v(q) - b)/gp] with v = vp + gp (q - qp) is B + (B v)_q / gp (unsymmetric)
    gp, vp, qp = 37.0, v, q - 0.01
    S = dense(asm.residual(q, vp + gp * (q - qp), a, lam, t, coef=(1, 1, 1, 1, 0), nh=(1.0, 1.0 / gp))[2])
    ref = fd(lambda x: phi(x, vp + gp * (x - qp)) / gp, q)
    assert np.abs(S[nq:, :nq][vel] - ref[vel]).max() < 1e-6 * max(1.0, np.abs(ref[vel]).max())
    assert np.allclose(S[:nq, nq:][:, vel], J[vel].T)           # columns stay B^T


def sleigh(rho_inf=1.0):
    """Chaplygin's sleigh: a body sliding on the plane z = 0 with a knife edge 0.3 m behind its centre of mass;
    no forces (Neimark & Fufaev 1972, ch. 3: energy is conserved)."""
    s = fm.System(name="sleigh")
    body = s.add(fm.RigidBody(2.0, (0.1, 0.1, 0.15), velocity=(1.0, 0.4, 0.0), angular_velocity=(0, 0, 2.0),
                              name="sleigh"))
    s.add(fm.Planar(s.ground, body, point=(0, 0, 0), normal=(0, 0, 1)))
    s.add(fm.KnifeEdge(body, point=(-0.3, 0.0, 0.0), axis=(0.0, 1.0, 0.0), name="blade"))
    return s, body


def test_knife_edge_keeps_lateral_velocity_zero_and_does_no_work():
    s, body = sleigh()
    res = fm.simulate(s, 3.0, 2e-3, rho_inf=1.0)
    asm = s.compile()
    lateral = np.array([asm.constraints(q, v, t).phi[asm.velocity_rows] for t, q, v in zip(res.t, res.q, res.v)])
    # the step's rows hold B v = 0 to the Newton tolerance 1e-8 (relative to 1 + |q|, q ~ 1 m)
    assert np.abs(lateral).max() < 1e-8
    e = res.energy()
    # ideal velocity constraint: its power -lambda B v vanishes with B v; the constraint's work stays at round-off
    assert np.abs(e["work_drivers"]).max() < 1e-9
    # energy conserved: rho_inf = 1 (no numerical dissipation), h = 2 ms: the trapezoidal rule's energy error
    # O((w h)^2) with w ~ 2 rad/s, measured 1.4e-6 of the kinetic energy; 1e-5 bounds it
    drift = np.abs(e["total"] - e["total"][0]).max() / e["kinetic"][0]
    assert drift < 1e-5, drift
    # the sleigh turns its velocity into the blade direction: at the end it moves along its own axis
    A = res.orientation(body)[-1]
    vb = A.T @ res.v[-1, :3]
    assert abs(vb[1] - 0.3 * (2 * rot.E(res.q[-1, 3:7]) @ res.v[-1, 3:7])[2]) < 1e-6   # lateral = 0.3 * yaw rate


def steady_disc(theta=0.3, rho=1.0, R=0.1, m=1.0, g=9.81):
    """A thin disc (A = m R^2/4, C = m R^2/2) leaning by theta toward the centre of a circle of radius rho
    traced by its contact point on the plane y = 0 (gravity -y). Steady precession rate from the balance of
    angular momentum about the centre of mass: Omega^2 = g tan(theta) / (3 rho/2 - 5 R sin(theta)/4)
    (derived in docs/theory.md §8)."""
    Om = np.sqrt(g * np.tan(theta) / (1.5 * rho - 1.25 * R * np.sin(theta)))
    er, et, k = np.array([1.0, 0, 0]), np.array([0, 0, -1.0]), np.array([0, 1.0, 0])
    d = np.cos(theta) * k - np.sin(theta) * er          # contact -> centre
    ax = np.sin(theta) * k + np.cos(theta) * er          # disc axis
    G = rho * er + R * d
    rhoG = rho - R * np.sin(theta)
    w = Om * k - Om * rho / R * ax                       # precession + rolling spin
    s = fm.System(gravity=(0, -g, 0), name="rolling disc")
    disc = s.add(fm.RigidBody(m, np.diag([0.5, 0.25, 0.25]) * m * R * R, position=G,
                              orientation=rot.from_matrix(np.column_stack([ax, et, d])),
                              velocity=Om * rhoG * et, angular_velocity=w, name="disc"))
    s.add(fm.RollingDisc(disc, R, axis=ax))
    return s, disc, Om, rhoG


def test_rolling_disc_rolls_a_circle_at_the_right_radius():
    s, disc, Om, rhoG = steady_disc()
    T = 2 * np.pi / Om
    res = fm.simulate(s, T, T / 2000, rho_inf=1.0)
    r = np.hypot(res.q[:, 0], res.q[:, 2])
    # one full circle: the centre stays on its circle (radius rhoG = 0.97 m) and the height on R cos(theta);
    # the O(h^2) error at 2000 steps per revolution, measured 2.5e-5 m (height 1.4e-7 m), is bounded by 1e-4 m
    # (1e-6 m); a wrong rim velocity or a missing gyroscopic term leaves the circle by centimetres
    assert np.abs(r - rhoG).max() < 1e-4
    assert np.abs(res.q[:, 1] - 0.1 * np.cos(0.3)).max() < 1e-6
    assert abs(np.unwrap(np.arctan2(-res.q[:, 2], res.q[:, 0]))[-1] - 2 * np.pi) < 1e-3
    e = res.energy()
    assert np.abs(e["total"] - e["total"][0]).max() < 2e-6 * e["kinetic"][0]     # measured 3.0e-7
    assert np.abs(e["work_drivers"]).max() < 1e-9


def test_bad_input_is_refused():
    s = fm.System()
    b = s.add(fm.RigidBody(1.0, (1, 1, 1)))
    with pytest.raises(ModelError, match="normal to the plane"):
        fm.RollingDisc(b, 0.5, axis=(0, 1, 0))
    with pytest.raises(ModelError, match="radius"):
        fm.RollingDisc(b, -0.5, axis=(1, 0, 0))
    with pytest.raises(ModelError, match="along the plane normal"):
        fm.KnifeEdge(b, (0, 0, 0), axis=(0, 0, 1), normal=(0, 0, 1))
    with pytest.raises(ModelError, match="rigid body"):
        fm.KnifeEdge(s.ground, (0, 0, 0), axis=(0, 1, 0))


def test_user_velocity_constraint_reproduces_the_knife_edge():
    """The sleigh's blade written as a user row B(q) = [n, n^T d(A u)/dp] (central-difference derivative)."""
    u, lateral = np.array([-0.3, 0.0, 0.0]), np.array([0.0, 1.0, 0.0])

    def row(q):
        n = rot.A(q[3:]) @ lateral
        return np.concatenate([n, n @ rot.B(q[3:], u)])

    s, body = sleigh()
    ref = fm.simulate(s, 1.0, 2e-3, rho_inf=1.0)
    s2 = fm.System(name="sleigh by hand")
    b2 = s2.add(fm.RigidBody(2.0, (0.1, 0.1, 0.15), velocity=(1.0, 0.4, 0.0), angular_velocity=(0, 0, 2.0),
                             name="sleigh"))
    s2.add(fm.Planar(s2.ground, b2, point=(0, 0, 0), normal=(0, 0, 1)))
    s2.add(fm.VelocityConstraint(b2, row, name="blade"))
    res = fm.simulate(s2, 1.0, 2e-3, rho_inf=1.0)
    # same equations; the user row's derivative by central differences (step 1e-7) errs by ~1e-9, which only
    # slows Newton, while the converged step solves the same residual to the Newton tolerance 1e-8
    assert np.abs(res.q - ref.q).max() < 1e-7


def test_user_velocity_constraint_with_a_rate_does_work():
    """y velocity of a free body prescribed, b(t) = 0.2 cos t: the constraint force does work -mu b, and the
    energy balance closes with it (kinetic energy 1/2 m (vx^2 + b^2))."""
    s = fm.System()
    body = s.add(fm.RigidBody(2.0, (0.1, 0.1, 0.1), velocity=(0.5, 0.2, 0.0), name="puck"))
    s.add(fm.VelocityConstraint(body, lambda q: np.array([0, 1.0, 0, 0, 0, 0, 0]),
                                value=fm.TimeFunction(lambda t: 0.2 * np.cos(t), lambda t: -0.2 * np.sin(t),
                                                      lambda t: -0.2 * np.cos(t)),
                                derivative=lambda q: np.zeros((7, 7))))
    res = fm.simulate(s, 2.0, 1e-3)
    assert np.abs(res.v[:, 1] - 0.2 * np.cos(res.t)).max() < 1e-9
    e = res.energy()
    ke = 0.5 * 2.0 * (0.5 ** 2 + (0.2 * np.cos(res.t)) ** 2)
    assert np.abs(e["kinetic"] - ke).max() < 1e-9
    # the work of the constraint equals the change of kinetic energy: trapezoidal sums of the power, O(h^2) ~ 1e-8
    assert np.abs(e["work_drivers"] - (ke - ke[0])).max() < 1e-6
