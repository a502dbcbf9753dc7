"""Applied forces and torques (constant or functions of time; global or body-fixed)."""
from __future__ import annotations

import numpy as np

from .. import checks
from .. import rotations as rot
from ..bodies.base import GROUND, Body
from ..errors import ModelError
from ..joints.base import point3
from .base import ForceElement

__all__ = ["Force", "Torque", "AppliedLoadGroup"]


def _load_vector(value, owner: str):
    if callable(value):
        return value
    return checks.vector(value, "vector (3 numbers or a callable f(t))", owner)


def load_value(vector, t: float, owner: str) -> np.ndarray:
    """A constant 3-vector, or ``vector(t)`` checked for shape and finiteness (:func:`flexmb.checks.user_value`)."""
    if not callable(vector):
        return vector
    return checks.user_value(vector, (t,), (3,), owner, "f(t)", t)


class _Load(ForceElement):
    def __init__(self, body: Body, vector, body_fixed: bool, name):
        super().__init__(name)
        if not isinstance(body, Body) or body is GROUND:
            raise ModelError(f"{self.owner}: must act on a body of the system, got {body!r}")
        self.body = body
        self.vector = _load_vector(vector, self.owner)
        self.body_fixed = bool(body_fixed)

    @property
    def bodies(self):
        """The one body the load acts on."""
        return (self.body,)

    def value(self, t: float) -> np.ndarray:
        """The load vector (3,) at time ``t`` (s): N or N m, checked finite."""
        return load_value(self.vector, t, self.owner)


class Force(_Load):
    """A force (N) at a point of a body.

    ``local_point`` is measured from the centre of mass in body axes (m);
    ``body_fixed=True`` means the vector's components are in body axes and turn
    with the body, otherwise they are global.
    """

    kind = "force"

    def __init__(self, body: Body, vector, local_point=(0.0, 0.0, 0.0), body_fixed: bool = False,
                 name: str | None = None):
        super().__init__(body, vector, body_fixed, name)
        self.local_point = point3(local_point, "local_point", self.owner)


class Torque(_Load):
    """A pure torque (N m) on a body, global or body-fixed components."""

    kind = "torque"

    def __init__(self, body: Body, vector, body_fixed: bool = False, name: str | None = None):
        super().__init__(body, vector, body_fixed, name)


class AppliedLoadGroup:
    """All Force and Torque elements, evaluated in one vectorized call.

    Generalized forces (docs/theory.md §3.3), s' the body-fixed point:
    global force f:  Q_r = f, Q_p = B(p, s')^T f = 2 Q(f, s') p;
    body force f':   Q_r = A f', Q_p = 2 G^T (s' x f');
    global torque n: Q_p = 2 E^T n;  body torque n': Q_p = 2 G^T n'.
    """

    def __init__(self, loads: list[_Load]):
        self.loads = loads
        self.n = len(loads)
        self.idx = np.array([ld.body.offset + np.arange(7) for ld in loads], dtype=np.int64).reshape(self.n, 7)
        self.is_force = np.array([isinstance(ld, Force) for ld in loads])
        self.body_fixed = np.array([ld.body_fixed for ld in loads])
        self.s = np.array([ld.local_point if isinstance(ld, Force) else np.zeros(3) for ld in loads]).reshape(self.n, 3)
        self.const = np.array([not callable(ld.vector) for ld in loads])
        self._vectors = np.array([ld.vector if not callable(ld.vector) else np.zeros(3) for ld in loads]).reshape(self.n, 3)

    def vectors(self, t: float) -> np.ndarray:
        """Load vectors (n, 3) at time ``t`` (s): N for forces, N m for torques; constants precomputed."""
        out = self._vectors.copy()
        for k in np.flatnonzero(~self.const):
            out[k] = self.loads[k].value(t)
        return out

    def generalized(self, q, t):
        """Q (n, 7) and dQ/dq (n, 7, 7)."""
        p = q[self.idx][:, 3:]
        F = self.vectors(t)
        Q = np.zeros((self.n, 7))
        dQ = np.zeros((self.n, 7, 7))
        gf = self.is_force & ~self.body_fixed
        bf = self.is_force & self.body_fixed
        gt = ~self.is_force & ~self.body_fixed
        bt = ~self.is_force & self.body_fixed
        if gf.any():
            Qm = 2.0 * rot.Q(F[gf], self.s[gf])
            Q[gf, :3] = F[gf]
            Q[gf, 3:] = np.einsum("nij,nj->ni", Qm, p[gf])
            dQ[gf, 3:, 3:] = Qm
        if bf.any():
            n_body = rot.cross(self.s[bf], F[bf])
            Q[bf, :3] = np.einsum("nij,nj->ni", rot.A(p[bf]), F[bf])
            Q[bf, 3:] = 2.0 * np.einsum("nki,nk->ni", rot.G(p[bf]), n_body)
            dQ[bf, :3, 3:] = rot.B(p[bf], F[bf])
            dQ[bf, 3:, 3:] = 2.0 * rot.T(n_body)
        if gt.any():
            n = F[gt]
            Tn = np.zeros((n.shape[0], 4, 4))   # E(p)^T n = [[0, -n^T], [n, n~]] p
            Tn[:, 0, 1:] = -n
            Tn[:, 1:, 0] = n
            Tn[:, 1:, 1:] = rot.skew(n)
            Q[gt, 3:] = 2.0 * np.einsum("nij,nj->ni", Tn, p[gt])
            dQ[gt, 3:, 3:] = 2.0 * Tn
        if bt.any():
            Q[bt, 3:] = 2.0 * np.einsum("nki,nk->ni", rot.G(p[bt]), F[bt])
            dQ[bt, 3:, 3:] = 2.0 * rot.T(F[bt])
        return Q, dQ

    def residual(self, q, v, t, coef=None):
        """Residual contribution ``-Q`` of the loads (generalized forces on the 7 frame coordinates of each
        body; Nikravesh 1988, §6.5) and, with ``coef``, ``-beta' dQ/dq`` for body-fixed loads."""
        Q, dQ = self.generalized(q, t)
        blocks = None if coef is None else -coef[2] * dQ
        return self.idx, -Q, blocks

    def power(self, q, v, t) -> float:
        """Power (W) of all applied loads, ``Q . v`` (docs/theory.md §6)."""
        Q, _ = self.generalized(q, t)
        return float(np.sum(Q * v[self.idx]))
