"""Friction of contact pairs: regularized Coulomb laws and the tangential force kernel (docs/theory-contact.md §5).

**Laws.** A friction law gives the friction coefficient as a function of the slip speed ``s = |v_t|`` (m/s),
vectorized, with what the Newton blocks need (``coefficient(s) -> (mu, dmu/ds, mu/s)``; ``mu/s`` is returned
finite at ``s = 0``, where every law here is linear in the slip velocity):

* ``CoulombRamp`` -- Coulomb friction with the "dynamic correction coefficient" of Ambrosio (2002, §4.3,
  eqs. (21)-(22)): ``mu_eff = mu c_d(s)``, ``c_d = 0`` below ``v_dead``, rising linearly to 1 at ``v0`` and 1
  above. The paper's lower speed (its v0) is ``v_dead`` here (default 0, so ``mu_eff = mu min(1, s/v0)``), its
  upper one (its v1) is ``v0``. ``shape="tanh"`` gives the smooth variant ``mu tanh(s/v0)``.
* ``BrownMcPhee`` -- the continuous velocity-based model with a Stribeck peak of P. Brown & J. McPhee, "A
  continuous velocity-based friction model for dynamics and control with physically meaningful parameters",
  J. Comput. Nonlinear Dynam. 11(5):054502 (2016): with ``x = s / v_s``,
  ``mu(s) = mu_d tanh(4 x) + (mu_s - mu_d) x / (x^2/4 + 3/4)^2``; the second term peaks at x = 1 with value
  ``mu_s - mu_d``, so ``mu(v_s) ~= mu_s``. A tangential load below ``mu_s F_n`` is held by a creep speed
  ``s* < v_s`` solving ``mu(s*) = F_t / F_n`` (``creep_speed``).

Neither law has a state of its own: they are memoryless, so a "held" load creeps at ``s*`` (the price of a
regularized law; a bristle model would need a per-pair state, see the theory note).

**Kernel** (``friction_kernel`` of flexmb/compiled/contact.py). The friction force acts at the contact point X on body b (and the
reaction at X on body a), opposite to the tangential slip velocity of the material points of b and a that
coincide with X, rolling terms ``omega x r`` included:

    v = G(q) q_dot,   v_t = v - (u . v) u,   f = -F_n mu(|v_t|) v_t / |v_t|,   Q = G^T f,

with u the contact normal and ``G = d v / d q_dot`` the Jacobian of the relative velocity of those material
points at their current body-fixed coordinates ``u_k = A_k^T (X - r_k)`` (k = a, b). Because X moves over the
bodies, G depends on q also through ``u_k(q)``; the exact derivatives are in the theory note §5.3.
"""
from __future__ import annotations

import math

import numpy as np

from ..checks import scalar
from ..errors import ModelError, NonFiniteError

__all__ = ["FrictionLaw", "CoulombRamp", "BrownMcPhee", "FrictionTable"]


def _number(value, what: str, owner: str, positive: bool = True, allow_zero: bool = False) -> float:
    return scalar(value, what, owner, sign="positive" if positive and not allow_zero else "non-negative")


def _speeds(name: str, s) -> np.ndarray:
    s = np.asarray(s, dtype=float)
    bad = ~np.isfinite(s) | (s < 0)
    if bad.any():
        k = int(np.flatnonzero(bad.ravel())[0])
        raise NonFiniteError(f"{name} friction law: slip speed[{k}] = {s.ravel()[k]} is not a finite non-negative "
                             "number")
    return s


class FrictionLaw:
    """A friction coefficient as a function of the slip speed (m/s).

    A user law subclasses this and defines ``coefficient``; it must be linear in the slip velocity near rest
    (``mu/s`` finite at s = 0), or the tangential force is discontinuous at v_t = 0."""

    name = "friction"
    _scale = 1.0            # a typical slip speed (m/s) where mu is developed; subclasses set it

    def coefficient(self, s):
        """``(mu, dmu/ds, mu/s)`` for slip speeds ``s >= 0`` (arrays); ``mu/s`` finite at s = 0."""
        raise NotImplementedError

    def mu(self, s):
        """Friction coefficient (dimensionless) at slip speeds ``s`` (m/s), without its derivative."""
        return self.coefficient(s)[0]

    def creep_speed(self, ratio: float) -> float:
        """Steady slip speed (m/s) at which the law carries ``F_t = ratio F_n`` (the smallest root of
        ``mu(s) = ratio``), or ``inf`` if the law never reaches that ratio."""
        from scipy.optimize import brentq
        ratio = float(ratio)
        if ratio <= 0.0:
            return 0.0
        hi = self._scale
        for _ in range(200):
            if float(self.mu(hi)) >= ratio:
                break
            if hi > 1e6 * self._scale:
                return math.inf
            hi *= 1.5
        else:
            return math.inf
        # the smallest root: bracket on a fine grid below hi (mu may be non-monotone)
        grid = np.linspace(0.0, hi, 2001)
        m = self.mu(grid) - ratio
        k = int(np.flatnonzero(m >= 0.0)[0])
        return float(brentq(lambda x: float(self.mu(x)) - ratio, grid[k - 1], grid[k], xtol=1e-16, rtol=1e-14))


class CoulombRamp(FrictionLaw):
    """Regularized Coulomb friction, ``mu_eff(s) = mu c_d(s)`` (Ambrosio 2002, §4.3 eqs. (21)-(22)).

    Args:
        mu: dynamic friction coefficient (-).
        v0: slip speed (m/s) from which the full ``mu`` acts (Ambrosio's v1).
        v_dead: slip speed (m/s) below which no friction acts (Ambrosio's v0; default 0, then
            ``mu_eff = mu min(1, s / v0)``, linear in the slip velocity near rest).
        shape: ``"linear"`` (Ambrosio's ramp, default) or ``"tanh"`` (``mu tanh(s/v0)``, smooth; needs
            ``v_dead = 0``).

    A tangential load ``F_t < mu F_n`` is carried by a steady creep at ``s = v0 F_t / (mu F_n)`` (linear ramp).
    """

    name = "Coulomb ramp"

    def __init__(self, mu: float, v0: float, v_dead: float = 0.0, shape: str = "linear"):
        owner = f"{self.name} friction law"
        self.mu_d = _number(mu, "friction coefficient mu", owner, allow_zero=True)
        self.v0 = _number(v0, "ramp speed v0 (m/s)", owner)
        self.v_dead = _number(v_dead, "dead-zone speed v_dead (m/s)", owner, allow_zero=True)
        if shape not in ("linear", "tanh"):
            raise ModelError(f"{owner}: shape must be 'linear' or 'tanh', got {shape!r}")
        if self.v_dead >= self.v0:
            raise ModelError(f"{owner}: v_dead ({self.v_dead} m/s) must be below v0 ({self.v0} m/s)")
        if shape == "tanh" and self.v_dead:
            raise ModelError(f"{owner}: the tanh shape has no dead zone (v_dead must be 0)")
        self.shape = shape
        self._scale = self.v0

    def coefficient(self, s):
        """Friction coefficient and its derivative ``(mu, dmu/ds)`` at slip speeds ``s`` (m/s): Coulomb's ``mu_d``
        reached over the regularization speed ``v0`` (ramp or tanh; Ambrosio, docs/theory-contact.md §5)."""
        s = _speeds(self.name, s)
        if self.shape == "tanh":
            return tanh_coefficient(self.mu_d, self.v0, s)
        return ramp_coefficient(self.mu_d, self.v0, self.v_dead, s)

    def __repr__(self) -> str:
        dead = f", v_dead={self.v_dead:.6g}" if self.v_dead else ""
        return f"CoulombRamp(mu={self.mu_d:.6g}, v0={self.v0:.6g}{dead}, shape={self.shape!r})"


def tanh_coefficient(mu, v0, s):
    """``mu tanh(s/v0)``: ``(mu, dmu/ds, mu/s)``; parameters scalars or arrays over the contacts."""
    z = s / v0
    th = np.tanh(z)
    ratio = np.where(z > 1e-6, th / np.where(z > 1e-6, z, 1.0), 1.0 - z * z / 3.0)   # tanh(z)/z
    return mu * th, mu / v0 * (1.0 - th * th), mu / v0 * ratio


def ramp_coefficient(mu, v0, vd, s):
    """Ambrosio's ramp ``mu clip((s - vd)/(v0 - vd), 0, 1)``: ``(mu, dmu/ds, mu/s)`` (``mu/s = mu/v0`` at rest
    when ``vd = 0``); parameters scalars or arrays over the contacts."""
    c = np.clip((s - vd) / (v0 - vd), 0.0, 1.0)
    dmu = np.where((s > vd) & (s < v0), mu / (v0 - vd), 0.0)
    no_dead = np.where(s < v0, mu / v0, mu / np.where(s < v0, 1.0, s))
    dead = np.where(s > vd, mu * c / np.where(s > vd, s, 1.0), 0.0)
    return mu * c, dmu, np.where(vd == 0.0, no_dead, dead)


class BrownMcPhee(FrictionLaw):
    """Brown & McPhee (2016) continuous friction with a Stribeck peak (no state).

    ``mu(s) = mu_d tanh(4 s/v_s) + (mu_s - mu_d) (s/v_s) / ((s/v_s)^2/4 + 3/4)^2``.

    Args:
        mu_s: static friction coefficient (-), ``>= mu_d``; the coefficient peaks near ``mu_s`` at ``s = v_s``.
        mu_d: dynamic (Coulomb) coefficient (-), reached for ``s >> v_s``.
        v_s: stiction (transition) speed (m/s): a load up to ~``mu_s F_n`` is carried by a creep ``< v_s``.
    """

    name = "Brown-McPhee"

    def __init__(self, mu_s: float, mu_d: float, v_s: float):
        owner = f"{self.name} friction law"
        self.mu_s = _number(mu_s, "static coefficient mu_s", owner, allow_zero=True)
        self.mu_d = _number(mu_d, "dynamic coefficient mu_d", owner, allow_zero=True)
        self.v_s = _number(v_s, "stiction speed v_s (m/s)", owner)
        if self.mu_s < self.mu_d:
            raise ModelError(f"{owner}: mu_s ({self.mu_s}) must not be below mu_d ({self.mu_d})")
        self._scale = self.v_s

    def coefficient(self, s):
        """Friction coefficient and its derivative ``(mu, dmu/ds)`` at slip speeds ``s`` (m/s): Brown & McPhee's
        Stribeck curve through ``mu_s`` at ``v_s`` (docs/theory-contact.md §5)."""
        s = _speeds(self.name, s)
        return brown_mcphee_coefficient(self.mu_s, self.mu_d, self.v_s, s)

    def peak(self) -> float:
        """The largest coefficient (at s = v_s up to the tanh term): ``mu_d tanh(4) + mu_s - mu_d``."""
        return self.mu_d * math.tanh(4.0) + self.mu_s - self.mu_d

    def __repr__(self) -> str:
        return f"BrownMcPhee(mu_s={self.mu_s:.6g}, mu_d={self.mu_d:.6g}, v_s={self.v_s:.6g})"


def brown_mcphee_coefficient(mu_s, mu_d, v_s, s):
    """Brown & McPhee (2016): ``(mu, dmu/ds, mu/s)``; parameters scalars or arrays over the contacts."""
    vs, md, dm = v_s, mu_d, mu_s - mu_d
    x = s / vs
    z = 4.0 * x
    th = np.tanh(z)
    D = 0.25 * x * x + 0.75
    mu = md * th + dm * x / (D * D)
    dmu = md * 4.0 / vs * (1.0 - th * th) + dm / vs * (D - x * x) / D ** 3
    ratio = np.where(z > 1e-6, th / np.where(z > 1e-6, z, 1.0), 1.0 - z * z / 3.0)   # tanh(z)/z
    mu_over_s = md * 4.0 / vs * ratio + dm / (vs * D * D)
    return mu, dmu, mu_over_s


class FrictionTable:
    """The friction laws of many contacts evaluated together (no loop over contacts or law objects): all
    linear Coulomb ramps in one call, all tanh ramps in one, all Brown-McPhee laws in one, with per-contact
    parameters; a user :class:`FrictionLaw` subclass per law object. ``laws`` per contact (None: no friction)."""

    def __init__(self, laws):
        self.laws = list(laws)
        n = len(self.laws)

        def kind(w):
            if isinstance(w, CoulombRamp):
                return 0 if w.shape == "linear" else 1
            return 2 if isinstance(w, BrownMcPhee) else 3

        self.kind = np.array([-1 if w is None else kind(w) for w in self.laws], dtype=np.int64).reshape(n)
        self.p = np.zeros((n, 3))
        for k, w in enumerate(self.laws):          # construction only: the per-contact parameters
            if isinstance(w, CoulombRamp):
                self.p[k] = (w.mu_d, w.v0, w.v_dead)
            elif isinstance(w, BrownMcPhee):
                self.p[k] = (w.mu_s, w.mu_d, w.v_s)

    def coefficient(self, s, which):
        """``(mu, dmu/ds, mu/s)`` at slip speeds ``s`` of the contacts ``which`` (indices, all with friction)."""
        s = _speeds("friction", s)
        which = np.asarray(which, dtype=np.int64)
        out = [np.zeros(s.shape), np.zeros(s.shape), np.zeros(s.shape)]
        kind, p = self.kind[which], self.p[which]
        for code, fn in ((0, lambda q, x: ramp_coefficient(q[:, 0], q[:, 1], q[:, 2], x)),
                         (1, lambda q, x: tanh_coefficient(q[:, 0], q[:, 1], x)),
                         (2, lambda q, x: brown_mcphee_coefficient(q[:, 0], q[:, 1], q[:, 2], x))):
            m = np.flatnonzero(kind == code)
            if m.size:
                for o, v in zip(out, fn(p[m], s[m])):
                    o[m] = v
        for j in np.unique(which[kind == 3]):      # user laws: one call per law object
            m = np.flatnonzero(which == j)
            for o, v in zip(out, self.laws[j].coefficient(s[m])):
                o[m] = v
        return tuple(out)
