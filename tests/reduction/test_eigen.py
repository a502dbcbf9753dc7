"""Normal modes: supported and free-free, both linear-algebra paths (flexmb/reduction/eigen.py).

Tolerances: against a dense LAPACK solution of the same model 1e-8 relative, or
sqrt(n) eps lambda_max / lambda where that is larger: both are accurate to about
eps lambda_max / lambda (rounding amplified by the spread of the spectrum, up to 5e-9 for the
small meshes used here; 1e-7 for the slender hex20 beam, which is therefore only compared with
the closed form); against Euler-Bernoulli closed forms the discretization error of each mesh
(stated per test).
"""
from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.linalg as sla

from flexmb.errors import ModelError
from flexmb.fem.materials import Material
from flexmb.fem.mesh import FEMesh, read_mesh
from flexmb.fem.model import FEModel
from flexmb.fem.sections import BeamSection
from flexmb.reduction import normal_modes
from flexmb.linalg import cholmod_available, cholmod_disabled

STEEL = Material(E=210e9, nu=0.3, rho=7850.0)
SECTION = BeamSection.rectangle(0.02, 0.02)
# beta_n L roots (Blevins, Formulas for Natural Frequency and Mode Shape, Table 8-1)
CANTILEVER = (1.875104069, 4.694091133)
FREE_FREE = (4.730040745, 7.853204624)


def eb_hz(beta_L: float, L: float = 1.0, side: float = 0.02) -> float:
    """Euler-Bernoulli frequency (beta L)^2 / (2 pi L^2) sqrt(EI / rho A) of the square steel beam, Hz."""
    return beta_L**2 / (2 * math.pi * L**2) * math.sqrt(STEEL.E * side**2 / 12 / STEEL.rho)


def beam_line(theory="euler-bernoulli") -> FEModel:
    return FEModel(read_mesh("meshes/beam_line.msh"), STEEL, sections=SECTION, beam=theory)


def dense_hz(model: FEModel, fixed, count: int) -> np.ndarray:
    M, K, _ = model.reduce(fixed)
    lam = sla.eigh(K.toarray(), M.toarray(), eigvals_only=True, subset_by_index=[0, count - 1])
    return np.sqrt(np.abs(lam)) / (2 * math.pi)


def test_cantilever_beam_elements():
    """20 cubic Euler-Bernoulli elements: bending pairs (y, z) within 1e-5 of the closed form."""
    model = beam_line()
    modes = normal_modes(model, 4, fixed="root")
    f = modes.frequencies_hz
    # each solution carries the eigenvalue round-off sqrt(n) eps lambda_max (LAPACK Users' Guide,
    # 3rd ed., sec. 4.10.1; p(n) = sqrt(n), Higham 2002, sec. 2.8), half of it over lambda in f,
    # so the two differ by up to sqrt(n) eps lambda_max / lambda: 1.1e-7 for mode 1
    # (lambda_max / lambda_1 = 4.6e7); measured 2e-9
    M, K, _ = model.reduce(model.dofs("root"))
    n = K.shape[0]
    lam_max = sla.eigh(K.toarray(), M.toarray(), eigvals_only=True, subset_by_index=[n - 1, n - 1])[0]
    rtol = math.sqrt(n) * np.finfo(float).eps * lam_max / modes.omega2
    assert np.all(np.abs(f / dense_hz(model, model.dofs("root"), 4) - 1.0) <= rtol)
    np.testing.assert_allclose(f, np.repeat([eb_hz(b) for b in CANTILEVER], 2), rtol=1e-5)
    assert np.all(modes.shapes[model.dofs("root")] == 0.0)
    np.testing.assert_allclose(modes.shapes.T @ model.M @ modes.shapes, np.eye(4), atol=1e-10)
    np.testing.assert_allclose(modes.shapes.T @ model.K @ modes.shapes, np.diag(modes.omega2),
                               atol=1e-9 * modes.omega2.max())
    assert modes.rigid is None


def test_cantilever_solid_hex20():
    """Quadratic hexahedra (50 x 2 x 2): within 0.3 % of Euler-Bernoulli (3D and shear effects)."""
    model = FEModel(read_mesh("meshes/beam_solid_hex20.msh"), STEEL)
    f = normal_modes(model, 4, fixed="root").frequencies_hz
    np.testing.assert_allclose(f, np.repeat([eb_hz(b) for b in CANTILEVER], 2), rtol=3e-3)


@pytest.mark.parametrize("name", ["beam_line", "beam_solid", "plate_quad"])
def test_free_free_finds_six_rigid_modes(name):
    mesh = read_mesh(f"meshes/{name}.msh")
    model = FEModel(mesh, STEEL, sections=SECTION, thickness=0.01)
    modes = normal_modes(model, 4)
    R = modes.rigid
    np.testing.assert_allclose(R.T @ model.M @ R, np.eye(6), atol=1e-10)
    assert np.abs(model.K @ R).max() < 1e-6 * np.abs(model.K).max() * np.abs(R).max()
    np.testing.assert_allclose(R.T @ model.M @ modes.shapes, 0.0, atol=1e-10)     # separated
    np.testing.assert_allclose(modes.frequencies_hz, dense_hz(model, [], 10)[6:], rtol=1e-8)


def test_free_free_beam_frequencies():
    """Free-free Euler-Bernoulli beam, 20 cubic elements: the discretization error grows like
    (beta h)^4, 2e-6 for the first bending pair and 2e-5 for the second; tolerance 3e-5."""
    f = normal_modes(beam_line(), 4).frequencies_hz
    np.testing.assert_allclose(f, np.repeat([eb_hz(b) for b in FREE_FREE], 2), rtol=3e-5)


def test_free_free_bracket():
    """64k-dof tet10 bracket: exactly six rigid modes (about 12 s on an idle 2-core machine)."""
    model = FEModel(read_mesh("meshes/bracket_tet10.msh"), STEEL)
    modes = normal_modes(model, 3)
    assert modes.rigid.shape == (model.ndof, 6)
    np.testing.assert_allclose(modes.rigid.T @ model.M @ modes.rigid, np.eye(6), atol=1e-9)
    assert np.all(np.diff(modes.frequencies_hz) >= 0) and modes.frequencies_hz[0] > 100.0


@pytest.mark.skipif(not cholmod_available(), reason="CHOLMOD not installed")
def test_cholmod_and_scipy_paths_agree():
    """Free-free and clamped solid beam (1377 dofs, sparse path) on CHOLMOD and SuperLU: 1e-8
    (each is accurate to about eps lambda_max / lambda_1, see the module docstring)."""
    model = FEModel(read_mesh("meshes/beam_solid.msh"), STEEL)
    for fixed in (None, "root"):
        a = normal_modes(model, 6, fixed=fixed)
        with cholmod_disabled():
            b = normal_modes(model, 6, fixed=fixed)
        np.testing.assert_allclose(a.omega2, b.omega2, rtol=1e-8)


def test_springs_ground_a_free_model():
    """A free beam held by springs has no rigid modes; a single spring leaves 5 and is refused."""
    model = beam_line("timoshenko")
    model.add_spring(0, 1e6, 1e4)
    assert normal_modes(model, 2).rigid is None
    model = beam_line("timoshenko")
    model.add_spring(0, [0.0, 0.0, 1e6])
    with pytest.raises(ModelError, match="found 5 zero-frequency modes"):
        normal_modes(model, 2)


def two_beams() -> FEModel:
    points = np.array([[0, 0, 0], [0.5, 0, 0], [1, 0, 0], [0, 1, 0], [0.5, 1, 0], [1, 1, 0]], dtype=float)
    mesh = FEMesh(points, {"line": np.array([[0, 1], [1, 2], [3, 4], [4, 5]])}, node_sets={"end": [0]})
    return FEModel(mesh, STEEL, sections=SECTION)


def test_bad_input():
    model = beam_line()
    with pytest.raises(ModelError, match="no node set 'nope'"):
        normal_modes(model, 2, fixed="nope")
    with pytest.raises(ModelError, match="only 120 free dofs"):
        normal_modes(model, 200, fixed="root")
    with pytest.raises(ModelError, match="positive integer"):
        normal_modes(model, 0)
    with pytest.raises(ModelError, match="fixed dofs must be integers"):
        normal_modes(model, 2, fixed=[1000])
    massless = FEModel(read_mesh("meshes/beam_solid.msh"), Material(E=1e9, nu=0.3, rho=0.0))
    with pytest.raises(ModelError, match="no mass"):
        normal_modes(massless, 2, fixed="root")
    with pytest.raises(ModelError, match="found at least 8 zero-frequency modes"):          # disconnected parts
        normal_modes(two_beams(), 2)
    with pytest.raises(ModelError, match="supports leave"):                          # one part held
        normal_modes(two_beams(), 2, fixed="end")
