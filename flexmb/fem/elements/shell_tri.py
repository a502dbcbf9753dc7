"""Three-node flat shell: MITC3 bending/shear + CST membrane + drilling penalty.

* Bending: Reissner-Mindlin plate with linear w and rotations; transverse shear by
  the MITC3 assumed covariant strains tied at the three edge midpoints
  (Lee & Bathe 2004, Comput. Struct. 82:945-962; docs/theory-shells.md §5, eq. S11t).
  MITC3 alone still locks for thin plates (it has as many Kirchhoff constraints as
  bending dofs), so the shear rigidity is scaled by ``t^2 / (t^2 + alpha h^2)``
  (Lyly, Stenberg & Vihinen 1993; eq. S11s), ``alpha = 0.1`` by default.
* Membrane: constant-strain triangle (linear u, v).
* Drilling: penalty ``alpha G t (theta_z - omega)^2`` (eq. S12), 3-point rule so that a
  single free element has exactly six zero-energy modes.
* Quadrature: the 3-point rule at (1/6, 1/6), (2/3, 1/6), (1/6, 2/3), exact for the
  quadratic integrands of the shear, drilling and mass terms.

Nodes in meshio/VTK "triangle" order; the normal is ``(x2 - x1) x (x3 - x1)``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from flexmb.fem.elements import shell_common as sc

NODES = 3
DOFS = NODES * sc.DOFS_PER_NODE
_GAUSS = np.array([[1.0, 1.0], [4.0, 1.0], [1.0, 4.0]]) / 6.0
_WEIGHTS = np.full(3, 1.0 / 6.0)
_CENTER = np.full((1, 2), 1.0 / 3.0)
_TYING = np.array([[0.5, 0.0], [0.0, 0.5], [0.5, 0.5]])
SHEAR_STAB = 0.1
"""Default alpha of the Lyly-Stenberg-Vihinen shear stabilization (eq. S11s)."""


def _shape(points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Linear shape functions (p, 3) and natural derivatives (p, 3, 2) at points (p, 2)."""
    r, s = points[:, 0], points[:, 1]
    N = np.stack([1.0 - r - s, r, s], axis=1)
    dN = np.broadcast_to(np.array([[-1.0, -1.0], [1.0, 0.0], [0.0, 1.0]]), (points.shape[0], 3, 2))
    return N, dN


@dataclass(frozen=True)
class _Geometry:
    R: np.ndarray       # (ne, 3, 3) local frames
    xy: np.ndarray      # (ne, 3, 2) local in-plane coordinates
    N: np.ndarray       # (g, 3) shape functions at the quadrature points
    Jinv: np.ndarray    # (ne, g, 2, 2)
    dNdx: np.ndarray    # (ne, g, 3, 2)
    wdet: np.ndarray    # (ne, g) quadrature weight times detJ (= 2 area)


def tri_frame(X: np.ndarray) -> np.ndarray:
    """Local frames (ne, 3, 3), rows ``e1, e2, n``: ``e1`` along edge 1-2 (eq. S1)."""
    X = sc.check_coordinates(X, NODES, "triangle")
    edge = X[:, 1] - X[:, 0]
    normal = np.cross(edge, X[:, 2] - X[:, 0])
    size = np.linalg.norm(edge, axis=1) + np.linalg.norm(X[:, 2] - X[:, 0], axis=1)
    return sc.make_frame(edge, normal, size, "triangle")


def _geometry(X: np.ndarray, points: np.ndarray = _GAUSS, weights: np.ndarray = _WEIGHTS) -> _Geometry:
    X = sc.check_coordinates(X, NODES, "triangle")
    R = tri_frame(X)
    xy = sc.local_coordinates(X, R)
    N, dN = _shape(points)
    _, detJ, Jinv = sc.jacobians(dN, xy, "triangle")
    return _Geometry(R, xy, N, Jinv, sc.cartesian_derivatives(Jinv, dN), weights * detJ)


def _mitc3_shear_B(xy: np.ndarray, points: np.ndarray, Jinv: np.ndarray) -> np.ndarray:
    """MITC3 assumed transverse shear ``(gamma_xz, gamma_yz)`` at points (eq. S11t): (ne, p, 2, 18).

    ``e_r = e_r(1) + c s``, ``e_s = e_s(2) - c r`` with
    ``c = e_s(2) - e_r(1) - e_s(3) + e_r(3)``, tying points (1) = (1/2, 0), (2) = (0, 1/2),
    (3) = (1/2, 1/2) (Lee & Bathe 2004): the tangential shear is constant along each edge.
    """
    Nt, dNt = _shape(_TYING)
    Jt, _, _ = sc.jacobians(dNt, xy, "triangle")
    e = sc.covariant_shear_B(Nt, dNt, Jt)                      # (ne, 3, 2, 18)
    c = e[:, 1, 1] - e[:, 0, 0] - e[:, 2, 1] + e[:, 2, 0]
    r, s = points[:, 0, None], points[:, 1, None]
    e_r = e[:, None, 0, 0] + s * c[:, None]
    e_s = e[:, None, 1, 1] - r * c[:, None]
    return np.einsum("epba,epaj->epbj", Jinv, np.stack([e_r, e_s], axis=2))


def _shear_factor(xy: np.ndarray, t: np.ndarray, shear_stab: float) -> np.ndarray:
    """Shear-rigidity factor ``t^2 / (t^2 + alpha h^2)``, h the longest edge (eq. S11s).

    Lyly, Stenberg & Vihinen (1993), CMAME 110:343-357; with ``alpha = 0`` it is 1.
    """
    h2 = (np.diff(xy[:, [0, 1, 2, 0]], axis=1) ** 2).sum(axis=2).max(axis=1)
    return t**2 / (t**2 + shear_stab * h2)


def tri_stiffness(X: np.ndarray, E: float | np.ndarray, nu: float | np.ndarray, t: float | np.ndarray,
                  *, drill: float = sc.DRILL_ALPHA, shear_stab: float = SHEAR_STAB) -> np.ndarray:
    """Stiffness matrices (ne, 18, 18) of MITC3 flat shells in global components.

    Args:
        X: nodal coordinates (ne, 3, 3), m, VTK "triangle" order.
        E, nu, t: Young's modulus (Pa), Poisson ratio, thickness (m); scalars or (ne,).
        drill: drilling penalty alpha of eq. S12 (0 switches it off).
    """
    geo = _geometry(X)
    ne = geo.R.shape[0]
    E = sc.element_values(E, ne, "E")
    t = sc.element_values(t, ne, "thickness")
    A, D, S, G = sc.section_matrices(E, sc.poisson_values(nu, ne), t)
    K = sc.integrate(sc.membrane_B(geo.dNdx), A, geo.wdet)
    K += sc.integrate(sc.bending_B(geo.dNdx), D, geo.wdet)
    S = S * _shear_factor(geo.xy, t, shear_stab)[:, None, None]
    K += sc.integrate(_mitc3_shear_B(geo.xy, _GAUSS, geo.Jinv), S, geo.wdet)
    K += sc.integrate(sc.drilling_B(geo.N[None], geo.dNdx), (drill * G * t)[:, None, None], geo.wdet)
    return sc.congruent(K, sc.block_rotation(geo.R, NODES))


def tri_mass(X: np.ndarray, rho: float | np.ndarray, t: float | np.ndarray,
             lumped: bool = False) -> np.ndarray:
    """Mass matrices (ne, 18, 18), consistent or HRZ-lumped (eqs. S13-S14); see :func:`quad_mass`."""
    geo = _geometry(X)
    ne = geo.R.shape[0]
    S = np.einsum("gi,gj,eg->eij", geo.N, geo.N, geo.wdet)
    rho = sc.element_values(rho, ne, "rho", allow_zero=True)
    return sc.nodal_mass(S, rho, sc.element_values(t, ne, "thickness"), lumped)


def tri_geometric_stiffness(X: np.ndarray, N_membrane: np.ndarray) -> np.ndarray:
    """Geometric (stress) stiffness (ne, 18, 18), N/m, from membrane resultants (eq. S15).

    ``N_membrane``: ``(N_xx, N_yy, N_xy)`` in N/m in the local frame of :func:`tri_frame`;
    shape (3,), (ne, 3) or (ne, 3, 3) at the quadrature points. Tension positive.
    """
    geo = _geometry(X)
    Nm = sc.membrane_field(N_membrane, geo.R.shape[0], _GAUSS.shape[0])
    return sc.geometric_matrix(geo.dNdx, geo.wdet, Nm)


def tri_stress(X: np.ndarray, E: float | np.ndarray, nu: float | np.ndarray, t: float | np.ndarray,
               u_e: np.ndarray, *, shear_stab: float = SHEAR_STAB) -> sc.ShellStress:
    """Section forces and surface stresses at the element centroids (eqs. S16-S17).

    ``u_e`` (ne, 18) are element dofs in global components; ``shear_stab`` must match the
    value used in :func:`tri_stiffness` (Q uses the stabilized shear rigidity).
    """
    geo = _geometry(X, _CENTER, np.ones(1))
    ne = geo.R.shape[0]
    E = sc.element_values(E, ne, "E")
    t = sc.element_values(t, ne, "thickness")
    A, D, S, _ = sc.section_matrices(E, sc.poisson_values(nu, ne), t)
    S = S * _shear_factor(geo.xy, t, shear_stab)[:, None, None]
    u = sc.to_local_dofs(u_e, sc.block_rotation(geo.R, NODES))
    eps = np.einsum("eij,ej->ei", sc.membrane_B(geo.dNdx)[:, 0], u)
    kappa = np.einsum("eij,ej->ei", sc.bending_B(geo.dNdx)[:, 0], u)
    gamma = np.einsum("eij,ej->ei", _mitc3_shear_B(geo.xy, _CENTER, geo.Jinv)[:, 0], u)
    return sc.shell_stress(geo.R, t, A, D, S, eps, kappa, gamma)
