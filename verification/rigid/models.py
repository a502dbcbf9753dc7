"""Model builders of the rigid suite (also used by tests and examples)."""
from __future__ import annotations

import numpy as np

import flexmb as fm
from flexmb import rotations as rot

G = 9.81


def rod_orientation(direction_angle: float) -> np.ndarray:
    """Rotation taking body x to the in-plane direction (sin a, -cos a, 0) (angle from downward vertical)."""
    return rot.from_axis_angle((0, 0, 1), direction_angle - np.pi / 2)


def double_pendulum(theta1=np.radians(30), theta2=np.radians(10), m1=10.0, l1=0.5, m2=5.0, l2=1.0):
    """Crous 2000, App. D double pendulum with slender rods; angles from the downward vertical."""
    s = fm.System(gravity=(0, -G, 0), name="double pendulum")
    d1 = np.array([np.sin(theta1), -np.cos(theta1), 0.0])
    d2 = np.array([np.sin(theta2), -np.cos(theta2), 0.0])
    b1 = s.add(fm.RigidBody(m1, (1e-4 * m1, m1 * l1 ** 2 / 12, m1 * l1 ** 2 / 12), position=0.5 * l1 * d1,
                            orientation=rod_orientation(theta1), name="link1"))
    b2 = s.add(fm.RigidBody(m2, (1e-4 * m2, m2 * l2 ** 2 / 12, m2 * l2 ** 2 / 12), position=l1 * d1 + 0.5 * l2 * d2,
                            orientation=rod_orientation(theta2), name="link2"))
    s.add(fm.Revolute(s.ground, b1, (0, 0, 0), (0, 0, 1), name="pivot"))
    s.add(fm.Revolute(b1, b2, l1 * d1, (0, 0, 1), name="elbow"))
    return s, b1, b2


def double_pendulum_reference(t, theta1=np.radians(30), theta2=np.radians(10), m1=10.0, l1=0.5, m2=5.0, l2=1.0):
    """Minimal-coordinate solution (Lagrange's equations in theta1, theta2), DOP853 at rtol 1e-12."""
    from scipy.integrate import solve_ivp
    a = (m1 / 3 + m2) * l1 ** 2
    b = 0.5 * m2 * l1 * l2
    e = m2 * l2 ** 2 / 3

    def rhs(_, y):
        t1, t2, w1, w2 = y
        c, s_ = np.cos(t1 - t2), np.sin(t1 - t2)
        M = np.array([[a, b * c], [b * c, e]])
        f = -np.array([b * s_ * w2 ** 2 + (0.5 * m1 + m2) * G * l1 * np.sin(t1),
                       -b * s_ * w1 ** 2 + 0.5 * m2 * G * l2 * np.sin(t2)])
        return [w1, w2, *np.linalg.solve(M, f)]

    sol = solve_ivp(rhs, (t[0], t[-1]), [theta1, theta2, 0.0, 0.0], method="DOP853", rtol=1e-12, atol=1e-12,
                    t_eval=t)
    return sol.y[0], sol.y[1]


def rod_angle(res, body) -> np.ndarray:
    """Angle from the downward vertical of the body x axis (unwrapped)."""
    x = res.orientation(body)[:, :, 0]
    return np.unwrap(np.arctan2(x[:, 0], -x[:, 1]))


def heavy_top(theta0=np.radians(30), spin=200.0, m=1.0, l=0.1, I_axial=2e-3, I_trans_cm=3e-3):
    """Symmetric top on a spherical pivot, started on its steady precession.

    Steady precession (Goldstein, Classical Mechanics, §5.7): with total spin
    w3 about the symmetry axis, tilt theta and the pivot inertia I1 = I_t + m l^2,
    m g l = Omega (I3 w3 - I1 Omega cos theta); the slow root is taken.
    """
    I1 = I_trans_cm + m * l ** 2
    I3 = I_axial
    # I1 cos(th) Omega^2 - I3 w3 Omega + m g l = 0 (slow root)
    A_, B_, C_ = I1 * np.cos(theta0), -I3 * spin, m * G * l
    Omega = (-B_ - np.sqrt(B_ * B_ - 4 * A_ * C_)) / (2 * A_)
    k = np.array([np.sin(theta0), 0.0, np.cos(theta0)])       # symmetry axis in the xz plane
    R = rot.A(rot.from_axis_angle((0, 1, 0), theta0))          # body z -> k
    # omega = Omega e_z + psi_dot k, with w3 = omega . k = spin
    psi_dot = spin - Omega * np.cos(theta0)
    w = Omega * np.array([0, 0, 1.0]) + psi_dot * k
    s = fm.System(gravity=(0, 0, -G), name="heavy top")
    top = s.add(fm.RigidBody(m, (I_trans_cm, I_trans_cm, I_axial), position=l * k, orientation=R,
                             velocity=np.cross(w, l * k), angular_velocity=w, name="top"))
    s.add(fm.Spherical(s.ground, top, (0, 0, 0), name="pivot"))
    return s, top, Omega


def torque_free(I=(1.0, 2.0, 3.0), w0=(0.01, 2.0, 0.0)):
    s = fm.System(name="torque-free body")
    b = s.add(fm.RigidBody(1.0, I, angular_velocity=w0, name="body"))
    return s, b


def euler_reference(t, I=(1.0, 2.0, 3.0), w0=(0.01, 2.0, 0.0)):
    """Body angular velocity from Euler's equations (DOP853, rtol 1e-12)."""
    from scipy.integrate import solve_ivp
    I1, I2, I3 = I

    def rhs(_, w):
        return [(I2 - I3) * w[1] * w[2] / I1, (I3 - I1) * w[2] * w[0] / I2, (I1 - I2) * w[0] * w[1] / I3]

    return solve_ivp(rhs, (t[0], t[-1]), list(w0), method="DOP853", rtol=1e-12, atol=1e-14, t_eval=t).y.T


FOURBAR = dict(a1=0.10, a2=0.35, a3=0.30, a4=0.30)   # crank, coupler, rocker, ground (m)


def fourbar_angles(phi, a1, a2, a3, a4):
    """Closed-form position analysis of a four-bar (Freudenstein): coupler and rocker angles.

    Ground pivots O2 = (0,0), O4 = (a4, 0); crank angle phi; open assembly branch.
    """
    A = np.array([a1 * np.cos(phi), a1 * np.sin(phi)])
    d = np.array([a4, 0.0])[:, None] - A
    L = np.linalg.norm(d, axis=0)
    base = np.arctan2(d[1], d[0])
    # angle at A between AO4 and AB from the law of cosines
    cos_alpha = (a2 ** 2 + L ** 2 - a3 ** 2) / (2 * a2 * L)
    alpha = np.arccos(np.clip(cos_alpha, -1, 1))
    th2 = base + alpha
    B = A + a2 * np.array([np.cos(th2), np.sin(th2)])
    th3 = np.arctan2(B[1], B[0] - a4)
    return th2, th3


def fourbar(omega=2 * np.pi, masses=(1.0, 2.0, 1.5), a=FOURBAR):
    """Planar four-bar in the xy plane, crank driven at constant speed (rad/s), gravity -y.

    With four revolute joints the model has 3 redundant equations (the classic
    planar-loop redundancy: Grubler gives -2 DOF in space, the mechanism has 1).
    """
    a1, a2, a3, a4 = a["a1"], a["a2"], a["a3"], a["a4"]
    th2, th3 = fourbar_angles(np.array([0.0]), a1, a2, a3, a4)
    th2, th3 = float(th2[0]), float(th3[0])
    A = np.array([a1, 0.0, 0.0])
    B = A + a2 * np.array([np.cos(th2), np.sin(th2), 0.0])
    O4 = np.array([a4, 0.0, 0.0])
    s = fm.System(gravity=(0, -G, 0), name="four-bar")

    def link(m, L, P, ang, name):
        R = rot.from_axis_angle((0, 0, 1), ang)
        c = P + 0.5 * L * np.array([np.cos(ang), np.sin(ang), 0.0])
        return s.add(fm.RigidBody(m, (1e-4 * m * L ** 2, m * L ** 2 / 12, m * L ** 2 / 12), position=c,
                                  orientation=R, name=name))

    crank = link(masses[0], a1, np.zeros(3), 0.0, "crank")
    coupler = link(masses[1], a2, A, th2, "coupler")
    rocker = link(masses[2], a3, O4, th3, "rocker")
    z = (0, 0, 1)
    j1 = s.add(fm.Revolute(s.ground, crank, (0, 0, 0), z, name="O2"))
    s.add(fm.Revolute(crank, coupler, A, z, name="A"))
    s.add(fm.Revolute(coupler, rocker, B, z, name="B"))
    s.add(fm.Revolute(rocker, s.ground, O4, z, name="O4"))
    s.add(fm.Driver(j1, angle=fm.TimeFunction.linear(omega), name="motor"))
    return s, crank, coupler, rocker


def bricard(gravity=(0, 0, -G)):
    """Orthogonal Bricard linkage: six unit links along a skew hexagon of cube edges,
    consecutive revolute axes perpendicular; one link is the ground.

    Grubler: 5 moving bodies x 6 - 6 revolutes x 5 = 0 DOF, yet the linkage moves
    with 1 DOF, so exactly one constraint equation is redundant.
    """
    P = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [1, 1, 1], [0, 1, 1], [0, 0, 1]], dtype=float)
    axes = np.array([[0, 1, 0], [0, 0, 1], [1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 0, 0]], dtype=float)
    s = fm.System(gravity=gravity, name="Bricard linkage")
    bodies = [s.ground]
    for i in range(5):
        d = P[i + 1] - P[i]
        # body x axis along the link
        x = d / np.linalg.norm(d)
        y = np.cross(axes[i], x)
        if np.linalg.norm(y) < 1e-9:
            y = np.cross([0.3, 0.5, 0.7], x)
        y /= np.linalg.norm(y)
        R = np.column_stack([x, y, np.cross(x, y)])
        bodies.append(s.add(fm.RigidBody(1.0, (1e-4, 1 / 12, 1 / 12), position=P[i] + 0.5 * d, orientation=R,
                                         name=f"bar{i + 1}")))
    bodies.append(s.ground)
    for i in range(6):
        s.add(fm.Revolute(bodies[i], bodies[i + 1], P[i] if i < 6 else P[0], axes[i], name=f"R{i}"))
    return s, bodies[1:6]
