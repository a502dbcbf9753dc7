"""``flexmb info`` lists numba's version and the state of the kernel cache (flexmb/cli.py, issue 25 item 6)."""
from __future__ import annotations

import os
import re

import numba

from flexmb.cli import main
from flexmb import warm


def info(capsys) -> str:
    assert main(["info"]) == 0
    return capsys.readouterr().out


def test_info_lists_numba(capsys):
    assert re.search(rf"^  numba +{re.escape(numba.__version__)}$", info(capsys), re.M)


def test_info_counts_the_index_files_of_the_cache(capsys, monkeypatch, tmp_path):
    """Two index files, one older than its module's source (numba recompiles it): both counted, one stale."""
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    cache = tmp_path / "pkg" / "__pycache__"
    cache.mkdir(parents=True)
    files = []
    for module, age in (("fresh", 0), ("edited", 100)):
        source, index = tmp_path / "pkg" / f"{module}.py", cache / f"{module}.kernel-12.py311.nbi"
        source.write_text("")
        index.write_text("")
        stamp = os.path.getmtime(source)
        os.utime(index, (stamp - age, stamp - age))     # 'edited': its source changed after the cache was written
        files.append(str(index))
    monkeypatch.setattr(warm, "cached_kernel_files", lambda ext: files if ext == "nbi" else [])
    line = next(ln for ln in info(capsys).splitlines() if ln.startswith("numba kernel cache:"))
    assert "partly stale: 1 older than their source" in line and "(2 index files *.nbi" in line, line


def test_info_says_when_nothing_is_compiled(capsys, monkeypatch):
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    monkeypatch.setattr(warm, "cached_kernel_files", lambda ext: [])
    assert "numba kernel cache: not compiled (no cached kernels): run 'flexmb compile-kernels'" in info(capsys)


def test_info_reads_the_installed_cache(capsys, monkeypatch):
    """This checkout's cache (compiled by .ci/setup): as many index files as the glob finds, and not 'not compiled'."""
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    n = len(warm.cached_kernel_files("nbi"))
    line = next(ln for ln in info(capsys).splitlines() if ln.startswith("numba kernel cache:"))
    assert f"({n} index files" in line if n else "not compiled" in line
