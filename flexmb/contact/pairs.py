"""Contact pairs between bodies: sphere-plane, sphere-sphere and the revolute clearance joint
(docs/theory-contact.md §4-§6).

Each pair measures a scalar ``x(q)`` (the compiled measures of flexmb/compiled/measures.py) and has the
penetration ``delta = sign (offset - x)``:

* sphere-plane: ``x = n . (c - P)``, the height of the sphere centre c above the plane (point P, unit
  normal n, both fixed in the plane's body), ``offset = R``, sign +1;
* sphere-sphere: ``x = |c_b - c_a|``, ``offset = R_a + R_b``, sign +1;
* clearance joint (pin in a hole): ``x = |e|``, ``e = d - (n . d) n`` the eccentricity of the pin centre
  relative to the hole centre (d) projected on the plane normal to the hole axis n, ``offset = c`` (radial
  clearance), sign -1: ``delta = |e| - c``.

The normal force ``F(delta, delta_dot, delta_dot_minus) >= 0`` of the pair's law pushes the surfaces apart:
generalized force ``Q = sign F grad x``. With ``delta_dot = -sign x_dot`` the Newton blocks are exact:
``K = (F_delta grad x + F_deltadot (H v)) grad x^T - sign F H``, ``C = F_deltadot grad x grad x^T`` (H the
Hessian of x). The approach speed ``delta_dot_minus`` of each pair is captured at first touch and released at
separation by ``ApproachSpeeds``, updated only at accepted steps.

A pair may carry a friction law (``friction=``, flexmb/contact/friction.py): the tangential force
``-mu(|v_t|) F v_t/|v_t|`` at the contact point, with exact blocks (theory-contact.md §5).
"""
from __future__ import annotations


import numpy as np

from ..bodies.base import Body, attach, check_body_pair
from ..checks import scalar
from ..errors import ModelError, NonFiniteError
from ..forces.base import ForceElement
from ..forces.springs import ScalarSpringGroup, SpringPrimitive
from ..groups import ElementGroup, EvalState
from ..joints.base import point3, unit
from ..compiled import lazy_module
from .duration import effective_mass, lever, pair_mass, shortest_duration
from .friction import FrictionLaw, FrictionTable
from .laws import ApproachSpeeds, ContactLaw, LawTable

cf = lazy_module("flexmb.compiled.contact")   # numba loads with the first evaluation, not at import
cm = lazy_module("flexmb.compiled.measures")

__all__ = ["SpherePlaneContact", "SphereSphereContact", "ClearanceJoint", "ContactGroup", "CONTACT_TYPES",
           "build_groups"]


def _radius(value, what: str, owner: str) -> float:
    return scalar(value, what, owner, sign="positive", unit=" m")


class _Contact(ForceElement):
    geometry = ""           # "sphere-plane" | "sphere-sphere" | "clearance"
    measure_kind = ""       # ScalarSpringGroup measure whose vectors the pair uses
    sign = 1.0

    def __init__(self, body_a: Body, body_b: Body, law: ContactLaw, name, friction=None):
        super().__init__(name)
        if body_a is body_b or getattr(body_a, "body", body_a) is getattr(body_b, "body", body_b):
            raise ModelError(f"{self.owner}: a contact between body "
                             f"{getattr(body_a, 'name', body_a)!r} and itself")
        check_body_pair(self.owner, body_a, body_b)
        if not isinstance(law, ContactLaw):
            raise ModelError(f"{self.owner}: law must be a contact law (flexmb.contact.LankaraniNikravesh, ...), "
                             f"got {law!r}")
        for attr, sign in (("K", "non-negative"), ("n", "positive")):   # the elastic part K delta^n: stored energy,
            scalar(getattr(law, attr, None),                              # default h_contact (K = 0: none, Impulsive)
                   f"the contact law {type(law).__name__}'s {attr} (elastic part K delta^n)", self.owner, sign=sign)
        if friction is not None and not isinstance(friction, FrictionLaw):
            raise ModelError(f"{self.owner}: friction must be a friction law (flexmb.contact.CoulombRamp, "
                             f"flexmb.contact.BrownMcPhee) or None, got {friction!r}")
        self.site_a, self.site_b = body_a, body_b
        self.body_a, self.body_b = body_a.body, body_b.body
        self.law = law
        self.friction = friction

    @property
    def bodies(self):
        """The two bodies ``(body_a, body_b)`` of the pair (the bodies of their sites)."""
        return (self.body_a, self.body_b)

    def force_points(self) -> tuple[np.ndarray, np.ndarray]:
        """A point (m, global at the start) on the normal force's line of action on each body ``(a, b)``."""
        raise NotImplementedError

    def effective_mass(self) -> float:
        """Effective mass of the pair (kg) for its contact duration (flexmb/contact/duration.py)."""
        p_a, p_b = self.force_points()
        return float(pair_mass(effective_mass(self.body_a, lever(self.body_a, p_a)),
                               effective_mass(self.body_b, lever(self.body_b, p_b))))


class SpherePlaneContact(_Contact):
    """A sphere (radius ``radius``, m; centre ``center``, m, global at the start) on ``body_b`` against the
    plane through ``point`` (m, global at the start) with outward unit ``normal`` fixed in ``body_a`` (or the
    ground); either body may be a site of a flexible body. Measure ``x = n . (c - P)``, penetration
    ``delta = R - x`` (docs/theory-contact.md §4).

    ``friction``: optional friction law; the tangential force acts at the point of the sphere nearest the
    plane, ``c - R n``."""

    kind = "sphere-plane contact"
    geometry = "sphere-plane"
    measure_kind = "axial"

    def __init__(self, body_a: Body, body_b: Body, *, point, normal, center, radius: float, law: ContactLaw,
                 name: str | None = None, friction: FrictionLaw | None = None):
        super().__init__(body_a, body_b, law, name, friction)
        self.point = point3(point, "point", self.owner)
        self.normal = unit(normal, "normal", self.owner)
        self.center = point3(center, "center", self.owner)
        self.radius = _radius(radius, "radius", self.owner)

    @property
    def offset(self) -> float:
        """The measure's offset ``x_0``: the sphere radius (m)."""
        return self.radius

    def force_points(self) -> tuple[np.ndarray, np.ndarray]:
        """The sphere centre, on the line of action (along the plane normal) for both bodies (m)."""
        return self.center, self.center

    def primitive(self) -> SpringPrimitive:
        """The ``axial`` measure primitive: height ``n . (c - P)`` (m) of the centre above the plane."""
        v, S = attach(self.site_a, self.site_b, {"a_i": ("vector", self.normal), "u_i": ("point", self.point),
                                                 "u_j": ("point", self.center)})
        return SpringPrimitive("axial", self.body_a, self.body_b, v, 0.0, 0.0, self.radius, self.owner, S)


class SphereSphereContact(_Contact):
    """Two spheres: centre ``center_a`` (m, global at the start; radius ``radius_a``, m) on ``body_a``,
    ``center_b`` (radius ``radius_b``) on ``body_b``. Measure ``x = |c_b - c_a|``, penetration
    ``delta = R_a + R_b - x`` (docs/theory-contact.md §4).

    ``friction``: optional friction law; the tangential force acts on the line of centres, in the middle of
    the overlap (``c_a + (R_a - delta/2) u``, u the unit vector from c_a to c_b)."""

    kind = "sphere-sphere contact"
    geometry = "sphere-sphere"
    measure_kind = "length"

    def __init__(self, body_a: Body, body_b: Body, *, center_a, center_b, radius_a: float, radius_b: float,
                 law: ContactLaw, name: str | None = None, friction: FrictionLaw | None = None):
        super().__init__(body_a, body_b, law, name, friction)
        self.center_a = point3(center_a, "center_a", self.owner)
        self.center_b = point3(center_b, "center_b", self.owner)
        self.radius_a = _radius(radius_a, "radius_a", self.owner)
        self.radius_b = _radius(radius_b, "radius_b", self.owner)
        self.radius = self.radius_a + self.radius_b
        if np.linalg.norm(self.center_b - self.center_a) < 1e-12:
            raise ModelError(f"{self.owner}: the sphere centres coincide at {self.center_a.tolist()}; the contact "
                             "normal is undefined")

    @property
    def offset(self) -> float:
        """The measure's offset ``x_0``: the sum of the radii (m)."""
        return self.radius

    def force_points(self) -> tuple[np.ndarray, np.ndarray]:
        """The two centres, on the line of centres (m)."""
        return self.center_a, self.center_b

    def primitive(self) -> SpringPrimitive:
        """The ``length`` measure primitive: distance ``|c_b - c_a|`` (m) of the centres."""
        v, S = attach(self.site_a, self.site_b, {"u_i": ("point", self.center_a), "u_j": ("point", self.center_b)})
        return SpringPrimitive("length", self.body_a, self.body_b, v, 0.0, 0.0, self.radius, self.owner, S)


class ClearanceJoint(_Contact):
    """A revolute joint with radial clearance: a pin (journal) of ``radius_pin`` on ``body_b`` in a hole
    (bearing) of radius ``radius_pin + clearance`` on ``body_a``, both centred on ``point`` (global, at the
    start) with the hole's axis ``axis`` (fixed in ``body_a``).

    No constraint rows: it replaces the ideal revolute joint. The pin centre's eccentricity ``e`` (its offset
    from the hole centre, projected on the plane normal to the axis) is free while ``|e| < clearance``; beyond,
    the contact ``law`` pushes it back along ``e`` with the penetration ``delta = |e| - clearance``
    (Flores, Ambrosio, Claro & Lankarani, e.g. *Mech. Mach. Theory* 41:247-261, 2006). The axial position is
    not constrained (the joint is a planar/cylindrical journal; other joints or contacts hold the axial motion).

    Args:
        body_a, body_b: the bodies (or sites) carrying the hole and the pin; the rest is keyword-only.
        point: hole centre on the axis (m, global at the start).
        axis: hole axis (global at the start, fixed in ``body_hole``).
        clearance: radial clearance ``c = R_hole - R_pin`` (m, > 0).
        radius_pin: pin radius (m); sets the contact point ``pin centre + R_pin u`` of the friction force.
        law: normal contact law (e.g. LankaraniNikravesh with ``hertz.cylinder_line`` or the Hertz stiffness
            of ``hertz.sphere_sphere(R_pin, -R_hole, E*)`` as in Flores et al.).
        friction: optional friction law (tangential slip at the contact point, rolling terms included).
        pin_center: the pin centre at the start (m, global; default ``point``, i.e. centred).
    """

    kind = "clearance joint"
    geometry = "clearance"
    measure_kind = "axial"
    sign = -1.0

    def __init__(self, body_a: Body, body_b: Body, *, point, axis, clearance: float, radius_pin: float,
                 law: ContactLaw, friction: FrictionLaw | None = None, name: str | None = None, pin_center=None):
        super().__init__(body_a, body_b, law, name, friction)
        self.point = point3(point, "point", self.owner)
        self.axis = unit(axis, "axis", self.owner)
        self.clearance = _radius(clearance, "clearance", self.owner)
        self.radius_pin = _radius(radius_pin, "radius_pin", self.owner)
        self.pin_center = self.point.copy() if pin_center is None else point3(pin_center, "pin_center", self.owner)

    @property
    def offset(self) -> float:
        """The measure's offset ``x_0``: the radial clearance (m)."""
        return self.clearance

    def force_points(self) -> tuple[np.ndarray, np.ndarray]:
        """The hole centre and the pin centre, on the line of action along the eccentricity (m)."""
        return self.point, self.pin_center

    @property
    def radius_hole(self) -> float:
        """Hole (bearing) radius ``R_pin + clearance`` (m)."""
        return self.radius_pin + self.clearance

    def primitive(self) -> SpringPrimitive:
        """The ``axial`` measure primitive: eccentricity of the pin centre from the hole axis (m)."""
        v, S = attach(self.site_a, self.site_b, {"a_i": ("vector", self.axis), "u_i": ("point", self.point),
                                                 "u_j": ("point", self.pin_center)})
        return SpringPrimitive("axial", self.body_a, self.body_b, v, 0.0, 0.0, self.clearance, self.owner, S)


CONTACT_TYPES = (SpherePlaneContact, SphereSphereContact, ClearanceJoint)
"""Every force element that ``ContactGroup`` evaluates (the assembly collects these)."""


class ContactGroup(ElementGroup):
    """All contact pairs of one geometry kind (and one pair of modal counts): measures, built-in laws and
    the normal force with its blocks in one compiled call (``contact_kernel``); user laws are called from
    Python once per law object for all its pairs (``LawTable.user_forces``; on the compiled step through the
    hook of flexmb/compiled/hook.py, the same call); friction of the pairs in contact that carry a friction law
    in two more compiled calls (``friction_kernel``) around the friction laws. The blocks keep their full
    structure (zero while a pair is apart).
    """

    family = "contacts"
    probe_structure = False
    compiled_part = "contacts"
    compiled_words = "contact pairs"

    @property
    def on_compiled_step(self) -> bool:
        """Any normal laws (user laws through the hook of flexmb/compiled/hook.py); friction of built-in laws."""
        return bool(np.all(self.frictions.kind <= 2))

    @classmethod
    def pack_compiled(cls, groups: list) -> tuple:
        """The contact pairs' part of the compiled model (flexmb/compiled/model.py ``Contacts``); their
        approach-speed history is not in it (the step's separate ``dyn`` argument)."""
        from ..compiled.model import Contacts, concat, pack_measures
        table, gather, scatter, vec, shape, sides, pos = pack_measures([(g, g.measure, p) for g, p in groups])
        laws = [g.laws for g, _ in groups]
        fric = [g.frictions for g, _ in groups]
        return Contacts(table, gather, scatter, vec, shape, sides, np.array([g.sign for g, _ in groups], dtype=float),
                        concat([g.offset for g, _ in groups], float), concat([w.kind for w in laws], np.int64),
                        *(concat([getattr(w, a) for w in laws], float) for a in ("K", "n", "h", "v_min", "c")), pos,
                        np.array([bool(g.has_friction.any()) for g, _ in groups], dtype=bool),
                        np.array([g.geo for g, _ in groups], dtype=np.int64),
                        concat([g.rad for g, _ in groups], float).reshape(-1, 2),
                        concat([f.kind for f in fric], np.int64), concat([f.p for f in fric], float).reshape(-1, 3))

    def __init__(self, contacts: list, nq: int):
        self.contacts = contacts
        self.n = len(contacts)
        self.labels = [c.owner for c in contacts]
        self._memo = None                      # (st, state) of the last state_at
        first = contacts[0]
        self.geometry = first.geometry
        if any(c.geometry != self.geometry for c in contacts):
            raise ModelError("ContactGroup: all pairs of a group must be of one geometry kind")
        self.measure = ScalarSpringGroup(first.measure_kind, [c.primitive() for c in contacts], nq)
        self.code = cm.MEASURES["clearance" if self.geometry == "clearance" else first.measure_kind]
        self._ref = np.zeros(self.n)
        nx = self.measure.gather.shape[1]
        self._J, self._H0 = np.empty((self.n, nx)), np.empty((0, nx, nx))     # scratch of value-only calls
        self._blk0 = np.empty((1, nx, nx))                                      # no blocks wanted
        self.gather = self.measure.gather
        self.scatter = self.measure.scatter
        self.sign = float(first.sign)
        self.offset = np.array([c.offset for c in contacts])
        # friction geometry (friction_kernel): kind and radii (sphere R; R_a, R_b; pin radius) per pair
        self.geo = {"sphere-plane": cf.SPHERE_PLANE, "sphere-sphere": cf.SPHERE_SPHERE,
                    "clearance": cf.CLEARANCE_JOINT}[self.geometry]
        self.rad = np.array([(c.radius, 0.0) if self.geometry == "sphere-plane" else
                             (c.radius_a, c.radius_b) if self.geometry == "sphere-sphere" else (c.radius_pin, 0.0)
                             for c in contacts], dtype=float).reshape(self.n, 2)
        self.laws = LawTable([c.law for c in contacts], self.labels)
        self._user_laws = bool(np.any(self.laws.kind == cf.USER))
        self.has_friction = np.array([c.friction is not None for c in contacts])
        self.frictions = FrictionTable([c.friction for c in contacts])
        self.approach = ApproachSpeeds(self.n)
        self.mass = np.array([c.effective_mass() for c in contacts])   # kg, for contact_duration

    def _values(self, qe, ve):
        """Measures ``x`` (m) and rates (n,) of all pairs (one compiled call)."""
        m = self.measure
        x, xd = np.empty(self.n), np.empty(self.n)
        self._check(cm.measure_kernel(self.code, qe, ve, self.gather, m.vecs, m.shps, m.sides, *m.n_modes, self._ref,
                                      False, x, xd, self._J, self._H0), x)
        return x, xd

    def _check(self, bad: int, x: np.ndarray) -> None:
        if bad >= 0:
            raise NonFiniteError(f"{self.contacts[bad].owner}: the sphere centres coincide (distance "
                                 f"{x[bad]:.3g} m); the contact normal is undefined")

    def measure_gradient(self, qe, ve) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Measures ``x`` (m), their rates (m/s) and gradients ``dx/dqe`` (n, nx) in the gathered coordinates
        ``gather`` of every pair (the impact equations, flexmb/contact/impulsive.py)."""
        x, xd = self._values(qe, ve)
        return x, xd, self._J.copy()

    def state(self, qe, ve):
        """Measures ``x`` (m), penetrations delta (m) and their rates (m/s) (n,)."""
        x, xd = self._values(qe, ve)
        return x, self.sign * (self.offset - x), -self.sign * xd

    def state_at(self, st: EvalState):
        """:meth:`state` at ``st``, evaluated once per state object (power, then accept at a step's end)."""
        if self._memo is None or self._memo[0] is not st:
            self._memo = (st, self.state(st.qe, st.ve))
        return self._memo[1]

    def forces(self, delta, delta_dot):
        """Normal forces ``F`` (N) and their derivatives ``dF/d delta`` (N/m), ``dF/d delta_dot`` (N s/m) of the
        pairs' laws at penetrations ``delta`` (m) and rates (m/s), with the trial approach speeds (§1)."""
        return self.laws.force(delta, delta_dot, self.approach.trial(delta, delta_dot))

    def _friction(self, qe, ve, F, dF, dFd, J, Hv, coef, r, blk) -> float:
        """Friction of the pairs in contact that carry a friction law (docs/theory-contact.md §5): subtracts
        ``Q`` from ``r`` and, with ``coef``, ``cK dQ/dq + cC dQ/dq_dot`` from ``blk``; returns the friction
        power (W). Two compiled calls around the friction laws (``FrictionTable.coefficient``: user laws
        stay Python): the slip speeds, then the forces and blocks."""
        idx = np.flatnonzero(self.has_friction & (F > 0.0))
        if idx.size == 0:
            return 0.0
        m = self.measure
        want = coef is not None
        cC, cK = (float(coef[1]), float(coef[2])) if want else (0.0, 0.0)
        args = (self.geo, self.sign, qe, ve, self.gather, idx, m.vecs, m.shps, *m.n_modes, self.rad, F, dF, dFd, J, Hv)
        sp = np.empty(idx.size)
        none = np.zeros(0)
        cf.friction_kernel(False, *args, none, none, none, 0.0, 0.0, False, sp, r, blk)
        mu, dmu, mu_s = (np.ascontiguousarray(a, dtype=float) for a in self.frictions.coefficient(sp, idx))
        return cf.friction_kernel(True, *args, mu, dmu, mu_s, cK, cC, want, sp, r, blk)

    def _normal(self, qe, ve, coef):
        """One compiled call (``contact_kernel``): measures, normal forces of the laws, residual
        ``-sign F grad x`` and, with ``coef``, the blocks ``cK K + cC C`` (docs/theory-contact.md §4)."""
        m, L, ap = self.measure, self.laws, self.approach
        n, nx = self.gather.shape
        want = coef is not None
        cC, cK = (float(coef[1]), float(coef[2])) if want else (0.0, 0.0)
        x, xd, F, dF, dFd = (np.empty(n) for _ in range(5))
        J, Hv, r = np.empty((n, nx)), np.empty((n, nx)), np.empty((n, nx))
        blk = np.empty((n, nx, nx)) if want else np.empty((1, nx, nx))
        given = self._user_laws
        if given:              # user laws: their forces from Python at the penetrations of this state
            x0, xd0 = self._values(qe, ve)
            F, dF, dFd = self.forces(self.sign * (self.offset - x0), -self.sign * xd0)
        self._check(cf.contact_kernel(self.code, qe, ve, self.gather, m.vecs, m.shps, m.sides, *m.n_modes, self.sign,
                                      self.offset, L.kind, L.K, L.n, L.h, L.v_min, L.c, ap.speed, ap.in_contact,
                                      ap.last_rate, given, cC, cK, want, x, xd, F, dF, dFd, J, Hv, r, blk), x)
        return x, xd, F, dF, dFd, J, Hv, r, (blk if want else None)

    def residual(self, st: EvalState, coef=None):
        """Residual contribution ``-Q = -sign F grad x`` of all pairs (plus friction) and, with ``coef``, the exact
        Newton blocks ``K``, ``C`` of docs/theory-contact.md §4-§5."""
        qe, ve = st.qe, st.ve
        x, xd, F, dF, dFd, J, Hv, r, blocks = self._normal(qe, ve, coef)
        if self.has_friction.any():
            self._friction(qe, ve, F, dF, dFd, J, Hv, coef, r, blocks if blocks is not None else self._blk0)
        return r, blocks

    def accept(self, st: EvalState) -> None:
        """Capture approach speeds at touch, release at separation (accepted states only)."""
        _, delta, delta_dot = self.state_at(st)
        self.approach.accept(delta, delta_dot)      # the state does not depend on it: the memo stays valid

    def start(self, st: EvalState) -> None:
        """Clean history at the start of a run: pairs penetrating at ``st`` capture their
        approach speed there, the others are apart (ApproachSpeeds.start)."""
        _, delta, delta_dot = self.state(st.qe, st.ve)
        self.approach = ApproachSpeeds(self.n)
        self.approach.start(delta, delta_dot)
        self._memo = None

    def history(self) -> np.ndarray:
        """The approach-speed state of every pair (4 values per pair, ApproachSpeeds.history)."""
        return self.approach.history()

    def set_history(self, x: np.ndarray) -> None:
        """Restore a vector from :meth:`history`."""
        if np.size(x) != 4 * self.n:
            raise ModelError(f"{self.geometry} contact group: a history vector of {np.size(x)} values for "
                             f"{4 * self.n} expected")
        self.approach.set_history(x)
        self._memo = None

    def potential(self, st: EvalState) -> float:
        """Elastic energy of the pairs (J)."""
        _, delta, _ = self.state_at(st)
        return float(np.sum(self.laws.elastic_energy(delta)))

    def power(self, st: EvalState) -> float:
        """Power of the contact damping and of friction (W, <= 0)."""
        return float(sum(self._powers(st.qe, st.ve, self.state_at(st))))

    def powers(self, qe, ve) -> tuple[float, float]:
        """``(damping power, friction power)`` of the group (W)."""
        return self._powers(qe, ve, self.state(qe, ve))

    def _powers(self, qe, ve, state) -> tuple[float, float]:
        x, delta, delta_dot = state
        dm = self.approach.trial(delta, delta_dot)
        damping = float(np.sum(self.laws.nonconservative_power(delta, delta_dot, dm)))
        friction = 0.0
        if self.has_friction.any():
            x, xd, F, dF, dFd, J, Hv, r, _ = self._normal(qe, ve, None)
            friction = self._friction(qe, ve, F, dF, dFd, J, Hv, None, r, self._blk0)
        return damping, friction

    def contact_duration(self, energy: float) -> float | None:
        """The shortest Hertz contact duration (s) of the pairs' laws ``K delta^n`` and effective masses for an
        impact of up to ``energy`` (J) (flexmb/contact/duration.py)."""
        return shortest_duration(self.laws.K, self.laws.n, self.mass, energy)

    def penetration(self, st: EvalState) -> np.ndarray:
        """Penetration ``delta`` (m) of every pair (negative: apart)."""
        return self.state_at(st)[1]

    def normal_forces(self, qe, ve) -> np.ndarray:
        """Normal contact force of each pair (N) at a state, with the current approach speeds."""
        _, delta, delta_dot = self.state(qe, ve)
        return self.forces(delta, delta_dot)[0]

    REPLAY_CHUNK = 20000
    """Most (saved state, pair) instances of :meth:`replay_forces` evaluated in one call (bounds its memory)."""

    def replay_forces(self, q: np.ndarray, v: np.ndarray, history: np.ndarray) -> np.ndarray:
        """Normal force (N) of every pair at saved states, each under the approach-speed history saved with it:
        ``q``, ``v`` (nt, nq) coordinates and rates, ``history`` (nt, 4 n) in the layout of :meth:`history`;
        returns (nt, n), the values of :meth:`normal_forces` after :meth:`set_history` row by row (the laws of
        docs/theory-contact.md §1 with the approach speed of §1.3), in a few compiled calls: each (state, pair)
        is one instance of the measure kernel, its coordinates gathered from the stacked states."""
        q, v, history = (np.ascontiguousarray(a, dtype=float) for a in (q, v, history))
        nt, nq = q.shape
        n, nx = self.gather.shape
        if history.shape != (nt, 4 * n):
            raise ModelError(f"{self.geometry} contact group: replay_forces needs a history of shape {(nt, 4 * n)}, "
                             f"got {history.shape}")
        out = np.empty((nt, n))
        rows = max(1, self.REPLAY_CHUNK // n)
        for r0 in range(0, nt, rows):
            out[r0:r0 + rows] = self._replay_chunk(q[r0:r0 + rows], v[r0:r0 + rows], history[r0:r0 + rows])
        return out

    def _replay_chunk(self, q, v, history) -> np.ndarray:
        nt, nq = q.shape
        n, nx = self.gather.shape
        m, ne = self.measure, nq + 7
        qe, ve = np.zeros((nt, ne)), np.zeros((nt, ne))
        qe[:, :nq], ve[:, :nq] = q, v
        qe[:, nq + 3] = 1.0                                        # the ground's Euler parameters (1, 0, 0, 0)
        gather = (self.gather[None] + ne * np.arange(nt)[:, None, None]).reshape(nt * n, nx)
        vecs = np.ascontiguousarray(np.broadcast_to(m.vecs, (nt, *m.vecs.shape))).reshape(nt * n, 4, 3)
        shps = np.ascontiguousarray(np.broadcast_to(m.shps, (nt, *m.shps.shape))).reshape(nt * n, *m.shps.shape[1:])
        x, xd = np.empty(nt * n), np.empty(nt * n)
        bad = cm.measure_kernel(self.code, qe.reshape(-1), ve.reshape(-1), gather, vecs, shps, m.sides, *m.n_modes,
                                np.zeros(nt * n), False, x, xd, np.empty((nt * n, nx)), self._H0)
        if bad >= 0:
            self._check(bad % n, x.reshape(nt, n)[bad // n])
        delta = self.sign * (np.tile(self.offset, nt) - x)
        rate = -self.sign * xd
        speed, touch, known, last = (np.ascontiguousarray(history[:, k * n:(k + 1) * n]).reshape(-1) for k in range(4))
        last_rate = np.where(known != 0.0, last, np.nan)
        vm = np.empty(nt * n)
        cf.approach_trial(delta, rate, np.arange(nt * n), speed, touch != 0.0, last_rate, vm)
        return self.laws.force(delta, rate, vm, np.tile(np.arange(n), nt))[0].reshape(nt, n)


def build_groups(forces, nq: int, st: EvalState) -> list[ContactGroup]:
    """The pair-contact groups of a model (flexmb/groups.py ``FAMILY_MODULES``): one per contact type and pair
    of modal counts."""
    contacts = [f for f in forces if isinstance(f, CONTACT_TYPES)]
    keys = sorted({(type(c).__name__, c.body_a.n_modes, c.body_b.n_modes) for c in contacts})
    return [ContactGroup([c for c in contacts if (type(c).__name__, c.body_a.n_modes, c.body_b.n_modes) == k], nq)
            for k in keys]
