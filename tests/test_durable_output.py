"""Durable output (issue 10, item 4): the element history belongs to the saved state, a run killed
with SIGKILL loses at most about FLUSH_SECONDS of computation, and resume never repeats or
reorders times (flexmb/io/chunks.py).
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import flexmb as fm
from flexmb.io.chunks import LOCK_NAME, read_chunks, read_state

sys.path.insert(0, str(Path(__file__).parent))
from test_rerun_state import crush_cart  # noqa: E402

TOL = 1e-12

pytestmark = pytest.mark.usefixtures("progress_every_step")    # callbacks stop runs at chosen steps


class Interrupt(KeyboardInterrupt):
    pass


def interrupt_after(n_steps: int):
    """A progress callback that interrupts the run after ``n_steps`` accepted steps (like Ctrl-C)."""
    calls = {"n": 0}

    def progress(t, t_end):
        calls["n"] += 1
        if calls["n"] == n_steps:
            raise Interrupt
    return progress


@pytest.mark.parametrize("save_every", [1, 4])
def test_crush_run_interrupted_half_way_resumes_with_its_history(tmp_path, save_every):
    """The crush element's largest crush, absorbed work and previous load continue on resume."""
    s, kw = crush_cart()
    full = fm.simulate(s, **kw, save_every=save_every)
    run = tmp_path / "run"
    with pytest.raises(Interrupt):
        fm.simulate(s, **kw, save_every=save_every, output=run, chunk_steps=5, progress=interrupt_after(30))
    state = read_state(run)
    assert float(state["t"]) == pytest.approx(0.03) and state["history"].size > 0
    assert np.array_equal(read_chunks(run)["t"], full.t[full.t <= float(state["t"])])
    res = fm.simulate(s, **kw, save_every=save_every, output=run, chunk_steps=5, resume=True)
    assert np.array_equal(res.t, full.t)
    for k in ("q", "v", "lam", "work_nc", "history"):
        np.testing.assert_allclose(getattr(res, k), getattr(full, k), rtol=0, atol=TOL, err_msg=k)
    back = fm.load_result(run, system=s)
    assert np.array_equal(back.t, full.t)
    np.testing.assert_allclose(back.energy()["total"], full.energy()["total"], rtol=0, atol=TOL * 80.0)


def test_rows_written_after_the_state_are_trimmed_on_resume(tmp_path):
    """A crash between writing a chunk and writing the state leaves chunk rows later than the state:
    resume drops them, so no time is repeated."""
    s, kw = crush_cart()
    run = tmp_path / "run"
    with pytest.raises(Interrupt):
        fm.simulate(s, **kw, output=run, chunk_steps=5, progress=interrupt_after(20))
    early = read_state(run)
    with pytest.raises(Interrupt):
        fm.simulate(s, **kw, output=run, chunk_steps=5, resume=True, progress=interrupt_after(12))
    np.savez(run / "state.npz", **early)             # as if the crash came before the state's write
    assert read_chunks(run)["t"][-1] > float(early["t"])
    res = fm.simulate(s, **kw, output=run, chunk_steps=5, resume=True)
    full = fm.simulate(s, **kw)
    assert np.array_equal(res.t, full.t)
    assert np.array_equal(read_chunks(run)["t"], full.t)
    np.testing.assert_allclose(res.q, full.q, rtol=0, atol=TOL)


def winding_wheel_long():
    """A wheel winding a soft rotational spring (history: the unwrapping reference), run long enough
    to write several chunks by wall time."""
    s = fm.System(name="long wheel")
    b = s.add(fm.RigidBody(1.0, (0.1, 0.1, 0.1), angular_velocity=(0, 0, 20.0), name="wheel"))
    s.add(fm.Revolute(s.ground, b, (0, 0, 0), (0, 0, 1), name="axle"))
    s.add(fm.RotationalSpringDamper(s.ground, b, axis=(0, 0, 1), k=0.1, c=0.01, name="spring"))
    return s, dict(t_end=10.0, h=1e-3)


CHILD = """
import sys
sys.path.insert(0, {tests!r})
import flexmb as fm
import flexmb.io.chunks
from test_durable_output import winding_wheel_long
flexmb.io.chunks.FLUSH_SECONDS = 0.05        # chunks by wall time, often, so the kill comes early in the run
import flexmb.solvers.progress
flexmb.solvers.progress.CALLBACK_S = 0.0    # the log gets every step
s, kw = winding_wheel_long()
log = open(sys.argv[2], "w")                 # a file, not a pipe: a pipe nobody reads would block the run
fm.simulate(s, **kw, output=sys.argv[1], chunk_steps=10 ** 6,
            progress=lambda t, t_end: (log.write(repr(t) + "\\n"), log.flush()))
"""


def test_sigkill_loses_only_the_last_second_and_resume_continues(tmp_path):
    """Chunks are written by wall time (chunk_steps is never reached here); the run is killed once
    two chunks exist (polling the directory, not timing), resumed, and equals an uninterrupted run."""
    run = tmp_path / "run"
    log = tmp_path / "progress.txt"
    child = subprocess.Popen([sys.executable, "-c", CHILD.format(tests=str(Path(__file__).parent)), str(run),
                              str(log)])
    try:
        deadline = time.monotonic() + 900.0           # a safety net only; the condition is the files
        while len(list(run.glob("chunk_*.npz"))) < 2:
            assert child.poll() is None, "the run ended before it wrote two chunks"
            assert time.monotonic() < deadline, "no two chunks written within 900 s"
            time.sleep(0.05)
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.kill()
        child.wait()
    out = log.read_text().split()
    s, kw = winding_wheel_long()
    t_killed, t_state = float(out[-1]), float(read_state(run)["t"])
    print(f"SIGKILL at t = {t_killed} s; state at t = {t_state} s: {round((t_killed - t_state) / kw['h'])} steps lost")
    # a step's state is written before its progress line (simulate: flush, then report), so the kill can fall
    # between the two: the state is at most one step ahead of the log
    assert t_state <= t_killed + 1.5 * kw["h"]
    lock = run / LOCK_NAME                  # left behind by the killed writer: stale, its flock gone with it
    assert json.loads(lock.read_bytes())["pid"] == child.pid
    res = fm.simulate(s, **kw, output=run, chunk_steps=10 ** 6, resume=True)     # takes the stale lock over
    assert not lock.exists()
    full = fm.simulate(s, **kw)
    assert np.all(np.diff(res.t) > 0)
    assert np.array_equal(res.t, full.t)
    np.testing.assert_allclose(res.q, full.q, rtol=0, atol=TOL)
    np.testing.assert_allclose(res.history, full.history, rtol=0, atol=TOL)
    assert np.array_equal(fm.load_result(run, system=s).t, full.t)
