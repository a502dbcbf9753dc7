"""Transient VTKHDF files (one HDF5 file per run) holding several named unstructured grids.

Layout (VTKHDF format specification, version 2.1+: "MultiBlockDataSet" and "Temporal data",
https://docs.vtk.org/en/latest/vtk_file_formats/vtkhdf_file_format/)::

    /VTKHDF                       attrs Version = (2, 2), Type = "MultiBlockDataSet"
    /VTKHDF/Assembly/<name>       soft link to /VTKHDF/<name> (the block name ParaView shows)
    /VTKHDF/<name>                attrs Type = "UnstructuredGrid", Index = block number
        NumberOfPoints, NumberOfCells, NumberOfConnectivityIds (1,)  the cells, written once
        Types, Offsets, Connectivity                                 (every step reuses them)
        Points (nt N, 3)                                             positions, step after step
        PointData/<field> (nt N[, k]), CellData/<field> (nt C[, k])
        Steps: attr NSteps, Values, PartOffsets = NumberOfParts - 1 = 0, PointOffsets = k N,
               CellOffsets = ConnectivityIdOffsets = 0, PointDataOffsets/<f> = k N,
               CellDataOffsets/<f> = k C

The cells are stored once and every step points back at them (the offsets mechanism), so the file
grows by the moving points and fields only; each array is written in one call, so the cost is
linear in the number of steps.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from meshio._common import num_nodes_per_cell as _NODES_PER_CELL
from meshio._vtk_common import meshio_to_vtk_type as _VTK_TYPES

from ..errors import ModelError, NonFiniteError
from .safe import atomic_write

VERSION = (2, 2)
"""VTKHDF version written (temporal composite data need 2.1 or later)."""


@dataclass
class Block:
    """One unstructured grid over time.

    name: the block name ParaView shows.  points: (nt, N, 3) positions [m] at every step.
    cells: [(meshio cell type, (n_b, nodes) connectivity)].
    point_data: field -> (nt, N) or (nt, N, k).  cell_data: field -> (nt, C) or (nt, C, k), cells of
    all blocks in order.
    """

    name: str
    points: np.ndarray
    cells: list[tuple[str, np.ndarray]]
    point_data: dict[str, np.ndarray] = field(default_factory=dict)
    cell_data: dict[str, np.ndarray] = field(default_factory=dict)

    @property
    def n_cells(self) -> int:
        """Number of cells over all cell blocks."""
        return sum(len(c) for _, c in self.cells)


def _check_block(block: Block, times: np.ndarray) -> None:
    """Shapes and finiteness of one block (ModelError / NonFiniteError naming the block and field)."""
    label = f"block {block.name!r}"
    if not isinstance(block.name, str) or not block.name:
        raise ModelError(f"{label}: a block name is a non-empty string")
    nt = times.size
    x = block.points
    if x.ndim != 3 or x.shape[0] != nt or x.shape[2] != 3 or x.shape[1] == 0:
        raise ModelError(f"{label}: points must have shape ({nt}, N, 3), got {x.shape}")
    n = x.shape[1]
    for cell_type, conn in block.cells:
        nodes = _NODES_PER_CELL.get(cell_type)
        if cell_type not in _VTK_TYPES or conn.ndim != 2 or conn.shape[1] != nodes:
            raise ModelError(f"{label}: cells of type {cell_type!r} must be (n, {nodes}), got {conn.shape}")
        if conn.size and (conn.min() < 0 or conn.max() >= n):
            raise ModelError(f"{label}: {cell_type} cells refer to nodes outside 0..{n - 1}")
    fields = [("points", x, n)] + [(f"point field {k!r}", a, n) for k, a in block.point_data.items()] + \
        [(f"cell field {k!r}", a, block.n_cells) for k, a in block.cell_data.items()]
    for what, a, size in fields:
        if a.shape[:2] != (nt, size) or a.ndim not in (2, 3):
            raise ModelError(f"{label}: {what} must have shape ({nt}, {size}[, k]), got {a.shape}")
        bad = np.flatnonzero(~np.isfinite(a.reshape(nt, -1)).all(axis=1))
        if bad.size:
            raise NonFiniteError(f"{label}: {what} is not finite at time step {bad[0]} (t = {times[bad[0]]:.9g} s)")


def _group_names(blocks: list[Block]) -> list[str]:
    """HDF5 group names of the blocks: '/' (the HDF5 path separator) written '%2F', repeated names
    made unique with a ' (2)', ' (3)' ... suffix (as is a block called 'Assembly', the name of the
    group that lists them)."""
    seen: dict[str, int] = {"Assembly": 1}
    out = []
    for b in blocks:
        name = b.name.replace("/", "%2F")
        seen[name] = seen.get(name, 0) + 1
        out.append(name if seen[name] == 1 else f"{name} ({seen[name]})")
    return out


def _write_grid(g, block: Block, times: np.ndarray) -> None:
    """One temporal UnstructuredGrid group (static cells, moving points)."""
    nt, n = block.points.shape[:2]
    c = block.n_cells
    conn = np.concatenate([a.ravel() for _, a in block.cells]).astype(np.int64) if c else np.zeros(0, np.int64)
    sizes = np.concatenate([np.full(len(a), a.shape[1]) for _, a in block.cells]) if c else np.zeros(0)
    types = np.concatenate([np.full(len(a), _VTK_TYPES[t]) for t, a in block.cells]) if c else np.zeros(0)
    g.attrs["Version"] = np.array(VERSION, dtype=np.int64)
    g.attrs.create("Type", np.bytes_("UnstructuredGrid"))
    g["NumberOfPoints"] = np.array([n], dtype=np.int64)
    g["NumberOfCells"] = np.array([c], dtype=np.int64)
    g["NumberOfConnectivityIds"] = np.array([conn.size], dtype=np.int64)
    g["Types"] = types.astype(np.uint8)
    g["Offsets"] = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    g["Connectivity"] = conn
    g["Points"] = block.points.reshape(nt * n, 3)
    steps = g.create_group("Steps", track_order=True)
    steps.attrs["NSteps"] = nt
    steps["Values"] = times
    zeros = np.zeros(nt, dtype=np.int64)
    steps["PartOffsets"] = zeros
    steps["NumberOfParts"] = np.ones(nt, dtype=np.int64)
    steps["PointOffsets"] = np.arange(nt, dtype=np.int64) * n
    steps["CellOffsets"] = zeros
    steps["ConnectivityIdOffsets"] = zeros
    for group, fields, size in (("PointData", block.point_data, n), ("CellData", block.cell_data, c)):
        data = g.create_group(group, track_order=True)
        offsets = steps.create_group(group[:-4] + "DataOffsets", track_order=True)
        for name, a in fields.items():
            data[name] = a.reshape(nt * size, *a.shape[2:])
            offsets[name] = np.arange(nt, dtype=np.int64) * size


def write_vtkhdf(path: str | os.PathLike, times: np.ndarray, blocks: list[Block]) -> Path:
    """Write ``blocks`` over ``times`` [s] (strictly increasing) to one transient VTKHDF file.

    A ``.vtkhdf`` suffix is added when ``path`` has none; the file is written under a temporary
    name and renamed, so an existing file is replaced only by a complete one. Returns the path.
    """
    import h5py
    t = np.asarray(times, dtype=np.float64)
    if t.ndim != 1 or t.size == 0 or not np.isfinite(t).all() or np.any(np.diff(t) <= 0):
        raise ModelError(f"times must be a non-empty, finite, strictly increasing 1-D array, got {t!r}")
    if not blocks:
        raise ModelError("the VTKHDF file would hold no block")
    for b in blocks:
        _check_block(b, t)
    p = Path(path)
    p = p if p.suffix.lower() in (".vtkhdf", ".hdf") else p.with_name(p.name + ".vtkhdf")
    p.parent.mkdir(parents=True, exist_ok=True)
    with atomic_write(p, "VTKHDF file") as tmp, h5py.File(tmp, "w", track_order=True) as f:
        _write_collection(f, t, blocks)                      # the reader iterates in creation order
    return p


def _write_collection(f, times: np.ndarray, blocks: list[Block]) -> None:
    """The /VTKHDF tree: one UnstructuredGrid group per block and the assembly naming them."""
    import h5py
    root = f.create_group("VTKHDF", track_order=True)
    root.attrs["Version"] = np.array(VERSION, dtype=np.int64)
    # a multiblock rather than a partitioned-dataset collection: ParaView and VTK read both, pyvista.read only
    # the multiblock (pyvista 0.49 refuses vtkPartitionedDataSetCollection)
    root.attrs.create("Type", np.bytes_("MultiBlockDataSet"))
    assembly = root.create_group("Assembly", track_order=True)
    for k, (name, block) in enumerate(zip(_group_names(blocks), blocks)):
        g = root.create_group(name, track_order=True)
        _write_grid(g, block, times)
        g.attrs["Index"] = k
        assembly[name] = h5py.SoftLink(f"/VTKHDF/{name}")
