"""Kinematic expressions of a body pair for compiled kernels, one instance per call.

The compiled counterpart of :mod:`flexmb.kinematics` (docs/theory.md §2): joints and two-body force
elements act on a body pair ``(i, j)`` with coordinates ``x = (r_i, p_i, r_j, p_j, eta_i, eta_j)``
(14 frame coordinates, then ``m_i`` and ``m_j`` modal ones; ``nx = x.size``). A body-fixed point or
vector of a flexible body is affine in its modal coordinates, ``u = u0 + S eta`` (``S`` (3, m): the
mode shapes at an attachment, docs/theory-flexible.md §3); a rigid side has ``m = 0``.
Each expression comes in three parts, so a kernel computes only what it needs:

* value and gradient ``d val/dx`` (``name``),
* the velocity-quadratic part of the second time derivative ``xd^T (d2 val/dx2) xd`` (``name_quad``,
  the acceleration right-hand side ``gamma``),
* the weighted Hessian ``sum_k w_k d2 val_k/dx2`` (``name_hess``).

Conventions: every output is *accumulated* (``+=``) into caller-provided arrays, which the caller
zeroes (jac (3, nx) for vectors, (nx,) for scalars; H (nx, nx)); scalars are returned. ``side`` is 0
for body i, 1 for body j; ``mc`` is the column of ``x`` holding the side's first modal coordinate
(14 for body i, ``14 + m_i`` for body j) and ``m`` its number of modes (0: rigid or ground).
The closed forms rest on ``w . A(p) u = p^T Q(w, u) p - w . u`` (docs/theory.md §1.2): the
gradient of ``w . A u`` by ``p`` is ``B(p, u)^T w = 2 Q(w, u) p``, its Hessian ``2 Q(w, u)``.
Nikravesh, *Computer-Aided Analysis of Mechanical Systems* (1988), §6.3-6.4; Haug, *Computer-Aided
Kinematics and Dynamics of Mechanical Systems* (1989), §9.

The helpers are ordinary ``@njit`` functions, compiled once per argument types and inlined by LLVM into
the calling kernels (``inline="always"``, numba's IR-level inlining, tripled the compile time and was
not faster). Numba's disk cache of a calling kernel does not notice an edit of this module: clear the
caches (``__pycache__/*.nbi``, ``*.nbc``) of the calling modules after changing it.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit


@njit(cache=True)
def pair_state(qe, ve, cols, x, xd):
    """The coordinates ``x`` and velocities ``xd`` of one pair (gathered from the extended vectors)."""
    for c in range(cols.shape[0]):
        x[c] = qe[cols[c]]
        xd[c] = ve[cols[c]]


@njit(cache=True)
def body_point(x, u0, S, mc, m, u):
    """``u = u0 + S eta`` (3,): the body-fixed vector at the state (m, or unitless for directions)."""
    for a in range(3):
        s = u0[a]
        for k in range(m):
            s += S[a, k] * x[mc + k]
        u[a] = s


@njit(cache=True)
def attached(x, side, u0, S, mc, m, sign, u, val, jac):
    """``sign * A(p) u`` with ``u = u0 + S eta`` on one side: writes ``u``, adds the value to ``val`` (3,)
    and the gradient to ``jac`` (3, nx): ``B(p, u)`` in the ``p`` columns, ``A S`` in the modal ones."""
    ux, uy, uz = u0[0], u0[1], u0[2]
    for k in range(m):
        ek = x[mc + k]
        ux += S[0, k] * ek
        uy += S[1, k] * ek
        uz += S[2, k] * ek
    u[0] = ux
    u[1] = uy
    u[2] = uz
    pc = 3 + 7 * side
    e0, e1, e2, e3 = x[pc], x[pc + 1], x[pc + 2], x[pc + 3]
    d = 2.0 * e0 * e0 - 1.0
    a00 = d + 2.0 * e1 * e1
    a11 = d + 2.0 * e2 * e2
    a22 = d + 2.0 * e3 * e3
    a01 = 2.0 * (e1 * e2 - e0 * e3)
    a10 = 2.0 * (e1 * e2 + e0 * e3)
    a02 = 2.0 * (e1 * e3 + e0 * e2)
    a20 = 2.0 * (e1 * e3 - e0 * e2)
    a12 = 2.0 * (e2 * e3 - e0 * e1)
    a21 = 2.0 * (e2 * e3 + e0 * e1)
    val[0] += sign * (a00 * ux + a01 * uy + a02 * uz)
    val[1] += sign * (a10 * ux + a11 * uy + a12 * uz)
    val[2] += sign * (a20 * ux + a21 * uy + a22 * uz)
    # B(p, u), Nikravesh eq. 6.57 form (the entries of compiled.rotations.jacobian_B)
    eu = e1 * ux + e2 * uy + e3 * uz
    s2 = 2.0 * sign
    jac[0, pc] += s2 * (2.0 * e0 * ux + e2 * uz - e3 * uy)
    jac[1, pc] += s2 * (2.0 * e0 * uy + e3 * ux - e1 * uz)
    jac[2, pc] += s2 * (2.0 * e0 * uz + e1 * uy - e2 * ux)
    jac[0, pc + 1] += s2 * (e1 * ux + eu)
    jac[0, pc + 2] += s2 * (e1 * uy + e0 * uz)
    jac[0, pc + 3] += s2 * (e1 * uz - e0 * uy)
    jac[1, pc + 1] += s2 * (e2 * ux - e0 * uz)
    jac[1, pc + 2] += s2 * (e2 * uy + eu)
    jac[1, pc + 3] += s2 * (e2 * uz + e0 * ux)
    jac[2, pc + 1] += s2 * (e3 * ux + e0 * uy)
    jac[2, pc + 2] += s2 * (e3 * uy - e0 * ux)
    jac[2, pc + 3] += s2 * (e3 * uz + eu)
    for k in range(m):
        t0, t1, t2 = S[0, k], S[1, k], S[2, k]
        jac[0, mc + k] += sign * (a00 * t0 + a01 * t1 + a02 * t2)
        jac[1, mc + k] += sign * (a10 * t0 + a11 * t1 + a12 * t2)
        jac[2, mc + k] += sign * (a20 * t0 + a21 * t1 + a22 * t2)


@njit(cache=True)
def attached_quad(x, xd, side, u, S, mc, m, sign, quad):
    """Adds ``sign`` times the quadratic rate of ``A(p) u`` to ``quad`` (3,):
    ``pd^T (d2 A u/dp2) pd = 4 (e0d^2 u + ed (ed . u) + e0d ed x u)`` plus, on a flexible side,
    ``2 B(p, S eta_dot) pd`` (docs/theory-flexible.md §3); ``u`` from :func:`attached`."""
    pc = 3 + 7 * side
    d0, d1, d2, d3 = xd[pc], xd[pc + 1], xd[pc + 2], xd[pc + 3]
    du = d1 * u[0] + d2 * u[1] + d3 * u[2]
    quad[0] += sign * 4.0 * (d0 * d0 * u[0] + d1 * du + d0 * (d2 * u[2] - d3 * u[1]))
    quad[1] += sign * 4.0 * (d0 * d0 * u[1] + d2 * du + d0 * (d3 * u[0] - d1 * u[2]))
    quad[2] += sign * 4.0 * (d0 * d0 * u[2] + d3 * du + d0 * (d1 * u[1] - d2 * u[0]))
    if m == 0:
        return
    v0 = 0.0
    v1 = 0.0
    v2 = 0.0
    for k in range(m):
        ek = xd[mc + k]
        v0 += S[0, k] * ek
        v1 += S[1, k] * ek
        v2 += S[2, k] * ek
    # B(p, v) pd: the derivative of A(p) v along pd,
    # 4 e0 d0 v + 2 d (e . v) + 2 e (d . v) + 2 d0 e x v + 2 e0 d x v
    e0, e1, e2, e3 = x[pc], x[pc + 1], x[pc + 2], x[pc + 3]
    ev = e1 * v0 + e2 * v1 + e3 * v2
    dv = d1 * v0 + d2 * v1 + d3 * v2
    b0 = 4.0 * e0 * d0 * v0 + 2.0 * (d1 * ev + e1 * dv + d0 * (e2 * v2 - e3 * v1) + e0 * (d2 * v2 - d3 * v1))
    b1 = 4.0 * e0 * d0 * v1 + 2.0 * (d2 * ev + e2 * dv + d0 * (e3 * v0 - e1 * v2) + e0 * (d3 * v0 - d1 * v2))
    b2 = 4.0 * e0 * d0 * v2 + 2.0 * (d3 * ev + e3 * dv + d0 * (e1 * v1 - e2 * v0) + e0 * (d1 * v1 - d2 * v0))
    quad[0] += sign * 2.0 * b0
    quad[1] += sign * 2.0 * b1
    quad[2] += sign * 2.0 * b2


@njit(cache=True)
def attached_hess(x, side, u, S, mc, m, w, sign, H):
    """Adds ``sign * d2 (w . A(p) u)/dx2`` to ``H`` (nx, nx) for a fixed weight vector ``w`` (3,):
    ``2 Q(w, u)`` in the ``p p`` block and ``B(p, S_k)^T w = 2 Q(w, S_k) p`` in the ``p eta_k`` blocks."""
    pc = 3 + 7 * side
    w0, w1, w2 = w[0], w[1], w[2]
    c0 = u[1] * w2 - u[2] * w1
    c1 = u[2] * w0 - u[0] * w2
    c2 = u[0] * w1 - u[1] * w0
    s2 = 2.0 * sign
    H[pc, pc] += s2 * 2.0 * (w0 * u[0] + w1 * u[1] + w2 * u[2])
    H[pc, pc + 1] += s2 * c0
    H[pc, pc + 2] += s2 * c1
    H[pc, pc + 3] += s2 * c2
    H[pc + 1, pc] += s2 * c0
    H[pc + 2, pc] += s2 * c1
    H[pc + 3, pc] += s2 * c2
    for a in range(3):
        for b in range(3):
            H[pc + 1 + a, pc + 1 + b] += s2 * (w[a] * u[b] + u[a] * w[b])
    if m == 0:
        return
    e0, e1, e2, e3 = x[pc], x[pc + 1], x[pc + 2], x[pc + 3]
    for k in range(m):
        v0, v1, v2 = S[0, k], S[1, k], S[2, k]
        wv = w0 * v0 + w1 * v1 + w2 * v2
        ev = e1 * v0 + e2 * v1 + e3 * v2
        ew = e1 * w0 + e2 * w1 + e3 * w2
        c0 = v1 * w2 - v2 * w1
        c1 = v2 * w0 - v0 * w2
        c2 = v0 * w1 - v1 * w0
        g0 = s2 * (2.0 * wv * e0 + c0 * e1 + c1 * e2 + c2 * e3)
        g1 = s2 * (c0 * e0 + w0 * ev + v0 * ew)
        g2 = s2 * (c1 * e0 + w1 * ev + v1 * ew)
        g3 = s2 * (c2 * e0 + w2 * ev + v2 * ew)
        H[pc, mc + k] += g0
        H[pc + 1, mc + k] += g1
        H[pc + 2, mc + k] += g2
        H[pc + 3, mc + k] += g3
        H[mc + k, pc] += g0
        H[mc + k, pc + 1] += g1
        H[mc + k, pc + 2] += g2
        H[mc + k, pc + 3] += g3


@njit(cache=True)
def separation(x, u0_i, S_i, mc_i, m_i, u0_j, S_j, mc_j, m_j, u_i, u_j, val, jac):
    """``d = r_j + A_j u_j - r_i - A_i u_i`` (m): from a point of body i to one of body j; writes the
    body-fixed points ``u_i``, ``u_j`` and adds the value to ``val`` (3,), the gradient to ``jac`` (3, nx)."""
    i0_, i1_ = np.int64(0), np.int64(1)  # no literals (docs/architecture.md §2)
    for a in range(3):
        val[a] += x[7 + a] - x[a]
        jac[a, a] -= 1.0
        jac[a, 7 + a] += 1.0
    attached(x, i0_, u0_i, S_i, mc_i, m_i, -1.0, u_i, val, jac)
    attached(x, i1_, u0_j, S_j, mc_j, m_j, 1.0, u_j, val, jac)


@njit(cache=True)
def separation_quad(x, xd, u_i, S_i, mc_i, m_i, u_j, S_j, mc_j, m_j, quad):
    """Adds the quadratic rate of the separation (m/s^2) to ``quad`` (3,)."""
    i0_, i1_ = np.int64(0), np.int64(1)  # no literals (docs/architecture.md §2)
    attached_quad(x, xd, i0_, u_i, S_i, mc_i, m_i, -1.0, quad)
    attached_quad(x, xd, i1_, u_j, S_j, mc_j, m_j, 1.0, quad)


@njit(cache=True)
def separation_hess(x, u_i, S_i, mc_i, m_i, u_j, S_j, mc_j, m_j, w, H):
    """Adds ``d2 (w . d)/dx2`` to ``H``: ``-2 Q(w, u_i)`` and ``+2 Q(w, u_j)`` with their modal blocks."""
    i0_, i1_ = np.int64(0), np.int64(1)  # no literals (docs/architecture.md §2)
    attached_hess(x, i0_, u_i, S_i, mc_i, m_i, w, -1.0, H)
    attached_hess(x, i1_, u_j, S_j, mc_j, m_j, w, 1.0, H)


@njit(cache=True)
def rate(J, xd, out):
    """``out = J xd`` (3,): the first time derivative of a vector expression with gradient ``J`` (3, nx)."""
    for a in range(3):
        s = 0.0
        for c in range(J.shape[1]):
            s += J[a, c] * xd[c]
        out[a] = s


@njit(cache=True)
def dot(a, Ja, b, Jb, jac):
    """``a . b`` of two vector expressions (values (3,), gradients (3, nx)): returns the value and adds
    the gradient ``Ja^T b + Jb^T a`` to ``jac`` (nx,) (product rule)."""
    for c in range(jac.shape[0]):
        jac[c] += (Ja[0, c] * b[0] + Ja[1, c] * b[1] + Ja[2, c] * b[2]
                   + Jb[0, c] * a[0] + Jb[1, c] * a[1] + Jb[2, c] * a[2])
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@njit(cache=True)
def dot_quad(a, Ja, qa, b, Jb, qb, xd):
    """Quadratic rate of ``a . b``: ``a_q . b + a . b_q + 2 a_dot . b_dot`` (``qa``, ``qb`` the vectors'
    quadratic rates)."""
    s = 0.0
    for k in range(3):
        ad = 0.0
        bd = 0.0
        for c in range(xd.shape[0]):
            ad += Ja[k, c] * xd[c]
            bd += Jb[k, c] * xd[c]
        s += qa[k] * b[k] + a[k] * qb[k] + 2.0 * ad * bd
    return s


@njit(cache=True)
def dot_hess(Ja, Jb, w, H):
    """Adds the cross term ``w (Ja^T Jb + Jb^T Ja)`` of ``d2 (a . b)/dx2`` to ``H``; the caller adds the
    vectors' own Hessians with weights ``w b`` (for a) and ``w a`` (for b)."""
    nx = Ja.shape[1]
    for c in range(nx):
        a0, a1, a2 = Ja[0, c], Ja[1, c], Ja[2, c]
        if a0 == 0.0 and a1 == 0.0 and a2 == 0.0:
            continue
        for e in range(nx):
            s = w * (a0 * Jb[0, e] + a1 * Jb[1, e] + a2 * Jb[2, e])
            H[c, e] += s
            H[e, c] += s


@njit(cache=True)
def norm(d, Jd, jac):
    """Length ``l = |d|`` (must stay positive; callers check): returns ``l`` and adds ``Jd^T n`` to ``jac``
    (nx,), ``n = d / l``."""
    l = math.sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2])
    n0, n1, n2 = d[0] / l, d[1] / l, d[2] / l
    for c in range(jac.shape[0]):
        jac[c] += n0 * Jd[0, c] + n1 * Jd[1, c] + n2 * Jd[2, c]
    return l


@njit(cache=True)
def norm_quad(d, Jd, qd, l, xd):
    """Quadratic rate of ``|d|``: ``(d_dot . d_dot + d . d_q - l_dot^2) / l``."""
    dd = 0.0
    dq = 0.0
    ld = 0.0
    for k in range(3):
        r = 0.0
        for c in range(xd.shape[0]):
            r += Jd[k, c] * xd[c]
        dd += r * r
        dq += d[k] * qd[k]
        ld += d[k] * r
    ld /= l
    return (dd + dq - ld * ld) / l


@njit(cache=True)
def norm_hess(Jd, jl, l, w, H):
    """Adds ``w (Jd^T Jd - jl jl^T) / l`` to ``H`` (``jl`` the gradient of ``l``); the caller adds the
    Hessian of ``d`` with weight ``w n``."""
    nx = Jd.shape[1]
    f = w / l
    for c in range(nx):
        for e in range(nx):
            H[c, e] += f * (Jd[0, c] * Jd[0, e] + Jd[1, c] * Jd[1, e] + Jd[2, c] * Jd[2, e] - jl[c] * jl[e])


@njit(cache=True)
def angle(s, js, c, jc, reference, jac):
    """Rotation angle ``theta = atan2(s, c)`` (rad) unwrapped to within pi of ``reference``, from the
    projections ``s = g_i . f_j``, ``c = f_i . f_j`` with gradients ``js``, ``jc`` (nx,): returns theta and
    adds ``(c js - s jc) / rho^2`` to ``jac`` (docs/theory.md §2)."""
    r2 = s * s + c * c
    x = math.atan2(s, c) - reference
    val = reference + math.atan2(math.sin(x), math.cos(x))
    ts, tc = c / r2, -s / r2
    for k in range(jac.shape[0]):
        jac[k] += ts * js[k] + tc * jc[k]
    return val


@njit(cache=True)
def angle_quad(s, js, qs, c, jc, qc, xd):
    """Quadratic rate of the angle: ``theta_s s_q + theta_c c_q - 2 theta_dot (c c_dot + s s_dot)/rho^2``
    (``qs``, ``qc`` the quadratic rates of ``s`` and ``c``)."""
    r2 = s * s + c * c
    ts, tc = c / r2, -s / r2
    sd = 0.0
    cd = 0.0
    for k in range(xd.shape[0]):
        sd += js[k] * xd[k]
        cd += jc[k] * xd[k]
    thd = ts * sd + tc * cd
    return ts * qs + tc * qc - 2.0 * thd * (c * cd + s * sd) / r2


@njit(cache=True)
def angle_hess(s, js, c, jc, w, H):
    """Adds ``w [theta_ss (js js^T - jc jc^T) + theta_sc (js jc^T + jc js^T)]`` to ``H`` and returns the
    weights ``(w theta_s, w theta_c)`` with which the caller adds the Hessians of ``s`` and ``c``."""
    r2 = s * s + c * c
    tss = w * (-2.0 * c * s / (r2 * r2))
    tsc = w * ((s * s - c * c) / (r2 * r2))
    nx = js.shape[0]
    for a in range(nx):
        for b in range(nx):
            H[a, b] += tss * (js[a] * js[b] - jc[a] * jc[b]) + tsc * (js[a] * jc[b] + jc[a] * js[b])
    return w * c / r2, -w * s / r2


__all__ = ["body_point", "attached", "attached_quad", "attached_hess", "separation", "separation_quad",
           "separation_hess", "rate", "dot", "dot_quad", "dot_hess", "norm", "norm_quad", "norm_hess",
           "angle", "angle_quad", "angle_hess"]
