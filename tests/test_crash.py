"""Crash elements (flexmb/forces/crash.py, docs/theory-crash.md): closed-form checks of the plastic
hinge, the crush element and the triangular pulse, exact derivatives against central differences,
and refused input. The group methods are called directly (an assembly-free harness); the end-to-end
runs at the bottom need the groups registered in flexmb/assembly.py and skip until they are.
"""
import numpy as np
import pytest

import flexmb as fm
from flexmb import rotations as rot
from flexmb.errors import ModelError
from flexmb.forces.crash import (FAR_562, FT, G0, CrushElement, CrushGroup, PlasticHinge, PlasticHingeGroup,
                                 crash_groups, far_562_pulse, triangular_pulse)
from flexmb.groups import EvalState
from flexmb.joints.kernels import extend

rng = np.random.default_rng(11)


def at(qe, ve, t=0.0):
    """The protocol state (flexmb/groups.py) of extended coordinates ``qe``, ``ve``."""
    return EvalState(qe[:-7], ve[:-7], np.zeros(qe.size - 7), t, qe, ve)


# -- harness -------------------------------------------------------------------------------
def hinge_harness(curve, k, rate_factor=None):
    """A body on the ground by a plastic hinge about z; returns (set_state, group)."""
    s = fm.System()
    b = s.add(fm.RigidBody(1.0, (0.1, 0.1, 0.1), name="b"))
    h = s.add(PlasticHinge(s.ground, b, (0, 0, 1), curve, k, rate_factor=rate_factor, name="h"))
    asm = s.compile()
    g = PlasticHingeGroup([h], asm.nq)
    q0, v0 = asm.initial_state()

    def state(theta, rate=0.0):
        q, v = q0.copy(), v0.copy()
        q[3:7] = rot.from_axis_angle((0, 0, 1), theta)
        v[3:7] = 0.5 * rot.E(q[3:7]).T @ np.array([0.0, 0.0, rate])     # p_dot = E^T omega / 2
        return extend(q, v)

    return state, g


def crush_harness(curve, ku, L0=1.0):
    """A body at x = L0 pushed towards a ground point at the origin; returns (set_state, group)."""
    s = fm.System()
    b = s.add(fm.RigidBody(1.0, (0.1, 0.1, 0.1), position=(L0, 0, 0), name="b"))
    c = s.add(CrushElement(s.ground, b, point_a=(0, 0, 0), point_b=(L0, 0, 0), curve=curve, unloading_stiffness=ku,
                           name="c"))
    asm = s.compile()
    g = CrushGroup([c], asm.nq)
    q0, v0 = asm.initial_state()

    def state(delta, rate=0.0):
        q, v = q0.copy(), v0.copy()
        q[0] = L0 - delta
        v[0] = -rate
        return extend(q, v)

    return state, g


# -- plastic hinge ---------------------------------------------------------------------------
CURVE = ([0.0, 0.1, 0.3, 1.0], [10.0, 16.0, 18.0, 18.0])     # M_y (N m) vs plastic rotation (rad)
K = 1000.0


def test_hinge_monotonic_loading_follows_the_curve():
    """Below M_y(0)/k the hinge is elastic; beyond, theta = alpha + M_y(alpha)/k with M = M_y(alpha),
    whether the rotation is reached in one step or in many."""
    state, g = hinge_harness(CURVE, K)
    thetas = np.linspace(0.0, 0.8, 161)[1:]
    for th in thetas:
        qe, ve = state(th)
        M = g.moments(qe, ve)[0]
        g.accept(at(qe, ve))
        a = g.alpha[0]
        if th <= 10.0 / K:
            assert M == pytest.approx(K * th, rel=1e-9) and a == 0.0
        else:
            assert M == pytest.approx(np.interp(a, *CURVE), rel=1e-9)
            assert th == pytest.approx(a + M / K, rel=1e-9)
    state2, g2 = hinge_harness(CURVE, K)
    qe, ve = state2(thetas[-1])
    assert g2.moments(qe, ve)[0] == pytest.approx(M, rel=1e-9)   # path-independent for monotonic loading


def test_hinge_unloads_elastically_and_reloads_to_the_previous_maximum():
    state, g = hinge_harness(CURVE, K)
    th1 = 0.25
    qe, ve = state(th1)
    M1 = g.moments(qe, ve)[0]
    g.accept(at(qe, ve))
    for dth in (0.002, 0.01, 0.02):                  # unloading: slope k from (th1, M1)
        qe, ve = state(th1 - dth)
        assert g.moments(qe, ve)[0] == pytest.approx(M1 - K * dth, rel=1e-9)
    qe, ve = state(th1 - 0.01)
    g.accept(at(qe, ve))
    qe, ve = state(th1 - 1e-4)                      # reloading: still elastic just below th1
    assert g.moments(qe, ve)[0] == pytest.approx(M1 - K * 1e-4, rel=1e-9)
    qe, ve = state(th1)                             # yields again at the previous maximum
    assert g.moments(qe, ve)[0] == pytest.approx(M1, rel=1e-9)
    S = (18.0 - 16.0) / 0.2                         # alpha = 0.233 lies on the second segment
    qe, ve = state(th1 + 1e-3)                      # and continues on the curve, tangent k S/(k + S)
    assert g.moments(qe, ve)[0] == pytest.approx(M1 + 1e-3 * K * S / (K + S), rel=1e-9)
    # reversed loading, isotropic hardening: yields at -M1 after an elastic swing of 2 M1 / k
    qe, ve = state(th1 - 2 * M1 / K + 1e-9)
    assert g.moments(qe, ve)[0] == pytest.approx(-M1, rel=1e-6)
    qe, ve = state(th1 - 2 * M1 / K - 0.01)
    assert g.moments(qe, ve)[0] < -M1


def test_hinge_softening_curve_falls_to_zero_and_stays():
    state, g = hinge_harness(([0.0, 0.1, 0.2], [20.0, 20.0, 10.0]), K)   # falls 100 N m/rad, reaches 0 at 0.3
    for th in (0.5, 1.0):
        qe, ve = state(th)
        assert g.moments(qe, ve)[0] == pytest.approx(0.0, abs=1e-9)
    qe, ve = state(0.25)                            # alpha + M_y(alpha)/k = 0.25 on the falling segment
    M = g.moments(qe, ve)[0]
    a = g.static(np.array([0.25]))[2][0]
    assert M == pytest.approx(20.0 - 100.0 * (a - 0.1)) and 0.25 == pytest.approx(a + M / K)


def test_rate_factor_cowper_symonds_while_loading_only():
    C, p = 5.0, 4.0
    state, g = hinge_harness(CURVE, K, rate_factor=(C, p))
    qe, ve = state(0.2, rate=2.0)                   # plastic, loading
    state0, g0 = hinge_harness(CURVE, K)
    Ms = g0.moments(*state0(0.2))[0]
    assert g.moments(qe, ve)[0] == pytest.approx(Ms * (1 + (2.0 / C) ** (1 / p)), rel=1e-12)
    qe, ve = state(0.005, rate=-2.0)               # elastic, moment and rate opposite: no factor
    assert g.moments(qe, ve)[0] == pytest.approx(K * 0.005, rel=1e-12)
    w0 = 1e-4 * C                                   # chord below rate_min
    qe, ve = state(0.005, rate=0.5 * w0)
    assert g.moments(qe, ve)[0] == pytest.approx(K * 0.005 * (1 + 0.5 * (w0 / C) ** (1 / p)), rel=1e-12)
    # Ambrosio's dynamic correction factor 1 + 0.07 V^0.82 (Ambrosio 2002, eq. 7) in this form
    state, g = hinge_harness(CURVE, K, rate_factor=(0.07 ** (-1 / 0.82), 1 / 0.82))
    qe, ve = state(0.2, rate=3.0)
    assert g.moments(qe, ve)[0] == pytest.approx(Ms * (1 + 0.07 * 3.0 ** 0.82), rel=1e-12)


def test_hinge_energy_bookkeeping():
    """Elastic energy M_s^2/(2k); dissipation rate M_s theta_dot (1 - K_t/k); work rate = both."""
    state, g = hinge_harness(CURVE, K)
    qe, ve = state(0.2, rate=1.5)
    M = g.moments(qe, ve)[0]
    S = (18.0 - 16.0) / 0.2                         # alpha = 0.183: second segment
    assert g.elastic_energy(qe, ve).sum() == pytest.approx(M * M / (2 * K))
    assert g.dissipation(qe, ve) == pytest.approx(-M * 1.5 * (1 - S / (K + S)))
    assert g.power(at(qe, ve)) == pytest.approx(-M * 1.5)
    qe, ve = state(0.001, rate=1.5)                 # elastic: nothing dissipated
    assert g.dissipation(qe, ve) == pytest.approx(0.0, abs=1e-12)


# -- crush element ---------------------------------------------------------------------------
CRUSH = ([0.0, 0.01, 0.05, 0.2], [0.0, 8e3, 5e3, 6e3])      # peak, then a plateau (N vs m)
KU = 1e6


def test_crush_loading_unloading_reloading_and_no_tension():
    state, g = crush_harness(CRUSH, KU)
    for d in (0.005, 0.03, 0.1, 0.3):               # monotonic crush follows the curve (linear beyond)
        qe, ve = state(d)
        F = g.forces(qe, ve)[0]
        expected = np.interp(d, *CRUSH) if d <= 0.2 else 6e3 + (d - 0.2) * (1e3 / 0.15)
        assert F == pytest.approx(expected, rel=1e-9)
        g.accept(at(qe, ve))
    g2_state, g2 = crush_harness(CRUSH, KU)
    qe, ve = g2_state(0.1)
    g2.accept(at(qe, ve))
    F1 = np.interp(0.1, *CRUSH)
    for dd in (1e-4, 1e-3):                         # unloading with k_u from the maximum crush
        qe, ve = g2_state(0.1 - dd)
        assert g2.forces(qe, ve)[0] == pytest.approx(F1 - KU * dd, rel=1e-9)
    qe, ve = g2_state(0.1 - 2 * F1 / KU)            # separated: no pulling
    assert g2.forces(qe, ve)[0] == 0.0
    qe, ve = g2_state(-0.05)                        # stretched beyond the free length
    assert g2.forces(qe, ve)[0] == 0.0
    g2.accept(at(*g2_state(0.09)))
    assert g2.max_crush[0] == pytest.approx(0.1)    # history keeps the maximum
    qe, ve = g2_state(0.1)                          # reloading reaches the curve at the maximum
    assert g2.forces(qe, ve)[0] == pytest.approx(F1, rel=1e-9)
    qe, ve = g2_state(0.12)
    assert g2.forces(qe, ve)[0] == pytest.approx(np.interp(0.12, *CRUSH), rel=1e-9)


def test_crush_energy_bookkeeping():
    state, g = crush_harness(CRUSH, KU)
    qe, ve = state(0.1, rate=2.0)
    F = g.forces(qe, ve)[0]
    S = 1e3 / 0.15
    assert g.elastic_energy(qe, ve).sum() == pytest.approx(F * F / (2 * KU))
    assert g.dissipation(qe, ve) == pytest.approx(-F * 2.0 * (1 - S / KU))
    assert g.power(at(qe, ve)) == pytest.approx(-F * 2.0)


def drop(m, v, F0, eps, ku, h=2.5e-5):
    """A mass moving at v into a crush element (force F0 after an initial rise over eps), integrated
    with velocity Verlet and one accept per step; returns (max crush, rebound speed, group)."""
    L0 = 1.0
    s = fm.System()
    b = s.add(fm.RigidBody(m, (0.1, 0.1, 0.1), position=(L0, 0, 0), name="mass"))
    c = s.add(CrushElement(s.ground, b, point_a=(0, 0, 0), point_b=(L0, 0, 0), curve=([0, eps, 10.0], [0, F0, F0]),
                           unloading_stiffness=ku, name="c"))
    asm = s.compile()
    g = CrushGroup([c], asm.nq)
    q, vv = asm.initial_state()
    vv[0] = -v

    def accel(q, vv):
        qe, ve = extend(q, vv)
        r, _ = g.residual(at(qe, ve))
        idx = g.scatter
        R = np.zeros(asm.nq)
        np.add.at(R, idx[idx >= 0], r[idx >= 0])
        return -R[0] / m

    g.accept(at(*extend(q, vv)))
    a = accel(q, vv)
    dmax = 0.0
    for _ in range(200000):
        q[0] += h * vv[0] + 0.5 * h * h * a
        a_new = accel(q, vv)
        vv[0] += 0.5 * h * (a + a_new)
        a = a_new
        g.accept(at(*extend(q, vv)))
        dmax = max(dmax, L0 - q[0])
        if vv[0] > 0 and g.forces(*extend(q, vv))[0] == 0.0:
            break
    return dmax, vv[0], g


def test_mass_dropped_on_crush_element_stops_at_energy_crush_and_rebounds_elastically():
    """Energy: 1/2 m v^2 = F0 (d - eps/2) (the initial rise is a triangle), and the rebound returns
    only the elastic energy F0^2/(2 k_u): v_r = F0 / sqrt(m k_u)."""
    m, v, F0, eps, ku = 10.0, 5.0, 1000.0, 1e-3, 2e6
    dmax, vr, g = drop(m, v, F0, eps, ku)
    assert dmax == pytest.approx(m * v * v / (2 * F0) + eps / 2, rel=1e-4)
    assert vr == pytest.approx(F0 / np.sqrt(m * ku), rel=2e-3)
    assert g.max_crush[0] == pytest.approx(dmax, rel=1e-6)
    assert g.absorbed[0] == pytest.approx(0.5 * m * (v * v - vr * vr), rel=1e-4)


# -- exact derivatives -------------------------------------------------------------------------
def fd_blocks(g, qe, ve, wrt, eps=1e-6):
    """Central differences of every instance's residual row block over its own pair columns."""
    n, nx = g.gather.shape
    out = np.zeros((n, nx, nx))
    for i in range(n):
        for c in range(nx):
            col = g.gather[i, c]
            res = []
            for sgn in (1, -1):
                q2, v2 = qe.copy(), ve.copy()
                (q2 if wrt == "q" else v2)[col] += sgn * eps
                res.append(g.residual(at(q2, v2))[0][i])
            out[i, :, c] = (res[0] - res[1]) / (2 * eps)
    return out


def random_pair_system():
    s = fm.System()
    a = s.add(fm.RigidBody(2.0, (0.2, 0.3, 0.4), position=(0.1, 0.2, 0.3),
                           orientation=rot.from_axis_angle((1, 2, 3), 0.4), name="a"))
    b = s.add(fm.RigidBody(1.0, (0.1, 0.2, 0.3), position=(1.0, -0.2, 0.4),
                           orientation=rot.from_axis_angle((0, 1, 1), -0.3), name="b"))
    return s, a, b


def test_hinge_blocks_match_central_differences_on_every_branch():
    s, a, b = random_pair_system()
    curves = [CURVE, ([0.0, 0.05], [5.0, 9.0]), ([0.0, 0.1, 0.2, 0.3, 0.4], [12.0, 11.0, 14.0, 14.0, 13.0])]
    hs = [PlasticHinge(a, b, (0.2, 0.3, 1.0), curves[0], 800.0, rate_factor=(3.0, 5.0), name="h0"),
          PlasticHinge(s.ground, b, (1.0, 0.0, 0.3), curves[1], 500.0, name="h1"),
          PlasticHinge(a, s.ground, (0.0, 1.0, 0.0), curves[2], 1500.0, rate_factor=(2.0, 3.0), name="h2"),
          PlasticHinge(b, a, (1.0, 1.0, 0.0), curves[0], 900.0, rate_factor=(1.0, 2.0), name="h3")]
    s.add(hs)
    asm = s.compile()
    g = PlasticHingeGroup(hs, asm.nq)
    q0, v0 = asm.initial_state()
    q = q0 + 0.05 * rng.standard_normal(q0.size)
    v = v0 + 0.5 * rng.standard_normal(q0.size)
    qe, ve = extend(q, v)
    th = g.rotations(qe, ve)
    # history per instance: plastic (loading, e well past yield), elastic, plastic reversed, elastic
    g.alpha = np.array([0.15, 0.02, 0.25, 0.0])
    g.theta_p = th - np.array([0.2, 0.005, -0.1, -0.004])
    M, _, _, Ms, Kt, _, R = g._law(th, g.measure.values(qe, ve)[1])
    assert (Kt[[0, 2]] < g.k[[0, 2]]).all() and (Kt[[1, 3]] == g.k[[1, 3]]).all()
    for coef, wrt in (((0.0, 0.0, 1.0), "q"), ((0.0, 1.0, 0.0), "v")):
        blocks = g.residual(at(qe, ve), coef)[1]
        ref = fd_blocks(g, qe, ve, wrt)
        assert np.abs(blocks - ref).max() <= 1e-6 * max(1.0, np.abs(ref).max()), wrt


def test_crush_blocks_match_central_differences_on_every_branch():
    s, a, b = random_pair_system()
    els = [CrushElement(a, b, point_a=(0.1, 0.2, 0.3), point_b=(1.0, -0.2, 0.4), curve=CRUSH, unloading_stiffness=KU,
                        name="c0"),
           CrushElement(s.ground, b, point_a=(0.0, 0.0, 0.0), point_b=(1.1, 0.0, 0.5), curve=([0.0, 0.02], [0.0, 4e3]),
                        unloading_stiffness=5e5, name="c1"),
           CrushElement(a, s.ground, point_a=(0.3, 0.2, 0.1), point_b=(0.5, 1.0, 0.0), curve=CRUSH,
                        unloading_stiffness=2e6, name="c2")]
    s.add(els)
    asm = s.compile()
    g = CrushGroup(els, asm.nq)
    q0, v0 = asm.initial_state()
    q = q0 + 0.05 * rng.standard_normal(q0.size)
    v = v0 + 0.5 * rng.standard_normal(q0.size)
    qe, ve = extend(q, v)
    d = g.crush(qe, ve)
    g.L0 = g.L0 - d + np.array([0.03, 0.01, 0.1])     # crush 3 cm, 1 cm, 10 cm at this state
    g.max_crush = np.array([0.02, 0.0105, 0.1004])     # loading, unloading (F > 0), unloading
    F, Kd, _ = g._law(g.L0 - np.array([0.03, 0.01, 0.1]), None)
    assert (F > 0).all() and Kd[0] < KU and Kd[1] == 5e5 and Kd[2] == 2e6
    blocks = g.residual(at(qe, ve), (0.0, 0.0, 1.0))[1]
    ref = fd_blocks(g, qe, ve, "q")
    assert np.abs(blocks - ref).max() <= 1e-6 * max(1.0, np.abs(ref).max())
    assert np.abs(g.residual(at(qe, ve), (0.0, 1.0, 0.0))[1]).max() == 0.0


def flexible_beam(name="f"):
    """A small Craig-Bampton beam (root = frame, tip interface), as in tests/test_jacobians.py."""
    from flexmb.fem.materials import Material
    from flexmb.fem.model import FEModel
    from flexmb.fem.sections import BeamSection
    from flexmb.reduction import craig_bampton
    from verification.fem.meshes import line_mesh
    model = FEModel(line_mesh(4, 1.5, direction=(1.0, 0.3, 0.2)), Material(E=2e9, nu=0.3, rho=2000.0),
                    sections=BeamSection.rectangle(0.05, 0.03, nu=0.3))
    modes = craig_bampton(model, {"root": "root", "tip": "tip"}, n_modes=3, reference="root")
    return fm.FlexibleBody(modes, position=(0.2, -0.1, 0.3), orientation=rot.from_axis_angle((0.3, 0.5, 1), 0.7),
                           name=name)


def test_crash_groups_split_by_type_and_modal_counts_and_flexible_sites_are_exact():
    s, a, b = random_pair_system()
    f = s.add(flexible_beam())
    tip = f.initial_frame()[0] + f.initial_frame()[1] @ f.modes.interface("tip").position
    items = s.add([PlasticHinge(a, b, (0, 0, 1), CURVE, K, name="h"),
                   CrushElement(a, f.interface("tip"), point_a=(0.1, 0.2, 0.3), point_b=tip, curve=CRUSH,
                                unloading_stiffness=KU, name="c"),
                   PlasticHinge(s.ground, b, (0, 1, 0), CURVE, K, name="h2"),
                   PlasticHinge(a, f.interface("tip"), (0.2, 1.0, 0.1), CURVE, K, rate_factor=(2.0, 4.0), name="hf")])
    asm = s.compile()
    groups = crash_groups(s.forces, asm.nq)
    assert [(type(g).__name__, [e.name for e in g.elements]) for g in groups] == [
        ("PlasticHingeGroup", ["h", "h2"]), ("PlasticHingeGroup", ["hf"]), ("CrushGroup", ["c"])]
    q0, v0 = asm.initial_state()
    q = q0 + 0.02 * rng.standard_normal(q0.size)
    v = v0 + 0.5 * rng.standard_normal(q0.size)
    qe, ve = extend(q, v)
    hg, cg = groups[1], groups[2]
    hg.theta_p = hg.rotations(qe, ve) - 0.1                      # plastic, loading or not
    hg.alpha[:] = 0.05
    cg.L0 = cg.L0 - cg.crush(qe, ve) + 0.03                      # 3 cm crush, on the curve
    assert hg.gather.shape[1] == 14 + f.n_modes and cg.forces(qe, ve)[0] > 0
    for g in (hg, cg):
        for coef, wrt in (((0.0, 0.0, 1.0), "q"), ((0.0, 1.0, 0.0), "v")):
            blocks = g.residual(at(qe, ve), coef)[1]
            ref = fd_blocks(g, qe, ve, wrt)
            assert np.abs(blocks - ref).max() <= 1e-6 * max(1.0, np.abs(ref).max()), (type(g).__name__, wrt)


# -- triangular pulse ----------------------------------------------------------------------------
@pytest.mark.parametrize("t_peak", [None, 0.03, 0.0, 0.12])
def test_triangular_pulse_closed_forms(t_peak):
    """Velocity change A T / 2; rate and value equal the numerical integrals of the acceleration
    (adaptive quadrature split at the kinks); value, rate and acceleration are consistent."""
    from scipy.integrate import quad
    peak_g, T, v0, x0, t0 = 16.0, 0.12, 15.0, 0.4, 0.01
    f = triangular_pulse(peak_g, T, t_peak=t_peak, v0=v0, x0=x0, t0=t0)
    A = peak_g * G0
    assert f.delta_v == pytest.approx(0.5 * A * T)
    kinks = [t0, t0 + f.t_peak, t0 + T]
    for tt in np.linspace(0.0, 0.2, 21):
        pts = [k for k in kinks if 0 < k < tt]
        vel = v0 + quad(f.acceleration, 0.0, tt, points=pts or None, epsabs=1e-12, epsrel=1e-12, limit=200)[0]
        pos = f.value(0.0) + quad(f.rate, 0.0, tt, points=pts or None, epsabs=1e-12, epsrel=1e-12, limit=200)[0]
        assert f.rate(tt) == pytest.approx(vel, abs=1e-9 * A * T)
        assert f.value(tt) == pytest.approx(pos, abs=1e-9 * A * T * T)
    assert f.rate(0.2) == pytest.approx(v0 - 0.5 * A * T)
    tp = f.t_peak
    assert f.value(0.2) == pytest.approx(x0 + v0 * 0.19 - A * T * (2 * T - tp) / 6 - 0.5 * A * T * (0.19 - T))
    grid = np.linspace(0.0, 0.2, 20001)
    assert -min(f.acceleration(tt) for tt in grid) == pytest.approx(A, rel=1e-3)
    for tt in (0.02, 0.05, 0.1, 0.15):              # central differences away from the kinks
        hh = 1e-6
        assert (f.value(tt + hh) - f.value(tt - hh)) / (2 * hh) == pytest.approx(f.rate(tt), rel=1e-7, abs=1e-7)
        assert (f.rate(tt + hh) - f.rate(tt - hh)) / (2 * hh) == pytest.approx(f.acceleration(tt), rel=1e-6, abs=1e-6)


def test_default_sled_ends_at_rest_and_far_presets():
    f = triangular_pulse(14.0, 0.16)
    assert f.v0 == pytest.approx(0.5 * 14.0 * G0 * 0.16) and f.rate(1.0) == pytest.approx(0.0, abs=1e-12)
    p = far_562_pulse(25, 2)                          # forward test: 16 g within 0.09 s, 44 ft/s
    assert (p.peak_g, p.t_peak) == (16.0, 0.09)
    assert p.delta_v == pytest.approx(44 * FT)
    p = far_562_pulse(25, 1)                          # down-forward test: 14 g within 0.08 s, 35 ft/s
    assert (p.peak_g, p.t_peak) == (14.0, 0.08) and p.delta_v == pytest.approx(35 * FT)
    p = far_562_pulse(23, 1, "first row")
    assert (p.peak_g, p.t_peak) == (19.0, 0.05) and p.delta_v == pytest.approx(31 * FT)
    for key in FAR_562:                               # every ideal triangle holds its peak inside the pulse
        p = far_562_pulse(*key)
        assert 0 < p.t_peak < p.duration


# -- refused input -------------------------------------------------------------------------------
def test_bad_input_names_the_element_and_the_value():
    s = fm.System()
    b = s.add(fm.RigidBody(1.0, (0.1, 0.1, 0.1), name="b"))
    g = s.ground
    with pytest.raises(ModelError, match=r"plastic hinge 'hx'.*increase strictly.*x\[2\] = 0.1"):
        PlasticHinge(g, b, (0, 0, 1), ([0, 0.2, 0.1], [1, 2, 3]), 100.0, name="hx")
    with pytest.raises(ModelError, match=r"plastic hinge 'hk'.*k_elastic.*-5"):
        PlasticHinge(g, b, (0, 0, 1), CURVE, -5.0, name="hk")
    with pytest.raises(ModelError, match=r"plastic hinge 'hs'.*slope -200.*snap back"):
        PlasticHinge(g, b, (0, 0, 1), ([0, 0.1], [30, 10]), 100.0, name="hs")
    with pytest.raises(ModelError, match=r"plastic hinge 'hr'.*rate_factor"):
        PlasticHinge(g, b, (0, 0, 1), CURVE, 100.0, rate_factor=(1.0,), name="hr")
    with pytest.raises(ModelError, match=r"plastic hinge 'hp'.*p must be positive.*-1"):
        PlasticHinge(g, b, (0, 0, 1), CURVE, 100.0, rate_factor=(1.0, -1.0), name="hp")
    with pytest.raises(ModelError, match=r"plastic hinge 'hn'.*non-negative.*-3"):
        PlasticHinge(g, b, (0, 0, 1), ([0, 1], [5, -3]), 100.0, name="hn")
    with pytest.raises(ModelError, match=r"crush element 'cu'.*unloading_stiffness.*-1"):
        CrushElement(g, b, point_a=(1, 0, 0), point_b=(0, 0, 0), curve=CRUSH, unloading_stiffness=-1.0, name="cu")
    with pytest.raises(ModelError, match=r"crush element 'cz'.*start at \(0, 0\).*500"):
        CrushElement(g, b, point_a=(1, 0, 0), point_b=(0, 0, 0), curve=([0, 1], [500, 500]), unloading_stiffness=1e6,
                     name="cz")
    with pytest.raises(ModelError, match=r"crush element 'cs'.*slope 800000 .*exceeds.*create energy"):
        CrushElement(g, b, point_a=(1, 0, 0), point_b=(0, 0, 0), curve=CRUSH, unloading_stiffness=1e5, name="cs")
    with pytest.raises(ModelError, match=r"crush element 'cm'.*increase strictly"):
        CrushElement(g, b, point_a=(1, 0, 0), point_b=(0, 0, 0), curve=([0, 0.1, 0.1], [0, 1, 2]),
                     unloading_stiffness=1e6, name="cm")
    with pytest.raises(ModelError, match=r"crush element 'cp'.*coincide"):
        CrushElement(g, b, point_a=(0, 0, 0), point_b=(0, 0, 0), curve=CRUSH, unloading_stiffness=1e6, name="cp")
    with pytest.raises(ModelError, match=r"triangular pulse.*duration.*positive.*got 0.0"):
        triangular_pulse(16.0, 0.0)
    with pytest.raises(ModelError, match=r"triangular pulse.*peak_g.*-2"):
        triangular_pulse(-2.0, 0.1)
    with pytest.raises(ModelError, match=r"triangular pulse.*t_peak = 0.2 s.*after the end"):
        triangular_pulse(16.0, 0.1, t_peak=0.2)
    with pytest.raises(ModelError, match=r"far_562_pulse: no test"):
        far_562_pulse(25, 3)


# -- end to end (needs the groups in flexmb/assembly.py) ---------------------------------------------
def _wired() -> bool:
    s = fm.System()
    b = s.add(fm.RigidBody(1.0, (0.1, 0.1, 0.1), position=(1, 0, 0), name="b"))
    s.add(CrushElement(s.ground, b, point_a=(0, 0, 0), point_b=(1, 0, 0), curve=CRUSH, unloading_stiffness=KU,
                       name="c"))
    return hasattr(s.compile(), "crash")


wired = pytest.mark.skipif(not _wired(), reason="crash groups not registered in flexmb/assembly.py yet")


@wired
def test_simulated_drop_on_crush_element():
    m, v, F0, eps, ku = 10.0, 5.0, 1000.0, 1e-3, 2e6
    s = fm.System()
    b = s.add(fm.RigidBody(m, (0.1, 0.1, 0.1), position=(1.0, 0, 0), velocity=(-v, 0, 0), name="mass"))
    s.add(CrushElement(s.ground, b, point_a=(0, 0, 0), point_b=(1.0, 0, 0), curve=([0, eps, 10.0], [0, F0, F0]),
                       unloading_stiffness=ku, name="c"))
    res = fm.simulate(s, 0.07, h=5e-5)
    x = res.q[:, 0]
    assert 1.0 - x.min() == pytest.approx(m * v * v / (2 * F0) + eps / 2, rel=2e-3)
    assert res.v[-1, 0] == pytest.approx(F0 / np.sqrt(m * ku), rel=2e-2)
    E = res.energy()
    assert np.abs(E["total"] - E["total"][0]).max() < 2e-3 * 0.5 * m * v * v
    g = s.compile().crash[0]
    assert g.absorbed[0] == pytest.approx(0.5 * m * (v * v - res.v[-1, 0] ** 2), rel=2e-3)


@wired
def test_simulated_hinge_absorbs_kinetic_energy():
    """A rotor on a revolute joint with a perfectly plastic hinge M0: it stops at
    theta_max = M0/k + (I w^2/2 - M0^2/(2k)) / M0 and then swings elastically with amplitude M0/k."""
    I, w, M0, k = 0.5, 4.0, 2.0, 200.0
    s = fm.System()
    b = s.add(fm.RigidBody(1.0, (0.5, 0.5, I), angular_velocity=(0, 0, w), name="rotor"))
    s.add(fm.Revolute(s.ground, b, (0, 0, 0), (0, 0, 1), name="rev"))
    s.add(PlasticHinge(s.ground, b, (0, 0, 1), ([0, 10.0], [M0, M0]), k, name="h"))
    res = fm.simulate(s, 2.0, h=2e-3)              # stops after I w / M0 = 1 s; elastic period 0.31 s
    th = np.array([2 * np.arctan2(q[6], q[3]) for q in res.q])
    assert th.max() == pytest.approx(M0 / k + (0.5 * I * w * w - M0 * M0 / (2 * k)) / M0, rel=2e-3)
    late = th[res.t > 1.3]
    assert 0.5 * (late.max() - late.min()) == pytest.approx(M0 / k, rel=2e-2)
    E = res.energy()
    assert np.abs(E["total"] - E["total"][0]).max() < 5e-3 * 0.5 * I * w * w


@wired
def test_newton_matrix_with_crash_elements_matches_finite_differences():
    s, a, b = random_pair_system()
    s.add([PlasticHinge(a, b, (0.2, 0.3, 1.0), CURVE, 800.0, rate_factor=(3.0, 5.0), name="h"),
           CrushElement(a, b, point_a=(0.1, 0.2, 0.3), point_b=(1.0, -0.2, 0.4), curve=CRUSH, unloading_stiffness=KU,
                        name="c")])
    asm = s.compile()
    q0, v0 = asm.initial_state()
    q = q0.copy()
    q[7:10] -= 0.02 * (q0[7:10] - q0[0:3]) / np.linalg.norm(q0[7:10] - q0[0:3])   # crush ~2 cm
    q = q + 1e-3 * rng.standard_normal(q.size)
    v = v0 + 0.3 * rng.standard_normal(q.size)
    a_ = rng.standard_normal(q.size)
    lam = np.zeros(asm.m)
    t = 0.0

    def fd(f, x, eps=1e-6):
        return np.array([(f(x + eps * e) - f(x - eps * e)) / (2 * eps) for e in np.eye(x.size)]).T

    for coef, fun, x in [((0, 0, 1, 1, 0), lambda x: asm.residual(x, v, a_, lam, t)[0], q),
                         ((0, 1, 0, 0, 0), lambda x: asm.residual(q, x, a_, lam, t)[0], v)]:
        S = asm.residual(q, v, a_, lam, t, coef=coef)[2]
        S = (S.toarray() if hasattr(S, "toarray") else S)[:asm.nq, :asm.nq]
        ref = fd(fun, x)
        assert np.abs(S - ref).max() <= 1e-6 * max(1.0, np.abs(ref).max()), coef


@wired
def test_sled_on_a_far_pulse_carries_a_seat_on_a_crush_element():
    """FAR 25.562 forward test: the sled follows the ideal pulse exactly (driver), and the seat
    mass, held by a load-limiting crush element, ends with the sled's velocity change."""
    pulse = far_562_pulse(25, 2, t0=0.0)
    s = fm.System()
    sled = s.add(fm.RigidBody(50.0, (1, 1, 1), velocity=(pulse.v0, 0, 0), name="sled"))
    seat = s.add(fm.RigidBody(80.0, (1, 1, 1), position=(0.5, 0, 0), velocity=(pulse.v0, 0, 0), name="seat"))
    track = s.add(fm.Prismatic(s.ground, sled, (0, 0, 0), (1, 0, 0), name="track"))
    s.add(fm.Driver(track, displacement=pulse, name="pulse"))
    s.add(fm.Prismatic(sled, seat, (0.5, 0, 0), (1, 0, 0), name="rail"))
    s.add(CrushElement(seat, sled, point_a=(0.5, 0, 0), point_b=(0.9, 0, 0), curve=([0, 0.005, 1.0], [0, 9e3, 9e3]),
                       unloading_stiffness=5e6, name="limiter"))
    res = fm.simulate(s, 0.4, h=5e-4)
    tt = res.t
    xs = np.array([pulse.value(ti) for ti in tt])
    assert np.abs(res.q[:, 0] - xs).max() < 1e-8
    assert res.v[-1, 0] == pytest.approx(pulse.v0 - pulse.delta_v, abs=1e-6)
    assert abs(res.v[-1, 7] - res.v[-1, 0]) < 0.05 * pulse.delta_v       # the seat has come to rest on the sled
    g = s.compile().crash[0]
    assert 0.0 < g.max_crush[0] < 0.4                                        # the limiter stroked
    E = res.energy()                                                          # driver work included
    assert np.abs(E["total"] - E["total"][0]).max() < 1e-4 * E["kinetic"][0]
