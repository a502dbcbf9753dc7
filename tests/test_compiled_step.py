"""The compiled step (flexmb/compiled/step.py) against the general Newton step it repeats.

Both run the same arithmetic (residual, Newton matrix, increment, convergence test); they differ only in
the order of floating-point operations of the LU (LAPACK getrf against the compiled sparse-skipping LU),
so trajectories must agree to round-off amplified by the run: 1e-10 m / rad over the runs below, four
orders of magnitude under the Newton tolerance (1e-8 relative), which any real difference in the
equations (a missing term, a wrong sign, a skipped row) exceeds at the first step.
"""
from __future__ import annotations

import json
import numpy as np
import pytest

import flexmb as fm
from flexmb.compiled.dense_lu import lu_factor, lu_solve
from flexmb.solvers import compiled_step as cs

AGREE = 1e-10


def _compiled(res) -> None:
    """The run was taken by the compiled step: ``stats["compiled_steps"]`` counts the steps the compiled step
    converged (a step it declines is taken by the general path and not counted), the accepted steps of its blocks
    and its single attempts, accepted or rejected after it (error control, contact onsets); attempts a contact
    block rejects inside itself are not counted. So steps <= compiled_steps <= steps + rejected when every step
    went through it. Fails when the compiled step declines steps (tests/mutations.py)."""
    st = res.stats
    assert 0 < st["steps"] <= st["compiled_steps"] <= st["steps"] + st["rejected"], st


def _general(res) -> None:
    """No step of the run was taken by the compiled step: the reference of a comparison is the general path."""
    assert res.stats["compiled_steps"] == 0 and res.stats["blocks"] == 0, res.stats


def _every_kind() -> tuple[fm.System, list[str]]:
    """Rigid bodies joined by every primitive kind: point (spherical, revolute), dot1 (revolute,
    universal), dot2 and a displacement driver (prismatic), distance, angle (driven revolute), coordinate
    (driven coordinate); a planar four-bar of revolutes adds redundant rows switched off at the start."""
    s = fm.System(gravity=(0.0, -9.81, 0.0), name="every kind")
    z = (0.0, 0.0, 1.0)
    crank = s.add(fm.RigidBody(1.0, (1e-3, 4e-3, 4e-3), position=(0.1, 0.0, 0.0), name="crank"))
    rev = s.add(fm.Revolute(s.ground, crank, (0.0, 0.0, 0.0), z, name="O"))
    s.add(fm.Driver(rev, angle=fm.TimeFunction(lambda t: 2.0 * t + 0.5 * t * t, lambda t: 2.0 + t, lambda t: 1.0),
                    name="crank angle"))
    rod = s.add(fm.RigidBody(1.0, (1e-3, 2e-2, 2e-2), position=(0.45, 0.0, 0.0), name="rod"))
    s.add(fm.Revolute(crank, rod, (0.2, 0.0, 0.0), z, name="A"))
    rocker = s.add(fm.RigidBody(1.0, (1e-3, 1e-2, 1e-2), position=(0.7, 0.15, 0.0), name="rocker"))
    s.add(fm.Revolute(rod, rocker, (0.7, 0.0, 0.0), z, name="B"))
    s.add(fm.Revolute(s.ground, rocker, (0.7, 0.3, 0.0), z, name="C"))        # closes the loop: redundant rows
    pend = s.add(fm.RigidBody(0.5, (2e-3, 1e-3, 2e-3), position=(-0.3, -0.2, 0.1), name="pendulum"))
    s.add(fm.Spherical(s.ground, pend, (-0.3, 0.0, 0.1), name="ball"))
    s.add(fm.Distance(crank, pend, point_a=(0.2, 0.0, 0.0), point_b=(-0.3, -0.4, 0.1), name="rope"))
    sl = s.add(fm.RigidBody(0.3, (1e-3, 1e-3, 1e-3), position=(0.0, -0.6, 0.0), name="slider"))
    pri = s.add(fm.Prismatic(s.ground, sl, (0.0, -0.6, 0.0), (1.0, 0.0, 0.0), name="rail"))
    s.add(fm.Driver(pri, displacement=lambda t: 0.1 * np.sin(3.0 * t), name="push"))
    cube = s.add(fm.RigidBody(0.2, (1e-3, 1e-3, 1e-3), position=(0.0, 0.5, 0.0), velocity=(0.0, 0.0, 0.3),
                              angular_velocity=(0.4, 1.0, -2.0), name="cube"))
    s.add(fm.Universal(s.ground, cube, point=(0.0, 0.6, 0.0), axis_a=(1.0, 0.0, 0.0), axis_b=(0.0, 1.0, 0.0),
                       name="cardan"))
    lift = s.add(fm.RigidBody(0.1, (1e-4, 2e-4, 3e-4), position=(0.5, 0.8, 0.0), angular_velocity=(1.0, 2.0, 0.5),
                              name="lift"))
    s.add(fm.Driver(lift, coordinate="y", value=lambda t: 0.8 + 0.2 * t * t, name="hoist"))
    return s, ["crank", "rod", "rocker", "pendulum", "slider", "cube", "lift"]


def _run(monkeypatch, compiled: bool, t_end: float = 0.3, **kw):
    """The every-kind model run on the compiled step or (``compiled=False``) on the general path; checks that
    the run took the path asked for."""
    if not compiled:
        monkeypatch.setattr(cs.CompiledStep, "qualifies", staticmethod(lambda asm, reuse: False))
    s, _ = _every_kind()
    with pytest.warns(UserWarning):          # the four-bar's redundant rows are switched off, with a warning
        res = fm.simulate(s, t_end=t_end, h=2e-3, **kw)
    monkeypatch.undo()
    (_compiled if compiled else _general)(res)
    return s, res


def test_every_kind_model_takes_the_compiled_step(monkeypatch):
    s, _ = _every_kind()
    asm = s.compile()
    assert cs.CompiledStep.qualifies(asm, reuse_matrix=False)
    assert {g.kind for g in asm.groups} == {"point", "dot1", "dot2", "distance", "angle", "coordinate"}
    _, res = _run(monkeypatch, True, t_end=0.02)
    _compiled(res)


@pytest.mark.parametrize("kw", [{}, {"adaptive": True, "rtol": 1e-5}, {"method": "hht", "rho_inf": 0.7}])
def test_compiled_step_repeats_the_general_step(monkeypatch, kw):
    _, fast = _run(monkeypatch, True, **kw)
    _, ref = _run(monkeypatch, False, **kw)
    assert fast.t.shape == ref.t.shape
    assert np.max(np.abs(fast.q - ref.q)) < AGREE
    assert np.max(np.abs(fast.lam - ref.lam)) < 1e-6 * max(1.0, np.max(np.abs(ref.lam)))
    assert fast.stats["newton_iterations"] == ref.stats["newton_iterations"]
    # the drivers' work (trapezoidal integral of their power) is booked alike
    assert np.max(np.abs(fast.work_drivers - ref.work_drivers)) < 1e-9 * max(1.0, np.max(np.abs(ref.work_drivers)))
    assert np.max(np.abs(ref.work_drivers)) > 1e-3          # the drivers did work
    assert fast.redundant == ref.redundant and fast.redundant      # rows switched off on both paths


def test_models_with_other_elements_take_the_general_step():
    s, _ = _every_kind()
    a, b = s.bodies[0], s.bodies[1]
    s.add(fm.CrushElement(a, b, point_a=(0.1, 0.0, 0.0), point_b=(0.45, 0.0, 0.0), curve=([0.0, 0.5], [0.0, 1e3]),
                          unloading_stiffness=1e5, name="crush"))
    assert not cs.CompiledStep.qualifies(s.compile(), reuse_matrix=False)
    s, _ = _every_kind()
    assert not cs.CompiledStep.qualifies(s.compile(), reuse_matrix=True)     # sparse runs keep their matrix


def test_failed_compiled_step_reports_through_the_general_path(monkeypatch):
    """A step the compiled Newton iteration does not converge is taken again by the general path, which
    retries smaller steps and finally raises the ConvergenceError with its diagnostics."""
    calls = []
    original = cs.CompiledStep.step

    def spy(self, *args):
        out = original(self, *args)
        calls.append(out is None)
        return out

    monkeypatch.setattr(cs.CompiledStep, "step", spy)
    s = fm.System(gravity=(0.0, -9.81, 0.0))
    b = s.add(fm.RigidBody(1.0, (1e-3, 1e-3, 1e-3), position=(1.0, 0.0, 0.0), velocity=(0.0, 30.0, 0.0),
                           name="bob"))
    s.add(fm.Spherical(s.ground, b, (0.0, 0.0, 0.0), name="pivot"))
    with pytest.raises(fm.errors.ConvergenceError, match="Newton iteration failed"):
        fm.simulate(s, t_end=0.5, h=5e-2, h_min=1e-2, max_newton=2)      # two iterations cannot hold |r| = 1
    assert calls and all(calls)          # every attempt went through the compiled step and failed there


def test_specialized_step_equals_the_universal_step(monkeypatch):
    """The step specialized to a model's families (absent families None, left out of the compile;
    flexmb/compiled/specialization.py) runs the arithmetic of the universal step in the same order: equal
    trajectories, multipliers and energies bit for bit (any difference would be a term or order that changed).
    The model is the warm-up's pendulum, whose specialized step ``flexmb compile-kernels`` compiles."""
    from flexmb.compiled import blocks, specialization
    from flexmb.warm import pendulum
    runs = {}
    for variant in ("universal", "specialized"):
        monkeypatch.setattr(specialization, "variant", variant)
        res = fm.simulate(pendulum(), 0.2, 1e-3, progress=False)
        runs[variant] = (res, res.energy())
    (u, eu), (sp, es) = runs["universal"], runs["specialized"]
    for name in ("t", "q", "v", "lam"):
        assert np.array_equal(getattr(u, name), getattr(sp, name)), name
    assert all(np.array_equal(a, b) for a, b in zip(eu, es))
    assert u.stats["steps"] == 200 and u.stats["newton_iterations"] == sp.stats["newton_iterations"]
    _compiled(u)
    _compiled(sp)
    # the specialized run compiled (or loaded) a step whose absent parts are None
    assert any("none" in str(sig) for sig in blocks.run_block.signatures)
    step = cs.CompiledStep(pendulum().compile())
    model = step.specialized_model()
    present = [name for name in model._fields if getattr(model, name) is not None]
    assert present == ["bodies", "joints", "norm"]
    assert model.joints.kinds == (1, 1, None, None, None, None)    # point and dot1 rows only (two revolutes)


@pytest.fixture
def probe_entry():
    """A small entry point with an optional part (None in its specialized form), like the step's model parts."""
    from numba import njit

    @njit(cache=False)
    def entry(x, part):
        return x.sum() if part is None else x.sum() + part.sum()
    return entry


def test_auto_variant_follows_the_record_of_compiles(monkeypatch, tmp_path, capsys, probe_entry):
    """Under ``variant = "auto"`` an entry point takes its specialized form when flexmb's record of compiles
    (``KernelRecord``, not numba's cache internals) has it, else the universal one when the record has that, else
    the specialized one, compiled at once with a notice on stderr naming its families and then recorded; a record
    made for other kernel sources is void."""
    from numba import config

    from flexmb.compiled import specialization
    monkeypatch.setattr(config, "CACHE_DIR", str(tmp_path))      # the record only: numba's dispatchers keep theirs
    monkeypatch.setattr(specialization, "variant", "auto")
    x = np.ones(3)
    full, special = (x, np.ones(2)), (x, None)

    def universal():
        return specialization.universal(probe_entry, full, special, "probe parts")

    assert not universal()                      # nothing on record: the specialized form, announced and recorded
    err = capsys.readouterr().err
    assert "compiling 'entry' for probe parts" in err, err
    record = specialization.KernelRecord.load()
    assert record.path.parent == tmp_path and record.has(probe_entry, special) and not record.has(probe_entry, full)
    assert len(probe_entry.signatures) == 1     # compiled by the choice, before any call
    assert not universal() and capsys.readouterr().err == ""     # on record: no notice
    # only the universal form on record: that one, with no compile of the specialized one
    data = json.loads(record.path.read_text())
    data["entries"] = {specialization.KernelRecord.key(probe_entry, specialization._signature(full)):
                       {"function": "entry", "form": "universal", "families": "all", "seconds": 1.0}}
    record.path.write_text(json.dumps(data))
    assert universal() and capsys.readouterr().err == ""
    # a record of other kernel sources (another stamp) is void: the specialized form again
    data["stamp"] = "other"
    record.path.write_text(json.dumps(data))
    assert not universal() and "compiling 'entry'" in capsys.readouterr().err
    monkeypatch.setattr(specialization, "variant", "fastest")
    with pytest.raises(fm.errors.ModelError, match="FLEXMB_STEP"):
        universal()


def test_a_run_announces_the_step_it_compiles(monkeypatch, tmp_path, capsys):
    """A run whose step is not on record says so on stderr, naming the families the step is compiled for, and
    records it (the pendulum's specialized step is in numba's disk cache after the warm-up: loaded, not compiled,
    but the notice comes from flexmb's record, which is empty here)."""
    from numba import config

    from flexmb.compiled import blocks, specialization
    from flexmb.warm import pendulum
    monkeypatch.setattr(config, "CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(specialization, "variant", "auto")
    res = fm.simulate(pendulum(), 0.01, 1e-3, progress=False)
    _compiled(res)
    err = capsys.readouterr().err
    assert "compiling the time step for rigid bodies, joint rows (point, dot1)" in err, err
    entries = specialization.KernelRecord.load().entries.values()
    assert {(e["function"], e["form"]) for e in entries} >= {("run_block", "specialized")}


def test_the_choice_reads_no_numba_internals():
    """The form of the step is chosen through public API only (issue 24): no module of flexmb reaches into
    numba's dispatcher or cache internals."""
    import re
    from pathlib import Path
    internals = re.compile(r"\._cache\.\w|\.overloads\b|_index_key|_load_index|_cache_file")
    for f in Path(fm.__file__).parent.rglob("*.py"):
        assert not internals.search(f.read_text()), f


def test_a_first_compile_says_so_once(monkeypatch, capsys):
    """A numba compile of a flexmb kernel that a run meets prints one line on stderr, once per process (numba's
    event API; a kernel loaded from the disk cache raises no event)."""
    from numba import njit

    from flexmb.compiled import notice
    monkeypatch.setitem(notice._state, "said", False)
    notice.install()

    def probe(x):
        return x + 1.0
    probe.__module__ = "flexmb.probe"
    kernels = [njit(probe), njit(probe)]        # not cached: each compiles on its first call
    assert kernels[0](1.0) == 2.0 and kernels[1](1.0) == 2.0
    err = capsys.readouterr().err
    assert err.count("flexmb: compiling the numba kernels") == 1 and "flexmb.probe.probe" in err, err


def test_sparse_skipping_lu_solves_like_numpy():
    rng = np.random.default_rng(3)
    A = rng.standard_normal((30, 30)) * (rng.random((30, 30)) < 0.2) + np.diag(rng.random(30) * 1e-3)
    A[:, 5] = 0.0
    A[5, 5], A[7, 5] = 0.0, 2.0                # a zero diagonal that needs pivoting
    b = rng.standard_normal(30)
    LU, piv, x = A.copy(), np.empty(30, dtype=np.int64), np.empty(30)
    assert lu_factor(LU, piv) > 0.0
    lu_solve(LU, piv, b, x)
    assert np.allclose(x, np.linalg.solve(A, b), rtol=1e-10, atol=1e-12)
    S = np.ones((3, 3))
    assert lu_factor(S, np.empty(3, dtype=np.int64)) < 1e-14      # singular


def _flexible_model(kind: str) -> fm.System:
    """A spinning-up flexible beam (modal with stiffening, or a nonlinear beam) on a driven hub, with a
    rigid tip mass on a spherical joint and a second flexible body of other modal count hanging from it."""
    n = 6
    points = np.column_stack([np.linspace(0.0, 1.0, n + 1), np.zeros(n + 1), np.zeros(n + 1)])
    mesh = fm.FEMesh(points, {"line": np.column_stack([np.arange(n), np.arange(1, n + 1)])},
                     node_sets={"root": [0], "tip": [n]})
    model = fm.FEModel(mesh, fm.Material(E=7e10, nu=0.3, rho=2700.0), sections=fm.BeamSection.rectangle(0.04, 0.02))
    s = fm.System(gravity=(0.0, -9.81, 0.0), name=kind)
    if kind == "modal":
        modes = fm.craig_bampton(model, {"root": "root"}, n_modes=4, reference="root", stress=False)
        beam = s.add(fm.FlexibleBody(modes, stiffening=True, damping=0.02, name="beam"))
    else:
        beam = s.add(fm.NonlinearBeam(model, "root", name="beam"))
    hub = s.add(fm.Revolute(s.ground, beam, (0.0, 0.0, 0.0), (0.0, 0.0, 1.0), name="hub"))
    s.add(fm.Driver(hub, angle=fm.TimeFunction.spin_up(3.0, 0.5), name="spin"))
    tip = s.add(fm.RigidBody(0.2, (1e-4, 1e-4, 1e-4), position=(1.0, -0.1, 0.0), name="tip"))
    s.add(fm.Spherical(beam, tip, (1.0, 0.0, 0.0), name="hook"))
    modes2 = fm.craig_bampton(model, {"root": "root"}, n_modes=2, reference="root", stress=False)
    arm = s.add(fm.FlexibleBody(modes2, position=(1.0, -0.1, 0.0), name="arm"))
    s.add(fm.Revolute(tip, arm, (1.0, -0.1, 0.0), (0.0, 0.0, 1.0), name="elbow"))
    return s


@pytest.mark.parametrize("kind", ["modal", "nonlinear-beam"])
def test_flexible_models_take_the_compiled_step(monkeypatch, kind):
    """Modal bodies (stiffened, damped) and nonlinear beams, jointed to rigid bodies and to each other
    (primitive groups of modal counts (0, m), (m, 0), (0, 2), ...), on the compiled step and in blocks:
    the same trajectories, Newton counts and energy bookkeeping as the general step."""
    s = _flexible_model(kind)
    assert cs.CompiledStep.qualifies(s.compile(), reuse_matrix=False)
    fast = fm.simulate(s, t_end=0.2, h=2e-3)
    _compiled(fast)
    assert fast.stats["blocks"] > 0
    monkeypatch.setattr(cs.CompiledStep, "qualifies", staticmethod(lambda asm, reuse: False))
    ref = fm.simulate(_flexible_model(kind), t_end=0.2, h=2e-3)
    _general(ref)
    assert np.max(np.abs(fast.q - ref.q)) < AGREE
    assert fast.stats["newton_iterations"] == ref.stats["newton_iterations"]
    for key in ("work_nc", "work_drivers"):
        got, want = getattr(fast, key), getattr(ref, key)
        assert np.max(np.abs(got - want)) < 1e-9 * max(1.0, np.max(np.abs(want)))
    assert np.max(np.abs(ref.work_drivers)) > 1e-3


def _sprung(angle_springs: bool) -> fm.System:
    """A flywheel-like pendulum with a body hung from it on spring-dampers (point-to-point, rotational with a
    winding angle, bushing)."""
    s = fm.System(gravity=(0.0, -9.81, 0.0), name="sprung")
    a = s.add(fm.RigidBody(1.0, (0.5, 0.5, 1.0), position=(0.5, 0.0, 0.0), angular_velocity=(0.0, 0.0, 30.0),
                           name="a"))
    b = s.add(fm.RigidBody(0.5, (5e-3, 5e-3, 5e-3), position=(1.0, -0.5, 0.0), name="b"))
    hinge = (0.0, 0.0, 0.0)
    s.add(fm.Revolute(s.ground, a, hinge, (0.0, 0.0, 1.0), name="hinge"))
    if angle_springs:
        s.add(fm.RotationalSpringDamper(s.ground, a, (0.0, 0.0, 1.0), k=0.5, c=0.002, name="winder"))
    s.add(fm.SpringDamper(a, b, point_a=(1.0, 0.0, 0.0), point_b=(1.0, -0.5, 0.0), k=400.0, c=2.0,
                          free_length=0.45, name="coil"))
    s.add(fm.Bushing(a, b, (1.0, -0.5, 0.0), stiffness=[50, 60, 70, 1, 2, 3], damping=[.5, .5, .5, 1e-3, 1e-3, 1e-3],
                     name="mount"))
    return s


@pytest.mark.parametrize("angle_springs", [False, True])
def test_spring_models_take_the_compiled_step(monkeypatch, angle_springs):
    """Spring-dampers, bushings and a rotational spring that winds up through several turns (its unwrapping
    reference is history, carried through blocks): the compiled step equals the general one, the damper work
    included, and the history after the run is the same."""
    s = _sprung(angle_springs)
    assert cs.CompiledStep.qualifies(s.compile(), reuse_matrix=False)
    fast = fm.simulate(s, t_end=0.5, h=1e-3)
    _compiled(fast)
    assert fast.stats["blocks"] > 0
    monkeypatch.setattr(cs.CompiledStep, "qualifies", staticmethod(lambda asm, reuse: False))
    ref = fm.simulate(_sprung(angle_springs), t_end=0.5, h=1e-3)
    _general(ref)
    assert np.max(np.abs(fast.q - ref.q)) < AGREE
    assert np.max(np.abs(fast.work_nc - ref.work_nc)) < 1e-9 * np.max(np.abs(ref.work_nc))
    assert np.max(np.abs(ref.work_nc)) > 1e-2                   # the dampers dissipated
    assert np.allclose(fast.history, ref.history, rtol=0, atol=1e-9)
    if angle_springs:
        assert np.max(np.abs(ref.history[:, 1])) > np.pi           # wound past pi: the unwrapping reference matters
    assert fast.message == ref.message == "completed"


def _three_paths(monkeypatch, build, **kw):
    """A contact model run three ways: in blocks of compiled steps (the default), in single compiled steps
    (blocks switched off) and on the general path; checks that each run took its path and returns the systems and
    results of each."""
    from flexmb.solvers.stepper import AlphaIntegrator
    runs = []
    for path in ("blocks", "single", "general"):
        s = build()
        if path == "single":
            monkeypatch.setattr(AlphaIntegrator, "can_advance", lambda self: False)
        if path == "general":
            monkeypatch.setattr(cs.CompiledStep, "qualifies", staticmethod(lambda asm, reuse: False))
        res = fm.simulate(s, **kw)
        monkeypatch.undo()
        if path == "general":
            _general(res)
        else:
            _compiled(res)
            assert (res.stats["blocks"] > 0) == (path == "blocks"), (path, res.stats)
        runs.append((s, res))
    return runs


def _same_run(fast, ref, q_tol: float, t_tol: float, history_tol: float) -> None:
    """Two runs of one contact model: the same steps and Newton counts, positions, work and history."""
    assert fast.t.shape == ref.t.shape and np.max(np.abs(fast.t - ref.t)) < t_tol
    assert np.max(np.abs(fast.q - ref.q)) < q_tol
    assert np.allclose(fast.history, ref.history, rtol=0, atol=history_tol)
    assert np.max(np.abs(fast.work_nc - ref.work_nc)) < 1e-8 * np.max(np.abs(ref.work_nc))
    assert np.max(np.abs(fast.work_drivers - ref.work_drivers)) <= 1e-8 * np.max(np.abs(ref.work_drivers))
    for key in ("steps", "rejected", "newton_iterations", "factorizations"):
        assert fast.stats[key] == ref.stats[key], key
    assert fast.message == ref.message
    assert abs(fast.stats["energy_drift"] - ref.stats["energy_drift"]) < 1e-9    # the energy checks' balance


def test_contact_models_take_the_compiled_step(monkeypatch):
    """The occupant model of the example crash study (rigid links, driven sled, angle springs, a sphere-plane
    contact with the Lankarani-Nikravesh law and its approach-speed history) in blocks of compiled steps, in
    single compiled steps and on the general path. Blocks end before a contact onset, which the integrator
    locates as for single steps, and take the same steps: positions equal single compiled steps to 1e-10 (the
    same arithmetic; only the work sums differ in order). Against the general path the onset cuts interpolate
    the penetration, whose round-off differences between the two paths (1e-16 relative) move the cut times by
    up to 5e-11 s (measured); at the head's 13 m/s that is 5e-10 m and 1e-8 m/s: tolerances 1e-9 s, 1e-8 m,
    1e-6 of the peak contact force and of the approach speeds."""
    from verification.occupant import build
    s, kw = build({"v": 13.4, "setback": 0.15})
    assert cs.CompiledStep.qualifies(s.compile(), reuse_matrix=False)
    (s, fast), (_, single), (s2, ref) = _three_paths(monkeypatch, lambda: build({"v": 13.4, "setback": 0.15})[0], **kw)
    assert 0 < fast.stats["blocks"] < fast.stats["steps"] / 4     # blocks of several steps were taken
    _same_run(fast, single, AGREE, 1e-14, AGREE)
    _same_run(fast, ref, 1e-8, 1e-9, 1e-6)
    bulkhead = next(f for f in s.forces if f.name == "bulkhead")
    force = ref.contact_force(next(f for f in s2.forces if f.name == "bulkhead"))
    assert np.max(force) > 1e3                                  # the head struck the bulkhead
    assert np.max(np.abs(fast.contact_force(bulkhead) - force)) < 1e-6 * np.max(force)
    e_fast, e_ref = fast.energy()["total"], ref.energy()["total"]
    assert np.max(np.abs(e_fast - e_ref)) < 1e-8 * np.max(np.abs(ref.energy()["kinetic"]))


def _rattle(friction: bool = False) -> fm.System:
    """Contacts of every pair kind, apart and touching many times: a ball bouncing on the floor (sphere-plane,
    Lankarani-Nikravesh), a pendulum whose bob strikes a second hanging bob (sphere-sphere, Hunt-Crossley) and a
    pendulum hanging in a journal bearing with radial clearance (clearance joint, linear spring-damper), held in
    its plane by a planar joint. ``friction``: the floor with Brown & McPhee friction, the bobs with a tanh Coulomb
    ramp, the journal with a linear ramp with a dead zone (the ball spins up on the floor)."""
    from flexmb.contact import (BrownMcPhee, ClearanceJoint, CoulombRamp, HuntCrossley, LankaraniNikravesh,
                                LinearSpringDamper, SphereSphereContact)
    laws = ((BrownMcPhee(0.5, 0.3, 0.01), CoulombRamp(0.2, 0.02, shape="tanh"), CoulombRamp(0.1, 0.05, 0.01))
            if friction else (None, None, None))
    s = fm.System(gravity=(0.0, -9.81, 0.0), name="rattle")
    z = (0.0, 0.0, 1.0)
    ball = s.add(fm.RigidBody(0.2, (1e-4, 1e-4, 1e-4), position=(0.0, 0.08, 0.0), velocity=(0.3, 0.0, 0.0),
                              name="ball"))
    s.add(fm.SpherePlaneContact(s.ground, ball, point=(0.0, 0.0, 0.0), normal=(0.0, 1.0, 0.0), center=(0.0, 0.08, 0.0),
                                radius=0.05, law=LankaraniNikravesh(2e6, 0.8), friction=laws[0], name="floor"))
    bob1 = s.add(fm.RigidBody(0.5, (1e-4, 1e-4, 1e-4), position=(0.6, 0.3, 0.0), name="bob1"))
    s.add(fm.Revolute(s.ground, bob1, (1.0, 0.3, 0.0), z, name="hinge1"))
    bob2 = s.add(fm.RigidBody(0.5, (1e-4, 1e-4, 1e-4), position=(1.1, -0.1, 0.0), name="bob2"))
    s.add(fm.Revolute(s.ground, bob2, (1.1, 0.3, 0.0), z, name="hinge2"))
    s.add(SphereSphereContact(bob1, bob2, center_a=(0.6, 0.3, 0.0), center_b=(1.1, -0.1, 0.0), radius_a=0.05,
                                 radius_b=0.05, law=HuntCrossley(1e6, 0.7), friction=laws[1], name="bobs"))
    arm = s.add(fm.RigidBody(1.0, (1e-3, 1e-3, 1e-3), position=(2.0, 0.0, 0.0), angular_velocity=(0.0, 0.0, 3.0),
                             name="arm"))
    s.add(fm.Planar(s.ground, arm, (2.0, 0.0, 0.0), z, name="plane"))
    s.add(ClearanceJoint(s.ground, arm, point=(2.0, 0.2, 0.0), axis=z, clearance=1e-3, radius_pin=0.01,
                            law=LinearSpringDamper(1e6, 0.5, 1.0), friction=laws[2], name="journal"))
    return s


@pytest.mark.parametrize("save_every", [1, 7])
def test_contact_blocks_of_every_pair_kind(monkeypatch, save_every):
    """Three contact groups (sphere-plane, sphere-sphere, clearance) that touch and separate many times, with
    saved rows every step or every seventh: blocks of compiled steps equal single compiled steps (1e-10 m, the
    same Newton counts, steps and rejected attempts, histories), and both equal the general path to 1e-8 m
    (contact onsets interpolated, see the test above) with the same counts."""
    kw = dict(t_end=0.4, h=1e-3, h_contact=1e-4, save_every=save_every)
    (_, fast), (_, single), (_, ref) = _three_paths(monkeypatch, _rattle, **kw)
    touches = [np.count_nonzero(np.diff((fast.history[:, k] > 0).astype(int)) == 1)
               for k in (2, 7, 12)]            # each group's in_contact column: how often it began to touch
    assert min(touches) >= 1 and sum(touches) >= 6, touches     # (clearance 4, floor 3, bobs 1)
    _same_run(fast, single, AGREE, 1e-14, AGREE)
    _same_run(fast, ref, 1e-8, 1e-9, 1e-6)


def _loaded() -> fm.System:
    """A pendulum pushed by a global force of time at a body point, a constant body-fixed torque and a
    time-varying global torque."""
    s = fm.System(gravity=(0.0, -9.81, 0.0), name="loaded")
    b = s.add(fm.RigidBody(2.0, (0.02, 0.03, 0.04), position=(0.5, 0.0, 0.0), name="arm"))
    s.add(fm.Spherical(s.ground, b, (0.0, 0.0, 0.0), name="pivot"))
    s.add(fm.Force(b, lambda t: (0.0, 5.0 * np.sin(8.0 * t), 2.0), local_point=(0.5, 0.0, 0.0), name="push"))
    s.add(fm.Torque(b, (0.1, 0.0, 0.3), body_fixed=True, name="twist"))
    s.add(fm.Torque(b, lambda t: (0.0, 0.2 * t, 0.0), name="turn"))
    return s


def test_loaded_models_take_the_compiled_step(monkeypatch):
    """Applied forces and torques (constant, body-fixed, functions of time) on the compiled step and in
    blocks: same trajectories and work of the loads as the general path."""
    s = _loaded()
    assert cs.CompiledStep.qualifies(s.compile(), reuse_matrix=False)
    fast = fm.simulate(s, t_end=0.5, h=1e-3)
    _compiled(fast)
    assert fast.stats["blocks"] > 0
    monkeypatch.setattr(cs.CompiledStep, "qualifies", staticmethod(lambda asm, reuse: False))
    ref = fm.simulate(_loaded(), t_end=0.5, h=1e-3)
    _general(ref)
    assert np.max(np.abs(fast.q - ref.q)) < AGREE
    assert np.max(np.abs(ref.work_nc)) > 1e-2
    assert np.max(np.abs(fast.work_nc - ref.work_nc)) < 1e-9 * np.max(np.abs(ref.work_nc))


def _motored(contact: bool = False) -> fm.System:
    """A crank turned by a DC motor with a time-varying supply against a spring-loaded rocker link (the
    crank-rocker of the verification suite in miniature); the motor owns the charge coordinate. ``contact``: a
    sphere on the crank above a floor it never reaches, so that the run takes contact blocks
    (compiled/step_end.py), which must sample the supply at each step too."""
    s = fm.System(gravity=(0.0, -9.81, 0.0), name="motored")
    z = (0.0, 0.0, 1.0)
    crank = s.add(fm.RigidBody(1.0, (1e-3, 1e-3, 2e-3), position=(0.05, 0.0, 0.0), name="crank"))
    j = s.add(fm.Revolute(s.ground, crank, (0.0, 0.0, 0.0), z, name="O"))
    s.add(fm.DCMotor(j, K_p=0.5, r_a=0.8, L_a=0.01, D=1e-3, voltage=lambda t: 6.0 + 3.0 * np.sin(20.0 * t),
                     current=0.2, name="motor"))
    s.add(fm.SpringDamper(s.ground, crank, point_a=(0.0, 0.3, 0.0), point_b=(0.1, 0.0, 0.0), k=50.0, c=0.5,
                          free_length=0.25, name="spring"))
    if contact:
        s.add(fm.SpherePlaneContact(s.ground, crank, point=(0.0, -1.0, 0.0), normal=(0.0, 1.0, 0.0),
                                    center=(0.05, 0.0, 0.0), radius=0.01,
                                    law=fm.contact.LankaraniNikravesh(1e6, 0.8), name="floor"))
    return s


@pytest.mark.parametrize("kw", [{}, {"adaptive": True}, {"contact": True}],
                         ids=["blocks", "single steps", "contact blocks"])
def test_motor_models_take_the_compiled_step(monkeypatch, kw):
    """DC motors (charge coordinate, torque and back-EMF coupling, supply function of time) on the compiled
    step, in blocks and in single adaptive steps: same trajectories, currents, Newton counts and work as the
    general path."""
    contact = kw.pop("contact", False)
    s = _motored(contact)
    assert cs.CompiledStep.qualifies(s.compile(), reuse_matrix=False)
    fast = fm.simulate(s, t_end=0.3, h=1e-3, **kw)
    _compiled(fast)
    assert (fast.stats["blocks"] > 0) == (not kw)              # adaptive steps are taken one at a time
    monkeypatch.setattr(cs.CompiledStep, "qualifies", staticmethod(lambda asm, reuse: False))
    ref = fm.simulate(_motored(contact), t_end=0.3, h=1e-3, **kw)
    _general(ref)
    assert fast.t.size == ref.t.size
    assert np.max(np.abs(fast.q - ref.q)) < AGREE
    i = s.forces[0].offset
    assert np.max(np.abs(ref.v[:, i])) > 1.0                     # the current moves: the motor is exercised
    assert np.max(np.abs(fast.v[:, i] - ref.v[:, i])) < AGREE * 1e3
    assert fast.stats["newton_iterations"] == ref.stats["newton_iterations"]
    assert np.max(np.abs(fast.work_nc - ref.work_nc)) < 1e-9 * np.max(np.abs(ref.work_nc))


def test_contact_friction_takes_the_compiled_step(monkeypatch):
    """Friction of every built-in law (Brown-McPhee on sphere-plane, tanh ramp on sphere-sphere, linear ramp with
    a dead zone on the clearance journal) in the compiled step and its blocks: blocks equal single compiled
    steps (1e-10) and the general path (1e-8 m, onsets interpolated), with the same counts and the friction work
    in the balance (work_nc to 1e-8 relative)."""
    s = _rattle(friction=True)
    assert cs.CompiledStep.qualifies(s.compile(), reuse_matrix=False)
    kw = dict(t_end=0.3, h=1e-3, h_contact=1e-4)
    (s1, fast), (_, single), (s3, ref) = _three_paths(monkeypatch, lambda: _rattle(friction=True), **kw)
    assert fast.stats["blocks"] > 0
    _same_run(fast, single, AGREE, 1e-14, AGREE)
    _same_run(fast, ref, 1e-8, 1e-9, 1e-6)
    ball = next(b for b in s1.bodies if b.name == "ball")
    assert np.max(np.abs(fast.angular_velocity(ball)[:, 2])) > 1.0     # friction spun the ball up


def test_compiled_friction_laws_equal_the_friction_table():
    """The compiled step's friction laws (forces.friction_coefficient) against FrictionTable.coefficient (numpy)
    over slip speeds through the dead zone, the ramp and beyond: the same formulas, 1e-14 relative (rounding)."""
    from flexmb.compiled.contact import friction_coefficient
    from flexmb.contact import BrownMcPhee, CoulombRamp
    from flexmb.contact.friction import FrictionTable
    laws = [CoulombRamp(0.3, 0.05), CoulombRamp(0.3, 0.05, 0.01), CoulombRamp(0.2, 0.02, shape="tanh"),
            BrownMcPhee(0.5, 0.3, 0.01)]
    table = FrictionTable(laws)
    s = np.concatenate([[0.0, 1e-9, 1e-7], np.linspace(1e-4, 0.2, 97)])
    for k in range(len(laws)):
        ref = table.coefficient(s, np.full(s.size, k))
        got = np.array([friction_coefficient(table.kind[k], *table.p[k], x) for x in s]).T
        np.testing.assert_allclose(got, np.array(ref), rtol=1e-14, atol=1e-14 * np.max(np.abs(ref)))
