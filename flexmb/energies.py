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
from .compiled.specialization import universal
from .packing import family_parts, pack_model

__all__ = ["CompiledEnergy"]

_ENERGY_PARTS = ("springs", "contacts", "motors", "particles")
"""The element-family parts of the compiled model whose energies :func:`energy_rows` evaluates."""

_NAMES = {"bodies": "rigid bodies", "flexible": "flexible bodies", "springs": "springs and bushings",
          "contacts": "contact pairs", "motors": "DC motors", "particles": "particles"}


class CompiledEnergy:
    """The energies of one compiled System (an ``Assembly``): the families :func:`energy_rows` holds packed once,
    the others evaluated through their ``kinetic``/``potential`` (Python, per state)."""

    def __init__(self, asm) -> None:
        self.asm = asm
        flexible = [g for g in asm.flexible if not g._python_structures]
        self.python_flexible = [g for g in asm.flexible if g._python_structures]
        energy_groups = [g for g in asm.families if g.compiled_part in _ENERGY_PARTS]
        self.model = pack_model(asm, groups=flexible + energy_groups)       # no block positions, no joints
        springs = [g for g, _ in family_parts(asm, groups=energy_groups)["springs"]]
        self._spring_groups = springs
        self._spring_slices = {id(g): slice(int(a), int(a) + g.n) for g, a in zip(springs, self.model.springs.table.first)}
        self._angle = any(g.measure == "angle" for g in springs)   # the references move with the history
        self._sref = self.model.springs.ref.reshape(1, -1)
        # applied loads keep no energy; every other family not packed keeps its Python kinetic/potential
        self.python_families = [g for g in asm.families if g.compiled_part not in (*_ENERGY_PARTS, "loads")]
        # the Python part's energies depend on the element history (mesh contacts' candidates, ropes' paid-out
        # length, crash elements): states saved with their own history are evaluated one by one under it
        self._python_stateful = any(g.history().size for g in self.python_families)
        self._row = np.empty((1, 3))
        self._model_for_call = None     # the model energy_rows gets: universal or specialized (_call)

    def _call(self, Q, V, srefs, out) -> None:
        """:func:`energy_rows` on the universal model or on one with None for the families this model lacks (a
        smaller compile; flexmb/compiled/specialization.py), chosen at the first call."""
        if self._model_for_call is None:
            m = self.model
            p = m.particles
            absent = {"bodies": m.bodies.idx.shape[0] == 0, "flexible": m.flexible.table.n.size == 0,
                      "springs": m.springs.k.size == 0, "contacts": m.contacts.K.size == 0,
                      "motors": m.motors.charge.size == 0,
                      "particles": p.gather.shape[0] + p.link_gather.shape[0] + p.anchor_gather.shape[0] == 0}
            special = m._replace(**{name: None for name, a in absent.items() if a})
            families = ", ".join(_NAMES[name] for name, a in absent.items() if not a)
            self._model_for_call = (m if universal(energy_rows, (Q, V, srefs, m, out), (Q, V, srefs, special, out),
                                                   f"the energies of {families}") else special)
        energy_rows(Q, V, srefs, self._model_for_call, out)

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
