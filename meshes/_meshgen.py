"""Helpers shared by the sample-mesh generators in this folder (SI units, metres).

Structured grids are built with numpy; files are written with meshio:
Gmsh physical groups become one geometric entity each, Abaqus sets become
*NSET / *ELSET. Node order of every cell is meshio's (= VTK) order.
"""
from __future__ import annotations

from pathlib import Path

import meshio
import numpy as np

#: meshio cell type -> Abaqus element keyword written to .inp files.
ABAQUS_TYPES = {"line": "B31", "triangle": "S3", "quad": "S4", "hexahedron": "C3D8",
                "hexahedron20": "C3D20", "tetra10": "C3D10"}

#: Local mid-edge node pairs in meshio/VTK order for the quadratic cell types built here.
EDGES = {
    "triangle6": [(0, 1), (1, 2), (2, 0)],
    "quad8": [(0, 1), (1, 2), (2, 3), (3, 0)],
    "tetra10": [(0, 1), (1, 2), (2, 0), (0, 3), (1, 3), (2, 3)],
    "hexahedron20": [(0, 1), (1, 2), (2, 3), (3, 0), (4, 5), (5, 6), (6, 7), (7, 4),
                     (0, 4), (1, 5), (2, 6), (3, 7)],
}

#: Corner offsets (di, dj, dk) of a VTK hexahedron in a structured grid.
HEX_OFFSETS = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0],
                        [0, 0, 1], [1, 0, 1], [1, 1, 1], [0, 1, 1]])


def grid_points(x: np.ndarray, y: np.ndarray, z: np.ndarray) -> np.ndarray:
    """Points of the tensor grid x * y * z [m], node (i, j, k) at index i + nx*(j + ny*k)."""
    zz, yy, xx = np.meshgrid(z, y, x, indexing="ij")
    return np.column_stack([xx.ravel(), yy.ravel(), zz.ravel()])


def grid_hexahedra(shape: tuple[int, int, int], keep: np.ndarray | None = None) -> np.ndarray:
    """VTK hexahedra of a grid of ``shape`` = (nx, ny, nz) cells, optionally masked by ``keep``.

    ``keep`` is a boolean array of shape (nx, ny, nz); node numbering as in ``grid_points``.
    """
    nx, ny, nz = shape
    i, j, k = np.meshgrid(np.arange(nx), np.arange(ny), np.arange(nz), indexing="ij")
    if keep is not None:
        i, j, k = i[keep], j[keep], k[keep]
    i, j, k = (a.ravel()[:, None] for a in (i, j, k))
    o = HEX_OFFSETS
    return (i + o[:, 0]) + (nx + 1) * ((j + o[:, 1]) + (ny + 1) * (k + o[:, 2]))


def add_midside_nodes(points: np.ndarray, blocks: list[tuple[np.ndarray, str]]):
    """Append one node at the middle of every distinct edge of the given cells.

    ``blocks`` holds (corner connectivity, quadratic cell type) pairs; blocks sharing
    an edge share its mid-edge node. Returns the new points and the quadratic
    connectivities (corners first, then mid-edge nodes in ``EDGES`` order).
    """
    pairs = [conn[:, np.array(EDGES[t])] for conn, t in blocks]   # (E, n_edges, 2)
    flat = np.sort(np.concatenate([p.reshape(-1, 2) for p in pairs]), axis=1)
    edges, inverse = np.unique(flat, axis=0, return_inverse=True)
    mids = points[edges].mean(axis=1)
    out, start = [], 0
    for (conn, _), p in zip(blocks, pairs):
        n = p.shape[0] * p.shape[1]
        out.append(np.hstack([conn, len(points) + inverse[start:start + n].reshape(p.shape[:2])]))
        start += n
    return np.vstack([points, mids]), out


def compact(points: np.ndarray, conns: list[np.ndarray]):
    """Drop points used by no cell; renumber the connectivities (order kept)."""
    used = np.unique(np.concatenate([c.ravel() for c in conns]))
    new = np.full(len(points), -1)
    new[used] = np.arange(len(used))
    return points[used], [new[c] for c in conns]


def write_gmsh(path: Path, points: np.ndarray, groups: list[tuple[str, str, np.ndarray]],
               version: str = "4.1") -> None:
    """Write a Gmsh ASCII file: each (name, cell type, connectivity) group is one entity + physical group.

    Gmsh 4.1 needs every node classified on an entity: a node goes to the first group
    (in order of increasing dimension, then as listed) that holds it; a group left without
    a node of its own takes the first node of its first cell.
    """
    dims = [meshio.CellBlock(t, c).dim for _, t, c in groups]
    counters: dict[int, int] = {}
    entity = []
    for d in dims:
        counters[d] = counters.get(d, 0) + 1
        entity.append(counters[d])
    cells = [(t, c) for _, t, c in groups]
    field_data = {name: np.array([g + 1, d]) for g, ((name, _, _), d) in enumerate(zip(groups, dims))}
    cell_data = {"gmsh:physical": [np.full(len(c), g + 1) for g, (_, _, c) in enumerate(groups)],
                 "gmsh:geometrical": [np.full(len(c), e) for e, (_, _, c) in zip(entity, groups)]}
    point_data = {"gmsh:dim_tags": _classify_nodes(len(points), groups, dims, entity)}
    mesh = meshio.Mesh(points, cells, point_data=point_data, cell_data=cell_data,
                       field_data=field_data)
    fmt = {"4.1": "gmsh", "2.2": "gmsh22"}[version]
    meshio.write(path, mesh, file_format=fmt, binary=False)


def _classify_nodes(n: int, groups, dims, entity) -> np.ndarray:
    """(n, 2) array of (entity dim, entity tag) per node for Gmsh 4.1 (see ``write_gmsh``)."""
    dim_tags = np.full((n, 2), -1)
    order = sorted(range(len(groups)), key=lambda g: dims[g])
    for g in order:
        nodes = np.unique(groups[g][2])
        free = nodes[dim_tags[nodes, 0] < 0]
        dim_tags[free] = (dims[g], entity[g])
    for g in order:
        own = (dim_tags[:, 0] == dims[g]) & (dim_tags[:, 1] == entity[g])
        if not own.any():
            dim_tags[groups[g][2][0, 0]] = (dims[g], entity[g])
    if np.any(dim_tags < 0):
        raise ValueError("every node must belong to a group")
    return dim_tags


def write_abaqus(path: Path, points: np.ndarray, cell_type: str, conn: np.ndarray,
                 elset: str, nsets: dict[str, np.ndarray]) -> None:
    """Write an Abaqus .inp with one element block (``ABAQUS_TYPES`` keyword), an *ELSET and *NSETs."""
    mesh = meshio.Mesh(points, [(cell_type, conn)], point_sets=nsets,
                       cell_sets={elset: [np.arange(len(conn))]})
    meshio.write(path, mesh, file_format="abaqus", translate_cell_names=False)
    text = Path(path).read_text()
    Path(path).write_text(text.replace(f"TYPE={cell_type}\n", f"TYPE={ABAQUS_TYPES[cell_type]}\n"))
