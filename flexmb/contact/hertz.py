"""Hertz contact stiffness from material and geometry, and the closed forms of an elastic Hertzian impact.

docs/theory-contact.md §2. Sources: K. L. Johnson, *Contact Mechanics*, Cambridge University Press 1985, ch. 4
(Hertz theory: point contact §4.2, two-dimensional contact of cylinders pp. 99-104) and §11.4 (impact of
elastic bodies); W. Goldsmith, *Impact*, Arnold 1960; the sphere-on-plane stiffness as printed in Ambrosio 2002,
(Ambrosio, eq. (19), after Lankarani et al. 1995).

All quantities SI: moduli in Pa, radii and lengths in m, masses in kg, speeds in m/s, forces in N.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..errors import ModelError

__all__ = ["effective_modulus", "effective_radius", "sphere_sphere", "sphere_plane", "cylinder_line",
           "HertzImpact", "hertz_impact", "duration_coefficient", "HERTZ_DURATION_COEFFICIENT"]


def _num(value, what: str, owner: str) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ModelError(f"{owner}: {what} must be a number, got {value!r}") from None
    if math.isnan(x):
        raise ModelError(f"{owner}: {what} is NaN")
    return x


def _pos(value, what: str, owner: str, allow_inf: bool = False) -> float:
    x = _num(value, what, owner)
    if x <= 0 or (math.isinf(x) and not allow_inf):
        raise ModelError(f"{owner}: {what} must be positive{'' if allow_inf else ' and finite'}, got {x}")
    return x


def effective_modulus(E1: float, nu1: float, E2: float = math.inf, nu2: float = 0.0) -> float:
    """Contact modulus ``E*`` (Pa): ``1/E* = (1 - nu1^2)/E1 + (1 - nu2^2)/E2`` (Johnson 1985, §4.2).

    ``E2 = inf`` (default) is a rigid counter-body. Poisson ratios must lie in (-1, 0.5].
    """
    owner = "effective_modulus"
    E1 = _pos(E1, "E1 (Pa)", owner, allow_inf=True)
    E2 = _pos(E2, "E2 (Pa)", owner, allow_inf=True)
    c = 0.0
    for E, nu, k in ((E1, nu1, 1), (E2, nu2, 2)):
        nu = _num(nu, f"nu{k}", owner)
        if not (-1.0 < nu <= 0.5):
            raise ModelError(f"{owner}: Poisson ratio nu{k} must lie in (-1, 0.5], got {nu}")
        c += (1.0 - nu * nu) / E
    if c == 0.0:
        raise ModelError(f"{owner}: both bodies are rigid (E1 = E2 = inf); a contact stiffness needs compliance")
    return 1.0 / c


def effective_radius(R1: float, R2: float = math.inf) -> float:
    """``R* = 1/(1/R1 + 1/R2)`` (m). ``R2 = inf`` is a plane; a negative ``R2`` is a concave seat of radius
    ``|R2| > R1`` (a ball in a spherical cup, Johnson 1985 §4.1 sign convention)."""
    owner = "effective_radius"
    R1 = _pos(R1, "R1 (m)", owner)
    R2 = _num(R2, "R2 (m)", owner)
    if R2 == 0.0:
        raise ModelError(f"{owner}: R2 must be non-zero (inf for a plane, negative for a concave seat)")
    curv = 1.0 / R1 + 1.0 / R2
    if curv <= 0.0:
        raise ModelError(f"{owner}: the surfaces conform (1/R1 + 1/R2 = {curv:.6g} 1/m <= 0): "
                         f"a concave seat needs |R2| > R1, got R1 = {R1}, R2 = {R2}")
    return 1.0 / curv


def sphere_sphere(R1: float, R2: float, E_star: float) -> float:
    """Hertz stiffness of two spheres ``K = 4/3 E* sqrt(R*)`` (N/m^1.5), for ``F = K delta^(3/2)``.

    From Johnson (1985) §4.2: ``a = (3 F R*/(4 E*))^(1/3)``, ``delta = a^2 / R*``. ``R2 < 0``: concave seat.
    """
    E_star = _pos(E_star, "E* (Pa)", "sphere_sphere")
    return 4.0 / 3.0 * E_star * math.sqrt(effective_radius(R1, R2))


def sphere_plane(R: float, E_star: float) -> float:
    """Hertz stiffness of a sphere of radius R on a plane ``K = 4/3 E* sqrt(R)`` (N/m^1.5).

    Same number as Ambrosio 2002, eq. (19), ``K = 4/(3 pi) sqrt(R) / (h1 + h2)`` with ``h = (1 - nu^2)/(pi E)``.
    """
    E_star = _pos(E_star, "E* (Pa)", "sphere_plane")
    return 4.0 / 3.0 * E_star * math.sqrt(_pos(R, "R (m)", "sphere_plane"))


def cylinder_line(L: float, E_star: float) -> float:
    """Linear stiffness of a cylinder of length L in line contact, ``K = pi E* L / 4`` (N/m, exponent n = 1).

    Line contact is not a power law: the approach of two cylinders under a force per length P grows like
    ``P (ln(R/a) + const) / (pi E*)`` with the contact half-width ``a = sqrt(4 P R*/(pi E*))`` (Johnson 1985,
    pp. 99-104), and the constant depends on where the approach is measured (a two-dimensional elastic
    displacement is defined only up to a datum). This is the usual linearized, radius-free relation
    ``F = pi/4 E* L delta`` for two cylinders with parallel axes (V. L. Popov, *Contact Mechanics and
    Friction*, Springer 2010). It is an order-of-magnitude stiffness: the logarithmic law is softer at
    small loads (its secant stiffness tends to zero with the load). Calibrate against Pereira, Ramalho &
    Ambrosio (2011, Nonlinear Dyn. 63:681) where the line-contact stiffness matters. Use it with n = 1.
    """
    owner = "cylinder_line"
    return math.pi * _pos(E_star, "E* (Pa)", owner) * _pos(L, "L (m)", owner) / 4.0


def duration_coefficient(n: float = 1.5) -> float:
    """``2 int_0^1 dx / sqrt(1 - x^(n+1)) = 2 B(1/(n+1), 1/2) / (n+1)``: elastic contact time in units of
    ``delta_max / v`` for ``F = K delta^n``. 2.9432 for n = 3/2 (Johnson 1985 §11.4 quotes 2.94)."""
    from scipy.special import beta
    n = _pos(n, "exponent n", "duration_coefficient")
    return 2.0 * float(beta(1.0 / (n + 1.0), 0.5)) / (n + 1.0)


HERTZ_DURATION_COEFFICIENT = 2.0 * 0.4 * math.gamma(0.4) * math.gamma(0.5) / math.gamma(0.9)   # = 2.94318...


@dataclass(frozen=True)
class HertzImpact:
    """Closed-form elastic (e = 1) impact of a mass on ``F = K delta^n`` at speed v (SI units)."""

    max_penetration: float     # m
    peak_force: float          # N
    duration: float            # s, touch to separation
    time_to_peak: float        # s, = duration / 2


def hertz_impact(mass: float, speed: float, K: float, n: float = 1.5) -> HertzImpact:
    """Elastic impact of a mass ``m`` at speed ``v`` against ``F = K delta^n`` (sphere on a rigid plane).

    Energy: ``m v^2 / 2 = K delta_max^(n+1) / (n+1)`` gives ``delta_max = ((n+1) m v^2 / (2K))^(1/(n+1))`` --
    for n = 3/2, ``(5 m v^2 / (4 K))^(2/5)`` (Johnson 1985 §11.4; Goldsmith 1960). Peak force
    ``K delta_max^n``; duration ``duration_coefficient(n) delta_max / v`` (2.9432 for n = 3/2, equivalently
    ``3.2181 (m/K)^(2/5) v^(-1/5)``).
    """
    owner = "hertz_impact"
    m = _pos(mass, "mass (kg)", owner)
    v = _pos(speed, "speed (m/s)", owner)
    K = _pos(K, "K (N/m^n)", owner)
    n = _pos(n, "exponent n", owner)
    dmax = ((n + 1.0) * m * v * v / (2.0 * K)) ** (1.0 / (n + 1.0))
    T = (HERTZ_DURATION_COEFFICIENT if n == 1.5 else duration_coefficient(n)) * dmax / v
    return HertzImpact(dmax, K * dmax ** n, T, 0.5 * T)
