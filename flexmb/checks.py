"""Input checks shared by the model classes: scalars, vectors, counts and names, each refused with a
ModelError naming the item and the offending value; and the values user functions return at run time."""
from __future__ import annotations

import math

import numpy as np

from .errors import FlexmbError, ModelError, NonFiniteError

__all__ = ["scalar", "vector", "count", "name", "user_call", "user_array", "user_value"]


def scalar(value, what: str, owner: str, *, sign: str | None = None, unit: str = "") -> float:
    """``float(value)``, refused with a ModelError naming ``owner`` and ``what`` unless it is finite and,
    with ``sign``, ``"positive"`` (> 0) or ``"non-negative"`` (>= 0). ``unit`` is appended to the value."""
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ModelError(f"{owner}: {what} must be a number, got {value!r}") from None
    ok = math.isfinite(x) and (sign is None or (x > 0 if sign == "positive" else x >= 0))
    if not ok:
        need = f"{sign} and finite" if sign else "finite"
        raise ModelError(f"{owner}: {what} must be {need}, got {x}{unit}")
    return x


def vector(value, what: str, owner: str, *, size: int = 3) -> np.ndarray:
    """``value`` as a float array of ``size`` finite numbers (any nesting, e.g. (3,) or (1, 3)), refused with a
    ModelError naming ``owner``, ``what`` and the value otherwise (strings, wrong length, NaN, inf)."""
    try:
        v = np.asarray(value, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        raise ModelError(f"{owner}: {what} must be {size} numbers, got {value!r}") from None
    if v.size != size:
        raise ModelError(f"{owner}: {what} must be {size} numbers, got {value!r}")
    if not np.all(np.isfinite(v)):
        raise ModelError(f"{owner}: {what} must be finite, got {v.tolist()}")
    return v


def count(value, what: str, owner: str, *, low: int = 1, high: int | None = None) -> int:
    """An integer in ``[low, high]`` (no bool, no float), refused with a ModelError naming ``owner``, ``what``
    and the value otherwise."""
    ok = not isinstance(value, bool) and isinstance(value, (int, np.integer))
    if not ok or value < low or (high is not None and value > high):
        span = f"[{low}, {high}]" if high is not None else f">= {low}"
        raise ModelError(f"{owner}: {what} must be an integer {span}, got {value!r}")
    return int(value)


def name(value, kind: str) -> str:
    """A model item's name: a non-empty string (it appears in every message about the item)."""
    if not isinstance(value, str) or not value.strip():
        raise ModelError(f"{kind}: name must be a non-empty string, got {value!r}")
    return value


# -- values returned by user functions (drivers, loads, user forces, voltages), checked at every call ------

def user_call(func, args: tuple, owner: str, what: str, t: float):
    """``func(*args)``. An exception raised inside the user's function comes out as a ModelError naming
    ``owner``, ``what`` and the time ``t`` (s), chained from it; flexmb errors pass unchanged."""
    try:
        return func(*args)
    except FlexmbError:
        raise
    except Exception as exc:
        raise ModelError(f"{owner}: {what} raised {type(exc).__name__}: {exc} at t = {t:.6g} s") from exc


def _expected(shape: tuple[int, ...]) -> str:
    if len(shape) == 0:
        return "one number"
    return f"{shape[0]} numbers" if len(shape) == 1 else f"an array of shape {shape}"


def user_array(value, shape: tuple[int, ...], owner: str, what: str, t: float) -> np.ndarray:
    """What a user function returned, as a float array of ``shape`` (for a scalar or 1-D ``shape`` any nesting
    of the right number of values). A string, None or a wrong shape is a ModelError, NaN or inf a
    NonFiniteError; each names ``owner``, ``what``, the time ``t`` (s) and the value. The finiteness test is
    one vectorized call, so the check costs microseconds per evaluation."""
    try:
        if isinstance(value, (str, bytes)) or value is None:
            raise TypeError
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ModelError(f"{owner}: {what} returned {value!r} at t = {t:.6g} s, expected {_expected(shape)}") from None
    if arr.shape != shape:
        if len(shape) > 1 or arr.size != math.prod(shape):
            raise ModelError(f"{owner}: {what} returned shape {arr.shape} at t = {t:.6g} s, "
                             f"expected {_expected(shape)}")
        arr = arr.reshape(shape)
    if not np.isfinite(arr).all():
        raise NonFiniteError(f"{owner}: {what} returned non-finite values at t = {t:.6g} s: {_nonfinite(arr)}")
    return arr


def _nonfinite(arr: np.ndarray) -> str:
    """The values of a small array, or where the first of the NaN/inf entries of a large one is."""
    if arr.size <= 8:
        return str(arr.tolist())
    bad = np.argwhere(~np.isfinite(arr))
    k = tuple(int(i) for i in bad[0])
    return f"{len(bad)} of {arr.size} values, the first {arr[k]} at index {k[0] if len(k) == 1 else k}"


def user_value(func, args: tuple, shape: tuple[int, ...], owner: str, what: str, t: float) -> np.ndarray:
    """``func(*args)`` through :func:`user_call`, its value checked by :func:`user_array`."""
    return user_array(user_call(func, args, owner, what, t), shape, owner, what, t)
