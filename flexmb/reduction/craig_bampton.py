"""Craig-Bampton reduction with interface points (docs/theory-reduction.md §2).

Basis: fixed-interface normal modes (every interface point held, plus the ``fixed`` dofs) and
six static constraint modes per interface point (unit motion of one point dof, the others held,
no other load) -- Craig & Bampton, AIAA J. 6 (1968) 1313-1319; Nikravesh 2002 §4.2.3,
eqs. 4.16-4.21. Rigid-body content, for a floating frame:

* ``reference="name"``: the body frame is attached to that interface point (tangent frame):
  its six constraint modes, which carry the rigid-body motion, are dropped;
* no ``reference`` and no ``fixed`` dofs: the six rigid-body modes lie in the span of the
  constraint modes; they are projected out (mass-orthogonally, Buckens/mean-axis conditions,
  Nikravesh 2002, eqs. 3.17-3.18) and the six dependent directions removed;
* ``fixed`` dofs: the body is held; all constraint modes are kept.

The combined basis is then orthonormalized with the reduced eigenproblem (``M = I``, ``K``
diagonal); a remaining zero-frequency mode is an error.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Sequence

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp

from flexmb.errors import ModelError
from flexmb.reduction.eigen import (SHIFT_RTOL, ShiftInvert, check_fe_model, check_no_zero_modes, eigenvalue_scale,
                                   fixed_dofs)
from flexmb.reduction.interfaces import Condensation, resolve_interfaces
from flexmb.reduction.modeset import ModeSet, modeset_from_basis, unit_modal_mass


def craig_bampton(model: Any, interfaces: Mapping[str, Any] | None, n_modes: int = 20,
                  fixed: str | Sequence[int] | np.ndarray | None = None,
                  connection: str | Mapping[str, str] = "rigid", reference: str | None = None,
                  sigma: float | None = None, stress: bool = True) -> ModeSet:
    """Craig-Bampton mode set of ``model``.

    Args:
        model: an FEModel.
        interfaces: name -> node-set name or node ids; each set becomes a 6-dof interface point.
        n_modes: number of fixed-interface normal modes (>= 0).
        fixed: dofs held throughout: None, a node-set name or dof ids.
        connection: "rigid" (RBE2-like) or "average" (RBE3-like), or name -> kind.
        reference: interface the body frame is attached to (its constraint modes are dropped).
        sigma: shift of the fixed-interface eigenproblem, rad^2/s^2 (default 0 when interfaces
            or supports hold the body rigidly, else ``-1e-10 lambda_max``).
        stress: compute the nodal stress of every mode.

    Returns:
        An orthonormal :class:`ModeSet` with ``n_modes + 6 (interfaces kept)`` modes (six fewer
        when the rigid-body modes are projected out).
    """
    check_fe_model(model, "craig_bampton")
    held = fixed_dofs(model, fixed)
    points = resolve_interfaces(model, interfaces, connection)
    names = [p.name for p in points]
    if reference is not None and reference not in names:
        raise ModelError(f"reference interface {reference!r} is not one of the interfaces {names}")
    if not points and held.size == 0:
        raise ModelError("Craig-Bampton reduction needs interfaces or fixed dofs; use free_free_modes for a free body")
    if isinstance(n_modes, bool) or not isinstance(n_modes, (int, np.integer)) or n_modes < 0:
        raise ModelError(f"n_modes must be a non-negative integer, got {n_modes!r}")
    cond = Condensation(model, points, held)
    i = cond.interior
    K_i = model.K[i]
    K_ii, M_ii = K_i[:, i].tocsr(), model.M[i][:, i].tocsr()
    average = [p for p in points if p.connection == "average"]
    G = sp.vstack([cond.C[p.name][:, :cond.n_interior] for p in average]).tocsr() if average else None
    n_free = i.size - (G.shape[0] if G is not None else 0)
    if n_modes > n_free:
        raise ModelError(f"asked for {n_modes} fixed-interface modes, but only {n_free} dofs are free "
                         f"with the interfaces held")
    scale = eigenvalue_scale(K_ii, M_ii)
    held_rigidly = held.size > 0 or bool(cond.rigid)
    if sigma is None:
        sigma = 0.0 if held_rigidly else -SHIFT_RTOL * scale
    shift = ShiftInvert(K_ii, M_ii, sigma, G, what="the model with its interfaces held")
    lam, X = shift.eigen(n_modes) if n_modes else (np.zeros(0), np.zeros((i.size, 0)))
    check_no_zero_modes(lam, scale, "holding the interfaces leaves")
    kept = [p for p in points if p.name != reference]
    W = np.vstack([X, np.zeros((cond.n - cond.n_interior, n_modes))])
    W = unit_modal_mass(model.M, cond.A, np.hstack([W, _constraint_modes(cond, kept, average, shift, K_i)]))
    floating = held.size == 0 and reference is None
    if floating:
        W = _without_rigid_modes(model, cond, W)
    info = {"fixed_interface_modes": int(n_modes), "constraint_modes": 6 * len(kept), "sigma": float(shift.sigma),
            "connection": {p.name: p.connection for p in points}, "fixed_dofs": int(held.size),
            "rigid_modes_removed": 6 if floating else 0,
            "fixed_interface_frequencies_hz": (np.sqrt(lam) / (2 * np.pi)).tolist()}
    return modeset_from_basis(model, cond, W, scale=scale, kind="craig-bampton" if points else "normal-modes",
                              reference=reference, stress=stress, expect_dropped=6 if floating else 0, info=info)


def _constraint_modes(cond: Condensation, kept: list, average: list, shift: ShiftInvert, K_i: sp.spmatrix
                      ) -> np.ndarray:
    """Static constraint modes (cond.n, 6 len(kept)) in condensed coordinates, one multi-RHS solve.

    Rigid point j: ``K_ii x = -K_iS T_j e`` with its q_j = e; average point j: ``K_ii x + G^T l = 0``,
    ``G_j x = e``; all other points held.
    """
    n_i, k = cond.n_interior, 6 * len(kept)
    b = np.zeros((n_i, k))
    g = np.zeros((6 * len(average), k))
    q = np.zeros((cond.n - n_i, k))
    for j, p in enumerate(kept):
        cols = slice(6 * j, 6 * j + 6)
        if p.connection == "rigid":
            r = cond.rigid.index(p)
            b[:, cols] = -np.asarray(K_i[:, p.dofs] @ p.T)
            q[6 * r:6 * r + 6, cols] = np.eye(6)
        else:
            a = average.index(p)
            g[6 * a:6 * a + 6, cols] = np.eye(6)
    x = shift.solve(b, g if average else None) if k else np.zeros((n_i, 0))
    return np.vstack([x, q])


def _without_rigid_modes(model: Any, cond: Condensation, W: np.ndarray) -> np.ndarray:
    """``W`` with the rigid-body motions projected out mass-orthogonally (theory §2.1)."""
    R_w = cond.rigid_modes()
    R = np.asarray(cond.A @ R_w)
    L = np.linalg.cholesky(R.T @ np.asarray(model.M @ R))
    R_w = sla.solve_triangular(L, R_w.T, lower=True).T
    R = sla.solve_triangular(L, R.T, lower=True).T
    return W - R_w @ (R.T @ np.asarray(model.M @ (cond.A @ W)))
