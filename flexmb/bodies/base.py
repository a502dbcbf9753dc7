"""Base class of bodies and the ground frame."""
from __future__ import annotations

import itertools

import numpy as np

_counter = itertools.count()


class Body:
    """Something that owns a contiguous slice of the system coordinates."""

    ncoord = 0

    def __init__(self, name: str | None = None):
        self.name = name if name is not None else f"{type(self).__name__.lower()}{next(_counter)}"
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


def check_body_pair(owner: str, body_a, body_b) -> None:
    """Refuse a non-body or a connection of a body to itself (ModelError naming ``owner``)."""
    from ..errors import ModelError
    for role, b in (("first body", body_a), ("second body", body_b)):
        if not isinstance(b, Body):
            raise ModelError(f"{owner}: {role} must be a body (or system.ground), got {b!r}")
    if body_a is body_b:
        raise ModelError(f"{owner}: connects body {body_a.name!r} to itself")


class Ground(Body):
    """The fixed global frame; owns no coordinates."""

    def __init__(self):
        super().__init__("ground")

    def initial_frame(self):
        return np.zeros(3), np.eye(3)


GROUND = Ground()
"""The one ground frame shared by every System (``System.ground``)."""
