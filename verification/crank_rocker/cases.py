"""Cases of the ``crank-rocker`` suite (models.py; He 1992, §9.4 after Samanta 1990).

Every model's start-up is simulated for 1 s; the metric names are part of the interface
(issue 5): ``crank_speed_1s`` (rad/s), ``current_peak`` (A), ``coupler_mid_defl_max`` (largest
|midpoint deflection from the chord|, m), ``coupler_axial_max`` / ``coupler_axial_min`` (axial
force at pin B, tension positive, N), ``energy_residual`` (the Huston & Liu balance: motor supply
work minus kinetic, magnetic, strain and dissipated energy, over the supply work). The thesis prints
its results only as plots; the reference of every model is the independent assumed-modes code of
assumed_modes.py (Lagrange's equations with an inextensible coupler of 4 sine modes and its chord
foreshortening; numpy/scipy only), stored in assumed_modes_reference.json with its convergence.
"""
from __future__ import annotations

import time

import numpy as np

import flexmb as fm
from flexmb.errors import InstabilityError

from ..framework import CaseResult
from . import assumed_modes, models

SOURCE = ("He 1992, §9.4 (crank-rocker with flexible coupler and DC motor, after Samanta 1990); reference: the "
          "independent assumed-modes code of verification/crank_rocker/assumed_modes.py (Lagrange's equations, "
          "inextensible coupler of 4 pinned-pinned sine modes with chord foreshortening, numpy/scipy; "
          "assumed_modes_reference.json)")
STEP, STEP_QUICK = 5e-4, 2e-3
REFERENCE_RUNS = assumed_modes.stored()["runs"]
REFERENCE = REFERENCE_RUNS[f"K{assumed_modes.REFERENCE_MODES}_rtol1e-08"]["metrics"]
"""The assumed-modes reference, 4 modes, DOP853 rtol 1e-8: crank speed at 1 s 69.97335 rad/s, current peak
111.01639 A, midpoint deflection 2.87810 mm, axial force +196.551 / -44.907 N. Its convergence
(assumed_modes_reference.json): 2 / 3 / 4 modes give 2.88923 / 2.87810 / 2.87810 mm and +196.539 / +196.549 /
+196.551 N, -44.908 / -44.907 / -44.907 N, the crank speed and current equal to 1e-8; 3 to 4 modes change every
metric by < 1e-5 relative."""
_runs: dict = {}


def run(model: str, rocker_factor: float, h: float, material=models.STEEL) -> dict:
    """Metrics and histories of one start-up (cached for the comparison cases)."""
    key = (model, rocker_factor, h, material.E, material.rho)
    if key in _runs:
        return _runs[key]
    cr = models.build(model, rocker_factor, material=material)
    t0 = time.perf_counter()
    message = "completed"
    try:
        res = fm.simulate(cr.system, models.T_END, h)
    except InstabilityError as exc:
        res, message = exc.result, str(exc)
    out = {"wall_s": time.perf_counter() - t0, "message": message, **histories(cr, res)}
    _runs[key] = out
    return out


def histories(cr: models.CrankRocker, res) -> dict:
    t = res.t
    omega = res.angular_velocity(cr.crank)[:, 2]
    current = res.v[:, cr.motor.offset]
    A = res.position(cr.crank, (models.A1, 0.0, 0.0))
    B = res.position(cr.rocker, (models.A3, 0.0, 0.0))
    chord = (A - B) / np.linalg.norm(A - B, axis=1)[:, None]
    F, _ = res.reaction(cr.joint_B)                       # force of the coupler on the rocker
    axial = np.einsum("ni,ni->n", F, chord)               # tension positive
    if cr.model == "rigid":
        mid = np.zeros_like(t)
    else:
        M = res.node_position(cr.coupler, cr.n // 2)
        d = M - 0.5 * (A + B)
        mid = d[:, 0] * chord[:, 1] - d[:, 1] * chord[:, 0]     # signed distance from the chord line
    e = res.energy()
    supply = np.concatenate([[0.0], np.cumsum(0.5 * np.diff(t) * (models.VOLTAGE * (current[1:] + current[:-1])))])
    residual = float(np.abs(e["total"] - e["total"][0]).max() / max(supply[-1], 1e-300))
    return {"t": t, "omega": omega, "current": current, "axial": axial, "mid": mid,
            "metrics": {"crank_speed_1s": float(omega[-1]), "current_peak": float(current.max()),
                        "coupler_mid_defl_max": float(np.abs(mid).max()), "coupler_axial_max": float(axial.max()),
                        "coupler_axial_min": float(axial.min()), "energy_residual": residual}}


_MOTOR = {"crank_speed_1s": ("rel 2e-4", "rel 2e-3"), "current_peak": ("rel 2e-5", "rel 2e-4")}
_FLEXIBLE_AXIAL = {"coupler_axial_max": ("rel 0.02", "rel 0.02"), "coupler_axial_min": ("rel 0.05", "rel 0.05")}
TOLERANCES = {
    "rigid": {**_MOTOR, "coupler_axial_max": ("rel 0.1", "rel 0.1"), "coupler_axial_min": ("rel 0.05", "rel 0.05")},
    "modal-pinned": {**_MOTOR, **_FLEXIBLE_AXIAL, "coupler_mid_defl_max": ("rel 0.02", "rel 0.03")},
    "modal-freefree": {**_MOTOR, **_FLEXIBLE_AXIAL},
    "nonlinear-beam": {**_MOTOR, **_FLEXIBLE_AXIAL, "coupler_mid_defl_max": ("rel 0.01", "rel 0.02")},
}
"""(full, quick) tolerances against the assumed-modes reference (REFERENCE; its own uncertainty from 3 to 4 modes
and from rtol 1e-8 to 1e-10 is in assumed_modes_reference.json). Crank speed and current: flexmb's O(h^2) step
error (the crank speed at 1 s differs from the reference by -7.5e-4 at h = 2 ms and -4.4e-5 at 0.5 ms, the ratio
16 of second order; the current peak by 3.4e-5 and 2.6e-6), about 4x; the coupler's elasticity changes the motor
load by less (rigid and flexible models agree to 3e-5). Peak tension: 2 % for the flexible models (measured
-0.2 to +1.0 %: 2 modes against 4, the modal bodies' load-case stiffening), 10 % for the rigid coupler, which
misses the tension the coupler's vibration adds (measured -5.0 %). Peak compression, set by the vibration's
phase: 5 % (measured up to 2.1 %). Midpoint deflection: 1 % (quick 2 %) for the nonlinear beam (measured -0.3 %,
+0.4 % at h = 2 ms), 2 % (quick 3 %) for the stiffened 2-mode pinned body (2 against 4 modes: the reference
itself moves 0.4 % from 2 to 3 modes); the free-free body without stiffening is reported, not checked -- the
thesis shows it differ. Every tolerance is below |reference|, so a model that computed nothing fails."""


def start_up_case(model: str):
    def case(quick: bool) -> CaseResult:
        h = STEP_QUICK if quick else STEP
        r = CaseResult(f"{model}", SOURCE)
        got = run(model, 1.0, h)
        m = got["metrics"]
        r.check("energy_residual", m["energy_residual"], tolerance="max 2e-3")
        for k, (tol_full, tol_quick) in TOLERANCES[model].items():
            r.check(k, m[k], REFERENCE[k], tol_quick if quick else tol_full)
        r.metrics.update({k: v for k, v in m.items() if k not in TOLERANCES[model] and k != "energy_residual"})
        r.metrics.update({f"reference_{k}": v for k, v in REFERENCE.items() if k not in TOLERANCES[model]})
        r.metrics["wall_s_simulation"] = got["wall_s"]
        r.notes = (f"h = {h:g} s; {got['message']}. energy_residual: generalized-alpha's numerical dissipation "
                   f"(rho_inf = 0.9) and the trapezoidal work integral, 2e-3 of the supply work. Reference: the "
                   f"independent assumed-modes code ({assumed_modes.REFERENCE_MODES} modes, assumed_modes.py); "
                   "tolerances in cases.TOLERANCES.")
        if model == "nonlinear-beam":
            r.figures += _figures(h)
        return r
    case.__name__ = model.replace("-", "_")
    case.slow = model in ("modal-freefree",)
    return case


def heavy_rocker(quick: bool) -> CaseResult:
    """Rocker inertia x 200 (He 1992, Fig. 9-19): the compressive coupler force passes the Euler
    load; the stiffened modal body must stop with a clear message, the nonlinear beam carry on."""
    h = STEP_QUICK if quick else STEP
    r = CaseResult("heavy-rocker", SOURCE + "; Euler load pi^2 EI / a2^2 of the pinned-pinned coupler")
    EI = models.STEEL.E * models.SECTION.Iz
    p_cr = np.pi ** 2 * EI / models.A2 ** 2
    modal = run("modal-pinned", 200.0, h)
    beam = run("nonlinear-beam", 200.0, h)
    stopped = modal["message"] != "completed"
    r.check("modal_pinned_stopped_with_instability", stopped and "became unstable" in modal["message"]
            and "buckling load" in modal["message"], tolerance="true")
    t_stop = float(modal["t"][-1])
    compression = float(-beam["axial"][beam["t"] <= t_stop].min())
    r.check("compression_at_stop_over_euler_load", compression / p_cr, 1.0, "rel 0.1")
    r.check("nonlinear_beam_completed", beam["message"] == "completed" and beam["t"][-1] >= models.T_END - 1e-9,
            tolerance="true")
    r.check("nonlinear_beam_peak_compression_over_euler_load", float(-beam["axial"].min()) / p_cr, tolerance="min 1.0")
    r.metrics.update({"modal_pinned_stop_time_s": t_stop, "euler_load_N": p_cr,
                      "nonlinear_beam_axial_min": float(beam["axial"].min()),
                      "nonlinear_beam_mid_defl_max": float(np.abs(beam["mid"]).max())})
    r.notes = ("Modal body: " + modal["message"] + f" Nonlinear beam: {beam['message']}; largest compression "
               f"{-beam['axial'].min():.4g} N against the Euler load {p_cr:.4g} N.")
    from ..fem.common import _axes
    fig, ax = _axes()
    ax.plot(beam["t"], -beam["axial"], "C2-", label="compression, nonlinear beam")
    ax.plot(modal["t"], -modal["axial"], "C0--", label="compression, modal pinned (stops)")
    ax.axhline(p_cr, color="k", ls=":", label="Euler load pi^2 EI / a2^2")
    ax.set_xlabel("t (s)")
    ax.set_ylabel("coupler compression (N)")
    ax.set_title("heavy rocker: coupler load against the buckling load")
    ax.legend(fontsize=8)
    r.figures.append(fig)
    fig, ax = _axes()
    ax.plot(beam["t"], beam["mid"] * 1e3, "C2-", label="nonlinear beam")
    ax.plot(modal["t"], modal["mid"] * 1e3, "C0--", label="modal pinned")
    ax.set_xlabel("t (s)")
    ax.set_ylabel("coupler midpoint deflection (mm)")
    ax.legend(fontsize=8)
    r.figures.append(fig)
    return r


def heavy_rocker_aluminium(quick: bool) -> CaseResult:
    """The thesis's buckling time (He 1992, §9.4: "at about 0.4 second ... after the first rotation") with an
    aluminium coupler. The heavy rocker loads the coupler in compression once per crank turn, at 0.7 turns past the
    start of each (compression peaks of the rigid-coupler run: 1,484 N at 0.35 s, 3,262 N at 0.51 s, 4,634 N at
    0.64 s, 5,673 N at 0.75 s, 6,464 N at 0.85 s, 7,067 N at 0.95 s), so the stiffened modal coupler buckles at the
    first peak above its Euler load pi^2 EI / a2^2: steel (207 GPa, 6,863 N) at the sixth, 0.947 s (heavy-rocker);
    a coupler with 45 GPa < E <= 98 GPa at the second, the first after the first turn (which ends at 0.405 s). The
    thesis prints no material: aluminium (70 GPa, 2,321 N) is our choice."""
    h = STEP_QUICK if quick else STEP
    r = CaseResult("heavy-rocker-aluminium", SOURCE + '; "at about 0.4 second from the start ... after the first '
                   'rotation" (the thesis, Fig. 9-19), with an aluminium coupler (our choice: no material is printed)')
    modal = run("modal-pinned", 200.0, h, models.ALUMINIUM)
    stopped = modal["message"] != "completed" and "became unstable" in modal["message"]
    r.check("modal_pinned_stopped_with_instability", stopped, tolerance="true")
    t_stop = float(modal["t"][-1])
    turn = np.concatenate([[0.0], np.cumsum(0.5 * np.diff(modal["t"]) * (modal["omega"][1:] + modal["omega"][:-1]))])
    r.check("stop_time_s", t_stop, 0.4, "abs 0.1")
    r.check("crank_turns_at_stop", float(turn[-1] / (2 * np.pi)), tolerance="min 1.0")
    r.metrics.update({"euler_load_N": float(np.pi ** 2 * models.ALUMINIUM.E * models.SECTION.Iz / models.A2 ** 2)})
    r.notes = (f"aluminium coupler (E = 70 GPa, rho = 2700 kg/m^3): the stiffened 2-mode pinned body stops at "
               f"{t_stop:.3f} s, {turn[-1] / (2 * np.pi):.2f} crank turns from the start (the first turn ends at "
               "0.405 s), at the second compression peak; the thesis: about 0.4 s, after the first rotation. "
               "Tolerance 0.1 s: the thesis's 'about', and the buckling times a material can give are the once-a-turn "
               "compression peaks (0.35, 0.49-0.51, 0.64, 0.75, 0.85, 0.95 s). The printed coupler inertia "
               "J2 = 0.042152 kg m^2 fits no 10 x 15 mm bar (steel gives 0.0223): the coupler's own mass barely moves "
               "the stop (steel with the mass that J2 implies: 0.948 s against 0.947 s), its modulus sets it.")
    return r


def _figures(h: float) -> list:
    """The four models side by side: crank speed, current, axial force, midpoint deflection."""
    from ..fem.common import _axes
    figs = []
    for key, label, scale in (("omega", "crank speed (rad/s)", 1.0), ("current", "motor current (A)", 1.0),
                              ("axial", "coupler axial force at B (N, tension +)", 1.0),
                              ("mid", "coupler midpoint deflection (mm)", 1e3)):
        fig, ax = _axes()
        for m, style in zip(models.MODELS, ("k-", "C0--", "C3:", "C2-")):
            run_key = (m, 1.0, h, models.STEEL.E, models.STEEL.rho)
            if run_key in _runs:
                d = _runs[run_key]
                ax.plot(d["t"], d[key] * scale, style, lw=1.0, label=m)
        ax.set_xlabel("t (s)")
        ax.set_ylabel(label)
        ax.legend(fontsize=8)
        figs.append(fig)
    return figs


CASES = ([start_up_case(m) for m in ("rigid", "modal-pinned", "modal-freefree", "nonlinear-beam")]
         + [heavy_rocker, heavy_rocker_aluminium])
