"""Output that is whole or refused, and files read without trusting them (issue 22, items 1 and 7).

Output directories (flexmb/io/chunks.py): a lock per directory, temporary names unique per process, a
fingerprint of every parameter value and setting checked on resume, chunk numbering and first rows checked on
load and resume, foreign directories refused, I/O failures raised as OutputError with the partial result.
Saves (flexmb/io/safe.py) keep the previous file when they fail. Readers refuse HDF5 external storage, virtual
datasets, external links, sizes the file cannot hold, and pickles.
"""
from __future__ import annotations

import errno
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import h5py
import numpy as np
import pytest

import flexmb as fm
from flexmb.errors import ModelError, NonFiniteError, OutputError, OutputLockedError, UnsafeFileError
from flexmb.io import safe
from flexmb.io.chunks import LOCK_NAME, read_chunks

H, T_END = 1e-3, 0.1
"""Step (s) and end (s) of the small runs: 101 saved rows, chunks of 10 rows, in well under a second."""

pytestmark = pytest.mark.usefixtures("progress_every_step")    # callbacks stop runs at chosen steps


def pendulum(k: float = 2.0, g: float = 9.81, mass: float = 1.0, length: float = 0.5, name: str = "pendulum"):
    """A pendulum on a revolute with a rotational spring (stiffness ``k``, N m/rad) at its pin."""
    s = fm.System(gravity=(0.0, -g, 0.0), name=name)
    b = s.add(fm.RigidBody(mass, (0.01, 0.01, 0.01), position=(length, 0.0, 0.0), name="bob"))
    s.add(fm.Revolute(s.ground, b, (0.0, 0.0, 0.0), (0.0, 0.0, 1.0), name="pin"))
    s.add(fm.RotationalSpringDamper(s.ground, b, axis=(0.0, 0.0, 1.0), k=k, c=0.01, name="spring"))
    return s


class Stop(KeyboardInterrupt):
    pass


def stop_after(n: int, action=None):
    """A progress callback that runs ``action`` (if any) and stops the run (as Ctrl-C) after ``n`` steps."""
    calls = {"n": 0}

    def progress(t, t_end):
        calls["n"] += 1
        if calls["n"] == n:
            if action is not None:
                action()
            else:
                raise Stop
    return progress


def interrupted(run: Path, steps: int = 50, **model) -> Path:
    """An output directory of a run stopped after ``steps`` steps (chunks of 10 rows)."""
    with pytest.raises(Stop):
        fm.simulate(pendulum(**model), T_END, H, output=run, chunk_steps=10, progress=stop_after(steps))
    return run


def chunk_names(run: Path) -> list[str]:
    return sorted(p.name for p in run.glob("chunk_*.npz"))


# -- resume checks every parameter value and setting ------------------------------------------------------------

@pytest.mark.parametrize("change, words", [
    (dict(k=3.0), ["force element 'spring'", "k = 3.0", "k = 2.0"]),
    (dict(g=1.62), ["system", "gravity", "-1.62", "-9.81"]),
    (dict(mass=2.0), ["body 'bob'", "mass = 2.0", "mass = 1.0"]),
    (dict(length=0.6), ["body 'bob'", "position", "0.6", "0.5"]),
])
def test_resume_with_another_parameter_value_names_it(tmp_path, change, words):
    """Before: names and counts only were compared, and the resume 'completed' a result spliced from two
    models. Now a changed value is a ModelError naming the item, the parameter and both values."""
    run = interrupted(tmp_path / "run")
    with pytest.raises(ModelError) as info:
        fm.simulate(pendulum(**change), T_END, H, output=run, chunk_steps=10, resume=True)
    for w in words:
        assert w in str(info.value), str(info.value)
    assert "cannot resume" in str(info.value)


@pytest.mark.parametrize("setting, value", [("newton_tol", 1e-10), ("rtol", 1e-6), ("max_newton", 30),
                                            ("velocity_projection", True), ("contact_tol", 1e-6)])
def test_resume_with_another_setting_names_it(tmp_path, setting, value):
    run = interrupted(tmp_path / "run")
    with pytest.raises(ModelError, match=f"setting {setting} = .*this one {setting} = {value!r}"):
        fm.simulate(pendulum(), T_END, H, output=run, chunk_steps=10, resume=True, **{setting: value})


def test_resume_with_the_same_model_equals_an_uninterrupted_run(tmp_path):
    """The fingerprint of a model built anew (another process would do the same) matches: resume continues."""
    run = interrupted(tmp_path / "run")
    res = fm.simulate(pendulum(), T_END, H, output=run, chunk_steps=10, resume=True)
    full = fm.simulate(pendulum(), T_END, H)
    assert np.array_equal(res.t, full.t)
    np.testing.assert_allclose(res.q, full.q, rtol=0, atol=1e-12)      # the same steps: round-off only
    meta = json.loads((run / "meta.json").read_text())
    assert meta["parameters"]["force element 'spring'"]["k"] == 2.0
    assert meta["settings"]["newton_tol"] == 1e-8
    assert not (run / LOCK_NAME).exists()                            # released at the end


# -- gaps and missing starts ---------------------------------------------------------------------------------

def test_a_removed_middle_chunk_is_a_gap_for_load_and_resume(tmp_path):
    """Before: Result.load and resume accepted a gap of 10 rows (t 0.01 -> 0.02 s in one row)."""
    run = interrupted(tmp_path / "run")
    (run / "chunk_00001.npz").unlink()
    with pytest.raises(ModelError, match="chunk_00001.npz is missing"):
        fm.load_result(run)
    files = {p.name: p.read_bytes() for p in run.iterdir()}
    with pytest.raises(ModelError, match="chunk_00001.npz is missing"):
        fm.simulate(pendulum(), T_END, H, output=run, chunk_steps=10, resume=True)
    assert {p.name: p.read_bytes() for p in run.iterdir()} == files          # the refused resume changed nothing


def test_a_removed_first_chunk_is_a_missing_start(tmp_path):
    run = interrupted(tmp_path / "run")
    (run / "chunk_00000.npz").unlink()
    with pytest.raises(ModelError, match="first chunk chunk_00000.npz is missing"):
        fm.load_result(run)


def test_a_removed_last_chunk_is_refused_by_resume_and_load(tmp_path):
    """The state counts the rows written before it: a resume would otherwise leave a gap of 10 rows."""
    run = interrupted(tmp_path / "run")
    last = chunk_names(run)[-1]
    (run / last).unlink()
    with pytest.raises(ModelError, match="rows after them are missing"):
        fm.simulate(pendulum(), T_END, H, output=run, chunk_steps=10, resume=True)
    with pytest.raises(ModelError, match="rows after them are missing"):
        fm.load_result(run)


def test_a_chunk_of_another_run_is_refused(tmp_path):
    """Chunks from another run of the same model, copied in, do not pass for this run's rows."""
    a, b = interrupted(tmp_path / "a"), interrupted(tmp_path / "b", steps=30)
    shutil.copy(b / "chunk_00002.npz", a / "chunk_00002.npz")
    with pytest.raises(ModelError, match="another run"):
        fm.load_result(a)


def test_a_trimmed_chunk_is_a_gap(tmp_path):
    run = interrupted(tmp_path / "run")
    with np.load(run / "chunk_00001.npz") as z:
        arrays = {k: z[k] for k in z.files}
    np.savez(run / "chunk_00001.npz", **{k: (v[:5] if v.ndim else v) for k, v in arrays.items()})
    with pytest.raises(ModelError, match="starts at saved row 20, but the chunks before it hold 15 rows"):
        fm.load_result(run)


def test_directory_removed_and_made_again_mid_run(tmp_path):
    """Before: the run wrote its later chunks into the new directory, which loaded without its first rows.
    Now the writer notices its lock is gone and stops with an OutputError carrying every computed row, and the
    new directory (chunks without meta.json, not from 0) is refused."""
    run = tmp_path / "run"

    def remake():
        shutil.rmtree(run)
        run.mkdir()
    with pytest.raises(OutputError, match="removed or replaced during the run") as info:
        fm.simulate(pendulum(), T_END, H, output=run, chunk_steps=10, progress=stop_after(35, remake))
    res = info.value.result
    full = fm.simulate(pendulum(), T_END, H)
    assert res is not None and res.t[0] == 0.0 and res.t.size >= 36
    np.testing.assert_allclose(res.q, full.q[:res.t.size], rtol=0, atol=1e-12)
    assert chunk_names(run) == []           # nothing more was written there


# -- foreign directories --------------------------------------------------------------------------------------

def test_output_refuses_a_directory_of_the_users_files(tmp_path):
    """Before: the user's meta.json and state.npz were overwritten and their .*.tmp files deleted."""
    d = tmp_path / "mine"
    d.mkdir()
    files = {"meta.json": b'{"my": "notes"}', "state.npz": b"my own state", ".draft.tmp": b"draft",
             ".state.npz.tmp": b"mine too"}
    for name, data in files.items():
        (d / name).write_bytes(data)
    for resume in (False, True):
        with pytest.raises(OutputError, match="not a flexmb output"):
            fm.simulate(pendulum(), T_END, H, output=d, resume=resume)
    assert {p.name: p.read_bytes() for p in d.iterdir()} == files


def test_a_users_tmp_files_in_an_output_directory_survive_a_resume(tmp_path):
    run = interrupted(tmp_path / "run")
    (run / ".notes.tmp").write_text("mine")
    (run / ".chunk_00009.npz.tmp").write_text("mine too")           # a name older flexmb versions used
    fm.simulate(pendulum(), T_END, H, output=run, chunk_steps=10, resume=True)
    assert (run / ".notes.tmp").read_text() == "mine" and (run / ".chunk_00009.npz.tmp").read_text() == "mine too"


def test_temporary_names_are_unique_per_process_and_call(tmp_path):
    """Before: every process used '.chunk_00000.npz.tmp', so two writers renamed each other's files."""
    a, b = safe.temporary_name(tmp_path / "state.npz"), safe.temporary_name(tmp_path / "state.npz")
    assert a != b and f".{os.getpid()}." in a.name
    assert safe.is_temporary_name(a.name, "state.npz") and not safe.is_temporary_name(".state.npz.tmp")


# -- one writer per directory ------------------------------------------------------------------------------------

WRITER = """
import sys, time
sys.path.insert(0, {tests!r})
import flexmb as fm
from test_output_integrity import pendulum
fm.simulate(pendulum(), 1e4, 1e-3, output=sys.argv[1], chunk_steps=10, progress=lambda t, t_end: time.sleep(0.001))
"""


def start_writer(run: Path) -> subprocess.Popen:
    """A run in another process writing into ``run`` until killed; returns once its lock is taken and a chunk
    is written (polling the directory, not timing)."""
    child = subprocess.Popen([sys.executable, "-c", WRITER.format(tests=str(Path(__file__).parent)), str(run)])
    deadline = time.monotonic() + 300.0           # a safety net only; the condition is the files
    while not ((run / LOCK_NAME).exists() and (run / "chunk_00000.npz").exists()):
        assert child.poll() is None, "the writer ended early"
        assert time.monotonic() < deadline, "the writer wrote nothing within 300 s"
        time.sleep(0.02)
    return child


def test_a_second_writer_is_refused_naming_the_holder_and_a_dead_holders_lock_is_taken_over(tmp_path):
    """Before: two runs into one directory died with a raw FileNotFoundError or mixed both runs, and a resume
    beside a running writer left a gap. Now the second writer, new or resuming, gets an OutputLockedError naming
    the holder's pid, host and start time; after the holder is killed (SIGKILL: the OS drops its lock) a resume
    takes the stale lock over and continues."""
    run = tmp_path / "run"
    child = start_writer(run)
    try:
        for resume in (False, True):
            with pytest.raises(OutputLockedError) as info:
                fm.simulate(pendulum(), T_END, H, output=run, chunk_steps=10, resume=resume)
            holder = info.value.holder
            assert holder["pid"] == child.pid and holder["host"] and holder["started"]
            assert f"process {child.pid}" in str(info.value) and "started" in str(info.value)
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.kill()
        child.wait()
    assert json.loads((run / LOCK_NAME).read_bytes())["pid"] == child.pid          # left behind, stale
    with pytest.raises(ModelError, match="t_end"):           # the lock was taken: the resume reached its checks
        fm.simulate(pendulum(), T_END, H, output=run, chunk_steps=10, resume=True)
    with pytest.raises(Stop):
        fm.simulate(pendulum(), 1e4, 1e-3, output=run, chunk_steps=10, resume=True, progress=stop_after(20))
    back = read_chunks(run)
    assert np.all(np.diff(back["t"]) > 0) and back["t"][0] == 0.0
    np.testing.assert_allclose(np.diff(back["t"]), 1e-3, rtol=1e-6)      # every step, no gap
    assert not (run / LOCK_NAME).exists()


def test_a_second_writer_in_the_same_process_is_refused(tmp_path):
    run = tmp_path / "run"

    def again():
        with pytest.raises(OutputLockedError, match=f"process {os.getpid()}"):
            fm.simulate(pendulum(), T_END, H, output=run, resume=True)
        raise Stop
    with pytest.raises(Stop):
        fm.simulate(pendulum(), T_END, H, output=run, chunk_steps=10, progress=stop_after(20, again))
    fm.simulate(pendulum(), T_END, H, output=run, chunk_steps=10, resume=True)        # released: resumes


def test_the_lock_is_released_when_the_run_fails_before_its_first_step(tmp_path):
    run = tmp_path / "run"
    s = pendulum()
    s.add(fm.Force(s.body("bob"), lambda t: (np.nan, 0.0, 0.0), name="bad"))
    with pytest.raises(fm.errors.FlexmbError):
        fm.simulate(s, T_END, H, output=run)
    assert not (run / LOCK_NAME).exists()


# -- I/O failures ------------------------------------------------------------------------------------------------

class FailingDisk:
    """``os.fsync`` of flexmb's writes raising ENOSPC once ``failing`` is set (a disk that fills up)."""

    def __init__(self, monkeypatch):
        self.failing = False
        real = os.fsync

        def fsync(fd):
            if self.failing:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            return real(fd)
        monkeypatch.setattr(safe.os, "fsync", fsync)


def test_disk_full_mid_run_raises_output_error_with_the_partial_result(tmp_path, monkeypatch):
    """Before: a raw OSError without the rows computed."""
    disk = FailingDisk(monkeypatch)
    run = tmp_path / "run"
    with pytest.raises(OutputError, match="No space left") as info:
        fm.simulate(pendulum(), T_END, H, output=run, chunk_steps=10,
                    progress=stop_after(35, lambda: setattr(disk, "failing", True)))
    err = info.value
    assert isinstance(err.__cause__, OSError) and err.__cause__.errno == errno.ENOSPC
    full = fm.simulate(pendulum(), T_END, H)
    assert err.result.t.size >= 36
    np.testing.assert_allclose(err.result.q, full.q[:err.result.t.size], rtol=0, atol=1e-12)
    assert not (run / LOCK_NAME).exists()
    disk.failing = False
    back = read_chunks(run)                          # what reached the disk is whole: rows 0-29 or 0-39
    assert back["t"][0] == 0.0 and back["t"].size % 10 == 0


def test_a_solver_failure_and_a_failing_disk_at_once(tmp_path, monkeypatch):
    """Before: the OSError of the last write hid the solver's error. Now: an OutputError carrying the partial
    result, whose cause is the solver's error."""
    disk = FailingDisk(monkeypatch)

    def push(t):
        if t > 0.05:
            disk.failing = True
            return (np.nan, 0.0, 0.0)
        return (0.0, 0.0, 0.0)
    s = pendulum()
    s.add(fm.Force(s.body("bob"), push, name="push"))
    with pytest.raises(OutputError) as info:
        fm.simulate(s, T_END, H, output=tmp_path / "run", chunk_steps=1000)
    err = info.value
    assert isinstance(err.__cause__, NonFiniteError), repr(err.__cause__)
    assert "NonFiniteError" in str(err)
    assert err.result is not None and err.result.t[-1] == pytest.approx(0.05, abs=1.5e-3)


def test_an_output_path_under_a_file_is_an_output_error(tmp_path):
    """A read-only place for root: a directory cannot be made under a file (chmod does not stop root)."""
    (tmp_path / "file").write_text("x")
    with pytest.raises(OutputError, match="cannot use the output directory"):
        fm.simulate(pendulum(), T_END, H, output=tmp_path / "file" / "run")


FULL_DISK = """
import resource, signal, sys, json
sys.path.insert(0, {tests!r})
import flexmb as fm
from flexmb.errors import OutputError
from test_output_integrity import pendulum
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)          # a write past the limit fails with EFBIG instead
resource.setrlimit(resource.RLIMIT_FSIZE, (60000, 60000))
try:
    fm.simulate(pendulum(), 0.5, 1e-3, output=sys.argv[1], chunk_steps=400)
    print(json.dumps({{"raised": None}}))
except Exception as exc:
    cause = exc.__cause__
    print(json.dumps({{"raised": type(exc).__name__, "rows": None if getattr(exc, "result", None) is None
                       else int(exc.result.t.size), "errno": getattr(cause, "errno", None)}}))
"""


def test_a_file_size_limit_mid_run_raises_output_error_with_the_result(tmp_path):
    """RLIMIT_FSIZE (ulimit -f) in a subprocess: a chunk of 400 rows (~100 kB) exceeds 60 kB, as a full disk would
    stop it. Before: a raw OSError (EFBIG) without the result."""
    out = subprocess.run([sys.executable, "-c", FULL_DISK.format(tests=str(Path(__file__).parent)),
                          str(tmp_path / "run")], capture_output=True, text=True, timeout=300)
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert report == {"raised": "OutputError", "rows": 400, "errno": errno.EFBIG}, (report, out.stderr[-2000:])


SAVE_OVER = """
import resource, signal, sys
sys.path.insert(0, {tests!r})
import flexmb as fm
from test_output_integrity import pendulum, mode_set
kind, path, limit = sys.argv[1], sys.argv[2], int(sys.argv[3])
big = fm.simulate(pendulum(), 2.0, 1e-3) if kind != "modes" else mode_set(40)
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
try:
    big.save(path)
    print("saved")
except Exception as exc:
    print(type(exc).__name__)
"""


def mode_set(n: int = 4):
    """The Craig-Bampton set of a cantilever of ``n`` beam elements (small, for file tests)."""
    points = np.column_stack([np.linspace(0.0, 1.0, n + 1), np.zeros(n + 1), np.zeros(n + 1)])
    mesh = fm.FEMesh(points, {"line": np.column_stack([np.arange(n), np.arange(1, n + 1)])},
                     node_sets={"root": [0]})
    model = fm.FEModel(mesh, fm.Material(E=7e10, nu=0.3, rho=2700.0), sections=fm.BeamSection.rectangle(0.04, 0.02))
    return fm.craig_bampton(model, {"root": "root"}, n_modes=4, reference="root", stress=False)


@pytest.mark.parametrize("kind, name", [("npz", "r.npz"), ("hdf5", "r.h5"), ("modes", "m.npz")])
def test_a_failed_save_keeps_the_previous_file(tmp_path, kind, name):
    """Result.save (.npz, .h5) and ModeSet.save over a good file, in a subprocess whose file size limit the new
    file exceeds (the good file's size + 4 kB; the new one is larger: 2001 rows instead of 11, 40 elements
    instead of 4). Before: the good file was truncated and left half-written."""
    path = tmp_path / name
    (fm.simulate(pendulum(), 0.01, 1e-3) if kind != "modes" else mode_set(4)).save(path)
    good = path.read_bytes()
    out = subprocess.run([sys.executable, "-c", SAVE_OVER.format(tests=str(Path(__file__).parent)), kind, str(path),
                          str(len(good) + 4096)], capture_output=True, text=True, timeout=300)
    assert out.stdout.strip().splitlines()[-1] == "OutputError", out.stdout + out.stderr[-2000:]
    assert path.read_bytes() == good
    assert [p.name for p in tmp_path.iterdir()] == [name]          # no temporary file left


# -- hostile files -----------------------------------------------------------------------------------------------

@pytest.fixture
def saved_h5(tmp_path):
    path = tmp_path / "r.h5"
    fm.simulate(pendulum(), 0.01, 1e-3).save(path)
    return path


def _replace_raw(path: Path, name: str, make) -> None:
    with h5py.File(path, "r+") as f:
        del f["raw"][name]
        make(f["raw"], name)


def _read_both(path: Path):
    """Both HDF5 readers: without the system (named series and raw arrays) and Result.load."""
    for read in (lambda: fm.load_result(path), lambda: fm.Result.load(path)):
        with pytest.raises(UnsafeFileError) as info:
            read()
        yield str(info.value)


def test_hdf5_external_storage_is_refused(tmp_path, saved_h5):
    """Before: a dataset with external storage read any file the process could read into the result."""
    secret = tmp_path / "secret.bin"
    secret.write_bytes(np.arange(11.0).tobytes())
    _replace_raw(saved_h5, "t", lambda g, n: g.create_dataset(n, shape=(11,), dtype="f8",
                                                               external=[(str(secret), 0, 88)]))
    for message in _read_both(saved_h5):
        assert "external storage" in message and "secret.bin" in message


def test_hdf5_virtual_dataset_is_refused(tmp_path, saved_h5):
    other = tmp_path / "other.h5"
    with h5py.File(other, "w") as f:
        f["x"] = np.arange(11.0)
    layout = h5py.VirtualLayout(shape=(11,), dtype="f8")
    layout[:] = h5py.VirtualSource(str(other), "x", shape=(11,))
    _replace_raw(saved_h5, "t", lambda g, n: g.create_virtual_dataset(n, layout))
    for message in _read_both(saved_h5):
        assert "virtual dataset" in message


def test_hdf5_external_link_is_refused(tmp_path, saved_h5):
    other = tmp_path / "other.h5"
    with h5py.File(other, "w") as f:
        f["x"] = np.arange(11.0)
    with h5py.File(saved_h5, "r+") as f:
        del f["raw"]["t"]
        f["raw"]["t"] = h5py.ExternalLink(str(other), "/x")
    for message in _read_both(saved_h5):
        assert "external link" in message and "other.h5" in message


def test_hdf5_declaring_72_tib_is_refused(saved_h5):
    """Before: a 12 MB file declaring 72.8 TiB gave a raw MemoryError. A compressed dataset declaring
    10^13 doubles with no chunk written (every value the fill value) is refused against the memory bound, and an
    uncompressed one against the file size."""
    _replace_raw(saved_h5, "q", lambda g, n: g.create_dataset(n, shape=(10 ** 12, 10), dtype="f8",
                                                               chunks=(1000, 10), compression="gzip"))
    for message in _read_both(saved_h5):
        assert "/raw/q" in message and "compressed" in message and "available memory" in message
    _replace_raw(saved_h5, "q", lambda g, n: g.create_dataset(n, shape=(10 ** 9, 7), dtype="f8"))
    for message in _read_both(saved_h5):
        assert "/raw/q" in message and "more than the file can hold" in message


def _npz_declaring(path: Path, name: str, shape: tuple, compress: int, arrays: dict | None = None) -> None:
    """An .npz whose member ``name`` has a header declaring ``shape`` (float64) but holds 8 bytes of data."""
    header = {"descr": "<f8", "fortran_order": False, "shape": shape}
    with zipfile.ZipFile(path, "w", compression=compress) as z:
        for k, v in (arrays or {}).items():
            with z.open(k + ".npy", "w") as fh:
                np.lib.format.write_array(fh, np.asarray(v))
        with z.open(name + ".npy", "w") as fh:
            np.lib.format.write_array_header_1_0(fh, header)
            fh.write(b"\0" * 8)


@pytest.mark.parametrize("compress", [zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED])
def test_npz_declaring_more_than_it_holds_is_refused(tmp_path, compress):
    """Before: numpy allocated the declared array: a raw MemoryError (or numpy's ValueError)."""
    res = fm.simulate(pendulum(), 0.01, 1e-3)
    arrays = {k: getattr(res, k) for k in fm.Result.ARRAYS if k != "q"} | {"message": np.array("completed")}
    path = tmp_path / "r.npz"
    _npz_declaring(path, "q", (10 ** 12, 10), compress, arrays)
    with pytest.raises(UnsafeFileError, match="array 'q' declares 72.8 TiB"):
        fm.Result.load(path)


def test_mode_set_declaring_more_than_it_holds_is_refused(tmp_path):
    path = tmp_path / "m.npz"
    _npz_declaring(path, "phi", (10 ** 12,), zipfile.ZIP_DEFLATED)
    with pytest.raises(UnsafeFileError, match="array 'phi' declares"):
        fm.ModeSet.load(path)


def test_study_table_with_a_pickle_is_refused(tmp_path):
    """Before: a raw ValueError from np.load ('Object arrays cannot be loaded when allow_pickle=False')."""
    path = tmp_path / "table.npz"
    np.savez(path, __columns__=np.array(["case"]), __params__=np.array([], dtype=str),
             __metrics__=np.array([], dtype=str), __name__=np.array(""),
             case=np.array([{"a": 1}], dtype=object))
    from flexmb.studies.table import StudyResult
    with pytest.raises(UnsafeFileError, match="pickle"):
        StudyResult.load(path)


def test_study_table_round_trip(tmp_path):
    from flexmb.studies.table import StudyResult
    rows = [{"case": 0, "param_hash": "ab", "x": 1.5, "status": "ok", "error_type": "", "error": "", "y": 2.0}]
    table = StudyResult(rows, ["x"], ["y"], "demo")
    table.to_npz(tmp_path / "t.npz")
    back = StudyResult.load(tmp_path / "t.npz")
    assert back.columns == table.columns and back["x"].tolist() == [1.5] and back.name == "demo"
    assert [p.name for p in tmp_path.iterdir()] == ["t.npz"]


def test_a_finished_run_resumes_to_itself(tmp_path):
    run = tmp_path / "run"
    full = fm.simulate(pendulum(), T_END, H, output=run, chunk_steps=10)
    again = fm.simulate(pendulum(), T_END, H, output=run, chunk_steps=10, resume=True)
    assert np.array_equal(again.t, full.t) and np.array_equal(again.q, full.q)
    assert np.array_equal(fm.load_result(run).t, full.t)


def test_an_output_of_an_older_flexmb_loads_but_is_not_resumed(tmp_path):
    """Without parameter values in its meta.json a resume could splice two models: refused; loading still works."""
    run = interrupted(tmp_path / "run")
    meta = json.loads((run / "meta.json").read_text())
    for key in ("format", "format_version", "run", "settings", "parameters"):
        del meta[key]
    (run / "meta.json").write_text(json.dumps(meta))
    assert fm.load_result(run).t.size == 51                  # the start and 50 steps
    with pytest.raises(ModelError, match="older flexmb"):
        fm.simulate(pendulum(), T_END, H, output=run, chunk_steps=10, resume=True)


def test_resume_with_an_edited_user_function_is_refused(tmp_path):
    """A user function's constants are parameters too: a load of 1 N edited to 2 N is another model."""
    def model(load: float):
        s = pendulum()
        s.add(fm.Force(s.body("bob"), lambda t: (0.0, load, 0.0), name="push"))
        return s
    run = tmp_path / "run"
    with pytest.raises(Stop):
        fm.simulate(model(1.0), T_END, H, output=run, chunk_steps=10, progress=stop_after(30))
    with pytest.raises(ModelError, match=r"force element 'push' has vector.closure.load = 2.0.*load = 1.0"):
        fm.simulate(model(2.0), T_END, H, output=run, chunk_steps=10, resume=True)
    fm.simulate(model(1.0), T_END, H, output=run, chunk_steps=10, resume=True)      # the same function: resumes
