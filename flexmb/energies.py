"""The energies of one compiled System in one compiled call (the energy-balance check, docs/architecture.md §1).

:class:`CompiledEnergy` packs, once per ``Assembly``, the bodies and the families that
:func:`flexmb.compiled.energy.energy_rows` evaluates (rigid and flexible bodies on the compiled kernels, scalar
springs, contact pairs with built-in laws, DC motors, particles, links and anchors; applied loads store none) and
adds the Python ``kinetic``/``potential`` of every other family per state. ``Assembly.energies`` /
``Assembly.energy_rows`` (the run's energy-balance check, ``Result.energy()``) read it.
"""
from __future__ import annotations

import numpy as np

from .compiled.energy import energy_rows
from .compiled.measures import concat, pack_measures
from .compiled.specialization import universal
from .contact.pairs import ContactGroup
from .forces.applied import AppliedLoadGroup
from .forces.motor import DCMotorGroup
from .forces.particles import ParticleAnchorGroup, ParticleGroup, ParticleLinkGroup
from .forces.springs import ScalarSpringGroup

__all__ = ["CompiledEnergy"]


class CompiledEnergy:
    """The energies of one compiled System (an ``Assembly``): the families :func:`energy_rows` holds packed once,
    the others evaluated through their ``kinetic``/``potential`` (Python, per state)."""

    def __init__(self, asm) -> None:
        self.asm = asm
        f8, i8 = np.float64, np.int64
        c = np.ascontiguousarray
        rigid = asm.rigid
        self.bodies = (c(rigid.idx, dtype=i8), c(rigid.m, dtype=f8), c(rigid.J, dtype=f8),
                       c(rigid.gravity, dtype=f8))
        flexible = [g for g in asm.flexible if not g._python_structures]
        self.python_flexible = [g for g in asm.flexible if g._python_structures]
        ftab, fdata, idata, wdata, ftabs = [], [], [], [], []
        offs = np.zeros(4, dtype=i8)
        for fg in flexible:
            ftab.append((offs[0], fg._fdata.size, offs[1], fg._idata.size, offs[2], fg._wdata.size, offs[3],
                         fg._tab.shape[0]))
            fdata.append(fg._fdata)
            idata.append(fg._idata)
            wdata.append(fg._wdata.copy())      # work arrays of its own
            ftabs.append(fg._tab)
            offs += (fg._fdata.size, fg._idata.size, fg._wdata.size, fg._tab.shape[0])
        self.flex = (np.array(ftab, dtype=i8).reshape(-1, 8), concat(fdata, f8), concat(idata, i8), concat(wdata, f8),
                     c(np.concatenate(ftabs), dtype=i8) if ftabs else np.zeros((0, 6), dtype=i8))
        no_positions = {None: np.zeros(0, dtype=i8)}
        springs = [g for g in asm.families if isinstance(g, ScalarSpringGroup)]
        tab, gather, _, vecs, shps, sides, _, first = pack_measures([(g, g, None) for g in springs], no_positions)
        self.springs = (tab, gather, vecs, shps, sides, concat([g.k for g in springs], f8),
                        concat([g.x0 for g in springs], f8))
        self._spring_groups = springs
        self._spring_slices = {id(g): slice(a, a + g.n) for g, a in zip(springs, first)}
        self._angle = any(g.measure == "angle" for g in springs)   # the references move with the history
        self._sref = concat([g.angle_ref for g in springs], f8).reshape(1, -1)
        contacts = [g for g in asm.families if isinstance(g, ContactGroup)]
        tab, gather, _, vecs, shps, sides, _, _ = pack_measures([(g, g.measure, None) for g in contacts],
                                                                 no_positions)
        self.contacts = (tab, gather, vecs, shps, sides, concat([g._ref for g in contacts], f8),
                         np.array([g.sign for g in contacts], dtype=f8), concat([g.offset for g in contacts], f8),
                         concat([g.laws.K for g in contacts], f8), concat([g.laws.n for g in contacts], f8))
        motors = [g for g in asm.families if isinstance(g, DCMotorGroup)]
        self.motors = (concat([g.state for g in motors], i8), concat([g.L_a for g in motors], f8))
        particle_kinds = (ParticleGroup, ParticleLinkGroup, ParticleAnchorGroup)
        one = {type(g): g for g in asm.families if isinstance(g, particle_kinds)}
        p, lk, an = one.get(ParticleGroup), one.get(ParticleLinkGroup), one.get(ParticleAnchorGroup)

        def arr(g, name, dtype, shape=(0,)):
            return c(getattr(g, name), dtype=dtype) if g is not None else np.zeros(shape, dtype=dtype)

        self.parts = (arr(p, "scatter", i8, (0, 3)), arr(p, "mass", f8), arr(p, "g", f8, (3,)),
                      arr(lk, "scatter", i8, (0, 6)), arr(lk, "k", f8), arr(lk, "L0", f8),
                      arr(an, "scatter", i8, (0, 3)), arr(an, "point", f8, (0, 3)), arr(an, "k", f8))
        held = (ScalarSpringGroup, DCMotorGroup, AppliedLoadGroup, *particle_kinds)
        self.python_families = [g for g in asm.families
                                if not (isinstance(g, held) or any(g is x for x in contacts))]
        # the Python part's energies depend on the element history (mesh contacts' candidates, ropes' paid-out
        # length, crash elements): states saved with their own history are evaluated one by one under it
        self._python_stateful = any(g.history().size for g in self.python_families)
        self._row = np.empty((1, 3))
        self._families = None       # the families' tuples as energy_rows gets them (_call)

    def _call(self, Q, V, srefs, out) -> None:
        """:func:`energy_rows` on the universal family tuples or on those of this model's families (None for the
        absent ones: a smaller compile; flexmb/compiled/specialization.py), chosen at the first call."""
        if self._families is None:
            full = (self.bodies, self.flex, self.springs, self.contacts, self.motors, self.parts)
            p = self.parts
            absent = (self.bodies[0].shape[0] == 0, self.flex[0].shape[0] == 0, self.springs[5].size == 0,
                      self.contacts[8].size == 0, self.motors[0].size == 0,
                      p[0].shape[0] + p[3].shape[0] + p[6].shape[0] == 0)
            special = tuple(None if a else part for a, part in zip(absent, full))
            names = ("rigid bodies", "flexible bodies", "springs and bushings", "contact pairs", "DC motors",
                     "particles")
            families = ", ".join(n for n, a in zip(names, absent) if not a)
            self._families = (full if universal(energy_rows, (Q, V, srefs, *full, out), (Q, V, srefs, *special, out),
                                                f"the energies of {families}") else special)
        energy_rows(Q, V, srefs, *self._families, out)

    def _srefs(self) -> np.ndarray:
        """The springs' unwrapping references as the groups hold them now (1, springs)."""
        if self._angle:
            self._sref = np.concatenate([g.angle_ref for g in self._spring_groups]).reshape(1, -1)
        return self._sref

    def _sref_rows(self, history) -> np.ndarray | None:
        """The springs' unwrapping references (nt, springs) read from rows of ``Assembly.history()`` vectors (per
        stateful group its length, then its values); None when the rows' layouts differ (a history whose length
        changes: then each row is evaluated under its history set on the assembly)."""
        H = np.asarray(history, dtype=float)
        out = np.repeat(self._srefs(), H.shape[0], axis=0)
        k = 0
        for g in self.asm.stateful:
            if k >= H.shape[1]:
                return None
            n = H[0, k]
            if not np.all(H[:, k] == n):
                return None
            n = int(n)
            sl = self._spring_slices.get(id(g))
            if sl is not None:
                out[:, sl] = H[:, k + 1:k + 1 + n]
            k += 1 + n
        return out

    def _python(self, q, v) -> tuple[float, float]:
        """Energies of the bodies and families the compiled call does not hold (J), at the current history."""
        asm = self.asm
        T = sum(g.kinetic_energy(q, v) for g in self.python_flexible)
        U = sum(g.potential_energy(q) for g in self.python_flexible)
        if self.python_families:
            st = asm.eval_state(q, v, np.zeros(asm.nq), 0.0)
            T += sum(g.kinetic(st) for g in self.python_families)
            U += sum(g.potential(st) for g in self.python_families)
        return T, U

    @property
    def all_compiled(self) -> bool:
        """Whether one compiled call holds every energy of the model."""
        return not (self.python_families or self.python_flexible)

    def energies(self, q: np.ndarray, v: np.ndarray) -> tuple[float, float]:
        """Kinetic and potential energy (J) at ``(q, v)`` under the current element history, as
        ``Assembly.kinetic_energy`` and ``Assembly.potential_energy``."""
        q = np.ascontiguousarray(q, dtype=float).reshape(1, -1)
        v = np.ascontiguousarray(v, dtype=float).reshape(1, -1)
        out = self._row
        self._call(q, v, self._srefs(), out)
        if out[0, 2] or not self.all_compiled:
            return self._fallback(q[0], v[0], out[0])
        return float(out[0, 0]), float(out[0, 1])

    def _fallback(self, q, v, row) -> tuple[float, float]:
        if row[2]:          # a spring or contact without direction: the per-family path raises its error
            return self.asm.kinetic_energy(q, v), self.asm.potential_energy(q, v)
        T, U = self._python(q, v)
        return float(row[0] + T), float(row[1] + U)

    def rows(self, Q: np.ndarray, V: np.ndarray, history: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Kinetic and potential energy (J) of the states ``Q``, ``V`` (nt, nq), each under the element history
        ``history[k]`` (``Assembly.history()`` vectors) when given, else under the current one. One compiled call
        when the energies of the families the call does not hold do not depend on the history."""
        asm = self.asm
        Q = np.ascontiguousarray(Q, dtype=float).reshape(-1, asm.nq)
        V = np.ascontiguousarray(V, dtype=float).reshape(-1, asm.nq)
        nt = Q.shape[0]
        out = np.empty((nt, 3))
        if nt == 0:
            return out[:, 0], out[:, 1]
        per_row = history is not None and asm.stateful and (self._angle or self._python_stateful)
        srefs = self._srefs()
        if per_row and not self._python_stateful:      # only the springs' winding depends on the history
            srefs = self._sref_rows(history)
            per_row = srefs is None
        if not per_row:
            self._call(Q, V, srefs, out)
            if self.all_compiled and not out[:, 2].any():
                return out[:, 0].copy(), out[:, 1].copy()
            for k in range(nt):
                out[k, :2] = self._fallback(Q[k], V[k], out[k])
            return out[:, 0].copy(), out[:, 1].copy()
        saved = asm.history()
        try:
            for k in range(nt):
                asm.set_history(history[k])
                out[k, :2] = self.energies(Q[k], V[k])
        finally:
            asm.set_history(saved)
        return out[:, 0].copy(), out[:, 1].copy()
