"""Two-node 3D beams and sections (flexmb/fem/elements/beam.py, sections.py; theory §4)."""
from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.linalg as sla

from flexmb.errors import MeshError, ModelError
from flexmb.fem.elements.base import ElementProperties
from flexmb.fem.elements.beam import Beam2, plane_mass, plane_shape_functions, plane_stiffness
from flexmb.fem.materials import Material
from flexmb.fem.mesh import FEMesh
from flexmb.fem.model import FEModel
from flexmb.fem.sections import BeamSection, SectionArrays

STEEL = Material(E=210e9, nu=0.3, rho=7850.0)
# roots beta_n L of the Euler-Bernoulli frequency equations (Blevins, Formulas for Natural
# Frequency and Mode Shape, Table 8-1), to 10 digits
CANTILEVER = (1.875104069, 4.694091133, 7.854757438)
FREE_FREE = (4.730040745, 7.853204624)


def line_mesh(n: int, L: float, direction=(1.0, 0.0, 0.0), origin=(0.0, 0.0, 0.0)) -> FEMesh:
    """n two-node beam elements from ``origin`` along ``direction`` over length L."""
    d = np.asarray(direction, dtype=float)
    d /= np.linalg.norm(d)
    points = np.asarray(origin) + np.linspace(0.0, L, n + 1)[:, None] * d
    return FEMesh(points, {"line": np.column_stack([np.arange(n), np.arange(1, n + 1)])})


def frequencies(model: FEModel, fixed, count: int) -> np.ndarray:
    """Lowest ``count`` circular frequencies (rad/s) with ``fixed`` dofs held."""
    M, K, _ = model.reduce(fixed)
    lam = sla.eigh(K.toarray(), M.toarray(), eigvals_only=True, subset_by_index=[0, count - 1])
    return np.sqrt(np.abs(lam))


def eb_frequency(beta_L: float, L: float, EI: float, rhoA: float) -> float:
    """Euler-Bernoulli circular frequency (beta L)^2 / L^2 sqrt(EI / rho A), rad/s."""
    return beta_L**2 / L**2 * math.sqrt(EI / rhoA)


def eigenvalue_roundoff(model: FEModel, fixed) -> float:
    """Absolute round-off (rad^2/s^2) of every computed eigenvalue omega^2 of ``frequencies``.

    LAPACK's symmetric-definite eigensolvers return each eigenvalue of K - lambda M to about
    p(n) eps lambda_max (LAPACK Users' Guide, 3rd ed., sec. 4.10.1, M diagonally scaled), whatever
    its own size: the rigid modes and the lowest frequencies carry the noise of the highest one.
    p(n) = sqrt(n), the growth of n rounding errors of random sign (Higham, Accuracy and Stability
    of Numerical Algorithms, 2nd ed., 2002, sec. 2.8). Measured on the beams here: at most
    0.5 eps lambda_max under reference BLAS and OpenBLAS's Zen, Haswell, SandyBridge and Prescott
    kernels, a margin of 2 sqrt(n) (7 for the 2-element cantilever, 22 for the 20-element beam).
    """
    M, K, _ = model.reduce(fixed)
    n = K.shape[0]
    top = sla.eigh(K.toarray(), M.toarray(), eigvals_only=True, subset_by_index=[n - 1, n - 1])
    return math.sqrt(n) * np.finfo(float).eps * float(top[0])


# ------------------------------------------------------------------------------------------------
# sections
# ------------------------------------------------------------------------------------------------
def test_section_helpers():
    r = BeamSection.rectangle(0.02, 0.06, nu=0.3)
    assert (r.A, r.Iy, r.Iz) == pytest.approx((0.02 * 0.06, 0.02 * 0.06**3 / 12, 0.06 * 0.02**3 / 12), rel=1e-15)
    # Saint-Venant torsion constant J = beta a c^3 vs the classical tabulated beta (Timoshenko &
    # Goodier, Theory of Elasticity, torsion of rectangular bars: a/c = 1: 0.141, 2: 0.229, 3: 0.263, 10: 0.312)
    for ratio, beta in ((1.0, 0.1406), (2.0, 0.229), (3.0, 0.263), (10.0, 0.312)):
        J = BeamSection.rectangle(ratio, 1.0).J
        assert J / ratio == pytest.approx(beta, abs=6e-4)          # table given to 3-4 digits
    assert r.ky == pytest.approx(10 * 1.3 / (12 + 11 * 0.3), rel=1e-15)   # Cowper (1966)
    c = BeamSection.circle(0.1, nu=0.0)
    assert (c.A, c.Iy, c.J, c.ky) == pytest.approx((math.pi * 0.0025, math.pi * 1e-4 / 64, math.pi * 1e-4 / 32, 6 / 7),
                                                   rel=1e-15)
    t = BeamSection.tube(0.1, 0.09, nu=0.3)
    assert t.Iy == pytest.approx(math.pi * (0.1**4 - 0.09**4) / 64, rel=1e-15)
    # thin-walled limit of Cowper's tube factor: 2 (1 + nu) / (4 + 3 nu) = 0.5306 for nu = 0.3
    assert BeamSection.tube(1.0, 0.999).ky == pytest.approx(2 * 1.3 / (4 + 0.9), rel=1e-3)
    assert BeamSection.tube(0.1, 0.0).ky == pytest.approx(BeamSection.circle(0.1).ky, rel=1e-15)


@pytest.mark.parametrize("kwargs, match", [
    (dict(A=0.0, Iy=1, Iz=1, J=1), "A must be positive"),
    (dict(A=1, Iy=-1, Iz=1, J=1), "Iy must be positive"),
    (dict(A=1, Iy=1, Iz=1, J=1, ky=0.0), "ky must be positive"),
    (dict(A=1, Iy=1, Iz=1, J=1, orientation=(0, 0, 0)), "orientation"),
])
def test_section_validation(kwargs, match):
    with pytest.raises(ModelError, match=match):
        BeamSection(**kwargs)


# ------------------------------------------------------------------------------------------------
# element matrices
# ------------------------------------------------------------------------------------------------
def test_timoshenko_plane_matrices_match_shape_functions_and_closed_forms():
    """Closed-form K equals int EI th'^2 + kGA gamma^2 of the exact shape functions; the
    quadrature mass equals the closed-form Phi-polynomials (Przemieniecki 1968, inertia properties
    of a beam with shear deformation and rotary inertia)."""
    L, phi = np.array([1.7]), np.array([0.7])
    EI = 3.0
    kGA = 12.0 * EI / (phi[0] * L[0] ** 2)
    x, w = np.polynomial.legendre.leggauss(6)
    xi, w = 0.5 * (x + 1.0), 0.5 * w * L[0]
    Nv, dNv, Nt = plane_shape_functions(L, phi, xi)
    # theta is quadratic: its exact derivative from the polynomial coefficients by central difference
    h = 1e-4
    dNt = (plane_shape_functions(L, phi, xi + h)[2] - plane_shape_functions(L, phi, xi - h)[2]) / (2 * h * L[0])
    gamma = dNv - Nt
    assert np.ptp(gamma[0], axis=0).max() < 1e-14       # constant shear strain: exact element
    K = EI * np.einsum("eqi,eqj,q->eij", dNt, dNt, w) + kGA * np.einsum("eqi,eqj,q->eij", gamma, gamma, w)
    # central difference of a quadratic is exact up to rounding ~1e-12 relative
    assert np.abs(K - plane_stiffness(np.array([EI]), L, phi)).max() <= 1e-9 * np.abs(K).max()
    T, R = plane_mass(np.array([2.0]), np.array([0.3]), L, phi)
    p, l = phi[0], L[0]
    m11, m13 = 13 / 35 + 7 * p / 10 + p * p / 3, 9 / 70 + 3 * p / 10 + p * p / 6
    m12, m14 = (11 / 210 + 11 * p / 120 + p * p / 24) * l, -(13 / 420 + 3 * p / 40 + p * p / 24) * l
    m22, m24 = (1 / 105 + p / 60 + p * p / 120) * l * l, -(1 / 140 + p / 60 + p * p / 120) * l * l
    T_ref = 2.0 * l / (1 + p) ** 2 * np.array([[m11, m12, m13, m14], [m12, m22, -m14, m24],
                                               [m13, -m14, m11, -m12], [m14, m24, -m12, m22]])
    r11, r12 = 6 / 5, (1 / 10 - p / 2) * l
    r22, r24 = (2 / 15 + p / 6 + p * p / 3) * l * l, (-1 / 30 - p / 6 + p * p / 6) * l * l
    R_ref = 0.3 / ((1 + p) ** 2 * l) * np.array([[r11, r12, -r11, r12], [r12, r22, -r12, r24],
                                                 [-r11, -r12, r11, -r12], [r12, r24, -r12, r22]])
    assert np.abs(T[0] - T_ref).max() <= 1e-14 * np.abs(T_ref).max()   # rounding only
    assert np.abs(R[0] - R_ref).max() <= 1e-14 * np.abs(R_ref).max()


def _random_beam(seed: int, ne: int = 3):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1.0, 1.0, (ne, 2, 3))
    sec = BeamSection(A=3e-3, Iy=2e-6, Iz=5e-7, J=1e-6, ky=0.8, kz=0.7, orientation=tuple(rng.normal(size=3)))
    props = ElementProperties.uniform(STEEL, ne, section=SectionArrays.uniform(sec, ne))
    return Beam2(X, props), X, sec


@pytest.mark.parametrize("lumped", [False, True])
def test_beam_matrices_symmetric_rigid_modes_and_mass(lumped):
    kernel, X, sec = _random_beam(1)
    K, M = kernel.stiffness(), kernel.mass(lumped)
    for A in (K, M):
        assert np.abs(A - A.swapaxes(1, 2)).max() <= 1e-15 * np.abs(A).max()   # symmetric to rounding
    for e in range(X.shape[0]):
        lam = np.linalg.eigvalsh(K[e])
        assert np.sum(np.abs(lam) < 1e-10 * lam[-1]) == 6                      # six rigid-body modes
        assert np.linalg.eigvalsh(M[e]).min() > 0.0
    L = np.linalg.norm(X[:, 1] - X[:, 0], axis=1)
    for c in range(3):   # each translation direction carries the element mass rho A L (rounding)
        one = np.zeros(12)
        one[[c, 6 + c]] = 1.0
        assert one @ M @ one == pytest.approx(STEEL.rho * sec.A * L, rel=1e-13)
    if lumped:
        # diagonal in local axes; in global axes the translations stay diagonal (m/2 I) and each
        # node's rotary inertia is a 3x3 block (torsion and bending inertias differ)
        allowed = np.kron(np.diag([1, 0, 1, 0]), np.eye(3)) + np.kron(np.diag([0, 1, 0, 1]), np.ones((3, 3)))
        assert np.abs(M * (1 - allowed)).max() <= 1e-15 * np.abs(M).max()


def test_consistent_mass_rigid_rotation_inertia():
    """A rigid rotation about the element centre has kinetic energy of rho A L^3/12 + rho I L (exact)."""
    kernel, X, sec = _random_beam(2, ne=1)
    M = kernel.mass()[0]
    centre = X[0].mean(axis=0)
    R = kernel.R[0]
    L = kernel.L[0]
    # rotation about local y moves the section in the x-z plane: rotary inertia rho Iy; about z: rho Iz
    for axis, I in ((R[1], sec.Iy), (R[2], sec.Iz)):
        u = np.concatenate([np.cross(axis, X[0, 0] - centre), axis, np.cross(axis, X[0, 1] - centre), axis])
        assert u @ M @ u == pytest.approx(STEEL.rho * (sec.A * L**3 / 12 + I * L), rel=1e-13)
    u = np.concatenate([np.zeros(3), R[0], np.zeros(3), R[0]])   # spin about the axis: rho (Iy + Iz) L
    assert u @ M @ u == pytest.approx(STEEL.rho * (sec.Iy + sec.Iz) * L, rel=1e-13)


def test_parallel_orientation_refused():
    with pytest.raises(MeshError, match="parallel to their section orientation"):
        FEModel(line_mesh(2, 1.0, direction=(0, 0, 1)), STEEL, sections=BeamSection.circle(0.01))


def test_missing_section_and_line3_refused():
    with pytest.raises(ModelError, match="need sections"):
        FEModel(line_mesh(2, 1.0), STEEL)
    mesh = FEMesh(np.array([[0.0, 0, 0], [1, 0, 0], [0.5, 0, 0]]), {"line3": np.array([[0, 1, 2]])})
    with pytest.raises(MeshError, match="3-node beams are not implemented"):
        FEModel(mesh, STEEL, sections=BeamSection.circle(0.01))


# ------------------------------------------------------------------------------------------------
# statics
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("theory", ["euler-bernoulli", "timoshenko"])
@pytest.mark.parametrize("direction", [(1.0, 0.0, 0.0), (0.3, -0.5, 0.8)])
def test_cantilever_one_element_exact(theory, direction):
    """Tip loads on one element: exact Euler-Bernoulli / Timoshenko cantilever solutions."""
    L, P, N, T = 1.3, 1000.0, 5e4, 300.0
    d = np.asarray(direction) / np.linalg.norm(direction)
    orient = np.cross(d, [0.0, 1.0, 0.0]) if abs(d[1]) < 0.9 else np.array([0.0, 0.0, 1.0])
    sec = BeamSection.rectangle(0.03, 0.05, orientation=tuple(orient))
    model = FEModel(line_mesh(1, L, d), STEEL, sections=sec, beam=theory)
    R = model.chunks[0].kernel.R[0]                     # rows: local x, y, z in global axes
    f = np.zeros(model.ndof)
    tip = model.dofs(1)
    f[tip[:3]] = N * R[0] + P * R[1] + 2 * P * R[2]
    f[tip[3:]] = T * R[0]
    u = model.static(f, model.dofs(0))
    ut, rt = R @ u[tip[:3]], R @ u[tip[3:]]             # local tip displacement and rotation
    E, G = STEEL.E, STEEL.G
    shear = theory == "timoshenko"
    assert ut[0] == pytest.approx(N * L / (E * sec.A), rel=1e-12)
    assert ut[1] == pytest.approx(P * L**3 / (3 * E * sec.Iz) + shear * P * L / (sec.ky * G * sec.A), rel=1e-12)
    assert ut[2] == pytest.approx(2 * P * L**3 / (3 * E * sec.Iy) + shear * 2 * P * L / (sec.kz * G * sec.A),
                                  rel=1e-12)
    assert rt[0] == pytest.approx(T * L / (G * sec.J), rel=1e-12)
    assert rt[1] == pytest.approx(-2 * P * L**2 / (2 * E * sec.Iy), rel=1e-12)    # theta_y = -w'
    assert rt[2] == pytest.approx(P * L**2 / (2 * E * sec.Iz), rel=1e-12)         # theta_z = v'


def test_section_forces_of_cantilever():
    """Section forces (N, Vy, Vz, T, My, Mz) along a cantilever with tip loads (equilibrium, exact)."""
    L, n = 2.0, 4
    model = FEModel(line_mesh(n, L), STEEL, sections=BeamSection.rectangle(0.03, 0.05))
    f = np.zeros(model.ndof)
    f[model.dofs(n)] = [7.0, 3.0, 5.0, 2.0, 0.0, 0.0]
    u = model.static(f, model.dofs(0))
    S = model.element_stresses(u)["line"]                       # (n, 2, 6)
    x = model.points[model.chunks[0].connectivity, 0]           # (n, 2) station coordinates
    expected = np.stack([np.full_like(x, 7.0), np.full_like(x, 3.0), np.full_like(x, 5.0),
                         np.full_like(x, 2.0), -5.0 * (L - x), 3.0 * (L - x)], axis=-1)
    assert np.abs(S - expected).max() <= 1e-9 * np.abs(expected).max()     # rounding of the solve
    nodal = model.nodal_stress(u)
    assert nodal[0] == pytest.approx(expected[0, 0], abs=1e-8)


# ------------------------------------------------------------------------------------------------
# vibration
# ------------------------------------------------------------------------------------------------
def _bending_pairs(omega: np.ndarray, count: int, lam_error: float) -> np.ndarray:
    """Frequencies of a circular section come in equal pairs: one value per pair.

    Each omega of a pair carries the round-off lam_error / (2 omega) of its own eigenvalue
    (``eigenvalue_roundoff``), so the two may differ by lam_error / omega.
    """
    first, second = omega[0:2 * count:2], omega[1:2 * count:2]
    assert np.all(np.abs(first - second) <= lam_error / first)
    return first


def test_cantilever_frequencies_euler_bernoulli_and_convergence():
    L, d = 2.0, 0.02
    sec = BeamSection.circle(d)
    EI, rhoA = STEEL.E * sec.Iy, STEEL.rho * sec.A
    exact = np.array([eb_frequency(b, L, EI, rhoA) for b in CANTILEVER])
    errors = []
    for n in (2, 4, 8, 16):
        model = FEModel(line_mesh(n, L), STEEL, sections=sec, beam="euler-bernoulli")
        lam_error = eigenvalue_roundoff(model, model.dofs(0))
        omega = _bending_pairs(frequencies(model, model.dofs(0), 6), 3, lam_error)
        errors.append(omega / exact - 1.0)
    errors = np.array(errors)
    assert np.all(errors[1:] > 0.0)                       # consistent mass: bounds from above
    # Hermite cubics with consistent mass converge as h^4 (ratio 16 per halving; >= 12 asked)
    assert np.all(errors[1:-1, 0] / errors[2:, 0] > 12.0)
    # 16 elements: observed 1.3e-7, 5.1e-6, 4.0e-5 for modes 1-3
    assert np.all(errors[-1] < [1e-6, 1e-5, 1e-4])


def test_free_free_frequencies_euler_bernoulli():
    L, d = 1.5, 0.02
    sec = BeamSection.circle(d)
    model = FEModel(line_mesh(20, L, direction=(1.0, 2.0, -0.5)), STEEL, sections=sec, beam="euler-bernoulli")
    omega = frequencies(model, [], 10)
    # six rigid-body modes: omega^2 = 0 up to the eigensolver's round-off, which is the noise of the
    # highest frequency (omega_max = 2.8e5 rad/s here) and stays below 1e-6 of the first elastic omega^2
    lam_error = eigenvalue_roundoff(model, [])
    assert lam_error < 1e-6 * omega[6] ** 2
    assert np.all(omega[:6] ** 2 <= lam_error)
    flexible = _bending_pairs(omega[6:], 2, lam_error)
    exact = np.array([eb_frequency(b, L, STEEL.E * sec.Iy, STEEL.rho * sec.A) for b in FREE_FREE])
    assert flexible == pytest.approx(exact, rel=5e-5)    # 20 elements: observed 2.2e-6, 1.6e-5


def test_timoshenko_simply_supported_thick_beam():
    """L/h = 5 simply supported beam, bending in x-z: exact Timoshenko frequencies (shear + rotary inertia).

    For w = W sin(a x), psi = Psi cos(a x), a = n pi / L, Timoshenko's equations give
    (kGA a^2 - rho A w^2)(EI a^2 + kGA - rho I w^2) = (kGA a)^2 (Timoshenko 1921, Phil. Mag. 41:744-746;
    Han, Benaroya & Wei 1999, J. Sound Vib. 225:935-988, simply supported case).
    """
    L, b, h = 1.0, 0.2, 0.2
    sec = BeamSection.rectangle(b, h)
    E, G, rho = STEEL.E, STEEL.G, STEEL.rho
    EI, kGA, rhoA, rhoI = E * sec.Iy, sec.kz * G * sec.A, rho * sec.A, rho * sec.Iy
    exact, euler = [], []
    for m in (1, 2, 3):
        a = m * math.pi / L
        # quadratic in w^2: c2 w^4 + c1 w^2 + c0 = 0, lower root
        c2 = rhoA * rhoI
        c1 = -(rhoA * (EI * a**2 + kGA) + rhoI * kGA * a**2)
        c0 = kGA * a**2 * (EI * a**2 + kGA) - (kGA * a) ** 2
        exact.append(math.sqrt((-c1 - math.sqrt(c1 * c1 - 4 * c2 * c0)) / (2 * c2)))
        euler.append(a**2 * math.sqrt(EI / rhoA))
    exact = np.array(exact)
    assert np.all(exact < 0.95 * np.array(euler))        # thick beam: far from Euler-Bernoulli
    errors = []
    for n in (40, 80):
        model = FEModel(line_mesh(n, L), STEEL, sections=sec)
        nodes = np.arange(n + 1)
        # keep only w and theta_y: axial, lateral and torsional motions decouple from x-z bending
        fixed = np.concatenate([model.dofs(nodes, ["ux", "uy", "rx", "rz"]), model.dofs([0, n], "uz")])
        errors.append(frequencies(model, fixed, 3) / exact - 1.0)
    # the element's shear strain is constant, so the shear energy of the modes converges as h^2
    # (observed errors 2.2e-5, 2.6e-4, 9.5e-4 with 40 elements, a quarter of that with 80)
    assert np.all(errors[1] > 0) and np.all(np.abs(errors[1]) < 3e-4)
    assert errors[0] / errors[1] == pytest.approx(4.0, rel=0.05)


def test_rotated_model_has_same_frequencies():
    L, sec = 1.0, BeamSection.rectangle(0.02, 0.05, orientation=(0.0, 0.0, 1.0))
    reference = frequencies(FEModel(line_mesh(6, L), STEEL, sections=sec), [], 16)
    d = np.array([0.4, -0.7, 0.6])
    orient = np.cross(d, [1.0, 0.0, 0.0])
    rotated = FEModel(line_mesh(6, L, direction=d, origin=(1, 2, 3)), STEEL,
                      sections=BeamSection.rectangle(0.02, 0.05, orientation=tuple(orient)))
    omega = frequencies(rotated, [], 16)
    # the same eigenvalues through other rounding: each omega within lam_error / (2 omega) of its own
    lam_error = eigenvalue_roundoff(rotated, [])
    assert np.all(np.abs(omega[6:] - reference[6:]) <= lam_error / reference[6:])


# ------------------------------------------------------------------------------------------------
# geometric stiffness and buckling
# ------------------------------------------------------------------------------------------------
def _buckling_load(model: FEModel, load_dof: int, fixed) -> float:
    """Smallest lambda with (K + lambda Kg(u)) phi = 0, u the response to a unit compressive load."""
    f = np.zeros(model.ndof)
    f[load_dof] = -1.0
    u = model.static(f, fixed)
    Kg = model.geometric_stiffness(u)
    _, K, free = model.reduce(fixed)
    mu = sla.eigh(-Kg[free][:, free].toarray(), K.toarray(), eigvals_only=True)   # mu = 1 / lambda
    return 1.0 / mu.max()


@pytest.mark.parametrize("support", ["pinned-pinned", "cantilever"])
def test_euler_buckling(support):
    L, n = 3.0, 10
    sec = BeamSection.rectangle(0.04, 0.06)
    model = FEModel(line_mesh(n, L), STEEL, sections=sec, beam="euler-bernoulli")
    EI = STEEL.E * min(sec.Iy, sec.Iz)
    if support == "pinned-pinned":
        fixed = np.concatenate([model.dofs(0, ["ux", "uy", "uz", "rx"]), model.dofs(n, ["uy", "uz"])])
        expected = math.pi**2 * EI / L**2
    else:
        fixed = model.dofs(0)
        expected = math.pi**2 * EI / (4 * L**2)
    P = _buckling_load(model, model.dofs(n, "ux")[0], fixed)
    assert P == pytest.approx(expected, rel=1e-4)          # 10 elements: observed error < 2e-5


def test_timoshenko_buckling_vs_engesser():
    """Shear-flexible pinned column: Phi-consistent Kg converges to Engesser's P_E / (1 + P_E / kGA)
    (Timoshenko & Gere, Theory of Elastic Stability, 2nd ed., §2.17)."""
    L, n = 1.0, 20
    sec = BeamSection.rectangle(0.1, 0.1)
    model = FEModel(line_mesh(n, L), STEEL, sections=sec)
    fixed = np.concatenate([model.dofs(0, ["ux", "uy", "uz", "rx"]), model.dofs(n, ["uy", "uz"])])
    P = _buckling_load(model, model.dofs(n, "ux")[0], fixed)
    P_euler = math.pi**2 * STEEL.E * sec.Iy / L**2
    expected = P_euler / (1 + P_euler / (sec.kz * STEEL.G * sec.A))
    assert expected < 0.99 * P_euler                         # shear matters at L/h = 10
    assert P == pytest.approx(expected, rel=2e-4)            # 20 elements: observed error 5e-5


def test_beam_geometric_stiffness_properties():
    kernel, X, sec = _random_beam(4)
    Kg = kernel.geometric_stiffness(np.array([1e4, -2e3, 5e2]))
    assert np.abs(Kg - Kg.swapaxes(1, 2)).max() <= 1e-15 * np.abs(Kg).max()
    # rigid translations carry no geometric stiffness; the torsional term N Ip / (A L) is present
    t = np.tile([0.3, -0.2, 0.9, 0.0, 0.0, 0.0], 2)
    assert np.abs(Kg @ t).max() <= 1e-12 * np.abs(Kg).max()
    state = np.zeros((3, 2, 6))
    state[:, :, 0] = [[1e4, 1e4], [-2e3, -2e3], [5e2, 5e2]]
    assert np.allclose(kernel.geometric_stiffness(state), Kg, rtol=0, atol=1e-12 * np.abs(Kg).max())
    twist = np.concatenate([np.zeros(3), kernel.R[0, 0], np.zeros(3), -kernel.R[0, 0]])
    Ip = sec.Iy + sec.Iz
    assert twist @ Kg[0] @ twist == pytest.approx(1e4 * Ip / (sec.A * kernel.L[0]) * 4, rel=1e-12)
