"""Compiled kernels of the rope-pulley contact (flexmb/contact/rope.py; docs/theory-ropes.md §2).

One instance is a (pulley, segment) pair with 10 coordinates: the segment's position (3), the pulley's position (3)
and Euler parameters (4). ``slip_kernel`` gives the slip speeds the friction law needs; ``contact_kernel`` then
evaluates the forces, the residual ``r = -D^T f'`` and its exact blocks for every pair in one call;
``evaluate_pairs`` does both with the built-in friction laws in between (one call per evaluation: the group's and
the compiled step's, flexmb/compiled/step.py).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .contact import friction_coefficient
from .rotations import rotation_matrix


@njit(cache=True, inline="always")
def _local_offset(qe, g, p, A, d, x):
    """Fill ``p`` (4,) with the pulley's Euler parameters, ``A`` (3, 3) = A(p) (compiled/rotations.py, Nikravesh
    eq. 6.19), ``d = r_s - r_p`` and ``x = d' = A^T d`` (3,), the segment's offset in the pulley frame."""
    for a in range(4):
        p[a] = qe[g[6 + a]]
    rotation_matrix(p, A)
    for kk in range(3):
        d[kk] = qe[g[kk]] - qe[g[3 + kk]]
    for i in range(3):
        x[i] = A[0, i] * d[0] + A[1, i] * d[1] + A[2, i] * d[2]


@njit(cache=True)
def _geometry(qe, ve, g, S, dA, D, x, w):
    """Fill ``dA`` (4, 3, 3) = dA/dp_a, ``D`` (3, 10) = dd'/dq, ``x = d' = A^T (r_s - r_p)``, ``w = D q_dot``; returns
    ``d = r_s - r_p`` (3,) (:func:`_local_offset`)."""
    p, A, d = np.empty(4), np.empty((3, 3)), np.empty(3)
    _local_offset(qe, g, p, A, d, x)
    for a in range(4):
        for kk in range(3):
            for i in range(3):
                s = 0.0
                for b in range(4):
                    s += S[a, b, kk, i] * p[b]
                dA[a, kk, i] = s
    for i in range(3):
        for kk in range(3):
            D[i, kk] = A[kk, i]
            D[i, 3 + kk] = -A[kk, i]
        for a in range(4):
            D[i, 6 + a] = d[0] * dA[a, 0, i] + d[1] * dA[a, 1, i] + d[2] * dA[a, 2, i]
        s = 0.0
        for m in range(10):
            s += D[i, m] * ve[g[m]]
        w[i] = s
    return d


@njit(cache=True)
def pair_blocks(ve, g, S, dA, d, D, f, Fx, Fw, cK, cC, Hv, FxD, FwD, FwHv, M, pd, out):
    """Newton block ``out`` (10, 10) = ``cK dr/dq + cC dr/dq_dot`` of ``r = -D^T f'(x, w)`` for one pair of 10
    coordinates (body position (3), pulley or sprocket position (3) and Euler parameters (4); x = d' = A^T d,
    w = D q_dot, from :func:`_geometry`), given the force f' (3,) and its local derivatives ``Fx = df'/dx``,
    ``Fw = df'/dw`` (3, 3) (docs/theory-ropes.md §2.4, docs/theory-roller-chain.md §3):

        dr/dq = -D^T (Fx D + Fw Hv) - sum_i f'_i d^2 x_i / dq^2,     dr/dq_dot = -D^T Fw D,

    with ``Hv = d(D q_dot)/dq`` (the velocity-weighted second derivative of the body-fixed point: (r_s, p)
    entries dA[a, kk, i], (r_p, p) their negatives, (p, p) sum_kk d_kk S[a, b, kk, i]). ``Hv``, ``FxD``, ``FwD``,
    ``FwHv`` (3, 10), ``M`` (3, 4), ``pd`` (4,): scratch. Shared by the rope-pulley and roller-sprocket kernels."""
    for b in range(4):
        pd[b] = ve[g[6 + b]]
    for i in range(3):
        for kk in range(3):
            s = 0.0
            for b in range(4):
                s += dA[b, kk, i] * pd[b]
            Hv[i, kk] = s
            Hv[i, 3 + kk] = -s
        for aa in range(4):
            s = 0.0
            for kk in range(3):
                s += dA[aa, kk, i] * (ve[g[kk]] - ve[g[3 + kk]])
                for b in range(4):
                    s += d[kk] * S[aa, b, kk, i] * pd[b]
            Hv[i, 6 + aa] = s
    for i in range(3):
        for m in range(10):
            s1, s2, s3 = 0.0, 0.0, 0.0
            for j in range(3):
                s1 += Fx[i, j] * D[j, m]
                s2 += Fw[i, j] * D[j, m]
                s3 += Fw[i, j] * Hv[j, m]
            FxD[i, m], FwD[i, m], FwHv[i, m] = s1, s2, s3
    for kk in range(3):                  # sum_i f_i d^2 x_i / dr_kk dp_a
        for aa in range(4):
            M[kk, aa] = f[0] * dA[aa, kk, 0] + f[1] * dA[aa, kk, 1] + f[2] * dA[aa, kk, 2]
    for m in range(10):
        for l in range(10):
            s = 0.0
            for i in range(3):
                s += D[i, m] * (cK * (FxD[i, l] + FwHv[i, l]) + cC * FwD[i, l])
            out[m, l] = -s
    for kk in range(3):
        for aa in range(4):
            out[kk, 6 + aa] -= cK * M[kk, aa]
            out[6 + aa, kk] -= cK * M[kk, aa]
            out[3 + kk, 6 + aa] += cK * M[kk, aa]
            out[6 + aa, 3 + kk] += cK * M[kk, aa]
    for aa in range(4):
        for b in range(4):
            s = 0.0
            for kk in range(3):
                for i in range(3):
                    s += d[kk] * f[i] * S[aa, b, kk, i]
            out[6 + aa, 6 + b] -= cK * s


@njit(cache=True, inline="always")
def _frame(x, a, e1, e3):
    """z, rho and the unit vectors e1 (in-plane radial) and e3 = e1 x a (rim tangent) of ``x``."""
    z = a[0] * x[0] + a[1] * x[1] + a[2] * x[2]
    for i in range(3):
        e1[i] = x[i] - z * a[i]
    rho = np.sqrt(e1[0] * e1[0] + e1[1] * e1[1] + e1[2] * e1[2])
    if rho > 0.0:
        for i in range(3):
            e1[i] /= rho
    e3[0] = e1[1] * a[2] - e1[2] * a[1]
    e3[1] = e1[2] * a[0] - e1[0] * a[2]
    e3[2] = e1[0] * a[1] - e1[1] * a[0]
    return z, rho


@njit(cache=True)
def penetration_kernel(qe, gather, axis, R, delta):
    """``delta = R - rho`` (m) of every pair, positive when the segment centre is inside the radius: the ``parts[:, 4]``
    of :func:`contact_kernel` without its forces and derivatives (the contact onset checks ask for it twice a
    step)."""
    p, A, d, x, e1, e3 = np.empty(4), np.empty((3, 3)), np.empty(3), np.empty(3), np.empty(3), np.empty(3)
    for k in range(gather.shape[0]):
        _local_offset(qe, gather[k], p, A, d, x)
        _, rho = _frame(x, axis[k], e1, e3)
        delta[k] = R[k] - rho


@njit(cache=True)
def slip_kernel(qe, ve, gather, axis, S, vt):
    """Slip speed along the rim ``v_t = e3 . w`` (m/s) of every pair."""
    dA, D = np.empty((4, 3, 3)), np.empty((3, 10))
    x, w, e1, e3 = np.empty(3), np.empty(3), np.empty(3), np.empty(3)
    for k in range(gather.shape[0]):
        _geometry(qe, ve, gather[k], S, dA, D, x, w)
        _frame(x, axis[k], e1, e3)
        vt[k] = e3[0] * w[0] + e3[1] * w[1] + e3[2] * w[2]


@njit(cache=True)
def contact_kernel(qe, ve, gather, axis, S, R, K, c, nexp, ka, ca, mu_over_s, dmu, cK, cC, want_blocks,
                   r, blk, parts):
    """Residual ``r = -D^T f'`` (n, 10) and blocks ``cK dr/dq + cC dr/dq_dot`` (n, 10, 10) of every pair
    (docs/theory-ropes.md §2.3-2.4); ``parts`` (n, 9): F_n, F_a, f_t, v_t, delta (R - rho, also when apart),
    K delta^n, delta_dot, z, z_dot.
    ``mu_over_s``, ``dmu``: the friction law's mu(s)/s and dmu/ds at each pair's slip speed."""
    dA, D = np.empty((4, 3, 3)), np.empty((3, 10))
    x, w, e1, e3 = np.empty(3), np.empty(3), np.empty(3), np.empty(3)
    f = np.empty(3)
    E, dE3, Fx, Fw = np.empty((3, 3)), np.empty((3, 3)), np.empty((3, 3)), np.empty((3, 3))
    dFn_x, dFn_w, dvt_x, dft_x, dft_w = np.empty(3), np.empty(3), np.empty(3), np.empty(3), np.empty(3)
    Hv, FxD, FwD, FwHv = np.empty((3, 10)), np.empty((3, 10)), np.empty((3, 10)), np.empty((3, 10))
    M, pd = np.empty((3, 4)), np.empty(4)
    for k in range(gather.shape[0]):
        g = gather[k]
        a = axis[k]
        d = _geometry(qe, ve, g, S, dA, D, x, w)
        z, rho = _frame(x, a, e1, e3)
        delta = R[k] - rho
        on = delta > 0.0 and rho > 0.0
        dp = delta if on else 0.0
        ddot = -(e1[0] * w[0] + e1[1] * w[1] + e1[2] * w[2])
        zdot = a[0] * w[0] + a[1] * w[1] + a[2] * w[2]
        vt = e3[0] * w[0] + e3[1] * w[1] + e3[2] * w[2]
        dn1 = dp ** (nexp[k] - 1.0) if on else 0.0
        Kdn = K[k] * dn1 * dp
        raw = Kdn + c[k] * ddot
        pos = on and raw > 0.0
        Fn = raw if pos else 0.0
        Fa = -(ka[k] * z + ca[k] * zdot) if on else 0.0
        phi = mu_over_s[k] * vt
        ft = -Fn * phi
        for i in range(3):
            f[i] = Fn * e1[i] + Fa * a[i] + ft * e3[i]
        for m in range(10):
            r[k, m] = -(D[0, m] * f[0] + D[1, m] * f[1] + D[2, m] * f[2])
        parts[k, 0], parts[k, 1], parts[k, 2], parts[k, 3], parts[k, 4] = Fn, Fa, ft, vt, delta
        parts[k, 5], parts[k, 6], parts[k, 7], parts[k, 8] = Kdn, ddot, z, zdot
        if not want_blocks:
            continue
        # local derivatives (docs/theory-ropes.md §2.4)
        for i in range(3):
            for j in range(3):
                E[i, j] = (((1.0 if i == j else 0.0) - a[i] * a[j] - e1[i] * e1[j]) / rho) if on else 0.0
        for j in range(3):                   # de3/dx = -[a]x E
            dE3[0, j] = -(a[1] * E[2, j] - a[2] * E[1, j])
            dE3[1, j] = -(a[2] * E[0, j] - a[0] * E[2, j])
            dE3[2, j] = -(a[0] * E[1, j] - a[1] * E[0, j])
        Fd = nexp[k] * K[k] * dn1 if pos else 0.0
        Fv = c[k] if pos else 0.0
        kaa = ka[k] if on else 0.0
        caa = ca[k] if on else 0.0
        for j in range(3):
            wE = w[0] * E[0, j] + w[1] * E[1, j] + w[2] * E[2, j]
            dFn_x[j] = -Fd * e1[j] - Fv * wE
            dFn_w[j] = -Fv * e1[j]
            dvt_x[j] = w[0] * dE3[0, j] + w[1] * dE3[1, j] + w[2] * dE3[2, j]
            dft_x[j] = -phi * dFn_x[j] - Fn * dmu[k] * dvt_x[j]
            dft_w[j] = -phi * dFn_w[j] - Fn * dmu[k] * e3[j]
        for i in range(3):
            for j in range(3):
                Fx[i, j] = (e1[i] * dFn_x[j] + Fn * E[i, j] - a[i] * kaa * a[j] + e3[i] * dft_x[j]
                            + ft * dE3[i, j])
                Fw[i, j] = e1[i] * dFn_w[j] - a[i] * caa * a[j] + e3[i] * dft_w[j]
        pair_blocks(ve, g, S, dA, d, D, f, Fx, Fw, cK, cC, Hv, FxD, FwD, FwHv, M, pd, blk[k])


@njit(cache=True)
def evaluate_pairs(qe, ve, gather, axis, S, R, K, c, nexp, ka, ca, fkind, fpar, cK, cC, want_blocks, r, blk, parts):
    """:func:`slip_kernel`, the built-in friction laws at ``|v_t|`` (``fkind``/``fpar`` per pair as
    ``FrictionTable.kind``/``p``, -1: no friction; :func:`flexmb.compiled.contact.friction_coefficient`, the same
    formulas as ``FrictionTable.coefficient``), then :func:`contact_kernel` (residual ``r`` (n, 10), blocks ``blk``
    and ``parts`` (n, 9)) for every pair in one call."""
    n = gather.shape[0]
    vt, mus, dmu = np.empty(n), np.zeros(n), np.zeros(n)
    slip_kernel(qe, ve, gather, axis, S, vt)
    for k in range(n):
        if fkind[k] >= 0:
            _, dmu[k], mus[k] = friction_coefficient(fkind[k], fpar[k, 0], fpar[k, 1], fpar[k, 2], abs(vt[k]))
    contact_kernel(qe, ve, gather, axis, S, R, K, c, nexp, ka, ca, mus, dmu, cK, cC, want_blocks, r, blk, parts)


@njit(cache=True)
def pairs_power(parts, R, ka):
    """Power (W, <= 0) of the pairs' radial and axial damping and friction from the ``parts`` (n, 9) of
    :func:`contact_kernel`: ``sum -(F_n - K delta^n) delta_dot + (F_a + k_a z) z_dot + f_t v_t``, the axial term of
    touching pairs only (``RopePulleyGroup.power``, docs/theory-ropes.md §2.3)."""
    P = 0.0
    for k in range(parts.shape[0]):
        delta, z, zdot = parts[k, 4], parts[k, 7], parts[k, 8]
        axial = (parts[k, 1] + ka[k] * z) * zdot if (delta > 0.0 and delta < R[k]) else 0.0
        P += -(parts[k, 0] - parts[k, 5]) * parts[k, 6] + axial + parts[k, 2] * parts[k, 3]
    return P
