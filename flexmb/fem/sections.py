"""Beam cross-section properties (docs/theory-elements.md §4.1).

Local beam axes: ``x`` along the beam (node 0 -> node 1), ``z`` the part of the
section's ``orientation`` vector perpendicular to ``x``, ``y = z x x``.
``Iy = int z^2 dA`` governs bending in the x-z plane (deflection ``w``), ``Iz =
int y^2 dA`` bending in the x-y plane (deflection ``v``). ``ky`` (``kz``) is the
shear correction factor for the shear force ``Vy`` (``Vz``); ``math.inf`` makes
that plane shear-rigid. Lengths in m, areas in m^2, second
moments and torsion constants in m^4.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Sequence

import numpy as np

from flexmb.errors import ModelError


@dataclass(frozen=True)
class BeamSection:
    """Cross-section of a 3D beam.

    Args:
        A: area, m^2.
        Iy, Iz: second moments of area about the local y and z axes, m^4.
        J: Saint-Venant torsion constant, m^4.
        ky, kz: shear correction factors for shear along local y and z (> 0, may be inf).
        orientation: global vector whose part perpendicular to the beam axis is the local z axis.
    """

    A: float
    Iy: float
    Iz: float
    J: float
    ky: float = 5.0 / 6.0
    kz: float = 5.0 / 6.0
    orientation: tuple[float, float, float] = (0.0, 0.0, 1.0)

    def __post_init__(self) -> None:
        for field in ("A", "Iy", "Iz", "J", "ky", "kz"):
            value = getattr(self, field)
            try:
                value = float(value)
            except (TypeError, ValueError):
                raise ModelError(f"beam section: {field} must be a number, got {value!r}") from None
            may_be_infinite = field in ("ky", "kz")          # inf: shear-rigid plane
            if not (value > 0.0 and (may_be_infinite or math.isfinite(value))):   # NaN fails too
                raise ModelError(f"beam section: {field} must be positive"
                                 f"{'' if may_be_infinite else ' and finite'}, got {value!r}")
            object.__setattr__(self, field, value)
        v = np.asarray(self.orientation, dtype=float).ravel()
        if v.size != 3 or not np.all(np.isfinite(v)) or not np.any(v):
            raise ModelError(f"beam section: orientation must be a finite non-zero 3-vector, got {self.orientation!r}")
        object.__setattr__(self, "orientation", tuple(float(c) for c in v))

    @classmethod
    def rectangle(cls, b: float, h: float, nu: float = 0.3,
                  orientation: Sequence[float] = (0.0, 0.0, 1.0)) -> "BeamSection":
        """Solid rectangle, width ``b`` along local y and height ``h`` along local z (m).

        Torsion constant from the exact series of Timoshenko & Goodier, *Theory of
        Elasticity*, 3rd ed., ch. 10, torsion of rectangular bars (theory eq. 4.2); shear
        factor ``10 (1 + nu) / (12 + 11 nu)`` from Cowper (1966), J. Appl. Mech. 33:335-340.
        """
        _positive(b=b, h=h)
        k = 10.0 * (1.0 + nu) / (12.0 + 11.0 * nu)
        return cls(A=b * h, Iy=b * h**3 / 12.0, Iz=h * b**3 / 12.0, J=_rectangle_torsion(b, h),
                   ky=k, kz=k, orientation=tuple(orientation))

    @classmethod
    def circle(cls, d: float, nu: float = 0.3, orientation: Sequence[float] = (0.0, 0.0, 1.0)) -> "BeamSection":
        """Solid circle of diameter ``d`` (m); shear factor ``6 (1 + nu) / (7 + 6 nu)`` (Cowper 1966)."""
        _positive(d=d)
        inertia = math.pi * d**4 / 64.0
        k = 6.0 * (1.0 + nu) / (7.0 + 6.0 * nu)
        return cls(A=math.pi * d**2 / 4.0, Iy=inertia, Iz=inertia, J=2.0 * inertia,
                   ky=k, kz=k, orientation=tuple(orientation))

    @classmethod
    def tube(cls, d_out: float, d_in: float, nu: float = 0.3,
             orientation: Sequence[float] = (0.0, 0.0, 1.0)) -> "BeamSection":
        """Circular tube, outer and inner diameters in m (``0 <= d_in < d_out``).

        Shear factor of the hollow circle from Cowper (1966), Table 1, with ``m = d_in / d_out``:
        ``6 (1 + nu)(1 + m^2)^2 / ((7 + 6 nu)(1 + m^2)^2 + (20 + 12 nu) m^2)``.
        """
        _positive(d_out=d_out)
        if not (0.0 <= d_in < d_out):
            raise ModelError(f"beam section tube: need 0 <= d_in < d_out, got d_in={d_in!r}, d_out={d_out!r}")
        m2 = (d_in / d_out) ** 2
        inertia = math.pi * (d_out**4 - d_in**4) / 64.0
        k = 6.0 * (1.0 + nu) * (1.0 + m2) ** 2 / ((7.0 + 6.0 * nu) * (1.0 + m2) ** 2 + (20.0 + 12.0 * nu) * m2)
        return cls(A=math.pi * (d_out**2 - d_in**2) / 4.0, Iy=inertia, Iz=inertia, J=2.0 * inertia,
                   ky=k, kz=k, orientation=tuple(orientation))


def _positive(**values: float) -> None:
    """Refuse non-positive or non-finite dimensions with a ModelError naming them."""
    for name, value in values.items():
        if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0.0):
            raise ModelError(f"beam section: {name} must be a positive finite length, got {value!r}")


def _rectangle_torsion(b: float, h: float, terms: int = 50) -> float:
    """Saint-Venant torsion constant of a b x h rectangle, m^4 (theory eq. 4.2).

    ``J = a c^3 / 3 (1 - 192 c / (pi^5 a) sum_{n odd} tanh(n pi a / (2 c)) / n^5)`` with
    ``a >= c`` the long and short sides; 50 odd terms converge to machine precision.
    """
    a, c = max(b, h), min(b, h)
    n = 2.0 * np.arange(terms) + 1.0
    series = np.sum(np.tanh(n * math.pi * a / (2.0 * c)) / n**5)
    return a * c**3 / 3.0 * (1.0 - 192.0 * c / (math.pi**5 * a) * series)


@dataclass(frozen=True)
class SectionArrays:
    """Section properties stacked per element, arrays of shape (ne,); ``orientation`` (ne, 3).

    ``rotary`` is 1 where the rotary inertia of bending (``rho Iy``, ``rho Iz``) is kept
    (Timoshenko) and 0 where it is left out (Euler-Bernoulli); torsional inertia is always kept.
    """

    A: np.ndarray
    Iy: np.ndarray
    Iz: np.ndarray
    J: np.ndarray
    ky: np.ndarray
    kz: np.ndarray
    orientation: np.ndarray
    rotary: np.ndarray

    @classmethod
    def from_sections(cls, sections: Sequence[BeamSection], which: np.ndarray) -> "SectionArrays":
        """Element ``e`` gets ``sections[which[e]]``."""
        which = np.asarray(which, dtype=np.intp)

        def column(field: str) -> np.ndarray:
            return np.array([getattr(s, field) for s in sections], dtype=float)[which]

        return cls(A=column("A"), Iy=column("Iy"), Iz=column("Iz"), J=column("J"),
                   ky=column("ky"), kz=column("kz"), orientation=column("orientation"),
                   rotary=np.ones(which.size))

    @classmethod
    def uniform(cls, section: BeamSection, ne: int) -> "SectionArrays":
        """The same section for ``ne`` elements."""
        return cls.from_sections([section], np.zeros(ne, dtype=np.intp))

    def euler_bernoulli(self) -> "SectionArrays":
        """A copy for Euler-Bernoulli beams: infinite shear factors (``Phi = 0``, theory eq. 4.3)
        and no rotary inertia of bending."""
        inf = np.full_like(self.ky, np.inf)
        return replace(self, ky=inf, kz=inf, rotary=np.zeros_like(self.rotary))

    def __len__(self) -> int:
        return self.A.shape[0]
