"""No speed cliffs for angle springs, progress callbacks and output directories (issue 24, item 2).

Fixed-step runs on the compiled step take blocks of steps in one compiled call (flexmb/solvers/simulate.py). Each
row of a block carries its own element history (the angle springs' unwrapping references after that step,
flexmb/compiled/blocks.py ``out_sref``), so a block need not end at a saved row; a ``progress=`` callback is called
between blocks at most every ``CALLBACK_S`` seconds of wall time and at the end; an ``output=`` directory gets the
rows of blocks in the chunks single steps give it. The reference of every comparison is the same run taken one
step at a time (``AlphaIntegrator.can_advance`` off): the same compiled Newton step, the history moved on by
``ScalarSpringGroup.accept`` after each step. Structural counts (blocks, calls), never timings, show the cliffs
gone (benchmarks/cliffs.py measures the time).
"""
from __future__ import annotations

import numpy as np
import pytest

import flexmb as fm
from flexmb.io.chunks import read_chunks
from flexmb.solvers import progress as progress_module
from flexmb.solvers.stepper import AlphaIntegrator
from flexmb.solvers.watch import EnergyWatch

H = 1e-3
ROUND_OFF = 1e-11
"""Absolute tolerance (rad, rad/s, N m) of block against single steps: both take the same compiled Newton step
from the same state, so they agree to the last bits; 1e-11 allows round-off on angles up to ~30 rad."""


def winding_wheel():
    """A wheel at 20 rad/s on an axle with a soft rotational spring-damper: the spring's angle winds through
    several turns, so its unwrapping reference (the element history) changes at every step."""
    s = fm.System(name="winding wheel")
    b = s.add(fm.RigidBody(1.0, (0.1, 0.1, 0.1), angular_velocity=(0, 0, 20.0), name="wheel"))
    s.add(fm.Revolute(s.ground, b, (0, 0, 0), (0, 0, 1), name="axle"))
    s.add(fm.RotationalSpringDamper(s.ground, b, axis=(0, 0, 1), k=0.1, c=0.01, name="spring"))
    return s


def pendulum():
    s = fm.System(gravity=(0.0, -9.81, 0.0), name="pendulum")
    b = s.add(fm.RigidBody(1.0, (0.01, 0.01, 0.01), position=(0.5, 0.0, 0.0), name="bob"))
    s.add(fm.Revolute(s.ground, b, (0.0, 0.0, 0.0), (0.0, 0.0, 1.0), name="pin"))
    return s


@pytest.fixture
def single_steps(monkeypatch):
    """Runs taken one step at a time (no blocks), the reference of the block runs."""
    def off():
        monkeypatch.setattr(AlphaIntegrator, "can_advance", lambda self: False)
    return off


def assert_same_run(a, b):
    assert np.array_equal(a.t, b.t)
    for k in ("q", "v", "vd", "lam", "work_nc", "history"):
        np.testing.assert_allclose(getattr(a, k), getattr(b, k), rtol=0, atol=ROUND_OFF, err_msg=k)


# -- 1. angle springs: every row its own history, no block end at saved rows ------------------------------------

@pytest.mark.parametrize("save_every", [1, 3])
def test_blocks_with_an_angle_spring_give_each_row_its_history(single_steps, save_every):
    """Same trajectory, same saved history rows and the same energy balance as single steps; the blocks are not
    cut at saved rows (before: one block per saved row, 1000 / save_every blocks)."""
    block = fm.simulate(winding_wheel(), 1.0, H, save_every=save_every)
    single_steps()
    single = fm.simulate(winding_wheel(), 1.0, H, save_every=save_every)
    assert single.stats["blocks"] == 0
    assert block.stats["blocks"] <= 1000 // 500 + 1 and block.stats["compiled_steps"] == 1000
    assert_same_run(block, single)
    assert block.history[-1, 1] > 4 * np.pi              # the reference wound through more than two turns
    assert len(np.unique(block.history[:, 1])) == block.t.size    # a new reference on every saved row
    assert block.stats["energy_drift"] == pytest.approx(single.stats["energy_drift"], rel=1e-6, abs=1e-12)


def test_the_energy_check_of_a_block_row_sees_that_rows_history(monkeypatch):
    """The rows a block hands to the energy balance carry their own unwrapping references, those of the saved
    rows at the same times (not the history at the block's end)."""
    seen = []
    check_rows = EnergyWatch.check_rows

    def spy(self, Q, V, history, t, *args):
        seen.append((np.array(t), None if history is None else np.array(history)))
        return check_rows(self, Q, V, history, t, *args)

    monkeypatch.setattr(EnergyWatch, "check_rows", spy)
    res = fm.simulate(winding_wheel(), 2.0, H)
    assert seen
    for t, history in seen:
        rows = np.searchsorted(res.t, t)
        assert history is not None and np.array_equal(history, res.history[rows])


# -- 2. progress callbacks: at most every CALLBACK_S of wall time, between blocks, and at the end ------------------

def test_a_progress_callback_is_called_between_blocks_at_most_every_tenth_of_a_second(monkeypatch):
    """The reporter's clock is recorded: consecutive calls are at least CALLBACK_S = 0.1 s apart on it (the last,
    at t_end, may follow sooner), and blocks are not cut per step (before: a call and a block end per step)."""
    reads = []

    def clock():
        reads.append(progress_module.time.perf_counter())
        return reads[-1]

    monkeypatch.setattr(progress_module, "wall_clock", clock)
    calls = []
    res = fm.simulate(winding_wheel(), 5.0, H, progress=lambda t, t_end: calls.append((t, t_end, reads[-1])))
    assert progress_module.CALLBACK_S == 0.1
    assert calls[-1][:2] == (5.0, 5.0)                          # at the end
    walls = np.array([w for _, _, w in calls[:-1]])
    assert np.all(np.diff(walls) >= 0.1)
    assert walls.size == 0 or walls[0] - reads[0] >= 0.1
    assert len(calls) < res.stats["steps"] and np.all(np.diff([t for t, _, _ in calls]) > 0)
    assert res.stats["compiled_steps"] == res.stats["steps"] == 5000
    assert res.stats["compiled_steps"] / res.stats["blocks"] > 10      # not one block per step


def test_the_callback_pause_is_measured_from_the_last_call_and_skips_reports_in_between():
    """RunProgress with a clock advanced by hand: a report 0.05 s after the last call calls nothing, one 0.1 s
    after it calls; finish calls once more unless the last call was at the same time."""
    now = [0.0]
    calls = []
    rep = progress_module.RunProgress(lambda t, t_end: calls.append(t), 0.0, 0.0, 1.0, 0, clock=lambda: now[0])
    for wall, t, steps in ((0.05, 0.1, 100), (0.1, 0.2, 200), (0.15, 0.3, 300), (0.21, 0.4, 400)):
        now[0] = wall
        rep.report(t, steps)
    assert calls == [0.2, 0.4]
    assert rep.next_step > 400 + 1                     # the next report after the steps of about 0.1 s
    rep.finish(0.4, 400)
    assert calls == [0.2, 0.4]
    now[0] = 0.22
    rep.finish(1.0, 1000)
    assert calls == [0.2, 0.4, 1.0]


# -- 3. output directories take blocks ---------------------------------------------------------------------------

def test_an_output_run_takes_blocks_and_writes_the_chunks_of_single_steps(tmp_path, single_steps):
    """The same rows in the directory as in memory and as a run taken step by step; chunks of chunk_steps rows
    (before: output runs never took blocks)."""
    res = fm.simulate(winding_wheel(), 1.0, H, save_every=2, output=tmp_path / "blocks", chunk_steps=100)
    assert res.stats["blocks"] > 0 and res.stats["compiled_steps"] == 1000
    single_steps()
    single = fm.simulate(winding_wheel(), 1.0, H, save_every=2, output=tmp_path / "single", chunk_steps=100)
    assert_same_run(res, single)
    for run in ("blocks", "single"):
        rows = [np.load(p)["t"].size for p in sorted((tmp_path / run).glob("chunk_*.npz"))]
        assert rows[:-1] == [100] * (len(rows) - 1), run
    written = read_chunks(tmp_path / "blocks")
    for k in ("t", "q", "v", "history"):
        assert np.array_equal(written[k], getattr(res, k)), k


class Stop(KeyboardInterrupt):
    pass


def test_an_output_run_of_blocks_stopped_between_blocks_resumes_to_the_uninterrupted_run(tmp_path, monkeypatch):
    """A block run stopped from its callback resumes from its saved state to the run that was not stopped. The
    reporter's clock is 100 us of wall time per step taken (the callback's first call comes after about 0.1 s,
    1000 steps, in blocks of up to chunk_steps)."""
    wall = [0.0]
    advance = AlphaIntegrator.advance

    def timed_advance(self, n):
        block = advance(self, n)
        wall[0] += 1e-4 * (block.n if block is not None else 0)
        return block

    monkeypatch.setattr(AlphaIntegrator, "advance", timed_advance)
    monkeypatch.setattr(progress_module, "wall_clock", lambda: wall[0])

    def stop(t, t_end):
        raise Stop

    run = tmp_path / "run"
    with pytest.raises(Stop) as info:
        fm.simulate(winding_wheel(), 10.0, H, output=run, chunk_steps=100, progress=stop)
    part = info.value.result
    assert part.stats["blocks"] > 1 and part.stats["steps"] / part.stats["blocks"] > 10
    assert 0.5 < part.t[-1] < 2.0
    res = fm.simulate(winding_wheel(), 10.0, H, output=run, chunk_steps=100, resume=True)
    full = fm.simulate(winding_wheel(), 10.0, H)
    assert_same_run(res, full)
    assert np.array_equal(read_chunks(run)["t"], full.t)


def test_the_bar_moves_at_most_every_refresh_interval(monkeypatch, capsys):
    """progress=True with a clock advanced by hand: reports 0.1 s apart draw the bar every second one
    (REFRESH_S = 0.2 s), and close draws the end."""
    now = [0.0]
    rep = progress_module.RunProgress(True, 0.0, 0.0, 1.0, 0, clock=lambda: now[0])
    for k in range(1, 6):
        now[0] = 0.1 * k + 1e-9
        rep.report(0.1 * k, 100 * k)
    assert progress_module.REFRESH_S == 0.2 and rep.draws == 2
    rep.close(1.0, 1000)
    assert rep.draws == 3 and "t = 1/1 s" in capsys.readouterr().err
