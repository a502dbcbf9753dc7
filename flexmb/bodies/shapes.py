"""Surface triangulations of rigid bodies for the ParaView export: user meshes, primitives, and the box
of equivalent inertia drawn when a body has no geometry.

All shapes are in body axes with the origin at the centre of mass (m), as triangles (P, 3) points and
(T, 3) node ids.
"""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ..errors import ModelError

PRIMITIVES = ("box", "sphere", "cylinder")
"""Primitive shapes ``RigidBody(geometry={...})`` takes: ``{"box": (lx, ly, lz)}`` (edge lengths, m),
``{"sphere": radius}``, ``{"cylinder": (radius, length)}`` (axis z); each may add ``"center": (x, y, z)``
(m, body axes, from the centre of mass)."""

_SEGMENTS = 24
"""Segments around a sphere or cylinder (a drawing, not a contact surface)."""

THIN_FRACTION = 1e-3
"""An equivalent box side that comes out zero (a plate or rod inertia) is drawn this fraction of the
longest side thick, so that the box has a visible face."""


def _box(lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    corners = np.array([[i, j, k] for k in (0, 1) for j in (0, 1) for i in (0, 1)], dtype=float) - 0.5
    faces = np.array([[0, 2, 3], [0, 3, 1], [4, 5, 7], [4, 7, 6], [0, 1, 5], [0, 5, 4],
                      [2, 6, 7], [2, 7, 3], [0, 4, 6], [0, 6, 2], [1, 3, 7], [1, 7, 5]])
    return corners * lengths, faces


def _sphere(radius: float) -> tuple[np.ndarray, np.ndarray]:
    n = _SEGMENTS
    theta = np.linspace(0.0, np.pi, n // 2 + 1)[1:-1]
    phi = np.linspace(0.0, 2.0 * np.pi, n, endpoint=False)
    th, ph = np.meshgrid(theta, phi, indexing="ij")
    ring = np.column_stack([np.sin(th).ravel() * np.cos(ph).ravel(), np.sin(th).ravel() * np.sin(ph).ravel(),
                            np.cos(th).ravel()])
    pts = np.vstack([[0.0, 0.0, 1.0], ring, [0.0, 0.0, -1.0]]) * radius
    rings, last = len(theta), len(pts) - 1
    j = np.arange(n)
    ids = 1 + np.arange(rings)[:, None] * n + j                    # (rings, n)
    nxt = np.roll(ids, -1, axis=1)
    tris = [np.column_stack([np.zeros(n, int), ids[0], nxt[0]]),
            np.column_stack([np.full(n, last), nxt[-1], ids[-1]])]
    for r in range(rings - 1):
        tris += [np.column_stack([ids[r], ids[r + 1], nxt[r + 1]]), np.column_stack([ids[r], nxt[r + 1], nxt[r]])]
    return pts, np.vstack(tris)


def _cylinder(radius: float, length: float) -> tuple[np.ndarray, np.ndarray]:
    n = _SEGMENTS
    phi = np.linspace(0.0, 2.0 * np.pi, n, endpoint=False)
    circle = np.column_stack([radius * np.cos(phi), radius * np.sin(phi)])
    pts = np.vstack([np.column_stack([circle, np.full(n, -length / 2)]), np.column_stack([circle, np.full(n, length / 2)]),
                     [[0.0, 0.0, -length / 2], [0.0, 0.0, length / 2]]])
    j, nxt = np.arange(n), np.roll(np.arange(n), -1)
    side = np.vstack([np.column_stack([j, nxt, nxt + n]), np.column_stack([j, nxt + n, j + n])])
    caps = np.vstack([np.column_stack([np.full(n, 2 * n), nxt, j]), np.column_stack([np.full(n, 2 * n + 1), j + n, nxt + n])])
    return pts, np.vstack([side, caps])


def _positive(value, what: str, owner: str, count: int) -> np.ndarray:
    try:
        a = np.atleast_1d(np.asarray(value, dtype=float))
    except (TypeError, ValueError):
        a = np.zeros(0)
    if a.shape != (count,) or not np.all(np.isfinite(a)) or np.any(a <= 0.0):
        raise ModelError(f"{owner}: geometry {what} must be {count} positive length(s) in m, got {value!r}")
    return a


def _primitive(spec: Mapping, owner: str) -> tuple[np.ndarray, np.ndarray]:
    shapes = [k for k in spec if k != "center"]
    unknown = [k for k in shapes if k not in PRIMITIVES]
    if len(shapes) != 1 or unknown:
        raise ModelError(f"{owner}: geometry must name one primitive of {PRIMITIVES} (plus an optional "
                         f"'center'), got keys {sorted(map(str, spec))}")
    kind = shapes[0]
    if kind == "box":
        pts, tris = _box(_positive(spec[kind], "box (lx, ly, lz)", owner, 3))
    elif kind == "sphere":
        pts, tris = _sphere(float(_positive(spec[kind], "sphere radius", owner, 1)[0]))
    else:
        pts, tris = _cylinder(*_positive(spec[kind], "cylinder (radius, length)", owner, 2))
    center = spec.get("center", (0.0, 0.0, 0.0))
    try:
        c = np.asarray(center, dtype=float)
    except (TypeError, ValueError):
        c = np.zeros(0)
    if c.shape != (3,) or not np.all(np.isfinite(c)):
        raise ModelError(f"{owner}: geometry center must be 3 finite coordinates in m, got {center!r}")
    return pts + c, tris


def _triangles(spec, owner: str) -> tuple[np.ndarray, np.ndarray]:
    try:
        points, triangles = spec
        pts = np.asarray(points, dtype=float)
        tris = np.asarray(triangles)
    except (TypeError, ValueError):
        raise ModelError(f"{owner}: geometry must be a (points, triangles) pair or a primitive dict "
                         f"{{'box' | 'sphere' | 'cylinder': ...}}, got {type(spec).__name__}") from None
    if pts.ndim != 2 or pts.shape[1] != 3 or len(pts) < 3 or not np.all(np.isfinite(pts)):
        raise ModelError(f"{owner}: geometry points must be a finite (P, 3) array with P >= 3, got shape {pts.shape}")
    if tris.ndim != 2 or tris.shape[1] != 3 or len(tris) == 0 or tris.dtype.kind not in "iu":
        raise ModelError(f"{owner}: geometry triangles must be a non-empty integer (T, 3) array, got "
                         f"{tris.dtype} array of shape {tris.shape}")
    bad = np.flatnonzero((tris < 0).any(axis=1) | (tris >= len(pts)).any(axis=1))
    if bad.size:
        raise ModelError(f"{owner}: geometry triangle {bad[0]} refers to points outside 0..{len(pts) - 1}: "
                         f"{tris[bad[0]].tolist()}")
    return pts, tris.astype(np.int64)


def rigid_geometry(spec, owner: str) -> tuple[np.ndarray, np.ndarray] | None:
    """The surface of ``RigidBody(geometry=spec)``: None, a (points (P, 3), triangles (T, 3)) pair
    (m, body axes from the centre of mass) or a primitive dict (:data:`PRIMITIVES`); a ModelError
    naming ``owner`` and the bad value otherwise."""
    if spec is None:
        return None
    if isinstance(spec, Mapping):
        return _primitive(spec, owner)
    return _triangles(spec, owner)


def inertia_box(mass: float, inertia: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The uniform box with the body's mass and principal moments, on its principal axes.

    A uniform box of sides a, b, c has ``I_1 = m (b^2 + c^2) / 12`` and cyclic (Gere & Timoshenko,
    any table of mass moments), so ``a^2 = 6 (I_2 + I_3 - I_1) / m`` and cyclic; the triangle
    inequality of the principal moments (checked by RigidBody) keeps these >= 0. A zero side (plate,
    rod) is drawn :data:`THIN_FRACTION` of the longest side thick.
    """
    w, axes = np.linalg.eigh(inertia)
    sq = 6.0 * (w.sum() - 2.0 * w) / mass
    sides = np.sqrt(np.maximum(sq, 0.0))
    sides = np.maximum(sides, THIN_FRACTION * sides.max())
    pts, tris = _box(sides)
    return pts @ axes.T, tris
