"""Flat shell elements (MITC4 quad, MITC3 triangle): docs/theory-shells.md §10.

Patch tests, rigid-body modes, mass, shear locking, Leissa's plate frequencies,
buckling and prestress (geometric stiffness), stress recovery, drilling sensitivity.
Every tolerance is stated where it is used, with the reason for its size.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from flexmb.errors import MeshError, ModelError
from flexmb.fem.elements import shell
from flexmb.fem.elements.base import ElementProperties
from flexmb.fem.elements.shell_common import SHEAR_CORRECTION
from flexmb.fem.materials import Material
from flexmb.rotations import A as rotation_matrix
from flexmb.rotations import from_axis_angle

KINDS = ("quad", "tri")
STIFFNESS = {"quad": shell.quad_stiffness, "tri": shell.tri_stiffness}
MASS = {"quad": shell.quad_mass, "tri": shell.tri_mass}
GEOMETRIC = {"quad": shell.quad_geometric_stiffness, "tri": shell.tri_geometric_stiffness}
STRESS = {"quad": shell.quad_stress, "tri": shell.tri_stress}

# A general orientation, so that every test also exercises the local frames (eq. S1-S3).
ROT = rotation_matrix(from_axis_angle(np.array([1.0, 2.0, 3.0]) / np.sqrt(14.0), 0.6))
ORIGIN = np.array([0.3, -0.2, 0.5])


# ----------------------------------------------------------------------------------------------
# meshes and assembly
# ----------------------------------------------------------------------------------------------
def grid(nx: int, ny: int, a: float = 1.0, b: float = 1.0,
         tri: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Structured nx x ny mesh of [0, a] x [0, b] in the xy-plane: points (n, 3), cells."""
    x, y = np.meshgrid(np.linspace(0.0, a, nx + 1), np.linspace(0.0, b, ny + 1))
    points = np.column_stack([x.ravel(), y.ravel(), np.zeros(x.size)])
    i, j = np.meshgrid(np.arange(nx), np.arange(ny))
    n0 = (j * (nx + 1) + i).ravel()
    quads = np.column_stack([n0, n0 + 1, n0 + nx + 2, n0 + nx + 1])
    return points, split(quads) if tri else quads


def split(quads: np.ndarray) -> np.ndarray:
    """Each quad a-b-c-d into triangles a-b-c and a-c-d (counter-clockwise kept)."""
    return np.concatenate([quads[:, [0, 1, 2]], quads[:, [0, 2, 3]]])


def kind_of(cells: np.ndarray) -> str:
    return "quad" if cells.shape[1] == 4 else "tri"


def assemble(Ke: np.ndarray, cells: np.ndarray, nnodes: int) -> sp.csr_matrix:
    """COO -> CSR assembly of stacked element matrices (6 dofs per node, node-major)."""
    dofs = (cells[:, :, None] * 6 + np.arange(6)).reshape(cells.shape[0], -1)
    rows = np.broadcast_to(dofs[:, :, None], Ke.shape).ravel()
    cols = np.broadcast_to(dofs[:, None, :], Ke.shape).ravel()
    return sp.coo_matrix((Ke.ravel(), (rows, cols)), shape=(6 * nnodes, 6 * nnodes)).tocsr()


def model(points: np.ndarray, cells: np.ndarray, E: float, nu: float, t: float, rho: float = 1.0,
          **options: float) -> tuple[sp.csr_matrix, sp.csr_matrix]:
    """Assembled stiffness and consistent mass."""
    kind, X = kind_of(cells), points[cells]
    K = assemble(STIFFNESS[kind](X, E, nu, t, **options), cells, len(points))
    M = assemble(MASS[kind](X, rho, t), cells, len(points))
    return K, M


def rigid_modes(points: np.ndarray) -> np.ndarray:
    """Six rigid-body dof vectors (6, 6 n): translations, then rotations ``u = w x x``."""
    modes = np.zeros((6, len(points), 6))
    for k, w in enumerate(np.eye(3)):
        modes[k, :, k] = 1.0
        modes[3 + k, :, :3] = np.cross(w, points)
        modes[3 + k, :, 3:] = w
    return modes.reshape(6, -1)


def solve_with_prescribed(K: sp.csr_matrix, f: np.ndarray, fixed: np.ndarray,
                          values: np.ndarray) -> np.ndarray:
    """Solve K u = f with ``u[fixed] = values[fixed]``."""
    u = np.where(fixed, values, 0.0)
    free = ~fixed
    rhs = f[free] - K[free][:, fixed] @ u[fixed]
    u[free] = spla.spsolve(K[free][:, free].tocsc(), rhs)
    return u


def in_plane(stress_voigt: np.ndarray, frame: np.ndarray, plane: np.ndarray = np.eye(3)) -> np.ndarray:
    """Local (xx, yy, xy) tensors expressed in the axes of ``plane`` (rows = axes): (ne, 3)."""
    T = shell.plane_tensor_to_global(frame, stress_voigt)
    T = np.einsum("ik,ekl,jl->eij", plane, T, plane)
    return np.column_stack([T[:, 0, 0], T[:, 1, 1], T[:, 0, 1]])


# ----------------------------------------------------------------------------------------------
# patch tests on the MacNeal-Harder patch (MacNeal & Harder 1985), tilted in 3D
# ----------------------------------------------------------------------------------------------
MH_XY = np.array([[0.0, 0.0], [0.24, 0.0], [0.24, 0.12], [0.0, 0.12],
                  [0.04, 0.02], [0.18, 0.03], [0.16, 0.08], [0.08, 0.08]])
MH_QUADS = np.array([[0, 1, 5, 4], [1, 2, 6, 5], [2, 3, 7, 6], [3, 0, 4, 7], [4, 5, 6, 7]])
MH_E, MH_NU, MH_T = 1.0e6, 0.25, 0.001
MH_BOUNDARY = np.arange(4)


def mh_points() -> np.ndarray:
    return ORIGIN + np.column_stack([MH_XY, np.zeros(len(MH_XY))]) @ ROT.T


def mh_cells(kind: str) -> np.ndarray:
    return MH_QUADS if kind == "quad" else split(MH_QUADS)


def membrane_field(xy: np.ndarray) -> np.ndarray:
    """u = 1e-3 (x + y/2), v = 1e-3 (y + x/2): eps = gamma = 1e-3, omega = 0 (MacNeal-Harder)."""
    out = np.zeros((len(xy), 6))
    out[:, 0] = 1e-3 * (xy[:, 0] + xy[:, 1] / 2)
    out[:, 1] = 1e-3 * (xy[:, 1] + xy[:, 0] / 2)
    return out


def bending_field(xy: np.ndarray) -> np.ndarray:
    """w = 1e-3 (1 + x + y + x^2 + x y + y^2) / 2 with Kirchhoff rotations (eq. S4):
    theta_x = w_y, theta_y = -w_x; curvatures k = (-1e-3, -1e-3, -1e-3)."""
    x, y = xy[:, 0], xy[:, 1]
    out = np.zeros((len(xy), 6))
    out[:, 2] = 1e-3 * (1 + x + y + x**2 + x * y + y**2) / 2
    out[:, 3] = 1e-3 * (1 + x + 2 * y) / 2
    out[:, 4] = -1e-3 * (1 + 2 * x + y) / 2
    return out


def to_global_dofs(local: np.ndarray) -> np.ndarray:
    """Patch-plane dof fields (n, 6) -> global dof vector (6 n)."""
    return np.column_stack([local[:, :3] @ ROT.T, local[:, 3:] @ ROT.T]).ravel()


def run_patch(kind: str, field) -> tuple[np.ndarray, np.ndarray, shell.ShellStress]:
    """Prescribe ``field`` on the four outer nodes; return computed, exact dofs and stresses."""
    points, cells = mh_points(), mh_cells(kind)
    K, _ = model(points, cells, MH_E, MH_NU, MH_T)
    exact = to_global_dofs(field(MH_XY))
    fixed = np.zeros((len(points), 6), bool)
    fixed[MH_BOUNDARY] = True
    u = solve_with_prescribed(K, np.zeros(K.shape[0]), fixed.ravel(), exact)
    u_e = u.reshape(len(points), 6)[cells].reshape(len(cells), -1)
    stress = STRESS[kind](points[cells], MH_E, MH_NU, MH_T, u_e)
    return u, exact, stress


def section_exact(strain: np.ndarray, thickness_power: int) -> np.ndarray:
    """Plane-stress ``C t^p / (12 if p == 3)`` times Voigt strain (eqs. S5-S6)."""
    c = MH_E / (1 - MH_NU**2)
    C = c * np.array([[1, MH_NU, 0], [MH_NU, 1, 0], [0, 0, (1 - MH_NU) / 2]])
    scale = MH_T if thickness_power == 1 else MH_T**3 / 12
    return scale * C @ strain


# Patch tests are exact in exact arithmetic; 1e-7 relative leaves room for the round-off of
# a stiffness with condition number ~1e8 (membrane E t vs bending D / h^2 at t/h = 0.01;
# measured errors up to 6e-9), while a failed patch test shows errors of 1e-3 or more.
PATCH_RTOL = 1e-7
# Stresses come from differences of nodal values across an element: in the bending patch the
# rotations (|theta| <= 8e-4) change by only curvature * side = 1e-3 * 0.045 over the smallest
# element, so their relative round-off grows 18-fold in the curvatures and moments (measured
# up to 2.9e-8 under reference BLAS and four OpenBLAS kernels).
STRESS_RTOL = 20 * PATCH_RTOL


@pytest.mark.parametrize("kind", KINDS)
def test_membrane_patch_constant_strain(kind):
    u, exact, stress = run_patch(kind, membrane_field)
    np.testing.assert_allclose(u, exact, rtol=0, atol=PATCH_RTOL * np.abs(exact).max())
    N = in_plane(stress.N, stress.frame, ROT.T)
    N_exact = section_exact(np.array([1e-3, 1e-3, 1e-3]), 1)
    np.testing.assert_allclose(N, np.broadcast_to(N_exact, N.shape), rtol=PATCH_RTOL)
    # MacNeal & Harder's published stresses: sigma_x = sigma_y = 1333, tau_xy = 400.
    np.testing.assert_allclose(N_exact / MH_T, [1333.333333, 1333.333333, 400.0], rtol=1e-9)
    # No bending: M and Q vanish to round-off relative to N times the patch size.
    assert np.abs(stress.M).max() < PATCH_RTOL * N_exact.max() * 0.12
    assert np.abs(stress.Q).max() < PATCH_RTOL * N_exact.max()


@pytest.mark.parametrize("kind", KINDS)
def test_bending_patch_constant_curvature(kind):
    u, exact, stress = run_patch(kind, bending_field)
    np.testing.assert_allclose(u, exact, rtol=0, atol=PATCH_RTOL * np.abs(exact).max())
    M = in_plane(stress.M, stress.frame, ROT.T)
    M_exact = section_exact(np.array([-1e-3, -1e-3, -1e-3]), 3)
    np.testing.assert_allclose(M, np.broadcast_to(M_exact, M.shape), rtol=STRESS_RTOL)
    # MacNeal & Harder's published surface stresses: |sigma| = 0.667, |tau| = 0.200.
    top = in_plane(stress.top, stress.frame, ROT.T)
    np.testing.assert_allclose(top, np.broadcast_to([-2 / 3, -2 / 3, -0.2], top.shape), rtol=STRESS_RTOL)
    np.testing.assert_allclose(in_plane(stress.bottom, stress.frame, ROT.T), -top, rtol=STRESS_RTOL)
    # Kirchhoff state: the MITC shear at the edge midpoints vanishes exactly (eqs. S11, S11t). Its
    # two terms, k G t w_s and k G t theta, each of size k G t |theta| (0.27 N/m), cancel and leave
    # their round-off: the solution's relative error (PATCH_RTOL) of that size, 2.7e-8 N/m (measured
    # up to 1.3e-13 N/m). A wrong interpolation leaves Q ~ M / (patch size) = 9.3e-7 N/m.
    theta = np.abs(bending_field(MH_XY)[:, 3:5]).max()
    shear_terms = SHEAR_CORRECTION * MH_E / (2 * (1 + MH_NU)) * MH_T * theta
    assert np.abs(stress.Q).max() < PATCH_RTOL * shear_terms


# ----------------------------------------------------------------------------------------------
# rigid-body modes, symmetry, semi-definiteness, drilling
# ----------------------------------------------------------------------------------------------
def distorted_grid(kind: str, n: int = 4) -> tuple[np.ndarray, np.ndarray]:
    """n x n mesh of the unit square, interior nodes moved, tilted into 3D."""
    points, cells = grid(n, n, tri=kind == "tri")
    inner = (points[:, :2] > 0.01).all(axis=1) & (points[:, :2] < 0.99).all(axis=1)
    rng = np.random.default_rng(7)
    points[inner, :2] += rng.uniform(-0.08, 0.08, (inner.sum(), 2))
    return ORIGIN + points @ ROT.T, cells


# A zero eigenvalue is below 1e-10 of the largest (measured ~1e-16: round-off); the smallest
# elastic one is ~1e-7 of it (measured 1.4e-7 to 4e-7: drilling alpha = 1e-3 and (t/h)^2),
# so 1e-8 separates the two with margin on both sides.
ZERO, ELASTIC = 1e-10, 1e-8


@pytest.mark.parametrize("kind", KINDS)
def test_free_element_has_exactly_six_rigid_body_modes(kind):
    cells = mh_cells(kind)[:1]
    points = mh_points() * 5.0
    K = STIFFNESS[kind](points[cells], 2.0e11, 0.3, 0.05)[0]
    scale = np.abs(K).max()
    assert np.abs(K - K.T).max() < 1e-14 * scale
    lam = np.linalg.eigvalsh(K)
    assert lam[0] > -ZERO * lam[-1]
    assert np.sum(lam < ZERO * lam[-1]) == 6 and lam[6] > ELASTIC * lam[-1]
    r = rigid_modes(points[cells[0]])
    assert np.abs(K @ r.T).max() < 1e-12 * scale * np.abs(r).max()


def test_warped_quad_keeps_rigid_body_modes():
    # Nodes alternately 0.05 above and below the mean plane of a unit element (eq. S2w): the
    # rigid links keep the six rigid motions exact, for K, and for M and Kg (consistent).
    flat = np.array([[0.0, 0.0, 0.05], [1.0, 0.1, -0.05], [1.1, 1.0, 0.05], [0.1, 0.9, -0.05]])
    X = ORIGIN + flat @ ROT.T
    K = shell.quad_stiffness(X[None], 2.0e11, 0.3, 0.05)[0]
    lam = np.linalg.eigvalsh(K)
    assert np.sum(lam < ZERO * lam[-1]) == 6 and lam[6] > ELASTIC * lam[-1]
    r = rigid_modes(X)
    assert np.abs(K @ r.T).max() < 1e-12 * np.abs(K).max()
    # Kg of a uniform tension does no work in rigid translations; M keeps the translational mass.
    Kg = shell.quad_geometric_stiffness(X[None], np.array([1.0, 1.0, 0.0]))[0]
    assert np.abs(Kg @ r[:3].T).max() < 1e-12 * np.abs(Kg).max()
    M = shell.quad_mass(X[None], 1.0, 0.05)[0]
    area = 0.5 * np.linalg.norm(np.cross(flat[2] - flat[0], flat[3] - flat[1]))
    assert r[0] @ M @ r[0] == pytest.approx(0.05 * area, rel=1e-12)


@pytest.mark.parametrize("kind", KINDS)
def test_free_mesh_has_exactly_six_zero_modes_only_with_drilling(kind):
    points, cells = distorted_grid(kind)
    K, _ = model(points, cells, 2.0e11, 0.3, 0.05)
    lam = np.linalg.eigvalsh(K.toarray())
    assert np.sum(lam < ZERO * lam[-1]) == 6 and lam[6] > ELASTIC * lam[-1]
    assert lam[0] > -ZERO * lam[-1]
    assert np.abs(K @ rigid_modes(points).T).max() < 1e-12 * np.abs(K).max()
    # Without the drilling penalty a flat mesh has one spurious zero mode per node.
    K0, _ = model(points, cells, 2.0e11, 0.3, 0.05, drill=0.0)
    lam0 = np.linalg.eigvalsh(K0.toarray())
    assert np.sum(lam0 < ZERO * lam0[-1]) == 6 + len(points)


# ----------------------------------------------------------------------------------------------
# mass
# ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("lumped", [False, True])
@pytest.mark.parametrize("kind", KINDS)
def test_mass_totals_and_definiteness(kind, lumped):
    points, cells = distorted_grid(kind)
    rho, t = 7800.0, 0.02
    Me = MASS[kind](points[cells], rho, t, lumped=lumped)
    M = assemble(Me, cells, len(points))
    area = 1.0   # the distorted mesh still covers the unit square
    modes = rigid_modes(points)
    for k in range(3):          # translation: rho t A in every direction (eq. S13)
        assert modes[k] @ M @ modes[k] == pytest.approx(rho * t * area, rel=1e-12)
    for k in range(3):          # unit rotation dofs alone: rho t^3 / 12 A (eq. S13)
        rot = np.zeros((len(points), 6))
        rot[:, 3 + k] = 1.0
        assert rot.ravel() @ M @ rot.ravel() == pytest.approx(rho * t**3 / 12 * area, rel=1e-12)
    assert np.abs(Me - np.swapaxes(Me, 1, 2)).max() < 1e-15 * np.abs(Me).max()
    assert np.linalg.eigvalsh(Me).min() > 0.0
    if lumped:
        assert np.count_nonzero(Me - np.einsum("eij,ij->eij", Me, np.eye(Me.shape[1]))) == 0


# ----------------------------------------------------------------------------------------------
# thin cantilever strip: shear locking and stress recovery
# ----------------------------------------------------------------------------------------------
def cantilever_strip(kind: str, t: float, nx: int = 16, ny: int = 2):
    """Strip L = 1, b = 0.1 in cylindrical bending (theta_x = 0), clamped at x = 0,
    total tip load P = 1 N in z. Returns tip deflection, closed form P L^3 / (3 D b), stresses."""
    L, b, E, nu, P = 1.0, 0.1, 2.0e11, 0.3, 1.0
    points, cells = grid(nx, ny, L, b, tri=kind == "tri")
    K, _ = model(points, cells, E, nu, t)
    fixed = np.zeros((len(points), 6), bool)
    fixed[np.isclose(points[:, 0], 0.0)] = True
    fixed[:, 3] = True
    tip = np.flatnonzero(np.isclose(points[:, 0], L))
    f = np.zeros((len(points), 6))
    f[tip, 2] = P / ny
    f[tip[[0, -1]], 2] = P / (2 * ny)
    u = solve_with_prescribed(K, f.ravel(), fixed.ravel(), np.zeros(f.size)).reshape(-1, 6)
    D = E * t**3 / (12 * (1 - nu**2))
    stress = STRESS[kind](points[cells], E, nu, t, u[cells].reshape(len(cells), -1))
    centroids = points[cells].mean(axis=1)
    return u[tip, 2].mean(), P * L**3 / (3 * D * b), stress, centroids, P, L / nx, b


@pytest.mark.parametrize("kind", KINDS)
def test_thin_cantilever_strip_does_not_lock(kind):
    # t/L = 1e-3. Tolerance 2% (issue): the 16 x 2 mesh has an O(h^2) discretization error
    # (measured -0.10% quad, -0.04% triangles); a locking element is off by a large factor.
    w, w_exact, *_ = cantilever_strip(kind, t=1e-3)
    assert w == pytest.approx(w_exact, rel=0.02)


def test_mitc3_stabilization_removes_locking():
    # Why the triangle carries the Lyly-Stenberg-Vihinen factor (eq. S11s): plain MITC3 locks
    # in a thin (t/a = 1e-3) simply supported plate (measured lambda_1 = 43.5 on 8 x 8, twice
    # the exact 19.74), the stabilized element is within 4% (20.45) on the same mesh.
    plain = leissa("tri", "ss", 8, t=1e-3, shear_stab=0.0)[0]
    stabilized = leissa("tri", "ss", 8, t=1e-3)[0]
    assert plain > 1.5 * LEISSA_SS[0]
    assert stabilized == pytest.approx(LEISSA_SS[0], rel=0.04)


@pytest.mark.parametrize("kind", KINDS)
def test_strip_stress_recovery(kind):
    t = 1e-3
    _, _, stress, centroids, P, h, b = cantilever_strip(kind, t=t)
    M = in_plane(stress.M, stress.frame)
    # M_xx = -P (L - x) / b (M = D k, k_xx = -w_xx, eq. S9). Constant-curvature elements
    # represent the linear moment to within half its change over one element, (P / b) h / 2.
    M_exact = -P * (1.0 - centroids[:, 0]) / b
    np.testing.assert_allclose(M[:, 0], M_exact, rtol=0, atol=0.5 * P / b * h)
    top = in_plane(stress.top, stress.frame)
    np.testing.assert_allclose(top[:, 0], 6 * M[:, 0] / t**2 + in_plane(stress.N, stress.frame)[:, 0] / t,
                               rtol=1e-12)
    # Q_x = dM_xx/dx = P / b (Mindlin plate equilibrium; docs §9): mean over the elements within 2%
    # (the MITC shear of a single element oscillates about it; the mean is the resultant).
    Qx = np.einsum("ei,ei->e", stress.Q, stress.frame[:, :2, 0])
    assert Qx.mean() == pytest.approx(P / b, rel=0.02)


# ----------------------------------------------------------------------------------------------
# free vibration of square plates (Leissa 1969, NASA SP-160)
# ----------------------------------------------------------------------------------------------
PLATE = dict(a=1.0, E=2.0e11, nu=0.3, rho=7800.0, t=0.01)     # t/a = 0.01: Mindlin ~ Kirchhoff
LEISSA_SS = np.array([2 * np.pi**2, 5 * np.pi**2, 5 * np.pi**2, 8 * np.pi**2])   # 19.739, 49.348 x2, 78.957
LEISSA_CFFF = np.array([3.492, 8.525, 21.43, 27.33, 31.11])
MESHES = (8, 16, 32)


def plate_D(t: float = PLATE["t"]) -> float:
    return PLATE["E"] * t**3 / (12 * (1 - PLATE["nu"] ** 2))


def plate_supports(points: np.ndarray, support: str) -> np.ndarray:
    """Fixed-dof mask. "ss": hard simple support (w and the rotation about the edge normal,
    plus u, v, which are decoupled from bending in a flat plate); "cfff": clamped at x = 0."""
    a = PLATE["a"]
    fixed = np.zeros((len(points), 6), bool)
    x, y = points[:, 0], points[:, 1]
    if support == "cfff":
        fixed[np.isclose(x, 0.0)] = True
        return fixed.ravel()
    ex = np.isclose(x, 0.0) | np.isclose(x, a)
    ey = np.isclose(y, 0.0) | np.isclose(y, a)
    fixed[ex | ey, :3] = True
    fixed[ex, 3] = True
    fixed[ey, 4] = True
    return fixed.ravel()


def frequency_parameters(K: sp.csr_matrix, M: sp.csr_matrix, free: np.ndarray, k: int,
                         t: float = PLATE["t"]) -> np.ndarray:
    """lambda = omega a^2 sqrt(rho t / D) of the k lowest modes (shift-invert about 0)."""
    Kf, Mf = K[free][:, free].tocsc(), M[free][:, free].tocsc()
    w2 = np.sort(spla.eigsh(Kf, k=k, M=Mf, sigma=0.0, which="LM", return_eigenvectors=False))
    return np.sqrt(w2) * PLATE["a"] ** 2 * np.sqrt(PLATE["rho"] * t / plate_D(t))


@lru_cache(maxsize=None)
def leissa(kind: str, support: str, n: int, t: float = PLATE["t"], **options: float) -> np.ndarray:
    """Frequency parameters of the square plate on an n x n mesh (cached across tests)."""
    p = PLATE
    points, cells = grid(n, n, p["a"], p["a"], tri=kind == "tri")
    K, M = model(points, cells, p["E"], p["nu"], t, p["rho"], **options)
    k = 4 if support == "ss" else 5
    return frequency_parameters(K, M, ~plate_supports(points, support), k, t)


@pytest.mark.parametrize("kind", KINDS)
def test_leissa_simply_supported_square_plate(kind):
    errors = np.array([np.abs(leissa(kind, "ss", n) / LEISSA_SS - 1) for n in MESHES])
    # Converges: every mode's error falls with each refinement (the reference is exact).
    assert np.all(np.diff(errors, axis=0) < 0)
    # 1% on the 32 x 32 mesh: measured 0.07-0.3% (quad), 0.2-0.7% (triangles), plus a
    # Mindlin shear correction ~1e-4 at t/a = 0.01.
    assert errors[-1].max() < 0.01


@pytest.mark.parametrize("kind", KINDS)
def test_leissa_cantilever_square_plate(kind):
    lam = np.array([leissa(kind, "cfff", n) for n in MESHES])
    # Converges: successive changes shrink for every mode.
    assert np.all(np.abs(lam[2] - lam[1]) < np.abs(lam[1] - lam[0]))
    # 1.5% on 32 x 32: Leissa's CFFF values are Ritz upper bounds about 0.5% above the
    # converged Kirchhoff values; the FE error itself is below 0.5% here.
    np.testing.assert_allclose(lam[-1], LEISSA_CFFF, rtol=0.015)


def test_drilling_penalty_does_not_change_plate_frequencies():
    # In a flat plate theta_z couples only to u, v (eq. S12), not to bending: identical to round-off.
    for kind in KINDS:
        np.testing.assert_allclose(leissa(kind, "cfff", 8, drill=1e-6), leissa(kind, "cfff", 8), rtol=1e-9)


@pytest.mark.parametrize("kind", KINDS)
def test_drilling_penalty_negligible_in_plane(kind):
    # In-plane cantilever (membrane bending, where theta_z follows omega): tip deflection with
    # the default alpha = 1e-3 within 0.1% of alpha = 1e-6 (measured 4e-5; docs §6).
    def tip(drill: float) -> float:
        points, cells = grid(16, 2, 1.0, 0.1, tri=kind == "tri")
        K, _ = model(points, cells, 2.0e11, 0.3, 0.01, drill=drill)
        fixed = np.zeros((len(points), 6), bool)
        fixed[np.isclose(points[:, 0], 0.0)] = True
        fixed[:, 2:5] = True
        tip_nodes = np.flatnonzero(np.isclose(points[:, 0], 1.0))
        f = np.zeros((len(points), 6))
        f[tip_nodes, 1] = 1.0 / len(tip_nodes)
        u = solve_with_prescribed(K, f.ravel(), fixed.ravel(), np.zeros(f.size)).reshape(-1, 6)
        return u[tip_nodes, 1].mean()

    assert tip(shell.DRILL_ALPHA) == pytest.approx(tip(1e-6), rel=1e-3)


# ----------------------------------------------------------------------------------------------
# geometric stiffness
# ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", KINDS)
def test_geometric_stiffness_energy_of_linear_field(kind):
    # For u = d (g . x) (any direction d, in-plane gradient g): u^T Kg u = |d|^2 int g.N.g dA
    # exactly (eq. S15), on the tilted distorted patch; Kg is symmetric and frame-independent.
    points, cells = mh_points(), mh_cells(kind)
    N = np.array([[3.0, 1.5], [1.5, -2.0]])                   # uniform, in the patch axes
    N_global = ROT[:, :2] @ N @ ROT[:, :2].T
    N_local = shell.global_tensor_to_plane(frames(kind, points[cells]), N_global)
    Kg = assemble(GEOMETRIC[kind](points[cells], N_local), cells, len(points))
    g, d = np.array([0.7, -1.3]), np.array([0.2, -0.5, 0.9])
    u = np.zeros((len(points), 6))
    u[:, :3] = np.outer(MH_XY @ g, d)
    exact = (d @ d) * (g @ N @ g) * 0.24 * 0.12
    assert u.ravel() @ Kg @ u.ravel() == pytest.approx(exact, rel=1e-12)
    assert abs(Kg - Kg.T).max() < 1e-14 * abs(Kg).max()


def frames(kind: str, X: np.ndarray) -> np.ndarray:
    return shell.quad_frame(X) if kind == "quad" else shell.tri_frame(X)


def uniform_kg(kind: str, X: np.ndarray, N_xx: float) -> np.ndarray:
    """Element Kg of a uniform N_xx (global x axis) expressed in each element's frame."""
    N_global = np.diag([N_xx, 0.0, 0.0])
    return GEOMETRIC[kind](X, shell.global_tensor_to_plane(frames(kind, X), N_global))


def buckling_factor(kind: str, n: int) -> float:
    """Lowest lambda of (K + lambda Kg(N_xx = -1)) phi = 0, simply supported square plate."""
    p = PLATE
    points, cells = grid(n, n, p["a"], p["a"], tri=kind == "tri")
    X = points[cells]
    K = assemble(STIFFNESS[kind](X, p["E"], p["nu"], p["t"]), cells, len(points))
    Kg = assemble(uniform_kg(kind, X, -1.0), cells, len(points))
    free = ~plate_supports(points, "ss")
    Kf, Gf = K[free][:, free].tocsc(), -Kg[free][:, free].tocsc()
    return float(spla.eigsh(Kf, k=1, M=Gf, sigma=0.0, which="LM", return_eigenvectors=False)[0])


@pytest.mark.parametrize("kind", KINDS)
def test_buckling_simply_supported_plate_uniaxial(kind):
    # N_cr = k pi^2 D / b^2 with k = 4 (Timoshenko & Gere 1961, ch. 9). 16 x 16 mesh:
    # 1.5% covers the O(h^2) error (measured +0.5% quad, +0.7% triangles; docs §10).
    N_cr = 4.0 * np.pi**2 * plate_D() / PLATE["a"] ** 2
    assert buckling_factor(kind, 16) == pytest.approx(N_cr, rel=0.015)


@pytest.mark.parametrize("kind", KINDS)
def test_tension_raises_first_frequency_as_closed_form(kind):
    # omega^2 = [D (2 pi^2 / a^2)^2 + N_xx pi^2 / a^2] / (rho t) for mode (1, 1) of a simply
    # supported square plate: w = sin(pi x / a) sin(pi y / a) solves
    # D lap^2 w - N_xx w_xx = rho t omega^2 w exactly (Leissa 1969, plates with in-plane forces).
    # With N_xx = 4 pi^2 D / a^2 the ratio omega^2(N) / omega^2(0) is exactly 2.
    p = PLATE
    n = 16
    points, cells = grid(n, n, p["a"], p["a"], tri=kind == "tri")
    X = points[cells]
    K, M = model(points, cells, p["E"], p["nu"], p["t"], p["rho"])
    T = 4 * np.pi**2 * plate_D() / p["a"] ** 2
    Kg = assemble(uniform_kg(kind, X, T), cells, len(points))
    free = ~plate_supports(points, "ss")
    lam0 = frequency_parameters(K, M, free, 1)[0]
    lam1 = frequency_parameters(K + Kg, M, free, 1)[0]
    # The ratio cancels most discretization error: 1% (measured -0.2% quad, -0.4% triangles);
    # the frequency itself carries the 16 x 16 O(h^2) error: 1.5% (measured +0.3%, +0.7%).
    assert (lam1 / lam0) ** 2 == pytest.approx(2.0, rel=0.01)
    assert lam1 == pytest.approx(np.sqrt(2.0) * LEISSA_SS[0], rel=0.015)


# ----------------------------------------------------------------------------------------------
# interface: input checks and the ElementKernel adapters
# ----------------------------------------------------------------------------------------------
def test_bad_input_is_refused():
    X = mh_points()[MH_QUADS]
    arrow = np.array([[[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.1, 0.1, 0.0], [0.0, 1.0, 0.0]]])
    with pytest.raises(MeshError, match=r"elements \[5\] are inverted"):
        shell.quad_stiffness(np.concatenate([X, arrow]), 1.0, 0.3, 0.1)
    with pytest.raises(MeshError, match="degenerate"):
        shell.tri_stiffness(np.zeros((1, 3, 3)), 1.0, 0.3, 0.1)
    with pytest.raises(ModelError, match="thickness"):
        shell.quad_stiffness(X, 1.0, 0.3, [0.1, 0.1, -0.1, 0.1, 0.1])
    with pytest.raises(ModelError, match="nu"):
        shell.tri_stiffness(mh_points()[split(MH_QUADS)], 1.0, 0.5, 0.1)
    with pytest.raises(ModelError, match="membrane resultants"):
        shell.quad_geometric_stiffness(X, np.ones((2, 3)))


@pytest.mark.parametrize("cls, cells", [(shell.ShellQuad4, MH_QUADS), (shell.ShellTri3, split(MH_QUADS))])
def test_element_kernel_adapters(cls, cells):
    points = mh_points()
    X = points[cells]
    props = ElementProperties.uniform(Material(MH_E, MH_NU, 7800.0), len(cells), thickness=MH_T)
    kernel = cls(X, props)
    kind = "quad" if cls is shell.ShellQuad4 else "tri"
    np.testing.assert_array_equal(kernel.stiffness(), STIFFNESS[kind](X, MH_E, MH_NU, MH_T))
    np.testing.assert_array_equal(kernel.mass(lumped=True), MASS[kind](X, 7800.0, MH_T, lumped=True))
    u = to_global_dofs(membrane_field(MH_XY)).reshape(len(points), 6)[cells].reshape(len(cells), -1)
    state = kernel.stress(u)
    np.testing.assert_array_equal(kernel.geometric_stiffness(state), GEOMETRIC[kind](X, state.N))
    nodal = kernel.nodal_stress(u)
    assert nodal.shape == (len(cells), cells.shape[1], 6)
    # Top-surface stress in global Voigt order: its trace equals that of the local plane state.
    trace = np.repeat(state.top[:, :2].sum(axis=1, keepdims=True), cells.shape[1], axis=1)
    np.testing.assert_allclose(nodal[:, :, :3].sum(axis=2), trace, rtol=1e-12)
    with pytest.raises(ModelError, match="thickness"):
        cls(X, ElementProperties.uniform(Material(MH_E, MH_NU, 1.0), len(cells)))
    with pytest.raises(ModelError, match="unknown options"):
        cls(X, props, drilling=1e-3)
    # Options reach the kernels: the triangle's shear stabilization also reaches its recovery.
    options = {"drill": 1e-4} if cls is shell.ShellQuad4 else {"drill": 1e-4, "shear_stab": 0.0}
    tuned = cls(X, props, **options)
    np.testing.assert_array_equal(tuned.stiffness(), STIFFNESS[kind](X, MH_E, MH_NU, MH_T, **options))
    if cls is shell.ShellTri3:
        u_any = np.random.default_rng(3).normal(size=u.shape)
        expected = shell.tri_stress(X, MH_E, MH_NU, MH_T, u_any, shear_stab=0.0).Q
        np.testing.assert_array_equal(tuned.stress(u_any).Q, expected)
        assert not np.allclose(kernel.stress(u_any).Q, expected)
