"""Generate the square plate samples (SI units, metres).

plate_quad.msh (Gmsh 4.1), plate_quad.inp: 1.0 m x 1.0 m plate in the xy plane (z = 0),
    16 x 16 four-node quads, 289 nodes.
plate_tri.msh: the same plate with each quad split into two triangles (512 triangles).
Sets: cell set "plate"; node sets "edge_x0" (x = 0), "edge_x1" (x = 1), "edge_y0" (y = 0),
"edge_y1" (y = 1) and "edges" (all four). In the .msh files the edge sets are physical
groups of boundary lines ("edges" repeats the lines of the four edges).

Usage: python meshes/make_plate.py [-o OUTDIR]   (default: this folder)
"""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from _meshgen import grid_points, write_abaqus, write_gmsh

SIDE = 1.0   # m
N = 16       # quads per side
EDGE_NAMES = ("edge_x0", "edge_x1", "edge_y0", "edge_y1")


def plate() -> tuple[np.ndarray, np.ndarray]:
    """Points (289, 3) and quads (256, 4), counterclockwise seen from +z."""
    x = np.linspace(0.0, SIDE, N + 1)
    points = grid_points(x, x, np.zeros(1))
    i, j = (a.ravel() for a in np.meshgrid(np.arange(N), np.arange(N), indexing="ij"))
    n0 = i + (N + 1) * j
    quads = np.column_stack([n0, n0 + 1, n0 + N + 2, n0 + N + 1])
    return points, quads


def edge_lines() -> dict[str, np.ndarray]:
    """Boundary line cells of each edge, by edge name."""
    s = np.arange(N)
    node = lambda i, j: i + (N + 1) * j  # noqa: E731 - grid index of node (i, j)
    return {"edge_x0": np.column_stack([node(0, s), node(0, s + 1)]),
            "edge_x1": np.column_stack([node(N, s), node(N, s + 1)]),
            "edge_y0": np.column_stack([node(s, 0), node(s + 1, 0)]),
            "edge_y1": np.column_stack([node(s, N), node(s + 1, N)])}


def triangles(quads: np.ndarray) -> np.ndarray:
    """Split each quad (a, b, c, d) into (a, b, c) and (a, c, d)."""
    return np.vstack([quads[:, [0, 1, 2]], quads[:, [0, 2, 3]]])


def main(out: Path) -> None:
    """Write all plate samples into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    points, quads = plate()
    edges = edge_lines()
    boundary = [(name, "line", edges[name]) for name in EDGE_NAMES]
    boundary.append(("edges", "line", np.vstack(list(edges.values()))))
    write_gmsh(out / "plate_quad.msh", points, [("plate", "quad", quads), *boundary])
    write_gmsh(out / "plate_tri.msh", points, [("plate", "triangle", triangles(quads)), *boundary])
    nsets = {name: np.unique(edges[name]) for name in EDGE_NAMES}
    nsets["edges"] = np.unique(np.vstack(list(edges.values())))
    write_abaqus(out / "plate_quad.inp", points, "quad", quads, "plate", nsets)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-o", "--out", type=Path, default=Path(__file__).resolve().parent)
    main(parser.parse_args().out)
