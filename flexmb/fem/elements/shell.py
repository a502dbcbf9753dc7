"""Flat shell elements for plates and thin-walled parts (docs/theory-shells.md).

Two element types, each as plain vectorized kernels over all its elements and as an
:class:`~flexmb.fem.elements.base.ElementKernel` adapter for ``FEModel``:

* ``quad`` (4 nodes): MITC4 bending/shear, Wilson-Taylor incompatible membrane
  (:mod:`flexmb.fem.elements.shell_quad`), class :class:`ShellQuad4`;
* ``triangle`` (3 nodes): MITC3 bending/shear with Lyly-Stenberg-Vihinen shear
  stabilization, CST membrane (:mod:`flexmb.fem.elements.shell_tri`), class :class:`ShellTri3`.

Both have six dofs per node ``(ux, uy, uz, rx, ry, rz)`` in global axes, a drilling
penalty on ``rz`` (eq. S12), consistent or HRZ-lumped mass, and the geometric
stiffness of a membrane stress-resultant state (eq. S15).
"""
from __future__ import annotations

from typing import Callable, ClassVar

import numpy as np

from flexmb.errors import ModelError
from flexmb.fem.elements.base import ElementKernel, ElementProperties, register_kernel
from flexmb.fem.elements.shell_common import DRILL_ALPHA, ShellStress
from flexmb.fem.elements.shell_quad import (quad_frame, quad_geometric_stiffness, quad_mass,
                                            quad_stiffness, quad_stress)
from flexmb.fem.elements.shell_tri import (SHEAR_STAB, tri_frame, tri_geometric_stiffness, tri_mass,
                                           tri_stiffness, tri_stress)

__all__ = [
    "ShellStress", "ShellQuad4", "ShellTri3", "DRILL_ALPHA", "SHEAR_STAB",
    "quad_frame", "quad_stiffness", "quad_mass", "quad_geometric_stiffness", "quad_stress",
    "tri_frame", "tri_stiffness", "tri_mass", "tri_geometric_stiffness", "tri_stress",
]

_VOIGT = ((0, 0), (1, 1), (2, 2), (1, 2), (0, 2), (0, 1))


def surface_stress_global(stress: ShellStress, surface: str = "top") -> np.ndarray:
    """Surface stress of each element as a global Voigt vector (ne, 6), Pa.

    Order ``(xx, yy, zz, yz, xz, xy)``; ``surface`` is ``"top"`` (``z = +t/2``, the side of
    the element normal) or ``"bottom"``. ``sigma_global = R^T sigma_local R`` (eq. S3).
    """
    if surface not in ("top", "bottom"):
        raise ModelError(f"shell surface must be 'top' or 'bottom', got {surface!r}")
    s = getattr(stress, surface)
    local = np.zeros(s.shape[:1] + (3, 3))
    local[:, 0, 0], local[:, 1, 1] = s[:, 0], s[:, 1]
    local[:, 0, 1] = local[:, 1, 0] = s[:, 2]
    glob = np.einsum("eki,ekl,elj->eij", stress.frame, local, stress.frame)
    return np.stack([glob[:, i, j] for i, j in _VOIGT], axis=1)


class _ShellKernel(ElementKernel):
    """Adapter from the plain shell kernels to the ElementKernel interface.

    ``stress`` returns a :class:`ShellStress` (centroid values, local frames), which
    :meth:`geometric_stiffness` accepts, as does an array of membrane resultants.
    ``nodal_stress`` gives the top-surface (``z = +t/2``) stress, constant per element.
    """

    kind: ClassVar[str] = "shell"
    components: ClassVar[tuple[int, ...]] = (0, 1, 2, 3, 4, 5)
    _stiffness: ClassVar[Callable[..., np.ndarray]]
    _mass: ClassVar[Callable[..., np.ndarray]]
    _geometric: ClassVar[Callable[..., np.ndarray]]
    _stress: ClassVar[Callable[..., ShellStress]]

    def __init__(self, X: np.ndarray, props: ElementProperties, **options: float | bool) -> None:
        super().__init__(X, props)
        if props.thickness is None:
            raise ModelError(f"{self.cell_type} shell elements need a thickness")
        self.options = options

    def stiffness(self) -> np.ndarray:
        p = self.props
        return type(self)._stiffness(self.X, p.E, p.nu, p.thickness, **self.options)

    def mass(self, lumped: bool = False) -> np.ndarray:
        return type(self)._mass(self.X, self.props.rho, self.props.thickness, lumped)

    def stress(self, u_e: np.ndarray) -> ShellStress:
        p = self.props
        return type(self)._stress(self.X, p.E, p.nu, p.thickness, u_e, **self._stress_options())

    def geometric_stiffness(self, state: ShellStress | np.ndarray) -> np.ndarray:
        resultants = state.N if isinstance(state, ShellStress) else state
        return type(self)._geometric(self.X, resultants)

    def nodal_stress(self, u_e: np.ndarray) -> np.ndarray:
        top = surface_stress_global(self.stress(u_e), "top")
        return np.repeat(top[:, None, :], self.nodes_per_element, axis=1)

    def _stress_options(self) -> dict[str, float | bool]:
        return {}


@register_kernel
class ShellQuad4(_ShellKernel):
    """MITC4 flat shell ("quad"); options ``drill`` (alpha, eq. S12) and ``incompatible``."""

    cell_type = "quad"
    nodes_per_element = 4
    _stiffness = staticmethod(quad_stiffness)
    _mass = staticmethod(quad_mass)
    _geometric = staticmethod(quad_geometric_stiffness)
    _stress = staticmethod(quad_stress)


@register_kernel
class ShellTri3(_ShellKernel):
    """MITC3 flat shell ("triangle"); options ``drill`` (eq. S12) and ``shear_stab`` (eq. S11s)."""

    cell_type = "triangle"
    nodes_per_element = 3
    _stiffness = staticmethod(tri_stiffness)
    _mass = staticmethod(tri_mass)
    _geometric = staticmethod(tri_geometric_stiffness)
    _stress = staticmethod(tri_stress)

    def _stress_options(self) -> dict[str, float | bool]:
        return {k: v for k, v in self.options.items() if k == "shear_stab"}
