"""The common part of the candidate-based contact groups (flexmb/contact/mesh.py's elements; docs/theory-contact.md
§8): :class:`CandidateGroup` implements the element-family protocol (flexmb/groups.py) for groups whose instances
are the body-pair slots of the Newton matrix and whose contacts are candidates of a broad phase rebuilt at
accepted steps (approach speeds, history, step-end acceptance, contact power, penetrations); the narrow phases
are in flexmb/contact/spheres.py (compiled) and flexmb/contact/triangles.py (numpy).
"""
from __future__ import annotations

import time
import warnings

import numpy as np

from ..compiled import lazy_module
from ..errors import ContactMarginWarning, ModelError, user_stacklevel
from ..groups import ElementGroup, EvalState
from ..joints.kernels import extend
from .broadphase import Skin, SlotMap
from .duration import effective_masses, shortest_duration
from .laws import LawTable

_spheres = lazy_module("flexmb.compiled.spheres")     # numba loads when a sphere cloud is first evaluated

__all__ = ["Candidates", "CandidateGroup", "BodyIndex", "stack_points", "point_masses", "history_vector"]


class Candidates:
    """Evaluated candidates: penetration, rate, approach-speed ids, law index and body pair of each."""

    def __init__(self, delta, rate, ids, law, bi, bj, expression):
        self.delta, self.rate, self.ids, self.law, self.bi, self.bj = delta, rate, ids, law, bi, bj
        self.expression = expression          # mask -> kin.Scalar of the selected contacts


class CandidateGroup(ElementGroup):
    """Common part of the candidate-based contact groups (the element-family protocol, flexmb/groups.py).
    Instances are the body-pair slots of the Newton matrix; the blocks keep their full structure (zero
    while apart)."""

    label = "contact"
    family = "contacts"
    probe_structure = False

    def _setup(self, nq, bodies_i, bodies_j, pairs, self_slots, laws):
        self.nq = nq
        self.slots = SlotMap(nq, bodies_i, bodies_j, pairs, self_slots)
        self.scatter = self.slots.scatter
        self.n_modes = (self.slots.m_i, self.slots.m_j)
        self.laws = laws
        self.law_table = LawTable(laws)           # all candidates' forces in one call per law family
        self.stats = {"evaluations": 0, "candidates_evaluated": 0, "evaluate_s": 0.0, "rebuilds": 0,
                      "rebuild_s": 0.0, "candidates_last": 0, "missed": 0}
        # coordinates of the group's bodies (not the ground) at the last two rebuilds: the broad phase's
        # history -- its skins and candidates follow from them by replaying the rebuilds
        cols = np.concatenate([a.reshape(-1) for a in (self.slots.F_i, self.slots.F_j, self.slots.M_i,
                                                       self.slots.M_j)]).astype(np.int64)
        self._cols = np.unique(cols[cols < nq])
        self._rebuilt: list = [None, None]

    _CACHE = 3

    def _durations_of(self, mass: np.ndarray, law: np.ndarray) -> None:
        """Keep the effective mass (kg) and the law index of every possible contact (contactor and surface) for
        :meth:`contact_duration`."""
        self._duration_mass, self._duration_law = np.asarray(mass, dtype=float), np.asarray(law, dtype=np.int64)

    def contact_duration(self, energy: float) -> float | None:
        """The shortest Hertz contact duration (s) of the group's laws ``K delta^n`` and contact masses for an
        impact of up to ``energy`` (J) (flexmb/contact/duration.py; the surface's body counts with its
        translational mass)."""
        L, w = self.law_table, self._duration_law
        return shortest_duration(L.K[w], L.n[w], self._duration_mass, energy)

    def _contacts(self, qe, ve) -> Candidates:
        """Evaluated candidates at ``(qe, ve)``; the last few states are cached (simulate() asks for the
        penetration at one state several times: onset checks, in_contact, power, accept). A state is known by
        the bytes of its coordinates and velocities (bit for bit the same state: 6 times faster than
        ``np.array_equal`` on a few hundred values)."""
        c = self._cached(qe, ve)
        if c is not None:
            return c
        kq, kv = _state_key(qe), _state_key(ve)
        qe, ve = np.array(qe, dtype=float), np.array(ve, dtype=float)
        t0 = time.perf_counter()
        c = self._evaluate(qe, ve)
        self.stats["evaluate_s"] += time.perf_counter() - t0
        self._cache = [(kq, kv, c)] + self._cache[:self._CACHE - 1]
        return c

    def _cached(self, qe, ve) -> Candidates | None:
        """The cached evaluation at ``(qe, ve)``, or None."""
        kq, kv = _state_key(qe), _state_key(ve)
        for cq, cv, c in self._cache:
            if cq == kq and cv == kv:
                return c
        return None

    def _rebuild(self, qe, ve):
        """Broad phase at an accepted state (and at the start): new candidates, cache cleared."""
        t0 = time.perf_counter()
        keys = self._build(qe, ve)
        self._rebuilt = [self._rebuilt[1], np.array(qe[self._cols], dtype=float)]
        self._cache = []
        self._kc = None             # the candidates' kernel arrays (_kernel_arrays), built when first needed
        self.stats["rebuilds"] += 1
        self.stats["rebuild_s"] += time.perf_counter() - t0
        self.stats["candidates_last"] = self.n_candidates
        return keys

    # -- history protocol (docs/guide.md §5) -------------------------------------------------------
    def _forget_rebuilds(self) -> None:
        for skin in (v for v in vars(self).values() if isinstance(v, Skin)):
            skin.reset()
        self._rebuilt = [None, None]

    def history(self) -> np.ndarray:
        """``[rebuilt before (1/0), coordinates then, rebuilt last (1/0), coordinates then, approach
        speeds (ApproachSpeeds.history)]``; the coordinates are those of the group's bodies at the
        two last broad-phase rebuilds (fixed size), from which ``set_history`` replays the skins and
        candidates exactly. Only a sphere cloud's approach part changes size (one per candidate)."""
        parts = []
        for q in self._rebuilt:
            parts += [[0.0], np.zeros(self._cols.size)] if q is None else [[1.0], q]
        return np.concatenate(parts + [self.approach.history()])

    def set_history(self, x: np.ndarray) -> None:
        """Restore a vector from :meth:`history`: replay the two rebuilds, then the approach speeds."""
        x = np.asarray(x, dtype=float).reshape(-1)
        n = self._cols.size
        if x.size < 2 + 2 * n or not x[1 + n]:
            raise ModelError(f"{self.label}: not a history vector of this group ({x.size} values, at least "
                             f"{2 + 2 * n} expected, with the last rebuild recorded)")
        self._forget_rebuilds()
        keys = None
        qe, ve = extend(np.zeros(self.nq), np.zeros(self.nq))
        for k in (0, 1 + n):
            if x[k]:
                qe[self._cols] = x[k + 1:k + 1 + n]
                keys = self._build(qe, ve)
                self._rebuilt = [self._rebuilt[1], x[k + 1:k + 1 + n].copy()]
        self._cache = []
        self._kc = None
        self._restore_approach(keys, x[2 + 2 * n:])

    # -- forces ------------------------------------------------------------------------------------
    def _forces(self, c: Candidates, dm):
        return self.law_table.force(c.delta, c.rate, dm, c.law)

    # -- the compiled narrow phase (flexmb/compiled/spheres.py) ------------------------------------------------
    _code = -1             # the measure of the compiled kernel (forces.LENGTH, AXIAL); -1: no kernel
    use_kernel = True
    """False: evaluate with numpy only (the reference of the compiled kernel in the tests)."""

    def _candidate_arrays(self):
        """``(bi, bj, vec (n, 4, 3), shp (n, 4, 3, M), offset, approach ids, law rows)`` of the current candidates
        (subclasses with a compiled kernel)."""
        raise NotImplementedError

    def _kernel_arrays(self) -> tuple:
        """The arrays of :func:`flexmb.compiled.spheres.candidate_kernel` for the current candidates, built once
        per broad-phase rebuild: gathers, measure slots, offsets, approach ids, law rows, slots."""
        if self._kc is None:
            bi, bj, vec, shp, offset, ids, law = self._candidate_arrays()
            a, b = self.slots.slots(bi, bj)
            as_i = np.ascontiguousarray
            self._kc = (as_i(self.slots.gather(bi, bj), dtype=np.int64), as_i(vec, dtype=float),
                        as_i(shp, dtype=float), as_i(offset, dtype=float), as_i(ids, dtype=np.int64),
                        as_i(law, dtype=np.int64), as_i(a, dtype=np.int64), as_i(b, dtype=np.int64))
        return self._kc

    def _compiled(self, qe, ve, coef, want_forces: bool):
        """One call of the compiled kernel: ``(delta, rate, r, blocks)`` of the current candidates (r and blocks
        per slot, None unless wanted), or None where the kernel does not apply (user laws, coincident
        centres: the numpy evaluation then reports)."""
        if self._code < 0 or self.law_table.any_user or not self.use_kernel:
            return None
        gather, vec, shp, offset, ids, law, a, b = self._kernel_arrays()
        n, nx, ns = gather.shape[0], self.slots.nx, self.slots.n_slots
        want_blocks = coef is not None
        cC, cK = (float(coef[1]), float(coef[2])) if want_blocks else (0.0, 0.0)
        delta, rate = np.empty(n), np.empty(n)
        r = np.empty((ns if want_forces else 0, nx))
        blk = np.empty((ns if want_forces and want_blocks else 0, nx, nx))
        ap, L = self.approach, self.law_table
        t0 = time.perf_counter()
        bad = _spheres.candidate_kernel(self._code, np.ascontiguousarray(qe, dtype=float),
                               np.ascontiguousarray(ve, dtype=float), gather, vec, shp, self._sides,
                               self.slots.m_i, self.slots.m_j, offset, ids, law, L.kind, L.K, L.n, L.h, L.v_min,
                               L.c, ap.speed, ap.in_contact, ap.last_rate, a, b, cC, cK, want_forces, want_blocks,
                               delta, rate, r, blk)
        self.stats["evaluations"] += 1
        self.stats["candidates_evaluated"] += n
        self.stats["evaluate_s"] += time.perf_counter() - t0
        if bad >= 0:
            return None
        return delta, rate, (r if want_forces else None), (blk if want_forces and want_blocks else None)

    # -- the step end in compiled code (flexmb/compiled/spheres.py cloud_pairs/cloud_accept, plane_*) -----------------
    fused_accept = True
    """False: the step end through the numpy broad phase and separate kernel calls (the reference of the compiled
    step end in the tests; both give the same candidates in the same order and the same trajectories)."""
    _buf = None

    def _fusable(self) -> bool:
        """Whether :meth:`accept` runs compiled: the group has a kernel, built-in laws, and the kernel is in use."""
        return self.fused_accept and self.use_kernel and self._code >= 0 and not self.law_table.any_user

    def _buffers(self, n: int) -> tuple:
        """The candidates' kernel arrays of :func:`flexmb.compiled.spheres.candidate_kernel` (gathers, measure slots,
        offsets, approach ids, law rows, slot rows), preallocated and grown (doubled) only when ``n`` exceeds them;
        the step end writes their first n rows in place."""
        buf = self._buf
        if buf is None or buf[0].shape[0] < n:
            cap = max(n, 2 * (0 if buf is None else buf[0].shape[0]), 16)
            nx, i64 = self.slots.nx, np.int64
            buf = self._buf = (np.empty((cap, nx), i64), np.empty((cap, 4, 3)), np.empty((cap, 4, 3, self._shp_modes)),
                               np.empty(cap), np.empty(cap, i64), np.empty(cap, i64), np.empty(cap, i64),
                               np.empty(cap, i64))
        return buf

    def _slot_args(self) -> tuple:
        """``(pair_keys, nbj, self_slots, self_i0, self_j0)`` of the SlotMap, for the compiled slot lookup."""
        s = self.slots
        return (s.pair_keys, s.nbj, s.self_slots, getattr(s, "self_i0", 0), getattr(s, "self_j0", 0))

    def _fused_done(self, qe, ve, n: int, delta, rate, missed: int, deepest: float, t0: float, t1: float) -> None:
        """Bookkeeping of a compiled step end: the broad phase's history (:meth:`_rebuild`), the kernel arrays of the
        n new candidates (views of the buffers), the evaluation at the accepted state cached for ``penetration``,
        the statistics (broad phase until ``t1``, the rest as evaluation) and the missed-pair warning."""
        self._rebuilt = [self._rebuilt[1], np.array(qe[self._cols], dtype=float)]
        buf = self._buf
        self._kc = tuple(x[:n] for x in buf)
        self._cache = [(_state_key(qe), _state_key(ve), self._contacts_of(qe.copy(), ve.copy(), delta, rate))]
        t2 = time.perf_counter()
        st = self.stats
        st["rebuilds"] += 1
        st["rebuild_s"] += t1 - t0
        st["candidates_last"] = n
        st["evaluations"] += 1
        st["candidates_evaluated"] += n
        st["evaluate_s"] += t2 - t1
        if missed:
            self._warn_missed(missed, deepest)

    def _contacts_of(self, qe, ve, delta, rate) -> Candidates:
        """The evaluated candidates from their penetrations and rates (subclasses with a compiled kernel)."""
        raise NotImplementedError

    def residual(self, st: EvalState, coef=None):
        """Residual contribution ``-Q`` (N, N m, generalized) of the touching candidates and, with ``coef``,
        their exact stiffness/damping blocks (docs/theory-contact.md §4, §8): one compiled call over the
        candidates (flexmb/compiled/spheres.py) where the group has a kernel, else vectorized numpy
        (:meth:`residual_numpy`)."""
        out = self._compiled(st.qe, st.ve, coef, True)
        if out is not None:
            return out[2], out[3]
        return self.residual_numpy(st, coef)

    def residual_numpy(self, st: EvalState, coef=None):
        """:meth:`residual` evaluated with numpy through flexmb/kinematics.py (user laws, meshes); with
        ``use_kernel = False`` entirely in numpy, the reference of the compiled kernels (else the penetrations and
        rates come from the kernel)."""
        qe, ve = st.qe, st.ve
        c = self._contacts(qe, ve)
        dm = self.approach.trial(c.delta, c.rate, ids=c.ids) if c.delta.size else c.delta
        F, dF, dFd = self._forces(c, dm)
        act = np.flatnonzero((F != 0.0) | (dF != 0.0) | (dFd != 0.0))
        nx = self.slots.nx
        if act.size == 0:
            blocks = None if coef is None else np.zeros((self.slots.n_slots, nx, nx))
            return np.zeros((self.slots.n_slots, nx)), blocks
        x = c.expression(act)
        a, b = self.slots.slots(c.bi[act], c.bj[act])
        Fa = F[act]
        r = self.slots.aggregate(a, b, -Fa[:, None] * x.jac)
        if coef is None:
            return r, None
        cM, cC, cK = coef
        blk = np.zeros((act.size, nx, nx))
        xd = ve[self.slots.gather(c.bi[act], c.bj[act])]
        if cK:
            Hx = x.hess(np.ones(act.size))
            Hv = np.einsum("nxy,ny->nx", Hx, xd)
            g = dF[act, None] * x.jac + dFd[act, None] * Hv
            blk += cK * (x.jac[:, :, None] * g[:, None, :] - Fa[:, None, None] * Hx)
        if cC:
            blk += cC * dFd[act, None, None] * x.jac[:, :, None] * x.jac[:, None, :]
        return r, self.slots.aggregate(a, b, blk)

    def potential(self, st: EvalState) -> float:
        """Elastic energy (J) stored in the touching candidates, ``integral of K delta^n`` of each law."""
        qe, ve = st.qe, st.ve
        c = self._contacts(qe, ve)
        return float(np.sum(self.law_table.elastic_energy(c.delta, c.law)))

    def power(self, st: EvalState) -> float:
        """Power (W) of the dissipative part of the contact forces at this state (<= 0; docs/theory.md §6): one
        compiled call (flexmb/compiled/spheres.py ``candidate_power``) where the group has its kernel."""
        qe, ve = st.qe, st.ve
        if self._fusable() and not self._cached(qe, ve):
            kc = self._kernel_arrays()
            L, ap = self.law_table, self.approach
            t0 = time.perf_counter()
            bad, P = _spheres.candidate_power(self._code, np.ascontiguousarray(qe, dtype=float),
                                              np.ascontiguousarray(ve, dtype=float), *kc[:3], self._sides,
                                              self.slots.m_i, self.slots.m_j, *kc[3:6], L.kind, L.K, L.n, L.h,
                                              L.v_min, L.c, ap.speed, ap.in_contact, ap.last_rate)
            st_ = self.stats
            st_["evaluations"] += 1
            st_["candidates_evaluated"] += kc[0].shape[0]
            st_["evaluate_s"] += time.perf_counter() - t0
            if bad < 0:
                return float(P)
        c = self._contacts(qe, ve)
        if not c.delta.size:
            return 0.0
        dm = self.approach.trial(c.delta, c.rate, ids=c.ids)
        return float(np.sum(self.law_table.nonconservative_power(c.delta, c.rate, dm, c.law)))

    def contactor_forces(self, qe: np.ndarray, ve: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Centre (m) and total contact force (N) of every contactor of the group (each sphere or node,
        ``elements[owner[k]]`` holding contactor k), global, (n, 3) each, at a state with the current
        approach speeds (zero force when apart). Candidate c pushes its contactor with ``F_c grad x_c``,
        the law's force along the gradient of the measure with respect to the contactor's centre, i.e. to
        its body's translation r (``centre = r + A (u + S eta)``), the same generalized force as
        :meth:`residual` (docs/theory-contact.md §8.2); a contactor's forces are summed."""
        c = self._contacts(qe, ve)
        dm = self.approach.trial(c.delta, c.rate, ids=c.ids) if c.delta.size else c.delta
        F = self._forces(c, dm)[0]
        act = np.flatnonzero(F != 0.0)
        centres, sides = self._contactors(qe, ve, c.ids[act])
        forces = np.zeros_like(centres)
        if act.size:
            grad = c.expression(act).jac
            for side, k in sides:
                np.add.at(forces, k, F[act, None] * grad[:, 7 * side:7 * side + 3])
        return centres, forces

    def _contactors(self, qe, ve, ids) -> tuple[np.ndarray, list]:
        """Centres (n, 3) of all contactors, and ``[(pair side, contactor of each candidate ids)]``."""
        raise NotImplementedError

    def _missed(self, new_keys, old_keys, delta) -> None:
        """Warn when a pair penetrates at an accepted state although it was no candidate during the step."""
        if old_keys is None:
            return
        pen = np.flatnonzero(delta > 0.0)
        miss = np.zeros(delta.shape, dtype=bool)
        miss[pen] = ~np.isin(new_keys[pen], old_keys)
        if miss.any():
            self._warn_missed(int(miss.sum()), float(delta[miss].max()))

    def _warn_missed(self, count: int, deepest: float) -> None:
        self.stats["missed"] += count
        warnings.warn(f"{self.label}: {count} pair(s) penetrated by up to {deepest:.3g} m "
                      "before the broad phase proposed them (their force was missing during the step); "
                      "increase the contact's margin or reduce the step", ContactMarginWarning,
                      stacklevel=user_stacklevel())


def _state_key(x) -> bytes:
    """The bytes of a state vector as float64: the key of a group's evaluation cache."""
    return np.ascontiguousarray(x, dtype=float).tobytes()


def stack_points(records, m):
    """Concatenate point records ``(u, S or None)`` into arrays (S zero-filled where missing)."""
    u = np.concatenate([r[0] for r in records]).reshape(-1, 3)
    if not m:
        return u, None
    S = np.concatenate([r[1] if r[1] is not None else np.zeros((len(r[0]), 3, m)) for r in records])
    return u, S


def point_masses(bodies: list, which: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Effective mass (kg) of each contact point: point k at ``u[k]`` (m, body axes from the centre of mass) on
    ``bodies[which[k]]``, through which the normal passes (flexmb/contact/duration.py ``effective_masses``)."""
    which, u = np.asarray(which, dtype=int), np.asarray(u, dtype=float).reshape(-1, 3)
    out = np.empty(len(which))
    for b in np.unique(which):                  # one vectorized evaluation per body
        at = which == b
        out[at] = effective_masses(bodies[b], u[at])
    return out


class BodyIndex:
    """Unique bodies of one side and the index of each."""

    def __init__(self):
        self.bodies, self._ids = [], {}

    def __call__(self, body) -> int:
        k = self._ids.get(id(body))
        if k is None:
            k = self._ids[id(body)] = len(self.bodies)
            self.bodies.append(body)
        return k


def history_vector(x, n: int, owner: str) -> np.ndarray:
    """``x`` as a float vector of length ``n``, or a ModelError naming ``owner`` and both lengths."""
    x = np.asarray(x, dtype=float).reshape(-1)
    if x.size != n:
        raise ModelError(f"{owner}: a history vector of {x.size} values for {n} expected")
    return x
