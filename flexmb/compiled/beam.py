"""Compiled element loop of the nonlinear two-node beam (docs/theory-elements.md §6).

One element (theory eqs. 6.1-6.7, body-frame axes, operators precomputed by
:class:`flexmb.fem.elements.beam_nonlinear.NonlinearBeamKernel`): slopes ``g_q = D_q d``,
axial strain ``eps_q = g_q0 + g_q . g_q / 2``, its gradient ``b_q = D_q0 + g_q^T D_q`` and

* average membrane: ``U = d^T K_b d / 2 + EA L eps_bar^2 / 2``, ``f = K_b d + EA L eps_bar b_bar``,
  ``K_t = K_b + EA L (b_bar b_bar^T + eps_bar H_bar)`` with ``eps_bar = sum_q w_q eps_q``,
  ``b_bar = sum_q w_q b_q`` (eqs. 6.3-6.6);
* pointwise membrane: ``U = d^T K_b d / 2 + EA L sum_q w_q eps_q^2 / 2``,
  ``f = K_b d + EA L sum_q w_q eps_q b_q``, ``K_t = K_b + EA L sum_q w_q (b_q b_q^T + eps_q D_q^T D_q)``.

Sources: He, *Multibond graph method for flexible multibody system dynamics* (PhD, Western
Ontario 1993) eqs. 3.7-3.8, 4.17a; Crisfield, *Non-linear Finite Element Analysis of Solids and
Structures*, vol. 1 (1991), ch. 7.

Element data (``ne`` elements of any number of beams, stacked): ``loc`` (ne, 12) int64, the
position of each element dof in the owner's coordinate vector (-1: held at zero); ``owner`` (ne,)
int64, the row of the owner (body); ``D`` (ne, 5, 4, 12) slope operators at up to five Gauss
points, ``w`` (ne, 5) weights, ``nq`` (ne,) int64 points used, ``avg`` (ne,) int64 1 for the
average membrane strain; ``Kb`` (ne, 12, 12), ``Hbar`` (ne, 12, 12) (zero for pointwise),
``EAL`` (ne,) = EA L (N m). SI units: m, rad, N, N m, J.
"""
from __future__ import annotations

import numpy as np
from numba import njit

MAX_POINTS = 5
"""Gauss points stored per element (the pointwise membrane's rule; the average one uses 3)."""


@njit(cache=True, inline="always")
def gather(x, idx, off, b, loc, e, d):
    """``d_j = u_b[loc[e, j]]`` with ``u_b[k] = x[idx[b, off + k]]``; held dofs (loc < 0) zero."""
    for j in range(12):
        k = loc[e, j]
        d[j] = x[idx[b, off + k]] if k >= 0 else 0.0


@njit(cache=True, inline="always")
def _strain(D, e, nq, d, g, eps, grad):
    """Slopes ``g`` (nq, 4), strain ``eps`` (nq,) and gradient ``grad`` (nq, 12) of element ``e``."""
    for q in range(nq):
        s = 0.0
        for k in range(4):
            t = 0.0
            for j in range(12):
                t += D[e, q, k, j] * d[j]
            g[q, k] = t
            s += t * t
        eps[q] = g[q, 0] + 0.5 * s
        for j in range(12):
            t = D[e, q, 0, j]
            for k in range(4):
                t += g[q, k] * D[e, q, k, j]
            grad[q, j] = t


@njit(cache=True, inline="always")
def _element(D, w, nq, avg, Kb, Hbar, EAL, e, d, g, eps, grad, bbar, fe, Ke):
    """Internal force ``fe`` (12,) and tangent ``Ke`` (12, 12) of element ``e`` at dofs ``d``."""
    n = nq[e]
    _strain(D, e, n, d, g, eps, grad)
    for i in range(12):
        t = 0.0
        for j in range(12):
            t += Kb[e, i, j] * d[j]
            Ke[i, j] = Kb[e, i, j]
        fe[i] = t
    c = EAL[e]
    if avg[e] == 1:
        ebar = 0.0
        for q in range(n):
            ebar += w[e, q] * eps[q]
        for j in range(12):
            t = 0.0
            for q in range(n):
                t += w[e, q] * grad[q, j]
            bbar[j] = t
        ce = c * ebar
        for i in range(12):
            fe[i] += ce * bbar[i]
            cb = c * bbar[i]
            for j in range(12):
                Ke[i, j] += ce * Hbar[e, i, j] + cb * bbar[j]
    else:
        for q in range(n):
            cq = c * w[e, q]
            ceq = cq * eps[q]
            for i in range(12):
                fe[i] += ceq * grad[q, i]
                gi = cq * grad[q, i]
                for j in range(12):
                    h = 0.0
                    for k in range(4):
                        h += D[e, q, k, i] * D[e, q, k, j]
                    Ke[i, j] += gi * grad[q, j] + ceq * h


@njit(cache=True)
def forces_dense(x, idx, off, loc, owner, D, w, nq, avg, Kb, Hbar, EAL, f, K):
    """Add the internal forces and tangents of all elements into ``f[owner]`` (n, m) and the dense
    ``K[owner]`` (n, m, m). Coordinate k of owner b is ``x[idx[b, off + k]]``; held dofs are dropped."""
    d = np.empty(12)
    g = np.empty((MAX_POINTS, 4))
    eps = np.empty(MAX_POINTS)
    grad = np.empty((MAX_POINTS, 12))
    bbar = np.empty(12)
    fe = np.empty(12)
    Ke = np.empty((12, 12))
    for e in range(loc.shape[0]):
        b = owner[e]
        gather(x, idx, off, b, loc, e, d)
        _element(D, w, nq, avg, Kb, Hbar, EAL, e, d, g, eps, grad, bbar, fe, Ke)
        for i in range(12):
            r = loc[e, i]
            if r < 0:
                continue
            f[b, r] += fe[i]
            for j in range(12):
                c = loc[e, j]
                if c >= 0:
                    K[b, r, c] += Ke[i, j]


@njit(cache=True)
def forces_sparse(u, loc, D, w, nq, avg, Kb, Hbar, EAL, pos, f, kdata, one):
    """Add the internal forces of all elements of one structure into ``f`` (m,) and their tangents
    into the CSR values ``kdata`` at ``pos`` (ne, 144), the data position of every element-matrix
    entry (entries of held dofs carry a position past the end of the pattern and are dropped);
    ``one`` = ``[[0, 1, ..., m - 1]]`` (the identity map of :func:`forces_dense`)."""
    d = np.empty(12)
    g = np.empty((MAX_POINTS, 4))
    eps = np.empty(MAX_POINTS)
    grad = np.empty((MAX_POINTS, 12))
    bbar = np.empty(12)
    fe = np.empty(12)
    Ke = np.empty((12, 12))
    nnz = kdata.size
    for e in range(loc.shape[0]):
        gather(u, one, 0, 0, loc, e, d)
        _element(D, w, nq, avg, Kb, Hbar, EAL, e, d, g, eps, grad, bbar, fe, Ke)
        for i in range(12):
            r = loc[e, i]
            if r >= 0:
                f[r] += fe[i]
            for j in range(12):
                k = pos[e, 12 * i + j]
                if k < nnz:
                    kdata[k] += Ke[i, j]


@njit(cache=True)
def energy(x, idx, off, loc, owner, D, w, nq, avg, Kb, EAL, out):
    """Add the strain energy of every element (J) to ``out[owner]``; coordinates as :func:`forces_dense`."""
    d = np.empty(12)
    g = np.empty((MAX_POINTS, 4))
    eps = np.empty(MAX_POINTS)
    grad = np.empty((MAX_POINTS, 12))
    for e in range(loc.shape[0]):
        b = owner[e]
        gather(x, idx, off, b, loc, e, d)
        n = nq[e]
        _strain(D, e, n, d, g, eps, grad)
        bend = 0.0
        for i in range(12):
            t = 0.0
            for j in range(12):
                t += Kb[e, i, j] * d[j]
            bend += d[i] * t
        if avg[e] == 1:
            ebar = 0.0
            for q in range(n):
                ebar += w[e, q] * eps[q]
            mem = ebar * ebar
        else:
            mem = 0.0
            for q in range(n):
                mem += w[e, q] * eps[q] * eps[q]
        out[b] += 0.5 * bend + 0.5 * EAL[e] * mem
