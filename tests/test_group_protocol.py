"""A new element family plugs in through flexmb/groups.py without any change to Assembly.

The family here is a linear spring-damper from a body's centre of mass to a fixed anchor, written only
against the protocol (ElementGroup + register_family). Checked: the residual and its Jacobians against
central differences, the small oscillation against the closed form x(t) = x0 cos(w t), the energy
balance (potential energy through the protocol, damper work through its power), and that the group's
history is started, accepted and saved like every stateful family's. Then: every built-in force family is
such a group in the assembly's one list, the driver power of the driven primitives against the assembled
Jacobian, a family flagged ``applied`` grows with the static solver's load factor, and the integrator
evaluates contact penetrations once per state.
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


# -- every built-in family is a protocol group ------------------------------------------------------------
def zoo():
    """Two bodies with one element of every built-in force family (and a driver)."""
    s = fm.System(gravity=(0.0, -9.81, 0.0))
    a = s.add(fm.RigidBody(3.0, (0.2, 0.3, 0.4), position=(0.1, 0.2, 0.3), name="a"))
    b = s.add(fm.RigidBody(2.0, (0.1, 0.15, 0.2), position=(1.0, -0.2, 0.4), name="b"))
    j = s.add(fm.Revolute(a, b, (0.5, 0.1, 0.3), (0, 0, 1), name="hinge"))
    s.add(fm.Driver(a, coordinate="y", value=lambda t: 0.2 + 0.1 * t, name="lift"))
    s.add(fm.SpringDamper(a, b, point_a=(0, 0.1, 0), point_b=(1.1, 0.0, 0.3), k=120.0, c=4.0, name="spring"))
    s.add(fm.Force(a, (1, 2, 3), name="push"))
    s.add(fm.DCMotor(j, K_p=0.7, r_a=0.4, L_a=0.05, D=0.2, voltage=6.0, name="motor"))
    s.add(fm.CrushElement(s.ground, b, point_a=(1.0, -1.0, 0.4), point_b=(1.0, -0.2, 0.4),
                          curve=([0.0, 0.01, 0.5], [0.0, 800.0, 900.0]), unloading_stiffness=1e5, name="crush"))
    s.add(fm.SpherePlaneContact(s.ground, b, point=(0, -0.5, 0), normal=(0, 1, 0), center=(1.0, -0.2, 0.4),
                                radius=0.2, law=fm.contact.LankaraniNikravesh(1e5, 0.8), name="floor"))
    s.add(fm.UserForce([a], lambda t, q, v: -0.5 * v, name="drag"))
    return s


def test_every_force_family_is_a_protocol_group_in_one_list():
    asm = zoo().compile()
    names = [g.family for g in asm.families]
    # FAMILY_MODULES order: loads, motors, springs, crash, contacts, user forces
    assert names == ["loads", "motors", "springs", "crash", "contacts", "users"]
    for g in asm.families:
        assert isinstance(g, ElementGroup)
        assert len(g.labels) == g.scatter.shape[0]
    assert [g.labels for g in asm.crash] == [["crush element 'crush'"]]
    assert asm.contacts == asm.of_family("contacts")
    # the assembly keeps no per-family lists of its own: look-up views of the one list
    assert not any(hasattr(asm, k) for k in ("motors", "loads", "nodal", "users"))
    assert asm.springs == asm.of_family("springs") and len(asm.springs) == 1
    assert asm._h["springs"] == [h for g, h in zip(asm.families, asm._h["families"]) if g.family == "springs"]
    assert asm._h["nodal"] == []              # a built-in family without elements: an empty handle list
    # history: the stateful families in family order (crash, then the contact pair)
    assert [g.family for g in asm.stateful] == ["crash", "contacts"]


def test_driver_power_equals_the_constraint_power_of_the_driver_rows():
    """``driver_power`` (driven primitives evaluated alone) against ``-lambda . (Phi_q v)`` of the driver rows
    from the assembled constraint Jacobian; round-off (1e-12 of the terms) only."""
    asm = zoo().compile()
    rng = np.random.default_rng(5)
    q = asm.initial_state()[0] + 0.05 * rng.standard_normal(asm.nq)
    v, lam = rng.standard_normal(asm.nq), rng.standard_normal(asm.m)
    jv = asm.constraints(q, v, 0.3).jac @ v
    ref = -float(np.dot(lam[asm.driver_rows], jv[asm.driver_rows]))
    assert asm.driver_rows.sum() == 1
    assert asm.driver_power(q, v, lam, 0.3) == pytest.approx(ref, rel=1e-12, abs=1e-12 * np.abs(lam * jv).max())


# -- applied loads: the static solver's load factor goes through ElementGroup.applied ----------------------
class Push(ForceElement):
    kind = "push"

    def __init__(self, body, force, name=None):
        super().__init__(name)
        self.body, self.force = body, np.asarray(force, float)

    @property
    def bodies(self):
        return (self.body,)


class PushGroup(ElementGroup):
    """A constant force (N) on a body's centre of mass, flagged as a prescribed load."""

    applied = True
    probe_structure = False
    family = "push"

    def __init__(self, pushes):
        self.scatter = np.array([p.body.offset + np.arange(3) for p in pushes], dtype=np.int64)
        self.F = np.array([p.force for p in pushes])
        self.labels = [p.owner for p in pushes]

    def residual(self, st, coef):
        return -self.F, (None if coef is None else np.zeros((len(self.F), 3, 3)))

    def power(self, st):
        return float(np.sum(self.F * st.v[self.scatter]))


@register_family
def build_pushes(forces, nq, st):
    pushes = [f for f in forces if isinstance(f, Push)]
    return [PushGroup(pushes)] if pushes else []


def test_applied_family_grows_with_the_static_load_factor():
    """A mass on a prismatic joint along x, held by the anchor spring (k = 50 N/m) and pushed by 2 N: at load
    factor lambda the equilibrium is x = lambda F / k (linear, so Newton's tolerance 1e-10 bounds the error)."""
    s = fm.System(gravity=(0, 0, 0))
    b = s.add(fm.RigidBody(2.0, (0.1, 0.1, 0.1), position=(0.0, 0.0, 0.0), name="mass"))
    s.add(fm.Prismatic(s.ground, b, (0, 0, 0), (1, 0, 0)))
    s.add(AnchorSpring(b, (0, 0, 0), k=50.0))
    s.add(Push(b, (2.0, 0.0, 0.0)))
    res = fm.static_equilibrium(s, load_steps=4)
    assert np.allclose(res.t, [0.0, 0.25, 0.5, 0.75, 1.0])
    assert np.abs(res.q[:, 0] - res.t * 2.0 / 50.0).max() < 1e-9


# -- contact onsets: penetrations once per state --------------------------------------------------------------
def test_penetrations_evaluated_once_per_state(monkeypatch):
    """A ball falling towards a floor it does not reach: per accepted step the integrator evaluates the pair's
    measure (penetrations) at the free-flight prediction, at the Newton result and once at the accepted state
    (after the histories moved on; its accept and penetration share that evaluation), and nowhere else: the
    contact-step limit and both onset tests reuse the accepted state's. Same trajectory as without counting.
    Single steps (the Python integrator's per-step path); blocks of compiled steps evaluate the pair in compiled
    code (flexmb/compiled/step_end.py), and Python then evaluates it only at the start state."""
    from flexmb.contact.pairs import ContactGroup
    from flexmb.solvers.stepper import AlphaIntegrator
    s = fm.System(gravity=(0, -9.81, 0))
    b = s.add(fm.RigidBody(1.0, (0.01, 0.01, 0.01), position=(0, 1.0, 0), name="ball"))
    s.add(fm.SpherePlaneContact(s.ground, b, point=(0, 0, 0), normal=(0, 1, 0), center=(0, 1.0, 0), radius=0.1,
                                law=fm.contact.LankaraniNikravesh(1e6, 0.8)))
    ref = fm.simulate(s, 0.05, 1e-3, h_contact=1e-4, energy=False, progress=False)
    calls = {"penetration": 0, "state": 0}
    penetration, state = ContactGroup.penetration, ContactGroup.state

    def counted(name, f):
        def wrapper(*args):
            calls[name] += 1
            return f(*args)
        return wrapper

    monkeypatch.setattr(ContactGroup, "penetration", counted("penetration", penetration))
    monkeypatch.setattr(ContactGroup, "state", counted("state", state))
    blocks = fm.simulate(s, 0.05, 1e-3, h_contact=1e-4, energy=False, progress=False)
    assert np.array_equal(blocks.q, ref.q) and blocks.stats["blocks"] <= 2     # the last step may be shorter
    assert calls == {"penetration": 1, "state": 3}        # the start state only
    calls.update(penetration=0, state=0)
    monkeypatch.setattr(AlphaIntegrator, "can_advance", lambda self: False)
    res = fm.simulate(s, 0.05, 1e-3, h_contact=1e-4, energy=False, progress=False)
    steps = res.stats["steps"]
    assert steps == 50 and res.stats["rejected"] == 0
    assert np.array_equal(res.q, ref.q)
    # the start state + 3 per step (the first run compiled the model)
    assert calls["penetration"] == 1 + 3 * steps
    # measure evaluations: start, accept and penetrations of the start state, then 3 per step. Before the
    # integrator kept the accepted state's penetrations: 6 per step (the in-contact test and both onset tests
    # evaluated the step's start state again, accept its own)
    assert calls["state"] == 3 + 3 * steps
