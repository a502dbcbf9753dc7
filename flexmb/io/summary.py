"""The short summary of a result (``repr``/``str`` of a Result and of a file read without its System), and
the rule that says whether a run succeeded, in the manner of scipy's ``solve_ivp`` result (``success``,
``message``, a few lines instead of the arrays)."""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

__all__ = ["SUCCESS_MESSAGES", "succeeded", "summary"]

SUCCESS_MESSAGES = ("completed", "The solver successfully reached the end")
"""How the message of a run that reached its end time begins: "completed" (generalized-alpha, HHT,
Newmark, static equilibrium; "completed; energy balance drifted ..." when the energy watch flagged the run)
or scipy's message for rk45/dop853. A run stopped early carries the error's text instead."""

NAMES_SHOWN = 6
"""Names listed per kind (bodies, joints, ...) before "... (+k more)"."""
STATS_SHOWN = 6
"""Run statistics shown on the stats line."""
MESSAGE_SHOWN = 300
"""Characters of the message shown (the whole text is the result's ``message``)."""


def succeeded(message: str) -> bool:
    """Whether ``message`` is that of a run that reached its end time (``SUCCESS_MESSAGES``)."""
    return str(message).startswith(SUCCESS_MESSAGES)


def _clip(text: str) -> str:
    return text if len(text) <= MESSAGE_SHOWN else text[:MESSAGE_SHOWN - 3] + "..."


def _names(names: Sequence[str]) -> str:
    shown = ", ".join(names[:NAMES_SHOWN])
    more = len(names) - NAMES_SHOWN
    return shown + (f", ... (+{more} more)" if more > 0 else "")


def _value(x) -> str:
    if isinstance(x, (float, np.floating)):
        return f"{float(x):.4g}"
    return str(x)


def summary(title: str, message: str, t: np.ndarray, names: Mapping[str, Sequence[str]],
            stats: Mapping | None = None, extra: Sequence[str] = ()) -> str:
    """A few lines: ``title``, ``success`` and ``message``, the time range (s) and number of saved times, the
    names of each kind with their count (kinds without names are left out), ``extra`` lines and the run
    statistics on one line."""
    t = np.asarray(t)
    span = f"{float(t[0]):.6g} .. {float(t[-1]):.6g} s, {t.size} saved times" if t.size else "no saved times"
    lines = [title, f"  success: {succeeded(message)}", f"  message: {_clip(str(message))}", f"  t: {span}"]
    lines += [f"  {kind} ({len(n)}): {_names(list(n))}" for kind, n in names.items() if len(n)]
    lines += [f"  {line}" for line in extra]
    if stats:
        shown = [f"{k}={_value(v)}" for k, v in list(stats.items())[:STATS_SHOWN]]
        more = len(stats) - STATS_SHOWN
        lines.append("  stats: " + ", ".join(shown) + (f", ... (+{more} more)" if more > 0 else ""))
    return "\n".join(lines)
