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


@pytest.mark.parametrize("ground_pulley", [False, True])
def test_penetration_is_the_evaluations_delta(ground_pulley):
    """The onset checks' penetration (geometry only, ``penetration_kernel``) is the ``delta`` of the full
    evaluation (``contact_kernel``), pair by pair, with pairs in contact and apart and a tilted pulley axis: the same
    arithmetic, so equal to round-off (1e-15 m on offsets of ~0.5 m)."""
    asm = _contact_model(ground_pulley, 1.0).compile()
    g, = asm.families
    rng = np.random.default_rng(11)
    q = asm.initial_state()[0] + 0.01 * rng.standard_normal(asm.nq)
    v = rng.standard_normal(asm.nq)
    pen = g.penetration(asm.eval_state(q, v, np.zeros(asm.nq), 0.0))
    full = g.forces(asm.eval_state(q, v, np.zeros(asm.nq), 0.0))["delta"]
    assert (pen > 0).sum() >= 2 and (pen < 0).sum() >= 1
    np.testing.assert_allclose(pen, full, rtol=0.0, atol=1e-15)


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


# -- winches (flexmb/joints/winch.py, docs/theory-ropes.md §5) ---------------------------------------------------

def _winch_model(tilt):
    from flexmb.contact import rope_segments as segs
    s = fm.System(gravity=(0, -9.81, 0))
    u = np.array([math.sin(tilt), -math.cos(tilt), 0.0])
    top, bot = 3.0 * u, 7.0 * u                      # free span 3 m, then 4 m of rope in 4 segments
    rope = segs(s, top, bot, 4, 2.0, diameter=0.02)
    load = s.add(fm.RigidBody(50.0, (0.5, 0.5, 0.5), position=bot, name="load"))
    s.add(fm.Spherical(rope.segments[-1], load, bot))
    # reel in at 1 m/s, hold, pay out at 1.5 m/s, stop (speed ramps of 0.25 s)
    p = fm.payout_profile([0, 0.25, 1.0, 1.25, 1.5, 2.0, 2.25], [0, -1.0, -1.0, 0, 0, 1.5, 0])
    w = s.add(fm.Winch(s.ground, rope.segments[0], drum_point=(0, 0, 0), rope_point=top, payout=p, name="hoist"))
    return s, load, w, p, bot


def test_payout_profile_integrates_the_speed_table():
    p = fm.payout_profile([0.0, 1.0, 3.0], [0.0, 2.0, 2.0])
    assert p.value(1.0) == pytest.approx(1.0)            # ramp: area 1/2 * 1 * 2
    assert p.value(2.0) == pytest.approx(3.0)
    assert p.value(4.0) == pytest.approx(7.0)            # constant speed after the table
    assert p.rate(0.5) == pytest.approx(1.0) and p.acceleration(0.5) == pytest.approx(2.0)
    with pytest.raises(ModelError, match="increase"):
        fm.payout_profile([0.0, 0.0], [1.0, 1.0])


def test_winch_raises_and_lowers_a_load_at_the_prescribed_speed():
    """A load on a vertical rope follows the paid-out length exactly; the drum's work, -int T p' dt with T from
    the reaction, equals the change of energy; at rest the tension is the weight below the drum."""
    s, load, w, p, bot = _winch_model(0.0)
    # rho_inf = 0: the multipliers jump with the prescribed acceleration; at rho_inf = 0.9 they ring about the
    # exact value (+-10 % here, decaying over ~100 steps), which the positions do not show
    res = fm.simulate(s, 2.5, 5e-3, progress=False, rho_inf=0.0)
    y = res.position(load)[:, 1]
    pp = np.array([p.value(t) for t in res.t])
    # inextensible rope, exact constraint: the load is at bot - p (to the Newton tolerance)
    assert np.abs((y - bot[1]) + pp).max() < 1e-8
    T = w.tension(res)
    hold = (res.t > 1.3) & (res.t < 1.45)
    assert T[hold] == pytest.approx((50.0 + 2.0 * 4.0) * 9.81, rel=1e-8)     # weight of load and rope
    braking = (res.t > 1.02) & (res.t < 1.24)                # (one step after the jump) reeling in slows: p'' = +4 m/s^2, load y'' = -4
    assert T[braking] == pytest.approx((50.0 + 2.0 * 4.0) * (9.81 - 4.0), rel=1e-8)
    # energy: the drum's work, -int T p' dt with T from the reactions, equals the change of energy. At each jump of
    # the prescribed acceleration (4 here) the multiplier lags one step: an O(h) error of the booked work, measured
    # 3.3e-4 of the 249 J lifted at h = 5 ms, 1.3e-4 at 2.5 ms (rho_inf 0.9; rho_inf = 0 doubles it)
    res = fm.simulate(s, 2.5, 5e-3, progress=False)
    T = w.tension(res)
    P = -T * w.speed(res.t)
    W = np.concatenate([[0.0], np.cumsum(0.5 * (P[1:] + P[:-1]) * np.diff(res.t))])
    E = res.energy()
    dE = E["kinetic"] + E["potential"] - E["kinetic"][0] - E["potential"][0]
    assert np.abs(W - dE).max() < 5e-4 * np.abs(dE).max()
    assert np.abs(E["work_drivers"] - W).max() < 1e-4 * np.abs(dE).max()
    assert np.abs(E["total"] - E["total"][0]).max() < 5e-4 * np.abs(dE).max()
    with pytest.raises(ModelError, match="no relative coordinate|joint_coordinates"):
        res.joint_coordinates(w)


def test_winch_swinging_load_energy_balance():
    """A pendulum whose length the winch changes (tilted 0.3 rad): the energy balance closes with the drum work."""
    s, load, w, p, bot = _winch_model(0.3)
    res = fm.simulate(s, 2.5, 5e-3, progress=False)
    E = res.energy()
    scale = np.abs(E["work_drivers"]).max()
    # generalized-alpha (rho_inf 0.9) loses a little of the swing: measured 3e-6 of the drum work at h = 2 ms
    assert abs(E["total"][-1] - E["total"][0]) < 1e-4 * scale
    T = w.tension(res)
    P = -T * w.speed(res.t)
    W = np.concatenate([[0.0], np.cumsum(0.5 * (P[1:] + P[:-1]) * np.diff(res.t))])
    assert abs(W[-1] - E["work_drivers"][-1]) < 1e-4 * scale


def test_winch_bad_input():
    s = fm.System()
    b = s.add(fm.RigidBody(1.0, (1, 1, 1), position=(0, -1, 0), name="b"))
    with pytest.raises(ModelError, match="coincide"):
        fm.Winch(s.ground, b, drum_point=(0, -1, 0), rope_point=(0, -1, 0), payout=0.0)
    with pytest.raises(ModelError, match=r"payout\(0\)"):
        fm.Winch(s.ground, b, drum_point=(0, 0, 0), rope_point=(0, -1, 0), payout=lambda t: 1.0 + t)
    s.add(fm.Winch(s.ground, b, drum_point=(0, 0, 0), rope_point=(0, -1, 0), payout=lambda t: -2.0 * t, name="w"))
    with pytest.raises(ModelError, match="free span reached"):
        fm.simulate(s, 1.0, 1e-2, progress=False)


def _wound_drum(wound, hanging, rho=0.05, m=10.0, J=0.9, v0=0.01):
    """Drum (r = 0.3 m) with ``wound`` chords of 0.1 m of rope on it and ``hanging`` below, a load m; friction
    ramp ``v0`` (0.05 m/s: Newton needs 5 iterations a step as chords leave the drum, 0.01 m/s: 13)."""
    from flexmb.contact.rope import wound_drum_points
    r, L = 0.3, 0.1
    s = fm.System(gravity=(0, -9.81, 0))
    drum = s.add(fm.RigidBody(20.0, (0.5, 0.5, J), name="drum"))
    axle = s.add(fm.Revolute(s.ground, drum, (0, 0, 0), (0, 0, 1), name="axle"))
    pts = wound_drum_points(r, L, wound, hanging)
    rope = rope_chain(s, pts, rho, diameter=0.01)
    s.add(fm.Spherical(drum, rope.segments[0], pts[0], name="anchor"))
    load = s.add(fm.RigidBody(m, (1e-3,) * 3, position=pts[-1], name="load"))
    s.add(fm.Spherical(rope.segments[-1], load, pts[-1], name="hook"))
    c = s.add(RopePulleyContact(drum, rope, r, 1e5, 300.0, friction=CoulombRamp(0.3, v0), name="drum contact"))
    return s, drum, axle, load, rope, c, L / (2 * math.atan(L / (2 * r)))


def test_torque_braked_drum_pays_out():
    """A drum with 15 chords of rope wound on, braked by a constant torque tau = m g r_e / 2: the load drops with
    a = (m g - tau/r_e) / (m + J/r_e^2 + m_rope), r_e = L/phi the polygon's mean winding radius; the energy balance
    closes with the torque's work."""
    from flexmb.contact.rope import rope_pulley_forces
    m, J, rho = 10.0, 0.9, 0.05
    s, drum, axle, load, rope, c, re = _wound_drum(15, 5, rho, m, J, v0=0.05)
    tau = 0.5 * m * 9.81 * re
    s.add(fm.Torque(drum, (0, 0, tau), name="brake"))
    res = fm.simulate(s, 1.0, 2e-3, progress=False, contact_tol=np.inf)
    drop = res.position(load)[0, 1] - res.position(load)[-1, 1]
    a = (m * 9.81 - tau / re) / (m + J / re ** 2 + rho * 2.0)
    # measured +0.5 %: the hanging rope grows by 1.2 m (0.6 N more pull on 49 N) and the polygon's winding speed
    # ripples by phi^2/24 = 0.5 %; 1.5 % bounds both
    assert drop == pytest.approx(0.5 * a, rel=1.5e-2)
    E = res.energy()
    assert abs(E["total"][-1] - E["total"][0]) < 1e-4 * abs(E["potential"][-1] - E["potential"][0])
    f = rope_pulley_forces(res, c)
    unwound = drop / 0.1
    assert abs((f["Fn"][-1] > 0).sum() - (15 - unwound)) <= 1.5     # the chords still on the drum
    T = rope.tensions(res)
    assert T.shape == (res.t.size, len(rope.joints))
    # the lowest joint carries the load's weight less its inertia, (m + half a segment) (g - a); each chord leaving
    # the drum jerks the rope (+-11 N about 73 N): the mean over the last half (measured 2e-4 off), 2 %
    assert T[res.t > 0.5, -1].mean() == pytest.approx((m + rho * 0.05) * (9.81 - a), rel=2e-2)


def test_dc_motor_drum_hoists_at_its_steady_speed():
    """A DC motor on the drum's axle reels the rope in; at steady state V = r_a i + K_p omega and K_p i = the load
    torque (m + hanging rope) g r_e, so the load rises at v = r_e (V - r_a tau_L / K_p) / K_p."""
    m, rho = 10.0, 0.05
    s, drum, axle, load, rope, c, re = _wound_drum(2, 14, rho, m, v0=0.05)
    Kp, ra, V = 2.0, 0.5, 12.0
    s.add(fm.DCMotor(axle, Kp, ra, 1e-2, 0.0, voltage=V, name="motor"))
    t_end = 1.4
    res = fm.simulate(s, t_end, 2e-3, progress=False, contact_tol=np.inf)
    late = res.t > t_end - 0.2
    v = res.velocity(load)[late, 1].mean()
    hanging = 1.4 - (res.position(load)[-1, 1] - res.position(load)[0, 1])    # m of rope still hanging
    tau_L = (m + rho * hanging) * 9.81 * re
    v_ss = re * (V - ra * tau_L / Kp) / Kp
    # mechanical time constant J_eff r_a / K_p^2 = 0.23 s: after 1.2 s within e^-5 < 1 %; polygon ripple
    # averaged over the 0.2 s window; 1.5 %
    assert v == pytest.approx(v_ss, rel=1.5e-2)
    E = res.energy()
    assert abs(E["total"][-1] - E["total"][0]) < 2e-3 * E["work_nc"].max()
