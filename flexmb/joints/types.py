"""The joint types. Each compiles to primitive rows (joints/base.py).

Row sets follow Haug (1989), §9.3-9.4 and Nikravesh (1988), §11.4.
"""
from __future__ import annotations

import numpy as np

from ..bodies.base import Body
from ..errors import ModelError
from .base import Joint, Primitive, perpendicular_pair, point3, unit

__all__ = ["Fixed", "Revolute", "Spherical", "Prismatic", "Cylindrical", "Universal", "Planar", "Distance"]


class _AxisJoint(Joint):
    """A joint with a point and an axis h; frames (f, g, h) fixed in both bodies."""

    def __init__(self, body_a: Body, body_b: Body, point, axis, name=None):
        super().__init__(body_a, body_b, name)
        self.point = point3(point, "point", self.owner)
        self.axis = unit(axis, "axis", self.owner)
        self.f, self.g = perpendicular_pair(self.axis)

    def angle_primitive(self, label: str, driver=None) -> Primitive:
        """Angle primitive about the axis: body-fixed f_i, g_i, f_j (for drivers)."""
        return self._attached("angle", {"f_i": ("vector", self.f), "g_i": ("vector", self.g),
                                        "f_j": ("vector", self.f)}, label, driver)


class Revolute(_AxisJoint):
    """Relative rotation about one axis: 3 point rows + 2 rows ``h_i . f_j = h_i . g_j = 0``."""

    kind = "revolute"

    def primitives(self):
        """Five rows: coincident points and ``h_a . f_b = h_a . g_b = 0`` (Haug 1989, §9.3)."""
        h, f, g = self.axis, self.f, self.g
        return [self._point_rows(self.point), self._dot1(h, f, "axis (h.f)"), self._dot1(h, g, "axis (h.g)")]


class Cylindrical(_AxisJoint):
    """Rotation about and translation along one axis (4 rows)."""

    kind = "cylindrical"

    def primitives(self):
        """Four rows: ``h_a . f_b = h_a . g_b = 0`` and the offsets along f and g (Haug 1989, §9.3)."""
        h, f, g, P = self.axis, self.f, self.g, self.point
        return [self._dot1(h, f, "axis (h.f)"), self._dot1(h, g, "axis (h.g)"),
                self._dot2(f, P, "offset along f"), self._dot2(g, P, "offset along g")]


class Prismatic(_AxisJoint):
    """Translation along one axis (5 rows): cylindrical rows plus ``f_i . g_j = 0``."""

    kind = "prismatic"

    def primitives(self):
        """Five rows: the cylindrical rows plus the rotation lock ``f_a . g_b = 0`` (Haug 1989, §9.3)."""
        h, f, g, P = self.axis, self.f, self.g, self.point
        return [self._dot1(h, f, "axis (h.f)"), self._dot1(h, g, "axis (h.g)"),
                self._dot2(f, P, "offset along f"), self._dot2(g, P, "offset along g"),
                self._dot1(f, g, "rotation lock (f.g)")]


class Spherical(Joint):
    """Coincident points (3 rows)."""

    kind = "spherical"

    def __init__(self, body_a: Body, body_b: Body, point, name=None):
        super().__init__(body_a, body_b, name)
        self.point = point3(point, "point", self.owner)

    def primitives(self):
        """Three rows: coincident points ``d = 0`` (m; Haug 1989, §9.2)."""
        return [self._point_rows(self.point)]


class Fixed(Joint):
    """Rigid connection (6 rows): coincident points and locked orientation."""

    kind = "fixed"

    def __init__(self, body_a: Body, body_b: Body, point=None, name=None):
        super().__init__(body_a, body_b, name)
        if point is None:
            point = self.body_b.initial_frame()[0]
        self.point = point3(point, "point", self.owner)

    def primitives(self):
        """Six rows: coincident points and three orthogonality rows of the body axes (Haug 1989, §9.3)."""
        ex, ey, ez = np.eye(3)
        return [self._point_rows(self.point), self._dot1(ex, ey, "orientation (x.y)"),
                self._dot1(ex, ez, "orientation (x.z)"), self._dot1(ey, ez, "orientation (y.z)")]


class Universal(Joint):
    """Cross (Hooke) joint: coincident points, ``axis_a`` on a stays perpendicular to ``axis_b`` on b."""

    kind = "universal"

    def __init__(self, body_a: Body, body_b: Body, *, point, axis_a, axis_b, name=None):
        super().__init__(body_a, body_b, name)
        self.point = point3(point, "point", self.owner)
        self.axis_a = unit(axis_a, "axis_a", self.owner)
        self.axis_b = unit(axis_b, "axis_b", self.owner)
        c = float(self.axis_a @ self.axis_b)
        if abs(c) > 1e-6:
            raise ModelError(f"{self.owner}: axis_a and axis_b must be perpendicular at the start "
                             f"(their cosine is {c:.3g})")

    def primitives(self):
        """Four rows: coincident points and ``axis_a . axis_b = 0`` (Haug 1989, §9.3)."""
        return [self._point_rows(self.point), self._dot1(self.axis_a, self.axis_b, "cross (a.b)")]


class Planar(Joint):
    """Body b slides and turns in a plane of body a (3 rows)."""

    kind = "planar"

    def __init__(self, body_a: Body, body_b: Body, point, normal, name=None):
        super().__init__(body_a, body_b, name)
        self.point = point3(point, "point", self.owner)
        self.normal = unit(normal, "normal", self.owner)
        self.f, self.g = perpendicular_pair(self.normal)

    def primitives(self):
        """Three rows: the normal stays normal (two ``dot1``) and the point stays in the plane (Haug 1989, §9.3)."""
        n, f, g = self.normal, self.f, self.g
        return [self._dot1(n, f, "normal (n.f)"), self._dot1(n, g, "normal (n.g)"),
                self._dot2(n, self.point, "in plane (n.d)")]


class Distance(Joint):
    """Constant distance between a point of a and a point of b (1 row)."""

    kind = "distance"

    def __init__(self, body_a: Body, body_b: Body, *, point_a, point_b, name=None):
        super().__init__(body_a, body_b, name)
        self.point_a = point3(point_a, "point_a", self.owner)
        self.point_b = point3(point_b, "point_b", self.owner)
        self.length = float(np.linalg.norm(self.point_b - self.point_a))
        if self.length < 1e-9:
            raise ModelError(f"{self.owner}: point_a and point_b coincide (distance {self.length:.3g} m); "
                             "use a Spherical joint")
        self.point = self.point_b

    def primitives(self):
        """One row ``(d . d - L^2) / 2 = 0`` (m^2; Haug 1989, §9.2)."""
        return [self._attached("distance", {"u_i": ("point", self.point_a), "u_j": ("point", self.point_b)},
                               "distance", scalar=self.length)]
