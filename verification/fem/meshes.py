"""Meshes of the ``fem`` suite: the sample files and structured meshes generated in memory.

The structured generators follow the helpers of tests/fem (hex grid, Kuhn split into
tetrahedra, mid-edge nodes, shell grids); they are written out here so that the suite does
not import from ``tests/``. SI units (m) throughout.
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np

from flexmb.errors import ModelError
from flexmb.fem.materials import Material
from flexmb.fem.mesh import FEMesh, read_mesh

STEEL = Material(E=210e9, nu=0.3, rho=7850.0, name="steel")
"""Material of every case unless stated: E = 210 GPa, nu = 0.3, rho = 7850 kg/m^3."""

# Sample-mesh dimensions (meshes/README.md, meshes/make_*.py).
BEAM_LENGTH = 1.0          # m, beam_line / beam_solid along x
BEAM_SIDE = 0.02           # m, square section of beam_solid (and the section given to beam_line)
PLATE_SIDE = 1.0           # m, plate_quad / plate_tri
PLATE_THICKNESS = 0.01     # m, thickness given to the plate samples (t/a = 0.01)

# Kuhn split of a hexahedron (VTK order) into 6 tetrahedra around its diagonal 0-6; conforming
# across a structured grid because every cell uses the same diagonal.
_KUHN = np.array([[0, 1, 2, 6], [0, 2, 3, 6], [0, 3, 7, 6], [0, 7, 4, 6], [0, 4, 5, 6], [0, 5, 1, 6]])
_TET_EDGES = np.array([[0, 1], [1, 2], [2, 0], [0, 3], [1, 3], [2, 3]])
_HEX_EDGES = np.array([[0, 1], [1, 2], [2, 3], [3, 0], [4, 5], [5, 6], [6, 7], [7, 4],
                       [0, 4], [1, 5], [2, 6], [3, 7]])
_HEX_CORNERS = [(0, 0, 0), (1, 0, 0), (1, 1, 0), (0, 1, 0), (0, 0, 1), (1, 0, 1), (1, 1, 1), (0, 1, 1)]


def mesh_dir() -> Path:
    """The repository's ``meshes/`` folder (beside the ``verification`` package)."""
    here = Path(__file__).resolve().parents[2] / "meshes"
    if not (here / "README.md").exists():
        raise ModelError(f"sample meshes not found at {here}: run the fem suite from a source checkout")
    return here


@lru_cache(maxsize=None)
def sample(name: str) -> FEMesh:
    """A sample mesh by file name, e.g. ``"beam_solid.msh"`` (read once per process)."""
    return read_mesh(mesh_dir() / name)


# ----------------------------------------------------------------------------------------------
# line beams
# ----------------------------------------------------------------------------------------------
def line_mesh(n: int, L: float = BEAM_LENGTH, direction=(1.0, 0.0, 0.0), origin=(0.0, 0.0, 0.0),
              stations: np.ndarray | None = None) -> FEMesh:
    """``n`` two-node beam elements over length L; node sets ``root`` (first) and ``tip`` (last).

    ``stations`` (n + 1,) in [0, 1] give unequal element lengths (default: uniform).
    """
    d = np.asarray(direction, dtype=float)
    d = d / np.linalg.norm(d)
    s = np.linspace(0.0, 1.0, n + 1) if stations is None else np.asarray(stations, dtype=float)
    points = np.asarray(origin, dtype=float) + (L * s)[:, None] * d
    lines = np.column_stack([np.arange(n), np.arange(1, n + 1)])
    return FEMesh(points, {"line": lines}, node_sets={"root": [0], "tip": [n]})


# ----------------------------------------------------------------------------------------------
# solids
# ----------------------------------------------------------------------------------------------
def hex_grid(n: tuple[int, int, int], lo, hi) -> tuple[np.ndarray, np.ndarray]:
    """Points and hex8 cells (VTK order) of the box [lo, hi] with n cells per direction."""
    axes = [np.linspace(a, b, k + 1) for a, b, k in zip(lo, hi, n)]
    points = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, 3)
    ids = np.arange(points.shape[0]).reshape(n[0] + 1, n[1] + 1, n[2] + 1)
    i, j, k = (a.ravel() for a in np.meshgrid(*[np.arange(m) for m in n], indexing="ij"))
    cells = np.stack([ids[i + a, j + b, k + c] for a, b, c in _HEX_CORNERS], axis=1)
    return points, cells


def add_midside(points: np.ndarray, cells: np.ndarray, edges: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Quadratic cells: one new node at the midpoint of every (shared) edge, in edge order."""
    pairs = np.sort(cells[:, edges], axis=2).reshape(-1, 2)
    unique, inverse = np.unique(pairs, axis=0, return_inverse=True)
    mid = points[unique].mean(axis=1)
    new_ids = points.shape[0] + inverse.reshape(cells.shape[0], edges.shape[0])
    return np.vstack([points, mid]), np.hstack([cells, new_ids])


def _orient_tets(points: np.ndarray, tets: np.ndarray) -> np.ndarray:
    """Swap two nodes of negatively oriented tetrahedra."""
    x = points[tets]
    det = np.linalg.det(np.stack([x[:, 1] - x[:, 0], x[:, 2] - x[:, 0], x[:, 3] - x[:, 0]], axis=1))
    tets = tets.copy()
    neg = det < 0
    tets[neg, 1], tets[neg, 2] = tets[neg, 2], tets[neg, 1].copy()
    return tets


def solid_box(cell_type: str, n: tuple[int, int, int], lo=(0.0, 0.0, 0.0), hi=(1.0, 1.0, 1.0),
              distort: float = 0.0, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Points and cells of a box meshed with ``cell_type`` (tetra, tetra10, hexahedron, hexahedron20).

    ``distort``: interior corner nodes move randomly by up to that fraction of the cell size
    (hex20 interior mid-edge nodes by a tenth of it, curving the edges; tet10 edges stay
    straight, see docs/theory-elements.md §2.3).
    """
    lo, hi = np.asarray(lo, dtype=float), np.asarray(hi, dtype=float)
    points, hexes = hex_grid(n, lo, hi)
    if cell_type in ("tetra", "tetra10"):
        cells, edges = _orient_tets(points, hexes[:, _KUHN].reshape(-1, 4)), _TET_EDGES
    elif cell_type in ("hexahedron", "hexahedron20"):
        cells, edges = hexes, _HEX_EDGES
    else:
        raise ModelError(f"no structured solid generator for cell type {cell_type!r}")
    rng = np.random.default_rng(seed)
    h = (hi - lo) / np.asarray(n)
    tol = 1e-9 * float(np.max(hi - lo))

    def interior(p):
        return np.all((p > lo + tol) & (p < hi - tol), axis=1)

    if distort:
        points = points + interior(points)[:, None] * rng.uniform(-distort, distort, points.shape) * h
    if cell_type in ("tetra10", "hexahedron20"):
        n_corner = points.shape[0]
        points, cells = add_midside(points, cells, edges)
        if distort and cell_type == "hexahedron20":
            moved = interior(points) & (np.arange(points.shape[0]) >= n_corner)
            points = points + moved[:, None] * rng.uniform(-0.1 * distort, 0.1 * distort, points.shape) * h
    return points, cells


def solid_beam(cell_type: str, m: int, L: float = BEAM_LENGTH, side: float = BEAM_SIDE) -> FEMesh:
    """The beam_solid geometry with (25 m) x m x m cells; node sets ``root`` (x = 0), ``tip`` (x = L).

    ``m = 2`` is the layout of the sample files (50 x 2 x 2); the cells keep the sample's
    aspect ratio 2 : 1 : 1 at every ``m``, so that refining ``m`` halves every cell dimension.
    """
    points, cells = solid_box(cell_type, (25 * m, m, m), (0.0, -side / 2, -side / 2), (L, side / 2, side / 2))
    tol = 1e-9 * L
    sets = {"root": np.flatnonzero(points[:, 0] < tol), "tip": np.flatnonzero(points[:, 0] > L - tol)}
    return FEMesh(points, {cell_type: cells}, node_sets=sets)


# ----------------------------------------------------------------------------------------------
# shells
# ----------------------------------------------------------------------------------------------
def plate_grid(n: int, a: float = PLATE_SIDE, tri: bool = False) -> FEMesh:
    """n x n quads (or 2 n^2 triangles, diagonal from the first to the third corner) on [0, a]^2, z = 0.

    Node order and triangle split as in meshes/make_plate.py, so ``n = 16`` reproduces the samples.
    """
    x = np.linspace(0.0, a, n + 1)
    X, Y = np.meshgrid(x, x, indexing="xy")
    points = np.column_stack([X.ravel(), Y.ravel(), np.zeros(X.size)])
    i, j = (v.ravel() for v in np.meshgrid(np.arange(n), np.arange(n), indexing="ij"))
    n0 = i + (n + 1) * j
    quads = np.column_stack([n0, n0 + 1, n0 + n + 2, n0 + n + 1])
    cells = {"triangle": np.vstack([quads[:, [0, 1, 2]], quads[:, [0, 2, 3]]])} if tri else {"quad": quads}
    return FEMesh(points, cells)
