"""Cases of the ``train-crash`` suite built on the SAFETRAIN staircases of Pereira & Dias 2002, Table II.

Data sources (staircase.py and multibody.py give the readings and our choices):

* Pereira & Dias, "Optimization of rigid-flexible multibody systems with application to vehicle dynamics and
  crashworthiness" (Virtual Nonlinear Multibody Systems vol. II, NATO ASI, Prague 2002), §4.1-4.2: the
  front-front collision of two equal 3-car trains, one at 55 km/h into the other standing (Fig. 2: car masses,
  only "40" and "45" t legible), the 5 g limit of the sustained accelerations, which their Fig. 3 shows to be
  met, and the staircase levels of Table II (initial design).
* Ambrosio, "Impact of rigid and flexible multibody systems: deformation description and contact models" (same
  volume, §5.1, after Milho, Ambrosio & Pereira 2002): the car of five bodies (car body, two bogies, two end
  extremities) and the SAFETRAIN validation test: vehicle C at 54 km/h into vehicles A and B coupled and standing
  (Fig. 15: total masses 60.4, 30.5 and 70 t), low-energy ends on A and B, a high-energy device on C's
  colliding end; wagon C's device "is expected to be fully crushed" and crushes more than wagon A's.

Cases:

* ``he-staircase-wall-30kmh``: one rigid 40 t car at 30 km/h through the HE staircase into a rigid wall -- the
  crush where the curve's work equals the kinetic energy, the deceleration of the step reached, the rebound
  speed from the elastic energy of the unloading line (closed forms below).
* ``safetrain-3car-trains-55kmh``: Pereira & Dias's scenario with the cars as five-body cars: the energy per
  device against the closed form of its own curve, energy conservation, momentum, the sustained car deceleration
  below 5 g and against the closed-form plateau (F_HE3 - F_LE1) / m of the leading cars.
* ``safetrain-3car-trains-55kmh-light-leading`` (full run): the same with 40 t leading cars (reported).
* ``safetrain-test-54kmh``: the validation test of Milho, Ambrosio & Pereira with the same cars and staircases:
  conservation and the energy per device; the paper's "C's device fully crushed, more than A's" against the ideal
  sequence of two devices in series, checked on a run with light (100 kg) end extremities.
* ``safetrain-anticlimber-54kmh``: the same test in a planar model (anticlimber.py): conservation and the energy
  per device checked; the anti-climber's gap and vertical force reported beside the paper's 15 mm and 15 t, also at
  the interlock stiffness the paper's two numbers imply (15 t g0 / 15 mm).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy.optimize import brentq

import flexmb as fm
from flexmb.forces.crash import G0
from flexmb.studies.cfc import cfc_filter

from ..framework import CaseResult
from . import anticlimber, multibody as mb
from .multibody import Car, Interface
from .staircase import HE, LE, Staircase, absorbed_after, curve_work

KMH = 1.0 / 3.6                 # m/s per km/h
CAR_LENGTH = 26.0               # m, every car (not printed for these trains; the coach length of Ambrosio's Table 2)
SUSTAINED_LIMIT_G = 5.0         # Pereira & Dias 2002, §4.1: "below 5 G that is the value usually accepted"
CFC = 60                        # SAE J211-1 channel class for vehicle structure (flexmb/studies/cfc.py)


# -- one car into a wall: the staircase against its closed form --------------------------------------------------
def wall_reference(stair: Staircase, mass: float, v0: float, rise: float, block: float, ku: float) -> dict:
    """Closed forms of a rigid mass ``mass`` (kg) at ``v0`` (m/s) crushing the staircase against a rigid wall: the
    largest crush solves W(d) = 1/2 m v0^2 (W the curve's work, exact piecewise-quadratic, root by bisection to
    round-off), the force there is the level F of the step reached (on its plateau) and the deceleration F/m;
    the unloading line returns F^2/(2 k_u), so the mass rebounds at F/sqrt(m k_u) and the device keeps
    1/2 m v0^2 - F^2/(2 k_u)."""
    curve = stair.curve(rise, block)
    kinetic = 0.5 * mass * v0 * v0
    crush = brentq(lambda d: curve_work(curve, d) - kinetic, 0.0, 10.0, xtol=1e-14, rtol=1e-15)
    force = float(np.interp(crush, *curve))
    return {"crush": crush, "force": force, "deceleration": force / mass, "rebound": force / np.sqrt(mass * ku),
            "absorbed": kinetic - force ** 2 / (2.0 * ku), "kinetic": kinetic,
            "step": int(np.searchsorted(stair.ends, crush)) + 1}


WALL_MASS, WALL_SPEED = 40.0e3, 30.0 * KMH


def he_staircase_wall_30kmh(quick: bool) -> CaseResult:
    r = CaseResult("he-staircase-wall-30kmh",
                   "closed form of a rigid mass crushing a tabulated staircase against a wall (energy: W(d) = 1/2 m "
                   "v0^2; force and deceleration of the step reached; rebound from the unloading line's elastic "
                   "energy); HE staircase of Pereira & Dias 2002, Table II (initial design)")
    ref = wall_reference(HE, WALL_MASS, WALL_SPEED, mb.RISE, mb.BLOCK_STIFFNESS, mb.K_UNLOAD)
    s = fm.System()
    car = s.add(fm.RigidBody(WALL_MASS, mb._box_inertia(WALL_MASS, CAR_LENGTH), position=(-5.0, 0, 0),
                             velocity=(WALL_SPEED, 0, 0), name="car"))
    curve = HE.curve(mb.RISE, mb.BLOCK_STIFFNESS)
    s.add(fm.CrushElement(car, s.ground, point_a=(-5.0, 0, 0), point_b=(0.0, 0, 0), curve=curve,
                          unloading_stiffness=mb.K_UNLOAD, name="HE"))
    h = 2.5e-4
    res = fm.simulate(s, 0.6, h)
    x = res.position(car)[:, 0] + 5.0
    v, a = res.velocity(car)[:, 0], res.acceleration(car)[:, 0]
    group = s.compile().crash[0]
    plateau = (x > HE.ends[1] + 2 * mb.RISE) & (v > 0.05 * WALL_SPEED)      # on step 3, before the stop
    r.check("crush", x.max(), ref["crush"], "rel 1e-4")
    r.check("step_reached", int(np.searchsorted(HE.ends, x.max())) + 1, ref["step"], "abs 0.5")
    r.check("deceleration_on_step_3_g", -a[plateau].mean() / G0, ref["deceleration"] / G0, "rel 1e-6")
    r.check("rebound_speed", -v[-1], ref["rebound"], "rel 5e-4")
    r.check("energy_absorbed", group.absorbed[0], ref["absorbed"], "rel 1e-5")
    r.check("energy_balance_rel", abs(0.5 * WALL_MASS * v[-1] ** 2 + group.absorbed[0] - ref["kinetic"]) / ref["kinetic"],
            tolerance="max 1e-6")
    steps = HE.step_energies(ref["crush"])
    r.metrics.update({f"ideal_step_{k + 1}_energy": e for k, e in enumerate(steps)})
    r.metrics.update(kinetic_energy=ref["kinetic"], ideal_staircase_energy=steps.sum(),
                     rise_deficit=steps.sum() - curve_work(curve, ref["crush"]))
    r.notes = (f"m = {WALL_MASS / 1e3:g} t, v0 = 30 km/h (kinetic energy {ref['kinetic'] / 1e6:.4f} MJ), HE steps 1000/2000/"
               f"3000 kN over 200/200/500 mm (Table II read as step lengths, staircase.py), each rising over "
               f"{mb.RISE * 1e3:g} mm; k_u = {mb.K_UNLOAD:g} N/m; h = {h:g} s. The mass stops in step {ref['step']} at "
               f"{ref['crush']:.5f} m. Tolerances: the largest crush (sampled) and the rebound speed err only in the steps "
               "that cross the six kinks of the curve, O(h^2): crush 1.5e-4, 2.7e-5, 8.6e-6, 2.0e-6 at h = 5e-4, "
               "2.5e-4, 1.25e-4, 6.25e-5 s (rel 1e-4), rebound 5e-5 at this h (rel 5e-4); the step-3 deceleration "
               "is F/m exactly up to the Newton tolerance (rel 1e-6); the absorbed work, the element's trapezoid "
               "sum, exact between kinks, errs by 3.5e-7 (rel 1e-5). Ideal step energies F_i l_i are reported; the "
               "rises make the curve's work smaller by sum dF_i rise/2 (rise_deficit).")
    return r


# -- trains ------------------------------------------------------------------------------------------------------
def _car_groups(model: mb.TrainModel) -> list[list[int]]:
    """Indices in ``model.bodies`` of each car's car body and bogies (the car as the papers' single 1-D mass,
    without the end bodies, which belong to the interfaces)."""
    out = []
    for car in model.cars:
        out.append([i for i, b in enumerate(model.bodies) if b.name == car.name or b.name.startswith(f"{car.name}-bogie")])
    return out


def _check_conservation(r: CaseResult, res, bodies: list, masses: np.ndarray, energy_tol: str) -> np.ndarray:
    """Momentum along x (no external force acts along the track) and the energy balance of ``Result.energy()``
    (kinetic + spring energy - non-conservative work); returns the velocities along x (n_t, n_bodies)."""
    v = np.array([res.velocity(b)[:, 0] for b in bodies]).T
    p = v @ masses
    energy = res.energy()
    r.check("momentum_rel", np.abs(p - p[0]).max() / abs(p[0]), tolerance="max 1e-7")
    r.check("energy_balance_rel", np.abs(energy["total"] - energy["total"][0]).max() / energy["kinetic"][0],
            tolerance=energy_tol)
    return v


def _check_devices(r: CaseResult, res, system: fm.System, devices: list) -> float:
    """Each device's absorbed work against the closed form of its curve (the largest relative error checked, the
    values reported with crush, ratio to the printed stroke and ideal step energies); returns their total (J)."""
    group = system.compile().crash[0]
    worst = 0.0
    for d in devices:
        top = float(group.max_crush[d.index])
        closed = absorbed_after(d.curve, top, float(mb.element_crush(res, system, d.index)[-1]), mb.K_UNLOAD)
        worst = max(worst, abs(group.absorbed[d.index] - closed) / closed)
        r.metrics[f"crush_{d.label}"] = top
        r.metrics[f"crush_over_stroke_{d.label}"] = top / d.staircase.stroke
        r.metrics[f"energy_absorbed_{d.label}"] = group.absorbed[d.index]
        r.metrics[f"energy_closed_form_{d.label}"] = closed
        for k, e in enumerate(d.staircase.step_energies(top)):
            r.metrics[f"ideal_step_{k + 1}_energy_{d.label}"] = e
    r.check("device_energy_vs_closed_form_rel", worst, tolerance="max 1e-3")
    return float(sum(group.absorbed[d.index] for d in devices))


def _report_decelerations(r: CaseResult, res, model: mb.TrainModel, v: np.ndarray) -> None:
    """Per car: the sustained deceleration (CFC 60 of the mass centre of car body and bogies), the car body's own
    CFC 60 peak and the final velocity."""
    groups = _car_groups(model)
    acc = np.array([res.acceleration(b)[:, 0] for b in model.bodies]).T
    car_acc = np.array([acc[:, g] @ model.masses[g] / model.masses[g].sum() for g in groups]).T
    body_acc = np.array([res.acceleration(b)[:, 0] for b in model.car_bodies]).T
    car_f, body_f = cfc_filter(res.t, car_acc, CFC), cfc_filter(res.t, body_acc, CFC)
    for k, car in enumerate(model.cars):
        r.metrics[f"sustained_deceleration_{car.name}_g"] = np.abs(car_f[:, k]).max() / G0
        r.metrics[f"underframe_deceleration_cfc60_{car.name}_g"] = np.abs(body_f[:, k]).max() / G0
        r.metrics[f"velocity_final_{car.name}"] = v[-1, groups[k][0]]


def _report_run(r: CaseResult, res, model: mb.TrainModel, relative_kinetic: float) -> None:
    """Checks and metrics shared by the 1-D train cases: conservation, lateral motion, the energy per device, the
    devices' total at most the relative kinetic energy, decelerations per car."""
    v = _check_conservation(r, res, model.bodies, model.masses, "max 1e-5")
    r.check("lateral_max", mb.lateral_max(res, model), tolerance="max 1e-12")
    devices = _check_devices(r, res, model.system, model.devices)
    r.check("absorbed_over_relative_kinetic", devices / relative_kinetic, tolerance="max 1")
    energy = res.energy()
    kinetic = 0.5 * (v * v) @ model.masses
    r.metrics.update(kinetic_energy_initial=kinetic[0], kinetic_energy_final=kinetic[-1], energy_devices=devices,
                     energy_dampers=float(-(energy["work_nc"][-1] - energy["work_nc"][0])) - devices,
                     relative_kinetic_energy=relative_kinetic)
    _report_decelerations(r, res, model, v)


def _three_car_trains(speed: float, masses: tuple[float, float, float], block_stiffness: float) -> mb.TrainModel:
    """Two equal 3-car trains front to front along x: train 1 (its car 3 first, moving at ``speed``), then train 2
    (car 1 first, standing). LE device on the car nearer the impact of each inner interface, HE on each front."""
    cars = ([Car(f"T1-car{3 - i}", masses[2 - i], CAR_LENGTH, speed) for i in range(3)]
            + [Car(f"T2-car{i + 1}", masses[i], CAR_LENGTH, 0.0) for i in range(3)])
    interfaces = [Interface(None, LE), Interface(None, LE), Interface(HE, HE), Interface(LE, None), Interface(LE, None)]
    names = ["T1-LE2", "T1-LE1", "impact", "T2-LE1", "T2-LE2"]
    return mb.build(cars, interfaces, names, block_stiffness)


TRAIN_MASSES = (45.0e3, 40.0e3, 40.0e3)      # kg, cars 1 (leading, motor) to 3; Fig. 2 legible: 40 and 45 t
HELD = 0.0                                    # block stiffness of the "last level held" reading (staircase.py)
LEADING_CARS = ("T1-car1", "T2-car1")         # the two cars at the impact interface
FIG2_HE_AXIS = 2.0                            # m, the displacement axis Pereira & Dias's Fig. 2 draws the HE curve on


def _checked(r: CaseResult, metric: str) -> float:
    """The value of the check ``metric`` of ``r``."""
    return next(c.value for c in r.checks if c.metric == metric)


def _sustained_max(r: CaseResult, cars) -> float:
    return max(r.metrics[f"sustained_deceleration_{c.name}_g"] for c in cars)


class TrainRuns(NamedTuple):
    """The two runs of a 3-car train case: the held run's largest sustained deceleration (g) and model, and the
    blocked run's result."""

    sustained_max_g: float
    held: mb.TrainModel
    blocked: CaseResult


def _held_and_blocked(r: CaseResult, masses, h: float, t_end: float) -> TrainRuns:
    """Two 3-car trains of car ``masses`` (kg, leading first) at 55 km/h into the standing one, run twice: with the
    last level of each staircase held past its printed length (reported into ``r``) and with every device blocking
    at its printed stroke (reported into a second result, whose sustained deceleration and HE crush go into ``r``'s
    metrics as ``blocked_*``)."""
    speed = 55.0 * KMH
    relative = 0.25 * sum(masses) * speed ** 2          # 1/2 mu v0^2, mu = M/2 for two equal trains
    model = _three_car_trains(speed, masses, HELD)
    _report_run(r, fm.simulate(model.system, t_end, h), model, relative)
    blocked = _three_car_trains(speed, masses, mb.BLOCK_STIFFNESS)
    other = CaseResult("blocked", "")
    _report_run(other, fm.simulate(blocked.system, t_end, h), blocked, relative)
    r.metrics.update(blocked_sustained_deceleration_max_g=_sustained_max(other, blocked.cars),
                     blocked_crush_over_stroke_HE=other.metrics["crush_over_stroke_impact_HE_T1-car1"])
    return TrainRuns(_sustained_max(r, model.cars), model, other)


def leading_car_plateau_g(car_mass: float) -> float:
    """Closed-form plateau deceleration (g) of a leading car of ``car_mass`` (kg): its HE front on its last level
    (3000 kN) while the LE device behind it still crushes on its first (1000 kN), (F_HE3 - F_LE1) / m. The two
    trains meet symmetrically in their centre-of-mass frame, and this is the largest difference of the two levels
    the leading car sees (once its LE reaches 2000 kN the difference falls to 1000 kN)."""
    return (HE.levels[-1] - LE.levels[0]) / car_mass / G0


def leading_mass_for_limit() -> float:
    """The smallest single-mass leading car (kg) whose plateau stays within the 5 g limit:
    (F_HE3 - F_LE1) / (5 g0)."""
    return (HE.levels[-1] - LE.levels[0]) / (SUSTAINED_LIMIT_G * G0)


#: CFC 60's overshoot of a step: the peak of the filtered unit step at this suite's sample interval (J211-1's
#: 4-pole phaseless Butterworth; measured 1.0337 for a rectangular pulse of 20-100 ms). A filtered plateau lies
#: between its level (the filter settles within a few ms on a plateau of 50 ms) and the level times this.
CFC60_STEP_OVERSHOOT = 1.034


def _check_plateau(r: CaseResult, model: mb.TrainModel, cars: tuple) -> None:
    """The leading cars' sustained deceleration against the closed-form plateau of their mass centre (car body and
    bogies: the devices act on the car body only, so the group's acceleration is the level difference over the
    group's mass), and the paper's single-mass car's plateau and the leading mass the 5 g limit needs (reported)."""
    groups = _car_groups(model)
    ratios = []
    for name in cars:
        k = next(i for i, c in enumerate(model.cars) if c.name == name)
        plateau = leading_car_plateau_g(float(model.masses[groups[k]].sum()))
        r.metrics[f"plateau_deceleration_{name}_g"] = plateau
        ratios.append(r.metrics[f"sustained_deceleration_{name}_g"] / plateau)
    r.check("sustained_over_plateau_min", min(ratios), tolerance="min 0.999")
    r.check("sustained_over_plateau_max", max(ratios), tolerance=f"max {CFC60_STEP_OVERSHOOT:g}")
    leading = next(c for c in model.cars if c.name == cars[0])
    r.metrics.update(single_mass_plateau_g=leading_car_plateau_g(leading.mass),
                     leading_mass_for_5g_t=leading_mass_for_limit() / 1e3)


def safetrain_3car_trains_55kmh(quick: bool) -> CaseResult:
    r = CaseResult("safetrain-3car-trains-55kmh",
                   "Pereira & Dias 2002 §4.1 (two equal 3-car trains, 55 km/h into the standing one; sustained "
                   "accelerations below 5 g) with the Table II staircases; energy per device against the closed-form "
                   "work of its curve; conservation of momentum and of energy (kinetic + device work + damper work)")
    h, t_end = 2.5e-4, 0.8
    runs = _held_and_blocked(r, TRAIN_MASSES, h, t_end)
    other = runs.blocked
    r.check("sustained_deceleration_max_g", runs.sustained_max_g, tolerance=f"max {SUSTAINED_LIMIT_G:g}")
    _check_plateau(r, runs.held, LEADING_CARS)
    r.check("crush_HE_max", max(r.metrics[f"crush_impact_HE_{c}"] for c in LEADING_CARS),
            tolerance=f"max {FIG2_HE_AXIS:g}")
    r.metrics.update(blocked_momentum_rel=_checked(other, "momentum_rel"),
                     blocked_device_energy_vs_closed_form_rel=_checked(other, "device_energy_vs_closed_form_rel"))
    r.notes = (_notes_common(h, t_end) + " Cars (x order) T1-car3, T1-car2, T1-car1 | T2-car1, T2-car2, T2-car3; "
               f"masses car 1 (leading) {TRAIN_MASSES[0] / 1e3:g} t, cars 2-3 {TRAIN_MASSES[1] / 1e3:g} t (Fig. 2 of "
               "Pereira & Dias shows only '40' and '45' t legibly; the heavier value is taken for the leading motor "
               "car), 26 m long. LE device on the car nearer the impact of each inner interface, the coupler head "
               "locked to the other car; the two HE fronts in series through one body (the two fronts locked by "
               "their anti-climbers). Brakes of the standing train left out (momentum is conserved). Checked run: "
               "the last level of each staircase is held past the printed lengths (Fig. 2 draws the HE curve to "
               "2 m of crush); the same run with every device blocking at its printed stroke is reported "
               "(blocked_*): the HE fronts exhaust their 0.9 m and the leading cars see ~25 g. Sustained "
               "deceleration: the acceleration of each car's mass centre (car body and bogies: the papers' single "
               "1-D car mass), CFC 60 (SAE J211-1, vehicle structure); the car body's own CFC 60 peak (an "
               "underframe accelerometer, which also sees the bogies swinging on their links) is reported. The "
               "5 g check is the paper's statement, not a closed form: it holds with 45 t leading cars (4.8 g), "
               "not with 40 t (5.5 g), see docs/verification.md.")
    return r


LIGHT_LEADING = (40.0e3, 40.0e3, 40.0e3)     # kg, the other reading of Fig. 2: 40 t leading cars


def safetrain_3car_trains_55kmh_light_leading(quick: bool) -> CaseResult:
    r = CaseResult("safetrain-3car-trains-55kmh-light-leading",
                   "as safetrain-3car-trains-55kmh with 40 t leading cars (the other reading of Pereira & Dias's "
                   "Fig. 2): energy per device against its closed form and conservation checked; the sustained "
                   "decelerations reported against the paper's 5 g, for both readings of the staircase end")
    h, t_end = 2.5e-4, 0.8
    runs = _held_and_blocked(r, LIGHT_LEADING, h, t_end)
    r.metrics["sustained_deceleration_max_g"] = runs.sustained_max_g
    _check_plateau(r, runs.held, LEADING_CARS)
    r.notes = (_notes_common(h, t_end) + " All cars 40 t, otherwise as safetrain-3car-trains-55kmh. The 5 g limit "
               "is not met in either reading (sustained_deceleration_max_g, blocked_sustained_deceleration_max_g), "
               "which is why the checked case takes 45 t for the leading car: the result depends on a mass the "
               "scanned figure does not show.")
    return r


safetrain_3car_trains_55kmh_light_leading.slow = True


def _notes_common(h: float, t_end: float) -> str:
    return (f"Cars of five bodies (multibody.py): car body {CAR_LENGTH:g} m long, two {mb.BOGIE_MASS / 1e3:g} t bogies on "
            f"longitudinal links k = {mb.K_BOGIE:g} N/m, c = {mb.C_BOGIE:g} N s/m, {mb.END_MASS / 1e3:g} t per end "
            f"extremity (our choices, out of each car's printed mass). Staircases rise over {mb.RISE * 1e3:g} mm, "
            f"k_u = {mb.K_UNLOAD:g} N/m. h = {h:g} s, t_end = {t_end:g} s (the crush is over by 0.45 s). "
            "Tolerances: momentum 1e-7 (Newton tolerance 1e-8 per step, accumulated); energy balance "
            "(Result.energy(): kinetic + spring energy - non-conservative work, the device and damper work) 1e-5 of "
            "the initial kinetic energy (the generalized-alpha method, rho_inf = 0.9, slightly damps the ringing "
            "of the 1-2 t end bodies on their stiff ties; measured 5.5e-7 to 1.6e-6); each device's absorbed work "
            "(trapezoid per step) against the closed-form area under its curve to its largest crush less the "
            "elastic energy its unloading line returned, rel 1e-3 (only the steps that cross a kink of the curve "
            "err; measured below 1e-4); the devices' total at most the relative kinetic energy 1/2 mu v0^2.")


# -- the SAFETRAIN validation test -------------------------------------------------------------------------------
TEST_MASSES = {"B": 60.4e3, "A": 30.5e3, "C": 70.0e3}     # kg, Fig. 15 in the printed order B, A, C (our reading)
TEST_SPEED = 54.0 * KMH


LIGHT_END_MASS = 100.0    # kg, each end extremity in the light-interface run of the SAFETRAIN test


def ideal_series_crush(energy: float) -> tuple[float, float]:
    """Crushes (m) of A's LE and C's HE devices in series through a massless interface once they have absorbed
    ``energy`` (J) together: in series both carry one force, so the device on the lower level crushes and equal levels
    crush together; A's LE reaches the end of its 2000 kN step (0.9 m) while C's HE crushes its 1000 and 2000 kN steps
    (0.4 m); then only C crushes, on its 3000 kN level (below A's 3500 kN), held past its 0.9 m stroke. Returns
    (crush of A, crush of C); valid once ``energy`` exceeds the work of both to that point."""
    le, he = LE.curve(mb.RISE, 0.0), HE.curve(mb.RISE, 0.0)
    a = float(LE.ends[1])
    rest = energy - curve_work(le, a)
    if rest < curve_work(he, float(HE.ends[1])):
        raise ValueError(f"ideal_series_crush: {energy:g} J does not bring C's device onto its last level")
    return a, brentq(lambda c: curve_work(he, c) - rest, 0.0, 10.0, xtol=1e-12)


def _test_model(end_mass: float) -> mb.TrainModel:
    cars = [Car("B", TEST_MASSES["B"], CAR_LENGTH, 0.0), Car("A", TEST_MASSES["A"], CAR_LENGTH, 0.0),
            Car("C", TEST_MASSES["C"], CAR_LENGTH, -TEST_SPEED)]
    return mb.build(cars, [Interface(LE, None), Interface(LE, HE)], ["coupler-AB", "buffers-AC"], HELD, end_mass)


def safetrain_test_54kmh(quick: bool) -> CaseResult:
    r = CaseResult("safetrain-test-54kmh",
                   "Milho, Ambrosio & Pereira 2002 in Ambrosio 2002 §5.1 (SAFETRAIN test: vehicle C at 54 km/h into "
                   "A + B coupled, Fig. 15) with the Table II staircases of Pereira & Dias 2002: conservation of "
                   "momentum and energy and the closed-form energy per device; C's device fully crushed, against the "
                   "ideal sequence of two devices in series through a massless interface")
    model = _test_model(mb.END_MASS)
    h, t_end = 2.5e-4, 0.8
    res = fm.simulate(model.system, t_end, h)
    mu = TEST_MASSES["C"] * (TEST_MASSES["A"] + TEST_MASSES["B"]) / sum(TEST_MASSES.values())
    _report_run(r, res, model, 0.5 * mu * TEST_SPEED ** 2)
    r.metrics["crush_C_over_crush_A"] = r.metrics["crush_buffers-AC_HE_C"] / r.metrics["crush_buffers-AC_LE_A"]
    light = _test_model(LIGHT_END_MASS)
    lres = fm.simulate(light.system, t_end, h)
    other = CaseResult("light interface", "")
    _report_run(other, lres, light, 0.5 * mu * TEST_SPEED ** 2)
    a, c = (other.metrics[f"crush_buffers-AC_{d}"] for d in ("LE_A", "HE_C"))
    ideal_a, ideal_c = ideal_series_crush(other.metrics["energy_absorbed_buffers-AC_LE_A"]
                                          + other.metrics["energy_absorbed_buffers-AC_HE_C"])
    r.check("light_interface_crush_C_over_stroke", c / HE.stroke, tolerance="min 0.99")
    r.check("light_interface_crush_A_vs_ideal_series", a, ideal_a, "rel 0.02")
    r.check("light_interface_crush_C_vs_ideal_series", c, ideal_c, "rel 0.02")
    r.metrics.update(light_interface_crush_C_over_crush_A=c / a, ideal_series_crush_C_over_crush_A=ideal_c / ideal_a,
                     light_interface_device_energy_vs_closed_form_rel=_checked(other, "device_energy_vs_closed_form_rel"),
                     light_interface_momentum_rel=_checked(other, "momentum_rel"))
    r.notes = (_notes_common(h, t_end) + " Cars (x order) B, A, C: the masses of Fig. 15 (60.4, 30.5, 70 t) read in "
               "the printed order, C the moving vehicle (its HE device at the colliding end, as the text says), A "
               "and B coupled through an LE device on B's end, A's LE buffers against C's HE device, the last staircase level "
               "held. The paper's measured buffer forces and velocities (Figs. 16-18) are not legible in the scanned "
               "volume. Its statements on its own model (C's device fully crushed, more than A's) are the ideal "
               "sequence of two devices in series through a massless interface (ideal_series_crush): equal levels "
               "crush together, A's LE stops at the end of its 2000 kN step (0.9 m) while C's HE goes on at 3000 kN, "
               "so C ends fully crushed and ahead of A. With our 1 t end extremities the interface body's inertia "
               "during the first 50 ms pushes C's device onto its 3000 kN level while A's is still on 2000 kN, and "
               f"A takes more of the crush (crush_C_over_crush_A, reported). Checked: the same test with {LIGHT_END_MASS:g} kg "
               "end extremities (the massless-interface limit; 250 / 100 / 50 kg give C 0.898 / 0.908 / 0.902 m, A "
               "0.922 / 0.908 / 0.912 m) has C's device fully crushed (min 0.99 of its stroke) and both crushes within "
               "2 % of the ideal sequence for the energy the pair absorbed (the residual interface inertia and the "
               "5 mm rises; measured below 1 %).")
    return r


PAPER_GAP_MM, PAPER_FORCE_T = 15.0, 15.0      # Ambrosio 2002 §5.1, Fig. 19 (their model of the 54 km/h test)
#: the interlock stiffness the paper's two numbers imply if its gap is the interlock's deflection under its force
PAPER_IMPLIED_STIFFNESS = PAPER_FORCE_T * 1e3 * G0 / (PAPER_GAP_MM * 1e-3)      # N/m, 9.8e6


def safetrain_anticlimber_54kmh(quick: bool) -> CaseResult:
    r = CaseResult("safetrain-anticlimber-54kmh",
                   "Milho, Ambrosio & Pereira 2002 in Ambrosio 2002 §5.1, Fig. 19 (SAFETRAIN test at 54 km/h: vertical "
                   "gap between the buffers up to 15 mm, vertical buffer force up to about 15 t), planar model with our "
                   "data: conservation and the closed-form energy per device checked; gap and force reported beside "
                   "the paper's")
    h, t_end = 2.5e-4, 0.4
    runs = {}
    for k_ac in (0.0, anticlimber.K_ANTICLIMBER, PAPER_IMPLIED_STIFFNESS):
        test = anticlimber.build(TEST_MASSES, TEST_SPEED, k_ac)
        res = fm.simulate(test.system, t_end, h)
        runs[k_ac] = (test, res, anticlimber.interlock(res, test, k_ac))
    test, res, lock = runs[anticlimber.K_ANTICLIMBER]
    _check_conservation(r, res, test.bodies, test.masses, "max 1e-3")
    _check_devices(r, res, test.system, test.devices)
    free, implied = runs[0.0][2], runs[PAPER_IMPLIED_STIFFNESS][2]
    r.metrics.update(gap_max_mm=1e3 * np.abs(lock.gap).max(), anticlimber_force_max_t=np.abs(lock.force).max() / (G0 * 1e3),
                     gap_without_anticlimber_max_mm=1e3 * np.abs(free.gap).max(),
                     paper_implied_stiffness=PAPER_IMPLIED_STIFFNESS,
                     gap_at_paper_stiffness_max_mm=1e3 * np.abs(implied.gap).max(),
                     anticlimber_force_at_paper_stiffness_max_t=np.abs(implied.force).max() / (G0 * 1e3),
                     paper_gap_max_mm=PAPER_GAP_MM, paper_vertical_force_max_t=PAPER_FORCE_T)
    r.notes = ("Planar model and data in anticlimber.py (our choices: centre of mass 1.8 m and buffers 1.065 m above "
               f"the rail, vertical suspension {anticlimber.K_SUSP:g} N/m per bogie, anti-climber "
               f"{anticlimber.K_ANTICLIMBER:g} N/m, {anticlimber.C_ANTICLIMBER:g} N s/m); masses, speed and "
               f"staircases as safetrain-test-54kmh, last levels held; h = {h:g} s, to {t_end:g} s (before the "
               "devices unload: the bushings between the fronts would hold them in tension). Without the "
               "anti-climber the crush forces below the centres of mass pitch the cars and the buffer faces slide "
               "apart vertically (gap_without_anticlimber_max_mm); with it the gap stays small and the interlock "
               "carries the vertical force. The paper's 15 mm and 15 t are reported, not checked: the heights, "
               "suspensions and the anti-climber's stiffness that set them are not printed; at the stiffness their "
               "ratio implies (9.8e6 N/m) our gap and force are reported as *_at_paper_stiffness. Tolerances: momentum "
               "along x 1e-7 (the track and guide joints act across x; Newton tolerance accumulated); energy "
               "balance 1e-3 (numerical dissipation of the generalized-alpha method, O(h^2): 2.6e-4 at this h, "
               "6.6e-5 at h/2, the same with and without the anti-climber); device energy 1e-3 (kink steps).")
    return r


CASES = [he_staircase_wall_30kmh, safetrain_3car_trains_55kmh, safetrain_3car_trains_55kmh_light_leading,
         safetrain_test_54kmh, safetrain_anticlimber_54kmh]
