"""Linear-algebra backends behind one small interface.

``factorize(A, spd=False)`` returns an object with ``solve(b)``:

* dense LAPACK (LU, or Cholesky when ``spd``) for systems up to ``DENSE_LIMIT``;
* CHOLMOD (scikit-sparse) for sparse symmetric positive definite matrices;
* SuperLU (scipy) for other sparse matrices, and for SPD ones when CHOLMOD is
  absent or disabled.

CHOLMOD can be switched off with the environment variable
``FLEXMB_NO_CHOLMOD=1`` or :func:`set_cholmod`; flexmb then runs on scipy alone
and ``flexmb info`` says so.
"""
from __future__ import annotations

import functools
import math
import os
from contextlib import contextmanager, nullcontext
from typing import Callable, Iterator

import numpy as np
import scipy.linalg as sla
from scipy.linalg.lapack import dgetrf as _getrf, dgetrs as _getrs
import scipy.sparse as sp
import scipy.sparse.linalg as spla

DENSE_LIMIT = 250
"""Systems of at most this many unknowns are solved densely (faster below it)."""

try:  # pragma: no cover - depends on the machine
    from sksparse.cholmod import analyze as _cholmod_analyze
    from sksparse.cholmod import CholmodNotPositiveDefiniteError as _CholmodNotPD
    _CHOLMOD_IMPORT_ERROR = ""
except Exception as exc:  # ImportError or a broken shared library
    _cholmod_analyze = None
    _CholmodNotPD = None
    _CHOLMOD_IMPORT_ERROR = f"{type(exc).__name__}: {exc}"

_cholmod_enabled = _cholmod_analyze is not None and not os.environ.get("FLEXMB_NO_CHOLMOD")


def cholmod_available() -> bool:
    """True when CHOLMOD is importable *and* enabled."""
    return _cholmod_enabled


def cholmod_import_error() -> str:
    """Why CHOLMOD could not be imported ('' when it could)."""
    return _CHOLMOD_IMPORT_ERROR


def set_cholmod(enabled: bool) -> bool:
    """Enable or disable the CHOLMOD backend; returns the previous setting.

    Enabling fails silently (stays off) when scikit-sparse is not importable.
    """
    global _cholmod_enabled
    previous = _cholmod_enabled
    _cholmod_enabled = bool(enabled) and _cholmod_analyze is not None
    return previous


@contextmanager
def cholmod_disabled() -> Iterator[None]:
    """Context manager running its body on scipy's solvers only."""
    previous = set_cholmod(False)
    try:
        yield
    finally:
        set_cholmod(previous)


def backends() -> dict[str, str]:
    """Names of the active backends, for ``flexmb info``."""
    sparse_spd = "CHOLMOD (scikit-sparse)" if _cholmod_enabled else "SuperLU (scipy; CHOLMOD unavailable)"
    if _cholmod_analyze is not None and not _cholmod_enabled:
        sparse_spd = "SuperLU (scipy; CHOLMOD disabled)"
    return {
        "dense": f"LAPACK via scipy.linalg (n <= {DENSE_LIMIT})",
        "sparse general": "SuperLU (scipy.sparse.linalg.splu)",
        "sparse SPD": sparse_spd,
    }


def blas_threads_for(n: int):
    """A context that keeps BLAS on one thread while systems of ``n <= DENSE_LIMIT`` unknowns are
    factorized densely: on small matrices extra threads only synchronize (a 206 x 206 LU took
    16-81 ms with OpenBLAS's default threads on a loaded 2-core machine against 0.63 ms on one)."""
    if n > DENSE_LIMIT:
        return nullcontext()
    from threadpoolctl import threadpool_limits
    return threadpool_limits(limits=1, user_api="blas")


def single_blas_thread_for_small_systems(run: Callable) -> Callable:
    """Decorate a solver ``run(system, ...)``: it runs under :func:`blas_threads_for` of the size of
    the system's Newton matrix (the model is compiled first; a model that does not compile is left
    to ``run`` to report)."""
    @functools.wraps(run)
    def wrapper(system, *args, **kwargs):
        try:
            asm = system.compile()
            n = asm.nq + asm.m
        except Exception:     # noqa: BLE001 - ``run`` validates its input and raises the proper error
            return run(system, *args, **kwargs)
        with blas_threads_for(n):
            return run(system, *args, **kwargs)
    return wrapper


class SingularMatrixError(np.linalg.LinAlgError):
    """The matrix to factorize is singular (to working precision)."""


class Factorization:
    """A factorized matrix; ``solve(b)`` accepts vectors or (n, k) arrays."""

    backend = "none"

    def solve(self, b: np.ndarray) -> np.ndarray:  # pragma: no cover - interface
        raise NotImplementedError


class _DenseLU(Factorization):
    """LAPACK ``getrf``/``getrs`` called directly (scipy's ``lu_factor`` wrapper costs more than the
    factorization itself on the small matrices of a time step)."""

    backend = "dense LU"

    def __init__(self, A: np.ndarray):
        from .compiled.stepping import pivot_ratio
        self._lu, self._piv, info = _getrf(A, overwrite_a=False)
        ratio = pivot_ratio(self._lu)
        if info > 0 or not ratio > 1e-14:
            raise SingularMatrixError(f"singular matrix (pivot ratio {ratio:.1e})")

    def solve(self, b):
        x, info = _getrs(self._lu, self._piv, b)
        return x


class _DenseCholesky(Factorization):
    backend = "dense Cholesky"

    def __init__(self, A: np.ndarray):
        try:
            self._c = sla.cho_factor(A, check_finite=False)
        except np.linalg.LinAlgError as exc:
            raise SingularMatrixError(f"matrix not positive definite: {exc}") from exc

    def solve(self, b):
        return sla.cho_solve(self._c, b, check_finite=False)


class _SuperLU(Factorization):
    backend = "SuperLU"

    def __init__(self, A: sp.spmatrix):
        try:
            self._lu = spla.splu(sp.csc_matrix(A))
        except RuntimeError as exc:  # "Factor is exactly singular"
            raise SingularMatrixError(str(exc)) from exc

    def solve(self, b):
        return self._lu.solve(np.asarray(b, dtype=float))


class _Cholmod(Factorization):
    backend = "CHOLMOD"

    def __init__(self, A: sp.spmatrix, symbolic=None):
        A = sp.csc_matrix(A)
        self.symbolic = symbolic if symbolic is not None else _cholmod_analyze(A)
        try:
            self._f = self.symbolic.cholesky(A)
        except _CholmodNotPD as exc:
            raise SingularMatrixError(f"matrix not positive definite: {exc}") from exc

    def solve(self, b):
        return self._f(np.asarray(b, dtype=float))


def factorize(A, *, spd: bool = False) -> Factorization:
    """Factorize a square matrix with the backend that suits it.

    ``spd`` declares the matrix symmetric positive definite (only its values are
    trusted for that, nothing is checked beyond the factorization succeeding).
    Raises :class:`SingularMatrixError` when the matrix cannot be factorized.
    """
    n = A.shape[0]
    if n <= DENSE_LIMIT or not sp.issparse(A):
        dense = A.toarray() if sp.issparse(A) else np.asarray(A, dtype=float)
        return _DenseCholesky(dense) if spd else _DenseLU(dense)
    if spd and _cholmod_enabled:
        return _Cholmod(A)
    return _SuperLU(A)


def power_of_two_scale(x: float) -> float:
    """The power of two nearest ``x`` (above or below 1: a 1e-20 kg body's scale is as much its own as a 1e4 kg
    one's) when ``x > 0`` is finite, else 1: a scale that multiplies exactly."""
    return 2.0 ** round(math.log2(x)) if x > 0.0 and math.isfinite(x) else 1.0


def powers_of_two(x: np.ndarray) -> np.ndarray:
    """:func:`power_of_two_scale` of each entry of ``x`` (1 where an entry is not positive and finite)."""
    x = np.asarray(x, dtype=float)
    ok = (x > 0.0) & np.isfinite(x)
    return np.where(ok, np.exp2(np.round(np.log2(np.where(ok, x, 1.0)))), 1.0)


def saddle_scale(S, nq: int, s: np.ndarray | None = None) -> np.ndarray:
    """Row and column scale ``d`` of a saddle-point matrix ``[[A, B^T], [B, C]]`` (the ``nq`` coordinates first)
    for solving ``D S D y = D b``, ``x = D y`` (a symmetric diagonal scaling in the spirit of Bunch 1971, "Equilibration
    of symmetric matrices in the max-norm", and Ruiz 2001, "A scaling algorithm to equilibrate both rows and columns
    norms in matrices"). In the time step ``s`` is the coordinates' scale (``Assembly.inertia_scale``: about
    ``1/sqrt`` of each coordinate's own inertia, so ``D A D`` has the mass block of a 1000 kg body and of a 1 mg one
    near 1, with no stiffness in it, so an absurdly stiff element stays diagnosed as singular) and each constraint
    row's scale is the power of two nearest ``1 / max_j |B_ij d_j|`` (1 for a zero row): every row and column of
    ``D S D`` then has entries of order 1, and neither the LU pivoting nor the singularity test loses a light
    body's rows beside a heavy one's. Without ``s`` (static solves, where the stiffness is the scale) the
    coordinates keep 1 and the constraint rows get the power of two nearest ``max |A_ii|``. Powers of two
    multiply exactly."""
    d = np.ones(S.shape[0])
    if s is None:
        d[nq:] = power_of_two_scale(float(np.max(np.abs(S.diagonal()[:nq]), initial=0.0)))
        return d
    d[:nq] = s
    B = (sp.csr_matrix(S) if sp.issparse(S) else np.asarray(S))[nq:, :nq]
    if B.shape[0]:
        size = (abs(B) @ sp.diags(s) if sp.issparse(B) else np.abs(B) * s).max(axis=1)
        size = size.toarray().ravel() if sp.issparse(size) else np.asarray(size).ravel()
        d[nq:] = powers_of_two(1.0 / np.where(size > 0.0, size, np.inf))
    return d


def scaled(S, d: np.ndarray):
    """``D S D`` (dense or sparse, a new matrix)."""
    if isinstance(S, np.ndarray):
        return S * d[:, None] * d[None, :]
    S = sp.csr_matrix(S, copy=True)
    S.data *= np.repeat(d, np.diff(S.indptr)) * d[S.indices]
    return S


def solve_saddle_scaled(S, b: np.ndarray, nq: int, s: np.ndarray | None = None) -> np.ndarray:
    """Solve ``S x = b`` for a saddle-point matrix through ``D S D y = D b``, ``x = D y`` (:func:`saddle_scale`).
    Raises :class:`SingularMatrixError`."""
    d = saddle_scale(S, nq, s)
    return factorize(scaled(S, d)).solve(b * d) * d


class SPDSolver:
    """Repeated factorizations of SPD matrices that share one sparsity pattern.

    With CHOLMOD the symbolic analysis (fill-reducing ordering) is done once and
    reused for every numeric factorization; otherwise falls back to SuperLU.
    """

    def __init__(self):
        self._symbolic = None

    def factorize(self, A) -> Factorization:
        n = A.shape[0]
        if n <= DENSE_LIMIT or not sp.issparse(A):
            return factorize(A, spd=True)
        if _cholmod_enabled:
            if self._symbolic is None:
                self._symbolic = _cholmod_analyze(sp.csc_matrix(A))
            return _Cholmod(A, self._symbolic)
        return _SuperLU(A)
