"""Redundant-constraint detection and consistent initial conditions.

* Redundancy: rank-revealing QR with column pivoting of ``Phi_q^T`` (Neto &
  Ambrosio 2002: "stabilization methods ... redundant constraints"),
  applied only to the closed-loop core of the body graph: bodies that hang on a
  tree branch (a leaf, recursively) are checked with a small block of their own
  columns and removed first, so a 1000-link chain costs no dense QR.
* Positions: Gauss-Newton minimum-norm correction ``[[I, Phi_q^T],[Phi_q, 0]]``.
* Velocities: projection onto ``Phi_q v = -Phi_t`` and ``B v = b`` (velocity constraints, docs/theory.md §8).
* Accelerations and multipliers: ``[[M, Phi_q^T],[Phi_q, 0]] [a; lambda] = [Q; gamma]``.
"""
from __future__ import annotations

import warnings

import numpy as np
import scipy.linalg as sla

from ..errors import (InconsistentInitialConditions, RedundantConstraintError,  # noqa: F401 (old import path)
                      RedundantConstraintWarning, SingularConfigurationError, user_stacklevel)
from ..bodies import free_rotations
from ..linalg import SingularMatrixError, factorize, solve_saddle_scaled

RANK_TOL = 1e-8
"""Relative pivot size below which a (row-normalized) constraint row counts as dependent."""


def _dependent_rows(J: np.ndarray, keep: np.ndarray | None = None) -> np.ndarray:
    """Local indices of rows of J that depend on the others (pivoted QR of J^T).

    Rows flagged in ``keep`` (the Euler-parameter normalizations, always
    independent of each other) are taken first and projected out, so a
    dependency is always charged to a joint row.
    """
    if J.shape[0] == 0:
        return np.zeros(0, dtype=np.int64)
    keep = np.zeros(J.shape[0], dtype=bool) if keep is None else keep
    norms = np.linalg.norm(J, axis=1)
    zero = norms < 1e-14
    Jn = J / np.where(zero, 1.0, norms)[:, None]
    free = np.flatnonzero(~keep & ~zero)
    B = Jn[free]
    if keep.any():
        Qk, _ = np.linalg.qr(Jn[keep].T)
        B = B - (B @ Qk) @ Qk.T
    if free.size == 0:
        return np.flatnonzero(zero & ~keep)
    _, R, piv = sla.qr(B.T, mode="economic", pivoting=True)
    d = np.abs(np.diag(R))
    rank = int(np.sum(d > RANK_TOL))
    return np.sort(np.concatenate([free[piv[rank:]], np.flatnonzero(zero & ~keep)]).astype(np.int64))


def find_redundant(asm, q: np.ndarray, t: float) -> np.ndarray:
    """Global indices of constraint rows that are linearly dependent at q.

    Leaf bodies of the body graph (one neighbour, the ground counting as one)
    are peeled off with a work queue, O(N): a leaf whose joint rows plus its
    normalization row have full rank in its own columns cannot take part in a
    dependency. What remains (the closed loops) gets one dense pivoted QR.
    """
    jac = asm.constraints(q, np.zeros(asm.nq), t).jac.tocsr()
    bodies = asm.system.bodies
    body_of = {id(b): k for k, b in enumerate(bodies)}
    pair_rows: dict[tuple[int, int], list[int]] = {}
    for k, j in enumerate(asm.system.joints):
        a, b = body_of.get(id(j.body_a), -1), body_of.get(id(j.body_b), -1)
        pair_rows.setdefault((min(a, b), max(a, b)), []).extend(np.flatnonzero(asm.row_joint == k).tolist())
    neighbours: list[set[int]] = [set() for _ in bodies]
    for a, b in pair_rows:
        if a >= 0:
            neighbours[a].add(b)
        if b >= 0:
            neighbours[b].add(a)
    alive = np.ones(len(bodies), dtype=bool)
    done_pairs = set()
    queue = [k for k in range(len(bodies)) if len(neighbours[k]) <= 1]
    while queue:
        k = queue.pop()
        live = [n for n in neighbours[k] if n < 0 or alive[n]]
        if not alive[k] or len(live) > 1:
            continue
        rows = [asm.norm.rows[k]]
        key = None
        if live:
            key = (min(k, live[0]), max(k, live[0]))
            rows += pair_rows[key]
        cols = bodies[k].offset + np.arange(bodies[k].ncoord)
        block = jac[rows].toarray()[:, cols]
        if _dependent_rows(block, np.arange(len(rows)) == 0).size:
            continue   # not independent on its own: leave it to the core check
        alive[k] = False
        if key is not None:
            done_pairs.add(key)
            other = live[0]
            if other >= 0 and alive[other] and sum(1 for n in neighbours[other] if n < 0 or alive[n]) <= 1:
                queue.append(other)
    core = np.flatnonzero(alive)
    if core.size == 0:
        return np.zeros(0, dtype=np.int64)
    core_rows = {asm.norm.rows[k] for k in core}
    for key, rows in pair_rows.items():
        if key not in done_pairs:
            core_rows.update(rows)
    core_rows = np.array(sorted(core_rows), dtype=np.int64)
    J = jac[core_rows].toarray()
    used = np.flatnonzero(np.abs(J).sum(axis=0) > 0)
    return core_rows[_dependent_rows(J[:, used], np.isin(core_rows, asm.norm.rows))]


def handle_redundancy(asm, q: np.ndarray, t: float, policy: str) -> list[str]:
    """Detect redundant rows; switch them off (policy "remove") or raise ("error")."""
    asm.set_active(np.ones(asm.m, dtype=bool))
    rows = find_redundant(asm, q, t)
    if rows.size == 0:
        return []
    labels = [asm.labels[r] for r in rows]
    msg = (f"{rows.size} redundant constraint equation(s) (linearly dependent on the others): "
           + "; ".join(labels))
    if policy == "error":
        raise RedundantConstraintError(msg + ". Remove them from the model, or simulate with redundant='remove'.",
                                       labels)
    warnings.warn(msg + ". They are switched off; their reactions are carried by the remaining joints.",
                  RedundantConstraintWarning, stacklevel=user_stacklevel())
    active = asm.active.copy()
    active[rows] = False
    asm.set_active(active)
    return labels


def _worst(asm, phi: np.ndarray) -> str:
    k = int(np.argmax(np.abs(phi)))
    return f"{asm.labels[k]} (residual {phi[k]:.3e})"


def project_positions(asm, q: np.ndarray, t: float, tol: float = 1e-10, max_iter: int = 50) -> np.ndarray:
    """Closest q (Euclidean) with Phi(q, t) = 0; raises InconsistentInitialConditions."""
    q = q.copy()
    zero = np.zeros(asm.nq)
    lam = np.zeros(asm.m)
    for _ in range(max_iter):
        # a tiny negative lambda-diagonal (damped least squares) tolerates redundant rows
        # velocity rows (docs/theory.md §8) are switched off: they constrain no position
        _, c, S = asm.residual(q, zero, zero, lam, t, coef=(0.0, 0.0, 0.0, 0.0, 1.0), lam_diag=-1e-12, nh=None)
        if np.max(np.abs(c.phi), initial=0.0) <= tol:
            return q
        try:
            sol = factorize(S).solve(np.concatenate([zero, -c.phi]))
        except SingularMatrixError:
            raise InconsistentInitialConditions(
                f"the initial configuration cannot be made consistent: the constraint Jacobian became singular "
                f"during position projection; worst: {_worst(asm, c.phi)}. Check joint points and axes."
            ) from None
        q += sol[: asm.nq]
        if not np.all(np.isfinite(q)):
            break
    c = asm.constraints(q, zero, t)
    c.phi[asm.velocity_rows] = 0.0
    raise InconsistentInitialConditions(
        f"the initial configuration cannot be made consistent (after {max_iter} projection iterations "
        f"max |Phi| = {np.max(np.abs(c.phi)):.3e}); worst: {_worst(asm, c.phi)}. Check joint points and axes.")


def project_velocities(asm, q: np.ndarray, v: np.ndarray, t: float) -> np.ndarray:
    """Closest v with Phi_q v + Phi_t = 0 and, for velocity constraints, B v = b (docs/theory.md §8)."""
    zero = np.zeros(asm.nq)
    _, c, S = asm.residual(q, zero, zero, np.zeros(asm.m), t, coef=(0.0, 0.0, 0.0, 0.0, 1.0))
    try:
        sol = factorize(S).solve(np.concatenate([v, -c.phi_t]))
    except SingularMatrixError as exc:
        raise SingularConfigurationError(f"velocity projection at t = {t:.6g} s: singular constraint Jacobian "
                                         f"({exc})") from None
    return sol[: asm.nq]


def accelerations(asm, q: np.ndarray, v: np.ndarray, t: float) -> tuple[np.ndarray, np.ndarray]:
    """Accelerations and multipliers from the index-1 equations; velocity rows give ``B a = -(B v)_q v + b'``
    (their ``gamma``, docs/theory.md §8)."""
    zero = np.zeros(asm.nq)
    r0, c, S = asm.residual(q, v, zero, np.zeros(asm.m), t, coef=(1.0, 0.0, 0.0, 0.0, 0.0))
    try:
        sol = solve_saddle_scaled(S, np.concatenate([-r0, c.gamma]), asm.nq, asm.inertia_scale)   # heavy bodies
    except SingularMatrixError as exc:
        raise SingularConfigurationError(
            f"singular configuration at t = {t:.6g} s: the mass/constraint matrix cannot be factorized "
            f"({exc}); the mechanism is at a kinematic singularity or a body has no inertia in a free direction"
            f"{_without_inertia(asm, q, t)}") from None
    return sol[: asm.nq], sol[asm.nq:]


def _without_inertia(asm, q: np.ndarray, t: float) -> str:
    """``" (free rotations without inertia: 'a' about (1, 0, 0) with 'b' about (1, 0, 0))"`` when rotations that
    carry no inertia are left free by the joints (flexmb/bodies/free_rotations.py), '' otherwise."""
    if not asm.rigid.no_inertia:
        return ""
    free = free_rotations.unheld_text(asm, q, t)
    return f" (free rotations without inertia, turning several bodies together: {free})" if free else ""


def consistent_start(asm, t0: float, redundant: str = "remove"):
    """Projected q0, v0 and the matching accelerations and multipliers."""
    q, v = asm.initial_state()
    asm.set_active(np.ones(asm.m, dtype=bool))
    q = project_positions(asm, q, t0)
    handle_redundancy(asm, q, t0, redundant)
    v = free_rotations.lever_rates(asm, q, v, t0)
    v = free_rotations.drop_spin(asm, q, project_velocities(asm, q, v, t0))
    free_rotations.check_loads(asm, q, v, t0)
    a, lam = accelerations(asm, q, v, t0)
    return q, v, a, lam
