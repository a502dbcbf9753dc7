"""Deformed meshes over time for ParaView: a VTU-per-step series with a PVD index, and XDMF.

Files written for ``path = "out/beam"`` (a ``.pvd``/``.xdmf``/``.vtu``/``.h5`` suffix is dropped)::

    out/beam.pvd               VTK collection: one <DataSet timestep=... file="beam/beam_00000.vtu"/> per step
    out/beam/beam_00000.vtu    one unstructured grid per step, points = current positions
    out/beam.xdmf              XDMF 3 temporal collection (meshio's TimeSeriesWriter)
    out/beam.h5                its heavy data (HDF5; with xdmf_data="XML" the data sit inline in the .xdmf)

Geometry. A VTU step holds the deformed mesh itself (points = current global node positions).
meshio's XDMF time series writes one mesh for all steps and cannot move it, so the XDMF file
holds the *reference* mesh and every step carries the point field "displacement" = positions -
points; ParaView's Warp By Vector (vector "displacement", scale factor 1) draws the deformed
shape. Both formats carry "displacement" in every step.

Fields: point fields (N,) or (N, k) per step, cell fields per cell block (n_b,) or (n_b, k),
stored as given, except fields named in ``voigt=``: 6-component symmetric tensors in flexmb's
Voigt order (xx, yy, zz, yz, xz, xy) are stored in the order each format defines for symmetric
tensors (VTK: xx, yy, zz, xy, yz, xz; XDMF Tensor6: xx, xy, xz, yy, yz, zz), because ParaView
reads every 6-component array in that order.

Interrupt safety: each .vtu and the .pvd are written to a temporary name and renamed. A
``TimeSeriesWriter`` that streams a running simulation rewrites the .pvd and .xdmf indexes after
every step (the HDF5 file is flushed), so a run that dies keeps every completed step readable;
``write_time_series``, which has the whole series, writes each index once at the end, so its cost
is linear in the number of steps (rewriting grows as the square). A new series removes the step
files of an older series with the same name.

The whole mechanism (every body, joint and contact in one file) is written as transient VTKHDF
by flexmb.io.mechanism (``Result.export_paraview(path)``).
"""
from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from xml.etree import ElementTree as ET

import meshio
import numpy as np
from meshio._common import num_nodes_per_cell as _NODES_PER_CELL
from meshio._vtk_common import meshio_to_vtk_type as _VTK_TYPES
from meshio.xdmf.common import meshio_to_xdmf_type as _XDMF_TYPES
from meshio.xdmf.common import meshio_type_to_xdmf_index as _XDMF_MIXED_INDEX
from meshio.xdmf.common import numpy_to_xdmf_dtype as _XDMF_DTYPE
from numpy.typing import ArrayLike

from ..errors import ModelError, NonFiniteError
from .safe import atomic_write
from ..fem.mesh import FEMesh

FORMATS = ("vtu", "xdmf")
_SUFFIXES = (".pvd", ".xdmf", ".vtu", ".h5")
_XDMF_COMPONENTS = (1, 2, 3, 6, 9)   # component counts meshio's XDMF writer can label
#: Voigt (xx, yy, zz, yz, xz, xy) -> VTK symmetric tensor (xx, yy, zz, xy, yz, xz) (vtkMath.h,
#: TensorFromSymmetricTensor): ``vtk = voigt[..., VTK_FROM_VOIGT]``.
VTK_FROM_VOIGT = (0, 1, 2, 5, 3, 4)
#: Voigt -> XDMF Tensor6 (xx, xy, xz, yy, yz, zz) (XDMF model, Attribute "Tensor6").
XDMF_FROM_VOIGT = (0, 5, 4, 1, 3, 2)
Blocks = list[tuple[str, np.ndarray]]
#: What ``cells`` may be: [(meshio cell type, connectivity) or meshio.CellBlock], a dict
#: cell type -> connectivity, a meshio.Mesh or an FEMesh (points then default to the mesh's).
CellsLike = Sequence | Mapping[str, ArrayLike] | meshio.Mesh | FEMesh


# ----------------------------------------------------------------------------------------------
# Input checks
# ----------------------------------------------------------------------------------------------


def _as_formats(fmt: str | Iterable[str]) -> tuple[str, ...]:
    chosen = (fmt,) if isinstance(fmt, str) else tuple(fmt)
    bad = [f for f in chosen if f not in FORMATS]
    if not chosen or bad:
        raise ModelError(f"fmt must name one or more of {FORMATS}, got {fmt!r}")
    return tuple(dict.fromkeys(chosen))


def _as_mesh(points: ArrayLike | None, cells: CellsLike) -> tuple[np.ndarray, Blocks]:
    """Reference points (N, 3) float64 and cell blocks [(meshio type, (n_b, nodes) int64)]."""
    if isinstance(cells, (FEMesh, meshio.Mesh)):
        mesh_points = np.asarray(cells.points)
        blocks = list(cells.cells.items()) if isinstance(cells, FEMesh) else [(b.type, b.data) for b in cells.cells]
        if points is None:
            points = mesh_points
        elif np.shape(points) != mesh_points.shape:
            raise ModelError(f"points has shape {np.shape(points)} but the mesh has {mesh_points.shape}")
    else:
        if points is None:
            raise ModelError("points (N, 3) are required unless cells is a meshio.Mesh or FEMesh")
        items = cells.items() if isinstance(cells, Mapping) else cells
        try:
            blocks = [(b.type, b.data) if isinstance(b, meshio.CellBlock) else tuple(b) for b in items]
        except TypeError:
            raise ModelError("cells must be a list of (cell_type, connectivity), a dict, a meshio.Mesh "
                             f"or an FEMesh, got {type(cells).__name__}") from None
    try:
        p = np.array(points, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ModelError(f"points must be an (N, 3) array of floats: {exc}") from None
    if p.ndim != 2 or p.shape[1] != 3 or len(p) == 0:
        raise ModelError(f"points must be an (N, 3) array, got shape {p.shape}")
    bad = np.flatnonzero(~np.isfinite(p).all(axis=1))
    if bad.size:
        raise ModelError(f"points: {bad.size} nodes have non-finite reference coordinates, first node {bad[0]}")
    if not blocks:
        raise ModelError("cells holds no cell block")
    return p, [_as_block(k, b, len(p)) for k, b in enumerate(blocks)]


def _as_block(k: int, block: tuple, n_points: int) -> tuple[str, np.ndarray]:
    if len(block) != 2 or not isinstance(block[0], str):
        raise ModelError(f"cell block {k} must be a (cell_type, connectivity) pair")
    cell_type, conn = block[0], np.asarray(block[1])
    if cell_type not in _VTK_TYPES or cell_type not in _NODES_PER_CELL:
        raise ModelError(f"cell block {k}: unknown meshio cell type {cell_type!r}")
    nodes = _NODES_PER_CELL[cell_type]
    if conn.dtype.kind not in "iu" or conn.ndim != 2 or conn.shape[1] != nodes or len(conn) == 0:
        raise ModelError(f"cell block {k} ({cell_type}): connectivity must be a non-empty integer array "
                         f"(n, {nodes}), got {conn.dtype} array of shape {conn.shape}")
    out = np.flatnonzero((conn < 0).any(axis=1) | (conn >= n_points).any(axis=1))
    if out.size:
        raise ModelError(f"cell block {k} ({cell_type}): {out.size} cells refer to nodes outside "
                         f"0..{n_points - 1}, first cell {out[0]}")
    return cell_type, conn.astype(np.int64)


def _check_xdmf_blocks(blocks: Blocks) -> None:
    table = _XDMF_TYPES if len(blocks) == 1 else _XDMF_MIXED_INDEX
    bad = sorted({t for t, _ in blocks if t not in table})
    if bad:
        raise ModelError(f"XDMF export cannot write cell type(s) {bad}"
                         f"{' in a mixed mesh' if len(blocks) > 1 else ''}; use fmt='vtu'")


def _check_field(label: str, data: ArrayLike, nt: int, n: int, entity: str, times: np.ndarray,
                 first_step: int, per_step: bool, components: int | None = None) -> np.ndarray:
    """``data`` as float64 (nt, n[, k]); shape errors -> ModelError, NaN/inf -> NonFiniteError.

    ``per_step``: ``data`` is one step, (n[, k]). ``components``: k must be exactly this.
    """
    lead = "" if per_step else f"{nt}, "
    try:
        a = np.asarray(data, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ModelError(f"{label}: not an array of floats ({exc})") from None
    shape = a.shape
    a = a[None] if per_step else a
    if components is not None and (a.ndim != 3 or a.shape[2] != components or a.shape[:2] != (nt, n)):
        raise ModelError(f"{label} must have shape ({lead}{n}, {components}) "
                         f"({n} {entity}s{'' if per_step else f', {nt} time steps'}), got {shape}")
    if a.ndim not in (2, 3) or a.shape[:2] != (nt, n) or (a.ndim == 3 and a.shape[2] == 0):
        raise ModelError(f"{label} must have shape ({lead}{n}) or ({lead}{n}, k) "
                         f"({n} {entity}s{'' if per_step else f', {nt} time steps'}), got {shape}")
    finite = np.isfinite(a).reshape(nt, n, -1).all(axis=2)
    steps = np.flatnonzero(~finite.all(axis=1))
    if steps.size:
        s = steps[0]
        where = np.flatnonzero(~finite[s])
        raise NonFiniteError(f"{label} is not finite at time step {first_step + s} (t = {times[s]:.9g}): "
                             f"{where.size} {entity}s, first {entity} {where[0]}")
    return a


def _check_kind(label: str, name: str, a: np.ndarray, xdmf: bool, voigt: frozenset[str]) -> None:
    """Voigt fields have 6 components; XDMF takes 1, 2, 3, 6 (Voigt only) or 9 components."""
    k = a.shape[2] if a.ndim == 3 else 1
    if name in voigt and k != 6:
        raise ModelError(f"{label} is named in voigt= but has {k} components; a Voigt field has 6 "
                         f"(xx, yy, zz, yz, xz, xy)")
    if xdmf and k not in _XDMF_COMPONENTS:
        raise ModelError(f"{label} has {k} components; XDMF export takes {_XDMF_COMPONENTS} "
                         f"(split the field or use fmt='vtu')")
    if xdmf and k == 6 and name not in voigt:
        raise ModelError(f"{label} has 6 components: XDMF stores them as a symmetric tensor "
                         f"(Tensor6); name it in voigt= if it is a Voigt tensor (xx, yy, zz, yz, xz, xy), "
                         f"else split it or use fmt='vtu'")


def _check_times(times: ArrayLike) -> np.ndarray:
    """(nt,) finite, strictly increasing times as float64."""
    try:
        t = np.asarray(times, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ModelError(f"times must be an array of floats ({exc})") from None
    if t.ndim != 1 or t.size == 0:
        raise ModelError(f"times must be a non-empty 1-D array, got shape {t.shape}")
    bad = np.flatnonzero(~np.isfinite(t))
    if bad.size:
        raise NonFiniteError(f"times: time step {bad[0]} has time {t[bad[0]]}")
    back = np.flatnonzero(np.diff(t) <= 0)
    if back.size:
        i = back[0]
        raise ModelError(f"times must increase strictly: t[{i + 1}] = {t[i + 1]:.9g} follows "
                         f"t[{i}] = {t[i]:.9g}")
    return t


def _cell_array(name: str, data, sizes: list[int], per_step: bool) -> ArrayLike:
    """Cell data given per block (list) or over all cells (array) -> one array over all cells."""
    if isinstance(data, np.ndarray):
        return data
    parts = list(data)
    if len(parts) != len(sizes):
        raise ModelError(f"cell_data[{name!r}] has {len(parts)} blocks, the mesh has {len(sizes)}")
    try:
        return np.concatenate([np.asarray(p, dtype=np.float64) for p in parts], axis=0 if per_step else 1)
    except ValueError:
        shapes = [np.shape(p) for p in parts]
        raise ModelError(f"cell_data[{name!r}]: per-block arrays {shapes} do not fit blocks of "
                         f"{sizes} cells with one component count") from None


# ----------------------------------------------------------------------------------------------
# XDMF through meshio
# ----------------------------------------------------------------------------------------------
class _XdmfWriter(meshio.xdmf.TimeSeriesWriter):
    """meshio's XDMF time series writer with the .h5 beside the .xdmf (meshio opens it in the
    working directory), mixed meshes with lines (meshio 5.3 fails on them), and ``flush()``
    that makes the files on disk a complete, readable series."""

    def __init__(self, path: Path, data_format: str):
        super().__init__(path, data_format=data_format)
        if data_format == "HDF":
            import h5py
            self.h5_filename = str(path.with_suffix(".h5"))
            self.h5_file = h5py.File(self.h5_filename, "w")

    def cells(self, cells: Blocks, grid: ET.Element) -> None:
        if len(cells) == 1:
            return super().cells(cells, grid)
        # Mixed topology: per cell [XDMF type index, (node count of a polyline/polyvertex), node ids]
        parts = []
        for cell_type, conn in cells:
            counted = cell_type in ("line", "vertex")
            head = [_XDMF_MIXED_INDEX[cell_type]] + ([conn.shape[1]] if counted else [])
            parts.append(np.hstack([np.tile(np.asarray(head, conn.dtype), (len(conn), 1)), conn]).ravel())
        data = np.concatenate(parts)
        topo = ET.SubElement(grid, "Topology", TopologyType="Mixed",
                             NumberOfElements=str(sum(len(c) for _, c in cells)))
        dt, prec = _XDMF_DTYPE[data.dtype.name]
        item = ET.SubElement(topo, "DataItem", DataType=dt, Dimensions=str(data.size),
                             Format=self.data_format, Precision=prec)
        item.text = self.numpy_to_xml_string(data)

    def flush(self) -> None:
        if self.data_format == "HDF":
            self.h5_file.flush()
        with atomic_write(self.filename, "XDMF index", sync=False) as tmp:
            ET.ElementTree(self.xdmf_file).write(tmp)

    def close(self) -> None:
        self.flush()
        if self.data_format == "HDF":
            self.h5_file.close()


# ----------------------------------------------------------------------------------------------
# Writers
# ----------------------------------------------------------------------------------------------
def _paths(path: str | os.PathLike) -> tuple[Path, str]:
    p = Path(path)
    if p.suffix.lower() in _SUFFIXES:
        p = p.with_suffix("")
    if not p.name:
        raise ModelError(f"path {str(path)!r} names no file")
    return p.parent, p.name


class TimeSeriesWriter:
    """Write a deformed-mesh series step by step (context manager).

    Parameters
    ----------
    path : "dir/stem" (a .pvd/.xdmf suffix is dropped); files as in the module docstring.
    points : (N, 3) reference node positions [m]; may be None when ``cells`` is a mesh.
    cells : [(meshio cell type, (n_b, nodes) connectivity)], a dict type -> connectivity,
        a ``meshio.Mesh`` or an ``FEMesh``.
    fmt : "vtu" (VTU per step + PVD), "xdmf" (XDMF + HDF5) or both.
    xdmf_data : "HDF" (the data in an HDF5 file beside the .xdmf), "XML" (data inline in the .xdmf: small
        meshes only, the index is rewritten every step) or "auto" (HDF; h5py is a dependency of flexmb).
    voigt : names of 6-component symmetric-tensor fields given in Voigt order (xx, yy, zz, yz,
        xz, xy), e.g. ("stress",). They are stored in each format's tensor order
        (``VTK_FROM_VOIGT``, ``XDMF_FROM_VOIGT``) so that ParaView's component names and tensor
        filters see the right tensor. Other fields are stored as given; XDMF refuses other
        6-component fields (it would read them as tensors).

    index_every_step : rewrite the .pvd and .xdmf after every ``write`` (default), so that an
        interrupted run keeps the steps written so far; False writes them once, at ``close``
        (cost linear in the number of steps). ``close`` (or leaving the ``with`` block) writes the
        indexes and closes the HDF5 file.
    """

    def __init__(self, path: str | os.PathLike, points: ArrayLike | None, cells: CellsLike,
                 fmt: str | Iterable[str] = FORMATS, *, xdmf_data: str = "auto",
                 voigt: Iterable[str] = (), index_every_step: bool = True):
        self.formats = _as_formats(fmt)
        self.index_every_step = bool(index_every_step)
        self.voigt = _as_names(voigt)
        self.points, self.blocks = _as_mesh(points, cells)
        self.sizes = [len(c) for _, c in self.blocks]
        self.n_steps = 0
        self.times: list[float] = []
        self.files: dict[str, Path] = {}
        self._closed = False
        self._xdmf: _XdmfWriter | None = None
        base, self.stem = _paths(path)
        if "xdmf" in self.formats:
            _check_xdmf_blocks(self.blocks)
            if xdmf_data not in ("auto", "HDF", "XML"):
                raise ModelError(f"xdmf_data must be 'auto', 'HDF' or 'XML', got {xdmf_data!r}")
            data_format = "HDF" if xdmf_data == "auto" else xdmf_data
        base.mkdir(parents=True, exist_ok=True)
        if "vtu" in self.formats:
            self.files["pvd"] = base / f"{self.stem}.pvd"
            self.files["vtu"] = base / self.stem
            self.files["vtu"].mkdir(exist_ok=True)
            for old in self.files["vtu"].glob(f"{self.stem}_[0-9][0-9][0-9][0-9][0-9]*.vtu*"):
                old.unlink()
            self._write_pvd()
        if "xdmf" in self.formats:
            self.files["xdmf"] = base / f"{self.stem}.xdmf"
            if data_format == "HDF":
                self.files["h5"] = base / f"{self.stem}.h5"
            self._xdmf = _XdmfWriter(self.files["xdmf"], data_format)
            self._xdmf.write_points_cells(self.points, self.blocks)
            self._xdmf.flush()

    def __enter__(self) -> TimeSeriesWriter:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def write(self, t: float, positions: ArrayLike, point_data: Mapping[str, ArrayLike] | None = None,
              cell_data: Mapping[str, ArrayLike | Sequence[ArrayLike]] | None = None) -> int:
        """Append the step at time ``t`` [s] and return its index.

        positions : (N, 3) current global node positions [m].
        point_data : name -> (N,) or (N, k) ("displacement" is added, not accepted).
        cell_data : name -> list of (n_b,) or (n_b, k) arrays, one per cell block, or one
            array over all cells in block order.
        """
        if self._closed:
            raise ModelError(f"TimeSeriesWriter {self.stem!r} is closed")
        step = self.n_steps
        try:
            times = np.array([t], dtype=np.float64)
        except (TypeError, ValueError):
            times = np.zeros(0)
        if times.shape != (1,):
            raise ModelError(f"time of step {step} must be a number, got {t!r}")
        if not np.isfinite(times[0]):
            raise NonFiniteError(f"time of step {step} is {t!r}, not a finite number")
        if self.times and times[0] <= self.times[-1]:
            raise ModelError(f"time of step {step}, t = {times[0]:.9g}, does not follow the last "
                             f"written time {self.times[-1]:.9g}")
        args = (times, step, True)
        x = _check_field("positions", positions, 1, len(self.points), "node", *args, components=3)[0]
        rules = ("xdmf" in self.formats, self.voigt)
        pd = {k: v[0] for k, v in _point_fields(point_data, len(self.points), *args, *rules).items()}
        cd = {k: v[0] for k, v in _cell_fields(cell_data, self.sizes, *args, *rules).items()}
        self._write(float(times[0]), x, pd, cd)
        return step

    def _ordered(self, fields: dict[str, np.ndarray], order: tuple[int, ...]) -> dict[str, np.ndarray]:
        """Voigt fields permuted to a format's tensor order; the others as they are."""
        return {k: v[:, order] if k in self.voigt else v for k, v in fields.items()}

    def _write(self, t: float, x: np.ndarray, pd: dict[str, np.ndarray], cd: dict[str, np.ndarray]) -> None:
        """One checked step: x (N, 3); pd name -> (N[, k]); cd name -> (n_cells[, k])."""
        pd = {"displacement": x - self.points, **pd}
        cuts = np.cumsum(self.sizes)[:-1]
        if "vtu" in self.formats:
            name = f"{self.stem}_{self.n_steps:05d}.vtu"
            target = self.files["vtu"] / name
            cell_data = {k: np.split(v, cuts) for k, v in self._ordered(cd, VTK_FROM_VOIGT).items()}
            mesh = meshio.Mesh(x, self.blocks, point_data=self._ordered(pd, VTK_FROM_VOIGT), cell_data=cell_data)
            with atomic_write(target, "VTU step", sync=False) as tmp:
                meshio.write(tmp, mesh, file_format="vtu")
        if self._xdmf is not None:
            cell_data = {k: np.split(v, cuts) for k, v in self._ordered(cd, XDMF_FROM_VOIGT).items()}
            self._xdmf.write_data(t, point_data=self._ordered(pd, XDMF_FROM_VOIGT), cell_data=cell_data)
            if self.index_every_step:
                self._xdmf.flush()
        self.times.append(t)
        self.n_steps += 1
        if "vtu" in self.formats and self.index_every_step:
            self._write_pvd()

    def _write_pvd(self) -> None:
        root = ET.Element("VTKFile", type="Collection", version="0.1", byte_order="LittleEndian")
        coll = ET.SubElement(root, "Collection")
        for k, t in enumerate(self.times):
            ET.SubElement(coll, "DataSet", timestep=repr(t), group="", part="0",
                          file=f"{self.stem}/{self.stem}_{k:05d}.vtu")
        ET.indent(root)
        with atomic_write(self.files["pvd"], "PVD index", sync=False) as tmp:
            ET.ElementTree(root).write(tmp, encoding="utf-8", xml_declaration=True)

    def close(self) -> None:
        """Write the indexes a last time and close the HDF5 file (idempotent)."""
        if not self._closed and "vtu" in self.formats:
            self._write_pvd()
        if not self._closed and self._xdmf is not None:
            self._xdmf.close()
        self._closed = True


def _as_names(voigt: Iterable[str]) -> frozenset[str]:
    names = (voigt,) if isinstance(voigt, str) else tuple(voigt)
    if not all(isinstance(n, str) and n for n in names):
        raise ModelError(f"voigt must be a list of field names, got {voigt!r}")
    return frozenset(names)


def _point_fields(point_data, n: int, times, first: int, per_step: bool, xdmf: bool,
                  voigt: frozenset[str]) -> dict[str, np.ndarray]:
    """Checked point fields name -> (nt, n[, k]) (``per_step``: given per step, (n[, k]))."""
    out = {}
    for name, data in (point_data or {}).items():
        if not isinstance(name, str) or not name or name == "displacement":
            raise ModelError(f"point_data name {name!r} is not allowed ('displacement' is written "
                             f"by the exporter, names are non-empty strings)")
        label = f"point_data[{name!r}]"
        out[name] = _check_field(label, data, len(times), n, "node", times, first, per_step)
        _check_kind(label, name, out[name], xdmf, voigt)
    return out


def _cell_fields(cell_data, sizes: list[int], times, first: int, per_step: bool, xdmf: bool,
                 voigt: frozenset[str]) -> dict[str, np.ndarray]:
    """Checked cell fields name -> (nt, n_cells[, k]), blocks concatenated in order."""
    out = {}
    for name, data in (cell_data or {}).items():
        if not isinstance(name, str) or not name:
            raise ModelError(f"cell_data name {name!r} must be a non-empty string")
        label = f"cell_data[{name!r}]"
        out[name] = _check_field(label, _cell_array(name, data, sizes, per_step), len(times), sum(sizes),
                                 "cell", times, first, per_step)
        _check_kind(label, name, out[name], xdmf, voigt)
    return out


def write_time_series(path: str | os.PathLike, points: ArrayLike | None, cells: CellsLike, times: ArrayLike,
                      positions: ArrayLike, point_data: Mapping[str, ArrayLike] | None = None,
                      cell_data: Mapping[str, ArrayLike | Sequence[ArrayLike]] | None = None,
                      fmt: str | Iterable[str] = FORMATS, *, xdmf_data: str = "auto",
                      voigt: Iterable[str] = ()) -> dict[str, Path]:
    """Write a whole deformed-mesh series for ParaView; return the files written.

    times : (nt,) strictly increasing [s].  positions : (nt, N, 3) global node positions [m].
    point_data : name -> (nt, N) or (nt, N, k).  cell_data : name -> list of (nt, n_b[, k]),
    one per cell block, or one (nt, n_cells[, k]) array over all cells in block order.
    Other arguments as in ``TimeSeriesWriter``. Every array is checked before a file is written.

    Returns {"pvd": .pvd file, "vtu": folder of .vtu steps, "xdmf": .xdmf file, "h5": .h5 file}
    for the formats written ("h5" only with HDF5 data).
    """
    formats = _as_formats(fmt)
    ref, blocks = _as_mesh(points, cells)
    sizes = [len(c) for _, c in blocks]
    t = _check_times(times)
    args = (t, 0, False)
    x = _check_field("positions", positions, len(t), len(ref), "node", *args, components=3)
    rules = ("xdmf" in formats, _as_names(voigt))
    pd = _point_fields(point_data, len(ref), *args, *rules)
    cd = _cell_fields(cell_data, sizes, *args, *rules)
    with TimeSeriesWriter(path, ref, blocks, formats, xdmf_data=xdmf_data, voigt=voigt, index_every_step=False) as w:
        for k in range(len(t)):
            w._write(float(t[k]), x[k], {n: a[k] for n, a in pd.items()}, {n: a[k] for n, a in cd.items()})
    return dict(w.files)
