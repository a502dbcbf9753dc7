"""Winch drums that pay rope out or reel it in at a prescribed speed (docs/theory-ropes.md §5).

A :class:`Winch` is the free span of rope between a drum and a rope: a straight, massless, inextensible piece from the
drum's tangent point (a point of body a: the ground, the machine house, a boom) to the end of a segment rope (a
point of body b: its first segment, a hook, a bucket) whose length is prescribed, ``l(t) = l0 + p(t)`` with ``p``
the rope paid out since t = 0 (negative: reeled in). It is one driven distance row (Haug 1989, §9.2 and §9.4),

    Phi = (d . d - l0^2) / 2 - f(t) = 0,    f = l0 p + p^2 / 2,   f' = l p',   f'' = p'^2 + l p'',

with ``d`` the vector from the drum point to the rope point. Its multiplier carries the rope tension ``T = lambda l``
(N, positive when pulling; the force on the rope end is ``-lambda d``), and the drum's work on the system,
``-int T p' dt``, is booked as driver work (``Result.work_drivers``), so the energy balance closes with the drum
work. The span is bilateral: it pushes where a real rope would go slack; check ``tension >= 0``.

This is Crous's own simplification of the dragline's winches (P. G. Crous, "Modelling of Dragline Dynamics",
MSc thesis, Stellenbosch 2000, Ch. 5: "the drag winch is positioned at the fairlead and the hoist winch is
positioned at the boom point"): the rope stored on the drum and its spooling are not modelled, the paid-out rope
appears as the lengthening span. For a drum driven by a torque (a ``DCMotor``, a ``Torque``), model the drum as a
pulley with the rope wound on it (``wound_drum_points`` in flexmb/contact/rope.py, a ``RopePulleyContact`` and the
first segment pinned to the rim: Crous 2000, Ch. 5 "the winches are modelled as pulleys to which the first rope
segment is connected").
"""
from __future__ import annotations

import numpy as np

from ..bodies.base import Body
from ..errors import ModelError
from ..timefunctions import TimeFunction, as_time_function
from .base import Joint, point3
from .driver import Driver

__all__ = ["Winch", "payout_profile"]


def payout_profile(times, speeds, name: str = "winch speed") -> TimeFunction:
    """Rope paid out ``p(t)`` (m) for a winch speed ``p'(t)`` (m/s, positive paying out) given at ``times`` (s)
    and linear in between (constant before the first and after the last time); ``p(0) = 0`` for t >= 0 (the table
    starts at or after 0). Returns a :class:`~flexmb.TimeFunction` with the exact rate and acceleration
    (piecewise constant)."""
    t = np.asarray(times, dtype=float).ravel()
    s = np.asarray(speeds, dtype=float).ravel()
    owner = f"payout profile {name!r}"
    if t.size < 1 or t.size != s.size:
        raise ModelError(f"{owner}: times and speeds must be non-empty and of equal length, got {t.size} and {s.size}")
    if not (np.all(np.isfinite(t)) and np.all(np.isfinite(s))):
        raise ModelError(f"{owner}: times and speeds must be finite")
    if t[0] < 0.0 or np.any(np.diff(t) <= 0.0):
        raise ModelError(f"{owner}: times must start at t >= 0 and increase strictly, got {t.tolist()}")
    t = np.concatenate([[0.0], t]) if t[0] > 0.0 else t
    s = np.concatenate([[s[0]], s]) if t.size > s.size else s
    # p at the knots: trapezoidal rule (exact for the piecewise-linear speed)
    p = np.concatenate([[0.0], np.cumsum(0.5 * (s[1:] + s[:-1]) * np.diff(t))])
    slope = np.concatenate([np.diff(s) / np.diff(t), [0.0]])

    def where(x):
        return min(max(int(np.searchsorted(t, x, side="right")) - 1, 0), t.size - 1)

    def f(x):
        k = where(x)
        dt = x - t[k]
        return float(p[k] + s[k] * dt + 0.5 * slope[k] * dt * dt)

    def df(x):
        k = where(x)
        return float(s[k] + slope[k] * (x - t[k]))

    def ddf(x):
        return float(slope[where(x)])

    return TimeFunction(f, df, ddf, name=name)


class Winch(Driver):
    """A winch drum paying out or reeling in rope at a prescribed rate (module doc; docs/theory-ropes.md §5).

    Args:
        drum: the body carrying the drum (``system.ground``, a house, a boom).
        rope: the body at the rope's end (usually ``Rope.segments[0]``, or a hook or bucket directly).
        drum_point: the drum's tangent point (global, m, at the initial configuration), fixed on ``drum``.
        rope_point: the rope's end point (global, m), fixed on ``rope``; the initial free span is
            ``l0 = |rope_point - drum_point|`` (> 0).
        payout: rope paid out since t = 0, ``p(t)`` (m; negative: reeled in), a :class:`~flexmb.TimeFunction`
            (e.g. :func:`payout_profile`), a callable or a number; give the TimeFunction its derivatives for
            exact velocity and acceleration equations. ``p(0)`` must be 0.
        name: joint name.

    A ``Driver`` subclass, so that the drum's work is booked in ``Result.work_drivers``; it drives no joint
    (``Result.joint_coordinates`` refuses it, as a distance joint).
    """

    kind = "winch"

    def __init__(self, drum: Body, rope: Body, *, drum_point, rope_point, payout, name: str | None = None):
        # a Driver (its constraint work is booked as driver work), built on Joint: no joint of its own
        Joint.__init__(self, drum, rope, name)
        self.joint, self.mode = None, "winch"
        self.drum_point = point3(drum_point, "drum_point", self.owner)
        self.rope_point = point3(rope_point, "rope_point", self.owner)
        self.free_length = float(np.linalg.norm(self.rope_point - self.drum_point))
        if self.free_length < 1e-6:
            raise ModelError(f"{self.owner}: the drum point and the rope point coincide (free span "
                             f"{self.free_length:.3g} m); start with a free span > 0")
        self.payout = as_time_function(payout, f"{self.owner} payout")
        self.function = self.payout
        p0 = self.payout.value(0.0)
        if abs(p0) > 1e-12:
            raise ModelError(f"{self.owner}: payout(0) must be 0 (rope paid out since the start), got {p0:g} m")
        self.point = self.rope_point
        l0 = self.free_length
        owner = self.owner

        def length(t):
            lt = l0 + self.payout.value(t)
            if lt <= 0.0:
                raise ModelError(f"{owner}: the free span reached {lt:.4g} m at t = {t:.6g} s (reeled in more than "
                                 f"the {l0:.4g} m between drum and rope end)")
            return lt

        self._drive = TimeFunction(
            lambda t: 0.5 * (length(t) ** 2 - l0 * l0),
            lambda t: length(t) * self.payout.rate(t),
            lambda t: self.payout.rate(t) ** 2 + length(t) * self.payout.acceleration(t),
            name="free span").bound(self.owner)

    def length(self, t) -> np.ndarray:
        """Prescribed free span ``l(t) = l0 + p(t)`` (m) at times ``t`` (s)."""
        return self.free_length + np.array([self.payout.value(float(x)) for x in np.atleast_1d(t)])

    def speed(self, t) -> np.ndarray:
        """Prescribed paying-out speed ``p'(t)`` (m/s) at times ``t`` (s)."""
        return np.array([self.payout.rate(float(x)) for x in np.atleast_1d(t)])

    def tension(self, result) -> np.ndarray:
        """Rope tension (N, positive pulling the rope end towards the drum) at every row of ``result``, from the
        span's multiplier: the force on the rope end is ``-Phi_q^T lambda = -lambda d``, so ``T = lambda l``
        (module doc)."""
        asm = result._model("Winch.tension")
        k = result.system.joints.index(self)
        row = int(np.flatnonzero(asm.row_joint == k)[0])
        return result.lam[:, row] * self.length(result.t)

    def primitives(self):
        """One driven distance row ``(d . d - l0^2)/2 - f(t)`` (module doc)."""
        return [self._attached("distance", {"u_i": ("point", self.drum_point), "u_j": ("point", self.rope_point)},
                               "free span", driver=self._drive, scalar=self.free_length)]
