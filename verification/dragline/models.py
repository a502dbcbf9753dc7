"""The dragline model of suite ``dragline`` (P. G. Crous, "Modelling of Dragline Dynamics", MSc thesis,
Stellenbosch 2000, Ch. 5; docs/theory-ropes.md §8).

Machine class: a mid-size walking dragline of the Marion 7820-M class, whose public figures are a boom of 305 ft
(93 m) and a bucket of 45 yd^3 (34 m^3) (published descriptions of the machine "Brutus", e.g. the article "Giant
dragline excavators from the 1960s", jublanisen.com). Everything else is our choice, stated here. Units: SI (kg,
m, s, N).

* house: turns about the vertical axis y through the origin, driven (the swing motion), 500 t, J = 5e7 kg m^2;
* boom: rigid, 93 m at 32 deg (as drawn) from a foot at (5, 4) m, 100 t (uniform bar), pinned at its foot to the
  house (a revolute about the house's horizontal axis z, normal to the boom plane) and held by its suspension ropes;
* mast (our choice: no public mast drawing of the 7820-M was found): the mast head, where the boom suspension ropes
  are socketed, is a point fixed in the house at (-4, 40) m, 36 m above the boom foot; the mast itself, its
  back-stays and the A-frame are taken rigid and part of the house body (not modelled as members), so the
  suspension ropes are the boom's only elastic support;
* ropes: ``fm.SheaveRope``, massless and tension-only (flexmb/contact/sheave_rope.py; docs/theory-ropes.md §9),
  wire-rope modulus E = 100 GPa on a metallic area of 0.58 pi d^2/4, Kelvin-Voigt damping time 0.02 s (about 7 %
  of critical on the rig's bounce on the hoist rope);
  - hoist rope: from the hoist drum in the house (tangent point (-2, 10) m) up to the boom-point sheave (centre at
    the boom point, radius 1.5 m: a 3 m sheave, about 36 rope diameters), over it and down to the hoist coupler;
    two 83 mm (3 1/4 in) ropes lumped into one, EA = 6.3e8 N;
  - drag rope: from the drag drum in the house (tangent point (2, 8) m) down under the fairlead sheave (centre
    (10, 3.5) m, radius 0.9 m) and out to the drag clevis; two 83 mm ropes lumped, EA = 6.3e8 N. The fairlead's
    sheaves are lumped into one whose axis is normal to the boom plane; the drum sits above it, so the rope bends
    around its underside whether the clevis is at grade or hoisted (wrap 34 deg at rest);
  - dump rope: one 50 mm rope (EA = 1.1e8 N) from the drag clevis up over the dump block (a sheave of radius 0.6
    m on a 2 t hanger pinned to the hoist coupler, 2.1 m below and in front of the pin) and down to the bucket's
    arch; its unstretched length is 3 m shorter than its path at rest with the rope left out (``DUMP_SHORTER``; the
    hanger then hangs below the coupler), so at rest it carries 62 kN and lifts the bucket's front by 6 deg; it
    holds the front up while the drag pulls and loses its pull when the drag pays out: the bucket then turns
    mouth-down about its trunnions (the dump);
  - boom suspension ropes: pendants of fixed length (no drum, no sheave: on the machine they are socketed at both
    ends) from the mast head straight to the boom point; four 89 mm (3 1/2 in) ropes (two a side) lumped into one,
    EA = 1.44e9 N;
  - the hoist, drag and suspension ropes' unstretched lengths: drawn lengths shortened to carry 1.05 MN, 0.35 MN
    and 2.4 MN (rounded estimates of the statics by hand; at rest they carry 1.08, 0.39 and 2.46 MN), so that the
    static solve starts with taut ropes and the boom stays within 0.01 deg of its drawn 32 deg;
* rigging, each pair of the machine lumped into one member in the plane of symmetry (the thesis models both):
  hoist coupler 2 t; upper hoist chain 2 links x 2 m, 1 t each; spreader bar
  3 t (5 m across); lower hoist chain 2 links x 2.5 m, 1.25 t each; drag chain 2 links x 3 m, 1.5 t each, from the
  drag clevis (0.5 t) to the bucket's hitch. Chain links are rigid bodies on universal joints (Crous 2000, Ch. 5),
  fixed to bodies by revolute joints;
* bucket: 30 t empty (about 0.9 t per m^3 of capacity), 6 m x 3.5 m x 4.5 m; payload 34 m^3 x 1.7 t/m^3 (loose
  overburden) = 58 t, a rigid body fixed in the bucket (Crous 2000, Ch. 5: "as a first approximation ... the payload can
  be considered as a solid body"); no soil: the digging force is not modelled; the bucket starts 65 m from the swing
  axis, 2.5 m up.
"""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

import flexmb as fm
from flexmb.contact import rope_chain
from flexmb.contact.sheave_rope import SheaveRopeGroup

G = 9.81
HOUSE_M, HOUSE_J = 5.0e5, 5.0e7
BOOM_M, BOOM_LEN, BOOM_ANGLE, BOOM_FOOT = 1.0e5, 93.0, math.radians(32.0), np.array([5.0, 4.0, 0.0])
E_ROPE, FILL, TAU = 1.0e11, 0.58, 0.02          # Pa, metallic fill factor, s (Kelvin-Voigt damping time)


def rope_EA(d: float, n: int = 1) -> float:
    """Axial stiffness (N) of ``n`` wire ropes of diameter ``d`` (m): E * 0.58 pi d^2 / 4 each."""
    return n * E_ROPE * FILL * math.pi * d * d / 4.0


HOIST_EA, DRAG_EA, DUMP_EA, SUSP_EA = rope_EA(0.083, 2), rope_EA(0.083, 2), rope_EA(0.050), rope_EA(0.089, 4)
MAST_HEAD = np.array([-4.0, 40.0, 0.0])    # m: where the boom suspension ropes are socketed in the house (our choice)
HOIST_DRUM, DRAG_DRUM = np.array([-2.0, 10.0, 0.0]), np.array([2.0, 8.0, 0.0])    # drum tangent points (m)
BOOM_SHEAVE_R = 1.5
FAIRLEAD, FAIRLEAD_R = np.array([10.0, 3.5, 0.0]), 0.9                           # fairlead sheave centre (m)
BLOCK_R, HANGER_M = 0.6, 2.0e3                                                  # dump block on its hanger
HOIST_T0, DRAG_T0, SUSP_T0 = 1.05e6, 3.5e5, 2.4e6   # N: tensions at rest by hand; drawn ropes stretched by T0/EA
DUMP_SHORTER = 3.0          # m: the dump rope's unstretched length is this much below its path at rest without it
COUPLER_M, CLEVIS_M, SPREADER_M = 2.0e3, 5.0e2, 3.0e3
UPPER_LINK, UPPER_M = 2.0, 1.0e3
LOWER_LINK, LOWER_M = 2.5, 1.25e3
DRAG_LINK, DRAG_M = 3.0, 1.5e3
BUCKET_M, BUCKET_DIMS = 3.0e4, (6.0, 3.5, 4.5)
PAYLOAD_M, PAYLOAD_DIMS = 5.8e4, (4.5, 2.5, 4.0)
BUCKET_START = np.array([65.0, 2.5, 0.0])   # m, bucket centre at the start of the drag
# bucket points (body axes = global at the start; the front, towards the machine, is -x)
TRUNNION, HITCH, ARCH = np.array([0.5, 1.2, 0.0]), np.array([-3.0, -1.2, 0.0]), np.array([-3.0, 1.6, 0.0])
HANGER = np.array([-1.5, -1.5, 0.0])       # dump block centre relative to the coupler pin at the start (m)
Z = np.array([0.0, 0.0, 1.0])


def box_inertia(m: float, dims) -> tuple[float, float, float]:
    """Principal inertias (kg m^2) of a solid box of mass m and edge lengths dims (m)."""
    a, b, c = dims
    return (m * (b * b + c * c) / 12.0, m * (a * a + c * c) / 12.0, m * (a * a + b * b) / 12.0)


def boom_point() -> np.ndarray:
    return BOOM_FOOT + BOOM_LEN * np.array([math.cos(BOOM_ANGLE), math.sin(BOOM_ANGLE), 0.0])


def tangent_point(P, C, R: float, sense: int, incoming: bool) -> np.ndarray:
    """Tangent point (x-y plane) on the circle (centre C, radius R) of the straight rope through P, for a rope that
    runs around the circle in the sense ``sense`` (+1 counter-clockwise about z) and comes from P (``incoming``)
    or leaves towards P. Plain plane geometry, independent of flexmb's kernel (used by the hand calculations)."""
    d = np.asarray(P, float) - np.asarray(C, float)
    dist = float(np.hypot(d[0], d[1]))
    a, b = math.atan2(d[1], d[0]), math.acos(R / dist)
    th = a + sense * b if incoming else a - sense * b
    return np.asarray(C, float) + R * np.array([math.cos(th), math.sin(th), 0.0])


class Dragline:
    """The dragline system and its named parts (module doc)."""

    def __init__(self, swing=0.0, hoist_payout=0.0, drag_payout=0.0, *, payload: bool = True,
                 dump_rope: bool = True, dump_length: float | None = None, name: str = "dragline"):
        """``swing``: house angle (rad) about y, ``hoist_payout``, ``drag_payout``: rope paid out (m) by the
        drums, each a number or a TimeFunction; ``dump_rope``: add the dump rope, of unstretched length
        ``dump_length`` (m; default :func:`dump_rope_length`)."""
        s = fm.System(gravity=(0.0, -G, 0.0), name=name)
        self.system = s
        up = np.array([0.0, 1.0, 0.0])
        house = s.add(fm.RigidBody(HOUSE_M, (HOUSE_J,) * 3, position=(0.0, 6.0, 0.0), name="house"))
        self.swing_joint = s.add(fm.Revolute(s.ground, house, (0.0, 0.0, 0.0), up, name="swing bearing"))
        self.swing = s.add(fm.Driver(self.swing_joint, angle=swing, name="swing"))
        P = boom_point()
        boom = s.add(fm.RigidBody(BOOM_M, box_inertia(BOOM_M, (BOOM_LEN, 3.0, 3.0)), position=0.5 * (BOOM_FOOT + P),
                                  orientation=_rot_z(BOOM_ANGLE), name="boom"))
        self.boom_foot = s.add(fm.Revolute(house, boom, BOOM_FOOT, Z, name="boom foot pin"))
        # boom suspension: pendants from the mast head (in the house) to the boom point, fixed length
        self.suspension = s.add(fm.SheaveRope((house, MAST_HEAD), (boom, P), EA=SUSP_EA, damping_time=TAU,
                                              initial_tension=SUSP_T0, name="boom suspension ropes"))
        # bucket, payload and rigging
        B = BUCKET_START
        bucket = s.add(fm.RigidBody(BUCKET_M, box_inertia(BUCKET_M, BUCKET_DIMS), position=B, name="bucket"))
        if payload:
            load = s.add(fm.RigidBody(PAYLOAD_M, box_inertia(PAYLOAD_M, PAYLOAD_DIMS), position=B + (0.3, -0.3, 0.0),
                                      name="payload"))
            s.add(fm.Fixed(bucket, load, B, name="payload in bucket"))
        trunnion = B + TRUNNION
        spreader_lo = trunnion + 2 * LOWER_LINK * up          # the spreader bar is 0.6 m deep: pins above and below
        spreader_c, spreader_hi = spreader_lo + 0.3 * up, spreader_lo + 0.6 * up
        coupler_c = spreader_hi + 2 * UPPER_LINK * up
        lower = rope_chain(s, np.array([trunnion + k * LOWER_LINK * up for k in range(3)])[::-1],
                           LOWER_M / LOWER_LINK, diameter=0.3, bend_axis=Z, name="lower hoist chain")
        spreader = s.add(fm.RigidBody(SPREADER_M, box_inertia(SPREADER_M, (0.6, 0.6, 5.0)), position=spreader_c,
                                      name="spreader bar"))
        upper = rope_chain(s, np.array([spreader_hi + k * UPPER_LINK * up for k in range(3)])[::-1],
                           UPPER_M / UPPER_LINK, diameter=0.3, bend_axis=Z, name="upper hoist chain")
        coupler = s.add(fm.RigidBody(COUPLER_M, box_inertia(COUPLER_M, (1.5, 1.5, 1.5)), position=coupler_c,
                                     name="hoist coupler"))
        s.add(fm.Revolute(coupler, upper.segments[0], coupler_c, Z, name="coupler pin"))
        s.add(fm.Revolute(upper.segments[-1], spreader, spreader_hi, Z, name="spreader upper pin"))
        s.add(fm.Revolute(spreader, lower.segments[0], spreader_lo, Z, name="spreader lower pin"))
        s.add(fm.Revolute(lower.segments[-1], bucket, trunnion, Z, name="trunnion"))
        # the dump block hangs from the coupler on a hanger (block included), above the bucket's front
        block_c = coupler_c + HANGER
        hanger = s.add(fm.RigidBody(HANGER_M, box_inertia(HANGER_M, (np.linalg.norm(coupler_c - block_c), 0.3, 0.3)),
                                    position=0.5 * (coupler_c + block_c),
                                    orientation=_rot_z(math.atan2(*(coupler_c - block_c)[[1, 0]])),
                                    name="dump block hanger"))
        s.add(fm.Revolute(coupler, hanger, coupler_c, Z, name="hanger pin"))
        # hoist rope: drum in the house -> over the boom-point sheave (clockwise about z) -> coupler
        self.hoist_socket = coupler_c + 0.75 * up
        self.boom_sheave = fm.Sheave(boom, P, BOOM_SHEAVE_R, axis=Z, sense=-1, name="boom-point sheave")
        self.hoist = s.add(fm.SheaveRope((house, HOIST_DRUM), (coupler, self.hoist_socket), [self.boom_sheave],
                                         EA=HOIST_EA, damping_time=TAU, payout=hoist_payout, initial_tension=HOIST_T0,
                                         name="hoist rope"))
        # drag: drum in the house -> under the fairlead sheave (counter-clockwise) -> clevis -> drag chain -> hitch
        hitch = B + HITCH
        clevis_c = hitch - np.array([2 * DRAG_LINK, 0.0, 0.0])
        clevis = s.add(fm.RigidBody(CLEVIS_M, box_inertia(CLEVIS_M, (0.8, 0.8, 0.8)), position=clevis_c,
                                    name="drag clevis"))
        drag = rope_chain(s, np.array([clevis_c + k * DRAG_LINK * np.array([1.0, 0.0, 0.0]) for k in range(3)]),
                          DRAG_M / DRAG_LINK, diameter=0.3, bend_axis=Z, name="drag chain")
        s.add(fm.Fixed(drag.segments[0], clevis, clevis_c, name="clevis on the drag chain"))
        s.add(fm.Revolute(drag.segments[-1], bucket, hitch, Z, name="hitch"))
        self.drag_socket = clevis_c
        self.fairlead = fm.Sheave(house, FAIRLEAD, FAIRLEAD_R, axis=Z, sense=1, name="fairlead sheave")
        self.drag = s.add(fm.SheaveRope((house, DRAG_DRUM), (clevis, clevis_c), [self.fairlead], EA=DRAG_EA,
                                        damping_time=TAU, payout=drag_payout, initial_tension=DRAG_T0,
                                        name="drag rope"))
        # dump rope: clevis -> over the dump block (clockwise) -> arch
        self.dump = None
        self.dump_ends = (clevis_c + 0.5 * up, B + ARCH)
        self.block_sheave = fm.Sheave(hanger, block_c, BLOCK_R, axis=Z, sense=-1, name="dump block")
        if dump_rope:
            self.dump = s.add(fm.SheaveRope((clevis, self.dump_ends[0]), (bucket, self.dump_ends[1]),
                                            [self.block_sheave], EA=DUMP_EA, damping_time=TAU,
                                            length=dump_rope_length() if dump_length is None else dump_length,
                                            name="dump rope"))
        self.house, self.boom, self.bucket, self.coupler = house, boom, bucket, coupler
        self.clevis, self.hanger, self.spreader = clevis, hanger, spreader
        self.chains = {"upper": upper, "lower": lower, "drag": drag}

    @property
    def ropes(self) -> dict:
        """The ropes by name (hoist, drag, suspension and, when modelled, dump)."""
        return {k: r for k, r in (("hoist", self.hoist), ("drag", self.drag), ("suspension", self.suspension),
                                  ("dump", self.dump)) if r is not None}

    def suspended_weight(self) -> float:
        """Weight (N) of everything the hoist and drag ropes carry (all bodies but the house and boom)."""
        skip = {id(b) for b in (self.house, self.boom)}
        return G * sum(b.mass for b in self.system.bodies if id(b) not in skip)


def rope_values(d: Dragline, res: fm.Result) -> dict[str, dict]:
    """``SheaveRope.values(res)`` of all of the dragline's ropes (by name, as :attr:`Dragline.ropes`), in one pass:
    the rope family evaluates all ropes in one call, and ``values`` calls it once per row for each rope (4 ropes,
    3600 calls on the quick cycle's 900 rows, ~0.6 s); this takes each row's parts of all ropes from one call. Same
    fields and units as ``SheaveRope.values``."""
    asm = d.system.compile()
    g = next(f for f in asm.families if isinstance(f, SheaveRopeGroup))
    ropes = d.ropes
    idx = {k: next(i for i, e in enumerate(g.elements) if e is r) for k, r in ropes.items()}
    out = {k: {f: np.empty(res.t.size) for f in ("length", "speed", "tension", "stretch", "clearance", "drum_power")}
           for k in ropes}
    zero = np.zeros(asm.nq)
    for row, (t, q, v) in enumerate(zip(res.t, res.q, res.v)):
        parts = g.evaluate(asm.eval_state(q, v, zero, float(t)), float(t))[2]
        for k, i in idx.items():
            p, o = parts[i], out[k]
            o["length"][row], o["speed"][row], o["tension"][row] = p[0], p[1], p[2]
            o["stretch"][row], o["clearance"][row] = p[4], p[5]
            o["drum_power"][row] = g.drum_power_of(p, i, float(t))
    return out


@lru_cache(maxsize=None)
def dump_rope_length() -> float:
    """Unstretched length (m) of the dump rope: its path (clevis, over the dump block, to the arch) in the rig's
    static equilibrium with the dump rope left out, less ``DUMP_SHORTER`` (module doc)."""
    d = Dragline(dump_rope=True, dump_length=1.0e3, name="dragline rig at rest, dump rope slack")
    res = fm.static_equilibrium(d.system, load_steps=5)
    return float(d.dump.values(res)["length"][-1]) - DUMP_SHORTER


@lru_cache(maxsize=None)
def hang_static() -> tuple[Dragline, fm.Result]:
    """The rig at rest at the start of the drag: (dragline, ``fm.static_equilibrium`` result), computed once per
    process (the cycle starts from it; treat the result as read-only)."""
    d = Dragline(name="dragline rig at rest")
    return d, fm.static_equilibrium(d.system, load_steps=5)


def _rot_z(a: float) -> np.ndarray:
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
