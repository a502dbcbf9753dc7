"""NonlinearSpring: a piecewise-linear force law of the elongation, on the compiled step.

Checked against independent references: the law and its energy against numpy's interpolation and scipy's
quadrature; a mass hanging on the spring against the closed-form equilibrium (the table inverted at m g) and the
small-oscillation period ``2 pi sqrt(m / F'(e*))``; a two-point (linear) table against ``SpringDamper``; the compiled
step against the general path; the energy balance. The Jacobian is checked in tests/test_jacobians.py
("nonlinear-spring", "flex-nonlinear-spring").
"""
import numpy as np
import pytest
from scipy.integrate import quad

import flexmb as fm
from flexmb.errors import ModelError
from flexmb.solvers import compiled_step as cs

G = 9.81

# a softening law with a stop: stiff first segment, softer middle one, stiff again beyond 0.1 m (m, N)
X_TABLE = np.array([-0.05, 0.0, 0.05, 0.1, 0.2])
F_TABLE = np.array([-400.0, 0.0, 200.0, 300.0, 1300.0])


def test_law_interpolates_and_extrapolates_with_the_end_slopes():
    from flexmb.compiled.nonlinear_spring import table_force
    e = np.array([-0.3, -0.05, -0.01, 0.0, 0.03, 0.05, 0.07, 0.1, 0.15, 0.2, 0.5])
    got = np.array([table_force(X_TABLE, F_TABLE, x) for x in e])
    inside = np.interp(e, X_TABLE, F_TABLE)
    left = F_TABLE[0] + (e - X_TABLE[0]) * (F_TABLE[1] - F_TABLE[0]) / (X_TABLE[1] - X_TABLE[0])
    right = F_TABLE[-1] + (e - X_TABLE[-1]) * (F_TABLE[-1] - F_TABLE[-2]) / (X_TABLE[-1] - X_TABLE[-2])
    ref = np.where(e < X_TABLE[0], left, np.where(e > X_TABLE[-1], right, inside))
    # a segment's affine formula against numpy's: both a few rounding errors of the table's forces (1e3 N)
    assert np.abs(got[:, 0] - ref).max() < 1e-12 * 1300
    # slopes: of the segment holding e (the one to the right at a breakpoint), the end slopes outside
    slopes = np.diff(F_TABLE) / np.diff(X_TABLE)
    k = np.clip(np.searchsorted(X_TABLE, e, side="right") - 1, 0, X_TABLE.size - 2)
    assert np.array_equal(got[:, 1], slopes[k])


def test_energy_is_the_integral_of_the_law_from_zero():
    from flexmb.compiled.nonlinear_spring import table_energy, table_force
    for e in (-0.3, -0.02, 0.0, 0.04, 0.1, 0.13, 0.45):
        pts = [x for x in X_TABLE if min(0.0, e) < x < max(0.0, e)]
        ref, err = quad(lambda s: table_force(X_TABLE, F_TABLE, s)[0], 0.0, e, points=pts or None)
        # quad is exact for a piecewise-linear integrand split at its breakpoints, to its own error estimate
        assert table_energy(X_TABLE, F_TABLE, e) == pytest.approx(ref, abs=1e-10 + 10 * err)


def hanging(mass, *, x_table=X_TABLE, F_table=F_TABLE, damping=0.0, drop=0.0, length=1.0):
    """A mass (kg) hanging on a NonlinearSpring (free ``length``, m) from the ground's origin, released at rest
    ``drop`` (m) below its equilibrium; returns the system and the static elongation ``e*`` (m) where the table's
    force equals the weight."""
    s = fm.System(gravity=(0, -G, 0))
    e_star = equilibrium_elongation(mass * G, x_table, F_table)
    y0 = -(length + e_star + drop)
    bob = s.add(fm.RigidBody(mass, (0.01, 0.01, 0.01), position=(0.0, y0, 0.0), name="bob"))
    s.add(fm.NonlinearSpring(s.ground, bob, point_a=(0, 0, 0), point_b=(0, y0, 0), force=(x_table, F_table),
                             damping=damping, length=length, name="hanger"))
    return s, e_star


def equilibrium_elongation(W, xs, Fs):
    """The elongation where the (increasing) table's force equals the weight ``W`` (N): the table inverted by hand."""
    k = int(np.searchsorted(Fs, W)) - 1
    return xs[k] + (W - Fs[k]) * (xs[k + 1] - xs[k]) / (Fs[k + 1] - Fs[k])


def test_hanging_mass_rests_at_the_inverted_table_and_oscillates_with_the_local_slope():
    m = 25.0                       # m g = 245.25 N: in the middle segment (200-300 N over 0.05-0.1 m)
    s, e_star = hanging(m)
    assert 0.05 < e_star < 0.1
    rest = fm.simulate(s, 0.5, 1e-3, progress=False)
    # at the closed-form equilibrium the residual force is m g - F(e*) ~ 1e-13 N: no motion above round-off
    # (measured: none, 0.0)
    assert np.abs(rest.q[:, 1] - rest.q[0, 1]).max() < 1e-10
    s, e_star = hanging(m, drop=0.01)          # +-0.01 m about e* = 0.0726 stays in the segment (0.05, 0.1)
    res = fm.simulate(s, 3.0, 1e-3, progress=False)
    y = res.q[:, 1]
    y_star = -(1.0 + e_star)
    # centre of the oscillation: the equilibrium; generalized-alpha (rho_inf 0.9) damps the amplitude by ~1e-4
    # over the run, so the half-sum of the extremes is y* to 1e-4 of the 0.01 m amplitude (measured 9e-9 m)
    assert 0.5 * (y.max() + y.min()) == pytest.approx(y_star, abs=1e-6)
    # period from the upward crossings of y*: the slope of the segment holding e*, 2000 N/m
    up = np.flatnonzero((y[:-1] < y_star) & (y[1:] >= y_star))
    tc = res.t[up] + (y_star - y[up]) / (y[up + 1] - y[up]) * (res.t[up + 1] - res.t[up])
    period = np.diff(tc).mean()
    T = 2 * np.pi * np.sqrt(m / 2000.0)
    # the scheme's period error at w h = 8.9e-3 is ~ (w h)^2 / 12 = 7e-6 relative (measured 6.7e-6); crossing
    # interpolation ~1e-6
    assert period == pytest.approx(T, rel=1e-4)
    # the secant stiffness F(e*)/e* (3378 N/m) would give a period 23 % shorter: the slope is what counts
    assert abs(period - 2 * np.pi * np.sqrt(m * e_star / (m * G))) > 0.1 * T


def pendulum(spring):
    """A bob swinging on a spring from the ground's origin: ``spring(ground, bob, point_a, point_b)`` adds it."""
    s = fm.System(gravity=(0, -G, 0))
    bob = s.add(fm.RigidBody(2.0, (0.01, 0.02, 0.015), position=(0.6, -0.8, 0.1), name="bob"))
    s.add(spring(s.ground, bob, (0, 0, 0), (0.6, -0.8, 0.1)))
    return s


def linear_table(k):
    return lambda a, b, pa, pb: fm.NonlinearSpring(a, b, point_a=pa, point_b=pb, force=([0.0, 1.0], [0.0, k]),
                                                   damping=0.7, length=0.9, name="spring")


def test_two_point_table_equals_spring_damper():
    k = 300.0
    nl = fm.simulate(pendulum(linear_table(k)), 1.0, 1e-3, progress=False)
    lin = fm.simulate(pendulum(lambda a, b, pa, pb: fm.SpringDamper(a, b, point_a=pa, point_b=pb, k=k, c=0.7,
                                                                    free_length=0.9)), 1.0, 1e-3, progress=False)
    assert nl.stats["steps"] == lin.stats["steps"]
    # the table's law F = 0 + k (e - 0) is SpringDamper's k e bit for bit, and with one body the terms are added in
    # the same order: measured 0.0; the bound allows the round-off of another summation order
    assert np.abs(nl.q - lin.q).max() < 1e-12
    assert np.abs(nl.energy()["total"] - lin.energy()["total"]).max() < 1e-9


def test_runs_on_the_compiled_step_and_matches_the_general_path(monkeypatch):
    s = pendulum(lambda a, b, pa, pb: fm.NonlinearSpring(a, b, point_a=pa, point_b=pb, force=(X_TABLE, F_TABLE),
                                                         damping=0.7, length=0.95, name="spring"))
    asm = s.compile()
    assert cs.CompiledStep.qualifies(asm, reuse_matrix=False)
    fast = fm.simulate(s, 1.0, 1e-3, progress=False)
    assert fast.stats["compiled_steps"] == fast.stats["steps"] == 1000
    monkeypatch.setattr(cs.CompiledStep, "qualifies", staticmethod(lambda asm, reuse: False))
    monkeypatch.setattr(cs.CompiledEvaluation, "qualifies", staticmethod(lambda asm: False))
    slow = fm.simulate(s, 1.0, 1e-3, progress=False)
    assert slow.stats["compiled_steps"] == 0
    # both converge each step to the Newton tolerance 1e-8 (scaled residual): they may differ by that over the run
    # (measured 0.0: the same kernel, the same arithmetic)
    assert np.abs(fast.q - slow.q).max() < 1e-7
    # same Newton matrices: the same iteration counts
    assert fast.stats["newton_iterations"] == slow.stats["newton_iterations"]
    # the stretch crossed breakpoints of the table during the swing (the test covers segment changes)
    d = np.linalg.norm(fast.q[:, :3], axis=1) - 0.95
    assert np.searchsorted(X_TABLE, d.min()) != np.searchsorted(X_TABLE, d.max())


def test_spring_on_a_flexible_body_takes_the_compiled_step(monkeypatch):
    """A NonlinearSpring between the ground and a node of a flexible beam (modal attachment shapes) on a revolute:
    the compiled step against the general path."""
    from tests.test_jacobians import beam_modes

    def model():
        s = fm.System(gravity=(0, -G, 0))
        f = s.add(fm.FlexibleBody(beam_modes(3, direction=(1.0, 0.0, 0.0)), position=(0, 0, 0), damping=0.02,
                                  name="beam"))
        s.add(fm.Revolute(s.ground, f.interface("root"), (0, 0, 0), (0, 0, 1)))
        tip = f.initial_frame()[0] + f.initial_frame()[1] @ f.modes.interface("tip").position
        s.add(fm.NonlinearSpring(s.ground, f.node(4), point_a=tip + np.array([0, 0.5, 0]), point_b=tip,
                                 force=([-0.1, 0.0, 0.02, 0.1], [-500.0, 0.0, 100.0, 2000.0]), damping=2.0,
                                 name="tip spring"))
        return s
    fast = fm.simulate(model(), 0.3, 1e-3, progress=False)
    assert fast.stats["compiled_steps"] == fast.stats["steps"] == 300
    monkeypatch.setattr(cs.CompiledStep, "qualifies", staticmethod(lambda asm, reuse: False))
    monkeypatch.setattr(cs.CompiledEvaluation, "qualifies", staticmethod(lambda asm: False))
    slow = fm.simulate(model(), 0.3, 1e-3, progress=False)
    assert slow.stats["compiled_steps"] == 0
    assert np.ptp(fast.q, axis=0).max() > 1e-3                 # it moved (the beam swings down)
    # to the Newton tolerance (measured 1.8e-15 m), with the same iterations
    assert np.abs(fast.q - slow.q).max() < 1e-7
    assert fast.stats["newton_iterations"] == slow.stats["newton_iterations"]


def test_compiled_equations_equal_the_assembly_at_a_random_state():
    """The compiled terms (flexmb/compiled/equations.py ``nonlinear_spring_terms``, through the compiled evaluation)
    against the group's Python residual (the assembly), residual and Newton matrix, at a random state."""
    s = pendulum(lambda a, b, pa, pb: fm.NonlinearSpring(a, b, point_a=pa, point_b=pb, force=(X_TABLE, F_TABLE),
                                                         damping=0.7, length=0.95, name="spring"))
    asm = s.compile()
    rng = np.random.default_rng(3)
    q0, v0 = asm.initial_state()
    q, v, a = q0 + 0.02 * rng.standard_normal(q0.size), rng.standard_normal(q0.size), rng.standard_normal(q0.size)
    lam = rng.standard_normal(asm.m)
    coef = (1.0, 30.0, 900.0, 900.0, 0.0)
    r_ref, _, S_ref = asm.residual(q, v, a, lam, 0.1, coef=coef)
    r, _, S = cs.CompiledEvaluation(asm).residual(q, v, a, lam, 0.1, coef=coef)
    S_ref, S = (np.asarray(x.toarray() if hasattr(x, "toarray") else x) for x in (S_ref, S))
    # the same kernel on the same numbers, summed in another order: round-off of the largest entry
    assert np.abs(r - r_ref).max() < 1e-12 * np.abs(r_ref).max()
    assert np.abs(S - S_ref).max() < 1e-12 * np.abs(S_ref).max()
    assert np.abs(S_ref[:3, :3]).max() > 1e3        # the spring's block is in it (900 x slope 2000-10 000 N/m)


def energy_drift(h):
    """The energy balance of the swinging bob (stretch 0.055 m at the start, in the table's second segment; it
    swings through the kinks at 0 and 0.05 m): ``Result.energy()`` and its largest drift of ``total`` (J)."""
    s = pendulum(lambda a, b, pa, pb: fm.NonlinearSpring(a, b, point_a=pa, point_b=pb, force=(X_TABLE, F_TABLE),
                                                         damping=0.7, length=0.95, name="spring"))
    E = fm.simulate(s, 2.0, h, progress=False).energy()
    return E, np.abs(E["total"] - E["total"][0]).max()


def test_energy_balance_closes():
    E, coarse = energy_drift(2e-3)
    e0 = np.linalg.norm((0.6, -0.8, 0.1)) - 0.95
    stored = quad(lambda e: np.interp(e, X_TABLE, F_TABLE), 0.0, e0, points=[0.05])[0]     # 6.02 J
    # the potential at the start: the table's integral (quad, exact for the piecewise-linear law) plus gravity's
    # m g y (bob at y = -0.8 m)
    assert E["potential"][0] == pytest.approx(stored - 2.0 * G * 0.8, rel=1e-12)
    assert E["work"][-1] < -2.0                  # the damper dissipated about 2.6 J of the 6 J
    # the balance closes to the integration error, O(h^2): measured drift 1.5e-2 J at h = 2e-3 s and 9.4e-4 J at
    # h = 5e-4 s (16x for a 4x smaller step; the kinks make single steps first order, hence the margin 8x); a wrong
    # potential or a missing damper power would leave a drift of the order of the 6 J stored or the 2.6 J dissipated
    _, fine = energy_drift(5e-4)
    assert fine < coarse / 8 and fine < 3e-4 * stored


@pytest.mark.parametrize("force, damping, words", [
    (([0.0, 0.1, 0.1], [0.0, 1.0, 2.0]), 0.0, "strictly increasing, got x[1] = 0.1 then x[2] = 0.1"),
    (([0.0, 0.2, 0.1], [0.0, 1.0, 2.0]), 0.0, "strictly increasing, got x[1] = 0.2 then x[2] = 0.1"),
    (([0.0, np.nan], [0.0, 1.0]), 0.0, "x_table (m) must be finite, got [0.0, nan]"),
    (([0.0, 1.0], [0.0, np.inf]), 0.0, "F_table (N) must be finite, got [0.0, inf]"),
    (([0.0, 1.0, 2.0], [0.0, 1.0]), 0.0, "x_table has 3 values and F_table 2"),
    (([[0.0, 1.0], [2.0, 3.0]], [0.0, 1.0]), 0.0, "x_table (m) must be a 1-D table of at least 2 values, got shape (2, 2)"),
    (([0.0], [1.0]), 0.0, "must be a 1-D table of at least 2 values, got shape (1,)"),
    ((np.zeros(3),), 0.0, "force must be a pair (x_table (m), F_table (N))"),
    ((["a", "b"], [0.0, 1.0]), 0.0, "x_table (m) must be numbers, got ['a', 'b']"),
    (([0.0, 1.0], [0.0, 1.0]), -2.5, "damping (N s/m) must be non-negative and finite, got -2.5"),
    (([0.0, 1.0], [0.0, 1.0]), np.nan, "damping (N s/m) must be non-negative and finite, got nan"),
])
def test_bad_input_names_the_element_and_the_value(force, damping, words):
    s = fm.System()
    b = s.add(fm.RigidBody(1.0, (1, 1, 1), position=(1, 0, 0)))
    with pytest.raises(ModelError) as err:
        fm.NonlinearSpring(s.ground, b, point_a=(0, 0, 0), point_b=(1, 0, 0), force=force, damping=damping,
                           name="mount")
    assert "nonlinear spring 'mount'" in str(err.value) and words in str(err.value)


def test_bad_length_and_coincident_points():
    s = fm.System()
    b = s.add(fm.RigidBody(1.0, (1, 1, 1), position=(1, 0, 0)))
    with pytest.raises(ModelError, match=r"nonlinear spring 'mount': length \(m\) must be non-negative and finite, "
                                         r"got -1.0"):
        fm.NonlinearSpring(s.ground, b, point_a=(0, 0, 0), point_b=(1, 0, 0), force=([0, 1], [0, 1]), length=-1.0,
                           name="mount")
    with pytest.raises(ModelError, match=r"nonlinear spring 'mount': point_a and point_b coincide"):
        fm.NonlinearSpring(s.ground, b, point_a=(1, 0, 0), point_b=(1, 0, 0), force=([0, 1], [0, 1]), name="mount")


def test_the_universal_form_holds_an_empty_part():
    """A model without nonlinear springs packs an empty part (the universal step's types, every family present):
    its terms add nothing and its power is zero, with the array types of a filled part."""
    from flexmb.compiled import equations as eq
    from flexmb.compiled.model import NonlinearSprings
    from flexmb.forces.nonlinear_spring import NonlinearSpringGroup
    part = NonlinearSpringGroup.pack_compiled([])
    assert isinstance(part, NonlinearSprings) and part.table.n.size == 0 and part.sides.shape == (0, 4)
    r, vals = np.zeros(14), np.zeros(4)
    assert eq.nonlinear_spring_terms(part, np.ones(14), np.ones(14), 1.0, 1.0, True, r, vals)
    assert not r.any() and not vals.any()
    assert eq.nonlinear_springs_power(np.ones(7), np.ones(7), part) == 0.0
    full = NonlinearSpringGroup.pack_compiled([(g, np.zeros(0, dtype=np.int64)) for g in
                                               pendulum(linear_table(1.0)).compile().of_family("nonlinear springs")])
    assert all(np.asarray(a).dtype == np.asarray(b).dtype and np.ndim(a) == np.ndim(b)
               for a, b in zip(part[1:], full[1:]))
