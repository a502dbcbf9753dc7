"""Interface points: node sets condensed to one 6-dof point (docs/theory-reduction.md §3).

An interface node set ``S`` is represented by a point ``p`` at the mass-weighted centroid of
its nodes, with six dofs ``q = (u_p, theta_p)`` (m, rad):

* ``"rigid"`` (RBE2-like): the nodes follow the point rigidly,
  ``u_k = u_p + theta_p x (x_k - x_p)`` (and ``theta_k = theta_p`` for nodes with rotations);
  the nodes' dofs are replaced by ``q`` (the patch is stiffened).
* ``"average"`` (RBE3-like): the point's motion is the weighted least-squares fit of a rigid
  motion to the nodes' translations, ``q = G u_S``; the nodes stay free, a point load ``F``
  reaches them as ``G^T F`` (no stiffening).

Weights ``w_k`` are the nodes' translational mass-matrix diagonals (proportional to HRZ-lumped
nodal masses for one element type and density); uniform when the set carries no mass.
:class:`Condensation` builds the coordinates ``w`` of a model with its rigid interfaces
condensed: ``u = A w``, and the interface points ``q_j = C_j w``.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import scipy.sparse as sp

from flexmb.errors import ModelError

CONNECTIONS = ("rigid", "average")
"""Interface connection kinds: RBE2-like and RBE3-like."""

_RANK_RTOL = 1e-10
"""A 6x6 interface normal matrix with eigenvalue ratio below this cannot carry rotations."""


@dataclass(frozen=True, eq=False)
class Interface:
    """An interface point of a mode set.

    Attributes:
        name: interface name.
        position: (3,) reference position of the point in body axes, m.
        nodes: ids of the FE nodes the point is connected to.
        psi: (6, m) point dofs ``[ux, uy, uz, rx, ry, rz]`` (m, rad) per unit modal coordinate.
        connection: ``"rigid"`` (RBE2-like) or ``"average"`` (RBE3-like).
        weights: (len(nodes),) relative node weights of the fit (mass-matrix diagonals, kg).
    """

    name: str
    position: np.ndarray
    nodes: np.ndarray
    psi: np.ndarray
    connection: str
    weights: np.ndarray

    def transformed(self, V: np.ndarray) -> "Interface":
        """The same interface for modal coordinates ``z = V z'`` (psi -> psi V)."""
        return Interface(self.name, self.position, self.nodes, self.psi @ V, self.connection, self.weights)


def skew(v: np.ndarray) -> np.ndarray:
    """Skew matrices (..., 3, 3) with ``skew(a) b = a x b``."""
    v = np.asarray(v, dtype=float)
    out = np.zeros(v.shape[:-1] + (3, 3))
    out[..., 0, 1], out[..., 0, 2] = -v[..., 2], v[..., 1]
    out[..., 1, 0], out[..., 1, 2] = v[..., 2], -v[..., 0]
    out[..., 2, 0], out[..., 2, 1] = -v[..., 1], v[..., 0]
    return out


def rigid_body_modes(points: np.ndarray, dofs_per_node: int, origin: Sequence[float] = (0.0, 0.0, 0.0)
                     ) -> np.ndarray:
    """Rigid-body motions (N dpn, 6) of nodes at ``points`` (N, 3) for point dofs ``(t, theta)``.

    Column ``c < 3`` is a unit translation along axis c, column ``3 + c`` a unit rotation about
    axis c through ``origin``: ``u_k = t + theta x (x_k - origin)``, node rotations ``theta``
    (Shabana, Dynamics of Multibody Systems, 3rd ed., ch. 5). Node-major dof numbering.
    """
    r = np.asarray(points, dtype=float) - np.asarray(origin, dtype=float)
    n = r.shape[0]
    R = np.zeros((n, dofs_per_node, 6))
    R[:, :3, :3] = np.eye(3)
    R[:, :3, 3:] = -skew(r)                       # theta x r = -skew(r) theta
    if dofs_per_node == 6:
        R[:, 3:, 3:] = np.eye(3)
    return R.reshape(n * dofs_per_node, 6)


@dataclass(frozen=True, eq=False)
class InterfacePoint:
    """An interface node set resolved on a model (internal to the reduction)."""

    name: str
    nodes: np.ndarray
    connection: str
    position: np.ndarray
    weights: np.ndarray
    dofs: np.ndarray          # all model dofs of the nodes, node-major (n dpn,)
    T: np.ndarray             # (n dpn, 6) rigid map q -> node dofs
    G: np.ndarray             # (6, n dpn) weighted least-squares map node dofs -> q


def resolve_interfaces(model: Any, interfaces: Mapping[str, Any] | None,
                       connection: str | Mapping[str, str] = "rigid") -> list[InterfacePoint]:
    """Interface points of ``model`` for ``interfaces`` (name -> node-set name or node ids).

    ``connection`` is one kind for all, or name -> kind. Raises :class:`ModelError` for unknown
    sets or kinds, overlapping sets, and sets that cannot carry rotations (fewer than three
    non-collinear nodes on a mesh without rotational dofs).
    """
    interfaces = dict(interfaces or {})
    kinds = connection if isinstance(connection, Mapping) else {name: connection for name in interfaces}
    unknown = sorted(set(kinds) - set(interfaces))
    if unknown:
        raise ModelError(f"connection given for unknown interfaces {unknown}; interfaces: {sorted(interfaces)}")
    diag = model.M.diagonal()
    points: list[InterfacePoint] = []
    owner = np.full(model.n_nodes, -1)
    for name, nodes in interfaces.items():
        kind = kinds.get(name, "rigid")
        if kind not in CONNECTIONS:
            raise ModelError(f"interface {name!r}: connection must be one of {CONNECTIONS}, got {kind!r}")
        ids = np.unique(model.dofs(nodes, 0) // model.dofs_per_node)
        if ids.size == 0:
            raise ModelError(f"interface {name!r} has no nodes")
        shared = ids[owner[ids] >= 0]
        if shared.size:
            raise ModelError(f"interfaces {points[owner[shared[0]]].name!r} and {name!r} share "
                             f"{shared.size} node(s), e.g. node {int(shared[0])}")
        owner[ids] = len(points)
        points.append(_interface_point(model, str(name), ids, kind, diag))
    return points


def _interface_point(model: Any, name: str, ids: np.ndarray, kind: str, diag: np.ndarray) -> InterfacePoint:
    """Weights, position and the rigid (T) and averaging (G) maps of one node set."""
    dpn = model.dofs_per_node
    x = model.points[ids]
    w = diag[ids[:, None] * dpn + np.arange(3)].mean(axis=1)
    if not np.any(w > 0.0):
        w = np.ones(ids.size)
    position = w @ x / w.sum()
    T = rigid_body_modes(x, dpn, position)
    trans = (np.arange(ids.size)[:, None] * dpn + np.arange(3)).ravel()      # translational rows
    weight = np.zeros(T.shape[0])
    weight[trans] = np.repeat(w, 3)
    H = (T.T * weight) @ T
    mu, U = np.linalg.eigh(H)
    null = U[3:, mu <= _RANK_RTOL * mu[-1]]            # rotations the translations do not fix
    extra = np.zeros((6, 6))
    if null.size:
        if dpn != 6:
            raise ModelError(f"interface {name!r} ({ids.size} nodes) cannot carry rotations on a mesh "
                             f"without rotational dofs: it needs at least 3 non-collinear nodes")
        # fit the node rotations in those directions only, weighted by the set's radius of
        # gyration squared (theory §3; a single node: theta_p = theta_node)
        r2 = float(w @ np.sum((x - position) ** 2, axis=1) / w.sum()) or 1.0
        extra[3:, 3:] = r2 * null @ null.T
    H = H + w.sum() * extra
    rhs = T.T * weight                                 # (6, n dpn): translational part
    if null.size:
        rot = (np.arange(ids.size)[:, None] * dpn + np.arange(3, 6)).ravel()
        rhs[:, rot] = np.tile(extra[:, 3:], ids.size) * np.repeat(w, 3)
    G = np.linalg.solve(H, rhs)
    dofs = (ids[:, None] * dpn + np.arange(dpn)).ravel()
    return InterfacePoint(name, ids, kind, position, w, dofs, T, G)


class Condensation:
    """Model coordinates with the rigid interfaces condensed to their points.

    ``w = (u_i, q_1, ..., q_r)``: the free dofs ``interior`` that are not nodes of a rigid
    interface, then six dofs per rigid interface point. Full displacements ``u = A w`` (zero at
    fixed and inactive dofs); interface point ``j`` moves as ``q_j = C_j w``.
    """

    def __init__(self, model: Any, points: list[InterfacePoint], fixed_dofs: np.ndarray) -> None:
        self.model, self.points = model, points
        free = model.free_dofs(fixed_dofs)
        fixed_mask = np.zeros(model.ndof, dtype=bool)
        fixed_mask[np.asarray(fixed_dofs, dtype=np.int64)] = True
        slaved = np.zeros(model.ndof, dtype=bool)
        for p in points:
            clash = np.flatnonzero(fixed_mask[p.dofs])
            if clash.size:
                raise ModelError(f"interface {p.name!r} contains fixed dofs (e.g. dof {p.dofs[clash[0]]}); "
                                 f"an interface node set must not be held")
            if p.connection == "rigid":
                slaved[p.dofs] = True
        self.interior = free[~slaved[free]]
        self.rigid = [p for p in points if p.connection == "rigid"]
        self.n_interior = self.interior.size
        self.n = self.n_interior + 6 * len(self.rigid)
        self.A = self._expansion()
        self.C = {p.name: self._point_rows(p) for p in points}

    def _expansion(self) -> sp.csr_matrix:
        """Sparse A (ndof, n): interior dofs by identity, rigid-interface nodes by their T."""
        rows = [self.interior]
        cols = [np.arange(self.n_interior)]
        vals = [np.ones(self.n_interior)]
        for j, p in enumerate(self.rigid):
            r, c = np.nonzero(p.T)
            rows.append(p.dofs[r])
            cols.append(self.n_interior + 6 * j + c)
            vals.append(p.T[r, c])
        return sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                             shape=(self.model.ndof, self.n))

    def _point_rows(self, p: InterfacePoint) -> sp.csr_matrix:
        """Sparse C_j (6, n): the point dofs as functions of w."""
        if p.connection == "rigid":
            j = self.rigid.index(p)
            return sp.csr_matrix((np.ones(6), (np.arange(6), self.n_interior + 6 * j + np.arange(6))),
                                 shape=(6, self.n))
        position = np.full(self.model.ndof, -1, dtype=np.int64)
        position[self.interior] = np.arange(self.n_interior)
        used = np.flatnonzero(np.any(p.G != 0.0, axis=0))
        cols = position[p.dofs[used]]
        if np.any(cols < 0):
            raise ModelError(f"interface {p.name!r}: some of its dofs are inactive (no stiffness acts on them)")
        r, c = np.nonzero(p.G[:, used])
        return sp.csr_matrix((p.G[:, used][r, c], (r, cols[c])), shape=(6, self.n))

    def rigid_modes(self) -> np.ndarray:
        """Rigid-body motions (n, 6) in w about the model origin (``A`` of them is exact)."""
        R = rigid_body_modes(self.model.points, self.model.dofs_per_node)
        return np.vstack([R[self.interior]] + [rigid_body_modes(p.position[None], 6) for p in self.rigid])

    def matrices(self) -> tuple[sp.csr_matrix, sp.csr_matrix]:
        """``(K_w, M_w) = A^T (K, M) A`` (n, n), CSR."""
        K, M = self.model.K, self.model.M
        if not self.rigid:
            i = self.interior
            return K[i][:, i].tocsr(), M[i][:, i].tocsr()
        A = self.A
        return (A.T @ K @ A).tocsr(), (A.T @ M @ A).tocsr()
