"""The robotic manipulator of He 1992, §9.5 (Table 9-1) as a rigid-link flexmb model, its prescribed joint
motion, and an independent minimal-coordinate inverse dynamics (Lagrange's equations written out by hand).

Geometry (our reading of Fig. 9-20, which the OCR lost; gravity is negligible in the thesis, so "up" is only
a name): the inertial X axis is the base's rotation axis ("vertical"). Body 1, the base (L1 = 0.3 m), turns
about X at the origin (joint 1). Links 2 (L2 = 4 m) and 3 (L3 = 5 m) and the payload, body 4 (L4 = 0.5 m,
centre of mass at L4/2 from its joint), start stretched out along +Y from the shoulder at (L1, 0, 0); pin
joints 2, 3, 4 at the shoulder, elbow and wrist turn about the links' local z axis (+Z at the start). Each
link's local x lies along the link, local z along the pin axis, local y = z x x. Masses and principal
inertias (kg, kg m^2) are those of Table 9-1.

Flexible links (``flexible_manipulator``): links 2 and 3 as modal bodies of aluminium tubes
(``flexible_link``: clamped-root modes, two per bending plane, first bending 5.66 Hz for link 2 and 3.62 Hz
for link 3 as free cantilevers; FE masses 30.525 and 38.156 kg, Table 9-1 prints 30.52 and 38.16), the
joints at their end nodes, base and payload rigid.

Joint motion (He 1992, eqs. 9.21 to 9.26): every joint follows the spin-up law used as an angle,
``theta(t) = (theta_f/T_s) [t - (T_s/2pi) sin(2 pi t/T_s)]`` for t <= T_s, then theta_f, with T_s = 15 s
and the run to 20 s. This is ``fm.TimeFunction.spin_up(theta_f, T_s, angle=False)``: it reaches theta_f at
T_s with zero rate and zero acceleration. The thesis's final angles are inconsistent: the ramps 9.23 and
9.25 (prefactors pi/T_s and -pi/T_s) end at pi and -pi at T_s, while the holds 9.24 and 9.26 say pi/2. An
angle driver must be continuous (a jump is an infinite rate), so one of each pair is misprinted; we keep
the hold values, which the text states as the final configuration (and which agree with 9.21/9.22 for
joints 2 and 3, where ramp and hold are consistent): theta_2 = theta_3 = pi/4, theta_4 = pi/2, and for the
base theta_1 = pi/2 (the sign of the hold; the ramp's minus sign only mirrors the manoeuvre through the
arm's plane, which flips the sign of the base torque and leaves the other joint torques unchanged).

Independent reference (``lagrange_torques``): minimal coordinates q = (psi, phi_2, phi_3, phi_4), psi the
base angle and phi_k the absolute in-plane angle of body k (phi_2 = theta_2, phi_3 = theta_2 + theta_3,
phi_4 = phi_3 + theta_4). In the arm's plane (coordinates x along X, y along the rotated Y) the centre of
mass of body k is at ``x_k = L1 - sum_{j<k} a_j sin phi_j - c_k sin phi_k``, ``y_k = sum_{j<k} a_j cos phi_j
+ c_k cos phi_k`` (a_j joint-to-joint lengths, c_k centre-of-mass offsets), its angular velocity in body
axes is ``(-psi' sin phi_k, -psi' cos phi_k, phi_k')``, and the plane turns about X, adding the speed
y_k psi' normal to it. The kinetic energy (e.g. Greenwood, Principles of Dynamics, §6; Spong, Hutchinson
& Vidyasagar, Robot Modeling and Control, §7.4) is therefore

    T = 1/2 J(phi) psi'^2 + 1/2 sum_ij D_ij(phi) phi_i' phi_j',
    J = I_1xx + sum_k [m_k y_k^2 + I_kxx sin^2 phi_k + I_kyy cos^2 phi_k],
    D_ii = I_kzz + m_k c_k^2 + a_k^2 sum_{l>k} m_l,  D_ij = h_ij cos(phi_i - phi_j),
    h_ij = a_i (m_j c_j + a_j sum_{l>j} m_l)  (i < j, h symmetric),

with no psi'-phi' cross terms (the in-plane and out-of-plane velocities are orthogonal). Lagrange's
equations give the generalized forces

    Q_psi = J psi'' + (sum_i dJ/dphi_i phi_i') psi',
    Q_i = sum_j D_ij phi_j'' + sum_j h_ij sin(phi_i - phi_j) phi_j'^2 - 1/2 dJ/dphi_i psi'^2,
    dJ/dphi_i = -2 sum_{k>=i} m_k y_k l_ik sin phi_i + (I_ixx - I_iyy) sin 2 phi_i,

(l_ik = a_i for k > i, c_i for k = i), and the joint torques from the virtual work sum tau_i dtheta_i =
sum Q_i dphi_i: tau_1 = Q_psi, tau_i = sum_{k>=i} Q_k for the pin joints (no gravity term, G = 0).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import flexmb as fm
from flexmb.fem.materials import Material
from flexmb.fem.mesh import FEMesh
from flexmb.fem.model import FEModel
from flexmb.fem.sections import BeamSection
from flexmb.reduction import craig_bampton

T_S = 15.0                                   # time constant of the manoeuvre (s), He 1992, §9.5
T_END = 20.0                                 # simulated time (s), He 1992, §9.5
L1, L2, L3, L4 = 0.3, 4.0, 5.0, 0.5          # lengths of bodies 1 to 4 (m), Table 9-1
MASS = (50.0, 30.52, 38.16, 200.0)           # kg, Table 9-1
INERTIA = ((0.00469, 0.0195, 0.0195),        # principal inertias (kg m^2) about local x, y, z, Table 9-1
           (0.06250, 40.7300, 40.7300),
           (0.07820, 79.5300, 79.5300),
           (0.00782, 0.0834, 0.0834))
FINAL_PLANAR = (0.0, np.pi / 4, np.pi / 4, np.pi / 2)     # final theta_1..theta_4 (rad), settled above
FINAL_SPATIAL = (np.pi / 2, np.pi / 4, np.pi / 4, np.pi / 2)
JOINTS = ("base", "shoulder", "elbow", "wrist")
ALUMINIUM = Material(E=6.895e10, nu=0.3, rho=2699.0)     # links 2 and 3, Table 9-1 (nu: our choice)
TUBE = BeamSection.tube(0.10, 0.08)                       # r_o = 0.05 m, r_i = 0.04 m, Table 9-1
N_ELEMENTS = 8                                            # beam elements per flexible link
N_MODES = 4                                               # two in-plane and two out-of-plane bending modes

_A = np.array([L2, L3, 0.0])                 # joint-to-joint lengths a_k of bodies 2, 3, 4 (m)
_C = np.array([L2 / 2, L3 / 2, L4 / 2])      # centre-of-mass offsets c_k from the inboard joint (m)
_M = np.array(MASS[1:])
_I = np.array(INERTIA[1:])


def joint_laws(final: tuple[float, ...]) -> list[fm.TimeFunction]:
    """Spin-up angle law (rad) of each joint reaching ``final[i]`` (rad) at T_S (He 1992, eqs. 9.21-9.26)."""
    return [fm.TimeFunction.spin_up(f, T_S, angle=False) for f in final]


@dataclass
class Manipulator:
    """A flexmb model: system, bodies (base, link2, link3, payload) and drivers (joints 1 to 4)."""

    system: fm.System
    bodies: list
    drivers: list


LINK_AXES = np.column_stack([[0.0, 1.0, 0.0], [-1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])  # link x along +Y, z along +Z
JOINT_POINTS = [np.array([L1, y, 0.0]) for y in (0.0, L2, L2 + L3)]              # shoulder, elbow, wrist (m)


def rigid_manipulator(final: tuple[float, ...]) -> Manipulator:
    """Rigid-link manipulator with every joint driven by the spin-up law to the angles ``final`` (rad)."""
    s = fm.System(name="manipulator (He 1992, §9.5), rigid links")
    links = [s.add(fm.RigidBody(MASS[k + 1], INERTIA[k + 1], position=JOINT_POINTS[k] + (0.0, length / 2, 0.0),
                                orientation=LINK_AXES, name=f"link{k + 2}"))
             for k, length in enumerate((L2, L3))]
    return _drive(s, [(links[0], links[0]), (links[1], links[1])], final)


def flexible_manipulator(final: tuple[float, ...], exact: bool = False, n_modes: int = N_MODES,
                         n_elements: int = N_ELEMENTS, tip_interface: bool = True) -> Manipulator:
    """Manipulator with links 2 and 3 as modal flexible bodies (``flexible_link``: ``n_modes`` modes, with or
    without the tip interface's constraint modes), or with ``exact`` as geometrically exact beams
    (``exact_link``), ``n_elements`` elements each, driven like the rigid one."""
    s = fm.System(name=f"manipulator (He 1992, §9.5), {'exact-beam' if exact else 'modal'} flexible links")
    if exact:
        links = [s.add(exact_link(length, JOINT_POINTS[k], f"link{k + 2}", n_elements))
                 for k, length in enumerate((L2, L3))]
    else:
        links = [s.add(flexible_link(length, JOINT_POINTS[k], f"link{k + 2}", n_modes, n_elements, tip_interface))
                 for k, length in enumerate((L2, L3))]
    return _drive(s, [(link.node(0), link.node(n_elements)) for link in links], final)


def _drive(s: fm.System, link_sites: list, final: tuple[float, ...]) -> Manipulator:
    """Add the base and the payload to ``s``, the four revolute joints between base, links (their
    (inboard, outboard) sites ``link_sites``) and payload, and a spin-up driver on each joint."""
    base = s.add(fm.RigidBody(MASS[0], INERTIA[0], position=(L1 / 2, 0.0, 0.0), name="base"))
    payload = s.add(fm.RigidBody(MASS[3], INERTIA[3], position=JOINT_POINTS[2] + (0.0, L4 / 2, 0.0),
                                 orientation=LINK_AXES, name="payload"))
    inboard = [base, link_sites[0][1], link_sites[1][1]]
    outboard = [link_sites[0][0], link_sites[1][0], payload]
    pins = [s.add(fm.Revolute(s.ground, base, (0.0, 0.0, 0.0), (1.0, 0.0, 0.0), name="base joint")),
            *(s.add(fm.Revolute(a, b, p, (0.0, 0.0, 1.0), name=f"{joint} joint"))
              for a, b, p, joint in zip(inboard, outboard, JOINT_POINTS, JOINTS[1:]))]
    drivers = [s.add(fm.Driver(pin, angle=law, name=f"{name} drive"))
               for pin, law, name in zip(pins, joint_laws(final), JOINTS)]
    bodies = [base] + [getattr(site, "body", site) for site, _ in link_sites] + [payload]
    return Manipulator(s, bodies, drivers)


def flexible_link(length: float, root: np.ndarray, name: str, n_modes: int = N_MODES,
                  n_elements: int = N_ELEMENTS, tip_interface: bool = True) -> fm.FlexibleBody:
    """Aluminium tube link (Table 9-1: E = 6.895e10 Pa, rho = 2699 kg/m^3, r_o = 0.05 m, r_i = 0.04 m) of
    ``length`` (m) from ``root`` along +Y: ``n_elements`` Euler-Bernoulli elements reduced by Craig-Bampton with
    the root clamped to the body frame (the driver turns the root section as a motor shaft would) and, with
    ``tip_interface``, the tip node as an interface (6 constraint modes: the static shapes of a tip force and
    moment) plus ``n_modes`` fixed-interface modes; without it, ``n_modes`` modes of the free-tip cantilever only
    (the thesis takes cantilever and simply supported assumed modes). Geometric stiffening on. The tip interface
    matters: the driven elbow and wrist pass a moment into the link's tip, whose static shape the free-tip modes
    converge to slowly (the arm's first frequency with joints locked is 5 % high with 4 such modes, 1.8 % with
    12; with the tip interface it equals the exact beam's, 0.29884 Hz, to 5 digits: exact-beam-reference-planar).
    Mass 30.52 kg (4 m) and 38.16 kg (5 m), as Table 9-1."""
    fe = _link_fe(length, n_elements)
    interfaces = {"tip": [n_elements]} if tip_interface else None
    modes = craig_bampton(fe, interfaces, n_modes=n_modes, fixed=fe.dofs(0, ["ux", "uy", "uz", "rx", "ry", "rz"]))
    return fm.FlexibleBody(modes, position=root, orientation=LINK_AXES, stiffening=True, name=name)


def _link_fe(length: float, n_elements: int) -> FEModel:
    """FE model of an aluminium tube link of ``length`` (m) along local x, ``n_elements`` Euler-Bernoulli elements."""
    x = np.linspace(0.0, length, n_elements + 1)
    elements = np.column_stack([np.arange(n_elements), np.arange(1, n_elements + 1)])
    return FEModel(FEMesh(np.column_stack([x, 0 * x, 0 * x]), {"line": elements}), ALUMINIUM, sections=TUBE,
                   beam="euler-bernoulli")


def exact_link(length: float, root: np.ndarray, name: str, n_elements: int = N_ELEMENTS) -> fm.ExactBeam:
    """The link of ``flexible_link`` as a geometrically exact beam (fm.ExactBeam, every nodal dof a coordinate,
    co-rotational elements: no modal truncation and no first-order stiffening theory), root node held to the
    body frame, consistent mass; ``n_elements`` elements, node ``n_elements`` is the tip."""
    fe = _link_fe(length, n_elements)
    return fm.ExactBeam(fe, fe.dofs(0, ["ux", "uy", "uz", "rx", "ry", "rz"]), position=root, orientation=LINK_AXES,
                        name=name)


def prescribed_motion(final: tuple[float, ...], t: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Joint angles theta_1..theta_4 (rad), rates (rad/s) and accelerations (rad/s^2), each (n, 4), of the
    thesis's law written out (independent of ``fm.TimeFunction``): with w = 2 pi/T_s and t <= T_s,
    theta = theta_f/T_s (t - sin(w t)/w), theta' = theta_f/T_s (1 - cos w t), theta'' = theta_f/T_s w sin w t;
    after T_s theta = theta_f and the rates vanish."""
    w = 2.0 * np.pi / T_S
    tc = np.minimum(np.asarray(t, dtype=float), T_S)[:, None]
    scale = np.asarray(final)[None, :] / T_S
    ramp = tc < T_S
    return (scale * (tc - np.sin(w * tc) / w), scale * (1.0 - np.cos(w * tc)) * ramp,
            scale * w * np.sin(w * tc) * ramp)


def lagrange_torques(theta: np.ndarray, rate: np.ndarray, accel: np.ndarray) -> np.ndarray:
    """Joint torques (N m), (n, 4), of the rigid manipulator on the joint motion theta, rate, accel (each
    (n, 4), rad, rad/s, rad/s^2) from the minimal-coordinate Lagrange equations of the module docstring."""
    return np.array([_torques_at(*row) for row in zip(theta, rate, accel)])


def _torques_at(theta, rate, accel) -> np.ndarray:
    """Joint torques (N m) at one instant: tau_1 = Q_psi and tau_i = sum_{k>=i} Q_k (module docstring)."""
    dpsi, ddpsi = rate[0], accel[0]
    phi, dphi, ddphi = np.cumsum(theta[1:]), np.cumsum(rate[1:]), np.cumsum(accel[1:])
    heavier = np.array([_M[k + 1:].sum() for k in range(3)])        # sum_{l>k} m_l
    b = _M * _C + _A * heavier                                      # m_j c_j + a_j sum_{l>j} m_l
    h = np.triu(np.outer(_A, b), 1)
    h = h + h.T                                                     # h_ij, symmetric, zero diagonal
    dif = phi[:, None] - phi[None, :]
    D = h * np.cos(dif) + np.diag(_I[:, 2] + _M * _C ** 2 + _A ** 2 * heavier)
    y = np.array([np.sum(_A[:k] * np.cos(phi[:k])) + _C[k] * np.cos(phi[k]) for k in range(3)])
    lever = np.where(np.arange(3)[:, None] < np.arange(3)[None, :], _A[:, None], 0.0) + np.diag(_C)  # l_ik
    dJ = -2.0 * np.sin(phi) * (lever * (_M * y)[None, :]).sum(axis=1) + (_I[:, 0] - _I[:, 1]) * np.sin(2 * phi)
    J = INERTIA[0][0] + np.sum(_M * y ** 2 + _I[:, 0] * np.sin(phi) ** 2 + _I[:, 1] * np.cos(phi) ** 2)
    q_psi = J * ddpsi + (dJ @ dphi) * dpsi
    q_phi = D @ ddphi + (h * np.sin(dif)) @ dphi ** 2 - 0.5 * dJ * dpsi ** 2
    return np.concatenate([[q_psi], np.cumsum(q_phi[::-1])[::-1]])


def driver_torques(model: Manipulator, res) -> np.ndarray:
    """Joint torques (N m), (n, 4), from flexmb: each driver's reaction torque on its second body
    (``Result.reaction``) projected on the joint's current axis, the base's X axis and for the pins the
    base-rotated Z axis (0, -sin psi, cos psi), psi the base angle from ``Result.joint_coordinates``."""
    psi = res.joint_coordinates(model.drivers[0])
    pin_axis = np.column_stack([np.zeros_like(psi), -np.sin(psi), np.cos(psi)])
    axes = [np.tile([1.0, 0.0, 0.0], (psi.size, 1))] + [pin_axis] * 3
    _, torque = res.reactions([model.system.joints.index(d) for d in model.drivers])     # all rows, four drivers
    return np.column_stack([np.sum(torque[:, k] * ax, axis=1) for k, ax in enumerate(axes)])


def chord_link(length: float, root: np.ndarray, name: str, n_modes: int = N_MODES,
               n_elements: int = N_ELEMENTS) -> fm.FlexibleBody:
    """The link of ``flexible_link`` on the thesis's modal basis (He 1992, §9.5, eqs. 9.19 and 9.20): in the arm's
    plane (local x-y) the modes of a simply supported beam, out of it (x-z) those of a cantilever. The root node
    is held in ux, uy, uz, rx, ry (rz free: a pin) and the tip node in uy, so the frame's x axis is the chord
    through the link's two joints and a joint angle between such frames is a chord angle; ``n_modes``
    fixed-interface normal modes (the lowest four are two per plane: 5.66, 15.89, 35.47, 63.56 Hz for link 2,
    cantilever and simply supported alternating). Geometric stiffening on."""
    fe = _link_fe(length, n_elements)
    held = np.concatenate([fe.dofs(0, ["ux", "uy", "uz", "rx", "ry"]), fe.dofs(n_elements, ["uy"])])
    modes = craig_bampton(fe, None, n_modes=n_modes, fixed=held)
    return fm.FlexibleBody(modes, position=root, orientation=LINK_AXES, stiffening=True, name=name)


def open_loop_manipulator(t_table: np.ndarray, torque_table: np.ndarray, flexible: bool,
                          basis: str = "tangent", torques_at: str = "nodes") -> Manipulator:
    """The manoeuvre open loop. Planar, ``torque_table`` (N m) (n, 3) for shoulder, elbow, wrist: the base driver holds
    joint 1 at 0 (seed: "joint 1 is fixed"); 3-D, (n, 4) with the base first: the base pin is free too, loaded by
    tau_1 about X (its reaction on the ground). Joints 2 to 4 are free pins loaded by their joint torques at the
    times ``t_table`` (s), interpolated by cubic splines (``fm.TimeFunction.table``): +tau on the outboard body
    about its pin axis (local z), -tau on the inboard one (``_joint_torque``). Rigid or flexible links 2 and 3.
    Flexible, ``basis="tangent"``: ``flexible_link`` (clamped root: the frame is the root tangent), the pins at the
    links' end nodes, so the joint angles are root-tangent angles; ``basis="chord"``: ``chord_link`` (the thesis's
    simply supported in-plane modes: the frame is the chord), each pin from the inboard link's tip node (which
    carries the outboard link through its out-of-plane deflection) to the outboard link's frame: the pin's
    coordinate is the outboard chord's angle to the inboard tip tangent. In both the joint torques act where a motor
    and its reaction act on a link: ``fm.NodalTorque`` at its root node (+tau; on the clamped root of the tangent
    basis the same as a torque on the frame) and at the inboard link's tip node (-tau), about the frame's z (in the
    plane the node's own z, which bending about z leaves unchanged; out of the plane, in 3-D, it differs from the
    tip node's z, the pin axis, by the node's bending rotation: a first-order approximation, 1 % of the 3-D open
    loop's payload error against a torque about the node's deformed z); ``torques_at="frames"`` puts both on the
    links' frames instead (``fm.Torque``). ``drivers`` holds the base driver (planar) or the base pin (3-D) and the
    three pins."""
    if basis not in ("tangent", "chord") or torques_at not in ("nodes", "frames"):
        raise ValueError(f"basis must be 'tangent' or 'chord' and torques_at 'nodes' or 'frames', got {basis!r}, "
                         f"{torques_at!r}")
    label = f"flexible links ({basis} frames)" if flexible else "rigid links"
    s = fm.System(name=f"manipulator (He 1992, §9.5), {label}, open loop")
    if flexible:
        make = flexible_link if basis == "tangent" else chord_link
        links = [s.add(make(length, JOINT_POINTS[k], f"link{k + 2}")) for k, length in enumerate((L2, L3))]
        nodes = [(link.node(0), link.node(N_ELEMENTS)) for link in links]
        frames = [(link, link) for link in links]
        sites = nodes if basis == "tangent" else [(link, link.node(N_ELEMENTS)) for link in links]
        ends = nodes if torques_at == "nodes" else frames
    else:
        links = [s.add(fm.RigidBody(MASS[k + 1], INERTIA[k + 1], position=JOINT_POINTS[k] + (0.0, length / 2, 0.0),
                                    orientation=LINK_AXES, name=f"link{k + 2}"))
                 for k, length in enumerate((L2, L3))]
        sites = ends = [(link, link) for link in links]
    base = s.add(fm.RigidBody(MASS[0], INERTIA[0], position=(L1 / 2, 0.0, 0.0), name="base"))
    payload = s.add(fm.RigidBody(MASS[3], INERTIA[3], position=JOINT_POINTS[2] + (0.0, L4 / 2, 0.0),
                                 orientation=LINK_AXES, name="payload"))
    base_pin = s.add(fm.Revolute(s.ground, base, (0.0, 0.0, 0.0), (1.0, 0.0, 0.0), name="base joint"))
    pins = [s.add(fm.Revolute(a, b, p, (0.0, 0.0, 1.0), name=f"{joint} joint"))
            for a, b, p, joint in zip([base, sites[0][1], sites[1][1]], [sites[0][0], sites[1][0], payload],
                                      JOINT_POINTS, JOINTS[1:])]
    spatial = torque_table.shape[1] == 4
    if spatial:
        law = fm.TimeFunction.table(t_table, torque_table[:, 0])
        s.add(fm.Torque(base, lambda t, f=law: (f(t), 0.0, 0.0), body_fixed=True, name="base torque"))
        drivers = [base_pin] + pins
    else:
        drivers = [s.add(fm.Driver(base_pin, angle=0.0, name="base drive"))] + pins
    inboard, outboard = [base, ends[0][1], ends[1][1]], [ends[0][0], ends[1][0], payload]
    for k, (a, b) in enumerate(zip(inboard, outboard)):
        law = fm.TimeFunction.table(t_table, torque_table[:, k + int(spatial)])
        s.add(_joint_torque(b, law, 1.0, f"{JOINTS[k + 1]} torque"))
        s.add(_joint_torque(a, law, -1.0, f"{JOINTS[k + 1]} reaction torque"))
    return Manipulator(s, [base, *links, payload], drivers)


def _joint_torque(site, law: fm.TimeFunction, sign: float, name: str):
    """``sign law(t)`` (N m) about the local z axis: ``fm.Torque`` on a body (its frame), ``fm.NodalTorque``
    (frame axes) at a flexible link's node site."""
    def vector(t: float, f=law, sgn=sign) -> tuple[float, float, float]:
        return (0.0, 0.0, sgn * f(t))
    if isinstance(site, fm.Body):
        return fm.Torque(site, vector, body_fixed=True, name=name)
    return fm.NodalTorque(site.body, site.node, vector, body_fixed=True, name=name)


def node_rotation_z(res, body: fm.FlexibleBody, node: int) -> np.ndarray:
    """Rotation (rad), (n,), of mesh ``node`` of ``body`` about the frame's z relative to the frame, from the
    saved modal coordinates and the node's rotational mode shapes."""
    return res.modal_coordinates(body) @ body.node_shapes(node)[1][0][2]


def payload_path(theta: np.ndarray) -> np.ndarray:
    """Global position (m), (n, 3), of the payload's centre of mass of the rigid arm at the joint angles
    ``theta`` (rad, (n, 4)): in the arm's plane ``x = L1 - L2 sin phi_2 - L3 sin phi_3 - (L4/2) sin phi_4``,
    ``y = L2 cos phi_2 + L3 cos phi_3 + (L4/2) cos phi_4`` (module docstring), the plane turned about X by
    the base angle: ``(x, y cos psi, y sin psi)``."""
    theta = np.atleast_2d(theta)
    phi = np.cumsum(theta[:, 1:], axis=1)
    x = L1 - (_A[None, :2] * np.sin(phi[:, :2])).sum(axis=1) - _C[2] * np.sin(phi[:, 2])
    y = (_A[None, :2] * np.cos(phi[:, :2])).sum(axis=1) + _C[2] * np.cos(phi[:, 2])
    return np.column_stack([x, y * np.cos(theta[:, 0]), y * np.sin(theta[:, 0])])
