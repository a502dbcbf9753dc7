"""Explicit index-1 references (method="rk45"/"dop853"): h is the output spacing, stats count the real steps."""
import numpy as np
import pytest

import flexmb as fm


def pendulum():
    s = fm.System(gravity=(0, -9.81, 0))
    bob = s.add(fm.RigidBody(1.0, (0.01, 0.1, 0.1), position=(0.5, 0, 0), name="bob"))
    s.add(fm.Revolute(s.ground, bob, (0, 0, 0), (0, 0, 1)))
    return s


@pytest.mark.parametrize("method, stages", [("rk45", 6), ("dop853", 12)])
def test_steps_are_the_integrators_not_the_outputs(method, stages):
    runs = {h: fm.simulate(pendulum(), 1.0, h, method=method, rtol=1e-8, atol=1e-10) for h in (None, 0.1, 0.01)}
    every = runs[None].stats
    # without h every accepted step is saved: one output per step plus the start
    assert every["outputs"] == every["steps"] + 1 == runs[None].t.size
    assert every["steps"] > 10
    # h only samples the same solution: the same steps, 11 and 101 saved times
    assert [runs[h].stats["outputs"] for h in (0.1, 0.01)] == [11, 101]
    assert {runs[h].stats["steps"] for h in runs} == {every["steps"]}
    # each accepted step costs at least one evaluation per Runge-Kutta stage beyond the first (FSAL)
    assert every["rhs_evaluations"] >= (stages - 1) * every["steps"]
    assert np.allclose(runs[0.1].q, runs[0.01].q[::10], rtol=0, atol=1e-9)


def test_energy_balance_books_contact_work():
    """The explicit reference books the work of every non-conservative element (here a contact's hysteresis
    damping; it booked none for contacts before), so its energy balance closes like the implicit integrator's."""
    s = fm.System(gravity=(0, -9.81, 0))
    ball = s.add(fm.RigidBody(1.0, (4e-3, 4e-3, 4e-3), position=(0, 0.12, 0), velocity=(0, -1.0, 0), name="ball"))
    s.add(fm.SpherePlaneContact(s.ground, ball, point=(0, 0, 0), normal=(0, 1, 0), center=(0, 0, 0), radius=0.1,
                                law=fm.contact.HuntCrossley(1e6, 0.6)))
    res = fm.simulate(s, 0.3, 1e-3, method="dop853", rtol=1e-10, atol=1e-12)
    E = res.energy()
    balance = E["kinetic"] + E["potential"] - E["work"]
    lost = -E["work"][-1]
    assert lost > 0.05                      # the contact dissipated energy ...
    # ... and the balance holds to the trapezoidal integral of the power over the 1 ms output spacing:
    # the power changes by ~100 W within a contact of ~2 ms, error ~ h^2 |P''| t / 12 ~ 1e-3 J at most
    assert np.abs(balance - balance[0]).max() < 1e-3 + 1e-2 * lost
