"""Roller-sprocket contact of a roller chain (docs/theory-roller-chain.md §3).

The continuous-force engagement model of S. L. Pedersen, J. M. Hansen & J. A. C. Ambrosio, "A novel roller-chain
drive model using multibody dynamics analysis tools" (NATO ASI Virtual Nonlinear Multibody Systems, Prague 2002,
§2 "Force model of the roller-sprocket engagement", eq. (4); details in Ambrosio, Hansen & Pedersen, ECCM 2001):
every roller is a free particle (:class:`~flexmb.forces.particles.Particles`); when its centre lies inside the
sprocket's tip circle, its pseudo-penetration from the bedded seat (the seat on the pitch circle nearest to it)
gives a Lankarani-Nikravesh force,

    f = (K delta_r^n + D delta_r_dot) u_r + (K delta_t^n + D delta_t_dot) u_t,     D = chi K delta^n,

radial (the roller pressed below the pitch circle) and tangential (the roller pressed against a linear tooth
flank). ``chi = 3 (1 - e^2) / (4 v_ref)`` is the Lankarani-Nikravesh hysteresis factor (Lankarani & Nikravesh,
Nonlinear Dynamics 5 (1994) 193-207) for restitution e at a reference approach speed ``v_ref`` (held fixed here;
the paper's D uses each impact's approach speed). The flank is linear: the tangential clearance grows as
``tan(alpha)`` times the roller's lift above the pitch circle up to the flank's end, above which a chamfer
closes the tooth to a point on the tip circle (so that a roller entering the tip circle anywhere meets no
penetration: the stored energy is continuous), and the flank force acts along the gradient of that
pseudo-penetration (purely tangential while the roller is seated, as in the paper). All (roller, sprocket)
pairs are evaluated in one compiled call (flexmb/compiled/sprocket.py) with exact derivatives.
"""
from __future__ import annotations

import math

import numpy as np

from .. import checks
from .. import rotations as rot
from ..bodies.base import Body, Ground
from ..bodies.rigid import RigidBody
from ..errors import ModelError
from ..forces.base import ForceElement
from ..forces.particles import Particles
from ..groups import ElementGroup, EvalState

__all__ = ["SprocketContact", "SprocketGroup", "pitch_radius", "build_groups"]


def pitch_radius(pitch: float, teeth: int) -> float:
    """Pitch-circle radius ``p / (2 sin(pi / z))`` (m) of a sprocket with ``teeth`` z for chain pitch p (m)."""
    return float(pitch) / (2.0 * math.sin(math.pi / int(teeth)))


class SprocketContact(ForceElement):
    """Contact of the rollers of a chain with one sprocket (Pedersen, Hansen & Ambrosio eq. (4)).

    Args:
        sprocket: a :class:`~flexmb.RigidBody` whose reference point (centre of mass) is the sprocket centre
            (usually on a ``Revolute`` joint), or ``system.ground`` for a fixed sprocket.
        rollers: the :class:`~flexmb.Particles` set of the rollers.
        teeth: number of teeth z (>= 3).
        pitch: chain pitch p (m); the pitch radius is ``p / (2 sin(pi / z))``.
        stiffness: K (N/m^n).
        exponent: n (1.5 for metallic surfaces, as in the paper).
        restitution: e in [0, 1] (1: no hysteresis damping).
        approach_speed: v_ref (m/s), the approach speed at which the hysteresis damping gives restitution e.
        outer_radius: tip radius R_o (m) inside which a roller engages; default the ANSI B29.1 outside radius
            ``p (0.6 + cot(pi / z)) / 2``.
        flank_angle: alpha (rad), the opening of the linear tooth flank from the radial direction (default
            20 deg, our choice: the paper gives no value).
        flank_height: h_1 (m), the lift above the pitch circle where the linear flank ends and the tip chamfer
            begins (default half the lift H = R_o cos(pi/z) - R_p at which the tip circle meets the middle between
            two seats); the chamfer slope is set so that the teeth are pointed at the tip circle.
        axis: sprocket axis (global, at the initial configuration; default z).
        seat_direction: a global direction (initial configuration) towards seat 0 (default: global x projected
            on the sprocket plane, or y when x is along the axis); seat j lies at ``2 pi j / z`` from it about
            the axis.
        guide_stiffness, guide_damping: axial guide of an engaged roller, ``-(k_a z + c_a z_dot)`` along the axis
            (N/m, N s/m; default 0, a planar model; give k_a > 0 for a static solve, which otherwise sees the
            chain's free sliding along the axis).
        indices: which rollers can touch this sprocket (default all).
        name: element name.
    """

    kind = "sprocket contact"

    def __init__(self, sprocket: Body, rollers: Particles, teeth: int, pitch: float, stiffness: float, *,
                 exponent: float = 1.5, restitution: float = 1.0, approach_speed: float = 1.0,
                 outer_radius: float | None = None, flank_angle: float = math.radians(20.0),
                 flank_height: float | None = None, axis=(0.0, 0.0, 1.0),
                 seat_direction=None, guide_stiffness: float = 0.0, guide_damping: float = 0.0, indices=None,
                 name: str | None = None):
        super().__init__(name)
        owner = self.owner
        if not isinstance(sprocket, (RigidBody, Ground)):
            raise ModelError(f"{owner}: the sprocket must be a RigidBody or the ground, got {sprocket!r}")
        if not isinstance(rollers, Particles):
            raise ModelError(f"{owner}: rollers must be a Particles set, got {rollers!r}")
        if isinstance(teeth, bool) or not isinstance(teeth, (int, np.integer)) or teeth < 3:
            raise ModelError(f"{owner}: a sprocket needs an integer number of teeth >= 3, got {teeth!r}")
        self.sprocket, self.rollers, self.teeth = sprocket, rollers, int(teeth)
        self.pitch = checks.scalar(pitch, "pitch", owner, sign="positive", unit=" m")
        self.pitch_radius = pitch_radius(self.pitch, self.teeth)
        if outer_radius is None:
            outer_radius = 0.5 * self.pitch * (0.6 + 1.0 / math.tan(math.pi / self.teeth))
        self.outer_radius = checks.scalar(outer_radius, "outer_radius", owner, sign="positive", unit=" m")
        if self.outer_radius <= self.pitch_radius:
            raise ModelError(f"{owner}: outer_radius {self.outer_radius} m must exceed the pitch radius "
                             f"{self.pitch_radius:.6g} m")
        self.stiffness = checks.scalar(stiffness, "stiffness", owner, sign="positive")
        self.exponent = checks.scalar(exponent, "exponent", owner, sign="positive")
        e = checks.scalar(restitution, "restitution", owner)
        if not 0.0 <= e <= 1.0:
            raise ModelError(f"{owner}: restitution must lie in [0, 1], got {e}")
        self.restitution = e
        self.approach_speed = checks.scalar(approach_speed, "approach_speed", owner, sign="positive", unit=" m/s")
        self.chi = 3.0 * (1.0 - e * e) / (4.0 * self.approach_speed)
        alpha = checks.scalar(flank_angle, "flank_angle", owner, sign="non-negative", unit=" rad")
        if alpha >= 0.5 * math.pi:
            raise ModelError(f"{owner}: flank_angle must be below pi/2 rad, got {alpha}")
        self.flank_angle = alpha
        H = self.outer_radius * math.cos(math.pi / self.teeth) - self.pitch_radius
        if H <= 0.0:
            raise ModelError(f"{owner}: outer_radius {self.outer_radius} m is too small for {self.teeth} teeth: the "
                             f"tip circle must pass outside the chord midpoints, above "
                             f"{self.pitch_radius / math.cos(math.pi / self.teeth):.6g} m")
        h1 = 0.5 * H if flank_height is None else checks.scalar(flank_height, "flank_height", owner,
                                                                  sign="positive", unit=" m")
        if h1 >= H:
            raise ModelError(f"{owner}: flank_height {h1} m must be below {H:.6g} m (the lift where the tip circle "
                             "meets the middle between two seats)")
        self.flank_height = h1
        # chamfer: |e_t| = R_o sin(pi/z) at lift H (midway between seats on the tip circle) has zero penetration
        self.chamfer_slope = max(0.0, (self.outer_radius * math.sin(math.pi / self.teeth) - math.tan(alpha) * H)
                                 / (H - h1))
        self.guide_stiffness = checks.scalar(guide_stiffness, "guide_stiffness", owner, sign="non-negative",
                                             unit=" N/m")
        self.guide_damping = checks.scalar(guide_damping, "guide_damping", owner, sign="non-negative",
                                           unit=" N s/m")
        a = checks.vector(axis, "axis", owner)
        na = float(np.linalg.norm(a))
        if na == 0.0:
            raise ModelError(f"{owner}: the sprocket axis is the zero vector")
        a = a / na
        if seat_direction is None:
            seat_direction = (1.0, 0.0, 0.0) if abs(a[0]) < 0.9 else (0.0, 1.0, 0.0)
        b = checks.vector(seat_direction, "seat_direction", owner)
        b = b - (b @ a) * a
        nb = float(np.linalg.norm(b))
        if nb < 1e-9:
            raise ModelError(f"{owner}: seat_direction is along the axis")
        self.axis_local = np.asarray(sprocket.to_local_vector(a), dtype=float)
        self.seat_local = np.asarray(sprocket.to_local_vector(b / nb), dtype=float)
        idx = np.arange(rollers.count) if indices is None else np.atleast_1d(np.asarray(indices))
        if idx.ndim != 1 or idx.size == 0 or not np.issubdtype(idx.dtype, np.integer) or \
                np.any((idx < 0) | (idx >= rollers.count)):
            raise ModelError(f"{owner}: indices must be roller numbers in 0..{rollers.count - 1}, got {indices!r}")
        self.indices = idx.astype(np.int64)

    @property
    def bodies(self) -> tuple:
        return (self.sprocket,)

    def seats(self) -> np.ndarray:
        """Seat centres (z, 3) on the pitch circle at the initial configuration (m, global)."""
        r, A = self.sprocket.initial_frame()
        a, b1 = A @ self.axis_local, A @ self.seat_local
        b2 = np.cross(a, b1)
        th = 2.0 * math.pi * np.arange(self.teeth) / self.teeth
        return r + self.pitch_radius * (np.cos(th)[:, None] * b1 + np.sin(th)[:, None] * b2)


# second derivatives of A(p) (flexmb/rotations.py, _C_H), as flexmb/contact/rope.py
_C = rot._C_H.reshape(4, 4, 9)
_S = np.ascontiguousarray((_C + _C.transpose(1, 0, 2)).reshape(4, 4, 3, 3))

PARTS = ("Fr", "Ft", "delta_r", "delta_t", "seat", "energy", "damping_power", "rho")


class SprocketGroup(ElementGroup):
    """Every (roller, sprocket) pair of every :class:`SprocketContact`, one compiled call
    (flexmb/compiled/sprocket.py). Instance coordinates (k = 10): the roller's position (3), the sprocket's
    position (3) and Euler parameters (4)."""

    probe_structure = False

    def __init__(self, elements: list[SprocketContact], nq: int):
        rows, which, labels = [], [], []
        for e, el in enumerate(elements):
            ridx = el.rollers.coordinates(el.indices)
            spr = np.full(7, -1) if isinstance(el.sprocket, Ground) else el.sprocket.offset + np.arange(7)
            rows.append(np.hstack([ridx, np.tile(spr, (len(el.indices), 1))]))
            which += [e] * len(el.indices)
            labels += [f"{el.owner}: roller {i}" for i in el.indices]
        self.scatter = np.ascontiguousarray(np.vstack(rows), dtype=np.int64)
        self.gather = np.ascontiguousarray(np.where(self.scatter >= 0, self.scatter,
                                                    nq + np.tile(np.arange(-3, 7), (self.scatter.shape[0], 1))))
        self.labels = labels
        w = np.array(which, dtype=np.int64)
        self.which = w

        def col(attr, dtype=float):
            return np.ascontiguousarray(np.array([getattr(el, attr) for el in elements], dtype=dtype)[w])
        self.axis, self.b1 = col("axis_local"), col("seat_local")
        self.teeth = col("teeth", np.int64)
        self.phase = np.zeros(len(w))
        self.Rp, self.Ro = col("pitch_radius"), col("outer_radius")
        self.tan_a = np.tan(col("flank_angle"))
        self.h1, self.tan_b = col("flank_height"), col("chamfer_slope")
        self.K, self.nexp, self.chi = col("stiffness"), col("exponent"), col("chi")
        self.ka, self.ca = col("guide_stiffness"), col("guide_damping")
        from ..compiled import sprocket as kernels     # numba: loaded when a model with sprockets compiles
        self._k = kernels

    def _evaluate(self, st: EvalState, coef):
        n = self.gather.shape[0]
        want = coef is not None
        cK, cC = (float(coef[2]), float(coef[1])) if want else (0.0, 0.0)
        r, parts = np.empty((n, 10)), np.empty((n, 8))
        blk = np.empty((n, 10, 10) if want else (0, 10, 10))
        self._k.sprocket_kernel(st.qe, st.ve, self.gather, self.axis, self.b1, _S, self.teeth, self.phase,
                                self.Rp, self.Ro, self.tan_a, self.h1, self.tan_b, self.K, self.nexp, self.chi,
                                self.ka, self.ca, cK, cC, want, r, blk, parts)
        return r, (blk if want else None), parts

    def residual(self, st: EvalState, coef):
        r, blk, _ = self._evaluate(st, coef)
        return r, blk

    def potential(self, st: EvalState) -> float:
        """``K delta^(n+1) / (n+1)`` of the engaged components (J)."""
        return float(self._evaluate(st, None)[2][:, 5].sum())

    def power(self, st: EvalState) -> float:
        """Power of the hysteresis and axial guide damping (W, <= 0 while the force is not clamped)."""
        return float(self._evaluate(st, None)[2][:, 6].sum())

    def forces(self, st: EvalState) -> dict:
        """Per pair (arrays over ``labels``): radial and flank forces ``Fr``, ``Ft`` (N), pseudo-penetrations
        ``delta_r``, ``delta_t`` (m), ``seat`` index, stored ``energy`` (J), ``damping_power`` (W), ``rho`` (m)."""
        p = self._evaluate(st, None)[2]
        return {k: p[:, j].copy() for j, k in enumerate(PARTS)}


def build_groups(forces, nq: int, st: EvalState) -> list[ElementGroup]:
    """The sprocket-contact group of a model (flexmb/groups.py ``FAMILY_MODULES``): one for all elements."""
    elements = [f for f in forces if isinstance(f, SprocketContact)]
    known = {id(f) for f in forces}
    for el in elements:
        if id(el.rollers) not in known:
            raise ModelError(f"{el.owner}: its rollers {el.rollers.owner} are not in the system; add them first")
    return [SprocketGroup(elements, nq)] if elements else []
