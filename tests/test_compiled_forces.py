"""The compiled force kernels (flexmb/compiled/measures.py, forces.py, contact.py) on their own: every scalar measure's gradient,
rate and Hessian against central differences on rigid and flexible body pairs, the scalar-force helper
against its formula, and the compiled contact laws against the numpy laws of flexmb/contact/laws.py.
(Through the assembly the same kernels are checked by tests/test_jacobians.py.)"""
import numpy as np
import pytest

from flexmb import rotations as rot
from flexmb.compiled import contact as cc
from flexmb.compiled import forces as cf
from flexmb.compiled import measures as cm
from flexmb.contact.laws import hysteresis_force, linear_force

rng = np.random.default_rng(3)


def pair(mi, mj, n=3):
    """``n`` random instances of a body pair with ``mi``/``mj`` modes: extended state vectors, the gather
    index, slot vectors and shapes."""
    nx = 14 + mi + mj
    q = rng.standard_normal(n * nx)
    for i in range(n):                                 # unit Euler parameters
        for s in (3, 10):
            k = i * nx + s
            q[k:k + 4] /= np.linalg.norm(q[k:k + 4])
    v = rng.standard_normal(n * nx)
    gather = np.arange(n * nx, dtype=np.int64).reshape(n, nx)
    vec = rng.standard_normal((n, 4, 3))
    return q, v, gather, vec, np.zeros((n, 4, 3, max(mi, mj)))


def shapes(code, mi, mj, n):
    """Random attachment shapes of the slots of measure ``code`` on flexible sides."""
    shp = np.zeros((n, 4, 3, max(mi, mj)))
    for k, side in enumerate(cm.SLOTS[code]):
        m = mi if side == 0 else mj
        shp[:, k, :, :m] = 0.3 * rng.standard_normal((n, 3, m))
    return shp


def evaluate(code, q, v, gather, vec, shp, mi, mj, ref):
    """``(x, x_dot, gradient, Hessian)`` of all instances."""
    n, nx = gather.shape
    x, xd, J, H = np.empty(n), np.empty(n), np.empty((n, nx)), np.empty((n, nx, nx))
    assert cm.measure_kernel(code, q, v, gather, vec, shp, cm.sides_of(code), mi, mj, ref, True, x, xd, J, H) == -1
    return x, xd, J, H


@pytest.mark.parametrize("modes", [(0, 0), (2, 0), (0, 3), (2, 3)])
@pytest.mark.parametrize("code", [cm.LENGTH, cm.ANGLE, cm.AXIAL, cm.TWIST, cm.CLEARANCE])
def test_measure_derivatives_match_finite_differences(code, modes):
    mi, mj = modes
    q, v, gather, vec, _ = pair(mi, mj)
    shp = shapes(code, mi, mj, gather.shape[0])
    ref = np.array([0.0, 2 * np.pi, -2 * np.pi])          # unwrapping about other turns
    x, xd, J, H = evaluate(code, q, v, gather, vec, shp, mi, mj, ref)
    assert np.allclose(xd, np.einsum("nx,nx->n", J, v[gather]), rtol=1e-13, atol=1e-13)
    eps = 1e-6
    for c in range(gather.shape[1]):
        dq = np.zeros_like(q)
        dq[gather[:, c]] = eps
        xp, _, Jp, _ = evaluate(code, q + dq, v, gather, vec, shp, mi, mj, ref)
        xm, _, Jm, _ = evaluate(code, q - dq, v, gather, vec, shp, mi, mj, ref)
        assert np.allclose((xp - xm) / (2 * eps), J[:, c], rtol=1e-6, atol=1e-7)
        assert np.allclose((Jp - Jm) / (2 * eps), H[:, :, c], rtol=1e-5, atol=1e-6)
    assert np.allclose(H, H.transpose(0, 2, 1), atol=1e-12)
    if code == cm.ANGLE:
        assert np.all(np.abs(x - ref) <= np.pi)


def test_length_without_direction_is_reported():
    q, v, gather, vec, shp = pair(0, 0, n=2)
    nx = gather.shape[1]
    q[nx + 7:nx + 10] = q[nx:nx + 3]                       # instance 1: same frames and points
    q[nx + 10:nx + 14] = q[nx + 3:nx + 7]
    vec[1, 1] = vec[1, 0]
    x, xd, J, H = np.empty(2), np.empty(2), np.empty((2, nx)), np.empty((0, nx, nx))
    assert cm.measure_kernel(cm.LENGTH, q, v, gather, vec, shp, cm.sides_of(cm.LENGTH), 0, 0, np.zeros(2), False,
                             x, xd, J, H) == 1


@pytest.mark.parametrize("cK", [0.7, 0.0])
def test_scalar_force_helper_is_the_formula(cK):
    """Through the spring kernel (f = k (x - x0) + c x_dot, f_x = k, f_xd = c)."""
    q, v, gather, vec, shp = pair(0, 0, n=4)
    ref = np.zeros(4)
    x, xd, J, H = evaluate(cm.AXIAL, q, v, gather, vec, shp, 0, 0, ref)
    k, c, x0 = rng.uniform(0.5, 2.0, (3, 4))
    cC = 0.3
    n, nx = J.shape
    r, blk, x2, xd2 = np.empty((n, nx)), np.empty((n, nx, nx)), np.empty(n), np.empty(n)
    assert cf.spring_kernel(cm.AXIAL, q, v, gather, vec, shp, cm.sides_of(cm.AXIAL), 0, 0, ref, k, c, x0, cK, cC, True,
                            x2, xd2, r, blk) == -1
    f = k * (x - x0) + c * xd
    Hv = np.einsum("nxy,ny->nx", H, v[gather])
    K = J[:, :, None] * (k[:, None] * J + c[:, None] * Hv)[:, None, :] + f[:, None, None] * H
    C = c[:, None, None] * J[:, :, None] * J[:, None, :]
    assert np.allclose(r, f[:, None] * J, rtol=1e-14)
    assert np.allclose(blk, cK * K + cC * C, rtol=1e-13, atol=1e-13)


def test_compiled_laws_match_the_numpy_laws():
    d = rng.uniform(-1e-3, 2e-3, 200)
    dd = rng.uniform(-2.0, 2.0, 200)
    vm = rng.uniform(0.0, 2.0, 200)
    which = rng.integers(0, 3, 200)
    kind = np.array([cc.HYSTERESIS, cc.HYSTERESIS, cc.LINEAR])
    K, n, h = np.array([1e6, 2e5, 1e5]), np.array([1.5, 1.0, 1.0]), np.array([0.3, 0.2, 0.0])
    v_min, c = np.array([1e-3, 0.5, 1.0]), np.array([0.0, 0.0, 40.0])
    F, dF, dFd = np.zeros(200), np.zeros(200), np.zeros(200)
    cc.law_kernel(kind, K, n, h, v_min, c, which, d, dd, vm, F, dF, dFd)
    hy = which < 2
    w = which[hy]
    ref = hysteresis_force(K[w], n[w], h[w], v_min[w], d[hy], dd[hy], vm[hy])
    for got, want in zip((F[hy], dF[hy], dFd[hy]), ref):
        assert np.allclose(got, want, rtol=1e-14, atol=0.0)
    ref = linear_force(K[2], c[2], d[~hy], dd[~hy])
    for got, want in zip((F[~hy], dF[~hy], dFd[~hy]), ref):
        assert np.allclose(got, want, rtol=1e-14, atol=0.0)


def test_torque_matrix_is_E_and_G_transposed():
    p = rng.standard_normal(4)
    p /= np.linalg.norm(p)
    y = rng.standard_normal(3)
    T = np.empty((4, 4))
    cf._torque_matrix(y, 1.0, T)
    assert np.allclose(T @ p, rot.E(p).T @ y, rtol=1e-14)
    cf._torque_matrix(y, -1.0, T)
    assert np.allclose(T @ p, rot.G(p).T @ y, rtol=1e-14)


def test_trial_approach_speeds_follow_the_capture_rules():
    from flexmb.contact.laws import ApproachSpeeds
    ap = ApproachSpeeds(5)
    ap.speed[:] = [0.0, 1.5, 0.0, 0.0, 2.0]
    ap.in_contact[:] = [False, True, False, False, True]
    ap.last_rate[:] = [np.nan, 0.3, 0.7, -0.2, 0.1]
    d = np.array([1e-4, 1e-4, 1e-4, 1e-4, -1e-4])
    dd = np.array([0.4, 0.4, 0.4, 0.4, 0.4])
    # 0: rate unknown -> trial rate; 1: held; 2: last rate before touch; 3: last rate not approaching; 4: apart
    assert np.array_equal(ap.trial(d, dd), [0.4, 1.5, 0.7, 0.4, 0.0])
    assert np.array_equal(ap.trial(d[[4, 1]], dd[[4, 1]], ids=[4, 1]), [0.0, 1.5])
