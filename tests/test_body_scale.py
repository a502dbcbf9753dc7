"""Bodies of any size (issue 22, item 5): millimetre and 1e-20 kg bodies in SI units, point masses and slender
rods with zero axial inertia in jointed mechanisms, each against the closed-form pendulum period; rotations
without inertia that nothing holds are held still, and a moment on one is refused naming the body and axis; a
0.1 mm to 1 mm steel cube pinned to a 1 kg or 1000 kg link against Lagrange's equations of the double pendulum.

Closed form: a pendulum released at rest from ``theta0`` reaches the bottom after a quarter period
``T/4 = sqrt(I_O / (m g d)) K(sin(theta0 / 2))`` (I_O the moment of inertia about the pivot, d the distance from
the pivot to the centre of mass, K the complete elliptic integral of the first kind; any mechanics text, e.g.
Landau & Lifshitz, Mechanics, 1976, §11). The runs take h = T/2000 with the default generalized-alpha
(rho_inf = 0.9): its period error is O(h^2), about 1e-6 relative here, so a tolerance of 1e-4 on T/4 is two
orders above the integration error and far below any modelling error (a wrong inertia or lever moves T/4 by
percents).
"""
import math

import numpy as np
import pytest
from scipy.integrate import solve_ivp
from scipy.special import ellipk

import flexmb as fm
from flexmb.errors import ModelError, SingularConfigurationError

G = 9.81
THETA0 = math.radians(60.0)        # release angle from the downward vertical
PERIOD_RTOL = 1e-4


def quarter_period(inertia_pivot: float, mass: float, lever: float) -> float:
    """``T/4`` (s) of a compound pendulum released at rest from THETA0 (module docstring)."""
    return math.sqrt(inertia_pivot / (mass * G * lever)) * ellipk(math.sin(THETA0 / 2.0) ** 2)


def start(length: float) -> np.ndarray:
    """The point at ``length`` from the pivot (the origin) at THETA0 from the downward vertical (-y), in x-y."""
    return length * np.array([math.sin(THETA0), -math.cos(THETA0), 0.0])


def bottom_time(res, body) -> float:
    """First time (s) the body's centre crosses the vertical below the pivot (x = 0), interpolated linearly."""
    x = res.position(body)[:, 0]
    k = int(np.flatnonzero((x[:-1] > 0.0) & (x[1:] <= 0.0))[0])
    return float(res.t[k] + (res.t[k + 1] - res.t[k]) * x[k] / (x[k] - x[k + 1]))


def run_quarter(system, t4: float) -> "fm.Result":
    return fm.simulate(system, t_end=1.2 * t4, h=4.0 * t4 / 2000, progress=False)


def cube_pendulum(side: float, density: float = 7800.0):
    """A steel cube of ``side`` (m) pinned on a revolute 2 sides from its centre: (system, body, T/4)."""
    m = density * side ** 3
    i_c = m * side ** 2 / 6.0
    L = 2.0 * side
    s = fm.System(gravity=(0, -G, 0))
    b = s.add(fm.RigidBody(mass=m, inertia=(i_c,) * 3, position=start(L), name="cube"))
    s.add(fm.Revolute(s.ground, b, point=(0, 0, 0), axis=(0, 0, 1), name="pin"))
    return s, b, quarter_period(i_c + m * L * L, m, L)


def test_millimetre_body_moves_as_its_metre_copy():
    """A 2 mm steel cube (62 mg) on a revolute pendulum, its 1000x copy (2 m), and a 10 um one (7.8e-12 kg,
    I = 1.3e-22 kg m^2): the same dimensionless quarter period, equal to the closed form. Before: the 2 mm and 2 m
    ones ran; the 10 um one was refused at the start as a singular configuration ('a body has no inertia in a free
    direction', pivot ratio 1.4e-16)."""
    out = {}
    for side in (2e-3, 2.0, 1e-5):
        s, b, t4 = cube_pendulum(side)
        out[side] = bottom_time(run_quarter(s, t4), b) / t4
        assert out[side] == pytest.approx(1.0, rel=PERIOD_RTOL), side
    assert out[2e-3] == pytest.approx(out[2.0], rel=1e-9)     # scale-free: the same numbers up to round-off


def test_two_millimetre_body_on_spherical_joint():
    """A 2 mm and a 0.1 mm steel cube on a spherical joint (planar swing) against the closed form. Before: the
    0.1 mm one (7.8 ug) was refused at the start (pivot ratio 9.0e-17)."""
    for side in (2e-3, 1e-4):
        m = 7800.0 * side ** 3
        i_c = m * side ** 2 / 6.0
        L = 2.0 * side
        s = fm.System(gravity=(0, -G, 0))
        b = s.add(fm.RigidBody(mass=m, inertia=(i_c,) * 3, position=start(L), name="grain"))
        s.add(fm.Spherical(s.ground, b, point=(0, 0, 0)))
        t4 = quarter_period(i_c + m * L * L, m, L)
        assert bottom_time(run_quarter(s, t4), b) == pytest.approx(t4, rel=PERIOD_RTOL), side


def test_1e_minus_20_kg_body():
    """A 1e-20 kg body (gyration radius 3 cm) on a 1 m revolute pendulum: the period of its 1 kg copy. Before:
    refused at the start (pivot ratio 5e-21: unit constraint rows beside a 1e-20 mass block)."""
    for m in (1e-20, 1.0):
        i_c = m * 1e-3
        s = fm.System(gravity=(0, -G, 0))
        b = s.add(fm.RigidBody(mass=m, inertia=(i_c,) * 3, position=start(1.0), name="mote"))
        s.add(fm.Revolute(s.ground, b, point=(0, 0, 0), axis=(0, 0, 1)))
        t4 = quarter_period(i_c + m, m, 1.0)
        assert bottom_time(run_quarter(s, t4), b) == pytest.approx(t4, rel=PERIOD_RTOL), m


def test_1e_minus_20_kg_body_static_equilibrium():
    """The 1e-20 kg pendulum's static equilibrium hangs straight below the pin (1 m). Before: refused as 'the
    stiffness matrix is singular at load factor 0.1: the model has a free direction' (its stiffness, ~1e-19, beside
    unit constraint rows; the static scale was never below 1)."""
    s = fm.System(gravity=(0, -G, 0))
    b = s.add(fm.RigidBody(mass=1e-20, inertia=(1e-23,) * 3, position=start(1.0), name="mote"))
    s.add(fm.Revolute(s.ground, b, point=(0, 0, 0), axis=(0, 0, 1)))
    r = fm.static_equilibrium(s).position(b)[-1]
    assert r == pytest.approx([0.0, -1.0, 0.0], abs=1e-9)     # Newton's tolerance on the positions


def test_point_mass_on_a_massless_lever():
    """A PointMass on a revolute 0.8 m from its centre is the simple pendulum, T/4 = sqrt(L/g) K(k)."""
    L = 0.8
    s = fm.System(gravity=(0, -G, 0))
    b = s.add(fm.PointMass(0.3, position=start(L), name="bob"))
    s.add(fm.Revolute(s.ground, b, point=(0, 0, 0), axis=(0, 0, 1)))
    t4 = quarter_period(0.3 * L * L, 0.3, L)
    res = run_quarter(s, t4)
    assert bottom_time(res, b) == pytest.approx(t4, rel=PERIOD_RTOL)
    assert s.compile().rigid.held == []          # the revolute holds every rotation of the lever


def test_point_mass_spherical_pendulum_conical_motion():
    """A PointMass on a spherical joint 0.5 m away, launched on the conical pendulum: it keeps its height and
    goes round at Omega = sqrt(g / (L cos alpha)) (closed form of the steady conical motion). Its spin about the
    lever has no inertia and nothing holds it: held still (zero angular velocity about the lever throughout),
    also when the launch gave it some. Before: a zero inertia was refused ('inertia is not positive definite')."""
    L, alpha = 0.5, math.radians(30.0)
    omega = math.sqrt(G / (L * math.cos(alpha)))
    r0 = np.array([L * math.sin(alpha), -L * math.cos(alpha), 0.0])
    s = fm.System(gravity=(0, -G, 0))
    b = s.add(fm.PointMass(2.0, position=r0, velocity=(0, 0, -omega * r0[0]), name="bob"))
    s.add(fm.Spherical(s.ground, b, point=(0, 0, 0)))
    turn = 2 * math.pi / omega
    res = fm.simulate(s, t_end=turn, h=turn / 2000, progress=False)
    r = res.position(b)
    assert np.max(np.abs(r[:, 1] - r0[1])) < 1e-5 * L     # the height of the cone (O(h^2) drift: 1e-7 L seen)
    phase = np.unwrap(np.arctan2(-r[:, 2], r[:, 0]))
    assert phase[-1] == pytest.approx(2 * math.pi, rel=1e-4)
    (held,) = s.compile().rigid.held
    assert held.body is b and held.axes.shape == (1, 3)
    lever = (r - 0.0) / L                                # unit vector pivot -> mass, global
    spin = np.einsum("ij,ij->i", res.angular_velocity(b), lever)
    assert np.max(np.abs(spin)) < 1e-6 * omega     # Newton's tolerance (1e-8 on q) leaves 2.6e-9 omega; no drift


def slender_rod(length: float, mass: float, name: str = "rod", tip_at=None):
    """A uniform slender rod from the origin to ``tip_at`` (default start(length)), its axis along body x, with
    no moment of inertia about it: inertia (0, m L^2/12, m L^2/12)."""
    tip = start(length) if tip_at is None else np.asarray(tip_at, dtype=float)
    x = tip / np.linalg.norm(tip)
    z = np.array([0.0, 0.0, 1.0])
    R = np.column_stack([x, np.cross(z, x), z])
    i_t = mass * length ** 2 / 12.0
    return fm.RigidBody(mass=mass, inertia=(0.0, i_t, i_t), position=tip / 2, orientation=R, name=name)


def test_slender_rod_revolute_pendulum():
    """A rod with zero axial inertia on a revolute at its end (axis normal to the rod): T/4 of the compound
    pendulum I_O = m L^2 / 3, d = L/2. Nothing is held (the revolute holds the spin). Before: refused."""
    L, m = 0.6, 1.5
    s = fm.System(gravity=(0, -G, 0))
    rod = s.add(slender_rod(L, m))
    s.add(fm.Revolute(s.ground, rod, point=(0, 0, 0), axis=(0, 0, 1)))
    t4 = quarter_period(m * L * L / 3.0, m, L / 2.0)
    assert bottom_time(run_quarter(s, t4), rod) == pytest.approx(t4, rel=PERIOD_RTOL)
    assert s.compile().rigid.held == []


def test_rod_between_two_spherical_joints_with_a_point_mass():
    """A rod hung from a spherical joint, a PointMass on a spherical joint at its tip: the rod's spin and the
    point mass's three rotations carry no inertia and no joint holds them (held still); the swing is the compound
    pendulum I_O = m_r L^2/3 + m_p L^2, m d = m_r L/2 + m_p L. Before: both bodies were refused."""
    L, m_r, m_p = 0.7, 0.4, 1.1
    s = fm.System(gravity=(0, -G, 0))
    rod = s.add(slender_rod(L, m_r))
    tip = s.add(fm.PointMass(m_p, position=start(L), name="tip"))
    s.add(fm.Spherical(s.ground, rod, point=(0, 0, 0)))
    s.add(fm.Spherical(rod, tip, point=start(L)))
    total = m_r + m_p
    t4 = quarter_period(m_r * L * L / 3.0 + m_p * L * L, total, (m_r * L / 2 + m_p * L) / total)
    res = run_quarter(s, t4)
    assert bottom_time(res, tip) == pytest.approx(t4, rel=PERIOD_RTOL)
    held = {f.body.name: f.axes.shape[0] for f in s.compile().rigid.held}
    assert held == {"rod": 1, "tip": 3}
    assert np.max(np.abs(res.angular_velocity(tip))) < 1e-9
    e = res.energy()
    assert np.ptp(e["kinetic"] + e["potential"]) < 1e-3 * total * G * L   # no energy in the held rotations


def test_torque_on_a_rotation_without_inertia_is_refused():
    """A torque about the axis of a rod hung from a spherical joint, or on a point mass held at its centre,
    would spin what has no inertia: a ModelError names the body, the axis and the moment (a point mass with a
    revolute at its centre gets the same error for a torque about that axis)."""
    s = fm.System(gravity=(0, -G, 0))
    rod = s.add(slender_rod(0.5, 1.0, tip_at=(0.0, -0.5, 0.0)))         # hangs along -y, body x down
    s.add(fm.Spherical(s.ground, rod, point=(0, 0, 0)))
    s.add(fm.Torque(rod, (0, 0.2, 0), name="twist"))
    with pytest.raises(ModelError, match=r"rigid body 'rod'.*0\.2 N m.*body axis \(-?1, -?0, -?0\).*no inertia"):
        fm.simulate(s, t_end=0.01, h=1e-3, progress=False)

    s = fm.System()
    bead = s.add(fm.PointMass(0.01, position=(0, 0, 0), name="bead"))
    s.add(fm.Revolute(s.ground, bead, point=(0, 0, 0), axis=(0, 0, 1)))
    s.add(fm.Torque(bead, (0, 0, 1e-3), name="twist"))
    with pytest.raises(ModelError, match=r"point mass 'bead'.*0\.001 N m.*\(0, 0, 1\)"):
        fm.simulate(s, t_end=0.01, h=1e-3, progress=False)


def test_inertia_checks_are_relative_to_the_body():
    """A microgram body's inertia is judged as its kilogram copy's: its unsymmetric tensor is refused, its
    round-off negative axial moment of a rotated rod is read as zero."""
    with pytest.raises(ModelError, match="not symmetric"):
        fm.RigidBody(mass=1e-9, inertia=[[1e-15, 1e-16, 0], [0, 1e-15, 0], [0, 0, 1e-15]], name="speck")
    with pytest.raises(ModelError, match="negative"):
        fm.RigidBody(mass=1e-9, inertia=(-1e-17, 1e-15, 1e-15), name="speck")
    rod = fm.RigidBody(mass=1e-9, inertia=(-1e-30, 1e-15, 1e-15), name="speck")
    assert np.linalg.eigvalsh(rod.inertia)[0] == 0.0


def test_free_rotation_of_several_bodies_is_refused_naming_them():
    """Two point masses joined by a revolute midway, free in space: the hinge point can move sideways with both
    levers turning together (a knee without inertia), and the pair can spin about its line. Neither body alone
    has a free rotation, so nothing is held and the start is refused as singular, naming both bodies and the
    axes of each free direction."""
    s = fm.System()
    a = s.add(fm.PointMass(1.0, position=(-0.5, 0, 0), name="a"))
    b = s.add(fm.PointMass(1.0, position=(0.5, 0, 0), name="b"))
    s.add(fm.Revolute(a, b, point=(0, 0, 0), axis=(0, 0, 1), name="hinge"))
    with pytest.raises(SingularConfigurationError,
                       match=r"free rotations without inertia.*'a' about \(.*\) with 'b' about \(.*\); 'a' about"):
        fm.simulate(s, t_end=0.01, h=1e-3, progress=False)       # two free directions (any basis of them)


def test_force_elements_on_a_rotation_without_inertia():
    """A spring attached to the hung rod on its axis leaves the spin free (runs, no spin); one attached 5 cm off
    the axis, at rest length, loads the spin as soon as it turns: refused with the moment's rate, k d^2 =
    100 N/m * (0.05 m)^2 = 0.25 N m/rad; a damper there, c d^2 = 0.0075 N m s/rad."""
    def rod_with(element):
        s = fm.System(gravity=(0, -G, 0))
        rod = s.add(slender_rod(0.5, 1.0, tip_at=(0.0, -0.5, 0.0)))
        s.add(fm.Spherical(s.ground, rod, point=(0, 0, 0)))
        s.add(element(s, rod))
        return s, rod

    s, rod = rod_with(lambda s, rod: fm.SpringDamper(s.ground, rod, point_a=(0.3, -0.4, 0), point_b=(0, -0.4, 0),
                                                     k=100.0))
    res = fm.simulate(s, t_end=0.05, h=1e-3, progress=False)
    assert np.max(np.abs(res.angular_velocity(rod))) < 1e-12
    for k, c, words in ((100.0, 0.0, r"changes by -?0\.25 N m per rad of"),
                        (0.0, 3.0, r"changes by -?0\.0075 N m per rad/s")):
        s, rod = rod_with(lambda s, rod: fm.SpringDamper(s.ground, rod, point_a=(0.3, -0.4, 0.05),
                                                         point_b=(0, -0.4, 0.05), k=k, c=c))
        with pytest.raises(ModelError, match=r"rigid body 'rod': a force element's moment " + words):
            fm.simulate(s, t_end=0.05, h=1e-3, progress=False)


# -- a small body beside a large one ----------------------------------------------------------------------------
LINK = 1.0          # m, the link's length: pivot at the origin, its centre at LINK/2, the cube's pin at its tip


def link_with_cube(side: float, link_mass: float):
    """A uniform link of ``link_mass`` (kg) and length LINK on a revolute at the origin, released horizontal, with a
    steel cube of ``side`` (m) pinned by a revolute at its tip, the cube's centre side/2 further out: (system, link,
    cube)."""
    s = fm.System(gravity=(0, -G, 0))
    link = s.add(fm.RigidBody(mass=link_mass, inertia=(0.01 * link_mass, link_mass / 12, link_mass / 12),
                              position=(LINK / 2, 0, 0), name="link"))
    s.add(fm.Revolute(s.ground, link, point=(0, 0, 0), axis=(0, 0, 1)))
    m = 7800.0 * side ** 3
    cube = s.add(fm.RigidBody(mass=m, inertia=(m * side ** 2 / 6,) * 3, position=(LINK + side / 2, 0, 0),
                              name="cube"))
    s.add(fm.Revolute(link, cube, point=(LINK, 0, 0), axis=(0, 0, 1)))
    return s, link, cube


def cube_angle_reference(side: float, link_mass: float, t: np.ndarray) -> np.ndarray:
    """The cube's angle (rad, from +x) at times ``t`` from Lagrange's equations of the planar double pendulum
    (link angle th1 about the pivot, cube angle th2 about the pin; any mechanics text, e.g. Goldstein, Classical
    Mechanics, 1980, §1.6),

        [[I1 + m2 L^2, m2 L c cos(th1 - th2)], [m2 L c cos(th1 - th2), I2 + m2 c^2]] (th1'', th2'')
            = (-m2 L c sin(th1 - th2) th2'^2 - (m1 L/2 + m2 L) g cos th1,
               m2 L c sin(th1 - th2) th1'^2 - m2 g c cos th2),

    I1 = m1 L^2/3 about the pivot, c = side/2, I2 = m2 side^2/6, integrated by scipy's DOP853 at rtol 1e-11 (it
    moves by < 6e-8 rad from rtol 1e-10, and by 3e-11 rad to rtol 1e-13 or Radau for the 10 um cube): no flexmb
    code."""
    m1, m2, c = link_mass, 7800.0 * side ** 3, side / 2
    i1, i2 = m1 * LINK ** 2 / 3, m2 * side ** 2 / 6

    def rates(_, y):
        th1, th2, w1, w2 = y
        cos, sin = math.cos(th1 - th2), math.sin(th1 - th2)
        M = np.array([[i1 + m2 * LINK ** 2, m2 * LINK * c * cos], [m2 * LINK * c * cos, i2 + m2 * c * c]])
        Q = np.array([-m2 * LINK * c * sin * w2 ** 2 - (m1 * LINK / 2 + m2 * LINK) * G * math.cos(th1),
                      m2 * LINK * c * sin * w1 ** 2 - m2 * G * c * math.cos(th2)])
        return [w1, w2, *np.linalg.solve(M, Q)]
    sol = solve_ivp(rates, (0.0, t[-1]), [0.0, 0.0, 0.0, 0.0], method="DOP853", rtol=1e-11, atol=1e-13, t_eval=t)
    return sol.y[1]


def cube_angle_error(side: float, link_mass: float, h: float, t_end: float) -> float:
    """Largest |angle error| (rad) of the cube about its pin over a run against :func:`cube_angle_reference`."""
    s, link, cube = link_with_cube(side, link_mass)
    res = fm.simulate(s, t_end=t_end, h=h, progress=False)
    rel = res.position(cube) - 2.0 * res.position(link)     # the cube's centre from the link's tip
    angle = np.arctan2(rel[:, 1], rel[:, 0])
    return float(np.max(np.abs(np.angle(np.exp(1j * (angle - cube_angle_reference(side, link_mass, res.t)))))))


# Each bound is 3x the error measured at the step h (7.07e-4, 1.83e-4, 1.16e-5, 1.63e-6 rad); at h/2 the first three
# fall 4.00x, 3.99x, 4.24x (second order: the integration error). The 10 um cube's falls 1.4x only (1.15e-6 rad at
# h/2, as with newton_tol=1e-11; the reference moves by 3e-11 rad between DOP853 at rtol 1e-11 and 1e-13 and Radau):
# round-off of its positions, ~1 m in SI coordinates, where its lever is 5 um. A lost or wrong cube (a step that
# fails, a scale that drops its rotation) is off by radians.
MIXED_CASES = [   # side (m), link mass (kg), h (s), t_end (s), bound (rad)
    pytest.param(1e-3, 1.0, 1e-4, 0.3, 2.1e-3, id="1mm-7.8mg-on-1kg"),
    pytest.param(1e-4, 1.0, 2e-5, 0.1, 5.5e-4, id="0.1mm-7.8ug-on-1kg"),
    pytest.param(1e-4, 1000.0, 1e-5, 0.03, 3.5e-5, id="0.1mm-7.8ug-on-1000kg"),
    pytest.param(1e-5, 1000.0, 2e-6, 0.005, 5e-6, id="10um-7.8e-12kg-on-1000kg"),
]


@pytest.mark.parametrize("side, link_mass, h, t_end, bound", MIXED_CASES)
def test_small_body_beside_a_large_one_follows_the_reference(side, link_mass, h, t_end, bound):
    """A steel cube pinned at the tip of a 1 m link swings as the double pendulum of Lagrange's equations. The cube
    is a compound pendulum of length side/2 in the link's accelerating frame, of angular frequency
    sqrt(6 g_eff / (5 side)) (220 rad/s for 1 mm, 690 rad/s for 0.1 mm, g_eff ~ 40 m/s^2): h resolves it
    (h omega <= 0.02). Before: on a 1000 kg link the 0.1 mm and 10 um cubes were refused at the start as singular
    (pivot ratio 1.9e-16: one constraint-row scale for all bodies, the cube's rotation block 1e-20 of the link's);
    on a 1 kg link they ran."""
    assert cube_angle_error(side, link_mass, h, t_end) < bound


def test_small_body_beside_a_large_one_general_step(monkeypatch):
    """The same on the general step (AlphaStepper.step with linalg.saddle_scale) as on the compiled one."""
    import flexmb.solvers.compiled_step as cs
    monkeypatch.setattr(cs.CompiledStep, "qualifies", staticmethod(lambda asm, reuse: False))
    monkeypatch.setattr(cs.CompiledEvaluation, "qualifies", staticmethod(lambda asm: False))
    assert cube_angle_error(1e-4, 1000.0, 1e-5, 0.03) < 3.5e-5
