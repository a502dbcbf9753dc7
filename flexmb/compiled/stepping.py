"""Compiled vector updates of the generalized-alpha step (docs/theory.md §5).

Each function is one pass over the coordinates; the step calls a few of them per Newton iteration
instead of a dozen numpy expressions (whose per-call overhead dominates small models).
"""
from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def predict(q, v, vd, a, h, alpha_m, beta, gamma, qp, vp, vdp):
    """Predictor with constant true acceleration (Arnold & Bruls 2007, Algorithm 1):
    ``a1 = (vd - alpha_m a)/(1 - alpha_m)``, ``qp = q + h v + h^2 ((1/2 - beta) a + beta a1)``,
    ``vp = v + h ((1 - gamma) a + gamma a1)``, ``vdp = vd``."""
    for i in range(q.size):
        a1 = (vd[i] - alpha_m * a[i]) / (1.0 - alpha_m)
        qp[i] = q[i] + h * v[i] + h * h * ((0.5 - beta) * a[i] + beta * a1)
        vp[i] = v[i] + h * ((1.0 - gamma) * a[i] + gamma * a1)
        vdp[i] = vd[i]


@njit(cache=True)
def corrected_rates(q, qp, vp, vdp, gp, bp, v, vd):
    """Velocities and accelerations that go with positions ``q``: ``v = vp + gp (q - qp)``,
    ``vd = vdp + bp (q - qp)`` (gp = gamma/(beta h), bp = (1 - alpha_m)/(beta h^2 (1 - alpha_f)))."""
    for i in range(q.size):
        d = q[i] - qp[i]
        v[i] = vp[i] + gp * d
        vd[i] = vdp[i] + bp * d


@njit(cache=True)
def newton_rhs(r, phi, scale, rhs):
    """``rhs = -[scale r, phi]``; returns False when an entry is not finite."""
    nq = r.size
    ok = True
    for i in range(nq):
        x = -scale * r[i]
        rhs[i] = x
        if not np.isfinite(x):
            ok = False
    for i in range(phi.size):
        x = -phi[i]
        rhs[nq + i] = x
        if not np.isfinite(x):
            ok = False
    return ok


@njit(cache=True)
def apply_increment(dx, scale, wq, q, lam):
    """``q += dx[:nq]``, ``lam += dx[nq:]/scale``; returns the weighted RMS ``sqrt(mean((dq wq)^2))``
    of the position increment (the Newton convergence measure)."""
    nq = q.size
    s = 0.0
    for i in range(nq):
        q[i] += dx[i]
        e = dx[i] * wq[i]
        s += e * e
    for i in range(lam.size):
        lam[i] += dx[nq + i] / scale
    return np.sqrt(s / max(nq, 1))


@njit(cache=True)
def newton_weights(qp, tol, q_tol, use_q_tol, floor, wq):
    """Weights of the Newton increment test: ``1/(tol (1 + |qp|))``, raised to ``1/q_tol`` where the
    per-coordinate tolerance ``q_tol`` is tighter, but never beyond ``1/(floor (1 + |qp|))``
    (what double precision resolves in q)."""
    for i in range(qp.size):
        w = 1.0 / (tol * (1.0 + abs(qp[i])))
        if use_q_tol:
            w = max(w, 1.0 / max(q_tol[i], floor * (1.0 + abs(qp[i]))))
        wq[i] = w


@njit(cache=True)
def pivot_ratio(lu):
    """Smallest over largest |pivot| of an LU factorization (0 when a pivot is not finite)."""
    lo = np.inf
    hi = 0.0
    for i in range(lu.shape[0]):
        d = abs(lu[i, i])
        if not np.isfinite(d):
            return 0.0
        lo = min(lo, d)
        hi = max(hi, d)
    if lu.shape[0] == 0:
        return 1.0
    return lo / max(hi, 1e-300)
