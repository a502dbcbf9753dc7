"""A small generalized eigen-solver for the frequency cases, independent of flexmb.reduction.

``K x = lambda M x`` by LAPACK for small problems and by shift-invert Lanczos (scipy
``eigsh``, mode 3) otherwise (or when asked: ``method="lanczos"``), with the factorization of ``K - sigma M`` from
``flexmb.linalg.factorize`` (CHOLMOD where available, else SuperLU). Kept separate from
``flexmb.reduction`` on purpose: the frequency references then check the element matrices
through a second, plain eigen-solver, and the reduction code is checked against the same
numbers in the Craig-Bampton and rigid-mode cases.
"""
from __future__ import annotations

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from flexmb.linalg import factorize

DENSE_LIMIT = 600


def eigenvalue_scale(K: sp.spmatrix, M: sp.spmatrix) -> float:
    """``max_i K_ii / M_ii`` over dofs with mass: an estimate of the largest eigenvalue (rad^2/s^2)."""
    k, m = K.diagonal(), M.diagonal()
    has = m > 0
    return float(np.max(k[has] / m[has]))


METHODS = ("auto", "dense", "lanczos")


def lowest(K: sp.spmatrix, M: sp.spmatrix, k: int, sigma: float = 0.0,
           vectors: bool = False, method: str = "auto") -> np.ndarray | tuple[np.ndarray, np.ndarray]:
    """The ``k`` eigenvalues (rad^2/s^2) nearest above ``sigma`` (ascending), optionally with M-normalized vectors.

    ``K - sigma M`` must be positive definite (``sigma = 0`` for supported models, a small
    negative shift for free ones). ``method``: "dense" (LAPACK ``eigh``), "lanczos" (shift-invert Lanczos, ARPACK)
    or "auto" (dense up to ``DENSE_LIMIT`` dofs).
    """
    if method not in METHODS:
        raise ValueError(f"eigen method must be one of {METHODS}, got {method!r}")
    n = K.shape[0]
    if method == "dense" or (method == "auto" and n <= DENSE_LIMIT):
        # inverse form M x = mu (K - sigma M) x, lambda = sigma + 1/mu: the lowest eigenvalues are
        # then the largest mu, computed to rounding relative to themselves
        mu, X = sla.eigh(M.toarray(), (K - sigma * M).toarray(), subset_by_index=[n - k, n - 1])
        lam, X = sigma + 1.0 / mu[::-1], X[:, ::-1]
        X = X / np.sqrt(np.einsum("ik,ik->k", X, M @ X))
    else:
        F = factorize((K - sigma * M).tocsc(), spd=True)
        op = spla.LinearOperator((n, n), matvec=lambda b: F.solve(b), dtype=float)
        v0 = np.random.default_rng(0).standard_normal(n)
        lam, X = spla.eigsh(K.tocsr(), k, M=M.tocsr(), sigma=sigma, OPinv=op, which="LM", v0=v0, tol=1e-13)
        order = np.argsort(lam)
        lam, X = lam[order], X[:, order]
        X = X / np.sqrt(np.einsum("ik,ik->k", X, M @ X))
    return (lam, X) if vectors else lam


def frequencies(model, fixed_dofs, k: int, method: str = "auto") -> np.ndarray:
    """Lowest ``k`` circular frequencies (rad/s) of an FEModel with ``fixed_dofs`` held (``method``: :func:`lowest`)."""
    M, K, _ = model.reduce(fixed_dofs)
    return np.sqrt(np.maximum(lowest(K, M, k, method=method), 0.0))


def free_spectrum(model, k: int, shift_rtol: float = 1e-10) -> tuple[np.ndarray, float]:
    """Lowest ``k`` eigenvalues of the free model and the scale ``max K_ii / M_ii`` (rad^2/s^2).

    Shift ``sigma = -shift_rtol * scale`` keeps ``K - sigma M`` positive definite while the
    rigid-body eigenvalues stay at zero (to rounding).
    """
    M, K, _ = model.reduce([])
    scale = eigenvalue_scale(K, M)
    return lowest(K, M, k, sigma=-shift_rtol * scale), scale
