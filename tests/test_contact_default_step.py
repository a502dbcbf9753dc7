"""The default contact step (issue 22, item 6): without ``h_contact``, ``simulate`` resolves each contact from its
Hertz duration (flexmb/contact/duration.py, docs/theory-contact.md §4.1).

A steel sphere (R = 10 mm, m = 32.9 g) hits a rigid plane at 1 m/s with Lankarani-Nikravesh e = 0.85 at a step
h = 1 ms chosen for the free flight, longer than the contact (8 ms at K = 1e5, 0.8 us at K = 1e15). Before the
default (measured with it switched off) the bounce left at 0.890 / 4.21 / 5.00 m/s for K = 1e5 / 1e10 / 1e15
against the law's 0.878 (energy created), and the dropped ball of the energy test ended with 23 times its
starting energy; ``h_contact=math.inf`` (no limit) still gives that behaviour, and a test checks that it fails
the 1 % criterion. Reference: the law's own restitution of a single impact (flexmb.contact.predicted_restitution,
exact); tolerance 1 %: 30 steps per contact leave ~1e-3 (module docstring of flexmb/contact/duration.py).
"""
import math

import numpy as np
import pytest

import flexmb as fm
from flexmb.contact import LankaraniNikravesh, SphereCloudContact, hertz_impact, predicted_restitution
from flexmb.contact.duration import STEPS_PER_CONTACT, default_contact_step, effective_mass

R, RHO = 0.01, 7850.0
MASS = RHO * 4.0 / 3.0 * np.pi * R ** 3
INERTIA = (0.4 * MASS * R * R,) * 3
H = 1e-3                     # s: a step for the free flight, longer than every contact here


def ball_on_plane(K: float, e: float = 0.85, v0: float = 1.0, gap: float = 1.3e-3, gravity=(0.0, 0.0, 0.0)):
    s = fm.System(gravity=gravity)
    ball = s.add(fm.RigidBody(MASS, INERTIA, position=(0, R + gap, 0), velocity=(0, -v0, 0), name="ball"))
    s.add(fm.SpherePlaneContact(s.ground, ball, point=(0, 0, 0), normal=(0, 1, 0), center=(0, R + gap, 0), radius=R,
                                law=LankaraniNikravesh(K, e), name="floor"))
    return s, ball


def bounce(K: float, **kw):
    """Achieved restitution of the bounce at 1 m/s, the law's, and the result."""
    s, ball = ball_on_plane(K)
    T = hertz_impact(MASS, 1.0, K).duration
    t_end = 1.3e-3 + 1.5 * T + 2 * H
    res = fm.simulate(s, t_end, H, progress=False, **kw)
    return res.velocity(ball)[-1, 1], predicted_restitution(s.forces[0].law), res


@pytest.mark.parametrize("K", [1e5, 1e10, 1e15])
def test_default_step_gives_the_laws_restitution(K):
    e, e_law, _ = bounce(K)
    assert e == pytest.approx(e_law, rel=1e-2)


@pytest.mark.parametrize("K", [1e5, 1e15])
def test_without_a_contact_step_the_bounce_is_wrong(K):
    """The behaviour before the default (no limit while in contact): the checks above would fail."""
    with pytest.warns(Warning) if K > 1e10 else _nothing():
        e, e_law, _ = bounce(K, h_contact=math.inf)
    assert abs(e / e_law - 1.0) > 1e-2


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_default_step_is_the_hertz_duration_over_the_step_count():
    """No gravity, 1 m/s: the energy bound is the ball's kinetic energy, so the estimate is the Hertz duration of
    the actual impact (hertz_impact, Johnson 1985 §11.4) over STEPS_PER_CONTACT, to rounding."""
    s, _ = ball_on_plane(1e10)
    asm = s.compile()
    expected = hertz_impact(MASS, 1.0, 1e10).duration / STEPS_PER_CONTACT
    assert default_contact_step(s, asm, *asm.initial_state()) == pytest.approx(expected, rel=1e-12)


def test_the_cloud_plane_and_sphere_pair_families_give_their_durations():
    """The same sphere as a sphere cloud against the plane (the mesh module's plane group): the same estimate.
    Two equal spheres (sphere-sphere pair): the effective mass m/2 of the pair (m1 m2 / (m1 + m2))."""
    law = LankaraniNikravesh(1e10, 0.85)
    s = fm.System()
    ball = s.add(fm.RigidBody(MASS, INERTIA, position=(0, R + 1e-3, 0), velocity=(0, -1.0, 0)))
    s.add(SphereCloudContact([ball], [(0, R + 1e-3, 0)], [R], law, planes=[(s.ground, (0, 0, 0), (0, 1, 0))]))
    asm = s.compile()
    expected = hertz_impact(MASS, 1.0, 1e10).duration / STEPS_PER_CONTACT
    assert default_contact_step(s, asm, *asm.initial_state()) == pytest.approx(expected, rel=1e-12)

    s = fm.System()
    a = s.add(fm.RigidBody(MASS, INERTIA, position=(0, 0, 0), velocity=(1.0, 0, 0)))
    b = s.add(fm.RigidBody(MASS, INERTIA, position=(2 * R + 1e-3, 0, 0)))
    s.add(fm.SphereSphereContact(a, b, center_a=(0, 0, 0), center_b=(2 * R + 1e-3, 0, 0), radius_a=R, radius_b=R,
                                 law=law))
    asm = s.compile()
    # kinetic energy m v^2 / 2 = (m/2) v_rel^2 / 2 with v_rel = sqrt(2): the bound of the relative speed
    expected = hertz_impact(MASS / 2, math.sqrt(2.0), 1e10).duration / STEPS_PER_CONTACT
    assert default_contact_step(s, asm, *asm.initial_state()) == pytest.approx(expected, rel=1e-12)


def test_a_contact_off_the_centre_of_mass_counts_the_rotation():
    """A rigid body hit at r from its centre of mass: 1/m_eff = 1/m + max_n (r x n).I^-1(r x n). A uniform rod
    (m = 1 kg, L = 1 m, axis z, axial inertia 1e-3) hit at its end: the worst force is transverse, 1/m_eff =
    1/m + (L/2)^2 / (m L^2 / 12) = 4/m, whatever the axial inertia (a slender rod is not refused as too light);
    hit at the end of a transverse arm the axial inertia counts, 1/m + (L/2)^2 / 1e-3."""
    L = 1.0
    rod = fm.RigidBody(1.0, (L * L / 12, L * L / 12, 1e-3))
    assert effective_mass(rod, (0.0, 0.0, L / 2)) == pytest.approx(0.25, rel=1e-12)
    assert effective_mass(rod, (L / 2, 0.0, 0.0)) == pytest.approx(1.0 / (1.0 + (L / 2) ** 2 / 1e-3), rel=1e-12)
    assert effective_mass(rod, None) == 1.0


def test_no_energy_is_created_by_a_dissipative_bounce():
    """A ball dropped 0.1 m under gravity (no initial speed: the bound comes from the work of gravity over the gap)
    onto a K = 1e15 plane, e = 0.85, default settings: the mechanical energy never rises above the start's (1e-6
    of m g h0 for the balance's rounding), and after the bounce it is e_law^2 m g h0 (the rebound speed over the
    impact speed sqrt(2 g h0) is e_law within 1 %)."""
    g, h0 = 9.81, 0.1
    s, ball = ball_on_plane(1e15, v0=0.0, gap=h0, gravity=(0.0, -g, 0.0))
    t_fall = math.sqrt(2 * h0 / g)
    res = fm.simulate(s, t_fall + 0.05, H, progress=False)       # falls, bounces, rises for 50 ms
    E = res.energy()
    mech = E["kinetic"] + E["potential"]
    assert mech.max() <= mech[0] + 1e-6 * MASS * g * h0
    after = res.t > t_fall + 1e-3
    y, v = res.position(ball)[after, 1], res.velocity(ball)[after, 1]
    rebound = np.sqrt((2 * g * (y - R) + v ** 2) / (2 * g * h0))      # energy above the plane: e^2 m g h0
    assert v[0] > 0                                                 # it left the plane
    assert rebound[-1] == pytest.approx(predicted_restitution(s.forces[0].law), rel=1e-2)


def test_an_explicit_contact_step_is_kept():
    """``h_contact`` given: every step in contact is at most that value (and the default is not used)."""
    K = 1e10
    T = hertz_impact(MASS, 1.0, K).duration
    for hc in (T / 12, T / 50):
        _, _, res = bounce(K, h_contact=hc)
        pen = R - res.q[:, 1]
        steps = np.diff(res.t)[pen[:-1] > 0]          # steps that start in contact
        assert steps.size >= 10 and steps.max() == pytest.approx(hc, rel=1e-9)


def test_rope_pulley_contacts_set_no_default_step():
    """Rope segments riding a pulley are a persistent contact, not an impact: the rope family gives no duration
    (with a thirtieth of its half period pi sqrt(m/K) the rope tests ran 17 times longer), so a model with only
    rope contacts keeps its step."""
    from flexmb.contact import RopePulleyContact, rope_segments
    s = fm.System()
    rope = rope_segments(s, (-0.6, 0.45, 0.0), (0.6, 0.47, 0.0), 4, 2.0)
    s.add(RopePulleyContact(s.ground, rope, 0.5, 1e4, 50.0))
    asm = s.compile()
    assert asm.has_contacts and default_contact_step(s, asm, *asm.initial_state()) is None


def test_a_flexible_body_counts_with_its_mean_node_mass():
    """A node of a flexible body (a free 21-node steel beam) hitting a plane: the effective mass is the body's
    mass over its node count (the stated conservative choice), in the pair group's estimate."""
    from flexmb.fem.materials import Material
    from flexmb.fem.mesh import FEMesh
    from flexmb.fem.model import FEModel
    from flexmb.fem.sections import BeamSection
    from flexmb.reduction import free_free_modes
    x = np.linspace(-0.5, 0.5, 21)
    mesh = FEMesh(np.column_stack([x, 0 * x, 0 * x]), {"line": np.column_stack([np.arange(20), np.arange(1, 21)])})
    fe = FEModel(mesh, Material(E=2.1e11, nu=0.3, rho=7850.0), sections=BeamSection.rectangle(0.02, 0.02),
                 beam="euler-bernoulli")
    s = fm.System()
    beam = s.add(fm.FlexibleBody(free_free_modes(fe, 4), velocity=(0.0, -1.0, 0.0), name="beam"))
    s.add(fm.SpherePlaneContact(s.ground, beam.node(0), point=(0.0, -0.011, 0.0), normal=(0.0, 1.0, 0.0),
                                center=(x[0], 0.0, 0.0), radius=0.01, law=LankaraniNikravesh(1e9, 1.0)))
    m_node = 7850.0 * 0.02 * 0.02 * 1.0 / 21
    assert effective_mass(beam) == pytest.approx(m_node, rel=1e-6)
    asm = s.compile()
    energy = 0.5 * 7850.0 * 0.02 * 0.02 * 1.0          # the beam's kinetic energy at 1 m/s
    expected = hertz_impact(m_node, math.sqrt(2 * energy / m_node), 1e9).duration / STEPS_PER_CONTACT
    assert default_contact_step(s, asm, *asm.initial_state()) == pytest.approx(expected, rel=1e-6)
