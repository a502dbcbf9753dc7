"""Compiled constraint kernels, one pair per primitive kind (used by flexmb/joints/kernels.py).

For all rows of one kind (and one pair of modal-coordinate counts) the ``_<kind>_rows`` kernel writes the
residual ``Phi``, its gradient in the coordinates of the body pair (14 frame coordinates, then the modal ones
of flexible bodies) and the acceleration right-hand side ``gamma = -(Phi_q v)_q v - 2 Phi_qt v - Phi_tt``;
``_<kind>_hess`` writes the multiplier-weighted Hessian ``sum lambda_k d2 Phi_k/dq2`` (docs/theory.md §2-3).
Both loop over the instances and build each row from the pair expressions of :mod:`flexmb.compiled.pairs`.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .pairs import (angle, angle_hess, angle_quad, attached, attached_hess, attached_quad, body_point, dot,
                    dot_hess, dot_quad, pair_state, separation, separation_hess, separation_quad)
from .views import view


# -- compiled kernels --------------------------------------------------------------------------
# Common arguments: qe, ve the extended coordinates and velocities ([q, ground]); gather (n, nx) the
# pair columns of each instance; u0 (n, slots, 3) the body-fixed vectors at zero deformation and
# S (n, slots, 3, max(m_i, m_j)) their attachment shapes (SLOTS); m_i the modal count of body i;
# drive (3, n): f(t), f''(t) and the constant (distance L or coordinate index) of each instance.
# Evaluation kernels write phi (n r,), jac (n r, nx), gamma (n r,) -- gamma of size 0 skips the acceleration
# terms (the compiled step needs Phi and its Jacobian only); Hessian kernels H (n, nx, nx).
# Each kernel takes its temporaries as views of one work array (:func:`_work`; separate small arrays cost one
# allocation each, ~15 per kernel call, about a fifth of a small kernel's time), the accumulated ones first so
# that one loop zeroes them per instance. The views hold a reference to the work array (``view``, not ``borrow``:
# the array is made here, and a borrowed view would count on numba keeping it alive while they are used).

@njit(cache=True)
def _work(nx):
    """The work array of one kernel call: room for the largest layout (:func:`_angle_rows`, 27 + 13 nx)."""
    return np.empty(27 + 13 * nx)


@njit(cache=True)
def _zero(w, size):
    """``w[:size] = 0``."""
    for i in range(size):
        w[i] = 0.0


@njit(cache=True)
def _point_rows(qe, ve, gather, u0, S, m_i, drive, phi, jac, gamma):
    """``d = r_j + A_j u_j - r_i - A_i u_i`` (m, 3 rows), ``gamma = -d_quad`` (Haug 1989, §9.2)."""
    i14_ = np.int64(14)  # no literal (docs/architecture.md §2)
    n, nx = gather.shape
    m_j = nx - 14 - m_i
    with_gamma = gamma.size > 0
    w = _work(nx)
    d, q, ui, uj = view(w, 0, (3,)), view(w, 3, (3,)), view(w, 6, (3,)), view(w, 9, (3,))
    x, xd = view(w, 12, (nx,)), view(w, 12 + nx, (nx,))
    for k in range(n):
        pair_state(qe, ve, gather[k], x, xd)
        J = jac[3 * k:3 * k + 3]
        J.fill(0.0)
        _zero(w, 6)
        separation(x, u0[k, 0], S[k, 0], i14_, m_i, u0[k, 1], S[k, 1], 14 + m_i, m_j, ui, uj, d, J)
        for a in range(3):
            phi[3 * k + a] = d[a]
        if with_gamma:
            separation_quad(x, xd, ui, S[k, 0], i14_, m_i, uj, S[k, 1], 14 + m_i, m_j, q)
            for a in range(3):
                gamma[3 * k + a] = -q[a]


@njit(cache=True)
def _point_hess(qe, gather, u0, S, m_i, lam, H):
    """``sum_a lam_a d2 d_a/dx2``: ``-2 Q(lam, u_i)``, ``+2 Q(lam, u_j)`` and their modal blocks."""
    i14_ = np.int64(14)  # no literal (docs/architecture.md §2)
    n, nx = gather.shape
    m_j = nx - 14 - m_i
    w = _work(nx)
    ui, uj, x = view(w, 0, (3,)), view(w, 3, (3,)), view(w, 6, (nx,))
    for k in range(n):
        pair_state(qe, qe, gather[k], x, x)
        H[k].fill(0.0)
        body_point(x, u0[k, 0], S[k, 0], i14_, m_i, ui)
        body_point(x, u0[k, 1], S[k, 1], 14 + m_i, m_j, uj)
        separation_hess(x, ui, S[k, 0], i14_, m_i, uj, S[k, 1], 14 + m_i, m_j, lam[3 * k:3 * k + 3], H[k])


@njit(cache=True)
def _dot1_rows(qe, ve, gather, u0, S, m_i, drive, phi, jac, gamma):
    """``(A_i a_i) . (A_j a_j) - f(t)`` (Haug 1989, §9.2, dot-1)."""
    i0_, i14_, i1_ = np.int64(0), np.int64(14), np.int64(1)  # no literals (docs/architecture.md §2)
    n, nx = gather.shape
    m_j = nx - 14 - m_i
    with_gamma = gamma.size > 0
    w = _work(nx)
    va, vb, qa, qb = view(w, 0, (3,)), view(w, 3, (3,)), view(w, 6, (3,)), view(w, 9, (3,))
    Ja, Jb = view(w, 12, (3, nx)), view(w, 12 + 3 * nx, (3, nx))
    z = 12 + 6 * nx                     # the accumulated ones above, zeroed per instance
    ua, ub, x, xd = view(w, z, (3,)), view(w, z + 3, (3,)), view(w, z + 6, (nx,)), view(w, z + 6 + nx, (nx,))
    for k in range(n):
        pair_state(qe, ve, gather[k], x, xd)
        _zero(w, z)
        jac[k].fill(0.0)
        attached(x, i0_, u0[k, 0], S[k, 0], i14_, m_i, 1.0, ua, va, Ja)
        attached(x, i1_, u0[k, 1], S[k, 1], 14 + m_i, m_j, 1.0, ub, vb, Jb)
        phi[k] = dot(va, Ja, vb, Jb, jac[k]) - drive[0, k]
        if with_gamma:
            attached_quad(x, xd, i0_, ua, S[k, 0], i14_, m_i, 1.0, qa)
            attached_quad(x, xd, i1_, ub, S[k, 1], 14 + m_i, m_j, 1.0, qb)
            gamma[k] = drive[1, k] - dot_quad(va, Ja, qa, vb, Jb, qb, xd)


@njit(cache=True)
def _dot1_hess(qe, gather, u0, S, m_i, lam, H):
    """``lam (Ja^T Jb + Jb^T Ja) + H_a(lam b) + H_b(lam a)`` per instance."""
    i0_, i14_, i1_ = np.int64(0), np.int64(14), np.int64(1)  # no literals (docs/architecture.md §2)
    n, nx = gather.shape
    m_j = nx - 14 - m_i
    wk = _work(nx)
    va, vb = view(wk, 0, (3,)), view(wk, 3, (3,))
    Ja, Jb = view(wk, 6, (3, nx)), view(wk, 6 + 3 * nx, (3, nx))
    z = 6 + 6 * nx
    ua, ub, w, x = view(wk, z, (3,)), view(wk, z + 3, (3,)), view(wk, z + 6, (3,)), view(wk, z + 9, (nx,))
    for k in range(n):
        pair_state(qe, qe, gather[k], x, x)
        _zero(wk, z)
        H[k].fill(0.0)
        attached(x, i0_, u0[k, 0], S[k, 0], i14_, m_i, 1.0, ua, va, Ja)
        attached(x, i1_, u0[k, 1], S[k, 1], 14 + m_i, m_j, 1.0, ub, vb, Jb)
        dot_hess(Ja, Jb, lam[k], H[k])
        for a in range(3):
            w[a] = lam[k] * vb[a]
        attached_hess(x, i0_, ua, S[k, 0], i14_, m_i, w, 1.0, H[k])
        for a in range(3):
            w[a] = lam[k] * va[a]
        attached_hess(x, i1_, ub, S[k, 1], 14 + m_i, m_j, w, 1.0, H[k])


@njit(cache=True)
def _dot2_rows(qe, ve, gather, u0, S, m_i, drive, phi, jac, gamma):
    """``(A_i a_i) . d - f(t)`` (m; Haug 1989, §9.2, dot-2)."""
    i0_, i14_ = np.int64(0), np.int64(14)  # no literals (docs/architecture.md §2)
    n, nx = gather.shape
    m_j = nx - 14 - m_i
    with_gamma = gamma.size > 0
    w = _work(nx)
    va, d, qa, qd = view(w, 0, (3,)), view(w, 3, (3,)), view(w, 6, (3,)), view(w, 9, (3,))
    Ja, Jd = view(w, 12, (3, nx)), view(w, 12 + 3 * nx, (3, nx))
    z = 12 + 6 * nx
    ua, ui, uj = view(w, z, (3,)), view(w, z + 3, (3,)), view(w, z + 6, (3,))
    x, xd = view(w, z + 9, (nx,)), view(w, z + 9 + nx, (nx,))
    for k in range(n):
        pair_state(qe, ve, gather[k], x, xd)
        _zero(w, z)
        jac[k].fill(0.0)
        attached(x, i0_, u0[k, 0], S[k, 0], i14_, m_i, 1.0, ua, va, Ja)
        separation(x, u0[k, 1], S[k, 1], i14_, m_i, u0[k, 2], S[k, 2], 14 + m_i, m_j, ui, uj, d, Jd)
        phi[k] = dot(va, Ja, d, Jd, jac[k]) - drive[0, k]
        if with_gamma:
            attached_quad(x, xd, i0_, ua, S[k, 0], i14_, m_i, 1.0, qa)
            separation_quad(x, xd, ui, S[k, 1], i14_, m_i, uj, S[k, 2], 14 + m_i, m_j, qd)
            gamma[k] = drive[1, k] - dot_quad(va, Ja, qa, d, Jd, qd, xd)


@njit(cache=True)
def _dot2_hess(qe, gather, u0, S, m_i, lam, H):
    """``lam (Ja^T Jd + Jd^T Ja) + H_a(lam d) + H_d(lam a)`` per instance."""
    i0_, i14_ = np.int64(0), np.int64(14)  # no literals (docs/architecture.md §2)
    n, nx = gather.shape
    m_j = nx - 14 - m_i
    wk = _work(nx)
    va, d = view(wk, 0, (3,)), view(wk, 3, (3,))
    Ja, Jd = view(wk, 6, (3, nx)), view(wk, 6 + 3 * nx, (3, nx))
    z = 6 + 6 * nx
    ua, ui, uj, w = view(wk, z, (3,)), view(wk, z + 3, (3,)), view(wk, z + 6, (3,)), view(wk, z + 9, (3,))
    x = view(wk, z + 12, (nx,))
    for k in range(n):
        pair_state(qe, qe, gather[k], x, x)
        _zero(wk, z)
        H[k].fill(0.0)
        attached(x, i0_, u0[k, 0], S[k, 0], i14_, m_i, 1.0, ua, va, Ja)
        separation(x, u0[k, 1], S[k, 1], i14_, m_i, u0[k, 2], S[k, 2], 14 + m_i, m_j, ui, uj, d, Jd)
        dot_hess(Ja, Jd, lam[k], H[k])
        for a in range(3):
            w[a] = lam[k] * d[a]
        attached_hess(x, i0_, ua, S[k, 0], i14_, m_i, w, 1.0, H[k])
        for a in range(3):
            w[a] = lam[k] * va[a]
        separation_hess(x, ui, S[k, 1], i14_, m_i, uj, S[k, 2], 14 + m_i, m_j, w, H[k])


@njit(cache=True)
def _distance_rows(qe, ve, gather, u0, S, m_i, drive, phi, jac, gamma):
    """``(d . d - L^2) / 2 - f(t)`` (m^2; Haug 1989, §9.2)."""
    i14_ = np.int64(14)  # no literal (docs/architecture.md §2)
    n, nx = gather.shape
    m_j = nx - 14 - m_i
    with_gamma = gamma.size > 0
    w = _work(nx)
    d, qd, Jd, g = view(w, 0, (3,)), view(w, 3, (3,)), view(w, 6, (3, nx)), view(w, 6 + 3 * nx, (nx,))
    z = 6 + 4 * nx
    ui, uj, x, xd = view(w, z, (3,)), view(w, z + 3, (3,)), view(w, z + 6, (nx,)), view(w, z + 6 + nx, (nx,))
    for k in range(n):
        pair_state(qe, ve, gather[k], x, xd)
        _zero(w, z)
        separation(x, u0[k, 0], S[k, 0], i14_, m_i, u0[k, 1], S[k, 1], 14 + m_i, m_j, ui, uj, d, Jd)
        dd = dot(d, Jd, d, Jd, g)
        for c in range(nx):
            jac[k, c] = 0.5 * g[c]
        L = drive[2, k]
        phi[k] = 0.5 * (dd - L * L) - drive[0, k]
        if with_gamma:
            separation_quad(x, xd, ui, S[k, 0], i14_, m_i, uj, S[k, 1], 14 + m_i, m_j, qd)
            gamma[k] = drive[1, k] - 0.5 * dot_quad(d, Jd, qd, d, Jd, qd, xd)


@njit(cache=True)
def _distance_hess(qe, gather, u0, S, m_i, lam, H):
    """``lam Jd^T Jd + H_d(lam d)`` per instance."""
    i14_ = np.int64(14)  # no literal (docs/architecture.md §2)
    n, nx = gather.shape
    m_j = nx - 14 - m_i
    wk = _work(nx)
    d, Jd = view(wk, 0, (3,)), view(wk, 3, (3, nx))
    z = 3 + 3 * nx
    ui, uj, w, x = view(wk, z, (3,)), view(wk, z + 3, (3,)), view(wk, z + 6, (3,)), view(wk, z + 9, (nx,))
    for k in range(n):
        pair_state(qe, qe, gather[k], x, x)
        _zero(wk, z)
        H[k].fill(0.0)
        separation(x, u0[k, 0], S[k, 0], i14_, m_i, u0[k, 1], S[k, 1], 14 + m_i, m_j, ui, uj, d, Jd)
        dot_hess(Jd, Jd, 0.5 * lam[k], H[k])
        for a in range(3):
            w[a] = lam[k] * d[a]
        separation_hess(x, ui, S[k, 0], i14_, m_i, uj, S[k, 1], 14 + m_i, m_j, w, H[k])


@njit(cache=True)
def _angle_rows(qe, ve, gather, u0, S, m_i, drive, phi, jac, gamma):
    """``theta - f(t)`` (rad), ``theta = atan2(g_i . f_j, f_i . f_j)`` unwrapped to within pi of f(t)
    (docs/theory.md §2)."""
    i0_, i14_, i1_ = np.int64(0), np.int64(14), np.int64(1)  # no literals (docs/architecture.md §2)
    n, nx = gather.shape
    m_j = nx - 14 - m_i
    with_gamma = gamma.size > 0
    w = _work(nx)
    vf, vg, vh, qf, qg, qh = (view(w, 0, (3,)), view(w, 3, (3,)), view(w, 6, (3,)), view(w, 9, (3,)),
                              view(w, 12, (3,)), view(w, 15, (3,)))
    Jf, Jg, Jh = view(w, 18, (3, nx)), view(w, 18 + 3 * nx, (3, nx)), view(w, 18 + 6 * nx, (3, nx))
    js, jc = view(w, 18 + 9 * nx, (nx,)), view(w, 18 + 10 * nx, (nx,))
    z = 18 + 11 * nx
    uf, ug, uh = view(w, z, (3,)), view(w, z + 3, (3,)), view(w, z + 6, (3,))
    x, xd = view(w, z + 9, (nx,)), view(w, z + 9 + nx, (nx,))
    for k in range(n):
        pair_state(qe, ve, gather[k], x, xd)
        _zero(w, z)
        jac[k].fill(0.0)
        attached(x, i0_, u0[k, 0], S[k, 0], i14_, m_i, 1.0, uf, vf, Jf)          # f_i
        attached(x, i0_, u0[k, 1], S[k, 1], i14_, m_i, 1.0, ug, vg, Jg)          # g_i
        attached(x, i1_, u0[k, 2], S[k, 2], 14 + m_i, m_j, 1.0, uh, vh, Jh)    # f_j
        s = dot(vg, Jg, vh, Jh, js)
        c = dot(vf, Jf, vh, Jh, jc)
        f = drive[0, k]
        phi[k] = angle(s, js, c, jc, f, jac[k]) - f
        if with_gamma:
            attached_quad(x, xd, i0_, uf, S[k, 0], i14_, m_i, 1.0, qf)
            attached_quad(x, xd, i0_, ug, S[k, 1], i14_, m_i, 1.0, qg)
            attached_quad(x, xd, i1_, uh, S[k, 2], 14 + m_i, m_j, 1.0, qh)
            qs = dot_quad(vg, Jg, qg, vh, Jh, qh, xd)
            qc = dot_quad(vf, Jf, qf, vh, Jh, qh, xd)
            gamma[k] = drive[1, k] - angle_quad(s, js, qs, c, jc, qc, xd)


@njit(cache=True)
def _angle_hess(qe, gather, u0, S, m_i, lam, H):
    """``lam d2 theta/dx2`` per instance: the angle's own terms, then the Hessians of ``s`` and ``c``."""
    i0_, i14_, i1_ = np.int64(0), np.int64(14), np.int64(1)  # no literals (docs/architecture.md §2)
    n, nx = gather.shape
    m_j = nx - 14 - m_i
    wk = _work(nx)
    vf, vg, vh = view(wk, 0, (3,)), view(wk, 3, (3,)), view(wk, 6, (3,))
    Jf, Jg, Jh = view(wk, 9, (3, nx)), view(wk, 9 + 3 * nx, (3, nx)), view(wk, 9 + 6 * nx, (3, nx))
    js, jc = view(wk, 9 + 9 * nx, (nx,)), view(wk, 9 + 10 * nx, (nx,))
    z = 9 + 11 * nx
    uf, ug, uh, w = view(wk, z, (3,)), view(wk, z + 3, (3,)), view(wk, z + 6, (3,)), view(wk, z + 9, (3,))
    x = view(wk, z + 12, (nx,))
    for k in range(n):
        pair_state(qe, qe, gather[k], x, x)
        _zero(wk, z)
        H[k].fill(0.0)
        attached(x, i0_, u0[k, 0], S[k, 0], i14_, m_i, 1.0, uf, vf, Jf)
        attached(x, i0_, u0[k, 1], S[k, 1], i14_, m_i, 1.0, ug, vg, Jg)
        attached(x, i1_, u0[k, 2], S[k, 2], 14 + m_i, m_j, 1.0, uh, vh, Jh)
        s = dot(vg, Jg, vh, Jh, js)
        c = dot(vf, Jf, vh, Jh, jc)
        ws, wc = angle_hess(s, js, c, jc, lam[k], H[k])
        dot_hess(Jg, Jh, ws, H[k])                                            # s = g_i . f_j
        dot_hess(Jf, Jh, wc, H[k])                                            # c = f_i . f_j
        for a in range(3):
            w[a] = ws * vh[a]
        attached_hess(x, i0_, ug, S[k, 1], i14_, m_i, w, 1.0, H[k])
        for a in range(3):
            w[a] = wc * vh[a]
        attached_hess(x, i0_, uf, S[k, 0], i14_, m_i, w, 1.0, H[k])
        for a in range(3):
            w[a] = ws * vg[a] + wc * vf[a]
        attached_hess(x, i1_, uh, S[k, 2], 14 + m_i, m_j, w, 1.0, H[k])


@njit(cache=True)
def _coordinate_rows(qe, ve, gather, u0, S, m_i, drive, phi, jac, gamma):
    """``q_k - f(t)`` for the coordinate ``k`` of body j (m or 1; Haug 1989, §9.4)."""
    n = gather.shape[0]
    for k in range(n):
        c = 7 + int(drive[2, k])
        jac[k].fill(0.0)
        jac[k, c] = 1.0
        phi[k] = qe[gather[k, c]] - drive[0, k]
        if gamma.size:
            gamma[k] = drive[1, k]


@njit(cache=True)
def _coordinate_hess(qe, gather, u0, S, m_i, lam, H):
    """Coordinate rows are linear: zero Hessian."""
    H.fill(0.0)


KERNELS = {"point": (_point_rows, _point_hess), "dot1": (_dot1_rows, _dot1_hess), "dot2": (_dot2_rows, _dot2_hess),
           "distance": (_distance_rows, _distance_hess), "angle": (_angle_rows, _angle_hess),
           "coordinate": (_coordinate_rows, _coordinate_hess)}
