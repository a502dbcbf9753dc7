"""Cases of the ``underframe`` suite (issue 26, item 6): the end-underframe of Pereira & Dias 2002, "Optimization
of rigid-flexible multibody systems with application to vehicle dynamics and crashworthiness", Example 4.3,
Tables III-IV; model and stated choices in model.py, the optimisation in optimise.py, equations in
docs/theory-underframe.md.

What the paper prints and how it is read:

* design function VCSI = (1/T) int a^2 dt at 30 km/h; read as a the car body's deceleration in g and T the time
  the buffers touch the wall, so that VCSI is the mean square deceleration (g^2) of the impact; the paper's
  numbers support that reading: 20.2 -> 13.6 is the ratio 0.673, the square of the mean width ratio 0.81 of
  its optimum, the scaling of a mean square when the collapse forces scale with the widths;
* constraints M_i < M_p at 5 km/h (i = 1..7): no hinge reaches its plastic moment in the service impact; the
  critical constraint printed as 4.71 x 10^-1 (initial) and -9.06 x 10^-3 (optimum), read as 1 - max M/M_p:
  utilization 0.529 initially ("all the constraints are satisfied") and 1.009 at the optimum (active within
  the optimiser's tolerance); here one constraint per member family (five);
* design variables: the flange widths of the I beams, b1 = 120, b2 = 100, b3 = 150 mm initially;
  optimum 97.36 / 75.3 / 130.38 mm; which members carry which width is not legible (Fig. 4): here b1 the
  headstock, b2 the diagonals and cross-bearers, b3 the centre sills and sole bars.

Two data are calibrated on the paper's initial design (model.calibrate): the car mass on VCSI = 20.2 and the
buffer spring on the critical service utilization 0.529; the initial-design checks of these two numbers guard
that calibration, they are not predictions. The optimum (VCSI and widths) is the prediction compared with the
paper.
"""
from __future__ import annotations

import numpy as np

from ..framework import CaseResult
from .model import DATA, FAMILIES, G0, H_STEP, INITIAL, PAPER_OPTIMUM, PAPER_VCSI, crash, replay_hinge, service
from .optimise import optimise_widths

SOURCE = ("Pereira & Dias 2002, Optimization of rigid-flexible multibody systems with application to vehicle "
          "dynamics and crashworthiness, Example 4.3, Tables III-IV; plastic hinge law: Ambrosio 2002, §2.1")
CALIBRATION_TOL = 0.02      # run-to-run sensitivity of the VCSI to the car mass: the calibration's residual
ENERGY_TOL = 2e-3           # trapezoid sums of the hinge and buffer work over 0.5 ms steps
REPLAY_TOL = 1e-8           # the same return mapping on the same rotations: round-off of sums of 800 terms


def _energy_checks(r: CaseResult, c) -> None:
    """Kinetic energy lost = work on the hinges + work on the buffers; flexmb's hinge law against the replay."""
    r.check("kinetic_lost_vs_hinge_plus_buffer_work_rel",
            abs(c.kinetic_lost - c.hinge_work - c.contact_work) / c.kinetic_lost, tolerance=f"max {ENERGY_TOL:g}")
    r.check("hinge_work_vs_replay_rel", abs(c.hinge_work - c.hinge_work_replay) / c.hinge_work,
            tolerance=f"max {REPLAY_TOL:g}")
    r.check("hinge_moment_vs_replay_over_Mp", c.law_error, tolerance=f"max {REPLAY_TOL:g}")
    r.check("energy_drift_rel", c.energy_drift / c.result.energy()["kinetic"][0], tolerance="max 1e-3")


def _figure(title: str, c):
    """The car body's deceleration (g) with the root of the VCSI over the contact, and the moment-rotation path of
    the hinge that turned most (flexmb's rotations through the replayed law, moments over M_p)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    res = c.result
    a = -res.acceleration(c.model.car)[:, 0] / G0
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9.0, 3.2))
    ax1.plot(res.t, a, "C0-", lw=1.0, label="car body")
    ax1.axhline(np.sqrt(c.vcsi), color="k", ls="--", lw=0.9, label=f"sqrt(VCSI) = {np.sqrt(c.vcsi):.2f} g")
    ax1.set_xlabel("t (s)")
    ax1.set_ylabel("deceleration (g)")
    ax1.legend(fontsize=7)
    theta = {h.element.name: res.joint_coordinates(h.joint) for h in c.model.hinges}
    h = max(c.model.hinges, key=lambda h: np.abs(theta[h.element.name]).max())
    M, _ = replay_hinge(theta[h.element.name], h.k, h.Mp)
    ax2.plot(theta[h.element.name], M / h.Mp, "C1-", lw=1.0)
    ax2.set_xlabel(f"rotation of {h.element.name} (rad)")
    ax2.set_ylabel("M / M_p")
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    return fig


def initial_design(quick: bool) -> CaseResult:
    r = CaseResult("initial-design", SOURCE + ": VCSI 20.2 and critical service constraint 4.71e-1 (read as "
                   "utilization 0.529) of the initial widths 120 / 100 / 150 mm")
    c = crash(INITIAL)
    s = service(INITIAL)
    u = max(s.family_utilization.values())
    r.check("vcsi_g2", c.vcsi, PAPER_VCSI[0], f"rel {CALIBRATION_TOL:g}")
    r.check("service_utilization_max", u, 1.0 - 0.471, f"rel {CALIBRATION_TOL:g}")
    _energy_checks(r, c)
    yielded = sum(np.abs(M).max() >= h.Mp * (1 - 1e-9) for h, M in _replayed(c))
    r.check("hinges_yielded_at_30kmh", yielded, tolerance="min 20")
    r.metrics.update(contact_time_s=c.contact_time, peak_deceleration_g=c.peak_g, stroke_m=c.stroke,
                     kinetic_lost_J=c.kinetic_lost, hinge_work_J=c.hinge_work, buffer_work_J=c.contact_work,
                     car_mass_kg=DATA.car_mass, buffer_k_N_per_m=DATA.buffer_k,
                     **{f"service_utilization_{f.replace(' ', '_')}": s.family_utilization[f] for f in FAMILIES})
    r.figures.append(_figure("initial design, 30 km/h", c))
    r.notes = ("Calibrated: car mass and buffer spring (model.calibrate) so that these two numbers are the paper's; "
               "the checks guard the calibration. Independent: the kinetic energy lost equals the work of the hinges "
               "plus the buffers (the buffers' work from their contact forces and head speeds), and flexmb's hinge "
               "moments and work equal a plain return-mapping replay of the saved rotations.")
    return r


def _replayed(c):
    """(hinge, replayed moment history) of every hinge of a crash run."""
    return [(h, replay_hinge(c.result.joint_coordinates(h.joint), h.k, h.Mp)[0]) for h in c.model.hinges]


PREDICTION_TOL = 0.05       # the index is a mean square: 5 % in VCSI is 2.5 % in the collapse force levels


def paper_optimum(quick: bool) -> CaseResult:
    r = CaseResult("paper-optimum-widths", SOURCE + ": VCSI 13.6 at the optimal widths 97.36 / 75.3 / 130.38 mm "
                   "(a prediction: the model is calibrated at the initial design only)")
    c = crash(PAPER_OPTIMUM)
    s = service(PAPER_OPTIMUM)
    r.check("vcsi_g2", c.vcsi, PAPER_VCSI[1], f"rel {PREDICTION_TOL:g}")
    r.check("vcsi_ratio_to_initial", c.vcsi / PAPER_VCSI[0], PAPER_VCSI[1] / PAPER_VCSI[0], f"rel {PREDICTION_TOL:g}")
    _energy_checks(r, c)
    r.metrics.update(contact_time_s=c.contact_time, peak_deceleration_g=c.peak_g, stroke_m=c.stroke,
                     service_utilization_max=max(s.family_utilization.values()),
                     service_utilization_paper=1.0 + 9.06e-3)
    r.figures.append(_figure("the paper's optimal widths, 30 km/h", c))
    r.notes = ("VCSI tolerance 5 %: the index is a mean square, so 5 % is 2.5 % in the force levels; the scatter of "
               "the index between nearby designs (~0.5 %) and the step error (0.64 %, h = 1 ms against 0.5 ms) are "
               "well inside. The ratio to the initial VCSI depends most on the members' sideways offset (0.512 at "
               "0.25 m, 0.746 at 0.45 m; 0.35 m chosen before this comparison, docs/theory-underframe.md §6). "
               "Reported, not checked: the service utilization here (about 0.62) against the paper's "
               "1.009 -- in this model the buffer spring sets the service force, so the constraint does not bind at "
               "the paper's widths (docs/theory-underframe.md §6).")
    return r


def step_convergence(quick: bool) -> CaseResult:
    r = CaseResult("step-convergence", "the initial design's VCSI at the suite's step h = 1 ms against h = 0.5 ms")
    coarse, fine = crash(INITIAL).vcsi, crash(INITIAL, h=0.5 * H_STEP).vcsi
    r.check("vcsi_step_change_rel", abs(coarse - fine) / fine, tolerance="max 0.01")
    r.metrics.update(vcsi_h=coarse, vcsi_h_half=fine)
    r.notes = "1 %: a fifth of the prediction tolerance of paper-optimum-widths (measured 0.64 %)."
    return r


step_convergence.slow = True


def optimised_widths(quick: bool) -> CaseResult:
    r = CaseResult("optimised-widths", SOURCE + ": minimum VCSI 13.6 at b = 97.36 / 75.3 / 130.38 mm, the service "
                   "constraint active (-9.06e-3)")
    o = optimise_widths()
    u = max(o.optimum.utilization.values())
    r.check("optimiser_success", o.success)
    r.check("service_utilization_max", u, tolerance="max 1.01")
    r.check("service_constraint_active", u, tolerance="min 0.97")
    r.check("vcsi_reduced_vs_initial", o.optimum.vcsi / o.initial.vcsi, tolerance="max 0.95")
    r.metrics.update(vcsi_optimum_g2=o.optimum.vcsi, vcsi_paper_g2=PAPER_VCSI[1],
                     **{f"b{i + 1}_mm": 1e3 * b for i, b in enumerate(o.optimum.widths)},
                     **{f"b{i + 1}_paper_mm": 1e3 * b for i, b in enumerate(PAPER_OPTIMUM)},
                     evaluations=o.evaluations, iterations=o.iterations)
    r.notes = o.message
    return r


optimised_widths.slow = True

CASES = [initial_design, paper_optimum, step_convergence, optimised_widths]
