"""Geometrically exact two-node beam: consistent 3-D co-rotational formulation (theory-elements §7).

``ExactBeamStructure`` evaluates the strain energy, internal forces and exact tangent stiffness of
a mesh of two-node beams for arbitrarily large displacements and rotations, on all nodal dofs,
in the body frame. Nodal coordinates per node: displacement ``u`` (m) and the total rotation
vector ``psi`` (rad) of the node triad, ``Q = exp(psi~)`` (Argyris 1982); the end triads of an
element are ``T_i = Q_i R0`` with ``R0`` (columns) the element's initial local axes (same axes
as the linear kernel :class:`~flexmb.fem.elements.beam.Beam2`).

Co-rotational frame (Crisfield 1990, Comput. Methods Appl. Mech. Engrg 81:131-150, §3;
Battini & Pacoste 2002, Comput. Methods Appl. Mech. Engrg 191:1755-1789, eqs. 8-11)::

    r1 = (x2 - x1) / l_n,   q = (T1 e2 + T2 e2) / 2,   r3 = (r1 x q) / |r1 x q|,   r2 = r3 x r1

local deformations (Battini & Pacoste eq. 12)::

    u_bar = l_n - l_0,   theta_bar_i = log(R_r^T T_i),  i = 1, 2   (log: quaternion, |theta| < pi)

and the strain energy of the linear local Timoshenko element (theory-elements eq. 4.6)::

    U = EA l0 / 2 eps^2 + GJ/(2 l0) (theta_bar_2x - theta_bar_1x)^2
        + 1/2 [th1, th2]_z k(EIz, Phi_y) [th1, th2]_z + 1/2 [th1, th2]_y k(EIy, Phi_z) [th1, th2]_y,
    k(EI, Phi) = EI / ((1 + Phi) l0) [[4 + Phi, 2 - Phi], [2 - Phi, 4 + Phi]]
    eps = u_bar / l0 + sum_{y,z} (2 th1^2 - th1 th2 + 2 th2^2) / 30      (membrane="average")
    eps = u_bar / l0                                                     (membrane="chord")

(Przemieniecki 1968, ch. 5: the end-rotation part of the exact two-node Timoshenko element, so an
infinite shear factor gives the Euler-Bernoulli limit and no shear locking occurs). The "average"
axial strain is the element mean of ``u' + (v'^2 + w'^2)/2`` over the local cubic deflection
(``int_0^l v'^2 dx = l (2 th1^2 - th1 th2 + 2 th2^2) / 15``), the second-order local element of
Crisfield 1991 (*Non-linear FE Analysis of Solids and Structures* vol. 1, §7.3, shallow arch, mean
membrane strain: no membrane locking) used inside the co-rotational frame as by Battini & Pacoste
2002 §4: axial force now stiffens or softens bending inside each element (centrifugal stiffening,
buckling) instead of only through the chord rotations. Internal force
``f = dU/dd`` and tangent ``K = d^2U/dd^2`` are the exact first and second derivatives of this
energy, computed by second-order forward-mode differentiation (value, gradient, Hessian carried
through every operation) over the 9 independent variables ``(x2 - x1, psi1, psi2)`` of an
element, compiled with numba: one call evaluates all elements and scatters into the free-dof
force vector and the CSR values of a pattern built once.

Objectivity: a rigid rotation ``x -> S x``, ``T_i -> S T_i`` leaves ``R_r^T T_i`` and ``l_n``
unchanged, so it produces no strain and no force. Cable mode (``cable=True``): tension-only
bar ``U = EA/(2 l0) <u_bar>_+^2`` (no bending or torsion; a slack element carries nothing).

Rotation parameterization: ``exp`` of the total rotation vector is singular (its differential
drops rank) where ``|psi| = 2 pi`` for perturbations across the axis; a rotation about a fixed
axis (planar problems, out-of-plane rotation dofs held) has no such limit, the angle is unbounded.
SI units: m, rad, N, N m, J.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import scipy.sparse as sp
from numba import njit

from flexmb.errors import ConvergenceError, ModelError
from flexmb.fem.model import FEModel
from flexmb.fem.nonlinear_beam import FreeDofStructure, _check_fixed, _check_model, _entry_positions, _free_pattern

__all__ = ["ExactBeamStructure", "element_energy"]

NV = 9                    # independent variables of an element: x2 - x1 (3), psi1 (3), psi2 (3)
NJ = 1 + NV + NV * NV     # jet: value, gradient, Hessian (row-major)
MEMBRANE = ("average", "chord")
"""Axial strain of the local element: element mean including the bending part, or chord stretch only."""
_SERIES_EXP = 1.0         # s = |psi|^2 below which exp-map coefficients come from their series
_SERIES_LOG = 0.25        # s = sin^2(theta/2) below which the log coefficient comes from its series


# ----------------------------------------------------------------------------------------------
# jets: value, gradient (9) and Hessian (9 x 9) of a scalar, flat arrays of NJ numbers
# ----------------------------------------------------------------------------------------------
@njit(cache=True)
def _jvar(out, value, k):
    out[:] = 0.0
    out[0] = value
    out[1 + k] = 1.0


@njit(cache=True)
def _jconst(out, value):
    out[:] = 0.0
    out[0] = value


@njit(cache=True)
def _jmul(out, a, b):
    """out = a b (out must not alias a or b)."""
    a0, b0 = a[0], b[0]
    out[0] = a0 * b0
    for i in range(NV):
        out[1 + i] = a0 * b[1 + i] + b0 * a[1 + i]
    for i in range(NV):
        ai, bi = a[1 + i], b[1 + i]
        r = 1 + NV + i * NV
        for j in range(NV):
            out[r + j] = a0 * b[r + j] + b0 * a[r + j] + ai * b[1 + j] + bi * a[1 + j]


@njit(cache=True)
def _jmul_acc(out, a, b, c):
    """out += c a b."""
    a0, b0 = a[0], b[0]
    out[0] += c * a0 * b0
    for i in range(NV):
        out[1 + i] += c * (a0 * b[1 + i] + b0 * a[1 + i])
    for i in range(NV):
        ai, bi = a[1 + i], b[1 + i]
        r = 1 + NV + i * NV
        for j in range(NV):
            out[r + j] += c * (a0 * b[r + j] + b0 * a[r + j] + ai * b[1 + j] + bi * a[1 + j])


@njit(cache=True)
def _jaxpy(out, c, a):
    """out += c a (c a constant)."""
    for k in range(NJ):
        out[k] += c * a[k]


@njit(cache=True)
def _jfun(out, a, f0, f1, f2):
    """out = f(a) for a scalar function with value f0, derivatives f1, f2 at a[0]."""
    out[0] = f0
    for i in range(NV):
        out[1 + i] = f1 * a[1 + i]
    for i in range(NV):
        ai = a[1 + i]
        r = 1 + NV + i * NV
        for j in range(NV):
            out[r + j] = f1 * a[r + j] + f2 * ai * a[1 + j]


# ----------------------------------------------------------------------------------------------
# scalar functions of s with two derivatives (series near 0, closed form elsewhere)
# ----------------------------------------------------------------------------------------------
@njit(cache=True)
def _series(s, sign, offset):
    """sum_k sign^k s^k / (2k + offset)! and its first two derivatives in s (16 terms)."""
    f0 = f1 = f2 = 0.0
    fact = 1.0
    for n in range(2, offset + 1):
        fact *= n
    c = 1.0 / fact
    p0, p1, p2 = 1.0, 0.0, 0.0                 # s^k, s^(k-1), s^(k-2)
    for k in range(16):
        f0 += c * p0
        f1 += k * c * p1
        f2 += k * (k - 1) * c * p2
        m = 2 * k + offset
        c *= sign / ((m + 1) * (m + 2))
        p2, p1, p0 = p1, p0, p0 * s
    return f0, f1, f2


@njit(cache=True)
def _exp_coefficients(s):
    """(A, A', A''), (B, B', B''), (C, C', C'') of ``A = sin x / x``, ``B = (1 - cos x) / x^2``,
    ``C = cos x`` as functions of ``s = x^2`` (so that ``exp(psi~) = C I + A psi~ + B psi psi^T``)."""
    i0_, i1_, i2_ = np.int64(0), np.int64(1), np.int64(2)  # no literals (docs/architecture.md §2)
    if s < _SERIES_EXP:
        A = _series(s, -1.0, i1_)
        B = _series(s, -1.0, i2_)
        C = _series(s, -1.0, i0_)
        return A, B, C
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
        f0 = f1 = f2 = 0.0
        c = 2.0                                # 2 (2k)! / (4^k k!^2), divided by (2k + 1) below
        p0, p1, p2 = 1.0, 0.0, 0.0
        for k in range(40):
            ck = c / (2 * k + 1)
            f0 += ck * p0
            f1 += k * ck * p1
            f2 += k * (k - 1) * ck * p2
            c *= (2 * k + 1) * (2 * k + 2) / (4.0 * (k + 1) * (k + 1))
            p2, p1, p0 = p1, p0, p0 * s
        return f0, f1, f2
    x = np.sqrt(s)
    f0 = 2.0 * np.arcsin(x) / x
    f1 = (x / np.sqrt(1.0 - s) - np.arcsin(x)) / (x * s)
    f2 = ((1.0 - s) ** -1.5 - 3.0 * f1) / (2.0 * s)
    return f0, f1, f2


# ----------------------------------------------------------------------------------------------
# one element
# ----------------------------------------------------------------------------------------------
@njit(cache=True)
def _triad(psi, k0, R0, W, T):
    """Jets of the end triad ``T = exp(psi~) R0`` (3, 3, NJ); psi are variables k0..k0+2."""
    p = W[0:3]
    for i in range(3):
        _jvar(p[i], psi[i], k0 + i)
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
    for i in range(3):
        for j in range(3):
            t = T[3 * i + j]
            t[:] = 0.0
            for k in range(3):
                if R0[k, j] != 0.0:
                    _jaxpy(t, R0[k, j], Q[3 * i + k])


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
        for n in range(NJ):
            out[c][n] *= sign
    return True


_ANTI = np.array([[7, 5], [2, 6], [3, 1]])


@njit(cache=True)
def _element(d, psi1, psi2, R0, l0, k, cable, W, U, dl):
    """Energy jet ``U`` of one element and its local deformations ``dl`` (7 values:
    u_bar, theta_bar_1 (3), theta_bar_2 (3)); ``k = (EA/l0, GJ/l0, kz11, kz12, kz22, ky11, ky12, ky22,
    average)`` with ``average`` 1 for the element-mean axial strain, 0 for the chord strain.
    Returns False when a local rotation is pi exactly (the logarithm jumps there)."""
    i3_, i6_ = np.int64(3), np.int64(6)  # no literals (docs/architecture.md §2)
    x = W[18:21]
    for i in range(3):
        _jvar(x[i], d[i], i)
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
    _triad(psi1, i3_, R0, W[60:80], T1)
    _triad(psi2, i6_, R0, W[60:80], T2)
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


@njit(cache=True)
def _all_elements(ue, X21, R0, l0, k, cable, want_tangent, f_out, kdata, dofmap, pos, energy, local):
    """Energy, forces and tangent of every element. ``ue`` (ne, 12) element dofs (u1, psi1, u2, psi2);
    forces added into ``f_out`` at ``dofmap``, tangent values into ``kdata`` at ``pos`` (ne*144).
    Returns the index of the first failing element or -1."""
    W = np.zeros((80, NJ))
    U = np.zeros(NJ)
    dl = np.zeros(7)
    ne = ue.shape[0]
    sign = _SIGN
    vmap = _MAP
    for e in range(ne):
        d = X21[e] + ue[e, 6:9] - ue[e, 0:3]
        if not _element(d, ue[e, 3:6], ue[e, 9:12], R0[e], l0[e], k[e], cable, W, U, dl):
            return e
        energy[e] = U[0]
        local[e, :] = dl
        for a in range(12):
            f_out[dofmap[e, a]] += sign[a] * U[1 + vmap[a]]
        if want_tangent:
            base = e * 144
            for a in range(12):      # (a slack cable element adds zeros: Assembly keeps beam blocks full)
                ra = 1 + NV + vmap[a] * NV
                for b in range(12):
                    kdata[pos[base + 12 * a + b]] += sign[a] * sign[b] * U[ra + vmap[b]]
    return -1


def element_energy(d: np.ndarray, psi1: np.ndarray, psi2: np.ndarray, R0: np.ndarray, l0: float,
                   k: np.ndarray, cable: bool = False) -> tuple[float, np.ndarray, np.ndarray, np.ndarray]:
    """One element: ``(U, dU/dz, d2U/dz2, local deformations)`` for ``z = (x2 - x1, psi1, psi2)``.

    For tests and recovery; ``R0`` (3, 3) columns = initial local axes, ``k`` as in the module."""
    W = np.zeros((80, NJ))
    U = np.zeros(NJ)
    dl = np.zeros(7)
    if not _element(np.asarray(d, float), np.asarray(psi1, float), np.asarray(psi2, float),
                    np.ascontiguousarray(R0, dtype=float), float(l0), np.asarray(k, float), bool(cable), W, U, dl):
        raise ConvergenceError("exact beam element: a local rotation is pi")
    return float(U[0]), U[1:1 + NV].copy(), U[1 + NV:].reshape(NV, NV).copy(), dl


class ExactBeamStructure(FreeDofStructure):
    """All two-node beams of an :class:`FEModel` as geometrically exact co-rotational elements.

    Args:
        model: an FEModel made only of ``line`` (two-node beam) elements, 6 dofs per node; its
            sections give ``EA``, ``GJ``, ``EIy``, ``EIz`` and the shear parameters ``Phi``
            (``beam="euler-bernoulli"`` models: ``Phi = 0``).
        fixed_dofs: global dof ids held at zero (the floating-frame constraints).
        cable: tension-only bar elements (no bending, no torsion, no compression; module doc).
        membrane: ``"average"`` (default): local axial strain = element mean of ``u' + (v'^2 + w'^2)/2``
            of the local cubic element, ``u_bar/l0 + (2 th1^2 - th1 th2 + 2 th2^2)/30`` per bending
            plane (the second-order local element: tension and compression stiffen/soften bending
            inside each element); ``"chord"``: ``u_bar / l0`` only (the classic linear local element).

    Attributes:
        free: free global dof ids (sorted); ``ndof_free`` their number.
    """

    def __init__(self, model: FEModel, fixed_dofs: Sequence[int] | np.ndarray | None = None, *,
                 cable: bool = False, membrane: str = "average") -> None:
        _check_model(model)
        if membrane not in MEMBRANE:
            raise ModelError(f"exact beam: membrane must be one of {MEMBRANE}, got {membrane!r}")
        self.model = model
        self.cable = bool(cable)
        self.membrane = membrane
        self.fixed = _check_fixed(model, fixed_dofs)
        self.free = model.free_dofs(self.fixed)
        self.free.flags.writeable = False
        self.ndof_free = int(self.free.size)
        self._positions, self._indptr, self._indices = _free_pattern(model, self.free)
        self._nnz = int(self._positions.size)
        dofmaps, X21, R0, l0, k = [], [], [], [], []
        for c in model.chunks:
            kern = c.kernel
            p, s = kern.props, kern.props.section
            X = kern.X
            X21.append(X[:, 1] - X[:, 0])
            R0.append(np.transpose(kern.R, (0, 2, 1)))          # columns: local x, y, z
            L = kern.L
            l0.append(L)
            ez = p.E * s.Iz / ((1.0 + kern.phi_y) * L)
            ey = p.E * s.Iy / ((1.0 + kern.phi_z) * L)
            ke = np.column_stack([p.E * s.A / L, p.G * s.J / L,
                                  ez * (4.0 + kern.phi_y), ez * (2.0 - kern.phi_y), ez * (4.0 + kern.phi_y),
                                  ey * (4.0 + kern.phi_z), ey * (2.0 - kern.phi_z), ey * (4.0 + kern.phi_z),
                                  np.full(L.size, 1.0 if membrane == "average" else 0.0)])
            for name, v in (("EA", p.E * s.A), ("EIy", p.E * s.Iy), ("EIz", p.E * s.Iz), ("GJ", p.G * s.J)):
                v = np.broadcast_to(v, L.shape)
                if not np.all(np.isfinite(v) & (v > 0.0)):
                    bad = np.flatnonzero(~(np.isfinite(v) & (v > 0.0)))
                    raise ModelError(f"exact beam: {name} must be positive and finite; elements "
                                     f"{bad[:10].tolist()} have {v[bad[0]]!r}")
            k.append(np.broadcast_to(ke, (L.size, 9)))
            dofmaps.append(c.dofmap)
        self._dofmap = np.ascontiguousarray(np.concatenate(dofmaps), dtype=np.int64)
        self._X21 = np.ascontiguousarray(np.concatenate(X21), dtype=float)
        self._R0 = np.ascontiguousarray(np.concatenate(R0), dtype=float)
        self._l0 = np.ascontiguousarray(np.concatenate(l0), dtype=float)
        self._k = np.ascontiguousarray(np.concatenate(k), dtype=float)
        self.n_elements = int(self._l0.size)
        self._pos = np.concatenate([_entry_positions(dm, self.free, model.ndof, self._indptr, self._indices)
                                    for dm in dofmaps]).astype(np.int64)
        self._extra, self._extra_data = self._linear_extra()

    def _evaluate(self, u_free: np.ndarray, tangent: bool):
        u_free = np.asarray(u_free, dtype=float)
        if u_free.shape != (self.ndof_free,):
            raise ModelError(f"free dofs must have shape ({self.ndof_free},), got {u_free.shape}")
        if not np.all(np.isfinite(u_free)):
            raise ConvergenceError("exact beam: non-finite nodal coordinates")
        u = np.zeros(self.model.ndof)
        u[self.free] = u_free
        ue = u[self._dofmap]
        f_full = np.zeros(self.model.ndof)
        kdata = np.zeros(self._nnz + 1)
        energy = np.zeros(self.n_elements)
        local = np.zeros((self.n_elements, 7))
        bad = _all_elements(ue, self._X21, self._R0, self._l0, self._k, self.cable, tangent, f_full, kdata,
                            self._dofmap, self._pos, energy, local)
        if bad >= 0:
            raise ConvergenceError(f"exact beam: element {bad} turns by pi relative to its chord (the "
                                   "local rotation is undefined there; refine the mesh or reduce the step)")
        return f_full[self.free], kdata[:-1], energy, local

    def strain_energy(self, u_free: np.ndarray) -> float:
        """Strain energy, J (module doc), plus ``u^T K_s u / 2`` of node springs."""
        _, _, energy, _ = self._evaluate(u_free, False)
        out = float(energy.sum())
        if self._extra is not None:
            u_free = np.asarray(u_free, dtype=float)
            out += 0.5 * float(u_free @ (self._extra @ u_free))
        return out

    def internal_force(self, u_free: np.ndarray) -> tuple[np.ndarray, sp.csr_matrix]:
        """Internal force ``f = dU/du`` (nfree,), N and N m, and exact tangent ``K_t = d^2U/du^2`` (CSR,
        constant pattern)."""
        f, kdata, _, _ = self._evaluate(u_free, True)
        if self._extra is not None:
            f = f + self._extra @ np.asarray(u_free, dtype=float)
            kdata = kdata + self._extra_data
        return f, self._csr(kdata)

    def tangent_dense(self, u_free: np.ndarray) -> np.ndarray:
        """Tangent stiffness (nfree, nfree) as a dense array."""
        return self.internal_force(u_free)[1].toarray()

    def local_deformations(self, u_free: np.ndarray) -> np.ndarray:
        """(ne, 7): ``u_bar`` (m), ``theta_bar_1`` (3, rad), ``theta_bar_2`` (3, rad) in the co-rotated frame."""
        return self._evaluate(u_free, False)[3]

    def section_forces(self, u_free: np.ndarray) -> np.ndarray:
        """(ne, 6) local end forces ``(N, T, Mz1, Mz2, My1, My2)``: axial force (tension positive, N),
        torque and the end moments conjugate to the local rotations (N m), from the local element."""
        d = self.local_deformations(u_free)
        k = self._k
        stretch = d[:, 0].copy()
        if not self.cable and self.membrane == "average":
            for a, b in ((3, 6), (2, 5)):
                stretch += self._l0 / 30.0 * (2.0 * d[:, a] ** 2 - d[:, a] * d[:, b] + 2.0 * d[:, b] ** 2)
        N = k[:, 0] * stretch
        if self.cable:
            N = np.maximum(N, 0.0)
            z = np.zeros_like(N)
            return np.column_stack([N, z, z, z, z, z])
        T = k[:, 1] * (d[:, 4] - d[:, 1])
        Mz1 = k[:, 2] * d[:, 3] + k[:, 3] * d[:, 6]
        Mz2 = k[:, 3] * d[:, 3] + k[:, 4] * d[:, 6]
        My1 = k[:, 5] * d[:, 2] + k[:, 6] * d[:, 5]
        My2 = k[:, 6] * d[:, 2] + k[:, 7] * d[:, 5]
        return np.column_stack([N, T, Mz1, Mz2, My1, My2])

    def axial_force(self, u_free: np.ndarray) -> np.ndarray:
        """Axial force (ne,) of each element, N, tension positive."""
        return self.section_forces(u_free)[:, 0]


class ExactBeamBatch:
    """All exact beams of one flexible-body group (same number ``m`` of free dofs and the same ``cable``
    flag): forces and dense tangents of every body in one compiled call over all their elements, for
    :class:`~flexmb.bodies.flexible_kernel.FlexibleBodyGroup` (no Python loop over bodies in a time step).
    Node springs of the models (``_extra``) are added as the constant linear term, as ``internal_force`` does."""

    def __init__(self, structures: Sequence[ExactBeamStructure]):
        self.n = len(structures)
        self.m = m = structures[0].ndof_free
        self.cable = structures[0].cable
        if any(st.ndof_free != m or st.cable != self.cable for st in structures):
            raise ValueError("ExactBeamBatch: structures of one batch need equal free-dof counts and cable flags")
        full = np.cumsum([0] + [st.model.ndof for st in structures])
        self._ndof = int(full[-1])
        self._free = np.concatenate([st.free + full[i] for i, st in enumerate(structures)])    # (n m,) into U
        self._dofmap = np.ascontiguousarray(np.concatenate([st._dofmap + full[i] for i, st in enumerate(structures)]))
        self._X21, self._R0, self._l0, self._k = (np.ascontiguousarray(np.concatenate([getattr(st, a) for st in structures]))
                                                 for a in ("_X21", "_R0", "_l0", "_k"))
        pos = []
        dropped = self.n * m * m                                      # one slot past the dense tangents
        for i, st in enumerate(structures):
            where = np.full(st.model.ndof, -1, dtype=np.int64)
            where[st.free] = np.arange(m)
            r = where[st._dofmap][:, :, None]                          # (ne, 12, 1) free index of each dof
            c = where[st._dofmap][:, None, :]
            pos.append(np.where((r >= 0) & (c >= 0), i * m * m + r * m + c, dropped).reshape(-1))
        self._pos = np.ascontiguousarray(np.concatenate(pos), dtype=np.int64)
        springs = [st._extra for st in structures]
        self._extra = (None if all(x is None for x in springs) else
                       np.array([np.zeros((m, m)) if x is None else x.toarray() for x in springs]))
        self.n_elements = int(self._l0.size)

    def forces(self, eta: np.ndarray, fel: np.ndarray, Kel: np.ndarray) -> None:
        """Write the internal forces (n, m) into ``fel`` and the dense tangents (n, m, m) into ``Kel`` at the free
        coordinates ``eta`` (n, m) of every body."""
        true_ = np.bool_(True)  # no literal (docs/architecture.md §2)
        if not np.all(np.isfinite(eta)):
            raise ConvergenceError("exact beam: non-finite nodal coordinates")
        u = np.zeros(self._ndof)
        u[self._free] = eta.reshape(-1)
        f_full = np.zeros(self._ndof)
        kdata = np.zeros(self.n * self.m * self.m + 1)
        bad = _all_elements(u[self._dofmap], self._X21, self._R0, self._l0, self._k, self.cable, true_, f_full,
                            kdata, self._dofmap, self._pos, np.zeros(self.n_elements), np.zeros((self.n_elements, 7)))
        if bad >= 0:
            raise ConvergenceError(f"exact beam: element {bad} of the group turns by pi relative to its chord (the "
                                   "local rotation is undefined there; refine the mesh or reduce the step)")
        fel[:] = f_full[self._free].reshape(self.n, self.m)
        Kel[:] = kdata[:-1].reshape(self.n, self.m, self.m)
        if self._extra is not None:                  # node springs: a constant linear term
            fel += np.einsum("nij,nj->ni", self._extra, eta)
            Kel += self._extra
