"""Functions of time with their first and second derivatives (drivers, loads, voltages).

A driver constraint ``Phi(q) - f(t) = 0`` needs ``f``, ``f'`` and ``f''``: the
velocity equation is ``Phi_q v = f'`` and the acceleration equation
``Phi_q a = -(Phi_q v)_q v + f''``. (Seed 001, eq. 19, drops the ``Phi_tt``
term; docs/theory.md §3.4 gives the complete form.)
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np

from .errors import ModelError, NonFiniteError

__all__ = ["TimeFunction", "as_time_function"]


class TimeFunction:
    """``f(t)`` with derivatives ``df(t)`` and ``ddf(t)``.

    If the derivatives are not given they are taken by central differences of
    ``f`` with step ``1e-4 * (1 + |t|)`` (error O(h^2) ~ 1e-8 relative); give them
    explicitly where that matters.
    """

    def __init__(self, f: Callable[[float], float], df: Callable[[float], float] | None = None,
                 ddf: Callable[[float], float] | None = None, name: str = "f"):
        if not callable(f):
            raise ModelError(f"time function {name!r}: expected a callable or a number, got {f!r}")
        self._f, self._df, self._ddf, self.name = f, df, ddf, name

    def _check(self, value, what: str, t: float) -> float:
        v = float(value)
        if not math.isfinite(v):
            raise NonFiniteError(f"time function {self.name!r}: {what} at t = {t:.6g} s is {v}")
        return v

    def value(self, t: float) -> float:
        return self._check(self._f(t), "value", t)

    def rate(self, t: float) -> float:
        if self._df is not None:
            return self._check(self._df(t), "first derivative", t)
        h = 1e-4 * (1.0 + abs(t))
        return self._check((self._f(t + h) - self._f(t - h)) / (2 * h), "first derivative", t)

    def acceleration(self, t: float) -> float:
        if self._ddf is not None:
            return self._check(self._ddf(t), "second derivative", t)
        if self._df is not None:
            h = 1e-4 * (1.0 + abs(t))
            return self._check((self._df(t + h) - self._df(t - h)) / (2 * h), "second derivative", t)
        h = 1e-3 * (1.0 + abs(t))
        return self._check((self._f(t + h) - 2 * self._f(t) + self._f(t - h)) / (h * h), "second derivative", t)

    def __call__(self, t: float) -> float:
        return self.value(t)

    # -- common profiles -------------------------------------------------
    @classmethod
    def constant(cls, c: float) -> "TimeFunction":
        return cls(lambda t: c, lambda t: 0.0, lambda t: 0.0, name=f"constant {c}")

    @classmethod
    def linear(cls, rate: float, offset: float = 0.0) -> "TimeFunction":
        """``offset + rate t``."""
        return cls(lambda t: offset + rate * t, lambda t: rate, lambda t: 0.0, name=f"linear {rate}")

    @classmethod
    def spin_up(cls, omega_s: float, T_s: float, *, angle: bool = True) -> "TimeFunction":
        """Smooth spin-up of seed 002 eq. 9.18 (corrected as in the seed README).

        ``Omega(t) = (Omega_s/T_s) [t - (T_s/2pi) sin(2 pi t/T_s)]`` for t < T_s,
        then ``Omega_s``. With ``angle=True`` the function is the rotation angle
        (the integral of Omega), whose derivatives are Omega and Omega-dot.
        """
        w = 2.0 * math.pi / T_s

        def omega(t):
            return omega_s / T_s * (t - math.sin(w * t) / w) if t < T_s else omega_s

        def omega_dot(t):
            return omega_s / T_s * (1.0 - math.cos(w * t)) if t < T_s else 0.0

        def theta(t):
            if t < T_s:
                return omega_s / T_s * (0.5 * t * t + (math.cos(w * t) - 1.0) / (w * w))
            return omega_s / T_s * (0.5 * T_s * T_s) + omega_s * (t - T_s)

        if angle:
            return cls(theta, omega, omega_dot, name=f"spin-up angle (Omega_s={omega_s}, T_s={T_s})")

        def omega_ddot(t):
            return omega_s / T_s * w * math.sin(w * t) if t < T_s else 0.0

        return cls(omega, omega_dot, omega_ddot, name=f"spin-up rate (Omega_s={omega_s}, T_s={T_s})")

    @classmethod
    def table(cls, t, y) -> "TimeFunction":
        """Cubic spline through tabulated points (clamped at the ends)."""
        from scipy.interpolate import CubicSpline
        t = np.asarray(t, dtype=float)
        y = np.asarray(y, dtype=float)
        if t.ndim != 1 or t.shape != y.shape or t.size < 2 or np.any(np.diff(t) <= 0):
            raise ModelError("time table: t must be strictly increasing and match y in length (>= 2 points)")
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

        return cls(clamp(cs, lambda k: y[k]), clamp(d1, lambda k: 0.0), clamp(d2, lambda k: 0.0),
                   name="table")


def as_time_function(value, name: str = "f") -> TimeFunction:
    """Accept a number, a callable ``f(t)`` or a TimeFunction."""
    if isinstance(value, TimeFunction):
        return value
    if callable(value):
        return TimeFunction(value, name=name)
    try:
        c = float(value)
    except (TypeError, ValueError):
        raise ModelError(f"{name}: expected a number, a callable f(t) or a TimeFunction, got {value!r}") from None
    if not math.isfinite(c):
        raise ModelError(f"{name}: value {c} is not finite")
    return TimeFunction.constant(c)
