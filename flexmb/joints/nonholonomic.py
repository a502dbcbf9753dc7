"""Non-holonomic (velocity-level) constraints: knife edge and rolling disc (docs/theory.md §8).

A velocity row reads ``B(q) v = b(t)`` (Neimark & Fufaev, *Dynamics of Nonholonomic Systems*,
1972, ch. 1); its multiplier enters the dynamics as ``B^T lambda`` like a holonomic row's
``Phi_q^T lambda``. Rows of this module (all against the ground, rigid bodies only):

* :class:`KnifeEdge` -- 1 velocity row: the velocity of a body point along a body-fixed
  direction ``n = A(p) n'`` (optionally projected on a plane, ``n - (n.e) e``) is zero;
* :class:`RollingDisc` -- 1 holonomic row (the lowest point of the rim touches the plane:
  ``e.(r - P0) - R sqrt(1 - (e.h)^2) = 0``, ``h = A(p) h'`` the disc axis) and 2 velocity rows
  (the material point of the rim at the contact has no velocity along the two tangents of the
  plane; spin about the normal is free);
* :class:`VelocityConstraint` -- 1 velocity row ``B(q) v = b(t)`` with a user row function ``B(q)``
  of the body's 7 coordinates (and optionally its derivative; else central differences).

Derivatives: ``B(q)`` and the holonomic gradient ``g_q`` are written out; their derivatives by
q (``(B v)_q``, ``d(B^T lambda)/dq``, ``g_qq``) are taken by the complex step
``f'(x) = Im f(x + i h)/h`` with ``h = 1e-30`` (Squire & Trapp, SIAM Review 40 (1998) 110),
which has no subtractive cancellation: exact to round-off, one vectorized numpy call per family
over all rows and all 7 perturbations (no Python loop over constraints).
"""
from __future__ import annotations

import numpy as np

from .. import rotations as rot
from ..bodies.base import GROUND
from ..checks import user_array, user_call
from ..errors import ModelError
from ..timefunctions import as_time_function
from .base import Joint, perpendicular_pair, point3, unit

__all__ = ["KnifeEdge", "RollingDisc", "VelocityConstraint", "NonholonomicRows"]

_H = 1e-30          # complex step (Squire & Trapp 1998): any h << sqrt(eps) |q| gives round-off accuracy
_I7 = np.eye(7)
_I1, _I2 = np.array([1, 2, 0]), np.array([2, 0, 1])     # a x b = a[I1] b[I2] - a[I2] b[I1]


def _quadratic_tensor() -> np.ndarray:
    """``AQ`` (3, 3, 4, 4) with ``A_ij(p) = p^T AQ_ij p - delta_ij`` (rotations.A is exactly this
    quadratic form, Nikravesh eq. 6.19), built by polarization."""
    basis = np.eye(4)
    Ap = [rot.A(basis[k]) + np.eye(3) for k in range(4)]
    AQ = np.zeros((3, 3, 4, 4))
    for k in range(4):
        AQ[:, :, k, k] = Ap[k]
        for m in range(k + 1, 4):
            AQ[:, :, k, m] = AQ[:, :, m, k] = 0.5 * (rot.A(basis[k] + basis[m]) + np.eye(3) - Ap[k] - Ap[m])
    return AQ


_AQ = _quadratic_tensor()


def _A(p):
    """Rotation matrices (n, 3, 3) of Euler parameters (n, 4); complex-safe."""
    return np.einsum("ijkl,nk,nl->nij", _AQ, p, p) - np.eye(3)


def _dAu_dp(p, u):
    """``d(A(p) u)/dp`` (n, 3, 4) for body-fixed vectors u (n, 3); complex-safe."""
    return 2.0 * np.einsum("ijkl,nj,nl->nik", _AQ, u, p)


def _E(p):
    """``E(p) = [-e, e~ + e0 I]`` (n, 3, 4), ``omega = 2 E p_dot`` (global, Nikravesh eq. 6.99); complex-safe."""
    e0, e1, e2, e3 = p[:, 0], p[:, 1], p[:, 2], p[:, 3]
    E = np.empty((p.shape[0], 3, 4), dtype=p.dtype)
    E[:, 0, 0], E[:, 0, 1], E[:, 0, 2], E[:, 0, 3] = -e1, e0, -e3, e2
    E[:, 1, 0], E[:, 1, 1], E[:, 1, 2], E[:, 1, 3] = -e2, e3, e0, -e1
    E[:, 2, 0], E[:, 2, 1], E[:, 2, 2], E[:, 2, 3] = -e3, -e2, e1, e0
    return E


def _rigid(body, owner: str):
    from ..bodies.rigid import RigidBody
    if not isinstance(body, RigidBody):
        raise ModelError(f"{owner}: needs a rigid body with the rolling geometry about its frame origin, got "
                         f"{body!r} (velocity constraints on flexible bodies or sites are not supported)")
    return body


def _body_fixed(body, point=None, vector=None):
    """Global point/direction at the initial configuration -> body-fixed components."""
    r0, A0 = body.initial_frame()
    if point is not None:
        return A0.T @ (point - r0)
    return A0.T @ vector


class NonholonomicConstraint(Joint):
    """Base of the constraints with velocity rows: ``n_position`` holonomic rows, ``n_velocity``
    velocity rows, both against the ground (``body_a``); ``primitives()`` is empty (their rows
    are evaluated by :class:`NonholonomicRows`)."""

    n_position = 0
    n_velocity = 0

    def primitives(self):
        return []

    @property
    def n_rows(self) -> int:
        return self.n_position + self.n_velocity


class KnifeEdge(NonholonomicConstraint):
    """Zero velocity of the body point ``point`` along the body-fixed direction ``axis`` (1 velocity row).

    ``point`` (m) and ``axis`` are global at the initial configuration (e.g. a wheel's contact point and its
    lateral direction). ``normal``: when given, the direction is projected on the plane with that normal,
    ``n - (n.e) e`` (a wheel that leans keeps zero lateral slip in the ground plane).
    """

    kind = "knife edge"
    n_velocity = 1

    def __init__(self, body, point, axis, normal=None, name: str | None = None):
        _rigid(body, f"{self.kind} {name!r}" if name else self.kind)
        super().__init__(GROUND, body, name)
        self.point = point3(point, "point", self.owner)
        axis = unit(axis, "axis", self.owner)
        self.normal = None if normal is None else unit(normal, "normal", self.owner)
        if self.normal is not None and np.linalg.norm(axis - (axis @ self.normal) * self.normal) < 1e-6:
            raise ModelError(f"{self.owner}: axis {axis.tolist()} is along the plane normal "
                             f"{self.normal.tolist()}; its projection on the plane vanishes")
        self.u = _body_fixed(body, point=self.point)
        self.d = _body_fixed(body, vector=axis)


class RollingDisc(NonholonomicConstraint):
    """A thin disc (centre at the body's frame origin, radius ``radius`` m, axis ``axis`` global at the
    initial configuration) rolling without slip on the plane through ``plane_point`` with normal
    ``plane_normal`` (default the plane y = 0, normal +y): 1 holonomic row (the rim touches the plane) and
    2 velocity rows (no slip along the plane); spin about the normal is free."""

    kind = "rolling disc"
    n_position = 1
    n_velocity = 2

    def __init__(self, disc, radius: float, axis, plane_point=(0.0, 0.0, 0.0), plane_normal=(0.0, 1.0, 0.0),
                 name: str | None = None):
        _rigid(disc, f"{self.kind} {name!r}" if name else self.kind)
        super().__init__(GROUND, disc, name)
        radius = float(radius)
        if not np.isfinite(radius) or radius <= 0.0:
            raise ModelError(f"{self.owner}: radius must be a positive number of metres, got {radius!r}")
        self.radius = radius
        h = unit(axis, "axis", self.owner)
        self.e = unit(plane_normal, "plane_normal", self.owner)
        if abs(h @ self.e) > 1.0 - 1e-9:
            raise ModelError(f"{self.owner}: the disc axis {h.tolist()} is normal to the plane: a disc lying "
                             "flat has no contact point")
        self.offset = float(self.e @ point3(plane_point, "plane_point", self.owner))
        self.h = _body_fixed(disc, vector=h)
        self.t1, self.t2 = perpendicular_pair(self.e)
        r0, _ = disc.initial_frame()
        w = -self.e + (self.e @ h) * h
        self.point = r0 + radius * w / np.linalg.norm(w)     # contact point at the initial configuration


class VelocityConstraint(NonholonomicConstraint):
    """A user velocity constraint ``B(q) . v = b(t)`` on one rigid body (1 velocity row).

    ``row(q) -> B`` (7,): the row on the body's coordinates ``q = (x, y, z, e0, e1, e2, e3)`` (so ``B . v`` is in
    the unit of ``b``; e.g. m/s for a velocity component: the velocity of the body point ``u`` (body-fixed) is
    ``r_dot + rotations.B(p, u) p_dot``, the direction ``n'`` turns to ``rotations.A(p) n'``). ``value``:
    ``b(t)`` (a number, callable or TimeFunction; give its derivative for an exact ``b'``). ``derivative(q) -> dB`` (7, 7) with
    ``dB[k, j] = d B_k / d q_j``; without it central differences of ``row`` (step ``1e-7 (1 + |q_j|)``) stand in.
    With ``b != 0`` the constraint does work ``-mu b`` (counted with the drivers' in the energy balance).
    """

    kind = "velocity constraint"
    n_velocity = 1

    def __init__(self, body, row, value=0.0, derivative=None, name: str | None = None):
        _rigid(body, f"{self.kind} {name!r}" if name else self.kind)
        super().__init__(GROUND, body, name)
        for what, f in (("row", row), ("derivative", derivative)):
            if not callable(f) and (f is not None or what == "row"):
                raise ModelError(f"{self.owner}: {what} must be a callable of the body coordinates q (7,), "
                                 f"got {f!r}")
        self.row, self.derivative = row, derivative
        self.value = as_time_function(value, self.owner)
        self.point = body.initial_frame()[0]

    def B(self, q: np.ndarray, t: float) -> np.ndarray:
        """The user row at body coordinates q (7,), checked: 7 finite numbers."""
        return user_array(user_call(self.row, (q.copy(),), self.owner, "row(q)", t), (7,), self.owner, "row(q)", t)

    def dB(self, q: np.ndarray, t: float) -> np.ndarray:
        """``dB[k, j] = dB_k/dq_j`` (7, 7): the user's derivative, or central differences of :meth:`B`."""
        if self.derivative is not None:
            return user_array(user_call(self.derivative, (q.copy(),), self.owner, "derivative(q)", t), (7, 7),
                              self.owner, "derivative(q)", t)
        out = np.empty((7, 7))
        for j in range(7):
            h = 1e-7 * (1.0 + abs(q[j]))
            d = np.zeros(7)
            d[j] = h
            out[:, j] = (self.B(q + d, t) - self.B(q - d, t)) / (2.0 * h)
        return out


class NonholonomicRows:
    """All rows of the velocity-constraint family of a system (rows ``row0 ...``).

    Row order: knife-edge rows, rolling-disc holonomic rows, rolling-disc velocity rows (t1, t2 per disc),
    user rows (one Python call of the user functions per constraint: they are Python anyway).
    ``velocity`` marks the velocity rows; ``cols`` (rows, 7) the body coordinates of each row.
    """

    def __init__(self, joints: list[NonholonomicConstraint], joint_index: list[int], row0: int):
        knives = [(j, k) for j, k in zip(joints, joint_index) if isinstance(j, KnifeEdge)]
        discs = [(j, k) for j, k in zip(joints, joint_index) if isinstance(j, RollingDisc)]
        users = [(j, k) for j, k in zip(joints, joint_index) if isinstance(j, VelocityConstraint)]
        self.nk, self.nd = len(knives), len(discs)
        self.users = [j for j, _ in users]
        self.m = self.nk + 3 * self.nd + len(users)
        self.rows = row0 + np.arange(self.m)
        kb = [j.body_b for j, _ in knives]
        db = [j.body_b for j, _ in discs]
        bodies = kb + db + db + db + [j.body_b for j in self.users]
        self.cols = np.array([b.offset + np.arange(7) for b in bodies], dtype=np.int64).reshape(self.m, 7)
        self.owner = np.array([k for _, k in knives] + [k for _, k in discs] * 3 + [k for _, k in users],
                              dtype=np.int64)
        self.velocity = np.ones(self.m, dtype=bool)
        self.velocity[self.nk:self.nk + self.nd] = False
        self.labels = ([f"{j.owner} lateral velocity" for j, _ in knives] + [f"{j.owner} contact" for j, _ in discs]
                       + [f"{j.owner} slip along t1" for j, _ in discs] + [f"{j.owner} slip along t2" for j, _ in discs]
                       + [f"{j.owner} B v = b" for j in self.users])
        self.k_u = np.array([j.u for j, _ in knives], dtype=float).reshape(-1, 3)
        self.k_d = np.array([j.d for j, _ in knives], dtype=float).reshape(-1, 3)
        self.k_e = np.array([np.zeros(3) if j.normal is None else j.normal for j, _ in knives]).reshape(-1, 3)
        self.d_R = np.array([j.radius for j, _ in discs], dtype=float)
        self.d_h = np.array([j.h for j, _ in discs], dtype=float).reshape(-1, 3)
        self.d_e = np.array([j.e for j, _ in discs], dtype=float).reshape(-1, 3)
        self.d_c = np.array([j.offset for j, _ in discs], dtype=float)
        self.d_t = np.array([[j.t1, j.t2] for j, _ in discs], dtype=float).reshape(-1, 2, 3)
        # Qc (nd, 4, 4): e.A(p)h' = p^T Qc p - e.h'
        self.d_Q = np.einsum("ijkl,ni,nj->nkl", _AQ, self.d_e, self.d_h)
        self.d_eh = np.sum(self.d_e * self.d_h, axis=1)

    # -- the rows (complex-safe functions of body coordinates q (n, 7) and per-row parameters) ---------------
    @staticmethod
    def _B_knife(q, u, d, e):
        """Velocity rows ``B`` (n, 7) of knife edges: ``n = A d'`` projected, ``B = [n, n^T d(A u)/dp]``."""
        p = q[:, 3:]
        n = np.einsum("nij,nj->ni", _A(p), d)
        n = n - np.sum(n * e, axis=1)[:, None] * e
        return np.concatenate([n, np.einsum("ni,nik->nk", n, _dAu_dp(p, u))], axis=1)

    @staticmethod
    def _disc_geometry(p, R, h_body, e):
        """``c = e.h``, ``s = sqrt(1 - c^2)`` and the rim vector ``rho = R (c h - e)/s`` (centre -> contact)."""
        h = np.einsum("nij,nj->ni", _A(p), h_body)
        c = np.sum(e * h, axis=1)
        s = np.sqrt(1.0 - c * c)
        return c, s, R[:, None] * (c[:, None] * h - e) / s[:, None]

    @staticmethod
    def _B_disc(q, R, h_body, e, t):
        """Velocity rows (n, 2, 7): ``t_k.(r_dot + omega x rho) = t_k.r_dot + 2 (rho x t_k).E(p) p_dot``."""
        p = q[:, 3:]
        _, _, rho = NonholonomicRows._disc_geometry(p, R, h_body, e)
        r = rho[:, None, :]
        rxt = r[..., _I1] * t[..., _I2] - r[..., _I2] * t[..., _I1]           # rho x t_k (n, 2, 3)
        return np.concatenate([t, 2.0 * np.einsum("nki,nij->nkj", rxt, _E(p))], axis=2)

    @staticmethod
    def _gq_disc(q, R, Q, eh, e):
        """``g_q`` (n, 7) of the contact row: ``g_r = e``, ``g_p = R (c/s) dc/dp``, ``c = p^T Qc p - e.h'``,
        ``dc/dp = 2 Qc p``."""
        p = q[:, 3:]
        c = np.einsum("nk,nkl,nl->n", p, Q, p) - eh
        s = np.sqrt(1.0 - c * c)
        dc = 2.0 * np.einsum("nkl,nl->nk", Q, p)
        return np.concatenate([e, (R * c / s)[:, None] * dc], axis=1)

    @staticmethod
    def _complex_step(f, q, *params):
        """``dF[n, j, ...] = d f(q, *params)[n, ...]/d q_j`` for a complex-safe row function f of q (n, 7)."""
        n = q.shape[0]
        fc = f((q[:, None, :] + 1j * _H * _I7[None]).reshape(n * 7, 7), *(np.repeat(x, 7, axis=0) for x in params))
        return (fc.imag / _H).reshape((n, 7) + fc.shape[1:])

    def evaluate(self, q: np.ndarray, v: np.ndarray, t: float, derivatives: bool = True) -> dict:
        """Row values at (q, v, t): ``phi`` (B v - b for velocity rows (m/s), g for holonomic rows (m)),
        ``phi_t`` (-b), ``gamma`` (``-(B v)_q v + b'`` or ``-g_qq[v, v]``), ``jac`` (rows, 7: B or g_q),
        ``jac_v`` (rows, 7: ``(B v)_q``, zero for holonomic rows) and ``dB`` (rows, 7, 7): ``dB[i, k, j] =
        d jac[i, k]/dq_j`` (so ``sum_i lam_i dB[i]`` is ``d(B^T lam)/dq``). ``derivatives=False``: ``phi`` and
        ``jac`` only (``gamma``, ``jac_v``, ``dB`` zero), for the power and the redundancy checks."""
        qb, vb = q[self.cols], v[self.cols]
        jac = np.empty((self.m, 7))
        dB = np.empty((self.m, 7, 7))
        k0, k1, k2 = self.nk, self.nk + self.nd, self.nk + 3 * self.nd
        if self.nk:
            kp = (self.k_u, self.k_d, self.k_e)
            jac[:k0] = self._B_knife(qb[:k0], *kp)
            if derivatives:
                dB[:k0] = self._complex_step(self._B_knife, qb[:k0], *kp).transpose(0, 2, 1)
        if self.nd:
            qd = qb[k0:k1]
            gp = (self.d_R, self.d_Q, self.d_eh, self.d_e)
            jac[k0:k1] = self._gq_disc(qd, *gp)
            if derivatives:
                dB[k0:k1] = self._complex_step(self._gq_disc, qd, *gp).transpose(0, 2, 1)
            bp = (self.d_R, self.d_h, self.d_e, self.d_t)
            jac[k1:k2] = self._B_disc(qd, *bp).transpose(1, 0, 2).reshape(-1, 7)         # (nd, 2, 7) -> rows
            if derivatives:
                dBd = self._complex_step(self._B_disc, qd, *bp).transpose(0, 2, 3, 1)  # (nd, 2, 7k, 7j)
                dB[k1:k2] = dBd.transpose(1, 0, 2, 3).reshape(-1, 7, 7)
        phi_t, bdot = np.zeros(self.m), np.zeros(self.m)
        for i, u in enumerate(self.users):
            jac[k2 + i] = u.B(qb[k2 + i], t)
            dB[k2 + i] = u.dB(qb[k2 + i], t) if derivatives else 0.0
            phi_t[k2 + i], bdot[k2 + i] = -u.value.value(t), u.value.rate(t)
        if not derivatives:
            dB[:] = 0.0
        jac_v = np.einsum("ikj,ik->ij", dB, vb)
        jac_v[~self.velocity] = 0.0
        phi = np.einsum("ik,ik->i", jac, vb) + phi_t
        if self.nd:       # contact row g = e.r - R s - e.P0 (m)
            _, sd, _ = self._disc_geometry(qb[k0:k1, 3:], self.d_R, self.d_h, self.d_e)
            phi[k0:k1] = np.sum(self.d_e * qb[k0:k1, :3], axis=1) - self.d_R * sd - self.d_c
        gamma = -np.einsum("ikj,ik,ij->i", dB, vb, vb) + bdot
        return {"phi": phi, "phi_t": phi_t, "gamma": gamma, "jac": jac, "jac_v": jac_v, "dB": dB}
