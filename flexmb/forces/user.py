"""User-defined forces through a callback, with an optional analytic Jacobian."""
from __future__ import annotations

import numpy as np

from .. import rotations as rot
from ..bodies.base import GROUND, Body
from ..checks import user_array, user_call, user_value
from ..errors import ModelError
from ..groups import ElementGroup, EvalState
from .base import ForceElement

__all__ = ["UserForce", "UserForceGroup", "wrench_to_generalized", "build_groups"]


def wrench_to_generalized(q_body, force=(0.0, 0.0, 0.0), torque=(0.0, 0.0, 0.0),
                          local_point=(0.0, 0.0, 0.0)) -> np.ndarray:
    """Generalized force (7,) on a rigid body's ``(r, p)`` from a global force (N)
    at a body point (m, body axes, from the centre of mass) and a global torque (N m).

    ``Q_r = f``, ``Q_p = 2 E(p)^T (n + (A s') x f)`` (Nikravesh 1988, eq. 11.29).
    """
    q_body = np.asarray(q_body, dtype=float)
    p = q_body[3:7]
    f = np.asarray(force, dtype=float)
    n = np.asarray(torque, dtype=float) + np.cross(rot.A(p) @ np.asarray(local_point, dtype=float), f)
    return np.concatenate([f, 2.0 * rot.E(p).T @ n])


class UserForce(ForceElement):
    """A force given by a Python function of time and state.

    ``func(t, q, v) -> Q``: ``q`` and ``v`` are the stacked coordinates and
    velocities of ``bodies`` (7 per rigid body: x, y, z, e0..e3) and ``Q`` the
    generalized force on them (same length; see :func:`wrench_to_generalized`).
    ``jacobian(t, q, v) -> (dQ/dq, dQ/dv)`` is optional; without it Newton uses
    central differences of ``func`` (step ``1e-7 (1 + |q|)``).
    """

    kind = "user force"

    def __init__(self, bodies, func, jacobian=None, name: str | None = None):
        super().__init__(name)
        bodies = [bodies] if isinstance(bodies, Body) else list(bodies)
        if not bodies or any(not isinstance(b, Body) or b is GROUND for b in bodies):
            raise ModelError(f"{self.owner}: needs one or more bodies of the system, got {bodies!r}")
        for what, f in (("func", func), ("jacobian", jacobian)):
            if not callable(f) and (f is not None or what == "func"):
                raise ModelError(f"{self.owner}: {what} must be callable (t, q, v), got {f!r}")
        self._bodies = bodies
        self.func, self.jacobian = func, jacobian

    @property
    def bodies(self):
        """The bodies whose coordinates the user function receives."""
        return tuple(self._bodies)

    def indices(self) -> np.ndarray:
        """Indices of those bodies' coordinates in the system vector, in the order given."""
        return np.concatenate([b.offset + np.arange(b.ncoord) for b in self._bodies])

    def generalized(self, t, qb, vb) -> np.ndarray:
        """``func(t, q, v)``, checked: as many finite values as coordinates (flexmb.checks.user_value)."""
        return user_value(self.func, (t, qb, vb), qb.shape, self.owner, "func(t, q, v)", t)

    def derivatives(self, t, qb, vb):
        """``(dQ/dq, dQ/dv)`` from ``jacobian(t, q, v)``, each checked (n, n) and finite; else central differences."""
        if self.jacobian is not None:
            what, n = "jacobian(t, q, v)", qb.size
            pair = user_call(self.jacobian, (t, qb, vb), self.owner, what, t)
            if isinstance(pair, (str, bytes)) or not hasattr(pair, "__len__") or len(pair) != 2:
                raise ModelError(f"{self.owner}: {what} must return a pair (dQ/dq, dQ/dv) of ({n}, {n}) arrays, "
                                 f"got {type(pair).__name__} at t = {t:.6g} s")
            return tuple(user_array(d, (n, n), self.owner, f"{what}[{k}]", t) for k, d in enumerate(pair))
        n = qb.size
        dq, dv = np.empty((n, n)), np.empty((n, n))
        for k in range(n):
            for arr, out in ((qb, dq), (vb, dv)):
                h = 1e-7 * (1.0 + abs(arr[k]))
                save = arr[k]
                arr[k] = save + h
                fp = self.generalized(t, qb, vb)
                arr[k] = save - h
                fm = self.generalized(t, qb, vb)
                arr[k] = save
                out[:, k] = (fp - fm) / (2 * h)
        return dq, dv


class UserForceGroup(ElementGroup):
    """One user force: its function (and Jacobian) called once per evaluation, on the coordinates of its bodies
    (one instance; user forces of different sizes cannot share an array, and the Python call is per force
    anyway). The block keeps its full structure (the values come from user code)."""

    family = "users"
    probe_structure = False

    def __init__(self, force: UserForce):
        self.force = force
        self.forces = [force]
        self.idx = force.indices()
        self.scatter = self.idx[None, :]
        self.labels = [f"user force {force.name!r}"]

    def residual(self, st: EvalState, coef=None):
        """``-Q`` (1, k) of the user force and, with ``coef``, its block ``-(cK dQ/dq + cC dQ/dv)`` (1, k, k) from
        the user Jacobian (or checked finite differences)."""
        f, idx = self.force, self.idx
        qb, vb = st.q[idx].copy(), st.v[idx].copy()
        Q = f.generalized(st.t, qb, vb)
        if coef is None:
            return -Q[None, :], None
        dq, dv = f.derivatives(st.t, qb, vb)
        return -Q[None, :], -(coef[2] * dq + coef[1] * dv)[None]

    def power(self, st: EvalState) -> float:
        """Power (W) of the user force, ``Q . v``."""
        i = self.idx
        return float(np.dot(self.force.generalized(st.t, st.q[i].copy(), st.v[i].copy()), st.v[i]))


def build_groups(forces, nq: int, st: EvalState) -> list[UserForceGroup]:
    """The user-force groups of a model (flexmb/groups.py ``FAMILY_MODULES``): one per user force, in the
    order of the system."""
    return [UserForceGroup(f) for f in forces if isinstance(f, UserForce)]
