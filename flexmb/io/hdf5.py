"""Self-describing HDF5 result files (``Result.save("run.h5")``; docs/guide-output.md).

Layout (format ``flexmb-result``, version 1)::

    /                      attrs: format, format_version, flexmb_version, system, message,
                                  bodies, joints, forces (names in system order), series (dataset names)
    /time                  (n,) s
    /bodies/<body>/...     named series (flexmb/io/series.py); group attrs: name, type, offset,
                           ncoord, n_modes (its slice of q)
    /joints/<joint>/...    joint coordinates and reactions; group attrs: name, type
    /forces/<force>        group attrs: name, type, offset, n_states (state coordinates in q, if any)
    /energy/...            energies (J)
    /raw/t, q, v, vd, lam, work_nc, work_drivers, history
                           the Result's arrays as integrated; attrs nq, m

Every series dataset carries the attributes ``units`` (one per column), ``components`` (column names)
and ``description``. The file is read without the System (``read_saved``: the named series) or with it
(``read_arrays`` + ``check_layout``: the full Result API). Reading follows hard links only and reads no
dataset stored elsewhere (external storage, virtual datasets) or declaring more data than the file can hold
(flexmb/io/safe.py): such files are refused with an UnsafeFileError.
"""
from __future__ import annotations

from pathlib import Path
from typing import Iterable

import numpy as np

from .._version import installed_version
from ..errors import ModelError, OutputError
from .arrays import RAW_ARRAYS
from .safe import ReadBudget, atomic_write, check_hdf5_dataset, hdf5_child
from .series import SeriesAccess, SeriesInfo, SeriesMap, catalog, escape, select, to_dataframe, unescape, write_csv
from .summary import succeeded, summary

__all__ = ["FORMAT", "FORMAT_VERSION", "SavedResult", "write_result", "read_saved", "read_arrays", "check_layout"]

FORMAT = "flexmb-result"
FORMAT_VERSION = 1


def _strings(values: Iterable[str]) -> np.ndarray:
    """Names as an array of HDF5 variable-length UTF-8 strings (an attribute value)."""
    import h5py
    return np.array(list(values), dtype=h5py.string_dtype())


def _texts(attr) -> list[str]:
    """A string-array attribute as a list of str (h5py returns str or bytes depending on how it was written)."""
    return [v.decode() if isinstance(v, bytes) else str(v) for v in np.atleast_1d(attr)]


def write_result(res, path) -> Path:
    """Write ``res`` (a Result with its system attached) to the HDF5 file ``path``: metadata, every named
    series with units, and the raw arrays, under a temporary name renamed over ``path`` when complete.
    ModelError when the result has no system; OutputError when the file cannot be written (any previous file
    at ``path`` is kept)."""
    import h5py

    p = Path(path)
    if res.system is None:
        raise ModelError(f"cannot write {str(p)!r}: an HDF5 result file labels its series with the bodies and "
                         "joints of the system, but this result has none attached; load it with system=..., "
                         "or save it as .npz")
    system = res.system
    entries = catalog(res)
    values = {name: np.asarray(compute(), dtype=float) for name, (_, compute) in entries.items()}  # before writing
    try:
        with atomic_write(p, "result file") as tmp, h5py.File(tmp, "w") as f:    # renamed over p when complete
            f.attrs.update({"format": FORMAT, "format_version": FORMAT_VERSION, "flexmb_version": installed_version(),
                            "system": system.name, "message": res.message,
                            "bodies": _strings(b.name for b in system.bodies),
                            "joints": _strings(j.name for j in system.joints),
                            "forces": _strings(e.name for e in system.forces), "series": _strings(entries)})
            _write_layout(f, system)
            for name, (info, _) in entries.items():
                ds = f.create_dataset(name, data=values[name])
                ds.attrs.update({"units": _strings(info.units), "components": _strings(info.components),
                                 "description": info.description})
            raw = f.create_group("raw")
            raw.attrs.update({"nq": res.q.shape[1], "m": res.lam.shape[1]})
            for k in RAW_ARRAYS:
                raw.create_dataset(k, data=getattr(res, k), compression="gzip")
    except RuntimeError as exc:                # HDF5's write errors (disk full, file too large)
        raise OutputError(f"cannot write the result file {str(p)!r}: {exc}; any previous file there is "
                          "unchanged", path=str(p)) from exc
    return p


def _write_layout(f, system) -> None:
    """Groups of bodies, joints and force elements with their types and coordinate slices."""
    for body in system.bodies:
        f.require_group(f"bodies/{escape(body.name)}").attrs.update(
            {"name": body.name, "type": type(body).__name__, "offset": body.offset, "ncoord": body.ncoord,
             "n_modes": body.n_modes})
    for joint in system.joints:
        f.require_group(f"joints/{escape(joint.name)}").attrs.update({"name": joint.name, "type": type(joint).__name__})
    for force in system.forces:
        n_states = getattr(force, "n_states", 0)
        f.require_group(f"forces/{escape(force.name)}").attrs.update(
            {"name": force.name, "type": type(force).__name__, "n_states": n_states,
             "offset": force.offset if n_states else -1})


def _open(p: Path):
    """The HDF5 file ``p`` opened for reading, checked to be a flexmb result of a known version."""
    import h5py
    if not p.is_file():
        raise ModelError(f"result file {str(p)!r} does not exist")
    try:
        f = h5py.File(p, "r")
    except OSError as exc:
        raise ModelError(f"result file {str(p)!r} is not a readable HDF5 file (corrupt, truncated or another "
                         f"format): {exc}") from None
    fmt, version = f.attrs.get("format"), f.attrs.get("format_version", 0)
    if fmt != FORMAT or f.get("raw", getlink=True) is None:
        f.close()
        raise ModelError(f"result file {str(p)!r} is an HDF5 file but not a flexmb result (attribute 'format' is "
                         f"{fmt!r}, expected {FORMAT!r}, with a group 'raw')")
    if int(version) > FORMAT_VERSION:
        f.close()
        raise ModelError(f"result file {str(p)!r} has format version {int(version)}; this flexmb reads up to "
                         f"{FORMAT_VERSION}: update flexmb")
    return f


_WHAT = "result file"


def _node(f, path: str, p: Path):
    """The group or dataset at ``path`` (components separated by ``/``), each component a hard link of the file
    (UnsafeFileError otherwise, flexmb/io/safe.py); None when absent."""
    node = f
    for part in path.strip("/").split("/"):
        if not hasattr(node, "keys"):
            return None
        node = hdf5_child(node, part, p, _WHAT)
        if node is None:
            return None
    return node


def _data(f, path: str, p: Path, budget: ReadBudget) -> np.ndarray:
    """The values of the dataset at ``path``, checked before reading (flexmb/io/safe.py)."""
    import h5py
    ds = _node(f, path, p)
    if not isinstance(ds, h5py.Dataset):
        raise ModelError(f"result file {str(p)!r}: {path!r} is not a dataset")
    check_hdf5_dataset(ds, budget)
    return ds[()]


def _raw(f, p: Path, budget: ReadBudget) -> dict[str, np.ndarray]:
    """The raw arrays of the open result file ``f`` (ModelError naming ``p`` when some are missing)."""
    raw = _node(f, "raw", p)
    missing = [k for k in RAW_ARRAYS if raw.get(k, getlink=True) is None]
    if missing:
        raise ModelError(f"result file {str(p)!r} is incomplete: group 'raw' lacks {missing}")
    return {k: _data(f, f"raw/{k}", p, budget) for k in RAW_ARRAYS}


def read_arrays(path) -> tuple[dict[str, np.ndarray], str]:
    """The raw arrays (``RAW_ARRAYS``) and the run's message of an HDF5 result file."""
    p = Path(path)
    with _open(p) as f:
        return _raw(f, p, ReadBudget(p, _WHAT)), str(f.attrs.get("message", ""))


def check_layout(path, system) -> None:
    """ModelError naming the file and the first difference when ``system`` does not have the file's bodies
    (names, order, coordinate counts), joints and force elements."""
    p = Path(path)
    with _open(p) as f:
        saved = {kind: _texts(f.attrs.get(kind, [])) for kind in ("bodies", "joints", "forces")}
        ncoord = {n: int(_node(f, f"bodies/{escape(n)}", p).attrs["ncoord"]) for n in saved["bodies"]}
    mine = {"bodies": [b.name for b in system.bodies], "joints": [j.name for j in system.joints],
            "forces": [e.name for e in system.forces]}
    for kind in saved:
        if saved[kind] != mine[kind]:
            raise ModelError(f"result file {str(p)!r} was written for a system with {kind} {saved[kind]}, but "
                             f"system {system.name!r} has {mine[kind]}: load it with the system that produced it")
    for body in system.bodies:
        if ncoord[body.name] != body.ncoord:
            raise ModelError(f"result file {str(p)!r}: body {body.name!r} has {ncoord[body.name]} coordinates "
                             f"there, but {body.ncoord} in system {system.name!r}: load it with the system that "
                             "produced it")


class SavedResult(SeriesAccess):
    """A result file read without its System: the named series with their units.

    * ``series``: series name -> values (n, ...), e.g. ``series["bodies/arm/position"]`` (n, 3) m;
      ``saved["bodies/arm/position"]`` and ``saved.series("bodies/arm/position")`` are the same, as on a Result;
    * ``success``, ``message``: whether the run that wrote it reached its end time, and why it stopped;
    * ``info``: series name -> SeriesInfo (``components``, ``units``, ``description``);
    * ``t``: the saved times (s); ``metadata``: flexmb version, system name, body/joint/force names and the
      coordinate layout of each body; ``arrays``: the raw arrays of the Result;
    * ``to_dataframe``, ``to_csv`` as on a Result; ``fm.load_result(path, system=s)`` gives the full Result.
    """

    def __init__(self, path: Path, series: dict[str, np.ndarray], info: dict[str, SeriesInfo],
                 metadata: dict, arrays: dict[str, np.ndarray]):
        self.path = path
        self.series = SeriesMap(series, f"result file {str(path)!r}")
        self.info = info
        self.metadata = metadata
        self.arrays = arrays

    @property
    def t(self) -> np.ndarray:
        """Saved times (s)."""
        return self.series["time"]

    @property
    def message(self) -> str:
        """The message of the run that wrote the file ("completed", or why it stopped)."""
        return self.metadata["message"]

    @property
    def success(self) -> bool:
        """True when the run that wrote the file reached its end time (as Result.success)."""
        return succeeded(self.message)

    def __repr__(self) -> str:
        names = {kind: self.metadata[kind] for kind in ("bodies", "joints", "forces")}
        return summary(f"SavedResult of system {self.metadata['system']!r} from {str(self.path)!r}", self.message,
                       self.t, names, extra=[f"series: {len(self.series)} (saved.series_names())"])

    __str__ = __repr__

    def series_names(self) -> list[str]:
        """Names of the series in the file (as Result.series_names)."""
        return list(self.series)

    def _chosen(self, series, owner: str) -> dict[str, np.ndarray]:
        return {k: self.series[k] for k in select(self.series, series, owner)}

    def to_dataframe(self, series: Iterable[str] | None = None, layout: str = "flat"):
        """The series (all, or the names given) as a pandas DataFrame indexed by time; see Result.to_dataframe."""
        return to_dataframe(self.t, self._chosen(series, "SavedResult.to_dataframe"), self.info, layout)

    def to_csv(self, path, series: Iterable[str] | None = None) -> Path:
        """Write time and the chosen series (all when None) to a CSV file; see Result.to_csv."""
        return write_csv(path, self.t, self._chosen(series, "SavedResult.to_csv"), self.info)


def read_saved(path) -> SavedResult:
    """Every named series, its labels, the metadata and the raw arrays of an HDF5 result file."""
    p = Path(path)
    series: dict[str, np.ndarray] = {}
    info: dict[str, SeriesInfo] = {}
    with _open(p) as f:
        budget = ReadBudget(p, _WHAT)
        for name in _texts(f.attrs.get("series", [])):
            ds = _node(f, name, p)
            if ds is None:
                raise ModelError(f"result file {str(p)!r} is incomplete: it lists the series {name!r} but has no "
                                 "such dataset")
            series[name] = _data(f, name, p, budget)
            info[name] = SeriesInfo(tuple(_texts(ds.attrs.get("components", []))), tuple(_texts(ds.attrs["units"])),
                                    str(ds.attrs.get("description", "")))
        bodies = _node(f, "bodies", p)
        layout = {unescape(k): {"type": str(g.attrs["type"]),
                                **{a: int(g.attrs[a]) for a in ("offset", "ncoord", "n_modes")}}
                  for k, g in ((k, _node(f, f"bodies/{k}", p)) for k in (bodies.keys() if bodies else ()))}
        metadata = {"flexmb_version": str(f.attrs.get("flexmb_version", "")), "system": str(f.attrs.get("system")),
                    "message": str(f.attrs.get("message", "")), "layout": layout,
                    **{kind: _texts(f.attrs.get(kind, [])) for kind in ("bodies", "joints", "forces")}}
        arrays = _raw(f, p, budget)
    if "time" not in series:
        raise ModelError(f"result file {str(p)!r} is incomplete: it has no dataset 'time'")
    return SavedResult(p, series, info, metadata, arrays)
