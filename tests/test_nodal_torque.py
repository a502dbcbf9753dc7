"""fm.NodalTorque (issue 27, item 3): a torque on mesh nodes of modal, NonlinearBeam and ExactBeam bodies.

1. virtual work: ``Q . dq`` of the kernel equals ``n . d theta`` of the node's triad, the virtual rotation taken
   from rotation matrices (frame ``A(p)`` times the node's ``exp(psi~)``) by central differences of their
   logarithm, not from the formula; for an ExactBeam at a node rotation of 1.3 rad (the tangent map T(psi));
2. the Newton blocks against central differences of the residual (global and body-fixed torques);
3. cantilevers with a tip torque M against the closed form: tip rotation M L / EI, tip deflection
   M L^2 / 2 EI (small load) for a modal body and a NonlinearBeam, static and dynamic; an ExactBeam bent into
   a circular arc of curvature M / EI at a tip rotation of 1 rad;
4. bad input named.
"""
from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import flexmb as fm
from flexmb import rotations as rot
from flexmb.errors import ModelError
from flexmb.forces.nodal import NodalTorqueGroup
from flexmb.reduction import craig_bampton

L, N_EL = 1.0, 8
MAT = fm.Material(E=70e9, nu=0.33, rho=2700.0)
SECTION = fm.BeamSection.rectangle(0.02, 0.04)
EI_Y = MAT.E * SECTION.Iy          # bending about local y (deflection along z)


def cantilever_fe(direction=(1.0, 0.0, 0.0)) -> fm.FEModel:
    d = np.asarray(direction, float) / np.linalg.norm(direction)
    s = np.linspace(0.0, L, N_EL + 1)
    mesh = fm.FEMesh(s[:, None] * d[None, :], {"line": np.column_stack([np.arange(N_EL), np.arange(1, N_EL + 1)])},
                     node_sets={"root": [0], "tip": [N_EL]})
    return fm.FEModel(mesh, MAT, sections=SECTION, beam="euler-bernoulli")


def make_body(kind: str, fe: fm.FEModel, **kw):
    """A clamped-root body of ``kind`` ('modal': Craig-Bampton with a tip interface, whose constraint modes hold
    the static shape of a tip moment exactly; 'nonlinear'; 'exact')."""
    if kind == "modal":
        ms = craig_bampton(fe, {"root": "root", "tip": "tip"}, n_modes=4, reference="root")
        return fm.FlexibleBody(ms, stiffening=False, name="beam", **kw)
    cls = fm.NonlinearBeam if kind == "nonlinear" else fm.ExactBeam
    return cls(fe, fe.dofs("root"), name="beam", **kw)


def loaded_system(kind: str, body_fixed: bool, node=N_EL, torque=(0.3, -1.2, 0.7)):
    s = fm.System()
    body = s.add(make_body(kind, cantilever_fe((1.0, 0.3, -0.2)), position=(0.1, -0.2, 0.3),
                           orientation=rot.from_axis_angle((0.3, 0.5, 1.0), 0.7)))
    s.add(fm.NodalTorque(body, node, torque, body_fixed=body_fixed))
    asm = s.compile()
    group = next(g for g in asm.families if isinstance(g, NodalTorqueGroup))
    return s, asm, body, group


def random_state(asm, body, kind, rng, node_rotation=0.0):
    """A state with a turned, normalized frame; modal coordinates random (exact beam: the loaded node turned by
    ``node_rotation`` rad about a skew axis, the other nodes random small); velocities random."""
    q0, _ = asm.initial_state()
    q = q0.copy()
    o = body.offset
    q[o:o + 3] += rng.standard_normal(3)
    p = q[o + 3:o + 7] + 0.3 * rng.standard_normal(4)
    q[o + 3:o + 7] = p / np.linalg.norm(p)
    eta = 1e-3 * rng.standard_normal(body.n_modes)
    if kind == "exact":
        Psi = body.node_shapes(N_EL)[1][0]
        axis = np.array([0.4, -0.7, 0.6]) / np.linalg.norm([0.4, -0.7, 0.6])
        eta = eta - Psi.T @ (Psi @ eta) + Psi.T @ (node_rotation * axis)
    q[o + 7:o + 7 + body.n_modes] = eta
    return q, rng.standard_normal(q.size)


def node_triad(body, q, kind):
    """Global triad of the loaded node: frame A(p) (p normalized) times the node's rotation, exp(psi~) for the
    ExactBeam's rotation vector, and (I + psi~ to first order) the same exp for the small-rotation bodies."""
    o = body.offset
    p = q[o + 3:o + 7] / np.linalg.norm(q[o + 3:o + 7])
    psi = body.node_shapes(N_EL)[1][0] @ q[o + 7:o + 7 + body.n_modes]
    return rot.A(p) @ Rotation.from_rotvec(psi).as_matrix()


@pytest.mark.parametrize("kind", ["modal", "nonlinear", "exact"])
@pytest.mark.parametrize("body_fixed", [False, True])
def test_generalized_torque_is_the_virtual_work_of_the_node_rotation(kind, body_fixed):
    rng = np.random.default_rng(3)
    s, asm, body, group = loaded_system(kind, body_fixed)
    q, v = random_state(asm, body, kind, rng, node_rotation=1.3)
    if kind != "exact":       # small nodal rotations: T = I is exact at psi = 0 (the linear theory's point)
        q[body.offset + 7:body.offset + 7 + body.n_modes] = 0.0
    st = asm.eval_state(q, v, np.zeros(q.size), 0.0)
    r, _ = group.residual(st)
    Q = -r[0]
    idx = group.idx[0]
    n_glob = np.array([0.3, -1.2, 0.7])
    o = body.offset
    p = q[o + 3:o + 7]
    h = 1e-6
    for trial in range(4):
        dq = np.zeros(q.size)
        dq[idx] = rng.standard_normal(idx.size)
        dq[o:o + 3] = 0.0
        dp = dq[o + 3:o + 7]
        dq[o + 3:o + 7] = dp - p * (p @ dp)                 # tangent to the unit sphere
        Rp, Rm = node_triad(body, q + h * dq, kind), node_triad(body, q - h * dq, kind)
        dtheta = Rotation.from_matrix(Rp @ Rm.T).as_rotvec() / (2 * h)     # global virtual rotation
        n = rot.A(p) @ n_glob if body_fixed else n_glob
        work = n @ dtheta
        # central difference of the logarithm: error O(h^2) ~ 1e-12 relative, round-off ~ 1e-16 / h = 1e-10
        assert Q @ dq[idx] == pytest.approx(work, rel=1e-7, abs=1e-8), (trial, Q @ dq[idx], work)


@pytest.mark.parametrize("kind, node_rotation", [("modal", 0.0), ("exact", 1.3), ("exact", 3e-3)])
@pytest.mark.parametrize("body_fixed", [False, True])
def test_newton_blocks_match_finite_differences(kind, node_rotation, body_fixed):
    """(ExactBeam at 3e-3 rad: the series branch of T(psi) below 0.01 rad.)"""
    rng = np.random.default_rng(5)
    s, asm, body, group = loaded_system(kind, body_fixed, torque=(3.0, -12.0, 7.0))
    q, v = random_state(asm, body, kind, rng, node_rotation=node_rotation)
    q[body.offset + 3:body.offset + 7] *= 1.1           # off the unit sphere: Q_p is bilinear in p
    a = np.zeros(q.size)
    idx = group.idx[0]
    _, blk = group.residual(asm.eval_state(q, v, a, 0.0), (0.0, 0.0, 1.0))
    h = 1e-6
    fd = np.zeros_like(blk[0])
    for j, k in enumerate(idx):
        dq = np.zeros(q.size)
        dq[k] = h
        rp = group.residual(asm.eval_state(q + dq, v, a, 0.0))[0][0]
        rm = group.residual(asm.eval_state(q - dq, v, a, 0.0))[0][0]
        fd[:, j] = (rp - rm) / (2 * h)
    scale = np.abs(fd).max()
    assert scale > 1.0
    # truncation h^2 |r'''| / 6 ~ 1e-12 of |r| (unit-size coordinates), round-off 1e-16 |r| / h ~ 1e-10 |r|
    np.testing.assert_allclose(blk[0], fd, rtol=0, atol=1e-8 * scale)
    if kind == "exact":      # the rotation-vector block is present (T(psi) depends on psi)
        assert np.abs(fd[7:, 7:]).max() > 1e-2 * scale


def tip_rotation_and_deflection(body, eta):
    """Tip rotation about body y (rad) and deflection along body z (m)."""
    T, R = body.node_shapes(N_EL)
    return (R[0] @ eta)[1], (T[0] @ eta)[2]


@pytest.mark.parametrize("kind", ["modal", "nonlinear"])
def test_cantilever_tip_torque_static_matches_closed_form(kind):
    """Tip moment M about y: constant curvature M / EI, so tip rotation M L / EI and deflection -M L^2 / 2 EI
    (Euler-Bernoulli; the cubic elements hold it exactly, the modal body's tip constraint modes too)."""
    M = 1.0                                       # N m: rotation 9.4e-5 rad, geometric nonlinearity ~ 1e-8
    s = fm.System()
    body = s.add(make_body(kind, cantilever_fe()))
    s.add(fm.Fixed(s.ground, body, name="clamp"))
    s.add(fm.NodalTorque(body, "tip", (0.0, M, 0.0)))
    res = fm.static_equilibrium(s, load_steps=1)
    theta, w = tip_rotation_and_deflection(body, res.modal_coordinates(body)[-1])
    # the Newton tolerance (1e-10 relative) and the O(theta^2) nonlinear terms bound the error at 1e-7
    assert theta == pytest.approx(M * L / EI_Y, rel=1e-6)
    assert w == pytest.approx(-M * L ** 2 / (2 * EI_Y), rel=1e-6)


@pytest.mark.parametrize("kind", ["modal", "nonlinear"])
def test_cantilever_tip_torque_dynamic_settles_on_closed_form(kind):
    """The same tip moment ramped in over 0.05 s (a function of time) on the beam at rest, with heavy damping
    (zeta = 0.7 at the first mode): the run ends at the static closed form; a follower (body_fixed) torque on a
    clamped frame is the same as a global one."""
    M = 1.0
    s = fm.System()
    body = s.add(make_body(kind, cantilever_fe(), damping=0.7))
    s.add(fm.Fixed(s.ground, body, name="clamp"))
    s.add(fm.NodalTorque(body, N_EL, lambda t: (0.0, M * min(t / 0.05, 1.0), 0.0), body_fixed=True))
    res = fm.simulate(s, 0.4, 5e-4)
    theta, w = tip_rotation_and_deflection(body, res.modal_coordinates(body)[-1])
    # first mode 33 Hz, damped at 0.7: the transient decays as e^-(0.7 * 2 pi 33 * 0.35 s) ~ 1e-22 after the
    # ramp; the 1e-5 allows the integrator's residual tolerance on the quasi-static state
    assert theta == pytest.approx(M * L / EI_Y, rel=1e-5)
    assert w == pytest.approx(-M * L ** 2 / (2 * EI_Y), rel=1e-5)


def test_exact_beam_tip_torque_bends_a_circular_arc():
    """A tip moment M on an ExactBeam makes the beam a circular arc of curvature k = M / EI (Euler's elastica
    under an end moment): tip rotation k L, tip at (sin(k L) / k, 0, -(1 - cos(k L)) / k) for bending about y."""
    kL = 1.0
    M = kL * EI_Y / L
    s = fm.System()
    fe = cantilever_fe()
    body = s.add(fm.ExactBeam(fe, fe.dofs("root"), name="beam"))
    s.add(fm.Fixed(s.ground, body, name="clamp"))
    s.add(fm.NodalTorque(body, "tip", (0.0, M, 0.0), body_fixed=True))
    res = fm.static_equilibrium(s, load_steps=4)
    eta = res.modal_coordinates(body)[-1]
    psi = body.node_shapes(N_EL)[1][0] @ eta
    k = M / EI_Y
    tip = fe.mesh.points[N_EL] + body.node_shapes(N_EL)[0][0] @ eta
    # the end rotation is exact for any mesh (constant moment, constant curvature); the tip position carries the
    # discretization of the arc by 8 co-rotational elements (axial strain of each element's 'average' membrane
    # measure along a curved element), measured 1.1e-7 m on L = 1 m: bound 1e-6 m
    np.testing.assert_allclose(psi, [0.0, kL, 0.0], atol=1e-8)
    np.testing.assert_allclose(tip, [np.sin(kL) / k, 0.0, -(1.0 - np.cos(kL)) / k], atol=1e-6)


def test_torque_at_a_clamped_node_acts_on_the_frame():
    """At the clamped root the node's rotational shapes vanish: the generalized torque is that of fm.Torque."""
    rng = np.random.default_rng(2)
    s, asm, body, group = loaded_system("modal", False, node=0)
    q, v = random_state(asm, body, "modal", rng)
    st = asm.eval_state(q, v, np.zeros(q.size), 0.0)
    r = group.residual(st)[0][0]
    o = body.offset
    expected = 2.0 * rot.E(q[o + 3:o + 7]).T @ np.array([0.3, -1.2, 0.7])
    np.testing.assert_allclose(-r[3:7], expected, rtol=1e-12, atol=1e-12)
    assert np.all(r[:3] == 0.0) and np.all(r[7:] == 0.0)


def test_bad_input_is_named():
    fe = cantilever_fe()
    s = fm.System()
    body = s.add(make_body("modal", fe))
    with pytest.raises(ModelError, match=r"nodal torque 'grip'.*node.*99"):
        fm.NodalTorque(body, 99, (0.0, 1.0, 0.0), name="grip")
    with pytest.raises(ModelError, match=r"nodal torque 'grip'.*no node set 'hand'"):
        fm.NodalTorque(body, "hand", (0.0, 1.0, 0.0), name="grip")
    with pytest.raises(ModelError, match=r"nodal torque 'grip'.*flexible body"):
        fm.NodalTorque(s.add(fm.RigidBody(1.0, (1.0, 1.0, 1.0))), 0, (0.0, 1.0, 0.0), name="grip")
    with pytest.raises(ModelError, match=r"nodal torque 'grip'.*vector"):
        fm.NodalTorque(body, 1, (0.0, np.nan, 0.0), name="grip")
    rope = fm.ExactBeam(fe, cable=True, name="rope")
    with pytest.raises(ModelError, match=r"nodal torque 'grip'.*'rope' has no nodal rotation dofs \(a cable\)"):
        fm.NodalTorque(rope, 1, (0.0, 1.0, 0.0), name="grip")
