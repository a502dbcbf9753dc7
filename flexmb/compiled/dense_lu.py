"""Dense LU with partial pivoting of a mostly-zero matrix, in place, and the scaling of the saddle-point Newton
matrix, for the compiled step (flexmb/compiled/step.py :func:`~flexmb.compiled.step.alpha_step`): each elimination
step updates only the rows with a non-zero multiplier and the columns where the pivot row is non-zero (the
iteration matrix of a multibody model is mostly zeros; ``lu_factor`` skips them, it does not reorder for them).
"""
from __future__ import annotations

import numpy as np
from numba import njit


PIVOT_RATIO_MIN = 1e-14
"""Smallest |pivot| ratio of a factorization accepted as regular (as flexmb.linalg's dense LU)."""

# -- dense LU of a mostly-zero matrix -------------------------------------------------------------------------
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
def saddle_scale(A, nq, cscale, d, order):
    """Scale the saddle-point matrix ``A`` in place to ``D A D`` and write the scale vector ``d``, as
    ``flexmb.linalg.saddle_scale`` (solve ``D A D y = D b``, ``x = D y``): coordinate ``k`` gets
    ``cscale[k]`` (``Assembly.inertia_scale``, powers of two), a constraint row the power of two nearest
    ``1 / max_j |A_ij d_j|`` over the coordinate columns ``j`` (1 for a zero row); row and column k of ``A``
    belong to unknown ``order[k]`` (a coordinate when below ``nq``)."""
    n = A.shape[0]
    for i in range(n):
        d[i] = cscale[order[i]] if order[i] < nq else 0.0
    for i in range(n):
        if order[i] < nq:
            continue
        size = 0.0
        for j in range(n):
            if order[j] < nq:
                size = max(size, abs(A[i, j]) * d[j])
        d[i] = 2.0 ** round(np.log2(1.0 / size)) if size > 0.0 and np.isfinite(size) else 1.0
    for i in range(n):
        for j in range(n):
            A[i, j] *= d[i] * d[j]

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
