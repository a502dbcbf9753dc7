"""Isoparametric solid elements tet4, tet10, hex8 and hex20 (docs/theory-elements.md §2).

Isotropic linear elasticity, small strains, displacement dofs only
(components ``(0, 1, 2)``). Stresses are Cauchy stresses in Voigt order
``(xx, yy, zz, yz, xz, xy)``, Pa; strains use engineering shear. Every operation
is vectorized over all elements of a type and their quadrature points.
"""
from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from flexmb.errors import MeshError, ModelError
from flexmb.fem.elements import shape
from flexmb.fem.elements.base import (ElementKernel, ElementProperties, expand_nodal, hrz_lumping,
                                      register_kernel)
from flexmb.fem.elements.quadrature import Rule, hex_gauss, tet_rule

VOIGT = ("xx", "yy", "zz", "yz", "xz", "xy")
"""Order of the six stress components."""

_VOIGT_I = np.array([0, 1, 2, 1, 0, 0])
_VOIGT_J = np.array([0, 1, 2, 2, 2, 1])


def inverse_3x3(J: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Inverse and determinant of stacked 3x3 matrices ``J (..., 3, 3)`` by cofactors."""
    C = np.empty_like(J)
    C[..., 0, 0] = J[..., 1, 1] * J[..., 2, 2] - J[..., 1, 2] * J[..., 2, 1]
    C[..., 0, 1] = J[..., 0, 2] * J[..., 2, 1] - J[..., 0, 1] * J[..., 2, 2]
    C[..., 0, 2] = J[..., 0, 1] * J[..., 1, 2] - J[..., 0, 2] * J[..., 1, 1]
    C[..., 1, 0] = J[..., 1, 2] * J[..., 2, 0] - J[..., 1, 0] * J[..., 2, 2]
    C[..., 1, 1] = J[..., 0, 0] * J[..., 2, 2] - J[..., 0, 2] * J[..., 2, 0]
    C[..., 1, 2] = J[..., 0, 2] * J[..., 1, 0] - J[..., 0, 0] * J[..., 1, 2]
    C[..., 2, 0] = J[..., 1, 0] * J[..., 2, 1] - J[..., 1, 1] * J[..., 2, 0]
    C[..., 2, 1] = J[..., 0, 1] * J[..., 2, 0] - J[..., 0, 0] * J[..., 2, 1]
    C[..., 2, 2] = J[..., 0, 0] * J[..., 1, 1] - J[..., 0, 1] * J[..., 1, 0]
    det = J[..., 0, 0] * C[..., 0, 0] + J[..., 0, 1] * C[..., 1, 0] + J[..., 0, 2] * C[..., 2, 0]
    with np.errstate(divide="ignore", invalid="ignore"):
        return C / det[..., None, None], det


def det_3x3(J: np.ndarray) -> np.ndarray:
    """Determinants of stacked 3x3 matrices ``J (..., 3, 3)``."""
    return (J[..., 0, 0] * (J[..., 1, 1] * J[..., 2, 2] - J[..., 1, 2] * J[..., 2, 1])
            - J[..., 0, 1] * (J[..., 1, 0] * J[..., 2, 2] - J[..., 1, 2] * J[..., 2, 0])
            + J[..., 0, 2] * (J[..., 1, 0] * J[..., 2, 1] - J[..., 1, 1] * J[..., 2, 0]))


def voigt_to_tensor(s: np.ndarray) -> np.ndarray:
    """Symmetric 3x3 tensors (..., 3, 3) from Voigt stresses (..., 6)."""
    t = np.empty(s.shape[:-1] + (3, 3))
    t[..., _VOIGT_I, _VOIGT_J] = s
    t[..., _VOIGT_J, _VOIGT_I] = s
    return t


class SolidKernel(ElementKernel):
    """Common implementation of the isoparametric solids; subclasses set the class data.

    Class attributes:
        stiffness_rule: quadrature for K, Kg and the stress points.
        mass_rule: quadrature for the consistent mass (exact for affine elements).
    """

    kind = "solid"
    components = (0, 1, 2)
    stiffness_rule: ClassVar[Rule]
    mass_rule: ClassVar[Rule]

    def __init__(self, X: np.ndarray, props: ElementProperties, **options: Any) -> None:
        super().__init__(X, props, **options)
        self._shape = shape.SHAPES[self.cell_type]
        self.dNdx, self.wdetJ = self._geometry(*self.stiffness_rule, check=True)
        nu, E = props.nu, props.E
        self.mu = E / (2.0 * (1.0 + nu))
        self.lam = E * nu / ((1.0 + nu) * (1.0 - 2.0 * nu))

    def _jacobians(self, dN: np.ndarray) -> np.ndarray:
        """``J_ij = dx_i / dxi_j = sum_a X_ai dN_a/dxi_j`` (ne, q, 3, 3) for natural gradients dN (q, nn, 3)."""
        return np.matmul(self.X.transpose(0, 2, 1)[:, None], dN[None])

    def _geometry(self, points: np.ndarray, weights: np.ndarray, *, check: bool
                  ) -> tuple[np.ndarray, np.ndarray]:
        """Cartesian shape-function gradients (ne, q, nn, 3), 1/m, and ``w det J`` (ne, q), m^3.

        ``dN/dx = dN/dxi J^-1`` (theory eq. 2.5). With ``check``, a non-positive ``det J``
        (inverted or degenerate element) is a MeshError.
        """
        _, dN = self._shape(points)
        Jinv, det = inverse_3x3(self._jacobians(dN))
        if check:
            bad = np.flatnonzero((~(det > 0.0)).any(axis=1))
            if bad.size:
                raise MeshError(f"{self.cell_type} elements {bad[:10].tolist()} are inverted or degenerate "
                                f"(Jacobian determinant <= 0 at a quadrature point; check the node order)")
        return np.matmul(dN[None], Jinv), det * weights[None, :]

    def _volume_weights(self, points: np.ndarray, weights: np.ndarray) -> np.ndarray:
        """``w det J`` (ne, q), m^3, at reference points."""
        _, dN = self._shape(points)
        return det_3x3(self._jacobians(dN)) * weights[None, :]

    def stiffness(self) -> np.ndarray:
        """``K_{ai,bj} = int lam N_a,i N_b,j + mu N_a,j N_b,i + mu delta_ij N_a,k N_b,k dV`` (theory eq. 2.7).

        This is ``int B^T D B dV`` written out for isotropic ``D``; one batched matrix product
        forms ``P_{ai,bj} = sum_q w det J N_a,i N_b,j`` and the three terms are rearrangements of P.
        """
        ne, nq, nn, _ = self.dNdx.shape
        G = (self.dNdx * np.sqrt(self.wdetJ)[:, :, None, None]).reshape(ne, nq, 3 * nn)
        P = np.matmul(G.transpose(0, 2, 1), G).reshape(ne, nn, 3, nn, 3)
        trace = np.einsum("eakbk->eab", P) * self.mu[:, None, None]
        K = P * self.lam[:, None, None, None, None]
        P *= self.mu[:, None, None, None, None]
        K += P.swapaxes(2, 4)
        for c in range(3):
            K[:, :, c, :, c] += trace
        return K.reshape(ne, 3 * nn, 3 * nn)

    def mass(self, lumped: bool = False) -> np.ndarray:
        """``M_{ai,bj} = delta_ij int rho N_a N_b dV`` (theory eq. 2.8); HRZ-lumped if ``lumped`` (eq. 2.9)."""
        points, weights = self.mass_rule
        N, _ = self._shape(points)
        wdet = self._volume_weights(points, weights)
        nn = N.shape[1]
        NN = (N[:, :, None] * N[:, None, :]).reshape(N.shape[0], nn * nn)
        S = np.einsum("eq,qk->ek", wdet * self.props.rho[:, None], NN).reshape(-1, nn, nn)
        if lumped:
            S = hrz_lumping(S, self.props.rho * wdet.sum(axis=1))
        return expand_nodal(S, 3)

    def volume(self) -> np.ndarray:
        """Element volumes (ne,), m^3."""
        return self._volume_weights(*self.mass_rule).sum(axis=1)

    def _stress_at(self, dNdx: np.ndarray, u_e: np.ndarray) -> np.ndarray:
        """Cauchy stress (ne, q, 6) from gradients (ne, q, nn, 3) and dofs (ne, nd) (theory eq. 2.6)."""
        ne, _, nn, _ = dNdx.shape
        u_e = np.asarray(u_e, dtype=float)
        if u_e.shape != (ne, 3 * nn):
            raise ModelError(f"{self.cell_type} displacements must have shape {(ne, 3 * nn)}, got {u_e.shape}")
        H = np.einsum("eai,eqaj->eqij", u_e.reshape(ne, nn, 3), dNdx)
        eps = 0.5 * (H + H.swapaxes(2, 3))
        tr = np.einsum("eqii->eq", eps)
        sigma = 2.0 * self.mu[:, None, None, None] * eps
        for c in range(3):
            sigma[:, :, c, c] += self.lam[:, None] * tr
        return sigma[:, :, _VOIGT_I, _VOIGT_J]

    def stress(self, u_e: np.ndarray) -> np.ndarray:
        """Cauchy stress (ne, nq, 6), Pa, at the stiffness quadrature points."""
        return self._stress_at(self.dNdx, u_e)

    def nodal_stress(self, u_e: np.ndarray) -> np.ndarray:
        """Cauchy stress (ne, nn, 6), Pa, evaluated at the element nodes (``sigma = D B(xi_a) u_e``)."""
        nodes = shape.NODES[self.cell_type]
        dNdx, _ = self._geometry(nodes, np.ones(nodes.shape[0]), check=False)
        return self._stress_at(dNdx, u_e)

    def geometric_stiffness(self, state: np.ndarray) -> np.ndarray:
        """``Kg_{ai,bj} = delta_ij int N_a,k sigma_kl N_b,l dV`` (theory eq. 2.10).

        ``state``: Cauchy stress (ne, nq, 6) at the stiffness quadrature points (as from
        :meth:`stress`), or (ne, 6) constant per element, Pa.
        """
        ne, nq, _, _ = self.dNdx.shape
        s = np.asarray(state, dtype=float)
        if s.shape == (ne, 6):
            s = np.broadcast_to(s[:, None, :], (ne, nq, 6))
        if s.shape != (ne, nq, 6):
            raise ModelError(f"{self.cell_type} stress state must have shape {(ne, nq, 6)} or {(ne, 6)}, "
                             f"got {np.shape(state)}")
        S = np.einsum("eqak,eqkl,eqbl,eq->eab", self.dNdx, voigt_to_tensor(s), self.dNdx, self.wdetJ,
                      optimize=True)
        return expand_nodal(S, 3)


@register_kernel
class Tet4(SolidKernel):
    """4-node linear tetrahedron: 1-point K (exact), 4-point consistent mass."""

    cell_type = "tetra"
    nodes_per_element = 4
    stiffness_rule = tet_rule(1)
    mass_rule = tet_rule(2)


@register_kernel
class Tet10(SolidKernel):
    """10-node quadratic tetrahedron: 4-point K (exact for straight edges), 14-point mass."""

    cell_type = "tetra10"
    nodes_per_element = 10
    stiffness_rule = tet_rule(2)
    mass_rule = tet_rule(5)


@register_kernel
class Hex8(SolidKernel):
    """8-node trilinear hexahedron: 2x2x2 Gauss for K and mass."""

    cell_type = "hexahedron"
    nodes_per_element = 8
    stiffness_rule = hex_gauss(2)
    mass_rule = hex_gauss(2)


@register_kernel
class Hex20(SolidKernel):
    """20-node serendipity hexahedron: 3x3x3 Gauss for K and mass."""

    cell_type = "hexahedron20"
    nodes_per_element = 20
    stiffness_rule = hex_gauss(3)
    mass_rule = hex_gauss(3)
