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
candidates: point-plane contacts and sphere clouds in flexmb/contact/spheres.py (``PlaneGroup``, ``SphereGroup``,
compiled narrow phase), triangle meshes in flexmb/contact/triangles.py (``TriangleGroup``), on the common
candidate-group part of flexmb/contact/candidates.py. Candidates come from the broad phase
(flexmb/contact/broadphase.py), rebuilt at accepted steps only. A candidate's measure ``x(q)`` and penetration
``delta = R - x`` follow the closest feature:

* face of a triangle: ``x = n . (c - X_0)``, the signed height of the centre above the triangle's plane;
* edge (X_a, X_b): ``x = |d_a x d_b| / |d_a - d_b|``, the distance of the centre from the edge line;
* vertex X_k: ``x = |c - X_k|``;

with ``d_k = c - X_k`` (global) and the normal ``n`` of the (deformed) triangle. The normal force acts along
``grad x``; its Newton blocks are exact for the feature of the current iterate (a feature switch inside a
step changes the Hessian, not the value or the gradient: the distance is C1 across it).
"""
from __future__ import annotations

import numpy as np

from .. import checks
from ..bodies.base import Body, Site
from ..checks import scalar
from ..errors import ContactMarginWarning, ModelError
from ..forces.base import ForceElement
from ..groups import EvalState
from .laws import ContactLaw
from .spheres import CloudSphere, PlaneGroup, SphereGroup
from .surface import _MAX_LISTED, TriangleMesh, _listing, closest_point_on_triangles
from .triangles import TriangleGroup

__all__ = ["TriangleMesh", "SphereMeshContact", "NodeMeshContact", "NodePlaneContact", "SphereCloudContact",
           "ContactMarginWarning", "contact_groups", "build_groups", "closest_point_on_triangles", "MESH_CONTACTS"]

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
                    sub = CloudSphere(f, k, u[k:k + 1], None if S is None else S[k:k + 1])
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
