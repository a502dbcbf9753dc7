"""Drivers: prescribed relative rotation, relative translation or body coordinate."""
from __future__ import annotations

from ..bodies.base import GROUND, Body
from ..errors import ModelError
from ..timefunctions import as_time_function
from .base import Joint, Primitive
from .types import Cylindrical, Prismatic, Revolute

__all__ = ["Driver"]

_COORDS = {"x": 0, "y": 1, "z": 2, "e0": 3, "e1": 4, "e2": 5, "e3": 6}


class Driver(Joint):
    """A rheonomic constraint ``Phi(q) = f(t)``.

    * ``Driver(joint, angle=f)``: rotation of body b relative to body a about the
      axis of a revolute or cylindrical ``joint``, measured from the initial
      configuration (rad);
    * ``Driver(joint, displacement=f)``: translation along the axis of a prismatic
      or cylindrical ``joint`` from the initial configuration (m);
    * ``Driver(body, coordinate="x", value=f)``: a coordinate of ``body``
      ("x", "y", "z" of the centre of mass in m, or "e0".."e3").

    ``f`` is a number, a callable ``f(t)`` or a :class:`~flexmb.TimeFunction`
    (give its derivatives there for exact velocity and acceleration equations).
    """

    kind = "driver"

    def __init__(self, target, *, angle=None, displacement=None, coordinate=None, value=None,
                 name: str | None = None):
        given = [k for k, v in (("angle", angle), ("displacement", displacement), ("coordinate", coordinate))
                 if v is not None]
        label = name or "driver"
        if len(given) != 1:
            raise ModelError(f"driver {label!r}: give exactly one of angle=, displacement= or coordinate= "
                             f"(got {given or 'none'})")
        self.mode = given[0]
        if self.mode == "coordinate":
            if not isinstance(target, Body) or target is GROUND:
                raise ModelError(f"driver {label!r}: a coordinate driver needs a body, got {target!r}")
            if coordinate not in _COORDS:
                raise ModelError(f"driver {label!r}: coordinate must be one of {sorted(_COORDS)}, got {coordinate!r}")
            if value is None:
                raise ModelError(f"driver {label!r}: a coordinate driver needs value=f(t), got value={value!r}")
            super().__init__(GROUND, target, name)
            self.coordinate = _COORDS[coordinate]
            self.function = as_time_function(value, f"driver {self.name!r}")
            self.joint = None
            return
        if not isinstance(target, Joint):
            raise ModelError(f"driver {label!r}: an {self.mode} driver needs a joint, got {target!r}")
        if self.mode == "angle" and not isinstance(target, (Revolute, Cylindrical)):
            raise ModelError(f"driver {label!r}: an angle driver needs a revolute or cylindrical joint, "
                             f"got {target.kind} joint {target.name!r}")
        if self.mode == "displacement" and not isinstance(target, (Prismatic, Cylindrical)):
            raise ModelError(f"driver {label!r}: a displacement driver needs a prismatic or cylindrical joint, "
                             f"got {target.kind} joint {target.name!r}")
        super().__init__(target.site_a, target.site_b, name)
        self.joint = target
        self.point = target.point
        self.function = as_time_function(angle if self.mode == "angle" else displacement, f"driver {self.name!r}")

    def primitives(self):
        """One rheonomic primitive ``Phi(q) - f(t)``: an ``angle`` (rad), a ``dot2`` displacement (m) or a
        ``coordinate`` row (Haug 1989, §9.4)."""
        a, b = self.body_a, self.body_b
        if self.mode == "coordinate":
            return [Primitive("coordinate", a, b, {}, f"{self.owner} coordinate", self.function,
                              scalar=float(self.coordinate))]
        if self.mode == "angle":
            return [self.joint.angle_primitive("angle", self.function)]
        return [self._dot2(self.joint.axis, self.point, "displacement", self.function)]
