"""The dragline model of suite ``dragline`` (seed 000, P. G. Crous, "Modelling of Dragline Dynamics", MSc thesis,
Stellenbosch 2000, Ch. 5; docs/theory-ropes.md §8).

Machine class: a mid-size walking dragline of the Marion 7820-M class, whose public figures are a boom of 305 ft
(93 m) and a bucket of 45 yd^3 (34 m^3) (published descriptions of the machine "Brutus", e.g. the article "Giant
dragline excavators from the 1960s", jublanisen.com). Everything else is our choice, stated here:

* house: turns about the vertical axis y through the origin, driven (the swing motion), 500 t, J_y = 5e7 kg m^2;
* boom: rigid, 93 m at 32 deg from a foot at (5, 4) m, 100 t, fixed to the house;
* hoist rope: the hoist winch at the boom point (seed 000 Ch. 5: "the hoist winch is positioned at the boom
  point"), a ``fm.Winch`` span from the boom point to the top of the hoist coupler (massless; a rope of 1 m
  segments over a boom-point sheave did not run: docs/theory-ropes.md §8);
* drag rope: the drag winch at the fairlead (seed 000 Ch. 5: "the drag winch is positioned at the fairlead"),
  a ``fm.Winch`` span from the fairlead point (10, 3) m to the drag clevis (massless: its 2 x 24 kg/m would sag
  between the fairlead and the bucket, which this model leaves out);
* rigging, each pair of the machine lumped into one member in the plane of symmetry (the thesis models both):
  hoist coupler 2 t; (option ``dump_rope``) a dump block, a pulley of radius 1 m (1 t) on a 1 t hanger from the
  coupler; upper hoist chain 2 links x 2 m, 1 t each; spreader bar 3 t (5 m across); lower hoist chain 2 links x 2.5 m, 1.25 t
  each; drag chain 2 links x 3 m, 1.5 t each, from the drag clevis (0.5 t) to the bucket's hitch; dump rope 11 kg/m
  (one 50 mm rope), 1 m segments, from the drag clevis over the dump block to the bucket's arch (option
  ``dump_rope``, off: docs/theory-ropes.md §8). Chain links are rigid bodies on universal joints (seed 000 Ch. 5),
  fixed to bodies by revolute joints;
* units: t, m, s and kN (MASS_UNIT below: the masses are given in kg and divided by 1000);
* bucket: 30 t empty (about 0.9 t per m^3 of capacity), 6 m x 3.5 m x 4.5 m; payload 34 m^3 x 1.7 t/m^3 (loose
  overburden) = 58 t, a rigid body fixed in the bucket (seed 000 Ch. 5: "as a first approximation ... the payload can
  be considered as a solid body"); no soil: the digging force is not modelled; the bucket starts 65 m from the swing
  axis, 2.5 m up, where the hoist rope leans 19 deg from the vertical and the drag carries a third of the weight.
"""
from __future__ import annotations

import math

import numpy as np

import flexmb as fm
from flexmb.contact import RopePulleyContact, rope_chain

G = 9.81
HOUSE_M, HOUSE_J = 5.0e5, 5.0e7
BOOM_M, BOOM_LEN, BOOM_ANGLE, BOOM_FOOT = 1.0e5, 93.0, math.radians(32.0), np.array([5.0, 4.0, 0.0])
DUMP_RHO = 11.0                             # kg/m
SEG = 1.0                                   # m, rope segment length
FAIRLEAD = np.array([10.0, 3.0, 0.0])
BLOCK_R, BLOCK_M, HANGER_M = 1.0, 1.0e3, 1.0e3
K_BLOCK, C_BLOCK = 5.0e7, 5.0e4
COUPLER_M, CLEVIS_M, SPREADER_M = 2.0e3, 5.0e2, 3.0e3
UPPER_LINK, UPPER_M = 2.0, 1.0e3
LOWER_LINK, LOWER_M = 2.5, 1.25e3
DRAG_LINK, DRAG_M = 3.0, 1.5e3
BUCKET_M, BUCKET_DIMS = 3.0e4, (6.0, 3.5, 4.5)
PAYLOAD_M, PAYLOAD_DIMS = 5.8e4, (4.5, 2.5, 4.0)
BUCKET_START = np.array([65.0, 2.5, 0.0])   # m, bucket centre at the start of the drag
# bucket points (body axes = global at the start; the front, towards the machine, is -x)
TRUNNION, HITCH, ARCH = np.array([0.5, 1.2, 0.0]), np.array([-3.0, -1.2, 0.0]), np.array([-3.0, 1.6, 0.0])
Z = np.array([0.0, 0.0, 1.0])
# Units of the model: m, s, tonnes and kN (consistent: 1 kN = 1 t m/s^2). In kg and N the start of a dynamic run
# fails: the index-1 start matrix [M J^T; J 0] is factorized unscaled (flexmb/solvers/initial.py accelerations), and
# with masses >= 1e4 kg beside unit constraint rows its pivot test calls it singular (pivot ratio ~1e-18).
MASS_UNIT = 1.0e3           # kg per model mass unit (t); forces come out in kN, stiffnesses in kN/m


def _t(kg: float) -> float:
    """Mass (or mass per length, stiffness, damping) in the model's units: kg -> t (N/m -> kN/m)."""
    return kg / MASS_UNIT


def box_inertia(m: float, dims) -> tuple[float, float, float]:
    """Principal inertias (kg m^2) of a solid box of mass m and edge lengths dims (m)."""
    a, b, c = dims
    return (m * (b * b + c * c) / 12.0, m * (a * a + c * c) / 12.0, m * (a * a + b * b) / 12.0)


def boom_point() -> np.ndarray:
    return BOOM_FOOT + BOOM_LEN * np.array([math.cos(BOOM_ANGLE), math.sin(BOOM_ANGLE), 0.0])


def _line(a, b, L: float) -> list:
    """Points from a to b (both included) in equal pieces of at most L."""
    n = max(1, int(math.ceil(np.linalg.norm(b - a) / L - 1e-9)))
    return [a + (b - a) * k / n for k in range(n + 1)]


def _tangent(P, C, R, s, incoming: bool):
    """Tangent point on the circle (centre C, radius R, in the x-y plane) of the line through P, for a rope that
    travels around the circle in the sense s (+1 counter-clockwise) and comes from P (incoming) or goes to P."""
    d = P - C
    dist = float(np.hypot(d[0], d[1]))
    a, b = math.atan2(d[1], d[0]), math.acos(R / dist)
    for th in (a + b, a - b):
        T = C + R * np.array([math.cos(th), math.sin(th), 0.0])
        t = s * np.array([-math.sin(th), math.cos(th), 0.0])          # travel direction at T
        if np.dot(T - P if incoming else P - T, t) > 0.0:
            return th
    raise RuntimeError("no tangent")


def wrap_points(A, C, R: float, B, L: float, sense: int, inset: float = 0.0) -> np.ndarray:
    """Joint points of a rope from A, around a pulley (centre C, axis z, rope-centre radius R, travel sense +1
    counter-clockwise / -1 clockwise) to B: straight runs in pieces of at most L, chords of length L around the
    pulley with their centres on R (touching, unloaded)."""
    Rp = math.hypot(R, 0.5 * L)
    phi = 2.0 * math.atan(L / (2.0 * (R - inset)))
    ta = _tangent(A, C, Rp, sense, True)
    tb = _tangent(B, C, Rp, sense, False)
    sweep = (tb - ta) * sense % (2.0 * math.pi)
    n = max(1, int(round(sweep / phi)))
    arc = [C + Rp * np.array([math.cos(ta + sense * k * phi), math.sin(ta + sense * k * phi), 0.0])
           for k in range(n + 1)]
    pts = _line(np.asarray(A, float), arc[0], L)[:-1] + arc + _line(arc[-1], np.asarray(B, float), L)[1:]
    return np.array(pts)


class Dragline:
    """The dragline system and its named parts (module doc)."""

    def __init__(self, swing=0.0, hoist_payout=0.0, drag_payout=0.0, *, payload: bool = True,
                 hold_pulleys: bool = False, dump_rope: bool = False, name: str = "dragline"):
        """``swing``: house angle (rad) about y, ``hoist_payout``, ``drag_payout``: rope paid out (m) by the
        winches, each a number or a TimeFunction; ``hold_pulleys``: hold the dump block's rotation (static
        solves: without slip there is no friction); ``dump_rope``: add the dump rope over the dump block (off by
        default: with the lengths below its static equilibrium leaves it hanging slack beside the block, and a
        dynamic start from the drawn geometry whips its 1 m segments apart within 0.3-2.8 s at h = 5e-3 to
        1e-3 s; docs/theory-ropes.md §8)."""
        s = fm.System(gravity=(0.0, -G, 0.0), name=name)
        self.system = s
        up = np.array([0.0, 1.0, 0.0])
        house = s.add(fm.RigidBody(_t(HOUSE_M), (_t(HOUSE_J),) * 3, position=(0.0, 6.0, 0.0), name="house"))
        self.swing_joint = s.add(fm.Revolute(s.ground, house, (0.0, 0.0, 0.0), up, name="swing bearing"))
        self.swing = s.add(fm.Driver(self.swing_joint, angle=swing, name="swing"))
        P = boom_point()
        boom = s.add(fm.RigidBody(_t(BOOM_M), box_inertia(_t(BOOM_M), (BOOM_LEN, 3.0, 3.0)), position=0.5 * (BOOM_FOOT + P),
                                  orientation=_rot_z(BOOM_ANGLE), name="boom"))
        s.add(fm.Fixed(house, boom, BOOM_FOOT, name="boom foot"))
        # bucket, payload and rigging
        B = BUCKET_START
        bucket = s.add(fm.RigidBody(_t(BUCKET_M), box_inertia(_t(BUCKET_M), BUCKET_DIMS), position=B, name="bucket"))
        if payload:
            load = s.add(fm.RigidBody(_t(PAYLOAD_M), box_inertia(_t(PAYLOAD_M), PAYLOAD_DIMS), position=B + (0.3, -0.3, 0.0),
                                      name="payload"))
            s.add(fm.Fixed(bucket, load, B, name="payload in bucket"))
        trunnion = B + TRUNNION
        spreader_lo = trunnion + 2 * LOWER_LINK * up          # the spreader bar is 0.6 m deep: pins above and below
        spreader_c, spreader_hi = spreader_lo + 0.3 * up, spreader_lo + 0.6 * up
        coupler_c = spreader_hi + 2 * UPPER_LINK * up
        lower = rope_chain(s, np.array([trunnion + k * LOWER_LINK * up for k in range(3)])[::-1],
                           _t(LOWER_M) / LOWER_LINK, diameter=0.3, bend_axis=Z, name="lower hoist chain")
        spreader = s.add(fm.RigidBody(_t(SPREADER_M), box_inertia(_t(SPREADER_M), (0.6, 0.6, 5.0)), position=spreader_c,
                                      name="spreader bar"))
        upper = rope_chain(s, np.array([spreader_hi + k * UPPER_LINK * up for k in range(3)])[::-1],
                           _t(UPPER_M) / UPPER_LINK, diameter=0.3, bend_axis=Z, name="upper hoist chain")
        coupler = s.add(fm.RigidBody(_t(COUPLER_M), box_inertia(_t(COUPLER_M), (1.5, 1.5, 1.5)), position=coupler_c,
                                     name="hoist coupler"))
        s.add(fm.Revolute(coupler, upper.segments[0], coupler_c, Z, name="coupler pin"))
        s.add(fm.Revolute(upper.segments[-1], spreader, spreader_hi, Z, name="spreader upper pin"))
        s.add(fm.Revolute(spreader, lower.segments[0], spreader_lo, Z, name="spreader lower pin"))
        s.add(fm.Revolute(lower.segments[-1], bucket, trunnion, Z, name="trunnion"))
        # the dump block hangs from the coupler on a hanger link, above the bucket's front (between the drag clevis
        # and the arch: the dump rope runs up from the clevis, over the block and down to the arch)
        block_c = B + np.array([-5.0, 6.5, 0.0])
        hanger = s.add(fm.RigidBody(_t(HANGER_M), box_inertia(_t(HANGER_M), (np.linalg.norm(coupler_c - block_c), 0.3, 0.3)),
                                    position=0.5 * (coupler_c + block_c),
                                    orientation=_rot_z(math.atan2(*(coupler_c - block_c)[[1, 0]])),
                                    name="dump block hanger"))
        s.add(fm.Revolute(coupler, hanger, coupler_c, Z, name="hanger pin"))
        block = s.add(fm.RigidBody(_t(BLOCK_M), (_t(BLOCK_M) * BLOCK_R ** 2 / 4,) * 2 + (_t(BLOCK_M) * BLOCK_R ** 2 / 2,),
                                   position=block_c, name="dump block"))
        baxle = s.add(fm.Revolute(hanger, block, block_c, Z, name="dump block axle"))
        if hold_pulleys:
            s.add(fm.Driver(baxle, angle=0.0, name="dump block held"))
        # hoist: the winch at the boom point (seed 000 Ch. 5), a span from the boom point to the coupler
        self.hoist_winch = s.add(fm.Winch(boom, coupler, drum_point=P, rope_point=coupler_c + 0.75 * up,
                                          payout=hoist_payout,
                                          name="hoist winch"))
        # drag: fairlead winch span -> clevis -> drag chain -> hitch
        hitch = B + HITCH
        clevis_c = hitch - np.array([2 * DRAG_LINK, 0.0, 0.0])
        clevis = s.add(fm.RigidBody(_t(CLEVIS_M), box_inertia(_t(CLEVIS_M), (0.8, 0.8, 0.8)), position=clevis_c,
                                    name="drag clevis"))
        drag = rope_chain(s, np.array([clevis_c + k * DRAG_LINK * np.array([1.0, 0.0, 0.0]) for k in range(3)]),
                          _t(DRAG_M) / DRAG_LINK, diameter=0.3, bend_axis=Z, name="drag chain")
        s.add(fm.Fixed(drag.segments[0], clevis, clevis_c, name="clevis on the drag chain"))
        s.add(fm.Revolute(drag.segments[-1], bucket, hitch, Z, name="hitch"))
        self.drag_winch = s.add(fm.Winch(house, clevis, drum_point=FAIRLEAD, rope_point=clevis_c,
                                         payout=drag_payout, name="drag winch"))
        # dump rope: clevis -> over the dump block -> arch
        self.dump = None
        arch = B + ARCH
        if not dump_rope:
            self.house, self.boom, self.bucket, self.coupler = house, boom, bucket, coupler
            self.clevis, self.block, self.spreader = clevis, block, spreader
            self.chains = {"upper": upper, "lower": lower, "drag": drag}
            return
        dp = wrap_points(clevis_c + (0.0, 0.5, 0.0), block_c, BLOCK_R, arch, SEG, -1, inset=0.01)
        self.dump = rope_chain(s, dp, _t(DUMP_RHO), diameter=0.05, bend_axis=Z, name="dump rope")
        s.add(fm.Revolute(clevis, self.dump.segments[0], dp[0], Z, name="dump rope clevis end"))
        s.add(fm.Revolute(self.dump.segments[-1], bucket, dp[-1], Z, name="dump rope arch end"))
        self.block_contact = s.add(RopePulleyContact(block, self.dump, BLOCK_R, _t(K_BLOCK), _t(C_BLOCK),
                                                     name="dump block contact"))
        self.house, self.boom, self.bucket, self.coupler = house, boom, bucket, coupler
        self.clevis, self.block, self.spreader = clevis, block, spreader
        self.chains = {"upper": upper, "lower": lower, "drag": drag}

    def suspended_weight(self) -> float:
        """Weight (kN, the model's force unit) of everything the hoist and drag ropes carry (all bodies but the
        house and boom)."""
        skip = {id(b) for b in (self.house, self.boom)}
        return G * sum(b.mass for b in self.system.bodies if id(b) not in skip)


def _rot_z(a: float) -> np.ndarray:
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
