"""Second-order time jets: Lagrange's equations of a mechanism from its position functions alone.

Plain numpy, no flexmb: the independent assumed-modes references of the crank-rocker and the
slider-crank (``crank_rocker/assumed_modes.py``, ``slider_crank/assumed_modes.py``) are written with it.

A :class:`Jet` carries a position-level quantity f(q(t), t) with its first and second time
derivatives, the second split into the part linear in the generalized accelerations:

    f,   f_dot = df/dt,   f_ddot = dd0 + c . q_ddot,   with c = df/dq.

The arithmetic below applies the product, quotient and chain rules to all three, so a model
writes only its kinematics (x(q, t), y(q, t) of every mass point) and gets, exactly, its
acceleration ``r_ddot = c q_ddot + dd0`` and its Jacobian ``dr/dq = c``. d'Alembert's principle
in Lagrange's form (e.g. Greenwood, *Advanced Dynamics*, 2003, §2.2),

    sum_points m c^T (c q_ddot + dd0) = Q,

is then the mass matrix ``M = sum m c^T c`` and the right-hand side ``Q - sum m c^T dd0``
(:func:`assemble`): no hand-derived velocity terms, which is where such derivations go wrong.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Jet:
    """f, df/dt, the acceleration-free part of d2f/dt2 and df/dq (shape ``f.shape + (n,)``)."""

    v: np.ndarray
    d: np.ndarray
    dd0: np.ndarray
    c: np.ndarray

    @staticmethod
    def constant(value, n: int) -> "Jet":
        value = np.asarray(value, dtype=float)
        z = np.zeros_like(value)
        return Jet(value, z, z, np.zeros(value.shape + (n,)))

    @staticmethod
    def coordinate(k: int, q: np.ndarray, qd: np.ndarray) -> "Jet":
        """The generalized coordinate q_k itself: rate qd_k, no acceleration-free part, dq_k/dq = e_k."""
        return Jet(np.float64(q[k]), np.float64(qd[k]), np.float64(0.0), np.eye(q.size)[k])

    @staticmethod
    def of_time(f: float, fd: float, fdd: float, n: int) -> "Jet":
        """A prescribed function of time (value, rate, acceleration): no dependence on q."""
        return Jet(np.float64(f), np.float64(fd), np.float64(fdd), np.zeros(n))

    @staticmethod
    def linear(coeff: np.ndarray, q: np.ndarray, qd: np.ndarray) -> "Jet":
        """``coeff @ q`` for a matrix ``coeff`` (rows: points): shape functions times coordinates."""
        return Jet(coeff @ q, coeff @ qd, np.zeros(coeff.shape[0]), np.asarray(coeff, dtype=float))

    @staticmethod
    def quadratic(mats: np.ndarray, q: np.ndarray, qd: np.ndarray) -> "Jet":
        """``q^T P_i q`` for a stack of symmetric matrices ``mats[i]`` (rows: points)."""
        Pq = mats @ q
        return Jet(Pq @ q, 2.0 * Pq @ qd, 2.0 * (mats @ qd) @ qd, 2.0 * Pq)

    # -- arithmetic ---------------------------------------------------------------------------
    def _lift(self, other) -> "Jet":
        return other if isinstance(other, Jet) else Jet.constant(other, self.c.shape[-1])

    def __add__(self, other) -> "Jet":
        o = self._lift(other)
        return Jet(self.v + o.v, self.d + o.d, self.dd0 + o.dd0, self.c + o.c)

    __radd__ = __add__

    def __neg__(self) -> "Jet":
        return Jet(-self.v, -self.d, -self.dd0, -self.c)

    def __sub__(self, other) -> "Jet":
        return self + (-self._lift(other))

    def __rsub__(self, other) -> "Jet":
        return self._lift(other) - self

    def __mul__(self, other) -> "Jet":
        o = self._lift(other)
        v = self.v * o.v
        d = self.d * o.d
        return Jet(v, self.d * o.v + self.v * o.d, self.dd0 * o.v + 2.0 * d + self.v * o.dd0,
                   self.c * np.asarray(o.v)[..., None] + np.asarray(self.v)[..., None] * o.c)

    __rmul__ = __mul__

    def __truediv__(self, other) -> "Jet":
        return self * self._lift(other).apply(lambda x: 1.0 / x, lambda x: -1.0 / x ** 2, lambda x: 2.0 / x ** 3)

    def __rtruediv__(self, other) -> "Jet":
        return self._lift(other) / self

    def apply(self, f, f1, f2) -> "Jet":
        """g(self) for a scalar function g with first and second derivatives ``f1``, ``f2``."""
        g1, g2 = f1(self.v), f2(self.v)
        return Jet(f(self.v), g1 * self.d, g2 * self.d ** 2 + g1 * self.dd0, np.asarray(g1)[..., None] * self.c)


def sin(x: Jet) -> Jet:
    return x.apply(np.sin, np.cos, lambda u: -np.sin(u))


def cos(x: Jet) -> Jet:
    return x.apply(np.cos, lambda u: -np.sin(u), lambda u: -np.cos(u))


def sqrt(x: Jet) -> Jet:
    return x.apply(np.sqrt, lambda u: 0.5 / np.sqrt(u), lambda u: -0.25 / u ** 1.5)


def arccos(x: Jet) -> Jet:
    return x.apply(np.arccos, lambda u: -1.0 / np.sqrt(1.0 - u * u), lambda u: -u / (1.0 - u * u) ** 1.5)


def atan2(y: Jet, x: Jet) -> Jet:
    """Angle of the vector (x, y): theta_dot = (x y_dot - y x_dot) / r^2, differentiated once more."""
    r2 = x.v ** 2 + y.v ** 2
    num = x.v * y.d - y.v * x.d
    r2d = 2.0 * (x.v * x.d + y.v * y.d)
    return Jet(np.arctan2(y.v, x.v), num / r2, (x.v * y.dd0 - y.v * x.dd0) / r2 - num * r2d / r2 ** 2,
               (np.asarray(x.v)[..., None] * y.c - np.asarray(y.v)[..., None] * x.c) / np.asarray(r2)[..., None])


def assemble(parts: list[tuple[np.ndarray, Jet]], n: int) -> tuple[np.ndarray, np.ndarray]:
    """Mass matrix and inertial right-hand side of d'Alembert's principle: for each ``(m, r)``
    (masses or inertias, one per point of the jet ``r``), M += sum m c^T c, b -= sum m c^T dd0.
    The equations of motion are then ``M q_ddot = b + Q``."""
    M, b = np.zeros((n, n)), np.zeros(n)
    for m, r in parts:
        c = r.c.reshape(-1, n)
        w = np.broadcast_to(np.asarray(m, dtype=float), np.shape(r.v)).reshape(-1)
        M += c.T @ (w[:, None] * c)
        b -= c.T @ (w * np.reshape(r.dd0, -1))
    return M, b
