"""Compiled kernel of the roller-sprocket contact (flexmb/contact/sprocket.py; docs/theory-roller-chain.md §3).

One instance is a (roller, sprocket) pair with 10 coordinates: the roller's position (3), the sprocket's
position (3) and Euler parameters (4). The kinematics ``x = d' = A^T (r_roller - r_sprocket)``, ``w = x_dot =
D q_dot`` and ``D = dx/dq`` are those of the rope-pulley contact (compiled/rope.py ``_geometry``); the local law
is the pseudo-penetration of the roller from its bedded seat (Pedersen, Hansen & Ambrosio, eq. (4)):

* seat j nearest to the roller's polar angle, at ``s_j = R_p u_r`` (``u_r`` the seat's radial unit vector,
  ``u_t = a x u_r``); ``e_r = u_r . x - R_p``, ``e_t = u_t . x``;
* radial: ``delta_r = -e_r`` (roller pressed below the pitch circle), gradient ``g_r = -u_r``;
* linear tooth flank: ``delta_t = |e_t| - tan(alpha) max(e_r, 0) - tan(beta) max(e_r - h_1, 0)`` (the gap
  between the flanks widens linearly above the seat, and faster above the flank's end h_1, the tip chamfer that
  makes the teeth pointed at the tip circle, so that the stored energy is continuous where a roller crosses it),
  gradient ``g_t = sign(e_t) u_t - (tan(alpha) [e_r > 0] + tan(beta) [e_r > h_1]) u_r``;
* each component with ``delta > 0`` while the roller is inside the tip circle (``rho < R_o``) gives
  ``F = K delta^n (1 + chi delta_dot)`` (Lankarani & Nikravesh 1994, with ``delta_dot = g . w``), clamped at 0,
  acting on the roller as ``f' = -F g`` (the gradient of ``K delta^(n+1) / (n+1)``, so the elastic part is
  conservative).

``r = -D^T f'``; its blocks are ``cK dr/dq + cC dr/dv`` with ``df'/dx = -sum F_delta g g^T``, ``df'/dw =
-sum F_delta_dot g g^T`` (the directions are constant within a seat) and the second derivatives of ``x(q)``.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from .rope import _geometry, pair_blocks


@njit(cache=True, inline="always")
def _component(delta, ddot, K, nexp, chi):
    """Force F >= 0 and dF/d delta, dF/d delta_dot of ``K delta^n (1 + chi delta_dot)``; zeros for delta <= 0."""
    if delta <= 0.0:
        return 0.0, 0.0, 0.0, 0.0
    dn1 = delta ** (nexp - 1.0)
    Kdn = K * dn1 * delta
    F = Kdn * (1.0 + chi * ddot)
    if F <= 0.0:
        return 0.0, 0.0, 0.0, Kdn
    return F, nexp * K * dn1 * (1.0 + chi * ddot), chi * Kdn, Kdn


@njit(cache=True)
def sprocket_kernel(qe, ve, gather, axis, b1, S, teeth, phase, Rp, Ro, tan_a, h1, tan_b, K, nexp, chi, ka, ca,
                    cK, cC, want_blocks, r, blk, parts):
    """Residual ``r = -D^T f'`` (n, 10) and blocks (n, 10, 10) of every (roller, sprocket) pair.

    ``ka``, ``ca``: axial guide stiffness (N/m) and damping (N s/m) of an engaged roller, ``f'_a = -(ka z + ca
    z_dot) a`` with ``z = a . x`` (the teeth keep the chain in the sprocket plane; 0 for a planar model).
    ``axis``, ``b1`` (n, 3): the sprocket axis and the in-plane direction of angle 0, body-fixed; seat j sits at
    the angle ``phase + 2 pi j / teeth`` from ``b1`` about ``axis``. ``parts`` (n, 8): radial force F_r, flank
    force F_t (N), delta_r, delta_t (m; also when apart), seat j, stored energy (J), damping power (W), rho (m).
    """
    dA, D = np.empty((4, 3, 3)), np.empty((3, 10))
    x, w = np.empty(3), np.empty(3)
    ur, ut, gt, f = np.empty(3), np.empty(3), np.empty(3), np.empty(3)
    Fx, Fw = np.empty((3, 3)), np.empty((3, 3))
    Hv, FxD, FwD, FwHv = np.empty((3, 10)), np.empty((3, 10)), np.empty((3, 10)), np.empty((3, 10))
    M = np.empty((3, 4))
    pd = np.empty(4)
    c2 = np.empty(3)
    for k in range(gather.shape[0]):
        g = gather[k]
        a = axis[k]
        c1 = b1[k]
        c2[0] = a[1] * c1[2] - a[2] * c1[1]
        c2[1] = a[2] * c1[0] - a[0] * c1[2]
        c2[2] = a[0] * c1[1] - a[1] * c1[0]
        d = _geometry(qe, ve, g, S, dA, D, x, w)
        x1 = c1[0] * x[0] + c1[1] * x[1] + c1[2] * x[2]
        x2 = c2[0] * x[0] + c2[1] * x[1] + c2[2] * x[2]
        rho = math.sqrt(x1 * x1 + x2 * x2)
        step = 2.0 * math.pi / teeth[k]
        j = math.floor((math.atan2(x2, x1) - phase[k]) / step + 0.5)
        th = phase[k] + j * step
        ct, sn = math.cos(th), math.sin(th)
        for i in range(3):
            ur[i] = ct * c1[i] + sn * c2[i]
            ut[i] = ct * c2[i] - sn * c1[i]
        er = ur[0] * x[0] + ur[1] * x[1] + ur[2] * x[2] - Rp[k]
        et = ut[0] * x[0] + ut[1] * x[1] + ut[2] * x[2]
        on = rho < Ro[k]
        sg = 1.0 if et >= 0.0 else -1.0
        slope = (tan_a[k] if er > 0.0 else 0.0) + (tan_b[k] if er > h1[k] else 0.0)
        for i in range(3):
            gt[i] = sg * ut[i] - slope * ur[i]
        dr = -er
        dt = abs(et) - (tan_a[k] * er if er > 0.0 else 0.0) - (tan_b[k] * (er - h1[k]) if er > h1[k] else 0.0)
        ddr = -(ur[0] * w[0] + ur[1] * w[1] + ur[2] * w[2])
        ddt = gt[0] * w[0] + gt[1] * w[1] + gt[2] * w[2]
        if not on:                            # outside the tip circle: no force, zero blocks
            for m in range(10):
                r[k, m] = 0.0
            parts[k, 0], parts[k, 1], parts[k, 2], parts[k, 3] = 0.0, 0.0, dr, dt
            parts[k, 4], parts[k, 5], parts[k, 6], parts[k, 7] = j % teeth[k], 0.0, 0.0, rho
            if want_blocks:
                for m in range(10):
                    for l in range(10):
                        blk[k, m, l] = 0.0
            continue
        if on:
            Fr, Fr_d, Fr_v, Kr = _component(dr, ddr, K[k], nexp[k], chi[k])
            Ft, Ft_d, Ft_v, Kt = _component(dt, ddt, K[k], nexp[k], chi[k])
        else:
            Fr, Fr_d, Fr_v, Kr = 0.0, 0.0, 0.0, 0.0
            Ft, Ft_d, Ft_v, Kt = 0.0, 0.0, 0.0, 0.0
        za = a[0] * x[0] + a[1] * x[1] + a[2] * x[2]
        zd = a[0] * w[0] + a[1] * w[1] + a[2] * w[2]
        kaa = ka[k] if on else 0.0
        caa = ca[k] if on else 0.0
        Fa = -(kaa * za + caa * zd)
        for i in range(3):                    # f' = -F_r g_r - F_t g_t + F_a a with g_r = -u_r
            f[i] = Fr * ur[i] - Ft * gt[i] + Fa * a[i]
        for m in range(10):
            r[k, m] = -(D[0, m] * f[0] + D[1, m] * f[1] + D[2, m] * f[2])
        V = 0.0
        if Kr > 0.0:
            V += Kr * dr / (nexp[k] + 1.0)
        if Kt > 0.0:
            V += Kt * dt / (nexp[k] + 1.0)
        V += 0.5 * kaa * za * za
        parts[k, 0], parts[k, 1], parts[k, 2], parts[k, 3] = Fr, Ft, dr, dt
        parts[k, 4], parts[k, 5] = j % teeth[k], V
        parts[k, 6] = -(Fr - Kr) * ddr - (Ft - Kt) * ddt - caa * zd * zd
        parts[k, 7] = rho
        if not want_blocks:
            continue
        for i in range(3):
            for jj in range(3):
                # g_r g_r^T = u_r u_r^T
                Fx[i, jj] = -Fr_d * ur[i] * ur[jj] - Ft_d * gt[i] * gt[jj] - kaa * a[i] * a[jj]
                Fw[i, jj] = -Fr_v * ur[i] * ur[jj] - Ft_v * gt[i] * gt[jj] - caa * a[i] * a[jj]
        pair_blocks(ve, g, S, dA, d, D, f, Fx, Fw, cK, cC, Hv, FxD, FwD, FwHv, M, pd, blk[k])
