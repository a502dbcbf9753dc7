"""Rope-pulley contacts (flexmb/contact/rope.py) on the compiled step against the general path.

The compiled step evaluates the pairs with the group's own kernel (flexmb/compiled/rope.py ``evaluate_pairs``,
called from ``equations``), so both paths run the same arithmetic and differ only in the order of the LU's
floating-point operations (and, for the sparse model, not at all in the equations: SuperLU factors both). The
tolerances are those of tests/test_compiled_step.py: 1e-10 m / rad where the steps are the same, four orders under
the Newton tolerance, which a missing or wrong term exceeds at the first step of contact; 1e-8 m where the contact
onsets are interpolated (the cut times move by round-off, see test_contact_models_take_the_compiled_step).
"""
from __future__ import annotations

import numpy as np
import pytest

import flexmb as fm
from flexmb.contact import CoulombRamp, RopePulleyContact, over_pulley_points, rope_chain
from flexmb.solvers import compiled_step as cs
from flexmb.solvers.stepper import AlphaIntegrator

AGREE = 1e-10


def _small_rope(mu: float = 0.3, shape: str = "linear") -> fm.System:
    """A pulley on an axle, 8 rope segments over it (spherical joints) dropped from 2 cm above the rim, two unequal
    end masses: the segments strike the rim (onsets), slide and then grip under friction (``mu`` > 0; a linear or
    tanh Coulomb ramp), while the hanging ones stay apart. 35 unknowns of the dense compiled step."""
    s = fm.System(gravity=(0.0, -9.81, 0.0), name="small rope")
    pulley = s.add(fm.RigidBody(2.0, (0.05, 0.05, 0.08), name="pulley"))
    s.add(fm.Revolute(s.ground, pulley, (0.0, 0.0, 0.0), (0.0, 0.0, 1.0), name="axle"))
    pts = over_pulley_points(8, 0.3, 2.0) + np.array([0.0, 0.02, 0.0])
    rope = rope_chain(s, pts, 0.5, diameter=0.02, name="rope")
    m1 = s.add(fm.RigidBody(1.0, (1e-3,) * 3, position=pts[0], name="m1"))
    m2 = s.add(fm.RigidBody(1.5, (1e-3,) * 3, position=pts[-1], name="m2"))
    s.add(fm.Spherical(rope.segments[0], m1, pts[0], name="h1"))
    s.add(fm.Spherical(rope.segments[-1], m2, pts[-1], name="h2"))
    s.add(RopePulleyContact(pulley, rope, 0.3, 2e4, 20.0, friction=CoulombRamp(mu, 0.05, shape=shape) if mu else None,
                            name="rim"))
    return s


def _paths(monkeypatch, build, paths, **kw):
    """The model run on each of ``paths``: "blocks" (the default: blocks of compiled steps), "single" (single compiled
    steps), "evaluation" (the general step with the compiled evaluation) and "general" (neither); checks that each
    run took its path (tests/mutations.py switches the compiled ones off) and returns (system, result) pairs."""
    out = []
    for path in paths:
        s = build()
        if path == "single":
            monkeypatch.setattr(AlphaIntegrator, "can_advance", lambda self: False)
        if path in ("general", "evaluation"):
            monkeypatch.setattr(cs.CompiledStep, "qualifies", staticmethod(lambda asm, reuse: False))
        if path == "general":
            monkeypatch.setattr(cs.CompiledEvaluation, "qualifies", staticmethod(lambda asm: False))
        res = fm.simulate(s, progress=False, **kw)
        monkeypatch.undo()
        _took(res, path)
        out.append((s, res))
    return out


def _took(res, path: str) -> None:
    """The run took ``path`` (see :func:`_paths`). ``stats["compiled_steps"]`` counts the steps the compiled step
    converged: the accepted steps of its blocks and its single attempts, accepted or rejected after it (a contact
    block's own rejections are not counted), so steps <= compiled_steps <= steps + rejected when every step went
    through it; ``stats["compiled_evaluations"]`` the Newton iterations evaluated by the compiled evaluation."""
    st = res.stats
    if path in ("blocks", "single"):
        assert 0 < st["steps"] <= st["compiled_steps"] <= st["steps"] + st["rejected"], st
        assert (st["blocks"] > 0) == (path == "blocks"), st
    elif path == "evaluation":
        assert st["compiled_steps"] == 0 and st["compiled_evaluations"] == st["newton_iterations"] > 0, st
    else:
        assert st["compiled_steps"] == 0 and st["compiled_evaluations"] == 0, st


def _same(fast, ref, q_tol: float, t_tol: float) -> None:
    assert fast.t.shape == ref.t.shape and np.max(np.abs(fast.t - ref.t)) < t_tol
    assert np.max(np.abs(fast.q - ref.q)) < q_tol
    for key in ("steps", "rejected", "newton_iterations", "factorizations"):
        assert fast.stats[key] == ref.stats[key], key
    assert np.max(np.abs(fast.work_nc - ref.work_nc)) < 1e-8 * np.max(np.abs(ref.work_nc))
    e_fast, e_ref = fast.energy()["total"], ref.energy()["total"]
    assert np.max(np.abs(e_fast - e_ref)) < 1e-8 * np.max(np.abs(ref.energy()["kinetic"]))
    assert fast.message == ref.message


@pytest.mark.parametrize("mu, shape", [(0.3, "linear"), (0.2, "tanh"), (0.0, "linear")])
def test_dense_rope_model_takes_the_compiled_step(monkeypatch, mu, shape):
    """Blocks of compiled steps (flexmb/compiled/blocks.py run_block, the rope pairs' penetrations after the
    pairs'), single compiled steps and the general path: the same steps, Newton counts, positions and work (the
    friction and damping power of the pairs in the balance)."""
    build = lambda: _small_rope(mu, shape)        # noqa: E731
    asm = build().compile()
    assert cs.CompiledStep.qualifies(asm, reuse_matrix=False)
    kw = dict(t_end=0.3, h=1e-3, h_contact=2.5e-4)
    (s, fast), (_, single), (s3, ref) = _paths(monkeypatch, build, ("blocks", "single", "general"), **kw)
    assert fast.stats["blocks"] > 0 and fast.stats["steps"] > 2 * 300      # blocks, h_contact while touching
    _same(fast, single, AGREE, 1e-14)
    _same(fast, ref, 1e-8, 1e-9)
    from flexmb.contact.rope import rope_pulley_forces
    f = rope_pulley_forces(ref, next(x for x in s3.forces if x.name == "rim"))
    assert f["Fn"].max() > 1.0 and (f["delta"][-1] < 0).any()           # pairs pressed, others apart
    if mu:
        assert np.abs(f["ft"]).max() > 0.1 and np.max(np.abs(ref.work_nc)) > 1e-3     # friction worked


def test_sparse_rope_model_takes_the_compiled_evaluation(monkeypatch):
    """The chain over the pendulum's pulley (verification/ropes/pendulum.py: 31 bodies, 374 unknowns, SuperLU) for
    0.05 s: one compiled evaluation per Newton iteration against the general path's group calls; no onsets are
    located (contact_tol = inf, as the case), so the steps are the same and the trajectories equal to round-off."""
    from verification.ropes.pendulum import build
    asm = build()[0].compile()
    assert not cs.CompiledStep.qualifies(asm, reuse_matrix=True) and cs.CompiledEvaluation.qualifies(asm)
    kw = dict(t_end=0.05, h=2.5e-4, contact_tol=np.inf)
    (_, fast), (_, ref) = _paths(monkeypatch, lambda: build()[0], ("evaluation", "general"), **kw)
    _same(fast, ref, AGREE, 1e-14)
    assert np.max(np.abs(ref.work_nc)) > 1e-4


def test_user_friction_law_leaves_the_compiled_step():
    """A user FrictionLaw subclass has no compiled counterpart: the model leaves the compiled step; its residual is
    the compiled evaluation with the rope group called beside the compiled model, equal to the assembly's."""
    from flexmb.contact.friction import FrictionLaw

    class Mine(FrictionLaw):
        def coefficient(self, s):
            s = np.asarray(s, dtype=float)
            th = np.tanh(s / 0.05)
            return 0.3 * th, 6.0 * (1 - th ** 2), np.where(s > 1e-9, 0.3 * th / np.maximum(s, 1e-9), 6.0)

    s = _small_rope(0.0)
    rim = next(x for x in s.forces if x.name == "rim")
    rim.friction = Mine()
    asm = s.compile()
    assert not cs.CompiledStep.qualifies(asm, reuse_matrix=False) and cs.CompiledEvaluation.qualifies(asm)
    ev = cs.CompiledEvaluation(asm)
    assert [type(g).__name__ for g, _, _ in ev._side] == ["RopePulleyGroup"]
    rng = np.random.default_rng(3)
    res = fm.simulate(s, 0.05, 1e-3, progress=False)
    k = res.q.shape[0] - 1
    q, v, vd, lam, t = res.q[k], res.v[k], res.vd[k], res.lam[k], res.t[k]
    v = v + 1e-3 * rng.standard_normal(v.size)          # slip on the rim: the user law's friction acts
    coef = (1.2, 3e-4, 2.5e-7, 2.5e-7, 0.0)
    r, rows, S = ev.residual(q, v, vd, lam, t, coef)
    r0, rows0, S0 = asm.residual(q, v, vd, lam, t, coef=coef)
    S, S0 = (x.toarray() if hasattr(x, "toarray") else x for x in (S, S0))
    assert np.max(np.abs(r - r0)) < 1e-12 * np.max(np.abs(r0))     # the same terms summed in another order
    assert np.max(np.abs(rows.phi - rows0.phi)) < 1e-14
    assert np.max(np.abs(S - S0)) < 1e-12 * np.max(np.abs(S0))
    assert res.stats["compiled_evaluations"] > 0
