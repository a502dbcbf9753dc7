"""Planar (x-z) model of the SAFETRAIN test with the anti-climber: vertical gap and force between the colliding fronts.

Ambrosio 2002 (§5.1, Figs. 12, 19; after Milho, Ambrosio & Pereira 2002) reports for the 54 km/h test (vehicle C
into A + B coupled) that the buffers of A and C meet with no vertical gap, that the gap grows to 15 mm as they
close in, and that the vertical force the buffers must carry to prevent overriding oscillates up to about 15 t.
The gap comes from the pitch and bounce of the car bodies on their suspensions under crush forces that act below
their centres of mass. Everything that sets it is unprinted; our data (constants below) are stated choices, so the
paper's numbers are reported beside ours, not checked. What is checked is the model: momentum along the track,
the energy balance and each device's absorbed work against the closed form of its curve (staircase.py).

Model, per car (x along the track, z up, rail at z = 0; the motion stays in the x-z plane):

* car body: free rigid body, centre of mass at ``H_CG``, pitch inertia of a uniform box ``CAR_LENGTH`` x
  ``BODY_HEIGHT``;
* two bogies at +-``BOGIE_OFFSET``, each sliding along the track (:class:`flexmb.Prismatic` to the ground), tied
  to the car body by a vertical secondary suspension (``K_SUSP``, ``C_SUSP``) and a longitudinal link (as in the
  1-D model);
* a front (buffer / coupler head, ``END_MASS``) at each crushing end, sliding along the car body's axis
  (:class:`flexmb.Prismatic` to the car body) at the buffer height ``H_BUFFER``, pushed by its staircase device
  (:class:`flexmb.CrushElement` along that axis).

Between A's and C's fronts a :class:`flexmb.Bushing`: stiff and damped along x (the two buffer faces pressed
together), ``k_ac`` along z (the anti-climber's interlock; 0 = no anti-climber). B's front is coupled to A's car
body by a stiff bushing in x and z (the automatic coupler). Gravity is left out: with linear suspensions it only
preloads them. The run stops at 0.4 s, before the crush ends: the bushings would hold the fronts together in
tension once the devices unload.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import flexmb as fm

from . import multibody as mb
from .staircase import HE, LE, Staircase

H_BOGIE = 0.5               # m, bogie centre above the rail (our choice)
H_CG = 1.8                  # m, car-body centre of mass above the rail (our choice; typical of a coach)
H_BUFFER = 1.065            # m, buffer and device axis above the rail (UIC buffer height, upper value)
BODY_HEIGHT = 3.5           # m, car-body height for its pitch inertia (our choice)
K_SUSP = 1.0e6              # N/m, vertical secondary suspension per bogie (our choice)
C_SUSP = 5.0e4              # N s/m, its damping (our choice)
K_FACE = 1.0e9              # N/m, the pressed buffer faces along x, and the coupler in x and z
C_FACE = 3.0e5              # N s/m, their damping
K_ANTICLIMBER = 1.0e8       # N/m, vertical interlock of the anti-climber teeth (our choice; 0 = none)
C_ANTICLIMBER = 2.0e5       # N s/m, its damping (our choice)
FRONT_GAP = 0.5             # m, a front's centre from the car end it sits at
CAR_LENGTH = 26.0           # m, as in the 1-D cases


@dataclass
class PlanarTest:
    """The built planar test: system, car bodies (B, A, C), all bodies and their masses, the devices (label,
    staircase, curve, crush-group index), the two fronts at the A-C interface and the anti-climber bushing."""

    system: fm.System
    car_bodies: list
    bodies: list
    masses: np.ndarray
    devices: list
    front_a: fm.RigidBody
    front_c: fm.RigidBody
    anticlimber: fm.Bushing


def _box(mass: float, length: float, height: float) -> tuple[float, float, float]:
    """Principal inertias (kg m^2) of a uniform box, length along x, height along z, width 3 m."""
    w = 3.0
    return (mass * (w ** 2 + height ** 2) / 12.0, mass * (length ** 2 + height ** 2) / 12.0,
            mass * (length ** 2 + w ** 2) / 12.0)


def build(masses: dict, speed: float, k_anticlimber: float) -> PlanarTest:
    """B, A standing and coupled, C at ``speed`` (m/s) towards them (x order B, A, C; C moves along -x)."""
    s = fm.System()
    bodies, m_all, devices, cars = [], [], [], []
    L = CAR_LENGTH
    centres = {"B": 0.0, "A": L, "C": 2 * L}
    n_fronts = {"B": 1, "A": 1, "C": 1}
    velocity = {"B": 0.0, "A": 0.0, "C": -speed}

    def add(body, mass):
        bodies.append(s.add(body))
        m_all.append(mass)
        return body

    for name in ("B", "A", "C"):
        x, v = centres[name], velocity[name]
        m_body = masses[name] - 2 * mb.BOGIE_MASS - n_fronts[name] * mb.END_MASS
        body = add(fm.RigidBody(m_body, _box(m_body, L, BODY_HEIGHT), position=(x, 0, H_CG), velocity=(v, 0, 0),
                                name=name), m_body)
        cars.append(body)
        for k, side in enumerate((-1, 1)):
            xb = x + side * mb.BOGIE_OFFSET
            bogie = add(fm.RigidBody(mb.BOGIE_MASS, _box(mb.BOGIE_MASS, 3.0, 1.0), position=(xb, 0, H_BOGIE),
                                     velocity=(v, 0, 0), name=f"{name}-bogie{k + 1}"), mb.BOGIE_MASS)
            s.add(fm.Prismatic(s.ground, bogie, point=(xb, 0, H_BOGIE), axis=(1, 0, 0), name=f"{name}-track{k + 1}"))
            s.add(fm.SpringDamper(body, bogie, point_a=(xb, 0, H_BOGIE + 1.0), point_b=(xb, 0, H_BOGIE), k=K_SUSP,
                                  c=C_SUSP, name=f"{name}-suspension{k + 1}"))
            s.add(fm.SpringDamper(body, bogie, point_a=(xb - 1.0, 0, H_BOGIE), point_b=(xb, 0, H_BOGIE), k=mb.K_BOGIE,
                                  c=mb.C_BOGIE, name=f"{name}-link{k + 1}"))
    n_crush = 0

    def front(car: str, body, side: int, stair: Staircase, label: str):
        nonlocal n_crush
        x_front = centres[car] + side * (0.5 * L - FRONT_GAP)
        f = add(fm.RigidBody(mb.END_MASS, _box(mb.END_MASS, 1.0, 1.0), position=(x_front, 0, H_BUFFER),
                             velocity=(velocity[car], 0, 0), name=f"{label}-front"), mb.END_MASS)
        s.add(fm.Prismatic(body, f, point=(x_front, 0, H_BUFFER), axis=(1, 0, 0), name=f"{label}-guide"))
        curve = stair.curve(mb.RISE, 0.0)
        s.add(fm.CrushElement(body, f, point_a=(centres[car], 0, H_BUFFER), point_b=(x_front, 0, H_BUFFER), curve=curve,
                              unloading_stiffness=mb.K_UNLOAD, name=label))
        devices.append(mb.Device(label, stair, curve, n_crush))
        n_crush += 1
        return f, x_front

    b_front, xb_front = front("B", cars[0], 1, LE, "coupler-AB_LE_B")
    s.add(fm.Bushing(b_front, cars[1], point=(centres["B"] + 0.5 * L, 0, H_BUFFER),
                     stiffness=(K_FACE, 0, K_FACE, 0, 0, 0), damping=(C_FACE, 0, C_FACE, 0, 0, 0), name="coupler-AB"))
    a_front, _ = front("A", cars[1], 1, LE, "buffers-AC_LE_A")
    c_front, _ = front("C", cars[2], -1, HE, "buffers-AC_HE_C")
    bush = s.add(fm.Bushing(a_front, c_front, point=(centres["A"] + 0.5 * L, 0, H_BUFFER),
                            stiffness=(K_FACE, 0, k_anticlimber, 0, 0, 0),
                            damping=(C_FACE, 0, C_ANTICLIMBER if k_anticlimber > 0 else 0.0, 0, 0, 0),
                            name="anticlimber-AC"))
    return PlanarTest(s, cars, bodies, np.asarray(m_all), devices, a_front, c_front, bush)


@dataclass(frozen=True)
class Interlock:
    """Vertical gap (m) between A's and C's buffer faces (C's minus A's, at the contact point) and the vertical
    force (N) of the anti-climber, k_ac gap + c_ac gap_rate, at the saved times."""

    gap: np.ndarray
    force: np.ndarray


def interlock(res, test: PlanarTest, k_anticlimber: float) -> Interlock:
    """Gap and anti-climber force of a run of :func:`build` (the contact point is ``FRONT_GAP`` ahead of A's front
    centre and behind C's)."""
    pa, pc = (FRONT_GAP, 0.0, 0.0), (-FRONT_GAP, 0.0, 0.0)
    gap = res.position(test.front_c, pc)[:, 2] - res.position(test.front_a, pa)[:, 2]
    rate = res.velocity(test.front_c, pc)[:, 2] - res.velocity(test.front_a, pa)[:, 2]
    damping = C_ANTICLIMBER if k_anticlimber > 0 else 0.0
    return Interlock(gap, k_anticlimber * gap + damping * rate)
