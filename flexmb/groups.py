"""One protocol for element families, and the registry that plugs them into the assembly.

An element family is a class of force elements (a rope on a pulley, a contact law, ...) evaluated for all
its instances at once. Its group object implements :class:`ElementGroup`; a builder function, registered
with :func:`register_family`, makes the groups of the family from the system's force elements. Assembly
calls every registered builder when a model is compiled and then treats every group alike: residual and
Newton-matrix blocks at each evaluation, potential energy and non-conservative power for the energy
balance, the history protocol at the start and at accepted steps, and the penetration for contact
onsets (docs/architecture.md).
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Callable

import numpy as np

__all__ = ["EvalState", "ElementGroup", "register_family", "family_builders", "FAMILY_MODULES"]


@dataclass
class EvalState:
    """One state of the system: coordinates ``q``, rates ``v``, accelerations ``a`` (nq,), time ``t`` (s),
    and ``qe``, ``ve``: q and v with the ground's coordinates appended (index nq..nq+6: position 0,
    Euler parameters (1, 0, 0, 0), rates 0), so that a scatter index of the ground gathers fixed values."""

    q: np.ndarray
    v: np.ndarray
    a: np.ndarray
    t: float
    qe: np.ndarray
    ve: np.ndarray
    gravity: np.ndarray | None = None
    """The system's gravity (m/s^2), given to the family builders (families with inertia weigh their masses)."""


class ElementGroup:
    """Protocol of an element family's group (subclass it and override what applies).

    Attributes:
        scatter: (n, k) int64, for each of the n instances the system coordinates it acts on
            (-1 for a coordinate of the ground); its Newton-matrix block is ``scatter x scatter``.
        probe_structure: False when the block's zero pattern cannot be seen at a random state (values that
            depend on user functions, or that are zero while a contact is open): the full block is kept.
        labels: names of the instances (for diagnostics: the element that dominates a failing step).
        family: short name of the family (``"springs"``, ``"contacts"``, ...), for looking its groups up
            (``Assembly.of_family``); the assembly itself never branches on it.
        applied: True for prescribed external loads (forces and torques, nodal forces): the static solver
            scales their contribution with its load factor (flexmb/solvers/static.py).

    ``st`` is read-only for the group. A group may keep values computed at one ``st`` object for a later
    call with the same object (``power(st)`` then ``accept(st)`` at an accepted step), never across objects.
    """

    scatter: np.ndarray
    probe_structure: bool = True
    labels: list[str] = []
    family: str = ""
    applied: bool = False

    def residual(self, st: EvalState, coef: tuple[float, float, float] | None):
        """Residual contribution ``r = -Q`` (n, k) of every instance and, when ``coef = (cM, cC, cK)`` is
        given, the blocks ``cM dr/da + cC dr/dv + cK dr/dq`` (n, k, k) (else None). Returns ``(r, blocks)``."""
        raise NotImplementedError

    def kinetic(self, st: EvalState) -> float:
        """Kinetic energy of the coordinates the family owns (particles: sum m v^2 / 2), J; 0 for families
        without inertia."""
        return 0.0

    def potential(self, st: EvalState) -> float:
        """Stored (conservative) energy of the family, J."""
        return 0.0

    def power(self, st: EvalState) -> float:
        """Power of its non-conservative forces on the system (W; negative when it dissipates), at the
        current history: at an accepted step the assembly calls it before :meth:`accept`. A family whose
        work is not split into stored and dissipated parts (crash elements: their plastic history) reports
        the power of all its forces here and no potential."""
        return 0.0

    def penetration(self, st: EvalState) -> np.ndarray | None:
        """Contact families: penetration of every candidate pair (m, positive when in contact); None for
        families without contact onsets."""
        return None

    def contact_duration(self, energy: float) -> float | None:
        """Contact families with a stiffness: the shortest elastic (Hertz) contact duration (s) of their
        contacts for an impact carrying up to ``energy`` (J), from each contact's stiffness, exponent and
        effective mass (flexmb/contact/duration.py); ``simulate`` takes a fraction of the shortest as its
        default ``h_contact``. None for other families."""
        return None

    # -- history (docs/guide.md §5): state carried from one accepted step to the next --------------------
    def start(self, st: EvalState) -> None:
        """Reset the history to the clean state of a run starting at ``st``."""

    def history(self) -> np.ndarray:
        """The history as one flat vector (empty when the family keeps none)."""
        return np.zeros(0)

    def set_history(self, x: np.ndarray) -> None:
        """Restore a vector from :meth:`history`."""

    def accept(self, st: EvalState) -> None:
        """Update the history after an accepted step at ``st``."""

    # -- the compiled model (flexmb/compiled/model.py): families the compiled step holds -------------------
    compiled_part: str | None = None
    """The field of the compiled ``Model`` this family packs into (``"springs"``, ``"contacts"``, ...), or None for
    a family the compiled code does not hold (its groups are evaluated through :meth:`residual`)."""
    compiled_words: str = ""
    """The family in words, for the notice of a compile of a model with it (``"springs and bushings"``)."""

    @property
    def on_compiled_step(self) -> bool:
        """Whether the compiled step holds this group (a family may hold some of its groups only, e.g. contact
        pairs with a user friction law are not)."""
        return self.compiled_part is not None

    @classmethod
    def pack_compiled(cls, groups: list) -> tuple:
        """The family's part of the compiled model (a named tuple of flexmb/compiled/model.py) from its groups
        ``[(group, block positions), ...]`` in the model's order (positions: the int64 positions of each group's
        Newton blocks, empty when the model is packed for its energies alone); an empty part for no group."""
        raise NotImplementedError


FAMILY_MODULES: list[str] = [
    "flexmb.forces.applied",
    "flexmb.forces.nodal",
    "flexmb.forces.motor",
    "flexmb.forces.springs",
    "flexmb.forces.crash",
    "flexmb.contact.pairs",
    "flexmb.contact.mesh",
    "flexmb.contact.rope",
    "flexmb.forces.user",
    "flexmb.forces.particles",
    "flexmb.contact.sprocket",
    "flexmb.contact.sheave_rope",
    "flexmb.forces.nonlinear_spring",
]
"""Modules whose ``build_groups(forces, nq, st)`` is a registered builder (imported when a model compiles).

The order is the order of the groups in ``Assembly.families``: of their contributions to the residual and,
for the families with a history, of their parts of the history vector saved with results (springs, crash
elements, pair contacts, mesh contacts, ropes: keep it, or saved histories no longer load)."""

_builders: list[Callable] = []


def register_family(builder: Callable) -> Callable:
    """Register ``builder(forces, nq, st) -> list[ElementGroup]`` (usable as a decorator)."""
    if builder not in _builders:
        _builders.append(builder)
    return builder


def family_builders() -> list[Callable]:
    """Every registered builder: those of ``FAMILY_MODULES`` first, then ones registered at run time."""
    out = [importlib.import_module(m).build_groups for m in FAMILY_MODULES]
    return out + [b for b in _builders if b not in out]
