"""The compiled evaluation of sparse models and particles (flexmb/solvers/compiled_step.py ``CompiledEvaluation``,
flexmb/compiled/equations.py ``particle_terms``) against the general assembly it replaces.

Both paths evaluate the same terms; the compiled one adds them in its own order and, for dense models, factorizes
with its own LU, so trajectories agree to round-off amplified by the run: 1e-10 m over the runs below, two orders
of magnitude under the Newton tolerance (1e-8 relative), which any real difference in the equations (a missing
term, a wrong sign, a block at the wrong position) exceeds at the first step. Newton iterations and
factorizations must be equal (the same convergence decisions).
"""
from __future__ import annotations

import numpy as np
import pytest

import flexmb as fm
from flexmb.solvers import compiled_step as cs
from flexmb.linalg import DENSE_LIMIT

AGREE = 1e-10


def _chain(n: int, closed: bool = False) -> fm.System:
    """N particles 0.1 m apart joined by spring-dampers, the first one pinned by an anchor, under gravity (the
    particle-chain benchmark, benchmarks/particle_chain.py), with a welded rigid body."""
    s = fm.System(gravity=(0.0, -9.81, 0.0), name=f"chain {n}")
    b = s.add(fm.RigidBody(1.0, (1.0, 1.0, 1.0), name="base"))
    s.add(fm.Fixed(s.ground, b, name="weld"))
    X = np.column_stack([0.1 * np.arange(n), np.zeros(n), np.zeros(n)])
    P = s.add(fm.Particles(X, 0.1, velocities=np.tile([0.0, 0.0, 0.2], (n, 1)), name="chain"))
    s.add(fm.ParticleLinks(P, "chain", 1e5, 1.0, name="links"))
    s.add(fm.ParticleAnchors(P, [0], stiffness=1e6, damping=10.0, name="pin"))
    return s


def _general(monkeypatch) -> None:
    monkeypatch.setattr(cs.CompiledStep, "qualifies", staticmethod(lambda asm, reuse: False))
    monkeypatch.setattr(cs.CompiledEvaluation, "qualifies", staticmethod(lambda asm: False))


def _took_compiled_step(res) -> None:
    """Every step of the run was converged by the compiled step (``stats["compiled_steps"]``; fixed steps, no
    rejections), most of them in blocks. Fails when the compiled step declines steps (tests/mutations.py)."""
    st = res.stats
    assert st["rejected"] == 0 and st["compiled_steps"] == st["steps"] > 0 and st["blocks"] > 0, st


def _took_compiled_evaluation(res) -> None:
    """Every Newton iteration of the run was evaluated by the compiled evaluation (``stats["compiled_evaluations"]``;
    an iteration it declines is evaluated by ``Assembly.residual`` and not counted), and no step by the compiled
    step. Fails when the compiled evaluation declines (tests/mutations.py)."""
    st = res.stats
    assert st["compiled_steps"] == 0 and st["compiled_evaluations"] == st["newton_iterations"] > 0, st


def _took_general_path(res) -> None:
    """The reference run: neither the compiled step nor the compiled evaluation took part."""
    assert res.stats["compiled_steps"] == 0 and res.stats["compiled_evaluations"] == 0, res.stats


def _same(fast, ref, work: bool = True) -> None:
    assert fast.t.shape == ref.t.shape
    assert np.max(np.abs(fast.q - ref.q)) < AGREE
    assert fast.stats["newton_iterations"] == ref.stats["newton_iterations"]
    assert fast.stats["factorizations"] == ref.stats["factorizations"]
    if work:
        assert np.max(np.abs(ref.work_nc)) > 1e-6                       # the dampers dissipated
        assert np.max(np.abs(fast.work_nc - ref.work_nc)) < 1e-9 * np.max(np.abs(ref.work_nc))
    assert fast.message == ref.message
    assert "completed" in ref.message


def test_small_particle_chain_takes_the_compiled_step(monkeypatch):
    """33 particle coordinates: the dense compiled step in blocks, the links' and anchor's damper work booked."""
    s = _chain(10)
    asm = s.compile()
    assert cs.CompiledStep.qualifies(asm, reuse_matrix=False)
    fast = fm.simulate(s, t_end=0.1, h=1e-3)
    _took_compiled_step(fast)
    _general(monkeypatch)
    ref = fm.simulate(_chain(10), t_end=0.1, h=1e-3)
    _took_general_path(ref)
    _same(fast, ref)
    assert np.ptp(ref.particles("chain")[:, -1, 1]) > 1e-3           # the chain swung


def test_sparse_particle_chain_takes_the_compiled_evaluation(monkeypatch):
    """100 particles (314 unknowns, SuperLU, the matrix kept across steps): one compiled evaluation per Newton
    iteration, the same trajectory, Newton counts and factorizations as the general assembly."""
    s = _chain(100)
    asm = s.compile()
    assert asm.nq + asm.m > DENSE_LIMIT
    assert not cs.CompiledStep.qualifies(asm, reuse_matrix=True) and cs.CompiledEvaluation.qualifies(asm)
    calls = []
    original = cs.CompiledEvaluation.residual

    def spy(self, *args):
        out = original(self, *args)
        calls.append(out is not None)
        return out

    monkeypatch.setattr(cs.CompiledEvaluation, "residual", spy)
    fast = fm.simulate(s, t_end=0.05, h=1e-3)
    assert calls and all(calls)
    assert len(calls) == fast.stats["newton_iterations"]        # one compiled evaluation per Newton iteration
    _took_compiled_evaluation(fast)
    monkeypatch.undo()
    _general(monkeypatch)
    ref = fm.simulate(_chain(100), t_end=0.05, h=1e-3)
    _took_general_path(ref)
    _same(fast, ref)


def _rope_of_links(n: int) -> fm.System:
    """A hanging chain of n rigid links joined by spherical joints, with spring-dampers across every second joint
    and a body-fixed torque on the last link: 7 n coordinates, sparse for n >= 20."""
    s = fm.System(gravity=(0.0, -9.81, 0.0), name=f"links {n}")
    prev, L = s.ground, 0.1
    for k in range(n):
        b = s.add(fm.RigidBody(0.2, (1e-4, 2e-4, 2e-4), position=((k + 0.5) * L, 0.0, 0.0),
                               angular_velocity=(0.0, 0.0, 0.5), name=f"l{k}"))
        s.add(fm.Spherical(prev, b, (k * L, 0.0, 0.0), name=f"j{k}"))
        if k % 2 and k > 1:
            s.add(fm.SpringDamper(s.bodies[k - 2], b, point_a=((k - 1.5) * L, 0.02, 0.0),
                                  point_b=((k + 0.5) * L, 0.02, 0.0), k=200.0, c=0.5, name=f"s{k}"))
        prev = b
    s.add(fm.Torque(prev, (0.0, 0.01, 0.02), body_fixed=True, name="twist"))
    return s


def test_sparse_rigid_models_take_the_compiled_evaluation(monkeypatch):
    """Rigid links, spherical joints, spring-dampers and a torque, sparse (40 links, 280 coordinates, the matrix
    kept across steps): the compiled evaluation repeats the general one."""
    s = _rope_of_links(40)
    asm = s.compile()
    assert asm.nq + asm.m > DENSE_LIMIT and cs.CompiledEvaluation.qualifies(asm)
    fast = fm.simulate(s, t_end=0.05, h=1e-3)
    _took_compiled_evaluation(fast)
    _general(monkeypatch)
    ref = fm.simulate(_rope_of_links(40), t_end=0.05, h=1e-3)
    _took_general_path(ref)
    _same(fast, ref)


def _spheres(n: int) -> fm.System:
    """n steel spheres settling in an open box (benchmarks/contact_spheres.py: jittered lattice, random velocities,
    Lankarani-Nikravesh law, floor and four walls)."""
    from flexmb.contact import LankaraniNikravesh
    from flexmb.contact.mesh import SphereCloudContact
    R, mass = 0.01, 7850.0 * 4.0 / 3.0 * np.pi * 0.01 ** 3
    rng = np.random.default_rng(1)
    k = int(np.ceil(n ** (1.0 / 3.0) - 1e-9))
    pitch = 2.2 * R
    idx = np.array([(i, j, l) for l in range(k) for i in range(k) for j in range(k)])[:n]
    pos = ((idx + 0.5) * pitch)[:, [0, 2, 1]] + rng.uniform(-0.05 * R, 0.05 * R, (n, 3))
    side = k * pitch
    s = fm.System(gravity=(0.0, -9.81, 0.0), name=f"spheres {n}")
    bodies = [s.add(fm.RigidBody(mass, (0.4 * mass * R * R,) * 3, position=p, velocity=rng.normal(0.0, 0.3, 3),
                                 name=f"s{j}")) for j, p in enumerate(pos)]
    planes = [((0, 0, 0), (0, 1, 0)), ((0, 0, 0), (1, 0, 0)), ((side, 0, 0), (-1, 0, 0)), ((0, 0, 0), (0, 0, 1)),
              ((0, 0, side), (0, 0, -1))]
    s.add(SphereCloudContact(bodies, pos, R, LankaraniNikravesh(5e6, 0.5), margin=R, coupling="none",
                             planes=[(s.ground, p, nrm) for p, nrm in planes]))
    return s


@pytest.mark.parametrize("n", [27, 64])
def test_sphere_clouds_take_the_compiled_evaluation(monkeypatch, n):
    """27 spheres (189 coordinates: the dense matrix and LAPACK LU) and 64 (448, sparse) with the energy balance
    and contact-onset location on: the compiled evaluation (equations + one narrow-phase kernel call per contact
    group) gives the same trajectory, onset cuts, Newton counts, contact work and history (broad-phase state,
    approach speeds) as the general assembly with the numpy narrow phase."""
    from flexmb.contact.candidates import CandidateGroup
    s = _spheres(n)
    asm = s.compile()
    assert (asm.nq + asm.m > DENSE_LIMIT) == (n == 64) and cs.CompiledEvaluation.qualifies(asm)
    assert not cs.CompiledStep.qualifies(asm, reuse_matrix=False)
    fast = fm.simulate(s, t_end=0.01, h=1e-4)
    _took_compiled_evaluation(fast)
    _general(monkeypatch)
    monkeypatch.setattr(CandidateGroup, "use_kernel", False)
    ref = fm.simulate(_spheres(n), t_end=0.01, h=1e-4)
    _took_general_path(ref)
    assert fast.t.shape == ref.t.shape and np.max(np.abs(fast.t - ref.t)) < 1e-12
    _same(fast, ref)
    assert fast.history.shape == ref.history.shape
    assert np.max(np.abs(fast.history[-1] - ref.history[-1])) < 1e-9
