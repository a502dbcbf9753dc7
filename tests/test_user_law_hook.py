"""User contact laws on the compiled step (issue 24): the compiled step evaluates every built-in term and calls the
user's Python law once per evaluation for all its pairs (flexmb/compiled/hook.py); the rest of the model stays
compiled.

The reference is the same law built in (``LankaraniNikravesh``): a user law equal to it must give its trajectory,
residual and Newton matrix. The user law's derivatives are checked by central differences before they are used.
"""
from __future__ import annotations

import numpy as np
import pytest

import flexmb as fm
from flexmb.contact import ContactLaw, LankaraniNikravesh, effective_modulus, sphere_plane
from flexmb.errors import ModelError, NonFiniteError
from flexmb.solvers import compiled_step as cs

ARM, MASS, R, E_REST = 0.5, 1.0, 0.02, 0.8
K_HERTZ = sphere_plane(R, effective_modulus(2.1e11, 0.3, 2.1e11, 0.3))
T_END = 0.5         # s: the first strike (near t = 0.38 s) and the rebound
H = 1e-3


class UserLN(ContactLaw):
    """Lankarani-Nikravesh written by a user in numpy (the documented protocol), with exact derivatives."""

    name = "user Lankarani-Nikravesh"

    def __init__(self, K: float, e: float, n: float = 1.5, v_min: float = 1e-3):
        self.K, self.e, self.n, self.v_min = K, e, n, v_min
        self.calls = []            # the number of pairs of each call

    def force(self, delta, delta_dot, delta_dot_minus=None):
        self.calls.append(np.size(delta))
        chi = 0.75 * (1.0 - self.e ** 2) / np.maximum(delta_dot_minus, self.v_min)
        g = 1.0 + chi * delta_dot
        on = (delta > 0.0) & (g > 0.0)
        d = np.where(on, delta, 0.0)
        Kdn = self.K * d ** self.n
        return (np.where(on, Kdn * g, 0.0), np.where(on, self.n * self.K * d ** (self.n - 1.0) * g, 0.0),
                np.where(on, Kdn * chi, 0.0))


class ForceOnly(UserLN):
    """A law that returns the force without its derivatives (not the protocol)."""

    def force(self, delta, delta_dot, delta_dot_minus=None):
        return super().force(delta, delta_dot, delta_dot_minus)[0]


class Failing(UserLN):
    """A law whose code fails once the pair penetrates deeper than 1 um."""

    def force(self, delta, delta_dot, delta_dot_minus=None):
        if np.any(delta > 1e-6):
            raise ZeroDivisionError("the user's bug")
        return super().force(delta, delta_dot, delta_dot_minus)


class NotFinite(UserLN):
    """A law that gives NaN for its stiffness once the pair penetrates deeper than 1 um."""

    def force(self, delta, delta_dot, delta_dot_minus=None):
        F, dF, dFd = super().force(delta, delta_dot, delta_dot_minus)
        return F, np.where(delta > 1e-6, np.nan, dF), dFd


def pendulum(law, stops: int = 1) -> fm.System:
    """A pendulum striking ``stops`` stops (sphere-plane pairs, one law object for all) as it passes the vertical."""
    s = fm.System(gravity=(0, -9.81, 0))
    arm = s.add(fm.RigidBody(MASS, (1e-4, MASS * ARM ** 2 / 12, MASS * ARM ** 2 / 12), position=(ARM / 2, 0, 0),
                             name="arm"))
    s.add(fm.Revolute(s.ground, arm, (0, 0, 0), (0, 0, 1), name="hinge"))
    for k in range(stops):
        s.add(fm.SpherePlaneContact(s.ground, arm, point=(-R, 0, 0.01 * k), normal=(1, 0, 0), center=(ARM, 0, 0),
                                    radius=R, law=law, name=f"stop{k}"))
    return s


def test_user_law_derivatives_match_central_differences():
    """The test's user law is right before it is used: its dF/d delta and dF/d delta_dot against central
    differences (relative step 1e-6; truncation ~1e-12 relative, round-off ~1e-10: 1e-6 leaves a wide margin)."""
    law = UserLN(K_HERTZ, E_REST)
    d = np.array([1e-7, 3e-6, 2e-5])
    dd = np.array([0.8, -0.2, 0.05])
    vm = np.array([1.0, 0.5, 0.01])
    F, dF, dFd = law.force(d, dd, vm)
    for x, deriv, which in ((d, dF, 0), (dd, dFd, 1)):
        step = 1e-6 * np.abs(x)
        args_p = [d.copy(), dd.copy()]
        args_m = [d.copy(), dd.copy()]
        args_p[which] += step
        args_m[which] -= step
        fd = (law.force(*args_p, vm)[0] - law.force(*args_m, vm)[0]) / (2 * step)
        assert np.allclose(deriv, fd, rtol=1e-6, atol=0.0)
    assert np.all(F > 0)


def test_user_law_takes_the_compiled_step_and_gives_the_builtin_trajectory():
    """The same law given by the user and built in: the same trajectory to the Newton tolerance (1e-8 weighted,
    the bound below is 10x it), every step on the compiled step, and the same energy booked (the damping power
    of the user law at accepted states comes through the hook too)."""
    ref = fm.simulate(pendulum(LankaraniNikravesh(K_HERTZ, E_REST)), T_END, H)
    law = UserLN(K_HERTZ, E_REST)
    res = fm.simulate(pendulum(law), T_END, H)
    assert res.t.shape == ref.t.shape
    assert np.max(np.abs(res.q - ref.q)) < 1e-7
    assert res.stats["compiled_steps"] == res.stats["steps"]
    assert np.max(np.abs(res.work_nc - ref.work_nc)) < 1e-7 * np.max(np.abs(ref.work_nc))
    assert np.max(np.abs(ref.work_nc)) > 1e-3                  # the impact dissipated energy
    # it struck and came back: the arm's x velocity at the tip reversed
    assert law.calls and min(res.v[:, 0]) < 0 < max(res.v[res.t > 0.4, 0])


def test_one_call_per_evaluation_for_all_pairs_of_a_law():
    """Two stops sharing one law object: each call of the law gets both pairs (they penetrate together)."""
    law = UserLN(K_HERTZ, E_REST)
    res = fm.simulate(pendulum(law, stops=2), T_END, H)
    assert res.stats["compiled_steps"] == res.stats["steps"]
    assert law.calls and set(law.calls) == {2}


def test_compiled_evaluation_equals_the_python_evaluation_in_contact():
    """At a state in contact, the compiled evaluation (built-in terms compiled, the user law through the hook)
    gives the residual, constraint values and Newton matrix of ``Assembly.residual`` (round-off only)."""
    law = UserLN(K_HERTZ, E_REST)
    s = pendulum(law)
    run = fm.simulate(s, T_END, H)
    asm = s.compile()
    assert cs.CompiledStep.qualifies(asm, reuse_matrix=False) and cs.CompiledEvaluation.qualifies(asm)
    k = int(np.argmin(run.position(s.bodies[0], local_point=(ARM / 2, 0, 0))[:, 0]))   # deepest into the stop
    q, v, vd, lam, t = run.q[k], run.v[k], run.vd[k], run.lam[k], run.t[k]
    coef = (1.2, 3e-4, 2.5e-7, 2.5e-7, 0.0)
    r, rows, S = cs.CompiledEvaluation(asm).residual(q, v, vd, lam, t, coef)
    r0, rows0, S0 = asm.residual(q, v, vd, lam, t, coef=coef)
    S0 = S0.toarray() if hasattr(S0, "toarray") else S0
    force_scale = np.max(np.abs(r0))
    assert force_scale > 100.0                                     # the contact force acts (N)
    assert np.max(np.abs(r - r0)) < 1e-12 * force_scale
    assert np.max(np.abs(rows.phi - rows0.phi)) < 1e-14
    assert np.max(np.abs(S - S0)) < 1e-12 * np.max(np.abs(S0))


def test_law_without_derivatives_is_refused_naming_the_contact_and_the_law():
    with pytest.raises(ModelError, match=r"contact 'stop0': the user contact law ForceOnly") as err:
        fm.simulate(pendulum(ForceOnly(K_HERTZ, E_REST)), T_END, H)
    assert "three arrays" in str(err.value)


def test_error_in_a_user_law_names_the_contact_and_the_law():
    with pytest.raises(ModelError, match=r"contact 'stop0': the user contact law .*Failing.* raised ZeroDivisionError: "
                                         r"the user's bug") as err:
        fm.simulate(pendulum(Failing(K_HERTZ, E_REST)), T_END, H)
    assert isinstance(err.value.__cause__, ZeroDivisionError)


def test_non_finite_user_law_value_names_the_contact_and_the_law():
    with pytest.raises(NonFiniteError,
                       match=r"contact 'stop0': the user contact law .*NotFinite.* gave dF/d delta = nan"):
        fm.simulate(pendulum(NotFinite(K_HERTZ, E_REST)), T_END, H)


def _sliding_ball(law, friction: bool, second=None) -> fm.System:
    """A 1 kg ball (R = 50 mm) thrown at 0.5 m/s along x onto a floor, with Coulomb friction (mu = 0.3) when asked;
    ``second``: the law of a second ball's floor pair in the same contact group."""
    from flexmb.contact import CoulombRamp
    r = 0.05
    s = fm.System(gravity=(0, -9.81, 0))
    for k, lw in enumerate([law] if second is None else [law, second]):
        z = 0.2 * k
        ball = s.add(fm.RigidBody(1.0, (0.001,) * 3, position=(0, r + 1e-3, z), velocity=(0.5, -0.2, 0),
                                  name=f"ball{k}"))
        s.add(fm.SpherePlaneContact(s.ground, ball, point=(0, 0, 0), normal=(0, 1, 0), center=(0, r + 1e-3, z),
                                    radius=r, law=lw, friction=CoulombRamp(0.3, 1e-3) if friction else None,
                                    name=f"floor{k}"))
    return s


def test_user_law_with_builtin_friction_gives_the_builtin_trajectory():
    """Friction on the user law's normal force (compiled friction kernel fed by the hook's F and derivatives,
    friction power at accepted states): the built-in trajectory and work to the Newton tolerance (as above)."""
    K, e = 1e8, 0.5
    ref = fm.simulate(_sliding_ball(LankaraniNikravesh(K, e), True), 0.1, 1e-3)
    res = fm.simulate(_sliding_ball(UserLN(K, e), True), 0.1, 1e-3)
    assert res.stats["compiled_steps"] == res.stats["steps"]
    assert res.t.shape == ref.t.shape
    assert np.max(np.abs(res.q - ref.q)) < 1e-7
    assert np.max(np.abs(res.work_nc - ref.work_nc)) < 1e-7 * np.max(np.abs(ref.work_nc))
    assert res.v[-1, 0] < 0.45            # friction slowed the slide (no friction: 0.5 m/s throughout)


def test_user_and_builtin_laws_in_one_group_give_the_builtin_trajectory():
    """One contact group with a user-law pair and a built-in pair: the compiled kernel's built-in pass and the
    hook fill one group's forces; trajectories as with both laws built in."""
    K, e = 1e8, 0.5
    ref = fm.simulate(_sliding_ball(LankaraniNikravesh(K, e), False, LankaraniNikravesh(K, 0.9)), 0.1, 1e-3)
    res = fm.simulate(_sliding_ball(UserLN(K, e), False, LankaraniNikravesh(K, 0.9)), 0.1, 1e-3)
    assert res.stats["compiled_steps"] == res.stats["steps"]
    assert np.max(np.abs(res.q - ref.q)) < 1e-7
    assert np.max(np.abs(res.work_nc - ref.work_nc)) < 1e-7 * np.max(np.abs(ref.work_nc))


def test_user_law_without_its_elastic_part_is_refused_naming_the_contact():
    class NoStiffness(ContactLaw):
        def force(self, delta, delta_dot, delta_dot_minus=None):
            return delta, delta, delta

    s = fm.System()
    ball = s.add(fm.RigidBody(1.0, (0.001,) * 3, name="ball"))
    with pytest.raises(ModelError, match=r"contact 'floor': the contact law NoStiffness's K .* must be a number, "
                                         r"got None"):
        fm.SpherePlaneContact(s.ground, ball, point=(0, -1, 0), normal=(0, 1, 0), center=(0, 0, 0), radius=0.1,
                              law=NoStiffness(), name="floor")
