"""1-D trains of multibody cars with staircase crush devices (the car model of Milho, Ambrosio & Pereira).

Ambrosio 2002 (§5.1, "Impact of rigid and flexible multibody systems", Virtual Nonlinear Multibody Systems vol.
II) models each car with five rigid bodies: the passenger compartment (car body with its underframe), two bogie
chassis and two deformable end extremities. Here, along the track (x):

* **car body** (underframe and passenger compartment): one free :class:`flexmb.RigidBody` at the car's centre;
* **bogies**: one body each at +-``BOGIE_OFFSET`` from the centre, tied to the car body by a longitudinal
  spring-damper (traction link and secondary suspension, ``K_BOGIE``, ``C_BOGIE``);
* **end extremities** (coupler or buffer heads, the crushable fronts): one body per interface, of
  ``END_MASS`` per device it carries. Each device is a :class:`flexmb.CrushElement` from a car-body centre to
  that body with a staircase curve (staircase.py); a car end without a device holds the body through a stiff,
  damped spring-damper (``K_TIE``, ``C_TIE``: the coupler head locked to the car, which carries tension too). Two
  devices at one interface (two colliding fronts) act in series through the one body: the two fronts pressed
  together and locked vertically by their anti-climbers. (Separate end bodies touching through a stiff contact
  were tried first: with nothing to damp it, the two 1 t heads rattled between 0 and 13 MN at 100-200 Hz.)

Every force acts along the x axis through the centres, so the lateral coordinates and rotations stay exactly
zero. Masses not printed in the papers (bogies, end bodies) are our choice (constants below), taken out of the
car's total so that each car keeps its printed mass. A device only pushes (no tension), so two fronts that
crushed into each other separate freely after the crash.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

import flexmb as fm

from .staircase import Staircase

BOGIE_MASS = 6.0e3          # kg, each bogie (our choice; not printed)
BOGIE_OFFSET = 9.5          # m, bogie pivot from the car centre (19 m pivot spacing of a 26 m coach; our choice)
K_BOGIE = 1.0e7             # N/m, longitudinal car body-bogie stiffness (our choice)
C_BOGIE = 1.0e5             # N s/m, its damping (damping ratio ~0.2 of the 6 t bogie on 1e7 N/m)
END_MASS = 1.0e3            # kg, each end extremity (coupler / buffer head; our choice)
K_TIE = 1.0e9               # N/m, coupler head locked to the car body on an end without a device (stiff)
C_TIE = 3.0e5               # N s/m, its damping (damping ratio ~0.15 of a 1 t head on 1e9 N/m)
K_UNLOAD = 1.0e9            # N/m, unloading stiffness of every device
RISE = 5.0e-3               # m, crush over which each staircase step rises to its level
BLOCK_STIFFNESS = 5.0e8     # N/m, slope past the last step (the exhausted device blocks; below K_UNLOAD)


@dataclass(frozen=True)
class Car:
    """A car: total mass (kg), length (m), initial velocity (m/s) and name."""

    name: str
    mass: float
    length: float
    velocity: float


@dataclass(frozen=True)
class Interface:
    """Two neighbouring car ends: the crush device on the left car's end and on the right car's end (x order),
    ``None`` where the end has no device (then the interface body is tied to that car body)."""

    left: Staircase | None
    right: Staircase | None


@dataclass
class Device:
    """A built crush device: its label, staircase, tabulated curve and index in the crush group."""

    label: str
    staircase: Staircase
    curve: tuple
    index: int


@dataclass
class TrainModel:
    """The built system: car bodies (x order), all bodies with their masses, the devices and contacts."""

    system: fm.System
    cars: list[Car]
    car_bodies: list
    bodies: list
    masses: np.ndarray
    devices: list[Device] = field(default_factory=list)


def _box_inertia(mass: float, length: float, width: float = 3.0, height: float = 3.0) -> tuple[float, float, float]:
    """Principal inertias (kg m^2) of a uniform box (m); the 1-D model never rotates, so they only need to be
    positive and of a plausible size."""
    return (mass * (width ** 2 + height ** 2) / 12.0, mass * (length ** 2 + height ** 2) / 12.0,
            mass * (length ** 2 + width ** 2) / 12.0)


def build(cars: list[Car], interfaces: list[Interface], names: list[str] | None = None,
          block_stiffness: float = BLOCK_STIFFNESS, end_mass: float = END_MASS) -> TrainModel:
    """The composition ``cars`` (x order, touching end to end) with ``interfaces[k]`` between car k and k + 1.
    ``names[k]`` labels interface k's devices (default ``interface<k+1>``). ``block_stiffness`` (N/m): slope of
    every device past its last step (0: the last level is held, the device never blocks). ``end_mass`` (kg): each
    end extremity, out of its car's mass."""
    if len(interfaces) != len(cars) - 1:
        raise ValueError(f"{len(cars)} cars need {len(cars) - 1} interfaces, got {len(interfaces)}")
    names = names or [f"interface{k + 1}" for k in range(len(interfaces))]
    s = fm.System()
    centres = np.concatenate([[0.0], np.cumsum([0.5 * (a.length + b.length) for a, b in zip(cars, cars[1:])])])
    n_ends = [0] * len(cars)
    for k, itf in enumerate(interfaces):
        n_ends[k] += itf.left is not None
        n_ends[k + 1] += itf.right is not None
    model = TrainModel(s, list(cars), [], [], np.zeros(0))
    masses = []

    def add(body, mass):
        model.bodies.append(s.add(body))
        masses.append(mass)
        return model.bodies[-1]

    for car, x, ne in zip(cars, centres, n_ends):
        m_body = car.mass - 2 * BOGIE_MASS - ne * end_mass
        body = add(fm.RigidBody(m_body, _box_inertia(m_body, car.length), position=(x, 0, 0),
                                velocity=(car.velocity, 0, 0), name=car.name), m_body)
        model.car_bodies.append(body)
        for side in (-1, 1):
            xb = x + side * BOGIE_OFFSET
            bogie = add(fm.RigidBody(BOGIE_MASS, _box_inertia(BOGIE_MASS, 3.0), position=(xb, 0, 0),
                                     velocity=(car.velocity, 0, 0), name=f"{car.name}-bogie{(side + 3) // 2}"),
                        BOGIE_MASS)
            s.add(fm.SpringDamper(body, bogie, point_a=(xb - 1.0, 0, 0), point_b=(xb, 0, 0), k=K_BOGIE, c=C_BOGIE,
                                  name=f"{car.name}-bogie{(side + 3) // 2}-link"))
    n_crush = 0
    for k, (itf, label) in enumerate(zip(interfaces, names)):
        x_end = centres[k] + 0.5 * cars[k].length
        sides = ((cars[k], model.car_bodies[k], itf.left, -1), (cars[k + 1], model.car_bodies[k + 1], itf.right, 1))
        m_ends = end_mass * sum(stair is not None for *_, stair, _ in sides)
        # the end bodies' momentum, shared by the one body that stands for them
        v_ends = sum(car.velocity for car, _, stair, _ in sides if stair is not None) * end_mass / m_ends
        ends = add(fm.RigidBody(m_ends, _box_inertia(m_ends, 1.0), position=(x_end, 0, 0),
                                velocity=(v_ends, 0, 0), name=f"{label}-ends"), m_ends)
        for car, body, stair, side in sides:
            x_car = centres[k] if side < 0 else centres[k + 1]
            if stair is None:        # the coupler head is locked to this car body
                s.add(fm.SpringDamper(body, ends, point_a=(x_car, 0, 0), point_b=(x_end, 0, 0), k=K_TIE, c=C_TIE,
                                      name=f"{label}-tie-{car.name}"))
                continue
            curve = stair.curve(RISE, block_stiffness)
            s.add(fm.CrushElement(body, ends, point_a=(x_car, 0, 0), point_b=(x_end, 0, 0), curve=curve,
                                  unloading_stiffness=K_UNLOAD, name=f"{label}-{stair.name}-{car.name}"))
            model.devices.append(Device(f"{label}_{stair.name}_{car.name}", stair, curve, n_crush))
            n_crush += 1
    model.masses = np.asarray(masses)
    return model


def lateral_max(res, model: TrainModel) -> float:
    """Largest displacement (m) of any body off the x axis during the run."""
    return max(float(np.abs(res.position(b)[:, 1:]).max()) for b in model.bodies)


def element_crush(res, system: fm.System, index: int) -> np.ndarray:
    """Crush ``L0 - L`` (m) of the crush element ``index`` of ``system`` (its place in the crush group) at the saved
    times."""
    element = [f for f in system.forces if isinstance(f, fm.CrushElement)][index]
    # the bodies start unrotated, so a point's body-axis offset is its global offset from the centre
    pa = res.position(element.body_a, element.point_a - element.body_a.initial_q()[:3])
    pb = res.position(element.body_b, element.point_b - element.body_b.initial_q()[:3])
    return element.free_length - np.linalg.norm(pb - pa, axis=1)

