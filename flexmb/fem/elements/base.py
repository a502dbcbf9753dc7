"""The element-kernel interface shared by beams, shells and solids.

An :class:`ElementKernel` evaluates *all* elements of one cell type at once:
construction takes the stacked nodal coordinates ``X`` (ne, nn, 3) in m and the
per-element :class:`ElementProperties`, precomputes the geometry, and refuses
degenerate elements with a :class:`~flexmb.errors.MeshError`. Every method then
returns stacked arrays, with no Python loop over elements.

Element dof numbering is node-major: element dof ``a * c + k`` (``c =
len(components)``) is node dof component ``components[k]`` of the element's node
``a``, in global axes. Components are numbered ``0..5 = ux, uy, uz, rx, ry, rz``;
solids use ``(0, 1, 2)``, beams and shells ``(0, ..., 5)``.

A kernel must not leave a singular rotational dof with a tiny non-zero
stiffness: :class:`~flexmb.fem.model.FEModel` eliminates dofs whose assembled
stiffness diagonal is exactly zero (e.g. drilling rotations of a flat shell
without drilling stiffness) and keeps all others.

New kernels register with :func:`register_kernel`; ``FEModel`` finds them through
:func:`flexmb.fem.elements.kernel_class`.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar, Sequence

import numpy as np

from flexmb.errors import MeshError, ModelError
from flexmb.fem.materials import Material
from flexmb.fem.sections import SectionArrays

KINDS = ("beam", "shell", "solid")
"""Element kinds, as returned by ``FEMesh.kind(cell_type)``."""


@dataclass(frozen=True)
class ElementProperties:
    """Per-element properties of one cell block; every array has shape (ne,).

    Attributes:
        E: Young's modulus, Pa.
        nu: Poisson ratio.
        rho: density, kg/m^3.
        thickness: shell thickness, m (None for other kinds).
        section: stacked beam sections (None for other kinds).
    """

    E: np.ndarray
    nu: np.ndarray
    rho: np.ndarray
    thickness: np.ndarray | None = None
    section: SectionArrays | None = None

    @classmethod
    def from_materials(cls, materials: Sequence[Material], which: np.ndarray, *,
                       thickness: np.ndarray | None = None,
                       section: SectionArrays | None = None) -> "ElementProperties":
        """Element ``e`` gets ``materials[which[e]]``."""
        which = np.asarray(which, dtype=np.intp)
        table = np.array([[m.E, m.nu, m.rho] for m in materials], dtype=float)[which]
        return cls(E=table[:, 0], nu=table[:, 1], rho=table[:, 2], thickness=thickness, section=section)

    @classmethod
    def uniform(cls, material: Material, ne: int, *, thickness: float | None = None,
                section: "SectionArrays | None" = None) -> "ElementProperties":
        """One material (and thickness) for ``ne`` elements."""
        t = None if thickness is None else np.full(ne, float(thickness))
        return cls.from_materials([material], np.zeros(ne, dtype=np.intp), thickness=t, section=section)

    @property
    def G(self) -> np.ndarray:
        """Shear modulus ``E / (2 (1 + nu))``, Pa."""
        return self.E / (2.0 * (1.0 + self.nu))

    def __len__(self) -> int:
        return self.E.shape[0]


class ElementKernel(ABC):
    """All elements of one cell type, evaluated vectorized.

    Class attributes set by each subclass:
        cell_type: meshio cell-type name handled (e.g. ``"tetra10"``); nodes in meshio/VTK order.
        kind: ``"beam"``, ``"shell"`` or ``"solid"``.
        nodes_per_element: nodes of one cell.
        components: node dof components the element couples (see module docstring).

    Subclasses call ``super().__init__(X, props)`` first, then precompute what they need.
    Kernel-specific keyword options (``FEModel(element_options={cell_type: {...}})``) are
    consumed by the subclass; the base class refuses any it is handed.
    """

    cell_type: ClassVar[str]
    kind: ClassVar[str]
    nodes_per_element: ClassVar[int]
    components: ClassVar[tuple[int, ...]]

    def __init__(self, X: np.ndarray, props: ElementProperties, **options: Any) -> None:
        if options:
            raise ModelError(f"{self.cell_type} elements take no options, got {sorted(options)}")
        X = np.asarray(X, dtype=float)
        if X.ndim != 3 or X.shape[1:] != (self.nodes_per_element, 3):
            raise MeshError(f"{self.cell_type} coordinates must have shape (ne, {self.nodes_per_element}, 3), "
                            f"got {X.shape}")
        bad = np.flatnonzero(~np.isfinite(X).all(axis=(1, 2)))
        if bad.size:
            raise MeshError(f"{self.cell_type} elements {bad[:10].tolist()} have non-finite coordinates")
        if len(props) != X.shape[0]:
            raise ModelError(f"{self.cell_type}: {len(props)} element properties for {X.shape[0]} elements")
        self.X = X
        self.props = props

    @property
    def n_elements(self) -> int:
        """Number of elements ``ne``."""
        return self.X.shape[0]

    @property
    def dofs_per_element(self) -> int:
        """Element dofs ``nd = nodes_per_element * len(components)``."""
        return self.nodes_per_element * len(self.components)

    @abstractmethod
    def stiffness(self) -> np.ndarray:
        """Linear stiffness matrices (ne, nd, nd), N/m (N, N m on rotations); symmetric PSD."""

    @abstractmethod
    def mass(self, lumped: bool = False) -> np.ndarray:
        """Mass matrices (ne, nd, nd), kg (kg m^2 on rotations); consistent, or diagonal if ``lumped``."""

    @abstractmethod
    def stress(self, u_e: np.ndarray) -> Any:
        """Stress state of element dof vectors ``u_e`` (ne, nd), in the kernel's own layout.

        Solids: Cauchy stress (ne, nq, 6) at the stiffness quadrature points, Pa. Beams:
        section forces (ne, 2, 6) at the two end nodes. Whatever is returned here is
        what :meth:`geometric_stiffness` accepts. It must be an ndarray or a dataclass of
        ndarrays, all with leading dimension ne, so that states of element subsets can be
        split and joined.
        """

    @abstractmethod
    def geometric_stiffness(self, state: Any) -> np.ndarray:
        """Geometric (stress) stiffness (ne, nd, nd), N/m, of the stress ``state``; symmetric."""

    @abstractmethod
    def nodal_stress(self, u_e: np.ndarray) -> np.ndarray:
        """Values (ne, nn, 6) at each element node to be averaged at the mesh nodes.

        Voigt stress (xx, yy, zz, yz, xz, xy) in global axes for solids and shells, Pa;
        section forces (N, Vy, Vz, T, My, Mz) in local axes for beams, N and N m.
        """


KERNELS: dict[str, type[ElementKernel]] = {}
"""Registered kernel classes by meshio cell type."""


def register_kernel(cls: type[ElementKernel]) -> type[ElementKernel]:
    """Class decorator adding a kernel to :data:`KERNELS` under its ``cell_type``."""
    if cls.kind not in KINDS:
        raise ModelError(f"kernel {cls.__name__}: kind must be one of {KINDS}, got {cls.kind!r}")
    KERNELS[cls.cell_type] = cls
    return cls


def expand_nodal(S: np.ndarray, ncomp: int = 3) -> np.ndarray:
    """Matrices ``S (ne, nn, nn)`` times the identity on ``ncomp`` components: (ne, nn*c, nn*c).

    Used for the mass and geometric-stiffness matrices whose node blocks are
    multiples of the identity (theory eqs. 2.8 and 2.10).
    """
    ne, nn, _ = S.shape
    out = np.zeros((ne, nn, ncomp, nn, ncomp))
    for c in range(ncomp):
        out[:, :, c, :, c] = S
    return out.reshape(ne, nn * ncomp, nn * ncomp)


def hrz_lumping(S: np.ndarray, total: np.ndarray) -> np.ndarray:
    """HRZ diagonal lumping of nodal matrices ``S (ne, nn, nn)`` to totals ``total (ne,)``.

    ``m_aa = S_aa * total / sum_b S_bb`` (Hinton, Rock & Zienkiewicz 1976, Earthquake
    Eng. Struct. Dyn. 4:245-249; theory eq. 2.9). Returns (ne, nn, nn) diagonal matrices.
    """
    d = np.einsum("eaa->ea", S)
    d = d * (total / d.sum(axis=1))[:, None]
    return d[:, :, None] * np.eye(S.shape[1])[None]
