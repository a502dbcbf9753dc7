"""Inertia invariants (flexmb/reduction/invariants.py, docs/theory-reduction.md §5).

Rigid-body terms of consistent-mass models are exact (R^T M R integrates rho |v + w x x|^2
exactly when the shape functions reproduce rigid motion and the mass quadrature is exact), so
the sample meshes match closed-form box sums to rounding: tolerance 1e-10 relative. The modal
terms are checked against an independent Gauss integration of the interpolated fields on a
small affine hexahedral mesh (exact quadrature on both sides): 1e-12 relative.
"""
from __future__ import annotations

import numpy as np
import pytest

from flexmb.errors import ModelError
from flexmb.fem.materials import Material
from flexmb.fem.mesh import FEMesh, read_mesh
from flexmb.fem.model import FEModel
from flexmb.fem.sections import BeamSection
from flexmb.reduction import inertia_invariants, normal_modes
from flexmb.reduction.interfaces import skew

STEEL = Material(E=210e9, nu=0.3, rho=7850.0)
RTOL = 1e-10


def box_moments(lo, hi, rho: float) -> tuple[float, np.ndarray, np.ndarray]:
    """Mass, first moment and second moments int rho x x^T dV of the box [lo, hi]."""
    lo, hi = np.asarray(lo, float), np.asarray(hi, float)
    V = np.prod(hi - lo)
    c = 0.5 * (lo + hi)
    Q = rho * V * np.outer(c, c)
    Q[np.diag_indices(3)] = rho * V * (hi**3 - lo**3) / (3 * (hi - lo))
    return rho * V, rho * V * c, Q


def inertia_from(Q: np.ndarray) -> np.ndarray:
    """int rho (|x|^2 I - x x^T) dV from the second moments."""
    return np.trace(Q) * np.eye(3) - Q


def assert_rigid_terms(model, mass, first, inertia):
    inv = inertia_invariants(model)
    assert inv.mass == pytest.approx(mass, rel=RTOL)
    np.testing.assert_allclose(inv.first_moment, first, rtol=0, atol=RTOL * abs(mass) * np.abs(first / mass).max())
    np.testing.assert_allclose(inv.center_of_mass, first / mass, rtol=0, atol=RTOL * np.abs(first / mass).max())
    np.testing.assert_allclose(inv.inertia, inertia, rtol=0, atol=RTOL * np.abs(inertia).max())


def test_beam_line_rigid_terms():
    """Timoshenko beam with rotary inertia: J = rho A L^3/3 (+ rho I L) about the root."""
    sec = BeamSection.rectangle(0.02, 0.02)
    model = FEModel(read_mesh("meshes/beam_line.msh"), STEEL, sections=sec)
    rho, L = STEEL.rho, 1.0
    m = rho * sec.A * L
    J = np.diag([rho * (sec.Iy + sec.Iz) * L, m * L**2 / 3 + rho * sec.Iy * L, m * L**2 / 3 + rho * sec.Iz * L])
    assert_rigid_terms(model, m, np.array([m * L / 2, 0, 0]), J)


@pytest.mark.parametrize("mesh", ["beam_solid.msh", "beam_solid_hex20.msh"])
def test_solid_beam_rigid_terms(mesh):
    model = FEModel(read_mesh(f"meshes/{mesh}"), STEEL)
    m, s, Q = box_moments((0, -0.01, -0.01), (1.0, 0.01, 0.01), STEEL.rho)
    assert_rigid_terms(model, m, s, inertia_from(Q))


@pytest.mark.parametrize("mesh", ["plate_quad.msh", "plate_tri.msh"])
def test_plate_rigid_terms(mesh):
    """Plate a = 1 m, t = 0.01 m in z = 0; the shell mass gives every rotation (drilling too)
    the rotary inertia rho t^3/12 per area (shell_common.nodal_mass), hence + m t^2/12 I."""
    t = 0.01
    model = FEModel(read_mesh(f"meshes/{mesh}"), STEEL, thickness=t)
    m, s, Q = box_moments((0, 0, -0.5), (1, 1, 0.5), STEEL.rho * t)     # unit depth: area integrals
    Q[2, 2] = 0.0                                                         # the mid-surface has z = 0
    assert_rigid_terms(model, m, s, inertia_from(Q) + m * t**2 / 12 * np.eye(3))


def test_bracket_rigid_terms():
    """Bracket = base + upper flange - slot - window (meshes/make_bracket.py), exact boxes."""
    model = FEModel(read_mesh("meshes/bracket_tet10.msh"), STEEL)
    boxes = [((0, 0, 0), (0.1, 0.06, 0.01), 1), ((0, 0, 0.01), (0.01, 0.06, 0.06), 1),
             ((0.05, 0.02, 0), (0.08, 0.04, 0.01), -1), ((0, 0.02, 0.03), (0.01, 0.04, 0.05), -1)]
    parts = [(sign, box_moments(lo, hi, STEEL.rho)) for lo, hi, sign in boxes]
    m = sum(sign * p[0] for sign, p in parts)
    s = sum(sign * p[1] for sign, p in parts)
    Q = sum(sign * p[2] for sign, p in parts)
    assert_rigid_terms(model, m, s, inertia_from(Q))


# ------------------------------------------------------------------------------------------------
# modal invariants vs direct integration
# ------------------------------------------------------------------------------------------------
_CORNERS = np.array([[-1, -1, -1], [1, -1, -1], [1, 1, -1], [-1, 1, -1],
                     [-1, -1, 1], [1, -1, 1], [1, 1, 1], [-1, 1, 1]], dtype=float)


def affine_hex_mesh():
    """2 x 2 x 1 hexahedra of a sheared parallelepiped (affine, so every quadrature is exact)."""
    axes = [np.linspace(0, 0.3, 3), np.linspace(0, 0.2, 3), np.linspace(0, 0.1, 2)]
    grid = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, 3)
    A = np.array([[1.0, 0.3, 0.1], [0.0, 1.0, 0.2], [0.0, 0.0, 1.0]])
    points = grid @ A.T + np.array([0.05, -0.02, 0.01])
    ids = np.arange(len(grid)).reshape(3, 3, 2)
    cells = [[ids[i + (a + 1) // 2, j + (b + 1) // 2, (c + 1) // 2] for a, b, c in _CORNERS.astype(int)]
             for i in range(2) for j in range(2)]
    return points, np.array(cells)


def integrate(points, cells, rho, f):
    """sum over cells of int rho f(x, N) dV by 3x3x3 Gauss; f(x (q, 3), N (q, 8), cell) -> (q, ...)."""
    g, w = np.polynomial.legendre.leggauss(3)
    xi = np.stack(np.meshgrid(g, g, g, indexing="ij"), axis=-1).reshape(-1, 3)
    wq = np.einsum("i,j,k->ijk", w, w, w).ravel()
    N = np.prod(1 + xi[:, None, :] * _CORNERS[None], axis=2) / 8                  # (q, 8)
    dN = np.stack([_CORNERS[None, :, d] * np.prod(np.delete(1 + xi[:, None, :] * _CORNERS[None], d, axis=2), axis=2)
                   for d in range(3)], axis=2) / 8                              # (q, 8, 3)
    total = 0.0
    for e, cell in enumerate(cells):                    # test reference: clarity over speed
        X = points[cell]
        detJ = np.linalg.det(np.einsum("qad,ai->qid", dN, X))
        total = total + np.einsum("q,q...->...", rho * wq * detJ, f(N @ X, N, cell))
    return total


def test_modal_invariants_match_direct_integration():
    points, cells = affine_hex_mesh()
    model = FEModel(FEMesh(points, {"hexahedron": cells}), STEEL)
    phi = np.random.default_rng(4).standard_normal((model.ndof, 3))
    inv = inertia_invariants(model, phi)
    P = phi.reshape(len(points), 3, 3)                                   # node, component, mode
    rho = STEEL.rho

    def field(N, cell):                                                  # (q, 3, m)
        return np.einsum("qa,aim->qim", N, P[cell])

    refs = {
        "mass": integrate(points, cells, rho, lambda x, N, c: np.ones(len(x))),
        "first_moment": integrate(points, cells, rho, lambda x, N, c: x),
        "inertia": integrate(points, cells, rho, lambda x, N, c: np.einsum("qki,qkj->qij", skew(x), skew(x))),
        "S_t": integrate(points, cells, rho, lambda x, N, c: field(N, c)),
        "S_r": integrate(points, cells, rho, lambda x, N, c: np.einsum("qij,qjm->qim", skew(x), field(N, c))),
        "M_ee": integrate(points, cells, rho, lambda x, N, c: np.einsum("qik,qil->qkl", field(N, c), field(N, c))),
        "phi_phi": integrate(points, cells, rho, lambda x, N, c: np.einsum("qik,qjl->qijkl", field(N, c), field(N, c))),
        "x_phi": integrate(points, cells, rho, lambda x, N, c: np.einsum("qi,qjk->qijk", x, field(N, c))),
        "S_kl": integrate(points, cells, rho, lambda x, N, c: np.einsum(
            "qkij,qjl->qkil", skew(np.moveaxis(field(N, c), 2, 1)), field(N, c))),
        "J_k": integrate(points, cells, rho, lambda x, N, c: np.einsum(
            "qai,qkaj->qkij", skew(x), skew(np.moveaxis(field(N, c), 2, 1)))
            + np.einsum("qkai,qaj->qkij", skew(np.moveaxis(field(N, c), 2, 1)), skew(x))),
        "J_kl": integrate(points, cells, rho, lambda x, N, c: np.einsum(
            "qkai,qlaj->qklij", skew(np.moveaxis(field(N, c), 2, 1)), skew(np.moveaxis(field(N, c), 2, 1)))),
    }
    for name, ref in refs.items():
        value = getattr(inv, name)
        np.testing.assert_allclose(value, ref, rtol=0, atol=1e-12 * np.abs(ref).max(), err_msg=name)


def test_transformed_invariants_equal_recomputed():
    points, cells = affine_hex_mesh()
    model = FEModel(FEMesh(points, {"hexahedron": cells}), STEEL)
    rng = np.random.default_rng(5)
    phi, V = rng.standard_normal((model.ndof, 4)), rng.standard_normal((4, 2))
    a, b = inertia_invariants(model, phi).transformed(V), inertia_invariants(model, phi @ V)
    for name, ref in b.arrays().items():
        np.testing.assert_allclose(a.arrays()[name], ref, rtol=1e-12, atol=1e-12 * np.abs(ref).max(), err_msg=name)


def test_mass_orthonormal_modes_have_unit_modal_mass_and_beam_couplings():
    """Cantilever modes: M_ee = I; S_t of a bending mode in z is along z only (symmetry)."""
    sec = BeamSection.rectangle(0.02, 0.02)
    model = FEModel(read_mesh("meshes/beam_line.msh"), STEEL, sections=sec)
    modes = normal_modes(model, 4, fixed="root")
    inv = inertia_invariants(model, modes.shapes)
    np.testing.assert_allclose(inv.M_ee, np.eye(4), atol=1e-10)
    assert inv.S_t[0].max() < 1e-12 * np.abs(inv.S_t).max()            # no axial content


def test_errors():
    massless = FEModel(read_mesh("meshes/beam_solid.msh"), Material(E=1e9, nu=0.3, rho=0.0))
    with pytest.raises(ModelError, match="no mass"):
        inertia_invariants(massless)
    model = FEModel(read_mesh("meshes/beam_solid.msh"), STEEL)
    with pytest.raises(ModelError, match="shape"):
        inertia_invariants(model, np.zeros((10, 2)))
