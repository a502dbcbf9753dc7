"""Kinetic and potential energy of a whole model in one compiled call (the energy balance, docs/architecture.md §4).

``Assembly.kinetic_energy`` / ``potential_energy`` evaluate the energies body group by body group and family by
family, a few Python calls each (about 70 µs a family). The run's energy-balance check (flexmb/solvers/watch.py)
and ``Result.energy()`` take them instead from :class:`CompiledEnergy`: one compiled call of :func:`energy_rows`
evaluates every state of a list of states, for

* rigid bodies: ``sum m |r_d|^2 / 2 + w'^T J w' / 2`` and ``-m g . r`` (:func:`~flexmb.compiled.rigid.rigid_energies`;
  Nikravesh 1988, §11.2);
* flexible bodies on the compiled kernels (modal bodies, nonlinear beams): ``v^T M v / 2``, gravity
  ``-g . (m r + A S)`` and the strain energy (:func:`flexmb.compiled.flexible.energy`; Shabana, *Dynamics of
  Multibody Systems*, 3rd ed., §5.4);
* scalar springs (spring-dampers, rotational springs, bushings): ``k (x - x0)^2 / 2`` of their measure, angles
  unwrapped about the reference of the history (flexmb/forces/springs.py);
* contact pairs (sphere-plane, sphere-sphere, clearance), user laws included: ``K delta^(n+1) / (n+1)`` for
  ``delta > 0`` (Hunt & Crossley 1975; Lankarani & Nikravesh 1990, the elastic part of the law; the law's ``K``
  and ``n``, as ``LawTable.elastic_energy``);
* DC motors: the magnetic energy ``L_a i^2 / 2`` (kinetic in the electromechanical analogy);
* particles ``m |x_d|^2 / 2``, ``-m g . x``; particle links ``k (L - L0)^2 / 2``; anchors ``k |x - x0|^2 / 2``
  (Pedersen, Hansen & Ambrosio 2004, §2);
* applied loads: no stored energy (their work is in the balance's work term).

Any other family (user forces, crash elements, mesh contacts, ropes, exact beams ...) keeps its Python
``kinetic``/``potential`` and is added per state. The same arithmetic as the per-family methods, summed in
another order: equal to rounding (``tests/test_compiled_energy.py``: 1e-12 relative).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .flexible import energy as flexible_energy
from .forces import measure_kernel
from .particles import anchor_kernel, link_kernel, particle_energy
from .rigid import rigid_energies

__all__ = ["energy_rows", "CompiledEnergy"]


@njit(cache=True)
def _measures(Q, V, k, qe, ve, tab, gather, vecs, shps, sides, ref, x, xd, out):
    """Measures ``x`` and rates ``xd`` at state ``k`` of ``Q``, ``V`` (extended into the work vectors ``qe``, ``ve``)
    of every instance of the packed groups ``tab`` (rows ``(code, n, nx, m_i, m_j, modes, offset in gather, in
    vecs, in shps, first instance, ...)``, as ``flexmb.solvers.compiled_step._pack_measures``); ``out[k, 2]`` set
    to 1 when a length has no direction."""
    false_ = np.bool_(False)      # no literal (docs/architecture.md §2)
    _extended_rows(Q, V, k, qe, ve)
    for g in range(tab.shape[0]):
        code, n, nx, mi, mj, sm = tab[g, 0], tab[g, 1], tab[g, 2], tab[g, 3], tab[g, 4], tab[g, 5]
        og, ov, osh, op = tab[g, 6], tab[g, 7], tab[g, 8], tab[g, 9]
        if n == 0:
            continue
        xg, xdg = np.empty(n), np.empty(n)
        gg = gather[og:og + n * nx].reshape((n, nx))
        vg = vecs[ov:ov + 12 * n].reshape((n, 4, 3))
        sg = shps[osh:osh + 12 * n * sm].reshape((n, 4, 3, sm))
        if measure_kernel(code, qe, ve, gg, vg, sg, sides[g], mi, mj, ref[op:op + n], false_, xg, xdg,
                          np.empty((n, nx)), np.empty((0, nx, nx))) >= 0:
            out[k, 2] = 1.0
        x[op:op + n] = xg
        xd[op:op + n] = xdg


@njit(cache=True)
def energy_rows(Q, V, srefs, bodies, flex, springs, contacts, motors, parts, out):
    """Kinetic and potential energy (J) of the states ``Q[k]``, ``V[k]`` (nt, nq) into ``out[k, 0]``, ``out[k, 1]``
    (``out[k, 2]`` = 1 where a spring or contact length has no direction: the caller evaluates that state on the
    per-family path, which raises the error naming the element). ``srefs`` (nt or 1, springs): the springs'
    unwrapping references (angle measures) at each state.

    ``bodies = (idx, mass, J, gravity)``; ``flex = (ftab, fdata, idata, wdata, ftabs)`` (rows ``(offset, length)``
    of the float, int and work buffers and of the table, as ``CompiledStep``); ``springs = (tab, gather, vecs, shps,
    sides, k, x0)``; ``contacts = (tab, gather, vecs, shps, sides, ref, sign per group, offset, K, n)``;
    ``motors = (charge columns, L_a)``; ``parts = (pgather, pmass, gravity, lgather, lk, lL0, agather, apoint,
    ak)``. A family given as None (the model has none) is left out of the compile. The families are added
    one after the other, each over all states, in the order of the per-family methods."""
    out[:, :] = 0.0
    _rigid_rows(Q, V, bodies, out)
    _flexible_rows(Q, V, flex, out)
    _spring_rows(Q, V, srefs, springs, out)
    _contact_rows(Q, V, contacts, out)
    _motor_rows(V, motors, out)
    _particle_rows(Q, V, parts, out)


@njit(cache=True)
def _extended_rows(Q, V, k, qe, ve):
    """State k of ``Q``, ``V`` into the extended vectors ``qe``, ``ve`` (the ground's coordinates last)."""
    nq = Q.shape[1]
    qe[:nq] = Q[k]
    ve[:nq] = V[k]
    qe[nq:] = 0.0
    ve[nq:] = 0.0
    qe[nq + 3] = 1.0                    # the ground: position 0, Euler parameters (1, 0, 0, 0), at rest


@njit(cache=True)
def _rigid_rows(Q, V, bodies, out):
    """Rigid bodies: ``m |r_d|^2 / 2 + w'^T J w' / 2`` and ``-m g . r`` (J) of each state, added into ``out``."""
    if bodies is None:
        return
    idx, mass, J, grav = bodies
    for k in range(Q.shape[0]):
        T, U = rigid_energies(Q[k], V[k], idx, mass, J, grav)
        out[k, 0] += T
        out[k, 1] += U


@njit(cache=True)
def _flexible_rows(Q, V, flex, out):
    """Flexible-body groups: kinetic energy, gravity potential and strain energy (J) of each state."""
    if flex is None:
        return
    kinetic_, gravity_, strain_ = np.int64(0), np.int64(1), np.int64(2)     # no literals (docs/architecture.md §2)
    ftab, fdata, idata, wdata, ftabs = flex
    no_out = np.zeros(0)
    nf = 0
    for f in range(ftab.shape[0]):
        nf = max(nf, ftabs[ftab[f, 6], 0])
    strain = np.empty(nf)
    for k in range(Q.shape[0]):
        q, v = Q[k], V[k]
        for f in range(ftab.shape[0]):
            fd = fdata[ftab[f, 0]:ftab[f, 0] + ftab[f, 1]]
            it = idata[ftab[f, 2]:ftab[f, 2] + ftab[f, 3]]
            wd = wdata[ftab[f, 4]:ftab[f, 4] + ftab[f, 5]]
            tb = ftabs[ftab[f, 6]:ftab[f, 6] + ftab[f, 7]]
            out[k, 0] += flexible_energy(q, v, fd, it, wd, tb, kinetic_, no_out)
            out[k, 1] += flexible_energy(q, q, fd, it, wd, tb, gravity_, no_out)
            nb = tb[0, 0]
            flexible_energy(q, q, fd, it, wd, tb, strain_, strain[:nb])
            for i in range(nb):
                out[k, 1] += strain[i]


@njit(cache=True)
def _spring_rows(Q, V, srefs, springs, out):
    """Scalar springs: ``k (x - x0)^2 / 2`` (J) of each state (``out[k, 2]`` = 1 at a length without direction)."""
    if springs is None:
        return
    stab, sgather, svecs, sshps, ssides, sk, sx0 = springs
    ns = sk.size
    if ns == 0:
        return
    qe, ve = np.empty(Q.shape[1] + 7), np.empty(Q.shape[1] + 7)
    xs, xds = np.empty(ns), np.empty(ns)
    for k in range(Q.shape[0]):
        _measures(Q, V, k, qe, ve, stab, sgather, svecs, sshps, ssides, srefs[k % srefs.shape[0]], xs, xds, out)
        for i in range(ns):
            out[k, 1] += 0.5 * sk[i] * (xs[i] - sx0[i]) ** 2


@njit(cache=True)
def _contact_rows(Q, V, contacts, out):
    """Contact pairs: ``K delta^(n+1) / (n+1)`` for ``delta > 0`` (J) of each state (``out[k, 2]`` as springs)."""
    if contacts is None:
        return
    ctab, cgather, cvecs, cshps, csides, cref, csign, coffset, cK, cn = contacts
    nc = cK.size
    if nc == 0:
        return
    cgroup = np.empty(nc, dtype=np.int64)
    for g in range(ctab.shape[0]):
        cgroup[ctab[g, 9]:ctab[g, 9] + ctab[g, 1]] = g
    qe, ve = np.empty(Q.shape[1] + 7), np.empty(Q.shape[1] + 7)
    xc, xdc = np.empty(nc), np.empty(nc)
    for k in range(Q.shape[0]):
        _measures(Q, V, k, qe, ve, ctab, cgather, cvecs, cshps, csides, cref, xc, xdc, out)
        for i in range(nc):
            d = csign[cgroup[i]] * (coffset[i] - xc[i])
            if d > 0.0:
                out[k, 1] += cK[i] * d ** (cn[i] + 1.0) / (cn[i] + 1.0)


@njit(cache=True)
def _motor_rows(V, motors, out):
    """DC motors: ``L_a i^2 / 2`` (J) of each state."""
    if motors is None:
        return
    mstate, mL = motors
    for k in range(V.shape[0]):
        for i in range(mstate.size):
            out[k, 0] += 0.5 * mL[i] * V[k, mstate[i]] ** 2


@njit(cache=True)
def _particle_rows(Q, V, parts, out):
    """Particles ``m |x_d|^2 / 2``, ``-m g . x``; links ``k (L - L0)^2 / 2``; anchors ``k |x - x0|^2 / 2`` (J)."""
    if parts is None:
        return
    false_ = np.bool_(False)    # no literal (docs/architecture.md §2)
    pgather, pmass, pg, lgather, lk, lL0, agather, apoint, ak = parts
    nq = Q.shape[1]
    qe, ve = np.zeros(nq + 7), np.zeros(nq + 7)
    pe = np.empty(2)
    nl, na = lgather.shape[0], agather.shape[0]
    lr, lb, lp = np.empty((nl, 6)), np.empty((0, 6, 6)), np.empty((nl, 3))
    ar, ab, ap = np.empty((na, 3)), np.empty((0, 3, 3)), np.empty((na, 2))
    for k in range(Q.shape[0]):
        q, v = Q[k], V[k]
        if pgather.shape[0]:
            particle_energy(q, v, pgather, pmass, pg, pe)
            out[k, 0] += pe[0]
            out[k, 1] += pe[1]
        if nl:
            _extended_rows(Q, V, k, qe, ve)
            link_kernel(qe, ve, lgather, lk, lk, lL0, 0.0, 0.0, false_, lr, lb, lp)
            for i in range(nl):
                out[k, 1] += 0.5 * lk[i] * (lp[i, 1] - lL0[i]) ** 2
        if na:
            anchor_kernel(q, v, agather, apoint, ak, ak, 0.0, 0.0, false_, ar, ab, ap)
            for i in range(na):
                out[k, 1] += ap[i, 0]


class CompiledEnergy:
    """The energies of one compiled System (an ``Assembly``): the families :func:`energy_rows` holds packed once,
    the others evaluated through their ``kinetic``/``potential`` (Python, per state)."""

    def __init__(self, asm) -> None:
        from ..contact.pairs import ContactGroup
        from ..forces.applied import AppliedLoadGroup
        from ..forces.motor import DCMotorGroup
        from ..forces.particles import ParticleAnchorGroup, ParticleGroup, ParticleLinkGroup
        from ..forces.springs import ScalarSpringGroup
        from ..solvers.compiled_step import _cat, _pack_measures
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
        self.flex = (np.array(ftab, dtype=i8).reshape(-1, 8), _cat(fdata, f8), _cat(idata, i8), _cat(wdata, f8),
                     c(np.concatenate(ftabs), dtype=i8) if ftabs else np.zeros((0, 6), dtype=i8))
        no_positions = {None: np.zeros(0, dtype=i8)}
        springs = [g for g in asm.families if isinstance(g, ScalarSpringGroup)]
        tab, gather, _, vecs, shps, sides, _, first = _pack_measures([(g, g, None) for g in springs], no_positions)
        self.springs = (tab, gather, vecs, shps, sides, _cat([g.k for g in springs], f8),
                        _cat([g.x0 for g in springs], f8))
        self._spring_groups = springs
        self._spring_slices = {id(g): slice(a, a + g.n) for g, a in zip(springs, first)}
        self._angle = any(g.measure == "angle" for g in springs)   # the references move with the history
        self._sref = _cat([g.angle_ref for g in springs], f8).reshape(1, -1)
        contacts = [g for g in asm.families if isinstance(g, ContactGroup)]
        tab, gather, _, vecs, shps, sides, _, _ = _pack_measures([(g, g.measure, None) for g in contacts],
                                                                 no_positions)
        self.contacts = (tab, gather, vecs, shps, sides, _cat([g._ref for g in contacts], f8),
                         np.array([g.sign for g in contacts], dtype=f8), _cat([g.offset for g in contacts], f8),
                         _cat([g.laws.K for g in contacts], f8), _cat([g.laws.n for g in contacts], f8))
        motors = [g for g in asm.families if isinstance(g, DCMotorGroup)]
        self.motors = (_cat([g.state for g in motors], i8), _cat([g.L_a for g in motors], f8))
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
            from .specialization import universal
            full = (self.bodies, self.flex, self.springs, self.contacts, self.motors, self.parts)
            p = self.parts
            absent = (self.bodies[0].shape[0] == 0, self.flex[0].shape[0] == 0, self.springs[5].size == 0,
                      self.contacts[8].size == 0, self.motors[0].size == 0,
                      p[0].shape[0] + p[3].shape[0] + p[6].shape[0] == 0)
            special = tuple(None if a else part for a, part in zip(absent, full))
            self._families = (full if universal(energy_rows, (Q, V, srefs, *full, out), (Q, V, srefs, *special, out))
                              else special)
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
