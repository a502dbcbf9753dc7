"""Contact elements on triangle meshes (the surfaces themselves and their feature measures are in
flexmb/contact/surface.py), point contacts of mesh nodes, and sphere clouds (docs/theory-contact.md §8).

Contact elements (force elements of a System):

* ``SphereMeshContact`` -- a sphere (on a rigid body, or a site of a flexible one) against a
  ``TriangleMesh`` fixed in a rigid body or moving with the modes of a flexible body;
* ``NodeMeshContact`` -- mesh nodes of a flexible body, each a point (optionally a small sphere of radius
  ``thickness``) against a ``TriangleMesh``;
* ``NodePlaneContact`` -- mesh nodes of a flexible body against a plane of a rigid body (or the ground):
  the measure is the node's height above the plane, the "axial" measure of a NodeSite;
* ``SphereCloudContact`` -- many spheres on many bodies: every pair of spheres on different bodies, and
  every sphere against a list of planes.

Every element is evaluated in a group of its kind (``contact_groups``), one vectorized call for all its
candidates. Candidates come from the broad phase (flexmb/contact/broadphase.py), rebuilt at accepted steps
only. A candidate's measure ``x(q)`` and penetration ``delta = R - x`` follow the closest feature:

* face of a triangle: ``x = n . (c - X_0)``, the signed height of the centre above the triangle's plane;
* edge (X_a, X_b): ``x = |d_a x d_b| / |d_a - d_b|``, the distance of the centre from the edge line;
* vertex X_k: ``x = |c - X_k|``;

with ``d_k = c - X_k`` (global) and the normal ``n`` of the (deformed) triangle. The normal force acts along
``grad x``; its Newton blocks are exact for the feature of the current iterate (a feature switch inside a
step changes the Hessian, not the value or the gradient: the distance is C1 across it).
"""
from __future__ import annotations

import time
import warnings

import numpy as np

from .. import kinematics as kin
from ..compiled import lazy_module
from .. import rotations as rot
from ..bodies.base import Body, Site
from .. import checks
from ..checks import scalar
from ..errors import ContactMarginWarning, ModelError, user_stacklevel
from ..forces.base import ForceElement
from ..groups import ElementGroup, EvalState
from ..joints.kernels import extend
from ..kinematics import PairState
from .broadphase import Skin, SlotMap, box_pairs, sphere_pairs, transfer_approach
from .duration import effective_mass, effective_masses, pair_mass, shortest_duration
from .laws import ApproachSpeeds, ContactLaw, LawTable
from .surface import (_MAX_LISTED, _TINY, EDGE, FACE, VERTEX, TriangleMesh, _compose, _dot, _global_points, _listing,
                      closest_point_on_triangles, feature_measure)

_spheres = lazy_module("flexmb.compiled.spheres")     # numba loads when a sphere cloud is first evaluated

__all__ = ["TriangleMesh", "SphereMeshContact", "NodeMeshContact", "NodePlaneContact", "SphereCloudContact",
           "ContactMarginWarning", "contact_groups", "build_groups", "closest_point_on_triangles", "MESH_CONTACTS"]

_MAX_ALL_PAIRS = 20000   # coupling="all" of a sphere cloud: at most this many body pairs in the pattern
_AUTO_ALL_PAIRS = 500    # coupling="auto": "all" up to this many body pairs, else "none"


def _law(law, owner):
    if not isinstance(law, ContactLaw):
        raise ModelError(f"{owner}: law must be a contact law (flexmb.contact.LankaraniNikravesh, ...), got {law!r}")
    return law


def _length(value, what, owner, allow_zero=False):
    return scalar(value, what, owner, sign="non-negative" if allow_zero else "positive", unit=" m")


def _check_site(site, owner, what):
    if not isinstance(site, (Body, Site)):
        raise ModelError(f"{owner}: {what} must be a body or a site on a body, got {site!r}")
    return site


def _rigid(body, owner, what):
    _check_site(body, owner, what)
    if not isinstance(body, Body) or body.n_modes:
        raise ModelError(f"{owner}: {what} must be a rigid body or the ground, got {body!r}")
    return body


def _flexible(body, owner):
    if not isinstance(body, Body) or not body.n_modes:
        raise ModelError(f"{owner}: the nodes must belong to a flexible body, got {body!r}")
    return body


def _mesh_vertices(mesh, body, owner):
    """Body-frame vertex positions and (for flexible bodies) their mode shapes (nv, 3, m)."""
    if not isinstance(mesh, TriangleMesh):
        raise ModelError(f"{owner}: mesh must be a flexmb.contact.mesh.TriangleMesh, got {mesh!r}")
    if not body.n_modes:
        return mesh.points, None
    nodes = mesh.nodes if mesh.nodes is not None else np.arange(mesh.n_points)
    nn = body.modes.nodes.shape[0]
    tol = 1e-9 * (1.0 + np.abs(mesh.points).max())
    if nodes.max() >= nn or not np.allclose(body.modes.nodes[nodes], mesh.points, atol=tol):
        raise ModelError(f"{owner}: {mesh!r} does not lie on the mesh nodes of flexible body {body.name!r} "
                         f"({nn} nodes): build it with TriangleMesh.from_femesh(body.modes.model.mesh) or give nodes=")
    return mesh.points, body.node_shapes(nodes)[0]


class _PointContact(ForceElement):
    """Common part: a set of contact points (sphere centres or nodes) on one site of ``body_b`` against a
    surface (mesh or plane) of ``body_a``, one law."""

    @property
    def bodies(self) -> tuple:
        """The two bodies ``(body_a, body_b)``: the surface's and the contact points'."""
        return (self.body_a, self.body_b)

    def _points(self):                                  # (body, u (n,3), S (n,3,m) or None, R (n,))
        raise NotImplementedError


class SphereMeshContact(_PointContact):
    """A sphere (centre ``center``, m, global at the start, radius ``radius``, m) on ``body_b`` (a body or a
    site of a flexible body) against the ``TriangleMesh`` ``mesh`` on ``body_a`` (rigid: body-fixed points;
    flexible: its mesh nodes, moving with the modes). ``margin`` (m, default the radius): gap below which the
    broad phase proposes a sphere-triangle pair. Penetration ``delta = R - x``, x the distance of the centre
    from its closest feature (docs/theory-contact.md §8.2)."""

    kind = "sphere-mesh contact"

    def __init__(self, body_a, body_b, *, mesh: TriangleMesh, center, radius: float, law: ContactLaw,
                 margin: float | None = None, name: str | None = None):
        super().__init__(name)
        self.body_a = _check_site(body_a, self.owner, "body_a")
        if not isinstance(body_a, Body):
            raise ModelError(f"{self.owner}: body_a (the mesh's) must be a body, not a site (a flexible body's "
                             f"mesh moves with its modes), got {body_a!r}")
        self.site_b = _check_site(body_b, self.owner, "body_b")
        self.body_b = self.site_b.body
        if self.body_b is body_a:
            raise ModelError(f"{self.owner}: a contact between body {body_a.name!r} and itself")
        self.mesh = mesh
        self.vertices, self.vertex_shapes = _mesh_vertices(mesh, body_a, self.owner)
        self.center = checks.vector(center, "center", self.owner)
        self.radius = _length(radius, "radius", self.owner)
        self.margin = self.radius if margin is None else _length(margin, "margin", self.owner)
        self.law = _law(law, self.owner)

    def _points(self):
        S = self.site_b.point_shape(self.center)
        return (self.body_b, self.site_b.to_local_point(self.center)[None], S[None] if S.shape[1] else None,
                np.array([self.radius]))


def _node_points(body, nodes, thickness, owner):
    from ..forces.nodal import _node_ids
    ids = _node_ids(body, nodes, owner)
    t = body.node_shapes(ids)[0]            # = NodeSite(body, k).point_shape(node position)
    return ids, body.modes.nodes[ids], t, np.full(ids.size, thickness)


class NodeMeshContact(_PointContact):
    """Mesh nodes ``nodes`` (ids or a node-set name) of flexible ``body_b`` against the ``TriangleMesh``
    ``mesh`` on ``body_a``; each node is a point contact (a sphere of radius ``thickness``, m, default 0):
    penetration ``thickness - x`` (docs/theory-contact.md §8). ``margin`` (m) defaults to 5 % of the nodes'
    span."""

    kind = "node-mesh contact"

    def __init__(self, body_a, body_b, *, nodes, mesh: TriangleMesh, law: ContactLaw, thickness: float = 0.0,
                 margin: float | None = None, name: str | None = None):
        super().__init__(name)
        self.body_b = _flexible(body_b, self.owner)
        self.body_a = _check_site(body_a, self.owner, "body_a")
        if body_a is body_b or not isinstance(body_a, Body):
            raise ModelError(f"{self.owner}: body_a (the mesh's) must be another body, got {body_a!r}")
        self.thickness = _length(thickness, "thickness", self.owner, allow_zero=True)
        self.nodes, u, self._S, self._R = _node_points(body_b, nodes, self.thickness, self.owner)
        self._u = u
        self.mesh = mesh
        self.vertices, self.vertex_shapes = _mesh_vertices(mesh, body_a, self.owner)
        span = float(np.ptp(body_b.modes.nodes, axis=0).max()) or 1.0
        self.margin = 0.05 * span if margin is None else _length(margin, "margin", self.owner)
        self.law = _law(law, self.owner)

    def _points(self):
        return self.body_b, self._u, self._S, self._R


class NodePlaneContact(_PointContact):
    """Mesh nodes ``nodes`` of flexible ``body_b`` against the plane through ``point`` (m) with outward unit
    ``normal`` (global at the start) fixed in rigid ``body_a`` (or the ground). The measure of node
    k is its height above the plane, the "axial" measure of ``body.node(k)``; ``thickness`` (m) is
    subtracted. ``margin`` (m, default 5 % of the nodes' span) selects the nodes near the plane at each
    accepted step."""

    kind = "node-plane contact"

    def __init__(self, body_a, body_b, *, nodes, point, normal, law: ContactLaw, thickness: float = 0.0,
                 margin: float | None = None, name: str | None = None):
        super().__init__(name)
        self.body_a = _rigid(body_a, self.owner, "body_a")
        self.body_b = _flexible(body_b, self.owner)
        self.thickness = _length(thickness, "thickness", self.owner, allow_zero=True)
        self.nodes, self._u, self._S, self._R = _node_points(body_b, nodes, self.thickness, self.owner)
        self.planes = [_plane(self.body_a, point, normal, self.owner)]
        span = float(np.ptp(body_b.modes.nodes, axis=0).max()) or 1.0
        self.margin = 0.05 * span if margin is None else _length(margin, "margin", self.owner)
        self.law = _law(law, self.owner)

    def _points(self):
        return self.body_b, self._u, self._S, self._R


def _plane(body, point, normal, owner):
    P = np.asarray(point, dtype=float).reshape(3)
    n = np.asarray(normal, dtype=float).reshape(3)
    ln = np.linalg.norm(n)
    if not np.all(np.isfinite(P)) or not np.isfinite(ln) or ln < 1e-12:
        raise ModelError(f"{owner}: a plane needs a finite point and a non-zero normal, got {point!r}, {normal!r}")
    return body, body.to_local_point(P), body.to_local_vector(n / ln)


class SphereCloudContact(ForceElement):
    """Many spheres: sphere k (centre ``centers[k]`` global at the start, radius ``radii[k]``) on
    ``bodies[k]`` (bodies or sites, all with the same number of modes -- rigid bodies, typically).
    Every two spheres on different bodies touch; every sphere touches each plane ``(body, point, normal)``
    of ``planes`` (rigid bodies or the ground). One law for all.

    ``margin`` (m, default the mean radius): broad-phase buffer. ``coupling`` chooses the body pairs that
    get exact (coupled) Newton blocks: ``"all"`` every pair (at most 20000 body pairs), ``"initial"`` the
    pairs whose spheres are within ``pattern_margin`` (default the largest diameter) at the start,
    ``"none"`` no pair; ``"auto"`` (default) is "all" up to 500 body pairs, else "none". A touching pair
    outside that set adds only its diagonal (own-body) blocks: Newton then converges linearly, the solution
    is unchanged. Coupled blocks cost fill-in in the sparse factorization (theory-contact.md §8.4).
    """

    kind = "sphere cloud contact"

    def __init__(self, bodies, centers, radii, law: ContactLaw, planes=(), margin: float | None = None,
                 coupling: str = "auto", pattern_margin: float | None = None, name: str | None = None):
        super().__init__(name)
        self.sites = [_check_site(b, self.owner, f"bodies[{k}]") for k, b in enumerate(bodies)]
        n = len(self.sites)
        if n == 0:
            raise ModelError(f"{self.owner}: no spheres given")
        self.centers = np.asarray(centers, dtype=float).reshape(-1, 3)
        if self.centers.shape[0] != n or not np.all(np.isfinite(self.centers)):
            raise ModelError(f"{self.owner}: centers must be {n} finite points (one per body), got {np.shape(centers)}")
        R = np.broadcast_to(np.asarray(radii, dtype=float), (n,)).copy()
        bad = np.flatnonzero(~np.isfinite(R) | (R <= 0))
        if bad.size:
            raise ModelError(f"{self.owner}: radii must be positive and finite: "
                             + _listing(f"sphere {k} ({R[k]})" for k in bad[:_MAX_LISTED]))
        self.radii = R
        modes = {s.body.n_modes for s in self.sites}
        if len(modes) > 1:
            raise ModelError(f"{self.owner}: all spheres must be on bodies with the same number of modes, "
                             f"got {sorted(modes)}")
        self.planes = [_plane(_rigid(p[0], self.owner, f"planes[{k}] body"), p[1], p[2], self.owner)
                       for k, p in enumerate(planes)]
        self.margin = float(R.mean()) if margin is None else _length(margin, "margin", self.owner)
        if coupling not in ("auto", "initial", "all", "none"):
            raise ModelError(f"{self.owner}: coupling must be 'auto', 'all', 'initial' or 'none', got {coupling!r}")
        nb = len({id(s.body) for s in self.sites})
        self.coupling = coupling if coupling != "auto" else ("all" if nb * (nb - 1) // 2 <= _AUTO_ALL_PAIRS else "none")
        self.pattern_margin = 2.0 * float(R.max()) if pattern_margin is None else _length(
            pattern_margin, "pattern_margin", self.owner, allow_zero=True)
        self.law = _law(law, self.owner)

    @property
    def bodies(self):
        """The distinct bodies of the spheres and of the planes, in order of first appearance."""
        seen = {}
        for b in [s.body for s in self.sites] + [p[0] for p in self.planes]:
            seen.setdefault(id(b), b)
        return tuple(seen.values())

    def _points(self):
        u = np.array([s.to_local_point(c) for s, c in zip(self.sites, self.centers)])
        m = self.sites[0].body.n_modes
        S = np.array([s.point_shape(c) for s, c in zip(self.sites, self.centers)]).reshape(-1, 3, m) if m else None
        return u, S


MESH_CONTACTS = (SphereMeshContact, NodeMeshContact, NodePlaneContact, SphereCloudContact)


# ---------------------------------------------------------------------------------------------------------
# Groups: the vectorized evaluation that the Assembly calls
# ---------------------------------------------------------------------------------------------------------
class _Contacts:
    """Evaluated candidates: penetration, rate, approach-speed ids, law index and body pair of each."""

    def __init__(self, delta, rate, ids, law, bi, bj, expression):
        self.delta, self.rate, self.ids, self.law, self.bi, self.bj = delta, rate, ids, law, bi, bj
        self.expression = expression          # mask -> kin.Scalar of the selected contacts


class _Group(ElementGroup):
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

    def _contacts(self, qe, ve) -> _Contacts:
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

    def _cached(self, qe, ve) -> _Contacts | None:
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
    def _forces(self, c: _Contacts, dm):
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

    def _contacts_of(self, qe, ve, delta, rate) -> _Contacts:
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


def _stack_points(records, m):
    """Concatenate point records ``(u, S or None)`` into arrays (S zero-filled where missing)."""
    u = np.concatenate([r[0] for r in records]).reshape(-1, 3)
    if not m:
        return u, None
    S = np.concatenate([r[1] if r[1] is not None else np.zeros((len(r[0]), 3, m)) for r in records])
    return u, S


def _point_masses(bodies: list, which: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Effective mass (kg) of each contact point: point k at ``u[k]`` (m, body axes from the centre of mass) on
    ``bodies[which[k]]``, through which the normal passes (flexmb/contact/duration.py ``effective_masses``)."""
    which, u = np.asarray(which, dtype=int), np.asarray(u, dtype=float).reshape(-1, 3)
    out = np.empty(len(which))
    for b in np.unique(which):                  # one vectorized evaluation per body
        at = which == b
        out[at] = effective_masses(bodies[b], u[at])
    return out


def _lightest_other(mass: np.ndarray, body: np.ndarray) -> np.ndarray:
    """For each sphere, the smallest ``mass`` (kg) of the spheres on other bodies (inf when there are none): the
    partner of its shortest contact."""
    light = np.full(int(body.max()) + 1, np.inf)
    np.minimum.at(light, body, mass)
    first, second = np.sort(light)[:2] if light.size > 1 else (light[0], np.inf)
    return np.where(light[body] == first, second, first)


class _BodyIndex:
    """Unique bodies of one side and the index of each."""

    def __init__(self):
        self.bodies, self._ids = [], {}

    def __call__(self, body) -> int:
        k = self._ids.get(id(body))
        if k is None:
            k = self._ids[id(body)] = len(self.bodies)
            self.bodies.append(body)
        return k


class PlaneGroup(_Group):
    """Points (nodes, sphere centres) against planes of rigid bodies: ``x = n . (X - P)``, ``delta = R - x``."""

    label = "node/sphere-plane contacts"
    n_candidates = property(lambda self: int(self.cand.size))
    _code = 2              # compiled/forces.py AXIAL: x = n . (X - P)
    _sides = np.array([0, 0, 1, 0], dtype=np.int64)     # its slots' bodies (compiled/forces.py SLOTS)

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
        side_i, side_j, laws, elements = _BodyIndex(), _BodyIndex(), [], _BodyIndex()
        rec, pb, R, margin, plaw, owner = [], [], [], [], [], []
        pl_b, pl_u, pl_n, combos = [], [], [], []
        known, p0 = {}, 0
        for el, body, u, S, radius in items:
            if el.law not in laws:
                laws.append(el.law)
            owner += [elements(el.cloud if isinstance(el, _CloudSphere) else el)] * len(u)
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
        self.u, self.S = _stack_points(rec, self.m_j)
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
        m_point = _point_masses(side_j.bodies, self.pb, self.u)
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

    def _evaluate(self, qe, ve) -> _Contacts:
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

    def _contacts_of(self, qe, ve, delta, rate) -> _Contacts:
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

        return _Contacts(delta, rate, c, self.plaw[p], bi, bj, expression)

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
        self.approach.set_history(_history_vector(x, 4 * len(self.combos), self.label))


class SphereGroup(_Group):
    """Sphere-sphere pairs of sphere clouds: ``x = |c_j - c_i|``, ``delta = R_i + R_j - x``."""

    label = "sphere cloud contacts"
    n_candidates = property(lambda self: int(self.ci.size))
    _code = 0              # compiled/forces.py LENGTH: x = |c_j - c_i|
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
        side, laws = _BodyIndex(), []
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
        self.u, self.S = _stack_points(rec, self.m)
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
        m_sphere = _point_masses(bodies, self.sb, self.u)
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

    def _evaluate(self, qe, ve) -> _Contacts:
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

    def _contacts_of(self, qe, ve, delta, rate) -> _Contacts:
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

        return _Contacts(delta, rate, np.arange(n), self.slaw[i], bi, bj, expression)

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
        self.approach.set_history(_history_vector(x, 4 * keys.size, self.label))


class TriangleGroup(_Group):
    """Points (sphere centres, nodes) against triangle meshes: closest feature per candidate triangle,
    Voronoi-region validity across neighbouring faces, one approach speed per point."""

    label = "sphere/node-mesh contacts"
    n_candidates = property(lambda self: int(self.cp.size))

    def __init__(self, items, nq, qe, ve):
        side_i, side_j, laws = _BodyIndex(), _BodyIndex(), []
        surfaces = {}
        rec, pb, R, margin, plaw, ptarget, sbody = [], [], [], [], [], [], []
        V, VS, vb, T, tsurf, nbr, eown, vown, vptr, vidx = [], [], [], [], [], [], [], [], [np.zeros(1, np.int64)], []
        nv = nt = nn = 0
        elements, owner = _BodyIndex(), []
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
        self.u, self.S = _stack_points(rec, self.m_j)
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
        self._durations_of(pair_mass(_point_masses(side_j.bodies, self.pb, self.u), m_surface), self.plaw)
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

    def _evaluate(self, qe, ve) -> _Contacts:
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

        return _Contacts(self.R[p] - x, -xdot, p, self.plaw[p], bi, bj, expression)

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

    def _per_point(self, c: _Contacts):
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
        self.approach.set_history(_history_vector(x, 4 * self.np, self.label))


def _history_vector(x, n: int, owner: str) -> np.ndarray:
    """``x`` as a float vector of length ``n``, or a ModelError naming ``owner`` and both lengths."""
    x = np.asarray(x, dtype=float).reshape(-1)
    if x.size != n:
        raise ModelError(f"{owner}: a history vector of {x.size} values for {n} expected")
    return x


def _ranges(starts, counts):
    """Concatenated ``arange(s, s + c)`` for every (s, c)."""
    counts = np.asarray(counts, dtype=np.int64)
    if counts.size == 0 or counts.sum() == 0:
        return np.zeros(0, np.int64)
    offs = np.repeat(np.cumsum(counts) - counts, counts)
    return np.repeat(np.asarray(starts, dtype=np.int64), counts) + np.arange(counts.sum()) - offs


def build_groups(forces, nq: int, st: EvalState) -> list:
    """The mesh, node and sphere-cloud contact groups of a model (flexmb/groups.py ``FAMILY_MODULES``), with
    their broad phase built at the initial state ``st``: :func:`contact_groups`."""
    return contact_groups(forces, nq, st.qe, st.ve)


def contact_groups(forces, nq: int, qe: np.ndarray, ve: np.ndarray) -> list:
    """The groups of the contact elements of this module among ``forces``.

    ``qe``, ``ve``: the initial state, extended by the ground (kinematics.extend); the broad phase is
    built there (and rebuilt at every accepted step)."""
    planes, meshes, clouds = {}, {}, {}
    for f in forces:
        if isinstance(f, SphereCloudContact):
            u, S = f._points()
            m = f.sites[0].body.n_modes
            clouds.setdefault(m, []).append(f)
            if f.planes:
                for k, s in enumerate(f.sites):
                    sub = _CloudSphere(f, k, u[k:k + 1], None if S is None else S[k:k + 1])
                    planes.setdefault(m, []).append((sub, s.body, sub.u, sub.S, f.radii[k:k + 1]))
        elif isinstance(f, NodePlaneContact):
            body, u, S, R = f._points()
            planes.setdefault(body.n_modes, []).append((f, body, u, S, R))
        elif isinstance(f, (SphereMeshContact, NodeMeshContact)):
            body, u, S, R = f._points()
            meshes.setdefault((f.body_a.n_modes, body.n_modes), []).append((f, body, u, S, R))
    groups = []
    for k in sorted(planes):
        groups.append(PlaneGroup(planes[k], nq, qe, ve))
    for k in sorted(meshes):
        groups.append(TriangleGroup(meshes[k], nq, qe, ve))
    for k in sorted(clouds):
        groups.append(SphereGroup(clouds[k], nq, qe, ve))
    return groups


class _CloudSphere:
    """One sphere of a cloud seen as a point element of a PlaneGroup (shares the cloud's law and planes)."""

    def __init__(self, cloud, k, u, S):
        self.law, self.planes, self.margin, self.u, self.S = cloud.law, cloud.planes, cloud.margin, u, S
        self.cloud = cloud
