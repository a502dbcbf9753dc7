"""Parts shared by the flat shell elements (MITC4 quad, MITC3 triangle).

Conventions (docs/theory-shells.md §1-§2): every element has its own local
frame ``R`` (rows ``e1, e2, n``; ``u_local = R u_global``). Each node carries six
dofs, node-major, ``(u, v, w, theta_x, theta_y, theta_z)``: displacements and
rotations about the frame axes. Reissner-Mindlin kinematics use the section
rotations ``beta_x = theta_y`` and ``beta_y = -theta_x`` (eq. S4).

All kernels are vectorized over ``ne`` elements of one type and over the
quadrature points ``g``; SI units throughout. Equation numbers ``(S#)`` refer
to docs/theory-shells.md.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from flexmb.errors import MeshError, ModelError

DOFS_PER_NODE = 6
"""Dofs per shell node: ux, uy, uz, rx, ry, rz."""

SHEAR_CORRECTION = 5.0 / 6.0
"""Reissner-Mindlin transverse-shear correction factor k (eq. S7)."""

DRILL_ALPHA = 1.0e-3
"""Default drilling penalty alpha in ``alpha * G * t * (theta_z - omega)^2`` (eq. S12)."""

_TRANSLATIONS = np.diag([1.0, 1.0, 1.0, 0.0, 0.0, 0.0])


def element_values(value: float | np.ndarray, ne: int, name: str, allow_zero: bool = False) -> np.ndarray:
    """Broadcast a scalar or per-element property to shape (ne,), refusing negative (or zero) values."""
    arr = np.asarray(value, dtype=float)
    try:
        arr = np.broadcast_to(arr, (ne,))
    except ValueError:
        raise ModelError(f"shell {name} must be a scalar or have length {ne}, "
                         f"got shape {arr.shape}") from None
    bad = np.flatnonzero(~(np.isfinite(arr) & ((arr >= 0.0) if allow_zero else (arr > 0.0))))
    if bad.size:
        sign = "non-negative" if allow_zero else "positive"
        raise ModelError(f"shell {name} must be {sign} and finite; elements {bad[:10].tolist()} "
                         f"have {arr[bad[:10]].tolist()}")
    return arr


def poisson_values(nu: float | np.ndarray, ne: int) -> np.ndarray:
    """Poisson ratio broadcast to (ne,); refuses values outside (-1, 0.5)."""
    arr = np.asarray(nu, dtype=float)
    try:
        arr = np.broadcast_to(arr, (ne,))
    except ValueError:
        raise ModelError(f"shell nu must be a scalar or have length {ne}, got shape {arr.shape}") from None
    bad = np.flatnonzero(~((arr > -1.0) & (arr < 0.5)))
    if bad.size:
        raise ModelError(f"shell nu must lie in (-1, 0.5); elements {bad[:10].tolist()} have "
                         f"{arr[bad[:10]].tolist()}")
    return arr


def check_coordinates(X: np.ndarray, nn: int, kind: str) -> np.ndarray:
    """Nodal coordinates as a float array (ne, nn, 3), or a MeshError."""
    X = np.asarray(X, dtype=float)
    if X.ndim == 2 and X.shape == (nn, 3):
        X = X[None]
    if X.ndim != 3 or X.shape[1:] != (nn, 3):
        raise MeshError(f"{kind} coordinates must have shape (ne, {nn}, 3), got {X.shape}")
    bad = np.flatnonzero(~np.isfinite(X).all(axis=(1, 2)))
    if bad.size:
        raise MeshError(f"{kind} elements {bad[:10].tolist()} have non-finite coordinates")
    return X


def make_frame(axis: np.ndarray, normal: np.ndarray, size: np.ndarray, kind: str) -> np.ndarray:
    """Orthonormal frames (ne, 3, 3), rows ``e1, e2, n`` (eq. S1).

    ``n`` is ``normal`` normalized; ``e1`` is ``axis`` with its normal part removed.
    ``size`` (ne,) is a length scale used to detect degenerate (zero-area) elements.
    """
    nlen = np.linalg.norm(normal, axis=1)
    bad = np.flatnonzero(~(nlen > 1e-12 * size**2))
    if bad.size:
        raise MeshError(f"{kind} elements {bad[:10].tolist()} are degenerate (no area or no normal)")
    n = normal / nlen[:, None]
    e1 = axis - np.einsum("ei,ei->e", axis, n)[:, None] * n
    e1 /= np.linalg.norm(e1, axis=1)[:, None]
    e2 = np.cross(n, e1)
    return np.stack([e1, e2, n], axis=1)


def local_coordinates(X: np.ndarray, R: np.ndarray) -> np.ndarray:
    """In-plane coordinates (ne, nn, 2) of the nodes projected on the element plane (eq. S2)."""
    d = X - X.mean(axis=1, keepdims=True)
    return np.einsum("eni,eki->enk", d, R[:, :2, :])


def warp_offsets(X: np.ndarray, R: np.ndarray) -> np.ndarray:
    """Distances (ne, nn) of the nodes from the element plane along ``n`` (eq. S2w); zero if flat."""
    return np.einsum("eni,ei->en", X - X.mean(axis=1, keepdims=True), R[:, 2, :])


def warp_links(R: np.ndarray, z: np.ndarray) -> np.ndarray:
    """Rigid links from the nodes to their projections on the element plane (eq. S2w).

    ``u_projected = u_i + z_i n x theta_i``: per node ``W_i = [[I, z_i n~], [0, I]]`` in global
    components; returns the block-diagonal W (ne, 6 nn, 6 nn) (identity for flat elements).
    """
    ne, nn = z.shape
    n = R[:, 2, :]
    skew = np.zeros((ne, 3, 3))
    skew[:, 0, 1], skew[:, 0, 2], skew[:, 1, 2] = -n[:, 2], n[:, 1], -n[:, 0]
    skew -= np.swapaxes(skew, 1, 2)
    W = np.zeros((ne, nn, DOFS_PER_NODE, nn, DOFS_PER_NODE))
    idx = np.arange(nn)
    W[:, idx, :, idx, :] = np.eye(DOFS_PER_NODE)
    W[:, idx, :3, idx, 3:] = z.T[:, :, None, None] * skew[None]
    return W.reshape(ne, nn * DOFS_PER_NODE, nn * DOFS_PER_NODE)


def congruent(K: np.ndarray, W: np.ndarray) -> np.ndarray:
    """``W^T K W`` for stacked matrices (ne, nd, nd)."""
    return np.swapaxes(W, 1, 2) @ K @ W


def jacobians(dN: np.ndarray, xy: np.ndarray, kind: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Jacobian ``J[a, b] = d x_b / d xi_a``, its determinant and inverse at points ``p``.

    ``dN`` (p, nn, 2) natural derivatives, ``xy`` (ne, nn, 2). Returns J (ne, p, 2, 2),
    detJ (ne, p) and Jinv (ne, p, 2, 2); a non-positive detJ raises MeshError.
    """
    J = np.einsum("pia,eib->epab", dN, xy)
    detJ = J[..., 0, 0] * J[..., 1, 1] - J[..., 0, 1] * J[..., 1, 0]
    scale = np.einsum("epab,epab->ep", J, J)
    bad = np.flatnonzero((detJ <= 1e-10 * scale).any(axis=1))
    if bad.size:
        raise MeshError(f"{kind} elements {bad[:10].tolist()} are inverted, folded or degenerate "
                        "(Jacobian <= 0 at a node or quadrature point)")
    Jinv = np.empty_like(J)
    Jinv[..., 0, 0] = J[..., 1, 1]
    Jinv[..., 1, 1] = J[..., 0, 0]
    Jinv[..., 0, 1] = -J[..., 0, 1]
    Jinv[..., 1, 0] = -J[..., 1, 0]
    Jinv /= detJ[..., None, None]
    return J, detJ, Jinv


def cartesian_derivatives(Jinv: np.ndarray, dN: np.ndarray) -> np.ndarray:
    """``dN/dx_b = sum_a Jinv[b, a] dN/dxi_a``: (ne, p, 2, 2), (p, nn, 2) -> (ne, p, nn, 2)."""
    return np.einsum("epba,pia->epib", Jinv, dN)


def section_matrices(E: np.ndarray, nu: np.ndarray, t: np.ndarray
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Membrane A (N/m), bending D (N m), shear S (N/m) section matrices and G (Pa) (eqs. S5-S7).

    A, D: (ne, 3, 3) for Voigt ``(xx, yy, xy)`` with engineering shear; S: (ne, 2, 2).
    """
    G = E / (2.0 * (1.0 + nu))
    C = np.zeros((E.size, 3, 3))
    c = E / (1.0 - nu**2)
    C[:, 0, 0] = C[:, 1, 1] = c
    C[:, 0, 1] = C[:, 1, 0] = c * nu
    C[:, 2, 2] = G
    A = C * t[:, None, None]
    D = C * (t**3 / 12.0)[:, None, None]
    S = (SHEAR_CORRECTION * G * t)[:, None, None] * np.eye(2)
    return A, D, S, G


def _empty_B(dNdx: np.ndarray, rows: int) -> np.ndarray:
    ne, p, nn, _ = dNdx.shape
    return np.zeros((ne, p, rows, nn, DOFS_PER_NODE))


def membrane_B(dNdx: np.ndarray) -> np.ndarray:
    """Membrane strains ``(eps_xx, eps_yy, gamma_xy)`` from local dofs (eq. S8): (ne, p, 3, nd)."""
    B = _empty_B(dNdx, 3)
    B[:, :, 0, :, 0] = dNdx[..., 0]
    B[:, :, 1, :, 1] = dNdx[..., 1]
    B[:, :, 2, :, 0] = dNdx[..., 1]
    B[:, :, 2, :, 1] = dNdx[..., 0]
    return B.reshape(B.shape[:3] + (-1,))


def bending_B(dNdx: np.ndarray) -> np.ndarray:
    """Curvatures ``(k_xx, k_yy, k_xy)`` with beta_x = theta_y, beta_y = -theta_x (eq. S9)."""
    B = _empty_B(dNdx, 3)
    B[:, :, 0, :, 4] = dNdx[..., 0]
    B[:, :, 1, :, 3] = -dNdx[..., 1]
    B[:, :, 2, :, 4] = dNdx[..., 1]
    B[:, :, 2, :, 3] = -dNdx[..., 0]
    return B.reshape(B.shape[:3] + (-1,))


def drilling_B(N: np.ndarray, dNdx: np.ndarray) -> np.ndarray:
    """``theta_z - omega`` with ``omega = (dv/dx - du/dy) / 2`` (eq. S12): (ne, p, 1, nd)."""
    B = _empty_B(dNdx, 1)
    B[:, :, 0, :, 5] = N
    B[:, :, 0, :, 0] = 0.5 * dNdx[..., 1]
    B[:, :, 0, :, 1] = -0.5 * dNdx[..., 0]
    return B.reshape(B.shape[:3] + (-1,))


def covariant_shear_B(N: np.ndarray, dN: np.ndarray, J: np.ndarray) -> np.ndarray:
    """Covariant transverse shear ``e_a = dw/dxi_a + beta . dx/dxi_a`` at points p (eq. S10).

    ``N`` (p, nn), ``dN`` (p, nn, 2) natural derivatives, ``J`` (ne, p, 2, 2).
    Returns (ne, p, 2, nd); row a = 0 is the xi (or r) direction, a = 1 the eta (or s) one.
    """
    ne, p = J.shape[:2]
    nn = N.shape[1]
    B = np.zeros((ne, p, 2, nn, DOFS_PER_NODE))
    for a in range(2):
        B[:, :, a, :, 2] = dN[None, :, :, a]
        B[:, :, a, :, 4] = N[None] * J[:, :, a, 0, None]
        B[:, :, a, :, 3] = -N[None] * J[:, :, a, 1, None]
    return B.reshape(ne, p, 2, nn * DOFS_PER_NODE)


def integrate(B: np.ndarray, C: np.ndarray, wdet: np.ndarray, B2: np.ndarray | None = None) -> np.ndarray:
    """``sum_g w_g detJ_g B^T C B2`` for B (ne, g, k, n), C (ne, k, k), wdet (ne, g)."""
    B2 = B if B2 is None else B2
    return np.einsum("egki,ekl,eglj,eg->eij", B, C, B2, wdet, optimize=True)


def block_rotation(R: np.ndarray, nn: int) -> np.ndarray:
    """``T = diag(R, R, ...)`` (ne, 6 nn, 6 nn), one R per 3-vector block: ``u_local = T u_global`` (eq. S3)."""
    ne = R.shape[0]
    nb = 2 * nn
    T = np.zeros((ne, nb, 3, nb, 3))
    idx = np.arange(nb)
    T[:, idx, :, idx, :] = R
    return T.reshape(ne, 3 * nb, 3 * nb)


def check_dofs(u: np.ndarray, ne: int, nd: int) -> np.ndarray:
    """Element dof vectors as a float array (ne, nd), or a ModelError."""
    u = np.asarray(u, dtype=float)
    if u.shape != (ne, nd):
        raise ModelError(f"shell element displacements must have shape {(ne, nd)}, got {u.shape}")
    return u


def to_local_dofs(u: np.ndarray, L: np.ndarray) -> np.ndarray:
    """Element dof vectors (ne, nd) in global components -> local ones, ``L u`` (eqs. S2w, S3)."""
    return np.einsum("eij,ej->ei", L, check_dofs(u, *L.shape[:2]))


def nodal_mass(S: np.ndarray, rho: np.ndarray, t: np.ndarray, lumped: bool) -> np.ndarray:
    """Shell mass matrices (ne, nd, nd) from the scalar matrix ``S_ij = int N_i N_j dA`` (eq. S13-S14).

    Translations get ``rho t``, all three rotations ``rho t^3 / 12`` per unit area. The
    per-node 6x6 blocks are multiples of the identity on the translations and on the
    rotations, so the matrix is the same in every frame and needs no transformation.
    ``lumped`` applies HRZ diagonal scaling (Hinton, Rock & Zienkiewicz 1976).
    """
    if lumped:
        d = np.einsum("eii->ei", S)
        area = S.sum(axis=(1, 2))
        S = np.einsum("ei,ij->eij", d * (area / d.sum(axis=1))[:, None], np.eye(S.shape[1]))
    m_t = rho * t
    m_r = rho * t**3 / 12.0
    per_dof = np.stack([m_t, m_t, m_t, m_r, m_r, m_r], axis=1)
    ne, nn, _ = S.shape
    M = np.einsum("eij,ea,ab->eiajb", S, per_dof, np.eye(DOFS_PER_NODE))
    return M.reshape(ne, nn * DOFS_PER_NODE, nn * DOFS_PER_NODE)


def membrane_field(N_membrane: np.ndarray, ne: int, ng: int) -> np.ndarray:
    """Membrane resultants ``(N_xx, N_yy, N_xy)`` (N/m) broadcast to (ne, ng, 3).

    Accepts (3,), (ne, 3) (constant per element) or (ne, ng, 3) (per quadrature point).
    """
    Nm = np.asarray(N_membrane, dtype=float)
    if Nm.ndim == 2:
        Nm = Nm[:, None, :]
    try:
        return np.broadcast_to(Nm, (ne, ng, 3))
    except ValueError:
        raise ModelError(f"membrane resultants must have shape (3,), ({ne}, 3) or ({ne}, {ng}, 3), "
                         f"got {np.shape(N_membrane)}") from None


def geometric_matrix(dNdx: np.ndarray, wdet: np.ndarray, Nm: np.ndarray) -> np.ndarray:
    """Geometric stiffness ``int N_ab dphi_i/dx_a dphi_j/dx_b dA`` on u, v and w (eq. S15).

    ``dNdx`` (ne, g, nn, 2), ``wdet`` (ne, g), ``Nm`` (ne, g, 3). The translational 3x3
    blocks are multiples of the identity, so the matrix is the same in every frame.
    """
    tensor = np.empty(Nm.shape[:2] + (2, 2))
    tensor[..., 0, 0] = Nm[..., 0]
    tensor[..., 1, 1] = Nm[..., 1]
    tensor[..., 0, 1] = tensor[..., 1, 0] = Nm[..., 2]
    S = np.einsum("egia,egab,egjb,eg->eij", dNdx, tensor, dNdx, wdet, optimize=True)
    ne, nn, _ = S.shape
    K = np.einsum("eij,ab->eiajb", S, _TRANSLATIONS)
    return K.reshape(ne, nn * DOFS_PER_NODE, nn * DOFS_PER_NODE)


@dataclass(frozen=True)
class ShellStress:
    """Recovered section forces at element centroids, in each element's local frame.

    Attributes (ne = number of elements):
        frame: (ne, 3, 3) local frames, rows ``e1, e2, n`` (global components).
        N: (ne, 3) membrane resultants ``(N_xx, N_yy, N_xy)``, N/m.
        M: (ne, 3) moments ``(M_xx, M_yy, M_xy)``, N m/m (``M = int z sigma dz``).
        Q: (ne, 2) transverse shear forces ``(Q_x, Q_y)``, N/m.
        top: (ne, 3) stresses ``(s_xx, s_yy, s_xy)`` at ``z = +t/2`` (side of ``n``), Pa.
        bottom: (ne, 3) the same at ``z = -t/2``, Pa.
    """

    frame: np.ndarray
    N: np.ndarray
    M: np.ndarray
    Q: np.ndarray
    top: np.ndarray
    bottom: np.ndarray


def plane_tensor_to_global(frame: np.ndarray, voigt: np.ndarray) -> np.ndarray:
    """In-plane tensors ``(xx, yy, xy)`` (ne, 3) in local frames -> global 3x3 tensors (ne, 3, 3).

    ``T_global = R^T T_local R`` (eq. S3); works for N, M and surface stresses alike.
    """
    local = np.zeros(voigt.shape[:1] + (3, 3))
    local[:, 0, 0], local[:, 1, 1] = voigt[:, 0], voigt[:, 1]
    local[:, 0, 1] = local[:, 1, 0] = voigt[:, 2]
    return np.einsum("eki,ekl,elj->eij", frame, local, frame)


def global_tensor_to_plane(frame: np.ndarray, tensor: np.ndarray) -> np.ndarray:
    """Global 3x3 tensors ((3, 3) or (ne, 3, 3)) -> in-plane local ``(xx, yy, xy)`` (ne, 3).

    ``T_local = R T_global R^T`` (eq. S3); the inverse of :func:`plane_tensor_to_global` for
    tensors lying in the element plane, e.g. a prestress given in global axes.
    """
    tensor = np.broadcast_to(np.asarray(tensor, dtype=float), frame.shape)
    T = np.einsum("eik,ekl,ejl->eij", frame, tensor, frame)
    return np.stack([T[:, 0, 0], T[:, 1, 1], T[:, 0, 1]], axis=1)


def shell_stress(R: np.ndarray, t: np.ndarray, A: np.ndarray, D: np.ndarray, S: np.ndarray,
                 eps: np.ndarray, kappa: np.ndarray, gamma: np.ndarray) -> ShellStress:
    """Section forces and surface stresses from centroid strains (eqs. S16-S17)."""
    N = np.einsum("eij,ej->ei", A, eps)
    M = np.einsum("eij,ej->ei", D, kappa)
    Q = np.einsum("eij,ej->ei", S, gamma)
    membrane = N / t[:, None]
    bending = 6.0 * M / (t**2)[:, None]
    return ShellStress(frame=R, N=N, M=M, Q=Q, top=membrane + bending, bottom=membrane - bending)
