"""Incremental result files: a run writes its history in chunks so that an interrupt, a crash or
SIGKILL loses at most the last ``FLUSH_SECONDS`` of computation (or the last ``chunk_steps`` saved
rows, whichever is less), and can be resumed.

Layout of an output directory::

    meta.json          what ran (model name, coordinate and row counts, element names, settings)
    chunk_00000.npz    t, q, v, vd, lam, work_nc, work_drivers, history for a range of saved rows
    chunk_00001.npz    ...
    state.npz          full integrator state, element history included, at the last write (for resume)

Every file is written to a hidden temporary name, synced and renamed, so a file either exists
complete or not at all. A write stores the chunk first, then the state, so the chunks always hold
every saved row up to the state's time; rows after it (a crash between the two) are trimmed on
resume, which therefore never repeats or reorders a time.
"""
from __future__ import annotations

import json
import math
import numbers
import os
import time
import zipfile
from pathlib import Path

import numpy as np

from ..errors import ModelError

FIELDS = ("t", "q", "v", "vd", "lam", "work_nc", "work_drivers", "history")
STATE_FIELDS = ("t", "q", "v", "vd", "a", "lam", "work_nc", "work_drivers", "h", "history", "p_nc", "p_drv",
                "step_count")

FLUSH_SECONDS = 1.0
"""Longest wall time (s) between two writes of a running simulation's output (chunk and state)."""


def _atomic_savez(path: Path, **arrays) -> None:
    tmp = path.with_name("." + path.name + ".tmp")       # hidden: never matched as a chunk
    with open(tmp, "wb") as f:
        np.savez(f, **arrays)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def _chunk_files(directory: Path) -> list[Path]:
    return sorted(directory.glob("chunk_[0-9]*.npz"))


def _load(path: Path, fields: tuple, what: str) -> dict[str, np.ndarray]:
    """The arrays ``fields`` of one ``.npz`` file; a ModelError naming the file when it is unreadable,
    truncated or lacks a field."""
    try:
        with np.load(path, allow_pickle=False) as z:
            missing = [k for k in fields if k not in z.files]
            if missing:
                raise ModelError(f"{what} {str(path)!r} lacks the field(s) {missing} (not written by this flexmb?)")
            return {k: z[k] for k in fields}
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as exc:
        raise ModelError(f"{what} {str(path)!r} is corrupt or truncated ({type(exc).__name__}: {exc})") from None


def _jsonable(x):
    return x.item() if isinstance(x, np.generic) else str(x)


def _check_meta(directory: Path, meta: dict) -> None:
    """Refuse to resume a run of another model or with other settings (ModelError naming the
    directory, the field and both values)."""
    path = directory / "meta.json"
    if not path.exists():
        if _chunk_files(directory):
            raise ModelError(f"output directory {str(directory)!r} holds result chunks but no meta.json; "
                             "it cannot be resumed")
        return
    try:
        old = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise ModelError(f"{str(path)!r} is unreadable ({exc}); the run in {str(directory)!r} "
                         "cannot be resumed") from None
    new = json.loads(json.dumps(meta, default=_jsonable))
    for key, value in new.items():
        if old.get(key) != value:
            raise ModelError(f"cannot resume in {str(directory)!r}: its run has {key} = {old.get(key)!r}, "
                             f"this one {key} = {value!r} (another model or other settings: use a new directory)")


def _trim_after(directory: Path, t_state: float) -> None:
    """Drop chunk rows later than the saved state (written just before a crash), last files first."""
    for f in reversed(_chunk_files(directory)):
        z = _load(f, FIELDS, "result chunk")
        keep = z["t"] <= t_state
        if keep.all():
            return
        if keep.any():
            _atomic_savez(f, **{k: v[keep] for k, v in z.items()})
            return
        f.unlink()


class ChunkWriter:
    """Buffers saved rows; writes a chunk, then the state, every ``chunk_steps`` rows and at least
    every ``flush_seconds`` (s) of wall time (default: the module's ``FLUSH_SECONDS`` when the writer is made).

    ``resume=True`` checks ``meta`` against the directory's ``meta.json`` (ModelError on any
    difference), reads the saved state (``self.state``, None when there is none) and trims chunk rows
    later than it; otherwise a directory that holds chunks is refused.
    """

    def __init__(self, directory, meta: dict, chunk_steps: int = 1000, resume: bool = False,
                 flush_seconds: float | None = None):
        self.dir = Path(directory)
        if self.dir.exists() and not self.dir.is_dir():
            raise ModelError(f"output {str(self.dir)!r} is an existing file, not a directory; name a new "
                             "directory (or the directory of the run to resume)")
        if not isinstance(chunk_steps, numbers.Integral) or isinstance(chunk_steps, bool) or chunk_steps < 1:
            raise ModelError(f"chunk_steps must be a positive integer (saved rows per chunk), got {chunk_steps!r}")
        self.dir.mkdir(parents=True, exist_ok=True)
        self.chunk_steps = int(chunk_steps)
        self.flush_seconds = float(FLUSH_SECONDS if flush_seconds is None else flush_seconds)   # read at run time
        if _chunk_files(self.dir) and not resume:
            raise ModelError(f"output directory {str(self.dir)!r} already holds results; use resume=True or a "
                             "new directory")
        self.state = None
        if resume:
            _check_meta(self.dir, meta)
            self.state = read_state(self.dir)
            _trim_after(self.dir, -math.inf if self.state is None else float(self.state["t"]))
        for stale in self.dir.glob(".*.tmp"):          # a write interrupted by a crash
            stale.unlink()
        existing = _chunk_files(self.dir)
        self.index = int(existing[-1].stem.split("_")[1]) + 1 if existing else 0
        self.buffer: dict[str, list] = {k: [] for k in FIELDS}
        meta_path = self.dir / "meta.json"
        tmp = meta_path.with_name(".meta.json.tmp")
        tmp.write_text(json.dumps(meta, indent=1, default=_jsonable))
        os.replace(tmp, meta_path)
        self._last_write = time.monotonic()

    def append(self, **row) -> None:
        for k in FIELDS:
            self.buffer[k].append(np.asarray(row[k], dtype=float))

    def flush(self, state: dict | None = None) -> None:
        """Write the buffered rows as a chunk, then ``state`` (this order: see the module docstring)."""
        from ..results import stack_rows
        if self.buffer["t"]:
            arrays = {k: stack_rows(v) if k == "history" else np.array(v) for k, v in self.buffer.items()}
            _atomic_savez(self.dir / f"chunk_{self.index:05d}.npz", **arrays)
            self.index += 1
            self.buffer = {k: [] for k in FIELDS}
        if state is not None:
            _atomic_savez(self.dir / "state.npz", **state)
        self._last_write = time.monotonic()

    def maybe_flush(self, state_fn) -> None:
        """Flush when ``chunk_steps`` rows are buffered or ``flush_seconds`` passed since the last write."""
        if (len(self.buffer["t"]) >= self.chunk_steps
                or time.monotonic() - self._last_write >= self.flush_seconds):
            self.flush(state_fn())


def read_chunks(directory) -> dict[str, np.ndarray]:
    """Concatenate every chunk of an output directory (ModelError naming a corrupt file, or the
    directory when its times do not increase strictly)."""
    from ..results import stack_rows
    files = _chunk_files(Path(directory))
    if not files:
        raise ModelError(f"no result chunks in {str(directory)!r}")
    parts = {k: [] for k in FIELDS}
    for f in files:
        z = _load(f, FIELDS, "result chunk")
        for k in FIELDS:
            parts[k].append(z[k])
    out = {k: stack_rows([r for p in v for r in p]) if k == "history" else np.concatenate(v)
           for k, v in parts.items()}
    if np.any(np.diff(out["t"]) <= 0):
        k = int(np.argmax(np.diff(out["t"]) <= 0))
        raise ModelError(f"result chunks in {str(directory)!r}: time {out['t'][k + 1]!r} follows {out['t'][k]!r} "
                         "(times must increase strictly)")
    return out


def read_state(directory) -> dict[str, np.ndarray] | None:
    """The saved integrator state of an output directory, or None when there is none."""
    path = Path(directory) / "state.npz"
    if not path.exists():
        return None
    return _load(path, STATE_FIELDS, "saved state")
