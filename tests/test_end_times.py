"""Exact end times (flexmb/solvers/step_times.py): the last step lands on ``t_end``, fixed-step rows are
``t_start + k h``, and the last row's reactions are right, on the compiled blocks, the general step, contact
blocks and adaptive runs.

Before: the step end times were summed (75,000 additions of 20 us fall 1e-11 s short of 1.5 s), so a sliver step
of 1.6e-12 s was taken after the last full step: 75,002 rows instead of 75,001, and the pendulum's pin force in
that row 5.5e5 N instead of 13.7 N (its acceleration 1.8e8 m/s^2).
"""
from __future__ import annotations

import math

import numpy as np
import pytest

import flexmb as fm
from flexmb.contact import HuntCrossley
from flexmb.solvers import compiled_step as cs
from flexmb.solvers.step_times import END_STRETCH, StepGrid, next_step, step_times

G = 9.81
I_O = 1.0 + 1e-3        # the pendulum's moment of inertia about the pin (kg m^2): m L^2 + J_zz


def _pendulum() -> fm.System:
    """A 1 kg bob (J = 1e-3 kg m^2) with its centre of mass 1 m from a pin at the origin, released at rest from
    the horizontal."""
    s = fm.System(gravity=(0.0, -G, 0.0), name="pendulum")
    b = s.add(fm.RigidBody(1.0, (1e-3, 1e-3, 1e-3), position=(1.0, 0.0, 0.0), name="bob"))
    s.add(fm.Revolute(s.ground, b, (0.0, 0.0, 0.0), (0.0, 0.0, 1.0), name="pin"))
    return s


def _pin_force(x: float, y: float) -> np.ndarray:
    """The closed-form force (N) of the pin on the bob with its centre of mass at (x, y) (m): energy gives
    ``I_O w^2 / 2 = -m g y``, the moment about the pin ``I_O w' = -m g x``, and ``F = m a - m g``."""
    w2 = -2.0 * G * y / I_O
    wd = -G * x / I_O
    a = wd * np.array([-y, x, 0.0]) - w2 * np.array([x, y, 0.0])
    return a - np.array([0.0, -G, 0.0])


def _general_path(monkeypatch) -> None:
    """Every model takes the general Python step (no compiled step, hence no compiled blocks)."""
    monkeypatch.setattr(cs.CompiledStep, "qualifies", staticmethod(lambda asm, reuse: False))


# -- the rule ---------------------------------------------------------------------------------------------------
PAIRS = [(20e-6, 1.5), (1e-5, 0.8), (2e-5, 2.0), (1e-4, 0.7), (1e-3, 2.0), (5e-4, 1.1), (2.5e-3, 1.0),
         (1e-4, 1.3), (2e-4, 1.9), (0.1, 0.7), (1e-3, 0.3), (3e-5, 0.1), (0.3, 1.0), (0.4, 1.0), (2.0, 1.0)]
"""(h, t_end) from t_start = 0: the first nine had summed times that ended short of t_end (by 1e-14 to 1e-11 s;
the first two took a sliver step), the last four leave a true remainder of a third, a half (rounded down),
a third and a step longer than the run."""


@pytest.mark.parametrize("t_start", [0.0, 0.3, 1000.0])
@pytest.mark.parametrize("h, span", PAIRS)
def test_step_times_land_on_t_end(h, span, t_start):
    """One call, blocks of 7 steps and single steps give the same times: ``t_start + k h`` but the last, which is ``t_end``
    exactly, after round(span / h) steps (at least one); the last step is within
    [END_STRETCH - 1, END_STRETCH] h (or the whole run when shorter)."""
    t_end = t_start + span
    n_all = int(math.ceil(span / h)) + 2
    ends, sizes = step_times(StepGrid(t_start, 0, h), t_end, n_all)
    ratio = span / h
    below, frac = math.floor(ratio), ratio - math.floor(ratio)
    if abs(frac - 0.5) < 1e-9:      # a remainder of half a step: either way, as the float differences fall
        assert ends.size in (max(1, below), below + 1)
    else:
        assert ends.size == max(1, below + (1 if frac > 0.5 else 0))
    assert ends[-1] == t_end
    k = np.arange(1, ends.size)
    assert np.array_equal(ends[:-1], t_start + k * h)            # products, not sums
    assert np.all(sizes[:-1] == h)
    assert sizes[-1] == t_end - (t_start + (ends.size - 1) * h)
    if span >= h:
        assert (END_STRETCH - 1.0) * h <= sizes[-1] <= END_STRETCH * h * (1 + 1e-12)
    grid, blocks = StepGrid(t_start, 0, h), []
    while True:
        e, _ = step_times(grid, t_end, 7)
        if e.size == 0:
            break
        blocks.append(e)
        grid = grid.after(e.size) if e[-1] != t_end else StepGrid(t_end, 0, h)
    assert np.array_equal(np.concatenate(blocks), ends)
    grid, singles = StepGrid(t_start, 0, h), []      # one step at a time (the general step): the same times
    while grid.t < t_end:
        t1, size = next_step(grid, t_end)
        singles.append((t1, size))
        grid = grid.after(1) if t1 != t_end else StepGrid(t_end, 0, h)
    assert np.array_equal(np.array(singles), np.column_stack([ends, sizes]))


def test_grid_continues_or_reanchors():
    g = StepGrid(0.0, 3, 0.1)
    assert g.at(g.t, 0.1) is g                       # the same grid goes on
    assert g.at(g.t, 0.05) == StepGrid(g.t, 0, 0.05)   # another step size anchors a new grid at the time reached
    assert g.at(0.31, 0.1) == StepGrid(0.31, 0, 0.1)
    assert step_times(StepGrid(1.0, 0, 0.1), 1.0, 5)[0].size == 0       # t_end reached: no step


# -- runs -------------------------------------------------------------------------------------------------------
def _force_errors(res, rows) -> np.ndarray:
    """Relative errors of the pin force in ``rows`` against the closed form at their positions."""
    asm = res.system.compile()
    F = np.array([asm.reactions(res.q[i], res.v[i], res.lam[i], res.t[i], joints=(0,))[0][0] for i in rows])
    ref = np.array([_pin_force(res.q[i, 0], res.q[i, 1]) for i in rows])
    return np.linalg.norm(F - ref, axis=1) / np.linalg.norm(ref, axis=1)


def _check_run(res, t_start: float, t_end: float, h: float, reactions: bool = True, every: int = 1) -> None:
    """Rows ``t_start + k h`` for every ``every``-th step, then ``t_end`` (``round((t_end - t_start)/h)`` steps)."""
    n = round((t_end - t_start) / h)
    k = np.arange(0, n, every)
    assert res.t.size == k.size + 1
    assert res.stats["steps"] == n
    assert res.t[-1] == t_end
    assert np.array_equal(res.t[:-1], t_start + k * h)
    if reactions:
        # the last two rows' pin force: the closed form at their positions within 0.1 % (the scheme's error in the
        # reaction at h <= 1e-4 s is below 2e-4 relative; the sliver row was off by a factor 4e4)
        assert np.all(_force_errors(res, [-2, -1]) < 1e-3)


@pytest.mark.parametrize("h, t_end", [(20e-6, 1.5), (1e-4, 0.7), (0.1, 0.7)])
def test_fixed_steps_compiled_blocks(h, t_end):
    res = fm.simulate(_pendulum(), t_end=t_end, h=h)
    assert res.stats["blocks"] > 0                      # the compiled blocks ran
    _check_run(res, 0.0, t_end, h, reactions=h < 1e-3)      # h = 0.1 s: the times only (7 coarse steps)


def test_saved_rows_of_a_long_run(monkeypatch):
    """``save_every``: the rows of every 250th step on the grid, then the last (75,000 steps of 20 us, general
    path; the compiled blocks' rows are checked one by one above)."""
    _general_path(monkeypatch)
    res = fm.simulate(_pendulum(), t_end=1.5, h=20e-6, save_every=250)
    assert res.stats["blocks"] == 0
    _check_run(res, 0.0, 1.5, 20e-6, every=250)


@pytest.mark.parametrize("h, t_end", [(1e-5, 0.8), (1e-4, 0.7)])
def test_fixed_steps_general_path(monkeypatch, h, t_end):
    _general_path(monkeypatch)
    res = fm.simulate(_pendulum(), t_end=t_end, h=h)
    assert res.stats["blocks"] == 0
    _check_run(res, 0.0, t_end, h)


def test_fixed_steps_from_a_later_start():
    res = fm.simulate(_pendulum(), t_end=1000.2, h=1e-3, t_start=1000.0)
    assert res.t.size == 201 and res.t[-1] == 1000.2
    assert np.array_equal(res.t[:-1], 1000.0 + np.arange(200) * 1e-3)


@pytest.mark.parametrize("general", [False, True])
def test_adaptive_run_lands_on_t_end(monkeypatch, general):
    if general:
        _general_path(monkeypatch)
    res = fm.simulate(_pendulum(), t_end=1.3, h=1e-3, adaptive=True, rtol=1e-5)
    assert res.t[-1] == 1.3
    steps = np.diff(res.t)
    assert steps[-1] >= 0.5 * steps[-2]                     # no sliver at the end
    # the last row's pin force is as right as its neighbours' (adaptive rows: 2.5-4 % off the closed form here,
    # the index-3 scheme's reactions after changes of step size; a sliver row: a factor 1e4)
    err = _force_errors(res, np.arange(res.t.size - 10, res.t.size))
    assert err[-1] <= 1.5 * err[:-1].max()


def _bouncing_ball() -> fm.System:
    """A 0.1 kg sphere (r = 0.05 m) dropped from 0.3 m onto a plane (Hunt-Crossley contact, K = 1e6, e = 0.8)."""
    s = fm.System(gravity=(0.0, 0.0, -G), name="ball")
    ball = s.add(fm.RigidBody(0.1, (1e-4, 1e-4, 1e-4), position=(0.0, 0.0, 0.3), name="ball"))
    s.add(fm.SpherePlaneContact(s.ground, ball, point=(0.0, 0.0, 0.0), normal=(0.0, 0.0, 1.0), center=(0.0, 0.0, 0.3),
                                radius=0.05, law=HuntCrossley(1e6, 0.8), name="floor"))
    return s


@pytest.mark.parametrize("general", [False, True])
def test_contact_run_lands_on_t_end(monkeypatch, general):
    """A contact model (its compiled blocks end at contact onsets and step changes, then go on) ends on t_end with
    every row before a bounce on the grid of h (1e-3 s: rows t_start + k h)."""
    if general:
        _general_path(monkeypatch)
    t_end = 0.8
    res = fm.simulate(_bouncing_ball(), t_end=t_end, h=1e-3, h_contact=1e-4)
    assert res.t[-1] == t_end
    assert (res.stats["blocks"] > 0) != general
    z = res.q[:, 2]
    assert z.min() < 0.05                                  # it bounced
    first = int(np.argmax(res.t > 0.18))                   # free fall to the floor takes 0.2 s
    assert np.array_equal(res.t[:first], np.arange(first) * 1e-3)
    steps = np.diff(res.t)
    assert steps[-1] >= 0.5 * 1e-4                          # no sliver


@pytest.mark.usefixtures("progress_every_step")     # its callback stops the run at a chosen step
def test_resumed_run_continues_the_grid(tmp_path):
    """A run interrupted after 1,300 steps of 1e-4 s and resumed from its output directory continues the rows
    ``k h`` (the grid of its start, flexmb/solvers/stepper.py ``_start_grid``) and ends on t_end exactly, with the rows
    of a run that was not interrupted."""
    full = fm.simulate(_pendulum(), t_end=0.25, h=1e-4)
    calls = {"n": 0}

    def interrupt(t, t_end):
        calls["n"] += 1
        if calls["n"] == 1300:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        fm.simulate(_pendulum(), t_end=0.25, h=1e-4, output=tmp_path / "run", chunk_steps=100, progress=interrupt)
    res = fm.simulate(_pendulum(), t_end=0.25, h=1e-4, output=tmp_path / "run", chunk_steps=100, resume=True)
    assert res.t[-1] == 0.25
    assert np.array_equal(res.t, full.t)
    assert res.stats["steps"] == 1200                    # the steps of the resumed part
    assert np.all(_force_errors(res, [-2, -1]) < 1e-3)
