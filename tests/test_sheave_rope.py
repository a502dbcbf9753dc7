"""``fm.SheaveRope``: the massless tension-only rope over sheaves (flexmb/contact/sheave_rope.py,
docs/theory-ropes.md §9), against central differences and closed forms.

* Newton blocks against central differences of the residual (taut, with damping, a drum paying out, sheaves on
  moving bodies with tilted axes, an eye): 1e-6 of the largest entry, the tolerance of tests/test_jacobians.py.
* Length: a rope from (-R, -1) up over a sheave of radius R at the origin and down to (R, -y) is 1 + pi R + y.
* The envelope property: the force on a rope end is T along its span towards the tangent point.
* A mass hanging over a fixed sheave, the other end anchored: static tension m g and stretch m g ell/EA (exact
  for the model: rel 1e-8, the static Newton tolerance).
* Atwood machine: started with the rope stretched to the steady tension 2 m1 m2 g/(m1 + m2), both masses move
  with a = (m1 - m2) g/(m1 + m2); positions to 1e-9 m (the motion is a parabola, which generalized-alpha
  reproduces up to the Newton tolerance).
* A sheave on a moving block in a bight of the rope, with two eyes: (M + 4 m) x_dd = (M - 2 m) g, parabola to
  1e-9 m.
* The same with a fixed sheave after the moving one (a span between two sheaves: their common tangent).
* Out of the sheave's plane (fleet angle): energy conserved without damping, 1e-5 of the kinetic energy.
* Slack: a rope longer than the path carries nothing; the mass falls freely (exact parabola, 1e-9 m) and the
  tension is 0 until the rope comes taut.
* Drum: a hanging load lowered by paying out at 1 m/s follows the payout; the energy balance with the drum work
  closes to 1e-6 of the work.
"""
import math

import numpy as np
import pytest

import flexmb as fm
from flexmb.errors import ModelError

G = 9.81


def fd(f, x, eps=1e-6):
    cols = []
    for k in range(x.size):
        d = np.zeros_like(x)
        d[k] = eps
        cols.append((f(x + d) - f(x - d)) / (2 * eps))
    return np.array(cols).T


def test_blocks_match_central_differences():
    s = fm.System(gravity=(0, -G, 0))
    a = s.add(fm.RigidBody(3.0, (0.2, 0.3, 0.4), position=(0.0, 2.0, 0.1), name="a"))
    b = s.add(fm.RigidBody(2.0, (0.1, 0.2, 0.3), position=(1.5, -1.0, 0.2), name="b"))
    sh = fm.Sheave(a, (0.1, 2.2, 0.1), 0.3, axis=(0.1, 0.2, 1.0), sense=-1, name="s1")
    sh2 = fm.Sheave(s.ground, (2.5, 0.5, 0.0), 0.2, axis=(0.0, 0.1, 1.0), sense=1, name="s2")
    pay = fm.TimeFunction(lambda t: 0.1 * t * t, lambda t: 0.2 * t, lambda t: 0.2)
    rope = fm.SheaveRope((s.ground, (-1.0, 0.0, 0.0)), (b, (1.5, -0.8, 0.2)),
                         [sh, (b, (1.4, -0.5, 0.3)), sh2, (a, (0.2, 1.5, 0.0))], EA=1e4, damping_time=0.05,
                         payout=pay, length=None, name="r")
    rope.free_length *= 0.9           # taut at every state below
    s.add(rope)
    # two sheaves in a row on two moving bodies (a common tangent), axes tilted alike
    n = np.array([0.1, 0.2, 1.0]) / np.linalg.norm([0.1, 0.2, 1.0])
    c1 = np.array([1.0, 2.5, 0.0])
    c2 = c1 + np.cross(n, [0.0, 0.0, 1.0]) * 3.0
    s3 = fm.Sheave(a, c1, 0.3, axis=n, sense=1, name="s3")
    s4 = fm.Sheave(b, c2, 0.2, axis=n, sense=-1, name="s4")
    r2 = fm.SheaveRope((s.ground, c1 + 2.0 * np.cross(n, [1.0, 0.0, 0.0])),
                       (a, c2 + 1.5 * np.cross(n, [0.0, 1.0, 0.0])), [s3, s4], EA=2e4, damping_time=0.02, name="r2")
    r2.free_length *= 0.9
    s.add(r2)
    asm = s.compile()
    rng = np.random.default_rng(3)
    q0, v0 = asm.initial_state()
    q = q0 + 0.02 * rng.standard_normal(q0.size)
    v = v0 + 0.3 * rng.standard_normal(q0.size)
    acc = rng.standard_normal(q0.size)
    lam = np.zeros(asm.m)
    t = 0.3
    g = [f for f in asm.families if type(f).__name__ == "SheaveRopeGroup"][0]
    assert np.all(g.evaluate(asm.eval_state(q, v, acc, t), t)[2][:, 2] > 0.0)      # taut
    for coef, fun, x in [((0, 0, 1, 1, 0), lambda x: asm.residual(x, v, acc, lam, t)[0], q),
                         ((0, 1, 0, 0, 0), lambda x: asm.residual(q, x, acc, lam, t)[0], v)]:
        S = asm.residual(q, v, acc, lam, t, coef=coef)[2]
        S = (S.toarray() if hasattr(S, "toarray") else S)[:asm.nq, :asm.nq]
        ref = fd(fun, x)
        assert np.abs(S - ref).max() <= 1e-6 * max(1.0, np.abs(ref).max())


def over_sheave(R=0.5, y=3.0, m=100.0, EA=1e6, length=None, anchor_y=-1.0, guide=False):
    s = fm.System(gravity=(0, -G, 0))
    load = s.add(fm.RigidBody(m, (1.0, 1.0, 1.0), position=(R, -y, 0.0), name="load"))
    if guide:                       # a vertical guide: the static solve needs the load held but for its height
        s.add(fm.Prismatic(s.ground, load, (R, -y, 0.0), (0.0, 1.0, 0.0)))
    sh = fm.Sheave(s.ground, (0.0, 0.0, 0.0), R, sense=-1, name="top")
    rope = s.add(fm.SheaveRope((s.ground, (-R, anchor_y, 0.0)), (load, (R, -y, 0.0)), [sh], EA=EA,
                               length=length, name="rope"))
    return s, load, rope


def test_length_and_envelope():
    R, y = 0.5, 3.0
    s, load, rope = over_sheave(R, y)
    assert rope.initial_length == pytest.approx(1.0 + math.pi * R + y, rel=1e-14)
    # a pulled-off end: the force on it is T along the span, towards the tangent point
    s2 = fm.System(gravity=(0, 0, 0))
    b = s2.add(fm.RigidBody(1.0, (1, 1, 1), position=(2.0, -3.0, 0.0)))
    sh = fm.Sheave(s2.ground, (0, 0, 0), R, sense=-1)
    r = s2.add(fm.SheaveRope((s2.ground, (-R, -1.0, 0.0)), (b, (2.0, -3.0, 0.0)), [sh], EA=1e3, length=5.0))
    asm = s2.compile()
    q, v = asm.initial_state()
    F = -asm.residual(q, v, np.zeros_like(q), np.zeros(asm.m), 0.0)[0][b.offset:b.offset + 3]
    P = np.array([2.0, -3.0])
    d = math.hypot(*P)
    phi = math.atan2(P[1], P[0]) + math.acos(R / d)                  # tangent point, rope leaving clockwise
    Tp = R * np.array([math.cos(phi), math.sin(phi)])
    e = (Tp - P) / np.linalg.norm(Tp - P)
    T = 1e3 * (r.initial_length - 5.0) / 5.0
    assert np.allclose(F[:2], T * e, rtol=1e-12, atol=1e-9 * T) and abs(F[2]) < 1e-9 * T


def test_static_hang_over_fixed_sheave():
    R, m, EA = 0.5, 100.0, 1e6
    s, load, rope = over_sheave(R, 3.0, m, EA, length=(1.0 + math.pi * R + 3.0) * 0.999, guide=True)
    res = fm.static_equilibrium(s, load_steps=2)
    T = rope.tension(res)[-1]
    assert T == pytest.approx(m * G, rel=1e-8)
    ell = rope.free_length
    y = res.position(load)[-1, 1]
    # length: 1 (anchor to sheave) + pi R + hanging part = ell + T ell/EA
    assert 1.0 + math.pi * R + (-y) == pytest.approx(ell * (1 + m * G / EA), rel=1e-10)


def test_atwood_machine():
    R, m1, m2, EA = 0.4, 12.0, 8.0, 1e7
    s = fm.System(gravity=(0, -G, 0))
    b1 = s.add(fm.RigidBody(m1, (1, 1, 1), position=(-R, -2.0, 0.0), name="m1"))
    b2 = s.add(fm.RigidBody(m2, (1, 1, 1), position=(R, -2.0, 0.0), name="m2"))
    sh = fm.Sheave(s.ground, (0, 0, 0), R, sense=-1)
    T0 = 2 * m1 * m2 * G / (m1 + m2)
    L = 4.0 + math.pi * R
    rope = s.add(fm.SheaveRope((b1, (-R, -2.0, 0)), (b2, (R, -2.0, 0)), [sh], EA=EA, length=L / (1 + T0 / EA)))
    res = fm.simulate(s, 1.0, 1e-3)
    a = (m1 - m2) * G / (m1 + m2)
    y1 = res.position(b1)[:, 1]
    y2 = res.position(b2)[:, 1]
    assert np.abs(y1 - (-2.0 - 0.5 * a * res.t ** 2)).max() < 1e-9
    assert np.abs(y2 - (-2.0 + 0.5 * a * res.t ** 2)).max() < 1e-9
    assert np.abs(rope.tension(res) - T0).max() < 1e-6 * T0


def test_moving_sheave_and_eye():
    """A sheave on a hanging body M (a block in a bight of the rope: anchor, under the block, up through an eye at
    the ceiling, over to a second eye, down to a mass m). Length 2 x + y = const, so with x the block's drop
    (M + 4 m) x_dd = (M - 2 m) g and T = M (g - a)/2; started with the rope stretched to that tension, the motion is
    a parabola: 1e-9 m."""
    R, M, m, EA = 0.3, 30.0, 5.0, 1e7
    s = fm.System(gravity=(0, -G, 0))
    blk = s.add(fm.RigidBody(M, (0.5, 0.5, 0.5), position=(0.0, -3.0, 0.0), name="block"))
    load = s.add(fm.RigidBody(m, (0.1, 0.1, 0.1), position=(1.0, -2.0, 0.0), name="load"))
    for b, p in ((blk, (0.0, -3.0, 0.0)), (load, (1.0, -2.0, 0.0))):        # keep both on vertical lines
        s.add(fm.Prismatic(s.ground, b, p, (0.0, 1.0, 0.0)))
    a = (M - 2 * m) * G / (M + 4 * m)
    T0 = M * (G - a) / 2
    # anchor (-R, 0) -> down, under the block (counter-clockwise) -> up to an eye at (R, 0) -> a second eye at (1, 0)
    # -> down to m
    rope = s.add(fm.SheaveRope((s.ground, (-R, 0.0, 0.0)), (load, (1.0, -2.0, 0.0)),
                               [fm.Sheave(blk, (0.0, -3.0, 0.0), R, sense=1), (s.ground, (R, 0.0, 0.0)),
                                (s.ground, (1.0, 0.0, 0.0))], EA=EA, initial_tension=T0))
    assert rope.initial_length == pytest.approx(3.0 + math.pi * R + 3.0 + (1.0 - R) + 2.0, rel=1e-14)
    res = fm.simulate(s, 0.5, 1e-3)
    x = -3.0 - res.position(blk)[:, 1]
    assert np.abs(x - 0.5 * a * res.t ** 2).max() < 1e-9
    assert np.abs(rope.tension(res) - T0).max() < 1e-6 * T0


def test_moving_sheave_then_fixed_sheave():
    """As above with a fixed sheave (radius R at (2R, 0)) instead of the eyes: the rope goes from under the block
    straight up onto the fixed sheave (a span between two sheaves: their common tangent), over it and down to m.
    Length 3 + pi R + 3 + pi R + 2; the same closed form, 1e-9 m."""
    R, M, m, EA = 0.3, 30.0, 5.0, 1e7
    s = fm.System(gravity=(0, -G, 0))
    blk = s.add(fm.RigidBody(M, (0.5, 0.5, 0.5), position=(0.0, -3.0, 0.0), name="block"))
    load = s.add(fm.RigidBody(m, (0.1, 0.1, 0.1), position=(3 * R, -2.0, 0.0), name="load"))
    for b, p in ((blk, (0.0, -3.0, 0.0)), (load, (3 * R, -2.0, 0.0))):
        s.add(fm.Prismatic(s.ground, b, p, (0.0, 1.0, 0.0)))
    a = (M - 2 * m) * G / (M + 4 * m)
    T0 = M * (G - a) / 2
    rope = s.add(fm.SheaveRope((s.ground, (-R, 0.0, 0.0)), (load, (3 * R, -2.0, 0.0)),
                               [fm.Sheave(blk, (0.0, -3.0, 0.0), R, sense=1),
                                fm.Sheave(s.ground, (2 * R, 0.0, 0.0), R, sense=-1)], EA=EA, initial_tension=T0))
    assert rope.initial_length == pytest.approx(3.0 + math.pi * R + 3.0 + math.pi * R + 2.0, rel=1e-14)
    res = fm.simulate(s, 0.5, 1e-3)
    x = -3.0 - res.position(blk)[:, 1]
    assert np.abs(x - 0.5 * a * res.t ** 2).max() < 1e-9
    assert np.abs(rope.tension(res) - T0).max() < 1e-6 * T0


def test_out_of_plane_swing_is_conservative():
    """A load swinging out of its sheave's plane (fleet angle up to ~20 deg): the length model is a potential, so
    without damping the energy is conserved: to 1e-5 of the initial kinetic energy (measured 3.2e-6 at h = 1 ms and
    7.9e-7 at 0.5 ms: the integrator's O(h^2) error; the rope also goes slack and catches the load again)."""
    R, m = 0.4, 50.0
    s, load, rope = over_sheave(R, 3.0, m, 1e6, length=(1.0 + math.pi * R + 3.0) * 0.999)
    load.velocity = np.array([0.3, 0.0, 1.5])
    res = fm.simulate(s, 2.0, 1e-3)
    E = res.energy()
    z = res.position(load)[:, 2]
    assert np.abs(z).max() > 0.5
    assert np.abs(E["total"] - E["total"][0]).max() < 1e-5 * E["kinetic"][0]       # measured 3.2e-6


def test_slack_rope_carries_nothing():
    R, m = 0.5, 10.0
    s, load, rope = over_sheave(R, 3.0, m, 1e5, length=1.0 + math.pi * R + 3.5)   # 0.5 m of slack
    res = fm.simulate(s, 0.5, 1e-3, energy=True)
    y = res.position(load)[:, 1]
    T = rope.tension(res)
    free = res.t < math.sqrt(2 * 0.5 / G) - 2e-3
    assert np.abs(y[free] - (-3.0 - 0.5 * G * res.t[free] ** 2)).max() < 1e-9
    assert np.all(T[free] == 0.0) and np.all(T >= 0.0)
    assert T.max() > m * G                 # it came taut and caught the load
    E = res.energy()
    assert np.abs(E["total"] - E["total"][0]).max() < 1e-3 * m * G * 0.5


def test_drum_pays_out_and_energy_balance():
    R, m, EA = 0.5, 100.0, 1e7
    s = fm.System(gravity=(0, -G, 0))
    load = s.add(fm.RigidBody(m, (1.0, 1.0, 1.0), position=(R, -3.0, 0.0), name="load"))
    sh = fm.Sheave(s.ground, (0, 0, 0), R, sense=-1)
    pay = fm.payout_profile([0.0, 0.5, 1.5, 2.0], [0.0, 1.0, 1.0, 0.0])
    stretch = m * G / EA
    L = 1.0 + math.pi * R + 3.0
    rope = s.add(fm.SheaveRope((s.ground, (-R, -1.0, 0.0)), (load, (R, -3.0, 0.0)), [sh], EA=EA,
                               damping_time=0.002, payout=pay, length=L / (1 + stretch)))
    res = fm.simulate(s, 2.5, 1e-3)
    y = res.position(load)[:, 1]
    p = np.array([pay.value(t) for t in res.t])
    assert np.allclose(rope.unstretched_length(res.t), rope.free_length + p, rtol=1e-15)
    T = rope.tension(res)
    # the load follows the payout within its (changing) stretch and the ringing of the rope
    assert np.abs(-y - (3.0 + p)).max() < 5e-3
    assert np.all(T >= 0.0)
    E = res.energy()
    W = abs(E["work"][-1])
    assert W > 0.9 * m * G * 1.5
    assert np.abs(E["total"] - E["total"][0]).max() < 1e-4 * W
    v = rope.values(res)
    drum = np.concatenate([[0.0], np.cumsum(0.5 * (v["drum_power"][1:] + v["drum_power"][:-1]) * np.diff(res.t))])
    assert drum[-1] == pytest.approx(-m * G * 1.5, rel=2e-2)


def test_bad_input():
    s = fm.System()
    b = s.add(fm.RigidBody(1.0, (1, 1, 1), position=(0.1, -1.0, 0.0)))
    with pytest.raises(ModelError, match="within the radius"):
        fm.SheaveRope((s.ground, (-1.0, 0, 0)), (b, (0.1, -0.2, 0.0)), [fm.Sheave(s.ground, (0, 0, 0), 0.5)], EA=1.0)
    with pytest.raises(ModelError, match="not in one plane"):
        fm.SheaveRope((s.ground, (-1.0, 0, 0)), (b, (0.1, -1.0, 0.0)),
                      [fm.Sheave(s.ground, (0, 0, 0), 0.5), fm.Sheave(s.ground, (3, 0, 0.5), 0.5)], EA=1.0)
    with pytest.raises(ModelError, match="overlap"):
        fm.SheaveRope((s.ground, (-1.0, 0, 0)), (b, (0.1, -1.0, 0.0)),
                      [fm.Sheave(s.ground, (0, 0, 0), 0.5, sense=-1), fm.Sheave(s.ground, (0.8, 0, 0), 0.5)], EA=1.0)
    with pytest.raises(ModelError, match="EA"):
        fm.SheaveRope((s.ground, (-1.0, 0, 0)), (b, (0.1, -1.0, 0.0)), [], EA=0.0)
    with pytest.raises(ModelError, match="sense"):
        fm.Sheave(s.ground, (0, 0, 0), 0.5, sense=2)
    with pytest.raises(ModelError, match="RigidBody"):
        fm.SheaveRope(("ground", (-1.0, 0, 0)), (b, (0.1, -1.0, 0.0)), [], EA=1.0)
    with pytest.raises(ModelError, match="not both"):
        fm.SheaveRope((s.ground, (-1.0, 0, 0)), (b, (0.1, -1.0, 0.0)), [], EA=1.0, length=1.0, initial_tension=1.0)
    r = fm.SheaveRope((s.ground, (-1.0, 0, 0)), (b, (0.1, -1.0, 0.0)), [], EA=100.0, initial_tension=1.0)
    assert r.free_length == pytest.approx(r.initial_length / 1.01, rel=1e-15)
    with pytest.raises(ModelError, match="payout"):
        fm.SheaveRope((s.ground, (-1.0, 0, 0)), (b, (0.1, -1.0, 0.0)), [], EA=1.0, payout=lambda t: 1.0 + t)
