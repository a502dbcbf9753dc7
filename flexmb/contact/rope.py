"""Ropes as chains of rigid segments, and their contact with rotating pulleys (docs/theory-ropes.md).

A rope is a chain of rigid segments joined by spherical joints (P. G. Crous's thesis "Modelling of
Dragline Dynamics", §3.5.4, after Winget & Huston 1976 and Huston & Kamman 1982); :func:`rope_chain` and
:func:`rope_segments` build it. :class:`RopePulleyContact` is the rope-pulley contact of Crous 2000, §3.5.4:

* a radial penalty force in the pulley plane when a segment's centre of mass comes inside the pulley radius,
  ``F_n = max(0, K delta^n + c delta_dot)`` (linear spring-dashpot for n = 1, Crous 2000, eq. (3.5.29); Hertzian
  for n = 3/2, eq. (3.5.13));
* an axial guide that keeps a touching segment in the pulley plane, ``F_a = -(k_a z + c_a z_dot)``
  (eq. (3.5.30));
* regularized Coulomb friction ``f_t = -F_n mu(|v_t|) sign(v_t)`` on the slip velocity ``v_t`` of the segment
  relative to the rotating pulley, along the rim tangent (eqs. (3.5.31)-(3.5.33); any
  :class:`~flexmb.contact.friction.FrictionLaw`, e.g. ``CoulombRamp``, Crous 2000, eq. (3.5.19)).

All pairs (pulley, segment) of all elements are evaluated together in compiled kernels (flexmb/compiled/rope.py,
numba, imported when a model with ropes compiles); the Newton blocks are the exact derivatives
(docs/theory-ropes.md §2).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .. import checks
from .. import rotations as rot
from ..bodies.base import Body, Ground
from ..bodies.rigid import RigidBody
from ..errors import ModelError
from ..forces.base import ForceElement
from ..groups import ElementGroup, EvalState
from .friction import FrictionLaw, FrictionTable

__all__ = ["RopePulleyContact", "RopePulleyGroup", "Rope", "rope_chain", "rope_segments", "over_pulley_points",
           "wound_drum_points", "rope_pulley_forces", "build_groups"]


class RopePulleyContact(ForceElement):
    """Contact of the segments of a rope with one pulley (Crous 2000, §3.5.4; docs/theory-ropes.md §2).

    Args:
        pulley: the pulley, a :class:`~flexmb.RigidBody` whose reference point (centre of mass) is the pulley
            centre (usually on a ``Revolute`` joint), or ``system.ground`` for a fixed pulley.
        segments: the rope's segment bodies (``Rope.segments``); each touches through its reference point, its
            centre of mass.
        radius: radius (m) at which the segment centres ride: the groove radius plus half the rope diameter
            (the "effective radius" of Crous 2000, §4).
        stiffness: radial penalty stiffness ``K`` (N/m^n).
        damping: radial damping ``c`` (N s/m); the force is clamped at zero (never pulls).
        exponent: ``n`` of ``K delta^n`` (1 linear, Crous 2000, eq. (3.5.29); 1.5 Hertzian, eq. (3.5.13)).
        axis: direction of the pulley axis (global, at the initial configuration; default z).
        friction: a :class:`~flexmb.contact.friction.FrictionLaw` (``CoulombRamp(mu, v0)`` is Crous 2000's
            eq. (3.5.19)), or None for a smooth pulley.
        guide_stiffness: axial guide stiffness ``k_a`` (N/m); default ``stiffness`` (only for n = 1).
        guide_damping: axial guide damping ``c_a`` (N s/m); default ``damping``.
        name: element name.
    """

    kind = "rope-pulley contact"

    def __init__(self, pulley: Body, segments, radius: float, stiffness: float, damping: float = 0.0, *,
                 exponent: float = 1.0, axis=(0.0, 0.0, 1.0), friction: FrictionLaw | None = None,
                 guide_stiffness: float | None = None, guide_damping: float | None = None,
                 name: str | None = None):
        super().__init__(name)
        owner = self.owner
        if not isinstance(pulley, (RigidBody, Ground)):
            raise ModelError(f"{owner}: the pulley must be a RigidBody or the ground, got {pulley!r}")
        segs = list(segments.segments if isinstance(segments, Rope) else segments)
        if not segs:
            raise ModelError(f"{owner}: no rope segments given")
        for k, b in enumerate(segs):
            if not isinstance(b, RigidBody):
                raise ModelError(f"{owner}: segment {k} must be a RigidBody, got {b!r}")
            if b is pulley:
                raise ModelError(f"{owner}: segment {k} ({b.name!r}) is the pulley itself")
        if len({id(b) for b in segs}) != len(segs):
            raise ModelError(f"{owner}: a segment is listed twice")
        self.pulley, self.segments = pulley, segs
        self.radius = checks.scalar(radius, "radius", owner, sign="positive", unit=" m")
        self.stiffness = checks.scalar(stiffness, "stiffness", owner, sign="positive")
        self.damping = checks.scalar(damping, "damping", owner, sign="non-negative", unit=" N s/m")
        self.exponent = checks.scalar(exponent, "exponent", owner, sign="positive")
        if guide_stiffness is None:
            if self.exponent != 1.0:
                raise ModelError(f"{owner}: give guide_stiffness (N/m) when the radial law is not linear "
                                 f"(exponent {self.exponent})")
            guide_stiffness = self.stiffness
        self.guide_stiffness = checks.scalar(guide_stiffness, "guide_stiffness", owner, sign="non-negative",
                                             unit=" N/m")
        self.guide_damping = checks.scalar(self.damping if guide_damping is None else guide_damping,
                                           "guide_damping", owner, sign="non-negative", unit=" N s/m")
        if friction is not None and not isinstance(friction, FrictionLaw):
            raise ModelError(f"{owner}: friction must be a FrictionLaw (e.g. CoulombRamp) or None, got {friction!r}")
        self.friction = friction
        a = checks.vector(axis, "axis", owner)
        na = float(np.linalg.norm(a))
        if na == 0.0:
            raise ModelError(f"{owner}: the pulley axis is the zero vector")
        self.axis_local = np.asarray(pulley.to_local_vector(a / na), dtype=float)

    @property
    def bodies(self) -> tuple:
        return (self.pulley, *self.segments)


@dataclass
class Rope:
    """A rope built by :func:`rope_chain`: its segment bodies (in order), the spherical joints between them and
    the joint points (global, initial; ``points[0]`` and ``points[-1]`` are the rope's ends, m)."""

    segments: list
    joints: list
    points: np.ndarray

    @property
    def length(self) -> float:
        """Length of the rope (m)."""
        return float(np.linalg.norm(np.diff(self.points, axis=0), axis=1).sum())

    def tensions(self, result) -> np.ndarray:
        """Rope tension (N) at every inner joint (columns, from ``points[1]`` on) and saved time (rows),
        (nt, n - 1): the magnitude of the joint's reaction force (a spherical joint carries no moment, so its
        force is the rope force there; the Lagrange multipliers, ``Assembly.reactions``). A chain of rigid
        segments cannot push along a straight line, but its joints can: a joint of a slack, buckled rope
        reports the (small) compression as a tension too, so read a value near 0 as slack."""
        result._model("Rope.tensions")
        F, _ = result.reactions([result.system.joints.index(j) for j in self.joints])     # all rows at once
        return np.linalg.norm(F, axis=2)


def _frame(t: np.ndarray) -> np.ndarray:
    """A rotation matrix whose first column is the unit vector ``t``."""
    helper = np.eye(3)[int(np.argmin(np.abs(t)))]
    y = np.cross(t, helper)
    y /= np.linalg.norm(y)
    return np.column_stack([t, y, np.cross(t, y)])


def rope_chain(system, points, mass_per_length: float, *, diameter: float = 0.01, bend_axis=None,
               name: str = "rope") -> Rope:
    """Add a rope whose joints start at ``points`` (n+1, 3) (m) to ``system``: n rigid segments (Crous 2000, §3.5.4)
    joined at the inner points; the rope's ends ``points[0]``, ``points[-1]`` are free.

    Joints: ``fm.Spherical`` (default; each segment's spin about its own axis is then free, a neutral mode that
    dynamics never excites but a static solve refuses), or, with ``bend_axis`` (global direction perpendicular to
    every segment: the normal of a rope laid out in a plane), ``fm.Universal`` joints that bend about
    ``bend_axis`` on the first segment and about the in-plane normal of the second (Crous 2000, Ch. 5: universal joints
    give the rope full torsional stiffness, spherical joints none).

    Segment k runs from ``points[k]`` to ``points[k+1]``; its body x axis lies along it (z along ``bend_axis`` when
    given). Mass ``mass_per_length`` (kg/m) times its length; inertia of a solid cylinder of ``diameter`` (m):
    ``m d^2/8`` about its axis, ``m L^2/12 + m d^2/16`` across (Crous 2000, App. D.2 takes the thin-rod values, 0
    about the axis).
    """
    from ..joints import Spherical, Universal
    P = np.asarray(points, dtype=float)
    owner = f"rope {name!r}"
    if P.ndim != 2 or P.shape[1] != 3 or P.shape[0] < 2:
        raise ModelError(f"{owner}: points must be an (n+1, 3) array with n >= 1, got shape {P.shape}")
    if not np.all(np.isfinite(P)):
        raise ModelError(f"{owner}: points are not finite")
    mu = checks.scalar(mass_per_length, "mass_per_length", owner, sign="positive", unit=" kg/m")
    d = checks.scalar(diameter, "diameter", owner, sign="positive", unit=" m")
    L = np.linalg.norm(np.diff(P, axis=0), axis=1)
    if np.any(L <= 0.0):
        k = int(np.flatnonzero(L <= 0.0)[0])
        raise ModelError(f"{owner}: points {k} and {k + 1} coincide (a segment of zero length)")
    T = np.diff(P, axis=0) / L[:, None]
    if bend_axis is None:
        frames = [_frame(t) for t in T]
    else:
        b = checks.vector(bend_axis, "bend_axis", owner)
        nb = float(np.linalg.norm(b))
        if nb == 0.0:
            raise ModelError(f"{owner}: bend_axis is the zero vector")
        b = b / nb
        off = np.abs(T @ b)
        if off.max() > 1e-9:
            k = int(np.argmax(off))
            raise ModelError(f"{owner}: bend_axis must be a direction perpendicular to every segment; segment {k} "
                             f"has the cosine {off[k]:.3g} with it")
        frames = [np.column_stack([t, np.cross(b, t), b]) for t in T]
    segs, joints = [], []
    for k in range(len(L)):
        m = mu * L[k]
        inertia = (m * d * d / 8.0, m * L[k] ** 2 / 12.0 + m * d * d / 16.0, m * L[k] ** 2 / 12.0 + m * d * d / 16.0)
        segs.append(system.add(RigidBody(m, inertia, position=0.5 * (P[k] + P[k + 1]), orientation=frames[k],
                                         name=f"{name}[{k}]")))
    for k in range(1, len(L)):
        jn = f"{name} joint {k}"
        joints.append(system.add(Spherical(segs[k - 1], segs[k], P[k], name=jn) if bend_axis is None else
                                 Universal(segs[k - 1], segs[k], point=P[k], axis_a=frames[k - 1][:, 2],
                                           axis_b=frames[k][:, 1], name=jn)))
    return Rope(segs, joints, P)


def over_pulley_points(n: int, radius: float, length: float, center=(0.0, 0.0, 0.0)) -> np.ndarray:
    """Joint points (n+1, 3) (m) of a rope of ``length`` (m) in ``n`` equal segments hung symmetrically over a
    pulley of ``radius`` (m) at ``center`` with axis z and gravity along -y, for :func:`rope_chain`: the segments on
    the upper half of the pulley are chords whose centres lie on ``radius`` (touching, unloaded), the rest hang
    vertically at x = +-R' (R' = sqrt(r^2 + L^2/4), the radius of the chord ends); from the left end (x < 0) to the
    right one."""
    n = checks.count(n, "number of segments n", "rope", low=2)
    length = checks.scalar(length, "length", "rope", sign="positive", unit=" m")
    radius = checks.scalar(radius, "radius", "rope", sign="positive", unit=" m")
    L = length / n
    phi = 2.0 * math.atan(L / (2.0 * radius))            # angle of one chord whose centre is at ``radius``
    Rp = math.hypot(radius, 0.5 * L)
    first = 0.5 * phi if n % 2 else 0.0                   # odd n: a segment centred on top; even: a joint
    offs = [first + k * phi for k in range(n) if first + k * phi <= 0.5 * math.pi + 1e-12]
    ang = sorted({0.5 * math.pi + s for s in offs} | {0.5 * math.pi - s for s in offs}, reverse=True)
    arc = [(Rp * math.cos(a), Rp * math.sin(a)) for a in ang]     # left (angle ~pi) to right (angle ~0)
    hang = (n - (len(arc) - 1)) // 2
    if hang < 1 or 2 * hang + len(arc) - 1 != n:
        raise ModelError(f"a rope of {length} m in {n} segments does not reach over a pulley of radius {radius} m "
                         "with both ends hanging")
    x0, y = arc[-1]
    y -= math.sqrt(L * L - (Rp - x0) ** 2)                # the first hanging link slants to x = R'
    right = [(Rp, y - k * L) for k in range(hang)]        # right side, top to bottom
    left = [(-x, yy) for x, yy in reversed(right)]        # left side, bottom to top
    return np.array([(x, yy, 0.0) for x, yy in (*left, *arc, *right)]) + checks.vector(center, "center", "rope")


def wound_drum_points(radius: float, segment_length: float, wound: int, hanging: int, *, center=(0.0, 0.0, 0.0),
                      hang_angle: float = 0.0) -> np.ndarray:
    """Joint points (wound + hanging + 1, 3) (m) of a rope wound on a drum of axis z at ``center`` and hanging
    from it, for :func:`rope_chain` and a torque- or speed-driven drum (docs/theory-ropes.md §5): ``wound``
    chords of ``segment_length`` with their centres on ``radius`` (touching, unloaded), from the anchor on the
    rim (``points[0]``, to be pinned to the drum) clockwise down to the drum's right side (x = +R', R' =
    sqrt(r^2 + L^2/4)), then ``hanging`` segments straight down (gravity along -y), turned by ``hang_angle``
    (rad) about the last wound point. The load pulls the drum clockwise (-z); turning it clockwise pays out."""
    r = checks.scalar(radius, "radius", "wound drum", sign="positive", unit=" m")
    L = checks.scalar(segment_length, "segment_length", "wound drum", sign="positive", unit=" m")
    nw = checks.count(wound, "wound", "wound drum", low=0)
    nh = checks.count(hanging, "hanging", "wound drum", low=1)
    phi = 2.0 * math.atan(L / (2.0 * r))
    if nw * phi >= 2.0 * math.pi:
        raise ModelError(f"wound drum: {nw} chords of {L} m take {nw * phi:.3g} rad, more than one turn of a drum of "
                         f"radius {r} m (one layer only)")
    Rp = math.hypot(r, 0.5 * L)
    wound_pts = [(Rp * math.cos((nw - k) * phi), Rp * math.sin((nw - k) * phi)) for k in range(nw + 1)]
    x0, y0 = wound_pts[-1]
    down = (math.sin(hang_angle), -math.cos(hang_angle))
    hang = [(x0 + k * L * down[0], y0 + k * L * down[1]) for k in range(1, nh + 1)]
    return np.array([(x, y, 0.0) for x, y in (*wound_pts, *hang)]) + checks.vector(center, "center", "wound drum")


def rope_segments(system, start, end, n: int, mass_per_length: float, *, diameter: float = 0.01,
                  name: str = "rope") -> Rope:
    """A straight rope of ``n`` equal segments from ``start`` to ``end`` (m); see :func:`rope_chain`."""
    if int(n) != n or n < 1:
        raise ModelError(f"rope {name!r}: n must be a positive integer, got {n!r}")
    a, b = checks.vector(start, "start", f"rope {name!r}"), checks.vector(end, "end", f"rope {name!r}")
    pts = a + np.linspace(0.0, 1.0, int(n) + 1)[:, None] * (b - a)
    return rope_chain(system, pts, mass_per_length, diameter=diameter, name=name)


def rope_pulley_forces(result, contact: RopePulleyContact) -> dict:
    """Contact forces of ``contact`` at every saved time of ``result``: a dict of arrays (nt, n_segments),
    in the order of ``contact.segments``: ``Fn`` normal force (N), ``Fa`` axial guide force (N), ``ft`` friction
    force (N, along the rim tangent ``e1 x axis``), ``vt`` slip speed (m/s), ``delta`` penetration (m, negative
    when apart) (docs/theory-ropes.md §2.3)."""
    if not isinstance(contact, RopePulleyContact):
        raise ModelError(f"rope_pulley_forces: {contact!r} is not a RopePulleyContact")
    if result.system is None:
        raise ModelError("rope_pulley_forces evaluates the model: the result has no system attached")
    asm = result.system.compile()
    groups = [g for g in asm.families if isinstance(g, RopePulleyGroup)]
    if not groups or contact not in result.system.forces:
        raise ModelError(f"rope_pulley_forces: {contact.owner} is not part of the simulated system")
    g = groups[0]
    e = [f for f in result.system.forces if isinstance(f, RopePulleyContact)].index(contact)
    sel = np.flatnonzero(g.which == e)
    out = {k: np.empty((result.t.size, sel.size)) for k in ("Fn", "Fa", "ft", "vt", "delta")}
    nq = asm.nq
    for i, (t, q, v) in enumerate(zip(result.t, result.q, result.v)):
        f = g.forces(asm.eval_state(q, v, np.zeros(nq), t))
        for k in out:
            out[k][i] = f[k][sel]
    return out


# -- the group ----------------------------------------------------------------------------------------------------

# second derivatives of A(p) (quadratic in p): S[a, b, k, i] = d^2 A_ki / dp_a dp_b (flexmb/rotations.py, _C_H)
_C = rot._C_H.reshape(4, 4, 9)
_S = np.ascontiguousarray((_C + _C.transpose(1, 0, 2)).reshape(4, 4, 3, 3))


def rope_second_derivatives() -> np.ndarray:
    """``S[a, b, k, i] = d^2 A_ki / dp_a dp_b`` (4, 4, 3, 3), the constant the rope kernels take (a copy)."""
    return _S.copy()


class RopePulleyGroup(ElementGroup):
    """Every (pulley, segment) pair of every :class:`RopePulleyContact`, evaluated together.

    Instance coordinates (k = 10): the segment's position (3), the pulley's position (3) and Euler parameters (4).
    The local law works on ``d' = A_p^T (r_s - r_p)`` and its rate ``w = d'_dot``, the velocity of the segment
    relative to the pulley's coincident material point, in the pulley frame (docs/theory-ropes.md §2); every pair
    is evaluated in one compiled call (flexmb/compiled/rope.py)."""

    probe_structure = False
    compiled_part = "ropes"
    compiled_words = "rope-pulley pairs"

    @property
    def on_compiled_step(self) -> bool:
        """No friction or built-in friction laws."""
        return self.builtin

    @classmethod
    def pack_compiled(cls, groups: list) -> tuple:
        """The rope-pulley pairs' part of the compiled model (flexmb/compiled/model.py ``Ropes``; a model has one
        group)."""
        from ..compiled.model import Ropes
        if not groups:
            f, i = np.zeros(0), np.zeros(0, dtype=np.int64)
            return Ropes(np.zeros((0, 10), dtype=np.int64), np.zeros((0, 10), dtype=np.int64), np.zeros((0, 3)),
                         rope_second_derivatives(), f, f, f, f, f, f, i, np.zeros((0, 3)), i)
        (g, pos), = groups
        return Ropes(g.gather, g.scatter, g.axis, rope_second_derivatives(), g.R, g.K, g.c, g.n_exp, g.ka, g.ca,
                     g.fkind, g.fpar, np.ascontiguousarray(pos, np.int64))

    def __init__(self, elements: list[RopePulleyContact], nq: int):
        seg, pul, which, labels = [], [], [], []
        for e, el in enumerate(elements):
            for s in el.segments:
                seg.append(s.offset + np.arange(3))
                pul.append(np.full(7, -1) if isinstance(el.pulley, Ground) else el.pulley.offset + np.arange(7))
                which.append(e)
                labels.append(f"{el.owner}: {s.name!r}")
        self.scatter = np.hstack([np.array(seg, dtype=np.int64), np.array(pul, dtype=np.int64)])
        self.gather = np.where(self.scatter >= 0, self.scatter, nq + np.tile(np.arange(-3, 7), (len(seg), 1)))
        self.labels = labels
        w = np.array(which, dtype=np.int64)
        self.which = w
        self.R = np.array([el.radius for el in elements])[w]
        self.K = np.array([el.stiffness for el in elements])[w]
        self.c = np.array([el.damping for el in elements])[w]
        self.n_exp = np.array([el.exponent for el in elements])[w]
        self.ka = np.array([el.guide_stiffness for el in elements])[w]
        self.ca = np.array([el.guide_damping for el in elements])[w]
        self.axis = np.ascontiguousarray(np.array([el.axis_local for el in elements])[w])
        self.friction = FrictionTable([el.friction for el in elements])
        # built-in friction laws (or none) of every pair: one compiled call evaluates laws and pairs together
        self.builtin = bool(np.all(self.friction.kind <= 2))
        self.fkind = np.ascontiguousarray(self.friction.kind[w])
        self.fpar = np.ascontiguousarray(self.friction.p[w])
        self._memo = None                           # (st, parts) of the last evaluation without blocks
        from ..compiled import rope as kernels      # numba: loaded when a model with ropes compiles
        self._kernels = kernels

    # -- evaluation ------------------------------------------------------------------------------------------
    def _evaluate(self, st: EvalState, coef):
        """Residual (n, 10), blocks (n, 10, 10) (None without ``coef``) and the per-pair parts (n, 9) of
        ``contact_kernel`` (flexmb/compiled/rope.py): the slip speeds first, then the friction law at them, then
        forces and blocks, each in one call for all pairs."""
        n = self.gather.shape[0]
        want = coef is not None
        cK, cC = (float(coef[2]), float(coef[1])) if want else (0.0, 0.0)
        r, parts = np.empty((n, 10)), np.empty((n, 9))
        blk = np.empty((n, 10, 10) if want else (0, 10, 10))
        if self.builtin:            # laws and pairs in one call (the compiled step's arithmetic)
            self._kernels.evaluate_pairs(st.qe, st.ve, self.gather, self.axis, _S, self.R, self.K, self.c, self.n_exp,
                                         self.ka, self.ca, self.fkind, self.fpar, cK, cC, want, r, blk, parts)
            return r, (blk if want else None), parts
        vt = np.empty(n)
        self._kernels.slip_kernel(st.qe, st.ve, self.gather, self.axis, _S, vt)
        _, dmu, mu_over_s = self.friction.coefficient(np.abs(vt), self.which)
        self._kernels.contact_kernel(st.qe, st.ve, self.gather, self.axis, _S, self.R, self.K, self.c, self.n_exp,
                                     self.ka, self.ca, np.ascontiguousarray(mu_over_s, dtype=float),
                                     np.ascontiguousarray(dmu, dtype=float), cK, cC, want, r, blk, parts)
        return r, (blk if want else None), parts

    def _parts(self, st: EvalState) -> np.ndarray:
        """The per-pair parts (n, 9) at ``st``, kept for later calls with the same state object (the potential
        and the power of one accepted state: one evaluation)."""
        if self._memo is None or self._memo[0] is not st:
            self._memo = (st, self._evaluate(st, None)[2])
        return self._memo[1]

    # -- protocol ---------------------------------------------------------------------------------------------
    def residual(self, st: EvalState, coef):
        """``r = -D^T f'`` (virtual power of f' on the relative velocity ``w = D q_dot``) and its blocks."""
        r, blk, _ = self._evaluate(st, coef)
        return r, blk

    def potential(self, st: EvalState) -> float:
        """``K delta^(n+1)/(n+1) + k_a z^2/2`` of the touching pairs (J)."""
        p = self._parts(st)
        on = (p[:, 4] > 0.0) & (p[:, 4] < self.R)         # rho > 0 (a centre on the axis touches nothing)
        stored = p[:, 5] * p[:, 4] / (self.n_exp + 1.0) + 0.5 * self.ka * p[:, 7] ** 2
        return float(np.sum(np.where(on, stored, 0.0)))

    def power(self, st: EvalState) -> float:
        """Power of radial and axial damping and of friction on the system (W, <= 0)."""
        return float(self._kernels.pairs_power(self._parts(st), self.R, self.ka))

    def penetration(self, st: EvalState) -> np.ndarray:
        """``radius - rho`` of every pair (m, positive when the segment centre is inside the pulley radius): the
        geometry alone (``penetration_kernel``), a fraction of a full evaluation; the contact onset checks ask for
        it at the predicted and the new state of every step."""
        if self._memo is not None and self._memo[0] is st:
            return self._memo[1][:, 4].copy()
        delta = np.empty(self.gather.shape[0])
        self._kernels.penetration_kernel(st.qe, self.gather, self.axis, self.R, delta)
        return delta

    def forces(self, st: EvalState) -> dict:
        """Per pair (arrays over ``labels``): normal force ``Fn`` (N), axial guide force ``Fa`` (N), friction
        force ``ft`` (N, along the rim tangent ``e1 x axis``), slip speed ``vt`` (m/s), penetration ``delta`` (m,
        negative when apart)."""
        p = self._parts(st)
        return {k: p[:, j].copy() for j, k in enumerate(("Fn", "Fa", "ft", "vt", "delta"))}


def build_groups(forces, nq: int, st: EvalState) -> list[ElementGroup]:
    """The rope-pulley group of a model (flexmb/groups.py ``FAMILY_MODULES``): one for all elements."""
    elements = [f for f in forces if isinstance(f, RopePulleyContact)]
    return [RopePulleyGroup(elements, nq)] if elements else []
