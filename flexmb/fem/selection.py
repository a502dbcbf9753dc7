"""Geometric node selection on a point cloud (box, plane, cylinder, nearest node).

All lengths are in metres. Each function works on an ``(N, 3)`` array of node
coordinates and returns sorted ``np.int64`` node ids; ``FEMesh`` exposes them as
methods. The default tolerance is ``1e-6`` times the bounding-box diagonal of
the points (docs/theory-mesh.md §6).
"""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from flexmb.errors import MeshError

#: Default selection tolerance relative to the bounding-box diagonal [-].
DEFAULT_RTOL = 1e-6


def default_tolerance(points: np.ndarray) -> float:
    """Default geometric tolerance [m]: ``1e-6`` times the bounding-box diagonal."""
    return DEFAULT_RTOL * float(np.linalg.norm(np.ptp(points, axis=0)))


def _vector(value: ArrayLike, what: str) -> np.ndarray:
    """A finite 3-vector [m]; a 2-vector gets z = 0."""
    v = np.asarray(value, dtype=np.float64).ravel()
    if v.size == 2:
        v = np.append(v, 0.0)
    if v.size != 3 or not np.all(np.isfinite(v)):
        raise MeshError(f"{what} must be a finite 2- or 3-vector, got {value!r}")
    return v


def _unit(value: ArrayLike, what: str) -> np.ndarray:
    """The normalized 3-vector of ``value``; zero length is refused."""
    v = _vector(value, what)
    norm = np.linalg.norm(v)
    if norm == 0.0:
        raise MeshError(f"{what} must not be the zero vector")
    return v / norm


def _tolerance(points: np.ndarray, tol: float | None) -> float:
    """``tol`` [m] checked non-negative, or the default tolerance when None."""
    if tol is None:
        return default_tolerance(points)
    if not np.isfinite(tol) or tol < 0.0:
        raise MeshError(f"selection tolerance must be finite and >= 0, got {tol!r}")
    return float(tol)


def _result(points: np.ndarray, mask: np.ndarray, what: str, allow_empty: bool) -> np.ndarray:
    """Ids where ``mask`` holds; an empty selection is refused unless allowed."""
    ids = np.flatnonzero(mask).astype(np.int64)
    if ids.size == 0 and not allow_empty:
        lo, hi = points.min(axis=0), points.max(axis=0)
        raise MeshError(
            f"{what} selects no node; the mesh spans {np.array2string(lo, precision=6)} to "
            f"{np.array2string(hi, precision=6)} m (check units and tolerance)"
        )
    return ids


def in_box(points: np.ndarray, lo: ArrayLike, hi: ArrayLike, tol: float | None = None,
           allow_empty: bool = False) -> np.ndarray:
    """Nodes with ``lo - tol <= x <= hi + tol`` component-wise [m]."""
    lo_v, hi_v = _vector(lo, "box corner lo"), _vector(hi, "box corner hi")
    if np.any(lo_v > hi_v):
        raise MeshError(f"box corner lo {lo_v} exceeds hi {hi_v} in some component")
    t = _tolerance(points, tol)
    mask = np.all((points >= lo_v - t) & (points <= hi_v + t), axis=1)
    return _result(points, mask, f"box {lo_v} to {hi_v}", allow_empty)


def on_plane(points: np.ndarray, point: ArrayLike, normal: ArrayLike, tol: float | None = None,
             allow_empty: bool = False) -> np.ndarray:
    """Nodes at distance ``|(x - point) . n| <= tol`` from a plane [m]."""
    p0, n = _vector(point, "plane point"), _unit(normal, "plane normal")
    t = _tolerance(points, tol)
    mask = np.abs((points - p0) @ n) <= t
    return _result(points, mask, f"plane through {p0} with normal {n}", allow_empty)


def on_cylinder(points: np.ndarray, point: ArrayLike, axis: ArrayLike, radius: float,
                tol: float | None = None, inside: bool = False,
                allow_empty: bool = False) -> np.ndarray:
    """Nodes on an infinite cylinder surface, ``|r - radius| <= tol``, or inside it.

    ``r`` is the distance of a node from the axis line through ``point`` along
    ``axis`` [m]. With ``inside=True`` every node with ``r <= radius + tol`` is taken.
    """
    p0, a = _vector(point, "cylinder point"), _unit(axis, "cylinder axis")
    if not np.isfinite(radius) or radius <= 0.0:
        raise MeshError(f"cylinder radius must be > 0, got {radius!r}")
    t = _tolerance(points, tol)
    d = points - p0
    r = np.linalg.norm(d - np.outer(d @ a, a), axis=1)
    mask = r <= radius + t if inside else np.abs(r - radius) <= t
    return _result(points, mask, f"cylinder of radius {radius} about {p0} + s {a}", allow_empty)


def nearest(points: np.ndarray, point: ArrayLike) -> int:
    """Id of the node closest to ``point`` [m] (lowest id on ties)."""
    p0 = _vector(point, "point")
    return int(np.argmin(np.einsum("ij,ij->i", points - p0, points - p0)))
