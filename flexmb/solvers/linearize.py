"""Linearization about an equilibrium or a steady motion, with holonomic and velocity constraints.

The equations ``M a - Q + Phi_q^T lambda + B^T mu = 0``, ``Phi(q, t) = 0``, ``B(q) v = b`` linearized
about a reference state ``(q0, v0, a0, lambda0)`` (docs/theory.md §11):

    M da + C dv + K dq + Phi_q^T dlambda + B^T dmu = 0,     K = dr/dq + sum lambda d2Phi/dq2 + d(B^T mu)/dq,
    Phi_q dq = 0,       B dv + (B v)_q dq = 0,

projected on the constraint manifold with null-space bases (Schwab & Meijaard's minimal-coordinate
recipe, seed 003; Schwab & Meijaard, "Dynamics of flexible multibody systems with non-holonomic
constraints: a finite element approach", Multibody System Dynamics 10 (2003) 107-123):

    dq = N1 y   (N1: null space of Phi_q),      dv = V y + N2 z   (N2: null space of [Phi_q; B]),
    V = -[Phi_q; B]^+ [0; (B v)_q] N1,

so ``y`` (position perturbations) and ``z`` (independent velocity perturbations) are the
minimal state: ``y' = N1^T (V y + N2 z)``, ``N2^T M N2 z' = -N2^T (M V y' + C dv + K N1 y)``. The
frozen linearization is time-invariant when the reference motion leaves ``Phi_q`` unchanged
(``(Phi_q v0)_q = 0``: equilibria, steady translations such as a strut moving at constant speed);
a motion that turns the constraint Jacobian (a spinning body) is refused (use :func:`flexmb.campbell`
for a spinning flexible body).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla

from ..errors import ModelError
from ..results import Result
from .initial import accelerations, consistent_start, handle_redundancy

__all__ = ["Linearization", "linearize"]


@dataclass
class Linearization:
    """The linearized motion ``x' = A x`` in minimal coordinates ``x = (y, z)``.

    Attributes:
        A: (n, n) state matrix, 1/s (n = n_position + n_velocity).
        eigenvalues: (n,) complex, 1/s, by decreasing real part (then decreasing imaginary part).
        modes_q, modes_v: (nq, n) complex mode shapes in the full coordinates (dq and dv of each
            eigenvector, normalized to unit largest |dq| where dq is not zero, else unit largest |dv|).
        N1, N2, V: the bases of the projection (module doc); ``q``, ``v``, ``t``: the reference state.
    """

    A: np.ndarray
    eigenvalues: np.ndarray
    modes_q: np.ndarray
    modes_v: np.ndarray
    N1: np.ndarray
    N2: np.ndarray
    V: np.ndarray
    q: np.ndarray
    v: np.ndarray
    t: float

    @property
    def n_position(self) -> int:
        """Independent position perturbations (degrees of freedom of the configuration)."""
        return self.N1.shape[1]

    @property
    def n_velocity(self) -> int:
        """Independent velocity perturbations."""
        return self.N2.shape[1]

    @property
    def frequencies(self) -> np.ndarray:
        """Damped natural frequencies |Im lambda| (rad/s) of the eigenvalues with Im > 0, ascending."""
        w = self.eigenvalues
        return np.sort(w.imag[w.imag > 0.0])

    @property
    def stable(self) -> bool:
        """Whether every eigenvalue has a negative real part (asymptotic stability), to 1e-9/s."""
        return bool(np.all(self.eigenvalues.real < -1e-9))


def _state(system, asm, state, t, row):
    """Reference (q, v, t) from None (consistent initial state), a Result (its row ``row``) or (q, v)."""
    if state is None:
        q, v, _, _ = consistent_start(asm, 0.0 if t is None else float(t))
        return q, v, 0.0 if t is None else float(t)
    if isinstance(state, Result):
        try:
            q, v, tr = state.q[row], state.v[row], state.t[row]
        except (IndexError, TypeError):
            raise ModelError(f"linearize: row {row!r} is not a row of the Result ({len(state.t)} rows)") from None
        return np.array(q, dtype=float), np.array(v, dtype=float), float(tr) if t is None else float(t)
    try:
        q, v = (np.asarray(x, dtype=float).reshape(-1) for x in state)
    except (TypeError, ValueError):
        raise ModelError(f"linearize: state must be None, a Result or a pair (q, v), got {state!r}") from None
    if q.size != asm.nq or v.size != asm.nq:
        raise ModelError(f"linearize: system {system.name!r} has {asm.nq} coordinates; state has q of {q.size} "
                         f"and v of {v.size}")
    return q, v, 0.0 if t is None else float(t)


def _dense(S) -> np.ndarray:
    return S.toarray() if hasattr(S, "toarray") else np.asarray(S)


def _coordinate_name(asm, k: int) -> str:
    for b in asm.system.bodies:
        if b.offset <= k < b.offset + b.ncoord:
            names = ["x", "y", "z", "e0", "e1", "e2", "e3"]
            return f"body {b.name!r} coordinate {names[k - b.offset] if k - b.offset < 7 else k - b.offset}"
    return f"coordinate {k}"


def linearize(system, state=None, t: float | None = None, tol: float = 1e-8, steady_tol: float = 1e-6,
              redundant: str = "remove", row: int = -1) -> Linearization:
    """Linearize ``system`` about ``state`` (None: the consistent initial state; a Result: its row ``row``,
    default the last; or ``(q, v)``) at time ``t`` (s; default 0, or the Result's time of that row). Returns a
    :class:`Linearization` (state matrix, eigenvalues, mode shapes in the full coordinates).

    The state must satisfy the constraints (``|Phi|``, ``|Phi_q v + Phi_t|``, ``|B v - b|`` <= ``tol``) and
    be an equilibrium or a steady motion: the accelerations of translations and modal coordinates at most
    ``steady_tol`` (m/s^2), and the constraint Jacobian not turned by the motion; otherwise ModelError says
    which residual is not zero. Dense linear algebra: meant for models of up to a few hundred coordinates.
    """
    asm = system.compile()
    q, v, t = _state(system, asm, state, t, row)
    asm.start(q, v)
    handle_redundancy(asm, q, t, redundant)
    act, vel = asm.active, asm.velocity_rows
    hol, nhv = act & ~vel, act & vel
    c = asm.constraints(q, v, t)
    rate = c.jac @ v + c.phi_t
    velocity = np.where(act, np.where(vel, c.phi, rate), 0.0)
    for what, res in (("position constraint", np.where(hol, c.phi, 0.0)),
                      ("velocity constraint (Phi_q v + Phi_t, B v - b)", velocity)):
        k = int(np.argmax(np.abs(res)))
        if abs(res[k]) > tol:
            raise ModelError(f"linearize: the state violates the {what} {asm.labels[k]!r} (residual "
                             f"{res[k]:.3e} > tol {tol:g}); pass a state of a simulation or of static_equilibrium")
    a, lam = accelerations(asm, q, v, t)
    euler = np.zeros(asm.nq, dtype=bool)
    for b in system.bodies:
        euler[b.offset + 3:b.offset + 7] = True
    acc = np.where(euler, 0.0, np.abs(a))
    k = int(np.argmax(acc))
    if acc[k] > steady_tol:
        raise ModelError(f"linearize: the state is not an equilibrium or a steady motion: {_coordinate_name(asm, k)} "
                         f"accelerates at {a[k]:.4g} (m/s^2; steady_tol {steady_tol:g})")
    nq = asm.nq
    M = _dense(asm.residual(q, v, a, lam, t, coef=(1.0, 0.0, 0.0, 0.0, 0.0))[2])[:nq, :nq]
    C = _dense(asm.residual(q, v, a, lam, t, coef=(0.0, 1.0, 0.0, 0.0, 0.0))[2])[:nq, :nq]
    S = _dense(asm.residual(q, v, a, lam, t, coef=(0.0, 0.0, 1.0, 1.0, 0.0))[2])
    K = S[:nq, :nq]
    J = S[nq:, :nq]                                          # Phi_q and B (nh = (1, 0))
    W = _dense(asm.residual(q, v, a, lam, t, coef=(0.0, 0.0, 0.0, 0.0, 0.0), nh=(0.0, 1.0))[2])[nq:, :nq]
    Jh, B, Wv = J[hol], J[nhv], W[nhv]
    N1 = sla.null_space(Jh) if Jh.shape[0] else np.eye(nq)
    # the frozen linearization is time-invariant only if the motion leaves Phi_q unchanged: (Phi_q v)_q N1 = 0,
    # (Phi_q v)_q = d/de Phi_q(q + e v) for holonomic rows (symmetric Hessians), by central differences
    eps = 1e-6 * (1.0 + np.max(np.abs(q)))
    Wh = (asm.constraints(q + eps * v, v, t).jac.toarray() - asm.constraints(q - eps * v, v, t).jac.toarray())[hol]
    Wh_N1 = np.abs(Wh @ N1).max(initial=0.0) / (2.0 * eps)
    if Wh_N1 > 1e3 * tol * (1.0 + np.abs(v).max()):
        raise ModelError(f"linearize: the reference motion turns the holonomic constraint Jacobian "
                         f"(|(Phi_q v)_q N1| = {Wh_N1:.3e}): the frozen linearization is not time-invariant; "
                         "linearize about an equilibrium or a steady translation (flexmb.campbell handles a "
                         "spinning flexible body)")
    P = np.vstack([Jh, B])
    N2 = sla.null_space(P) if P.shape[0] else np.eye(nq)
    V = -np.linalg.pinv(P) @ np.vstack([np.zeros_like(Jh), Wv]) @ N1
    n1, n2 = N1.shape[1], N2.shape[1]
    Ay = np.hstack([N1.T @ V, N1.T @ N2])                   # y' = Ay (y, z)
    Mr = N2.T @ M @ N2
    rhs = -(N2.T @ M @ V) @ Ay - N2.T @ C @ np.hstack([V, N2]) - np.hstack([N2.T @ K @ N1, np.zeros((n2, n2))])
    try:
        Az = np.linalg.solve(Mr, rhs)
    except np.linalg.LinAlgError:
        raise ModelError("linearize: the reduced mass matrix N2^T M N2 is singular: a free motion has no "
                         "inertia") from None
    A = np.vstack([Ay, Az])
    w, X = np.linalg.eig(A)
    order = np.lexsort((-w.imag, -w.real))
    w, X = w[order], X[:, order]
    dq, dv = N1 @ X[:n1], V @ X[:n1] + N2 @ X[n1:]
    for k in range(w.size):
        ref = dq[:, k] if np.abs(dq[:, k]).max() > 1e-12 else dv[:, k]
        s = ref[np.argmax(np.abs(ref))]
        dq[:, k] /= s
        dv[:, k] /= s
    return Linearization(A, w, dq, dv, N1, N2, V, q, v, t)
