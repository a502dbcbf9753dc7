"""fm.ExactBeam on the compiled step (issue 24): the exact beam's element loop inside the flexible-body kernel.

1. the group kernel (flexmb/compiled/flexible.py with flexmb/compiled/exact_beam.py, element data packed once)
   gives each body's own ``ExactBeamStructure.internal_force`` (the structure's sparse assembly, called per body
   in Python, the path such groups took before) to round-off, for exact beams, cables and a nonlinear beam in one
   group, and the strain energy likewise;
2. the Newton blocks of models with exact beams and cables against central differences of the residual;
3. such models qualify for the compiled step and the compiled evaluation;
4. trajectories: a 16-element spin-up, a cantilever under a suddenly applied tip load and a cable released
   beside its catenary, on the compiled step, agree with the general Python Newton path (forced here) to the Newton
   tolerance, with the numbers the general path gave before this change, and with independent references
   (the elastica spin-up of verification/rotating_beam, the static elastica and elastic catenary of
   verification/beams).
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import flexmb as fm
from flexmb.bodies.flexible_kernel import FlexibleBodyGroup
from flexmb.solvers.compiled_step import CompiledEvaluation, CompiledStep
from tests.test_jacobians import FD_TRUNCATION, assert_matches_fd, fd, fd_tolerance
from verification.beams import elastica
from verification.beams import models as beams
from verification.rotating_beam import models as rotating

ROOT = Path(__file__).resolve().parents[1]


def frame_model(n=4, springs=False):
    """A skew straight Timoshenko beam (not along an axis), node sets ``root`` and ``tip``."""
    x = np.linspace(0.0, 1.0, n + 1)
    mesh = fm.FEMesh(np.column_stack([x, 0.3 * x, -0.2 * x]),
                     {"line": np.column_stack([np.arange(n), np.arange(1, n + 1)])},
                     node_sets={"root": [0], "tip": [n]})
    model = fm.FEModel(mesh, fm.Material(E=70e9, nu=0.33, rho=2700.0), sections=fm.BeamSection.rectangle(0.02, 0.04))
    if springs:
        model.add_spring(n, [1e5, 2e5, 3e5], [10.0, 20.0, 30.0])
    return model


def cable_model(n=6):
    """A sagging rope of ``n`` elements (cable mode), ends ``ends``."""
    x = np.linspace(0.0, 4.0, n + 1)
    mesh = fm.FEMesh(np.column_stack([x, -0.3 * np.sin(np.pi * x / 4.0), 0.1 * x]),
                     {"line": np.column_stack([np.arange(n), np.arange(1, n + 1)])}, node_sets={"ends": [0, n]})
    return fm.FEModel(mesh, fm.Material(E=1e10, nu=0.3, rho=2e4), sections=fm.BeamSection(A=1e-4, Iy=1e-12, Iz=1e-12,
                                                                                             J=2e-12))


def beam_bodies():
    """Three exact beams (both membranes, node springs) and a nonlinear beam with the same coordinates."""
    return [fm.ExactBeam(frame_model(), "root", damping=0.01, name="x0"),
            fm.ExactBeam(frame_model(springs=True), "root", membrane="chord", mass="linear", name="x1"),
            fm.NonlinearBeam(frame_model(), "root", damping=0.01, name="nb"),
            fm.ExactBeam(frame_model(), "root", name="x2")]


def cable_bodies():
    return [fm.ExactBeam(cable_model(), cable_model().dofs("ends", ["ux", "uy", "uz"]), cable=True, name=f"c{i}")
            for i in range(2)]


class _Delegate:
    """A structure of another type: the group calls its ``internal_force`` per body in Python."""

    def __init__(self, structure):
        self.s = structure

    def internal_force(self, u):
        return self.s.internal_force(u)


def group(bodies, gravity=(0.3, -9.81, 0.5)):
    offset = 0
    for b in bodies:
        b.offset = offset
        offset += b.ncoord
    return FlexibleBodyGroup(bodies, np.array(gravity, dtype=float)), offset


def random_state(bodies, nq, seed, scale):
    rng = np.random.default_rng(seed)
    q, v, a = rng.normal(size=nq) * scale, rng.normal(size=nq), rng.normal(size=nq)
    for b in bodies:
        p = rng.normal(size=4)
        q[b.offset:b.offset + 3] = rng.normal(size=3)
        q[b.offset + 3:b.offset + 7] = p / np.linalg.norm(p)
    return q, v, a


@pytest.mark.parametrize("make, scale", [(beam_bodies, 0.3), (cable_bodies, 0.05)])
def test_group_kernel_equals_each_structures_internal_force(make, scale):
    """Residual, Newton blocks and strain energy of the compiled group against the same bodies whose structures
    are called one by one (ExactBeamStructure.internal_force: the same element, assembled into a CSR matrix in
    another loop). Nodal rotations up to ~1 rad (scale 0.3 on every coordinate). The same arithmetic summed in
    another order: 1e-12 of the largest entry."""
    compiled = make()
    g, nq = group(compiled)
    python = make()
    for b in python:
        b.structure = _Delegate(b.structure)
    h, _ = group(python)
    assert h._python_structures and not g._python_structures
    for seed in range(2):
        q, v, a = random_state(compiled, nq, seed, scale)
        for coef in (None, (1.3, 0.7, 2.1)):
            _, r1, b1 = g.residual(q, v, a, coef)
            _, r2, b2 = h.residual(q, v, a, coef)
            np.testing.assert_allclose(r1, r2, rtol=0, atol=1e-12 * np.abs(r2).max())
            if coef is not None:
                np.testing.assert_allclose(b1, b2, rtol=0, atol=1e-12 * np.abs(b2).max())
        energy = np.array([b.strain_energy(q[b.offset + 7:b.offset + b.ncoord]) for b in compiled])
        assert energy.min() > 0.0
        np.testing.assert_allclose(g.strain_energy(q), energy, rtol=1e-12)


def exact_system(kind):
    """A rigid body and an exact beam (or cable) on a revolute joint, a spherical joint at a node, gravity."""
    s = fm.System(gravity=(0.3, -9.81, 0.2))
    a = s.add(fm.RigidBody(3.0, (0.2, 0.3, 0.4), position=(-0.1, 0.05, 0.0), name="a"))
    if kind == "beam":
        fe = frame_model(springs=True)
        b = s.add(fm.ExactBeam(fe, "root", damping=0.02, name="beam"))
        s.add(fm.Revolute(a, b, (0.0, 0.0, 0.0), (0.2, 0.3, 1.0)))
    else:
        fe = cable_model()
        b = s.add(fm.ExactBeam(fe, fe.dofs("ends", ["ux", "uy", "uz"])[:3], cable=True, name="cable"))
        s.add(fm.Fixed(a, b, (0.0, 0.0, 0.0)))
    s.add(fm.Spherical(b.node(2), s.ground, tuple(fe.points[2])))
    s.add(fm.Revolute(s.ground, a, (-0.1, 0.05, 0.0), (0.0, 0.0, 1.0)))
    return s


@pytest.mark.parametrize("kind", ["beam", "cable"])
def test_newton_blocks_of_exact_beam_models_match_finite_differences(kind):
    """The Newton blocks of a model with an exact beam or a cable (the compiled group kernel's exact tangent,
    inertia and joint terms) against central differences of its residual, each entry within its row's bound
    (tests/test_jacobians.py ``fd_tolerance``), at a random state with nodal rotations of ~0.3 rad (the
    cable's elements stretched by up to ~1e-3, so that they are taut, with slack ones beside them)."""
    asm = exact_system(kind).compile()
    rng = np.random.default_rng(4)
    q0, v0 = asm.initial_state()
    scale = 0.3 if kind == "beam" else 2e-3
    q = q0 + scale * rng.standard_normal(q0.size)
    v = v0 + 0.3 * rng.standard_normal(q0.size)
    a = rng.standard_normal(q0.size)
    lam = rng.standard_normal(asm.m)
    t = 0.4
    for coef, fun, x in [((0, 0, 1, 1, 0), lambda x: asm.residual(x, v, a, lam, t)[0], q),
                         ((0, 1, 0, 0, 0), lambda x: asm.residual(q, x, a, lam, t)[0], v),
                         ((1, 0, 0, 0, 0), lambda x: asm.residual(q, v, x, lam, t)[0], a)]:
        S = asm.residual(q, v, a, lam, t, coef=coef)[2]
        S = (S.toarray() if sp.issparse(S) else S)[:asm.nq, :asm.nq]
        step = 1e-3 if coef[0] else 1e-6          # affine in the accelerations: a large step is exact there
        ref = fd(fun, x, eps=step)
        assert_matches_fd(S, ref, fd_tolerance(fun, x, ref, step, truncation=0.0 if coef[0] else FD_TRUNCATION),
                          (kind, coef))


def test_models_with_exact_beams_take_the_compiled_step():
    asm = rotating.spin_up("exact-beam", 10.0, n_elements=16).system.compile()
    assert CompiledStep.qualifies(asm, False) and CompiledEvaluation.qualifies(asm)
    asm = exact_system("cable").compile()
    assert CompiledStep.qualifies(asm, False) and CompiledEvaluation.qualifies(asm)


@pytest.fixture
def general_path(monkeypatch):
    """Take every step on the general Python Newton path (the compiled group kernel still evaluates the bodies)."""
    monkeypatch.setattr(CompiledStep, "qualifies", staticmethod(lambda asm, reuse: False))
    monkeypatch.setattr(CompiledEvaluation, "qualifies", staticmethod(lambda asm: False))


def spin_up(t_end, h=5e-3):
    """The rotating-beam spin-up (Omega_s = 10 rad/s) with 16 exact beam elements: times, in-plane tip deflection
    (m) and the run's statistics."""
    model = rotating.spin_up("exact-beam", 10.0, n_elements=16)
    r = fm.simulate(model.system, t_end, h)
    o = model.beam.offset + 7
    return r.t, r.q[:, o:o + model.beam.n_modes] @ model.tip_shape, r.stats


def tip_loaded_cantilever(n=8, k=2.0):
    """The planar cantilever of the beams suite (EI = 1 N m^2, L = 1 m, mass-proportional damping 5 /s), a dead tip
    load ``k EI / L^2`` towards -y applied at t = 0 through a light rigid tip body (1 g) pinned to the tip node."""
    fe = beams.cantilever_model(n)
    s = fm.System(gravity=(0.0, 0.0, 0.0), name="cantilever")
    beam = s.add(fm.ExactBeam(fe, beams.planar_held(fe), rayleigh=(5.0, 0.0), name="beam"))
    s.add(fm.Fixed(s.ground, beam, name="clamp"))
    tip = s.add(fm.RigidBody(1e-3, (1e-6, 1e-6, 1e-6), position=(beams.L, 0.0, 0.0), name="tip"))
    s.add(fm.Spherical(beam.node(n), tip, (beams.L, 0.0, 0.0), name="pin"))
    s.add(fm.Force(tip, (0.0, -k * beams.EI / beams.L**2, 0.0), name="load"))
    return s, beam


def swinging_cable(n=8, length=2.0, angle=0.5):
    """A rope (cable mode, EA = 1 kN, 0.1 kg/m) hung from a fixed point, released straight at ``angle`` (rad) from
    the vertical under gravity: it swings like a chain; started stretched by 1e-4 (a cable without tension has no
    transverse stiffness)."""
    s_ = np.linspace(0.0, 1.0, n + 1)
    points = np.column_stack([length * s_ * np.sin(angle), -length * s_ * np.cos(angle), 0 * s_])
    mesh = fm.FEMesh(points, {"line": np.column_stack([np.arange(n), np.arange(1, n + 1)])},
                     node_sets={"top": [0], "end": [n]})
    fe = fm.FEModel(mesh, fm.Material(E=1e7, nu=0.3, rho=1000.0),
                    sections=fm.BeamSection(A=1e-4, Iy=1e-10, Iz=1e-10, J=2e-10))
    held = np.union1d(fe.dofs("top", ["ux", "uy", "uz"]), fe.dofs(np.arange(n + 1), ["uz"]))
    start = np.zeros((n + 1, 6))
    start[:, :3] = 1e-4 * points
    free = fm.ExactBeam(fe, held, cable=True).structure.free
    s = fm.System(gravity=(0.0, -9.81, 0.0))
    rope = s.add(fm.ExactBeam(fe, held, cable=True, modal_coordinates=start.ravel()[free], name="rope"))
    s.add(fm.Fixed(s.ground, rope, name="hook"))
    return s, rope


def at(t, x, times):
    return np.array([x[np.argmin(np.abs(t - s))] for s in times])


NEWTON_AGREEMENT = 1e-9
"""Two runs of the same model whose steps converge to the Newton tolerance (1e-8 of 1 + |q|) agree to round-off when
they take the same iterates: measured 1e-14 to 6e-12 m between the compiled step and the general path here. 1e-9 m
leaves room for a different number of Newton iterations in a step."""
STORED_AGREEMENT = 1e-6
"""Against numbers computed by the general path before the exact beam was on the compiled step (same settings,
another process and possibly another machine): measured 6e-12 m. 1e-6 m allows a few Newton tolerances of every
step; a change of formulation shows well above it (the chord membrane moves the spin-up's tip by ~1e-4 m)."""


def test_spin_up_on_the_compiled_step():
    t, tip, stats = spin_up(20.0)
    assert stats["compiled_steps"] == stats["steps"] == 4000
    # the general path before the change (h = 5 ms), at t = 4, 8, 12, 16, 20 s
    before = [-0.564811148607, -0.744845211452, -0.187146064145, 0.006018101346, -0.002786489036]
    np.testing.assert_allclose(at(t, tip, (4.0, 8.0, 12.0, 16.0, 20.0)), before, rtol=0, atol=STORED_AGREEMENT)
    # the geometrically exact inextensible reference (verification/rotating_beam): 16 elements at h = 5 ms are
    # 1.0e-3 m from it (measured 1.006e-3; suite rotating-beam: 4.5e-3, 1.0e-3, 1.4e-4 m with 8, 16, 32 elements)
    ref = json.loads((ROOT / "verification/rotating_beam/reference_data.json").read_text())["histories"]
    elastica_tip = np.asarray(ref["10"]["elastica"], dtype=float)
    ref_t = np.asarray(ref["t"])[:elastica_tip.size]
    assert np.abs(np.interp(ref_t, t, tip) - elastica_tip).max() < 1.2e-3


def test_spin_up_agrees_with_the_general_path(general_path):
    t, tip, stats = spin_up(2.0)
    assert stats["compiled_steps"] == 0
    t2, tip2, stats2 = _compiled(spin_up, 2.0)
    assert stats2["compiled_steps"] == stats2["steps"] and np.array_equal(t, t2)
    assert np.abs(tip - tip2).max() < NEWTON_AGREEMENT


def _compiled(run, *args):
    """``run(*args)`` with the compiled step's qualification restored (inside a test using ``general_path``)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(CompiledStep, "qualifies", _QUALIFIES[0])
        mp.setattr(CompiledEvaluation, "qualifies", _QUALIFIES[1])
        return run(*args)


_QUALIFIES = (CompiledStep.qualifies, CompiledEvaluation.qualifies)


def cantilever_run():
    s, beam = tip_loaded_cantilever()
    r = fm.simulate(s, 4.0, 1e-2)
    return r.t, r.deflection(beam, 8), r.stats


def test_tip_loaded_cantilever(general_path):
    t, d, stats = _compiled(cantilever_run)
    assert stats["compiled_steps"] == stats["steps"]
    # the general path before the change, at t = 0.5, 1, 2, 4 s (x, y of the tip deflection)
    before = [[-0.100358408948, -0.394049482164], [-0.188271770404, -0.529775209636],
              [-0.158228389804, -0.49001562748], [-0.160626205303, -0.493434131384]]
    np.testing.assert_allclose(at(t, d, (0.5, 1.0, 2.0, 4.0))[:, :2], before, rtol=0, atol=STORED_AGREEMENT)
    t2, d2, stats2 = cantilever_run()          # the general path now
    assert stats2["compiled_steps"] == 0 and np.array_equal(t, t2)
    assert np.abs(d - d2).max() < NEWTON_AGREEMENT
    # settled (the slowest mode decays as exp(-2.5 t): e^-10 of ~0.1 m left) against the static elastica at
    # k = 2: measured 9.7e-5 (u) and 4.7e-5 (v) relative, the 8-element discretization error (the suite's
    # 16-element one is below 2e-6, order 4-5)
    ref = elastica.cantilever_tip_load(2.0)
    np.testing.assert_allclose([-d[-1, 0], -d[-1, 1]], [ref["u"], ref["v"]], rtol=2e-4)


def cable_run():
    s, rope = swinging_cable()
    r = fm.simulate(s, 1.0, 1e-3)
    return r.t, r.deflection(rope, 8), r.stats, r.energy()


def test_swinging_cable(general_path):
    t, d, stats, energy = _compiled(cable_run)
    assert stats["compiled_steps"] == stats["steps"] == 1000
    before = [[-0.134962047664, -0.059488960806], [-0.566815847975, -0.175567537985],
              [-1.436746091196, -0.174968122209], [-1.954636422702, 0.080251103214]]
    np.testing.assert_allclose(at(t, d, (0.25, 0.5, 0.75, 1.0))[:, :2], before, rtol=0, atol=STORED_AGREEMENT)
    t2, d2, stats2, _ = cable_run()
    assert stats2["compiled_steps"] == 0 and np.array_equal(t, t2)
    assert np.abs(d - d2).max() < NEWTON_AGREEMENT
    # no damping in the model: the total energy stays (generalized-alpha, rho_inf = 0.9, h = 1 ms: measured drift
    # 8.2e-6 J against a kinetic energy of 0.236 J at the bottom of the swing)
    swing = energy["kinetic"].max()
    assert swing > 0.2 and np.ptp(energy["total"]) < 1e-4 * swing
