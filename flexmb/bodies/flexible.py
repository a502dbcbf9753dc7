"""Flexible bodies: a floating frame plus modal coordinates (docs/theory-flexible.md).

Coordinates of a body: ``q_b = (r, p, eta)``: r the global position of the body
frame origin (the mesh origin), m; p the Euler parameters of the frame; eta the
``m`` modal amplitudes of a mass-orthonormal :class:`~flexmb.reduction.ModeSet`.
A material point at body-frame position ``x`` is at ``R = r + A(p) (x + Phi(x) eta)``.

Joints and forces attach to the frame (give the body) or to a place that moves
with the deformation: ``body.interface(name)`` (an interface point of the mode
set) or ``body.node(id)`` (a mesh node).
"""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from .. import rotations as rot
from ..errors import ModelError
from .base import Body, Site
from .rigid import _orientation, _vector3

__all__ = ["FlexibleBody", "InterfaceSite", "NodeSite"]

MEAN_AXIS_RTOL = 1e-6
"""Free-free modes whose rigid-body coupling ``|S_t|, |S_r|`` exceeds this (relative to
``sqrt(mass)`` and ``sqrt(mass) * size``) do not satisfy the mean-axis conditions."""


class FlexibleBody(Body):
    """A body that moves on a floating frame and deforms in component modes.

    Args:
        modes: mass-orthonormal ModeSet (``modes.orthonormalize()`` makes one).
        position: global position of the body frame origin (the mesh origin), m.
        orientation: rotation of the mesh axes (3x3 matrix body -> global, Euler parameters, or a
            ``scipy.spatial.transform.Rotation``); ``scalar_first=False`` reads 4 numbers as (x, y, z, w).
        velocity: global velocity of the frame origin, m/s.
        angular_velocity: global angular velocity, rad/s.
        damping: modal damping ratio (one number for all modes or one per mode).
        rayleigh: ``(alpha, beta)`` for ``D = alpha M + beta K`` (s^-1, s); adds to ``damping``.
        stiffening: add the dynamic geometric stiffness of the inertial load cases
            (``modes.stiffening``, docs/theory-stiffening.md); ``False`` gives the classic
            linear modal body, which softens and diverges at high spin.
        modal_coordinates, modal_velocities: initial eta and eta_dot (default 0).
        stability_check: with stiffening, stop the simulation with an InstabilityError when the
            stiffened modal stiffness turns indefinite after a step (the body buckles or diverges:
            beyond that the linear modal body is invalid; docs/theory-flexible.md §2). The check
            sees the body alone, so it is right when the mode set's reference conditions are the
            body's real supports (e.g. pinned-pinned modes of a coupler between two pins); joints
            that add support the modes do not hold (a guided free end) make it report too early.
    """

    def __init__(self, modes: Any, position=(0.0, 0.0, 0.0), orientation=None, velocity=(0.0, 0.0, 0.0),
                 angular_velocity=(0.0, 0.0, 0.0), damping: float | Sequence[float] | None = None,
                 rayleigh: tuple[float, float] | None = None, stiffening: bool = True,
                 modal_coordinates=None, modal_velocities=None, stability_check: bool = False,
                 name: str | None = None, *, scalar_first: bool | None = None):
        super().__init__(name)
        owner = f"{self.kind} {self.name!r}"
        self.modes = self._check_modes(modes, owner)
        m = self.modes.n_modes
        self.n_modes = m
        self.ncoord = 7 + m
        try:
            inv = self.modes.invariants
        except ModelError as exc:
            raise ModelError(f"{owner}: {exc}") from None
        if not inv.mass > 0.0:
            raise ModelError(f"{owner}: the mesh has no mass (total {inv.mass} kg)")
        self.invariants = inv
        self.position = _vector3(position, "position", owner)
        self.p0 = _orientation(orientation, owner, scalar_first)
        self.velocity = _vector3(velocity, "velocity", owner)
        self.angular_velocity = _vector3(angular_velocity, "angular velocity", owner)
        self.eta0 = _modal_vector(modal_coordinates, m, "modal_coordinates", owner)
        self.etad0 = _modal_vector(modal_velocities, m, "modal_velocities", owner)
        self.K = np.asarray(self.modes.K, dtype=float)
        self.D = self._damping_matrix(damping, rayleigh, owner)
        self.stiffening = _flag(stiffening, "stiffening", owner)
        self.stability_check = _flag(stability_check, "stability_check", owner)
        self.G_inertial, self.G_interfaces = _stiffening(self.modes, owner) if self.stiffening else (None, None)
        self._check_reference(owner)

    kind = "flexible body"
    structure = None
    """The nonlinear elastic structure (NonlinearBeam), or None for the linear modal stiffness ``K eta``."""

    def _check_modes(self, modes: Any, owner: str) -> Any:
        return _check_modes(modes, owner)

    def _damping_matrix(self, damping, rayleigh, owner: str) -> np.ndarray:
        return _damping_matrix(self.modes, damping, rayleigh, owner)

    def strain_energy(self, eta: np.ndarray) -> float:
        """Strain energy at modal coordinates ``eta`` (J)."""
        return 0.5 * float(eta @ self.K @ eta)

    # -- frame and sites ---------------------------------------------------------------------
    def initial_frame(self):
        return self.position.copy(), rot.A(self.p0)

    def initial_q(self) -> np.ndarray:
        return np.concatenate([self.position, self.p0, self.eta0])

    def initial_v(self) -> np.ndarray:
        # p_dot = 1/2 E^T omega (global omega), Nikravesh eq. 6.96.
        return np.concatenate([self.velocity, 0.5 * rot.E(self.p0).T @ self.angular_velocity, self.etad0])

    def interface(self, name: str) -> "InterfaceSite":
        """The interface point ``name`` of the mode set, as a site for joints and forces."""
        try:
            iface = self.modes.interface(name)
        except ModelError as exc:
            raise ModelError(f"flexible body {self.name!r}: {exc}") from None
        return InterfaceSite(self, iface.name, np.asarray(iface.position, float), np.asarray(iface.psi, float))

    def node(self, node: int) -> "NodeSite":
        """Mesh node ``node`` (0-based id) as a site for joints and forces."""
        n = self.modes.nodes.shape[0]
        if isinstance(node, bool) or not isinstance(node, (int, np.integer)) or not 0 <= int(node) < n:
            raise ModelError(f"flexible body {self.name!r}: node id {node!r} is outside the mesh "
                             f"(ids 0..{n - 1})")
        return NodeSite(self, int(node))

    def node_stiffening(self, node: int) -> np.ndarray | None:
        """(6, m, m) geometric stiffness of unit loads at mesh ``node`` (None without stiffening
        or without the FE model); computed once per node."""
        if not self.stiffening or self.modes.model is None:
            return None
        cache = self.__dict__.setdefault("_node_G", {})
        if node not in cache:
            from ..reduction.stiffening import node_stiffening
            cache[node] = node_stiffening(self.modes, [node])[node]
        return cache[node]

    def node_shapes(self, nodes) -> tuple[np.ndarray, np.ndarray]:
        """Translational and rotational mode shapes at nodes: (k, 3, m) each (rotations 0 for solids)."""
        nodes = np.atleast_1d(np.asarray(nodes, dtype=np.int64))
        dpn = self.modes.dofs_per_node
        phi = self.modes.phi.reshape(-1, dpn, self.n_modes)[nodes]
        rot_part = phi[:, 3:6] if dpn >= 6 else np.zeros_like(phi[:, :3])
        return phi[:, :3], rot_part

    def _check_reference(self, owner: str) -> None:
        """A free set (no reference interface, nothing held) must satisfy the mean-axis
        conditions ``int rho Phi = 0``, ``int rho x~ Phi = 0`` (about the centre of mass)."""
        ms = self.modes
        held = ms.reference is not None or ms.info.get("fixed_dofs", 0) > 0
        if held:
            self.reference = "interface" if ms.reference is not None else "held"
            return
        inv = self.invariants
        c = inv.center_of_mass
        S_t = inv.S_t
        S_r_cm = inv.S_r - rot.skew(c) @ S_t
        size = float(np.ptp(ms.nodes, axis=0).max()) or 1.0
        scale = math.sqrt(inv.mass)
        bad_t = np.abs(S_t).max(initial=0.0) / scale
        bad_r = np.abs(S_r_cm).max(initial=0.0) / (scale * size)
        if max(bad_t, bad_r) > MEAN_AXIS_RTOL:
            raise ModelError(f"{owner}: the mode set has no reference interface and its modes are not "
                             f"orthogonal to the rigid-body modes (|int rho Phi| / sqrt(m) = {bad_t:.3g}, "
                             f"|int rho x~ Phi| / (sqrt(m) size) = {bad_r:.3g} > {MEAN_AXIS_RTOL}); the "
                             "mean-axis frame is undefined. Use free_free_modes (whose modes are "
                             "M-orthogonal to the rigid modes) or a Craig-Bampton set with reference=")
        self.reference = "mean-axis"


class InterfaceSite(Site):
    """An interface point of a flexible body's mode set (moves and turns with the modes)."""

    def __init__(self, body: FlexibleBody, name: str, position: np.ndarray, psi: np.ndarray):
        self.body, self.name, self.position, self.psi = body, name, position, psi

    def __repr__(self) -> str:
        return f"<interface {self.name!r} of {self.body.name!r}>"

    def point_shape(self, point) -> np.ndarray:
        # a point rigidly attached to the interface: u = psi_t eta + theta x (x_P - x_c)
        d = self.body.to_local_point(point) - self.position
        return self.psi[:3] - rot.skew(d) @ self.psi[3:]

    def vector_shape(self, vector) -> np.ndarray:
        return -rot.skew(self.body.to_local_vector(vector)) @ self.psi[3:]


class NodeSite(Site):
    """A mesh node of a flexible body (translations; rotations too for beam/shell nodes)."""

    def __init__(self, body: FlexibleBody, node: int):
        self.body, self.node = body, node

    def __repr__(self) -> str:
        return f"<node {self.node} of {self.body.name!r}>"

    def point_shape(self, point) -> np.ndarray:
        t, r = self.body.node_shapes(self.node)
        d = self.body.to_local_point(point) - self.body.modes.nodes[self.node]
        return t[0] - rot.skew(d) @ r[0]

    def vector_shape(self, vector) -> np.ndarray:
        _, r = self.body.node_shapes(self.node)
        return -rot.skew(self.body.to_local_vector(vector)) @ r[0]


# -- checks -----------------------------------------------------------------------------------
def _check_modes(modes: Any, owner: str) -> Any:
    from ..reduction.modeset import ModeSet
    if not isinstance(modes, ModeSet):
        raise ModelError(f"{owner}: modes must be a ModeSet (from craig_bampton, free_free_modes or "
                         f"ModeSet.load), got {type(modes).__name__}")
    if modes.n_modes == 0:
        raise ModelError(f"{owner}: the mode set has no modes; use a RigidBody")
    dev = np.abs(modes.M - np.eye(modes.n_modes)).max()
    if dev > 1e-8:
        raise ModelError(f"{owner}: the modes are not mass-orthonormal (max |M - I| = {dev:.3g}); "
                         "use modes.orthonormalize()")
    if not np.all(np.isfinite(modes.K)):
        raise ModelError(f"{owner}: the reduced stiffness has non-finite entries")
    return modes


def _flag(value, what: str, owner: str) -> bool:
    """A switch: True or False (a string such as "no" would silently mean True)."""
    if not isinstance(value, (bool, np.bool_)):
        raise ModelError(f"{owner}: {what} must be True or False, got {value!r}")
    return bool(value)


def _modal_vector(value, m: int, what: str, owner: str) -> np.ndarray:
    if value is None:
        return np.zeros(m)
    v = np.asarray(value, dtype=float).reshape(-1)
    if v.shape != (m,) or not np.all(np.isfinite(v)):
        raise ModelError(f"{owner}: {what} must be {m} finite numbers, got {value!r}")
    return v


def _numbers(value, what: str, owner: str) -> np.ndarray:
    try:
        return np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ModelError(f"{owner}: {what} must be numbers, got {value!r}") from None


def _damping_matrix(modes: Any, damping, rayleigh, owner: str) -> np.ndarray:
    """``D = diag(2 zeta_k omega_k) + alpha M + beta K`` (modes mass-orthonormal)."""
    m = modes.n_modes
    D = np.zeros((m, m))
    if damping is not None:
        z = _numbers(damping, "damping", owner)
        z = np.broadcast_to(z, (m,)) if z.ndim == 0 else z.reshape(-1)
        if z.shape != (m,) or not np.all(np.isfinite(z)) or np.any(z < 0):
            raise ModelError(f"{owner}: damping must be one non-negative ratio or {m} of them, got {damping!r}")
        omega = np.sqrt(np.maximum(np.diag(modes.K), 0.0))
        D += np.diag(2.0 * z * omega)
    if rayleigh is not None:
        D += rayleigh_damping(modes.M, modes.K, rayleigh, owner)
    return D


def rayleigh_damping(M: np.ndarray, K: np.ndarray, rayleigh, owner: str) -> np.ndarray:
    """``alpha M + beta K`` for ``rayleigh = (alpha, beta)``, both finite and >= 0 (s^-1, s)."""
    a = _numbers(rayleigh, "rayleigh", owner).reshape(-1)
    if a.shape != (2,) or not np.all(np.isfinite(a)) or np.any(a < 0):
        raise ModelError(f"{owner}: rayleigh must be (alpha, beta) >= 0, got {rayleigh!r}")
    return a[0] * M + a[1] * K


def _stiffening(modes: Any, owner: str) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Geometric stiffness of the unit inertial load cases (12, m, m) and of unit interface loads
    (name -> (6, m, m)), theory-stiffening.md."""
    try:
        st = modes.stiffening
    except ModelError as exc:
        raise ModelError(f"{owner}: {exc}; or pass stiffening=False") from None
    G = np.asarray(st.inertial, dtype=float)
    if G.shape != (12, modes.n_modes, modes.n_modes):
        raise ModelError(f"{owner}: stiffening matrices have shape {G.shape}, expected (12, m, m)")
    return G, dict(st.interfaces)
