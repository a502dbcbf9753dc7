"""A new element family plugs in through flexmb/groups.py without any change to Assembly.

The family here is a linear spring-damper from a body's centre of mass to a fixed anchor, written only
against the protocol (ElementGroup + register_family). Checked: the residual and its Jacobians against
central differences, the small oscillation against the closed form x(t) = x0 cos(w t), the energy
balance (potential energy through the protocol, damper work through its power), and that the group's
history is started, accepted and saved like every stateful family's.
"""
import numpy as np
import pytest

import flexmb as fm
from flexmb.forces.base import ForceElement
from flexmb.groups import ElementGroup, register_family


class AnchorSpring(ForceElement):
    kind = "anchor spring"

    def __init__(self, body, anchor, k, c=0.0, name=None):
        super().__init__(name)
        self.body, self.anchor, self.k, self.c = body, np.asarray(anchor, float), float(k), float(c)

    @property
    def bodies(self):
        return (self.body,)


class AnchorSpringGroup(ElementGroup):
    """f = -k (r - anchor) - c r_dot on the body's centre of mass; history: the count of accepted steps."""

    def __init__(self, springs):
        self.springs = springs
        self.scatter = np.array([s.body.offset + np.arange(3) for s in springs], dtype=np.int64)
        self.anchor = np.array([s.anchor for s in springs])
        self.k = np.array([s.k for s in springs])
        self.c = np.array([s.c for s in springs])
        self.labels = [s.owner for s in springs]
        self.accepted = 0

    def residual(self, st, coef):
        x, xd = st.q[self.scatter] - self.anchor, st.v[self.scatter]
        r = self.k[:, None] * x + self.c[:, None] * xd
        if coef is None:
            return r, None
        _, cC, cK = coef
        eye = np.eye(3)[None]
        return r, (cK * self.k + cC * self.c)[:, None, None] * eye

    def potential(self, st):
        return float(0.5 * np.sum(self.k * np.sum((st.q[self.scatter] - self.anchor) ** 2, axis=1)))

    def power(self, st):
        return float(-np.sum(self.c * np.sum(st.v[self.scatter] ** 2, axis=1)))

    def start(self, st):
        self.accepted = 0

    def history(self):
        return np.array([float(self.accepted)])

    def set_history(self, x):
        self.accepted = int(x[0])

    def accept(self, st):
        self.accepted += 1


@register_family
def build_anchor_springs(forces, nq, st):
    springs = [f for f in forces if isinstance(f, AnchorSpring)]
    return [AnchorSpringGroup(springs)] if springs else []


def model(c=0.0):
    s = fm.System(gravity=(0, 0, 0))
    b = s.add(fm.RigidBody(2.0, (0.1, 0.1, 0.1), position=(0.1, 0.0, 0.0), name="mass"))
    s.add(AnchorSpring(b, (0, 0, 0), k=50.0, c=c, name="spring"))
    return s


def test_residual_and_jacobians_match_finite_differences():
    asm = model(c=0.7).compile()
    rng = np.random.default_rng(3)
    q = asm.initial_state()[0] + 0.01 * rng.standard_normal(asm.nq)
    v, a = rng.standard_normal((2, asm.nq))
    lam = np.zeros(asm.m)
    for k, (coef, x) in enumerate([((0, 0, 1, 0, 0), q), ((0, 1, 0, 0, 0), v)]):
        S = asm.residual(q, v, a, lam, 0.0, coef=coef)[2]
        S = np.asarray(S.toarray() if hasattr(S, "toarray") else S)[:asm.nq, :asm.nq]
        eps = 1e-6

        def f(y):
            return asm.residual(y, v, a, lam, 0.0)[0] if k == 0 else asm.residual(q, y, a, lam, 0.0)[0]
        ref = np.array([(f(x + eps * e) - f(x - eps * e)) / (2 * eps) for e in np.eye(asm.nq)]).T
        # the residual is affine in q and v for this family: central differences are exact to round-off
        assert np.abs(S - ref).max() < 1e-6 * max(1.0, np.abs(ref).max())


def test_oscillation_matches_closed_form_and_history_counts_steps():
    s = model()
    res = fm.simulate(s, 1.0, 1e-3, progress=False)
    w = np.sqrt(50.0 / 2.0)
    x = res.q[:, 0]
    # generalized-alpha (rho_inf 0.9) at w h = 5e-3: phase error ~ (w h)^2 w t / 12 and amplitude decay
    # ~ 1e-4 over one second; 1e-3 of the amplitude bounds both with margin
    assert np.abs(x - 0.1 * np.cos(w * res.t)).max() < 1e-3 * 0.1
    assert res.history[-1][-1] == len(res.t)     # one accept at the start state and one per step
    again = fm.simulate(s, 1.0, 1e-3, progress=False)     # a second run starts from a clean history
    assert np.array_equal(again.history, res.history)


def test_energy_balance_books_the_family_potential_and_power():
    res = fm.simulate(model(c=0.8), 2.0, 1e-3, progress=False)
    E = res.energy()
    total = E["kinetic"] + E["potential"]
    # the damper's work (trapezoidal integral of its power) closes the balance to the integration error,
    # O(h^2) of the 0.25 J stored initially: 1e-4 J
    assert total[0] == pytest.approx(0.25, rel=1e-12)
    assert np.abs(total - E["work"] - total[0]).max() < 1e-4
    assert total[-1] < 0.2          # the damper removed energy
