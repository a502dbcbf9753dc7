"""Applied forces and torques (constant or functions of time; global or body-fixed)."""
from __future__ import annotations

import numpy as np

from .. import checks
from ..compiled import lazy_module
from ..bodies.base import GROUND, Body
from ..errors import ModelError
from ..groups import ElementGroup, EvalState
from ..joints.base import point3
from .base import ForceElement

cf = lazy_module("flexmb.compiled.forces")   # numba loads with the first evaluation, not at import

__all__ = ["Force", "Torque", "AppliedLoadGroup", "build_groups"]


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


class AppliedLoadGroup(ElementGroup):
    """All Force and Torque elements, evaluated in one compiled call.

    Generalized forces (docs/theory.md §3.3), s' the body-fixed point:
    global force f:  Q_r = f, Q_p = B(p, s')^T f = 2 Q(f, s') p;
    body force f':   Q_r = A f', Q_p = 2 G^T (s' x f');
    global torque n: Q_p = 2 E^T n;  body torque n': Q_p = 2 G^T n'.
    The blocks keep their full structure (values of user functions of time).
    """

    family = "loads"
    applied = True
    probe_structure = False
    compiled_part = "loads"
    compiled_words = "applied loads"

    @classmethod
    def pack_compiled(cls, groups: list) -> tuple:
        """The applied loads' part of the compiled model (flexmb/compiled/model.py ``Loads``; a model has one
        group); its vectors ``vec`` are set before each step."""
        from ..compiled.model import Loads
        if not groups:
            return Loads(np.zeros((0, 7), dtype=np.int64), np.zeros(0, dtype=bool), np.zeros(0, dtype=bool),
                         np.zeros((0, 3)), np.zeros((0, 3)), np.zeros(0, dtype=np.int64))
        (g, pos), = groups
        return Loads(g.idx, g.is_force, g.body_fixed, g.s, np.zeros((g.n, 3)), np.ascontiguousarray(pos, np.int64))

    def __init__(self, loads: list[_Load]):
        self.loads = loads
        self.n = len(loads)
        self.labels = [ld.owner for ld in loads]
        self.idx = np.array([ld.body.offset + np.arange(7) for ld in loads], dtype=np.int64).reshape(self.n, 7)
        self.scatter = self.idx
        self.is_force = np.array([isinstance(ld, Force) for ld in loads])
        self.body_fixed = np.array([ld.body_fixed for ld in loads])
        self.s = np.array([ld.local_point if isinstance(ld, Force) else np.zeros(3) for ld in loads],
                          dtype=float).reshape(self.n, 3)
        self.const = np.array([not callable(ld.vector) for ld in loads])
        self._vectors = np.array([ld.vector if not callable(ld.vector) else np.zeros(3) for ld in loads],
                                 dtype=float).reshape(self.n, 3)

    def vectors(self, t: float) -> np.ndarray:
        """Load vectors (n, 3) at time ``t`` (s): N for forces, N m for torques; constants precomputed."""
        out = self._vectors.copy()
        for k in np.flatnonzero(~self.const):
            out[k] = self.loads[k].value(t)
        return out

    def residual(self, st: EvalState, coef=None):
        """Residual contribution ``-Q`` of the loads (generalized forces on the 7 frame coordinates of each
        body; Nikravesh 1988, §6.5) and, with ``coef``, ``-beta' dQ/dq`` for body-fixed loads (one compiled
        call, ``loads_kernel``)."""
        want = coef is not None
        r = np.empty((self.n, 7))
        blk = np.empty((self.n, 7, 7)) if want else np.empty((1, 7, 7))
        cf.loads_kernel(st.q, st.v, self.idx, self.is_force, self.body_fixed, self.s, self.vectors(st.t),
                        float(coef[2]) if want else 0.0, want, r, blk)
        return r, (blk if want else None)

    def power(self, st: EvalState) -> float:
        """Power (W) of all applied loads, ``Q . v`` (docs/theory.md §6)."""
        r = np.empty((self.n, 7))
        return float(cf.loads_kernel(st.q, st.v, self.idx, self.is_force, self.body_fixed, self.s,
                                     self.vectors(st.t), 0.0, False, r, np.empty((1, 7, 7))))


def build_groups(forces, nq: int, st: EvalState) -> list[AppliedLoadGroup]:
    """The applied-load group of a model (flexmb/groups.py ``FAMILY_MODULES``): every Force and Torque."""
    loads = [f for f in forces if isinstance(f, (Force, Torque))]
    return [AppliedLoadGroup(loads)] if loads else []
