"""Generate the bracket sample: an L-shaped angle bracket meshed with tet10 (SI units, metres).

Geometry:
    base plate  x in [0, 0.100], y in [0, 0.060], z in [0, 0.010]
    flange      x in [0, 0.010], y in [0, 0.060], z in [0, 0.060]
    slot through the base      x in [0.050, 0.080], y in [0.020, 0.040]
    window through the flange  y in [0.020, 0.040], z in [0.030, 0.050]
Mesh: structured hexahedra of edge h = 0.010 / (3 * scale) m (3 * scale through each
10 mm thickness), each split into 6 tetrahedra along its main diagonal (the same split in
every hexahedron, so faces conform), then one node added at the middle of every edge.
Sets: cell set "bracket"; node sets "base" (bottom face of the base plate, z = 0) and
"flange_top" (top face of the flange, z = 0.060). In the .msh file these two are physical
groups of boundary triangle6 cells.

Usage:
    python meshes/make_bracket.py                        # meshes/bracket_tet10.msh and .inp
    python meshes/make_bracket.py --scale 2 -o /tmp/bracket_big.msh   # larger, for benchmarks
"""
from __future__ import annotations

import argparse
from itertools import permutations
from pathlib import Path

import numpy as np

from _meshgen import (HEX_OFFSETS, add_midside_nodes, compact, grid_hexahedra, grid_points,
                      write_abaqus, write_gmsh)

THICKNESS = 0.010                       # m, base plate and flange
BOX = np.array([0.100, 0.060, 0.060])   # m, bounding box of the bracket
SLOT = ((0.050, 0.080), (0.020, 0.040))    # base slot: x range, y range [m]
WINDOW = ((0.020, 0.040), (0.030, 0.050))  # flange window: y range, z range [m]


def kuhn_split() -> np.ndarray:
    """(6, 4) local hexahedron nodes of the 6 positively oriented tetrahedra along diagonal 0-6."""
    local = {tuple(o): n for n, o in enumerate(HEX_OFFSETS)}
    tets = []
    for perm in permutations(range(3)):
        corner = np.zeros(3, dtype=int)
        path = [local[tuple(corner)]]
        for axis in perm:
            corner[axis] = 1
            path.append(local[tuple(corner)])
        odd = sum(perm[i] > perm[j] for i in range(3) for j in range(i + 1, 3)) % 2
        tets.append([path[0], path[2], path[1], path[3]] if odd else path)
    return np.array(tets)


def solid_cells(h: float, shape: tuple[int, int, int]) -> np.ndarray:
    """Boolean (nx, ny, nz) mask of the grid cells whose centre lies in the bracket."""
    x, y, z = np.meshgrid(*[(np.arange(n) + 0.5) * h for n in shape], indexing="ij")
    inside = (z < THICKNESS) | (x < THICKNESS)
    slot = (SLOT[0][0] < x) & (x < SLOT[0][1]) & (SLOT[1][0] < y) & (y < SLOT[1][1]) & (z < THICKNESS)
    window = ((x < THICKNESS) & (WINDOW[0][0] < y) & (y < WINDOW[0][1])
              & (WINDOW[1][0] < z) & (z < WINDOW[1][1]))
    return inside & ~slot & ~window


def faces_on_layer(tets: np.ndarray, layer: np.ndarray) -> np.ndarray:
    """Outward-oriented tetrahedron faces whose three nodes all lie on ``layer`` (bool per node)."""
    faces = tets[:, [[1, 2, 3], [0, 3, 2], [0, 1, 3], [0, 2, 1]]].reshape(-1, 3)
    return faces[np.all(layer[faces], axis=1)]


def bracket(scale: int = 1):
    """Points [m], tet10 cells and the triangle6 faces 'base' and 'flange_top'."""
    n = 3 * scale
    h = THICKNESS / n
    shape = tuple(int(round(b / THICKNESS)) * n for b in BOX)
    points = grid_points(*[np.arange(s + 1) * h for s in shape])
    tets = grid_hexahedra(shape, solid_cells(h, shape))[:, kuhn_split()].reshape(-1, 4)
    layer = np.arange(len(points)) // ((shape[0] + 1) * (shape[1] + 1))
    base = faces_on_layer(tets, layer == 0)
    top = faces_on_layer(tets, layer == shape[2])
    points, (tets, base, top) = compact(points, [tets, base, top])
    points, cells = add_midside_nodes(points, [(tets, "tetra10"), (base, "triangle6"),
                                               (top, "triangle6")])
    return points, *cells


def write(path: Path, scale: int = 1) -> None:
    """Write the bracket of ``scale`` to ``path`` (.msh: Gmsh 4.1 ASCII, .inp: Abaqus)."""
    points, tet10, base, top = bracket(scale)
    if path.suffix == ".msh":
        write_gmsh(path, points, [("bracket", "tetra10", tet10), ("base", "triangle6", base),
                                  ("flange_top", "triangle6", top)])
    elif path.suffix == ".inp":
        write_abaqus(path, points, "tetra10", tet10, "bracket",
                     {"base": np.unique(base), "flange_top": np.unique(top)})
    else:
        raise SystemExit(f"unknown output format {path.suffix!r}: use .msh or .inp")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=int, default=1, help="mesh refinement factor (default 1)")
    parser.add_argument("-o", "--out", type=Path, help="one output file (.msh or .inp)")
    args = parser.parse_args()
    if args.out is not None:
        write(args.out, args.scale)
    else:
        here = Path(__file__).resolve().parent
        for suffix in (".msh", ".inp"):
            write(here / f"bracket_tet10{suffix}", args.scale)
