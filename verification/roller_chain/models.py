"""Models of suite ``roller-chain``: chain drives of point-mass rollers, spring-damper links and Lankarani-Nikravesh
roller-sprocket contact (Pedersen, Hansen & Ambrosio, NATO ASI Virtual Nonlinear Multibody Systems, Prague 2002;
docs/theory-roller-chain.md).

:func:`two_sprocket_drive` builds the check drive: two equal sprockets (z teeth) with their centres a whole number
of pitches apart, so that the closed chain lies exactly on the seats of both sprockets and on the two straight
spans (tangent to the pitch circles at the top and bottom seats): z + 2 n rollers, no initial strain but the
pretension given through the links' free length. :func:`wrap_chain` places rollers along the pitch-circle belt path
of any sprocket layout (the four-sprocket marine drive).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

import flexmb as fm
from flexmb.contact.sprocket import SprocketContact, pitch_radius


@dataclass
class DriveData:
    """Data of the two-sprocket check drive (all our choices: an ANSI 80-size chain, softened links so that
    quick cases run in seconds)."""

    pitch: float = 0.0254            # m
    teeth: int = 12
    span_links: int = 8              # links per straight span: centre distance = span_links * pitch
    roller_mass: float = 0.1         # kg per roller (link mass lumped at the roller)
    link_stiffness: float = 2.0e6    # N/m
    link_damping: float = 20.0       # N s/m
    pretension: float = 400.0        # N, through the free length p - F0 / k
    contact_stiffness: float = 1.0e9     # N/m^1.5 (n = 1.5)
    restitution: float = 0.5
    approach_speed: float = 0.1      # m/s, the Lankarani-Nikravesh reference approach speed
    guide_stiffness: float = 1.0e6   # N/m, axial guide (keeps the chain in the plane, needed by statics)
    guide_damping: float = 50.0      # N s/m
    sprocket_mass: float = 1.0       # kg
    sprocket_inertia: float = 2.0e-3  # kg m^2 about the axis

    @property
    def radius(self) -> float:
        return pitch_radius(self.pitch, self.teeth)


@dataclass
class Drive:
    system: fm.System
    driver: fm.RigidBody
    driven: fm.RigidBody
    shaft: fm.Revolute
    rollers: fm.Particles
    links: fm.ParticleLinks
    data: DriveData
    spans: tuple              # (top span link indices, bottom span link indices)
    load: object = None


def two_sprocket_layout(d: DriveData) -> tuple[np.ndarray, tuple, float]:
    """Roller positions (z + 2n, 3) of the closed chain on two equal sprockets at (0, 0) and (C, 0), C = n p, in
    order: top span left to right, around the right sprocket (clockwise), bottom span right to left, around the
    left sprocket; and the link indices of the top and bottom spans; and C."""
    z, n, p = d.teeth, d.span_links, d.pitch
    if z % 2:
        raise ValueError("the exact two-sprocket layout needs an even number of teeth")
    R, C = d.radius, n * p
    step = 2 * math.pi / z
    pts = [(k * p, R) for k in range(n)]                                     # top span from the left top seat
    pts += [(C + R * math.cos(0.5 * math.pi - k * step), R * math.sin(0.5 * math.pi - k * step))
            for k in range(z // 2)]                                          # right sprocket, top to bottom
    pts += [(C - k * p, -R) for k in range(n)]                               # bottom span from the right
    pts += [(R * math.cos(1.5 * math.pi - k * step), R * math.sin(1.5 * math.pi - k * step))
            for k in range(z // 2)]                                          # left sprocket, bottom to top
    X = np.array([(x, y, 0.0) for x, y in pts])
    top = tuple(range(0, n))                                                 # link k joins rollers k, k+1
    bottom = tuple(range(n + z // 2, 2 * n + z // 2))
    return X, (top, bottom), C


def two_sprocket_drive(d: DriveData | None = None, *, driver_angle=None, load_torque=None,
                       seated_angle: float = 0.0) -> Drive:
    """The check drive: left sprocket (the driver) on a revolute joint, its angle prescribed by
    ``driver_angle(t)`` (rad, a Driver; counter-clockwise about +z), right sprocket (driven) on a revolute with the
    load torque ``load_torque(t)`` (N m, about +z: resisting counter-clockwise rotation when negative) applied;
    gravity off. ``seated_angle`` (rad, about +z): the driven sprocket starts turned by this angle against the
    chain laid on its seats, so that its flanks already press the wrapped rollers (:func:`seated_angle` gives
    the angle for a load torque: the static start of a loaded drive, docs/theory-roller-chain.md §5). Returns a
    :class:`Drive`."""
    d = d or DriveData()
    X, spans, C = two_sprocket_layout(d)
    s = fm.System(name=f"two-sprocket drive z{d.teeth}")
    I = d.sprocket_inertia
    left = s.add(fm.RigidBody(d.sprocket_mass, (0.5 * I, 0.5 * I, I), position=(0.0, 0.0, 0.0), name="driver"))
    ca, sa = math.cos(seated_angle), math.sin(seated_angle)
    turn = np.array([[ca, -sa, 0.0], [sa, ca, 0.0], [0.0, 0.0, 1.0]])
    right = s.add(fm.RigidBody(d.sprocket_mass, (0.5 * I, 0.5 * I, I), position=(C, 0.0, 0.0), orientation=turn,
                               name="driven"))
    jl = s.add(fm.Revolute(s.ground, left, (0.0, 0.0, 0.0), (0.0, 0.0, 1.0), name="driver shaft"))
    jr = s.add(fm.Revolute(s.ground, right, (C, 0.0, 0.0), (0.0, 0.0, 1.0), name="driven shaft"))
    s.add(fm.Driver(jl, angle=driver_angle or (lambda t: 0.0), name="motor"))
    rollers = s.add(fm.Particles(X, d.roller_mass, name="rollers"))
    links = s.add(fm.ParticleLinks(rollers, "closed", d.link_stiffness, d.link_damping,
                                   free_length=d.pitch - d.pretension / d.link_stiffness, name="links"))
    for body, nm, seat in ((left, "driver mesh", (0.0, 1.0, 0.0)), (right, "driven mesh", (-sa, ca, 0.0))):
        s.add(SprocketContact(body, rollers, d.teeth, d.pitch, d.contact_stiffness, restitution=d.restitution,
                              approach_speed=d.approach_speed, seat_direction=seat,
                              guide_stiffness=d.guide_stiffness, guide_damping=d.guide_damping, name=nm))
    load = None
    if load_torque is not None:
        load = s.add(fm.Torque(right, lambda t: (0.0, 0.0, load_torque(t)), name="load"))
    return Drive(s, left, right, jr, rollers, links, d, spans, load)


def seated_angle(d: DriveData, torque: float) -> float:
    """Angle (rad) by which the driven sprocket starts turned against the seated chain for a static start under
    the load ``torque`` (N m): the flank penetration ``delta_0 = (|T| / (R_p K))^(1/n)`` that one roller would
    need to carry the whole torque, as an arc ``delta_0 / R_p`` of the pitch circle, turned with the load.

    Why: on a chain laid exactly on its seats every roller touches both flanks of its seat at zero
    pseudo-penetration, where the Hertzian law ``K delta^n`` (n = 1.5) has zero stiffness, so the sprocket's
    rotation has no stiffness and ``fm.static_equilibrium`` cannot take the first load step (Newton's tangent
    is singular and the path from delta = 0 has infinite slope). Turned by any angle of the order of the loaded
    penetration, the flanks already press the wrapped rollers and Newton starts with a positive stiffness; the
    equilibrium found does not depend on the angle (checked from 1e-4 to 1e-3 rad, and turned either way: the
    flanks on both sides of a seat engage)."""
    delta0 = (abs(torque) / (d.radius * d.contact_stiffness)) ** (1.0 / 1.5)
    return math.copysign(delta0 / d.radius, torque)


def smooth_ramp(t: float, t1: float) -> float:
    """0 -> 1 over [0, t1] with zero slope at both ends: ``(t/t1) - sin(2 pi t / t1) / (2 pi)`` (the spin-up law
    shape), 1 after t1."""
    if t >= t1:
        return 1.0
    x = t / t1
    return x - math.sin(2 * math.pi * x) / (2 * math.pi)


def ramp_angle(omega: float, t1: float):
    """Angle (rad) of a shaft brought from rest to ``omega`` (rad/s) over t1 (s) with the smooth ramp: the
    integral of ``omega * smooth_ramp``."""
    def angle(t: float) -> float:
        if t >= t1:
            return omega * (t - 0.5 * t1)
        x = t / t1
        return omega * t1 * (0.5 * x * x + (math.cos(2 * math.pi * x) - 1.0) / (4 * math.pi ** 2))
    return angle


def belt_path(centres: np.ndarray, radii: np.ndarray, n: int):
    """``n`` equally spaced points (n, 3) along the closed belt path around circles (``centres`` (k, 2) m, in
    counter-clockwise wrap order, ``radii`` (k,) m, all wrapped on the outside), and the path length (m).

    The path is made of the outer tangent lines between consecutive circles and the arcs between them."""
    k = len(radii)
    tangents = []
    for i in range(k):
        c1, c2 = centres[i], centres[(i + 1) % k]
        r1, r2 = radii[i], radii[(i + 1) % k]
        dvec = c2 - c1
        L = np.linalg.norm(dvec)
        u = dvec / L
        # outer tangent on the right-hand side of the travel direction (counter-clockwise wrap: the path keeps
        # the circles on its left)
        cb = (r1 - r2) / L
        sb = math.sqrt(1.0 - cb * cb)
        nrm = np.array([u[0] * cb + u[1] * sb, -u[0] * sb + u[1] * cb])     # u rotated by -acos(cb)
        tangents.append((c1 + r1 * nrm, c2 + r2 * nrm, nrm))
    segs = []          # (kind, data, length)
    for i in range(k):
        p1, p2, nrm = tangents[i]
        segs.append(("line", (p1, p2), float(np.linalg.norm(p2 - p1))))
        nxt = tangents[(i + 1) % k]
        a0 = math.atan2(nrm[1], nrm[0])
        a1 = math.atan2(nxt[2][1], nxt[2][0])
        da = (a1 - a0) % (2 * math.pi)
        segs.append(("arc", (centres[(i + 1) % k], radii[(i + 1) % k], a0, da), radii[(i + 1) % k] * da))
    total = sum(s[2] for s in segs)
    out = []
    for m in range(n):
        s = m * total / n
        for kind, data, L in segs:
            if s <= L:
                if kind == "line":
                    p = data[0] + (data[1] - data[0]) * (s / L)
                else:
                    c, r, a0, da = data
                    a = a0 + s / r
                    p = c + r * np.array([math.cos(a), math.sin(a)])
                out.append((p[0], p[1], 0.0))
                break
            s -= L
    return np.array(out), total
