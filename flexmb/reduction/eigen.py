"""Eigen-solutions ``K x = lambda M x`` of FE models (docs/theory-reduction.md §1).

One factorization of the shifted matrix ``K - sigma M`` (CHOLMOD through
:func:`flexmb.linalg.factorize`, SuperLU without it) serves both

* shift-invert Lanczos (scipy ``eigsh`` with the factorization as ``OPinv``; Ericsson & Ruhe,
  Math. Comp. 35 (1980) 1251-1268), and
* static solves ``K x = b`` (exact when ``sigma = 0``, by iterative refinement otherwise),

optionally under linear constraints ``G x = g`` through the Schur complement of ``G``.
Supported problems use ``sigma = 0``; free ones a slightly negative shift
``sigma = -1e-10 lambda_max`` (``lambda_max`` estimated from the diagonals), which keeps the
shifted matrix SPD while the six rigid-body eigenvalues stay at zero.
"""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Iterator, Sequence

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from flexmb.errors import ModelError
from flexmb.reduction.interfaces import rigid_body_modes
from flexmb.linalg import SingularMatrixError, factorize

SHIFT_RTOL = 1e-10
"""Default shift of free problems: ``sigma = -SHIFT_RTOL * lambda_max``."""

RIGID_RTOL = 1e-12
"""Eigenvalues below ``RIGID_RTOL * lambda_max`` are rigid-body (zero-frequency) modes.

Rounding leaves computed zero eigenvalues near ``1e-16 lambda_max``; the estimate ``lambda_max``
(largest ``K_ii / M_ii``) grows as ``h^-4`` on Euler-Bernoulli meshes, whose rotational dofs carry
almost no mass, so a looser threshold mistakes the first bending mode of a slender, finely meshed
beam for a rigid-body mode (1e-9 did for a 10 m beam of 40 elements)."""

DENSE_EIGEN_LIMIT = 400
"""Problems with at most this many dofs are solved densely (LAPACK)."""

EIGSH_TOL = 1e-10
"""ARPACK relative residual tolerance: shapes to ~1e-10 (worse for the second copy of a double
eigenvalue, see :func:`rayleigh_quotients`), eigenvalues, taken as the shapes' Rayleigh quotients,
to rounding (quadratic)."""

STATIC_RTOL = 1e-13
"""Relative change at which the iterative refinement of static solves stops."""

REFINEMENT_FLOOR = 1e-9
"""Refinement that stops improving is accepted when its last change is below this: with a
negative shift and constraints, rounding limits the solution to about eps lambda_1 / |sigma|
(1e-11 typically; docs/theory-reduction.md §1.3)."""

MAX_REFINEMENTS = 60


@dataclass(frozen=True, eq=False)
class Modes:
    """Normal modes of an FE model.

    Attributes:
        omega2: (n,) squared circular frequencies of the elastic modes, rad^2/s^2, ascending.
        shapes: (ndof, n) mass-orthonormal mode shapes (1/sqrt(kg): m, or rad, per modal coordinate
            of sqrt(kg) m), zero at fixed dofs.
        rigid: (ndof, 6) mass-orthonormal rigid-body modes of a free body (translations, then
            rotations about the centre of mass), or None when the model is supported.
        free_dofs: dofs that were not held.
        sigma: the shift used, rad^2/s^2.
    """

    omega2: np.ndarray
    shapes: np.ndarray
    rigid: np.ndarray | None
    free_dofs: np.ndarray
    sigma: float

    @property
    def omega(self) -> np.ndarray:
        """Circular frequencies, rad/s."""
        return np.sqrt(np.maximum(self.omega2, 0.0))

    @property
    def frequencies_hz(self) -> np.ndarray:
        """Frequencies, Hz."""
        return self.omega / (2.0 * np.pi)


def check_fe_model(model: Any, owner: str) -> None:
    """Refuse anything but an FEModel (e.g. a mesh file name) with a ModelError naming ``owner`` and it."""
    from flexmb.fem.model import FEModel
    if not isinstance(model, FEModel):
        raise ModelError(f"{owner}: model must be an FEModel (flexmb.fem.FEModel(mesh, material, ...)), "
                         f"got {model!r}")


def fixed_dofs(model: Any, fixed: str | Sequence[int] | np.ndarray | None) -> np.ndarray:
    """Held dofs: None (none), a node-set name (all dofs of its nodes) or dof ids; sorted, unique."""
    check_fe_model(model, "fixed dofs")
    if fixed is None:
        return np.zeros(0, dtype=np.int64)
    if isinstance(fixed, str):
        return np.unique(model.dofs(fixed))
    d = np.unique(np.asarray(fixed).ravel())
    if d.size and (d.dtype.kind not in "iu" or d[0] < 0 or d[-1] >= model.ndof):
        raise ModelError(f"fixed dofs must be integers in [0, {model.ndof}), got {d[:10]}")
    return d.astype(np.int64)


def eigenvalue_scale(K: sp.spmatrix, M: sp.spmatrix) -> float:
    """Estimate of the largest eigenvalue, ``max K_ii / M_ii`` over dofs with mass, rad^2/s^2.

    Raises :class:`ModelError` when no dof carries mass.
    """
    k, m = K.diagonal(), M.diagonal()
    has_mass = m > 0.0
    if not np.any(has_mass):
        raise ModelError("the model has no mass (density 0 and no point masses): it has no vibration modes")
    return float(np.max(k[has_mass] / m[has_mass]))


@contextmanager
def _blas_single_thread() -> Iterator[None]:
    """Limit BLAS to one thread where threadpoolctl is installed (no effect otherwise).

    The iteration alternates single-threaded sparse solves with small BLAS calls; idle
    OpenBLAS threads spin between them and take the solve's core (measured 2x slower on
    two cores, docs/theory-reduction.md §6).
    """
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        yield
        return
    with threadpool_limits(limits=1, user_api="blas"):
        yield


class ShiftInvert:
    """One factorization of ``K - sigma M`` with optional constraints ``G x = g``.

    Args:
        K, M: stiffness and mass (n, n), sparse, symmetric; K PSD, M PSD.
        sigma: shift, rad^2/s^2; ``K - sigma M`` must be positive definite.
        constraints: G (c, n), sparse, full row rank, or None.
        what: description of the problem for error messages.
    """

    def __init__(self, K: sp.spmatrix, M: sp.spmatrix, sigma: float,
                 constraints: sp.spmatrix | None = None, what: str = "the model") -> None:
        self.K, self.M, self.sigma = sp.csr_matrix(K), sp.csr_matrix(M), float(sigma)
        self.n = K.shape[0]
        try:
            self.F = factorize((self.K - self.sigma * self.M).tocsc(), spd=True)
        except SingularMatrixError as exc:
            if self.sigma == 0.0:
                raise ModelError(f"the stiffness of {what} is singular ({exc}): its supports leave "
                                 f"rigid-body modes or mechanisms free") from exc
            raise ModelError(f"K - sigma M of {what} is not positive definite ({exc}): a part of the "
                             f"model without mass can move freely") from exc
        self.G = None if constraints is None or constraints.shape[0] == 0 else sp.csr_matrix(constraints)
        if self.G is not None:
            self.Y = np.asarray(self.F.solve(self.G.T.toarray()))     # F^-1 G^T (n, c)
            try:
                self.S = sla.cho_factor(self.G @ self.Y)                # Schur complement G F^-1 G^T
            except np.linalg.LinAlgError as exc:
                raise ModelError(f"the interface constraints of {what} are linearly dependent") from exc

    def apply(self, b: np.ndarray) -> np.ndarray:
        """``x = (K - sigma M)^-1 b`` on the constraint space ``G x = 0`` (the shift-invert operator)."""
        return self._constrained(b, None)

    def _constrained(self, r: np.ndarray, g: np.ndarray | None) -> np.ndarray:
        """Solve ``(K - sigma M) x + G^T l = r``, ``G x = g`` (Schur complement on ``l``)."""
        z = np.asarray(self.F.solve(r))
        if self.G is None:
            return z
        gz = self.G @ z
        if g is not None:
            gz = gz - g
        return z - self.Y @ sla.cho_solve(self.S, gz)

    def solve(self, b: np.ndarray, g: np.ndarray | None = None, deflate: np.ndarray | None = None) -> np.ndarray:
        """Static solution ``K x = b`` (+ constraint forces), ``G x = g``, for (n,) or (n, k) ``b``.

        With ``sigma != 0`` the shifted factorization is refined, ``x <- F^-1 (b + (-sigma) M x)``,
        which converges at the rate ``|sigma| / (lambda_1 + |sigma|)``. ``deflate`` (n, r), mass-
        orthonormal, removes a null space of K (rigid-body modes) in every step: ``b`` must then be
        orthogonal to it (self-equilibrated) and ``x`` is returned mass-orthogonal to it.
        """
        b = np.asarray(b, dtype=float)
        previous = np.inf
        with _blas_single_thread():
            x = self._deflated(self._constrained(b, g), deflate)
            if self.sigma == 0.0:
                return x
            for _ in range(MAX_REFINEMENTS):
                x_new = self._deflated(self._constrained(b - self.sigma * (self.M @ x), g), deflate)
                change = np.max(np.abs(x_new - x)) / max(np.max(np.abs(x_new)), 1e-300)
                x = x_new
                if change <= STATIC_RTOL or (change > 0.5 * previous and change <= REFINEMENT_FLOOR):
                    return x                   # converged, or stagnated at the rounding floor
                if change > 0.5 * previous:
                    break
                previous = change
        raise ModelError(f"static solve with the shifted factorization did not converge (shift {self.sigma:.3g} "
                         f"rad^2/s^2 too large relative to the lowest eigenvalue); pass a smaller |sigma|")

    def _deflated(self, x: np.ndarray, deflate: np.ndarray | None) -> np.ndarray:
        if deflate is None:
            return x
        return x - deflate @ (deflate.T @ (self.M @ x))

    def eigen(self, k: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
        """The ``k`` eigenpairs nearest ``sigma`` from above: ``(lambda (k,), X (n, k))``.

        Eigenvalues ascending, vectors mass-orthonormal and in the constraint space.
        Dense LAPACK for small problems, ARPACK shift-invert (``eigsh`` mode 3) otherwise.
        """
        if self.n <= DENSE_EIGEN_LIMIT or k >= self.n - 1:
            lam, X = self._eigen_dense(k)
        else:
            op = spla.LinearOperator((self.n, self.n), matvec=self.apply, dtype=float)
            v0 = np.random.default_rng(seed).standard_normal(self.n)     # ARPACK maps it into range(OP)
            with _blas_single_thread():
                _, X = spla.eigsh(self.K, k, M=self.M, sigma=self.sigma, OPinv=op, which="LM", v0=v0,
                                  tol=EIGSH_TOL)
                lam = rayleigh_quotients(self.K, self.M, X)
        order = np.argsort(lam)
        lam, X = lam[order], X[:, order]
        norms = np.sqrt(np.einsum("ik,ik->k", X, self.M @ X))
        if not np.all(np.isfinite(lam)) or np.any(norms <= 0.0):
            raise ModelError(f"asked for {k} modes, but fewer dofs carry mass")
        return lam, X / norms

    def _eigen_dense(self, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Dense shift-invert: ``M x = mu (K - sigma M) x``, ``lambda = sigma + 1/mu``."""
        Z = np.eye(self.n) if self.G is None else sla.null_space(self.G.toarray())
        if k > Z.shape[1]:
            raise ModelError(f"asked for {k} modes of a problem with {Z.shape[1]} free dofs")
        Mz = Z.T @ (self.M @ Z)
        Bz = Z.T @ ((self.K - self.sigma * self.M) @ Z)
        mu, Yz = sla.eigh(Mz, Bz, subset_by_index=[Z.shape[1] - k, Z.shape[1] - 1])
        if np.any(mu <= 1e-14 * max(mu.max(), 1e-300)):
            raise ModelError(f"asked for {k} modes, but only {np.count_nonzero(mu > 0)} dofs carry mass")
        return self.sigma + 1.0 / mu, Z @ Yz


def rayleigh_quotients(K: sp.spmatrix, M: sp.spmatrix, X: np.ndarray) -> np.ndarray:
    """``x^T K x / x^T M x`` for each column x of ``X`` (n, k), units of ``K / M`` (rad^2/s^2).

    ARPACK's Ritz values come from its Lanczos recurrence, whose residual estimate fails for the
    second copy of a (nearly) double eigenvalue, which only rounding brings into the Krylov space:
    values off by 2e-7 relative (vector residual 5e-6) were measured on a square-section solid beam
    with OpenBLAS's Prescott kernel, where the Rayleigh quotients of the same vectors were within
    6e-11. A Rayleigh quotient errs by the square of its vector's error (Parlett, The Symmetric
    Eigenvalue Problem, 1998, sec. 1.5 and chap. 11).
    """
    return np.einsum("ik,ik->k", X, K @ X) / np.einsum("ik,ik->k", X, M @ X)


def normal_modes(model: Any, n: int, fixed: str | Sequence[int] | np.ndarray | None = None,
                 sigma: float | None = None) -> Modes:
    """The ``n`` lowest elastic modes of ``model`` with ``fixed`` dofs held.

    ``fixed``: None (free body), a node-set name or dof ids. A free body must have exactly six
    zero-frequency modes: they are returned separately as ``rigid`` (mass-orthonormalized
    geometric rigid-body modes), and the elastic shapes are made mass-orthogonal to them.
    A free model grounded by springs has none. Any other count raises :class:`ModelError`.
    ``sigma``: shift in rad^2/s^2 (default 0 when supported, ``-1e-10 lambda_max`` when free).
    """
    held = fixed_dofs(model, fixed)
    M, K, free = model.reduce(held)
    n = mode_count(n, free.size)
    if held.size == 0:
        R_geo = rigid_body_modes(model.points, model.dofs_per_node)[free]
        lam, X, R, shift = free_modes(K, M, R_geo, n, sigma, allow_grounded=True)
        return Modes(lam, _full(model.ndof, free, X), None if R is None else _full(model.ndof, free, R),
                     free, shift.sigma)
    scale = eigenvalue_scale(K, M)
    shift = ShiftInvert(K, M, 0.0 if sigma is None else sigma, what="the supported model")
    lam, X = shift.eigen(n)
    check_no_zero_modes(lam, scale, "the supports leave")
    return Modes(lam, _full(model.ndof, free, X), None, free, shift.sigma)


def free_modes(K: sp.spmatrix, M: sp.spmatrix, R_geo: np.ndarray, n: int, sigma: float | None = None,
               allow_grounded: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, ShiftInvert]:
    """Elastic modes of a free body: ``(lambda (n,), X (ndof, n), R (ndof, 6), shift)``.

    ``R_geo`` (ndof, 6) are the body's geometric rigid-body motions. Exactly six
    zero-frequency modes must be found (or none, with ``allow_grounded``, for a body held by
    springs; then ``R`` is None); ``R`` is ``R_geo`` mass-orthonormalized (Cholesky: the
    translations first, the rotations become rotations about the centre of mass) and the
    elastic shapes are projected mass-orthogonal to it.
    """
    scale = eigenvalue_scale(K, M)
    shift = ShiftInvert(K, M, -SHIFT_RTOL * scale if sigma is None else sigma, what="the free model")
    lam, X = shift.eigen(min(n + 6, K.shape[0]))
    n_rigid = int(np.count_nonzero(lam < RIGID_RTOL * scale))
    if n_rigid != 6 and not (allow_grounded and n_rigid == 0):
        found = f"at least {n_rigid}" if n_rigid == lam.size else str(n_rigid)
        raise ModelError(f"found {found} zero-frequency modes in the free model, expected 6 rigid-body "
                         f"modes: the mesh has disconnected parts or mechanisms, or is partly grounded")
    R = None
    if n_rigid == 6:
        R = _rigid_basis(R_geo, K, M, X[:, :6], scale)
        X = X[:, 6:] - R @ (R.T @ (M @ X[:, 6:]))
        X /= np.sqrt(np.einsum("ik,ik->k", X, M @ X))
        lam = lam[6:]
    if lam.size < n:
        raise ModelError(f"asked for {n} elastic modes, but the free model has only {lam.size} "
                         f"besides its {n_rigid} rigid-body modes")
    return lam[:n], X[:, :n], R, shift


def check_no_zero_modes(lam: np.ndarray, scale: float, what: str) -> None:
    """Raise :class:`ModelError` when eigenvalues ``lam`` contain zero-frequency modes."""
    count = int(np.count_nonzero(lam < RIGID_RTOL * scale))
    if count:
        raise ModelError(f"{what} {count} zero-frequency modes (rigid-body motions or mechanisms) free")


def _rigid_basis(R: np.ndarray, K: sp.spmatrix, M: sp.spmatrix, computed: np.ndarray, scale: float) -> np.ndarray:
    """``R`` mass-orthonormalized, checked to span the ``computed`` zero-frequency modes."""
    L = np.linalg.cholesky(R.T @ (M @ R))
    R = sla.solve_triangular(L, R.T, lower=True).T
    rayleigh = np.einsum("ik,ik->k", R, K @ R)
    outside = computed - R @ (R.T @ (M @ computed))
    if np.max(rayleigh) > RIGID_RTOL * scale or np.max(np.abs(outside)) > 1e-6 * np.max(np.abs(computed)):
        raise ModelError("the model has 6 zero-frequency modes, but they are not its rigid-body motions "
                         "(a mechanism, or springs that ground some motions only)")
    return R


def mode_count(n: int, n_free: int, what: str = "free dofs") -> int:
    """``n`` checked to be a positive integer not above ``n_free`` (the number of ``what``)."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ModelError(f"number of modes n_modes must be a positive integer, got {n!r}")
    if n > n_free:
        raise ModelError(f"asked for {n} modes, but the model has only {n_free} {what}")
    return int(n)


def _full(ndof: int, dofs: np.ndarray, X: np.ndarray) -> np.ndarray:
    """Vectors on ``dofs`` expanded to all ``ndof`` dofs (zeros elsewhere)."""
    out = np.zeros((ndof, X.shape[1]))
    out[dofs] = X
    return out
