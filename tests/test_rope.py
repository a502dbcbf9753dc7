"""Rope-pulley contact (flexmb/contact/rope.py, docs/theory-ropes.md): exact Newton blocks against central
differences, a rope at rest on a pulley carrying two equal masses, the capstan law with a pulley turning under a
held rope, a winch drum reeling rope in, and bad input."""
import math

import numpy as np
import pytest

import flexmb as fm
from flexmb.contact import CoulombRamp, RopePulleyContact, over_pulley_points, rope_chain, rope_segments
from flexmb.errors import ModelError


def _contact_model(ground_pulley=False, exponent=1.0):
    s = fm.System(gravity=(0, -9.81, 0))
    pulley = s.ground if ground_pulley else s.add(fm.RigidBody(10.0, (1, 1, 2), name="pulley"))
    rope = rope_segments(s, (-0.6, 0.45, 0.02), (0.6, 0.47, -0.01), 4, 2.0)
    s.add(RopePulleyContact(pulley, rope, 0.5, 1e4, 50.0, exponent=exponent, axis=(0.1, 0.2, 1.0),
                            friction=CoulombRamp(0.4, 0.05), guide_stiffness=3e3, guide_damping=7.0))
    return s


@pytest.mark.parametrize("ground_pulley, exponent, vscale", [(False, 1.0, 1.0), (False, 1.5, 0.01),
                                                            (True, 1.0, 0.01), (False, 1.0, 0.01)])
def test_blocks_match_central_differences(ground_pulley, exponent, vscale):
    asm = _contact_model(ground_pulley, exponent).compile()
    g, = asm.families
    rng = np.random.default_rng(7)
    q = asm.initial_state()[0] + 0.01 * rng.standard_normal(asm.nq)
    v = vscale * rng.standard_normal(asm.nq)          # 0.01: slip inside the friction ramp (v0 = 0.05 m/s)
    a = np.zeros(asm.nq)
    st = asm.eval_state(q, v, a, 0.0)
    pen = g.penetration(st)
    assert (pen > 0).sum() >= 2 and (pen < 0).sum() >= 1      # pairs in contact and apart
    r, blk = g.residual(st, (0.0, 0.0, 1.0))
    _, blk_v = g.residual(st, (0.0, 1.0, 0.0))
    cols = np.where(g.scatter >= 0, g.scatter, -1)
    eps = 1e-7
    for which, B in (("q", blk), ("v", blk_v)):
        for m in range(cols.shape[1]):
            for i in range(cols.shape[0]):
                if cols[i, m] < 0:
                    continue
                dq, dv = q.copy(), v.copy()
                (dq if which == "q" else dv)[cols[i, m]] += eps
                plus = g.residual(asm.eval_state(dq, dv, a, 0.0), None)[0][i]
                (dq if which == "q" else dv)[cols[i, m]] -= 2 * eps
                minus = g.residual(asm.eval_state(dq, dv, a, 0.0), None)[0][i]
                fd = (plus - minus) / (2 * eps)
                # central differences of a piecewise smooth residual: O(eps^2) truncation, O(1e-16/eps) round-off
                # on forces ~1e2 N: 1e-5 of the largest entry
                assert np.abs(B[i, :, m] - fd).max() <= 1e-5 * max(1.0, np.abs(B).max())


def _equal_masses(mu, n=30):
    s = fm.System(gravity=(0, -9.81, 0))
    pulley = s.add(fm.RigidBody(10.0, (0.9, 0.9, 1.6), name="pulley"))
    s.add(fm.Revolute(s.ground, pulley, (0, 0, 0), (0, 0, 1), name="axle"))
    pts = over_pulley_points(n, 2.0, 9.747)
    rope = rope_chain(s, pts, 7.695, diameter=0.02)
    ends = [s.add(fm.RigidBody(5.0, (1e-3,) * 3, position=pts[k], name=f"m{k}")) for k in (0, -1)]
    s.add(fm.Spherical(rope.segments[0], ends[0], pts[0]))
    s.add(fm.Spherical(rope.segments[-1], ends[1], pts[-1]))
    s.add(RopePulleyContact(pulley, rope, 2.0, 5e4, 500.0, friction=CoulombRamp(mu, 0.01) if mu else None))
    return s, ends, rope


def test_rope_at_rest_holds_two_equal_masses():
    s, ends, rope = _equal_masses(0.5)
    res = fm.simulate(s, 1.0, 2e-3, progress=False, contact_tol=np.inf)
    asm = s.compile()
    y = res.q[:, [ends[0].offset + 1, ends[1].offset + 1]]
    # the segments settle on their contact springs, delta = T (L/r) / K ~ 0.7 mm (T ~ 180 N), damped within 0.1 s;
    # the masses sink together by (1 + pi/2) delta ~ 2 mm (a shorter arc and the hanging parts lowered), and stop
    assert np.abs(y - y[0]).max() < 4e-3
    assert np.abs(res.v[-1, [ends[0].offset + 1, ends[1].offset + 1]]).max() < 1e-4
    assert abs((y[-1, 0] - y[0, 0]) - (y[-1, 1] - y[0, 1])) < 1e-6
    st = asm.eval_state(res.q[-1], res.v[-1], np.zeros(asm.nq), res.t[-1])
    g, = asm.families
    r = g.residual(st, None)[0]
    lift = r[:, 3:6].sum(axis=0)                  # total contact force on the segments (N)
    weight = (10.0 + 7.695 * rope.length) * 9.81
    # at rest the pulley carries the rope and both masses; residual motion (<1e-3 m/s^2 x 85 kg) sets 1e-4
    assert lift[1] == pytest.approx(weight, rel=1e-4)
    assert abs(lift[0]) < 1e-3 * weight
    f = g.forces(st)
    # settling leaves a small friction in the chain (~0.1 N); the rope sticks: far below mu F_n everywhere
    on = f["Fn"] > 0
    assert np.all(np.abs(f["ft"][on]) < 0.05 * 0.5 * f["Fn"][on])


@pytest.mark.parametrize("sense", [1.0, -1.0])
def test_capstan_ratio_on_a_turning_pulley(sense):
    """A weightless rope held at one end, pulled by F at the other, over half a turn of a pulley turning under it:
    the rope slips everywhere, so T_anchor = F exp(+- mu pi) (Euler-Eytelwein)."""
    mu, F, n = 0.3, 100.0, 40
    s = fm.System(gravity=(0, 0, 0))
    pulley = s.add(fm.RigidBody(10.0, (0.9, 0.9, 1.6), name="pulley"))
    axle = s.add(fm.Revolute(s.ground, pulley, (0, 0, 0), (0, 0, 1), name="axle"))
    s.add(fm.Driver(axle, angle=fm.TimeFunction(lambda t: sense * 0.1 * t, lambda t: sense * 0.1, lambda t: 0.0)))
    pts = over_pulley_points(n, 2.0, 9.747)
    rope = rope_chain(s, pts, 1.0, diameter=0.02)
    anchor = s.add(fm.Spherical(s.ground, rope.segments[-1], pts[-1], name="anchor"))
    s.add(fm.Force(rope.segments[0], (0.0, -F, 0.0), local_point=rope.segments[0].to_local_point(pts[0])))
    s.add(RopePulleyContact(pulley, rope, 2.0, 5e4, 500.0, friction=CoulombRamp(mu, 1e-3)))
    res = fm.simulate(s, 0.8, 2e-3, progress=False, contact_tol=np.inf)
    asm, k = s.compile(), s.joints.index(anchor)
    late = np.flatnonzero(res.t > 0.5)[::10]
    T_anchor = np.mean([np.linalg.norm(asm.reactions(res.q[i], res.v[i], res.lam[i], res.t[i])[0][k]) for i in late])
    # a counter-clockwise rim (sense +1) drags the rope towards F (left): the anchor (right) holds F and the friction
    exact = F * math.exp(sense * mu * math.pi)
    # a chain of 40 chords on the arc approximates the capstan integral to O((L/r)^2) = 1.5e-2 per chord, a few
    # 1e-3 over the wrap (60 chords: 1e-3 measured); 1 % covers it
    assert T_anchor == pytest.approx(exact, rel=1e-2)


def test_bad_input_is_refused():
    s = fm.System()
    rope = rope_segments(s, (0, 0, 0), (1, 0, 0), 2, 1.0)
    p = s.add(fm.RigidBody(1.0, (1, 1, 1), name="p"))
    with pytest.raises(ModelError, match="radius"):
        RopePulleyContact(p, rope, -1.0, 1e4)
    with pytest.raises(ModelError, match="no rope segments"):
        RopePulleyContact(p, [], 1.0, 1e4)
    with pytest.raises(ModelError, match="guide_stiffness"):
        RopePulleyContact(p, rope, 1.0, 1e4, exponent=1.5)
    with pytest.raises(ModelError, match="pulley itself"):
        RopePulleyContact(p, [p], 1.0, 1e4)
    with pytest.raises(ModelError, match="coincide"):
        rope_chain(s, [(0, 0, 0), (0, 0, 0), (1, 0, 0)], 1.0, name="bad")


def test_winch_drum_reels_rope_in():
    """A drum driven at a prescribed angle (a ``Driver`` on its revolute) with the rope's end pinned to its rim winds
    the rope on: the chord polygon takes one segment L per chord angle phi = 2 atan(L / 2r), so the load rises
    L/phi per radian of drum rotation."""
    r, n, L, omega, T = 0.3, 20, 0.1, 1.0, 0.5
    Rp = math.hypot(r, L / 2)                      # chord ends ride at R' when the centres touch at r
    s = fm.System(gravity=(0, -9.81, 0))
    drum = s.add(fm.RigidBody(20.0, (0.5, 0.5, 0.9), name="drum"))
    axle = s.add(fm.Revolute(s.ground, drum, (0, 0, 0), (0, 0, 1), name="axle"))

    def angle(t):                                   # smooth start: speed ramps to omega over T, then constant
        return omega * t * t / (2 * T) if t < T else omega * (t - T / 2)

    s.add(fm.Driver(axle, angle=fm.TimeFunction(angle, lambda t: omega * min(t / T, 1.0),
                                                 lambda t: omega / T if t < T else 0.0)))
    pts = np.array([(Rp, -k * L, 0.0) for k in range(n + 1)])
    rope = rope_chain(s, pts, 1.0, diameter=0.01)
    s.add(fm.Spherical(drum, rope.segments[0], pts[0], name="rope anchor"))
    load = s.add(fm.RigidBody(10.0, (1e-3,) * 3, position=pts[-1], name="load"))
    s.add(fm.Spherical(rope.segments[-1], load, pts[-1]))
    s.add(RopePulleyContact(drum, rope, r, 1e5, 300.0, friction=CoulombRamp(0.3, 0.01), name="drum contact"))
    t_end = 2.5
    res = fm.simulate(s, t_end, 2e-3, progress=False, contact_tol=np.inf)
    rise = res.q[-1, load.offset + 1] - res.q[0, load.offset + 1]
    phi = 2 * math.atan(L / (2 * r))
    expected = angle(t_end) * L / phi
    # the load follows the winding polygon, whose reeling speed ripples by ~phi^2/24 = 0.5 % over a chord, and
    # swings slightly as each segment lands (damped by the contact); 1 % of the 0.68 m lift bounds both
    assert rise == pytest.approx(expected, rel=1e-2)
    asm = s.compile()
    g, = asm.families
    st = asm.eval_state(res.q[-1], res.v[-1], np.zeros(asm.nq), res.t[-1])
    wound = int((g.forces(st)["Fn"] > 0).sum())
    assert abs(wound - angle(t_end) / phi) <= 1.5   # the segments on the drum are those reeled in
