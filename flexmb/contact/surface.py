"""Triangle meshes as contact surfaces: checks, closest points and the feature measures of a
point against a face, an edge or a vertex, with exact derivatives (docs/theory-contact.md §8).

Used by the contact elements of flexmb/contact/mesh.py.
"""
from __future__ import annotations

import numpy as np

from .. import kinematics as kin
from .. import rotations as rot
from ..errors import MeshError

__all__ = ["TriangleMesh", "closest_point_on_triangles", "feature_measure"]

_AREA_RTOL = 1e-12       # a face is degenerate when its area <= rtol * (longest edge)^2
_MAX_LISTED = 10
_TINY = 1e-300


def _listing(items, total=None) -> str:
    items = list(items)
    shown = ", ".join(str(x) for x in items[:_MAX_LISTED])
    extra = (len(items) if total is None else total) - min(len(items), _MAX_LISTED)
    return shown + (f" ... and {extra} more" if extra > 0 else "")


# ---------------------------------------------------------------------------------------------------------
# The surface
# ---------------------------------------------------------------------------------------------------------
class TriangleMesh:
    """A triangulated contact surface: ``points`` (n, 3) in the body frame and ``triangles`` (m, 3) ids.

    The outward normal of a triangle ``(a, b, c)`` is ``(X_b - X_a) x (X_c - X_a)``: contact acts on that
    side only. ``nodes`` (n,) maps the points to mesh nodes of a flexible body (default: point k is node k);
    for a rigid body the points are body-fixed. Checked at construction (MeshError naming the faces):

    * ids in range, no face repeating a vertex, no degenerate face (area <= 1e-12 (longest edge)^2);
    * manifold edges: an edge is shared by at most two faces;
    * consistent orientation: two faces sharing an edge traverse it in opposite directions
      (otherwise their normals point to opposite sides);
    * with ``closed=True``: no boundary edge (every edge has two faces) and a positive enclosed volume
      (normals outward).

    Not checked: self-intersections and "bow-tie" vertices (two fans of faces meeting at one vertex).
    """

    def __init__(self, points, triangles, *, closed: bool = False, nodes=None, name: str = "mesh"):
        self.name = str(name)
        owner = f"triangle mesh {self.name!r}"
        try:
            P = np.array(points, dtype=float)
            T = np.array(triangles)
        except (TypeError, ValueError):
            raise MeshError(f"{owner}: points must be (n, 3) numbers and triangles (m, 3) vertex ids") from None
        if P.ndim != 2 or P.shape[1] != 3:
            raise MeshError(f"{owner}: points must be an (n, 3) array of finite coordinates, got shape {P.shape}")
        bad = np.flatnonzero(~np.all(np.isfinite(P), axis=1))
        if bad.size:
            raise MeshError(f"{owner}: {bad.size} points have non-finite coordinates: "
                            + _listing(f"point {k} {P[k].tolist()}" for k in bad[:_MAX_LISTED]))
        if T.ndim != 2 or T.shape[1] != 3 or T.shape[0] == 0 or not np.issubdtype(T.dtype, np.integer):
            raise MeshError(f"{owner}: triangles must be a non-empty (m, 3) array of integer vertex ids, "
                            f"got shape {T.shape} ({T.dtype})")
        T = T.astype(np.int64)
        bad = np.flatnonzero((T < 0).any(axis=1) | (T >= len(P)).any(axis=1))
        if bad.size:
            raise MeshError(f"{owner}: {bad.size} triangles use vertex ids outside 0..{len(P) - 1}: "
                            + _listing(f"triangle {t} {T[t].tolist()}" for t in bad[:_MAX_LISTED]))
        s = np.sort(T, axis=1)
        bad = np.flatnonzero((s[:, 1:] == s[:, :-1]).any(axis=1))
        if bad.size:
            raise MeshError(f"{owner}: {bad.size} triangles repeat a vertex: "
                            + _listing(f"triangle {t} {T[t].tolist()}" for t in bad[:_MAX_LISTED]))
        e1, e2 = P[T[:, 1]] - P[T[:, 0]], P[T[:, 2]] - P[T[:, 0]]
        area = 0.5 * np.linalg.norm(np.cross(e1, e2), axis=1)
        longest = np.max(np.linalg.norm(P[T] - P[T[:, [1, 2, 0]]], axis=2), axis=1)
        bad = np.flatnonzero(area <= _AREA_RTOL * longest ** 2)
        if bad.size:
            raise MeshError(f"{owner}: {bad.size} degenerate triangles (zero area): " + _listing(
                [f"triangle {t} (vertices {T[t].tolist()}, area {area[t]:.3g} m^2)" for t in bad[:_MAX_LISTED]],
                bad.size))
        self.points, self.triangles, self.closed = P, T, bool(closed)
        self.nodes = None if nodes is None else np.asarray(nodes, dtype=np.int64).reshape(-1)
        if self.nodes is not None and self.nodes.shape != (len(P),):
            raise MeshError(f"{owner}: nodes must give one mesh node id per point ({len(P)}), got {self.nodes.shape}")
        self._topology(owner)
        for a in (self.points, self.triangles):
            a.flags.writeable = False

    def _topology(self, owner: str) -> None:
        T, nv, nt = self.triangles, len(self.points), len(self.triangles)
        a, b = T.reshape(-1), T[:, [1, 2, 0]].reshape(-1)            # directed edge k of face t: T[t,k] -> T[t,k+1]
        lo, hi = np.minimum(a, b), np.maximum(a, b)
        key = lo * nv + hi
        uniq, inv, cnt = np.unique(key, return_inverse=True, return_counts=True)
        bad = np.flatnonzero(cnt > 2)
        if bad.size:
            faces = [f"edge ({uniq[e] // nv}, {uniq[e] % nv}) in triangles "
                     f"{(np.flatnonzero(inv == e) // 3).tolist()}" for e in bad[:_MAX_LISTED]]
            raise MeshError(f"{owner}: {bad.size} non-manifold edges (shared by more than two triangles): "
                            + _listing(faces, bad.size))
        dkey, dcnt = np.unique(a * nv + b, return_counts=True)
        flips = dkey[dcnt > 1]
        if flips.size:
            pairs = []
            for k in flips[:_MAX_LISTED]:
                faces = np.flatnonzero(a * nv + b == k) // 3
                pairs.append(f"triangles {faces.tolist()} along edge ({k // nv}, {k % nv})")
            raise MeshError(f"{owner}: inconsistent orientation at {flips.size} edges: two triangles traverse a shared "
                            f"edge in the same direction, so their normals point to opposite sides: "
                            + _listing(pairs, flips.size) + "; reverse the vertex order of one of each pair")
        face = np.arange(3 * nt) // 3
        order = np.argsort(inv, kind="stable")
        first = np.searchsorted(inv[order], np.arange(uniq.size))
        f0 = face[order[first]]
        f1 = np.where(cnt == 2, face[order[np.minimum(first + 1, 3 * nt - 1)]], -1)
        other = np.where(face == f0[inv], f1[inv], f0[inv])
        self.neighbor = np.where(cnt[inv] == 2, other, -1).reshape(nt, 3)   # face across local edge k (-1: boundary)
        self.edge_owner = (self.neighbor < 0) | (np.arange(nt)[:, None] < self.neighbor)
        vmin = np.full(nv, nt, dtype=np.int64)
        np.minimum.at(vmin, T.reshape(-1), face)
        self.vertex_owner = vmin[T] == np.arange(nt)[:, None]
        nbrs = np.concatenate([np.column_stack([uniq // nv, uniq % nv]), np.column_stack([uniq % nv, uniq // nv])])
        nbrs = nbrs[np.lexsort((nbrs[:, 1], nbrs[:, 0]))]
        self.vn_ptr = np.concatenate([[0], np.cumsum(np.bincount(nbrs[:, 0], minlength=nv))])
        self.vn_idx = nbrs[:, 1]
        self.n_boundary_edges = int(np.sum(cnt == 1))
        if self.closed:
            if self.n_boundary_edges:
                e = np.flatnonzero(cnt == 1)
                raise MeshError(f"{owner}: the mesh is open: {e.size} boundary edges (used by one triangle only): "
                                + _listing([f"({uniq[k] // nv}, {uniq[k] % nv})" for k in e[:_MAX_LISTED]], e.size)
                                + "; pass closed=False for an open (one-sided) surface")
            vol = self.volume()
            if vol <= 0.0:
                raise MeshError(f"{owner}: the normals point inward (enclosed volume {vol:.6g} m^3 <= 0); reverse the "
                                "vertex order of every triangle")

    # -- queries -------------------------------------------------------------------------------------
    @property
    def n_points(self) -> int:
        """Number of mesh points."""
        return len(self.points)

    @property
    def n_triangles(self) -> int:
        """Number of triangles."""
        return len(self.triangles)

    def normals(self, points=None) -> np.ndarray:
        """Unit outward face normals (m, 3), of the given (deformed) points or of the mesh's own."""
        P = self.points if points is None else np.asarray(points, float)
        T = self.triangles
        n = np.cross(P[T[:, 1]] - P[T[:, 0]], P[T[:, 2]] - P[T[:, 0]])
        return n / np.linalg.norm(n, axis=1, keepdims=True)

    def volume(self) -> float:
        """Enclosed volume (m^3; meaningful for closed meshes): sum of X_a . (X_b x X_c) / 6."""
        X = self.points[self.triangles]
        return float(np.sum(np.einsum("nk,nk->n", X[:, 0], np.cross(X[:, 1], X[:, 2]))) / 6.0)

    def __repr__(self) -> str:
        return (f"TriangleMesh({self.name!r}: {self.n_points} points, {self.n_triangles} triangles, "
                f"{'closed' if self.closed else f'open, {self.n_boundary_edges} boundary edges'})")

    @classmethod
    def from_femesh(cls, mesh, cell_set: str | None = None, *, closed: bool | None = None,
                    name: str | None = None) -> "TriangleMesh":
        """The surface of an FEMesh: its shell cells (triangles; quads split along the diagonal 0-2),
        optionally only those of ``cell_set``, or else the boundary faces of its solid cells (outward,
        corner nodes only: the surface of quadratic cells is linearized). Points are all mesh nodes
        (``nodes[k] = k``), so the surface fits a FlexibleBody built on this mesh.
        ``closed`` defaults to True for a solid's boundary and False for shells."""
        cells = (dict(mesh.cells) if cell_set is None
                 else {t: mesh.cells[t][i] for t, i in mesh.cell_set(cell_set).items()})
        tris = []
        if "triangle" in cells:
            tris.append(cells["triangle"][:, :3])
        if "quad" in cells:
            q = cells["quad"]
            tris += [q[:, [0, 1, 2]], q[:, [0, 2, 3]]]
        shell = bool(tris)
        if not shell:
            faces = []
            for t, table in _SOLID_FACES.items():
                if t in cells:
                    c = cells[t]
                    for f in table:
                        faces.append(c[:, list(f)])
            if not faces:
                raise MeshError(f"mesh has no shell or solid cells ({', '.join(cells) or 'no cells'}): no surface")
            tris = _boundary(faces)
        T = np.concatenate(tris).astype(np.int64)
        return cls(mesh.points, T, closed=(not shell) if closed is None else closed,
                   nodes=np.arange(len(mesh.points)), name=name or ("shell surface" if shell else "boundary"))


# outward faces of VTK solid cells with positive volume (corner nodes)
_SOLID_FACES = {
    "tetra": ((0, 2, 1), (0, 1, 3), (1, 2, 3), (0, 3, 2)),
    "tetra10": ((0, 2, 1), (0, 1, 3), (1, 2, 3), (0, 3, 2)),
    "hexahedron": ((0, 3, 2, 1), (4, 5, 6, 7), (0, 1, 5, 4), (1, 2, 6, 5), (2, 3, 7, 6), (3, 0, 4, 7)),
    "hexahedron20": ((0, 3, 2, 1), (4, 5, 6, 7), (0, 1, 5, 4), (1, 2, 6, 5), (2, 3, 7, 6), (3, 0, 4, 7)),
}


def _boundary(faces: list[np.ndarray]) -> list[np.ndarray]:
    """Faces used by exactly one cell, split into triangles (quads along 0-2), orientation kept."""
    out = []
    for k in (3, 4):
        F = np.concatenate([f for f in faces if f.shape[1] == k]) if any(f.shape[1] == k for f in faces) else None
        if F is None:
            continue
        _, inv, cnt = np.unique(np.sort(F, axis=1), axis=0, return_inverse=True, return_counts=True)
        B = F[cnt[inv.reshape(-1)] == 1]
        out += [B] if k == 3 else [B[:, [0, 1, 2]], B[:, [0, 2, 3]]]
    return out


# ---------------------------------------------------------------------------------------------------------
# Geometry kernels (vectorized)
# ---------------------------------------------------------------------------------------------------------
FACE, EDGE, VERTEX = 0, 1, 2


def closest_point_on_triangles(P, A, B, C) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Closest point of each triangle (A, B, C) to P, all (n, 3).

    Returns ``(Q, kind, local)``: the closest points, the feature kind (FACE, EDGE, VERTEX) and its local
    index (edge k joins vertices k and k+1 mod 3; vertex k). The Voronoi regions of the triangle's
    vertices and edges are tested first (closed), the face last (strictly inside), as in Ericson,
    Real-Time Collision Detection (2005) §5.1.5.
    """
    P, A, B, C = (np.asarray(x, dtype=float).reshape(-1, 3) for x in (P, A, B, C))
    ab, ac, ap, bp, cp = B - A, C - A, P - A, P - B, P - C
    d1, d2 = _dot(ab, ap), _dot(ac, ap)
    d3, d4 = _dot(ab, bp), _dot(ac, bp)
    d5, d6 = _dot(ab, cp), _dot(ac, cp)
    vc, vb, va = d1 * d4 - d3 * d2, d5 * d2 - d1 * d6, d3 * d6 - d5 * d4
    with np.errstate(divide="ignore", invalid="ignore"):
        t_ab = d1 / (d1 - d3)
        t_ca = d2 / (d2 - d6)
        t_bc = (d4 - d3) / ((d4 - d3) + (d5 - d6))
        den = 1.0 / (va + vb + vc)
    conds = [
        (d1 <= 0) & (d2 <= 0),                               # vertex A
        (d3 >= 0) & (d4 <= d3),                              # vertex B
        (d6 >= 0) & (d5 <= d6),                              # vertex C
        (vc <= 0) & (d1 >= 0) & (d3 <= 0),                   # edge AB
        (va <= 0) & (d4 - d3 >= 0) & (d5 - d6 >= 0),        # edge BC
        (vb <= 0) & (d2 >= 0) & (d6 <= 0),                   # edge CA
    ]
    region = np.select(conds, [0, 1, 2, 3, 4, 5], default=6)
    kind = np.array([VERTEX] * 3 + [EDGE] * 3 + [FACE])[region]
    local = np.array([0, 1, 2, 0, 1, 2, 0])[region]
    Q = np.select([c[:, None] for c in conds],
                  [A, B, C, A + t_ab[:, None] * ab, B + t_bc[:, None] * (C - B), A + t_ca[:, None] * ac],
                  default=A + (vb * den)[:, None] * ab + (vc * den)[:, None] * ac)
    return Q, kind, local


def _dot(a, b):
    return np.einsum("...k,...k->...", a, b)


def _skew(v):
    return rot.skew(v)


def feature_measure(kind, local, d, second: bool = False):
    """Measure of the closest feature as a function of ``d = (d_0, d_1, d_2)`` (n, 3, 3), ``d_k = c - X_k``.

    Returns ``(x, g, H)``: value (n,), gradient (n, 9) and, with ``second``, Hessian (n, 9, 9) with respect
    to ``(d_0, d_1, d_2)`` (docs/theory-contact.md §8.2). ``kind``/``local`` as from
    ``closest_point_on_triangles``.
    """
    kind = np.asarray(kind).reshape(-1)
    local = np.asarray(local).reshape(-1)
    n = d.shape[0]
    x, g = np.zeros(n), np.zeros((n, 9))
    H = np.zeros((n, 9, 9)) if second else None
    f = kind == FACE
    if f.any():
        x[f], g[f], h = _face(d[f], second)
        if second:
            H[f] = h
    for k in range(3):
        e = (kind == EDGE) & (local == k)
        if e.any():
            k1 = (k + 1) % 3
            xe, ge, he = _edge(d[e, k], d[e, k1], second)
            cols = np.r_[3 * k:3 * k + 3, 3 * k1:3 * k1 + 3]
            x[e] = xe
            g[np.ix_(e, cols)] = ge
            if second:
                H[np.ix_(np.flatnonzero(e), cols, cols)] = he
        v = (kind == VERTEX) & (local == k)
        if v.any():
            dv = d[v, k]
            L = np.maximum(np.linalg.norm(dv, axis=1), _TINY)
            u = dv / L[:, None]
            x[v] = L
            g[v, 3 * k:3 * k + 3] = u
            if second:
                H[np.ix_(np.flatnonzero(v), np.r_[3 * k:3 * k + 3], np.r_[3 * k:3 * k + 3])] = (
                    (np.eye(3) - u[:, :, None] * u[:, None, :]) / L[:, None, None])
    return x, g, H


def _face(d, second):
    """``x = V / |N|``, ``V = d0 . (d1 x d2)``, ``N = d0 x d1 + d1 x d2 + d2 x d0`` (the face normal)."""
    d0, d1, d2 = d[:, 0], d[:, 1], d[:, 2]
    V = _dot(d0, rot.cross(d1, d2))
    N = rot.cross(d0, d1) + rot.cross(d1, d2) + rot.cross(d2, d0)
    L = np.linalg.norm(N, axis=1)
    JV = np.concatenate([rot.cross(d1, d2), rot.cross(d2, d0), rot.cross(d0, d1)], axis=1)        # (n, 9)
    JN = np.concatenate([_skew(d2 - d1), _skew(d0 - d2), _skew(d1 - d0)], axis=2)                 # (n, 3, 9)
    gphi = -N / L[:, None] ** 3                                                                    # grad of 1/|N|
    u = np.einsum("nkx,nk->nx", JN, gphi)
    x = V / L
    g = JV / L[:, None] + V[:, None] * u
    if not second:
        return x, g, None
    n = d.shape[0]
    Hphi = (3.0 * N[:, :, None] * N[:, None, :] / L[:, None, None] ** 2 - np.eye(3)) / L[:, None, None] ** 3
    H = (_trilinear_hessian(d0, d1, d2) / L[:, None, None]
         + JV[:, :, None] * u[:, None, :] + u[:, :, None] * JV[:, None, :]
         + V[:, None, None] * (np.einsum("nkx,nkl,nly->nxy", JN, Hphi, JN) + _normal_hessian(gphi, n)))
    return x, g, H


def _trilinear_hessian(d0, d1, d2):
    """Hessian of ``d0 . (d1 x d2)``: blocks (0,1) = -[d2]x, (1,2) = -[d0]x, (2,0) = -[d1]x, transposes."""
    H = np.zeros((d0.shape[0], 9, 9))
    for (a, b), dc in (((0, 1), d2), ((1, 2), d0), ((2, 0), d1)):
        S = _skew(dc)
        H[:, 3 * a:3 * a + 3, 3 * b:3 * b + 3] = -S
        H[:, 3 * b:3 * b + 3, 3 * a:3 * a + 3] = S
    return H


def _normal_hessian(w, n):
    """Hessian of ``w . N`` (w fixed): blocks (0,1), (1,2), (2,0) = -[w]x, their transposes +[w]x."""
    H = np.zeros((n, 9, 9))
    W = _skew(w)
    for a, b in ((0, 1), (1, 2), (2, 0)):
        H[:, 3 * a:3 * a + 3, 3 * b:3 * b + 3] = -W
        H[:, 3 * b:3 * b + 3, 3 * a:3 * a + 3] = W
    return H


def _edge(da, db, second):
    """``x = |c| / |e|``, ``c = d_a x d_b``, ``e = d_a - d_b``: distance from the line through X_a, X_b."""
    c = rot.cross(da, db)
    e = da - db
    C = np.maximum(np.linalg.norm(c, axis=1), _TINY)
    E = np.linalg.norm(e, axis=1)
    ch, eh = c / C[:, None], e / E[:, None]
    Jc = np.concatenate([-_skew(db), _skew(da)], axis=2)                                           # (n, 3, 6)
    gC = np.einsum("nkx,nk->nx", Jc, ch)
    gE = np.concatenate([eh, -eh], axis=1)
    x = C / E
    g = gC / E[:, None] - (C / E ** 2)[:, None] * gE
    if not second:
        return x, g, None
    n = da.shape[0]
    Pc = (np.eye(3) - ch[:, :, None] * ch[:, None, :]) / C[:, None, None]
    HC = np.einsum("nkx,nkl,nly->nxy", Jc, Pc, Jc)
    W = _skew(ch)
    HC[:, 0:3, 3:6] -= W
    HC[:, 3:6, 0:3] += W
    Pe = (np.eye(3) - eh[:, :, None] * eh[:, None, :]) / E[:, None, None]
    HE = np.zeros((n, 6, 6))
    HE[:, 0:3, 0:3] = HE[:, 3:6, 3:6] = Pe
    HE[:, 0:3, 3:6] = HE[:, 3:6, 0:3] = -Pe
    E2, E3 = (E ** 2)[:, None, None], (E ** 3)[:, None, None]
    H = (HC / E[:, None, None] - (gC[:, :, None] * gE[:, None, :] + gE[:, :, None] * gC[:, None, :]) / E2
         + C[:, None, None] * (2.0 * gE[:, :, None] * gE[:, None, :] / E3 - HE / E2))
    return x, g, H


def _compose(ds: list, x, g, H, xd) -> kin.Scalar:
    """A scalar ``x(d_0, d_1, d_2)`` of three vector expressions, its gradient g and Hessian H given."""
    J = np.concatenate([d.jac for d in ds], axis=1)                     # (n, 9, nx)
    jac = np.einsum("nk,nkx->nx", g, J)
    dd = np.einsum("nkx,nx->nk", J, xd)
    quad = np.einsum("nk,nk->n", g, np.concatenate([d.quad for d in ds], axis=1)) + np.einsum(
        "nk,nkl,nl->n", dd, H, dd)

    def hess(w):
        JH = np.einsum("nkx,nkl->nxl", J, H)
        h = w[:, None, None] * np.einsum("nxl,nly->nxy", JH, J)
        for k, d in enumerate(ds):
            h += d.hess(w[:, None] * g[:, 3 * k:3 * k + 3])
        return h

    return kin.Scalar(x, jac, quad, hess)


def _global_points(qe, ve, F, Mg, u, S):
    """Global positions and velocities of body points ``u + S eta`` (F: (n, 7) frame columns, Mg modal)."""
    r, rd = qe[F[:, :3]], ve[F[:, :3]]
    if (S is None or not S.shape[-1]) and not np.any(u):
        return r, rd                                   # points at the body origins (sphere centres)
    p, pd = qe[F[:, 3:]], ve[F[:, 3:]]
    A = rot.A(p)
    ud = u
    ASd = 0.0
    if S is not None and S.shape[-1]:
        ud = u + np.einsum("nkm,nm->nk", S, qe[Mg])
        ASd = np.einsum("nij,nj->ni", A, np.einsum("nkm,nm->nk", S, ve[Mg]))
    X = r + np.einsum("nij,nj->ni", A, ud)
    V = rd + np.einsum("nij,nj->ni", rot.B(p, ud), pd) + ASd
    return X, V


# ---------------------------------------------------------------------------------------------------------
# Contact elements
# ---------------------------------------------------------------------------------------------------------
