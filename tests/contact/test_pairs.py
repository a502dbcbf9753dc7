"""Contact pairs in a simulation (flexmb/contact/pairs.py) against closed forms.

A steel sphere (R = 10 mm) hits a rigid plane at 1 m/s, no gravity. With e = 1 the Hertz
closed forms (flexmb.contact.hertz_impact: Johnson 1985 §11.4) give the maximum penetration,
peak force and contact duration; with e < 1 the rebound speed ratio must equal the law's own
prediction (flexmb.contact.predicted_restitution, exact for the single-DOF impact). Tolerances:
the contact is resolved by ~100 steps (h_contact = duration / 100); generalized-alpha's O(h^2)
error is then ~1e-4 of the peak quantities and of the rebound speed.
"""
import numpy as np
import pytest

import flexmb as fm
from flexmb.contact import (Flores, HuntCrossley, LankaraniNikravesh, effective_modulus, hertz_impact,
                            predicted_restitution, sphere_plane)
from flexmb.errors import ModelError

R, RHO, E, NU = 0.01, 7850.0, 2.1e11, 0.3
MASS = RHO * 4.0 / 3.0 * np.pi * R ** 3
K = sphere_plane(R, effective_modulus(E, NU, E, NU))
IMPACT = hertz_impact(MASS, 1.0, K)


def drop(law, gap=1.3e-5, t_end=1.2e-4):
    s = fm.System()
    ball = s.add(fm.RigidBody(MASS, (0.4 * MASS * R * R,) * 3, position=(0, R + gap, 0), velocity=(0, -1.0, 0),
                              name="ball"))
    s.add(fm.SpherePlaneContact(s.ground, ball, point=(0, 0, 0), normal=(0, 1, 0), center=(0, R + gap, 0), radius=R,
                                law=law, name="floor"))
    res = fm.simulate(s, t_end, 5e-6, h_contact=IMPACT.duration / 100)
    return res, ball


def test_elastic_hertz_impact_matches_closed_form():
    res, ball = drop(LankaraniNikravesh(K, 1.0))
    pen = R - res.position(ball)[:, 1]
    force = K * np.clip(pen, 0, None) ** 1.5
    assert pen.max() == pytest.approx(IMPACT.max_penetration, rel=5e-4)
    assert force.max() == pytest.approx(IMPACT.peak_force, rel=1e-3)
    t_in = res.t[pen > 0]
    assert t_in[-1] - t_in[0] == pytest.approx(IMPACT.duration, rel=0.03)    # sampled on the step grid
    assert res.velocity(ball)[-1, 1] == pytest.approx(1.0, rel=1e-4)
    assert np.abs(pen).min() < 1e-8             # a step was aimed at the moment of touch (gap 1.3e-5 m, h 5e-6 s)


@pytest.mark.parametrize("law_class", [LankaraniNikravesh, HuntCrossley, Flores])
def test_rebound_speed_is_the_laws_own_restitution(law_class):
    law = law_class(K, 0.5)
    res, ball = drop(law)
    assert res.velocity(ball)[-1, 1] == pytest.approx(predicted_restitution(law), rel=5e-4)


def test_two_equal_spheres_exchange_velocities():
    """Head-on elastic impact of equal spheres (e = 1): velocities swap, momentum conserved."""
    law = LankaraniNikravesh(K / np.sqrt(2.0), 1.0)
    s = fm.System()
    a = s.add(fm.RigidBody(MASS, (0.4 * MASS * R * R,) * 3, position=(0, 0, 0), velocity=(1.0, 0, 0), name="a"))
    b = s.add(fm.RigidBody(MASS, (0.4 * MASS * R * R,) * 3, position=(2 * R + 1.3e-5, 0, 0), name="b"))
    s.add(fm.SphereSphereContact(a, b, center_a=(0, 0, 0), center_b=(2 * R + 1.3e-5, 0, 0), radius_a=R, radius_b=R,
                                 law=law))
    res = fm.simulate(s, 1.5e-4, 5e-6, h_contact=1e-6)
    va, vb = res.velocity(a)[:, 0], res.velocity(b)[:, 0]
    assert np.abs(va + vb - 1.0).max() < 1e-9
    assert va[-1] == pytest.approx(0.0, abs=1e-4) and vb[-1] == pytest.approx(1.0, rel=1e-4)


def test_contact_bad_input():
    s = fm.System()
    ball = s.add(fm.RigidBody(1.0, (1, 1, 1)))
    law = LankaraniNikravesh(K, 1.0)
    with pytest.raises(ModelError, match="contact between body .* and itself"):
        fm.SphereSphereContact(ball, ball, center_a=(0, 0, 0), center_b=(1, 0, 0), radius_a=0.1, radius_b=0.1, law=law)
    with pytest.raises(ModelError, match="radius must be positive"):
        fm.SpherePlaneContact(s.ground, ball, point=(0, 0, 0), normal=(0, 1, 0), center=(0, 0, 0), radius=-0.1, law=law)
    with pytest.raises(ModelError, match="law must be a contact law"):
        fm.SpherePlaneContact(s.ground, ball, point=(0, 0, 0), normal=(0, 1, 0), center=(0, 0, 0), radius=0.1, law=3.0)
    with pytest.raises(ModelError, match="restitution|e "):
        LankaraniNikravesh(K, 1.5)


def test_contact_force_history_peaks_at_the_hertz_force():
    """Result.contact_force replays the law over the saved states: the elastic impact peaks at the
    Hertz closed form (same tolerance as the penetration-based check, 1e-3)."""
    res, ball = drop(LankaraniNikravesh(K, 1.0))
    contact = res.system.forces[0]
    F = res.contact_force(contact)
    assert F.max() == pytest.approx(IMPACT.peak_force, rel=1e-3)
    assert F.min() == 0.0


def test_contact_force_replay_in_one_pass_equals_row_by_row(monkeypatch):
    """Result.contact_force evaluates every saved row in one vectorized pass (ContactGroup.replay_forces, in
    chunks of rows) with each row's approach-speed history: equal to setting each row's history on the
    assembly and evaluating the pair (the same kernels; 1e-12 of the peak force for rounding), for two pairs of
    one group with different laws (Lankarani-Nikravesh, Hunt-Crossley) that touch at different times."""
    from flexmb.contact.pairs import ContactGroup
    from flexmb.joints.kernels import extend
    s = fm.System(gravity=(0.0, -9.81, 0.0))
    for k, (law, gap) in enumerate(((LankaraniNikravesh(1e6, 0.7), 0.01), (HuntCrossley(2e6, 0.5), 0.03))):
        ball = s.add(fm.RigidBody(0.5, (1e-4,) * 3, position=(k, 0.05 + gap, 0), name=f"ball{k}"))
        s.add(fm.SpherePlaneContact(s.ground, ball, point=(k, 0, 0), normal=(0, 1, 0), center=(k, 0.05 + gap, 0),
                                    radius=0.05, law=law, name=f"floor{k}"))
    res = fm.simulate(s, 0.25, 1e-3, h_contact=1e-4)
    monkeypatch.setattr(ContactGroup, "REPLAY_CHUNK", 14)         # several chunks of 7 rows
    asm = s.compile()
    group = asm.contacts[0]
    for k, c in enumerate(s.forces):
        F = res.contact_force(c)
        ref = res._replay(asm, lambda q, v: group.normal_forces(*extend(q, v))[k])
        assert ref.max() > 10.0                                    # the ball hit the floor
        np.testing.assert_allclose(F, ref, rtol=0, atol=1e-12 * ref.max())
