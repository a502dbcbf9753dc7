"""The model: bodies, joints and force elements; numbers the coordinates.

``System.compile()`` returns an :class:`~flexmb.assembly.Assembly` that
evaluates residuals and sparse Jacobians for the solvers; it is rebuilt only
when the model changes.
"""
from __future__ import annotations

from typing import TypeVar

from . import checks
from .bodies import free_rotations
from .bodies.base import GROUND, Body, Ground
from .errors import ModelError
from .forces.base import ForceElement
from .joints.base import Joint

Item = TypeVar("Item")

__all__ = ["System"]


def _count(n: int, one: str, many: str | None = None) -> str:
    """``n`` with the noun in singular or plural: "1 body", "2 bodies"."""
    return f"{n} {one if n == 1 else many or one + 's'}"


def _is_contact(force: ForceElement) -> bool:
    """Contact pairs and meshes (flexmb.contact) among the force elements."""
    return type(force).__module__.startswith("flexmb.contact")


def _mass(body: Body) -> float:
    """Total mass (kg): a rigid body's, or a flexible body's mass invariant (docs/theory-flexible.md)."""
    invariants = getattr(body, "invariants", None)
    return float(body.mass if invariants is None else invariants.mass)


def _coordinates(body: Body) -> str:
    modal = f" ({body.n_modes} modal)" if body.n_modes else ""
    return _count(body.ncoord, "coordinate") + modal


def _equations(joint: Joint) -> int:
    """Constraint equations of a joint: the rows of its primitives (flexmb/joints/kernels.py)."""
    from .joints.kernels import ROWS
    return sum(ROWS[p.kind] for p in joint.primitives()) + getattr(joint, "n_rows", 0)   # + velocity-constraint rows


def _between(bodies: tuple) -> str:
    return " -> ".join(b.name for b in bodies)


def _table(title: str, rows: list[tuple[str, str, str, str]]) -> list[str]:
    """``title:`` and the rows in aligned columns (nothing for no rows)."""
    if not rows:
        return []
    widths = [max(len(r[k]) for r in rows) for k in range(3)]
    return [f"{title}:"] + [f"  {r[0]:{widths[0]}}  {r[1]:{widths[1]}}  {r[2]:{widths[2]}}  {r[3]}".rstrip()
                            for r in rows]


class System:
    """A multibody model; ``print(system)`` (or ``system.summary()``) lists what it holds.

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

    def summary(self) -> str:
        """The model as text: every body (kind, mass in kg, coordinates), joint (bodies, constraint
        equations), force element and contact (bodies), with the totals; ``print(system)`` shows it."""
        forces = [f for f in self.forces if not _is_contact(f)]
        contacts = [f for f in self.forces if _is_contact(f)]
        lines = [self._headline(len(forces), len(contacts))]
        lines += _table("bodies", [(b.name, type(b).__name__, f"{_mass(b):.6g} kg", _coordinates(b))
                                   for b in self.bodies])
        lines += _table("joints", [(j.name, type(j).__name__, _between(j.bodies), _count(_equations(j), "equation"))
                                   for j in self.joints])
        lines += _table("forces", [(f.name, type(f).__name__, _between(f.bodies), "") for f in forces])
        lines += _table("contacts", [(c.name, type(c).__name__, _between(c.bodies), "") for c in contacts])
        return "\n".join(lines)

    def _headline(self, n_forces: int, n_contacts: int) -> str:
        """The first line of :meth:`summary`: counts, coordinates, joint equations, gravity."""
        n_states = sum(getattr(f, "n_states", 0) for f in self.forces)      # DC motor currents
        nq = sum(b.ncoord for b in self.bodies) + n_states
        n_eq = sum(_equations(j) for j in self.joints)
        states = f" (incl. {n_states} force-element states)" if n_states else ""
        return (f"System {self.name!r}: {_count(len(self.bodies), 'body', 'bodies')}, "
                f"{_count(len(self.joints), 'joint')}, {_count(n_forces, 'force element')}, "
                f"{_count(n_contacts, 'contact')}; {_count(nq, 'coordinate')}{states}, "
                f"{_count(n_eq, 'joint equation')}; gravity {tuple(float(g) for g in self.gravity)} m/s^2")

    def __repr__(self) -> str:
        return self.summary()

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
            from .compiled import notice
            notice.install()                    # a numba compile a run meets says so on stderr (first run)
            self._check_membership()
            if not self.bodies and not any(getattr(f, "n_states", 0) for f in self.forces):
                raise ModelError(f"system {self.name!r} has no bodies (and no elements with coordinates of their "
                                 "own, such as particle sets)")
            offset = 0
            for b in self.bodies:
                b.offset = offset
                offset += b.ncoord
            for f in self.forces:               # force elements with states of their own (DC motors)
                if getattr(f, "n_states", 0):
                    f.offset = offset
                    offset += f.n_states
            assembly = Assembly(self)
            free_rotations.hold(assembly)      # rotations without inertia that no joint holds: held still
            self._assembly = assembly
        return self._assembly
