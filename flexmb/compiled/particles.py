"""Compiled kernels of particle sets and their spring-damper links (flexmb/forces/particles.py;
docs/theory-roller-chain.md §1-2).

``particle_kernel``: the residual ``r = m a - m g`` of every particle and its Newton block ``cM m I``.
``link_kernel``: linear spring-dampers between two particles, ``f = k (L - L0) + c L_dot`` along the unit vector
from the first to the second particle, with exact derivatives. Each kernel loops over all instances of all
elements in one call.
"""
from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def particle_kernel(q, v, a, gather, mass, g, cM, want_blocks, r, blk):
    """Residual ``r[k] = m_k (a_k - g)`` (N) of every particle k (gather (n, 3): its coordinates) and, when
    ``want_blocks``, the blocks ``cM m_k I`` (n, 3, 3). (Pedersen, Hansen & Ambrosio, eq. (1): ``m_r I q_r_ddot
    = f_r``; gravity is the system's.)"""
    for k in range(gather.shape[0]):
        m = mass[k]
        for i in range(3):
            r[k, i] = m * (a[gather[k, i]] - g[i])
        if want_blocks:
            for i in range(3):
                for j in range(3):
                    blk[k, i, j] = cM * m if i == j else 0.0


@njit(cache=True)
def particle_energy(q, v, gather, mass, g, out):
    """``out[0]`` kinetic energy ``sum m v^2 / 2``, ``out[1]`` gravity potential ``-sum m g . x`` (J)."""
    T, V = 0.0, 0.0
    for k in range(gather.shape[0]):
        m = mass[k]
        for i in range(3):
            vi = v[gather[k, i]]
            T += 0.5 * m * vi * vi
            V -= m * g[i] * q[gather[k, i]]
    out[0], out[1] = T, V


@njit(cache=True)
def link_kernel(qe, ve, gather, k_link, c_link, L0, cK, cC, want_blocks, r, blk, parts):
    """Spring-damper links between two particles (gather (n, 6): first particle's coordinates, then the
    second's). Tension ``f = k (L - L0) + c L_dot`` (N) along ``e = (x_2 - x_1) / L``; generalized forces
    ``Q_1 = f e``, ``Q_2 = -f e``, so ``r = -Q``. Blocks: ``cK dr/dq + cC dr/dv`` with
    ``dQ_2/dx_2 = -(k e e^T + (f / L)(I - e e^T) + c e (dL_dot/dx_2)^T)``,
    ``dL_dot/dx_2 = (I - e e^T) v_rel / L``, ``dQ_2/dv_2 = -c e e^T`` and the sign pattern (+, -, -, +) for the
    (1, 1), (1, 2), (2, 1), (2, 2) blocks of ``r``.
    ``parts`` (n, 3): tension f (N), length L (m), rate L_dot (m/s)."""
    d = np.empty(3)
    vr = np.empty(3)
    e = np.empty(3)
    Kq = np.empty((3, 3))
    Kv = np.empty((3, 3))
    for n in range(gather.shape[0]):
        g = gather[n]
        for i in range(3):
            d[i] = qe[g[3 + i]] - qe[g[i]]
            vr[i] = ve[g[3 + i]] - ve[g[i]]
        L = np.sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2])
        for i in range(3):
            e[i] = d[i] / L
        Ld = e[0] * vr[0] + e[1] * vr[1] + e[2] * vr[2]
        f = k_link[n] * (L - L0[n]) + c_link[n] * Ld
        for i in range(3):
            r[n, i] = -f * e[i]
            r[n, 3 + i] = f * e[i]
        parts[n, 0], parts[n, 1], parts[n, 2] = f, L, Ld
        if not want_blocks:
            continue
        # d(f e)/dx_2 = e (df/dx_2)^T + f (I - e e^T)/L, df/dx_2 = k e + c (I - e e^T) v_rel / L
        for i in range(3):
            for j in range(3):
                P = (1.0 if i == j else 0.0) - e[i] * e[j]
                w = vr[j] - Ld * e[j]                       # ((I - e e^T) v_rel)_j
                Kq[i, j] = k_link[n] * e[i] * e[j] + f * P / L + c_link[n] * e[i] * w / L
                Kv[i, j] = c_link[n] * e[i] * e[j]
        for i in range(3):
            for j in range(3):
                val = cK * Kq[i, j] + cC * Kv[i, j]
                blk[n, i, j] = val
                blk[n, i, 3 + j] = -val
                blk[n, 3 + i, j] = -val
                blk[n, 3 + i, 3 + j] = val


@njit(cache=True)
def anchor_kernel(q, v, gather, point, k_anchor, c_anchor, cK, cC, want_blocks, r, blk, parts):
    """Isotropic spring-dampers from particles to fixed points: ``Q = -k (x - x0) - c x_dot``, ``r = -Q``,
    blocks ``(cK k + cC c) I``; ``parts`` (n, 2): stored energy ``k |x - x0|^2 / 2`` (J) and damper power
    ``-c |x_dot|^2`` (W)."""
    for n in range(gather.shape[0]):
        V, P = 0.0, 0.0
        for i in range(3):
            dx = q[gather[n, i]] - point[n, i]
            vi = v[gather[n, i]]
            r[n, i] = k_anchor[n] * dx + c_anchor[n] * vi
            V += 0.5 * k_anchor[n] * dx * dx
            P -= c_anchor[n] * vi * vi
        parts[n, 0], parts[n, 1] = V, P
        if want_blocks:
            for i in range(3):
                for j in range(3):
                    blk[n, i, j] = (cK * k_anchor[n] + cC * c_anchor[n]) if i == j else 0.0


@njit(cache=True)
def damper_power(qe, ve, lgather, lc, agather, ac):
    """Power (W) of the link dampers ``-sum c L_dot^2`` (``L_dot = e . (x_2_dot - x_1_dot)``, ``e`` the unit vector
    from the first particle to the second) plus that of the anchor dampers ``-sum c |x_dot|^2``, as
    ``link_kernel``'s and ``anchor_kernel``'s parts without their forces and blocks (the energy balance's power at
    each accepted step)."""
    P = 0.0
    for n in range(lgather.shape[0]):
        g = lgather[n]
        dd, Ld = 0.0, 0.0
        for i in range(3):
            d = qe[g[3 + i]] - qe[g[i]]
            dd += d * d
            Ld += d * (ve[g[3 + i]] - ve[g[i]])
        Ld /= np.sqrt(dd)
        P -= lc[n] * Ld * Ld
    for n in range(agather.shape[0]):
        for i in range(3):
            vi = ve[agather[n, i]]
            P -= ac[n] * vi * vi
    return P
