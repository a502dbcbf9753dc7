"""Base class of bodies and the ground frame."""
from __future__ import annotations

import itertools

import numpy as np

from .. import checks

_counter = itertools.count()


class Body:
    """Something that owns a contiguous slice of the system coordinates.

    A body is also its own attachment site: joints and forces given a body
    attach to its frame. Flexible bodies hand out further sites (interface
    points, mesh nodes) whose points move with the deformation.
    """

    ncoord = 0
    n_modes = 0   # modal coordinates (flexible bodies)

    @property
    def body(self) -> "Body":
        """The body a site belongs to (a body is its own site)."""
        return self

    def point_shape(self, point) -> np.ndarray:
        """(3, n_modes) change of the body-frame position of a point attached here per
        unit modal coordinate (zero: attached to the frame)."""
        return np.zeros((3, self.n_modes))

    def vector_shape(self, vector) -> np.ndarray:
        """(3, n_modes) change of a body-fixed direction attached here per unit modal coordinate."""
        return np.zeros((3, self.n_modes))

    def __init__(self, name: str | None = None):
        self.name = checks.name(name, type(self).__name__) if name is not None else \
            f"{type(self).__name__.lower()}{next(_counter)}"
        self.offset = -1  # first coordinate index, set by System.compile

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"

    # Reference frame at the start (global): position and rotation matrix.
    def initial_frame(self) -> tuple[np.ndarray, np.ndarray]:  # pragma: no cover - interface
        raise NotImplementedError

    def to_local_point(self, point) -> np.ndarray:
        """Global point at the initial configuration -> body-fixed coordinates."""
        r, A = self.initial_frame()
        return A.T @ (np.asarray(point, dtype=float) - r)

    def to_local_vector(self, vector) -> np.ndarray:
        """Global direction at the initial configuration -> body-fixed components."""
        _, A = self.initial_frame()
        return A.T @ np.asarray(vector, dtype=float)


class Site:
    """A place on a body that joints and forces attach to (see ``FlexibleBody.interface``)."""

    body: Body

    def to_local_point(self, point) -> np.ndarray:
        return self.body.to_local_point(point)

    def to_local_vector(self, vector) -> np.ndarray:
        return self.body.to_local_vector(vector)

    def point_shape(self, point) -> np.ndarray:  # pragma: no cover - interface
        raise NotImplementedError

    def vector_shape(self, vector) -> np.ndarray:  # pragma: no cover - interface
        raise NotImplementedError


def attach(site_a, site_b, spec: dict) -> tuple[dict, dict]:
    """Body-fixed vectors and their deformation shapes for ``name -> ("point" | "vector", global
    value at the start)``: names ending in ``_j`` attach to ``site_b``, the others to ``site_a``.
    Returns ``(vectors, shapes)``; shapes only for flexible sides (docs/theory-flexible.md §3)."""
    vectors, shapes = {}, {}
    for key, (what, value) in spec.items():
        site = site_b if key.endswith("_j") else site_a
        if what == "point":
            vectors[key], S = site.to_local_point(value), site.point_shape(value)
        else:
            vectors[key], S = site.to_local_vector(value), site.vector_shape(value)
        if S.shape[1]:
            shapes[key] = S
    return vectors, shapes


def check_body_pair(owner: str, body_a, body_b) -> None:
    """Refuse a non-body or a connection of a body to itself (ModelError naming ``owner``).

    Either side may be a body or a :class:`Site` on a body."""
    from ..errors import ModelError
    for role, b in (("first body", body_a), ("second body", body_b)):
        if not isinstance(b, (Body, Site)):
            raise ModelError(f"{owner}: {role} must be a body, a site on a body (e.g. an interface of a "
                             f"flexible body) or system.ground, got {b!r}")
    if body_a.body is body_b.body:
        raise ModelError(f"{owner}: connects body {body_a.body.name!r} to itself")


class Ground(Body):
    """The fixed global frame; owns no coordinates."""

    def __init__(self):
        super().__init__("ground")

    def initial_frame(self):
        return np.zeros(3), np.eye(3)


GROUND = Ground()
"""The one ground frame shared by every System (``System.ground``)."""
