"""Compiled residual of all rigid bodies: Newton-Euler equations in Euler parameters.

For a body with mass m, body-frame inertia J and Euler parameters p (Nikravesh 1988, §11.2;
Haug 1989, §11.3):

    r_r = m (r_dd - g),        r_p = 4 G^T J G p_dd - 8 G(p_d)^T J G(p_d) p,      G = G(p),

and its derivatives ``K = dr/dq``, ``C = dr/dv``, ``M = dr/dv_dot`` (docs/theory.md §3):

    d(4 G^T J G p_dd)/dp = 4 T(J G p_dd) - 4 G^T J G(p_dd),   d(-Q_v)/dp = -8 G(p_d)^T J G(p_d),
    d(-Q_v)/dp_d = 8 T(J G p_d) + 8 G(p_d)^T J G,

with ``T(y) = [[0, -y^T], [y, -y~]]`` (``G(p)^T y = T(y) p``).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .rotations import matrix_G


@njit(cache=True)
def rigid_residual(q, v, vdot, idx, mass, J, gravity, cM, cC, cK, with_matrix, r, blk):
    """Residual ``r`` (n, 7) of every body and, when ``with_matrix``, ``blk`` (n, 7, 7) =
    ``cM M + cC C + cK K`` in the body's coordinates ``(r, p)`` (``idx`` (n, 7) into q)."""
    n = idx.shape[0]
    Gp = np.empty((3, 4))
    Gd = np.empty((3, 4))
    Ga = np.empty((3, 4))
    JG = np.empty((3, 4))
    JGd = np.empty((3, 4))
    p = np.empty(4)
    pd = np.empty(4)
    pdd = np.empty(4)
    w = np.empty(3)
    y = np.empty(3)
    x = np.empty(3)
    for b in range(n):
        for k in range(4):
            p[k] = q[idx[b, 3 + k]]
            pd[k] = v[idx[b, 3 + k]]
            pdd[k] = vdot[idx[b, 3 + k]]
        for k in range(3):
            r[b, k] = mass[b] * (vdot[idx[b, k]] - gravity[k])
        matrix_G(p, Gp)
        matrix_G(pd, Gd)
        for i in range(3):
            for c in range(4):
                s = 0.0
                t = 0.0
                for k in range(3):
                    s += J[b, i, k] * Gp[k, c]
                    t += J[b, i, k] * Gd[k, c]
                JG[i, c] = s
                JGd[i, c] = t
        # w = G(pd) p (body angular velocity / 2); x = J w; y = J G pdd
        for i in range(3):
            s = 0.0
            t = 0.0
            for c in range(4):
                s += Gd[i, c] * p[c]
                t += JG[i, c] * pdd[c]
            w[i] = s
            y[i] = t
        for i in range(3):
            x[i] = J[b, i, 0] * w[0] + J[b, i, 1] * w[1] + J[b, i, 2] * w[2]
        for a in range(4):
            s = 0.0
            for k in range(3):
                s += 4.0 * Gp[k, a] * y[k] - 8.0 * Gd[k, a] * x[k]
            r[b, 3 + a] = s
        if not with_matrix:
            continue
        for i in range(7):
            for j in range(7):
                blk[b, i, j] = 0.0
        for k in range(3):
            blk[b, k, k] = cM * mass[b]
        if cK != 0.0:
            matrix_G(pdd, Ga)
            for i in range(3):          # JGd <- J G(pdd)
                for c in range(4):
                    JGd[i, c] = J[b, i, 0] * Ga[0, c] + J[b, i, 1] * Ga[1, c] + J[b, i, 2] * Ga[2, c]
        for a in range(4):
            for c in range(4):
                mpp = 0.0
                dgg = 0.0
                dq = 0.0
                cqp = 0.0
                for k in range(3):
                    mpp += Gp[k, a] * JG[k, c]
                    cqp += Gd[k, a] * JG[k, c]
                blk[b, 3 + a, 3 + c] = 4.0 * cM * mpp
                if cK != 0.0:
                    for k in range(3):
                        dgg += Gp[k, a] * JGd[k, c]
                        s = J[b, k, 0] * Gd[0, c] + J[b, k, 1] * Gd[1, c] + J[b, k, 2] * Gd[2, c]
                        dq += Gd[k, a] * s
                    blk[b, 3 + a, 3 + c] += cK * (-4.0 * dgg - 8.0 * dq)
                if cC != 0.0:
                    blk[b, 3 + a, 3 + c] += cC * 8.0 * cqp
        if cK != 0.0:
            _add_T(blk, b, 4.0 * cK, y)
        if cC != 0.0:
            for i in range(3):
                s = 0.0
                for c in range(4):
                    s += JG[i, c] * pd[c]
                x[i] = s
            _add_T(blk, b, 8.0 * cC, x)


@njit(cache=True, inline="always")
def _add_T(blk, b, c, y):
    """``blk[b, 3:, 3:] += c T(y)``, ``T(y) = [[0, -y^T], [y, -y~]]``."""
    for k in range(3):
        blk[b, 3, 4 + k] -= c * y[k]
        blk[b, 4 + k, 3] += c * y[k]
    blk[b, 4, 5] += c * y[2]
    blk[b, 4, 6] -= c * y[1]
    blk[b, 5, 4] -= c * y[2]
    blk[b, 5, 6] += c * y[0]
    blk[b, 6, 4] += c * y[1]
    blk[b, 6, 5] -= c * y[0]


@njit(cache=True)
def rigid_energies(q, v, idx, mass, J, gravity):
    """Kinetic energy ``sum m |r_d|^2 / 2 + w'^T J w' / 2`` (``w' = 2 G(p) p_d``, body-fixed) and potential
    ``-sum m g . r`` of every body (J), as ``RigidBodyGroup.kinetic_energy`` / ``potential_energy``."""
    G = np.empty((3, 4))
    w = np.empty(3)
    T = 0.0
    V = 0.0
    for b in range(idx.shape[0]):
        i = idx[b]
        for a in range(3):
            T += 0.5 * mass[b] * v[i[a]] * v[i[a]]
            V -= mass[b] * gravity[a] * q[i[a]]
        matrix_G(q[i[3:7]], G)
        for a in range(3):
            s = 0.0
            for c in range(4):
                s += G[a, c] * v[i[3 + c]]
            w[a] = 2.0 * s
        for a in range(3):
            for c in range(3):
                T += 0.5 * w[a] * J[b, a, c] * w[c]
    return T, V
