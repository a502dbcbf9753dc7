"""Compiled kernel of the massless rope over sheaves (flexmb/contact/sheave_rope.py; docs/theory-ropes.md §9).

One instance is a rope: up to ``nb`` bodies (7 coordinates each: position, Euler parameters; padded with the
ground) and a list of *terms* whose sum is the rope length ``L(q)`` less a constant. A term couples a point P of
body X with a frame of body Y: ``d' = A_Y^T (r_X + A_X u_X - r_Y) - u_c`` in Y's frame, with components
``xi = (x, y, z)`` on Y's body-fixed unit vectors (e1', e2', n'), and

    f = c sqrt(|xi|^2 - a^2) + a asin(a / rho) + b atan2(y, x),      rho = sqrt(x^2 + y^2),   c = 1 or 0,

* a straight span between two points: c = 1, a = b = 0 (f = |d'|);
* a point P and a sheave of radius R (Y the sheave's body): c = 1, a = R, b = -s R for the span entering the sheave,
  +s R for the one leaving it (s = +1 when the rope runs counter-clockwise about n'): the free span to the tangent
  point and the point's share of the wrap arc R theta, up to a constant;
* a span between two coplanar sheaves (radii R1, R2, senses s1, s2; P = the centre of sheave 2): c = 1,
  a = s1 R1 - s2 R2, b = s1 R1 in sheave 1's frame, and c = 0, a = 0, b = -s2 R2 in sheave 2's frame (P = the
  centre of sheave 1): the common tangent and both sheaves' shares of their wraps.

``rope_kernel`` sums the terms into L, its gradient g = dL/dq and Hessian
H = d^2L/dq^2 over the rope's coordinates, then applies the tension-only law

    ell = ell(t) (unstretched length),   delta = L - ell,   delta_dot = g . q_dot - ell_dot,
    T = (EA/ell) (delta + tau delta_dot)   when delta > 0 and that is > 0, else 0,

residual ``r = T g`` (= -Q) and blocks ``cK (g (k g + k tau H q_dot)^T + T H) + cC k tau g g^T`` (k = EA/ell).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .rotations import rotation_matrix


@njit(cache=True)
def _term(qe, ve, g, bx, by, ux, uc, E, R, sigma, span, S, cols, fxi, hxi, Jd, Hd, A_Y, A_X, dAX, dAY):
    """One term: its value f, and (written) ``Jd`` (3, 14) = dd'/dq_local, ``Hd`` (3, 14, 14) its second
    derivatives, ``fxi`` (3) = df/dd', ``hxi`` (3, 3) = d^2 f/dd'^2; ``cols`` (14) the columns of the rope's
    local coordinates (body X then body Y). ``E`` (3, 3): rows e1', e2', n' in Y's frame."""
    for m in range(7):
        cols[m] = 7 * bx + m
        cols[7 + m] = 7 * by + m
    pX = np.empty(4)
    pY = np.empty(4)
    for a in range(4):
        pX[a] = qe[g[7 * bx + 3 + a]]
        pY[a] = qe[g[7 * by + 3 + a]]
    rotation_matrix(pX, A_X)
    rotation_matrix(pY, A_Y)
    for a in range(4):
        for k in range(3):
            for i in range(3):
                sx, sy = 0.0, 0.0
                for b in range(4):
                    sx += S[a, b, k, i] * pX[b]
                    sy += S[a, b, k, i] * pY[b]
                dAX[a, k, i] = sx
                dAY[a, k, i] = sy
    # w = r_X + A_X u_X - r_Y and dw/dp_X (4, 3)
    w = np.empty(3)
    Wp = np.empty((4, 3))
    for k in range(3):
        s = qe[g[7 * bx + k]] - qe[g[7 * by + k]]
        for i in range(3):
            s += A_X[k, i] * ux[i]
        w[k] = s
    for a in range(4):
        for k in range(3):
            s = 0.0
            for i in range(3):
                s += dAX[a, k, i] * ux[i]
            Wp[a, k] = s
    d = np.empty(3)
    for i in range(3):
        s = -uc[i]
        for k in range(3):
            s += A_Y[k, i] * w[k]
        d[i] = s
    for i in range(3):
        for m in range(14):
            Jd[i, m] = 0.0
            for l in range(14):
                Hd[i, m, l] = 0.0
        for k in range(3):
            Jd[i, k] = A_Y[k, i]
            Jd[i, 7 + k] = -A_Y[k, i]
        for a in range(4):
            s1, s2 = 0.0, 0.0
            for k in range(3):
                s1 += A_Y[k, i] * Wp[a, k]
                s2 += dAY[a, k, i] * w[k]
            Jd[i, 3 + a] = s1
            Jd[i, 10 + a] = s2
        # second derivatives
        for a in range(4):
            for b in range(4):
                sxx, syy = 0.0, 0.0
                for k in range(3):
                    su = 0.0
                    for j in range(3):
                        su += S[a, b, k, j] * ux[j]
                    sxx += A_Y[k, i] * su
                    syy += S[a, b, k, i] * w[k]
                Hd[i, 3 + a, 3 + b] = sxx
                Hd[i, 10 + a, 10 + b] = syy
            for k in range(3):
                Hd[i, 10 + a, k] = dAY[a, k, i]
                Hd[i, k, 10 + a] = dAY[a, k, i]
                Hd[i, 10 + a, 7 + k] = -dAY[a, k, i]
                Hd[i, 7 + k, 10 + a] = -dAY[a, k, i]
            for b in range(4):
                s = 0.0
                for k in range(3):
                    s += dAY[a, k, i] * Wp[b, k]
                Hd[i, 10 + a, 3 + b] = s
                Hd[i, 3 + b, 10 + a] = s
    # local components xi = E d'
    xi = np.empty(3)
    for r in range(3):
        xi[r] = E[r, 0] * d[0] + E[r, 1] * d[1] + E[r, 2] * d[2]
    x, y, z = xi[0], xi[1], xi[2]
    gl = np.zeros(3)
    hl = np.zeros((3, 3))
    # f = span * sqrt(|xi|^2 - a^2) + a asin(a/rho) + b atan2(y, x)   (module doc; a = R here, b = sigma)
    a = R
    b = sigma
    if span != 0.0:
        S2 = x * x + y * y + z * z - a * a
        if S2 < 1e-24:
            S2 = 1e-24
        Sv = np.sqrt(S2)
        f = Sv
        for r in range(3):
            gl[r] = xi[r] / Sv
            for c in range(3):
                hl[r, c] = ((1.0 if r == c else 0.0) - xi[r] * xi[c] / S2) / Sv
    else:
        f = 0.0
    if a != 0.0 or b != 0.0:
        rho2 = x * x + y * y
        rho = np.sqrt(rho2)
        u0, u1 = x / rho, y / rho
        if a != 0.0:
            Q2 = rho2 - a * a
            if Q2 < 1e-12 * a * a:
                Q2 = 1e-12 * a * a       # a point at (or inside) the sheave: clamped; the group reports it
            Q = np.sqrt(Q2)
            f += a * np.arcsin(max(min(a / rho, 1.0), -1.0))
            hp = -a * a / (rho * Q)
            hpp = a * a * (Q2 + rho2) / (rho2 * Q2 * Q)
            gl[0] += hp * u0
            gl[1] += hp * u1
            hl[0, 0] += hpp * u0 * u0 + hp / rho * (1.0 - u0 * u0)
            hl[0, 1] += hpp * u0 * u1 - hp / rho * u0 * u1
            hl[1, 0] += hpp * u0 * u1 - hp / rho * u0 * u1
            hl[1, 1] += hpp * u1 * u1 + hp / rho * (1.0 - u1 * u1)
        if b != 0.0:
            f += b * np.arctan2(y, x)
            gl[0] += -b * y / rho2
            gl[1] += b * x / rho2
            r4 = rho2 * rho2
            hl[0, 0] += b * 2.0 * x * y / r4
            hl[0, 1] += b * (y * y - x * x) / r4
            hl[1, 0] += b * (y * y - x * x) / r4
            hl[1, 1] += -b * 2.0 * x * y / r4
    # back to d': fxi = E^T gl, hxi = E^T hl E
    for i in range(3):
        fxi[i] = E[0, i] * gl[0] + E[1, i] * gl[1] + E[2, i] * gl[2]
        for j in range(3):
            s = 0.0
            for r in range(3):
                for c in range(3):
                    s += E[r, i] * hl[r, c] * E[c, j]
            hxi[i, j] = s
    return f


@njit(cache=True)
def rope_kernel(qe, ve, gather, term_start, tbx, tby, tux, tuc, tE, tR, tsig, tspan, S, const, ell, ell_dot, EA, tau,
                cK, cC, want_blocks, r, blk, parts, gout):
    """Residual ``r`` (n, K), blocks ``blk`` (n, K, K) (when ``want_blocks``), ``parts`` (n, 6): L, L_dot,
    T, T_el = EA delta/ell, delta, min clearance rho - R of its sheave terms (m), and ``gout`` (n, K) = dL/dq,
    of every rope (module doc)."""
    K = gather.shape[1]
    cols = np.empty(14, dtype=np.int64)
    fxi, hxi = np.empty(3), np.empty((3, 3))
    Jd, Hd = np.empty((3, 14)), np.empty((3, 14, 14))
    A_Y, A_X = np.empty((3, 3)), np.empty((3, 3))
    dAX, dAY = np.empty((4, 3, 3)), np.empty((4, 3, 3))
    gJ = np.empty(14)
    for n in range(gather.shape[0]):
        g = gather[n]
        L = const[n]
        gr = np.zeros(K)
        H = np.zeros((K, K))
        clear = 1e300
        for t in range(term_start[n], term_start[n + 1]):
            f = _term(qe, ve, g, tbx[t], tby[t], tux[t], tuc[t], tE[t], tR[t], tsig[t], tspan[t], S, cols, fxi, hxi,
                      Jd, Hd, A_Y, A_X, dAX, dAY)
            L += f
            if tR[t] != 0.0:
                clear = min(clear, _clearance(qe, g, tbx[t], tby[t], tux[t], tuc[t], tE[t], abs(tR[t]), A_X, A_Y))
            for m in range(14):
                s = 0.0
                for i in range(3):
                    s += fxi[i] * Jd[i, m]
                gJ[m] = s
                gr[cols[m]] += s
            if want_blocks:
                for m in range(14):
                    for l in range(14):
                        s = 0.0
                        for i in range(3):
                            s += fxi[i] * Hd[i, m, l]
                            for j in range(3):
                                s += Jd[i, m] * hxi[i, j] * Jd[j, l]
                        H[cols[m], cols[l]] += s
        Ldot = 0.0
        for m in range(K):
            Ldot += gr[m] * ve[g[m]]
        k = EA[n] / ell[n]
        delta = L - ell[n]
        ddot = Ldot - ell_dot[n]
        Tel = k * delta if delta > 0.0 else 0.0
        raw = k * (delta + tau[n] * ddot)
        taut = delta > 0.0 and raw > 0.0
        T = raw if taut else 0.0
        parts[n, 0], parts[n, 1], parts[n, 2], parts[n, 3], parts[n, 4] = L, Ldot, T, Tel, delta
        parts[n, 5] = clear
        for m in range(K):
            r[n, m] = T * gr[m]
            gout[n, m] = gr[m]
        if not want_blocks:
            continue
        for m in range(K):
            for l in range(K):
                blk[n, m, l] = 0.0
        if not taut:
            continue
        Hv = np.zeros(K)
        for m in range(K):
            s = 0.0
            for l in range(K):
                s += H[m, l] * ve[g[l]]
            Hv[m] = s
        kt = k * tau[n]
        for m in range(K):
            for l in range(K):
                blk[n, m, l] = (cK * (gr[m] * (k * gr[l] + kt * Hv[l]) + T * H[m, l])
                                + cC * kt * gr[m] * gr[l])


@njit(cache=True)
def _clearance(qe, g, bx, by, ux, uc, E, R, A_X, A_Y):
    """In-plane distance of the point from the sheave rim, rho - R (m); ``A_X``, ``A_Y`` as left by ``_term``."""
    d = np.empty(3)
    for i in range(3):
        s = -uc[i]
        for k in range(3):
            wk = qe[g[7 * bx + k]] - qe[g[7 * by + k]]
            for j in range(3):
                wk += A_X[k, j] * ux[j]
            s += A_Y[k, i] * wk
        d[i] = s
    x = E[0, 0] * d[0] + E[0, 1] * d[1] + E[0, 2] * d[2]
    y = E[1, 0] * d[0] + E[1, 1] * d[1] + E[1, 2] * d[2]
    return np.sqrt(x * x + y * y) - R
