"""Compiled element of the geometrically exact co-rotational beam (docs/theory-elements.md §7).

The element (Crisfield 1990, Comput. Methods Appl. Mech. Engrg 81:131-150; Battini & Pacoste 2002, Comput.
Methods Appl. Mech. Engrg 191:1755-1789; formulation, sources and conventions in
:mod:`flexmb.fem.exact_beam`): the strain energy of the local linear Timoshenko element in the co-rotated
frame, and its exact gradient and Hessian by second-order forward-mode differentiation ("jets": value,
gradient and Hessian carried through every operation) over the 9 independent variables ``z = (x2 - x1,
psi1, psi2)`` of an element.

Two element loops use it:

* :func:`forces_sparse`: one structure, forces into the full dof vector and the tangent into the CSR values
  of a pattern built once (:class:`flexmb.fem.exact_beam.ExactBeamStructure`);
* :func:`forces_dense` and :func:`energy`: the exact beams of a flexible-body group, coordinates read from
  the system vector and forces and dense (m, m) tangents written per body (flexmb/compiled/flexible.py), as
  :mod:`flexmb.compiled.beam` does for the nonlinear beam.

Element data (``ne`` elements, stacked): ``X21`` (ne, 3) initial chord ``X2 - X1`` (m); ``R0`` (ne, 3, 3)
initial local axes as columns; ``l0`` (ne,) initial length (m); ``k`` (ne, 9) = ``(EA/l0, GJ/l0, kz11, kz12,
kz22, ky11, ky12, ky22, average)`` (N, N m; ``average`` 1 for the element-mean axial strain, 0 for the chord
strain); ``cable`` tension-only bar. The jets carry derivatives by the element's active variables only (those
an element dof that is not held moves: 4 of 9 for a planar beam), so a planar model costs a fraction of a 3-D
one.
An element whose local rotation is pi exactly (the logarithm jumps there) fails: the loops return its index.
SI units: m, rad, N, N m, J.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .beam import gather

NV = 9                    # independent variables of an element: x2 - x1 (3), psi1 (3), psi2 (3)
NJ = 1 + NV + NV * (NV + 1) // 2   # jet: value, gradient, Hessian (upper triangle, row by row), all variables active
WORK_ROWS = 80            # jets of the work array W of one element
TRIAD_ROWS = 26           # jets of the work of one end triad, in its node's rotation variables (_triad)
NJ3 = 1 + 3 + 6           # their size with the node's three rotation variables active
_SIZE_NV = np.full(NJ + 1, -1, dtype=np.int64)
for _n in range(NV + 1):
    _SIZE_NV[1 + _n + _n * (_n + 1) // 2] = _n
_SERIES_EXP = 1.0         # s = |psi|^2 below which exp-map coefficients come from their series
_SERIES_LOG = 0.25        # s = sin^2(theta/2) below which the log coefficient comes from its series


# ----------------------------------------------------------------------------------------------
# jets: value, gradient (nv) and Hessian (its upper triangle, row by row: hessian_index) of a scalar in the nv <= NV
# active variables of an element, flat arrays of 1 + nv + nv (nv + 1) / 2 numbers (the size gives nv: _SIZE_NV)
# ----------------------------------------------------------------------------------------------
@njit(cache=True, inline="always")
def _nv(a):
    return _SIZE_NV[a.size]


@njit(cache=True, inline="always")
def hessian_index(n, i, j):
    """Position in a jet of ``n`` variables of its Hessian entry ``(i, j)``, ``i <= j``."""
    return 1 + n + i * (2 * n - i + 1) // 2 + (j - i)


@njit(cache=True)
def _jvar(out, value, k):
    """out = variable number ``k`` of the jets (``k < 0``: a held coordinate, a constant)."""
    out[:] = 0.0
    out[0] = value
    if k >= 0:
        out[1 + k] = 1.0


@njit(cache=True)
def _jconst(out, value):
    out[:] = 0.0
    out[0] = value


@njit(cache=True)
def _jmul(out, a, b):
    """out = a b (out must not alias a or b)."""
    n = _nv(a)
    a0, b0 = a[0], b[0]
    out[0] = a0 * b0
    for i in range(n):
        out[1 + i] = a0 * b[1 + i] + b0 * a[1 + i]
    r = 1 + n
    for i in range(n):
        ai, bi = a[1 + i], b[1 + i]
        for j in range(i, n):
            out[r] = a0 * b[r] + b0 * a[r] + ai * b[1 + j] + bi * a[1 + j]
            r += 1


@njit(cache=True)
def _jmul_acc(out, a, b, c):
    """out += c a b."""
    n = _nv(a)
    a0, b0 = a[0], b[0]
    out[0] += c * a0 * b0
    for i in range(n):
        out[1 + i] += c * (a0 * b[1 + i] + b0 * a[1 + i])
    r = 1 + n
    for i in range(n):
        ai, bi = a[1 + i], b[1 + i]
        for j in range(i, n):
            out[r] += c * (a0 * b[r] + b0 * a[r] + ai * b[1 + j] + bi * a[1 + j])
            r += 1


@njit(cache=True)
def _jaxpy(out, c, a):
    """out += c a (c a constant)."""
    for k in range(a.size):
        out[k] += c * a[k]


@njit(cache=True)
def _jfun(out, a, f0, f1, f2):
    """out = f(a) for a scalar function with value f0, derivatives f1, f2 at a[0]."""
    n = _nv(a)
    out[0] = f0
    for i in range(n):
        out[1 + i] = f1 * a[1 + i]
    r = 1 + n
    for i in range(n):
        ai = a[1 + i]
        for j in range(i, n):
            out[r] = f1 * a[r] + f2 * ai * a[1 + j]
            r += 1


# ----------------------------------------------------------------------------------------------
# scalar functions of s with two derivatives (series near 0, closed form elsewhere)
# ----------------------------------------------------------------------------------------------
def _exp_series(offset: int, terms: int = 16) -> np.ndarray:
    """Coefficients ``(-1)^k / (2k + offset)!``, k < ``terms``, of the series of ``exp(psi~)``'s scalar functions."""
    fact = 1.0
    for n in range(2, offset + 1):
        fact *= n
    c = 1.0 / fact
    out = np.empty(terms)
    for k in range(terms):
        out[k] = c
        m = 2 * k + offset
        c *= -1.0 / ((m + 1) * (m + 2))
    return out


def _log_series(terms: int = 40) -> np.ndarray:
    """Coefficients ``2 (2k)! / (4^k k!^2 (2k + 1))``, k < ``terms``, of ``G(s) = 2 asin(sqrt s) / sqrt s``."""
    c = 2.0
    out = np.empty(terms)
    for k in range(terms):
        out[k] = c / (2 * k + 1)
        c *= (2 * k + 1) * (2 * k + 2) / (4.0 * (k + 1) * (k + 1))
    return out


_EXP_SERIES = np.array([_exp_series(offset) for offset in range(3)])   # C (cos x), A (sin x / x), B
_LOG_SERIES = _log_series()


@njit(cache=True)
def _series(s, coef):
    """``sum_k coef[k] s^k`` and its first two derivatives in s."""
    f0 = f1 = f2 = 0.0
    p0, p1, p2 = 1.0, 0.0, 0.0                 # s^k, s^(k-1), s^(k-2)
    for k in range(coef.size):
        c = coef[k]
        f0 += c * p0
        f1 += k * c * p1
        f2 += k * (k - 1) * c * p2
        p2, p1, p0 = p1, p0, p0 * s
    return f0, f1, f2


@njit(cache=True)
def _exp_coefficients(s):
    """(A, A', A''), (B, B', B''), (C, C', C'') of ``A = sin x / x``, ``B = (1 - cos x) / x^2``,
    ``C = cos x`` as functions of ``s = x^2`` (so that ``exp(psi~) = C I + A psi~ + B psi psi^T``)."""
    if s < _SERIES_EXP:
        return _series(s, _EXP_SERIES[1]), _series(s, _EXP_SERIES[2]), _series(s, _EXP_SERIES[0])
    x = np.sqrt(s)
    a0, c0 = np.sin(x) / x, np.cos(x)
    a1 = (c0 - a0) / (2.0 * s)
    a2 = (-0.5 * a0 - 3.0 * a1) / (2.0 * s)
    b0 = (1.0 - c0) / s
    b1 = (0.5 * a0 - b0) / s
    b2 = (0.5 * a1 - 2.0 * b1) / s
    return (a0, a1, a2), (b0, b1, b2), (c0, -0.5 * a0, -0.5 * a1)


@njit(cache=True)
def _log_coefficient(s):
    """``G(s) = 2 asin(sqrt s) / sqrt s`` and two derivatives: ``theta = G(|v|^2) v`` for the
    vector part ``v = sin(theta/2) n`` of a unit quaternion with non-negative scalar part."""
    if s < _SERIES_LOG:
        return _series(s, _LOG_SERIES)
    x = np.sqrt(s)
    f0 = 2.0 * np.arcsin(x) / x
    f1 = (x / np.sqrt(1.0 - s) - np.arcsin(x)) / (x * s)
    f2 = ((1.0 - s) ** -1.5 - 3.0 * f1) / (2.0 * s)
    return f0, f1, f2


# ----------------------------------------------------------------------------------------------
# one element
# ----------------------------------------------------------------------------------------------
@njit(cache=True)
def _triad(psi, k0, active, R0, Ws, T):
    """Jets of the end triad ``T = exp(psi~) R0`` (9 jets, row-major); psi are variables k0..k0+2 (their
    positions among the active variables: ``active``). The triad depends on its node's rotation only: it is
    evaluated in jets of those (at most 3) variables, in the flat work array ``Ws`` (TRIAD_ROWS * NJ3,), and then
    written into the element's jets."""
    nt = 0
    for i in range(3):
        if active[k0 + i] >= 0:
            nt += 1
    size = 1 + nt + nt * (nt + 1) // 2
    W = Ws[:TRIAD_ROWS * size].reshape((TRIAD_ROWS, size))
    p = W[0:3]
    j = 0
    for i in range(3):
        if active[k0 + i] >= 0:
            _jvar(p[i], psi[i], j)
            j += 1
        else:
            _jconst(p[i], psi[i])
    s, a, b, c, tmp = W[3], W[4], W[5], W[6], W[7]
    _jconst(s, 0.0)
    for i in range(3):
        _jmul_acc(s, p[i], p[i], 1.0)
    A, B, C = _exp_coefficients(s[0])
    _jfun(a, s, A[0], A[1], A[2])
    _jfun(b, s, B[0], B[1], B[2])
    _jfun(c, s, C[0], C[1], C[2])
    Q = W[8:17]                                # row-major 3 x 3
    for i in range(3):
        for j in range(3):
            q = Q[3 * i + j]
            _jmul(tmp, p[i], p[j])
            _jmul(q, b, tmp)
            if i == j:
                _jaxpy(q, 1.0, c)
    # skew part: Q += A psi~, psi~ = [[0, -p3, p2], [p3, 0, -p1], [-p2, p1, 0]]
    _jmul_acc(Q[1], a, p[2], -1.0)
    _jmul_acc(Q[2], a, p[1], 1.0)
    _jmul_acc(Q[3], a, p[2], 1.0)
    _jmul_acc(Q[5], a, p[0], -1.0)
    _jmul_acc(Q[6], a, p[1], -1.0)
    _jmul_acc(Q[7], a, p[0], 1.0)
    Tn = W[17:26]
    for i in range(3):
        for j in range(3):
            t = Tn[3 * i + j]
            t[:] = 0.0
            for k in range(3):
                if R0[k, j] != 0.0:
                    _jaxpy(t, R0[k, j], Q[3 * i + k])
    n = _nv(T[0])
    for m in range(9):                         # the node's variables among the element's
        t, tn = T[m], Tn[m]
        t[:] = 0.0
        t[0] = tn[0]
        a_ = 0
        for i in range(3):
            fi = active[k0 + i]
            if fi < 0:
                continue
            t[1 + fi] = tn[1 + a_]
            b_ = a_
            for j in range(i, 3):
                fj = active[k0 + j]
                if fj < 0:
                    continue
                t[hessian_index(n, fi, fj)] = tn[hessian_index(nt, a_, b_)]
                b_ += 1
            a_ += 1


@njit(cache=True)
def _cross(out, a, b, tmp):
    """Jets out = a x b for 3-vectors of jets."""
    for i in range(3):
        j, k = (i + 1) % 3, (i + 2) % 3
        _jmul(out[i], a[j], b[k])
        _jmul(tmp, a[k], b[j])
        _jaxpy(out[i], -1.0, tmp)


@njit(cache=True)
def _normalize(out, a, W):
    """Jets out = a / |a| (3-vectors)."""
    s, inv = W[0], W[1]
    _jconst(s, 0.0)
    for i in range(3):
        _jmul_acc(s, a[i], a[i], 1.0)
    v = s[0]
    _jfun(inv, s, v ** -0.5, -0.5 * v ** -1.5, 0.75 * v ** -2.5)
    for i in range(3):
        _jmul(out[i], a[i], inv)
    return np.sqrt(v)


@njit(cache=True)
def _local_rotation(Rr, T, W, out):
    """Jets of ``theta = log(Rr^T T)`` (3, principal value |theta| <= pi) through the unit quaternion.

    ``1 + tr R >= 1/2`` (|theta| <= 138 deg): ``w = sqrt(1 + tr) / 2``, ``v = axial(R - R^T) / (4 w)``,
    ``theta = G(|v|^2) v``; otherwise Shepperd's branch on the largest diagonal entry (Shepperd 1978,
    J. Guidance Control 1:223) and ``theta = H(w) v``, ``H(w) = 2 acos(w) / sqrt(1 - w^2)``, ``w >= 0``.
    Returns False only at |theta| = pi exactly (where the logarithm jumps)."""
    L = W[0:9]
    for a in range(3):
        for b in range(3):
            e = L[3 * a + b]
            _jconst(e, 0.0)
            for k in range(3):
                _jmul_acc(e, Rr[3 * k + a], T[3 * k + b], 1.0)
    p = W[9]
    _jconst(p, 1.0)
    for a in range(3):
        _jaxpy(p, 1.0, L[4 * a])
    h, v, tmp, s, g = W[10], W[11:14], W[14], W[15], W[16]
    if p[0] >= 0.5:
        _jfun(h, p, 0.5 * p[0] ** -0.5, -0.25 * p[0] ** -1.5, 0.375 * p[0] ** -2.5)   # 1 / (4 w) = 1 / (2 sqrt p)
        for i in range(3):                   # (R32 - R23, R13 - R31, R21 - R12)
            a, b = _ANTI[i, 0], _ANTI[i, 1]
            tmp[:] = L[a]
            _jaxpy(tmp, -1.0, L[b])
            _jmul(v[i], tmp, h)
        _jconst(s, 0.0)
        for i in range(3):
            _jmul_acc(s, v[i], v[i], 1.0)
        G = _log_coefficient(s[0])
        _jfun(g, s, G[0], G[1], G[2])
        for i in range(3):
            _jmul(out[i], g, v[i])
        return True
    i = 0
    for c in range(1, 3):
        if L[4 * c][0] > L[4 * i][0]:
            i = c
    j, k = (i + 1) % 3, (i + 2) % 3
    t = W[17]
    _jconst(t, 1.0)
    _jaxpy(t, 1.0, L[4 * i])
    _jaxpy(t, -1.0, L[4 * j])
    _jaxpy(t, -1.0, L[4 * k])
    t0 = t[0]
    _jfun(v[i], t, 0.5 * t0 ** 0.5, 0.25 * t0 ** -0.5, -0.125 * t0 ** -1.5)        # q_i = sqrt(t) / 2
    _jfun(h, t, 0.5 * t0 ** -0.5, -0.25 * t0 ** -1.5, 0.375 * t0 ** -2.5)          # 1 / (4 q_i)
    w = W[18]
    tmp[:] = L[3 * k + j]
    _jaxpy(tmp, -1.0, L[3 * j + k])
    _jmul(w, tmp, h)
    tmp[:] = L[3 * j + i]
    _jaxpy(tmp, 1.0, L[3 * i + j])
    _jmul(v[j], tmp, h)
    tmp[:] = L[3 * k + i]
    _jaxpy(tmp, 1.0, L[3 * i + k])
    _jmul(v[k], tmp, h)
    sign = 1.0 if w[0] >= 0.0 else -1.0
    w0 = sign * w[0]
    if w0 >= 1.0:
        return False
    r2 = 1.0 - w0 * w0
    H0 = 2.0 * np.arccos(w0) / np.sqrt(r2)
    H1 = (-2.0 + w0 * H0) / r2
    H2 = (H0 + 3.0 * w0 * H1) / r2
    _jfun(g, w, H0, sign * H1, H2)            # H(sign w) as a function of w
    for c in range(3):
        _jmul(out[c], g, v[c])
        for n in range(out[c].size):
            out[c][n] *= sign
    return True


_ANTI = np.array([[7, 5], [2, 6], [3, 1]])


@njit(cache=True)
def element(d, psi1, psi2, R0, l0, k, cable, active, W, Ws, U, dl):
    """Energy jet ``U`` of one element and its local deformations ``dl`` (7 values:
    u_bar, theta_bar_1 (3), theta_bar_2 (3)); ``k = (EA/l0, GJ/l0, kz11, kz12, kz22, ky11, ky12, ky22,
    average)`` with ``average`` 1 for the element-mean axial strain, 0 for the chord strain. Derivatives by the
    active variables only: ``active`` (NV,) the position of each variable of ``z`` among them (-1: held,
    a constant), ``W`` (WORK_ROWS, size) and ``U`` (size,), ``size = 1 + nv + nv (nv + 1) / 2`` for ``nv`` active
    variables, ``Ws`` (TRIAD_ROWS * NJ3,) the triads' work.
    Returns False when a local rotation is pi exactly (the logarithm jumps there)."""
    i3_, i6_ = np.int64(3), np.int64(6)  # no literals (docs/architecture.md §2)
    x = W[18:21]
    for i in range(3):
        _jvar(x[i], d[i], active[i])
    r1, r2, r3, qv, w = W[30:33], W[33:36], W[36:39], W[39:42], W[42:45]
    ln = _normalize(r1, x, W[60:62])
    ubar, s = W[45], W[60]
    _jconst(s, 0.0)
    for i in range(3):
        _jmul_acc(s, x[i], x[i], 1.0)
    _jfun(ubar, s, ln - l0, 0.5 / ln, -0.25 / (ln * ln * ln))     # l_n - l_0, l_n = sqrt(s)
    dl[:] = 0.0
    dl[0] = ubar[0]
    _jconst(U, 0.0)
    if cable:                                   # tension-only bar: the triads play no part
        if ubar[0] > 0.0:
            _jmul_acc(U, ubar, ubar, 0.5 * k[0])
        return True
    T1, T2 = W[0:9], W[9:18]
    _triad(psi1, i3_, active, R0, Ws, T1)
    _triad(psi2, i6_, active, R0, Ws, T2)
    Rr = W[21:30]                               # row-major: column c = (Rr[c], Rr[3 + c], Rr[6 + c])
    for i in range(3):
        qv[i][:] = 0.0
        _jaxpy(qv[i], 0.5, T1[3 * i + 1])
        _jaxpy(qv[i], 0.5, T2[3 * i + 1])
    _cross(w, r1, qv, W[60])
    _normalize(r3, w, W[60:62])
    _cross(r2, r3, r1, W[60])
    for i in range(3):
        Rr[3 * i][:] = r1[i]
        Rr[3 * i + 1][:] = r2[i]
        Rr[3 * i + 2][:] = r3[i]
    th1, th2 = W[46:49], W[49:52]
    ok = _local_rotation(Rr, T1, W[60:80], th1)
    ok = ok and _local_rotation(Rr, T2, W[60:80], th2)
    if not ok:
        return False
    for i in range(3):
        dl[1 + i] = th1[i][0]
        dl[4 + i] = th2[i][0]
    if k[8] != 0.0:                             # element-mean axial strain times l0 (module doc)
        ea = W[53]
        ea[:] = ubar
        for c in (1, 2):
            _jmul_acc(ea, th1[c], th1[c], 2.0 * l0 / 30.0)
            _jmul_acc(ea, th1[c], th2[c], -l0 / 30.0)
            _jmul_acc(ea, th2[c], th2[c], 2.0 * l0 / 30.0)
        _jmul_acc(U, ea, ea, 0.5 * k[0])
    else:
        _jmul_acc(U, ubar, ubar, 0.5 * k[0])
    tw = W[52]
    tw[:] = th2[0]
    _jaxpy(tw, -1.0, th1[0])
    _jmul_acc(U, tw, tw, 0.5 * k[1])
    for c, o in ((2, 2), (1, 5)):           # z-bending (k[2:5]), y-bending (k[5:8])
        _jmul_acc(U, th1[c], th1[c], 0.5 * k[o])
        _jmul_acc(U, th1[c], th2[c], k[o + 1])
        _jmul_acc(U, th2[c], th2[c], 0.5 * k[o + 2])
    return True


_SIGN = np.array([-1.0, -1.0, -1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0])
_MAP = np.array([0, 1, 2, 3, 4, 5, 0, 1, 2, 6, 7, 8])   # element dof -> variable (x2 - x1 = u2 - u1 + X21)


@njit(cache=True, inline="always")
def _chord(X21, e, d12, d):
    """``d = x2 - x1 = X21[e] + u2 - u1`` from the element dofs ``d12`` (u1, psi1, u2, psi2)."""
    for i in range(3):
        d[i] = X21[e, i] + d12[6 + i] - d12[i]


@njit(cache=True, inline="always")
def _activate(loc, e, active, Wbuf, Ubuf):
    """The variables of element ``e`` that move (an element dof mapped to them is free, ``loc[e] >= 0``) numbered
    into ``active`` (NV,) (-1 for the others), and the work jets ``(W, U)`` sized for them: a planar beam (out-of-plane
    dofs held) has 4 of the 9 and its jets are 15 numbers instead of 55."""
    active[:] = -1
    for a in range(12):
        if loc[e, a] >= 0:
            active[_MAP[a]] = 0
    n = 0
    for v in range(NV):
        if active[v] == 0:
            active[v] = n
            n += 1
    size = 1 + n + n * (n + 1) // 2
    return Wbuf[:WORK_ROWS * size].reshape((WORK_ROWS, size)), Ubuf[:size]


@njit(cache=True, inline="always")
def _force(U, active, a):
    """Force on element dof ``a`` (free: its variable is active) from the energy jet."""
    return _SIGN[a] * U[1 + active[_MAP[a]]]


@njit(cache=True, inline="always")
def _stiffness(U, active, a, b):
    """Tangent entry of free element dofs ``a``, ``b`` from the energy jet."""
    i, j = active[_MAP[a]], active[_MAP[b]]
    return _SIGN[a] * _SIGN[b] * U[hessian_index(_nv(U), min(i, j), max(i, j))]


@njit(cache=True)
def forces_sparse(ue, loc, X21, R0, l0, k, cable, want_tangent, f_out, kdata, dofmap, pos, energy, local):
    """Energy, forces and tangent of every element of one structure. ``ue`` (ne, 12) element dofs (u1, psi1,
    u2, psi2), ``loc`` (ne, 12) their free-dof numbers (-1: held); forces added into ``f_out`` at ``dofmap`` (free
    dofs), tangent values into ``kdata`` at ``pos`` (ne*144), element energies into ``energy`` (ne,), local
    deformations into ``local`` (ne, 7). Returns the index of the first failing element or -1."""
    Wbuf = np.zeros(WORK_ROWS * NJ)
    Ws = np.zeros(TRIAD_ROWS * NJ3)
    Ubuf = np.zeros(NJ)
    active = np.empty(NV, dtype=np.int64)
    dl = np.empty(7)
    d12 = np.empty(12)
    d = np.empty(3)
    for e in range(ue.shape[0]):
        W, U = _activate(loc, e, active, Wbuf, Ubuf)
        d12[:] = ue[e]
        _chord(X21, e, d12, d)
        if not element(d, d12[3:6], d12[9:12], R0[e], l0[e], k[e], cable, active, W, Ws, U, dl):
            return e
        energy[e] = U[0]
        local[e, :] = dl
        for a in range(12):
            if loc[e, a] < 0:
                continue
            f_out[dofmap[e, a]] += _force(U, active, a)
            if want_tangent:        # (a slack cable element adds zeros: Assembly keeps beam blocks full)
                for b in range(12):
                    if loc[e, b] >= 0:
                        kdata[pos[e * 144 + 12 * a + b]] += _stiffness(U, active, a, b)
    return -1


@njit(cache=True)
def forces_dense(x, idx, off, loc, owner, X21, R0, l0, k, cable, Wbuf, Ws, Ubuf, dl, f, K):
    """Add the internal forces and tangents of all elements into ``f[owner]`` (n, m) and the dense
    ``K[owner]`` (n, m, m). Coordinate j of owner b is ``x[idx[b, off + j]]``; ``loc`` (ne, 12) the coordinate
    of each element dof (-1: held at zero, dropped); ``cable`` (ne,) int64 1 for a tension-only element; work
    arrays ``Wbuf`` (WORK_ROWS * NJ,), ``Ws`` (TRIAD_ROWS * NJ3,), ``Ubuf`` (NJ,), ``dl`` (7,).
    Returns the index of the first failing element (its owner's forces are then NaN) or -1."""
    active = np.empty(NV, dtype=np.int64)
    d12 = np.empty(12)
    d = np.empty(3)
    for e in range(loc.shape[0]):
        b = owner[e]
        W, U = _activate(loc, e, active, Wbuf, Ubuf)
        gather(x, idx, off, b, loc, e, d12)
        _chord(X21, e, d12, d)
        if not element(d, d12[3:6], d12[9:12], R0[e], l0[e], k[e], cable[e] == 1, active, W, Ws, U, dl):
            f[b, :] = np.nan
            return e
        for a in range(12):
            r = loc[e, a]
            if r < 0:
                continue
            f[b, r] += _force(U, active, a)
            for c in range(12):
                j = loc[e, c]
                if j >= 0:
                    K[b, r, j] += _stiffness(U, active, a, c)
    return -1


@njit(cache=True)
def energy(x, idx, off, loc, owner, X21, R0, l0, k, cable, Wbuf, Ws, Ubuf, dl, out):
    """Add the strain energy of every element (J) to ``out[owner]``; coordinates and work arrays as
    :func:`forces_dense`. Returns the index of the first failing element (its owner's energy is then NaN) or -1.
    Values only: the jets carry no variable (one number each)."""
    active = np.full(NV, -1, dtype=np.int64)
    W, U = Wbuf[:WORK_ROWS].reshape((WORK_ROWS, 1)), Ubuf[:1]
    d12 = np.empty(12)
    d = np.empty(3)
    for e in range(loc.shape[0]):
        b = owner[e]
        gather(x, idx, off, b, loc, e, d12)
        _chord(X21, e, d12, d)
        if not element(d, d12[3:6], d12[9:12], R0[e], l0[e], k[e], cable[e] == 1, active, W, Ws, U, dl):
            out[b] = np.nan
            return e
        out[b] += U[0]
    return -1
