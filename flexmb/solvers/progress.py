"""Progress of a ``simulate`` run: a bar on stderr (tqdm), a user callback, or nothing.

``simulate`` asks for a report only between steps or blocks of steps, when its step counter reaches
:attr:`RunProgress.next_step`, so the cost per step is one integer comparison; the reporter sets the next
step from the step rate measured since its last report (a bar refreshes at most every ``REFRESH_S`` seconds
of wall time, a callback is called at most every ``CALLBACK_S`` seconds and once at the end, the automatic
mode looks again about every ``RECHECK_S`` seconds). Blocks of compiled steps are not cut for a report
but where the next one is due (about ``REFRESH_S`` or ``CALLBACK_S`` seconds of steps). ``progress=None``
(the default) shows the bar when stderr is a terminal and the run, extrapolated from its first
``DECIDE_STEPS`` steps or ``DECIDE_S`` seconds, is predicted to need more than ``AUTO_S`` seconds in all
(docs/guide.md, "Progress and Ctrl-C"); drivers that show their own progress (``flexmb verify``) turn that off
with :func:`set_automatic`.
"""
from __future__ import annotations

import math
import sys
import time
from typing import Callable, Union

__all__ = ["RunProgress", "ProgressOption", "set_automatic"]

ProgressOption = Union[bool, None, Callable[[float, float], object]]

AUTO_S = 5.0
"""Predicted wall time (s) of a run beyond which ``progress=None`` shows the bar."""
DECIDE_STEPS = 50
DECIDE_S = 1.0
"""The automatic mode extrapolates once ``DECIDE_STEPS`` steps or ``DECIDE_S`` seconds have passed."""
RECHECK_S = 1.0
"""Wall time (s) between predictions of the automatic mode while no bar is shown."""
REFRESH_S = 0.2
"""Least wall time (s) between refreshes of a bar."""
CALLBACK_S = 0.1
"""Least wall time (s) between two calls of a ``progress=`` callback (read when a run starts; 0 calls it after
every accepted step)."""
ETA_WARMUP_S = 0.5
ETA_WARMUP_DRAWS = 3
"""The bar shows no ETA ("ETA --:--") until ``ETA_WARMUP_S`` seconds of wall time and ``ETA_WARMUP_DRAWS``
refreshes have passed since it opened; then the ETA is the simulated time left over the simulated-time
rate measured since the bar opened (the start-up before it -- compiling, the first factorization -- does not
count), so a 0.4 s run never shows minutes."""
NEVER = sys.maxsize

wall_clock = time.perf_counter
"""The wall clock (s) of a reporter made without one (read when it is made; replaced in tests)."""

_automatic = True      # progress=None may show a bar (set_automatic)

BAR_FORMAT = "{desc}: {percentage:3.0f}%|{bar}| t = {n:.4g}/{total:.4g} s [{elapsed}{postfix}]"
"""tqdm's own ``{remaining}`` is left out: the ETA is :meth:`RunProgress.eta`, in the postfix."""


def set_automatic(enabled: bool) -> bool:
    """Allow (True) or forbid (False) the bar of ``progress=None`` in this process; returns the previous
    setting. ``progress=True`` and callbacks are not affected."""
    global _automatic
    previous, _automatic = _automatic, bool(enabled)
    return previous


class RunProgress:
    """The reporter of one run from ``t_now`` (s) to ``t_end`` (s) of a run that started at ``t_start``
    (earlier than ``t_now`` when resumed); ``steps`` is the step counter at ``t_now``; ``clock`` gives the
    wall time (s; :data:`wall_clock` when None).

    ``progress``: True (bar), False (nothing), None (automatic: bar for long runs on a terminal), or a
    callable ``progress(t, t_end)`` called with the time reached (s) at most every ``CALLBACK_S`` seconds of
    wall time and at the end of the run (:meth:`finish`).
    """

    def __init__(self, progress: ProgressOption, t_start: float, t_now: float, t_end: float, steps: int,
                 clock: Callable[[], float] | None = None):
        self.t_start, self.t0, self.t_end = t_start, t_now, t_end
        self.steps0 = steps
        self.clock = wall_clock if clock is None else clock
        self.wall0 = self.clock()
        self.opened: tuple[float, float] | None = None      # (wall time, simulated time) when the bar opened
        self.draws = 0
        self.callback = progress if callable(progress) else None
        self.every = CALLBACK_S if self.callback is not None else REFRESH_S     # least wall time between outputs
        self.shown: tuple[float, float] = (self.wall0, t_now)   # (wall time, simulated time) of the last output
        self.look = (self.wall0, steps)                         # (wall time, step counter) of the last report
        self.bar = None
        if self.callback is not None or (progress is None and _automatic and sys.stderr.isatty()):
            self.next_step = steps + 1
        elif progress:
            self._open_bar(t_now)
            self.next_step = steps + 1
        else:
            self.next_step = NEVER

    def report(self, t: float, steps: int) -> None:
        """Report time ``t`` (s) reached at step counter ``steps``: call the callback or refresh the bar when
        ``every`` seconds passed since the last time, and set :attr:`next_step`."""
        now = self.clock()
        if self.callback is None and self.bar is None and not self._predicts_long_run(t, steps):
            self.look = (now, steps)
            return
        if now - self.shown[0] >= self.every:
            self.shown = (now, t)
            if self.callback is not None:
                self.callback(t, self.t_end)
            else:
                self._draw(t, steps)
        self.next_step = self._step_after(steps, now, self.every - (now - self.shown[0]))

    def _step_after(self, steps: int, now: float, wait: float) -> int:
        """The step counter at which about ``wait`` seconds (s) of wall time will have passed after ``now``, at
        the step rate since the last report (the next step at least)."""
        wall, done = self.look
        self.look = (now, steps)
        rate = (steps - done) / (now - wall) if now > wall else 0.0
        return steps + max(1, int(rate * wait))

    def finish(self, t: float, steps: int) -> None:
        """The end of a run at time ``t`` (s): the callback's last call (unless its last call was at ``t``)."""
        if self.callback is not None and self.shown[1] != t:
            self.shown = (self.clock(), t)
            self.callback(t, self.t_end)

    def close(self, t: float, steps: int) -> None:
        """Show time ``t`` (s) at step counter ``steps`` and close the bar (it stays on the terminal)."""
        if self.bar is not None:
            self._draw(t, steps)
            self.bar.close()
            self.bar = None
        self.next_step = NEVER

    def _draw(self, t: float, steps: int) -> float:
        """Move the bar to time ``t`` (s) with the mean step rate of the run so far (steps/s), returned."""
        now = self.clock()
        elapsed = now - self.wall0
        rate = (steps - self.steps0) / elapsed if elapsed > 0.0 else 0.0
        self.draws += 1
        self.bar.set_postfix_str(f"ETA {self.eta(t, now)}, {rate:.4g} steps/s", refresh=False)
        self.bar.update(t - self.t_start - self.bar.n)
        return rate

    def eta(self, t: float, now: float) -> str:
        """Wall time left ("mm:ss") at simulated time ``t`` (s) and wall time ``now`` (s): the simulated time
        left over the rate since the bar opened ("00:00" at ``t_end``), "--:--" during the warm-up (``ETA_WARMUP_S``,
        ``ETA_WARMUP_DRAWS``) or while simulated time has not advanced."""
        from tqdm import tqdm
        wall_open, t_open = self.opened
        span, advanced = now - wall_open, t - t_open
        if t >= self.t_end:
            return tqdm.format_interval(0)
        if span < ETA_WARMUP_S or self.draws < ETA_WARMUP_DRAWS or advanced <= 0.0:
            return "--:--"
        return tqdm.format_interval(max(0.0, self.t_end - t) * span / advanced)

    def _predicts_long_run(self, t: float, steps: int) -> bool:
        """Automatic mode: open the bar when the run, extrapolated linearly in simulated time from the
        steps so far, needs more than ``AUTO_S`` seconds; else set the next look."""
        done, elapsed = steps - self.steps0, self.clock() - self.wall0
        if elapsed < DECIDE_S and done < DECIDE_STEPS:
            self.next_step = self.steps0 + 2 * done            # look again after as many steps again
            return False
        advanced = t - self.t0
        total = elapsed * (self.t_end - self.t0) / advanced if advanced > 0.0 else math.inf
        if total > AUTO_S:
            self._open_bar(t)
            return True
        self.next_step = self.steps0 + done + max(1, int(done / elapsed * RECHECK_S))
        return False

    def _open_bar(self, t: float) -> None:
        from tqdm import tqdm
        self.opened = (self.clock(), t)
        self.bar = tqdm(total=self.t_end - self.t_start, initial=t - self.t_start, desc="simulate",
                        bar_format=BAR_FORMAT, file=sys.stderr, dynamic_ncols=True)
