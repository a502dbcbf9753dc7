"""Nonlinear beam with Green-Lagrange axial strain (flexmb/fem/nonlinear_beam.py,
flexmb/fem/elements/beam_nonlinear.py; docs/theory-elements.md §6)."""
from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.linalg as sla
import scipy.sparse.linalg as spla

from flexmb.errors import ModelError, NonFiniteError
from flexmb.fem.materials import Material
from flexmb.fem.mesh import FEMesh
from flexmb.fem.model import FEModel
from flexmb.fem.nonlinear_beam import NonlinearBeamStructure
from flexmb.fem.sections import BeamSection

STEEL = Material(E=210e9, nu=0.3, rho=7850.0)
SECTION = BeamSection.rectangle(0.02, 0.03)          # b = 0.02 along local y, h = 0.03 along z
MEMBRANES = ("average", "pointwise")
THEORIES = ("euler-bernoulli", "timoshenko")


def line_mesh(n: int, L: float, direction=(1.0, 0.0, 0.0)) -> FEMesh:
    """``n`` two-node beams from the origin along ``direction``, total length ``L``."""
    d = np.asarray(direction, dtype=float) / np.linalg.norm(direction)
    points = np.linspace(0.0, L, n + 1)[:, None] * d
    return FEMesh(points, {"line": np.column_stack([np.arange(n), np.arange(1, n + 1)])})


def curved_mesh(n: int = 8) -> FEMesh:
    """A 3D space curve of ``n`` elements with varying element orientations (about 1 m long)."""
    s = np.linspace(0.0, 1.0, n + 1)
    points = np.column_stack([s, 0.2 * np.sin(3.0 * s), 0.1 * s**2])
    return FEMesh(points, {"line": np.column_stack([np.arange(n), np.arange(1, n + 1)])})


def model_of(mesh: FEMesh, beam: str = "euler-bernoulli", section: BeamSection = SECTION) -> FEModel:
    return FEModel(mesh, STEEL, sections=section, beam=beam)


def newton(structure: NonlinearBeamStructure, load: np.ndarray, tol: float = 1e-11, maxit: int = 40
           ) -> np.ndarray:
    """Solve ``f(u) = load`` on the free dofs with Newton's method and the exact tangent."""
    u = np.zeros(structure.ndof_free)
    scale = max(float(np.linalg.norm(load)), 1.0)
    for _ in range(maxit):
        f, K = structure.internal_force(u)
        r = load - f
        if np.linalg.norm(r) <= tol * scale:
            return u
        u = u + spla.spsolve(K.tocsc(), r)
    raise AssertionError(f"Newton did not converge, residual {np.linalg.norm(r):.3e}")


def planar_fixed(model: FEModel, n: int, pinned_end: bool) -> np.ndarray:
    """Planar x-y beam: uz, rx, ry held everywhere; node 0 holds ux, uy; node n holds uy if pinned."""
    fixed = [model.dofs(range(n + 1), ["uz", "rx", "ry"]), model.dofs(0, ["ux", "uy"])]
    if pinned_end:
        fixed.append(model.dofs(n, "uy"))
    return np.concatenate(fixed)


def free_index(structure: NonlinearBeamStructure, dof: int) -> int:
    """Position of global dof ``dof`` in the free vector."""
    return int(np.flatnonzero(structure.free == dof)[0])


# ------------------------------------------------------------------------------------------------
# (1) forces and tangent against central differences
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("beam", THEORIES)
@pytest.mark.parametrize("membrane", MEMBRANES)
def test_forces_and_tangent_match_central_differences(beam, membrane):
    """f = dU/du and K_t = df/du by central differences at a large random state.

    Step h = 1e-6 on dofs scaled to order one (translations in units of the element length
    0.13 m, rotations in rad). Central differences err by h^2/6 |U'''| / |U'| ~ 1e-12
    (truncation) plus eps |U| / (h |U'|) ~ 1e-10 (round-off), so rtol 1e-7 of the largest
    entry leaves a margin of 1000 while any wrong term (e.g. a missing factor 1/2 in the
    strain, or a missing geometric part) would show at order one.
    """
    model = model_of(curved_mesh(), beam)
    s = NonlinearBeamStructure(model, membrane=membrane)
    rng = np.random.default_rng(7)
    scale = np.where(np.isin(s.free % 6, [0, 1, 2]), 0.13, 1.0)
    u = rng.normal(size=s.ndof_free) * 0.05 * scale         # 5 % strains and slopes ~ 0.05 rad
    f, K = s.internal_force(u)
    h = 1e-6
    dU, dF = np.empty(s.ndof_free), np.empty((s.ndof_free, s.ndof_free))
    for i in range(s.ndof_free):
        e = np.zeros(s.ndof_free)
        e[i] = h * scale[i]
        dU[i] = (s.strain_energy(u + e) - s.strain_energy(u - e)) / (2 * e[i])
        dF[:, i] = (s.internal_force(u + e)[0] - s.internal_force(u - e)[0]) / (2 * e[i])
    Kd = K.toarray()
    assert np.abs(dU - f).max() <= 1e-7 * np.abs(f).max()
    assert np.abs(dF - Kd).max() <= 1e-7 * np.abs(Kd).max()
    assert np.abs(Kd - Kd.T).max() <= 1e-13 * np.abs(Kd).max()


# ------------------------------------------------------------------------------------------------
# (2) tangent at zero = linear stiffness of the FE model
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("beam", THEORIES)
@pytest.mark.parametrize("membrane", MEMBRANES)
def test_tangent_at_zero_equals_linear_stiffness(beam, membrane):
    """K_t(0) = model.K on the free dofs (rtol 1e-10), f(0) = 0, U(0) = 0; the pattern is constant."""
    section = BeamSection.rectangle(0.02, 0.03, orientation=(0.3, 0.2, 1.0))
    model = model_of(curved_mesh(), beam, section)
    model.add_spring(4, 1e5, 1e3)                            # node springs stay a linear term
    fixed = model.dofs(0)
    s = NonlinearBeamStructure(model, fixed, membrane=membrane)
    f, K = s.internal_force(np.zeros(s.ndof_free))
    K_ref = model.reduce(fixed)[1].toarray()
    assert np.abs(K.toarray() - K_ref).max() <= 1e-10 * np.abs(K_ref).max()
    assert not np.any(f)
    assert s.strain_energy(np.zeros(s.ndof_free)) == 0.0
    K2 = s.internal_force(np.full(s.ndof_free, 1e-3))[1]
    assert np.shares_memory(K2.indptr, K.indptr) and np.shares_memory(K2.indices, K.indices)


# ------------------------------------------------------------------------------------------------
# (3) rigid motions
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("membrane", MEMBRANES)
def test_rigid_translation_gives_zero_energy_and_leaves_energy_invariant(membrane):
    model = model_of(curved_mesh())
    s = NonlinearBeamStructure(model, membrane=membrane)
    c = np.array([0.3, -0.2, 0.5])                           # m, far beyond small displacements
    t = np.zeros((model.n_nodes, 6))
    t[:, :3] = c
    t = t.reshape(-1)[s.free]
    f, _ = s.internal_force(t)
    assert s.strain_energy(t) == pytest.approx(0.0, abs=1e-20)
    assert np.abs(f).max() <= 1e-6                           # N; roundoff of EA/L * 1e-16
    rng = np.random.default_rng(3)
    u = rng.normal(size=s.ndof_free) * 1e-3
    assert s.strain_energy(u + t) == pytest.approx(s.strain_energy(u), rel=1e-10)
    # translation invariance: the internal forces of any state sum to zero (Nikravesh 2002, eq. 3.14c)
    f = s.internal_force(u)[0]
    resultant = s.expand(f).reshape(-1, 6)[:, :3].sum(axis=0)
    assert np.abs(resultant).max() <= 1e-12 * np.abs(f).max()
    # an axial translation of a straight beam
    straight = model_of(line_mesh(5, 1.0, direction=(1.0, 2.0, -0.5)))
    sa = NonlinearBeamStructure(straight, membrane=membrane)
    axial = np.zeros((straight.n_nodes, 6))
    axial[:, :3] = 0.7 * np.array([1.0, 2.0, -0.5]) / math.sqrt(5.25)
    assert sa.strain_energy(axial.reshape(-1)) == pytest.approx(0.0, abs=1e-20)


@pytest.mark.parametrize("beam", THEORIES)
@pytest.mark.parametrize("membrane", MEMBRANES)
def test_finite_rigid_rotation_has_zero_strain(beam, membrane):
    """A finite rotation Q of a straight beam, nodal slopes set to those of Q e_x, strains nothing.

    The u'^2 term makes eps = (|Q e_x|^2 - 1)/2 = 0 exactly (theory §6.2); without it the
    membrane strain would be -(1 - cos a)^2/2 = -3e-3 here and the energy 5e-3 of the linear
    model's. What remains is round-off of the bending quadratic form, eps_machine times the
    linear energy; the bound 1e-12 of it leaves a margin of 1e3-1e4.
    """
    direction = np.array([1.0, 2.0, -0.5]) / math.sqrt(5.25)
    model = model_of(line_mesh(6, 1.5, direction), beam)
    s = NonlinearBeamStructure(model, membrane=membrane)
    R = s.kernels[0].R[0]                                    # rows e_x, e_y, e_z (all elements alike)
    Q = sla.expm(np.cross(np.eye(3), 0.4 * np.array([0.3, -0.8, 0.5])))   # rotation by 0.4 rad
    slope = R @ Q @ R[0]                                     # (1 + u', v', w') in local axes
    u = np.zeros((model.n_nodes, 6))
    u[:, :3] = model.points @ (Q - np.eye(3)).T
    u[:, 3:] = R.T @ np.array([0.0, -slope[2], slope[1]])   # theta_y = -w', theta_z = v'
    u = u.reshape(-1)
    f, _ = s.internal_force(u)
    linear_energy = 0.5 * u @ (model.K @ u)                  # what a linear model would store
    assert s.strain_energy(u) <= 1e-12 * linear_energy
    assert np.abs(f).max() <= 1e-9 * np.abs(model.K @ u).max()


# ------------------------------------------------------------------------------------------------
# (4) linear limit and exact solutions of the theory
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("membrane", MEMBRANES)
def test_cantilever_small_tip_load_matches_PL3_over_3EI(membrane):
    """Tip deflection P L^3 / (3 EI) and rotation P L^2 / (2 EI) (Hermite beams are exact for end
    loads); P gives deflection 1e-5 L, so the nonlinear terms change it by O(1e-10)."""
    L, n = 1.2, 10
    model = model_of(line_mesh(n, L))
    s = NonlinearBeamStructure(model, model.dofs(0))
    EI = STEEL.E * SECTION.Iz
    P = 1e-5 * L * 3 * EI / L**3
    load = np.zeros(s.ndof_free)
    load[free_index(s, int(model.dofs(n, "uy")[0]))] = P
    u_free = newton(s, load)
    tip = s.expand(u_free)[model.dofs(n)]
    assert tip[1] == pytest.approx(P * L**3 / (3 * EI), rel=1e-8)
    assert tip[5] == pytest.approx(P * L**2 / (2 * EI), rel=1e-8)
    assert np.abs(s.axial_force(u_free)).max() <= 1e-6 * P


def test_tip_moment_bends_inextensionally_with_average_membrane_strain():
    """A tip moment M on a cantilever: the exact solution of the theory is v = M x^2 / (2 EI) with
    zero membrane strain. The element-mean strain reproduces it with 4 elements at a tip rotation
    of 0.3 rad; the pointwise strain locks (theory §6.3)."""
    L, n = 1.0, 4
    model = model_of(line_mesh(n, L))
    EI = STEEL.E * SECTION.Iz
    M = 0.3 * EI / L
    tips = {}
    for membrane in MEMBRANES:
        s = NonlinearBeamStructure(model, model.dofs(0), membrane=membrane)
        load = np.zeros(s.ndof_free)
        load[free_index(s, int(model.dofs(n, "rz")[0]))] = M
        u = newton(s, load)
        tips[membrane] = s.expand(u)[model.dofs(n, "uy")[0]]
        if membrane == "average":
            assert np.abs(s.axial_force(u)).max() <= 1e-9 * M / L
            kappa = s.curvature(u)                           # (w'', v'') at both ends of every element
            assert kappa[..., 1] == pytest.approx(np.full((n, 2), M / EI), rel=1e-9)
            assert np.abs(kappa[..., 0]).max() <= 1e-12 * M / EI
            assert s.section_forces(u)[..., 5] == pytest.approx(np.full((n, 2), M), rel=1e-9)
    assert tips["average"] == pytest.approx(M * L**2 / (2 * EI), rel=1e-9)
    # measured: the pointwise strain gives 46 % (4 elements), 62 % (8), 78 % (16) of the deflection
    assert tips["pointwise"] < 0.5 * tips["average"]


def test_section_forces_reduce_to_the_linear_kernel():
    model = model_of(curved_mesh(), "timoshenko", BeamSection.rectangle(0.02, 0.03, orientation=(0.3, 0.2, 1.0)))
    s = NonlinearBeamStructure(model, model.dofs(0))
    u = np.random.default_rng(1).normal(size=s.ndof_free) * 1e-9
    S = s.section_forces(u)
    S_lin = model.element_stresses(s.expand(u))["line"]
    assert np.abs(S[..., 1:] - S_lin[..., 1:]).max() <= 1e-12 * np.abs(S_lin).max()
    assert S[..., 0] == pytest.approx(S_lin[..., 0], rel=1e-6)          # N differs at O(|u|^2)
    assert s.axial_force(u) == pytest.approx(S_lin[..., 0].mean(axis=1), rel=1e-6)


# ------------------------------------------------------------------------------------------------
# (5) geometric stiffening by axial tension
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("membrane", MEMBRANES)
def test_tension_stiffens_bending_like_the_string_beam(membrane):
    """Simply supported beam pre-stretched by T with T L^2 / (pi^2 EI) = 1, planar x-y.

    The tangent at the Newton solution gives the bending frequencies of ``K + N K_g`` of the linear
    model (they differ only on the axial dofs) to the eigensolver's round-off, and, for mode 1, the
    string-beam value
    ``w^2 = (pi/L)^4 EI/(rho A) + (pi/L)^2 N/(rho A)`` (rtol 1e-6: 40 Hermite elements, measured
    error 1.3e-8). ``N = T/(1 + u')`` is the axial force conjugate to the Green-Lagrange strain.
    """
    L, n = 2.0, 40
    model = model_of(line_mesh(n, L))
    fixed = planar_fixed(model, n, pinned_end=True)
    s = NonlinearBeamStructure(model, fixed, membrane=membrane)
    EI, EA, rhoA = STEEL.E * SECTION.Iz, STEEL.E * SECTION.A, STEEL.rho * SECTION.A
    T = math.pi**2 * EI / L**2
    load = np.zeros(s.ndof_free)
    load[free_index(s, int(model.dofs(n, "ux")[0]))] = T
    u = newton(s, load)
    N = s.axial_force(u)
    strain = T / EA
    assert N == pytest.approx(T / (1.0 + strain), rel=1e-6)
    M, K, _ = model.reduce(fixed)
    M = M.toarray()
    w_t = np.sqrt(sla.eigh(s.tangent_dense(u), M, eigvals_only=True, subset_by_index=[0, 2]))
    w_0 = np.sqrt(sla.eigh(K.toarray(), M, eigvals_only=True, subset_by_index=[0, 2]))
    unit = np.zeros(model.ndof)
    unit[model.dofs(n, "ux")] = 1.0
    Kg = model.geometric_stiffness(model.static(unit, fixed))[s.free][:, s.free].toarray()
    w_g = np.sqrt(sla.eigh(K.toarray() + N.mean() * Kg, M, eigvals_only=True, subset_by_index=[0, 2]))
    # LAPACK returns each eigenvalue w^2 to about p(n) eps lambda_max (LAPACK Users' Guide, 3rd ed.,
    # sec. 4.10.1), p(n) = sqrt(n) (Higham 2002, sec. 2.8), so two w computed from different
    # matrices may differ by that over w: 8e-8 relative for mode 1 (lambda_max / w_1^2 = 3.3e7 here);
    # measured up to 2.4e-9 under reference BLAS and four OpenBLAS kernels.
    n_free = s.ndof_free
    lam_max = sla.eigh(s.tangent_dense(u), M, eigvals_only=True, subset_by_index=[n_free - 1, n_free - 1])[0]
    assert np.all(np.abs(w_t - w_g) <= math.sqrt(n_free) * np.finfo(float).eps * lam_max / w_g)
    k = math.pi / L
    w_string = math.sqrt(k**4 * EI / rhoA + k**2 * N.mean() / rhoA)
    assert w_t[0] == pytest.approx(w_string, rel=1e-6)
    assert w_t[0] / w_0[0] == pytest.approx(math.sqrt(2.0), rel=1e-4)   # the stiffening itself


# ------------------------------------------------------------------------------------------------
# (6) buckling of a pinned column
# ------------------------------------------------------------------------------------------------
def _min_eigenvalue_under_compression(s: NonlinearBeamStructure, P: float, load_dof: int) -> float:
    load = np.zeros(s.ndof_free)
    load[free_index(s, load_dof)] = -P
    u = newton(s, load)
    return float(np.linalg.eigvalsh(s.tangent_dense(u))[0])


@pytest.mark.parametrize("membrane", MEMBRANES)
def test_pinned_column_tangent_loses_definiteness_at_euler_load(membrane):
    """The tangent of the straight equilibrium under compression P becomes indefinite at
    pi^2 EI / L^2: positive definite at 0.99 P_E, indefinite at 1.01 P_E; the bisected critical
    load is within 1 % of P_E (measured ratio 0.99992 with 20 elements, 1 - P_E/EA = 0.99992:
    N = -P/(1 + u') reaches the discrete Euler load slightly before P does)."""
    L, n = 2.0, 20
    model = model_of(line_mesh(n, L))
    s = NonlinearBeamStructure(model, planar_fixed(model, n, pinned_end=True), membrane=membrane)
    EI = STEEL.E * SECTION.Iz
    P_E = math.pi**2 * EI / L**2
    dof = int(model.dofs(n, "ux")[0])
    assert _min_eigenvalue_under_compression(s, 0.99 * P_E, dof) > 0.0
    assert _min_eigenvalue_under_compression(s, 1.01 * P_E, dof) < 0.0
    lo, hi = 0.99, 1.01
    for _ in range(14):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if _min_eigenvalue_under_compression(s, mid * P_E, dof) > 0.0 else (lo, mid)
    ratio = 0.5 * (lo + hi)
    assert ratio == pytest.approx(1.0, abs=1e-2)
    assert ratio == pytest.approx(1.0 - P_E / (STEEL.E * SECTION.A), abs=1e-5)


# ------------------------------------------------------------------------------------------------
# input checks
# ------------------------------------------------------------------------------------------------
def test_refuses_models_with_other_elements():
    points = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1], [2, 0, 0]], dtype=float)
    mesh = FEMesh(points, {"tetra": np.array([[0, 1, 2, 3]]), "line": np.array([[1, 4]])})
    model = FEModel(mesh, STEEL, sections=SECTION)
    with pytest.raises(ModelError, match=r"only of 2-node beam elements.*1 'tetra' \(solid\)"):
        NonlinearBeamStructure(model)
    with pytest.raises(ModelError, match="needs an FEModel"):
        NonlinearBeamStructure("model")


def test_refuses_bad_dofs_and_states():
    model = model_of(line_mesh(3, 1.0))
    with pytest.raises(ModelError, match=r"fixed dofs \[24\] lie outside the model's dofs \[0, 24\)"):
        NonlinearBeamStructure(model, [0, 24])
    with pytest.raises(ModelError, match=r"fixed dofs \[-1\]"):
        NonlinearBeamStructure(model, [-1])
    with pytest.raises(ModelError, match="integer"):
        NonlinearBeamStructure(model, [1.5])
    with pytest.raises(ModelError, match="membrane"):
        NonlinearBeamStructure(model, membrane="reduced")
    s = NonlinearBeamStructure(model, model.dofs(0))
    assert s.ndof_free == 18 and s.free[0] == 6
    with pytest.raises(ModelError, match=r"shape \(18,\)"):
        s.internal_force(np.zeros(24))
    bad = np.zeros(18)
    bad[4] = np.nan
    with pytest.raises(NonFiniteError, match=r"global dofs \[10\]"):
        s.strain_energy(bad)
