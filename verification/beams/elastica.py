"""Independent elastica references (scipy ``solve_bvp``) for the ``beams`` suite.

Inextensible, shear-rigid planar elastica (Euler 1744; Frisch-Fay, *Flexible Bars*, 1962, ch. 2),
arc length ``s`` in units of ``L``, tangent angle ``theta(s)`` from the undeformed axis:

* cantilever with a dead tip force ``(fx, fy)`` (units ``EI / L^2``):
  ``theta'' = fx sin(theta) - fy cos(theta)``, ``theta(0) = 0``, ``theta'(1) = 0``; the tip-loaded
  cantilever is ``(0, -k)``, ``k = F L^2 / EI``; the column with a lateral imperfection ``(-p, h p)``;
* cantilever buckled by a dead axial end load ``P`` (``p = P L^2 / EI``) with its tip deflected:
  ``theta'' = -p sin(theta)``, ``theta(0) = 0``, ``theta'(1) = 0``, on the branch with tip
  angle ``alpha`` (``p`` follows from ``alpha`` by the complete elliptic integral
  ``sqrt(p) = K(sin(alpha/2))``, Timoshenko & Gere, *Theory of Elastic Stability*, 1961, §2.7).

Tip coordinates ``x = int cos(theta) ds``, ``y = int sin(theta) ds`` integrated with the state.
"""
from __future__ import annotations

import numpy as np
from scipy.integrate import solve_bvp
from scipy.special import ellipk

MATTIASSON_1981 = {1.0: (0.05643, 0.30172), 2.0: (0.16064, 0.49346), 5.0: (0.38763, 0.71379),
                   10.0: (0.55500, 0.81061)}
"""Mattiasson 1981 (Int. J. Numer. Meth. Engng 17:145-153), elliptic-integral solution of the tip-loaded
cantilever: k -> (horizontal tip displacement / L, vertical / L), 5 digits; a cross-check of
:func:`cantilever_tip_load` (which reproduces them to the last digit, tests/test_exact_beam.py)."""


def cantilever_end_force(fx: float, fy: float, start=None):
    """Planar cantilever (clamped at s = 0 along +x) under a dead tip force ``(fx, fy)`` in units of
    ``EI / L^2``: the moment ``M(s) = (x_L - x) fy - (y_L - y) fx`` gives
    ``theta'' = fx sin(theta) - fy cos(theta)``, ``theta(0) = 0``, ``theta'(1) = 0``.

    Returns the scipy solution (``sol.y = (theta, theta', x, y)`` over ``sol.x``); ``start``: a previous
    solution to continue from (else the straight beam)."""
    if start is None:
        s = np.linspace(0.0, 1.0, 201)
        y = np.zeros((4, s.size))
        y[2] = s
    else:
        s = np.linspace(0.0, 1.0, 201)
        y = start.sol(s)

    def rhs(_, z):
        th, m, x, w = z
        return np.vstack([m, fx * np.sin(th) - fy * np.cos(th), np.cos(th), np.sin(th)])

    def bc(a, b):
        return np.array([a[0], b[1], a[2], a[3]])

    sol = solve_bvp(rhs, bc, s, y, tol=1e-10, max_nodes=200000)
    if not sol.success:
        raise RuntimeError(f"elastica (fx, fy) = ({fx}, {fy}): {sol.message}")
    return sol


def cantilever_tip_load(k: float) -> dict[str, float]:
    """Tip of the cantilever under a dead transverse tip load (towards -y), ``k = F L^2 / EI``:
    ``u`` (shortening along the axis) / L, ``v`` (deflection along the load) / L, tip rotation (rad).
    Solved by continuation in k (steps of at most 0.5) from the straight beam."""
    sol = None
    for kk in np.linspace(0.0, k, int(np.ceil(k / 0.5)) + 1)[1:]:
        sol = cantilever_end_force(0.0, -kk, sol)
    th, _, x, w = sol.y[:, -1]
    return {"u": float(1.0 - x), "v": float(-w), "rotation": float(-th)}


def imperfect_column(p_values, h_ratio: float) -> list[dict[str, float]]:
    """Cantilever column under a dead compressive tip load ``P`` (``p = P L^2 / EI`` in
    ``p_values``, ascending) with a lateral tip load ``h_ratio P`` (the imperfection): tip
    deflection ``delta / L`` and shortening ``u / L`` for each p, by continuation."""
    out, sol = [], None
    grid = np.unique(np.concatenate([np.linspace(0.0, max(p_values), 41)[1:], np.asarray(p_values, float)]))
    want = set(np.round(np.asarray(p_values, float), 12))
    for p in grid:
        sol = cantilever_end_force(-p, h_ratio * p, sol)
        if np.round(p, 12) in want:
            _, _, x, w = sol.y[:, -1]
            out.append({"p": float(p), "delta": float(w), "u": float(1.0 - x)})
    return out


def buckled_column(alpha: float) -> dict[str, float]:
    """Post-buckled cantilever (column clamped at the root, dead axial tip load) with tip angle
    ``alpha`` (rad): load ratio ``P / P_cr`` (``P_cr = pi^2 EI / 4 L^2``) and tip deflection
    ``delta / L`` (lateral) and ``u / L`` (shortening) from the elliptic-integral solution."""
    q = np.sin(alpha / 2.0)
    K = float(ellipk(q * q))
    p = K * K
    ratio = p / (np.pi ** 2 / 4.0)

    def rhs(s, y):
        th, m, x, z = y
        return np.vstack([m, -p * np.sin(th), np.cos(th), np.sin(th)])

    def bc(a, b):
        return np.array([a[0], b[1], a[2], a[3]])

    s = np.linspace(0.0, 1.0, 201)
    guess = np.zeros((4, s.size))
    guess[0] = alpha * np.sin(np.pi * s / 2.0)
    guess[1] = alpha * np.pi / 2.0 * np.cos(np.pi * s / 2.0)
    guess[2] = s
    guess[3] = alpha * (1.0 - np.cos(np.pi * s / 2.0)) * 2.0 / np.pi
    sol = solve_bvp(rhs, bc, s, guess, tol=1e-10, max_nodes=100000)
    if not sol.success or abs(sol.y[0, -1] - alpha) > 1e-6:
        raise RuntimeError(f"buckled column alpha={alpha}: {sol.message}, tip angle {sol.y[0, -1]}")
    _, _, x, y = sol.y[:, -1]
    return {"P_over_Pcr": ratio, "delta": y, "u": 1.0 - x}


def elastic_catenary(span: float, length: float, weight: float, EA: float) -> dict[str, float]:
    """Elastic catenary between two supports at the same height (Irvine, *Cable Structures*, MIT Press 1981,
    §2.2, eqs. 2.12-2.13): unstretched length ``length`` (m), weight per unstretched length ``weight`` (N/m),
    axial stiffness ``EA`` (N). The horizontal tension ``H`` solves
    ``span = 2 (H / w) asinh(w L / (2 H)) + H L / EA``; the midspan sag is
    ``f = (H / w) (sqrt(1 + (w L / 2 H)^2) - 1) + w L^2 / (8 EA)``. Returns H (N), sag f (m) and the
    support tension ``T = sqrt(H^2 + (w L / 2)^2)`` (N)."""
    from scipy.optimize import brentq
    w, L = weight, length

    def gap(H):
        return 2.0 * H / w * np.arcsinh(w * L / (2.0 * H)) + H * L / EA - span

    H = brentq(gap, 1e-9 * w * L, 1e9 * w * L, xtol=1e-14 * w * L, rtol=1e-15)
    a = w * L / (2.0 * H)
    sag = H / w * (np.sqrt(1.0 + a * a) - 1.0) + w * L * L / (8.0 * EA)
    return {"H": float(H), "sag": float(sag), "T_support": float(np.hypot(H, w * L / 2.0))}
