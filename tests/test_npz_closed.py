"""A damaged .npz archive is refused without leaving its file open: ``np.load(path)`` hands the file to the archive
before reading the zip directory, so a truncated archive (BadZipFile) leaked it (a ResourceWarning at garbage
collection, three of them in a test run). flexmb.io.safe.checked_npz opens and closes the file itself."""
import gc
import warnings

import numpy as np
import pytest

from flexmb.io.safe import checked_npz


def leaked_files(read) -> list[str]:
    """The ResourceWarnings of files left open by ``read()`` (which must raise), after a garbage collection."""
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always", ResourceWarning)
        with pytest.raises(Exception):
            read()
        gc.collect()
    return [str(w.message) for w in record if issubclass(w.category, ResourceWarning)]


def read_all(path) -> None:
    with checked_npz(path, "test file") as z:
        dict(z)


def test_truncated_archive_is_closed(tmp_path):
    path = tmp_path / "truncated.npz"
    np.savez(path, a=np.arange(1000.0))
    path.write_bytes(path.read_bytes()[:200])
    assert leaked_files(lambda: read_all(path)) == []


def test_single_array_is_refused_and_closed(tmp_path):
    path = tmp_path / "one.npz"
    with open(path, "wb") as fh:
        np.save(fh, np.arange(3.0))
    assert leaked_files(lambda: read_all(path)) == []
    with pytest.raises(Exception, match="single .npy array, not an .npz archive"):
        read_all(path)
