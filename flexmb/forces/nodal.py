"""Forces and torques on mesh nodes of flexible bodies (constant or functions of time; global or body-fixed)."""
from __future__ import annotations

import numpy as np

from ..compiled import lazy_module
from ..errors import ModelError
from ..groups import ElementGroup, EvalState
from .applied import _Load

cf = lazy_module("flexmb.compiled.forces")   # numba loads with the first evaluation, not at import

__all__ = ["NodalForce", "NodalTorque", "NodalForceGroup", "NodalTorqueGroup", "build_groups"]


class NodalForce(_Load):
    """The same force (N) on each of ``nodes`` of a flexible body.

    ``nodes``: a node id, a sequence of ids or a node-set name of the body's mesh.
    ``force``: 3 numbers or a callable ``f(t)``; ``body_fixed=True`` means its components are in
    body axes and turn with the frame (a follower force of the frame), otherwise global.
    Generalized forces (docs/theory-flexible.md §3.1): with ``u_n = x_n + Phi_n eta``,
    global ``f``: ``Q_r = f, Q_p = B(p, u_n)^T f, Q_eta = Phi_n^T A^T f``;
    body-fixed ``f'``: ``Q_r = A f', Q_p = 2 G^T (u_n x f'), Q_eta = Phi_n^T f'``.
    """

    kind = "nodal force"

    def __init__(self, body, nodes, force, body_fixed: bool = False, name: str | None = None):
        super().__init__(body, force, body_fixed, name)          # vector, body_fixed, value(t), bodies
        if not getattr(body, "n_modes", 0):
            raise ModelError(f"{self.owner}: must act on a flexible body, got {body!r}")
        self.nodes = _node_ids(body, nodes, self.owner)


class NodalTorque(_Load):
    """The same torque (N m) on each of ``nodes`` of a flexible body (a modal body of a beam or shell mesh,
    a NonlinearBeam or an ExactBeam).

    ``nodes``: a node id, a sequence of ids or a node-set name of the body's mesh.
    ``torque``: 3 numbers or a callable ``f(t)``; ``body_fixed=True`` means its components are in body
    (frame) axes and turn with the frame, otherwise global.
    The node turns with the frame and by its rotational coordinates ``psi = Psi_n eta`` (``Psi_n`` the
    node's rotational mode shapes, body axes); the virtual work ``n . delta theta_node`` gives
    (docs/theory-flexible.md §3.1; Shabana, Dynamics of Multibody Systems, 2005, Ch. 5):
    global ``n``: ``Q_r = 0, Q_p = 2 E^T n, Q_eta = Psi_n^T T^T A^T n``;
    body-fixed ``n'``: ``Q_r = 0, Q_p = 2 G^T n', Q_eta = Psi_n^T T^T n'``,
    with ``T = I`` for small nodal rotations (modal bodies, NonlinearBeam) and the tangent map of the
    exponential ``T(psi)`` for the rotation vectors of an ExactBeam (exact for any size).
    A node whose rotations are all held to the frame (a clamped root) passes the torque to the frame.
    Raises ModelError on a body whose mesh has no rotation dofs (solid meshes, ExactBeam cables).
    """

    kind = "nodal torque"

    def __init__(self, body, nodes, torque, body_fixed: bool = False, name: str | None = None):
        super().__init__(body, torque, body_fixed, name)
        if not getattr(body, "n_modes", 0):
            raise ModelError(f"{self.owner}: must act on a flexible body, got {body!r}")
        if body.modes.dofs_per_node < 6 or getattr(body, "cable", False):
            what = "a cable" if getattr(body, "cable", False) else f"{body.modes.dofs_per_node} dofs per node"
            raise ModelError(f"{self.owner}: body {body.name!r} has no nodal rotation dofs ({what}); "
                             "a torque needs a beam or shell mesh (6 dofs per node)")
        self.nodes = _node_ids(body, nodes, self.owner)


def _node_ids(body, nodes, owner: str) -> np.ndarray:
    model = body.modes.model
    if isinstance(nodes, str):
        if model is None or nodes not in getattr(model.mesh, "node_sets", {}):
            known = sorted(getattr(model.mesh, "node_sets", {})) if model is not None else []
            raise ModelError(f"{owner}: body {body.name!r} has no node set {nodes!r} (sets: {known})")
        ids = np.asarray(model.mesh.node_sets[nodes], dtype=np.int64).ravel()
    else:
        ids = np.atleast_1d(np.asarray(nodes)).ravel()
    if ids.size == 0:
        raise ModelError(f"{owner}: no nodes given, got {nodes!r}")
    for k in ids.tolist():
        try:
            body.node(k)      # range and type check with the body's message
        except ModelError as exc:
            raise ModelError(f"{owner}: {exc}") from None
    return ids.astype(np.int64)


class _NodalLoadGroup(ElementGroup):
    """Nodal loads of one kind on flexible bodies with ``m`` modes: each (load, node) pair is one instance
    acting on the body's ``7 + m`` coordinates; subclasses give the compiled kernel (:meth:`_kernel`)."""

    applied = True

    def __init__(self, loads: list):
        inst = [(ld, k) for ld in loads for k in ld.nodes]
        self.loads = loads
        self.n = len(inst)
        self.labels = [f"{ld.owner} node {int(k)}" for ld, k in inst]
        self.m = m = loads[0].body.n_modes
        self.idx = np.array([ld.body.offset + np.arange(7 + m) for ld, _ in inst], dtype=np.int64).reshape(self.n, 7 + m)
        self.scatter = self.idx
        self.owner = np.repeat(np.arange(len(loads)), [ld.nodes.size for ld in loads])
        self.body_fixed = np.array([ld.body_fixed for ld, _ in inst], dtype=bool)
        self._const = np.array([ld.vector if not callable(ld.vector) else np.zeros(3) for ld in loads],
                               dtype=float).reshape(-1, 3)
        self._varying = [k for k, ld in enumerate(loads) if callable(ld.vector)]
        self._shapes(inst)

    def _shapes(self, inst) -> None:
        """Store the per-instance node data the kernel needs."""
        raise NotImplementedError

    def _kernel(self, st: EvalState, cK: float, want: bool, r: np.ndarray, blk: np.ndarray) -> float:
        """One compiled call: fill ``r`` (and ``blk`` when ``want``), return the power (W)."""
        raise NotImplementedError

    def vectors(self, t: float) -> np.ndarray:
        """Load vectors (n_nodes, 3) at time ``t`` (s), one row per loaded node (N or N m)."""
        F = self._const.copy()
        for k in self._varying:              # one call per user load function (constants precomputed)
            F[k] = self.loads[k].value(t)
        return F[self.owner]

    def residual(self, st: EvalState, coef=None):
        """Residual contribution ``-Q`` (generalized nodal loads on frame and modal coordinates,
        docs/theory-flexible.md §3.1) and, with ``coef``, their ``-beta' dQ/dq`` blocks (one compiled call)."""
        want = coef is not None
        nc = 7 + self.m
        r = np.empty((self.n, nc))
        blk = np.empty((self.n, nc, nc)) if want else np.empty((1, nc, nc))
        self._kernel(st, float(coef[2]) if want else 0.0, want, r, blk)
        return r, (blk if want else None)

    def power(self, st: EvalState) -> float:
        """Power (W) of the nodal loads, ``Q . v`` (docs/theory.md §6)."""
        nc = 7 + self.m
        return float(self._kernel(st, 0.0, False, np.empty((self.n, nc)), np.empty((1, nc, nc))))


class NodalForceGroup(_NodalLoadGroup):
    """All nodal forces on flexible bodies with ``m`` modes, one compiled call (``nodal_kernel``)."""

    family = "nodal"

    def _shapes(self, inst) -> None:
        self.x0 = np.array([ld.body.modes.nodes[k] for ld, k in inst], dtype=float).reshape(self.n, 3)
        self.phi = np.array([ld.body.node_shapes(k)[0][0] for ld, k in inst], dtype=float).reshape(self.n, 3, self.m)

    def _kernel(self, st, cK, want, r, blk):
        return cf.nodal_kernel(st.q, st.v, self.idx, self.x0, self.phi, self.body_fixed, self.vectors(st.t),
                               cK, want, r, blk)


class NodalTorqueGroup(_NodalLoadGroup):
    """All nodal torques on flexible bodies with ``m`` modes, one compiled call (``nodal_torque_kernel``)."""

    family = "nodal-torque"

    def _shapes(self, inst) -> None:
        self.psi = np.array([ld.body.node_shapes(k)[1][0] for ld, k in inst], dtype=float).reshape(self.n, 3, self.m)
        self.rotvec = np.array([_rotation_vectors(ld.body) for ld, _ in inst], dtype=bool)

    def _kernel(self, st, cK, want, r, blk):
        return cf.nodal_torque_kernel(st.q, st.v, self.idx, self.psi, self.rotvec, self.body_fixed,
                                      self.vectors(st.t), cK, want, r, blk)


def _rotation_vectors(body) -> bool:
    """Whether the body's nodal rotation coordinates are finite rotation vectors (ExactBeam) rather than
    small rotations (modal bodies, NonlinearBeam)."""
    from ..bodies.exact_beam import ExactBeam
    return isinstance(body, ExactBeam)


def build_groups(forces, nq: int, st: EvalState) -> list[_NodalLoadGroup]:
    """The nodal-load groups of a model (flexmb/groups.py ``FAMILY_MODULES``): one per kind (force, torque)
    and modal count."""
    out = []
    for kind, group in ((NodalForce, NodalForceGroup), (NodalTorque, NodalTorqueGroup)):
        loads = [f for f in forces if isinstance(f, kind)]
        out += [group([f for f in loads if f.body.n_modes == m]) for m in sorted({f.body.n_modes for f in loads})]
    return out
