"""Geometric-stiffness load cases for dynamic stiffening of modal bodies (docs/theory-stiffening.md).

A linear modal body on a floating frame misses the stiffening (or softening) that its inertial
and interface loads cause through the geometric stiffness. The method of Banerjee & Dickens
(J. Guidance 13 (1990) 221-227; He 1992, §4.3.1) and Wallrapp & Schwertassek (Int. J. Numer.
Meth. Eng. 32 (1991) 1833-1850) precomputes the geometric stiffness of unit load cases and scales
them with the current motion (He 1992, eq. 3.30: ``K_g = R_x'' K_g1 - Omega^2/2 K_g2 - P(0) K_g0``
is the beam special case).

Inertial cases (theory §1): the body-frame acceleration field of a material point at ``x``,
``a0 + alpha x x + omega x (omega x x) = sum_k c_k a_k(x)``, with the twelve coefficients
:data:`INERTIAL_CASES` (:func:`inertial_coefficients`) and fields :func:`acceleration_fields`;
the nodal load of case k is ``f_k = -M a_k`` (d'Alembert, consistent mass). Interface cases:
six unit loads (N, N m, body axes) at each interface point but the reference one. Each case is
solved statically under the mode set's reference conditions (clamped reference interface and
fixed dofs, or inertia relief for a free set, theory §2); its element stresses give
``Kg(sigma_k)`` and the modal matrix ``G_k = phi^T Kg(sigma_k) phi``. At run time the modal
stiffness becomes ``K + sum_k c_k G_k + sum_j sum_i F_ji G_ji``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp

from flexmb.errors import ModelError
from flexmb.reduction.eigen import SHIFT_RTOL, ShiftInvert, eigenvalue_scale
from flexmb.reduction.interfaces import Condensation, resolve_interfaces, rigid_body_modes

INERTIAL_CASES = ("ax", "ay", "az", "alx", "aly", "alz", "wxwx", "wywy", "wzwz", "wxwy", "wywz", "wxwz")
"""Inertial unit load cases, in the order of :func:`inertial_coefficients`."""

INTERFACE_CASES = ("fx", "fy", "fz", "mx", "my", "mz")
"""Unit interface load cases, force (N) and moment (N m) about the interface point, body axes."""

_PRODUCTS = ((0, 0), (1, 1), (2, 2), (0, 1), (1, 2), (0, 2))
"""Index pairs (i, j) of the centrifugal cases wxwx ... wxwz."""

POSITION_RTOL = 1e-9
"""Interface points recomputed on a given model must match the stored ones to this (x model size)."""

SUPPORT_COND_LIMIT = 1e10
"""A free body's six support dofs must hold its rigid-body modes with ``cond(R[S])`` below this."""


@dataclass(frozen=True, eq=False)
class StiffeningMatrices:
    """Modal geometric stiffness of unit load cases (theory §3).

    Attributes:
        inertial: (12, m, m) ``G_k`` per unit coefficient ``c_k`` of :data:`INERTIAL_CASES`
            (``c`` in m/s^2, rad/s^2, rad^2/s^2); ``sum_k c_k G_k`` has the units of the modal
            stiffness ``K``.
        interfaces: interface name -> (6, m, m) ``G`` per unit load of :data:`INTERFACE_CASES`
            (N, N m) acting on the body at that interface point, body axes.
    """

    inertial: np.ndarray
    interfaces: dict[str, np.ndarray]

    def __post_init__(self) -> None:
        inertial = np.asarray(self.inertial, dtype=float)
        if inertial.ndim != 3 or inertial.shape[0] != len(INERTIAL_CASES) or inertial.shape[1] != inertial.shape[2]:
            raise ModelError(f"inertial stiffening matrices must have shape (12, m, m), got {inertial.shape}")
        m = inertial.shape[1]
        interfaces = {str(k): np.asarray(v, dtype=float) for k, v in dict(self.interfaces).items()}
        bad = [k for k, v in interfaces.items() if v.shape != (len(INTERFACE_CASES), m, m)]
        if bad:
            raise ModelError(f"interface stiffening matrices of {bad} must have shape (6, {m}, {m})")
        object.__setattr__(self, "inertial", inertial)
        object.__setattr__(self, "interfaces", interfaces)

    @property
    def n_modes(self) -> int:
        """Number of modal coordinates m."""
        return self.inertial.shape[1]

    def transformed(self, V: np.ndarray) -> "StiffeningMatrices":
        """The matrices for modal coordinates ``eta = V eta'`` (V (m, r)): ``G' = V^T G V``."""
        V = np.asarray(V, dtype=float)
        if V.ndim != 2 or V.shape[0] != self.n_modes:
            raise ModelError(f"coordinate change must have shape ({self.n_modes}, r), got {V.shape}")
        return StiffeningMatrices(_congruence(self.inertial, V),
                                  {k: _congruence(v, V) for k, v in self.interfaces.items()})

    def matrix(self, coefficients: Sequence[float] | np.ndarray,
               interface_loads: dict[str, Sequence[float] | np.ndarray] | None = None) -> np.ndarray:
        """``sum_k c_k G_k + sum_j F_j . G_j`` (m, m), the stiffness to add to the modal ``K``.

        ``coefficients``: (12,) from :func:`inertial_coefficients`; ``interface_loads``: name ->
        (6,) force (N) and moment (N m) acting on the body at that interface, body axes.
        """
        c = np.asarray(coefficients, dtype=float)
        if c.shape != (len(INERTIAL_CASES),):
            raise ModelError(f"need {len(INERTIAL_CASES)} inertial coefficients {INERTIAL_CASES}, got shape {c.shape}")
        out = np.einsum("k,kab->ab", c, self.inertial)
        for name, load in (interface_loads or {}).items():
            if name not in self.interfaces:
                raise ModelError(f"no interface stiffening matrices for {name!r}; available: "
                                 f"{', '.join(sorted(self.interfaces)) or 'none'} (the reference has none)")
            F = np.asarray(load, dtype=float)
            if F.shape != (len(INTERFACE_CASES),):
                raise ModelError(f"interface load of {name!r} must be (fx, fy, fz, mx, my, mz), got shape {F.shape}")
            out = out + np.einsum("k,kab->ab", F, self.interfaces[name])
        return out


@dataclass(frozen=True, eq=False)
class LoadCases:
    """Static solutions of the stiffening load cases (theory §2).

    Attributes:
        names: case names, ``INERTIAL_CASES`` then ``"<interface>:<fx..mz>"``.
        rhs: (n, k) loads in the condensed coordinates ``w`` of ``condensation`` as solved
            (``A^T f`` for nodal loads ``f``, ``C_j^T e`` for interface cases; after inertia
            relief for a free set), N and N m.
        displacements: (ndof, k) static displacements per unit case, m and rad.
        relieved: True when inertia relief was used (free set).
        condensation: the coordinates ``w`` (interface points resolved on the model).
    """

    names: tuple[str, ...]
    rhs: np.ndarray
    displacements: np.ndarray
    relieved: bool
    condensation: Condensation


def _congruence(G: np.ndarray, V: np.ndarray) -> np.ndarray:
    """``V^T G_k V`` for a stack ``G`` (k, m, m)."""
    return np.einsum("kab,ai,bj->kij", G, V, V, optimize=True)


def inertial_coefficients(a0: Sequence[float], alpha: Sequence[float], omega: Sequence[float]) -> np.ndarray:
    """The 12 coefficients ``c`` of :data:`INERTIAL_CASES` for a body-frame motion.

    ``a0``: acceleration of the frame origin minus gravity, m/s^2; ``alpha``: angular
    acceleration, rad/s^2; ``omega``: angular velocity, rad/s; all in body axes (theory eq. 1.2).
    """
    a0, alpha, w = (np.asarray(v, dtype=float).reshape(3) for v in (a0, alpha, omega))
    products = [w[i] * w[j] for i, j in _PRODUCTS]
    return np.concatenate([a0, alpha, products])


def acceleration_fields(points: np.ndarray, dofs_per_node: int) -> np.ndarray:
    """Unit acceleration fields ``a_k`` (N dpn, 12) of :data:`INERTIAL_CASES` at nodes ``points``.

    Translations ``e_i``; angular acceleration ``e_i x x`` with ``e_i`` on rotational dofs (the
    rigid rotation modes); centrifugal products ``e_i x_i - x`` (i = j) and ``e_i x_j + e_j x_i``
    (i != j) with zero rotational dofs (theory eq. 1.3; He 1992, eq. 4.9 without elastic terms).
    """
    x = np.asarray(points, dtype=float)
    n = x.shape[0]
    out = np.zeros((n, dofs_per_node, len(INERTIAL_CASES)))
    out[:, :, :6] = rigid_body_modes(x, dofs_per_node).reshape(n, dofs_per_node, 6)
    for k, (i, j) in enumerate(_PRODUCTS, start=6):
        if i == j:
            out[:, :3, k] = -x
            out[:, i, k] += x[:, i]
        else:
            out[:, i, k] = x[:, j]
            out[:, j, k] = x[:, i]
    return out.reshape(n * dofs_per_node, len(INERTIAL_CASES))


def stiffening_matrices(modes: Any, model: Any = None) -> StiffeningMatrices:
    """Modal geometric-stiffness matrices of the inertial and interface unit load cases.

    Args:
        modes: a :class:`~flexmb.reduction.ModeSet`.
        model: the FEModel the modes were computed from (default: ``modes.model``); needed for
            sets loaded from a file, which carry no model.

    Raises :class:`ModelError` when the model is missing or does not match the set, or when the
    set's reference conditions cannot be recovered (theory §2.3).
    """
    model = _model_of(modes, model)
    cases = static_load_cases(modes, model)
    phi = modes.phi
    G = np.empty((len(cases.names), modes.n_modes, modes.n_modes))
    for k in range(len(cases.names)):
        Kg = model.geometric_stiffness_from_stresses(model.element_stresses(cases.displacements[:, k]))
        G[k] = phi.T @ np.asarray(Kg @ phi)
    n_in = len(INERTIAL_CASES)
    names = _loaded_interfaces(modes)
    return StiffeningMatrices(G[:n_in], {name: G[n_in + 6 * j:n_in + 6 * j + 6] for j, name in enumerate(names)})


def node_stiffening(modes: Any, nodes: Sequence[int], model: Any = None) -> dict[int, np.ndarray]:
    """Modal geometric stiffness (6, m, m) of unit loads at mesh nodes: forces x, y, z (N) and,
    on nodes with rotations, moments x, y, z (N m), body axes, solved under the set's reference
    conditions like the interface cases (theory §2). A load on a held dof goes into the support
    and gives zero. For joints attached at mesh nodes (``FlexibleBody.node``): e.g. the axial pin
    force of a pinned-pinned rod.
    """
    model = _model_of(modes, model)
    nodes = [int(n) for n in nodes]
    if not nodes:
        return {}
    fixed = _held_dofs(modes, model)
    cond = _condensation(modes, model, fixed)
    dpn = model.dofs_per_node
    F = np.zeros((model.ndof, 6 * len(nodes)))
    for j, n in enumerate(nodes):
        for c in range(min(dpn, 6)):
            F[n * dpn + c, 6 * j + c] = 1.0
    F[fixed] = 0.0
    B = np.asarray(cond.A.T @ F)
    K_w, M_w = cond.matrices()
    if modes.reference is None and fixed.size == 0:
        _, X = _solve_free(cond, K_w, M_w, B, None)
    else:
        X = _solve_referenced(modes.reference, fixed.size > 0, cond, K_w, M_w, B)
    U = np.asarray(cond.A @ X)
    phi = modes.phi
    out = {}
    for j, n in enumerate(nodes):
        G = np.empty((6, modes.n_modes, modes.n_modes))
        for c in range(6):
            Kg = model.geometric_stiffness_from_stresses(model.element_stresses(U[:, 6 * j + c]))
            G[c] = phi.T @ np.asarray(Kg @ phi)
        out[n] = G
    return out


def static_load_cases(modes: Any, model: Any = None, support: Sequence[int] | np.ndarray | None = None) -> LoadCases:
    """Static displacements of all stiffening load cases: one factorization, one block solve.

    ``support``: for a free set, six condensed coordinates to hold while solving the relieved
    (self-equilibrated) loads (default: chosen by pivoted QR on the rigid-body modes); the result
    does not depend on it. Ignored for referenced or held sets.
    """
    model = _model_of(modes, model)
    fixed = _held_dofs(modes, model)
    cond = _condensation(modes, model, fixed)
    names = _loaded_interfaces(modes)
    f_inertial = -np.asarray(model.M @ acceleration_fields(model.points, model.dofs_per_node))
    B = np.hstack([np.asarray(cond.A.T @ f_inertial)] + [cond.C[n].T.toarray() for n in names])
    K_w, M_w = cond.matrices()
    free = modes.reference is None and fixed.size == 0
    if free:
        B, X = _solve_free(cond, K_w, M_w, B, support)
    else:
        X = _solve_referenced(modes.reference, fixed.size > 0, cond, K_w, M_w, B)
    labels = INERTIAL_CASES + tuple(f"{n}:{c}" for n in names for c in INTERFACE_CASES)
    return LoadCases(labels, B, np.asarray(cond.A @ X), free, cond)


# -- reference conditions ----------------------------------------------------------------------
def _model_of(modes: Any, model: Any) -> Any:
    """The FE model to use, checked against the mode set (theory §2.3)."""
    model = modes.model if model is None else model
    if model is None:
        raise ModelError("this mode set has no FE model attached (it was loaded from a file): pass the model it "
                         "was computed from, stiffening_matrices(modes, model)")
    if model.ndof != modes.phi.shape[0] or model.dofs_per_node != modes.dofs_per_node:
        raise ModelError(f"the model ({model.ndof} dofs, {model.dofs_per_node} per node) is not the one of the mode "
                         f"set ({modes.phi.shape[0]} dofs, {modes.dofs_per_node} per node)")
    size = max(float(np.ptp(modes.nodes, axis=0).max()), 1e-300)
    if model.points.shape != modes.nodes.shape or np.abs(model.points - modes.nodes).max() > POSITION_RTOL * size:
        raise ModelError("the model's node positions differ from the mode set's nodes: not the model of this set")
    return model


def _loaded_interfaces(modes: Any) -> list[str]:
    """Interfaces that get unit load cases: all but the reference."""
    return [name for name in modes.interfaces if name != modes.reference]


def _held_dofs(modes: Any, model: Any) -> np.ndarray:
    """Fixed dofs of the set; ModelError when it was held but the dofs were not recorded."""
    fixed = modes.fixed_dofs
    if fixed is None:
        if int(modes.info.get("fixed_dofs", 0)):
            raise ModelError(f"this mode set was computed with {modes.info['fixed_dofs']} fixed dofs, but it does "
                             f"not record which: make it again with craig_bampton (which records them)")
        return np.zeros(0, dtype=np.int64)
    fixed = np.asarray(fixed, dtype=np.int64)
    if fixed.size and (fixed.min() < 0 or fixed.max() >= model.ndof):
        raise ModelError(f"fixed dofs of the mode set lie outside the model's {model.ndof} dofs")
    moving = np.abs(modes.phi[fixed]).max(initial=0.0)
    if moving > 0.0:
        raise ModelError(f"the mode shapes move at the set's fixed dofs (up to {moving:.3g}): wrong fixed dofs")
    return fixed


def _condensation(modes: Any, model: Any, fixed: np.ndarray) -> Condensation:
    """The set's interface points resolved again on ``model`` and its coordinates ``w``."""
    if modes.reference is not None and modes.reference not in modes.interfaces:
        raise ModelError(f"reference interface {modes.reference!r} is not one of the set's interfaces "
                         f"{sorted(modes.interfaces)}")
    specs = {name: np.asarray(i.nodes) for name, i in modes.interfaces.items()}
    points = resolve_interfaces(model, specs, {name: i.connection for name, i in modes.interfaces.items()})
    size = max(float(np.ptp(model.points, axis=0).max()), 1e-300)
    for p in points:
        stored = np.asarray(modes.interfaces[p.name].position, dtype=float)
        if np.abs(p.position - stored).max() > POSITION_RTOL * size:
            raise ModelError(f"interface {p.name!r}: its point on this model {p.position.tolist()} differs from the "
                             f"stored {stored.tolist()} (other masses?): not the model of this set")
    return Condensation(model, points, fixed)


def _solve_referenced(reference: str | None, held: bool, cond: Condensation, K_w: sp.spmatrix, M_w: sp.spmatrix,
                      B: np.ndarray) -> np.ndarray:
    """``K_w x = B`` with the reference point clamped and the fixed dofs held (theory eq. 2.1).

    A rigid reference point's six coordinates are removed; an average one is held by
    ``C_ref x = 0`` (Schur complement, docs/theory-reduction.md §1.4). Without fixed dofs or a
    rigid reference the factorization takes a small negative shift and is refined (§1.3).
    """
    keep = np.arange(cond.n)
    constraint = None
    ref = next((p for p in cond.points if p.name == reference), None)
    rigid_ref = ref is not None and ref.connection == "rigid"
    if rigid_ref:
        start = cond.n_interior + 6 * cond.rigid.index(ref)
        keep = np.setdiff1d(keep, np.arange(start, start + 6))
    elif ref is not None:
        constraint = cond.C[ref.name]
    K, M = K_w[keep][:, keep].tocsr(), M_w[keep][:, keep].tocsr()
    sigma = 0.0 if held or rigid_ref else -SHIFT_RTOL * eigenvalue_scale(K, M)
    shift = ShiftInvert(K, M, sigma, constraint, what="the body with its reference interface and fixed dofs held")
    X = np.zeros_like(B)
    X[keep] = shift.solve(B[keep])
    return X


def _solve_free(cond: Condensation, K_w: sp.spmatrix, M_w: sp.spmatrix, B: np.ndarray,
                support: Sequence[int] | np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """Relieved loads and displacements ``(B_rel, x)``: inertia relief (theory eq. 2.2).

    ``B_rel = B - M R R^T B`` (R mass-orthonormal), ``x = K^+ B_rel`` with ``R^T M x = 0``.

    The relieved loads are self-equilibrated, so holding any statically determinate six
    coordinates ``S`` (``R[S]`` nonsingular) leaves no reaction; the rigid part of the held
    solution is projected out afterwards (MacNeal 1971; Nastran SUPORT).
    """
    R = cond.rigid_modes()
    L = np.linalg.cholesky(R.T @ np.asarray(M_w @ R))
    R = sla.solve_triangular(L, R.T, lower=True).T                     # R^T M_w R = I
    relieved = B - np.asarray(M_w @ R) @ (R.T @ B)
    S = _support(R) if support is None else np.unique(np.asarray(support, dtype=np.int64))
    if S.size != 6 or S.min() < 0 or S.max() >= cond.n:
        raise ModelError(f"a free body needs 6 distinct support coordinates in [0, {cond.n}), got {S.tolist()}")
    if np.linalg.cond(R[S]) > SUPPORT_COND_LIMIT:
        raise ModelError(f"support coordinates {S.tolist()} do not hold the six rigid-body motions")
    keep = np.setdiff1d(np.arange(cond.n), S)
    shift = ShiftInvert(K_w[keep][:, keep], M_w[keep][:, keep], 0.0,
                        what="the free body held at six support coordinates (a mechanism or disconnected parts?)")
    X = np.zeros_like(B)
    X[keep] = shift.solve(relieved[keep])
    return relieved, X - R @ (R.T @ np.asarray(M_w @ X))


def _support(R: np.ndarray) -> np.ndarray:
    """Six coordinates that hold the rigid-body modes ``R`` (n, 6) best: pivoted QR of ``R^T``."""
    _, _, pivots = sla.qr(R.T, mode="economic", pivoting=True)
    return np.sort(pivots[:6])
