"""Spring-dampers on scalar measures: translational, rotational and the 6-DOF bushing.

Every element here is a linear spring-damper on a scalar measure ``x(q)`` of a
body pair (docs/theory.md §3.3):

    Q = -(k (x - x0) + c x_dot) grad x,     V = k (x - x0)^2 / 2,   P_diss = -c x_dot^2.

Measures: ``length`` |d| between two points; ``angle`` rotation about an axis;
``axial`` the component of d along a body-fixed axis of body a; ``twist`` the
small-rotation measure ``(g_a . f_b - f_a . g_b)/2`` (= sin of the relative
rotation about h for a rotation about h alone).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..bodies.base import Body, attach, check_body_pair
from .. import checks
from ..compiled import lazy_module
from ..checks import scalar
from ..errors import ModelError, NonFiniteError
from ..groups import ElementGroup, EvalState
from ..joints.base import perpendicular_pair, point3, unit
from ..joints.kernels import modal_counts, pair_columns, stack_shapes
from .base import ForceElement

cf = lazy_module("flexmb.compiled.forces")   # numba loads with the first evaluation, not at import
cm = lazy_module("flexmb.compiled.measures")

__all__ = ["SpringDamper", "RotationalSpringDamper", "Bushing", "ScalarSpringGroup", "build_groups"]


def _coeff(value, what: str, owner: str) -> float:
    return scalar(value, what, owner, sign="non-negative")


def _six(values, what: str, owner: str) -> np.ndarray:
    """6 non-negative coefficients of a bushing (3 translational, 3 rotational)."""
    v = checks.vector(values, f"{what}: 3 translational and 3 rotational values", owner, size=6)
    return np.array([_coeff(x, f"{what.split()[0]}[{i}]", owner) for i, x in enumerate(v)])


@dataclass
class SpringPrimitive:
    """One scalar spring-damper instance: measure kind, bodies, body-fixed vectors, stiffness ``k``, damping
    ``c``, free value ``x0`` and the attachment shapes on flexible sides."""

    measure: str          # "length" | "angle" | "axial" | "twist"
    body_i: Body
    body_j: Body
    vectors: dict
    k: float
    c: float
    x0: float
    label: str
    shapes: dict = field(default_factory=dict)   # name -> (3, m) attachment shapes on flexible bodies


class _PairForce(ForceElement):
    """A force element between two sites (bodies, or interface points/nodes of flexible bodies)."""

    def __init__(self, body_a: Body, body_b: Body, name):
        super().__init__(name)
        check_body_pair(self.owner, body_a, body_b)
        self.site_a, self.site_b = body_a, body_b
        self.body_a, self.body_b = body_a.body, body_b.body

    def _attached(self, measure: str, spec: dict, k: float, c: float, x0: float, label: str) -> SpringPrimitive:
        """A spring primitive from ``name -> ("point" | "vector", global value)`` (``*_i`` on
        site a, ``*_j`` on site b)."""
        vectors, shapes = attach(self.site_a, self.site_b, spec)
        return SpringPrimitive(measure, self.body_a, self.body_b, vectors, k, c, x0, label, shapes)

    @property
    def bodies(self):
        """The two bodies ``(body_a, body_b)``."""
        return (self.body_a, self.body_b)


class SpringDamper(_PairForce):
    """Translational spring-damper between ``point_a`` on a and ``point_b`` on b.

    ``k`` (N/m), ``c`` (N s/m); ``free_length`` (m) defaults to the initial distance.
    Tension positive: the force pulls the points together when stretched.
    """

    kind = "spring-damper"

    def __init__(self, body_a: Body, body_b: Body, *, point_a, point_b, k: float, c: float = 0.0,
                 free_length: float | None = None, name: str | None = None):
        super().__init__(body_a, body_b, name)
        self.point_a = point3(point_a, "point_a", self.owner)
        self.point_b = point3(point_b, "point_b", self.owner)
        self.k, self.c = _coeff(k, "stiffness k", self.owner), _coeff(c, "damping c", self.owner)
        L = float(np.linalg.norm(self.point_b - self.point_a))
        if L < 1e-12:
            raise ModelError(f"{self.owner}: point_a and point_b coincide at {self.point_a.tolist()}; the spring "
                             "direction is undefined (use a Bushing for a zero-length spring)")
        self.free_length = L if free_length is None else _coeff(free_length, "free_length", self.owner)

    def primitives(self):
        """One ``length`` primitive: distance (m) between ``point_a`` on a and ``point_b`` on b."""
        return [self._attached("length", {"u_i": ("point", self.point_a), "u_j": ("point", self.point_b)},
                               self.k, self.c, self.free_length, self.owner)]


class RotationalSpringDamper(_PairForce):
    """Torsional spring-damper about ``axis`` (rad measured from the initial configuration).

    ``k`` (N m/rad), ``c`` (N m s/rad), ``free_angle`` (rad). The angle is exact
    and unwrapped over many turns; bodies a and b are expected to turn about the
    axis (e.g. the two sides of a revolute joint).
    """

    kind = "rotational spring-damper"

    def __init__(self, body_a: Body, body_b: Body, axis, k: float, c: float = 0.0, free_angle: float = 0.0,
                 name: str | None = None):
        super().__init__(body_a, body_b, name)
        self.axis = unit(axis, "axis", self.owner)
        self.k, self.c = _coeff(k, "stiffness k", self.owner), _coeff(c, "damping c", self.owner)
        self.free_angle = scalar(free_angle, "free_angle (rad)", self.owner)

    def primitives(self):
        """One ``angle`` primitive: relative rotation (rad) about the axis, unwrapped (docs/theory.md §2)."""
        f, g = perpendicular_pair(self.axis)
        return [self._attached("angle", {"f_i": ("vector", f), "g_i": ("vector", g), "f_j": ("vector", f)},
                               self.k, self.c, self.free_angle, self.owner)]


class Bushing(_PairForce):
    """6-DOF linear bushing at ``point`` with axes ``axes`` (rows; default global x, y, z).

    ``stiffness`` = (kx, ky, kz, krx, kry, krz) in N/m and N m/rad; ``damping`` likewise.
    Translations are the components of the separation of the two attachment
    points along the bushing axes of body a; rotations use the small-rotation
    measures ``(g_a.f_b - f_a.g_b)/2`` (exactly sin(angle) for a rotation about
    one bushing axis), so the bushing is linear for small relative rotations.
    """

    kind = "bushing"

    def __init__(self, body_a: Body, body_b: Body, point, stiffness, damping=(0.0,) * 6, axes=None,
                 name: str | None = None):
        super().__init__(body_a, body_b, name)
        self.point = point3(point, "point", self.owner)
        self.k = _six(stiffness, "stiffness (N/m, N m/rad)", self.owner)
        self.c = _six(damping, "damping (N s/m, N m s/rad)", self.owner)
        R = np.eye(3) if axes is None else checks.vector(axes, "axes", self.owner, size=9).reshape(3, 3)
        if not np.allclose(R @ R.T, np.eye(3), atol=1e-8):
            raise ModelError(f"{self.owner}: axes must be 3 orthonormal rows, got {R.tolist()}")
        self.axes = R

    def primitives(self):
        """Six spring primitives: three ``axial`` translations and three ``twist`` rotations about the bushing
        axes (N/m and N m/rad stiffnesses)."""
        P = self.point
        out = []
        for k in range(3):
            out.append(self._attached("axial", {"a_i": ("vector", self.axes[k]), "u_i": ("point", P),
                                                "u_j": ("point", P)},
                                      self.k[k], self.c[k], 0.0, f"{self.owner} axis {k}"))
        for k in range(3):
            f, g = self.axes[(k + 1) % 3], self.axes[(k + 2) % 3]
            out.append(self._attached("twist", {"f_i": ("vector", f), "g_i": ("vector", g), "f_j": ("vector", f),
                                                "g_j": ("vector", g)},
                                      self.k[3 + k], self.c[3 + k], 0.0, f"{self.owner} rotation {k}"))
        return out


_VECTORS = {"length": ("u_i", "u_j"), "angle": ("f_i", "g_i", "f_j"), "axial": ("a_i", "u_i", "u_j"),
            "twist": ("f_i", "g_i", "f_j", "g_j")}


class ScalarSpringGroup(ElementGroup):
    """All spring primitives of one measure kind: one compiled call per evaluation
    (flexmb/compiled/forces.py, ``spring_kernel``). Also the measure of motors, crash elements and contact
    pairs (``values``, and the unwrapping reference of angles as history)."""

    family = "springs"
    compiled_part = "springs"
    compiled_words = "springs and bushings"

    @classmethod
    def pack_compiled(cls, groups: list) -> tuple:
        """The springs' part of the compiled model (flexmb/compiled/model.py ``Springs``); its ``ref`` holds the
        groups' unwrapping references as they are now."""
        from ..compiled.model import Springs, concat, pack_measures
        table, gather, scatter, vec, shape, sides, pos = pack_measures([(g, g, p) for g, p in groups])
        k, c, x0, ref = (concat([getattr(g, a) for g, _ in groups], float) for a in ("k", "c", "x0", "angle_ref"))
        return Springs(table, gather, scatter, vec, shape, k, c, x0, ref, sides, pos)

    def __init__(self, measure: str, prims: list[SpringPrimitive], nq: int):
        self.measure = measure
        self.prims = prims
        self.n = len(prims)
        self.labels = [p.label for p in prims]
        self.n_modes = modal_counts(prims[0])
        self.gather, self.scatter = pair_columns([p.body_i for p in prims], [p.body_j for p in prims], nq)
        names = _VECTORS[measure]
        self.vec = {k: np.array([p.vectors[k] for p in prims], dtype=float).reshape(self.n, 3) for k in names}
        self.shape = stack_shapes(prims, names, self.n_modes)
        self.code = cm.MEASURES[measure]
        self.sides = cm.sides_of(self.code)
        # packed for the kernels: vectors (n, 4, 3) and shapes (n, 4, 3, max m) per slot
        self.vecs = np.zeros((self.n, 4, 3))
        self.shps = np.zeros((self.n, 4, 3, max(self.n_modes)))
        for slot, k in enumerate(names):
            self.vecs[:, slot] = self.vec[k]
            if self.shape[k] is not None:
                self.shps[:, slot, :, :self.shape[k].shape[2]] = self.shape[k]
        self.k = np.array([p.k for p in prims], dtype=float)
        self.c = np.array([p.c for p in prims], dtype=float)
        self.x0 = np.array([p.x0 for p in prims], dtype=float)
        self.angle_ref = np.zeros(self.n)   # last accepted angle, for unwrapping
        nx = self.gather.shape[1]
        self._J, self._H0 = np.empty((self.n, nx)), np.empty((0, nx, nx))     # scratch of value-only calls
        self._memo = None                   # (st, x, xd) of the last values_at

    def _check(self, bad: int, x: np.ndarray) -> None:
        if bad >= 0:
            raise NonFiniteError(f"{self.prims[bad].label}: attachment points coincide (length {x[bad]:.3g} m); "
                                 "the force direction is undefined")

    def values(self, qe, ve) -> tuple[np.ndarray, np.ndarray]:
        """Measures ``x`` (length m, angle rad, axial m or twist rad) and their rates (n,) of all instances."""
        x, xd = np.empty(self.n), np.empty(self.n)
        self._check(cm.measure_kernel(self.code, qe, ve, self.gather, self.vecs, self.shps, self.sides, *self.n_modes,
                                      self.angle_ref, False, x, xd, self._J, self._H0), x)
        return x, xd

    def values_at(self, st: EvalState) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`values` at ``st``, evaluated once per state object (power then accept at a step's end)."""
        if self._memo is None or self._memo[0] is not st:
            self._memo = (st, *self.values(st.qe, st.ve))
        return self._memo[1], self._memo[2]

    def residual(self, st: EvalState, coef=None):
        """Residual contribution ``tau grad x`` with ``tau = k (x - x0) + c x_dot`` (N or N m) and, with ``coef``,
        the exact blocks ``cK (k grad x grad x^T + c grad x (H v)^T + tau H) + cC c grad x grad x^T``
        (docs/theory.md §4)."""
        n, nx = self.gather.shape
        x, xd, r = np.empty(n), np.empty(n), np.empty((n, nx))
        want = coef is not None
        blocks = np.empty((n, nx, nx)) if want else np.empty((1, nx, nx))
        cC, cK = (float(coef[1]), float(coef[2])) if want else (0.0, 0.0)
        self._check(cf.spring_kernel(self.code, st.qe, st.ve, self.gather, self.vecs, self.shps, self.sides,
                                     *self.n_modes, self.angle_ref, self.k, self.c, self.x0, cK, cC, want, x, xd, r,
                                     blocks), x)
        return r, (blocks if want else None)

    def potential(self, st: EvalState) -> float:
        """Elastic energy ``sum k (x - x0)^2 / 2`` (J)."""
        x, _ = self.values_at(st)
        return float(0.5 * np.sum(self.k * (x - self.x0) ** 2))

    def power(self, st: EvalState) -> float:
        """Damper power ``-sum c x_dot^2`` (W, <= 0)."""
        _, xd = self.values_at(st)
        return float(-np.sum(self.c * xd * xd))

    # -- history protocol (docs/guide.md §5): the unwrapping reference of angle measures -------------
    def accept(self, st: EvalState) -> None:
        """Record the accepted angles (the next evaluation unwraps about them)."""
        x, _ = self.values_at(st)
        if self.measure == "angle":
            self.angle_ref = x
        self._memo = None

    def start(self, st: EvalState) -> None:
        """Clean history at the start of a run: angles unwrap about 0, the initial configuration
        from which they are measured (``st`` is not needed)."""
        self.angle_ref = np.zeros(self.n)
        self._memo = None

    def history(self) -> np.ndarray:
        """The unwrapping reference (rad, one per angle primitive; empty for other measures)."""
        return self.angle_ref.copy() if self.measure == "angle" else np.zeros(0)

    def set_history(self, x: np.ndarray) -> None:
        """Restore a vector from :meth:`history`."""
        if self.measure == "angle":
            self.angle_ref = _history_part(x, self.n, f"{self.measure} springs").copy()
        self._memo = None


def build_groups(forces, nq: int, st: EvalState) -> list[ScalarSpringGroup]:
    """The spring groups of a model (flexmb/groups.py ``FAMILY_MODULES``): the primitives of every element
    with ``primitives()`` (spring-dampers, rotational spring-dampers, bushings), one group per measure kind and
    pair of modal counts."""
    springs = [p for f in forces if hasattr(f, "primitives") for p in f.primitives()]
    out = []
    for kind in ("length", "angle", "axial", "twist"):
        of_kind = [p for p in springs if p.measure == kind]
        for counts in sorted({modal_counts(p) for p in of_kind}):
            out.append(ScalarSpringGroup(kind, [p for p in of_kind if modal_counts(p) == counts], nq))
    return out


def _history_part(x, n: int, owner: str) -> np.ndarray:
    """``x`` as a float vector of length ``n``, or a ModelError naming ``owner`` and both lengths."""
    x = np.asarray(x, dtype=float).reshape(-1)
    if x.size != n:
        raise ModelError(f"{owner}: a history vector of {x.size} values for {n} expected")
    return x
