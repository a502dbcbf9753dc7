"""The keywords of ``simulate``, checked once before anything runs.

Every refusal is a ModelError that names the keyword and the value given, so a typo or a
unit slip never surfaces later as a ZeroDivisionError, a TypeError at the first step, or a
run that goes backwards in time. ``output`` and ``resume`` are checked where the output
directory is opened (flexmb.io.chunks).
"""
from __future__ import annotations

import math
import numbers
from typing import Any, Callable, Mapping

import numpy as np

from ..errors import ModelError

__all__ = ["METHODS", "check_options"]

METHODS = ("generalized-alpha", "hht", "newmark", "rk45", "dop853")
EXPLICIT = ("rk45", "dop853")


def _refuse(key: str, value, need: str):
    raise ModelError(f"simulate: {key} must be {need}, got {value!r}")


def _real(key: str, value, *, low: float | None = None, strict: bool = True, inf: bool = False) -> float:
    """A real number (not a bool or a string), finite unless ``inf``, and ``> low`` (``>= low`` if not
    ``strict``) when ``low`` is given."""
    bound = "" if low is None else f" {'>' if strict else '>='} {low:g}"
    need = f"a {'' if inf else 'finite '}number{bound}"
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        _refuse(key, value, need)
    x = float(value)
    if math.isnan(x) or (math.isinf(x) and not inf) or (low is not None and (x <= low if strict else x < low)):
        _refuse(key, value, need)
    return x


def _count(key: str, value) -> int:
    """An integer >= 1 (not a bool, not a float)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        _refuse(key, value, "an integer >= 1")
    return int(value)


def _flag(key: str, value) -> None:
    """True or False (numpy booleans too), not a truthy string or number."""
    if not isinstance(value, (bool, np.bool_)):
        _refuse(key, value, "True or False")


def _choice(key: str, value, choices: tuple) -> None:
    if not isinstance(value, str) or value not in choices:
        _refuse(key, value, f"one of {choices}")


def _optional(check: Callable[..., Any], key: str, value, **kw) -> None:
    if value is not None:
        check(key, value, **kw)


def _check_system(system) -> None:
    from ..system import System
    if not isinstance(system, System):
        _refuse("system", system, "a flexmb.System")


def _check_steps(o: Mapping[str, Any]) -> None:
    """``h``, ``h_min``, ``h_max`` (s): positive and finite, ``h_min <= h`` and ``h_min <= h_max``.
    The implicit methods need ``h``; for rk45/dop853 it is the optional output spacing."""
    if o["h"] is None and o["method"] not in EXPLICIT:
        raise ModelError(f"simulate: the step size h (s) is required by method {o['method']!r} (fixed steps, and "
                         "the first step when adaptive=True), got h=None: call simulate(system, t_end, h); only "
                         "'rk45' and 'dop853' choose their steps without it")
    _optional(_real, "h", o["h"], low=0.0)
    _optional(_real, "h_min", o["h_min"], low=0.0)
    _optional(_real, "h_max", o["h_max"], low=0.0)
    if o["h_min"] is not None and o["h"] is not None and o["h_min"] > o["h"]:
        raise ModelError(f"simulate: h_min ({o['h_min']!r} s) must not exceed the step h ({o['h']!r} s)")
    if o["h_min"] is not None and o["h_max"] is not None and o["h_min"] > o["h_max"]:
        raise ModelError(f"simulate: h_max ({o['h_max']!r} s) must not be below h_min ({o['h_min']!r} s)")
    _optional(_real, "h_contact", o["h_contact"], low=0.0, inf=True)     # inf: no contact step limit


def _check_family(o: Mapping[str, Any]) -> None:
    """``rho_inf`` in [0, 1] (HHT: [0.5, 1]); ``beta`` and ``gamma`` belong to Newmark only, whose own
    stability test (AlphaParameters.newmark) follows."""
    low = 0.5 if o["method"] == "hht" else 0.0
    rho = _real("rho_inf", o["rho_inf"], low=low, strict=False)
    if rho > 1.0:
        _refuse("rho_inf", o["rho_inf"], f"in [{low:g}, 1]" + (" for HHT" if low else ""))
    for key in ("beta", "gamma"):
        if o[key] is not None and o["method"] != "newmark":
            raise ModelError(f"simulate: {key}={o[key]!r} applies to method='newmark' only, "
                             f"not to {o['method']!r} (which sets it from rho_inf)")
        _optional(_real, key, o[key], low=0.0)


def check_options(o: Mapping[str, Any]) -> None:
    """Refuse bad ``simulate`` keywords (``o``: the arguments of the call, by name) with a ModelError
    naming the keyword and the value: types (no bools or strings for numbers, no truthy strings for
    flags), finiteness, signs, and the relations ``t_end > t_start``, ``h_min <= h``,
    ``h_min <= h_max``."""
    _check_system(o["system"])
    _choice("method", o["method"], METHODS)
    _choice("redundant", o["redundant"], ("remove", "error"))
    t_start = _real("t_start", o["t_start"])
    if _real("t_end", o["t_end"]) <= t_start:
        raise ModelError(f"simulate: t_end ({o['t_end']!r} s) must be after t_start ({o['t_start']!r} s)")
    _check_steps(o)
    _check_family(o)
    for key in ("rtol", "atol", "newton_tol"):
        _real(key, o[key], low=0.0)
    _real("contact_tol", o["contact_tol"], low=0.0, strict=False, inf=True)   # inf: onsets not located
    for key in ("max_newton", "save_every", "chunk_steps"):
        _count(key, o[key])
    for key in ("adaptive", "velocity_projection", "energy"):
        _flag(key, o[key])
    progress = o["progress"]
    if not (progress is None or isinstance(progress, (bool, np.bool_)) or callable(progress)):
        _refuse("progress", progress, "None (automatic), True, False or a callable progress(t, t_end)")
