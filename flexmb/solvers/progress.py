"""Progress of a ``simulate`` run: a bar on stderr (tqdm), a user callback, or nothing.

``simulate`` asks for a report only when its step counter reaches :attr:`RunProgress.next_step`, so
the cost per step is one integer comparison; the reporter sets the next step from the measured step
rate (a bar refreshes about every ``REFRESH_S`` seconds, the automatic mode looks again about every
``RECHECK_S`` seconds). ``progress=None`` (the default) shows the bar when stderr is a terminal and
the run, extrapolated from its first ``DECIDE_STEPS`` steps or ``DECIDE_S`` seconds, is predicted to
need more than ``AUTO_S`` seconds in all (docs/guide.md, "Progress and Ctrl-C"); drivers that show
their own progress (``flexmb verify``) turn that off with :func:`set_automatic`.
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
"""Wall time (s) between refreshes of a bar."""
ETA_WARMUP_S = 0.5
ETA_WARMUP_DRAWS = 3
"""The bar shows no ETA ("ETA --:--") until ``ETA_WARMUP_S`` seconds of wall time and ``ETA_WARMUP_DRAWS``
refreshes have passed since it opened; then the ETA is the simulated time left over the simulated-time
rate measured since the bar opened (the start-up before it -- compiling, the first factorization -- does not
count), so a 0.4 s run never shows minutes."""
NEVER = sys.maxsize

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
    wall time (s; ``time.perf_counter``, replaced in tests).

    ``progress``: True (bar), False (nothing), None (automatic: bar for long runs on a terminal), or a
    callable ``progress(t, t_end)`` called after every accepted step with the time reached (s).
    """

    def __init__(self, progress: ProgressOption, t_start: float, t_now: float, t_end: float, steps: int,
                 clock: Callable[[], float] = time.perf_counter):
        self.t_start, self.t0, self.t_end = t_start, t_now, t_end
        self.steps0 = steps
        self.clock = clock
        self.wall0 = clock()
        self.opened: tuple[float, float] | None = None      # (wall time, simulated time) when the bar opened
        self.draws = 0
        self.callback = progress if callable(progress) else None
        self.bar = None
        if self.callback is not None or (progress is None and _automatic and sys.stderr.isatty()):
            self.next_step = steps + 1
        elif progress:
            self._open_bar(t_now)
            self.next_step = steps + 1
        else:
            self.next_step = NEVER

    def report(self, t: float, steps: int) -> None:
        """Report time ``t`` (s) reached at step counter ``steps`` and set :attr:`next_step`."""
        if self.callback is not None:
            self.callback(t, self.t_end)
            self.next_step = steps + 1
            return
        if self.bar is None and not self._predicts_long_run(t, steps):
            return
        rate = self._draw(t, steps)
        self.next_step = steps + max(1, int(rate * REFRESH_S))

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
