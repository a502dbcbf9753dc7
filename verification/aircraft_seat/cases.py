"""Cases of the ``aircraft-seat`` suite: the three columns of Table I of Lankarani, Olivares & Nagarajan,
"A virtual multibody and finite element analysis environment in the field of aerospace crashworthiness"
(2002): the final front-row configuration (aluminium 2024-O bulkhead, 35 in seat setback) as sled test,
component test and the authors' MADYMO simulation.

Table I as our scanned text keeps it (every number legible; the HIC, window and average are consistent:
avg^2.5 x window = 689 / 674 / 636 against the printed HIC 694 / 685 / 634):

============================  =======  =========  ==========
                              Sled     Component  Simulation
============================  =======  =========  ==========
head impact velocity (ft/s)   45.08    44         44
head impact angle (deg)       38       38         42
head CG peak acceleration (g) 143      143        140
HIC                           694      685        634
HIC window (ms)               23.7     21.4       22.8
average head acceleration (g) 61       63         60
============================  =======  =========  ==========

Cases (model.py gives the data and their sources). The "rig" is the paper's component tester: the upper
torso and head swing about a fixed hip onto the bulkhead with the head's centre at a given speed and the
hip-to-head line at a given angle from vertical (the table's head impact angle). The "sled run" is the FAR 25.562
test-2 sled test: pulse, lap-belted occupant, bulkhead at 35 in; its head impact speed and angle come out of the
model.

**Calibration.** Five numbers are calibrated together (Nelder-Mead on the sum of squared relative errors, then
rounded): the panel's yield force (4550 N) and the head skin's stiffness (3.16e7 N/m^1.5), the neck's and the
lumbar joint's rotational stiffnesses (175 and 1000 N m/rad) and the lap belt's stiffness (6.5e4 N/m), on eight
numbers: the component column's HIC, peak and window (the rig at 44 ft/s, 38 deg) and the sled column's head
impact speed and angle, HIC, peak and window (the sled run). Five parameters for eight numbers: the largest
residual is 5.8 % (the impact angle). The panel mass (0.35 kg) and the dampings are kept from the earlier
calibration (the fit is flat along panel mass against skin stiffness). Predicted, not fitted: the rig at the
MADYMO column's 44 ft/s and 42 deg and at the sled column's 45.08 ft/s and 38 deg (6 numbers, checked); the sled
run's HIC, peak and window against the component and MADYMO columns (reported: +2.9 / -0.7 / +6.7 % and
+11.1 / +1.4 / +0.2 %; the MADYMO column's HIC is the lowest of the three, 634).

* ``component-44fps-38deg`` -- the rig at the component column (calibration case).
* ``simulation-44fps-42deg`` -- the rig at the MADYMO column's 44 ft/s and 42 degrees: predicted.
* ``sled-45fps-38deg`` -- the rig at the sled test's measured head impact, 45.08 ft/s and 38 degrees (as the
  paper's component tester replicates the sled): predicted.
* ``sled-far25-562`` -- the full sled run: HIC, peak, window, head impact speed and angle against the sled
  column (10 %; calibrated numbers, checked so that a change of the model cannot move them unseen); against the
  other two columns reported (``hic_vs_component`` ...).

Why the former occupant overshot (HIC 944, peak 187 g, window 20.3 ms with neck 50 and lumbar 300 N m/rad, belt
6e4 N/m): its upper body was too loosely jointed. The torso swung forward about a soft lumbar joint, so the head
reached the panel faster than the sled test's (47.0 against 45.08 ft/s); and the soft neck raised the HIC at a
given impact (a 175 N m/rad neck lowers it from 975 to 832 at the same 47.3 ft/s and 39.2 deg). Measured with the
calibrated panel (HIC of the run): 975 with the former joints; neck 175: 832; lumbar 1000: 853 (impact 43.3 ft/s);
both: 759; and the belt at 6.5e4 N/m: 705. A part of the excess is physical and stays: the head strikes at 0.131 s
while the sled still decelerates at 7.9 g, so the head's acceleration relative to the sled gives a lower HIC (568
against 705; 797 against 975 with the former joints). The paper's model is a MADYMO Hybrid II with its database
joints and a seat of two planes with measured loading curves; ours has three segments, so the joint stiffnesses
are calibrated values of that reduced model, not the dummy's.

HIC is computed over windows up to 36 ms (FMVSS 208 HIC36; the table's windows are 21-24 ms) within the head
strike (FAR 25.562(c)(5): t1 and t2 bound the head strike; ``head_strike``), on the head centre-of-mass
accelerometer signal (kinematic acceleration less gravity) without filter. Before the strike the whipping head
already sees 30-40 g in the sled run; over the whole record the best window of a run with a 5 % stiffer belt starts
5 ms before the contact and lasts 28.8 ms, within the strike 22-23 ms. The step (0.2 ms, 0.05 ms in contact) is
converged: halving it twice changes the sled run's HIC by 3e-5, its peak by +0.4 % and its window by
-0.1 % (704.58 / 704.57 / 704.56; 142.0 / 142.4 / 142.5 g; 22.84 / 22.82 / 22.82 ms).

Tolerance: 10 % is the spread of the three columns themselves (HIC 634-694, 9 %; window 21.4-23.7 ms,
10 %): the same configuration measured by two methods does not agree better.
"""
from __future__ import annotations

import math

import numpy as np

import flexmb as fm
from flexmb.studies import metrics as mt

from ..framework import CaseResult
from .model import FT, G0, Occupant, component_test, sled_test

SOURCE = ("Lankarani, Olivares & Nagarajan 2002, 'A virtual multibody and finite element analysis environment "
          "in the field of aerospace crashworthiness', Table I")
HIC_WINDOW = 0.036                      # s, FMVSS 208 HIC36
TABLE_I = {                             # column: (impact ft/s, angle deg, peak g, HIC, window ms, average g)
    "sled": (45.08, 38.0, 143.0, 694.0, 23.7, 61.0),
    "component": (44.0, 38.0, 143.0, 685.0, 21.4, 63.0),
    "simulation": (44.0, 42.0, 140.0, 634.0, 22.8, 60.0),
}
HEAD_METRICS = ("hic", "hic_window_ms", "peak_head_g")
TOLERANCE = 0.10   # relative, every check: the spread of the table's own columns (module docstring)
SLED_RUN_KINEMATICS = ("impact_speed_fps", "impact_angle_deg")      # against the sled column
STEP, STEP_CONTACT = 2e-4, 5e-5         # s; the contact lasts about 20 ms: 400 steps


def head_strike(force: np.ndarray) -> slice:
    """The samples of the head strike: from the last sample before the head first touches the bulkhead to the first
    sample after it last leaves it (``force``: the contact force, N, per sample); every sample if it never touches."""
    on = np.flatnonzero(force > 0.0)
    if not on.size:
        return slice(None)
    return slice(max(int(on[0]) - 1, 0), int(on[-1]) + 2)


def head_response(res, system) -> dict:
    """HIC36 of the head strike (FAR 25.562(c)(5): t1 and t2 within the head strike) and its window, peak and
    HIC-average head acceleration (g), head speed (m/s) relative to the bulkhead and hip-to-head angle from vertical
    (deg) at first contact."""
    a = (mt.point_acceleration(res, "head") - np.asarray(system.gravity)) / G0
    bulkhead = next(f for f in system.forces if f.name == "bulkhead")
    force = res.contact_force(bulkhead)
    on = np.flatnonzero(force > 0.0)
    strike = head_strike(force)
    h = mt.hic(res.t[strike], a[strike], HIC_WINDOW)
    out = {"hic": h.value, "hic_window_ms": 1e3 * (h.t2 - h.t1), "peak_head_g": float(np.linalg.norm(a, axis=1).max()),
           "average_head_g": (h.value / (h.t2 - h.t1)) ** 0.4 if h.t2 > h.t1 else 0.0,
           "peak_bulkhead_force_N": float(force.max())}
    if on.size:
        i = int(on[0])
        base = "sled" if any(b.name == "sled" for b in system.bodies) else None
        v_head = res.velocity("head")[i]
        v_base = res.velocity(base)[i] if base else np.zeros(3)
        hip = res.position("pelvis")[i] if base else np.array([*Occupant().hip, 0.0])   # fixed hip of the rig
        d = res.position("head")[i] - hip
        out.update(contact_time_s=float(res.t[i]), head_strike_ms=1e3 * float(res.t[on[-1]] - res.t[i]),
                   impact_speed_fps=float(np.linalg.norm(v_head - v_base)) / FT,
                   impact_angle_deg=math.degrees(math.atan2(d[0], d[1])))
    return out


def _reference(column: str) -> dict:
    """Table I's column as a dict of the metric names of :func:`head_response`."""
    return dict(zip(("impact_speed_fps", "impact_angle_deg", "peak_head_g", "hic", "hic_window_ms",
                     "average_head_g"), TABLE_I[column]))


def _run(build) -> dict:
    system, t_end = build()
    res = fm.simulate(system, t_end, h=STEP, h_contact=STEP_CONTACT, progress=False)
    return head_response(res, system)


def _rig_case(name: str, column: str, note: str) -> CaseResult:
    """The component rig at a column's printed head impact speed and angle, its head metrics against that column."""
    speed_fps, angle_deg = TABLE_I[column][:2]
    r = _run(lambda: component_test(speed_fps * FT, angle_deg))
    ref = _reference(column)
    out = CaseResult(name, SOURCE, notes=note)
    for metric in HEAD_METRICS:
        out.check(metric, r[metric], ref[metric], f"rel {TOLERANCE}")
    out.metrics.update({k: v for k, v in r.items() if k not in HEAD_METRICS})
    out.metrics.update({f"paper_{k}": v for k, v in ref.items() if k not in HEAD_METRICS})
    return out


def component_44fps_38deg(quick: bool) -> CaseResult:
    return _rig_case("component-44fps-38deg", "component",
                     "Calibration case: the panel's yield force, the skin's stiffness and the occupant's neck, lumbar "
                     "and belt stiffnesses were fitted to this column and to the sled run (module docstring).")


def simulation_44fps_42deg(quick: bool) -> CaseResult:
    return _rig_case("simulation-44fps-42deg", "simulation",
                     "Predicted: the calibrated rig at the MADYMO column's 44 ft/s and 42 deg.")


def sled_45fps_38deg(quick: bool) -> CaseResult:
    return _rig_case("sled-45fps-38deg", "sled",
                     "Predicted: the calibrated rig at the sled test's measured head impact (45.08 ft/s, 38 deg), as "
                     "the paper's component tester replicates the sled.")


def sled_far25_562(quick: bool) -> CaseResult:
    """The FAR 25.562 sled run: HIC, peak, window, head impact speed and angle against the sled column (checked);
    HIC, peak and window against the other two columns as relative differences (``hic_vs_component`` ...)."""
    r = _run(sled_test)
    out = CaseResult("sled-far25-562", SOURCE, notes=(
        "The FAR 25.562 test-2 pulse with the lap-belted occupant and the bulkhead at 35 in. Its five numbers are "
        "among the calibration targets (with the component column's three); checked against the sled column at "
        "10 %, compared with the component and MADYMO columns (module docstring; docs/verification.md)."))
    ref = _reference("sled")
    for metric in HEAD_METRICS + SLED_RUN_KINEMATICS:
        out.check(metric, r[metric], ref[metric], f"rel {TOLERANCE}")
    for column in ("component", "simulation"):
        other = _reference(column)
        out.metrics.update({f"{metric}_vs_{column}": r[metric] / other[metric] - 1.0 for metric in HEAD_METRICS})
    out.metrics.update({k: v for k, v in r.items() if k not in HEAD_METRICS + SLED_RUN_KINEMATICS})
    out.metrics["paper_average_head_g"] = ref["average_head_g"]
    return out


CASES = [component_44fps_38deg, simulation_44fps_42deg, sled_45fps_38deg, sled_far25_562]
