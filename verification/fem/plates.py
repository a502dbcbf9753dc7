"""Plate cases of the ``fem`` suite: square plates of flat shells against Leissa (NASA SP-160).

Plate a = 1 m, t = 0.01 m (t/a = 0.01, thin), steel (E = 210 GPa, nu = 0.3, rho = 7850 kg/m^3),
consistent mass; frequency parameter ``lambda = omega a^2 sqrt(rho t / D)``,
``D = E t^3 / (12 (1 - nu^2))``. Meshes n x n quads (MITC4) or 2 n^2 triangles (MITC3 with the
Lyly-Stenberg-Vihinen stabilization); n = 16 are the sample files meshes/plate_quad.msh and
meshes/plate_tri.msh, the other n are generated in memory with the same layout.
"""
from __future__ import annotations

import math

import numpy as np

from flexmb.fem.model import FEModel

from ..framework import CaseResult
from . import eigen, meshes, reference as ref
from .common import convergence_checks, convergence_figure, parameter_figure

STEEL = meshes.STEEL
A, T = meshes.PLATE_SIDE, meshes.PLATE_THICKNESS
KINDS = {"quad": "plate_quad.msh", "tri": "plate_tri.msh"}


def _levels(quick: bool) -> tuple[int, ...]:
    return (8, 16, 32) if quick else (8, 16, 32, 64)


def _model(kind: str, n: int) -> FEModel:
    mesh = meshes.sample(KINDS[kind]) if n == 16 else meshes.plate_grid(n, A, tri=kind == "tri")
    return FEModel(mesh, STEEL, thickness=T)


def _fixed(model: FEModel, support: str) -> np.ndarray:
    """Held dofs. "ss": hard simple support -- u, v, w and the rotation about the edge normal on
    every edge (the Navier modes satisfy it; u, v decouple from bending in a flat plate);
    "cfff": all six dofs of the edge x = 0."""
    x, y = model.points[:, 0], model.points[:, 1]
    tol = 1e-9 * A
    if support == "cfff":
        return model.dofs(np.flatnonzero(x < tol))
    ex = np.flatnonzero((x < tol) | (x > A - tol))
    ey = np.flatnonzero((y < tol) | (y > A - tol))
    return np.unique(np.concatenate([model.dofs(np.union1d(ex, ey), ["ux", "uy", "uz"]),
                                     model.dofs(ex, "rx"), model.dofs(ey, "ry")]))


def _parameters(kind: str, n: int, support: str, count: int) -> np.ndarray:
    model = _model(kind, n)
    D = STEEL.E * T**3 / (12.0 * (1.0 - STEEL.nu**2))
    return eigen.frequencies(model, _fixed(model, support), count) * A**2 * math.sqrt(STEEL.rho * T / D)


def plate_simply_supported(quick: bool) -> CaseResult:
    r = CaseResult("plate-simply-supported",
                   "Leissa, Vibration of Plates, NASA SP-160 (1969), ch. 4: simply supported square plate, "
                   "lambda = pi^2 (m^2 + n^2) = 19.739, 49.348, 49.348, 78.957 (Navier, Kirchhoff); the shell "
                   "elements are Reissner-Mindlin, so they converge to Mindlin's exact value for the same sine "
                   "modes (Mindlin 1951, J. Appl. Mech. 18:31-38), 0.04-0.15 % lower at t/a = 0.01")
    levels = _levels(quick)
    D = STEEL.E * T**3 / (12.0 * (1.0 - STEEL.nu**2))
    scale = A**2 * math.sqrt(STEEL.rho * T / D)
    mindlin = scale * np.array([ref.mindlin_ss_plate(m, n, A, STEEL.E, STEEL.nu, STEEL.rho, T)
                                for m, n in ref.LEISSA_SS_MODES])
    leissa = np.array(ref.LEISSA_SS)
    r.metrics.update({f"mindlin_vs_leissa_mode{k + 1}": mindlin[k] / leissa[k] - 1.0 for k in range(4)})
    series, finest = [], {}
    for kind in KINDS:
        lam = np.array([_parameters(kind, n, "ss", 4) for n in levels])
        errors = lam / mindlin - 1.0
        h = A / np.array(levels)
        res = convergence_checks(r, f"{kind}_", h, errors, p=2.0, order_tol=0.2)
        r.check(f"{kind}_upper_bound", bool(np.all(errors > 0.0)))
        r.metrics.update({f"{kind}_lambda_mode{k + 1}": lam[-1, k] for k in range(4)})
        r.metrics[f"{kind}_order_measured"] = float(np.mean(res["orders"]))
        series += [(f"{kind} mode {k + 1}", h, errors[:, k]) for k in range(4)]
        finest[kind] = lam
    r.notes = (f"Meshes n = {levels} (n = 16: the sample files); hard simple support. Reference for the "
               "convergence: Mindlin's exact frequencies (the limit of Reissner-Mindlin elements), Leissa's Kirchhoff "
               "values reported beside them (mindlin_vs_leissa). Bilinear MITC4 and linear MITC3 converge as h^2 in "
               "frequency: order 2 +- 0.2 from the two finest meshes (measured 2.00-2.07; the next term is O(h^2) "
               "smaller, and a locking element would stall at order < 1); the finest error must stay below twice the "
               "rate-2 prediction from n = 8. Consistent mass, conforming bending: frequencies converge from above.")
    r.figures.append(convergence_figure("simply supported plate: error vs Mindlin exact", series, p=2.0))
    r.figures.append(parameter_figure(
        "simply supported square plate vs Leissa (1969)", leissa,
        [(f"{kind} n = {n}", finest[kind][i]) for kind in KINDS for i, n in enumerate(levels) if n >= 16]
        + [("Mindlin exact, t/a = 0.01", mindlin)], ref_label="Leissa lambda"))
    return r


def plate_cantilever(quick: bool) -> CaseResult:
    r = CaseResult("plate-cantilever",
                   "Leissa, Vibration of Plates, NASA SP-160 (1969), ch. 4: square C-F-F-F plate, nu = 0.3, "
                   "lambda = 3.492, 8.525, 21.43, 27.33, 31.11, from Barton's Ritz solution with beam functions "
                   "(Barton 1951, J. Appl. Mech. 18:129-134): upper bounds, about 0.3-0.7 % above the converged "
                   "plate values (docs/theory-shells.md §10)")
    levels = _levels(quick)
    leissa = np.array(ref.LEISSA_CFFF)
    finest, chart = {}, []
    for kind in KINDS:
        lam = np.array([_parameters(kind, n, "cfff", 5) for n in levels])
        dev = lam[-1] / leissa - 1.0
        for k in range(5):
            r.check(f"{kind}_vs_leissa_mode{k + 1}", lam[-1, k], leissa[k], "rel 1e-2")
        r.check(f"{kind}_below_leissa", bool(np.all(dev < 0.0)))
        changes = np.abs(np.diff(lam, axis=0))
        r.check(f"{kind}_changes_shrink", bool(np.all(changes[-1] < changes[-2])))
        r.metrics[f"{kind}_last_change_max_rel"] = float(np.max(changes[-1] / lam[-1]))
        r.metrics.update({f"{kind}_lambda_n{n}_mode{k + 1}": lam[i, k] for i, n in enumerate(levels) for k in range(5)
                          if n in (16, levels[-1])})
        finest[kind] = lam[-1]
        chart += [(f"{kind} n = {n}", lam[i]) for i, n in enumerate(levels) if n >= 16]
    r.metrics["quad_tri_max_diff_rel"] = float(np.max(np.abs(finest["quad"] / finest["tri"] - 1.0)))
    r.notes = (f"Meshes n = {levels} (n = 16: the sample files); all dofs of the edge x = 0 held. Leissa's cantilever "
               "values are Ritz upper bounds; the plate frequencies lie below them. Tolerance 1 % on the finest mesh, "
               "from the offsets that add up on the same side: Barton's Ritz excess over the converged Kirchhoff "
               "values, 0.3-0.7 % (docs/theory-shells.md §10, where both element types converge to the same numbers); "
               "the Reissner-Mindlin lowering at t/a = 0.01, 0.04-0.15 % for the bending modes (exact in the simply "
               "supported case) and somewhat more for the twisting mode 2, whose free-edge boundary layer of width "
               "~t is resolved only as h approaches t; the remaining discretization error, at most the last change "
               "(..._last_change_max_rel). below_leissa: every finest-mesh value lies under Leissa's, because the FE "
               "error left there (< 0.3 %) is smaller than the Ritz plus Mindlin offset. changes_shrink: successive "
               "refinements change every frequency by less each time (convergence). quad and tri are independent "
               "discretizations of the same plate; they agree to quad_tri_max_diff_rel on the finest mesh.")
    r.figures.append(parameter_figure("cantilever (CFFF) square plate vs Leissa (1969)", leissa, chart,
                                      ref_label="Leissa lambda"))
    return r
