"""Files written whole or not at all, and files read without trusting them.

Writing: :func:`atomic_write` writes a file under a temporary name unique to the process and the call
(``.<name>.<pid>.<random>.tmp`` beside the target), syncs it to the disk and renames it over the target
(``os.replace``, atomic on POSIX and Windows), so a failed or interrupted save leaves the previous file as it
was. A failure is an :class:`~flexmb.errors.OutputError` naming the file and the cause.

Reading: files from elsewhere are data, never instructions. The readers refuse (UnsafeFileError)

* HDF5 datasets stored in other files (external storage), virtual datasets and links to other files
  (external links) or soft links: each would make flexmb read files the user never named;
* arrays whose declared size the file cannot hold: data stored as written (HDF5 contiguous or chunked
  without filters, ``.npy`` members stored in a zip) may declare at most the file's own size
  (``STORED_BOUND`` x the file size, with ``SLACK_BYTES`` for headers); compressed data (HDF5 filters,
  deflated zip members) may declare at most ``MEMORY_FRACTION`` of the memory available when the file is read,
  summed over the file's arrays -- a small file cannot make flexmb allocate more than that;
* pickled objects (``np.load(..., allow_pickle=False)``; object arrays are refused by numpy and reported here).
"""
from __future__ import annotations

import os
import secrets
import zipfile
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

import numpy as np

from ..errors import OutputError, UnsafeFileError

__all__ = ["atomic_write", "write_with", "temporary_name", "is_temporary_name", "fsync_directory", "ReadBudget",
           "check_npz_members", "checked_npz", "check_hdf5_dataset", "hdf5_child", "available_memory"]

STORED_BOUND = 1.0
"""Uncompressed data: the declared bytes of a file's arrays may sum to at most this multiple of the file size."""

SLACK_BYTES = 1 << 16
"""Allowance (bytes) over ``STORED_BOUND`` x the file size for tiny files (headers, padding)."""

MEMORY_FRACTION = 0.5
"""Compressed data: the declared bytes of a file's arrays may sum to at most this fraction of the memory
available when it is read (``available_memory``)."""

_TMP_SUFFIX = ".tmp"


def temporary_name(path: Path) -> Path:
    """A hidden name beside ``path`` unique to this process and call: ``.<name>.<pid>.<16 hex>.tmp``."""
    return path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(8)}{_TMP_SUFFIX}")


def is_temporary_name(name: str, target: str | None = None) -> bool:
    """Whether ``name`` has the form of :func:`temporary_name` (of ``target`` when given): only such files are
    ever removed as left-overs of an interrupted write, never a user's own ``.*.tmp``."""
    if not (name.startswith(".") and name.endswith(_TMP_SUFFIX)):
        return False
    parts = name[1:-len(_TMP_SUFFIX)].rsplit(".", 2)
    if len(parts) != 3 or not parts[1].isdigit() or len(parts[2]) != 16:
        return False
    try:
        int(parts[2], 16)
    except ValueError:
        return False
    return target is None or parts[0] == target


def fsync_directory(directory: Path) -> None:
    """Make a rename in ``directory`` durable (POSIX; a no-op where directories cannot be opened)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _strerror(exc: BaseException) -> str:
    return (exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)) or type(exc).__name__


@contextmanager
def atomic_write(path: str | os.PathLike, what: str = "file", sync_directory: bool = False,
                 sync: bool = True) -> Iterator[Path]:
    """``with atomic_write(path) as tmp: <write tmp>``: the target appears complete, or keeps its previous
    content when the block raises. The temporary file is synced before the rename (unless ``sync`` is False: files
    rewritten at every step of an export, where a crash may cost the last one) and the directory after it with
    ``sync_directory``. An OSError is re-raised as an OutputError naming ``what`` and the path (chained)."""
    target = Path(path)
    tmp = temporary_name(target)
    try:
        yield tmp
        if sync:
            with open(tmp, "rb+") as fh:
                os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException as exc:
        try:
            tmp.unlink()
        except OSError:
            pass
        if isinstance(exc, OSError) and not isinstance(exc, OutputError):
            raise OutputError(f"cannot write the {what} {str(target)!r}: {_strerror(exc)}; "
                              "any previous file there is unchanged", path=str(target)) from exc
        raise
    if sync_directory:
        fsync_directory(target.parent)


def write_with(path: str | os.PathLike, write: Callable[[object], None], what: str = "file",
               sync_directory: bool = False) -> None:
    """Write ``path`` atomically by ``write(file_object)`` (binary, opened on the temporary name)."""
    with atomic_write(path, what, sync_directory) as tmp:
        with open(tmp, "wb") as fh:
            write(fh)


# -- reading -----------------------------------------------------------------------------------------------

def available_memory() -> int:
    """Bytes of memory available to a new allocation now: Linux's MemAvailable, else the free physical pages
    (``os.sysconf``), else 4 GiB when neither is known."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return int(os.sysconf("SC_AVPHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (AttributeError, ValueError, OSError):
        return 4 << 30


class ReadBudget:
    """The bytes one file may make flexmb allocate: ``stored`` for data kept as written (``STORED_BOUND`` x the
    file size + ``SLACK_BYTES``), ``compressed`` for filtered/deflated data (``MEMORY_FRACTION`` of the available
    memory); each declared array is charged before it is read (UnsafeFileError naming the array otherwise)."""

    def __init__(self, path: Path, what: str):
        self.path, self.what = Path(path), what
        size = self.path.stat().st_size
        self.stored = STORED_BOUND * size + SLACK_BYTES
        self.compressed = MEMORY_FRACTION * available_memory()
        self.file_size = size

    def charge(self, name: str, declared: int, compressed: bool) -> None:
        """Subtract ``declared`` bytes of the array ``name`` from its budget; UnsafeFileError when they exceed it."""
        if compressed:
            if declared > self.compressed:
                raise UnsafeFileError(
                    f"{self.what} {str(self.path)!r}: array {name!r} declares {_bytes(declared)} of compressed data, "
                    f"more than {MEMORY_FRACTION:g} of the available memory ({_bytes(self.compressed)} left for this "
                    "file); refused (a damaged or hostile file)")
            self.compressed -= declared
        else:
            if declared > self.stored:
                raise UnsafeFileError(
                    f"{self.what} {str(self.path)!r}: array {name!r} declares {_bytes(declared)} of uncompressed "
                    f"data, more than the file can hold ({_bytes(self.file_size)} file, {_bytes(self.stored)} left); "
                    "refused (a damaged or hostile file)")
            self.stored -= declared


def _bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024.0 or unit == "TiB":
            return f"{n:.3g} {unit}"
        n /= 1024.0
    return f"{n:.3g} TiB"


def _npy_header(fh) -> tuple[tuple, np.dtype]:
    """Shape and dtype from the header of a ``.npy`` stream (no data read; object dtypes allowed here)."""
    version = np.lib.format.read_magic(fh)
    if version == (1, 0):
        shape, _, dtype = np.lib.format.read_array_header_1_0(fh, max_header_size=1 << 20)
    elif version == (2, 0):
        shape, _, dtype = np.lib.format.read_array_header_2_0(fh, max_header_size=1 << 20)
    else:                       # (3, 0): utf-8 field names, which flexmb never writes
        raise ValueError(f".npy format version {version} (flexmb writes 1.0 and 2.0)")
    return shape, dtype


def check_npz_members(z: np.lib.npyio.NpzFile, path: Path, what: str) -> None:
    """Every member of an open ``.npz`` archive declares an array the file may hold (ReadBudget) and no
    Python objects (UnsafeFileError naming the member otherwise); reads the members' headers only."""
    budget = ReadBudget(path, what)
    for info in z.zip.infolist():
        name = info.filename[:-4] if info.filename.endswith(".npy") else info.filename
        with z.zip.open(info) as fh:
            try:
                shape, dtype = _npy_header(fh)
            except (ValueError, EOFError, SyntaxError, TypeError) as exc:
                raise UnsafeFileError(f"{what} {str(path)!r}: member {name!r} is not a numpy array "
                                      f"({type(exc).__name__}: {exc})") from None
        if dtype.hasobject:
            raise UnsafeFileError(f"{what} {str(path)!r}: array {name!r} holds Python objects (a pickle); flexmb "
                                  "never unpickles a file, which could run any code")
        declared = int(np.prod(shape, dtype=object)) * dtype.itemsize
        if declared > info.file_size:
            raise UnsafeFileError(f"{what} {str(path)!r}: array {name!r} declares {_bytes(declared)} but its zip "
                                  f"member holds {_bytes(info.file_size)}; refused (a damaged or hostile file)")
        budget.charge(name, declared, compressed=info.compress_type != zipfile.ZIP_STORED)


@contextmanager
def checked_npz(path: str | os.PathLike, what: str) -> Iterator[np.lib.npyio.NpzFile]:
    """``np.load(path, allow_pickle=False)`` of an ``.npz`` archive whose members were checked first
    (:func:`check_npz_members`). The file is opened here and closed on every exit: ``np.load(path)`` hands its
    file to the archive before reading the zip directory, so a damaged archive (BadZipFile) left it open."""
    p = Path(path)
    with open(p, "rb") as fh:
        z = np.load(fh, allow_pickle=False)
        if not isinstance(z, np.lib.npyio.NpzFile):
            raise UnsafeFileError(f"{what} {str(p)!r} is a single .npy array, not an .npz archive")
        with z:
            check_npz_members(z, p, what)
            yield z


def hdf5_child(group, name: str, path: Path, what: str):
    """``group[name]`` when it is a hard link inside the file (UnsafeFileError for external and soft links:
    following them would read other files or other places than the file declares)."""
    import h5py
    link = group.get(name, getlink=True)
    if link is None:
        return None
    if not isinstance(link, h5py.HardLink):
        kind = "an external link" if isinstance(link, h5py.ExternalLink) else "a soft link"
        target = f" to {link.filename!r}:{link.path!r}" if isinstance(link, h5py.ExternalLink) else ""
        raise UnsafeFileError(f"{what} {str(path)!r}: {group.name.rstrip('/')}/{name} is {kind}{target}; flexmb "
                              "writes none and follows none (it could read files the user never named)")
    return group[name]


def check_hdf5_dataset(ds, budget: ReadBudget) -> None:
    """Refuse a dataset stored in other files (external storage), a virtual dataset, or one whose declared size
    exceeds the file's budget (UnsafeFileError naming it); call before reading its data."""
    where = f"{budget.what} {str(budget.path)!r}: dataset {ds.name!r}"
    if ds.external:
        raise UnsafeFileError(f"{where} keeps its data in other files {[str(e[0]) for e in ds.external]} "
                              "(HDF5 external storage); flexmb reads data from the file itself only")
    if ds.is_virtual:
        raise UnsafeFileError(f"{where} is a virtual dataset (its data are in other files); flexmb reads data from "
                              "the file itself only")
    declared = int(np.prod(ds.shape, dtype=object)) * ds.dtype.itemsize if ds.shape is not None else 0
    budget.charge(ds.name, declared, compressed=ds.id.get_create_plist().get_nfilters() > 0)
