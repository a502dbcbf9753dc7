"""Incremental result files: a run writes its history in chunks so an interrupt
or a crash loses at most the steps since the last chunk, and can be resumed.

Layout of an output directory::

    meta.json          what ran (model name, coordinate and row counts, settings)
    chunk_00000.npz    t, q, v, vd, lam, work_nc, work_drivers for a range of steps
    chunk_00001.npz    ...
    state.npz          full integrator state after the last chunk (for resume)

Every file is written to a temporary name and renamed, so a file either exists
complete or not at all.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from ..errors import ModelError

FIELDS = ("t", "q", "v", "vd", "lam", "work_nc", "work_drivers")


def _atomic_savez(path: Path, **arrays) -> None:
    tmp = path.with_name(path.name + ".tmp.npz")
    np.savez(tmp, **arrays)
    os.replace(tmp, path)


class ChunkWriter:
    """Buffers rows and writes a chunk every ``chunk_steps`` rows."""

    def __init__(self, directory, meta: dict, chunk_steps: int = 1000, resume: bool = False):
        self.dir = Path(directory)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.chunk_steps = max(1, int(chunk_steps))
        existing = sorted(self.dir.glob("chunk_*.npz"))
        if existing and not resume:
            raise ModelError(f"output directory {self.dir} already holds results; use resume=True or a new directory")
        self.index = len(existing)
        self.buffer: dict[str, list] = {k: [] for k in FIELDS}
        meta_path = self.dir / "meta.json"
        tmp = meta_path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(meta, indent=1))
        os.replace(tmp, meta_path)

    def append(self, **row) -> None:
        for k in FIELDS:
            self.buffer[k].append(np.asarray(row[k], dtype=float))

    def flush(self, state: dict | None = None) -> None:
        if self.buffer["t"]:
            _atomic_savez(self.dir / f"chunk_{self.index:05d}.npz",
                          **{k: np.array(v) for k, v in self.buffer.items()})
            self.index += 1
            self.buffer = {k: [] for k in FIELDS}
        if state is not None:
            _atomic_savez(self.dir / "state.npz", **state)

    def maybe_flush(self, state_fn) -> None:
        if len(self.buffer["t"]) >= self.chunk_steps:
            self.flush(state_fn())


def read_chunks(directory) -> dict[str, np.ndarray]:
    """Concatenate every chunk of an output directory."""
    files = sorted(Path(directory).glob("chunk_[0-9]*.npz"))
    if not files:
        raise ModelError(f"no result chunks in {directory}")
    parts = {k: [] for k in FIELDS}
    for f in files:
        with np.load(f) as z:
            for k in FIELDS:
                parts[k].append(z[k])
    return {k: np.concatenate(v) for k, v in parts.items()}


def read_state(directory) -> dict[str, np.ndarray] | None:
    path = Path(directory) / "state.npz"
    if not path.exists():
        return None
    with np.load(path) as z:
        return {k: z[k] for k in z.files}
