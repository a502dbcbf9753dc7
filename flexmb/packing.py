"""The compiled model of an assembly, packed once from its groups (flexmb/compiled/model.py ``Model``).

Each family packs its own part through the group protocol (``ElementGroup.compiled_part`` names the part,
``ElementGroup.pack_compiled`` builds it from the family's groups and their Newton-block positions); the rigid
bodies, joint primitives, flexible bodies and normalization rows pack theirs the same way. The compiled step
(:class:`flexmb.solvers.compiled_step.CompiledStep`), the sparse compiled evaluation and the energies
(:class:`flexmb.energies.CompiledEnergy`) read the model :func:`pack_model` returns.

A new family that runs on the compiled step adds a field to ``Model``, its part's named tuple, its
``compiled_part``, ``compiled_words`` and ``pack_compiled``, and its terms in flexmb/compiled/equations.py; nothing
here or in the solvers changes (docs/architecture.md §4, "Adding a family that runs on the compiled step").
"""
from __future__ import annotations

import numpy as np

from .bodies.flexible_kernel import FlexibleBodyGroup
from .compiled.model import EMPTY_POSITIONS, Model
from .groups import ElementGroup, family_builders
from .joints.kernels import PrimitiveGroup

__all__ = ["pack_model", "family_parts", "absent_parts", "PACKERS", "PART_WORDS"]


def _packers() -> dict:
    """``{part: group class}`` of every element family with a compiled part (``ElementGroup.compiled_part``), found
    among the groups of the family modules (``groups.FAMILY_MODULES``, loaded here): a new family registers by
    declaring its part, nothing is listed here."""
    family_builders()
    out, stack = {}, list(ElementGroup.__subclasses__())
    while stack:
        cls = stack.pop()
        stack += cls.__subclasses__()
        if cls.compiled_part is not None:
            out.setdefault(cls.compiled_part, cls)
    return {name: out[name] for name in Model._fields if name in out}


PACKERS = _packers()
"""The group class whose ``pack_compiled`` packs each family field of ``Model`` (an empty part for a model without
the family: the universal form's types), in the model's order."""

PART_WORDS = {"bodies": "rigid bodies", "flexible": "flexible bodies", "driver_rows": "drivers",
              **{name: cls.compiled_words for name, cls in PACKERS.items()}}
"""The parts of ``Model`` in words (the notice of a compile; joints are named by their row kinds, and every model
has the Euler parameters' normalization rows)."""


def absent_parts(asm, groups=None) -> list[str]:
    """The parts of ``Model`` that ``asm`` (its ``groups``, as :func:`pack_model`) has nothing of (None in its
    specialized model)."""
    out = [name for name, items in family_parts(asm, groups=groups).items() if not items]
    if asm.rigid.n == 0:
        out.append("bodies")
    if not asm.flexible:
        out.append("flexible")
    if not asm.groups:
        out.append("joints")
    if not np.any(asm.driver_rows):
        out.append("driver_rows")
    return out


def family_parts(asm, positions=None, groups=None) -> dict:
    """``{part: [(group, block positions), ...]}`` of the element families of ``asm`` the compiled model holds (every
    part of :data:`PACKERS`, an empty list for none), in the model's order; ``positions`` the block positions of
    each Newton-matrix handle (``asm._h``), or None (empty positions: a model packed for its energies);
    ``groups``: the groups to pack (default: every group with a ``compiled_part``)."""
    out = {name: [] for name in PACKERS}
    for g, h in zip(asm.families, asm._h["families"]):
        if g.compiled_part is not None and (groups is None or any(g is x for x in groups)):
            out[g.compiled_part].append((g, EMPTY_POSITIONS if positions is None else positions[h]))
    return out


def pack_model(asm, positions=None, order=None, groups=None) -> Model:
    """The compiled model of ``asm``. ``positions``: the block positions of each Newton-matrix handle (a list, as
    ``BlockPattern.dense_positions``: dense row-major in the step's elimination ``order``, or the CSR value array's),
    or None for a model packed for its energies alone (no joints, normalization rows or block positions then);
    ``groups``: the element-family and flexible groups to pack (default: all that have a compiled part)."""
    h = asm._h
    at = (lambda k: EMPTY_POSITIONS) if positions is None else (lambda k: positions[k])
    flexible = [(fg, at(hf)) for fg, hf in zip(asm.flexible, h["flexible"])
                if groups is None or any(fg is x for x in groups)]
    families = {name: PACKERS[name].pack_compiled(items)
                for name, items in family_parts(asm, positions, groups).items()}
    joints = norm = drivers = None
    if positions is not None:
        joints = PrimitiveGroup.pack_compiled([(g, (at(hj), at(hjT), at(hh))) for g, hj, hjT, hh
                                               in zip(asm.groups, h["jac"], h["jacT"], h["hess"])])
        norm = asm.norm.pack_compiled(at(h["norm_jac"]), at(h["norm_jacT"]), at(h["norm_hess"]), at(h["D"]),
                                      np.arange(asm.nq + asm.m, dtype=np.int64) if order is None else order)
        drivers = np.flatnonzero(asm.driver_rows).astype(np.int64)
    return Model(bodies=asm.rigid.pack_compiled(at(h["body"])), joints=joints,
                 flexible=FlexibleBodyGroup.pack_compiled(flexible), norm=norm, driver_rows=drivers, **families)
