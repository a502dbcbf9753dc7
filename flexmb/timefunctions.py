"""Functions of time with their first and second derivatives (drivers, loads, voltages).

A driver constraint ``Phi(q) - f(t) = 0`` needs ``f``, ``f'`` and ``f''``: the
velocity equation is ``Phi_q v = f'`` and the acceleration equation
``Phi_q a = -(Phi_q v)_q v + f''``. (van der Linde & Schwab 2002, eq. 19, drops the ``Phi_tt``
term; docs/theory.md §3.4 gives the complete form.)
"""
from __future__ import annotations

import copy
import math
from typing import Callable

import numpy as np

from .checks import scalar, user_value
from .errors import ModelError

__all__ = ["TimeFunction", "as_time_function"]

_PLAIN = (float, np.float64)
"""Values a time function may return that :meth:`TimeFunction.sample` takes without the per-value checks."""


class TimeFunction:
    """``f(t)`` with derivatives ``df(t)`` and ``ddf(t)``.

    If the derivatives are not given they are taken by central differences of
    ``f`` with step ``1e-4 * (1 + |t|)`` (error O(h^2) ~ 1e-8 relative); give them
    explicitly where that matters. Every value a function returns is checked (one
    number, finite); errors name ``owner``, the element the function drives once
    :meth:`bound` to it.
    """

    def __init__(self, f: Callable[[float], float], df: Callable[[float], float] | None = None,
                 ddf: Callable[[float], float] | None = None, name: str = "f"):
        for what, g in (("f", f), ("df", df), ("ddf", ddf)):
            if not callable(g) and (g is not None or what == "f"):
                raise ModelError(f"time function {name!r}: {what} must be a callable of t, got {g!r}")
        self._f, self._df, self._ddf, self.name = f, df, ddf, name
        self.owner = f"time function {name!r}"
        self._vector = None
        """``(f, ddf)`` of an array of times at once (the built-in profiles): :meth:`sample` uses them."""

    def _vectorized(self, f: Callable[[np.ndarray], np.ndarray],
                    ddf: Callable[[np.ndarray], np.ndarray]) -> "TimeFunction":
        """This function with ``f`` and ``f''`` of an array of times (s) at once (the same arithmetic as the
        scalar ones, element by element), for :meth:`sample`."""
        self._vector = (f, ddf)
        return self

    def bound(self, owner: str) -> "TimeFunction":
        """A copy whose errors name ``owner`` (e.g. ``"driver 'crank'"``), and this function unless anonymous."""
        c = copy.copy(self)
        c.owner = owner if self.name == "f" else f"{owner}, time function {self.name!r}"
        return c

    def _at(self, fun, t: float, what: str) -> float:
        """``fun(t)``, checked: one finite number; errors name the owner, ``what`` and ``t`` (s)."""
        return float(user_value(fun, (t,), (), self.owner, what, t))

    def value(self, t: float) -> float:
        return self._at(self._f, t, "f(t)")

    def rate(self, t: float) -> float:
        if self._df is not None:
            return self._at(self._df, t, "first derivative df(t)")
        h, what = 1e-4 * (1.0 + abs(t)), "f(t) (central differences for the first derivative)"
        return (self._at(self._f, t + h, what) - self._at(self._f, t - h, what)) / (2 * h)

    def acceleration(self, t: float) -> float:
        if self._ddf is not None:
            return self._at(self._ddf, t, "second derivative ddf(t)")
        if self._df is not None:
            h, what = 1e-4 * (1.0 + abs(t)), "df(t) (central differences for the second derivative)"
            return (self._at(self._df, t + h, what) - self._at(self._df, t - h, what)) / (2 * h)
        h, what = 1e-3 * (1.0 + abs(t)), "f(t) (central differences for the second derivative)"
        f = [self._at(self._f, x, what) for x in (t + h, t, t - h)]
        return (f[0] - 2 * f[1] + f[2]) / (h * h)

    def __call__(self, t: float) -> float:
        return self.value(t)

    def sample(self, times) -> tuple[np.ndarray, np.ndarray, int]:
        """``f`` and ``f''`` at each of ``times`` (s) for a block of steps taken in one compiled call, and the
        number of leading times at which both are valid. Plain floats returned by the functions are taken as
        they are (one call each, no per-value checks); anything else goes through the checked
        :meth:`value` / :meth:`acceleration`, and the first time at which those raise ends the valid part
        (the caller steps there on the general path, which raises the error with its message). The built-in
        profiles (constant, linear, spin-up, table) evaluate all times in one array expression each (the same
        arithmetic as their scalar forms); a non-finite value there falls back to the time-by-time path."""
        n = len(times)
        if self._vector is not None and n:
            f, a = (np.broadcast_to(np.asarray(g(np.asarray(times, dtype=float)), dtype=float), (n,)).copy()
                    for g in self._vector)
            if np.isfinite(f).all() and np.isfinite(a).all():
                return f, a, n
        f, a = np.empty(n), np.empty(n)
        fast = self._ddf is not None
        for k, t in enumerate(times):
            try:
                x = self._f(t)
                y = self._ddf(t) if fast else None
                if not (type(x) in _PLAIN and type(y) in _PLAIN and math.isfinite(x) and math.isfinite(y)):
                    x, y = self.value(t), self.acceleration(t)
            except Exception:   # noqa: BLE001 - reported with its context by the general step at this time
                return f, a, k
            f[k], a[k] = x, y
        return f, a, n

    # -- common profiles -------------------------------------------------
    @classmethod
    def constant(cls, c: float) -> "TimeFunction":
        """``c`` at all times."""
        c = scalar(c, "value", "constant time function")
        return cls(lambda t: c, lambda t: 0.0, lambda t: 0.0, name=f"constant {c}")._vectorized(
            lambda t: np.full(t.shape, c), np.zeros_like)

    @classmethod
    def linear(cls, rate: float, offset: float = 0.0) -> "TimeFunction":
        """``offset + rate t``."""
        rate = scalar(rate, "rate", "linear time function")
        offset = scalar(offset, "offset", "linear time function")
        return cls(lambda t: offset + rate * t, lambda t: rate, lambda t: 0.0, name=f"linear {rate}")._vectorized(
            lambda t: offset + rate * t, np.zeros_like)

    @classmethod
    def spin_up(cls, omega_s: float, T_s: float, *, angle: bool = True) -> "TimeFunction":
        """Smooth spin-up of He 1992, eq. 9.18 (with the thesis's misprint corrected).

        ``Omega(t) = (Omega_s/T_s) [t - (T_s/2pi) sin(2 pi t/T_s)]`` for t < T_s,
        then ``Omega_s``. With ``angle=True`` the function is the rotation angle
        (the integral of Omega), whose derivatives are Omega and Omega-dot.
        """
        owner = "spin-up time function"
        omega_s = scalar(omega_s, "omega_s (rad/s)", owner)
        T_s = scalar(T_s, "T_s (s)", owner, sign="positive")
        w = 2.0 * math.pi / T_s

        def omega(t):
            return omega_s / T_s * (t - math.sin(w * t) / w) if t < T_s else omega_s

        def omega_dot(t):
            return omega_s / T_s * (1.0 - math.cos(w * t)) if t < T_s else 0.0

        def theta(t):
            if t < T_s:
                return omega_s / T_s * (0.5 * t * t + (math.cos(w * t) - 1.0) / (w * w))
            return omega_s / T_s * (0.5 * T_s * T_s) + omega_s * (t - T_s)

        # the same expressions for an array of times (TimeFunction.sample, once per block of steps)
        def omega_v(t):
            return np.where(t < T_s, omega_s / T_s * (t - np.sin(w * t) / w), omega_s)

        def omega_dot_v(t):
            return np.where(t < T_s, omega_s / T_s * (1.0 - np.cos(w * t)), 0.0)

        def theta_v(t):
            return np.where(t < T_s, omega_s / T_s * (0.5 * t * t + (np.cos(w * t) - 1.0) / (w * w)),
                            omega_s / T_s * (0.5 * T_s * T_s) + omega_s * (t - T_s))

        if angle:
            return cls(theta, omega, omega_dot, name=f"spin-up angle (Omega_s={omega_s}, T_s={T_s})")._vectorized(
                theta_v, omega_dot_v)

        def omega_ddot(t):
            return omega_s / T_s * w * math.sin(w * t) if t < T_s else 0.0

        def omega_ddot_v(t):
            return np.where(t < T_s, omega_s / T_s * w * np.sin(w * t), 0.0)

        return cls(omega, omega_dot, omega_ddot, name=f"spin-up rate (Omega_s={omega_s}, T_s={T_s})")._vectorized(
            omega_v, omega_ddot_v)

    @classmethod
    def table(cls, t, y) -> "TimeFunction":
        """Cubic spline through tabulated points (clamped at the ends)."""
        from scipy.interpolate import CubicSpline
        t, y = _table_columns(t, y)
        cs = CubicSpline(t, y, extrapolate=False)
        d1, d2 = cs.derivative(1), cs.derivative(2)

        def clamp(fun, edge_value):
            def g(tt):
                if tt < t[0]:
                    return edge_value(0)
                if tt > t[-1]:
                    return edge_value(-1)
                return float(fun(tt))
            return g

        def clamp_v(fun, first, last):
            def g(tt):
                return np.where(tt < t[0], first, np.where(tt > t[-1], last, fun(np.clip(tt, t[0], t[-1]))))
            return g

        return cls(clamp(cs, lambda k: y[k]), clamp(d1, lambda k: 0.0), clamp(d2, lambda k: 0.0),
                   name="table")._vectorized(clamp_v(cs, y[0], y[-1]), clamp_v(d2, 0.0, 0.0))


def _table_columns(t, y) -> tuple[np.ndarray, np.ndarray]:
    """The columns of a time table: finite, of equal length >= 2, ``t`` (s) strictly increasing; else a
    ModelError naming the column and the offending value."""
    cols = []
    for what, c in (("t", t), ("y", y)):
        try:
            c = np.asarray(c, dtype=float)
        except (TypeError, ValueError):
            raise ModelError(f"time table: {what} must be numbers, got {c!r}") from None
        if c.ndim != 1 or c.size < 2:
            raise ModelError(f"time table: {what} must be a list of at least 2 numbers, got {c.tolist()!r}")
        bad = np.flatnonzero(~np.isfinite(c))
        if bad.size:
            raise ModelError(f"time table: {what}[{bad[0]}] = {c[bad[0]]} is not finite")
        cols.append(c)
    t, y = cols
    if t.size != y.size:
        raise ModelError(f"time table: t has {t.size} values and y {y.size}; they must match")
    step = np.diff(t)
    if np.any(step <= 0):
        k = int(np.argmax(step <= 0)) + 1
        raise ModelError(f"time table: t must increase strictly; t[{k}] = {t[k]} follows t[{k - 1}] = {t[k - 1]}")
    return t, y


def as_time_function(value, name: str = "f") -> TimeFunction:
    """Accept a number, a callable ``f(t)`` or a TimeFunction; ``name`` is the owner its errors name."""
    if isinstance(value, TimeFunction):
        return value.bound(name)
    if callable(value):
        return TimeFunction(value).bound(name)
    try:
        c = float(value)
    except (TypeError, ValueError):
        raise ModelError(f"{name}: expected a number, a callable f(t) or a TimeFunction, got {value!r}") from None
    if not math.isfinite(c):
        raise ModelError(f"{name}: value {c} is not finite")
    return TimeFunction.constant(c)
