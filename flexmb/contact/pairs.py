"""Contact pairs between bodies: sphere-plane and sphere-sphere (docs/theory-contact.md §4).

Each pair measures a scalar ``x(q)`` with the kinematic expressions of flexmb/kinematics.py and
has the penetration ``delta = offset - x``:

* sphere-plane: ``x = n . (c - P)``, the height of the sphere centre c above the plane (point P,
  unit normal n, both fixed in the plane's body), ``offset = R``;
* sphere-sphere: ``x = |c_b - c_a|``, ``offset = R_a + R_b``.

The normal force ``F(delta, delta_dot, delta_dot_minus) >= 0`` of the pair's law pushes the bodies
apart along ``grad x``: generalized force ``Q = F grad x``. With ``delta_dot = -x_dot`` the Newton
blocks are exact: ``K = (F_delta grad x + F_deltadot (H v)) grad x^T - F H``,
``C = F_deltadot grad x grad x^T`` (H the Hessian of x). The approach speed ``delta_dot_minus`` of
each pair is captured at first touch and released at separation by ``ApproachSpeeds``, updated only
at accepted steps.
"""
from __future__ import annotations

import math

import numpy as np

from ..bodies.base import Body, attach, check_body_pair
from ..errors import ModelError
from ..forces.base import ForceElement
from ..forces.springs import ScalarSpringGroup, SpringPrimitive
from ..joints.base import point3, unit
from .laws import ApproachSpeeds, ContactLaw

__all__ = ["SpherePlaneContact", "SphereSphereContact", "ContactGroup"]


def _radius(value, what: str, owner: str) -> float:
    try:
        r = float(value)
    except (TypeError, ValueError):
        raise ModelError(f"{owner}: {what} must be a number, got {value!r}") from None
    if not math.isfinite(r) or r <= 0.0:
        raise ModelError(f"{owner}: {what} must be positive and finite, got {r} m")
    return r


class _Contact(ForceElement):
    def __init__(self, body_a: Body, body_b: Body, law: ContactLaw, name):
        super().__init__(name)
        if body_a is body_b or getattr(body_a, "body", body_a) is getattr(body_b, "body", body_b):
            raise ModelError(f"{self.owner}: a contact between body "
                             f"{getattr(body_a, 'name', body_a)!r} and itself")
        check_body_pair(self.owner, body_a, body_b)
        if not isinstance(law, ContactLaw):
            raise ModelError(f"{self.owner}: law must be a contact law (flexmb.contact.LankaraniNikravesh, ...), "
                             f"got {law!r}")
        self.site_a, self.site_b = body_a, body_b
        self.body_a, self.body_b = body_a.body, body_b.body
        self.law = law

    @property
    def bodies(self):
        return (self.body_a, self.body_b)


class SpherePlaneContact(_Contact):
    """A sphere (radius ``radius``, centre ``center`` global at the start) on body ``sphere`` against
    the plane through ``point`` with outward unit ``normal`` fixed in body ``plane`` (or the ground)."""

    kind = "sphere-plane contact"

    def __init__(self, plane: Body, sphere: Body, point, normal, center, radius: float, law: ContactLaw,
                 name: str | None = None):
        super().__init__(plane, sphere, law, name)
        self.point = point3(point, "point", self.owner)
        self.normal = unit(normal, "normal", self.owner)
        self.center = point3(center, "center", self.owner)
        self.radius = _radius(radius, "radius", self.owner)

    def primitive(self) -> SpringPrimitive:
        v, S = attach(self.site_a, self.site_b, {"a_i": ("vector", self.normal), "u_i": ("point", self.point),
                                                 "u_j": ("point", self.center)})
        return SpringPrimitive("axial", self.body_a, self.body_b, v, 0.0, 0.0, self.radius, self.owner, S)


class SphereSphereContact(_Contact):
    """Two spheres: centre ``center_a`` (radius ``radius_a``) on body ``a``, ``center_b`` on ``b``."""

    kind = "sphere-sphere contact"

    def __init__(self, a: Body, b: Body, center_a, center_b, radius_a: float, radius_b: float, law: ContactLaw,
                 name: str | None = None):
        super().__init__(a, b, law, name)
        self.center_a = point3(center_a, "center_a", self.owner)
        self.center_b = point3(center_b, "center_b", self.owner)
        self.radius = _radius(radius_a, "radius_a", self.owner) + _radius(radius_b, "radius_b", self.owner)
        if np.linalg.norm(self.center_b - self.center_a) < 1e-12:
            raise ModelError(f"{self.owner}: the sphere centres coincide; the contact normal is undefined")

    def primitive(self) -> SpringPrimitive:
        v, S = attach(self.site_a, self.site_b, {"u_i": ("point", self.center_a), "u_j": ("point", self.center_b)})
        return SpringPrimitive("length", self.body_a, self.body_b, v, 0.0, 0.0, self.radius, self.owner, S)


class ContactGroup:
    """All contact pairs of one geometry kind and one law class, one vectorized call.

    Laws of one class but different parameters are evaluated per distinct law object (a short loop
    over laws, not over pairs).
    """

    def __init__(self, contacts: list, nq: int):
        self.contacts = contacts
        self.n = len(contacts)
        measure = "axial" if isinstance(contacts[0], SpherePlaneContact) else "length"
        self.measure = ScalarSpringGroup(measure, [c.primitive() for c in contacts], nq)
        self.scatter = self.measure.scatter
        self.offset = np.array([c.radius for c in contacts])
        laws = {}
        for k, c in enumerate(contacts):
            laws.setdefault(id(c.law), (c.law, []))[1].append(k)
        self.laws = [(law, np.array(idx)) for law, idx in laws.values()]
        self.approach = ApproachSpeeds(self.n)

    def state(self, qe, ve):
        """Measure expression, penetration delta and its rate (n,)."""
        x = self.measure.measure_expr(qe, ve)
        xd = x.rate(ve[self.measure.gather])
        return x, self.offset - x.val, -xd

    def forces(self, delta, delta_dot):
        dm = self.approach.trial(delta, delta_dot)
        F, dF, dFd = np.zeros(self.n), np.zeros(self.n), np.zeros(self.n)
        for law, idx in self.laws:
            F[idx], dF[idx], dFd[idx] = law.force(delta[idx], delta_dot[idx], dm[idx])
        return F, dF, dFd

    def residual(self, qe, ve, t, coef=None):
        x, delta, delta_dot = self.state(qe, ve)
        F, dF, dFd = self.forces(delta, delta_dot)
        r = -F[:, None] * x.jac
        if coef is None:
            return self.scatter, r, None
        cM, cC, cK = coef
        nx = x.jac.shape[1]
        blocks = np.zeros((self.n, nx, nx))
        active = F != 0.0
        if cK and active.any():
            H = x.hess(np.ones(self.n))
            Hv = np.einsum("nxy,ny->nx", H, ve[self.measure.gather])
            g = dF[:, None] * x.jac + dFd[:, None] * Hv
            blocks += cK * (x.jac[:, :, None] * g[:, None, :] - F[:, None, None] * H)
        if cC:
            blocks += cC * dFd[:, None, None] * x.jac[:, :, None] * x.jac[:, None, :]
        return self.scatter, r, blocks

    def accept(self, qe, ve) -> None:
        """Capture approach speeds at touch, release at separation (accepted states only)."""
        _, delta, delta_dot = self.state(qe, ve)
        self.approach.accept(delta, delta_dot)

    def start(self, qe, ve) -> None:
        _, delta, delta_dot = self.state(qe, ve)
        self.approach.start(delta, delta_dot)

    def potential(self, qe, ve) -> float:
        """Elastic energy of the pairs (J)."""
        _, delta, _ = self.state(qe, ve)
        return float(sum(np.sum(law.elastic_energy(delta[idx])) for law, idx in self.laws))

    def power(self, qe, ve) -> float:
        """Power of the contact damping (W, <= 0)."""
        _, delta, delta_dot = self.state(qe, ve)
        dm = self.approach.trial(delta, delta_dot)
        return float(sum(np.sum(law.nonconservative_power(delta[idx], delta_dot[idx], dm[idx]))
                         for law, idx in self.laws))

    def penetration(self, qe, ve) -> np.ndarray:
        return self.state(qe, ve)[1]
