"""Compiled force-element kernels: spring-dampers, DC motors, applied loads, nodal loads and crash elements.

Each two-body element is a scalar force law on a measure of its body pair (flexmb/compiled/measures.py:
``measure_one`` for the measure, ``scalar_force_one`` for the residual and the blocks). Per family: springs
(``spring_kernel``), DC motors (``motor_kernel``), applied loads, nodal forces and nodal torques (``loads_kernel``,
``nodal_kernel``, ``nodal_torque_kernel``), crash elements (``crash_kernel``; ``hinge_law``, ``crush_law`` for the
once-per-step history updates). The contact kernels are in flexmb/compiled/contact.py.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from . import pairs as kp
from . import rotations as kr
from .measures import BAD_LENGTH, LENGTH, measure_one, scalar_force_one, workspace

@njit(cache=True)
def spring_kernel(code, qe, ve, gather, vec, shp, sides, mi, mj, ref, k, c, x0, cK, cC, want_blocks, x, xd, r, blk):
    """Linear spring-dampers ``f = k (x - x0) + c x_dot`` on the measures of all instances (docs/theory.md
    §3.3): ``x``, ``xd`` (n,), residual ``r`` (n, nx) and blocks ``blk`` (n, nx, nx) when ``want_blocks``.
    Returns the first instance whose ``LENGTH`` has no direction, or -1."""
    n, nx = gather.shape
    w = workspace(nx)
    xq = np.empty(nx)
    xv = np.empty(nx)
    g = np.empty(nx)
    hv = np.empty(nx)
    H = np.empty((nx, nx))
    hess = want_blocks and cK != 0.0
    for i in range(n):
        kp.pair_state(qe, ve, gather[i], xq, xv)
        x[i], xd[i] = measure_one(code, xq, xv, vec[i], shp[i], sides, mi, mj, ref[i], hess, g, H, w)
        if code == LENGTH and x[i] < BAD_LENGTH:
            return i
        f = k[i] * (x[i] - x0[i]) + c[i] * xd[i]
        scalar_force_one(g, H, xv, f, k[i], c[i], cK if hess else 0.0, cC, want_blocks, r[i],
                         blk[i] if want_blocks else H, hv)
    return -1


@njit(cache=True)
def motor_kernel(code, qe, ve, ae, gather, state, vec, shp, sides, mi, mj, ref, K_p, r_a, L_a, D, V, cM, cC, cK,
                 want_blocks, r, blk):
    """DC motors (flexmb/forces/motor.py, He 1992, §9.4): torque ``tau = K_p i - D omega`` on the relative
    rotation ``theta`` (measure ``code``, the ``ANGLE``; ``omega = theta_dot``) and the armature equation
    ``L_a di/dt + r_a i + K_p omega - V`` in the last column (the charge, index ``state``). Residual ``r``
    (n, nx + 1) and blocks ``cM M + cC C + cK K`` (n, nx + 1, nx + 1) when ``want_blocks``."""
    n, nx = gather.shape
    w = workspace(nx)
    xq = np.empty(nx)
    xv = np.empty(nx)
    g = np.empty(nx)
    hv = np.empty(nx)
    H = np.zeros((nx, nx))
    hess = want_blocks and cK != 0.0
    for i in range(n):
        kp.pair_state(qe, ve, gather[i], xq, xv)
        _, om = measure_one(code, xq, xv, vec[i], shp[i], sides, mi, mj, ref[i], hess, g, H, w)
        cur, dcur = ve[state[i]], ae[state[i]]
        tau = K_p[i] * cur - D[i] * om
        scalar_force_one(g, H, xv, -tau, 0.0, D[i], cK if hess else 0.0, cC, want_blocks, r[i, :nx],
                         blk[i, :nx, :nx], hv)
        r[i, nx] = L_a[i] * dcur + r_a[i] * cur + K_p[i] * om - V[i]
        if not want_blocks:
            continue
        for a in range(nx):        # d(K_p omega)/dq = K_p H v, d/dv = K_p grad theta; torque on the current
            t = 0.0
            if hess:
                for b in range(nx):
                    t += H[a, b] * xv[b]
            blk[i, nx, a] = cK * K_p[i] * t + cC * K_p[i] * g[a]
            blk[i, a, nx] = -cC * K_p[i] * g[a]
        blk[i, nx, nx] = cC * r_a[i] + cM * L_a[i]


# ---- applied loads and nodal forces (flexmb/forces/applied.py, nodal.py) -----------------------------------------

@njit(cache=True, inline="always")
def _torque_matrix(y, sgn, out):
    """``out[4, 4] = [[0, -y^T], [y, sgn y~]]``: ``E(p)^T y = out p`` for ``sgn = 1``, ``G(p)^T y = out p`` for
    ``sgn = -1`` (Nikravesh 1988, §6.3; rotations.T)."""
    out[0, 0] = 0.0
    for a in range(3):
        out[0, 1 + a] = -y[a]
        out[1 + a, 0] = y[a]
        out[1 + a, 1 + a] = 0.0
    out[1, 2] = -sgn * y[2]
    out[1, 3] = sgn * y[1]
    out[2, 1] = sgn * y[2]
    out[2, 3] = -sgn * y[0]
    out[3, 1] = -sgn * y[1]
    out[3, 2] = sgn * y[0]


@njit(cache=True)
def loads_kernel(q, v, idx, is_force, body_fixed, s, F, cK, want_blocks, r, blk):
    """Forces and torques on rigid bodies (docs/theory.md §3.3, Nikravesh 1988 §6.5), s' the body-fixed point:
    global force f: ``Q_r = f, Q_p = 2 Q(f, s') p``; body force f': ``Q_r = A f', Q_p = 2 G^T (s' x f')``;
    global torque n: ``Q_p = 2 E^T n``; body torque n': ``Q_p = 2 G^T n'``. Writes ``r = -Q`` (n, 7) and, when
    ``want_blocks``, ``blk = -cK dQ/dq`` (n, 7, 7); returns the power ``sum Q . v`` (W)."""
    n = idx.shape[0]
    p = np.empty(4)
    A = np.empty((3, 3))
    Bm = np.empty((3, 4))
    T = np.empty((4, 4))
    nb = np.empty(3)
    Q = np.empty(7)
    power = 0.0
    for i in range(n):
        for a in range(4):
            p[a] = q[idx[i, 3 + a]]
        f = F[i]
        for a in range(7):
            Q[a] = 0.0
        if want_blocks:
            for a in range(7):
                for b in range(7):
                    blk[i, a, b] = 0.0
        if is_force[i] and not body_fixed[i]:
            kr.quadratic_Q(f, s[i], T)
            for a in range(3):
                Q[a] = f[a]
            for a in range(4):
                for b in range(4):
                    T[a, b] *= 2.0
        elif is_force[i]:
            kr.rotation_matrix(p, A)
            si = s[i]
            nb[0] = si[1] * f[2] - si[2] * f[1]
            nb[1] = si[2] * f[0] - si[0] * f[2]
            nb[2] = si[0] * f[1] - si[1] * f[0]
            for a in range(3):
                Q[a] = A[a, 0] * f[0] + A[a, 1] * f[1] + A[a, 2] * f[2]
            _torque_matrix(nb, -1.0, T)
            for a in range(4):
                for b in range(4):
                    T[a, b] *= 2.0
            if want_blocks:
                kr.jacobian_B(p, f, Bm)
                for a in range(3):
                    for b in range(4):
                        blk[i, a, 3 + b] = -cK * Bm[a, b]
        else:
            _torque_matrix(f, -1.0 if body_fixed[i] else 1.0, T)
            for a in range(4):
                for b in range(4):
                    T[a, b] *= 2.0
        for a in range(4):
            Q[3 + a] = T[a, 0] * p[0] + T[a, 1] * p[1] + T[a, 2] * p[2] + T[a, 3] * p[3]
        if want_blocks:
            for a in range(4):
                for b in range(4):
                    blk[i, 3 + a, 3 + b] = -cK * T[a, b]
        for a in range(7):
            r[i, a] = -Q[a]
            power += Q[a] * v[idx[i, a]]
    return power


@njit(cache=True)
def nodal_kernel(q, v, idx, x0, phi, body_fixed, F, cK, want_blocks, r, blk):
    """Forces on mesh nodes of flexible bodies (docs/theory-flexible.md §3.1), ``u = x0 + Phi eta``:
    global f: ``Q_r = f, Q_p = B(p, u)^T f, Q_eta = Phi^T A^T f``; body-fixed f': ``Q_r = A f',
    Q_p = 2 G^T (u x f'), Q_eta = Phi^T f'``. Writes ``r = -Q`` (n, 7 + m) and, when ``want_blocks``,
    ``blk = -cK dQ/dq``; returns the power ``sum Q . v`` (W)."""
    n, nc = idx.shape
    m = nc - 7
    p = np.empty(4)
    pc = np.empty(4)
    u = np.empty(3)
    col = np.empty(3)
    nb = np.empty(3)
    A = np.empty((3, 3))
    Bm = np.empty((3, 4))
    G = np.empty((3, 4))
    T = np.empty((4, 4))
    Q = np.empty(nc)
    power = 0.0
    for i in range(n):
        for a in range(4):
            p[a] = q[idx[i, 3 + a]]
        f = F[i]
        P = phi[i]
        for a in range(3):
            t = x0[i, a]
            for k in range(m):
                t += P[a, k] * q[idx[i, 7 + k]]
            u[a] = t
        kr.rotation_matrix(p, A)
        for a in range(nc):
            Q[a] = 0.0
        if want_blocks:
            for a in range(nc):
                for b in range(nc):
                    blk[i, a, b] = 0.0
        if not body_fixed[i]:
            kr.jacobian_B(p, u, Bm)
            for a in range(3):
                Q[a] = f[a]
            for b in range(4):
                Q[3 + b] = Bm[0, b] * f[0] + Bm[1, b] * f[1] + Bm[2, b] * f[2]
            for a in range(3):            # A^T f
                col[a] = A[0, a] * f[0] + A[1, a] * f[1] + A[2, a] * f[2]
            for k in range(m):
                Q[7 + k] = P[0, k] * col[0] + P[1, k] * col[1] + P[2, k] * col[2]
            if want_blocks:
                kr.quadratic_Q(f, u, T)
                for a in range(4):
                    for b in range(4):
                        blk[i, 3 + a, 3 + b] = -cK * 2.0 * T[a, b]
                for k in range(m):        # B(p, Phi_k)^T f
                    for a in range(3):
                        col[a] = P[a, k]
                    kr.jacobian_B(p, col, Bm)
                    for b in range(4):
                        blk[i, 3 + b, 7 + k] = -cK * (Bm[0, b] * f[0] + Bm[1, b] * f[1] + Bm[2, b] * f[2])
                # d(A^T f)/dp = B(p*, f) diag(1, -1, -1, -1), p* = (e0, -e): A(p)^T = A(p*)
                pc[0] = p[0]
                for a in range(3):
                    pc[1 + a] = -p[1 + a]
                kr.jacobian_B(pc, f, Bm)
                for k in range(m):
                    for b in range(4):
                        t = P[0, k] * Bm[0, b] + P[1, k] * Bm[1, b] + P[2, k] * Bm[2, b]
                        blk[i, 7 + k, 3 + b] = -cK * (t if b == 0 else -t)
        else:
            nb[0] = u[1] * f[2] - u[2] * f[1]
            nb[1] = u[2] * f[0] - u[0] * f[2]
            nb[2] = u[0] * f[1] - u[1] * f[0]
            kr.matrix_G(p, G)
            for a in range(3):
                Q[a] = A[a, 0] * f[0] + A[a, 1] * f[1] + A[a, 2] * f[2]
            for b in range(4):
                Q[3 + b] = 2.0 * (G[0, b] * nb[0] + G[1, b] * nb[1] + G[2, b] * nb[2])
            for k in range(m):
                Q[7 + k] = P[0, k] * f[0] + P[1, k] * f[1] + P[2, k] * f[2]
            if want_blocks:
                kr.jacobian_B(p, f, Bm)
                for a in range(3):
                    for b in range(4):
                        blk[i, a, 3 + b] = -cK * Bm[a, b]
                _torque_matrix(nb, -1.0, T)
                for a in range(4):
                    for b in range(4):
                        blk[i, 3 + a, 3 + b] = -cK * 2.0 * T[a, b]
                for k in range(m):        # -2 G^T (f~ Phi_k)
                    col[0] = f[1] * P[2, k] - f[2] * P[1, k]
                    col[1] = f[2] * P[0, k] - f[0] * P[2, k]
                    col[2] = f[0] * P[1, k] - f[1] * P[0, k]
                    for b in range(4):
                        blk[i, 3 + b, 7 + k] = cK * 2.0 * (G[0, b] * col[0] + G[1, b] * col[1] + G[2, b] * col[2])
        for a in range(nc):
            r[i, a] = -Q[a]
            power += Q[a] * v[idx[i, a]]
    return power


@njit(cache=True, inline="always")
def _rotvec_tangent(psi, nf, Tt, W):
    """For a rotation vector ``psi`` (rad) with triad ``exp(psi~)`` (Argyris 1982) and a torque ``nf``:
    ``Tt = T(psi)^T`` and ``W = d(T(psi)^T nf)/dpsi`` (3, 3), where ``T = I + c1 psi~ + c2 psi~^2``,
    ``c1 = (1 - cos a)/a^2``, ``c2 = (a - sin a)/a^3``, ``a = |psi|`` is the tangent map of the exponential,
    ``(d exp(psi~)) exp(-psi~) = (T d psi)~`` (Cardona & Geradin 1988). ``T^T nf = nf - c1 psi x nf +
    c2 (psi (psi . nf) - a^2 nf)``; ``g1 = c1'(a)/a``, ``g2 = c2'(a)/a`` by series below a = 0.01."""
    s = psi[0] * psi[0] + psi[1] * psi[1] + psi[2] * psi[2]
    a = math.sqrt(s)
    if a < 1e-2:
        c1 = 0.5 - s / 24.0 + s * s / 720.0
        c2 = 1.0 / 6.0 - s / 120.0 + s * s / 5040.0
        g1 = -1.0 / 12.0 + s / 180.0 - s * s / 6720.0
        g2 = -1.0 / 60.0 + s / 1260.0 - s * s / 60480.0
    else:
        sa, ca = math.sin(a), math.cos(a)
        c1 = (1.0 - ca) / s
        c2 = (a - sa) / (s * a)
        g1 = (a * sa - 2.0 * (1.0 - ca)) / (s * s)
        g2 = (a * (1.0 - ca) - 3.0 * (a - sa)) / (s * s * a)
    pn = psi[0] * nf[0] + psi[1] * nf[1] + psi[2] * nf[2]
    cx0 = psi[1] * nf[2] - psi[2] * nf[1]          # psi x nf
    cx1 = psi[2] * nf[0] - psi[0] * nf[2]
    cx2 = psi[0] * nf[1] - psi[1] * nf[0]
    cx = (cx0, cx1, cx2)
    for a_ in range(3):
        for b in range(3):
            dab = 1.0 if a_ == b else 0.0
            # T^T = I - c1 psi~ + c2 (psi psi^T - a^2 I)
            Tt[a_, b] = dab * (1.0 - c2 * s) + c2 * psi[a_] * psi[b]
            W[a_, b] = (c2 * (pn * dab + psi[a_] * nf[b] - 2.0 * nf[a_] * psi[b])
                        - g1 * cx[a_] * psi[b] + g2 * (psi[a_] * pn - s * nf[a_]) * psi[b])
    Tt[0, 1] += c1 * psi[2]
    Tt[0, 2] -= c1 * psi[1]
    Tt[1, 0] -= c1 * psi[2]
    Tt[1, 2] += c1 * psi[0]
    Tt[2, 0] += c1 * psi[1]
    Tt[2, 1] -= c1 * psi[0]
    W[0, 1] -= c1 * nf[2]                           # + c1 nf~
    W[0, 2] += c1 * nf[1]
    W[1, 0] += c1 * nf[2]
    W[1, 2] -= c1 * nf[0]
    W[2, 0] -= c1 * nf[1]
    W[2, 1] += c1 * nf[0]


@njit(cache=True)
def nodal_torque_kernel(q, v, idx, psi_shape, rotvec, body_fixed, N, cK, want_blocks, r, blk):
    """Torques on mesh nodes of flexible bodies (docs/theory-flexible.md §3.1). The node turns with the frame
    and by its rotational coordinates ``psi = Psi eta`` (body axes): virtual rotation ``A (dpi' + T(psi) Psi
    d eta)`` (``T = I`` for the small nodal rotations of modal and NonlinearBeam bodies, the exponential's
    tangent map for ExactBeam rotation vectors, ``rotvec``). Virtual work of the torque: global n:
    ``Q_p = 2 E^T n, Q_eta = Psi^T T^T A^T n``; body-fixed n': ``Q_p = 2 G^T n', Q_eta = Psi^T T^T n'``
    (Shabana, Dynamics of Multibody Systems, 2005, Ch. 5). Writes ``r = -Q`` (n, 7 + m) and, when
    ``want_blocks``, ``blk = -cK dQ/dq``; returns the power ``sum Q . v`` (W)."""
    n, nc = idx.shape
    m = nc - 7
    p = np.empty(4)
    pc = np.empty(4)
    nf = np.empty(3)
    ps = np.empty(3)
    w = np.empty(3)
    A = np.empty((3, 3))
    Bm = np.empty((3, 4))
    T = np.empty((4, 4))
    Tt = np.empty((3, 3))
    W = np.empty((3, 3))
    TB = np.empty((3, 4))
    Q = np.empty(nc)
    power = 0.0
    for i in range(n):
        for a in range(4):
            p[a] = q[idx[i, 3 + a]]
        f = N[i]
        P = psi_shape[i]
        if body_fixed[i]:
            for a in range(3):
                nf[a] = f[a]
        else:
            kr.rotation_matrix(p, A)
            for a in range(3):            # A^T n
                nf[a] = A[0, a] * f[0] + A[1, a] * f[1] + A[2, a] * f[2]
        if rotvec[i]:
            for a in range(3):
                t = 0.0
                for k in range(m):
                    t += P[a, k] * q[idx[i, 7 + k]]
                ps[a] = t
            _rotvec_tangent(ps, nf, Tt, W)
            for a in range(3):
                w[a] = Tt[a, 0] * nf[0] + Tt[a, 1] * nf[1] + Tt[a, 2] * nf[2]
        else:
            for a in range(3):
                w[a] = nf[a]
                for b in range(3):
                    Tt[a, b] = 1.0 if a == b else 0.0
        _torque_matrix(f, -1.0 if body_fixed[i] else 1.0, T)
        for a in range(3):
            Q[a] = 0.0
        for a in range(4):
            Q[3 + a] = 2.0 * (T[a, 0] * p[0] + T[a, 1] * p[1] + T[a, 2] * p[2] + T[a, 3] * p[3])
        for k in range(m):
            Q[7 + k] = P[0, k] * w[0] + P[1, k] * w[1] + P[2, k] * w[2]
        if want_blocks:
            for a in range(nc):
                for b in range(nc):
                    blk[i, a, b] = 0.0
            for a in range(4):
                for b in range(4):
                    blk[i, 3 + a, 3 + b] = -cK * 2.0 * T[a, b]
            if not body_fixed[i]:
                # d(A^T n)/dp = B(p*, n) diag(1, -1, -1, -1), p* = (e0, -e): A(p)^T = A(p*)
                pc[0] = p[0]
                for a in range(3):
                    pc[1 + a] = -p[1 + a]
                kr.jacobian_B(pc, f, Bm)
                for a in range(3):
                    for b in range(4):
                        t = Tt[a, 0] * Bm[0, b] + Tt[a, 1] * Bm[1, b] + Tt[a, 2] * Bm[2, b]
                        TB[a, b] = t if b == 0 else -t
                for k in range(m):
                    for b in range(4):
                        blk[i, 7 + k, 3 + b] = -cK * (P[0, k] * TB[0, b] + P[1, k] * TB[1, b] + P[2, k] * TB[2, b])
            if rotvec[i]:                 # Psi^T W Psi
                for k in range(m):
                    for a in range(3):
                        w[a] = P[0, k] * W[0, a] + P[1, k] * W[1, a] + P[2, k] * W[2, a]
                    for l in range(m):
                        blk[i, 7 + k, 7 + l] = -cK * (w[0] * P[0, l] + w[1] * P[1, l] + w[2] * P[2, l])
        for a in range(nc):
            r[i, a] = -Q[a]
            power += Q[a] * v[idx[i, a]]
    return power


# ---- crash elements (flexmb/forces/crash.py, docs/theory-crash.md) ------------------------------------------------

@njit(cache=True, inline="always")
def _segment(B, v):
    """Index of the last breakpoint of the row ``B`` (+inf padded, increasing) not above ``v`` (0 below the
    first)."""
    j = 0
    for k in range(1, B.size):
        if B[k] <= v:
            j = k
    return j


@njit(cache=True, inline="always")
def _curve(X, Y, S, v):
    """Piecewise-linear curve value and slope at ``v`` (breakpoints ``X``, values ``Y``, slopes ``S``)."""
    j = _segment(X, v)
    return Y[j] + S[j] * (v - X[j]), S[j]


@njit(cache=True, inline="always")
def _hinge_one(theta, thd, theta_p, alpha, k, X, Y, S, P, has_rate, C, p, w0):
    """One plastic hinge (docs/theory-crash.md §1; Nikravesh, Chung & Benedict 1983, Ambrosio 2002
    eqs. 6-7): return mapping of the rate-independent moment ``M_s`` with tangent ``K_t`` and plastic state
    ``alpha'`` from the history (``theta_p``, ``alpha``), times the Cowper-Symonds factor ``R`` while
    loading. Returns ``(M = R M_s (N m), dM/dtheta, dM/dtheta_dot, M_s, K_t, alpha', R)``."""
    e = theta - theta_p
    ae = abs(e)
    sg = -1.0 if e < 0 else 1.0
    My, _ = _curve(X, Y, S, alpha)
    if k * ae > My:                                   # plastic: on the curve M_y(a) + k a = k (|e| + alpha)
        y = k * (ae + alpha)
        j = _segment(P, y)
        an = X[j] + (y - P[j]) / (S[j] + k)
        Ms = sg * (Y[j] + S[j] * (an - X[j]))
        Kt = k * S[j] / (S[j] + k)
    else:
        Ms = k * e
        Kt = k
        an = alpha
    w = abs(thd)
    cw = (w0 / C) ** (1.0 / p) / w0                   # chord slope below rate_min
    if w >= w0:
        phi = (w / C) ** (1.0 / p)
        dphi = phi / (p * w)
    else:
        phi = cw * w
        dphi = cw
    loading = has_rate and Ms * thd > 0
    R = 1.0 + (phi if loading else 0.0)
    return R * Ms, R * Kt, (abs(Ms) * dphi if loading else 0.0), Ms, Kt, an, R


@njit(cache=True, inline="always")
def _crush_one(L, L0, dm, ku, X, Y, S):
    """One crush element (docs/theory-crash.md §2): force ``F >= 0`` (N) from the curve while the crush
    ``delta = L0 - L`` (m) grows past its maximum ``dm``, elastic unloading/reloading with ``ku`` below it,
    never tension. Returns ``(F, dF/d delta (N/m), delta)``."""
    d = L0 - L
    if d >= dm:
        F, K = _curve(X, Y, S, max(d, 0.0))
        return F, K, d
    Fm, _ = _curve(X, Y, S, dm)
    Fu = Fm - ku * (dm - d)
    return max(Fu, 0.0), (ku if Fu > 0 else 0.0), d


@njit(cache=True)
def hinge_law(theta, thd, theta_p, alpha, k, X, Y, S, P, has_rate, C, p, w0, M, dM, dMd, Ms, Kt, a_new, R):
    """:func:`_hinge_one` for all hinges, into the arrays ``M .. R`` (n,)."""
    for i in range(theta.size):
        M[i], dM[i], dMd[i], Ms[i], Kt[i], a_new[i], R[i] = _hinge_one(
            theta[i], thd[i], theta_p[i], alpha[i], k[i], X[i], Y[i], S[i], P[i], has_rate[i], C[i], p[i], w0[i])


@njit(cache=True)
def crush_law(L, L0, max_crush, ku, X, Y, S, F, K, d):
    """:func:`_crush_one` for all crush elements, into ``F``, ``K``, ``d`` (n,)."""
    for i in range(L.size):
        F[i], K[i], d[i] = _crush_one(L[i], L0[i], max_crush[i], ku[i], X[i], Y[i], S[i])


@njit(cache=True)
def crash_kernel(hinge, code, qe, ve, gather, vec, shp, sides, mi, mj, ref, theta_p, alpha, k, P, has_rate, C, p,
                 w0, L0, max_crush, ku, X, Y, S, cC, cK, want_blocks, r, blk):
    """Plastic hinges (``hinge``, ``ANGLE`` measure, ``f = M``) or crush elements (``LENGTH``, ``f = -F``,
    ``df/dL = dF/d delta``) in one call: measure, law (:func:`_hinge_one`, :func:`_crush_one`) and the
    scalar-force helper. Residual ``r`` (n, nx), blocks ``cC C + cK K`` when ``want_blocks``. Returns -1,
    the instance whose ``LENGTH`` has no direction, or ``n + i`` when the law of instance ``i`` is not finite."""
    n, nx = gather.shape
    w = workspace(nx)
    xq = np.empty(nx)
    xv = np.empty(nx)
    g = np.empty(nx)
    hv = np.empty(nx)
    H = np.zeros((nx, nx))
    hess = want_blocks and cK != 0.0
    for i in range(n):
        kp.pair_state(qe, ve, gather[i], xq, xv)
        x, xd = measure_one(code, xq, xv, vec[i], shp[i], sides, mi, mj, ref[i], hess, g, H, w)
        if code == LENGTH and x < BAD_LENGTH:
            return i
        if hinge:
            f, f_x, f_xd, _, _, _, _ = _hinge_one(x, xd, theta_p[i], alpha[i], k[i], X[i], Y[i], S[i], P[i],
                                                  has_rate[i], C[i], p[i], w0[i])
        else:
            F, f_x, _ = _crush_one(x, L0[i], max_crush[i], ku[i], X[i], Y[i], S[i])
            f, f_xd = -F, 0.0
        if not math.isfinite(f):
            return n + i
        scalar_force_one(g, H, xv, f, f_x, f_xd, cK if hess else 0.0, cC, want_blocks, r[i],
                         blk[i] if want_blocks else H, hv)
    return -1
