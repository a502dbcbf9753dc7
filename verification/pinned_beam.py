"""An inextensible pinned-pinned Euler-Bernoulli link of K assumed modes, for Lagrange's equations with jets.

Shared by the independent references of the crank-rocker and the slider-crank (numpy only, no flexmb).
Deflection ``w(s) = sum_k eta_k sin(k pi s / L)`` from the chord; inextensibility puts the material
point s at ``xi(s) = s - 1/2 int_0^s w'^2`` along the chord (to second order in w'), so the chord is
``l = L - 1/2 int_0^L w'^2`` -- the foreshortening that couples bending to the mechanism's loop closure
(and through it the axial load into the bending equations: geometric stiffening).
"""
from __future__ import annotations

import math

import numpy as np

from .jets import Jet


def slope_integral(k: np.ndarray, s: float) -> np.ndarray:
    """int_0^s k_i cos(k_i x) k_j cos(k_j x) dx in closed form (the foreshortening matrices)."""
    a, b = k[:, None], k[None, :]
    diff = np.where(a == b, 1.0, a - b)              # the diagonal is replaced below
    out = a * b * (np.sin((a - b) * s) / (2 * diff) + np.sin((a + b) * s) / (2 * (a + b)))
    out[np.diag_indices(k.size)] = k ** 2 * (s / 2 + np.sin(2 * k * s) / (4 * k))
    return out


class PinnedBeam:
    """K sine modes of a link of length L (m), mass per length rho_a (kg/m), bending stiffness EI (N m^2),
    sampled at ``n_points`` Gauss points; its modal coordinates are q[offset:offset + K] of n coordinates."""

    def __init__(self, L: float, rho_a: float, EI: float, K: int, n: int, offset: int, n_points: int = 48):
        xg, wg = np.polynomial.legendre.leggauss(n_points)
        self.L, self.K, self.n, self.offset = L, K, n, offset
        self.s, self.w = 0.5 * L * (xg + 1.0), 0.5 * L * wg
        self.mass = rho_a * self.w                                       # kg per Gauss point
        k = np.arange(1, K + 1) * math.pi / L
        modal = slice(offset, offset + K)
        self.shapes = np.zeros((n_points, n))
        self.shapes[:, modal] = np.sin(np.outer(self.s, k))
        self.P = np.zeros((n_points, n, n))
        self.P[:, modal, modal] = np.array([slope_integral(k, si) for si in self.s])
        self.P_L = np.zeros((1, n, n))
        self.P_L[0, modal, modal] = slope_integral(k, L)
        self.mid = np.zeros(n)
        self.mid[modal] = np.sin(k * L / 2)
        self.k_modal = EI * k ** 4 * L / 2                               # EI int phi_k''^2, N/m
        self.omega = np.sqrt(self.k_modal / (rho_a * L / 2))             # pinned-pinned frequencies, rad/s

    def eta(self, q: np.ndarray) -> np.ndarray:
        return q[self.offset:self.offset + self.K]

    def chord(self, q: np.ndarray, qd: np.ndarray) -> Jet:
        """l = L - 1/2 q^T P_L q."""
        c = self.L - 0.5 * Jet.quadratic(self.P_L, q, qd)
        return Jet(c.v[0], c.d[0], c.dd0[0], c.c[0])

    def points(self, ax: Jet, ay: Jet, ex: Jet, ey: Jet, q: np.ndarray, qd: np.ndarray) -> tuple[Jet, Jet]:
        """(x, y) of the Gauss points: r = A + xi e + w n, n = (-e_y, e_x)."""
        xi = Jet.constant(self.s, self.n) - 0.5 * Jet.quadratic(self.P, q, qd)
        w = Jet.linear(self.shapes, q, qd)
        return ax + xi * ex - w * ey, ay + xi * ey + w * ex

    def stiffness_proportional(self, zeta: float) -> np.ndarray:
        """Modal damping coefficients of D = (2 zeta / omega_1) K: zeta at the first mode (N s/m)."""
        return 2.0 * zeta / self.omega[0] * self.k_modal
