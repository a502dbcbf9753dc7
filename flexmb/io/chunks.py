"""Incremental result files: a run writes its history in chunks so that an interrupt, a crash or
SIGKILL loses at most the last ``FLUSH_SECONDS`` of computation (or the last ``chunk_steps`` saved
rows, whichever is less), and can be resumed. An output directory holds one run, whole, or is refused.

Layout of an output directory::

    meta.json          format, run id, what ran (model name, coordinate and row counts, element names),
                       every setting, and every parameter value of the model (flexmb/io/fingerprint.py)
    .flexmb.lock       held by the running writer (pid, host, start time); removed when it ends
    chunk_00000.npz    t, q, v, vd, lam, work_nc, work_drivers, history for saved rows row0, row0 + 1, ...,
    chunk_00001.npz    with the run id; numbered 0, 1, 2 ... without gaps
    state.npz          full integrator state, element history included, at the last write (for resume),
                       with the run id and the number of saved rows the chunks hold up to it

Locking: a writer takes an exclusive OS lock (``flock``) on ``.flexmb.lock`` for the whole run; a second
writer (``simulate(output=...)`` or ``resume=True`` of the same directory, in any process on the machine) is
refused with an OutputLockedError naming the holder. The OS drops the lock when its process ends in any way
(SIGKILL, power loss), so a lock file left behind is stale by construction and the next run takes it over.

Every file is written to a temporary name unique to the process (``.<name>.<pid>.<random>.tmp``, never shared),
synced and renamed (flexmb/io/safe.py), so a file either exists complete or not at all. A write stores the
chunk first, then the state, so the chunks always hold every saved row up to the state's time; rows after it (a
crash between the two) are trimmed on resume, which therefore never repeats or reorders a time. Reading (and
resume) checks that the chunks are numbered without a gap from 0, each continues the previous one's rows
(``row0``), all belong to the run of ``meta.json``, the first row is the start (``t_start``), and the chunks
hold every row the saved state counts: anything else is a ModelError, never a shorter result.
"""
from __future__ import annotations

import errno
import functools
import json
import numbers
import os
import re
import socket
import threading
import time
import uuid
import zipfile
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from ..errors import ModelError, OutputError, OutputLockedError, UnsafeFileError
from .arrays import stack_rows
from .fingerprint import first_difference, parameters
from .safe import checked_npz, is_temporary_name, write_with

FORMAT = "flexmb-output"
FORMAT_VERSION = 2
LOCK_NAME = ".flexmb.lock"

FIELDS = ("t", "q", "v", "vd", "lam", "work_nc", "work_drivers", "history")
STATE_FIELDS = ("t", "q", "v", "vd", "a", "lam", "work_nc", "work_drivers", "h", "history", "p_nc", "p_drv",
                "step_count")
TAGS = ("run", "row0")
"""Fields of a chunk besides the rows: the run id and the index of its first row among the run's saved rows."""
STATE_TAGS = ("run", "rows")
"""Fields of the state besides the integrator's: the run id and the number of saved rows written up to it."""

LEGACY_KEYS = ("system", "nq", "m", "method", "h", "t_start", "t_end", "adaptive", "save_every", "bodies", "joints",
               "forces")
"""Keys of meta.json compared first on resume (in this order), and those of outputs written before format 2."""

FLUSH_SECONDS = 1.0
"""Longest wall time (s) between two writes of a running simulation's output (chunk and state)."""

_CHUNK = re.compile(r"chunk_(\d{5,})\.npz")


def _chunk_name(k: int) -> str:
    return f"chunk_{k:05d}.npz"


def _chunk_files(directory: Path) -> list[tuple[int, Path]]:
    """``(number, path)`` of the chunk files, by number."""
    found = []
    for p in directory.iterdir():
        m = _CHUNK.fullmatch(p.name)
        if m:
            found.append((int(m.group(1)), p))
    return sorted(found)


def _jsonable(x):
    return x.item() if isinstance(x, np.generic) else str(x)


def _normalized(meta: dict) -> dict:
    """``meta`` as JSON reads it back (tuples as lists, numpy scalars as numbers)."""
    return json.loads(json.dumps(meta, default=_jsonable))


def run_meta(system, asm, settings: dict) -> dict:
    """The meta.json of a run of ``system`` (compiled as ``asm``) with ``settings`` (every argument of simulate
    that changes the result, by name): names and counts (``LEGACY_KEYS``), the settings, and the parameter
    values of every item (flexmb/io/fingerprint.py)."""
    first = {"system": system.name, "nq": asm.nq, "m": asm.m, "method": settings["method"], "h": settings["h"],
             "t_start": settings["t_start"], "t_end": settings["t_end"], "adaptive": bool(settings["adaptive"]),
             "save_every": settings["save_every"], "bodies": [b.name for b in system.bodies],
             "joints": [j.name for j in system.joints], "forces": [f.name for f in system.forces]}
    return {"format": FORMAT, "format_version": FORMAT_VERSION, **first,
            "settings": {k: v for k, v in settings.items() if k not in first}, "parameters": parameters(system)}


# -- reading ---------------------------------------------------------------------------------------------------

def _load(path: Path, fields: tuple, what: str, optional: tuple = ()) -> dict[str, np.ndarray]:
    """The arrays ``fields`` (and those of ``optional`` it holds) of one ``.npz`` file; a ModelError naming the
    file when it is unreadable, truncated, hostile or lacks a field."""
    try:
        with checked_npz(path, what) as z:
            missing = [k for k in fields if k not in z.files]
            if missing:
                raise ModelError(f"{what} {str(path)!r} lacks the field(s) {missing} (not written by this flexmb?)")
            return {k: z[k] for k in (*fields, *optional) if k in z.files}
    except UnsafeFileError:
        raise
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as exc:
        if isinstance(exc, ModelError):
            raise
        raise ModelError(f"{what} {str(path)!r} is corrupt or truncated ({type(exc).__name__}: {exc})") from None


def read_meta(directory) -> dict | None:
    """The meta.json of an output directory, None when there is none (ModelError when unreadable)."""
    path = Path(directory) / "meta.json"
    if not path.exists():
        return None
    try:
        meta = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise ModelError(f"{str(path)!r} is unreadable ({exc}); the run in {str(directory)!r} "
                         "cannot be resumed or loaded") from None
    if not isinstance(meta, dict):
        raise ModelError(f"{str(path)!r} is not the meta.json of a flexmb run (a JSON {type(meta).__name__})")
    return meta


def _is_flexmb_meta(meta: dict | None) -> bool:
    return isinstance(meta, dict) and (meta.get("format") == FORMAT or all(k in meta for k in LEGACY_KEYS))


def _start_of(meta: dict | None) -> float | None:
    return float(meta["t_start"]) if isinstance(meta, dict) and "t_start" in meta else None


def read_chunks(directory) -> dict[str, np.ndarray]:
    """Concatenate every chunk of an output directory, checked whole (ModelError naming the directory and
    the problem): chunks numbered 0, 1, ... without a gap, each continuing the previous one's rows and belonging
    to the run of meta.json, times increasing strictly from ``t_start``, and every row the saved state counts."""
    d = Path(directory)
    if not d.is_dir():
        raise ModelError(f"output directory {str(d)!r} does not exist")
    files = _chunk_files(d)
    if not files:
        raise ModelError(f"no result chunks in {str(d)!r}")
    _check_numbering(d, files)
    parts = {k: [] for k in FIELDS}
    rows = 0
    tags = []
    for _, f in files:
        z = _load(f, FIELDS, "result chunk", optional=TAGS)
        for k in FIELDS:
            parts[k].append(z[k])
        tags.append((f, z.get("run"), z.get("row0"), rows))
        rows += len(z["t"])
    out = {k: stack_rows([r for p in v for r in p]) if k == "history" else np.concatenate(v)
           for k, v in parts.items()}
    if np.any(np.diff(out["t"]) <= 0):
        k = int(np.argmax(np.diff(out["t"]) <= 0))
        raise ModelError(f"result chunks in {str(d)!r}: time {out['t'][k + 1]!r} follows {out['t'][k]!r} "
                         "(times must increase strictly)")
    meta = read_meta(d)
    if meta is None:
        raise ModelError(f"output directory {str(d)!r} holds result chunks but no meta.json: it is not a whole "
                         "flexmb output (removed and made again during the run?) and cannot be loaded or resumed")
    tagged = meta.get("format") == FORMAT
    if tagged:
        for f, run, row0, expected in tags:
            if run is None or row0 is None:
                raise ModelError(f"result chunk {str(f)!r} lacks its run id or first-row index, which every chunk "
                                 f"of a format-{FORMAT_VERSION} output has: it does not belong to this run")
            if str(run) != meta.get("run"):
                raise ModelError(f"result chunk {str(f)!r} belongs to another run ({str(run)!r}) than the one "
                                 f"described by meta.json ({meta.get('run')!r}): the directory mixes two runs")
            if int(row0) != expected:
                raise ModelError(f"result chunk {str(f)!r} starts at saved row {int(row0)}, but the chunks before it "
                                 f"hold {expected} rows: rows {min(expected, int(row0))} to "
                                 f"{max(expected, int(row0)) - 1} are missing or repeated")
    t_start = _start_of(meta)
    if t_start is not None and out["t"][0] != t_start:
        raise ModelError(f"result chunks in {str(d)!r} start at t = {out['t'][0]!r} s, but the run started at "
                         f"t_start = {t_start!r} s: its first rows are missing")
    state = read_state(d)
    written_since = len(_chunk_files(d)) > len(files)     # a running writer added chunks while these were read
    if tagged and state is not None and "rows" in state and int(state["rows"]) > rows and not written_since:
        raise ModelError(f"result chunks in {str(d)!r} hold {rows} saved rows (to t = {out['t'][-1]!r} s), but the "
                         f"saved state at t = {float(state['t'])!r} s follows row {int(state['rows'])}: the rows "
                         "after them are missing (a chunk removed?)")
    return out


def _check_numbering(d: Path, files: list[tuple[int, Path]]) -> None:
    numbers_ = [k for k, _ in files]
    if numbers_[0] != 0:
        raise ModelError(f"output directory {str(d)!r}: its first chunk {_chunk_name(0)} is missing (the chunks "
                         f"start at {files[0][1].name}): the run's first rows are lost, so it is refused rather "
                         "than loaded without its start")
    gaps = [k for k in range(numbers_[-1] + 1) if k not in set(numbers_)]
    if gaps:
        raise ModelError(f"output directory {str(d)!r}: chunk {_chunk_name(gaps[0])} is missing"
                         f"{f' (and {len(gaps) - 1} more)' if len(gaps) > 1 else ''} between {_chunk_name(0)} and "
                         f"{files[-1][1].name}: the result would have a gap, so it is refused")


def read_state(directory) -> dict[str, np.ndarray] | None:
    """The saved integrator state of an output directory (with its run id and row count when written by
    format 2), or None when there is none."""
    path = Path(directory) / "state.npz"
    if not path.exists():
        return None
    return _load(path, STATE_FIELDS, "saved state", optional=STATE_TAGS)


# -- locking ---------------------------------------------------------------------------------------------------

try:
    import fcntl

    def _try_lock(fd: int) -> bool:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except OSError as exc:
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                return False
            raise
except ImportError:                                     # Windows: a lock on the file's first byte
    import msvcrt

    def _try_lock(fd: int) -> bool:
        try:
            os.lseek(fd, 0, os.SEEK_SET)
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
            return True
        except OSError:
            return False

_INFO_OFFSET = 1            # the holder's description starts after the (Windows-)locked first byte


def _holder(path: Path) -> dict:
    """The description a lock file holds (empty when unreadable: its writer is just starting)."""
    try:
        with open(path, "rb") as fh:
            fh.seek(_INFO_OFFSET)
            return json.loads(fh.read().decode() or "{}")
    except (OSError, ValueError):
        return {}


def _describe(holder: dict) -> str:
    if not holder:
        return "a run that is starting (no description written yet)"
    return (f"process {holder.get('pid')} on host {holder.get('host')!r}, started {holder.get('started')} "
            f"(flexmb run {holder.get('run', '?')})")


class OutputLock:
    """An exclusive lock on an output directory for one writer (see the module docstring)."""

    def __init__(self, directory: Path, run: str):
        self.path = directory / LOCK_NAME
        self.fd: int | None = None
        for _ in range(100):           # a holder that released (and removed the file) between our open and lock
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            if not _try_lock(fd):
                os.close(fd)
                holder = _holder(self.path)
                raise OutputLockedError(
                    f"output directory {str(directory)!r} is being written by another run: {_describe(holder)}; "
                    f"it holds the lock {str(self.path)!r}. Wait for it to end, or write to another directory",
                    path=str(directory), holder=holder)
            try:
                same = os.path.samestat(os.fstat(fd), os.stat(self.path))
            except FileNotFoundError:
                same = False
            if same:
                self.fd = fd
                break
            os.close(fd)
        else:
            raise OutputError(f"cannot lock output directory {str(directory)!r}: its lock file keeps being replaced",
                              path=str(directory))
        self.holder = {"pid": os.getpid(), "host": socket.gethostname(),
                       "started": datetime.now(timezone.utc).isoformat(timespec="seconds"), "run": run}
        os.ftruncate(self.fd, 0)
        os.pwrite(self.fd, b"\n" + json.dumps(self.holder).encode(), 0)
        self._stat = os.fstat(self.fd)

    def check(self) -> None:
        """OutputError when the lock file is no longer ours: the directory was removed (or replaced) during the run."""
        try:
            same = os.path.samestat(self._stat, os.stat(self.path))
        except OSError:
            same = False
        if not same:
            d = str(self.path.parent)
            raise OutputError(f"output directory {d!r} was removed or replaced during the run (its lock {LOCK_NAME} "
                              "is gone): nothing more is written there", path=d)

    def release(self) -> None:
        """Remove the lock file and drop the lock (idempotent)."""
        if self.fd is None:
            return
        try:
            if os.path.samestat(self._stat, os.stat(self.path)):
                os.unlink(self.path)
        except OSError:
            pass
        os.close(self.fd)
        self.fd = None


# -- writing ---------------------------------------------------------------------------------------------------

_open_writers = threading.local()


def releases_output(fn):
    """Decorator of ``simulate``: every ChunkWriter opened during the call and still open when it returns or
    raises (an error before the time loop) releases its lock."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        stack = _open_writers.__dict__.setdefault("stack", [])
        mark = len(stack)
        try:
            return fn(*args, **kwargs)
        finally:
            while len(stack) > mark:
                stack.pop().lock.release()
    return wrapper


def _own_entries(directory: Path) -> list[str]:
    return [n for n in os.listdir(directory) if n != LOCK_NAME and not is_temporary_name(n)]


def _check_is_output(directory: Path) -> None:
    """Refuse a non-empty directory that is not a flexmb output: flexmb writes into (and deletes from) its own
    directories only."""
    entries = _own_entries(directory)
    if not entries or any(_CHUNK.fullmatch(n) for n in entries):
        return
    try:
        meta = read_meta(directory)
    except ModelError:
        meta = None
    if not _is_flexmb_meta(meta):
        shown = sorted(entries)[:5]
        raise OutputError(f"output directory {str(directory)!r} is not empty and is not a flexmb output (it holds "
                          f"{shown}{' ...' if len(entries) > 5 else ''} and no flexmb meta.json); flexmb never "
                          "writes over or deletes other files: name a new or empty directory", path=str(directory))


def _check_resumable(directory: Path, old: dict, meta: dict) -> None:
    """Refuse to resume a run of another model or with other settings (ModelError naming the directory, the
    field or parameter and both values)."""
    new = _normalized(meta)
    for key in LEGACY_KEYS:
        if old.get(key) != new[key]:
            raise ModelError(f"cannot resume in {str(directory)!r}: its run has {key} = {old.get(key)!r}, "
                             f"this one {key} = {new[key]!r} (another model or other settings: use a new directory)")
    if old.get("format") != FORMAT:
        raise ModelError(f"cannot resume in {str(directory)!r}: it was written by an older flexmb (no format "
                         f"{FORMAT!r} in meta.json), without the model's parameter values, so a resume could splice "
                         "two models; start a new run in a new directory (Result.load still reads it)")
    for key, value in new["settings"].items():
        before = old.get("settings", {}).get(key, "absent")
        if before != value:
            raise ModelError(f"cannot resume in {str(directory)!r}: its run has the setting {key} = {before!r}, "
                             f"this one {key} = {value!r} (other settings: use a new directory)")
    diff = first_difference(old.get("parameters", {}), new["parameters"])
    if diff is not None:
        item, name, before, value = diff
        raise ModelError(f"cannot resume in {str(directory)!r}: the model's {item} has {name} = {value!r}, but the "
                         f"run there was computed with {name} = {before!r} (another model: resuming would splice "
                         "two models into one result; use a new directory)")


def _check_state_run(directory: Path, state: dict, meta: dict) -> None:
    if "run" not in state or str(state["run"]) != meta.get("run"):
        raise ModelError(f"saved state {str(directory / 'state.npz')!r} belongs to another run "
                         f"({str(state['run']) if 'run' in state else 'none'!r}) than meta.json's "
                         f"({meta.get('run')!r}): the directory mixes two runs and cannot be resumed")


def _trim_to(directory: Path, rows: int) -> None:
    """Keep the first ``rows`` saved rows of the chunks (later ones were written after the saved state, just
    before a crash): the chunk holding row ``rows`` is cut there and later chunks are removed."""
    total = 0
    for _, f in _chunk_files(directory):
        z = _load(f, FIELDS, "result chunk", optional=TAGS)
        n = len(z["t"])
        if total + n > rows:
            keep = rows - total
            if keep > 0:
                write_with(f, lambda fh: np.savez(fh, **{name: (v[:keep] if name in FIELDS else v)
                                                         for name, v in z.items()}), "result chunk")
            else:
                f.unlink()
        total += n


class ChunkWriter:
    """Buffers saved rows; writes a chunk, then the state, every ``chunk_steps`` rows and at least
    every ``flush_seconds`` (s) of wall time (default: the module's ``FLUSH_SECONDS`` when the writer is made).

    Takes the directory's lock (OutputLockedError naming the holder when another run has it) and refuses a
    non-empty directory that is not a flexmb output (OutputError). ``resume=True`` checks ``meta`` against the
    directory's ``meta.json`` (ModelError naming the first difference: names, counts, settings, parameter
    values), reads the saved state (``self.state``, None when there is none), trims chunk rows later than it and
    reads the rows before it (``self.prefix``); otherwise a directory that holds results is refused.
    A failed write raises an OutputError naming the file and the cause, and the writer writes nothing more.
    """

    def __init__(self, directory, meta: dict, chunk_steps: int = 1000, resume: bool = False,
                 flush_seconds: float | None = None):
        self.dir = Path(directory)
        if self.dir.exists() and not self.dir.is_dir():
            raise ModelError(f"output {str(self.dir)!r} is an existing file, not a directory; name a new "
                             "directory (or the directory of the run to resume)")
        if not isinstance(chunk_steps, numbers.Integral) or isinstance(chunk_steps, bool) or chunk_steps < 1:
            raise ModelError(f"chunk_steps must be a positive integer (saved rows per chunk), got {chunk_steps!r}")
        self.chunk_steps = int(chunk_steps)
        self.flush_seconds = float(FLUSH_SECONDS if flush_seconds is None else flush_seconds)   # read at run time
        self.failed = False
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
            _check_is_output(self.dir)
            self.lock = OutputLock(self.dir, run=uuid.uuid4().hex)
        except OSError as exc:
            if isinstance(exc, OutputError):
                raise
            raise OutputError(f"cannot use the output directory {str(self.dir)!r}: {exc.strerror or exc}",
                              path=str(self.dir)) from exc
        try:
            self._open(meta, resume)
        except BaseException:
            self.lock.release()
            raise
        _open_writers.__dict__.setdefault("stack", []).append(self)

    def _open(self, meta: dict, resume: bool) -> None:
        """Under the lock: check the directory, read what a resume continues, write meta.json for a new run."""
        self.state, self.prefix, old = None, None, read_meta(self.dir) if resume else None
        chunks = _chunk_files(self.dir)
        if not resume and (chunks or (self.dir / "state.npz").exists()):
            raise ModelError(f"output directory {str(self.dir)!r} already holds results; use resume=True or a "
                             "new directory")
        if resume and old is None and chunks:
            raise ModelError(f"output directory {str(self.dir)!r} holds result chunks but no meta.json; "
                             "it cannot be resumed")
        for stale in self.dir.iterdir():          # a write of a process that was killed: only flexmb's own names
            if is_temporary_name(stale.name):
                stale.unlink()
        if old is not None:
            _check_resumable(self.dir, old, meta)
            self.meta = old
            self.state = read_state(self.dir)
        if self.state is not None:
            _check_state_run(self.dir, self.state, old)
            rows = int(self.state["rows"])
            read_chunks(self.dir)                   # whole (numbering, rows, run, start) before anything is cut
            _trim_to(self.dir, rows)
            self.prefix = read_chunks(self.dir)
            if len(self.prefix["t"]) != rows:       # read_chunks refuses fewer; more cannot remain after the trim
                raise ModelError(f"output directory {str(self.dir)!r}: {len(self.prefix['t'])} saved rows where "
                                 f"the state counts {rows}")
        else:                                      # a new run, or one that stopped before its first write
            for _, f in chunks:
                f.unlink()
            state = self.dir / "state.npz"
            if state.exists():
                state.unlink()
            self.meta = {**meta, "run": self.lock.holder["run"]}
            write_with(self.dir / "meta.json", lambda fh: fh.write(json.dumps(self.meta, indent=1,
                                                                             default=_jsonable).encode()),
                       "run description", sync_directory=True)
        self.run = self.meta["run"]
        self.lock.holder["run"] = self.run
        self.index = len(_chunk_files(self.dir))
        self.rows = 0 if self.prefix is None else len(self.prefix["t"])
        self.buffer: dict[str, list] = {k: [] for k in FIELDS}
        self._last_write = time.monotonic()

    def append(self, **row) -> None:
        for k in FIELDS:
            self.buffer[k].append(np.asarray(row[k], dtype=float))

    def extend(self, **rows) -> None:
        """Append k rows at once: each field an array (k, ...) of rows, ``history`` a sequence of k vectors."""
        for k in FIELDS:
            self.buffer[k].extend(rows[k] if k == "history" else np.asarray(rows[k], dtype=float))

    def flush(self, state: dict | None = None) -> None:
        """Write the buffered rows as a chunk, then ``state`` (this order: see the module docstring);
        OutputError when a write fails (the writer then writes nothing more)."""
        if self.failed:
            return
        try:
            self.lock.check()
            if self.buffer["t"]:
                arrays = {k: stack_rows(v) if k == "history" else np.array(v) for k, v in self.buffer.items()}
                write_with(self.dir / _chunk_name(self.index),
                           lambda fh: np.savez(fh, **arrays, run=np.array(self.run), row0=np.array(self.rows)),
                           "result chunk")
                self.index += 1
                self.rows += len(arrays["t"])
                self.buffer = {k: [] for k in FIELDS}
            if state is not None:
                write_with(self.dir / "state.npz",
                           lambda fh: np.savez(fh, **state, run=np.array(self.run), rows=np.array(self.rows)),
                           "saved state", sync_directory=True)
        except OSError:
            self.failed = True
            raise
        self._last_write = time.monotonic()

    def maybe_flush(self, state_fn) -> None:
        """Flush when ``chunk_steps`` rows are buffered or ``flush_seconds`` passed since the last write."""
        if (len(self.buffer["t"]) >= self.chunk_steps
                or time.monotonic() - self._last_write >= self.flush_seconds):
            self.flush(state_fn())

    def close(self, state: dict, failure: BaseException | None = None, partial=None) -> None:
        """The last write (rows and ``state``), then release the lock. When it fails: an OutputError carrying
        ``partial`` (the Result computed) as ``result``, chained to ``failure`` (the error that stopped the run,
        if any)."""
        try:
            self.flush(state)
        except OutputError as exc:
            exc.result = partial
            if failure is not None and failure is not exc:
                exc.args = (f"{exc.args[0]}; the run had stopped before with {type(failure).__name__}: {failure}",)
                raise exc from failure
            raise
        finally:
            self.lock.release()
