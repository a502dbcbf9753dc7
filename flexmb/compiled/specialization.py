"""Which specialization of a compiled entry point a model runs on: the universal one or one for its families.

The compiled step (flexmb/compiled/blocks.py, with ``step.equations``) and the energy rows
(flexmb/compiled/energy.py) exist in two specializations (docs/architecture.md §2):

* the universal one: every family's part of the model tuple is present, with empty arrays for the families
  a model lacks, so one compile serves every model; ``flexmb compile-kernels`` makes it (about 5 minutes, once);
* one per set of families present: the absent families' parts are None, and numba leaves their code out
  of the compile (each family function returns at once for a None part). It compiles in under a minute (a
  rigid model: the rigid families only) and its steps are faster (a small flexible model's step: ~20 against
  ~30 µs): every call passes the fields of every array of the model tuple, and the universal one has
  about 120 arrays.

:func:`universal` decides for an entry point at a model's first call, under :data:`variant`: ``"auto"`` takes the
specialized step when numba has it (compiled in this process or cached on disk), else the universal one when
numba has that, else compiles the specialized one; ``"specialized"`` and ``"universal"`` fix the choice. The
environment variable ``FLEXMB_STEP`` sets the default (``FLEXMB_STEP=specialized`` compiles the step of each new
set of families once, for the faster steps from then on).
"""
from __future__ import annotations

import os

__all__ = ["variant", "universal", "has_machine_code"]

variant = os.environ.get("FLEXMB_STEP", "auto")
"""``"auto"``, ``"universal"`` or ``"specialized"`` (module docstring)."""

_FOUND: set = set()
"""(function, argument types) known to be compiled or cached (a miss is asked again: it may be compiled since)."""


def universal(function, args: tuple, specialized_args: tuple) -> bool:
    """Whether ``function`` (an entry point) runs on the universal model tuple (in ``args``) rather than the
    specialized one (in ``specialized_args``), under :data:`variant` (module docstring)."""
    if variant not in ("auto", "universal", "specialized"):
        from ..errors import ModelError
        raise ModelError(f"FLEXMB_STEP / specialization.variant must be 'auto', 'universal' or "
                                 f"'specialized', not {variant!r}")
    if variant != "auto":
        return variant == "universal"
    return not has_machine_code(function, specialized_args) and has_machine_code(function, args)


def has_machine_code(dispatcher, args: tuple) -> bool:
    """Whether ``dispatcher`` (an ``@njit(cache=True)`` function) has machine code for the types of ``args``,
    compiled in this process or in its disk cache, without compiling or loading it. Reads numba's cache index
    (its ``_cache`` internals, numba 0.60 to 0.68); answers False where they differ."""
    from numba import typeof
    from numba.core.typing.typeof import Purpose
    try:
        sig = tuple(typeof(a, Purpose.argument) for a in args)
    except Exception:       # noqa: BLE001 - a value numba cannot type: the call itself reports it
        return False
    key = (dispatcher, sig)
    if key in _FOUND:
        return True
    found = sig in dispatcher.overloads
    if not found:
        try:
            cache = dispatcher._cache
            found = cache._index_key(sig, dispatcher.targetctx.codegen()) in cache._cache_file._load_index()
        except Exception:   # noqa: BLE001 - other numba internals: treated as not cached
            found = False
    if found:
        _FOUND.add(key)
    return found
