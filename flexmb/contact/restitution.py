"""The restitution a contact law actually achieves: a sphere (mass m) hitting a rigid plane, no gravity.

docs/theory-contact.md §3. The one-degree-of-freedom contact problem

    m delta'' = -F(delta, delta', v),   delta(0) = 0,   delta'(0) = v,   separation when delta returns to 0,

gives the achieved coefficient of restitution ``e_ach = -delta'(t_sep) / v``. Two routes, checked against each
other in tests/contact:

* ``predicted_restitution``: the law's own analytic prediction. For the hysteresis laws
  ``F = K delta^n (1 + h delta'/v)`` the phase-plane equation ``m u du/d delta = -K delta^n (1 + h u / v)``
  separates; integrating over the whole contact gives ``x - ln(1 + x) = -y - ln(1 - y)`` with ``x = h``,
  ``y = h e_ach`` -- independent of m, v, K and n (derived in theory-contact.md §3.1). For the clamped linear
  spring-damper it is ``laws.linear_restitution(zeta)``.
* ``simulate_impact``: direct integration of the ODE with scipy's ``solve_ivp`` (DOP853, tight tolerances,
  event at separation), using the law's own ``force`` method.

Sources for the comparison of the laws: Flores, Machado, Silva & Martins (2011), Nonlinear Dyn. 64:25-47;
Lankarani & Nikravesh (1990); Hunt & Crossley (1975).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import ModelError
from .laws import (ContactLaw, Flores, HuntCrossley, HysteresisLaw, LankaraniNikravesh, LinearSpringDamper,
                   linear_restitution)

__all__ = ["hysteresis_restitution", "exact_hysteresis_factor", "predicted_restitution", "ImpactResult",
           "simulate_impact", "achieved_restitution", "restitution_table", "TABLE_E"]


def _phase(x: float) -> float:
    """``x - ln(1 + x)`` without cancellation for small x."""
    if x < 1e-3:
        return x * x * (0.5 - x / 3.0 + x * x / 4.0 - x ** 3 / 5.0)
    return x - math.log1p(x)


def hysteresis_restitution(h):
    """Achieved restitution of ``F = K delta^n (1 + h delta'/delta'_minus)`` for a single impact (vectorized in h).

    Solves ``h - ln(1 + h) = -y - ln(1 - y)`` for ``y = h e_ach`` in (0, 1); written with ``y = 1 - exp(-s)``
    the equation reads ``s - (1 - exp(-s)) = h - ln(1 + h)``, monotone in s, so even h ~ 1e3 (Flores at
    e -> 0) is resolved without underflow. ``h = 0`` gives 1.
    """
    from scipy.optimize import brentq

    def one(hk: float) -> float:
        if hk < 0 or not math.isfinite(hk):
            raise ModelError(f"hysteresis_restitution: the hysteresis factor must be finite and >= 0, got {hk}")
        if hk == 0.0:
            return 1.0
        L = _phase(hk)
        if hk < 1e-4:                       # series: y = x - 2/3 x^2 + ..., e = 1 - 2/3 h + 4/9 h^2
            return 1.0 - 2.0 * hk / 3.0 + 4.0 * hk * hk / 9.0
        s = brentq(lambda s: s + math.expm1(-s) - L, 0.0, L + 1.0, xtol=1e-300, rtol=1e-15)
        return -math.expm1(-s) / hk

    hh = np.asarray(h, dtype=float)
    out = np.array([one(float(x)) for x in hh.ravel()]).reshape(hh.shape)
    return out if out.ndim else float(out)


def exact_hysteresis_factor(e: float) -> float:
    """The factor ``h`` for which ``F = K delta^n (1 + h delta'/delta'_minus)`` restitutes exactly ``e`` in (0, 1].

    Inverse of ``hysteresis_restitution`` (monotone decreasing in h); for e near 1, ``h ~ 3 (1 - e)/2``
    (the Hunt-Crossley/Lankarani-Nikravesh limit).
    """
    from scipy.optimize import brentq
    if not (0.0 < e <= 1.0):
        raise ModelError(f"exact_hysteresis_factor: e must lie in (0, 1], got {e}")
    if e == 1.0:
        return 0.0
    hi = 1.0
    while hysteresis_restitution(hi) > e:
        hi *= 2.0
    return float(brentq(lambda h: hysteresis_restitution(h) - e, 0.0, hi, xtol=1e-15, rtol=1e-14))


def predicted_restitution(law: ContactLaw, mass: float | None = None) -> float:
    """The law's own analytic restitution for a single impact on a rigid plane.

    Hysteresis laws: ``hysteresis_restitution(law.h)``, valid for any mass, K, n and any impact speed above
    ``law.min_approach_speed``. Linear spring-damper: ``linear_restitution(c / (2 sqrt(K m)))`` with ``m`` the
    impacting mass (default: the law's calibration mass).
    """
    if isinstance(law, HysteresisLaw):
        return hysteresis_restitution(law.h)
    if isinstance(law, LinearSpringDamper):
        m = law.mass if mass is None else float(mass)
        if not m > 0:
            raise ModelError(f"predicted_restitution: mass must be positive, got {mass}")
        return linear_restitution(law.c / (2.0 * math.sqrt(law.K * m)))
    raise ModelError(f"predicted_restitution: no analytic prediction for {type(law).__name__}")


@dataclass(frozen=True)
class ImpactResult:
    """A single impact of a mass on a rigid plane through a contact law (SI units)."""

    restitution: float         # -, exit speed / entry speed
    max_penetration: float     # m
    peak_force: float          # N
    duration: float            # s, from touch until delta returns to 0
    time_to_peak: float        # s, time of the peak force
    exit_speed: float          # m/s


def simulate_impact(law: ContactLaw, mass: float, speed: float, *, rtol: float = 1e-10,
                    atol: float = 1e-12) -> ImpactResult:
    """Integrate ``m delta'' = -F(delta, delta', speed)`` from touch to separation (solve_ivp, DOP853).

    The problem is scaled by the elastic maximum penetration ``delta_s = ((n+1) m v^2/(2K))^(1/(n+1))`` and
    ``t_s = delta_s / v``, so ``rtol``/``atol`` apply to O(1) quantities. The approach speed passed to the law
    is the impact speed. The peak force is located on the dense output and refined by a bounded scalar search.
    """
    from scipy.integrate import solve_ivp
    from scipy.optimize import minimize_scalar

    m, v = float(mass), float(speed)
    if not (m > 0 and math.isfinite(m)) or not (v > 0 and math.isfinite(v)):
        raise ModelError(f"simulate_impact: mass and speed must be positive and finite, got {mass}, {speed}")
    K, n = law.K, law.n
    ds = ((n + 1.0) * m * v * v / (2.0 * K)) ** (1.0 / (n + 1.0))
    ts = ds / v
    scale = ds / (m * v * v)

    def force(y):
        return law.force(ds * y[0], v * y[1], v)[0]

    def rhs(_t, y):
        return [y[1], -scale * float(force(y))]

    def touch_down(_t, y):
        return y[0]
    touch_down.terminal, touch_down.direction = True, -1.0

    sol = solve_ivp(rhs, (0.0, 1e6), [0.0, 1.0], method="DOP853", rtol=rtol, atol=atol,
                    events=[touch_down], dense_output=True)
    if sol.status != 1 or not len(sol.t_events[0]):
        raise ModelError(f"simulate_impact: {law!r} did not separate (solver status {sol.status}: {sol.message})")
    tau_end = float(sol.t_events[0][0])
    u_end = float(sol.y_events[0][0][1])
    grid = np.linspace(0.0, tau_end, 4001)
    Y = sol.sol(grid)
    Fg = law.force(ds * Y[0], v * Y[1], v)[0]
    k = int(np.argmax(Fg))
    lo, hi = grid[max(k - 1, 0)], grid[min(k + 1, grid.size - 1)]
    res = minimize_scalar(lambda t: -float(force(sol.sol(t))), bounds=(lo, hi), method="bounded",
                          options={"xatol": 1e-12 * max(tau_end, 1.0)})
    t_peak, F_peak = (res.x, -res.fun) if -res.fun >= Fg[k] else (grid[k], Fg[k])
    x_max = float(np.max(Y[0]))
    kx = int(np.argmax(Y[0]))
    res_x = minimize_scalar(lambda t: -float(sol.sol(t)[0]), bounds=(grid[max(kx - 1, 0)],
                            grid[min(kx + 1, grid.size - 1)]), method="bounded", options={"xatol": 1e-12})
    x_max = max(x_max, -float(res_x.fun))
    return ImpactResult(restitution=-u_end, max_penetration=ds * x_max, peak_force=float(F_peak),
                        duration=ts * tau_end, time_to_peak=ts * float(t_peak), exit_speed=-v * u_end)


def achieved_restitution(law: ContactLaw, mass: float = 1.0, speed: float = 1.0, **kw) -> float:
    """``simulate_impact(law, mass, speed).restitution``: the restitution found by integrating the ODE."""
    return simulate_impact(law, mass, speed, **kw).restitution


TABLE_E = (0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 1.0)


def restitution_table(es=TABLE_E) -> dict[str, np.ndarray]:
    """Achieved restitution (analytic predictions) against the requested e, for every law.

    Columns: ``e``; ``Lankarani-Nikravesh``, ``Hunt-Crossley``, ``Flores`` (independent of m, v, K, n);
    ``exact hysteresis`` (h from ``exact_hysteresis_factor``, = e by construction, a check);
    ``linear (clamped calibration)`` (= e at its calibration mass) and ``linear (Kelvin-Voigt calibration)``
    (the classical unclamped damping ratio, with the clamp). Entries a law cannot take (e = 0 for Flores and
    the linear law) are NaN.
    """
    e = np.asarray(es, dtype=float)

    def col(fn):
        return np.array([fn(x) for x in e])

    return {
        "e": e,
        "Lankarani-Nikravesh": col(lambda x: hysteresis_restitution(LankaraniNikravesh.hysteresis_factor(x))),
        "Hunt-Crossley": col(lambda x: hysteresis_restitution(HuntCrossley.hysteresis_factor(x))),
        "Flores": col(lambda x: hysteresis_restitution(Flores.hysteresis_factor(x)) if x > 0 else math.nan),
        "exact hysteresis": col(lambda x: hysteresis_restitution(exact_hysteresis_factor(x)) if x > 0 else math.nan),
        "linear (clamped calibration)": col(
            lambda x: predicted_restitution(LinearSpringDamper(1.0, x, 1.0)) if x > 0 else math.nan),
        "linear (Kelvin-Voigt calibration)": col(
            lambda x: predicted_restitution(LinearSpringDamper(1.0, x, 1.0, calibration="kelvin-voigt"))
            if x > 0 else math.nan),
    }
