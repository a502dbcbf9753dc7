"""The model: bodies, joints and force elements; numbers the coordinates.

``System.compile()`` returns an :class:`~flexmb.assembly.Assembly` that
evaluates residuals and sparse Jacobians for the solvers; it is rebuilt only
when the model changes.
"""
from __future__ import annotations

from typing import TypeVar

from . import checks
from .bodies.base import GROUND, Body, Ground
from .errors import ModelError
from .forces.base import ForceElement
from .joints.base import Joint

Item = TypeVar("Item")

__all__ = ["System"]


class System:
    """A multibody model.

    ``gravity`` (m/s^2, global) acts on every body; it is off unless given.
    """

    def __init__(self, gravity=(0.0, 0.0, 0.0), name: str = "system"):
        self.name = checks.name(name, "system")
        self.gravity = checks.vector(gravity, "gravity (m/s^2)", f"system {name!r}")
        self.bodies: list[Body] = []
        self.joints: list[Joint] = []
        self.forces: list[ForceElement] = []
        self._names: set[str] = set()
        self._ids: set[int] = set()
        self._assembly = None

    @property
    def ground(self) -> Ground:
        """The fixed global frame."""
        return GROUND

    def add(self, item: Item) -> Item:
        """Add a body, joint or force element (or a list of them); returns what was added."""
        if isinstance(item, (list, tuple)):
            return type(item)(self.add(x) for x in item)
        if isinstance(item, Ground):
            raise ModelError(f"system {self.name!r}: cannot add {item!r}; the ground is part of every system "
                             "already (system.ground)")
        if isinstance(item, (Body, Joint, ForceElement)):
            if id(item) in self._ids:
                raise ModelError(f"{item!r} was already added to system {self.name!r}")
            if item.name in self._names:
                raise ModelError(f"system {self.name!r} already has an item named {item.name!r}")
        if isinstance(item, Body):
            self.bodies.append(item)
        elif isinstance(item, Joint):
            self.joints.append(item)
        elif isinstance(item, ForceElement):
            self.forces.append(item)
        else:
            raise ModelError(f"system {self.name!r}: cannot add {item!r}; expected a body, joint or force element")
        self._ids.add(id(item))
        self._names.add(item.name)
        self._assembly = None
        return item

    def body(self, name: str) -> Body:
        for b in self.bodies:
            if b.name == name:
                return b
        raise ModelError(f"system {self.name!r} has no body named {name!r} "
                         f"(bodies: {[b.name for b in self.bodies]})")

    def _check_membership(self) -> None:
        known = set(map(id, self.bodies)) | {id(GROUND)}
        for item in self.joints + self.forces:
            for b in item.bodies:
                if id(b) not in known:
                    what = "joint" if isinstance(item, Joint) else "force element"
                    raise ModelError(f"{what} {item.name!r} acts on body {b.name!r}, which is not in system "
                                     f"{self.name!r}; add the body first")

    def compile(self):
        """Number coordinates and build the vectorized kernels and sparsity patterns (cached)."""
        if self._assembly is None:
            from .assembly import Assembly
            self._check_membership()
            if not self.bodies:
                raise ModelError(f"system {self.name!r} has no bodies")
            offset = 0
            for b in self.bodies:
                b.offset = offset
                offset += b.ncoord
            for f in self.forces:               # force elements with states of their own (DC motors)
                if getattr(f, "n_states", 0):
                    f.offset = offset
                    offset += f.n_states
            self._assembly = Assembly(self)
        return self._assembly
