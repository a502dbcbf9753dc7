"""Roller-sprocket contact (flexmb/contact/sprocket.py, docs/theory-roller-chain.md §3).

Checked: the exact Newton blocks against central differences with rollers in every regime (pressed into the
seat, against the flank below and above the pitch circle, outside the tip circle) on a rotated, moving sprocket;
the force law against its closed form at one roller; the static torque balance of a sprocket holding rollers;
the static start of the loaded two-sprocket drive (seated flanks);
bad input.
"""
import math

import numpy as np
import pytest

import flexmb as fm
from flexmb import rotations as rot
from flexmb.contact.sprocket import SprocketContact, pitch_radius
from flexmb.errors import ModelError

from test_particles import fd_check, welded_base

PITCH, TEETH = 0.05, 12


def engaged_model(restitution=0.6):
    s = fm.System(gravity=(0.0, -9.81, 0.0))
    welded_base(s)
    A0 = rot.from_axis_angle((0.1, 0.2, 1.0), 0.3)
    spr = s.add(fm.RigidBody(2.0, (0.01, 0.01, 0.02), position=(0.1, -0.05, 0.02), orientation=A0, name="sprocket"))
    Rp = pitch_radius(PITCH, TEETH)
    r0, A = spr.initial_frame()
    a = A @ np.array([0.0, 0.0, 1.0])
    b1 = A @ np.array([1.0, 0.0, 0.0])
    b2 = np.cross(a, b1)
    step = 2 * math.pi / TEETH
    # (seat, radial offset e_r, tangential offset e_t) (m): pressed in, flank below and above the pitch circle,
    # lifted clear of both, outside the tip circle
    # (and the tip chamfer, above the flank's end h_1 = 4.0e-3 m)
    cases = [(0, -2e-4, 0.0), (1, -1e-4, 3e-4), (2, 2e-4, -6e-4), (3, 5e-4, 1e-5), (4, 0.03, 0.0), (5, -3e-4, -2e-4),
             (6, 6e-3, 0.0150)]
    X = []
    for j, er, et in cases:
        ur = math.cos(j * step) * b1 + math.sin(j * step) * b2
        ut = np.cross(a, ur)
        X.append(r0 + (Rp + er) * ur + et * ut + 1e-4 * (j - 2) * a)      # off the plane: the axial guide acts
    P = s.add(fm.Particles(np.array(X), 0.3, name="rollers"))
    contact = s.add(SprocketContact(spr, P, TEETH, PITCH, 1e9, restitution=restitution, approach_speed=0.5,
                                    axis=a, seat_direction=b1, guide_stiffness=3e5, guide_damping=40.0, name="mesh"))
    return s, spr, P, contact


def test_sprocket_jacobians():
    s, spr, P, contact = engaged_model()
    asm = s.compile()
    q, _ = asm.initial_state()
    rng = np.random.default_rng(5)
    v = 0.05 * rng.standard_normal(asm.nq)      # small rates: the damping term stays below the clamp
    a = rng.standard_normal(asm.nq)
    # the family's blocks at this state: rollers engaged in each regime (checked below), no seat switch within
    # the differencing step
    g = [x for x in asm.families if type(x).__name__ == "SprocketGroup"][0]
    st = asm.eval_state(q, v, a, 0.0)
    F = g.forces(st)
    assert (F["Fr"][[0, 1, 5]] > 0).all() and (F["Ft"][[1, 2, 5, 6]] > 0).all() and F["Ft"][3] == 0
    assert F["delta_r"][6] < -contact.flank_height
    assert F["Fr"][4] == 0 and F["Ft"][4] == 0
    fd_check(asm, q, v, a, step=1e-8)


def test_force_law_closed_form():
    # roller 0 pressed 2e-4 m below its seat, moving inward at 0.01 m/s: F = K d^1.5 (1 + chi d_dot)
    s, spr, P, contact = engaged_model(restitution=0.6)
    asm = s.compile()
    q, v = asm.initial_state()
    r0, A = spr.initial_frame()
    ur = A @ np.array([1.0, 0.0, 0.0])
    v[P.coordinates(0)] = -0.01 * ur
    g = [x for x in asm.families if type(x).__name__ == "SprocketGroup"][0]
    F = g.forces(asm.eval_state(q, v, np.zeros(asm.nq), 0.0))
    chi = 3 * (1 - 0.36) / (4 * 0.5)
    assert F["Fr"][0] == pytest.approx(1e9 * 2e-4 ** 1.5 * (1 + chi * 0.01), rel=1e-9)
    assert F["seat"][:6].tolist() == [0, 1, 2, 3, 4, 5]


def test_bad_input():
    s = fm.System()
    spr = s.add(fm.RigidBody(1.0, (1, 1, 1), name="spr"))
    P = fm.Particles([[0.1, 0, 0]], 1.0, name="p")
    with pytest.raises(ModelError, match="teeth >= 3"):
        SprocketContact(spr, P, 2, 0.05, 1e9, name="c")
    with pytest.raises(ModelError, match="restitution"):
        SprocketContact(spr, P, 12, 0.05, 1e9, restitution=1.5, name="c")
    with pytest.raises(ModelError, match="outer_radius"):
        SprocketContact(spr, P, 12, 0.05, 1e9, outer_radius=0.01, name="c")
    with pytest.raises(ModelError, match="Particles"):
        SprocketContact(spr, [P], 12, 0.05, 1e9, name="c")


def test_elastic_force_is_gradient_of_stored_energy():
    # e = 1 and v = 0: r = -Q must equal dV/dq of the reported stored energy (energy balance relies on it);
    # central differences with eps 1e-9 m against rel 1e-6 (truncation (eps/delta)^2 ~ 1e-10)
    s, spr, P, contact = engaged_model(restitution=1.0)
    asm = s.compile()
    q, v = asm.initial_state()
    g = [x for x in asm.families if type(x).__name__ == "SprocketGroup"][0]
    a = np.zeros(asm.nq)
    r, _ = g.residual(asm.eval_state(q, v, a, 0.0), None)
    R = np.zeros(asm.nq + 7)
    np.add.at(R, np.where(g.scatter >= 0, g.scatter, asm.nq), r)
    cols = np.unique(g.scatter[g.scatter >= 0])
    eps = 1e-9
    for c in cols:
        e = np.zeros(asm.nq)
        e[c] = eps
        dV = (g.potential(asm.eval_state(q + e, v, a, 0.0)) - g.potential(asm.eval_state(q - e, v, a, 0.0))) / (2 * eps)
        assert dV == pytest.approx(R[c], rel=1e-6, abs=1e-6 * np.abs(R).max())


def test_no_penetration_on_the_tip_circle():
    # the teeth are pointed at the tip circle: a roller crossing it anywhere meets no flank penetration, so the
    # stored energy is continuous where the contact switches on (the energy balance relies on it)
    s = fm.System()
    welded_base(s)
    spr = s.add(fm.RigidBody(2.0, (0.01, 0.01, 0.02), name="sprocket"))
    c0 = SprocketContact(spr, fm.Particles([[1.0, 0, 0]], 1.0, name="tmp"), TEETH, PITCH, 1e9, name="tmp")
    ang = np.linspace(0.0, 2 * math.pi, 721)[:-1]
    X = (c0.outer_radius * (1 - 1e-9)) * np.column_stack([np.cos(ang), np.sin(ang), 0 * ang])
    P = s.add(fm.Particles(X, 0.1, name="rollers"))
    s.add(SprocketContact(spr, P, TEETH, PITCH, 1e9, name="mesh"))
    asm = s.compile()
    q, v = asm.initial_state()
    g = [x for x in asm.families if type(x).__name__ == "SprocketGroup"][0]
    F = g.forces(asm.eval_state(q, v, np.zeros(asm.nq), 0.0))
    # rollers sit 1e-9 R_o inside the tip circle: the chamfer (slope ~6) turns that into < 1e-9 m
    assert F["delta_t"].max() <= 1e-9 and F["energy"].max() < 1e-12


def test_static_start_under_load_needs_seated_flanks():
    """A chain laid exactly on its seats has no rotational stiffness at the sprocket (Hertzian law at zero
    penetration): the loaded static solve cannot start. Turned by models.seated_angle, it starts; the span
    tensions then balance T / R_p within the lever bound 1 - cos(pi/z), and do not depend on the angle."""
    from flexmb.errors import ConvergenceError
    from flexmb.forces.particles import link_tensions
    from verification.roller_chain.models import DriveData, seated_angle, two_sprocket_drive

    d, T = DriveData(), 20.0
    bare = two_sprocket_drive(d, load_torque=lambda t: -T)
    with pytest.raises(ConvergenceError, match="zero penetration"):      # the message says what to do
        fm.static_equilibrium(bare.system, load_steps=1, max_halvings=2)
    out = []
    for angle in (seated_angle(d, -T), -5e-4):
        drive = two_sprocket_drive(d, load_torque=lambda t: -T, seated_angle=angle)
        st = fm.static_equilibrium(drive.system, load_steps=4)
        f = link_tensions(drive.links, st.q[-1:])[0]
        out.append((f[list(drive.spans[0])].mean(), f[list(drive.spans[1])].mean()))
    (Ft, Fs), (Ft2, Fs2) = out
    assert (Ft - Fs) * d.radius / T == pytest.approx(1.0, rel=1.0 - math.cos(math.pi / d.teeth))
    assert (Ft2, Fs2) == pytest.approx((Ft, Fs), rel=1e-8)      # Newton tolerance 1e-10 on q
