"""The end times of the steps: one rule for the general step and the compiled blocks (docs/theory.md §5.4).

Steps of one size ``h`` (s) from an anchor time ``origin`` end at ``origin + k h`` (a product, not a running sum:
75,000 additions of 20 us fall about 1e-11 s short of 1.5 s, which left a sliver step of 1e-12 s whose
accelerations and reactions were wrong by six orders of magnitude). A step that starts within
``END_STRETCH h`` of ``t_end`` goes to ``t_end`` exactly, so the last step lies between ``(END_STRETCH - 1) h``
and ``END_STRETCH h``: never a sliver, never more than half a step longer than asked. A fixed-step run from
``t_start`` to ``t_end`` thus takes ``round((t_end - t_start)/h)`` steps (a half rounds down; at least one) and
its rows are ``t_start + k h`` with the last one ``t_end``.

Adaptive steps (:func:`controlled_step`) are never longer than the step-size control allows (a stretched step it
rejects would be proposed and stretched again): a step that starts within ``h`` of ``t_end`` goes there, one within
``2 h`` takes half the way, so the last step is at least half the one before.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["END_STRETCH", "StepGrid", "step_times", "next_step", "controlled_step"]

END_STRETCH = 1.5
"""A step that starts within this many step sizes of ``t_end`` goes to ``t_end``: the last step of a run is
between 0.5 and 1.5 times the step asked. The bound is measured: a pendulum's pin reaction in the last row is
off by 0.7 % after a last step of h/2 (h = 1 ms; 0.3 % in the rows before), 20 % after h/100 and 1e5 times after
h/1e6 -- the index-3 scheme's accelerations after a sudden change of step size (Arnold & Bruls 2007, §4)."""


@dataclass(frozen=True)
class StepGrid:
    """Steps of size ``h`` (s) from ``origin`` (s): step ``k`` ends at ``origin + k h``; ``k`` steps are taken."""

    origin: float
    k: int
    h: float

    @property
    def t(self) -> float:
        """The time reached (s)."""
        return self.origin + self.k * self.h

    def at(self, t: float, h: float) -> "StepGrid":
        """The grid of steps of size ``h`` continued from time ``t``: this one when ``t`` is its time reached and
        ``h`` its step, else a new grid anchored at ``t``."""
        return self if (h == self.h and self.t == t) else StepGrid(t, 0, h)

    def after(self, n: int) -> "StepGrid":
        """The grid after ``n`` more steps."""
        return StepGrid(self.origin, self.k + n, self.h)


def step_times(grid: StepGrid, t_end: float, n: int) -> tuple[np.ndarray, np.ndarray]:
    """End times (s) and sizes (s) of up to ``n`` steps on ``grid`` towards ``t_end``: ``origin + j h`` and ``h``,
    but for a step that starts within ``END_STRETCH h`` of ``t_end``, which ends at ``t_end`` exactly (size
    ``t_end - start``) and is the last. Empty when ``t_end`` is reached."""
    j = grid.k + np.arange(n + 1, dtype=float)
    t = grid.origin + j * grid.h               # t[i]: the start of step i (t[0] the time reached)
    last = np.flatnonzero(t_end - t[:n] <= END_STRETCH * grid.h)
    if last.size == 0:
        return t[1:], np.full(n, grid.h)
    i = int(last[0])
    if not t[i] < t_end:
        return t[1:i + 1], np.full(i, grid.h)
    ends = t[1:i + 2].copy()
    ends[i] = t_end
    sizes = np.full(i + 1, grid.h)
    sizes[i] = t_end - t[i]
    return ends, sizes


def next_step(grid: StepGrid, t_end: float) -> tuple[float, float]:
    """End time (s) and size (s) of the next step on ``grid``: the first of :func:`step_times` (the same arithmetic,
    without building arrays: the general step calls it once per step). ``t_end`` must not be reached yet."""
    t = grid.t
    if t_end - t <= END_STRETCH * grid.h:
        return t_end, t_end - t
    return grid.origin + (grid.k + 1) * grid.h, grid.h


def controlled_step(t: float, h: float, t_end: float) -> tuple[float, float]:
    """End time (s) and size (s) of a step of at most ``h`` (s) from ``t`` (s) under step-size control: to ``t_end``
    when it is within ``h``, half the way when it is within ``2 h``, else ``t + h``."""
    rest = t_end - t
    if rest <= h:
        return t_end, rest
    if rest <= 2.0 * h:
        return t + 0.5 * rest, 0.5 * rest
    return t + h, h
