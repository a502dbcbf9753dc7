"""One compiled generalized-alpha step for rigid multibody models (docs/architecture.md §5).

A model of rigid bodies joined by joint primitives (any of the six kinds, drivers included) and loaded by
gravity only spends a time step almost entirely in per-call overhead when each Newton iteration calls a
dozen compiled kernels from Python. :func:`alpha_step` runs the whole Newton iteration of one step in one
call: the predictor, the residual ``r = M vd - Q + Phi_q^T lambda`` and ``Phi`` (the same kernels as the
general assembly: :func:`~flexmb.compiled.rigid.rigid_residual`, the ``_<kind>_rows``/``_<kind>_hess``
kernels of :mod:`flexmb.compiled.joints`), the Newton matrix written into a dense array through the
position maps of the fixed pattern (flexmb/sparsity.py), a dense LU with partial pivoting that skips the
zeros of the (sparse) iteration matrix, the increment and the convergence test of
:meth:`flexmb.solvers.generalized_alpha.AlphaStepper.step`, whose arithmetic it repeats term by term
(Arnold & Bruls 2007; constraint scaling of Bottasso, Dopico & Trainelli 2008).

Kinds are numbered in the order of ``flexmb.joints.kernels.ROWS``: point, dot1, dot2, distance, angle,
coordinate; ``seg[k] = (first, end)`` primitive range and ``rowseg[k]`` its row range.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .joints import (_angle_hess, _angle_rows, _coordinate_hess, _coordinate_rows, _distance_hess,
                     _distance_rows, _dot1_hess, _dot1_rows, _dot2_hess, _dot2_rows, _point_hess, _point_rows)
from .rigid import rigid_residual
from .scatter import add_at, add_scaled_at, add_transpose_product
from .stepping import apply_increment, corrected_rates, newton_rhs, newton_weights, predict

CONVERGED, NONFINITE_RESIDUAL, SINGULAR, NONFINITE_INCREMENT, NO_CONVERGENCE = 0, 1, 2, 3, 4
"""Outcome codes of :func:`alpha_step`."""

PIVOT_RATIO_MIN = 1e-14
"""Smallest |pivot| ratio of a factorization accepted as regular (as flexmb.solvers.linalg's dense LU)."""


@njit(cache=True)
def lu_factor(A, piv):
    """In-place LU with partial pivoting (``P A = L U``, L unit lower) of a dense matrix that is mostly
    zeros: each elimination step updates only the rows with a non-zero multiplier and the columns where
    the pivot row is non-zero. Returns the ratio of the smallest to the largest |pivot| (0: singular)."""
    n = A.shape[0]
    cols = np.empty(n, dtype=np.int64)
    lo, hi = np.inf, 0.0
    for k in range(n):
        p, big = k, abs(A[k, k])
        for i in range(k + 1, n):
            x = abs(A[i, k])
            if x > big:
                p, big = i, x
        piv[k] = p
        if p != k:
            for j in range(n):
                A[k, j], A[p, j] = A[p, j], A[k, j]
        d = A[k, k]
        if not np.isfinite(d):
            return 0.0
        lo, hi = min(lo, abs(d)), max(hi, abs(d))
        if d == 0.0:
            continue
        nc = 0
        for j in range(k + 1, n):
            if A[k, j] != 0.0:
                cols[nc] = j
                nc += 1
        for i in range(k + 1, n):
            l = A[i, k]
            if l != 0.0:
                l /= d
                A[i, k] = l
                for c in range(nc):
                    j = cols[c]
                    A[i, j] -= l * A[k, j]
    if n == 0:
        return 1.0
    return lo / max(hi, 1e-300)


@njit(cache=True)
def lu_solve(LU, piv, b, x):
    """Solve ``A x = b`` with the factors of :func:`lu_factor` (x may be b)."""
    n = LU.shape[0]
    for i in range(n):
        x[i] = b[i]
    for k in range(n):
        p = piv[k]
        if p != k:
            x[k], x[p] = x[p], x[k]
    for i in range(n):
        s = x[i]
        for j in range(i):
            if LU[i, j] != 0.0:
                s -= LU[i, j] * x[j]
        x[i] = s
    for i in range(n - 1, -1, -1):
        s = x[i]
        for j in range(i + 1, n):
            if LU[i, j] != 0.0:
                s -= LU[i, j] * x[j]
        x[i] = s / LU[i, i]


@njit(cache=True)
def _joint_rows(kind, qe, ve, gather, u0, S, drive, phi, jac, gamma):
    if kind == 0:
        _point_rows(qe, ve, gather, u0, S, 0, drive, phi, jac, gamma)
    elif kind == 1:
        _dot1_rows(qe, ve, gather, u0, S, 0, drive, phi, jac, gamma)
    elif kind == 2:
        _dot2_rows(qe, ve, gather, u0, S, 0, drive, phi, jac, gamma)
    elif kind == 3:
        _distance_rows(qe, ve, gather, u0, S, 0, drive, phi, jac, gamma)
    elif kind == 4:
        _angle_rows(qe, ve, gather, u0, S, 0, drive, phi, jac, gamma)
    else:
        _coordinate_rows(qe, ve, gather, u0, S, 0, drive, phi, jac, gamma)


@njit(cache=True)
def _joint_hess(kind, qe, gather, u0, S, lam, H):
    if kind == 0:
        _point_hess(qe, gather, u0, S, 0, lam, H)
    elif kind == 1:
        _dot1_hess(qe, gather, u0, S, 0, lam, H)
    elif kind == 2:
        _dot2_hess(qe, gather, u0, S, 0, lam, H)
    elif kind == 3:
        _distance_hess(qe, gather, u0, S, 0, lam, H)
    elif kind == 4:
        _angle_hess(qe, gather, u0, S, 0, lam, H)
    else:
        _coordinate_hess(qe, gather, u0, S, 0, lam, H)


@njit(cache=True)
def rigid_equations(q, v, vd, lam, act, with_matrix, cM, cC, cK, cH,
                    idx, mass, J, gravity, pos_body,
                    gather, scatter, u0, S, drive, seg, rowseg, pos_jac, pos_jacT, pos_hess,
                    ncols, pos_norm_jac, pos_norm_jacT, pos_norm_hess, pos_D,
                    r, phi, vals):
    """Residual ``r`` (nq), constraint values ``phi`` (m: joint rows, then one normalization row per body)
    and, when ``with_matrix``, the Newton matrix ``[[cM M + cC C + cK K + cH H, Phi_q^T], [Phi_q, D]]``
    added into ``vals`` (flat, zeroed by the caller) at the pattern positions ``pos_*``. Rows with
    ``act`` False are switched off (zero row, 1 on the diagonal), as in ``Assembly.residual``."""
    nq = q.size
    nb = idx.shape[0]
    m = phi.size
    mj = m - nb
    qe = np.empty(nq + 7)
    ve = np.empty(nq + 7)
    for i in range(nq):
        qe[i] = q[i]
        ve[i] = v[i]
    for i in range(7):
        qe[nq + i] = 0.0
        ve[nq + i] = 0.0
    qe[nq + 3] = 1.0
    lam_act = np.empty(m)
    for i in range(m):
        lam_act[i] = lam[i] if act[i] else 0.0
    # bodies
    rb = np.empty((nb, 7))
    blk = np.empty((nb, 7, 7))
    rigid_residual(q, v, vd, idx, mass, J, gravity, cM, cC, cK, with_matrix, rb, blk)
    for i in range(nq):
        r[i] = 0.0
    add_at(r, idx.reshape(-1), rb.reshape(-1))
    if with_matrix:
        add_at(vals, pos_body, blk.reshape(-1))
    # joint primitives, one kernel per kind
    nx = gather.shape[1]
    jac = np.empty((mj, nx))
    gam = np.empty(mj)
    H = np.empty((gather.shape[0], nx, nx))
    for kind in range(6):
        a, b = seg[kind, 0], seg[kind, 1]
        if a == b:
            continue
        ra, rb_ = rowseg[kind, 0], rowseg[kind, 1]
        _joint_rows(kind, qe, ve, gather[a:b], u0[a:b], S[a:b], drive[:, a:b], phi[ra:rb_], jac[ra:rb_],
                    gam[ra:rb_])
        add_transpose_product(r, scatter[a:b], jac[ra:rb_], lam_act[ra:rb_], act[ra:rb_])
        if with_matrix and cH != 0.0:
            _joint_hess(kind, qe, gather[a:b], u0[a:b], S[a:b], lam_act[ra:rb_], H[a:b])
    for i in range(mj):
        if not act[i]:
            phi[i] = 0.0
            for x in range(nx):
                jac[i, x] = 0.0
    # Euler-parameter normalization (p.p - 1)/2 = 0
    for bb in range(nb):
        row = mj + bb
        s = 0.0
        for c in range(4):
            s += q[ncols[bb, c]] * q[ncols[bb, c]]
        phi[row] = 0.5 * (s - 1.0) if act[row] else 0.0
        for c in range(4):
            r[ncols[bb, c]] += lam_act[row] * q[ncols[bb, c]]
    if not with_matrix:
        return
    flat = jac.reshape(-1)
    add_at(vals, pos_jac, flat)
    add_at(vals, pos_jacT, flat)
    if cH != 0.0:
        add_scaled_at(vals, pos_hess, H.reshape(-1), cH)
    for bb in range(nb):
        row = mj + bb
        w = 1.0 if act[row] else 0.0
        for c in range(4):
            p = q[ncols[bb, c]] * w
            k = pos_norm_jac[4 * bb + c]
            if k >= 0:
                vals[k] += p
            k = pos_norm_jacT[4 * bb + c]
            if k >= 0:
                vals[k] += p
            k = pos_norm_hess[16 * bb + 5 * c]
            if k >= 0:
                vals[k] += cH * lam_act[row]
    for i in range(m):
        if not act[i] and pos_D[i] >= 0:
            vals[pos_D[i]] += 1.0


@njit(cache=True)
def alpha_step(q0, v0, vd0, a0, lam0, h, am, af, beta, gamma, tol, q_tol, use_q_tol, max_iter, act,
               idx, mass, J, gravity, pos_body,
               gather, scatter, u0, S, drive, seg, rowseg, pos_jac, pos_jacT, pos_hess,
               ncols, pos_norm_jac, pos_norm_jacT, pos_norm_hess, pos_D,
               q, v, vd, a, lam, stats):
    """One generalized-alpha step of size h from ``(q0, v0, vd0, a0, lam0)`` into ``(q, v, vd, a, lam)``;
    ``drive`` holds the drivers' f and f'' at the step's end. Returns an outcome code (``CONVERGED``, ...);
    ``stats`` gets ``[newton iterations, factorizations, last increment norm]``."""
    nq = q0.size
    m = lam0.size
    n = nq + m
    qp, vp, vdp = np.empty(nq), np.empty(nq), np.empty(nq)
    predict(q0, v0, vd0, a0, h, am, beta, gamma, qp, vp, vdp)
    bp = (1.0 - am) / (beta * h * h * (1.0 - af))
    gp = gamma / (beta * h)
    scale = beta * h * h
    cM, cC, cK, cH = (1.0 - am) / (1.0 - af), gamma * h, scale, scale
    for i in range(nq):
        q[i] = qp[i]
        v[i] = vp[i]
        vd[i] = vdp[i]
    for i in range(m):
        lam[i] = lam0[i]
    wq = np.empty(nq)
    newton_weights(qp, tol, q_tol, use_q_tol, 100.0 * 2.220446049250313e-16, wq)
    r = np.empty(nq)
    phi = np.empty(m)
    rhs = np.empty(n)
    dx = np.empty(n)
    vals = np.zeros(n * n)
    piv = np.empty(n, dtype=np.int64)
    have_lu = False
    prev = np.inf
    stats[0] = 0.0
    stats[1] = 0.0
    for it in range(1, max_iter + 1):
        need = not have_lu
        if need:
            vals[:] = 0.0
        rigid_equations(q, v, vd, lam, act, need, cM, cC, cK, cH, idx, mass, J, gravity, pos_body,
                        gather, scatter, u0, S, drive, seg, rowseg, pos_jac, pos_jacT, pos_hess,
                        ncols, pos_norm_jac, pos_norm_jacT, pos_norm_hess, pos_D, r, phi, vals)
        if not newton_rhs(r, phi, scale, rhs):
            return NONFINITE_RESIDUAL
        if need:
            LU = vals.reshape((n, n))
            if not lu_factor(LU, piv) > PIVOT_RATIO_MIN:
                return SINGULAR
            stats[1] += 1.0
            have_lu = True
        lu_solve(vals.reshape((n, n)), piv, rhs, dx)
        stats[0] += 1.0
        err = apply_increment(dx, scale, wq, q, lam)
        stats[2] = err
        if not np.isfinite(err):
            return NONFINITE_INCREMENT
        corrected_rates(q, qp, vp, vdp, gp, bp, v, vd)
        theta = err / prev if it > 1 else 1.0
        if err <= 1.0:        # a fresh matrix every step: the increment test alone (AlphaStepper.step)
            for i in range(nq):
                a[i] = ((1.0 - af) * vd[i] + af * vd0[i] - am * a0[i]) / (1.0 - am)
            return CONVERGED
        if it > 1 and theta > 0.5:
            have_lu = False    # slow contraction: refresh the iteration matrix
        prev = err
    return NO_CONVERGENCE


@njit(cache=True)
def driver_power(q, v, lam, act, driver_rows, idx, mass, J, gravity, pos_body, gather, scatter, u0, S, drive,
                 seg, rowseg, pos_jac, pos_jacT, pos_hess, ncols, pos_norm_jac, pos_norm_jacT, pos_norm_hess,
                 pos_D):
    """Power of the driver constraint forces ``-sum lambda_d (Phi_q,d v)`` (W) over the active driver rows,
    with ``Phi_q`` at ``q`` (as ``Assembly.driver_power``)."""
    if driver_rows.size == 0:
        return 0.0
    nq, m = q.size, lam.size
    mj = m - idx.shape[0]
    jac = np.empty((mj, gather.shape[1]))
    phi = np.empty(mj)
    gam = np.empty(mj)
    qe = np.empty(nq + 7)
    ve = np.empty(nq + 7)
    for i in range(nq):
        qe[i] = q[i]
        ve[i] = v[i]
    for i in range(7):
        qe[nq + i] = 0.0
        ve[nq + i] = 0.0
    qe[nq + 3] = 1.0
    P = 0.0
    for kind in range(6):
        a, b = seg[kind, 0], seg[kind, 1]
        ra, rb = rowseg[kind, 0], rowseg[kind, 1]
        if a < b:
            _joint_rows(kind, qe, ve, gather[a:b], u0[a:b], S[a:b], drive[:, a:b], phi[ra:rb], jac[ra:rb],
                        gam[ra:rb])
    for k in range(driver_rows.size):
        row = driver_rows[k]
        if not act[row]:
            continue
        inst = -1
        for kind in range(6):           # the instance of the row: its kind's range and rows per instance
            if rowseg[kind, 0] <= row < rowseg[kind, 1]:
                r_per = (rowseg[kind, 1] - rowseg[kind, 0]) // (seg[kind, 1] - seg[kind, 0])
                inst = seg[kind, 0] + (row - rowseg[kind, 0]) // r_per
        s = 0.0
        for x in range(gather.shape[1]):
            s += jac[row, x] * ve[gather[inst, x]]
        P -= lam[row] * s
    return P


@njit(cache=True)
def alpha_run(n_steps, t0, t_end, h, h_max, q0, v0, vd0, a0, lam0, am, af, beta, gamma, tol, max_iter, act,
              driven, drive_values, driver_rows, energy, off_rows,
              idx, mass, J, gravity, pos_body,
              gather, scatter, u0, S, drive, seg, rowseg, pos_jac, pos_jacT, pos_hess,
              ncols, pos_norm_jac, pos_norm_jacT, pos_norm_hess, pos_D,
              out_t, out_q, out_v, out_vd, out_lam, out_power, out_off, last_a, stats):
    """Up to ``n_steps`` fixed steps (size ``min(h, h_max, t_end - t)``, as ``AlphaIntegrator``) from the
    state at ``t0``, each state into row k of ``out_*``: time, q, v, vd, lambda, the driver power (when
    ``energy``) and the largest |Phi| of the rows switched off as redundant (``off_rows``). ``drive_values``
    (n_steps, 2, len(driven)) are f and f'' of the driven instances ``driven`` at each step's end.
    Returns ``(steps taken, outcome of the last attempt)``; ``last_a`` gets the algorithmic acceleration of
    the last state, ``stats`` the Newton iterations and factorizations."""
    nq, m = q0.size, lam0.size
    q, v, vd, a, lam = q0.copy(), v0.copy(), vd0.copy(), a0.copy(), lam0.copy()
    q1, v1, vd1, a1, lam1 = np.empty(nq), np.empty(nq), np.empty(nq), np.empty(nq), np.empty(m)
    st = np.zeros(3)
    t = t0
    done_tol = 1e-12 * max(1.0, abs(t_end))
    its = 0.0
    facs = 0.0
    no_q_tol = np.empty(0)
    for k in range(n_steps):
        if t >= t_end - done_tol:
            stats[0] += its
            stats[1] += facs
            return k, CONVERGED
        h_try = min(h, h_max, t_end - t)
        for c in range(driven.size):
            drive[0, driven[c]] = drive_values[k, 0, c]
            drive[1, driven[c]] = drive_values[k, 1, c]
        code = alpha_step(q, v, vd, a, lam, h_try, am, af, beta, gamma, tol, no_q_tol, False, max_iter, act,
                          idx, mass, J, gravity, pos_body, gather, scatter, u0, S, drive, seg, rowseg,
                          pos_jac, pos_jacT, pos_hess, ncols, pos_norm_jac, pos_norm_jacT, pos_norm_hess, pos_D,
                          q1, v1, vd1, a1, lam1, st)
        its += st[0]
        facs += st[1]
        if code != CONVERGED:
            stats[0] += its
            stats[1] += facs
            return k, code
        t = t + h_try
        q, q1 = q1, q
        v, v1 = v1, v
        vd, vd1 = vd1, vd
        a, a1 = a1, a
        lam, lam1 = lam1, lam
        out_t[k] = t
        out_q[k] = q
        out_v[k] = v
        out_vd[k] = vd
        out_lam[k] = lam
        out_power[k] = driver_power(q, v, lam, act, driver_rows, idx, mass, J, gravity, pos_body, gather,
                                    scatter, u0, S, drive, seg, rowseg, pos_jac, pos_jacT, pos_hess, ncols,
                                    pos_norm_jac, pos_norm_jacT, pos_norm_hess, pos_D) if energy else 0.0
        out_off[k] = switched_off_violation(q, off_rows, idx, gather, u0, S, drive, seg, rowseg, ncols) \
            if off_rows.size else 0.0
        last_a[:] = a
    stats[0] += its
    stats[1] += facs
    return n_steps, CONVERGED


@njit(cache=True)
def switched_off_violation(q, off_rows, idx, gather, u0, S, drive, seg, rowseg, ncols):
    """Largest |Phi| of the rows ``off_rows`` (switched off as redundant) at ``q`` (v = 0)."""
    nq = q.size
    nb = idx.shape[0]
    mj = 0
    for kind in range(6):
        mj = max(mj, rowseg[kind, 1])
    phi = np.empty(mj + nb)
    jac = np.empty((mj, gather.shape[1]))
    gam = np.empty(mj)
    qe = np.zeros(nq + 7)
    ve = np.zeros(nq + 7)
    for i in range(nq):
        qe[i] = q[i]
    qe[nq + 3] = 1.0
    for kind in range(6):
        a, b = seg[kind, 0], seg[kind, 1]
        ra, rb = rowseg[kind, 0], rowseg[kind, 1]
        if a < b:
            _joint_rows(kind, qe, ve, gather[a:b], u0[a:b], S[a:b], drive[:, a:b], phi[ra:rb], jac[ra:rb],
                        gam[ra:rb])
    for bb in range(nb):
        s = 0.0
        for c in range(4):
            s += q[ncols[bb, c]] * q[ncols[bb, c]]
        phi[mj + bb] = 0.5 * (s - 1.0)
    worst = 0.0
    for k in range(off_rows.size):
        worst = max(worst, abs(phi[off_rows[k]]))
    return worst
