"""Rigid bodies with Euler parameters, and their vectorized inertia kernel.

Coordinates of a body: ``q_b = (r, p)``, r the global position of the centre of
mass (m), p the Euler parameters (scalar first) of the body frame, held unit by
the constraint ``p.p - 1 = 0``. With ``omega' = 2 G(p) p_dot`` the kinetic energy
is ``T = m/2 |r_dot|^2 + 2 p_dot^T G^T J' G p_dot`` and Lagrange's equations give
(Nikravesh 1988, eqs. 11.33-11.35; docs/theory.md §3.1)

    m r_ddot = f,
    4 G^T J' G p_ddot = 2 G^T n' + 8 G(p_dot)^T J' G(p_dot) p  (+ 2 p lambda_norm).
"""
from __future__ import annotations

import numpy as np

from .. import checks
from .. import rotations as rot
from ..errors import ModelError
from .shapes import rigid_geometry
from .base import Body

__all__ = ["RigidBody", "PointMass", "RigidBodyGroup"]


def _vector3(value, what: str, owner: str) -> np.ndarray:
    return checks.vector(value, what, owner)


def _matrix(value, what: str, owner: str) -> np.ndarray:
    try:
        return np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ModelError(f"{owner}: {what} must be numbers, got {value!r}") from None


ZERO_INERTIA_RTOL = 1e-10
"""A principal moment below this fraction of the body's largest counts as zero (a slender rod's axial moment, a
point mass's three): relative to the body's own scale, so that a millimetre or microgram body in SI units is judged
as its one-metre, one-kilogram copy. Slightly negative moments within it (round-off of a rotated tensor) are
read as zero; more negative ones are refused."""


def _inertia_tensor(inertia, owner: str) -> np.ndarray:
    """The symmetric 3x3 inertia tensor (kg m^2) of ``inertia`` (3 principal values or a 3x3 matrix), checked
    relative to its own largest entry: symmetric, positive semi-definite (zero principal moments are allowed,
    a body without rotational inertia about an axis: see :mod:`flexmb.bodies.free_rotations`), and obeying the
    triangle inequality of principal moments."""
    J = _matrix(inertia, "inertia", owner)
    if J.shape == (3,):
        J = np.diag(J)
    if J.shape != (3, 3):
        raise ModelError(f"{owner}: inertia must be 3 principal values or a 3x3 matrix, got {inertia!r} "
                         f"(shape {J.shape})")
    if not np.all(np.isfinite(J)):
        raise ModelError(f"{owner}: inertia {J.tolist()} is not finite")
    size = float(np.abs(J).max())
    if not np.allclose(J, J.T, rtol=1e-10, atol=1e-14 * size):
        raise ModelError(f"{owner}: inertia matrix is not symmetric: {J.tolist()}")
    J = 0.5 * (J + J.T)
    w, axes = np.linalg.eigh(J)
    if w[0] < -ZERO_INERTIA_RTOL * w[2]:
        raise ModelError(f"{owner}: inertia has a negative principal moment (principal values {w.tolist()} kg m^2); "
                         f"it must be positive definite or semi-definite")
    # Triangle inequality of principal moments (any real mass distribution obeys it).
    if w[0] + w[1] < w[2] * (1.0 - 1e-9):
        raise ModelError(f"{owner}: principal inertias {w.tolist()} violate the triangle inequality "
                         f"I1 + I2 >= I3 ({w[0] + w[1]:.6g} < {w[2]:.6g}): no physical body has them")
    if w[0] < 0.0:                       # round-off below zero: the moment is zero
        J = (axes * np.maximum(w, 0.0)) @ axes.T
    return J


UNIT_NORM_TOL = 1e-6
"""Euler parameters whose norm differs from 1 by more than this are refused (not silently normalized): a
typed quaternion rounded to 7 significant digits is still accepted, a non-rotation is not."""


def _orientation(orientation, owner: str, scalar_first: bool | None = None) -> np.ndarray:
    """Euler parameters (scalar first, unit) of an orientation given as None (identity), a
    ``scipy.spatial.transform.Rotation``, a 3x3 rotation matrix (body -> global) or a unit
    quaternion of 4 numbers, read as ``(e0, e1, e2, e3)`` (scalar first, flexmb's convention,
    the default) or, with ``scalar_first=False``, as ``(x, y, z, w)`` (scipy ``as_quat()``, ROS).
    ``scalar_first`` given with anything but 4 numbers is refused: it would mean nothing."""
    if orientation is None:
        return np.array([1.0, 0.0, 0.0, 0.0])
    if scalar_first is not None and not isinstance(scalar_first, (bool, np.bool_)):
        raise ModelError(f"{owner}: scalar_first must be True or False, got {scalar_first!r}")
    if rot.is_scipy_rotation(orientation):
        return _scipy_orientation(orientation, owner, scalar_first)
    R = _matrix(orientation, "orientation", owner)
    if R.shape == (4,):
        n = np.linalg.norm(R)
        if not np.isfinite(n) or abs(n - 1.0) > UNIT_NORM_TOL:
            raise ModelError(f"{owner}: Euler parameters {R.tolist()} are not a unit quaternion (|p| = {n:.9g}, "
                             f"allowed 1 +- {UNIT_NORM_TOL:g}); give normalized values or a rotation matrix")
        return rot.from_quaternion(R / n, scalar_first=scalar_first is not False)
    if scalar_first is not None:
        raise ModelError(f"{owner}: scalar_first={scalar_first} applies to a quaternion of 4 numbers, but the "
                         f"orientation has shape {R.shape}; leave scalar_first out")
    if R.shape == (3, 3):
        if not np.all(np.isfinite(R)) or not np.allclose(R.T @ R, np.eye(3), atol=1e-6) or np.linalg.det(R) < 0:
            raise ModelError(f"{owner}: orientation matrix is not a proper rotation (R^T R != I or det < 0): {R.tolist()}")
        return rot.from_matrix(R)
    raise ModelError(f"{owner}: orientation must be a 3x3 rotation matrix, 4 Euler parameters or a "
                     f"scipy Rotation, got {orientation!r} (shape {R.shape})")


def _scipy_orientation(rotation, owner: str, scalar_first: bool | None) -> np.ndarray:
    """Euler parameters of one scipy ``Rotation`` (a stack of several is refused)."""
    if scalar_first is not None:
        raise ModelError(f"{owner}: scalar_first={scalar_first} applies to a quaternion of 4 numbers, not to "
                         f"a scipy Rotation (which carries its own convention); leave scalar_first out")
    if not rotation.single:
        raise ModelError(f"{owner}: orientation is a stack of {len(rotation)} scipy rotations; give one")
    return rot.from_scipy(rotation)


class RigidBody(Body):
    """A rigid body; its reference point is the centre of mass.

    Parameters: ``mass`` (kg); ``inertia`` about the centre of mass in the body
    frame (kg m^2, 3 principal values or a 3x3 matrix); ``position`` of the centre
    of mass (m); ``orientation``: a 3x3 rotation matrix body->global, a
    ``scipy.spatial.transform.Rotation``, or a unit quaternion of 4 numbers -- Euler
    parameters ``(e0, e1, e2, e3)``, scalar first, unless ``scalar_first=False`` says the
    numbers are ``(x, y, z, w)`` as scipy's ``as_quat()`` and ROS give them (docs/theory.md §1);
    ``velocity`` (m/s) and ``angular_velocity`` (rad/s), both global.

    ``geometry`` is only drawn (ParaView export, ``Result.export_paraview``): a ``(points (P, 3),
    triangles (T, 3))`` surface in body axes from the centre of mass (m), or a primitive
    ``{"box": (lx, ly, lz)}``, ``{"sphere": r}`` or ``{"cylinder": (r, length)}`` (axis z) with an
    optional ``"center"`` (flexmb.bodies.shapes). Without it the export draws the uniform box of the same
    mass and principal moments.
    """

    ncoord = 7
    kind = "rigid body"
    """What messages call it."""

    def __init__(self, mass: float, inertia, position=(0.0, 0.0, 0.0), orientation=None,
                 velocity=(0.0, 0.0, 0.0), angular_velocity=(0.0, 0.0, 0.0), name: str | None = None, *,
                 scalar_first: bool | None = None, geometry=None):
        super().__init__(name)
        owner = f"{self.kind} {self.name!r}"
        self.mass = checks.scalar(mass, "mass", owner, sign="positive", unit=" kg")
        self.inertia = _inertia_tensor(inertia, owner)
        self.position = _vector3(position, "position", owner)
        self.p0 = _orientation(orientation, owner, scalar_first)
        self.velocity = _vector3(velocity, "velocity", owner)
        self.angular_velocity = _vector3(angular_velocity, "angular velocity", owner)
        self.geometry = rigid_geometry(geometry, owner)

    def initial_frame(self):
        return self.position.copy(), rot.A(self.p0)

    def initial_q(self) -> np.ndarray:
        return np.concatenate([self.position, self.p0])

    def initial_v(self) -> np.ndarray:
        # p_dot = 1/2 E^T omega (global omega), Nikravesh eq. 6.96.
        return np.concatenate([self.velocity, 0.5 * rot.E(self.p0).T @ self.angular_velocity])


def without_inertia(J: np.ndarray) -> list[np.ndarray]:
    """For each inertia tensor of ``J`` (n, 3, 3), the (k, 3) orthonormal axes about which it has no moment
    (one vectorized eigen-decomposition)."""
    w, V = np.linalg.eigh(J)
    zero = w <= ZERO_INERTIA_RTOL * np.maximum(w[:, 2:], 0.0)
    return [V[k][:, zero[k]].T for k in range(len(J))]


def stand_in_moment(inertia: np.ndarray, mass: float) -> float:
    """The moment (kg m^2) the equations give a rotation of a body that has no inertia and that no joint holds
    (flexmb/bodies/free_rotations.py): its largest principal moment, or for a point mass ``m/4`` (in SI numbers,
    the size of its translational block ``m`` in the Euler-parameter block ``4 J``)."""
    return max(float(np.linalg.eigvalsh(inertia)[2]), 0.25 * mass)


class PointMass(RigidBody):
    """A body with mass and no rotational inertia: a :class:`RigidBody` with ``inertia = 0`` whose frame starts
    at the identity, with its centre at ``position`` (m), moving at ``velocity`` (m/s).

    Its frame turns only as its joints make it: a joint attached away from the centre is a rigid massless
    lever (``Revolute(ground, mass, point=pivot, axis=...)`` is the simple pendulum of length
    ``|position - pivot|``, ``Spherical`` the spherical one). Rotations that no joint holds (all three when every
    joint attaches at the centre, the spin about the lever of a spherical joint) carry no inertia and no load:
    they are held still (:mod:`flexmb.bodies.free_rotations`); a torque on such a rotation is refused when the
    run starts.
    """

    kind = "point mass"

    def __init__(self, mass: float, position=(0.0, 0.0, 0.0), velocity=(0.0, 0.0, 0.0), name: str | None = None, *,
                 geometry=None):
        super().__init__(mass, (0.0, 0.0, 0.0), position, None, velocity, (0.0, 0.0, 0.0), name, geometry=geometry)


class RigidBodyGroup:
    """All rigid bodies of a system, evaluated in one vectorized call.

    Residual contribution ``M(q) v_dot - Q_v(q, v) - m g`` and its derivatives
    ``dr/dq`` (K), ``dr/dv`` (C), ``dr/dv_dot`` (M), in the 7 coordinates of each body.
    """

    def pack_compiled(self, pos: np.ndarray) -> tuple:
        """The rigid bodies' part of the compiled model (flexmb/compiled/model.py ``Bodies``), ``pos`` the
        positions of their 7 x 7 blocks (empty for a model packed for its energies)."""
        from ..compiled.model import Bodies
        c = np.ascontiguousarray
        return Bodies(c(self.idx, dtype=np.int64), c(self.m, dtype=float), c(self.J, dtype=float),
                      c(self.gravity, dtype=float), c(pos, dtype=np.int64))

    def __init__(self, bodies: list[RigidBody], gravity: np.ndarray):
        self.bodies = bodies
        self.n = len(bodies)
        self.idx = np.array([b.offset + np.arange(7) for b in bodies], dtype=np.int64).reshape(self.n, 7)
        self.m = np.array([b.mass for b in bodies])
        # the inertia tensors the equations use: the bodies' own, plus a stand-in moment about each rotation that
        # has no inertia and that nothing holds (flexmb/bodies/free_rotations.py, set when the system compiles)
        # (until then every axis without inertia gets it, so that the Newton matrix's pattern, probed when the
        # assembly is built, holds those entries)
        self.J = np.array([b.inertia for b in bodies]).reshape(self.n, 3, 3)
        self.no_inertia = {k: axes for k, axes in enumerate(without_inertia(self.J)) if len(axes)}
        for k, axes in self.no_inertia.items():
            self.J[k] += stand_in_moment(self.J[k], self.m[k]) * axes.T @ axes
        self.held: list = []          # free_rotations.FreeRotation of the bodies held still
        self.gravity = np.asarray(gravity, dtype=float)
        from ..compiled.rigid import rigid_residual     # numba loads with the first compiled model, not at import
        self._kernel = rigid_residual
        self._r = np.zeros((self.n, 7))          # outputs of the compiled kernel, reused every call
        self._blk = np.zeros((self.n, 7, 7))

    # -- residual and Jacobian ----------------------------------------
    def residual(self, q, v, vdot, coef=None):
        """Return (idx, r, blocks): r (n, 7); blocks = cM M + cC C + cK K or None
        (one compiled call, flexmb/compiled/rigid.py)."""
        cM, cC, cK = (0.0, 0.0, 0.0) if coef is None else map(float, coef)
        self._kernel(q, v, vdot, self.idx, self.m, self.J, self.gravity, cM, cC, cK, coef is not None,
                       self._r, self._blk)
        return self.idx, self._r, (None if coef is None else self._blk)

    # -- energies ---------------------------------------------------------
    def kinetic_energy(self, q, v) -> float:
        """``sum m |r_d|^2 / 2 + w'^T J w' / 2`` (J), one compiled call (flexmb/compiled/rigid.py)."""
        from ..compiled.rigid import rigid_energies
        return float(rigid_energies(q, v, self.idx, self.m, self.J, self.gravity)[0])

    def potential_energy(self, q) -> float:
        """Gravity ``-sum m g . r`` (J)."""
        return float(-np.sum(self.m * (q[self.idx[:, :3]] @ self.gravity)))

    def linear_momentum(self, v) -> np.ndarray:
        return np.sum(self.m[:, None] * v[self.idx[:, :3]], axis=0)

    def angular_momentum(self, q, v, about=np.zeros(3)) -> np.ndarray:
        """Total angular momentum about a fixed point (global components)."""
        qb, vb = q[self.idx], v[self.idx]
        p = qb[:, 3:]
        w_body = 2.0 * np.einsum("nij,nj->ni", rot.G(p), vb[:, 3:])
        h_body = np.einsum("nij,nj->ni", self.J, w_body)
        h = np.einsum("nij,nj->ni", rot.A(p), h_body)
        h += np.cross(qb[:, :3] - about, self.m[:, None] * vb[:, :3])
        return h.sum(axis=0)


class NormalizationGroup:
    """Euler-parameter normalization rows ``(p.p - 1)/2 = 0``, one per body."""

    def __init__(self, bodies: list[Body], row0: int):
        self.bodies = bodies
        self.n = len(bodies)
        self.cols = np.array([b.offset + 3 + np.arange(4) for b in bodies], dtype=np.int64).reshape(self.n, 4)
        self.rows = row0 + np.arange(self.n)
        self.labels = [f"Euler-parameter normalization of {b.name!r}" for b in bodies]

    def pack_compiled(self, pos_jac, pos_jacT, pos_hess, pos_D, order) -> tuple:
        """The normalization rows' part of the compiled model (flexmb/compiled/model.py ``Normalization``), with
        the remaining block positions and the elimination order of the dense Newton matrix."""
        from ..compiled.model import Normalization
        return Normalization(self.cols, pos_jac, pos_jacT, pos_hess, pos_D, order)

    def evaluate(self, q, v):
        p, pd = q[self.cols], v[self.cols]
        phi = 0.5 * (np.sum(p * p, axis=1) - 1.0)
        return phi, p, np.sum(pd * pd, axis=1)   # value, jac (n,4), quad

    def hessian(self, lam):
        return lam[:, None, None] * _EYE4

_EYE4 = np.eye(4)[None]
