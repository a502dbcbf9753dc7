"""Triangle-mesh contacts (flexmb/contact/mesh.py ``SphereMeshContact``, ``NodeMeshContact``; docs/theory-contact.md
§8): :class:`TriangleGroup`, spheres and points against the closest feature (face, edge, vertex) of triangle
meshes on rigid or flexible bodies, evaluated with numpy through flexmb/kinematics.py, one vectorized call
per group (the surfaces and feature measures are in flexmb/contact/surface.py).
"""
from __future__ import annotations

import numpy as np

from .. import kinematics as kin
from .. import rotations as rot
from ..groups import EvalState
from ..kinematics import PairState
from .broadphase import Skin, box_pairs
from .candidates import BodyIndex, CandidateGroup, Candidates, history_vector, point_masses, stack_points
from .duration import effective_mass, pair_mass
from .laws import ApproachSpeeds
from .surface import EDGE, FACE, VERTEX, _compose, _dot, _global_points, closest_point_on_triangles, feature_measure

__all__ = ["TriangleGroup"]


def _ranges(starts, counts):
    """Concatenated ``arange(s, s + c)`` for every (s, c)."""
    counts = np.asarray(counts, dtype=np.int64)
    if counts.size == 0 or counts.sum() == 0:
        return np.zeros(0, np.int64)
    offs = np.repeat(np.cumsum(counts) - counts, counts)
    return np.repeat(np.asarray(starts, dtype=np.int64), counts) + np.arange(counts.sum()) - offs


class TriangleGroup(CandidateGroup):
    """Points (sphere centres, nodes) against triangle meshes: closest feature per candidate triangle,
    Voronoi-region validity across neighbouring faces, one approach speed per point."""

    label = "sphere/node-mesh contacts"
    n_candidates = property(lambda self: int(self.cp.size))

    def __init__(self, items, nq, qe, ve):
        side_i, side_j, laws = BodyIndex(), BodyIndex(), []
        surfaces = {}
        rec, pb, R, margin, plaw, ptarget, sbody = [], [], [], [], [], [], []
        V, VS, vb, T, tsurf, nbr, eown, vown, vptr, vidx = [], [], [], [], [], [], [], [], [np.zeros(1, np.int64)], []
        nv = nt = nn = 0
        elements, owner = BodyIndex(), []
        for el, body, u, S, radius in items:
            if el.law not in laws:
                laws.append(el.law)
            owner += [elements(el)] * len(u)
            key = (id(el.mesh), id(el.body_a))
            if key not in surfaces:
                mesh = el.mesh
                surfaces[key] = len(surfaces)
                sbody.append(side_i(el.body_a))
                V.append(el.vertices)
                VS.append(el.vertex_shapes)
                vb += [sbody[-1]] * mesh.n_points
                T.append(mesh.triangles + nv)
                tsurf += [surfaces[key]] * mesh.n_triangles
                nbr.append(np.where(mesh.neighbor >= 0, mesh.neighbor + nt, -1))
                eown.append(mesh.edge_owner)
                vown.append(mesh.vertex_owner)
                vptr.append(mesh.vn_ptr[1:] + nn)
                vidx.append(mesh.vn_idx + nv)
                nv, nt, nn = nv + mesh.n_points, nt + mesh.n_triangles, nn + mesh.vn_idx.size
            rec.append((u, S))
            pb += [side_j(body)] * len(u)
            R.append(radius)
            margin.append(np.full(len(u), el.margin))
            plaw += [laws.index(el.law)] * len(u)
            ptarget += [surfaces[key]] * len(u)
        self.m_i, self.m_j = side_i.bodies[0].n_modes, side_j.bodies[0].n_modes
        self.u, self.S = stack_points(rec, self.m_j)
        self.V = np.concatenate(V)
        self.VS = np.concatenate(VS) if self.m_i else None
        self.vb, self.T, self.tsurf = np.array(vb), np.concatenate(T), np.array(tsurf)
        self.nbr, self.eown, self.vown = np.concatenate(nbr), np.concatenate(eown), np.concatenate(vown)
        self.vn_ptr, self.vn_idx = np.concatenate(vptr), np.concatenate(vidx)
        self.pb, self.R, self.plaw, self.ptarget = np.array(pb), np.concatenate(R), np.array(plaw), np.array(ptarget)
        self.margin = np.concatenate(margin)
        self.depth = np.maximum(self.R, self.margin)       # a face counts while the centre is above -depth
        self.np, self.nt = len(self.pb), len(self.T)
        self.elements, self.owner = elements.bodies, np.array(owner)     # contactor k belongs to elements[owner[k]]
        pairs = np.unique(np.column_stack([np.array(sbody)[self.ptarget], self.pb]), axis=0)
        self._setup(nq, side_i.bodies, side_j.bodies, pairs, False, laws)
        self.skin_p, self.skin_v = Skin(self.margin), Skin(0.0)
        self.approach = ApproachSpeeds(self.np)
        self.keys = None
        m_surface = np.array([effective_mass(b) for b in side_i.bodies])[np.array(sbody)[self.ptarget]]
        self._durations_of(pair_mass(point_masses(side_j.bodies, self.pb, self.u), m_surface), self.plaw)
        self._rebuild(qe, ve)

    def _vertices(self, qe, ve, idx):
        s = self.slots
        return _global_points(qe, ve, s.F_i[self.vb[idx]], s.M_i[self.vb[idx]], self.V[idx],
                              None if self.VS is None else self.VS[idx])

    def _point_pos(self, qe, ve, idx):
        s = self.slots
        return _global_points(qe, ve, s.F_j[self.pb[idx]], s.M_j[self.pb[idx]], self.u[idx],
                              None if self.S is None else self.S[idx])

    def _contactors(self, qe, ve, ids):
        return self._point_pos(qe, ve, np.arange(self.np))[0], [(1, ids)]

    def _build(self, qe, ve):
        Xp, _ = self._point_pos(qe, ve, np.arange(self.np))
        Xv, _ = self._vertices(qe, ve, np.arange(len(self.V)))
        gp, gv = self.skin_p.inflation(Xp), self.skin_v.inflation(Xv)
        W = Xv[self.T]                                                   # (nt, 3, 3)
        gt = gv[self.T].max(axis=1)[:, None]
        e = (self.R + gp)[:, None]
        ip, it = box_pairs(Xp - e, Xp + e, W.min(axis=1) - gt, W.max(axis=1) + gt)
        ok = self.ptarget[ip] == self.tsurf[it]
        self.cp, self.ct = ip[ok], it[ok]
        # vertices an evaluation needs: the candidates' triangles, their edge neighbours, the corners' 1-rings
        tri = np.unique(np.concatenate([self.ct, self.nbr[self.ct].ravel()]))
        tri = tri[tri >= 0]
        corners = np.unique(self.T[self.ct])
        cnt = self.vn_ptr[corners + 1] - self.vn_ptr[corners]
        ring = self.vn_idx[_ranges(self.vn_ptr[corners], cnt)]
        self.vneed = np.unique(np.concatenate([self.T[tri].ravel(), ring]).astype(np.int64))
        self.vloc = np.full(len(self.V), -1, dtype=np.int64)
        self.vloc[self.vneed] = np.arange(self.vneed.size)
        return self.cp * self.nt + self.ct

    def _evaluate(self, qe, ve) -> Candidates:
        p, t = self.cp, self.ct
        self.stats["evaluations"] += 1
        self.stats["candidates_evaluated"] += p.size
        Xv, Vv = self._vertices(qe, ve, self.vneed)
        P, Pd = self._point_pos(qe, ve, p)
        loc = self.vloc[self.T[t]]                                       # (n, 3)
        W, Wd = Xv[loc], Vv[loc]
        Q, kind, local = closest_point_on_triangles(P, W[:, 0], W[:, 1], W[:, 2])
        # features farther than the margin (gap) are no contacts: dropped before the validity tests
        near = np.flatnonzero(np.linalg.norm(P - Q, axis=1) < self.R[p] + self.margin[p])
        p, t, P, Q, W, Wd, Pd, kind, local = (a[near] for a in (p, t, P, Q, W, Wd, Pd, kind, local))
        d = P[:, None, :] - W                                            # (n, 3, 3): d_k = c - X_k
        x, g, _ = feature_measure(kind, local, d)
        xdot = np.einsum("nk,nk->n", g, (Pd[:, None, :] - Wd).reshape(-1, 9))
        keep = np.flatnonzero(self._valid(p, t, P, Q, W, Xv, kind, local, x))
        p, t, kind, local, x, xdot = p[keep], t[keep], kind[keep], local[keep], x[keep], xdot[keep]
        bi, bj = self.vb[self.T[t, 0]], self.pb[p]
        self._last_keys = p * self.nt + t

        def expression(mask):
            gat = self.slots.gather(bi[mask], bj[mask])
            st = PairState(qe[gat], ve[gat], *self.n_modes)
            tm, pm = t[mask], p[mask]
            Sj = None if self.S is None else self.S[pm]
            ds = [kin.separation(st, self.V[self.T[tm, k]], self.u[pm],
                                 None if self.VS is None else self.VS[self.T[tm, k]], Sj) for k in range(3)]
            dval = np.stack([dk.val for dk in ds], axis=1)
            xv, gv, Hv = feature_measure(kind[mask], local[mask], dval, second=True)
            return _compose(ds, xv, gv, Hv, st.xd)

        return Candidates(self.R[p] - x, -xdot, p, self.plaw[p], bi, bj, expression)

    def _valid(self, p, t, P, Q, W, Xv, kind, local, x) -> np.ndarray:
        """Voronoi-region validity of each candidate's feature over the whole surface (theory-contact.md §8.2)."""
        n1 = rot.cross(W[:, 1] - W[:, 0], W[:, 2] - W[:, 0])
        nrm = n1 / np.linalg.norm(n1, axis=1, keepdims=True)
        d = P - Q
        ok = np.zeros(P.shape[0], dtype=bool)
        f = kind == FACE
        ok[f] = x[f] > -self.depth[p[f]]
        e = np.flatnonzero(kind == EDGE)
        if e.size:
            k = local[e]
            a, b = W[e, k], W[e, (k + 1) % 3]
            de, ne = d[e], nrm[e]
            good = self.eown[t[e], k] & (_dot(de, rot.cross(ne, b - a)) <= 0.0)   # outside this face's prism
            nb = self.nbr[t[e], k]
            has = nb >= 0
            if has.any():
                Wn = Xv[self.vloc[self.T[nb[has]]]]
                nn = rot.cross(Wn[:, 1] - Wn[:, 0], Wn[:, 2] - Wn[:, 0])
                nn /= np.linalg.norm(nn, axis=1, keepdims=True)
                m_nb = rot.cross(nn, a[has] - b[has])                    # the neighbour traverses b -> a
                good[has] &= (_dot(de[has], m_nb) <= 0.0) & (_dot(de[has], ne[has] + nn) > 0.0)
            good[~has] &= _dot(de[~has], ne[~has]) >= 0.0
            ok[e] = good
        v = np.flatnonzero(kind == VERTEX)
        if v.size:
            k = local[v]
            vid = self.T[t[v], k]
            cnt = self.vn_ptr[vid + 1] - self.vn_ptr[vid]
            rows = np.repeat(np.arange(v.size), cnt)
            nb = self.vn_idx[_ranges(self.vn_ptr[vid], cnt)]
            proj = _dot(d[v][rows], Xv[self.vloc[nb]] - W[v, k][rows])
            worst = np.maximum.reduceat(proj, np.cumsum(cnt) - cnt)     # every mesh vertex has neighbours
            ok[v] = self.vown[t[v], k] & (worst <= 0.0) & (_dot(d[v], nrm[v]) > 0.0)
        return ok

    def _per_point(self, c: Candidates):
        """Deepest valid feature of every point: penetration (-inf where none) and its rate."""
        delta = np.full(self.np, -np.inf)
        rate = np.full(self.np, np.nan)
        if c.delta.size:
            order = np.lexsort((c.delta, c.ids))
            last = np.r_[np.flatnonzero(np.diff(c.ids[order])), order.size - 1]
            top = order[last]
            delta[c.ids[top]] = c.delta[top]
            rate[c.ids[top]] = c.rate[top]
        return delta, rate

    def penetration(self, st: EvalState) -> np.ndarray:
        """Penetration (m) per contact point at its closest mesh feature (face, edge or vertex)."""
        qe, ve = st.qe, st.ve
        return self._per_point(self._contacts(qe, ve))[0]

    def accept(self, st: EvalState) -> None:
        """At an accepted step: rebuild the sphere-triangle candidates, report missed pairs and record the
        approach speeds (m/s) per contact point at its closest feature (docs/theory-contact.md §8.2-8.3)."""
        qe, ve = st.qe, st.ve
        old = self.keys
        self.keys = self._rebuild(qe, ve)
        c = self._contacts(qe, ve)
        self._missed(self._last_keys, old, c.delta)
        delta, rate = self._per_point(c)
        self.approach.accept(delta, rate)

    def start(self, st: EvalState) -> None:
        """Clean history at the start of a run: the broad phase forgets its previous rebuild, points
        penetrating at ``(qe, ve)`` capture their approach speed (ApproachSpeeds.start)."""
        qe, ve = st.qe, st.ve
        self._forget_rebuilds()
        self.keys = self._rebuild(qe, ve)
        delta, rate = self._per_point(self._contacts(qe, ve))
        self.approach.start(delta, rate)

    def _restore_approach(self, keys, x) -> None:
        self.keys = keys
        self.approach.set_history(history_vector(x, 4 * self.np, self.label))
