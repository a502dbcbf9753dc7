"""Particle sets, spring-damper links and anchors (flexmb/forces/particles.py, docs/theory-roller-chain.md §1-2).

Checked: the assembled residual's derivatives (mass, damping, stiffness blocks) against central differences at
a random state; a two-particle oscillator against its closed form; the energy balance of a hanging damped chain;
the result accessor and bad input.
"""
import numpy as np
import pytest

import flexmb as fm
from flexmb.errors import ModelError


def newton_blocks(asm, q, v, a, coef):
    S = asm.residual(q, v, a, np.zeros(asm.m), 0.0, coef=coef)[2]
    return np.asarray(S.toarray() if hasattr(S, "toarray") else S)[:asm.nq, :asm.nq]


def fd_check(asm, q, v, a, rel=1e-6, step=1e-6):
    """cM dr/da, cC dr/dv, cK dr/dq of the assembled residual against central differences (eps = ``step``
    scaled by the largest coordinate): truncation O(eps^2) and round-off eps_mach |r| / eps are far below rel
    1e-6 of the largest entry (contact laws with penetrations ~1e-4 m need a smaller step: their truncation is
    (eps / delta)^2)."""
    lam = np.zeros(asm.m)
    for which, coef in ((0, (1, 0, 0, 0, 0)), (1, (0, 1, 0, 0, 0)), (2, (0, 0, 1, 0, 0))):
        S = newton_blocks(asm, q, v, a, coef)
        base = (a, v, q)[which]
        eps = step * max(1.0, np.abs(base).max())

        def f(y):
            args = [q, v, a]
            args[(2, 1, 0)[which]] = y
            return asm.residual(args[0], args[1], args[2], lam, 0.0)[0]
        ref = np.array([(f(base + eps * e) - f(base - eps * e)) / (2 * eps) for e in np.eye(asm.nq)]).T
        scale = max(1.0, np.abs(ref).max())
        assert np.abs(S - ref).max() < rel * scale + 1e-7 * np.abs(f(base)).max() / eps, which


def welded_base(s):
    """System.compile needs one body: a welded one that carries nothing."""
    b = s.add(fm.RigidBody(1.0, (1.0, 1.0, 1.0), name="base"))
    s.add(fm.Fixed(s.ground, b, name="weld"))
    return b


def test_particle_families_jacobians():
    rng = np.random.default_rng(11)
    s = fm.System(gravity=(0.3, -9.81, 0.2))
    welded_base(s)
    X = rng.standard_normal((5, 3))
    P = s.add(fm.Particles(X, rng.uniform(0.5, 2.0, 5), name="p"))
    s.add(fm.ParticleLinks(P, "closed", stiffness=rng.uniform(50, 100, 5), damping=rng.uniform(1, 3, 5),
                           free_length=rng.uniform(0.5, 1.5, 5), name="links"))
    s.add(fm.ParticleAnchors(P, [0, 3], stiffness=70.0, damping=2.0, name="pins"))
    asm = s.compile()
    q0, _ = asm.initial_state()
    q = q0 + 0.1 * rng.standard_normal(asm.nq)
    v, a = rng.standard_normal((2, asm.nq))
    fd_check(asm, q, v, a)


def test_two_particle_oscillator_closed_form():
    # two masses m on a spring k (free length 1 m) stretched by 0.01 m: the stretch oscillates at
    # w = sqrt(2 k / m); generalized-alpha at w h = 0.02 keeps phase and amplitude to ~1e-4 over 1 s
    s = fm.System()
    welded_base(s)
    m, k = 0.5, 200.0
    P = s.add(fm.Particles([[0.0, 0.0, 0.0], [1.01, 0.0, 0.0]], m, name="pair"))
    s.add(fm.ParticleLinks(P, "chain", k, free_length=1.0, name="spring"))
    res = fm.simulate(s, 1.0, 1e-3, progress=False)
    x = res.particles("pair")
    stretch = x[:, 1, 0] - x[:, 0, 0] - 1.0
    w = np.sqrt(2 * k / m)
    assert np.abs(stretch - 0.01 * np.cos(w * res.t)).max() < 1e-3 * 0.01 * 5
    # momentum: the centre stays, to the round-off that 1000 Newton solves accumulate (1e-12 measured)
    assert np.abs(x[:, :, 0].mean(axis=1) - 0.505).max() < 1e-10


def test_hanging_chain_energy_balance_and_static_sag():
    # a damped chain of 8 particles pinned at one end swings down and settles; the balance (kinetic +
    # gravity + spring - damper work) closes to the integration error, 1e-3 of the 4 J exchanged
    s = fm.System(gravity=(0.0, -9.81, 0.0))
    welded_base(s)
    N = 8
    X = np.column_stack([0.1 * np.arange(N), np.zeros(N), np.zeros(N)])
    P = s.add(fm.Particles(X, 0.1, name="chain"))
    s.add(fm.ParticleLinks(P, "chain", 1e4, 0.5, name="links"))
    s.add(fm.ParticleAnchors(P, 0, stiffness=1e6, damping=10.0, name="pin"))
    res = fm.simulate(s, 1.0, 1e-3, progress=False)
    E = res.energy()
    scale = np.abs(E["potential"] - E["potential"][0]).max()
    assert np.abs(E["total"] - E["total"][0]).max() < 1e-3 * scale
    assert res.particles(P).shape == (len(res.t), N, 3)
    assert res.particles("chain", rates=True).shape == (len(res.t), N, 3)


def test_bad_input():
    with pytest.raises(ModelError, match="mass of particle 1"):
        fm.Particles([[0, 0, 0], [1, 0, 0]], [1.0, -2.0], name="p")
    P = fm.Particles([[0, 0, 0], [1, 0, 0], [2, 0, 0]], 1.0, name="p")
    with pytest.raises(ModelError, match="outside"):
        fm.ParticleLinks(P, [[0, 5]], 1.0, name="l")
    with pytest.raises(ModelError, match="itself"):
        fm.ParticleLinks(P, [[1, 1]], 1.0, name="l")
    with pytest.raises(ModelError, match="pairs must be"):
        fm.ParticleLinks(P, "ring", 1.0, name="l")
    with pytest.raises(ModelError, match="does not close"):                 # 2 m gap for a 1 m pitch
        fm.ParticleLinks(P, "closed", 1.0, free_length=1.0, name="l")
    s = fm.System()
    welded_base(s)
    s.add(fm.ParticleLinks(P, "chain", 1.0, name="l"))
    with pytest.raises(ModelError, match="not in the system"):
        s.compile()


def test_a_system_of_particles_alone_compiles_and_runs():
    """No bodies, only a particle set (coordinates of its own): a hanging three-mass chain held at one end
    by a stiff anchor swings down under gravity and keeps its energy balance (damped links: the work of the
    dampers is booked, |drift| below 1e-3 of the energy scale)."""
    s = fm.System(gravity=(0.0, -9.81, 0.0))
    P = s.add(fm.Particles(np.array([[0.0, 0, 0], [1.0, 0, 0], [2.0, 0, 0]]), 0.5, name="p"))
    s.add(fm.ParticleLinks(P, "chain", 1e3, 1.0, name="l"))
    s.add(fm.ParticleAnchors(P, [0], stiffness=1e5, damping=10.0, name="a"))
    res = fm.simulate(s, 0.5, 1e-3)
    assert res.message == "completed"
    assert res.particles("p")[-1, 2, 1] < -0.5                      # the free end fell
    assert res.stats["energy_drift"] < 1e-3
