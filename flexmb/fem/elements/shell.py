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
from flexmb.fem.elements.shell_common import (DRILL_ALPHA, ShellStress, global_tensor_to_plane,
                                              plane_tensor_to_global)
from flexmb.fem.elements.shell_quad import (quad_frame, quad_geometric_stiffness, quad_mass,
                                            quad_stiffness, quad_stress)
from flexmb.fem.elements.shell_tri import (SHEAR_STAB, tri_frame, tri_geometric_stiffness, tri_mass,
                                           tri_stiffness, tri_stress)

__all__ = [
    "ShellStress", "ShellQuad4", "ShellTri3", "DRILL_ALPHA", "SHEAR_STAB",
    "plane_tensor_to_global", "global_tensor_to_plane", "surface_stress_global",
    "quad_frame", "quad_stiffness", "quad_mass", "quad_geometric_stiffness", "quad_stress",
    "tri_frame", "tri_stiffness", "tri_mass", "tri_geometric_stiffness", "tri_stress",
]

_VOIGT = ((0, 0), (1, 1), (2, 2), (1, 2), (0, 2), (0, 1))


def surface_stress_global(stress: ShellStress, surface: str = "top") -> np.ndarray:
    """Surface stress of each element as a global Voigt vector (ne, 6), Pa.

    Order ``(xx, yy, zz, yz, xz, xy)``; ``surface`` is ``"top"`` (``z = +t/2``, the side of
    the element normal) or ``"bottom"``.
    """
    if surface not in ("top", "bottom"):
        raise ModelError(f"shell surface must be 'top' or 'bottom', got {surface!r}")
    glob = plane_tensor_to_global(stress.frame, getattr(stress, surface))
    return np.stack([glob[:, i, j] for i, j in _VOIGT], axis=1)


class _ShellKernel(ElementKernel):
    """Adapter from the plain shell kernels to the ElementKernel interface.

    Keyword options (``option_names``) are passed on to the stiffness kernel, and those in
    ``stress_option_names`` also to the stress recovery. ``stress`` returns a
    :class:`ShellStress` (centroid values, local frames), which :meth:`geometric_stiffness`
    accepts, as does an array of membrane resultants. ``nodal_stress`` gives the
    top-surface (``z = +t/2``) stress, constant per element.
    """

    kind: ClassVar[str] = "shell"
    components: ClassVar[tuple[int, ...]] = (0, 1, 2, 3, 4, 5)
    _stiffness: ClassVar[Callable[..., np.ndarray]]
    _mass: ClassVar[Callable[..., np.ndarray]]
    _geometric: ClassVar[Callable[..., np.ndarray]]
    _stress: ClassVar[Callable[..., ShellStress]]
    option_names: ClassVar[tuple[str, ...]]
    stress_option_names: ClassVar[tuple[str, ...]] = ()

    def __init__(self, X: np.ndarray, props: ElementProperties, **options: float | bool) -> None:
        super().__init__(X, props)
        if props.thickness is None:
            raise ModelError(f"{self.cell_type} shell elements need a thickness")
        unknown = sorted(set(options) - set(self.option_names))
        if unknown:
            raise ModelError(f"{self.cell_type} shell: unknown options {unknown}; "
                             f"accepted: {list(self.option_names)}")
        self.options = options

    def stiffness(self) -> np.ndarray:
        p = self.props
        return self._stiffness(self.X, p.E, p.nu, p.thickness, **self.options)

    def mass(self, lumped: bool = False) -> np.ndarray:
        return self._mass(self.X, self.props.rho, self.props.thickness, lumped)

    def stress(self, u_e: np.ndarray) -> ShellStress:
        p = self.props
        options = {k: v for k, v in self.options.items() if k in self.stress_option_names}
        return self._stress(self.X, p.E, p.nu, p.thickness, u_e, **options)

    def geometric_stiffness(self, state: ShellStress | np.ndarray) -> np.ndarray:
        resultants = state.N if isinstance(state, ShellStress) else state
        return self._geometric(self.X, resultants)

    def nodal_stress(self, u_e: np.ndarray) -> np.ndarray:
        top = surface_stress_global(self.stress(u_e), "top")
        return np.repeat(top[:, None, :], self.nodes_per_element, axis=1)


@register_kernel
class ShellQuad4(_ShellKernel):
    """MITC4 flat shell ("quad"); options ``drill`` (alpha, eq. S12) and ``incompatible``."""

    cell_type = "quad"
    nodes_per_element = 4
    option_names = ("drill", "incompatible")
    _stiffness = staticmethod(quad_stiffness)
    _mass = staticmethod(quad_mass)
    _geometric = staticmethod(quad_geometric_stiffness)
    _stress = staticmethod(quad_stress)


@register_kernel
class ShellTri3(_ShellKernel):
    """MITC3 flat shell ("triangle"); options ``drill`` (eq. S12) and ``shear_stab`` (eq. S11s)."""

    cell_type = "triangle"
    nodes_per_element = 3
    option_names = ("drill", "shear_stab")
    stress_option_names = ("shear_stab",)
    _stiffness = staticmethod(tri_stiffness)
    _mass = staticmethod(tri_mass)
    _geometric = staticmethod(tri_geometric_stiffness)
    _stress = staticmethod(tri_stress)
