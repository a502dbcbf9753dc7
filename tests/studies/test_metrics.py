"""Crash and impact metrics against closed forms: HIC of constant, triangular and half-sine
pulses, contact duration and penetration of a Hertz impact, point accelerations of a
spinning body, parameter sets."""
import math

import numpy as np
import pytest
from scipy.optimize import brentq

import flexmb as fm
from flexmb.errors import ModelError
from flexmb.studies import Grid, Samples
from flexmb.studies import metrics as mt
from flexmb.studies.examples import ball_drop, hertz_contact_time, hertz_max_penetration
from flexmb.studies.parameters import param_hash

A = 80.0   # pulse amplitude (g)


# -- HIC -------------------------------------------------------------------------------------

@pytest.mark.parametrize("T, window", [(0.010, 0.015), (0.030, 0.015), (0.030, 0.036)])
def test_hic_constant_pulse(T, window):
    # a(t) = A on [0, T]: HIC = min(T, window) A^2.5, the longest admissible interval
    t = np.linspace(0.0, T, 31)
    r = mt.hic(t, np.full(t.size, A), window)
    assert r.value == pytest.approx(min(T, window) * A ** 2.5, rel=1e-12)
    assert r.t2 - r.t1 == pytest.approx(min(T, window), rel=1e-9)


def test_hic_triangle_pulse_exact_on_coarse_samples():
    # a = A (1 - |t - T/2| / (T/2)): the optimum is symmetric, a(t1) = 0.6 mean gives
    # t1 = 3T/14, t2 = 11T/14 and HIC = (4T/7) (5A/7)^2.5 (for 4T/7 <= window)
    T = 0.012
    exact = (4 * T / 7) * (5 * A / 7) ** 2.5
    t = np.linspace(0.0, T, 11)                # the optimum end points are not samples
    a = A * (1 - np.abs(t - T / 2) / (T / 2))
    r = mt.hic(t, a, 0.015)
    assert r.value == pytest.approx(exact, rel=1e-10)
    assert (r.t1, r.t2) == pytest.approx((3 * T / 14, 11 * T / 14), rel=1e-6)
    coarse = mt.hic(t, a, 0.015, continuous=False)     # sample end points: a lower bound
    assert exact * 0.99 < coarse.value < exact
    # non-uniform samples of the same piecewise-linear signal give the same HIC
    t_nu = np.unique(np.concatenate([t, np.random.default_rng(3).uniform(0, T, 40)]))
    a_nu = A * (1 - np.abs(t_nu - T / 2) / (T / 2))
    assert mt.hic(t_nu, a_nu, 0.015).value == pytest.approx(exact, rel=1e-9)


def test_hic_half_sine_pulse():
    # a = A sin(pi t / T). Interior optimum symmetric about the peak, half-angle u with
    # cos u = 0.6 sin(u)/u (tan u = u / 0.6): HIC = (2uT/pi) (A sin(u)/u)^2.5
    u = brentq(lambda x: math.tan(x) - x / 0.6, 0.1, math.pi / 2 - 1e-9)
    T = 0.010
    exact = (2 * u * T / math.pi) * (A * math.sin(u) / u) ** 2.5
    t = np.linspace(0.0, T, 2001)
    r = mt.hic(t, A * np.sin(np.pi * t / T), 0.015)
    assert r.value == pytest.approx(exact, rel=1e-6)
    assert r.t1 == pytest.approx(T / 2 - u * T / math.pi, rel=1e-3)
    # a long pulse: the window binds and centres on the peak, HIC = W mean^2.5
    T, W = 0.050, 0.015
    mean = A * 2 * T / (math.pi * W) * math.sin(math.pi * W / (2 * T))
    t = np.linspace(0.0, T, 2001)
    r15 = mt.hic(t, A * np.sin(np.pi * t / T), W)
    assert r15.value == pytest.approx(W * mean ** 2.5, rel=1e-6)
    assert (r15.t1, r15.t2) == pytest.approx((T / 2 - W / 2, T / 2 + W / 2), rel=1e-6)
    r36 = mt.hic(t, A * np.sin(np.pi * t / T), 0.036)
    assert r36.value > r15.value


def test_hic_is_the_continuous_maximum_of_the_interpolant():
    # random coarse signals (signed or not, uniform or not): the exact HIC is never below the
    # best sample pair of a 4000-point resampling of the same piecewise-linear signal (a lower
    # bound), and exceeds it by no more than that grid's resolution
    rng = np.random.default_rng(7)
    for trial in range(40):
        n = int(rng.integers(3, 25))
        t = np.sort(rng.uniform(0, 0.04, n)) if trial % 3 == 0 else np.linspace(0, 0.04, n)
        a = rng.normal(40, 40, n)
        a = np.abs(a) if trial % 2 else a
        W = float(rng.choice([0.004, 0.015, 0.036]))
        r = mt.hic(t, a, W)
        fine = np.unique(np.concatenate([t, np.linspace(t[0], t[-1], 4001)]))
        dense = mt.hic(fine, np.interp(fine, t, a), W, continuous=False).value
        assert dense * (1 - 1e-12) <= r.value <= dense * (1 + 5e-3) + 1e-12
        assert r.value >= mt.hic(t, a, W, continuous=False).value
        if r.value > 0:                                    # the reported window gives the value
            x = np.unique(np.concatenate([[r.t1, r.t2], t[(t > r.t1) & (t < r.t2)]]))
            y = np.interp(x, t, a)
            D = float(np.sum(0.5 * (y[1:] + y[:-1]) * np.diff(x)))   # trapezoids: exact for linear pieces
            assert 0 < r.t2 - r.t1 <= W * (1 + 1e-9)
            assert D ** 2.5 / (r.t2 - r.t1) ** 1.5 == pytest.approx(r.value, rel=1e-9)


def test_hic_vectors_and_edge_cases():
    t = np.linspace(0.0, 0.01, 11)
    vec = np.zeros((11, 3))
    vec[:, 1] = A
    assert mt.hic(t, vec).value == pytest.approx(0.01 * A ** 2.5)   # rows count by magnitude
    assert mt.hic(t, -np.full(11, A)).value == 0.0                   # no positive mean
    with pytest.raises(ModelError, match="window"):
        mt.hic(t, np.ones(11), window=0.0)
    with pytest.raises(ModelError, match="non-decreasing"):
        mt.hic(t[::-1], np.ones(11))


# -- series metrics ---------------------------------------------------------------------------

def test_duration_peak_penetration():
    t = np.array([0.0, 1.0, 2.0, 3.0, 4.0])
    f = np.array([-1.0, 1.0, 1.0, -1.0, -1.0])
    assert mt.duration(t, f) == pytest.approx(2.0)          # crossings at 0.5 and 2.5
    assert mt.duration(t, f, threshold=0.5) == pytest.approx(1.5)
    # a clipped force [0, 1, 1, 0, 0]: the linear pieces rise from t = 0 and fall to t = 3
    assert mt.contact_duration(t, np.maximum(f, 0.0)) == pytest.approx(3.0)
    assert mt.peak(f) == 1.0 and mt.peak(-3 * f) == 3.0 and mt.peak(-3 * f, absolute=False) == 3.0
    assert mt.peak(np.array([[3.0, 4.0, 0.0]])) == 5.0
    assert mt.max_penetration([0.1, -0.02, 0.05]) == pytest.approx(0.02)
    assert mt.max_penetration([0.1, 0.2]) == 0.0
    with pytest.raises(ModelError):
        mt.peak([1.0, np.nan])


def test_hertz_impact_metrics():
    # elastic Hertz impact (e = 1): delta_max = (5 m v^2 / 4K)^0.4, T = 2.9432 delta_max / v
    m, v, K = 4.5, 3.0, 5e7
    s, run = ball_drop({"v": v, "K": K, "e": 1.0, "steps": 400})
    res = fm.simulate(s, **run)
    gap = mt.gap_to_plane(res, "ball", radius=0.1)
    assert mt.max_penetration(gap) == pytest.approx(hertz_max_penetration(m, v, K), rel=1e-3)
    force = mt.user_force_history(res, "contact")[:, 2]
    assert mt.contact_duration(res.t, force) == pytest.approx(hertz_contact_time(m, v, K), rel=1e-2)
    # the ball is free apart from the contact: peak acceleration = peak force / m
    assert mt.peak_acceleration_g(res, "ball") == pytest.approx(mt.peak(force) / m / mt.STANDARD_GRAVITY, rel=1e-6)
    ke = 0.5 * m * v * v
    assert abs(mt.energy_absorbed(res)) < 1e-4 * ke                 # elastic: nothing absorbed
    s, run = ball_drop({"v": v, "K": K, "e": 0.8})
    res = fm.simulate(s, **run)
    v_out = res.v[-1, 2]
    assert mt.energy_absorbed(res) == pytest.approx(ke - 0.5 * m * v_out ** 2, rel=1e-3)
    hic = mt.HIC("ball")(res)
    a_g = np.linalg.norm(mt.point_acceleration(res, "ball"), axis=1) / mt.STANDARD_GRAVITY
    assert hic == mt.hic(res.t, a_g, 0.015)
    assert res.t[0] <= hic.t1 < hic.t2 <= res.t[-1]


def test_point_acceleration_of_a_spinning_body():
    # spin about a principal axis z at w with a constant torque n: alpha = n / Izz;
    # a point at radius r has centripetal w^2 r and tangential alpha r
    w0, Izz, n, r = 20.0, 0.02, 0.4, 0.3
    s = fm.System()
    body = s.add(fm.RigidBody(1.0, (0.01, 0.01, Izz), angular_velocity=(0, 0, w0), name="disc"))
    s.add(fm.Torque(body, (0.0, 0.0, n)))
    res = fm.simulate(s, 0.2, 1e-3)
    alpha = n / Izz
    w = res.angular_velocity(body)[:, 2]                    # the simulated spin rate (~ w0 + alpha t)
    np.testing.assert_allclose(w, w0 + alpha * res.t, rtol=1e-4)
    a = mt.point_acceleration(res, body, (r, 0.0, 0.0))
    x = res.position(body, (r, 0.0, 0.0))
    radial = x / r                                           # unit vector centre -> point (CM fixed at 0)
    tangential = np.cross([0.0, 0.0, 1.0], radial)
    np.testing.assert_allclose(np.einsum("ni,ni->n", a, radial), -w ** 2 * r, rtol=1e-9)
    # alpha comes from the saved accelerations vd: the index-3 scheme holds the constraints
    # (here p.p = 1) on positions, so its Euler-parameter accelerations wobble by ~1e-4
    np.testing.assert_allclose(np.einsum("ni,ni->n", a, tangential), alpha * r, rtol=1e-3)
    np.testing.assert_allclose(a[:, 2], 0.0, atol=1e-9)
    assert mt.peak_acceleration_g(res, "disc", (r, 0, 0)) == pytest.approx(
        math.hypot(w[-1] ** 2 * r, alpha * r) / mt.STANDARD_GRAVITY, rel=1e-6)
    with pytest.raises(ModelError, match="flexible"):
        mt.point_acceleration(res, body, node=0)


# -- parameter sets ---------------------------------------------------------------------------

def test_grid_and_samples():
    g = Grid({"v": [1.0, 2.0], "k": [10, 20, 30], "name": "pad"})
    assert len(g) == 6 and g.cases()[1] == {"v": 1.0, "k": 20, "name": "pad"}
    s = Samples({"v": (2.0, 6.0), "k": (1e6, 1e8), "e": 0.8}, n=50, seed=4, log=("k",))
    cases = s.cases()
    v = np.array([c["v"] for c in cases])
    k = np.array([c["k"] for c in cases])
    # Latin hypercube: each of the n strata of each range holds exactly one sample
    assert sorted(np.floor((v - 2.0) / 4.0 * 50).astype(int)) == list(range(50))
    assert sorted(np.floor((np.log10(k) - 6.0) / 2.0 * 50).astype(int)) == list(range(50))
    assert all(c["e"] == 0.8 for c in cases)
    assert cases == Samples({"v": (2.0, 6.0), "k": (1e6, 1e8), "e": 0.8}, n=50, seed=4, log=("k",)).cases()
    u = Samples({"v": (2.0, 6.0)}, n=20, seed=1, method="uniform").cases()
    assert all(2.0 <= c["v"] <= 6.0 for c in u)
    assert param_hash({"v": 0.1 + 0.2}) != param_hash({"v": 0.3})   # exact values
    with pytest.raises(ModelError, match="range"):
        Samples({"v": (3.0, 1.0)}, n=4)
    with pytest.raises(ModelError, match="numbers, strings"):
        Grid({"material": [object()]})
    with pytest.raises(ModelError, match="column"):
        Grid({"bad name": [1]})
