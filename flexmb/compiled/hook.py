"""The one door from the compiled step back into Python: the user's contact laws (docs/architecture.md §2).

A model whose contact pairs carry a law written in Python (a ``flexmb.contact.ContactLaw`` subclass that is not a
built-in law) runs on the compiled step like any other; at each evaluation of its residual the compiled code calls
:func:`user_laws` once per contact group with user laws, for all pairs of the group at once: penetrations
``delta`` (m), rates ``delta_dot`` (m/s) and approach speeds ``delta_dot_minus`` (m/s) in, the forces ``F`` (N)
and their derivatives ``dF/d delta`` (N/m), ``dF/d delta_dot`` (N s/m) written into the pairs with a user law.
Everything else of the step (measures, built-in laws, residual, Newton blocks, the solve) stays compiled.

The Python side is a handler ``handler(first, d, dd, vm, F, dF, dFd) -> bool`` (``first``: the number of the
first pair of the arrays among all contact pairs of the model), made active for the duration of a compiled call
with :func:`serving` (flexmb/solvers/compiled_step.py). A handler never raises: it returns False, and keeps the
error, when a law fails; the compiled step then treats the evaluation as failed (a step not taken) and the
general step repeats it, which raises the law's error with its contact's name.

The call crosses numba's object mode (``numba.objmode``): about 5 us for the crossing plus the law's own numpy
time, per group and evaluation. Models without user laws never reach it.
"""
from __future__ import annotations

import threading
from contextlib import contextmanager

from numba import njit, objmode

__all__ = ["user_laws", "serving"]

_ACTIVE = threading.local()
"""``_ACTIVE.handlers``: the handlers of this thread's compiled calls under way, innermost last (per thread: the
handler runs Python, during which another thread may start a compiled call of its own)."""


def _serve(first: int, d, dd, vm, F, dF, dFd) -> bool:
    """The active handler's answer (False when no handler is active)."""
    handlers = getattr(_ACTIVE, "handlers", None)
    return bool(handlers[-1](int(first), d, dd, vm, F, dF, dFd)) if handlers else False


@contextmanager
def serving(handler):
    """Make ``handler`` answer this thread's :func:`user_laws` calls for the duration of the ``with`` block."""
    if not hasattr(_ACTIVE, "handlers"):
        _ACTIVE.handlers = []
    _ACTIVE.handlers.append(handler)
    try:
        yield handler
    finally:
        _ACTIVE.handlers.pop()


@njit(cache=True)
def user_laws(first, d, dd, vm, F, dF, dFd):
    """Forces ``F`` and derivatives ``dF``, ``dFd`` of the pairs ``first, first + 1, ...`` that have a user law at
    penetrations ``d``, rates ``dd`` and approach speeds ``vm``, from the active Python handler; False when a law
    failed (module docstring)."""
    with objmode(ok="boolean"):
        ok = _serve(first, d, dd, vm, F, dF, dFd)
    return ok
