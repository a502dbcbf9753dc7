"""Joint base class and the constraint primitives joints are made of.

A joint compiles to *primitive rows* (Haug 1989, §9.2 "basic constraints"):

* ``point``     3 rows  ``d = r_j + A_j u_j - r_i - A_i u_i = 0``    (spherical)
* ``dot1``      1 row   ``(A_i a_i) . (A_j a_j) = 0``                (perpendicular axes)
* ``dot2``      1 row   ``(A_i a_i) . d = f(t)``                    (point in plane; translation driver)
* ``distance``  1 row   ``(d . d - L^2)/2 = 0``
* ``angle``     1 row   ``theta(q) = f(t)``                          (rotation driver about an axis)
* ``coordinate``1 row   ``q_k = f(t)``                               (body-coordinate driver)

All rows of one primitive kind across the whole system are evaluated in one
vectorized call (joints/kernels.py).
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import numpy as np

from .. import checks
from ..bodies.base import Body, attach, check_body_pair
from ..errors import ModelError
from ..timefunctions import TimeFunction

_counter = itertools.count()


@dataclass
class Primitive:
    """One primitive constraint instance (1 or 3 rows)."""

    kind: str
    body_i: Body
    body_j: Body
    vectors: dict = field(default_factory=dict)   # body-fixed vectors/points by name
    label: str = ""
    driver: TimeFunction | None = None
    scalar: float = 0.0   # distance L, or coordinate index
    shapes: dict = field(default_factory=dict)    # name -> (3, m) attachment shapes on flexible bodies
    sites: tuple = (None, None)                   # the sites (interfaces, nodes) of sides i and j, if any


def unit(vector, what: str, owner: str) -> np.ndarray:
    """A direction: 3 finite numbers, not all zero, scaled to unit length."""
    v = checks.vector(vector, what, owner)
    n = np.linalg.norm(v)
    if n < 1e-12:
        raise ModelError(f"{owner}: {what} {v.tolist()} has zero length")
    return v / n


def point3(value, what: str, owner: str) -> np.ndarray:
    """A point or vector: 3 finite numbers (m for points)."""
    return checks.vector(value, what, owner)


def perpendicular_pair(h: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Two unit vectors f, g with (f, g, h) right-handed orthonormal."""
    k = int(np.argmin(np.abs(h)))
    e = np.zeros(3)
    e[k] = 1.0
    f = np.cross(h, e)
    f /= np.linalg.norm(f)
    return f, np.cross(h, f)


class Joint:
    """Base class: a constraint between body ``a`` (i) and body ``b`` (j).

    Points and axes are given in global coordinates at the initial configuration.
    Either side may be a body (the joint attaches to its frame) or a site on a
    flexible body (``beam.interface("root")``, ``beam.node(12)``): the joint's
    points and axes then move and turn with the deformation there.
    """

    kind = "joint"

    def __init__(self, body_a: Body, body_b: Body, name: str | None = None):
        self.name = checks.name(name, f"{self.kind} joint") if name is not None else f"{self.kind}{next(_counter)}"
        check_body_pair(f"{self.kind} joint {self.name!r}", body_a, body_b)
        self.site_a, self.site_b = body_a, body_b
        self.body_a, self.body_b = body_a.body, body_b.body
        self.point = np.zeros(3)

    @property
    def owner(self) -> str:
        """``'<kind> joint <name>'``, the joint as named in error messages."""
        return f"{self.kind} joint {self.name!r}"

    @property
    def bodies(self) -> tuple[Body, Body]:
        """The two bodies ``(body_a, body_b)`` (the bodies of the sites)."""
        return self.body_a, self.body_b

    def primitives(self) -> list[Primitive]:  # pragma: no cover - interface
        """The constraint primitives of the joint (Haug 1989, §9.2)."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}: {self.body_a.name} -> {self.body_b.name}>"

    # -- helpers for subclasses --------------------------------------
    def _attached(self, kind: str, spec: dict, label: str, driver=None, scalar: float = 0.0) -> Primitive:
        """A primitive from ``name -> ("point" | "vector", global value)``; names ending
        in ``_i`` attach to site a, ``_j`` to site b (with their deformation shapes)."""
        vectors, shapes = attach(self.site_a, self.site_b, spec)
        sites = tuple(x if x is not x.body else None for x in (self.site_a, self.site_b))
        return Primitive(kind, self.body_a, self.body_b, vectors, f"{self.owner} {label}", driver, scalar, shapes,
                         sites)

    def _point_rows(self, P, label="point") -> Primitive:
        return self._attached("point", {"u_i": ("point", P), "u_j": ("point", P)}, label)

    def _dot1(self, vi, vj, label) -> Primitive:
        return self._attached("dot1", {"a_i": ("vector", vi), "a_j": ("vector", vj)}, label)

    def _dot2(self, vi, P, label, driver=None) -> Primitive:
        return self._attached("dot2", {"a_i": ("vector", vi), "u_i": ("point", P), "u_j": ("point", P)},
                              label, driver)
