"""Contact pairs between bodies: sphere-plane, sphere-sphere and the revolute clearance joint
(docs/theory-contact.md §4-§6).

Each pair measures a scalar ``x(q)`` with the kinematic expressions of flexmb/kinematics.py and has the
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

from .. import kinematics as kin
from ..bodies.base import Body, attach, check_body_pair
from ..checks import scalar
from ..errors import ModelError, NonFiniteError
from ..forces.base import ForceElement
from ..forces.springs import ScalarSpringGroup, SpringPrimitive
from ..joints.base import point3, unit
from ..kinematics import PairState
from .friction import FrictionFrame, FrictionLaw, FrictionTable, tangential_terms
from .laws import ApproachSpeeds, ContactLaw, LawTable

__all__ = ["SpherePlaneContact", "SphereSphereContact", "ClearanceJoint", "ContactGroup", "CONTACT_TYPES"]


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


# ---- scalar helpers (exact derivatives, like flexmb/kinematics.py) ----------------------------------------------

def _product(a: kin.Scalar, b: kin.Scalar, xd: np.ndarray) -> kin.Scalar:
    """``a b`` of two scalar expressions."""
    ad, bd = a.rate(xd), b.rate(xd)

    def hess(w):
        cross = a.jac[:, :, None] * b.jac[:, None, :]
        return a.hess(w * b.val) + b.hess(w * a.val) + w[:, None, None] * (cross + cross.transpose(0, 2, 1))

    return kin.Scalar(a.val * b.val, a.jac * b.val[:, None] + a.val[:, None] * b.jac,
                      a.quad * b.val + a.val * b.quad + 2.0 * ad * bd, hess)


def _sqrt(a: kin.Scalar, xd: np.ndarray, floor: float = 1e-30) -> kin.Scalar:
    """``sqrt(a)``; where ``a <= floor`` the value is ``sqrt(max(a, 0))`` and the derivatives are set to 0
    (the clearance measure at a centred pin, where the contact is apart and unused)."""
    ok = a.val > floor
    val = np.sqrt(np.maximum(a.val, 0.0))
    safe = np.where(ok, val, 1.0)
    f1 = np.where(ok, 0.5 / safe, 0.0)
    f2 = np.where(ok, -0.25 / safe ** 3, 0.0)
    ad = a.rate(xd)

    def hess(w):
        return a.hess(w * f1) + (w * f2)[:, None, None] * a.jac[:, :, None] * a.jac[:, None, :]

    return kin.Scalar(val, f1[:, None] * a.jac, f1 * a.quad + f2 * ad * ad, hess)


def _translation(n: int, nx: int, sign_a: float, sign_b: float) -> np.ndarray:
    """Gradient (n, 3, nx) of ``sign_a r_a + sign_b r_b``."""
    out = np.zeros((n, 3, nx))
    out[:, :, 0:3] = sign_a * np.eye(3)
    out[:, :, 7:10] = sign_b * np.eye(3)
    return out


def _unit_of(val: np.ndarray, jac: np.ndarray, length: np.ndarray):
    """Unit vector ``w / |w|`` and its gradient from ``w`` (n, 3), its gradient (n, 3, nx) and ``|w|``."""
    u = val / length[:, None]
    P = np.eye(3) - u[:, :, None] * u[:, None, :]
    return u, np.einsum("nij,njx->nix", P, jac) / length[:, None, None]


class ContactGroup:
    """All contact pairs of one geometry kind (and one pair of modal counts), one vectorized call.

    Laws of one class but different parameters are evaluated per distinct law object (a short loop
    over laws, not over pairs); likewise the friction laws.
    """

    def __init__(self, contacts: list, nq: int):
        self.contacts = contacts
        self.n = len(contacts)
        first = contacts[0]
        self.geometry = first.geometry
        if any(c.geometry != self.geometry for c in contacts):
            raise ModelError("ContactGroup: all pairs of a group must be of one geometry kind")
        self.measure = ScalarSpringGroup(first.measure_kind, [c.primitive() for c in contacts], nq)
        self.gather = self.measure.gather
        self.scatter = self.measure.scatter
        self.sign = float(first.sign)
        self.offset = np.array([c.offset for c in contacts])
        if self.geometry == "sphere-plane":
            self.radius = np.array([c.radius for c in contacts])
        elif self.geometry == "sphere-sphere":
            self.radius_a = np.array([c.radius_a for c in contacts])
            self.radius_b = np.array([c.radius_b for c in contacts])
        else:
            self.radius_pin = np.array([c.radius_pin for c in contacts])
        self.laws = LawTable([c.law for c in contacts])
        self.has_friction = np.array([c.friction is not None for c in contacts])
        self.frictions = FrictionTable([c.friction for c in contacts])
        self.approach = ApproachSpeeds(self.n)

    # -- geometry -------------------------------------------------------------------------------------
    def _pair_state(self, qe, ve) -> PairState:
        return PairState(qe[self.gather], ve[self.gather], *self.measure.n_modes)

    def _vectors(self, idx=None):
        v, S = self.measure.vec, self.measure.shape
        if idx is None:
            return v, S
        return ({k: a[idx] for k, a in v.items()}, {k: (None if a is None else a[idx]) for k, a in S.items()})

    def _measure(self, s: PairState) -> kin.Scalar:
        v, S = self._vectors()
        if self.geometry == "sphere-plane":
            return kin.dot(kin.body_vector(s, 0, v["a_i"], S["a_i"]),
                           kin.separation(s, v["u_i"], v["u_j"], S["u_i"], S["u_j"]), s.xd)
        d = kin.separation(s, v["u_i"], v["u_j"], S["u_i"], S["u_j"])
        if self.geometry == "sphere-sphere":
            l = np.linalg.norm(d.val, axis=1)
            if np.any(l < 1e-12):
                k = int(np.argmin(l))
                raise NonFiniteError(f"{self.contacts[k].owner}: the sphere centres coincide (distance "
                                     f"{l[k]:.3g} m); the contact normal is undefined")
            return kin.norm(d, s.xd)
        # clearance: |e|^2 = d.d - 2 (n.d)^2 + (n.d)^2 (n.n), e = d - (n.d) n
        n = kin.body_vector(s, 0, v["a_i"], S["a_i"])
        b = kin.dot(n, d, s.xd)
        b2 = _product(b, b, s.xd)
        e2 = kin.linear_combination([(1.0, kin.dot(d, d, s.xd)), (-2.0, b2),
                                     (1.0, _product(b2, kin.dot(n, n, s.xd), s.xd))])
        x = _sqrt(e2, s.xd)
        # the value from the vector e itself: d.d - (n.d)^2 cancels when the pin sits far along the axis
        x.val = np.linalg.norm(d.val - b.val[:, None] * n.val, axis=1)
        return x

    def _frame(self, s: PairState, idx: np.ndarray) -> FrictionFrame:
        """Contact normal, contact point arms and material shapes of the pairs ``idx`` (theory-contact.md §5.2)."""
        v, S = self._vectors(idx)
        n, nx = s.x.shape
        if self.geometry == "sphere-plane":
            nv = kin.body_vector(s, 0, v["a_i"], S["a_i"])
            ac = kin.body_vector(s, 1, v["u_j"], S["u_j"])
            R = self.radius[idx]
            yb, Yb = ac.val - R[:, None] * nv.val, ac.jac - R[:, None, None] * nv.jac
            u, U = nv.val, nv.jac
        elif self.geometry == "sphere-sphere":
            d = kin.separation(s, v["u_i"], v["u_j"], S["u_i"], S["u_j"])
            l = np.linalg.norm(d.val, axis=1)
            u, U = _unit_of(d.val, d.jac, l)
            ac = kin.body_vector(s, 0, v["u_i"], S["u_i"])
            w = 0.5 * (l + self.radius_a[idx] - self.radius_b[idx])          # |c_a X|: the middle of the overlap
            dw = 0.5 * np.einsum("nk,nkx->nx", u, d.jac)
            ya = ac.val + w[:, None] * u
            Ya = ac.jac + u[:, :, None] * dw[:, None, :] + w[:, None, None] * U
            yb, Yb = ya + s.r(0) - s.r(1), Ya + _translation(n, nx, 1.0, -1.0)
            return FrictionFrame(u, U, ya, Ya, yb, Yb, S["u_i"], S["u_j"])
        else:
            d = kin.separation(s, v["u_i"], v["u_j"], S["u_i"], S["u_j"])
            ax = kin.body_vector(s, 0, v["a_i"], S["a_i"])
            b = np.einsum("nk,nk->n", ax.val, d.val)
            e = d.val - b[:, None] * ax.val
            db = np.einsum("nk,nkx->nx", ax.val, d.jac) + np.einsum("nk,nkx->nx", d.val, ax.jac)
            E = d.jac - ax.val[:, :, None] * db[:, None, :] - b[:, None, None] * ax.jac
            u, U = _unit_of(e, E, np.linalg.norm(e, axis=1))
            ap = kin.body_vector(s, 1, v["u_j"], S["u_j"])
            r = self.radius_pin[idx]
            yb, Yb = ap.val + r[:, None] * u, ap.jac + r[:, None, None] * U
        ya, Ya = yb + s.r(1) - s.r(0), Yb + _translation(n, nx, -1.0, 1.0)
        return FrictionFrame(u, U, ya, Ya, yb, Yb, S["u_i"], S["u_j"])

    def state(self, qe, ve):
        """Measure expression, penetration delta and its rate (n,)."""
        s = self._pair_state(qe, ve)
        x = self._measure(s)
        return x, self.sign * (self.offset - x.val), -self.sign * x.rate(s.xd)

    def forces(self, delta, delta_dot):
        """Normal forces ``F`` (N) and their derivatives ``dF/d delta`` (N/m), ``dF/d delta_dot`` (N s/m) of the
        pairs' laws at penetrations ``delta`` (m) and rates (m/s), with the trial approach speeds (§1)."""
        return self.laws.force(delta, delta_dot, self.approach.trial(delta, delta_dot))

    def _friction(self, s, x, F, dF, dFd, Hv, blocks: bool):
        """Friction terms of the active pairs with friction: (idx, Q, power, dQ/dx, dQ/dxd) or None."""
        idx = np.flatnonzero(self.has_friction & (F > 0.0))
        if idx.size == 0:
            return None
        sub = PairState(s.x[idx], s.xd[idx], s.m_i, s.m_j)
        frame = self._frame(sub, idx)
        jac = x.jac[idx]
        dFn_dxd = -self.sign * dFd[idx, None] * jac
        dFn_dx = -self.sign * (dF[idx, None] * jac + dFd[idx, None] * Hv[idx]) if Hv is not None else None

        def coef(speed):
            return self.frictions.coefficient(speed, idx)

        Q, P, dQx, dQv = tangential_terms(sub, frame, F[idx], dFn_dx if dFn_dx is not None else np.zeros_like(jac),
                                          dFn_dxd, coef, blocks)
        return idx, Q, P, dQx, dQv

    def residual(self, qe, ve, t, coef=None):
        """Residual contribution ``-Q = -sign F grad x`` of all pairs (plus friction) and, with ``coef``, the exact
        Newton blocks ``K``, ``C`` of docs/theory-contact.md §4-§5."""
        s = self._pair_state(qe, ve)
        x = self._measure(s)
        xd = x.rate(s.xd)
        delta, delta_dot = self.sign * (self.offset - x.val), -self.sign * xd
        F, dF, dFd = self.forces(delta, delta_dot)
        r = -self.sign * F[:, None] * x.jac
        active = F != 0.0
        want = coef is not None
        Hv = H = None
        if want and coef[2] and active.any():
            H = x.hess(np.ones(self.n))
            Hv = np.einsum("nxy,ny->nx", H, s.xd)
        fr = self._friction(s, x, F, dF, dFd, Hv if Hv is not None else np.zeros_like(x.jac), want) \
            if self.has_friction.any() and active.any() else None
        if fr is not None:
            r[fr[0]] -= fr[1]
        if not want:
            return self.scatter, r, None
        cM, cC, cK = coef
        nx = x.jac.shape[1]
        blocks = np.zeros((self.n, nx, nx))
        if H is not None:
            g = dF[:, None] * x.jac + dFd[:, None] * Hv
            blocks += cK * (x.jac[:, :, None] * g[:, None, :] - self.sign * F[:, None, None] * H)
        if cC:
            blocks += cC * dFd[:, None, None] * x.jac[:, :, None] * x.jac[:, None, :]
        if fr is not None:
            idx, _, _, dQx, dQv = fr
            blocks[idx] -= cK * dQx + cC * dQv
        return self.scatter, r, blocks

    def accept(self, qe, ve) -> None:
        """Capture approach speeds at touch, release at separation (accepted states only)."""
        _, delta, delta_dot = self.state(qe, ve)
        self.approach.accept(delta, delta_dot)

    def start(self, qe, ve) -> None:
        """Clean history at the start of a run: pairs penetrating at ``(qe, ve)`` capture their
        approach speed there, the others are apart (ApproachSpeeds.start)."""
        _, delta, delta_dot = self.state(qe, ve)
        self.approach = ApproachSpeeds(self.n)
        self.approach.start(delta, delta_dot)

    def history(self) -> np.ndarray:
        """The approach-speed state of every pair (4 values per pair, ApproachSpeeds.history)."""
        return self.approach.history()

    def set_history(self, x: np.ndarray) -> None:
        """Restore a vector from :meth:`history`."""
        if np.size(x) != 4 * self.n:
            raise ModelError(f"{self.geometry} contact group: a history vector of {np.size(x)} values for "
                             f"{4 * self.n} expected")
        self.approach.set_history(x)

    def potential(self, qe, ve) -> float:
        """Elastic energy of the pairs (J)."""
        _, delta, _ = self.state(qe, ve)
        return float(np.sum(self.laws.elastic_energy(delta)))

    def power(self, qe, ve) -> float:
        """Power of the contact damping and of friction (W, <= 0)."""
        return float(sum(self.powers(qe, ve)))

    def powers(self, qe, ve) -> tuple[float, float]:
        """``(damping power, friction power)`` of the group (W)."""
        s = self._pair_state(qe, ve)
        x = self._measure(s)
        delta, delta_dot = self.sign * (self.offset - x.val), -self.sign * x.rate(s.xd)
        dm = self.approach.trial(delta, delta_dot)
        damping = float(np.sum(self.laws.nonconservative_power(delta, delta_dot, dm)))
        friction = 0.0
        if self.has_friction.any():
            F, dF, dFd = self.forces(delta, delta_dot)
            fr = self._friction(s, x, F, dF, dFd, None, False)
            if fr is not None:
                friction = float(np.sum(fr[2]))
        return damping, friction

    def penetration(self, qe, ve) -> np.ndarray:
        """Penetration ``delta`` (m) of every pair (negative: apart)."""
        return self.state(qe, ve)[1]

    def normal_forces(self, qe, ve) -> np.ndarray:
        """Normal contact force of each pair (N) at a state, with the current approach speeds."""
        _, delta, delta_dot = self.state(qe, ve)
        return self.forces(delta, delta_dot)[0]
