"""Patch tests of every element type (Irons & Razzaque 1972; MacNeal & Harder 1985).

A field the element must represent exactly (linear displacement for solids; constant axial
strain, twist rate and curvatures for beams; constant membrane strain and constant curvature
for shells) is prescribed on the boundary nodes of a distorted patch; the interior nodes are
solved for with no load. An element that passes reproduces the field at the interior nodes and
the constant stress in every element, to rounding.
"""
from __future__ import annotations

import numpy as np
import scipy.linalg as sla

from flexmb.fem.elements.shell import plane_tensor_to_global
from flexmb.fem.materials import Material
from flexmb.fem.mesh import FEMesh
from flexmb.fem.model import FEModel
from flexmb.fem.sections import BeamSection
from flexmb.rotations import A as rotation_matrix
from flexmb.rotations import from_axis_angle

from ..framework import CaseResult
from . import meshes

STEEL = meshes.STEEL
EPS = np.finfo(float).eps

# A general orientation for the beam and shell patches, so that the local frames are exercised.
ROT = rotation_matrix(from_axis_angle(np.array([1.0, 2.0, 3.0]) / np.sqrt(14.0), 0.6))
ORIGIN = np.array([0.3, -0.2, 0.5])


def _solve_prescribed(model: FEModel, u_exact: np.ndarray, boundary_dofs: np.ndarray) -> tuple[np.ndarray, float]:
    """Interior dofs from ``K u = 0`` with ``u = u_exact`` on ``boundary_dofs``; also cond(K_ii)."""
    K = model.K.toarray()
    free = np.setdiff1d(np.arange(model.ndof), boundary_dofs)
    u = u_exact.copy()
    u[free] = 0.0
    Kff = K[np.ix_(free, free)]
    u[free] = sla.solve(Kff, -K[np.ix_(free, boundary_dofs)] @ u_exact[boundary_dofs], assume_a="sym")
    return u, float(np.linalg.cond(Kff))


def _rel(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.max(np.abs(a - b)) / np.max(np.abs(b)))


# ----------------------------------------------------------------------------------------------
def _solid(cell_type: str) -> dict:
    """3 x 3 x 3 distorted unit-cube patch, random linear field ``u = a + B x``."""
    points, cells = meshes.solid_box(cell_type, (3, 3, 3), distort=0.25, seed=0)
    model = FEModel(FEMesh(points, {cell_type: cells}), STEEL)
    rng = np.random.default_rng(3)
    B = 1e-3 * rng.uniform(-1.0, 1.0, (3, 3))
    u_exact = (1e-3 * rng.uniform(-1.0, 1.0, 3) + points @ B.T).reshape(-1)
    boundary = np.flatnonzero(np.any((points < 1e-12) | (points > 1.0 - 1e-12), axis=1))
    u, cond = _solve_prescribed(model, u_exact, model.dofs(boundary))
    eps = 0.5 * (B + B.T)
    lam, mu = STEEL.lame
    sig = lam * np.trace(eps) * np.eye(3) + 2.0 * mu * eps
    expected = sig[[0, 1, 2, 1, 0, 0], [0, 1, 2, 2, 2, 1]]
    stress = model.element_stresses(u)[cell_type]
    return {"displacement": _rel(u, u_exact), "stress": _rel(stress, np.broadcast_to(expected, stress.shape)),
            "cond": cond, "patch": f"3x3x3 cube, interior nodes moved up to 25 % of the cell size, {len(cells)} cells"}


def _beam() -> dict:
    """Four beam elements of unequal length on a skew line; constant N, T, My, Mz, zero shear."""
    L = 1.3
    d = ROT @ np.array([1.0, 0.0, 0.0])
    stations = np.array([0.0, 0.13, 0.41, 0.62, 1.0])
    mesh = meshes.line_mesh(4, L, direction=d, origin=ORIGIN, stations=stations)
    sec = BeamSection.rectangle(0.03, 0.05, nu=STEEL.nu, orientation=tuple(ROT @ np.array([0.0, 0.0, 1.0])))
    model = FEModel(mesh, STEEL, sections=sec)
    R = model.chunks[0].kernel.R[0]                     # rows: local x, y, z (global components)
    eps, tau, a, b = 2e-4, 3e-3, 4e-3, -5e-3            # axial strain, twist rate, curvatures (1/m)
    c, w0 = np.array([1e-3, -2e-3, 5e-4]), np.array([2e-3, 1e-3, -3e-3])    # rigid translation, rotation
    s = L * stations
    local_u = np.column_stack([eps * s, a * s**2 / 2, b * s**2 / 2])
    local_t = np.column_stack([tau * s, -b * s, a * s])     # theta_y = -w', theta_z = v' (docs §4.2)
    r = mesh.points - ORIGIN
    u = np.hstack([local_u @ R + c + np.cross(w0, r), local_t @ R + w0]).reshape(-1)
    ends = model.dofs([0, 4])
    u_h, cond = _solve_prescribed(model, u, ends)
    forces = model.element_stresses(u_h)["line"]          # (ne, 2, 6): N, Vy, Vz, T, My, Mz
    expected = np.array([STEEL.E * sec.A * eps, 0.0, 0.0, STEEL.G * sec.J * tau, -STEEL.E * sec.Iy * b,
                         STEEL.E * sec.Iz * a])
    return {"displacement": _rel(u_h, u), "stress": _rel(forces, np.broadcast_to(expected, forces.shape)),
            "cond": cond, "patch": "4 Timoshenko elements, lengths 0.13/0.28/0.21/0.38 L on a skew line"}


# MacNeal & Harder (1985) five-element patch, 0.24 x 0.12, E = 1e6, nu = 0.25, t = 0.001.
MH_XY = np.array([[0.0, 0.0], [0.24, 0.0], [0.24, 0.12], [0.0, 0.12],
                  [0.04, 0.02], [0.18, 0.03], [0.16, 0.08], [0.08, 0.08]])
MH_QUADS = np.array([[0, 1, 5, 4], [1, 2, 6, 5], [2, 3, 7, 6], [3, 0, 4, 7], [4, 5, 6, 7]])
MH = Material(E=1.0e6, nu=0.25, rho=1.0, name="MacNeal-Harder patch")
MH_T = 0.001


def _shell(kind: str) -> dict:
    """MacNeal-Harder patch tilted into 3D: constant membrane strain and constant curvature states."""
    cells = MH_QUADS if kind == "quad" else np.concatenate([MH_QUADS[:, [0, 1, 2]], MH_QUADS[:, [0, 2, 3]]])
    cell_type = "quad" if kind == "quad" else "triangle"
    points = ORIGIN + np.column_stack([MH_XY, np.zeros(len(MH_XY))]) @ ROT.T
    model = FEModel(FEMesh(points, {cell_type: cells}), MH, thickness=MH_T)
    x, y = MH_XY[:, 0], MH_XY[:, 1]
    C = MH.E / (1 - MH.nu**2) * np.array([[1, MH.nu, 0], [MH.nu, 1, 0], [0, 0, (1 - MH.nu) / 2]])
    out = {"displacement": 0.0, "stress": 0.0, "cond": 0.0}
    for state in ("membrane", "bending"):
        f = np.zeros((len(points), 6))
        if state == "membrane":        # u = 1e-3 (x + y/2), v = 1e-3 (y + x/2): eps = gamma = 1e-3, omega = 0
            f[:, 0], f[:, 1] = 1e-3 * (x + y / 2), 1e-3 * (y + x / 2)
            resultant = MH_T * C @ np.array([1e-3, 1e-3, 1e-3])            # N: 1333.3, 1333.3, 400 times t
        else:                          # w = 1e-3 (1 + x + y + x^2 + xy + y^2)/2, Kirchhoff rotations
            f[:, 2] = 1e-3 * (1 + x + y + x**2 + x * y + y**2) / 2
            f[:, 3], f[:, 4] = 1e-3 * (1 + x + 2 * y) / 2, -1e-3 * (1 + 2 * x + y) / 2
            resultant = MH_T**3 / 12 * C @ np.array([-1e-3, -1e-3, -1e-3])   # M; surface stress 0.667, 0.2
        u = np.column_stack([f[:, :3] @ ROT.T, f[:, 3:] @ ROT.T]).reshape(-1)
        u_h, cond = _solve_prescribed(model, u, model.dofs(np.arange(4)))
        st = model.element_stresses(u_h)[cell_type]
        got = plane_tensor_to_global(st.frame, st.N if state == "membrane" else st.M)
        plane = np.array([[resultant[0], resultant[2], 0.0], [resultant[2], resultant[1], 0.0], [0.0, 0.0, 0.0]])
        want = np.broadcast_to(ROT @ plane @ ROT.T, got.shape)
        out["displacement"] = max(out["displacement"], _rel(u_h, u))
        out["stress"] = max(out["stress"], _rel(got, want))
        out["cond"] = max(out["cond"], cond)
    out["patch"] = (f"MacNeal-Harder 5-{'quad' if kind == 'quad' else 'quad (10 triangles)'} patch, tilted in 3D; "
                    "membrane and bending states")
    return out


ROUNDING_FACTOR = 100.0
"""Tolerance = ROUNDING_FACTOR * eps * cond(K_ii): a patch test is exact in exact arithmetic, so its
error is the rounding of the interior solve, whose relative error a backward-stable solver keeps
below about eps * cond (Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., §7.1); the
factor 100 covers the stress recovery (B-matrix products, sums over nodes) on top of it."""


def _tolerance(cond: float) -> str:
    x = ROUNDING_FACTOR * EPS * max(cond, 1.0)
    e = np.floor(np.log10(x))
    return f"max {np.ceil(x / 10**e) * 10**e:.1g}"


def patch_tests(quick: bool) -> CaseResult:
    r = CaseResult("patch-tests",
                   "patch test (Irons & Razzaque 1972; Taylor, Simo & Zienkiewicz 1986): exact linear / constant-"
                   "strain states on distorted patches; shells on the MacNeal & Harder (1985, Finite Elem. Anal. "
                   "Des. 1:3-20) patch with its published stresses 1333/1333/400 and 0.667/0.667/0.200")
    notes = []
    for name in ("tetra", "tetra10", "hexahedron", "hexahedron20", "beam", "quad", "tri"):
        res = _beam() if name == "beam" else _shell(name) if name in ("quad", "tri") else _solid(name)
        tag = {"tetra": "tet4", "tetra10": "tet10", "hexahedron": "hex8", "hexahedron20": "hex20"}.get(name, name)
        r.check(f"{tag}_stress_error_rel", res["stress"], tolerance=_tolerance(res["cond"]))
        r.check(f"{tag}_displacement_error_rel", res["displacement"], tolerance=_tolerance(res["cond"]))
        r.metrics[f"{tag}_condition_number"] = res["cond"]
        notes.append(f"{tag}: {res['patch']}")
    r.notes = ("Metric: largest stress (section-force, resultant) error over all elements relative to the exact "
               "constant value, and interior-displacement error relative to the largest prescribed one. "
               + "; ".join(notes) + ". Solids: random linear field u = a + B x (|B| <= 1e-3), boundary nodes of "
               "the cube prescribed; tet10 edges straight (its 4-point rule is exact only for affine tets), hex20 "
               "mid-edge nodes moved too (curved edges). Beam: constant axial strain, twist rate and curvatures in "
               "both planes plus a rigid motion, end nodes prescribed; section forces N = EA eps, T = GJ tau, "
               "My = -EIy w'', Mz = EIz v'', V = 0. Shells: the four outer nodes prescribed. Tolerance: the "
               "patch test is exact, so the error is rounding of the interior solve, bounded by about "
               "eps * cond(K_ii) (Higham 2002, §7.1); the tolerance is 100 eps cond(K_ii) with the condition number "
               "of each patch (reported): ~1e-14..1e-12 for the solids (cond < 100), ~2e-9 for the beam (cond ~1e5: "
               "axial vs bending stiffness), ~1e-6 for the shells (cond ~3e7: membrane stiffness E t vs bending "
               "D / h^2, (h/t)^2 ~ 1e4 apart). A failed patch test errs by 1e-3 or more.")
    return r
