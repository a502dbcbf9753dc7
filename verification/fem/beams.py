"""Beam-element cases of the ``fem`` suite: cantilever, Timoshenko and free-free frequencies.

Material: steel (``meshes.STEEL``: E = 210 GPa, nu = 0.3, rho = 7850 kg/m^3). Sections from
``BeamSection.rectangle`` (Cowper's shear factor). Bending in one plane is isolated by holding
``ux, uy, rx, rz`` of every node (a straight beam along x: x-z bending decouples exactly from
axial, torsional and x-y motion), except in the free-free case, which keeps all six dofs to
count the rigid-body modes.
"""
from __future__ import annotations

import numpy as np

from flexmb.fem.model import FEModel
from flexmb.fem.sections import BeamSection

from ..framework import CaseResult
from . import eigen, meshes, reference as ref
from .common import convergence_checks, convergence_figure, parameter_figure

STEEL = meshes.STEEL
L = meshes.BEAM_LENGTH
SECTION = BeamSection.rectangle(meshes.BEAM_SIDE, meshes.BEAM_SIDE, nu=STEEL.nu)   # 0.02 x 0.02 m
RIGID_RTOL = 1e-10     # eigenvalues below RIGID_RTOL * max(K_ii / M_ii) are zero-frequency modes


def _xz_plane_fixed(model: FEModel, support_nodes=(), components=None) -> np.ndarray:
    """Dofs held to keep only x-z bending (w, theta_y), plus the dofs of ``support_nodes``."""
    every = model.dofs(np.arange(model.n_nodes), ["ux", "uy", "rx", "rz"])
    support = [model.dofs(n, components) for n in support_nodes]
    return np.unique(np.concatenate([every, *support])) if support else every


def _beam_model(n: int, section: BeamSection, theory: str) -> FEModel:
    """n uniform elements over L; the 20-element level is the sample file meshes/beam_line.msh."""
    mesh = meshes.sample("beam_line.msh") if n == 20 else meshes.line_mesh(n, L)
    return FEModel(mesh, STEEL, sections=section, beam=theory)


def _section_constants(section: BeamSection) -> tuple[float, float, float, float]:
    """EI, kGA, rho A, rho I of x-z bending."""
    return STEEL.E * section.Iy, section.kz * STEEL.G * section.A, STEEL.rho * section.A, STEEL.rho * section.Iy


# ----------------------------------------------------------------------------------------------
def cantilever_beam_euler_bernoulli(quick: bool) -> CaseResult:
    r = CaseResult("cantilever-beam-euler-bernoulli",
                   "Euler-Bernoulli cantilever: beta_n L roots of cos x cosh x = -1 (Blevins, Formulas for "
                   "Natural Frequency and Mode Shape, 1979, Table 8-1: 1.87510407, 4.69409113, 7.85475744, "
                   "10.99554073); Hermite-cubic element with consistent mass converges as h^4 in frequency")
    levels = (5, 10, 20)
    EI, _, rhoA, _ = _section_constants(SECTION)
    roots = ref.eb_roots("clamped-free", 4)
    r.check("beta_L_vs_blevins_max_diff", np.max(np.abs(roots - ref.BLEVINS_CANTILEVER)), tolerance="max 1e-8")
    exact = ref.eb_omega(roots, L, EI, rhoA)
    errors = []
    for n in levels:
        model = _beam_model(n, SECTION, "euler-bernoulli")
        w = eigen.frequencies(model, _xz_plane_fixed(model, [0]), 4)
        errors.append(w / exact - 1.0)
    errors = np.array(errors)
    h = L / np.array(levels)
    res = convergence_checks(r, "", h, errors, p=4.0, order_tol=0.25)
    r.check("upper_bound", bool(np.all(errors > 0.0)))
    r.metrics.update({f"error_mode{k + 1}_n{n}": errors[i, k] for i, n in enumerate(levels) for k in range(4)})
    r.notes = (f"L = 1 m, 0.02 x 0.02 m steel section, x-z bending, {levels} elements (the 20-element model is "
               "meshes/beam_line.msh), consistent mass. The Hermite element is conforming and its consistent "
               "mass makes the eigenproblem a Rayleigh-Ritz approximation, so every frequency lies above the "
               "exact one (upper_bound) and the eigenvalue error is O(h^(2(k+1-m))) = O(h^4) for cubics (k = 3) "
               "and a 4th-order operator (m = 2) (Strang & Fix, An Analysis of the FEM, 1973, ch. 6). Order from "
               "the two finest meshes: 4 +- 0.25 -- the next term of the error expansion is O(h^2) smaller; the "
               f"measured orders {np.round(res['orders'], 3).tolist()} differ from 4 by < 0.1, and an element one "
               "order lower (3) or with lumped mass (2) fails. The finest-mesh error must stay below twice the "
               "rate-4 prediction from the 5-element error (common.BOUND_SAFETY). beta_L_vs_blevins checks the "
               "root finder against the tabulated 8-digit values (difference < 5e-9, the table's rounding).")
    r.figures.append(convergence_figure("EB cantilever: frequency error vs h",
                                        [(f"mode {k + 1}", h, errors[:, k]) for k in range(4)], p=4.0))
    return r


# ----------------------------------------------------------------------------------------------
def timoshenko_beam(quick: bool) -> CaseResult:
    r = CaseResult("timoshenko-beam",
                   "Timoshenko beam frequency equation (Timoshenko 1921, Phil. Mag. 41:744-746): simply supported "
                   "closed form (kGA a^2 - rho A w^2)(EI a^2 + kGA - rho I w^2) = (kGA a)^2, a = n pi / L "
                   "(Han, Benaroya & Wei 1999, J. Sound Vib. 225:935-988); cantilever: roots of the 4 x 4 "
                   "boundary determinant of the general solution (Huang 1961, J. Appl. Mech. 28:579-584)")
    figures = []
    # (a) thick simply supported beam, L/h = 5
    sec = BeamSection.rectangle(0.2, 0.2, nu=STEEL.nu)
    EI, kGA, rhoA, rhoI = _section_constants(sec)
    exact = np.array([ref.timoshenko_pinned(n, L, EI, kGA, rhoA, rhoI) for n in (1, 2, 3)])
    euler = ref.eb_omega(np.pi * np.arange(1, 4), L, EI, rhoA)
    levels = (20, 40, 80)
    errors = []
    for n in levels:
        model = FEModel(meshes.line_mesh(n, L), STEEL, sections=sec)
        fixed = np.concatenate([_xz_plane_fixed(model), model.dofs([0, n], "uz")])
        errors.append(eigen.frequencies(model, np.unique(fixed), 3) / exact - 1.0)
    errors = np.array(errors)
    h = L / np.array(levels)
    ss = convergence_checks(r, "ss_", h, errors, p=2.0, order_tol=0.2)
    r.check("ss_upper_bound", bool(np.all(errors > 0.0)))
    r.metrics.update({f"ss_timoshenko_vs_euler_mode{k + 1}": exact[k] / euler[k] - 1.0 for k in range(3)})
    figures.append(("simply supported L/h = 5", h, errors))
    # (b) cantilever, L/h = 10
    sec = BeamSection.rectangle(0.1, 0.1, nu=STEEL.nu)
    EI, kGA, rhoA, rhoI = _section_constants(sec)
    euler = ref.eb_omega(ref.eb_roots("clamped-free", 4), L, EI, rhoA)
    exact = ref.timoshenko_roots(("clamped", "free"), 4, L, EI, kGA, rhoA, rhoI, euler)
    levels = (10, 20, 40)
    errors = []
    for n in levels:
        model = FEModel(meshes.line_mesh(n, L), STEEL, sections=sec)
        errors.append(eigen.frequencies(model, _xz_plane_fixed(model, [0]), 4) / exact - 1.0)
    errors = np.array(errors)
    h = L / np.array(levels)
    cf = convergence_checks(r, "cantilever_", h, errors, p=2.0, order_tol=0.2)
    r.check("cantilever_upper_bound", bool(np.all(errors > 0.0)))
    r.metrics.update({f"cantilever_timoshenko_vs_euler_mode{k + 1}": exact[k] / euler[k] - 1.0 for k in range(4)})
    figures.append(("cantilever L/h = 10", h, errors))
    r.notes = ("Steel, Timoshenko element (exact two-node interpolation, consistent mass with rotary inertia, "
               "Cowper's k = 10(1+nu)/(12+11nu) in element and reference alike). (a) simply supported 0.2 x 0.2 m, "
               "L = 1 m, 20/40/80 elements; (b) cantilever 0.1 x 0.1 m, L = 1 m, 10/20/40 elements. Shear and "
               "rotary inertia lower the frequencies 6-31 % (a) and 0.8-17 % (b) below Euler-Bernoulli "
               "(..._timoshenko_vs_euler), so the references test the shear terms. The element's shear strain is "
               "constant, so the modal shear energy converges as h^2 (docs/theory-elements.md §4.7): order 2 +- "
               f"0.2 (measured {np.round(ss['orders'], 3).tolist()} and {np.round(cf['orders'], 3).tolist()}; "
               "the deviation is the O(h^2)-smaller next term, < 0.07 already at the coarser pair). Consistent "
               "mass: frequencies above the exact ones. The cantilever determinant is checked in its limits: "
               "kGA -> inf, rho I -> 0 gives the Euler-Bernoulli roots to 1e-10, pinned-pinned the closed form "
               "to 1e-15.")
    r.figures.append(convergence_figure("Timoshenko beams: frequency error vs h",
                                        [(f"{name}, mode {k + 1}", h, e[:, k]) for name, h, e in figures
                                         for k in range(e.shape[1])], p=2.0))
    return r


# ----------------------------------------------------------------------------------------------
def free_free_beam(quick: bool) -> CaseResult:
    r = CaseResult("free-free-beam",
                   "Euler-Bernoulli free-free beam: beta_n L roots of cos x cosh x = 1 (Blevins 1979, Table 8-1: "
                   "4.73004074, 7.85320462, 10.99560784, 14.13716549); Timoshenko free-free roots of the boundary "
                   "determinant (Huang 1961); six rigid-body modes (zero eigenvalues) of an unsupported body")
    EI, kGA, rhoA, rhoI = _section_constants(SECTION)
    roots = ref.eb_roots("free-free", 4)
    r.check("beta_L_vs_blevins_max_diff", np.max(np.abs(roots - ref.BLEVINS_FREE_FREE)), tolerance="max 1e-8")
    euler = ref.eb_omega(roots, L, EI, rhoA)
    timo = ref.timoshenko_roots(("free", "free"), 4, L, EI, kGA, rhoA, rhoI, euler)
    levels = (10, 20)
    out = {}
    for theory, exact, p in (("euler-bernoulli", euler, 4.0), ("timoshenko", timo, 2.0)):
        errors, splits = [], []
        for n in levels:
            model = _beam_model(n, SECTION, theory)
            lam, scale = eigen.free_spectrum(model, 14)
            n_zero = int(np.count_nonzero(lam < RIGID_RTOL * scale))
            key = "eb" if theory == "euler-bernoulli" else "timoshenko"
            if n == 20:
                r.check(f"{key}_rigid_modes", n_zero, 6, "abs 0")
                r.metrics[f"{key}_zero_eig_max_rel"] = float(np.max(np.abs(lam[:6])) / scale)
                r.metrics[f"{key}_first_elastic_eig_rel"] = float(lam[6] / scale)
            w = np.sqrt(np.maximum(lam[6:14], 0.0))      # four bending pairs (square section)
            splits.append(np.max(np.abs(w[0::2] / w[1::2] - 1.0)))
            errors.append(0.5 * (w[0::2] + w[1::2]) / exact - 1.0)
        errors = np.array(errors)
        h = L / np.array(levels)
        if key == "eb":
            out[key] = (h, errors, convergence_checks(r, "eb_", h, errors, p=4.0, order_tol=0.25))
        else:   # error C2 h^2 + C4 h^4 with C2 ~ (r/L)^2 small: one-sided order check, bound at rate 2
            out[key] = (h, errors, convergence_checks(r, "timoshenko_", h, errors, p=2.0, order_min=1.8))
        r.metrics[f"{key}_pair_split_max"] = max(splits)
        if key == "eb":
            r.metrics.update({f"eb_beta_L_mode{k + 1}": roots[k] * np.sqrt(1.0 + errors[-1, k]) for k in range(4)})
    r.notes = ("Sample mesh meshes/beam_line.msh (20 elements, L = 1 m) and a 10-element mesh, steel, 0.02 x 0.02 m "
               "section, all six dofs per node, no supports. Eigenvalues below 1e-10 max(K_ii/M_ii) count as rigid "
               "(rounding leaves them below 1e-16 of it, the first elastic one is ~1e-5 of it: ..._zero_eig_max_rel, "
               "..._first_elastic_eig_rel): exactly six. The "
               "square section gives equal pairs of bending frequencies (split < 1e-8, ..._pair_split_max); their "
               "mean is compared. "
               "Euler-Bernoulli elements vs the Euler-Bernoulli roots (rate 4, order 4 +- 0.25, bound as in the "
               "cantilever case); Timoshenko elements vs the Timoshenko free-free roots (shear and rotary inertia "
               "lower these frequencies 0.14-1.3 % below Euler-Bernoulli). The Timoshenko element's error is "
               "C2 h^2 + C4 h^4 with C2 proportional to the shear parameter (r/L)^2, small at L/h = 50, so the "
               "two-mesh order lies between 2 and 4 (measured ~2.8): the check is one-sided, order >= 1.8, and "
               "the error bound uses the element's rate 2. "
               "eb_beta_L_mode* is beta L recovered from the 20-element frequencies.")
    r.figures.append(convergence_figure(
        "free-free beam (beam_line): frequency error vs h",
        [(f"{key} mode {k + 1}", out[key][0], out[key][1][:, k]) for key in out for k in range(4)]))
    r.figures.append(parameter_figure("free-free beam_line, 20 elements: frequency vs closed form", euler,
                                      [("Euler-Bernoulli elements", euler * (1 + out["eb"][1][-1])),
                                       ("Timoshenko elements", timo * (1 + out["timoshenko"][1][-1])),
                                       ("Timoshenko closed form", timo)],
                                      ref_label="Euler-Bernoulli omega (rad/s)", ylabel="omega / omega_EB - 1 (%)"))
    return r
