"""Broad phase of contact: candidate pairs from bounding volumes, rebuilt once per accepted step
(docs/theory-contact.md §8).

* ``box_pairs`` -- every overlapping pair of two sets of axis-aligned boxes (bipartite);
* ``sphere_pairs`` -- every pair of one set of spheres whose spheres overlap (``|c_i - c_j| <= e_i + e_j``),
  optionally excluding pairs of one group (spheres on the same body);
* ``Skin`` -- the inflation of each object for a rebuild (a Verlet skin): a static part (from the
  contact's margin) plus three times the object's displacement over the last accepted step, so that
  pairs that can touch during the next step are candidates;
* ``SlotMap`` -- how candidates that change from step to step land in the assembly's *fixed* sparsity
  pattern: one Newton block per body pair (a "slot"), summed over the candidates of that pair.

Both searches use ``scipy.spatial.cKDTree`` on the box centres in the maximum norm and filter the
superset exactly; objects are split into size classes (factors of 4 in half-width) so that a few large
objects do not widen the search radius of all the others. The cost is O(n log n) in the number of
objects plus O(k) in the number of pairs found.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

__all__ = ["box_pairs", "sphere_pairs", "Skin", "SlotMap", "transfer_approach"]

_CLASS_RATIO = 4.0     # size classes of half-widths: [h0, 4 h0), [4 h0, 16 h0), ...


def _size_classes(h: np.ndarray) -> list[np.ndarray]:
    """Indices grouped by half-width class (factor ``_CLASS_RATIO`` per class)."""
    if h.size == 0:
        return []
    lo = max(float(h.min()), 1e-300)
    k = np.floor(np.log(np.maximum(h, lo) / lo) / np.log(_CLASS_RATIO)).astype(np.int64)
    order = np.argsort(k, kind="stable")
    ks = k[order]
    cuts = np.flatnonzero(np.diff(ks)) + 1
    return np.split(order, cuts)


def _pairs_within(ca: np.ndarray, cb: np.ndarray, r: float) -> np.ndarray:
    """(k, 2) index pairs with ``|ca_i - cb_j|_inf <= r``."""
    if ca.shape[0] == 0 or cb.shape[0] == 0:
        return np.zeros((0, 2), dtype=np.int64)
    from scipy.spatial import cKDTree     # loads with the first broad phase (0.3-0.7 s), not with flexmb
    ta, tb = cKDTree(ca), cKDTree(cb)
    m = ta.sparse_distance_matrix(tb, r, p=np.inf, output_type="ndarray")
    return np.column_stack([m["i"], m["j"]]).astype(np.int64)


def box_pairs(lo_a, hi_a, lo_b, hi_b) -> tuple[np.ndarray, np.ndarray]:
    """All pairs ``(i, j)`` with box ``i`` of set a overlapping box ``j`` of set b (touching counts).

    Boxes are given by their lowest and highest corners, arrays (n, 3). Returns two int64 arrays,
    sorted by ``i`` then ``j``.
    """
    lo_a, hi_a = np.asarray(lo_a, float).reshape(-1, 3), np.asarray(hi_a, float).reshape(-1, 3)
    lo_b, hi_b = np.asarray(lo_b, float).reshape(-1, 3), np.asarray(hi_b, float).reshape(-1, 3)
    ca, ha = 0.5 * (lo_a + hi_a), 0.5 * (hi_a - lo_a)
    cb, hb = 0.5 * (lo_b + hi_b), 0.5 * (hi_b - lo_b)
    wa, wb = ha.max(axis=1, initial=0.0), hb.max(axis=1, initial=0.0)
    found = []
    for ia in _size_classes(wa):
        for ib in _size_classes(wb):
            p = _pairs_within(ca[ia], cb[ib], float(wa[ia].max() + wb[ib].max()))
            if p.size:
                found.append(np.column_stack([ia[p[:, 0]], ib[p[:, 1]]]))
    if not found:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    p = np.concatenate(found)
    i, j = p[:, 0], p[:, 1]
    keep = np.all(np.abs(ca[i] - cb[j]) <= ha[i] + hb[j], axis=1)
    i, j = i[keep], j[keep]
    order = np.lexsort((j, i))
    return i[order], j[order]


def sphere_pairs(centers, extents, groups=None) -> tuple[np.ndarray, np.ndarray]:
    """All pairs ``i < j`` of spheres (centre ``centers[i]``, radius ``extents[i]``) that overlap or touch:
    ``|c_i - c_j| <= e_i + e_j``. Pairs with ``groups[i] == groups[j]`` are left out (e.g. two spheres of
    one body). Returns two int64 arrays sorted by ``i`` then ``j``.
    """
    c = np.asarray(centers, float).reshape(-1, 3)
    e = np.asarray(extents, float).reshape(-1)
    found = []
    classes = _size_classes(e)
    for a, ia in enumerate(classes):
        for ib in classes[a:]:
            r = float(e[ia].max() + e[ib].max())
            if ia is ib:
                from scipy.spatial import cKDTree
                p = cKDTree(c[ia]).query_pairs(r, p=2.0, output_type="ndarray").astype(np.int64)
            else:
                p = _pairs_within(c[ia], c[ib], r)
            if p.size:
                found.append(np.column_stack([ia[p[:, 0]], ib[p[:, 1]]]))
    if not found:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    p = np.concatenate(found)
    i, j = np.minimum(p[:, 0], p[:, 1]), np.maximum(p[:, 0], p[:, 1])
    d = c[j] - c[i]
    keep = np.einsum("nk,nk->n", d, d) <= (e[i] + e[j]) ** 2
    if groups is not None:
        g = np.asarray(groups).reshape(-1)
        keep &= g[i] != g[j]
    i, j = i[keep], j[keep]
    order = np.lexsort((j, i))
    return i[order], j[order]


class Skin:
    """Inflation of objects at a broad-phase rebuild (a Verlet skin, docs/theory-contact.md §8.3).

    ``grow`` (m, per object or one value): the static part; each object's bounding volume is grown by
    ``grow + 3 |x - x_last|``, with ``x_last`` its position at the previous rebuild (accepted step).
    simulate() grows a step by at most a factor 2, so an object moves about ``2 |x - x_last|`` over
    the next step; the factor 3 leaves 50 % for acceleration. At the first rebuild only ``grow`` acts.
    A pair is a candidate when its gap is below the sum of the two inflations: the groups give each
    sphere of a sphere pair half the margin, and a point facing a plane or a mesh the whole margin.
    """

    SAFETY = 3.0

    def __init__(self, grow):
        self.grow = np.asarray(grow, dtype=float)
        self.last: np.ndarray | None = None

    def inflation(self, x: np.ndarray) -> np.ndarray:
        """Per-object inflation (m) for positions ``x`` (n, 3); records ``x`` for the next rebuild."""
        grow = np.broadcast_to(self.grow, x.shape[:1]).astype(float)
        if self.last is not None and self.last.shape == x.shape:
            grow = grow + self.SAFETY * np.linalg.norm(x - self.last, axis=1)
        self.last = np.array(x, dtype=float)
        return grow

    def reset(self) -> None:
        """Forget the previous rebuild (the start of a run: only the static part acts)."""
        self.last = None


def transfer_approach(old_keys: np.ndarray, old, new_keys: np.ndarray, new) -> None:
    """Copy the approach-speed state (flexmb.contact.ApproachSpeeds) of pairs kept across a rebuild.

    ``old_keys``/``new_keys``: int64 pair keys (sorted or not); pairs absent from the new set are
    apart (beyond the broad-phase margin) and released.
    """
    if old is None or old_keys.size == 0 or new_keys.size == 0:
        return
    order = np.argsort(old_keys)
    pos = np.searchsorted(old_keys[order], new_keys)
    pos = np.minimum(pos, old_keys.size - 1)
    hit = old_keys[order][pos] == new_keys
    src = order[pos[hit]]
    new.speed[hit] = old.speed[src]
    new.in_contact[hit] = old.in_contact[src]
    new.last_rate[hit] = old.last_rate[src]


class SlotMap:
    """Newton blocks of changing contact candidates in a fixed sparsity pattern (docs/theory-contact.md §8.4).

    A *slot* is one block family entry of the assembly pattern, square over the coordinates of a body
    pair ``(i, j)``: frame of i (7), frame of j (7), modes of i (m_i), modes of j (m_j); ground columns
    are -1 (dropped by the pattern). Three kinds:

    * *pair slots* for the body pairs listed in ``pairs``: a candidate of such a pair adds its whole
      block (exact Newton block);
    * *self slots* of side i and of side j (``self_slots=True``): a candidate whose body pair has no
      pair slot adds its block to the self slot of its body i (only the i-i part survives, the other
      columns are -1) and to the self slot of its body j (only the j-j part): the coupling i-j of that
      candidate is left out of the Newton matrix (an approximate Jacobian; the residual stays exact).

    ``bodies_i``/``bodies_j``: the Body objects of each side (the ground may appear); all bodies of one
    side have the same number of modes (``m_i``, ``m_j``).
    """

    def __init__(self, nq: int, bodies_i: list, bodies_j: list, pairs: np.ndarray, self_slots: bool):
        self.nq = nq
        self.m_i = bodies_i[0].n_modes if bodies_i else 0
        self.m_j = bodies_j[0].n_modes if bodies_j else 0
        self.F_i, self.M_i = self._columns(bodies_i, self.m_i)
        self.F_j, self.M_j = self._columns(bodies_j, self.m_j)
        self.nx = 14 + self.m_i + self.m_j
        pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
        keys = np.unique(pairs[:, 0] * len(bodies_j) + pairs[:, 1])
        self.nbj = max(len(bodies_j), 1)
        self.pair_keys = keys
        bi, bj = keys // self.nbj, keys % self.nbj
        scat = [self._scatter(bi, bj, True, True)]
        self.n_pairs = keys.size
        self.self_slots = bool(self_slots)
        if self.self_slots:
            ai, aj = np.arange(len(bodies_i)), np.arange(len(bodies_j))
            scat.append(self._scatter(ai, np.zeros_like(ai), True, False))
            scat.append(self._scatter(np.zeros_like(aj), aj, False, True))
            self.self_i0 = self.n_pairs
            self.self_j0 = self.n_pairs + len(bodies_i)
        self.scatter = np.concatenate(scat) if scat else np.zeros((0, self.nx), np.int64)
        self.n_slots = self.scatter.shape[0]

    def _columns(self, bodies, m):
        F = np.array([(b.offset if b.ncoord else self.nq) + np.arange(7) for b in bodies], dtype=np.int64)
        M = np.array([b.offset + 7 + np.arange(m) for b in bodies], dtype=np.int64).reshape(len(bodies), m)
        return F.reshape(len(bodies), 7), M

    def gather(self, bi: np.ndarray, bj: np.ndarray) -> np.ndarray:
        """(n, nx) columns of the extended coordinate vector ``[q, ground]`` for body pairs ``(bi, bj)``."""
        return np.concatenate([self.F_i[bi], self.F_j[bj], self.M_i[bi], self.M_j[bj]], axis=1)

    def _scatter(self, bi, bj, side_i: bool, side_j: bool) -> np.ndarray:
        g = self.gather(bi, bj)
        g = np.where(g >= self.nq, -1, g)
        if not side_i:
            g[:, 0:7] = -1
            g[:, 14:14 + self.m_i] = -1
        if not side_j:
            g[:, 7:14] = -1
            g[:, 14 + self.m_i:] = -1
        return g

    def slots(self, bi: np.ndarray, bj: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Slot rows of candidates: ``(a, b)`` with ``b = -1`` where the pair slot takes the whole block."""
        key = bi * self.nbj + bj
        pos = np.minimum(np.searchsorted(self.pair_keys, key), max(self.n_pairs - 1, 0))
        hit = (self.pair_keys[pos] == key) if self.n_pairs else np.zeros(key.shape, bool)
        a = np.where(hit, pos, -1)
        b = np.full(key.shape, -1, dtype=np.int64)
        miss = ~hit
        if miss.any():
            if not self.self_slots:
                raise RuntimeError("SlotMap: a candidate's body pair has no slot")   # pragma: no cover
            a[miss] = self.self_i0 + bi[miss]
            b[miss] = self.self_j0 + bj[miss]
        return a, b

    def aggregate(self, a: np.ndarray, b: np.ndarray, values: np.ndarray) -> np.ndarray:
        """Sum per-candidate arrays ``values`` (n, ...) into the slots (n_slots, ...)."""
        n = values.shape[0]
        out_shape = (self.n_slots,) + values.shape[1:]
        if n == 0:
            return np.zeros(out_shape)
        two = b >= 0
        rows = np.concatenate([a, b[two]])
        cols = np.concatenate([np.arange(n), np.flatnonzero(two)])
        P = sp.csr_matrix((np.ones(rows.size), (rows, cols)), shape=(self.n_slots, n))
        return np.asarray(P @ values.reshape(n, -1)).reshape(out_shape)
