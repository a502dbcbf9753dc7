"""Isotropic linear elastic material (docs/theory-elements.md §1).

SI units: Young's modulus ``E`` and shear modulus ``G`` in Pa, density ``rho`` in
kg/m^3; the Poisson ratio ``nu`` is dimensionless.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from flexmb.errors import ModelError


@dataclass(frozen=True)
class Material:
    """Isotropic linear elastic material.

    Args:
        E: Young's modulus, Pa (> 0).
        nu: Poisson ratio (-1 < nu < 0.5).
        rho: mass density, kg/m^3 (>= 0).
        name: optional label used in error messages and reports.
    """

    E: float
    nu: float
    rho: float
    name: str | None = None

    def __post_init__(self) -> None:
        label = f"material {self.name!r}" if self.name else "material"
        for field in ("E", "nu", "rho"):
            value = getattr(self, field)
            try:
                value = float(value)
            except (TypeError, ValueError):
                raise ModelError(f"{label}: {field} must be a number, got {value!r}") from None
            object.__setattr__(self, field, value)
        if not (math.isfinite(self.E) and self.E > 0.0):
            raise ModelError(f"{label}: Young's modulus E must be positive and finite, got {self.E!r} Pa")
        if not (-1.0 < self.nu < 0.5):
            raise ModelError(f"{label}: Poisson ratio nu must lie in (-1, 0.5), got {self.nu!r}")
        if not (math.isfinite(self.rho) and self.rho >= 0.0):
            raise ModelError(f"{label}: density rho must be finite and >= 0, got {self.rho!r} kg/m^3")

    @property
    def G(self) -> float:
        """Shear modulus ``E / (2 (1 + nu))``, Pa."""
        return self.E / (2.0 * (1.0 + self.nu))

    @property
    def lame(self) -> tuple[float, float]:
        """Lamé constants ``(lambda, mu)``, Pa (theory §1, eq. 1.2)."""
        lam = self.E * self.nu / ((1.0 + self.nu) * (1.0 - 2.0 * self.nu))
        return lam, self.G

    def elasticity_matrix(self) -> np.ndarray:
        """6x6 Voigt elasticity matrix ``D`` (xx, yy, zz, yz, xz, xy; engineering shear), Pa.

        Bathe, *Finite Element Procedures* (1996), §4.2 (theory eq. 1.3).
        """
        lam, mu = self.lame
        D = np.zeros((6, 6))
        D[:3, :3] = lam
        D[np.arange(3), np.arange(3)] += 2.0 * mu
        D[np.arange(3, 6), np.arange(3, 6)] = mu
        return D
