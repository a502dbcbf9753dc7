"""Reference solutions of the ``fem`` suite, each with its source.

* Euler-Bernoulli beams: roots of the frequency equations ``cos x cosh x = -1`` (clamped-free)
  and ``cos x cosh x = 1`` (free-free), computed here to machine precision and checked against
  the tabulated values of Blevins, *Formulas for Natural Frequency and Mode Shape* (1979),
  Table 8-1: 1.87510407, 4.69409113, 7.85475744, 10.99554073 and 4.73004074, 7.85320462,
  10.99560784, 14.13716549.
* Timoshenko beams: the exact frequency equation of the Timoshenko beam (Timoshenko 1921,
  Phil. Mag. 41:744-746), for any combination of clamped, pinned and free ends, as the
  determinant of the four boundary conditions on the general solution (Huang 1961, J. Appl.
  Mech. 28:579-584; Han, Benaroya & Wei 1999, J. Sound Vib. 225:935-988, section 5). Simply
  supported ends have the closed form of the lower root of one quadratic in omega^2.
* Plates: Leissa, *Vibration of Plates*, NASA SP-160 (1969), chapter 4 (square plates,
  nu = 0.3, ``lambda = omega a^2 sqrt(rho t / D)``): simply supported ``pi^2 (m^2 + n^2)``
  (Navier's solution, exact); clamped-free-free-free 3.492, 8.525, 21.43, 27.33, 31.11, which
  Leissa takes from Barton's Ritz solution with beam functions (Barton 1951, J. Appl. Mech.
  18:129-134) -- upper bounds. Mindlin plate, simply supported: the flexural root of Mindlin's
  equations for the mode ``sin(m pi x / a) sin(n pi y / a)`` (Mindlin 1951, J. Appl. Mech.
  18:31-38), which is the Timoshenko quadratic per unit width.
"""
from __future__ import annotations

import math

import numpy as np
from scipy.optimize import brentq

BLEVINS_CANTILEVER = (1.87510407, 4.69409113, 7.85475744, 10.99554073)
BLEVINS_FREE_FREE = (4.73004074, 7.85320462, 10.99560784, 14.13716549)
LEISSA_SS = tuple(math.pi**2 * (m * m + n * n) for m, n in ((1, 1), (1, 2), (2, 1), (2, 2)))
LEISSA_SS_MODES = ((1, 1), (1, 2), (2, 1), (2, 2))
LEISSA_CFFF = (3.492, 8.525, 21.43, 27.33, 31.11)
SHELL_SHEAR_FACTOR = 5.0 / 6.0      # k of the shell kernels (docs/theory-shells.md eq. S7)


# ----------------------------------------------------------------------------------------------
# Euler-Bernoulli
# ----------------------------------------------------------------------------------------------
def eb_roots(support: str, count: int) -> np.ndarray:
    """``beta_n L`` of a uniform Euler-Bernoulli beam, ``support`` "clamped-free" or "free-free"."""
    sign = {"clamped-free": 1.0, "free-free": -1.0}[support]

    def f(x):   # cos x cosh x + sign, divided by cosh x so that it stays O(1)
        return math.cos(x) + sign / math.cosh(x)

    # the n-th root lies within (n - 1/2) pi +- pi/2 (cantilever) or n pi + pi/2 +- pi/2 (free-free)
    roots = []
    for n in range(1, count + 1):
        centre = (n - 0.5) * math.pi if sign > 0 else (n + 0.5) * math.pi
        roots.append(brentq(f, centre - 0.5 * math.pi + 1e-9, centre + 0.5 * math.pi - 1e-9, xtol=1e-15, rtol=1e-15))
    return np.array(roots)


def eb_omega(beta_L: np.ndarray, L: float, EI: float, rhoA: float) -> np.ndarray:
    """Euler-Bernoulli circular frequencies ``(beta L)^2 / L^2 sqrt(EI / rho A)``, rad/s."""
    return np.asarray(beta_L) ** 2 / L**2 * math.sqrt(EI / rhoA)


# ----------------------------------------------------------------------------------------------
# Timoshenko
# ----------------------------------------------------------------------------------------------
def timoshenko_pinned(n: int, L: float, EI: float, kGA: float, rhoA: float, rhoI: float) -> float:
    """Exact n-th flexural frequency (rad/s) of a pinned-pinned Timoshenko beam.

    ``w = W sin(a x)``, ``psi = Psi cos(a x)``, ``a = n pi / L``:
    ``(kGA a^2 - rhoA w^2)(EI a^2 + kGA - rhoI w^2) = (kGA a)^2``, lower root in ``w^2``.
    """
    return _timoshenko_wave(n * math.pi / L, EI, kGA, rhoA, rhoI)


def _timoshenko_wave(a: float, EI: float, kGA: float, rhoA: float, rhoI: float) -> float:
    c2 = rhoA * rhoI
    c1 = -(rhoA * (EI * a**2 + kGA) + rhoI * kGA * a**2)
    c0 = kGA * a**2 * (EI * a**2 + kGA) - (kGA * a) ** 2
    return math.sqrt(2.0 * c0 / (-c1 + math.sqrt(c1 * c1 - 4.0 * c2 * c0)))   # lower root, no cancellation


def mindlin_ss_plate(m: int, n: int, a: float, E: float, nu: float, rho: float, t: float,
                     k: float = SHELL_SHEAR_FACTOR) -> float:
    """Flexural frequency (rad/s) of mode (m, n) of a simply supported square Mindlin plate.

    With ``alpha^2 = (m pi / a)^2 + (n pi / a)^2`` Mindlin's equations reduce to the Timoshenko
    quadratic per unit width: ``EI -> D``, ``kGA -> k G t``, ``rhoA -> rho t``, ``rhoI -> rho t^3/12``.
    """
    D = E * t**3 / (12.0 * (1.0 - nu**2))
    G = E / (2.0 * (1.0 + nu))
    alpha = math.pi * math.hypot(m, n) / a
    return _timoshenko_wave(alpha, D, k * G * t, rho * t, rho * t**3 / 12.0)


def _end_rows(kind: str, x: float, a: float, b: float, q: float) -> np.ndarray:
    """Two boundary-condition rows at ``x`` on the coefficients of the four basis solutions.

    Basis (below the cut-off frequency): ``w = cosh(ax), sinh(ax), cos(bx), sin(bx)``; from the
    shear-force equation ``psi' = w'' + q w`` with ``q = rhoA w^2 / kGA``. Quantities:
    ``w``, ``psi``, ``M / EI = psi'`` and ``V / kGA = w' - psi``. Columns 1-2 are divided by
    ``cosh(aL)`` (a positive factor) to keep the determinant O(1).
    """
    alpha, gamma = (a * a + q) / a, (q - b * b) / b
    ch, sh, c, s = math.cosh(a * x), math.sinh(a * x), math.cos(b * x), math.sin(b * x)
    vals = {
        "w": [ch, sh, c, s],
        "psi": [alpha * sh, alpha * ch, gamma * s, -gamma * c],
        "M": [(a * a + q) * ch, (a * a + q) * sh, (q - b * b) * c, (q - b * b) * s],
        "V": [-(q / a) * sh, -(q / a) * ch, -(q / b) * s, (q / b) * c],
    }
    rows = {"clamped": ("w", "psi"), "pinned": ("w", "M"), "free": ("M", "V")}[kind]
    return np.array([vals[r] for r in rows])


def timoshenko_roots(supports: tuple[str, str], count: int, L: float, EI: float, kGA: float,
                     rhoA: float, rhoI: float, omega_guess: np.ndarray) -> np.ndarray:
    """Lowest ``count`` flexural frequencies (rad/s) of a uniform Timoshenko beam.

    ``supports``: end conditions at x = 0 and x = L ("clamped", "pinned", "free"). Roots of the
    4 x 4 boundary determinant are bracketed by a scan from 0 up to 1.05 times the largest of
    ``omega_guess`` (the Euler-Bernoulli values, which bound the Timoshenko ones from above)
    and refined with Brent's method. Only frequencies below the cut-off ``sqrt(kGA / rhoI)``
    are supported.
    """
    cutoff = math.sqrt(kGA / rhoI)
    top = 1.05 * float(np.max(omega_guess))
    if top >= cutoff:
        raise ValueError("frequencies above the Timoshenko cut-off are not supported")

    def det(w: float) -> float:
        c2 = kGA * EI
        c1 = w * w * (kGA * rhoI + rhoA * EI)
        c0 = rhoA * w * w * (rhoI * w * w - kGA)
        disc = math.sqrt(c1 * c1 - 4.0 * c2 * c0)
        a = math.sqrt((-c1 + disc) / (2.0 * c2))
        b = math.sqrt((c1 + disc) / (2.0 * c2))
        q = rhoA * w * w / kGA
        A = np.vstack([_end_rows(supports[0], 0.0, a, b, q), _end_rows(supports[1], L, a, b, q)])
        A[:, :2] /= math.cosh(a * L)
        return float(np.linalg.det(A))

    grid = np.linspace(1e-3 * top, top, 4000)
    values = np.array([det(w) for w in grid])
    roots = [brentq(det, grid[i], grid[i + 1], xtol=1e-14 * top, rtol=1e-15)
             for i in np.flatnonzero(np.sign(values[:-1]) * np.sign(values[1:]) < 0)]
    if len(roots) < count:
        raise ValueError(f"found {len(roots)} Timoshenko roots below {top:.4g} rad/s, expected {count}")
    return np.array(roots[:count])
