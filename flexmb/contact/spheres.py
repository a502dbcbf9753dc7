"""Point-plane contacts and sphere clouds (flexmb/contact/mesh.py ``NodePlaneContact``, ``SphereCloudContact``;
docs/theory-contact.md §8): :class:`PlaneGroup` (points and spheres against planes) and :class:`SphereGroup`
(sphere against sphere on different bodies), with their broad phase and the compiled narrow phase of
flexmb/compiled/spheres.py.
"""
from __future__ import annotations

import time

import numpy as np

from .. import kinematics as kin
from .. import rotations as rot
from ..compiled import lazy_module
from ..errors import ModelError
from ..groups import EvalState
from ..kinematics import PairState
from .broadphase import Skin, sphere_pairs, transfer_approach
from .candidates import BodyIndex, CandidateGroup, Candidates, history_vector, point_masses, stack_points
from .duration import effective_mass, pair_mass
from .laws import ApproachSpeeds
from .surface import _TINY, _global_points

_spheres = lazy_module("flexmb.compiled.spheres")     # numba loads when a sphere cloud is first evaluated

__all__ = ["PlaneGroup", "SphereGroup", "CloudSphere"]

_MAX_ALL_PAIRS = 20000   # coupling="all" of a sphere cloud: at most this many body pairs in the pattern


def _lightest_other(mass: np.ndarray, body: np.ndarray) -> np.ndarray:
    """For each sphere, the smallest ``mass`` (kg) of the spheres on other bodies (inf when there are none): the
    partner of its shortest contact."""
    light = np.full(int(body.max()) + 1, np.inf)
    np.minimum.at(light, body, mass)
    first, second = np.sort(light)[:2] if light.size > 1 else (light[0], np.inf)
    return np.where(light[body] == first, second, first)


class PlaneGroup(CandidateGroup):
    """Points (nodes, sphere centres) against planes of rigid bodies: ``x = n . (X - P)``, ``delta = R - x``."""

    label = "node/sphere-plane contacts"
    n_candidates = property(lambda self: int(self.cand.size))
    _code = 2              # compiled/measures.py AXIAL: x = n . (X - P)
    _sides = np.array([0, 0, 1, 0], dtype=np.int64)     # its slots' bodies (compiled/measures.py SLOTS)

    def _candidate_arrays(self):
        c = self.cand
        p, l = self.combos[c, 0], self.combos[c, 1]
        n, m = c.size, self.m_j
        vec = np.zeros((n, 4, 3))
        vec[:, 0], vec[:, 1], vec[:, 2] = self.ln[l], self.lu[l], self.u[p]
        shp = np.zeros((n, 4, 3, m))
        if m:
            shp[:, 2] = self.S[p]
        return self.lb[l], self.pb[p], vec, shp, self.R[p], c, self.plaw[p]

    def __init__(self, items, nq, qe, ve):
        side_i, side_j, laws, elements = BodyIndex(), BodyIndex(), [], BodyIndex()
        rec, pb, R, margin, plaw, owner = [], [], [], [], [], []
        pl_b, pl_u, pl_n, combos = [], [], [], []
        known, p0 = {}, 0
        for el, body, u, S, radius in items:
            if el.law not in laws:
                laws.append(el.law)
            owner += [elements(el.cloud if isinstance(el, CloudSphere) else el)] * len(u)
            if id(el.planes) not in known:             # the spheres of one cloud share its planes
                known[id(el.planes)] = (len(pl_b), len(pl_b) + len(el.planes))
                for b, P, n in el.planes:
                    pl_b.append(side_i(b))
                    pl_u.append(P)
                    pl_n.append(n)
            l0, l1 = known[id(el.planes)]
            rec.append((u, S))
            pb += [side_j(body)] * len(u)
            R.append(radius)
            margin.append(np.full(len(u), el.margin))
            plaw += [laws.index(el.law)] * len(u)
            pts, pls = np.arange(p0, p0 + len(u)), np.arange(l0, l1)
            p0 += len(u)
            combos.append(np.stack(np.meshgrid(pts, pls, indexing="ij"), axis=-1).reshape(-1, 2))
        self.m_j = side_j.bodies[0].n_modes
        self.u, self.S = stack_points(rec, self.m_j)
        self.pb, self.R = np.array(pb), np.concatenate(R)
        self.plaw = np.array(plaw)
        self.lb, self.lu, self.ln = np.array(pl_b), np.array(pl_u), np.array(pl_n)
        self.combos = np.concatenate(combos)
        self.elements, self.owner = elements.bodies, np.array(owner)     # contactor k belongs to elements[owner[k]]
        pairs = np.unique(np.column_stack([self.lb[self.combos[:, 1]], self.pb[self.combos[:, 0]]]), axis=0)
        self._setup(nq, side_i.bodies, side_j.bodies, pairs, False, laws)
        self.skin_p = Skin(np.concatenate(margin))
        self.skin_l = Skin(0.0)
        # contiguous arrays of the compiled step end (flexmb/compiled/spheres.py plane_candidates, plane_accept)
        i64 = np.int64
        self.pb, self.plaw, self.lb = (np.ascontiguousarray(x, dtype=i64) for x in (self.pb, self.plaw, self.lb))
        self.combos = np.ascontiguousarray(self.combos, dtype=i64)
        self.lu, self.ln = (np.ascontiguousarray(x, dtype=float).reshape(-1, 3) for x in (self.lu, self.ln))
        self._shp_modes = self.m_j
        self._S0 = np.zeros((len(self.pb), 3, 0)) if self.S is None else np.ascontiguousarray(self.S, dtype=float)
        self._grow_p = np.ascontiguousarray(np.broadcast_to(self.skin_p.grow, (len(self.pb),)), dtype=float)
        self.approach = ApproachSpeeds(len(self.combos))
        self.cand, self.cand_keys = None, None
        m_point = point_masses(side_j.bodies, self.pb, self.u)
        m_plane = np.array([effective_mass(b) for b in side_i.bodies])[self.lb]
        p, l = self.combos[:, 0], self.combos[:, 1]
        self._durations_of(pair_mass(m_point[p], m_plane[l]), self.plaw[p])
        self._rebuild(qe, ve)

    def _frames(self, qe, ve, points, planes):
        """Points, plane points and normals (global) with their rates; planes are evaluated once each."""
        s = self.slots
        X, V = _global_points(qe, ve, s.F_j[self.pb[points]], s.M_j[self.pb[points]], self.u[points],
                              None if self.S is None else self.S[points])
        F = s.F_i[self.lb]
        P, Pd = _global_points(qe, ve, F, None, self.lu, None)
        p, pd = qe[F[:, 3:]], ve[F[:, 3:]]
        n = np.einsum("nij,nj->ni", rot.A(p), self.ln)
        nd = np.einsum("nij,nj->ni", rot.B(p, self.ln), pd)
        return X, V, P[planes], Pd[planes], n[planes], nd[planes]

    def _build(self, qe, ve):
        s = self.slots
        X, _ = _global_points(qe, ve, s.F_j[self.pb], s.M_j[self.pb], self.u, self.S)
        L, _ = _global_points(qe, ve, s.F_i[self.lb], None, self.lu, None)
        gp, gl = self.skin_p.inflation(X), self.skin_l.inflation(L)
        p, l = self.combos[:, 0], self.combos[:, 1]
        F = s.F_i[self.lb]
        n = np.einsum("nij,nj->ni", rot.A(qe[F[:, 3:]]), self.ln)[l]      # each plane's normal once
        h = np.einsum("nk,nk->n", n, X[p] - L[l]) - self.R[p]
        self.cand = np.flatnonzero(h <= gp[p] + gl[l])

    def _contactors(self, qe, ve, ids):
        s = self.slots
        X, _ = _global_points(qe, ve, s.F_j[self.pb], s.M_j[self.pb], self.u, self.S)
        return X, [(1, self.combos[ids, 0])]

    def _evaluate(self, qe, ve) -> Candidates:
        c = self.cand
        p, l = self.combos[c, 0], self.combos[c, 1]
        fast = self._compiled(qe, ve, None, False)      # penetrations and rates in one compiled call
        if fast is None:
            self.stats["evaluations"] += 1
            self.stats["candidates_evaluated"] += c.size
            X, V, P, Pd, n, nd = self._frames(qe, ve, p, l)
            x = np.einsum("nk,nk->n", n, X - P)
            xdot = np.einsum("nk,nk->n", n, V - Pd) + np.einsum("nk,nk->n", nd, X - P)
            delta, rate = self.R[p] - x, -xdot
        else:
            delta, rate = fast[0], fast[1]
        return self._contacts_of(qe, ve, delta, rate)

    def _contacts_of(self, qe, ve, delta, rate) -> Candidates:
        c = self.cand
        p, l = self.combos[c, 0], self.combos[c, 1]
        bi, bj = self.lb[l], self.pb[p]

        def expression(mask):
            pm, lm = p[mask], l[mask]
            gat = self.slots.gather(bi[mask], bj[mask])
            st = PairState(qe[gat], ve[gat], *self.n_modes)
            Sj = None if self.S is None else self.S[pm]
            return kin.dot(kin.body_vector(st, 0, self.ln[lm]),
                           kin.separation(st, self.lu[lm], self.u[pm], None, Sj), st.xd)

        return Candidates(delta, rate, c, self.plaw[p], bi, bj, expression)

    def penetration(self, st: EvalState) -> np.ndarray:
        """Penetration (m) of every node/sphere-plane combination, ``-inf`` where it is not a candidate."""
        qe, ve = st.qe, st.ve
        out = np.full(len(self.combos), -np.inf)
        c = self._contacts(qe, ve)
        out[c.ids] = c.delta
        return out

    def accept(self, st: EvalState) -> None:
        """At an accepted step: rebuild the candidates (broad phase), report pairs the margin missed, and
        record the approach speeds (m/s) of new touches (docs/theory-contact.md §8.3): two compiled calls
        (flexmb/compiled/spheres.py ``plane_candidates``, ``plane_accept``) where the group has its kernel."""
        if self._fusable():
            self._accept_compiled(st)
            return
        qe, ve = st.qe, st.ve
        old = self.cand
        self._rebuild(qe, ve)
        c = self._contacts(qe, ve)
        self._missed(c.ids, old, c.delta)
        self.approach.accept(c.delta, c.rate, ids=c.ids)

    def _accept_compiled(self, st: EvalState) -> None:
        """:meth:`accept` in two compiled calls: the broad phase, then the kernel arrays, penetrations, missed
        combinations and approach speeds (the numpy path's values, in the same order)."""
        t0 = time.perf_counter()
        qe = np.ascontiguousarray(st.qe, dtype=float)
        ve = np.ascontiguousarray(st.ve, dtype=float)
        s, sp_, sl = self.slots, self.skin_p, self.skin_l
        npnt, nl = self.pb.size, self.lb.size
        has_p = sp_.last is not None and sp_.last.shape == (npnt, 3)
        has_l = sl.last is not None and sl.last.shape == (nl, 3)
        if not has_p:
            sp_.last = np.empty((npnt, 3))
        if not has_l:
            sl.last = np.empty((nl, 3))
        old = self.cand
        self.cand = cand = _spheres.plane_candidates(qe, s.F_j, s.M_j, self.pb, self.u, self._S0, self.R, self._grow_p,
                                                     sp_.last, has_p, s.F_i, self.lb, self.lu, self.ln, sl.last, has_l,
                                                     self.combos)
        self._cache = []
        self._kc = None
        t1 = time.perf_counter()
        n = cand.size
        buf = self._buffers(n)
        delta, rate = np.empty(n), np.empty(n)
        ap = self.approach
        bad, missed, deepest = _spheres.plane_accept(
            self._code, qe, ve, cand, self.combos, self.pb, self.u, self._S0, self.R, self.plaw, self.lb, self.lu,
            self.ln, s.F_i, s.M_i, s.F_j, s.M_j, *self._slot_args(), self._sides, *buf, delta, rate,
            old if old is not None else cand[:0], old is not None, ap.speed, ap.in_contact, ap.last_rate)
        if bad == -2:
            raise RuntimeError("SlotMap: a candidate's body pair has no slot")   # pragma: no cover
        if bad >= 0:                    # coincident points: the numpy evaluation reports (as before)
            self._rebuilt = [self._rebuilt[1], np.array(qe[self._cols], dtype=float)]
            self.stats["rebuilds"] += 1
            c = self._contacts(qe, ve)
            self._missed(c.ids, old, c.delta)
            self.approach.accept(c.delta, c.rate, ids=c.ids)
            return
        self._fused_done(qe, ve, n, delta, rate, missed, deepest, t0, t1)

    def start(self, st: EvalState) -> None:
        """Clean history at the start of a run: the broad phase forgets its previous rebuild, pairs
        penetrating at ``(qe, ve)`` capture their approach speed (ApproachSpeeds.start)."""
        qe, ve = st.qe, st.ve
        self._forget_rebuilds()
        self._rebuild(qe, ve)
        c = self._contacts(qe, ve)
        self.approach.start(c.delta, c.rate, ids=c.ids)

    def _restore_approach(self, keys, x) -> None:
        self.approach.set_history(history_vector(x, 4 * len(self.combos), self.label))


class CloudSphere:
    """One sphere of a cloud seen as a point element of a PlaneGroup (shares the cloud's law and planes)."""

    def __init__(self, cloud, k, u, S):
        self.law, self.planes, self.margin, self.u, self.S = cloud.law, cloud.planes, cloud.margin, u, S
        self.cloud = cloud


class SphereGroup(CandidateGroup):
    """Sphere-sphere pairs of sphere clouds: ``x = |c_j - c_i|``, ``delta = R_i + R_j - x``."""

    label = "sphere cloud contacts"
    n_candidates = property(lambda self: int(self.ci.size))
    _code = 0              # compiled/measures.py LENGTH: x = |c_j - c_i|
    _sides = np.array([0, 1, 0, 0], dtype=np.int64)

    def _candidate_arrays(self):
        i, j = self.ci, self.cj
        n = i.size
        vec = np.zeros((n, 4, 3))
        vec[:, 0], vec[:, 1] = self.u[i], self.u[j]
        shp = np.zeros((n, 4, 3, self.m))
        if self.m:
            shp[:, 0], shp[:, 1] = self.S[i], self.S[j]
        return self.sb[i], self.sb[j], vec, shp, self.R[i] + self.R[j], np.arange(n), self.slaw[i]

    def __init__(self, clouds, nq, qe, ve):
        side, laws = BodyIndex(), []
        rec, sb, R, margin, slaw, cloud, pattern = [], [], [], [], [], [], []
        for k, el in enumerate(clouds):
            if el.law not in laws:
                laws.append(el.law)
            u, S = el._points()
            rec.append((u, S))
            sb += [side(s.body) for s in el.sites]
            R.append(el.radii)
            margin.append(np.full(len(u), 0.5 * el.margin))
            slaw += [laws.index(el.law)] * len(u)
            cloud += [k] * len(u)
        self.m = side.bodies[0].n_modes
        self.u, self.S = stack_points(rec, self.m)
        self.sb, self.R, self.slaw, self.cloud = np.array(sb), np.concatenate(R), np.array(slaw), np.array(cloud)
        self.np = len(self.sb)
        self.elements, self.owner = list(clouds), self.cloud             # sphere k belongs to elements[owner[k]]
        bodies = side.bodies
        # the pattern: body pairs with coupled Newton blocks
        F = np.array([(b.offset if b.ncoord else nq) + np.arange(7) for b in bodies], dtype=np.int64)
        M = np.array([b.offset + 7 + np.arange(self.m) for b in bodies], dtype=np.int64).reshape(len(bodies), self.m)
        X0, _ = _global_points(qe, ve, F[self.sb], M[self.sb], self.u, self.S)
        need_self = False
        for k, el in enumerate(clouds):
            mine = np.flatnonzero(self.cloud == k)
            if el.coupling == "all":
                b = np.unique(self.sb[mine])
                if b.size * (b.size - 1) // 2 > _MAX_ALL_PAIRS:
                    raise ModelError(f"{el.owner}: coupling='all' would put {b.size * (b.size - 1) // 2} body pairs "
                                     f"in the Newton matrix's pattern (at most {_MAX_ALL_PAIRS}); use 'initial'")
                i, j = np.triu_indices(b.size, 1)
                pattern.append(np.column_stack([b[i], b[j]]))
            else:
                need_self = True
                if el.coupling == "initial":
                    i, j = sphere_pairs(X0[mine], self.R[mine] + 0.5 * el.pattern_margin, self.sb[mine])
                    bi, bj = self.sb[mine][i], self.sb[mine][j]
                    pattern.append(np.column_stack([np.minimum(bi, bj), np.maximum(bi, bj)]))
        pairs = np.concatenate(pattern) if pattern else np.zeros((0, 2), np.int64)
        self._setup(nq, bodies, bodies, pairs, need_self, laws)
        self.skin = Skin(np.concatenate(margin))
        # contiguous arrays of the compiled step end (flexmb/compiled/spheres.py cloud_pairs, cloud_accept)
        self.sb, self.slaw, self.cloud = (np.ascontiguousarray(x, dtype=np.int64)
                                          for x in (self.sb, self.slaw, self.cloud))
        self._shp_modes = self.m
        self._S0 = np.zeros((self.np, 3, 0)) if self.S is None else np.ascontiguousarray(self.S, dtype=float)
        self._grow = np.ascontiguousarray(np.broadcast_to(self.skin.grow, (self.np,)), dtype=float)
        m_sphere = point_masses(bodies, self.sb, self.u)
        self._durations_of(pair_mass(m_sphere, _lightest_other(m_sphere, self.sb)), self.slaw)
        self.keys = self._rebuild(qe, ve)
        self.approach = ApproachSpeeds(self.keys.size)

    def _build(self, qe, ve):
        s = self.slots
        X, _ = _global_points(qe, ve, s.F_i[self.sb], s.M_i[self.sb], self.u, self.S)
        grow = self.skin.inflation(X)
        from ..compiled.spheres import grid_pairs      # the pairs of broadphase.sphere_pairs, on a compiled grid
        i, j = grid_pairs(np.ascontiguousarray(X, dtype=float), np.ascontiguousarray(self.R + grow, dtype=float),
                          np.ascontiguousarray(self.sb, dtype=np.int64))
        same = self.cloud[i] == self.cloud[j]
        i, j = i[same], j[same]
        swap = self.sb[i] > self.sb[j]                  # body pair (bi < bj): one slot per body pair
        self.ci, self.cj = np.where(swap, j, i), np.where(swap, i, j)
        return np.minimum(i, j) * self.np + np.maximum(i, j)

    def _contactors(self, qe, ve, ids):
        s = self.slots
        X, _ = _global_points(qe, ve, s.F_i[self.sb], s.M_i[self.sb], self.u, self.S)
        return X, [(0, self.ci[ids]), (1, self.cj[ids])]

    def _evaluate(self, qe, ve) -> Candidates:
        i, j = self.ci, self.cj
        s = self.slots
        fast = self._compiled(qe, ve, None, False)      # penetrations and rates in one compiled call
        if fast is None:
            self.stats["evaluations"] += 1
            self.stats["candidates_evaluated"] += i.size
            X, V = _global_points(qe, ve, s.F_i[self.sb], s.M_i[self.sb], self.u, self.S)    # every sphere once
            d, dd = X[j] - X[i], V[j] - V[i]
            L = np.linalg.norm(d, axis=1)
            xdot = np.einsum("nk,nk->n", d, dd) / np.maximum(L, _TINY)
            delta, rate = self.R[i] + self.R[j] - L, -xdot
        else:
            delta, rate = fast[0], fast[1]
        return self._contacts_of(qe, ve, delta, rate)

    def _contacts_of(self, qe, ve, delta, rate) -> Candidates:
        i, j = self.ci, self.cj
        s = self.slots
        n = i.size
        bi, bj = self.sb[i], self.sb[j]

        def expression(mask):
            gat = s.gather(bi[mask], bj[mask])
            st = PairState(qe[gat], ve[gat], *self.n_modes)
            Si = Sj = None
            if self.S is not None:
                Si, Sj = self.S[i[mask]], self.S[j[mask]]
            return kin.norm(kin.separation(st, self.u[i[mask]], self.u[j[mask]], Si, Sj), st.xd)

        return Candidates(delta, rate, np.arange(n), self.slaw[i], bi, bj, expression)

    def penetration(self, st: EvalState) -> np.ndarray:
        """Penetration ``R_i + R_j - |c_j - c_i|`` (m) of every candidate pair."""
        qe, ve = st.qe, st.ve
        return self._contacts(qe, ve).delta

    def accept(self, st: EvalState) -> None:
        """At an accepted step: rebuild the candidate sphere pairs (broad phase), report missed pairs and carry
        the approach speeds (m/s) of pairs still in touch across the rebuild (docs/theory-contact.md §8.3): two
        compiled calls (flexmb/compiled/spheres.py ``cloud_pairs``, ``cloud_accept``) where the group has its kernel."""
        if self._fusable():
            self._accept_compiled(st)
            return
        qe, ve = st.qe, st.ve
        old_keys, old = self.keys, self.approach
        self.keys = self._rebuild(qe, ve)
        c = self._contacts(qe, ve)
        self._missed(self.keys, old_keys, c.delta)
        self.approach = ApproachSpeeds(self.keys.size)
        transfer_approach(old_keys if old_keys is not None else np.zeros(0, np.int64), old, self.keys, self.approach)
        self.approach.accept(c.delta, c.rate)

    def _accept_compiled(self, st: EvalState) -> None:
        """:meth:`accept` in two compiled calls: the broad phase (the pairs of :meth:`_build`, in its order), then the
        kernel arrays, penetrations, missed pairs and approach speeds carried over and moved on."""
        t0 = time.perf_counter()
        qe = np.ascontiguousarray(st.qe, dtype=float)
        ve = np.ascontiguousarray(st.ve, dtype=float)
        s, skin = self.slots, self.skin
        has = skin.last is not None and skin.last.shape == (self.np, 3)
        if not has:
            skin.last = np.empty((self.np, 3))
        old_keys, old = self.keys, self.approach
        ci, cj, keys = _spheres.cloud_pairs(qe, s.F_i, s.M_i, self.sb, self.u, self._S0, self.R, self._grow, skin.last,
                                            has, self.cloud)
        self.ci, self.cj, self.keys = ci, cj, keys
        self._cache = []
        self._kc = None
        t1 = time.perf_counter()
        n = ci.size
        buf = self._buffers(n)
        delta, rate = np.empty(n), np.empty(n)
        new = ApproachSpeeds(n)
        has_old = old_keys is not None and old is not None
        bad, missed, deepest = _spheres.cloud_accept(
            self._code, qe, ve, ci, cj, self.sb, self.u, self._S0, self.R, self.slaw, s.F_i, s.M_i, s.F_j, s.M_j,
            *self._slot_args(), self._sides, *buf, delta, rate, keys, old_keys if has_old else keys[:0], has_old,
            *((old.speed, old.in_contact, old.last_rate) if has_old else (new.speed, new.in_contact, new.last_rate)),
            new.speed, new.in_contact, new.last_rate)
        if bad == -2:
            raise RuntimeError("SlotMap: a candidate's body pair has no slot")   # pragma: no cover
        if bad >= 0:                    # coincident centres: the numpy evaluation reports (as before)
            self._rebuilt = [self._rebuilt[1], np.array(qe[self._cols], dtype=float)]
            self.stats["rebuilds"] += 1
            c = self._contacts(qe, ve)
            self._missed(keys, old_keys, c.delta)
            self.approach = ApproachSpeeds(keys.size)
            transfer_approach(old_keys if old_keys is not None else np.zeros(0, np.int64), old, keys, self.approach)
            self.approach.accept(c.delta, c.rate)
            return
        self.approach = new
        self._fused_done(qe, ve, n, delta, rate, missed, deepest, t0, t1)

    def start(self, st: EvalState) -> None:
        """Clean history at the start of a run: the broad phase forgets its previous rebuild, pairs
        penetrating at ``(qe, ve)`` capture their approach speed (ApproachSpeeds.start)."""
        qe, ve = st.qe, st.ve
        self._forget_rebuilds()
        self.keys = self._rebuild(qe, ve)
        c = self._contacts(qe, ve)
        self.approach = ApproachSpeeds(self.keys.size)
        self.approach.start(c.delta, c.rate)

    def _restore_approach(self, keys, x) -> None:
        """One approach-speed state per candidate pair: the only part of the history whose size changes."""
        self.keys = keys
        self.approach = ApproachSpeeds(keys.size)
        self.approach.set_history(history_vector(x, 4 * keys.size, self.label))
