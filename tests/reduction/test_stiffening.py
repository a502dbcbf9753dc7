"""Geometric-stiffness load cases for dynamic stiffening (flexmb/reduction/stiffening.py).

References used here are computed independently of the FE model: the Euler-Bernoulli cantilever
mode shapes ``cosh - cos - s (sinh - sin)`` integrated by adaptive quadrature (scipy ``quad``,
relative accuracy 1e-13), Euler's buckling load, and the acceleration field
``a0 + alpha x x + omega x (omega x x)`` evaluated pointwise and solved with ``FEModel.static``.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np
import pytest
import scipy.linalg as sla
from scipy.integrate import quad
from scipy.optimize import brentq

from flexmb.errors import ModelError
from flexmb.fem.materials import Material
from flexmb.fem.mesh import FEMesh, read_mesh
from flexmb.fem.model import FEModel
from flexmb.fem.sections import BeamSection
from flexmb.reduction import (INERTIAL_CASES, INTERFACE_CASES, ModeSet, StiffeningMatrices, craig_bampton,
                              free_free_modes, inertial_coefficients, stiffening_matrices)
from flexmb.reduction.interfaces import rigid_body_modes
from flexmb.reduction.stiffening import acceleration_fields, static_load_cases

STEEL = Material(E=210e9, nu=0.3, rho=7850.0)
SECTION = BeamSection.rectangle(0.02, 0.01)        # Iy != Iz: the two bending planes separate
RHO_A = 7850.0 * 0.02 * 0.01                       # kg/m
WZWZ = INERTIAL_CASES.index("wzwz")
ROUNDING = 1e-10
"""Two exact routes to the same quantity differ by rounding times the condition number of the
slender beam's stiffness (~1e6 here); 1e-10 relative leaves four orders of margin."""


def line_mesh(n: int, L: float = 1.0, x0: float = 0.0) -> FEMesh:
    """``n`` beam elements along +x from ``x0``; node sets ``root`` (first) and ``tip`` (last)."""
    points = np.zeros((n + 1, 3))
    points[:, 0] = x0 + np.linspace(0.0, L, n + 1)
    lines = np.column_stack([np.arange(n), np.arange(1, n + 1)])
    return FEMesh(points, {"line": lines}, node_sets={"root": [0], "tip": [n]})


def beam(n: int, theory: str = "euler-bernoulli", x0: float = 0.0) -> FEModel:
    return FEModel(line_mesh(n, x0=x0), STEEL, sections=SECTION, beam=theory)


@lru_cache(maxsize=None)
def cantilever_integrals(k: int) -> tuple[float, float]:
    """Exact ``(K_k, A_k)`` of mode k of a uniform Euler-Bernoulli cantilever (L = 1, rho A = 1).

    ``K_k = int (1 - x^2)/2 phi'^2 dx / int phi^2 dx`` (Southwell coefficient: first-order change of
    omega^2 per Omega^2, hub radius 0; He 1992, eq. 3.52 with the non-rotating shapes) and
    ``A_k = int phi'^2 dx / int phi^2 dx`` (unit axial tension, He 1992, eq. 3.30 with P = 1).
    """
    guess = (2 * k - 1) * np.pi / 2
    b = brentq(lambda x: 1.0 + np.cos(x) * np.cosh(x), guess - 0.5, guess + 0.5, xtol=1e-15)
    s = (np.cosh(b) + np.cos(b)) / (np.sinh(b) + np.sin(b))

    def phi(x):
        return np.cosh(b * x) - np.cos(b * x) - s * (np.sinh(b * x) - np.sin(b * x))

    def dphi(x):
        return b * (np.sinh(b * x) + np.sin(b * x) - s * (np.cosh(b * x) - np.cos(b * x)))

    opts = dict(epsabs=0.0, epsrel=1e-13, limit=200)
    mass = quad(lambda x: phi(x) ** 2, 0.0, 1.0, **opts)[0]
    southwell = quad(lambda x: 0.5 * (1.0 - x * x) * dphi(x) ** 2, 0.0, 1.0, **opts)[0]
    axial = quad(lambda x: dphi(x) ** 2, 0.0, 1.0, **opts)[0]
    return southwell / mass, axial / mass


def bending_modes(ms, component: int) -> list[int]:
    """Modes whose translations lie along ``component`` (1: y, 2: z) of a beam on the x axis."""
    t = ms.phi.reshape(ms.nodes.shape[0], ms.dofs_per_node, ms.n_modes)[:, :3, :]
    other = [c for c in range(3) if c != component]
    return [k for k in range(ms.n_modes) if np.abs(t[:, component, k]).max() > 1e6 * np.abs(t[:, other, k]).max()]


def asymmetry(G: np.ndarray) -> float:
    """Largest ``|G - G^T|`` relative to the largest ``|G|`` of a stack (k, m, m)."""
    return float(np.abs(G - np.swapaxes(G, -1, -2)).max() / np.abs(G).max())


@pytest.fixture(scope="module")
def spinning():
    """Cantilevers of 25 and 50 Euler-Bernoulli elements, root clamped at the origin."""
    return {n: craig_bampton(beam(n), None, n_modes=8, fixed="root", stress=False) for n in (25, 50)}


@pytest.fixture(scope="module")
def referenced():
    model = beam(20, "timoshenko")
    return model, craig_bampton(model, {"root": "root", "tip": "tip"}, n_modes=6, reference="root")


# -- (1) Southwell coefficients ------------------------------------------------------------------
def test_southwell_coefficients_of_a_spinning_cantilever(spinning):
    """Spin about z of a cantilever along +x clamped on the axis (hub radius 0): for mass-normalized
    modes G_wzwz[k, k] is the Southwell coefficient K_k, d(omega_k^2)/d(Omega^2) at Omega = 0.

    Reference: K_1 = 1.193336, K_2 = 6.478225 from the exact mode shapes (quadrature above; a
    converged computation, not a source). The value K_1 = 1.1734 sometimes quoted matches the
    secant (omega^2 - omega_0^2)/Omega^2 near Omega = 4.5 sqrt(EI / rho A L^4), not the
    Omega -> 0 slope that G is by construction (docs/theory-stiffening.md §6). Mesh error: the tension is constant per element,
    so G converges as h^2 (measured 8.2e-5 and 3.0e-4 at 50 elements, ratio 4.00 from 25 to 50);
    Richardson extrapolation of 25 and 50 elements leaves 2e-7 (tolerance 2e-6).
    """
    values = {}
    for n, ms in spinning.items():
        G = ms.stiffening.inertial[WZWZ]
        flap, edge = bending_modes(ms, 2), bending_modes(ms, 1)
        assert len(flap) >= 2 and len(edge) >= 2
        values[n] = np.array([G[k, k] for k in flap[:2]])
        # the axial tension stiffens both bending planes alike
        np.testing.assert_allclose([G[k, k] for k in edge[:2]], values[n], rtol=1e-9)
    exact = np.array([cantilever_integrals(k)[0] for k in (1, 2)])
    np.testing.assert_allclose(exact, [1.193336, 6.478225], rtol=1e-6)
    assert np.all(values[50] > 0)                                        # tension: stiffening
    np.testing.assert_allclose(values[50][0], exact[0], rtol=2e-4)
    np.testing.assert_allclose(values[50][1], exact[1], rtol=6e-4)
    errors = {n: v / exact - 1 for n, v in values.items()}
    np.testing.assert_allclose(errors[25] / errors[50], 4.0, rtol=0.02)  # O(h^2)
    np.testing.assert_allclose((4 * values[50] - values[25]) / 3, exact, rtol=2e-6)


def test_spin_axis_decides_the_tension(spinning):
    """For a beam on the x axis the fields wywy and wzwz are both (-x, 0, 0) on the axis: equal G.
    Spin about the beam's own axis (wxwx: field (0, -y, -z) = 0 there) and the products load
    nothing axially: G = 0 to rounding."""
    S = spinning[25].stiffening
    G = dict(zip(INERTIAL_CASES, S.inertial))
    np.testing.assert_allclose(G["wywy"], G["wzwz"], rtol=0, atol=ROUNDING * np.abs(G["wzwz"]).max())
    for name in ("wxwx", "wxwy", "wywz", "wxwz"):
        assert np.abs(G[name]).max() <= ROUNDING * np.abs(G["wzwz"]).max(), name
    # an axial acceleration a0 = +x: d'Alembert load -rho A along -x, compression -> softening
    assert np.all(np.diag(G["ax"])[bending_modes(spinning[25], 2)] < 0)


# -- (2) interface loads ---------------------------------------------------------------------------
def test_unit_axial_tip_force_and_buckling():
    """Cantilever (root held, tip interface): the tip force case fx is a unit tension, so G equals
    int phi'^2 dx of the mode shapes (analytic: A_k / (rho A)); mesh error, measured 1.7e-6 and
    9.3e-5 for the first two flapwise modes with 50 elements (tolerance 1e-5, 3e-4). The lowest P
    with det(K - P G_fx) = 0 is the Euler load pi^2 EI / (4 L^2) of the column (weak axis): 3e-7
    measured (discretization and modal truncation, tolerance 1e-5). A transverse tip force or a
    moment causes no axial force: the beam's geometric stiffness is then zero."""
    model = beam(50)
    ms = craig_bampton(model, {"tip": "tip"}, n_modes=12, fixed="root", stress=False)
    G = ms.stiffening.interfaces["tip"]
    flap = bending_modes(ms, 2)[:2]
    exact = np.array([cantilever_integrals(k)[1] for k in (1, 2)]) / RHO_A
    np.testing.assert_allclose(G[0][flap[0], flap[0]], exact[0], rtol=1e-5)
    np.testing.assert_allclose(G[0][flap[1], flap[1]], exact[1], rtol=3e-4)
    P = sla.eigvals(ms.K, G[0])
    P = np.sort(np.real(P[np.isfinite(P) & (np.real(P) > 0)]))
    EI = STEEL.E * min(SECTION.Iy, SECTION.Iz)
    np.testing.assert_allclose(P[0], np.pi**2 * EI / 4.0, rtol=1e-5)
    assert np.abs(G[1:]).max() <= ROUNDING * np.abs(G[0]).max()


def test_interface_cases_exist_for_every_non_reference_interface(referenced):
    model, ms = referenced
    S = ms.stiffening
    assert list(S.interfaces) == ["tip"] and S.inertial.shape == (12, ms.n_modes, ms.n_modes)
    assert S.interfaces["tip"].shape == (len(INTERFACE_CASES), ms.n_modes, ms.n_modes)
    with pytest.raises(ModelError, match="no interface stiffening matrices for 'root'"):
        S.matrix(np.zeros(12), {"root": np.ones(6)})


# -- (3) symmetry, linearity and the convention, inertia relief ---------------------------------
def test_combination_matches_an_independent_solution(referenced):
    """The convention end to end: a random motion (a0, alpha, omega) and tip load; the nodal field
    a0 + alpha x x + omega x (omega x x) (alpha on rotations) evaluated pointwise, f = -M a plus the
    tip load, solved by FEModel.static with the root clamped; phi^T Kg(u) phi must equal
    sum c_k G_k + F . G_tip (linearity; tolerance: rounding, see ROUNDING)."""
    model, ms = referenced
    rng = np.random.default_rng(7)
    a0, alpha, omega = rng.standard_normal((3, 3)) * np.array([[9.81], [40.0], [25.0]])
    x = model.points
    acc = np.zeros((model.n_nodes, 6))
    acc[:, :3] = a0 + np.cross(alpha, x) + np.cross(omega, np.cross(omega, x))
    acc[:, 3:] = alpha
    c = inertial_coefficients(a0, alpha, omega)
    np.testing.assert_allclose(acceleration_fields(x, 6) @ c, acc.ravel(), rtol=0, atol=1e-12 * np.abs(acc).max())
    F = rng.standard_normal(6) * [300, 300, 300, 20, 20, 20]
    f = -model.M @ acc.ravel()
    f[model.dofs("tip")] += F                   # single-node tip: the point is the node
    u = model.static(f, model.dofs("root"))
    reference = ms.phi.T @ (model.geometric_stiffness(u) @ ms.phi)
    combined = ms.stiffening.matrix(c, {"tip": F})
    np.testing.assert_allclose(combined, reference, rtol=0, atol=ROUNDING * np.abs(reference).max())


def test_matrices_are_symmetric(referenced, spinning):
    """Kg(sigma) is symmetric, so is phi^T Kg phi; rounding only (1e-12 relative)."""
    for ms in (referenced[1], spinning[25]):
        S = ms.stiffening
        assert asymmetry(S.inertial) < 1e-12
        for G in S.interfaces.values():
            assert asymmetry(G) < 1e-12


@pytest.fixture(scope="module")
def free_beam():
    """A free beam along x in [0, 1] (frame origin at one end) with a tip correction interface."""
    model = beam(20, "timoshenko")
    return model, free_free_modes(model, 6, static_correction={"tip": "tip"})


def test_inertia_relief_of_a_free_beam(free_beam):
    """Free set: loads relieved of their rigid-body resultant (R^T b = 0 to rounding), solution
    independent of the six support coordinates and mass-orthogonal to the rigid-body modes.
    Different supports differ by rounding amplified by the stiffness condition number (measured
    1e-11 relative; tolerance 1e-9). Spin about z with the origin at one end: relieved load
    rho A Omega^2 (x - L/2), axial force
    N(x) = rho A Omega^2 x (L - x) / 2; linear bar elements with consistent loads are nodally
    exact, so each element's force equals the element mean of N to rounding."""
    model, ms = free_beam
    cases = static_load_cases(ms)
    assert cases.relieved
    R = cases.condensation.rigid_modes()
    assert np.abs(R.T @ cases.rhs).max() <= 1e-12 * np.abs(cases.rhs).max()
    U = cases.displacements
    scale = np.abs(U).max()
    tip = 6 * 20                      # condensed coordinates: 20 free nodes, then the tip point
    supports = ([0, 1, 2, 3, 4, 5], [tip, tip + 1, tip + 2, tip + 3, tip + 4, tip + 5], [0, 1, 2, 3, tip + 1, tip + 2])
    for support in supports:          # root node; tip point; a 3-2-1 split over both ends
        other = static_load_cases(ms, support=support).displacements
        np.testing.assert_allclose(other, U, rtol=0, atol=1e-9 * scale)
    assert np.abs(rigid_body_modes(model.points, 6).T @ (model.M @ U)).max() <= 1e-12 * np.abs(model.M @ U).max()
    N = model.element_stresses(U[:, WZWZ])["line"][:, :, 0].mean(axis=1)
    x = model.points[:, 0]

    def primitive(s):                                   # int_0^s x (1 - x) / 2 dx
        return s**2 / 4 - s**3 / 6

    mean = RHO_A * (primitive(x[1:]) - primitive(x[:-1])) / np.diff(x)
    np.testing.assert_allclose(N, mean, rtol=0, atol=1e-9 * mean.max())


def test_rigid_accelerations_do_not_stress_a_free_body(free_beam):
    """a0 and alpha are rigid-body fields: inertia relief removes them entirely (G = 0), while
    the centrifugal cases stress the body."""
    _, ms = free_beam
    S = ms.stiffening
    assert np.abs(S.inertial[:6]).max() <= ROUNDING * np.abs(S.inertial).max()
    assert np.abs(S.inertial[WZWZ]).max() > 0
    assert asymmetry(S.inertial) < 1e-12 and asymmetry(S.interfaces["tip"]) < 1e-12


def test_bad_support_is_refused(free_beam):
    _, ms = free_beam
    with pytest.raises(ModelError, match="do not hold the six rigid-body motions"):
        static_load_cases(ms, support=[0, 1, 2, 6, 7, 8])             # translations of two nodes only
    with pytest.raises(ModelError, match="6 distinct support coordinates"):
        static_load_cases(ms, support=[0, 1, 2])


# -- (4) files and coordinate changes ----------------------------------------------------------
def test_save_load_round_trip(referenced, tmp_path):
    model, ms = referenced
    path = tmp_path / "beam.npz"
    ms.save(path)
    back = ModeSet.load(path)
    assert back.model is None
    np.testing.assert_array_equal(back.stiffening.inertial, ms.stiffening.inertial)
    assert list(back.stiffening.interfaces) == list(ms.stiffening.interfaces)
    for name, G in ms.stiffening.interfaces.items():
        np.testing.assert_array_equal(back.stiffening.interfaces[name], G)
    np.testing.assert_array_equal(back.fixed_dofs, ms.fixed_dofs)
    # recomputed from the loaded set and the model: the same matrices
    again = stiffening_matrices(back, model)
    np.testing.assert_allclose(again.inertial, ms.stiffening.inertial, rtol=0,
                               atol=ROUNDING * np.abs(ms.stiffening.inertial).max())


def test_loaded_set_without_matrices_needs_the_model(referenced, tmp_path):
    model, ms = referenced
    path = tmp_path / "bare.npz"
    ms.save(path, stiffening=False)
    back = ModeSet.load(path)
    with pytest.raises(ModelError, match="holds no stiffening matrices"):
        back.stiffening
    with pytest.raises(ModelError, match="no FE model attached"):
        stiffening_matrices(back)
    back.stiffening = stiffening_matrices(back, model)
    np.testing.assert_allclose(back.stiffening.inertial, ms.stiffening.inertial, rtol=0,
                               atol=ROUNDING * np.abs(ms.stiffening.inertial).max())
    with pytest.raises(ModelError, match="not the one of the mode set"):
        stiffening_matrices(back, beam(10, "timoshenko"))


def test_held_set_without_recorded_dofs_is_refused(spinning):
    ms = spinning[25]
    unknown = ModeSet(ms.phi, ms.nodes, 6, ms.M, ms.K, kind=ms.kind, info=ms.info, model=ms.model)
    with pytest.raises(ModelError, match="does not record which"):
        unknown.stiffening


def test_carried_through_coordinate_changes(referenced):
    """transformed / orthonormalize / select map G -> V^T G V; the result equals the matrices
    computed afresh for the new set (the static solutions do not depend on the modes)."""
    model, ms = referenced
    V = np.random.default_rng(2).standard_normal((ms.n_modes, ms.n_modes))
    for new in (ms.transformed(V), ms.transformed(V).orthonormalize(), ms.select(count=5)):
        fresh = stiffening_matrices(new)
        scale = np.abs(fresh.inertial).max()
        np.testing.assert_allclose(new.stiffening.inertial, fresh.inertial, rtol=0, atol=1e-9 * scale)
        np.testing.assert_allclose(new.stiffening.interfaces["tip"], fresh.interfaces["tip"], rtol=0,
                                   atol=1e-9 * np.abs(fresh.interfaces["tip"]).max())
    with pytest.raises(ModelError, match="shape"):
        StiffeningMatrices(np.zeros((11, 2, 2)), {})


# -- (5) solids and shells -----------------------------------------------------------------------
def test_solid_beam_with_average_interfaces():
    """The hex8 beam (1 m, 20 mm square, 50 x 2 x 2 cells), root as average reference, tip
    interface: symmetric matrices, and the first flapwise Southwell coefficient and unit axial
    tip force of the slender solid agree with Euler-Bernoulli theory (measured 2.8e-4 and 4.5e-4;
    tolerance 2e-3 for the coarse 2 x 2 section mesh)."""
    model = FEModel(read_mesh("meshes/beam_solid.msh"), STEEL)
    ms = craig_bampton(model, {"root": "root", "tip": "tip"}, n_modes=6, reference="root",
                       connection="average", stress=False)
    S = ms.stiffening
    assert asymmetry(S.inertial) < 1e-12 and asymmetry(S.interfaces["tip"]) < 1e-12
    # the first two modes are the degenerate bending pair of the square section (any mix of the
    # two planes): the tension stiffens both planes alike, so both diagonals are K_1
    f = ms.frequencies_hz
    assert abs(f[1] / f[0] - 1) < 1e-6 and f[2] > 5 * f[0]
    southwell, axial = cantilever_integrals(1)
    pair = np.arange(2)
    np.testing.assert_allclose(S.inertial[WZWZ][pair, pair] + S.inertial[WZWZ - 1][pair, pair],
                               2 * southwell, rtol=2e-3)
    np.testing.assert_allclose(S.interfaces["tip"][0][pair, pair], axial / (7850.0 * 0.02 * 0.02), rtol=2e-3)


def test_shell_plate_sets():
    """Square plate (16 x 16 quads, 10 mm): free-free with an average edge interface, and clamped
    along x = 0 and spun about z. Symmetric; the in-plane tension stiffens every out-of-plane
    mode; the first (nearly cylindrical) mode's coefficient is the beam's within 1 % (measured
    0.27 %: Poisson coupling at the clamped edge makes a plate no beam)."""
    model = FEModel(read_mesh("meshes/plate_quad.msh"), STEEL, thickness=0.01)
    free = free_free_modes(model, 4, static_correction={"edge_x1": "edge_x1"}, connection="average")
    S = free.stiffening
    assert asymmetry(S.inertial) < 1e-12 and asymmetry(S.interfaces["edge_x1"]) < 1e-12
    clamped = craig_bampton(model, None, n_modes=4, fixed="edge_x0", stress=False)
    G = clamped.stiffening.inertial[WZWZ]
    assert asymmetry(clamped.stiffening.inertial) < 1e-12 and np.all(np.diag(G) > 0)
    np.testing.assert_allclose(G[0, 0], cantilever_integrals(1)[0], rtol=1e-2)
