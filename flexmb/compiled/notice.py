"""One line on stderr when a run meets a numba compile: the kernels compile on their first call and are cached on
disk (``cache=True``), so a user's first run of a new kind of model would otherwise wait in silence.

:func:`install` registers a listener for numba's ``"numba:compile"`` event (numba's documented event API,
``numba.core.event``; numba raises it only when the disk cache does not hold the code). The first compile of a
flexmb kernel in a process prints one line; the compiles of the time step and the energy rows are announced by
:func:`flexmb.compiled.specialization.ensure_compiled` instead, with their families and expected duration.
"""
from __future__ import annotations

import sys
from contextlib import contextmanager

__all__ = ["install", "announced"]

_state = {"installed": False, "said": False, "quiet": 0}


def install() -> None:
    """Register the listener (once per process; called where a model is first compiled, ``System.compile``)."""
    if _state["installed"]:
        return
    from numba.core import event

    class FirstCompile(event.Listener):
        def on_start(self, ev) -> None:
            if _state["said"] or _state["quiet"]:
                return
            dispatcher = ev.data.get("dispatcher") if isinstance(ev.data, dict) else None
            module = getattr(getattr(dispatcher, "py_func", None), "__module__", "") or ""
            if module.startswith("flexmb."):
                _state["said"] = True
                print(f"flexmb: compiling the numba kernels this model uses for the first time, starting with "
                      f"{module}.{dispatcher.py_func.__name__} (one time, seconds each; later runs load them from "
                      f"the disk cache)", file=sys.stderr, flush=True)

        def on_end(self, ev) -> None:
            pass

    event.register("numba:compile", FirstCompile())
    _state["installed"] = True


@contextmanager
def announced():
    """Compiles inside this block were announced by the caller: the listener stays quiet."""
    _state["quiet"] += 1
    try:
        yield
    finally:
        _state["quiet"] -= 1
