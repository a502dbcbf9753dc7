"""Free-free normal modes with static correction (docs/theory-reduction.md §2.2).

Elastic modes of the unsupported body (the six rigid-body modes found, checked and separated),
optionally enriched by residual attachment modes: for a unit load on each dof of each
interface point, the inertia-relief static response (Craig & Chang 1977, "On the use of
attachment modes in substructure coupling for dynamic analysis", AIAA paper 77-405;
MacNeal, Computers & Structures 1 (1971) 581-601) minus the part carried by the kept modes,

    g = (I - M R R^T) f,   x = K^+ g  (x mass-orthogonal to R),   x_res = x - Phi diag(1/lambda) Phi^T g.

All modes are mass-orthogonal to the rigid-body modes (Buckens / mean-axis frame, Nikravesh 2002
eqs. 3.17-3.18); the combined set is orthonormalized with the reduced eigenproblem.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from flexmb.reduction.eigen import check_fe_model, eigenvalue_scale, free_modes, mode_count
from flexmb.reduction.interfaces import Condensation, resolve_interfaces
from flexmb.reduction.modeset import ModeSet, modeset_from_basis


def free_free_modes(model: Any, n_modes: int, static_correction: Mapping[str, Any] | None = None,
                    connection: str | Mapping[str, str] = "rigid", sigma: float | None = None,
                    stress: bool = True) -> ModeSet:
    """Free-free mode set of ``model``: ``n_modes`` elastic modes plus 6 correction modes per interface.

    Args:
        model: an FEModel without supports (exactly six rigid-body modes are required).
        n_modes: number of elastic normal modes.
        static_correction: interface name -> node-set name or node ids, or None; each interface
            point gets six residual attachment modes and appears in ``interfaces``.
        connection: "rigid" (the node set moves rigidly with its point, also in the normal
            modes) or "average", or name -> kind.
        sigma: shift, rad^2/s^2 (default ``-1e-10 lambda_max``).
        stress: compute the nodal stress of every mode.
    """
    check_fe_model(model, "free_free_modes")
    points = resolve_interfaces(model, static_correction, connection)
    cond = Condensation(model, points, np.zeros(0, dtype=np.int64))
    K_w, M_w = cond.matrices()
    n_modes = mode_count(n_modes, cond.n - 6, "elastic dofs (free dofs minus 6 rigid-body modes)")
    lam, X, R, shift = free_modes(K_w, M_w, cond.rigid_modes(), n_modes, sigma)
    basis = [X]
    if points:
        f = np.hstack([cond.C[p.name].T.toarray() for p in points])          # unit point loads
        g = f - M_w @ (R @ (R.T @ f))                                        # inertia relief
        x = shift.solve(g, deflate=R)
        x_res = x - X @ ((X.T @ g) / lam[:, None])                             # residual part
        basis.append(x_res / np.sqrt(np.einsum("ik,ik->k", x, M_w @ x)))     # scaled before the cut
    info = {"elastic_modes": int(n_modes), "correction_modes": 6 * len(points), "rigid_modes_removed": 6,
            "sigma": float(shift.sigma),
            "connection": {p.name: p.connection for p in points},
            "elastic_frequencies_hz": (np.sqrt(lam) / (2 * np.pi)).tolist()}
    return modeset_from_basis(model, cond, np.hstack(basis), scale=eigenvalue_scale(K_w, M_w), kind="free-free",
                              stress=stress, info=info)
