"""Stalled and exploding runs: a collapsing step size stops with a StallError naming the element,
a failing Newton iteration names the element when the constraints hold, and an exploding energy
balance is flagged. Every bound here counts steps or simulated time, never wall time."""
import warnings

import numpy as np
import pytest

import flexmb as fm
from flexmb.errors import ConvergenceError, EnergyBalanceWarning, StallError
from flexmb.solvers.watch import STALL_WINDOW


def free_ball_on_stiff_spring(k=1e30):
    """A free 1 kg ball on a spring from the ground, stretched to twice its free length."""
    s = fm.System()
    b = s.add(fm.RigidBody(1.0, (0.01, 0.01, 0.01), position=(2.0, 0, 0), name="ball"))
    s.add(fm.SpringDamper(s.ground, b, point_a=(0, 0, 0), point_b=(2.0, 0, 0), k=k, free_length=1.0, name="stiff"))
    return s


def test_collapsing_step_stops_with_stall_error_naming_the_spring():
    attempts = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EnergyBalanceWarning)
        with pytest.raises(StallError) as info:
            fm.simulate(free_ball_on_stiff_spring(), 1.0, 1e-3, progress=lambda t, te: attempts.append(t))
    err = info.value
    assert "'stiff'" in str(err) and "t = " in str(err) and "h = " in str(err)
    assert "'stiff'" in err.worst
    assert 0.0 < err.time < 1e-5 and err.step < 1e-6
    # bounded: it gives up within a few windows of attempts, not after 1e8 steps
    assert len(attempts) < 5 * STALL_WINDOW
    res = err.result
    assert res is not None and res.t.size >= 1 and np.all(np.isfinite(res.q))


def test_sound_stiff_run_does_not_stall():
    """A stiff but resolvable spring (period 63 ms at h = 1 ms) runs to the end without a stall
    and without an energy warning."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", EnergyBalanceWarning)
        res = fm.simulate(free_ball_on_stiff_spring(k=1e4), 0.1, 1e-3)
    assert res.t[-1] == pytest.approx(0.1)


def test_newton_failure_names_the_element_not_a_satisfied_constraint():
    """A cart on a rail with a 1e30 N/m spring: the iteration matrix is singular to working
    precision; the error blames the spring, not the rail whose constraints hold."""
    s = fm.System()
    b = s.add(fm.RigidBody(1.0, (0.01, 0.01, 0.01), position=(2.0, 0, 0), name="cart"))
    s.add(fm.Prismatic(s.ground, b, (0, 0, 0), (1, 0, 0), name="rail"))
    s.add(fm.SpringDamper(s.ground, b, point_a=(0, 0, 0), point_b=(2.0, 0, 0), k=1e30, free_length=1.0, name="stiff"))
    with pytest.raises(ConvergenceError) as info:
        fm.simulate(s, 1.0, 1e-3)
    msg = str(info.value)
    assert "'stiff'" in msg and "the constraints hold" in msg
    assert "|Phi| = 0.000e+00" not in msg


def test_exploding_energy_balance_is_flagged():
    """A 1 kg body under -1e9 sign(x) N: the implicit step chatters across x = 0 and the energy
    grows from 0.5 J by orders of magnitude; the run completes but says so."""
    s = fm.System()
    b = s.add(fm.RigidBody(1.0, (0.01, 0.01, 0.01), velocity=(1.0, 0, 0), name="ball"))
    s.add(fm.Prismatic(s.ground, b, (0, 0, 0), (1, 0, 0), name="rail"))

    def bang(t, q, v):
        Q = np.zeros(7)
        Q[0] = -1e9 * np.sign(q[0])
        return Q
    s.add(fm.UserForce(b, bang, name="bang"))
    with pytest.warns(EnergyBalanceWarning, match="energy balance drifted"):
        res = fm.simulate(s, 0.05, 1e-3)
    assert "energy balance drifted" in res.message
    assert res.stats["energy_drift"] > 0.1


def test_conservative_run_is_not_flagged():
    s = fm.System(gravity=(0, -9.81, 0))
    b = s.add(fm.RigidBody(1.0, (0.01, 0.01, 0.01), position=(0.5, 0, 0), name="bob"))
    s.add(fm.Revolute(s.ground, b, (0, 0, 0), (0, 0, 1)))
    with warnings.catch_warnings():
        warnings.simplefilter("error", EnergyBalanceWarning)
        res = fm.simulate(s, 1.0, 1e-3)
    assert res.message == "completed"
    assert res.stats["energy_drift"] < 1e-2
