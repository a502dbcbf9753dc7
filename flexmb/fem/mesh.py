"""Mesh bridge: meshio files or plain arrays -> a validated ``FEMesh``.

Formats, the cell-type mapping, how named sets are resolved and the validity
checks with their formulas are described in docs/theory-mesh.md. Coordinates
are taken as they are, in metres (no unit conversion). Node and element ids in
messages are 0-based indices: nodes in the order of the input point array (the
file's node order), elements in the order of ``cells[cell_type]``.
"""
from __future__ import annotations

import warnings
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from unittest import mock

import meshio
import numpy as np
from meshio._helpers import reader_map as _MESHIO_READERS
from meshio.abaqus import _abaqus as _meshio_abaqus
from numpy.typing import ArrayLike
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components
from scipy.spatial import cKDTree

from flexmb.errors import MeshError, MeshWarning
from flexmb.fem import selection
from flexmb.fem.reference_cells import REFERENCE_CELLS, signed_measure

#: Cell types flexmb turns into elements (meshio names) -> element kind.
SUPPORTED_CELLS: Mapping[str, str] = MappingProxyType({
    "line": "beam", "line3": "beam",
    "triangle": "shell", "quad": "shell",
    "tetra": "solid", "tetra10": "solid", "hexahedron": "solid", "hexahedron20": "solid",
})

_DUPLICATE_RTOL = 1e-9    # coincidence radius / bounding-box diagonal (docs/theory-mesh.md §4.3)
_DEGENERATE_RTOL = 1e-10  # smallest accepted measure / h_e**dim (docs/theory-mesh.md §4.5)
_MAX_LISTED = 10          # ids listed in one error message
_CHUNK = 65536            # elements per vectorized Jacobian evaluation
_GMSH_DIM_NAMES = ("Point", "Curve", "Surface", "Volume")

#: Abaqus element types meshio's reader does not know, as Gmsh writes them in its .inp export
#: (2-D continuum faces of quadratic solid meshes) -> meshio cell type (docs/theory-mesh.md §2).
ABAQUS_EXTRA_TYPES: Mapping[str, str] = MappingProxyType({
    "CPS6": "triangle6", "CPE6": "triangle6", "CPS8": "quad8", "CPE8": "quad8",
    "CPE3": "triangle", "CPE4": "quad",
})

#: Abaqus solid formulations flexmb does not reproduce: meshio reads them as the fully
#: integrated element of the same node count. Type -> (Abaqus formulation, consequence).
ABAQUS_FORMULATION_TRAPS: Mapping[str, tuple[str, str]] = MappingProxyType({
    **dict.fromkeys(("C3D8R", "C3D8RH"), (
        "reduced integration with hourglass control",
        "a fully integrated 8-node hexahedron locks in bending: a cantilever one element thick "
        "has a first frequency some 20 % above beam theory and C3D20")),
    **dict.fromkeys(("C3D8I", "C3D8IH"), (
        "incompatible modes",
        "a fully integrated 8-node hexahedron has no incompatible modes and locks in bending: "
        "coarse bending models come out too stiff")),
    **dict.fromkeys(("C3D20R", "C3D20RH"), (
        "reduced (2x2x2) integration",
        "flexmb integrates the 20-node hexahedron with 3x3x3 points: slightly stiffer")),
})




# ----------------------------------------------------------------------------------------------
# Input checks
# ----------------------------------------------------------------------------------------------
def _listing(values: ArrayLike, total: int | None = None) -> str:
    """The first ``_MAX_LISTED`` values joined by commas, then '... and N more'.

    ``total`` is the full count when ``values`` was already cut short.
    """
    items = [str(v) for v in values[:_MAX_LISTED]]
    extra = (len(values) if total is None else total) - len(items)
    return ", ".join(items) + (f" ... and {extra} more" if extra > 0 else "")


def _as_points(points: ArrayLike) -> np.ndarray:
    """(N, 3) float64 coordinates [m]; 2D points padded with z = 0; non-finite refused."""
    try:
        p = np.array(points, dtype=np.float64)  # a copy: the mesh makes it read-only
    except (TypeError, ValueError) as exc:
        raise MeshError(f"points must be an (N, 2) or (N, 3) array of floats: {exc}") from None
    if p.ndim != 2 or p.shape[1] not in (2, 3) or p.shape[0] == 0:
        raise MeshError(f"points must be an (N, 2) or (N, 3) array, got shape {p.shape}")
    if p.shape[1] == 2:
        p = np.column_stack([p, np.zeros(len(p))])
    bad = np.flatnonzero(~np.all(np.isfinite(p), axis=1))
    if bad.size:
        raise MeshError(f"{bad.size} nodes have non-finite coordinates: {_listing(bad)}")
    return p


def _as_ids(values: ArrayLike, n: int, what: str) -> np.ndarray:
    """Sorted unique int64 ids in [0, n); anything else is refused naming ``what``."""
    a = np.asarray(values).ravel()
    if a.size == 0:
        return np.zeros(0, dtype=np.int64)
    if not np.issubdtype(a.dtype, np.integer):
        raise MeshError(f"{what}: ids must be integers, got dtype {a.dtype}")
    a = a.astype(np.int64)
    bad = np.unique(a[(a < 0) | (a >= n)])
    if bad.size:
        raise MeshError(f"{what}: ids out of range 0..{n - 1}: {_listing(bad)}")
    return np.unique(a)


def _as_cells(cells: Mapping[str, ArrayLike] | None, n_points: int) -> dict[str, np.ndarray]:
    """Connectivity arrays checked for type, shape and node-id range."""
    cells = dict(cells or {})
    unsupported = [t for t in cells if t not in SUPPORTED_CELLS]
    if unsupported:
        counts = ", ".join(f"{t} ({len(np.asarray(cells[t]))} cells)" for t in unsupported)
        raise MeshError(f"unsupported cell types: {counts}; supported: {', '.join(SUPPORTED_CELLS)}")
    out = {}
    for cell_type, conn in cells.items():
        a = np.asarray(conn)
        if a.size == 0:
            continue
        n_per = len(REFERENCE_CELLS[cell_type].nodes)
        if a.ndim != 2 or a.shape[1] != n_per or not np.issubdtype(a.dtype, np.integer):
            raise MeshError(f"{cell_type} connectivity must be an integer (n, {n_per}) array, "
                            f"got {a.dtype} {a.shape}")
        a = a.astype(np.int64)
        bad = np.flatnonzero(np.any((a < 0) | (a >= n_points), axis=1))
        if bad.size:
            raise MeshError(f"{bad.size} {cell_type} cells reference node ids outside 0..{n_points - 1}: "
                            + _listing([f"cell {e} -> {a[e].tolist()}" for e in bad[:_MAX_LISTED]],
                                       bad.size))
        out[cell_type] = a
    if not out:
        raise MeshError("the mesh has no cells of a supported type "
                        f"({', '.join(SUPPORTED_CELLS)})")
    return out


def _as_cell_sets(cell_sets: Mapping | None, cells: dict[str, np.ndarray]) -> dict:
    """Cell sets checked: known cell types, indices in range, sorted unique."""
    out = {}
    for name, parts in (cell_sets or {}).items():
        if not isinstance(parts, Mapping):
            raise MeshError(f"cell set {name!r} must map cell type -> cell indices")
        checked = {}
        for cell_type, idx in parts.items():
            if cell_type not in cells:
                raise MeshError(f"cell set {name!r} refers to cell type {cell_type!r}, which the mesh "
                                f"does not have (types: {', '.join(cells)})")
            ids = _as_ids(idx, len(cells[cell_type]), f"cell set {name!r} ({cell_type})")
            if ids.size:
                checked[cell_type] = ids
        out[str(name)] = checked
    return out


def _repeated_node_cells(cell_type: str, conn: np.ndarray, source: np.ndarray) -> None:
    """Refuse cells that use the same node twice."""
    s = np.sort(conn, axis=1)
    bad = np.flatnonzero(np.any(s[:, 1:] == s[:, :-1], axis=1))
    if bad.size:
        raise MeshError(f"{bad.size} {cell_type} cells repeat a node: " + _listing(
            [f"cell {e} (nodes {source[conn[e]].tolist()})" for e in bad[:_MAX_LISTED]], bad.size))


_BAD_GEOMETRY = {
    "solid": "degenerate or inverted (Jacobian determinant <= 0)",
    "shell": "degenerate (zero area) or folded (area Jacobian along the element normal <= 0)",
    "beam": "degenerate (zero length) or folded (dx/dxi along the chord <= 0)",
}


def _check_geometry(cell_type: str, conn: np.ndarray, points: np.ndarray) -> None:
    """Refuse elements whose Jacobian measure is <= rtol * h_e**dim anywhere (docs/theory-mesh.md §4.5)."""
    measure, size = np.empty(len(conn)), np.empty(len(conn))
    for start in range(0, len(conn), _CHUNK):  # chunks bound the (E, m, 3, d) temporaries
        x = points[conn[start:start + _CHUNK]]
        measure[start:start + len(x)] = signed_measure(cell_type, x).min(axis=1)
        size[start:start + len(x)] = np.ptp(x, axis=1).max(axis=1)
    dim = REFERENCE_CELLS[cell_type].nodes.shape[1]
    bad = np.flatnonzero(measure <= _DEGENERATE_RTOL * size**dim)
    if bad.size:
        raise MeshError(
            f"{bad.size} {cell_type} elements are {_BAD_GEOMETRY[SUPPORTED_CELLS[cell_type]]}: "
            + _listing([f"element {e} (min {measure[e]:.3g})" for e in bad[:_MAX_LISTED]], bad.size))


def _renumber(new_of_old: np.ndarray, cells: dict, node_sets: dict) -> tuple[dict, dict]:
    """Apply a node renumbering (-1 = removed) to connectivity and node sets."""
    cells = {t: new_of_old[c] for t, c in cells.items()}
    sets = {}
    for name, ids in node_sets.items():
        new = new_of_old[ids]
        sets[name] = np.unique(new[new >= 0])
    return cells, sets


def _merge_map(points: np.ndarray, pairs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Keep mask and old -> new ids merging each coincidence cluster into its lowest id."""
    n = len(points)
    graph = coo_matrix((np.ones(len(pairs)), (pairs[:, 0], pairs[:, 1])), shape=(n, n))
    _, labels = connected_components(graph, directed=False)
    lowest = np.full(labels.max() + 1, n)
    np.minimum.at(lowest, labels, np.arange(n))
    target = lowest[labels]
    keep = target == np.arange(n)
    return keep, (np.cumsum(keep) - 1)[target]


# ----------------------------------------------------------------------------------------------
# Named sets
# ----------------------------------------------------------------------------------------------
class SetTable(dict):
    """Named sets (name -> ids) looked up as Abaqus does: case-insensitively.

    ``table["root"]``, ``"root" in table`` and ``table.get("root")`` find a set stored as
    ``"ROOT"``. Two stored names that differ only in case make a lookup of either one
    ambiguous: it raises a ``MeshError`` naming both (docs/theory-mesh.md §5).
    """

    def __init__(self, kind: str, items: Mapping | None = None):
        super().__init__(items or {})
        self.kind = kind

    def resolve(self, name: object) -> str | None:
        """The stored name ``name`` refers to, or None; ambiguous names raise ``MeshError``."""
        if not isinstance(name, str):
            return None
        folded = name.casefold()
        matches = sorted(k for k in dict.keys(self) if k.casefold() == folded)
        if len(matches) > 1:
            raise MeshError(f"{self.kind} {name!r} is ambiguous: the mesh has {self.kind}s "
                            f"{', '.join(map(repr, matches))}, which differ only in case (set names are "
                            "case-insensitive, as in Abaqus); rename one of them")
        return matches[0] if matches else None

    def __contains__(self, name: object) -> bool:
        return self.resolve(name) is not None

    def __getitem__(self, name: str):
        key = self.resolve(name)
        if key is None:
            raise KeyError(name)
        return dict.__getitem__(self, key)

    def get(self, name: str, default=None):
        key = self.resolve(name)
        return default if key is None else dict.__getitem__(self, key)


# ----------------------------------------------------------------------------------------------
# FEMesh
# ----------------------------------------------------------------------------------------------
class FEMesh:
    """A validated finite-element mesh: nodes [m], cells by meshio type, named sets.

    Dropping orphans or merging duplicates renumbers the nodes; ``source_ids[i]`` is
    the index in the input ``points`` of node ``i``.

    Parameters
    ----------
    points : array_like
        Node coordinates [m], shape (N, 2) or (N, 3); 2D points get z = 0.
    cells : mapping
        Cell type (keys of ``SUPPORTED_CELLS``) -> (n_e, nodes per cell) node ids, meshio/VTK order.
    cell_sets : mapping, optional
        Name -> {cell type -> indices into ``cells[type]``}.
    node_sets : mapping, optional
        Name -> node ids.
    strict : bool
        Refuse orphan nodes instead of dropping them with a ``MeshWarning``.
    merge_duplicates : bool
        Merge coincident nodes instead of refusing them.
    """

    def __init__(self, points: ArrayLike, cells: Mapping[str, ArrayLike],
                 cell_sets: Mapping[str, Mapping[str, ArrayLike]] | None = None,
                 node_sets: Mapping[str, ArrayLike] | None = None, *,
                 strict: bool = False, merge_duplicates: bool = False):
        points = _as_points(points)
        conn = _as_cells(cells, len(points))
        cell_sets = _as_cell_sets(cell_sets, conn)
        sets = {str(k): _as_ids(v, len(points), f"node set {k!r}") for k, v in (node_sets or {}).items()}
        source = np.arange(len(points), dtype=np.int64)
        points, conn, sets, source = self._drop_orphans(points, conn, sets, source, strict)
        points, conn, sets, source = self._merge_duplicates(points, conn, sets, source, merge_duplicates)
        for cell_type, c in conn.items():
            _repeated_node_cells(cell_type, c, source)
            _check_geometry(cell_type, c, points)
        set_ids = [ids for parts in cell_sets.values() for ids in parts.values()]
        for a in (points, source, *conn.values(), *sets.values(), *set_ids):
            a.flags.writeable = False
        self.points: np.ndarray = points
        self.cells: dict[str, np.ndarray] = conn
        self.cell_sets: SetTable = SetTable("cell set", cell_sets)
        self.node_sets: SetTable = SetTable("node set", sets)
        self.source_ids: np.ndarray = source

    @staticmethod
    def _drop_orphans(points, conn, sets, source, strict):
        """Remove nodes used by no cell (warning), or refuse them when ``strict``."""
        used = np.zeros(len(points), dtype=bool)
        for c in conn.values():
            used[c.ravel()] = True
        orphans = np.flatnonzero(~used)
        if orphans.size == 0:
            return points, conn, sets, source
        if strict:
            raise MeshError(f"{orphans.size} orphan nodes (used by no cell): {_listing(orphans)}")
        touched = [name for name, ids in sets.items() if np.any(~used[ids])]
        note = f"; removed from node sets {', '.join(touched)}" if touched else ""
        warnings.warn(f"dropped {orphans.size} orphan nodes (used by no cell): {_listing(orphans)}"
                      f"{note}", MeshWarning, stacklevel=3)
        conn, sets = _renumber(np.where(used, np.cumsum(used) - 1, -1), conn, sets)
        return points[used], conn, sets, source[used]

    @staticmethod
    def _merge_duplicates(points, conn, sets, source, merge):
        """Refuse nodes coincident within 1e-9 * bbox diagonal, or merge them."""
        tol = _DUPLICATE_RTOL * float(np.linalg.norm(np.ptp(points, axis=0)))
        pairs = cKDTree(points).query_pairs(r=tol, output_type="ndarray")  # rows (i, j), i < j
        if pairs.size == 0:
            return points, conn, sets, source
        if not merge:
            pairs = pairs[np.lexsort((pairs[:, 1], pairs[:, 0]))]
            named = [f"{source[i]} & {source[j]}" for i, j in pairs[:_MAX_LISTED]]
            raise MeshError(f"{len(pairs)} pairs of duplicate nodes (within {tol:.3g} m): "
                            + _listing(named, len(pairs))
                            + "; pass merge_duplicates=True to merge them")
        keep, new_of_old = _merge_map(points, pairs)
        warnings.warn(f"merged {np.count_nonzero(~keep)} duplicate nodes into their lowest-id twin",
                      MeshWarning, stacklevel=3)
        conn, sets = _renumber(new_of_old, conn, sets)
        return points[keep], conn, sets, source[keep]

    # -- queries ---------------------------------------------------------------------------
    @property
    def n_nodes(self) -> int:
        """Number of nodes."""
        return len(self.points)

    def bounding_box(self) -> np.ndarray:
        """(2, 3) array: lowest and highest node coordinates [m]."""
        return np.array([self.points.min(axis=0), self.points.max(axis=0)])

    @staticmethod
    def kind(cell_type: str) -> str:
        """Element kind of a cell type: 'beam', 'shell' or 'solid'."""
        if cell_type not in SUPPORTED_CELLS:
            raise MeshError(f"unsupported cell type {cell_type!r}; supported: {', '.join(SUPPORTED_CELLS)}")
        return SUPPORTED_CELLS[cell_type]

    def node_set(self, name: str) -> np.ndarray:
        """Sorted node ids of a named node set (name case-insensitive, as in Abaqus)."""
        if name not in self.node_sets:
            raise MeshError(f"no node set {name!r}; available node sets: "
                            f"{', '.join(sorted(self.node_sets)) or 'none'}")
        return self.node_sets[name]

    def cell_set(self, name: str) -> dict[str, np.ndarray]:
        """Cell type -> sorted indices into ``cells[type]`` of a named cell set (name case-insensitive)."""
        if name not in self.cell_sets:
            hint = f" ({name!r} is a node set)" if name in self.node_sets else ""
            raise MeshError(f"no cell set {name!r}{hint}; available cell sets: "
                            f"{', '.join(sorted(self.cell_sets)) or 'none'}")
        return dict(self.cell_sets[name])

    def add_node_set(self, name: str, ids: ArrayLike, replace: bool = False) -> np.ndarray:
        """Store node ids under ``name`` (sorted, unique) and return them."""
        if not isinstance(name, str) or not name:
            raise MeshError(f"node set name must be a non-empty string, got {name!r}")
        existing = self.node_sets.resolve(name)
        if existing is not None and not replace:
            raise MeshError(f"node set {name!r} exists already (as {existing!r}; set names are "
                            "case-insensitive); pass replace=True to overwrite it")
        checked = _as_ids(ids, self.n_nodes, f"node set {name!r}")
        checked.flags.writeable = False
        if existing is not None:
            del self.node_sets[existing]
        self.node_sets[name] = checked
        return checked

    # -- geometric selection (flexmb/fem/selection.py) --------------------------------------
    def select_box(self, lo: ArrayLike, hi: ArrayLike, tol: float | None = None,
                   allow_empty: bool = False) -> np.ndarray:
        """Node ids inside the axis-aligned box [lo, hi] grown by ``tol`` [m]."""
        return selection.in_box(self.points, lo, hi, tol, allow_empty)

    def select_plane(self, point: ArrayLike, normal: ArrayLike, tol: float | None = None,
                     allow_empty: bool = False) -> np.ndarray:
        """Node ids within ``tol`` [m] of the plane through ``point`` with ``normal``."""
        return selection.on_plane(self.points, point, normal, tol, allow_empty)

    def select_cylinder(self, point: ArrayLike, axis: ArrayLike, radius: float,
                        tol: float | None = None, inside: bool = False,
                        allow_empty: bool = False) -> np.ndarray:
        """Node ids on (or with ``inside``, within) a cylinder of ``radius`` [m] about an axis."""
        return selection.on_cylinder(self.points, point, axis, radius, tol, inside, allow_empty)

    def nearest_node(self, point: ArrayLike) -> int:
        """Id of the node closest to ``point`` [m]."""
        return selection.nearest(self.points, point)

    def __repr__(self) -> str:
        cells = ", ".join(f"{t}: {len(c)}" for t, c in self.cells.items())
        return (f"FEMesh({self.n_nodes} nodes; {cells}; cell sets: {', '.join(self.cell_sets) or '-'};"
                f" node sets: {', '.join(self.node_sets) or '-'})")


# ----------------------------------------------------------------------------------------------
# meshio -> FEMesh
# ----------------------------------------------------------------------------------------------
def read_mesh(path: str | Path, *, ignore_unsupported: bool = False, strict: bool = False,
              merge_duplicates: bool = False, element_dims: tuple[int, ...] | None = None,
              file_format: str | None = None) -> FEMesh:
    """Read any meshio-readable mesh file into a validated ``FEMesh`` (coordinates as stored, m).

    ``element_dims`` chooses which topological dimensions become elements; by default only
    the highest one present (lower-dimensional cells then only define named sets).
    ``file_format`` is a meshio format name ("gmsh", "abaqus", "vtu" ...); by default it
    follows from the file extension. See ``from_meshio`` for the other keywords and
    docs/theory-mesh.md for the rules.
    """
    path = Path(path)
    raw, abaqus_types = _read_raw(path, file_format)
    _warn_formulation_traps(path, abaqus_types)
    try:
        return from_meshio(raw, ignore_unsupported=ignore_unsupported, strict=strict,
                           merge_duplicates=merge_duplicates, element_dims=element_dims)
    except MeshError as exc:
        read_as = ", ".join(f"{t} (read as {_abaqus_cell_type(t)})" for t in abaqus_types)
        note = f"; Abaqus element types in the file: {read_as}" if read_as else ""
        raise MeshError(f"{path}: {exc}{note}") from None


def _abaqus_cell_type(abaqus_type: str) -> str:
    """meshio cell type of an Abaqus element type (ours first), or '?' when none reads it."""
    return ABAQUS_EXTRA_TYPES.get(abaqus_type) or _meshio_abaqus.abaqus_to_meshio_type.get(abaqus_type, "?")


def _abaqus_element_blocks(path: Path) -> list[tuple[str, str | None]]:
    """``(TYPE, ELSET or None)`` of each ``*ELEMENT`` line of an Abaqus input file, in file order."""
    blocks: list[tuple[str, str | None]] = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            if not line.startswith("*") or line.startswith("**"):
                continue
            keyword, _, params = line.partition(",")
            if keyword.lstrip("*").strip().upper() != "ELEMENT":
                continue
            values = {key.strip().upper(): value.strip() for key, _, value in
                      (param.partition("=") for param in params.split(","))}
            blocks.append((values.get("TYPE", "").upper(), values.get("ELSET") or None))
    return blocks


def _read_abaqus(path: Path) -> tuple[meshio.Mesh, list[str]]:
    """meshio's Abaqus reader, also knowing ``ABAQUS_EXTRA_TYPES``, and the file's element types.

    meshio attaches the ``ELSET=`` of an ``*ELEMENT`` line to the k-th block when it is the k-th
    such ELSET, i.e. to the wrong block once an earlier block has none (Gmsh's unnamed edges);
    those sets are rebuilt here from the file's block order.
    """
    blocks = _abaqus_element_blocks(path)
    with mock.patch.dict(_meshio_abaqus.abaqus_to_meshio_type, ABAQUS_EXTRA_TYPES):
        raw = _meshio_abaqus.read(str(path))
    if len(blocks) == len(raw.cells):          # not when *INCLUDE files added blocks
        for name in {elset for _, elset in blocks if elset}:
            raw.cell_sets[name] = [np.arange(len(cb)) if elset == name else np.zeros(0, dtype=np.int64)
                                   for cb, (_, elset) in zip(raw.cells, blocks)]
    return raw, list(dict.fromkeys(t for t, _ in blocks))


def _warn_formulation_traps(path: Path, abaqus_types: list[str]) -> None:
    """One ``MeshWarning`` per element type in ``ABAQUS_FORMULATION_TRAPS``."""
    for t in abaqus_types:
        if t in ABAQUS_FORMULATION_TRAPS:
            formulation, consequence = ABAQUS_FORMULATION_TRAPS[t]
            warnings.warn(f"{path}: Abaqus element type {t} ({formulation}) is read as flexmb's fully "
                          f"integrated {_abaqus_cell_type(t)}, not as {t}: {consequence}; refine through "
                          "the thickness or use C3D20 / C3D10 elements", MeshWarning, stacklevel=3)


def _read_raw(path: Path, file_format: str | None) -> tuple[meshio.Mesh, list[str]]:
    """Read ``path`` with the meshio reader(s) of its format, errors collected per format;
    also the Abaqus element types of an Abaqus file (else an empty list).

    meshio.read itself prints failed attempts and calls sys.exit() when no reader
    succeeds, so the readers are called directly.
    """
    if not path.is_file():
        raise MeshError(f"mesh file {path} does not exist")
    suffixes = ["".join(path.suffixes[i:]).lower() for i in range(len(path.suffixes))]
    formats = [file_format] if file_format else [
        f for ext in suffixes for f in meshio.extension_to_filetypes.get(ext, [])]
    if not formats or any(f not in _MESHIO_READERS for f in formats):
        raise MeshError(f"cannot tell the mesh format of {path} (format {file_format!r}); known "
                        f"extensions: {', '.join(sorted(meshio.extension_to_filetypes))}")
    failures = []
    for fmt in formats:
        try:
            if fmt == "abaqus":
                return _read_abaqus(path)
            return _MESHIO_READERS[fmt](str(path)), []
        except Exception as exc:  # meshio readers raise ReadError, ValueError, KeyError ...
            failures.append(f"as {fmt}: {type(exc).__name__}" + (f": {exc}" if str(exc) else ""))
    raise MeshError(f"meshio cannot read {path} " + "; ".join(failures))


def from_meshio(raw: meshio.Mesh, *, ignore_unsupported: bool = False, strict: bool = False,
                merge_duplicates: bool = False, element_dims: tuple[int, ...] | None = None) -> FEMesh:
    """Turn a ``meshio.Mesh`` into a ``FEMesh``: choose element cells, resolve named sets.

    ignore_unsupported : drop element cells of unsupported types with a warning instead of refusing.
    strict, merge_duplicates : as in ``FEMesh``.
    """
    blocks = list(raw.cells)
    dims = _element_dims([b.dim for b in blocks], element_dims, blocks)
    is_elem = [b.dim in dims for b in blocks]
    usable = _drop_unsupported(blocks, is_elem, ignore_unsupported)
    is_elem = [e and u for e, u in zip(is_elem, usable)]
    cells, slots = _gather_cells(blocks, is_elem)
    named = _named_block_sets(raw, blocks)
    _note_unused_blocks(blocks, dims, named)
    cell_sets, derived = _resolve_sets(named, blocks, slots, usable)
    explicit = {name: np.asarray(ids).ravel() for name, ids in raw.point_sets.items()}
    folded = {name.casefold() for name in explicit}
    node_sets = {name: ids for name, ids in derived.items() if name.casefold() not in folded}
    node_sets.update(explicit)              # an explicit node set wins over a derived one (§5)
    return FEMesh(raw.points, cells, cell_sets, node_sets, strict=strict,
                  merge_duplicates=merge_duplicates)


def _block_summary(blocks: list) -> str:
    """'tetra (12 cells), vertex (2 cells)' for error messages."""
    counts: dict[str, int] = {}
    for b in blocks:
        counts[b.type] = counts.get(b.type, 0) + len(b)
    return ", ".join(f"{t} ({n} cells)" for t, n in counts.items()) or "no cells"


def _element_dims(dims: list[int], requested: tuple[int, ...] | None, blocks: list) -> set[int]:
    """Topological dimensions that become elements: ``requested`` or the highest present."""
    present = {d for d in dims if d > 0}
    if not present:
        raise MeshError(f"the mesh has no cells of a supported type; found {_block_summary(blocks)}")
    if requested is None:
        return {max(present)}
    chosen = {int(d) for d in requested}
    if not chosen or not chosen <= {1, 2, 3}:
        raise MeshError(f"element_dims must be a non-empty subset of (1, 2, 3), got {requested!r}")
    return chosen


def _drop_unsupported(blocks: list, is_elem: list[bool], ignore: bool) -> list[bool]:
    """Per block: may it be used? Unsupported element blocks are refused or (ignore) dropped."""
    bad = [b for b, e in zip(blocks, is_elem) if e and b.type not in SUPPORTED_CELLS]
    if not bad:
        return [True] * len(blocks)
    has_supported = any(e and b.type in SUPPORTED_CELLS for b, e in zip(blocks, is_elem))
    if not has_supported:
        dims = sorted({b.dim for b in bad})
        raise MeshError(f"the mesh has no cells of a supported type ({', '.join(SUPPORTED_CELLS)}) "
                        f"among its elements (cells of dimension {dims}, see element_dims); "
                        f"found {_block_summary(blocks)}")
    if not ignore:
        raise MeshError(f"unsupported cell types: {_block_summary(bad)}; supported: "
                        f"{', '.join(SUPPORTED_CELLS)}; pass ignore_unsupported=True to drop them")
    warnings.warn(f"ignored unsupported cells: {_block_summary(bad)}", MeshWarning, stacklevel=4)
    return [not (e and b.type not in SUPPORTED_CELLS) for b, e in zip(blocks, is_elem)]


def _note_unused_blocks(blocks: list, dims: set[int], named: dict) -> None:
    """``MeshWarning`` for lower-dimensional blocks that are neither elements nor in a named set.

    Such blocks (e.g. the unnamed boundary faces and edges Gmsh exports with a solid mesh) are
    not part of the model; the note says they were ignored (docs/theory-mesh.md §3).
    """
    in_set = [any(parts[k].size for parts in named.values()) for k in range(len(blocks))]
    unused = [b for b, s in zip(blocks, in_set) if b.dim not in dims and not s and b.dim > 0]
    if unused:
        warnings.warn(f"ignored cell blocks that are not part of the model (lower-dimensional, in no "
                      f"named set): {_block_summary(unused)}", MeshWarning, stacklevel=4)


def _gather_cells(blocks: list, is_elem: list[bool]) -> tuple[dict, dict]:
    """Concatenate element blocks by type; slots[k] = (type, offset) of block k."""
    parts: dict[str, list] = {}
    slots: dict[int, tuple[str, int]] = {}
    for k, (b, e) in enumerate(zip(blocks, is_elem)):
        if e:
            slots[k] = (b.type, sum(len(p) for p in parts.get(b.type, [])))
            parts.setdefault(b.type, []).append(np.asarray(b.data))
    return {t: np.concatenate(p) for t, p in parts.items()}, slots


def _physical_names(field_data: dict) -> dict[tuple[int, int], str]:
    """(dim, tag) -> name from Gmsh $PhysicalNames (meshio field_data: name -> [tag, dim])."""
    names = {}
    for name, value in field_data.items():
        v = np.asarray(value).ravel()
        if v.size == 2 and np.issubdtype(v.dtype, np.integer):
            names[(int(v[1]), int(v[0]))] = name
    return names


def _named_block_sets(raw: meshio.Mesh, blocks: list) -> dict[str, list[np.ndarray]]:
    """Set name -> per-block cell indices, from meshio cell_sets and Gmsh physical tags.

    Unnamed Gmsh physical groups are called like in the Gmsh GUI, e.g. 'Physical Surface 5'.
    """
    collected: dict[str, list[list[np.ndarray]]] = {}

    def add(name: str, k: int, idx: np.ndarray) -> None:
        collected.setdefault(name, [[] for _ in blocks])[k].append(idx)

    for name, parts in raw.cell_sets.items():
        if name.startswith("gmsh:"):
            continue
        for k, idx in enumerate(parts[:len(blocks)]):
            if idx is not None:
                try:
                    add(name, k, np.asarray(idx, dtype=np.int64).ravel())
                except (TypeError, ValueError):
                    raise MeshError(f"cell set {name!r} of the file cannot be interpreted") from None
    physical = raw.cell_data.get("gmsh:physical")
    if physical is not None and len(physical) == len(blocks):
        names = _physical_names(raw.field_data)
        for k, (block, tags) in enumerate(zip(blocks, physical)):
            tags = np.asarray(tags).ravel()
            for tag in np.unique(tags[tags > 0]):
                default = f"Physical {_GMSH_DIM_NAMES[block.dim]} {tag}"
                add(names.get((block.dim, int(tag)), default), k, np.flatnonzero(tags == tag))
    return {name: [np.unique(np.concatenate(p)) if p else np.zeros(0, np.int64) for p in parts]
            for name, parts in collected.items()}


def _resolve_sets(named: dict, blocks: list, slots: dict, usable: list[bool]) -> tuple[dict, dict]:
    """Named per-block sets -> (cell sets over element cells, node sets over all their nodes)."""
    cell_sets, node_sets = {}, {}
    for name, parts in named.items():
        by_type: dict[str, list[np.ndarray]] = {}
        nodes = []
        for k, idx in enumerate(parts):
            if idx.size == 0 or not usable[k]:
                continue
            if idx.min() < 0 or idx.max() >= len(blocks[k]):
                raise MeshError(f"set {name!r} refers to {blocks[k].type} cells beyond the "
                                f"{len(blocks[k])} of its block")
            nodes.append(np.asarray(blocks[k].data)[idx].ravel())
            if k in slots:
                cell_type, offset = slots[k]
                by_type.setdefault(cell_type, []).append(idx + offset)
        if by_type:
            cell_sets[name] = {t: np.concatenate(v) for t, v in by_type.items()}
        if nodes:
            node_sets[name] = np.unique(np.concatenate(nodes))
    return cell_sets, node_sets
