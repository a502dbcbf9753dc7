"""Four-node flat shell: MITC4 bending/shear + Wilson-Taylor membrane + drilling penalty.

* Bending: Reissner-Mindlin plate with bilinear w and rotations; transverse shear
  by the MITC4 assumed covariant strains tied at the edge midpoints
  (Bathe & Dvorkin 1985, IJNME 21:367-383; docs/theory-shells.md §5, eq. S11).
* Membrane: bilinear displacements enriched with the two incompatible modes
  ``1 - xi^2``, ``1 - eta^2`` of Wilson et al. (1973), Taylor's patch-test-passing form
  (Taylor, Beresford & Wilson 1976, IJNME 10:1211-1219), condensed statically
  (docs/theory-shells.md §4, eq. S8b).
* Drilling: Hughes-Brezzi type penalty ``alpha G t (theta_z - omega)^2`` (eq. S12).
* 2x2 Gauss quadrature for every term.

Nodes in meshio/VTK "quad" order (counter-clockwise about the element normal).
A warped quad is computed on its mean plane (normal = cross product of the
diagonals) and joined to its nodes by rigid links along the normal (eq. S2w), which
keeps the rigid-body modes exact; the flat-element accuracy degrades with warping.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from flexmb.fem.elements import shell_common as sc

NODES = 4
DOFS = NODES * sc.DOFS_PER_NODE
_NATURAL = np.array([[-1.0, -1.0], [1.0, -1.0], [1.0, 1.0], [-1.0, 1.0]])
_GAUSS = _NATURAL / np.sqrt(3.0)
_WEIGHTS = np.ones(4)
_CENTER = np.zeros((1, 2))
_TYING = np.array([[0.0, 1.0], [0.0, -1.0], [1.0, 0.0], [-1.0, 0.0]])  # A, C (xi-row); B, D (eta-row)


def _shape(points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Bilinear shape functions (p, 4) and natural derivatives (p, 4, 2) at points (p, 2)."""
    xi = 1.0 + points[:, None, :] * _NATURAL[None]          # (p, 4, 2): 1 + xi xi_i, 1 + eta eta_i
    N = 0.25 * xi[..., 0] * xi[..., 1]
    dN = 0.25 * np.stack([_NATURAL[None, :, 0] * xi[..., 1], _NATURAL[None, :, 1] * xi[..., 0]], axis=-1)
    return N, dN


@dataclass(frozen=True)
class _Geometry:
    R: np.ndarray       # (ne, 3, 3) local frames
    xy: np.ndarray      # (ne, 4, 2) local in-plane coordinates
    N: np.ndarray       # (g, 4) shape functions at the Gauss points
    detJ: np.ndarray    # (ne, g)
    Jinv: np.ndarray    # (ne, g, 2, 2)
    dNdx: np.ndarray    # (ne, g, 4, 2)
    wdet: np.ndarray    # (ne, g) quadrature weight times detJ
    W: np.ndarray       # (ne, 24, 24) rigid links to the mean plane (identity when flat)
    L: np.ndarray       # (ne, 24, 24) global node dofs -> local plane dofs, T W


def quad_frame(X: np.ndarray) -> np.ndarray:
    """Local frames (ne, 3, 3), rows ``e1, e2, n`` (eq. S1).

    ``n`` is along the cross product of the diagonals (mean plane of a warped quad),
    ``e1`` along the line joining the midpoints of edges 4-1 and 2-3, projected.
    """
    X = sc.check_coordinates(X, NODES, "quad")
    normal = np.cross(X[:, 2] - X[:, 0], X[:, 3] - X[:, 1])
    axis = X[:, 1] + X[:, 2] - X[:, 0] - X[:, 3]
    size = np.linalg.norm(axis, axis=1) + np.linalg.norm(X[:, 3] + X[:, 2] - X[:, 0] - X[:, 1], axis=1)
    return sc.make_frame(axis, normal, size, "quad")


def _geometry(X: np.ndarray, points: np.ndarray = _GAUSS, weights: np.ndarray = _WEIGHTS) -> _Geometry:
    X = sc.check_coordinates(X, NODES, "quad")
    R = quad_frame(X)
    xy = sc.local_coordinates(X, R)
    sc.jacobians(_shape(_NATURAL)[1], xy, "quad")             # refuses elements folded at a corner
    N, dN = _shape(points)
    _, detJ, Jinv = sc.jacobians(dN, xy, "quad")
    W = sc.warp_links(R, sc.warp_offsets(X, R))
    L = sc.block_rotation(R, NODES) @ W
    return _Geometry(R, xy, N, detJ, Jinv, sc.cartesian_derivatives(Jinv, dN), weights * detJ, W, L)


def _mitc4_shear_B(xy: np.ndarray, points: np.ndarray, Jinv: np.ndarray) -> np.ndarray:
    """MITC4 assumed transverse shear ``(gamma_xz, gamma_yz)`` at points (eq. S11): (ne, p, 2, 24).

    ``e_xi`` is interpolated linearly in eta between tying points A (0, 1) and C (0, -1),
    ``e_eta`` linearly in xi between B (1, 0) and D (-1, 0); Cartesian strains follow
    from ``gamma = J^-1 e`` (Bathe & Dvorkin 1985).
    """
    Nt, dNt = _shape(_TYING)
    Jt, _, _ = sc.jacobians(dNt, xy, "quad")
    e = sc.covariant_shear_B(Nt, dNt, Jt)                      # (ne, 4, 2, 24)
    xi, eta = points[:, 0, None], points[:, 1, None]
    e_xi = 0.5 * (1.0 + eta) * e[:, None, 0, 0] + 0.5 * (1.0 - eta) * e[:, None, 1, 0]
    e_eta = 0.5 * (1.0 + xi) * e[:, None, 2, 1] + 0.5 * (1.0 - xi) * e[:, None, 3, 1]
    return np.einsum("epba,epaj->epbj", Jinv, np.stack([e_xi, e_eta], axis=2))


def _incompatible_B(geo: _Geometry) -> np.ndarray:
    """Strains of the incompatible modes ``(1 - xi^2, 1 - eta^2)`` in u and v (eq. S8b): (ne, g, 3, 4).

    Derivatives use the centre Jacobian J0 and the factor detJ0 / detJ (Taylor et al. 1976),
    so that their integral over the element vanishes and the patch test is passed.
    """
    _, dN0 = _shape(_CENTER)
    _, detJ0, Jinv0 = sc.jacobians(dN0, geo.xy, "quad")
    dP = np.zeros((_GAUSS.shape[0], 2, 2))                     # (g, mode, natural direction)
    dP[:, 0, 0] = -2.0 * _GAUSS[:, 0]
    dP[:, 1, 1] = -2.0 * _GAUSS[:, 1]
    dPdx = np.einsum("eba,gpa->egpb", Jinv0[:, 0], dP) * (detJ0 / geo.detJ)[..., None, None]
    B = np.zeros(geo.detJ.shape + (3, 4))
    B[:, :, 0, 0:2] = dPdx[..., 0]
    B[:, :, 1, 2:4] = dPdx[..., 1]
    B[:, :, 2, 0:2] = dPdx[..., 1]
    B[:, :, 2, 2:4] = dPdx[..., 0]
    return B


def _membrane_stiffness(geo: _Geometry, A: np.ndarray, incompatible: bool) -> np.ndarray:
    """Local membrane stiffness (ne, 24, 24), incompatible modes condensed out (eq. S8b)."""
    Bm = sc.membrane_B(geo.dNdx)
    K = sc.integrate(Bm, A, geo.wdet)
    if not incompatible:
        return K
    Bi = _incompatible_B(geo)
    K_ci = sc.integrate(Bm, A, geo.wdet, Bi)
    K_ii = sc.integrate(Bi, A, geo.wdet)
    return K - K_ci @ np.linalg.solve(K_ii, np.swapaxes(K_ci, 1, 2))


def quad_stiffness(X: np.ndarray, E: float | np.ndarray, nu: float | np.ndarray, t: float | np.ndarray,
                   *, drill: float = sc.DRILL_ALPHA, incompatible: bool = True) -> np.ndarray:
    """Stiffness matrices (ne, 24, 24) of MITC4 flat shells in global components, N/m (N, N m).

    Args:
        X: nodal coordinates (ne, 4, 3), m, VTK "quad" order.
        E, nu, t: Young's modulus (Pa), Poisson ratio, thickness (m); scalars or (ne,).
        drill: drilling penalty alpha of eq. S12 (0 switches it off).
        incompatible: enrich the membrane with the Wilson-Taylor incompatible modes.
    """
    geo = _geometry(X)
    ne = geo.R.shape[0]
    E = sc.element_values(E, ne, "E")
    t = sc.element_values(t, ne, "thickness")
    A, D, S, G = sc.section_matrices(E, sc.poisson_values(nu, ne), t)
    K = _membrane_stiffness(geo, A, incompatible)
    K += sc.integrate(sc.bending_B(geo.dNdx), D, geo.wdet)
    K += sc.integrate(_mitc4_shear_B(geo.xy, _GAUSS, geo.Jinv), S, geo.wdet)
    K += sc.integrate(sc.drilling_B(geo.N[None], geo.dNdx), (drill * G * t)[:, None, None], geo.wdet)
    return sc.congruent(K, geo.L)


def quad_mass(X: np.ndarray, rho: float | np.ndarray, t: float | np.ndarray,
              lumped: bool = False) -> np.ndarray:
    """Mass matrices (ne, 24, 24), kg (kg m^2 on rotations), consistent or HRZ-lumped (eqs. S13-S14).

    Args:
        X: nodal coordinates (ne, 4, 3), m.
        rho: density (kg/m^3); t: thickness (m); scalars or (ne,).
        lumped: diagonal HRZ lumping instead of the consistent matrix (kept diagonal:
            the warping links of eq. S2w are applied to the consistent matrix only).
    """
    geo = _geometry(X)
    ne = geo.R.shape[0]
    S = np.einsum("gi,gj,eg->eij", geo.N, geo.N, geo.wdet)
    rho = sc.element_values(rho, ne, "rho", allow_zero=True)
    M = sc.nodal_mass(S, rho, sc.element_values(t, ne, "thickness"), lumped)
    return M if lumped else sc.congruent(M, geo.W)


def quad_geometric_stiffness(X: np.ndarray, N_membrane: np.ndarray) -> np.ndarray:
    """Geometric (stress) stiffness (ne, 24, 24), N/m, from membrane resultants (eq. S15).

    Args:
        X: nodal coordinates (ne, 4, 3), m.
        N_membrane: ``(N_xx, N_yy, N_xy)`` in N/m in each element's local frame
            (:func:`quad_frame`, as returned by :func:`quad_stress`); shape (3,), (ne, 3)
            or (ne, 4, 3) at the 2x2 Gauss points. Tension positive.
    """
    geo = _geometry(X)
    Nm = sc.membrane_field(N_membrane, geo.R.shape[0], _GAUSS.shape[0])
    return sc.congruent(sc.geometric_matrix(geo.dNdx, geo.wdet, Nm), geo.W)


def quad_stress(X: np.ndarray, E: float | np.ndarray, nu: float | np.ndarray, t: float | np.ndarray,
                u_e: np.ndarray) -> sc.ShellStress:
    """Section forces and surface stresses at the element centres (eqs. S16-S17).

    ``u_e`` (ne, 24) are element dofs in global components. The incompatible membrane
    modes have zero strain at the centre, so they need not be recovered.
    """
    geo = _geometry(X, _CENTER, np.ones(1))
    ne = geo.R.shape[0]
    E = sc.element_values(E, ne, "E")
    t = sc.element_values(t, ne, "thickness")
    A, D, S, _ = sc.section_matrices(E, sc.poisson_values(nu, ne), t)
    u = sc.to_local_dofs(u_e, geo.L)
    eps = np.einsum("eij,ej->ei", sc.membrane_B(geo.dNdx)[:, 0], u)
    kappa = np.einsum("eij,ej->ei", sc.bending_B(geo.dNdx)[:, 0], u)
    gamma = np.einsum("eij,ej->ei", _mitc4_shear_B(geo.xy, _CENTER, geo.Jinv)[:, 0], u)
    return sc.shell_stress(geo.R, t, A, D, S, eps, kappa, gamma)
