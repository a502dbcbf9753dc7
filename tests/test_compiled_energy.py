"""Energies in one compiled call (flexmb/compiled/energy.py) against the per-family Python methods and closed forms.

``Assembly.energies`` / ``energy_rows`` sum the same terms as ``Assembly.kinetic_energy`` / ``potential_energy`` in
another order, so they agree to rounding: 1e-12 of the energies' magnitude (double precision 1e-16 times the few
hundred terms and the cancellation of gravity's arbitrary datum). The closed forms are evaluated with numpy from the
coordinates, independent of both kernels.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import flexmb as fm
from flexmb.warm import _models
from flexmb.contact import ClearanceJoint, HuntCrossley, LankaraniNikravesh, LinearSpringDamper, SphereSphereContact

RTOL = 1e-12


def _states(asm, n: int, seed: int = 0, dq: float = 0.01):
    """The initial state and ``n`` random perturbations of it (coordinates by ``dq``, unit random rates)."""
    rng = np.random.default_rng(seed)
    q0, v0 = asm.initial_state()
    out = [(q0, v0)]
    for _ in range(n):
        out.append((q0 + dq * rng.standard_normal(q0.size), rng.standard_normal(q0.size)))
    return out


def _python(asm, q, v) -> tuple[float, float]:
    return asm.kinetic_energy(q, v), asm.potential_energy(q, v)


def _close(a: float, b: float, scale: float) -> bool:
    return abs(a - b) <= RTOL * max(scale, 1e-300)


@pytest.mark.parametrize("k", range(sum(1 for _ in _models())))
def test_energies_equal_the_per_family_path_on_every_warm_model(k):
    """Every element family (the warm-up models of ``flexmb compile-kernels``: rigid bodies, every joint kind,
    motors, springs, bushings, loads, particles, sphere clouds, pair contacts, crash elements, sheave ropes, modal
    bodies, nonlinear and exact beams): one compiled call plus the Python families equals the per-family sums,
    at the initial state and at random states, one by one and as rows."""
    system = next(s for i, s in enumerate(_models()) if i == k)
    asm = system.compile()
    states = _states(asm, 4, seed=k)
    ref = np.array([_python(asm, q, v) for q, v in states])
    got = np.array([asm.energies(q, v) for q, v in states])
    T, V = asm.energy_rows(np.array([q for q, _ in states]), np.array([v for _, v in states]))
    scale = np.abs(ref).max(axis=0) + 1.0e-30
    assert np.all(np.abs(got - ref) <= RTOL * scale), (got - ref) / scale
    assert np.all(np.abs(np.column_stack([T, V]) - ref) <= RTOL * scale)


def _held(asm) -> bool:
    """Whether one compiled call holds every energy of the model (no Python family added per state)."""
    return asm.compiled_energy.all_compiled


def test_particles_links_and_anchors_equal_their_closed_forms():
    """T = sum m |x_d|^2 / 2, V = -sum m g . x + sum k (L - L0)^2 / 2 + k_a |x_0 - p|^2 / 2 (Pedersen, Hansen &
    Ambrosio 2004, §2) at a stretched, moving state of a 6-particle chain with two anchors."""
    g = np.array([0.0, -9.81, 0.3])
    s = fm.System(gravity=g)
    b = s.add(fm.RigidBody(1.0, (1.0, 1.0, 1.0), name="base"))
    s.add(fm.Fixed(s.ground, b))
    X = np.column_stack([0.1 * np.arange(6), np.zeros(6), np.zeros(6)])
    m = np.linspace(0.1, 0.2, 6)
    P = s.add(fm.Particles(X, m, name="chain"))
    k = np.linspace(1e3, 2e3, 5)
    s.add(fm.ParticleLinks(P, "chain", k, 1.0, free_length=0.09))
    s.add(fm.ParticleAnchors(P, [0, 5], points=[(0.0, 0.01, 0.0), (0.5, 0.0, 0.02)], stiffness=1e4, damping=2.0))
    asm = s.compile()
    assert _held(asm)
    for q, v in _states(asm, 3, seed=3):
        x, xd = q[P.coordinates()], v[P.coordinates()]
        T = 0.5 * np.sum(m * np.sum(xd * xd, axis=1))
        L = np.linalg.norm(np.diff(x, axis=0), axis=1)
        V = -np.sum(m * (x @ g)) - 1.0 * (q[:3] @ g) + 0.5 * np.sum(k * (L - 0.09) ** 2)
        V += 0.5e4 * (np.sum((x[0] - (0.0, 0.01, 0.0)) ** 2) + np.sum((x[5] - (0.5, 0.0, 0.02)) ** 2))
        Te, Ve = asm.energies(q, v)
        assert _close(Te, T + asm.rigid.kinetic_energy(q, v), T) and _close(Ve, V, abs(V))
        assert _close(Te, asm.kinetic_energy(q, v), T) and _close(Ve, asm.potential_energy(q, v), abs(V))


def test_springs_and_motor_equal_their_closed_forms():
    """A body on a revolute joint to the ground driven by a DC motor (magnetic energy L_a i^2 / 2), hung on a
    spring-damper from a ground point (k (L - L0)^2 / 2) and a rotational spring (k theta^2 / 2 about the joint
    axis), no gravity: at states turned by theta about z with current i."""
    s = fm.System(gravity=(0.0, 0.0, 0.0))
    b = s.add(fm.RigidBody(2.0, (0.1, 0.2, 0.3), name="arm"))
    j = s.add(fm.Revolute(s.ground, b, (0.0, 0.0, 0.0), (0.0, 0.0, 1.0)))
    s.add(fm.DCMotor(j, K_p=0.5, r_a=1.0, L_a=0.02, voltage=12.0))
    s.add(fm.SpringDamper(s.ground, b, point_a=(0.0, 1.0, 0.0), point_b=(0.5, 0.0, 0.0), k=300.0, c=1.0,
                          free_length=0.8))
    s.add(fm.RotationalSpringDamper(s.ground, b, (0.0, 0.0, 1.0), k=7.0, c=0.1))
    asm = s.compile()
    assert _held(asm)
    q0, v0 = asm.initial_state()
    for theta, i in ((0.3, 2.0), (-1.1, -0.5), (2.5, 4.0)):
        q, v = q0.copy(), v0.copy()
        q[3:7] = (np.cos(theta / 2), 0.0, 0.0, np.sin(theta / 2))
        v[-1] = i                              # the motor's charge rate: its current, A
        tip = (0.5 * np.cos(theta), 0.5 * np.sin(theta), 0.0)
        L = np.linalg.norm(np.subtract(tip, (0.0, 1.0, 0.0)))
        V = 0.5 * 300.0 * (L - 0.8) ** 2 + 0.5 * 7.0 * theta ** 2
        T = 0.5 * 0.02 * i * i
        Te, Ve = asm.energies(q, v)
        assert _close(Te, T, T) and _close(Ve, V, V)


def test_contact_pairs_equal_their_closed_forms():
    """Sphere-plane (Lankarani-Nikravesh, n = 3/2), sphere-sphere (Hunt-Crossley) and a clearance joint (linear
    law, n = 1) pressed in by known depths delta: V = K delta^(n+1) / (n+1) each (the elastic part of the laws,
    Lankarani & Nikravesh 1990); pairs apart store nothing."""
    s = fm.System(gravity=(0.0, 0.0, 0.0))
    ball = s.add(fm.RigidBody(0.2, (1e-4, 1e-4, 1e-4), position=(0.0, 0.048, 0.0), name="ball"))
    s.add(fm.SpherePlaneContact(s.ground, ball, point=(0.0, 0.0, 0.0), normal=(0.0, 1.0, 0.0), center=(0.0, 0.048, 0.0),
                                radius=0.05, law=LankaraniNikravesh(2e6, 0.8), name="floor"))
    a = s.add(fm.RigidBody(0.5, (1e-4, 1e-4, 1e-4), position=(1.0, 0.0, 0.0), name="a"))
    c = s.add(fm.RigidBody(0.5, (1e-4, 1e-4, 1e-4), position=(1.097, 0.0, 0.0), name="c"))
    s.add(SphereSphereContact(a, c, center_a=(1.0, 0.0, 0.0), center_b=(1.097, 0.0, 0.0), radius_a=0.05, radius_b=0.05,
                              law=HuntCrossley(1e6, 0.7), name="bobs"))
    arm = s.add(fm.RigidBody(1.0, (1e-3, 1e-3, 1e-3), position=(2.0, 0.0, 0.0), name="arm"))
    s.add(ClearanceJoint(s.ground, arm, point=(2.0, 0.0, 0.0), axis=(0.0, 0.0, 1.0), clearance=1e-3, radius_pin=0.01,
                         law=LinearSpringDamper(1e6, 0.5, 1.0), name="journal"))
    asm = s.compile()
    assert _held(asm)
    q, v = asm.initial_state()
    q[21 + 1] += 1.5e-3            # the pin (arm, coordinates 21..27) 1.5 mm off centre in a 1 mm clearance
    Te, Ve = asm.energies(q, v)
    V = 2e6 * 2e-3 ** 2.5 / 2.5 + 1e6 * 3e-3 ** 2.5 / 2.5 + 1e6 * 0.5e-3 ** 2 / 2.0
    assert _close(Ve, V, V) and _close(Ve, asm.potential_energy(q, v), V)
    q[1] += 0.01                    # the ball lifted off the floor: 8 mm apart
    assert _close(asm.energies(q, v)[1], V - 2e6 * 2e-3 ** 2.5 / 2.5, V)


def _winder() -> fm.System:
    """A wheel spun about a revolute joint against a soft rotational spring: it winds through several turns (the
    spring's unwrapping reference is history)."""
    s = fm.System(gravity=(0.0, -9.81, 0.0), name="winder")
    a = s.add(fm.RigidBody(1.0, (0.5, 0.5, 1.0), position=(0.0, 0.0, 0.0), angular_velocity=(0.0, 0.0, 30.0),
                           name="wheel"))
    s.add(fm.Revolute(s.ground, a, (0.0, 0.0, 0.0), (0.0, 0.0, 1.0)))
    s.add(fm.RotationalSpringDamper(s.ground, a, (0.0, 0.0, 1.0), k=0.5, c=0.002, name="winder"))
    return s


def test_result_energy_under_each_rows_history():
    """``Result.energy()`` of a run whose spring winds through several turns: each row's potential under its own
    unwrapping reference, equal to the per-family path replayed row by row (and to k theta^2 / 2 with the wound
    angle, which grows past 2 pi), saved every step and every seventh."""
    for save_every in (1, 7):
        s = _winder()
        res = fm.simulate(s, 1.0, 1e-3, save_every=save_every, progress=False)
        asm = s.compile()
        e = res.energy()
        saved = asm.history()
        T = np.array([asm.kinetic_energy(q, v) for q, v in zip(res.q, res.v)])
        V = []
        for q, v, h in zip(res.q, res.v, res.history):
            asm.set_history(h)
            V.append(asm.potential_energy(q, v))
        asm.set_history(saved)
        assert np.max(np.abs(e["kinetic"] - T)) <= RTOL * T.max()
        assert np.max(np.abs(e["potential"] - V)) <= RTOL * np.max(np.abs(V))
        theta = res.history[:, 1]                   # the unwrapped angle of each row (history: length, reference)
        assert theta.max() > 4 * np.pi
        assert np.max(np.abs(e["potential"] - 0.25 * theta ** 2)) <= 1e-9 * e["potential"].max()


def _replayed(asm, res) -> tuple[np.ndarray, np.ndarray]:
    """Kinetic and potential energy of every saved row through the per-family methods, each row under its saved
    element history (the reference ``Result.energy()`` took before the compiled path)."""
    saved = asm.history()
    T, V = [], []
    try:
        for q, v, h in zip(res.q, res.v, res.history):
            if asm.stateful:
                asm.set_history(h)
            T.append(asm.kinetic_energy(q, v))
            V.append(asm.potential_energy(q, v))
    finally:
        asm.set_history(saved)
    return np.array(T), np.array(V)


@pytest.mark.parametrize("family", ["crush element", "plastic hinge", "rotational spring winding",
                                    "sphere-plane approach speeds", "sphere-mesh contact", "sphere cloud", "DC motor"])
def test_result_energy_of_stateful_families_equals_the_replay(family):
    """``Result.energy()`` of runs with element history of every kind (crash elements' plastic state, a spring's
    winding, contact approach speeds, a mesh contact's and a sphere cloud's candidates; the motor keeps none):
    equal to the per-family methods replayed row by row under each row's history, to 1e-12 of the energies."""
    from test_rerun_state import FAMILIES
    s, kw = FAMILIES[family]()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = fm.simulate(s, **kw)
    e = res.energy()
    T, V = _replayed(s.compile(), res)
    scale = max(np.abs(T).max(), np.abs(V).max())
    assert np.max(np.abs(e["kinetic"] - T)) <= RTOL * scale
    assert np.max(np.abs(e["potential"] - V)) <= RTOL * scale


def test_block_energy_checks_equal_single_step_checks(monkeypatch):
    """The energy balance checked at the saved rows of blocks of compiled steps (one compiled evaluation per
    block, ``EnergyWatch.check_rows``) equals the checks of single steps (``EnergyWatch.check`` per row): same
    worst drift to rounding, for a particle chain (rows every step and every third) and the winding spring."""
    from flexmb.solvers.stepper import AlphaIntegrator

    def chain():
        """The chain of benchmarks/particle_chain.py with 8 particles."""
        s = fm.System(gravity=(0.0, -9.81, 0.0))
        b = s.add(fm.RigidBody(1.0, (1.0, 1.0, 1.0), name="base"))
        s.add(fm.Fixed(s.ground, b))
        P = s.add(fm.Particles(np.column_stack([0.1 * np.arange(8), np.zeros(8), np.zeros(8)]), 0.1, name="chain"))
        s.add(fm.ParticleLinks(P, "chain", 1e5, 1.0))
        s.add(fm.ParticleAnchors(P, 0, stiffness=1e6, damping=10.0))
        return s

    for build, save_every in ((chain, 1), (chain, 3), (_winder, 1)):
        runs = []
        for single in (False, True):
            if single:
                monkeypatch.setattr(AlphaIntegrator, "can_advance", lambda self: False)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                runs.append(fm.simulate(build(), 0.3, 1e-3, save_every=save_every, progress=False))
            monkeypatch.undo()
        fast, ref = runs
        assert fast.stats["blocks"] > 0 and ref.stats.get("blocks", 0) == 0
        assert np.max(np.abs(fast.q - ref.q)) < 1e-10
        assert ref.stats["energy_drift"] > 0.0
        assert abs(fast.stats["energy_drift"] - ref.stats["energy_drift"]) <= 1e-9 * ref.stats["energy_drift"]
        assert fast.message == ref.message == "completed"


def test_block_energy_check_flags_a_drifting_run(monkeypatch):
    """A run whose balance drifts (a stiff chain whose particles start with alternating velocities, all the
    energy in its highest mode, at a step of about three periods of that mode (omega ~ 2 sqrt(k/m) = 2000 rad/s,
    h = 10 ms) with rho_inf = 0: numerical damping removes it) is flagged by the block checks as by single steps,
    with the same drift and message."""
    from flexmb.errors import EnergyBalanceWarning
    from flexmb.solvers.stepper import AlphaIntegrator

    def build():
        s = fm.System(gravity=(0.0, 0.0, 0.0))
        b = s.add(fm.RigidBody(1.0, (1.0, 1.0, 1.0), name="base"))
        s.add(fm.Fixed(s.ground, b))
        n = 6
        V = np.zeros((n, 3))
        V[:, 0] = (-1.0) ** np.arange(n)
        P = s.add(fm.Particles(np.column_stack([0.1 * np.arange(n), np.zeros(n), np.zeros(n)]), 0.1, velocities=V))
        s.add(fm.ParticleLinks(P, "chain", 1e5, 0.0))
        return s

    runs = []
    for single in (False, True):
        if single:
            monkeypatch.setattr(AlphaIntegrator, "can_advance", lambda self: False)
        with pytest.warns(EnergyBalanceWarning, match="energy balance drifted"):
            runs.append(fm.simulate(build(), 0.2, 1e-2, rho_inf=0.0, progress=False))
        monkeypatch.undo()
    fast, ref = runs
    assert fast.stats["blocks"] > 0
    assert "energy balance drifted" in fast.message and fast.message == ref.message
    assert ref.stats["energy_drift"] > 0.5
    assert abs(fast.stats["energy_drift"] - ref.stats["energy_drift"]) <= 1e-9 * ref.stats["energy_drift"]
