"""The compiled constraint primitives (flexmb/joints/kernels.py on flexmb/compiled/pairs.py) against
central differences, per kind, on rigid, ground and flexible sides (modal attachment shapes on body i,
body j or both), at random states (Euler parameters not normalized: every formula is exact for any p).

Checked per group: the Jacobian against d Phi/dq; ``Phi_t`` and ``gamma`` on the path
``(q + tau v, t + tau)``, whose first derivative is ``Phi_q v + Phi_t`` and second ``-gamma`` (a = 0);
the multiplier-weighted Hessian against d(Phi_q^T lam)/dq. Central differences with eps = 1e-6 err by
O(eps^2) plus round-off ~1e-16 / eps; the second difference (eps = 1e-3 and 5e-4, one Richardson step)
by O(eps^4) plus round-off ~1e-16 / eps^2 = 4e-10: tolerance 1e-6 relative to the largest entry.
"""
from types import SimpleNamespace

import numpy as np
import pytest
from numba import njit

from flexmb.compiled import pairs
from flexmb.joints.base import Primitive
from flexmb.joints.kernels import GROUND_Q, ROWS, SLOTS, PrimitiveGroup
from flexmb.timefunctions import TimeFunction

rng = np.random.default_rng(11)

# bodies: offset, coordinates (7 + modes), modes; the ground has no coordinates
RIGID_A = SimpleNamespace(name="A", offset=0, ncoord=7, n_modes=0)
RIGID_B = SimpleNamespace(name="B", offset=7, ncoord=7, n_modes=0)
FLEX_F = SimpleNamespace(name="F", offset=14, ncoord=10, n_modes=3)
FLEX_G = SimpleNamespace(name="G", offset=24, ncoord=9, n_modes=2)
GROUND = SimpleNamespace(name="ground", offset=0, ncoord=0, n_modes=0)
NQ = 33
PAIRS = {"rigid": (RIGID_A, RIGID_B), "ground": (GROUND, RIGID_A), "flex-i": (FLEX_F, RIGID_B),
         "flex-j": (RIGID_A, FLEX_G), "flex-flex": (FLEX_F, FLEX_G)}


def primitives(kind, bodies, n=2, driven=False):
    """``n`` random primitives of one kind between two bodies (random vectors and attachment shapes)."""
    bi, bj = bodies
    out = []
    for k in range(n):
        vectors = {name: rng.standard_normal(3) for name, _ in SLOTS[kind]}
        shapes = {name: rng.standard_normal((3, (bi, bj)[side].n_modes))
                  for name, side in SLOTS[kind] if (bi, bj)[side].n_modes}
        scalar = 0.7 if kind == "distance" else float(rng.integers(0, 7))
        driver = None
        if driven or kind == "coordinate":
            c = rng.standard_normal(3)
            driver = TimeFunction(lambda t, c=c: c[0] + c[1] * t + c[2] * t * t, lambda t, c=c: c[1] + 2 * c[2] * t,
                                  lambda t, c=c: 2 * c[2])
        out.append(Primitive(kind, bi, bj, vectors, f"{kind}{k}", driver, scalar, shapes))
    return out


def extended(q):
    return np.concatenate([q, GROUND_Q])


def full_jacobian(g, e):
    """Phi_q (rows, nq) from the group's pair-column Jacobian."""
    J = np.zeros((g.n * g.r, NQ))
    for row in range(g.n * g.r):
        for c, col in enumerate(g.scatter[row // g.r]):
            if col >= 0:
                J[row, col] += e.jac[row, c]
    return J


def full_hessian(g, H):
    out = np.zeros((NQ, NQ))
    for k in range(g.n):
        s = g.scatter[k]
        ok = s >= 0
        out[np.ix_(s[ok], s[ok])] += H[k][np.ix_(ok, ok)]
    return out


def fd(f, x, eps=1e-6):
    return np.array([(f(x + eps * d) - f(x - eps * d)) / (2 * eps) for d in np.eye(x.size)]).T


def second_difference(f, h):
    """``f''(0)`` by central second differences with one Richardson step (error O(h^4) + 1e-16 |f| / h^2)."""
    d = [(f(s) - 2 * f(0.0) + f(-s)) / s ** 2 for s in (h, h / 2)]
    return (4 * d[1] - d[0]) / 3


def close(a, b, tol):
    return np.abs(a - b).max() <= tol * max(1.0, np.abs(b).max())


CASES = [(kind, pair) for kind in ROWS for pair in PAIRS]


@pytest.mark.parametrize("kind,pair", CASES)
def test_primitive_group_matches_finite_differences(kind, pair):
    g = PrimitiveGroup(kind, primitives(kind, PAIRS[pair], driven=kind in ("dot1", "dot2", "angle")), 0, NQ)
    q, v, t = rng.standard_normal(NQ), rng.standard_normal(NQ), 0.4
    ve = np.concatenate([v, np.zeros(7)])
    if kind == "angle":      # drive each angle to its present value: finite differences stay off the branch cut
        theta = g.evaluate(extended(q), ve, t).phi + np.array([d.value(t) for d in g.drivers])
        for p, th in zip(g.prims, theta):
            p.driver = TimeFunction(lambda s, th=th: th + 0.1 * s, lambda s: 0.1, lambda s: 0.0)
        g = PrimitiveGroup(kind, g.prims, 0, NQ)
    e = g.evaluate(extended(q), ve, t)
    assert e.phi.shape == (g.n * g.r,) and e.jac.shape == (g.n * g.r, g.nx)
    J = full_jacobian(g, e)
    phi = lambda x: g.evaluate(extended(x), ve, t).phi     # noqa: E731
    assert close(J, fd(phi, q), 1e-6)
    # velocity and acceleration equations along (q + tau v, t + tau) with a = 0
    path = lambda tau: g.evaluate(extended(q + tau * v), ve, t + tau).phi    # noqa: E731
    h = 1e-6
    assert close(J @ v + e.phi_t, (path(h) - path(-h)) / (2 * h), 1e-6)
    assert close(-e.gamma, second_difference(path, 1e-3), 1e-6)
    # multiplier-weighted Hessian
    lam = rng.standard_normal(g.n * g.r)
    H = e.hess(lam)
    assert H.shape == (g.n, g.nx, g.nx)
    grad = lambda x: full_jacobian(g, g.evaluate(extended(x), ve, t)).T @ lam    # noqa: E731
    Hf = full_hessian(g, H)
    assert close(Hf, fd(grad, q), 1e-6)
    assert np.array_equal(Hf, Hf.T)


def test_angle_is_unwrapped_to_within_pi_of_the_reference():
    g = PrimitiveGroup("angle", primitives("angle", PAIRS["rigid"], n=1, driven=True), 0, NQ)
    q = rng.standard_normal(NQ)
    ve = np.zeros(NQ + 7)
    raw = g.evaluate(extended(q), ve, 0.0).phi[0] + g.drivers[0].value(0.0)
    for ref in (raw + 6 * np.pi + 0.3, raw - 4 * np.pi - 3.0, raw + 3.1):
        g.prims[0].driver = TimeFunction.constant(ref)
        phi = PrimitiveGroup("angle", g.prims, 0, NQ).evaluate(extended(q), ve, 0.0).phi[0]
        assert -np.pi < phi <= np.pi
        assert np.isclose(np.cos(phi + ref), np.cos(raw)) and np.isclose(np.sin(phi + ref), np.sin(raw))


@njit(cache=True)
def _length(x, xd, u0, S, m_i, w):
    """``|d|`` of a separation with its gradient, quadratic rate and weighted Hessian (pairs.norm*)."""
    nx = x.shape[0]
    m_j = nx - 14 - m_i
    ui, uj, d, qd = np.zeros(3), np.zeros(3), np.zeros(3), np.zeros(3)
    Jd, jl, H = np.zeros((3, nx)), np.zeros(nx), np.zeros((nx, nx))
    pairs.separation(x, u0[0], S[0], 14, m_i, u0[1], S[1], 14 + m_i, m_j, ui, uj, d, Jd)
    pairs.separation_quad(x, xd, ui, S[0], 14, m_i, uj, S[1], 14 + m_i, m_j, qd)
    l = pairs.norm(d, Jd, jl)
    quad = pairs.norm_quad(d, Jd, qd, l, xd)
    pairs.norm_hess(Jd, jl, l, w, H)
    wn = w * d / l
    pairs.separation_hess(x, ui, S[0], 14, m_i, uj, S[1], 14 + m_i, m_j, wn, H)
    rate = np.zeros(3)
    pairs.rate(Jd, xd, rate)
    return l, jl, quad, H, rate, Jd


@pytest.mark.parametrize("m_i,m_j", [(0, 0), (3, 0), (0, 2), (3, 2)])
def test_norm_and_rate_helpers_match_finite_differences(m_i, m_j):
    nx = 14 + m_i + m_j
    x, xd = rng.standard_normal(nx), rng.standard_normal(nx)
    u0 = rng.standard_normal((2, 3))
    S = np.zeros((2, 3, max(m_i, m_j)))
    S[0, :, :m_i] = rng.standard_normal((3, m_i))
    S[1, :, :m_j] = rng.standard_normal((3, m_j))
    w = 1.7
    l, jl, quad, H, rate, Jd = _length(x, xd, u0, S, m_i, w)
    assert close(jl, fd(lambda y: np.array([_length(y, xd, u0, S, m_i, w)[0]]), x)[0], 1e-6)
    assert close(H, w * fd(lambda y: _length(y, xd, u0, S, m_i, w)[1], x), 1e-6)
    assert np.allclose(rate, Jd @ xd, rtol=1e-14, atol=1e-14)
    path = lambda tau: _length(x + tau * xd, xd, u0, S, m_i, w)[0]     # noqa: E731
    assert close(np.array([quad]), np.array([second_difference(path, 1e-3)]), 1e-6)
