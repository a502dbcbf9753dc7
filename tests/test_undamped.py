"""Undamped integration (issue 22, item 3): ``rho_inf = 1``, HHT at alpha = 0 and Newmark's trapezoidal rule
conserve energy instead of diverging (flexmb/solvers/undamped.py, docs/theory.md §5.1).

Without the consistent step end (the index-3 step alone) every case here diverges: the double pendulum stops
with a ConvergenceError at t = 8.43 s (h = 1 ms), the heavy top at 0.17 s (h = 0.5 ms, any of the three
spellings), the torque-free body at 29.8 s (h = 10 ms).
"""
from __future__ import annotations

import numpy as np
import pytest
from scipy.special import ellipk

import flexmb as fm
from flexmb.solvers.generalized_alpha import AlphaParameters
from verification.rigid import models

UNDAMPED = [("generalized-alpha", {"rho_inf": 1.0}), ("hht", {"rho_inf": 1.0}), ("newmark", {})]


def _energy_error(res) -> float:
    e = res.energy()["total"]
    return float(np.abs(e - e[0]).max())


@pytest.mark.parametrize("method, kw", UNDAMPED + [("newmark", {"beta": 0.3, "gamma": 0.5})])
def test_undamped_members_are_the_undamped_ones(method, kw):
    """gamma = 1/2 exactly is the undamped family; every damped member keeps the index-3 step alone."""
    from flexmb.solvers.simulate import _params
    assert _params(method, kw.get("rho_inf", 0.9), kw.get("beta"), kw.get("gamma")).undamped
    assert not AlphaParameters.generalized_alpha(0.99).undamped
    assert not AlphaParameters.hht(0.99).undamped
    assert not AlphaParameters.newmark(0.3025, 0.6).undamped


def test_double_pendulum_conserves_energy_and_stays_second_order():
    """Crous 2000, App. D double pendulum, 10 s at h = 2 ms and 1 ms (1e4 steps), rho_inf = 1; the index-3 step alone
    stops at 8.43 s (h = 1 ms) after the energy grows without bound.

    Energy (-66.6 J, kinetic swing 6.9 J) is held to 5e-4 J at 1 ms: the trapezoidal rule's energy error is
    O(h^2) and oscillates without growing (measured 2.3e-4 J at 2 ms, 5.6e-5 J at 1 ms, the same in the first and
    the last second). The projections keep the scheme's order: the angle error against Lagrange's equations
    (DOP853) falls 4x when h halves (order 2 +- 0.3; measured 5.6e-4 and 1.4e-4 rad, order 1.99; 3e-4 rad bounds
    the 1 ms error, a first-order error would be ~1e-2)."""
    err = {}
    for h in (2e-3, 1e-3):
        s, b1, b2 = models.double_pendulum()
        res = fm.simulate(s, 10.0, h, rho_inf=1.0, progress=False)
        assert res.t[-1] == pytest.approx(10.0)
        th1, th2 = models.double_pendulum_reference(res.t)
        err[h] = max(np.abs(models.rod_angle(res, b1) - th1).max(), np.abs(models.rod_angle(res, b2) - th2).max())
    assert _energy_error(res) < 5e-4
    assert err[1e-3] < 3e-4
    assert np.log2(err[2e-3] / err[1e-3]) == pytest.approx(2.0, abs=0.3)


@pytest.mark.parametrize("method, kw", UNDAMPED)
def test_heavy_top_conserves_energy_and_precesses_at_goldstein_rate(method, kw):
    """Heavy top spinning at 200 rad/s on its steady precession (Goldstein §5.7), h = 0.5 ms (h omega = 0.1),
    4 s = 8000 steps. Energy 40.86 J held to 1e-3 J: measured 8e-5 J, a slow loss of the mass-orthogonal
    projection (2e-5 J/s, falling as h^3: 1.9e-4 J/s at h = 1 ms); the index-3 step alone stops at 0.17 s.
    The precession rate is Goldstein's to 5e-4 (measured -2.8e-4, second order: -7.0e-5 at h = 0.25 ms; the
    default rho_inf = 0.9 gives -6.9e-4); the velocities satisfy the constraints to round-off (p . p_dot = 0: the
    mode that grew is gone)."""
    s, top, omega = models.heavy_top()
    res = fm.simulate(s, 4.0, 5e-4, method=method, progress=False, **kw)
    assert res.t[-1] == pytest.approx(4.0)
    assert _energy_error(res) < 1e-3
    k = res.orientation(top)[:, :, 2]
    rate = np.polyfit(res.t, np.unwrap(np.arctan2(k[:, 1], k[:, 0])), 1)[0]
    assert rate == pytest.approx(omega, rel=5e-4)
    p, p_dot = res.q[:, 3:7], res.v[:, 3:7]
    assert np.abs(np.einsum("ij,ij->i", p, p_dot)).max() < 1e-10


def test_intermediate_axis_flip_period_matches_elliptic_integral():
    """Torque-free body, inertia (1, 2, 3) kg m^2, spun at 2 rad/s about the intermediate axis with 0.01 rad/s
    about the first, 100 s at h = 10 ms (1e4 steps), rho_inf = 1. Between flips omega_2 runs half its period,
    2 K(k) / lambda (Landau & Lifshitz, Mechanics, §37: lambda = sqrt((I1 - I2)(M^2 - 2 E I3) / (I1 I2 I3)),
    k^2 = (I2 - I3)(2 E I1 - M^2) / ((I1 - I2)(M^2 - 2 E I3)), the book's formulas with I1 and I3 exchanged
    as it says for M^2 < 2 E I2): 11.578026 s. The mean spacing of
    the 9 flips is held to 1e-3 relative (the issue's bound; measured 6.5e-6, falling as h^2: 1.7e-6 at 5 ms);
    energy and |angular momentum| to 2e-4 relative (measured 4.2e-5, the O((h omega)^2) level). The index-3 step
    alone stops at 29.8 s."""
    inertia, w0 = np.array([1.0, 2.0, 3.0]), np.array([0.01, 2.0, 0.0])
    s, b = models.torque_free(tuple(inertia), tuple(w0))
    res = fm.simulate(s, 100.0, 1e-2, rho_inf=1.0, progress=False)
    assert res.t[-1] == pytest.approx(100.0)
    two_e, m2 = np.sum(inertia * w0 ** 2), np.sum((inertia * w0) ** 2)
    i1, i2, i3 = inertia
    assert m2 < two_e * i2
    lam = np.sqrt((i1 - i2) * (m2 - two_e * i3) / (i1 * i2 * i3))
    k2 = (i2 - i3) * (two_e * i1 - m2) / ((i1 - i2) * (m2 - two_e * i3))
    half_period = 2.0 * ellipk(k2) / lam
    w2 = res.angular_velocity(b, frame="body")[:, 1]
    j = np.flatnonzero(np.sign(w2[:-1]) != np.sign(w2[1:]))
    flips = res.t[j] - w2[j] * (res.t[j + 1] - res.t[j]) / (w2[j + 1] - w2[j])     # linear interpolation
    assert len(flips) == 9
    assert (flips[-1] - flips[0]) / (len(flips) - 1) == pytest.approx(half_period, rel=1e-3)
    e = res.energy()["total"]
    assert np.abs(e - e[0]).max() < 2e-4 * e[0]
    rigid = s.compile().rigid
    momentum = np.array([np.linalg.norm(rigid.angular_momentum(q, v)) for q, v in zip(res.q, res.v)])
    assert np.abs(momentum - momentum[0]).max() < 2e-4 * momentum[0]
