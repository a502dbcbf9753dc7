"""Whole-body cases of the ``fem`` suite, using flexmb.reduction: rigid-body modes of the sample
meshes, their mass properties, and a Craig-Bampton reduction against the full model.

Materials: steel (E = 210 GPa, nu = 0.3, rho = 7850 kg/m^3); the line beam gets the 0.02 x 0.02 m
section of the solid beam (Timoshenko beam, so that the rotary inertia of the section is in its
mass matrix), the plates a thickness of 0.01 m.
"""
from __future__ import annotations

import math

import numpy as np

from flexmb.fem.model import FEModel
from flexmb.fem.sections import BeamSection

from ..framework import CaseResult
from . import eigen, meshes
from .common import line_figure

STEEL = meshes.STEEL
SAMPLES = ("beam_line.msh", "beam_solid.msh", "beam_solid_hex20.msh", "plate_quad.msh", "plate_tri.msh")
BRACKET = "bracket_tet10.msh"
RIGID_RTOL = 1e-10
SECTION = BeamSection.rectangle(meshes.BEAM_SIDE, meshes.BEAM_SIDE, nu=STEEL.nu)


def sample_model(name: str, beam: str = "timoshenko") -> FEModel:
    """FEModel of a sample mesh with the suite's material, section and thickness."""
    kw = {}
    if name.startswith("beam_line"):
        kw = {"sections": SECTION, "beam": beam}
    elif name.startswith("plate"):
        kw = {"thickness": meshes.PLATE_THICKNESS}
    return FEModel(meshes.sample(name), STEEL, **kw)


def _tag(name: str) -> str:
    return name.split(".")[0]


# ----------------------------------------------------------------------------------------------
# rigid-body modes
# ----------------------------------------------------------------------------------------------
def _rigid(r: CaseResult, name: str) -> None:
    from flexmb.errors import ModelError
    from flexmb.reduction import normal_modes, rigid_body_modes
    tag = _tag(name)
    model = sample_model(name)
    lam, scale = eigen.free_spectrum(model, 12)
    count = int(np.count_nonzero(lam < RIGID_RTOL * scale))
    r.check(f"{tag}_rigid_modes", count, 6, "abs 0")
    r.metrics[f"{tag}_zero_eig_max_rel"] = float(np.max(np.abs(lam[:count]))) / scale if count else 0.0
    r.metrics[f"{tag}_first_elastic_eig_rel"] = float(lam[count] / scale)
    R = rigid_body_modes(model.points, model.dofs_per_node)
    KR = model.K @ R
    r.check(f"{tag}_K_times_rigid_motions_rel", np.max(np.abs(KR)) / (abs(model.K).max() * np.max(np.abs(R))),
            tolerance="max 1e-12")
    try:
        found = normal_modes(model, 1).rigid
        n_red = 0 if found is None else found.shape[1]
    except ModelError:
        n_red = -1
    r.check(f"{tag}_reduction_rigid_modes", n_red, 6, "abs 0")


_RIGID_NOTES = (
    "Free models, no supports. Two independent counts: (1) the suite's shift-invert eigen-solver "
    "(verification/fem/eigen.py, shift -1e-10 max(K_ii/M_ii)) with eigenvalues below 1e-10 max(K_ii/M_ii) "
    "counted as zero: rounding leaves the six rigid ones below ~1e-15 of that scale, the first elastic "
    "eigenvalue of these meshes is 5e-8 of it or more (..._zero_eig_max_rel, ..._first_elastic_eig_rel), "
    "so the threshold has two decades on either side; (2) flexmb.reduction.normal_modes, which refuses a "
    "free model without exactly six zero modes spanning the rigid motions (..._reduction_rigid_modes, -1 "
    "if it refused). K times the six geometric rigid motions (flexmb.reduction.rigid_body_modes) must "
    "vanish to rounding: max |K R| / (max |K| max |R|) < 1e-12 (sums of ~100 terms of size max|K| max|R| "
    "cancel to ~1e-14; a spurious constraint or a wrong rotation transformation gives O(1)).")


def rigid_modes(quick: bool) -> CaseResult:
    r = CaseResult("rigid-modes",
                   "an unsupported linear-elastic body has exactly six zero-energy modes, its rigid translations "
                   "and rotations (any more are mechanisms or spurious zero-energy modes, any fewer a spurious "
                   "constraint)")
    for name in SAMPLES:
        _rigid(r, name)
    r.notes = "Sample meshes " + ", ".join(SAMPLES) + " (the bracket: case rigid-modes-bracket). " + _RIGID_NOTES
    return r


def rigid_modes_bracket(quick: bool) -> CaseResult:
    r = CaseResult("rigid-modes-bracket", "as rigid-modes: exactly six zero-energy modes of the free bracket")
    _rigid(r, BRACKET)
    r.notes = ("meshes/bracket_tet10.msh, 64 239 dofs (two shift-invert solves of that size: slow-only). "
               + _RIGID_NOTES)
    return r


# ----------------------------------------------------------------------------------------------
# mass properties
# ----------------------------------------------------------------------------------------------
def box_properties(lo, hi, rho: float) -> tuple[float, np.ndarray, np.ndarray]:
    """Mass, first moment and inertia tensor about the origin of the box [lo, hi] (kg, kg m, kg m^2)."""
    lo, hi = np.asarray(lo, dtype=float), np.asarray(hi, dtype=float)
    d = hi - lo
    V = float(np.prod(d))
    m1 = (hi**2 - lo**2) / 2.0 / d                  # mean of x_i over the box
    m2 = (hi**3 - lo**3) / 3.0 / d                  # mean of x_i^2
    S = np.outer(m1, m1) * V                        # int x_i x_j dV, i != j
    S[np.diag_indices(3)] = m2 * V
    J = np.trace(S) * np.eye(3) - S                 # int (|x|^2 delta_ij - x_i x_j) dV
    return rho * V, rho * V * m1, rho * J


def composite(boxes: list[tuple[float, tuple, tuple]], rho: float) -> tuple[float, np.ndarray, np.ndarray]:
    """Sum of signed boxes (sign, lo, hi): mass, first moment, inertia about the origin."""
    m, s, J = 0.0, np.zeros(3), np.zeros((3, 3))
    for sign, lo, hi in boxes:
        bm, bs, bJ = box_properties(lo, hi, rho)
        m, s, J = m + sign * bm, s + sign * bs, J + sign * bJ
    return m, s, J


def analytic_properties(name: str) -> tuple[float, np.ndarray, np.ndarray, str]:
    """Exact mass, centre of mass and inertia about the centre of mass of a sample model."""
    rho = STEEL.rho
    Lb, b = meshes.BEAM_LENGTH, meshes.BEAM_SIDE
    a, t = meshes.PLATE_SIDE, meshes.PLATE_THICKNESS
    if name.startswith("beam"):
        m, s, J = composite([(1, (0.0, -b / 2, -b / 2), (Lb, b / 2, b / 2))], rho)
        how = ("box 1 x 0.02 x 0.02 m; the line beam's consistent Timoshenko mass carries the section's rotary "
               "inertia rho (Iy + Iz) L, rho Iy L, rho Iz L, which makes it equal to the box")
    elif name.startswith("plate"):
        m, s, J = composite([(1, (0.0, 0.0, -t / 2), (a, a, t / 2))], rho)
        J[2, 2] += m * t**2 / 12.0
        how = ("box 1 x 1 x 0.01 m plus the shell's drilling rotary inertia rho t^3/12 A on Izz "
               "(docs/theory-shells.md eq. S13), i.e. m t^2 / 12 = 5e-5 Izz more than the solid box")
    elif name.startswith("bracket"):
        # meshes/make_bracket.py: base plate + flange above it, minus the slot and the window
        m, s, J = composite([(+1, (0.0, 0.0, 0.0), (0.100, 0.060, 0.010)),
                             (+1, (0.0, 0.0, 0.010), (0.010, 0.060, 0.060)),
                             (-1, (0.050, 0.020, 0.0), (0.080, 0.040, 0.010)),
                             (-1, (0.0, 0.020, 0.030), (0.010, 0.040, 0.050))], rho)
        how = ("base 100 x 60 x 10 mm + flange 10 x 60 x 50 mm above it - slot 30 x 20 mm through the base - "
               "window 20 x 20 mm through the flange (meshes/make_bracket.py); the mesh fills these boxes exactly "
               "(h = 10/3 mm divides every dimension)")
    else:
        raise KeyError(name)
    c = s / m
    Jc = J - m * (c @ c * np.eye(3) - np.outer(c, c))
    return m, c, Jc, how


def mass_properties(quick: bool) -> CaseResult:
    from flexmb.reduction import inertia_invariants
    r = CaseResult("mass-properties",
                   "analytic mass, centre of mass and inertia tensor of boxes and of the bracket's boxes "
                   "(meshes/make_bracket.py dimensions); inertia from flexmb.reduction.inertia_invariants "
                   "(R^T M R with the six rigid-body motions R)")
    how = []
    for name in SAMPLES + (BRACKET,):
        tag = _tag(name)
        model = sample_model(name)
        inv = inertia_invariants(model)
        m_ref, c_ref, J_ref, text = analytic_properties(name)
        c = np.asarray(inv.center_of_mass)
        J = np.asarray(inv.inertia) - inv.mass * (c @ c * np.eye(3) - np.outer(c, c))
        size = float(np.linalg.norm(np.ptp(model.points, axis=0)))
        r.check(f"{tag}_mass", inv.mass, m_ref, "rel 1e-12")
        r.check(f"{tag}_com_error_rel", np.linalg.norm(c - c_ref) / size, tolerance="max 1e-12")
        d = np.sqrt(np.abs(np.diag(J_ref)))
        r.check(f"{tag}_inertia_error_rel", np.max(np.abs(J - J_ref) / np.outer(d, d)), tolerance="max 1e-10")
        r.metrics.update({f"{tag}_I{ax}": J[k, k] for k, ax in enumerate(("xx", "yy", "zz"))})
        how.append(f"{tag}: {text}")
    r.notes = ("Inertia about the centre of mass, each component relative to sqrt(I_ii I_jj). Consistent mass with "
               "quadrature exact for affine elements (solids: docs/theory-elements.md §2.4; beams §4.4; shells "
               "docs/theory-shells.md §7) reproduces int rho x_i x_j dV exactly, so only rounding remains: mass and "
               "centre of mass to 1e-12 (sums of up to 1e5 terms at eps ~ 2e-16); the inertia to 1e-10, because the "
               "shift to the centre of mass cancels up to (L / b)^2 ~ 2500 times the smallest component (the line "
               "beam's Ixx is 2500 times below its Iyy). " + "; ".join(how) + ".")
    return r


# ----------------------------------------------------------------------------------------------
# Craig-Bampton
# ----------------------------------------------------------------------------------------------
CB_COUNTS = (0, 2, 4, 6, 8, 10, 12, 16)
CB_CHECKED = 10


def craig_bampton_cantilever(quick: bool) -> CaseResult:
    from flexmb.reduction import craig_bampton, normal_modes
    r = CaseResult("craig-bampton-cantilever",
                   "Craig & Bampton (1968), AIAA J. 6:1313-1319: a Rayleigh-Ritz reduction, so its frequencies are "
                   "upper bounds that fall monotonically as fixed-interface modes are added; reference: the full "
                   "model's eigenvalues. With no fixed-interface modes the basis is the tip's static constraint "
                   "modes, for an Euler-Bernoulli cantilever the cubics x^2, x^3: two-term Ritz, "
                   "lambda = 612 - sqrt(359424) (times EI / (rho A L^4))")
    model = sample_model("beam_line.msh", beam="euler-bernoulli")
    full = normal_modes(model, 12, fixed="root")
    f_full = full.frequencies_hz
    # a second algorithm: flexmb.reduction solves these 120 dofs densely (LAPACK eigh), the suite's solver by
    # shift-invert Lanczos (ARPACK, residual tolerance 1e-13): measured 2.5e-13, rising with the mode number
    f_local = eigen.frequencies(model, model.dofs("root"), 12, method="lanczos") / (2.0 * np.pi)
    r.check("full_model_two_solvers_rel", np.max(np.abs(f_full / f_local - 1.0)), tolerance="max 1e-10")
    errors = []
    for n in CB_COUNTS:
        ms = craig_bampton(model, {"tip": "tip"}, n_modes=n, fixed="root")
        f = ms.frequencies_hz
        k = min(8, f.size)
        errors.append(np.concatenate([f[:k] / f_full[:k] - 1.0, np.full(8 - k, np.nan)]))
        if n == 0:
            EI, rhoA = STEEL.E * SECTION.Iy, STEEL.rho * SECTION.A
            scale = math.sqrt(EI / (rhoA * meshes.BEAM_LENGTH**4)) / (2 * math.pi)
            ritz = math.sqrt(612.0 - math.sqrt(359424.0)) * scale
            r.check("static_modes_ritz_hz", f[0], ritz, "rel 1e-9")
        if n == CB_CHECKED:
            r.metrics["cb_modes_total"] = ms.n_modes
    errors = np.array(errors)
    i = CB_COUNTS.index(CB_CHECKED)
    r.check(f"error_lowest4_n{CB_CHECKED}", np.max(errors[i, :4]), tolerance="max 1e-4")
    r.check("upper_bound", bool(np.nanmin(errors) > -1e-10))
    diffs = np.diff(errors[:, :4], axis=0)
    r.check("monotone_in_mode_count", bool(np.all(diffs <= 1e-10)))
    for j, n in enumerate(CB_COUNTS):
        r.metrics[f"error_lowest4_n{n}"] = float(np.nanmax(errors[j, :4]))
        r.metrics[f"error_modes5to8_n{n}"] = float(np.nanmax(errors[j, 4:])) if n else float("nan")
    r.notes = ("meshes/beam_line.msh (20 Euler-Bernoulli elements, steel, 0.02 x 0.02 m), root clamped, one rigid "
               "interface at the tip node, n fixed-interface modes (flexmb.reduction.craig_bampton) against the full "
               "model's lowest 8 frequencies (flexmb.reduction.normal_modes, dense LAPACK at this size; the suite's own "
               "shift-invert Lanczos solver, verification/fem/eigen.py, agrees to full_model_two_solvers_rel: "
               "2.5e-13 measured, tolerance 1e-10, the ARPACK residual tolerance 1e-13 with room for the higher "
               "modes' slower convergence). The square section gives equal pairs, so the lowest 4 are the first two "
               "bending frequencies in each plane. Checks: n = 0 reproduces the closed-form two-term Ritz value "
               "(the Hermite elements represent the static cubics and integrate their mass exactly: rounding only, "
               "1e-9); CB frequencies lie above the full ones (Ritz), and adding modes never raises them (nested "
               "bases; both to rounding); with 10 fixed-interface modes the lowest four are within 1e-4 (an accuracy "
               "requirement on the reduced body, not a rounding bound: the error falls roughly as n^-3 here, see the "
               "figure and the error_lowest4_n* metrics, and passes 1e-4 from n = 10 on).")
    counts = np.array(CB_COUNTS[1:])
    r.figures.append(line_figure("Craig-Bampton: frequency error vs fixed-interface modes", counts,
                                 [(f"full-model mode {k + 1}", errors[1:, k]) for k in (0, 2, 4, 6)],
                                 "fixed-interface modes n", "relative frequency error"))
    return r
