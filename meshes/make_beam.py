"""Generate the slender cantilever beam samples (SI units, metres).

beam_line.msh (Gmsh 4.1), beam_line_v2.msh (Gmsh 2.2), beam_line.inp:
    L = 1.0 m along x, 20 two-node line elements, 21 nodes.
    Sets: cell set "beam"; node sets "root" (x = 0) and "tip" (x = L).
beam_solid.msh, beam_solid.inp, beam_solid_hex20.msh:
    the same beam as a solid, square section 0.02 m x 0.02 m centred on the x axis,
    structured 50 x 2 x 2 hexahedra (hex8, or hex20 with mid-edge nodes).
    Sets: cell set "beam"; node sets "root" (face x = 0) and "tip" (face x = L).
    In the .msh files root and tip are physical groups of boundary quads (quad8 for hex20).

Usage: python meshes/make_beam.py [-o OUTDIR]   (default: this folder)
"""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from _meshgen import add_midside_nodes, grid_hexahedra, grid_points, write_abaqus, write_gmsh

LENGTH = 1.0        # m
SIDE = 0.02         # m, square section
N_LINE = 20         # line elements
N_SOLID = (50, 2, 2)  # hexahedra along x, y, z


def beam_line() -> tuple[np.ndarray, np.ndarray]:
    """Points (21, 3) and line connectivity (20, 2) of the beam axis."""
    x = np.linspace(0.0, LENGTH, N_LINE + 1)
    points = np.column_stack([x, np.zeros_like(x), np.zeros_like(x)])
    lines = np.column_stack([np.arange(N_LINE), np.arange(1, N_LINE + 1)])
    return points, lines


def end_faces(shape: tuple[int, int, int]) -> tuple[np.ndarray, np.ndarray]:
    """Quads on the faces x = 0 and x = L of a grid, normals pointing out of the solid."""
    nx, ny, nz = shape
    j, k = (a.ravel() for a in np.meshgrid(np.arange(ny), np.arange(nz), indexing="ij"))

    def node(i, jj, kk):
        return i + (nx + 1) * (jj + (ny + 1) * kk)

    root = np.column_stack([node(0, j, k), node(0, j, k + 1), node(0, j + 1, k + 1), node(0, j + 1, k)])
    tip = np.column_stack([node(nx, j, k), node(nx, j + 1, k), node(nx, j + 1, k + 1), node(nx, j, k + 1)])
    return root, tip


def beam_solid() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Points, hexahedra, root quads and tip quads of the solid beam."""
    nx, ny, nz = N_SOLID
    points = grid_points(np.linspace(0.0, LENGTH, nx + 1), np.linspace(-SIDE / 2, SIDE / 2, ny + 1),
                         np.linspace(-SIDE / 2, SIDE / 2, nz + 1))
    root, tip = end_faces(N_SOLID)
    return points, grid_hexahedra(N_SOLID), root, tip


def main(out: Path) -> None:
    """Write all beam samples into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    points, lines = beam_line()
    root, tip = np.array([[0]]), np.array([[N_LINE]])
    groups = [("beam", "line", lines), ("root", "vertex", root), ("tip", "vertex", tip)]
    write_gmsh(out / "beam_line.msh", points, groups, version="4.1")
    write_gmsh(out / "beam_line_v2.msh", points, groups, version="2.2")
    write_abaqus(out / "beam_line.inp", points, "line", lines, "beam",
                 {"root": root.ravel(), "tip": tip.ravel()})

    points, hexes, root, tip = beam_solid()
    write_gmsh(out / "beam_solid.msh", points,
               [("beam", "hexahedron", hexes), ("root", "quad", root), ("tip", "quad", tip)])
    write_abaqus(out / "beam_solid.inp", points, "hexahedron", hexes, "beam",
                 {"root": np.unique(root), "tip": np.unique(tip)})

    points20, (hex20, root8, tip8) = add_midside_nodes(
        points, [(hexes, "hexahedron20"), (root, "quad8"), (tip, "quad8")])
    write_gmsh(out / "beam_solid_hex20.msh", points20,
               [("beam", "hexahedron20", hex20), ("root", "quad8", root8), ("tip", "quad8", tip8)])


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-o", "--out", type=Path, default=Path(__file__).resolve().parent)
    main(parser.parse_args().out)
