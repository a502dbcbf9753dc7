"""Impulsive impacts with Newton's restitution (flexmb/contact/impulsive.py): the ``impulsive`` suite against its
closed forms, and the law's rules (bad input, resting contact, one rule per model, the energy taken booked as
work, no compiled blocks stepping over an impact)."""
from __future__ import annotations

import numpy as np
import pytest

import flexmb as fm
from flexmb.contact.impulsive import Impulsive
from verify_quick import run_quick


def test_verify_impulsive(tmp_path):
    """Every case of the suite passes: post-impact velocities of a rod and of a double pendulum equal the
    minimal-coordinate closed forms to 1e-10, bounce apexes e^(2k) to 1e-8, Newton's cradle under both rules to
    1e-12, and the compliant law converges at the rate K^(-2/5)."""
    cases = run_quick("impulsive", tmp_path / "rep")
    assert set(cases) == {"rod-wall", "double-pendulum-wall", "bouncing-ball", "newtons-cradle-sequential",
                          "newtons-cradle-simultaneous", "compliant-limit"}
    assert cases["rod-wall"]["tolerance"]["omega_after"] == "rel 1e-10"
    assert all(c["passed"] for c in cases.values()), {n: (c.get("error"), c["metrics"]) for n, c in cases.items()}


def _ball(law, y0=0.5, gravity=-9.81):
    s = fm.System(gravity=(0, gravity, 0))
    b = s.add(fm.RigidBody(1.0, (1e-3,) * 3, position=(0, y0, 0), name="ball"))
    s.add(fm.SpherePlaneContact(s.ground, b, point=(0, 0, 0), normal=(0, 1, 0), center=(0, y0, 0), radius=0.05,
                                law=law, name="floor"))
    return s, b


@pytest.mark.parametrize("kwargs, words", [({"e": 1.5}, ["e = 1.5"]), ({"e": 0.5, "v_rest": 0.0}, ["v_rest", "0.0"]),
                                           ({"e": 0.5, "rule": "chain"}, ["rule", "'chain'"])])
def test_bad_parameters_are_named(kwargs, words):
    with pytest.raises(fm.errors.ModelError) as err:
        Impulsive(**kwargs)
    assert all(w in str(err.value) for w in words), str(err.value)


def test_the_energy_an_impact_takes_is_booked_as_work():
    """A plastic bounce (e = 0) takes all the ball's kinetic energy at the touch: the run's total energy stays
    constant (the loss is non-conservative work) and equals m g h0 of the drop. Resting on the floor afterwards,
    the ball takes a plastic impulse of the speed gravity gave it in each step (at most m (g h)^2 / 2 = 4.8e-5 J),
    and sinks by up to g h^2 / 2 a step (the pair's ``depth`` bounds that: next test)."""
    s, b = _ball(Impulsive(0.0, depth=1.0))
    res = fm.simulate(s, 0.35, 1e-3, progress=False)
    assert len(res.impacts) == res.stats["impacts"] > 1
    ev = res.impacts[0]
    assert max(x.energy_lost for x in res.impacts[1:]) <= 0.5 * (9.81 * 1e-3) ** 2 * (1 + 1e-9)
    assert 0.05 - res.position(b)[-1, 1] <= 60 * 0.5 * 9.81 * 1e-6       # 0.05 s resting: about 50 steps
    assert ev.energy_lost == pytest.approx(9.81 * 0.45, rel=1e-8)     # m g (y0 - R)
    assert ev.speed_after[0] == pytest.approx(0.0, abs=1e-12) and ev.impulse[0] > 0.0
    e = res.energy()
    assert np.abs(e["total"] - e["total"][0]).max() < 1e-9 * e["total"][0]
    assert res.stats["blocks"] == 0        # impulsive models take single steps (an impact ends a step)


def test_resting_contact_is_refused_by_name():
    """A ball that comes to rest on an impulsive pair (plastic impact, then gravity presses it in) stops the run
    with an error naming the pair and pointing to a compliant law."""
    s, b = _ball(Impulsive(0.0, depth=1e-6))
    with pytest.raises(fm.errors.ModelError, match=r"impulsive contact .*'floor'.* compliant"):
        fm.simulate(s, 0.6, 1e-3, progress=False)


def test_one_rule_per_model():
    s, b = _ball(Impulsive(0.5))
    c = s.add(fm.RigidBody(1.0, (1e-3,) * 3, position=(1, 0.5, 0), name="other"))
    s.add(fm.SpherePlaneContact(s.ground, c, point=(0, 0, 0), normal=(0, 1, 0), center=(1, 0.5, 0), radius=0.05,
                                law=Impulsive(0.5, rule="sequential"), name="floor2"))
    with pytest.raises(fm.errors.ModelError, match="one model, one rule"):
        fm.simulate(s, 0.01, 1e-3, progress=False)
