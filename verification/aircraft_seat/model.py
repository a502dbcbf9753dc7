"""Planar occupant, seat, lap belt and front-row bulkhead of the FAR 25.562 head-impact test of
Lankarani, Olivares & Nagarajan, "A virtual multibody and finite element analysis environment in the
field of aerospace crashworthiness" (2002), §4.1 and Table I (aluminium 2024-O bulkhead, seat setback
35 in).

Coordinates: x forward, y up, z the pitch axis, origin at the seat reference point (the intersection of
seat pan and seat back, where the paper anchors the two-point belt). Every body moves in the x-y plane
(revolute joints about z, prismatic along x); the test's 10 degree yaw is left out (the head strikes
the bulkhead in the plane of the table's impact angle).

Data and where each number comes from (``Occupant``, ``Belt``, ``Bulkhead``):

* pulse: FAR 25.562(b)(2) test 2 -- 44 ft/s velocity change, 16 g triangular peak at 0.09 s
  (``flexmb.far_562_pulse(25, 2)``, 14 CFR 25.562, the paper's Fig. 1);
* setback: 35 in (0.889 m) from the seat reference point to the bulkhead (Table I);
* occupant: the 50th-percentile Hybrid II dummy of 49 CFR Part 572 Subpart B, total mass 74.4 kg
  (164 lb); the split into pelvis-and-legs, upper torso-and-arms and head, the segment lengths and
  inertias are our choices of that dummy's size (the paper prints none of them); the neck and lumbar
  stiffnesses are calibrated (cases.py);
* belt: a lap belt acting on the pelvis, linear in the pelvis excursion with webbing hysteresis
  (unloading three times as stiff); its stiffness is calibrated (the paper names three webbings,
  nylon and polyester of 8 % and 19 % elongation, without their load-elongation curves);
* bulkhead: the paper's elasto-plastic shell model of the 30 x 24 in panel has no printed load-deflection
  curve; it is replaced by a panel plate of participating mass on an elastic-perfectly-plastic crush element,
  struck through the head's skin (a Hertzian Flores contact, docs/theory-contact.md): ``Bulkhead``. Its
  yield force, panel mass and skin stiffness are calibrated on the component test (cases.py says which
  numbers are calibrated and which predicted).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

import flexmb as fm
from flexmb.contact import Flores

G0 = 9.80665                      # m/s^2 per g
FT, IN = 0.3048, 0.0254           # m per ft, m per in (exact)
Z = (0.0, 0.0, 1.0)


@dataclass(frozen=True)
class Occupant:
    """Three-segment planar Hybrid II (masses kg, lengths m, inertias kg m^2 about the centre of mass)."""

    pelvis_mass: float = 42.0          # pelvis, lower torso and legs (moves with the seat pan)
    torso_mass: float = 27.9           # upper torso, arms and neck
    head_mass: float = 4.54            # Hybrid II head
    torso_inertia: float = 0.6
    head_inertia: float = 0.023
    hip: tuple = (0.135, 0.10)         # H-point ahead of / above the seat reference point
    torso_length: float = 0.52         # hip to neck pivot
    torso_com: float = 0.28            # hip to upper-torso centre of mass
    head_lever: float = 0.16           # neck pivot to head centre of mass
    head_radius: float = 0.10          # head sphere (forehead to head centre of mass)
    lumbar: tuple = (1000.0, 20.0)     # hip rotational stiffness N m/rad (calibrated), damping N m s/rad
    neck: tuple = (175.0, 1.0)         # neck rotational stiffness N m/rad (calibrated), damping N m s/rad

    @property
    def reach(self) -> float:
        """Hip to head centre of mass (m)."""
        return self.torso_length + self.head_lever


@dataclass(frozen=True)
class Belt:
    """Lap belt on the pelvis: horizontal force k x for a forward excursion x, unloading at ``unloading`` k."""

    stiffness: float = 6.5e4            # N/m (calibrated)
    unloading: float = 3.0


@dataclass(frozen=True)
class Bulkhead:
    """The bulkhead panel and the head's skin, in series.

    The panel is a rigid plate of its participating mass ``panel_mass`` (kg) on a guide normal to the
    bulkhead, held by its elasto-plastic load-deflection curve (a :class:`flexmb.CrushElement`: elastic
    rise to ``yield_force`` (N) over ``yield_deflection`` (m), then a plastic plateau; elastic unloading);
    the head sphere strikes it through a Flores contact (the dummy's vinyl skin, Hertzian exponent 1.5,
    stiffness ``skin_K`` N/m^1.5, restitution ``skin_e``). The paper's shell model of the 30 x 24 in
    aluminium 2024-O panel prints no curve: ``yield_force`` and ``skin_K`` are calibrated (cases.py),
    ``panel_mass`` kept from an earlier calibration (the fit is flat along panel mass against skin stiffness);
    ``yield_deflection`` and ``skin_e`` are our choices."""

    yield_force: float = 4550.0         # N        (calibrated)
    panel_mass: float = 0.35            # kg       (earlier calibration, kept; the whole panel of 1 mm sheet is 1.3 kg)
    skin_K: float = 3.16e7              # N/m^1.5  (calibrated)
    skin_e: float = 0.5
    yield_deflection: float = 0.005     # m
    setback: float = 35 * IN            # m, seat reference point to the panel (Table I)

    def skin_law(self) -> Flores:
        return Flores(self.skin_K, self.skin_e, 1.5)

    def crush_curve(self) -> tuple:
        """(deflection m, force N): elastic rise, then the plastic plateau (continued flat)."""
        return ([0.0, self.yield_deflection, 1.0], [0.0, self.yield_force, self.yield_force])


def _upper_body(s: fm.System, base, hip: np.ndarray, angle: float, velocity, occ: Occupant,
                omega=(0.0, 0.0, 0.0)):
    """Upper torso and head on ``base`` (hip revolute), leaning ``angle`` (rad) forward of vertical;
    ``velocity(point)`` gives each body's initial velocity, ``omega`` (rad/s) their angular velocity.
    Returns (torso, head, head centre)."""
    u = np.array([math.sin(angle), math.cos(angle), 0.0])
    torso_c, neck, head_c = hip + occ.torso_com * u, hip + occ.torso_length * u, hip + occ.reach * u
    torso = s.add(fm.RigidBody(occ.torso_mass, (occ.torso_inertia,) * 3, position=torso_c,
                               velocity=velocity(torso_c), angular_velocity=omega, name="torso"))
    head = s.add(fm.RigidBody(occ.head_mass, (occ.head_inertia,) * 3, position=head_c,
                              velocity=velocity(head_c), angular_velocity=omega, name="head"))
    s.add(fm.Revolute(base, torso, hip, Z, name="hip"))
    s.add(fm.Revolute(torso, head, neck, Z, name="neck"))
    s.add(fm.RotationalSpringDamper(base, torso, Z, k=occ.lumbar[0], c=occ.lumbar[1], name="lumbar"))
    s.add(fm.RotationalSpringDamper(torso, head, Z, k=occ.neck[0], c=occ.neck[1], name="neck spring"))
    return torso, head, head_c


def _bulkhead(s: fm.System, base, head, head_c: np.ndarray, wall_x: float, occ: Occupant, bh: Bulkhead,
              base_velocity: float = 0.0) -> None:
    """The panel (``bh``) on ``base`` (moving at ``base_velocity`` m/s along x) with its face at ``wall_x``, at
    the head's height, and the head-panel contact named "bulkhead". The crush element runs from the panel to
    a point of ``base`` 2 m ahead of it on the guide's line: the panel's forward deflection shortens it, and
    its force pushes the panel back along the guide."""
    face = np.array([wall_x, head_c[1], 0.0])
    panel = s.add(fm.RigidBody(bh.panel_mass, (1e-3,) * 3, position=face, velocity=(base_velocity, 0.0, 0.0),
                               name="panel"))
    s.add(fm.Prismatic(base, panel, face, (1.0, 0.0, 0.0), name="panel guide"))
    s.add(fm.CrushElement(base, panel, point_a=face + np.array([2.0, 0.0, 0.0]), point_b=face,
                          curve=bh.crush_curve(), unloading_stiffness=bh.yield_force / bh.yield_deflection,
                          name="panel crush"))
    s.add(fm.SpherePlaneContact(panel, head, point=face, normal=(-1.0, 0.0, 0.0), center=head_c,
                                radius=occ.head_radius, law=bh.skin_law(), name="bulkhead"))


def sled_test(occ: Occupant = Occupant(), belt: Belt = Belt(), bh: Bulkhead = Bulkhead()):
    """The FAR 25.562 test-2 sled run: (system, t_end). The sled (with seat and bulkhead) is driven
    through the pulse; the occupant starts upright at the sled's initial velocity. The pelvis slides on
    the seat pan without friction, held by the belt alone; the seat back is left out (the pulse throws
    the occupant forward, away from it)."""
    s = fm.System(gravity=(0.0, -G0, 0.0), name="aircraft seat sled")
    pulse = fm.far_562_pulse(25, 2)
    v = pulse.v0
    sled = s.add(fm.RigidBody(100.0, (10.0,) * 3, position=(0.0, -0.3, 0.0), velocity=(v, 0.0, 0.0), name="sled"))
    track = s.add(fm.Prismatic(s.ground, sled, (0.0, -0.3, 0.0), (1.0, 0.0, 0.0), name="track"))
    s.add(fm.Driver(track, displacement=pulse, name="pulse"))
    hip = np.array([occ.hip[0], occ.hip[1], 0.0])
    pelvis = s.add(fm.RigidBody(occ.pelvis_mass, (1.0,) * 3, position=hip, velocity=(v, 0.0, 0.0), name="pelvis"))
    s.add(fm.Prismatic(sled, pelvis, hip, (1.0, 0.0, 0.0), name="seat pan"))
    # the belt pulls the pelvis back: a crush element from a sled point 3 m ahead on the hip's line, linear
    # (the table's slope continues beyond its 0.5 m end)
    s.add(fm.CrushElement(sled, pelvis, point_a=hip + np.array([3.0, 0.0, 0.0]), point_b=hip,
                          curve=([0.0, 0.5], [0.0, belt.stiffness * 0.5]),
                          unloading_stiffness=belt.unloading * belt.stiffness, name="lap belt"))
    _, head, head_c = _upper_body(s, pelvis, hip, 0.0, lambda p: np.array([v, 0.0, 0.0]), occ)
    _bulkhead(s, sled, head, head_c, bh.setback, occ, bh, v)
    return s, pulse.duration + 0.03


def component_test(speed: float, angle_deg: float, occ: Occupant = Occupant(), bh: Bulkhead = Bulkhead()):
    """The head-impact component test (the paper's inverted-pendulum tester): the upper torso and head
    swing about a fixed hip and reach the bulkhead with the head's centre at ``speed`` (m/s) and the
    hip-to-head line ``angle_deg`` forward of vertical (the table's head impact angle). The run starts
    1 mm before contact: (system, t_end)."""
    s = fm.System(gravity=(0.0, -G0, 0.0), name="aircraft seat component")
    hip = np.array([occ.hip[0], occ.hip[1], 0.0])
    omega = np.array([0.0, 0.0, -speed / occ.reach])          # clockwise: the head moves forward and down
    _, head, head_c = _upper_body(s, s.ground, hip, math.radians(angle_deg),
                                  lambda p: np.cross(omega, p - hip), occ, omega)
    _bulkhead(s, s.ground, head, head_c, head_c[0] + occ.head_radius + 1e-3, occ, bh)
    return s, 0.06
