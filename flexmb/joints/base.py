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

from ..bodies.base import Body, check_body_pair
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


def unit(vector, what: str, owner: str) -> np.ndarray:
    v = np.asarray(vector, dtype=float).reshape(-1)
    if v.shape != (3,) or not np.all(np.isfinite(v)):
        raise ModelError(f"{owner}: {what} must be 3 finite numbers, got {vector!r}")
    n = np.linalg.norm(v)
    if n < 1e-12:
        raise ModelError(f"{owner}: {what} {v.tolist()} has zero length")
    return v / n


def point3(value, what: str, owner: str) -> np.ndarray:
    v = np.asarray(value, dtype=float).reshape(-1)
    if v.shape != (3,) or not np.all(np.isfinite(v)):
        raise ModelError(f"{owner}: {what} must be 3 finite numbers, got {value!r}")
    return v


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
    """

    kind = "joint"

    def __init__(self, body_a: Body, body_b: Body, name: str | None = None):
        self.name = name if name is not None else f"{self.kind}{next(_counter)}"
        check_body_pair(f"{self.kind} joint {self.name!r}", body_a, body_b)
        self.body_a, self.body_b = body_a, body_b
        self.point = np.zeros(3)

    @property
    def owner(self) -> str:
        return f"{self.kind} joint {self.name!r}"

    @property
    def bodies(self) -> tuple[Body, Body]:
        return self.body_a, self.body_b

    def primitives(self) -> list[Primitive]:  # pragma: no cover - interface
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}: {self.body_a.name} -> {self.body_b.name}>"

    # -- helpers for subclasses --------------------------------------
    def _local(self, body: Body, point=None, vector=None):
        return body.to_local_point(point) if point is not None else body.to_local_vector(vector)

    def _point_rows(self, P, label="point") -> Primitive:
        a, b = self.body_a, self.body_b
        return Primitive("point", a, b, {"u_i": a.to_local_point(P), "u_j": b.to_local_point(P)},
                         f"{self.owner} {label}")

    def _dot1(self, vi, vj, label) -> Primitive:
        a, b = self.body_a, self.body_b
        return Primitive("dot1", a, b, {"a_i": a.to_local_vector(vi), "a_j": b.to_local_vector(vj)},
                         f"{self.owner} {label}")

    def _dot2(self, vi, P, label, driver=None) -> Primitive:
        a, b = self.body_a, self.body_b
        return Primitive("dot2", a, b, {"a_i": a.to_local_vector(vi), "u_i": a.to_local_point(P),
                                        "u_j": b.to_local_point(P)}, f"{self.owner} {label}", driver)
