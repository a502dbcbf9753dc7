"""Models of suite ``linearization``: Schwab & Meijaard's swivel-wheel shimmy (Schwab & Meijaard 2002), an upright rolling disc."""
from __future__ import annotations

import numpy as np

import flexmb as fm
from flexmb.bodies.base import GROUND
from flexmb.joints.base import Joint
from flexmb.timefunctions import TimeFunction


class StrutDriver(Joint):
    """The swivel point of the arm moves along global x as ``x = v t`` (one ``dot2`` row, Haug 1989 §9.2:
    ``e_x . (r_S(t) - P) = v t``); its lateral (y) motion stays free."""

    kind = "strut driver"

    def __init__(self, body, point, speed: float, name: str = "strut"):
        super().__init__(GROUND, body, name)
        self.point = np.asarray(point, dtype=float)
        self.speed = float(speed)

    def primitives(self):
        v = self.speed
        f = TimeFunction(lambda t: v * t, lambda t: v, lambda t: 0.0, name="v t")
        return [self._dot2(np.array([1.0, 0.0, 0.0]), self.point, "x = v t", driver=f)]


def cubic(a: float, v: float = 1.0, m: float = 1.0, l: float = 1.0, k: float = 1.0, I: float = 0.21) -> np.ndarray:
    """Roots of Schwab & Meijaard's characteristic equation (Schwab & Meijaard 2002) ``L^3 + (1 + mu) w L^2 + wn^2 L + w wn^2
    = 0``, ``mu = (a b - r^2)/(a^2 + r^2)``, ``b = l - a``, ``w = v/l``, ``wn^2 = k l^2/(m (a^2 + r^2))``,
    ``r^2 = I/m`` (1/s)."""
    r2 = I / m
    mu = (a * (l - a) - r2) / (a * a + r2)
    w, wn2 = v / l, k * l * l / (m * (a * a + r2))
    return np.roots([1.0, (1.0 + mu) * w, wn2, w * wn2])


def shimmy(a: float, v: float = 1.0, m: float = 1.0, l: float = 1.0, k: float = 1.0, I: float = 0.21,
           psi0: float = 0.0):
    """Swivel-wheel shimmy: a trailing arm (mass m, moment of inertia I about its centre of mass, which lies a
    from the wheel contact and l - a behind the swivel) whose swivel point S moves at constant speed v along x
    (StrutDriver) with a lateral spring k (a Bushing to the ground, stiffness only along y); the wheel is a knife
    edge at the contact point (no lateral slip); planar motion in the plane z = 0. ``psi0``: initial swivel
    angle (rad). Returns (system, arm)."""
    s = fm.System(name=f"shimmy a/l={a / l:.2f}")
    b = l - a
    c, sn = np.cos(psi0), np.sin(psi0)
    u = np.array([-c, -sn, 0.0])                          # from the swivel backwards along the arm
    arm = s.add(fm.RigidBody(m, np.diag([I, I, I]), position=b * u, name="arm",
                             orientation=fm.rotations.from_axis_angle([0, 0, 1], psi0) if psi0 else None,
                             velocity=(v, 0.0, 0.0)))
    S = np.zeros(3)
    s.add(fm.Planar(s.ground, arm, point=b * u, normal=(0, 0, 1), name="plane"))
    s.add(StrutDriver(arm, S, v))
    s.add(fm.Bushing(s.ground, arm, point=S, stiffness=(0.0, k, 0.0, 0.0, 0.0, 0.0), name="strut spring"))
    s.add(fm.KnifeEdge(arm, point=l * u, axis=(-sn, c, 0.0), name="wheel"))
    return s, arm


def upright_disc(v: float, R: float = 0.1, m: float = 1.0, g: float = 9.81, lean_rate: float = 0.01,
                 inertia: tuple[float, float] = (0.5, 0.25)):
    """A disc (radius R, mass m, C = inertia[0] m R^2 about its axis, A = inertia[1] m R^2 about a diameter;
    thin disc by default) upright on the plane y = 0 (gravity -y), axis along x, rolling along -z at speed v
    (m/s), with an initial lean rate ``lean_rate`` (rad/s, about z). Returns (system, disc)."""
    s = fm.System(gravity=(0.0, -g, 0.0), name=f"rolling disc v={v:.3g}")
    c, a = inertia
    d = s.add(fm.RigidBody(m, np.array([c, a, a]) * m * R * R, position=(0.0, R, 0.0), velocity=(0.0, 0.0, -v),
                           angular_velocity=(-v / R, 0.0, lean_rate), name="disc"))
    s.add(fm.RollingDisc(d, R, axis=(1.0, 0.0, 0.0)))
    return s, d


def disc_lean_eigenvalue(v: float, R: float = 0.1, m: float = 1.0, g: float = 9.81,
                         inertia: tuple[float, float] = (0.5, 0.25)) -> complex:
    """Lean eigenvalue (1/s, Im >= 0 or Re >= 0) of a disc rolling upright at v (m/s): ``(A + m R^2) theta'' +
    ((C/A)(C + m R^2) w^2 - m g R) theta = 0``, ``w = v/R`` (Neimark & Fufaev 1972, ch. III; docs/theory.md
    §9.1)."""
    C, A = inertia[0] * m * R * R, inertia[1] * m * R * R
    w = v / R
    return np.sqrt(complex(-((C / A) * (C + m * R * R) * w * w - m * g * R) / (A + m * R * R)))


def free_body(inertia, axis: int, rate: float, m: float = 1.0):
    """A torque-free rigid body (principal inertias ``inertia``, kg m^2) spinning at ``rate`` (rad/s) about its
    principal axis ``axis`` (0, 1, 2), centre of mass at rest at the origin. Returns (system, body)."""
    s = fm.System(name=f"free body spinning about axis {axis}")
    w = np.zeros(3)
    w[axis] = rate
    return s, s.add(fm.RigidBody(m, inertia, angular_velocity=w, name="body"))


def euler_eigenvalue(inertia, axis: int, rate: float) -> complex:
    """Eigenvalue (1/s, Re >= 0, Im >= 0) of Euler's equations linearized about the spin ``rate`` about
    principal ``axis``: ``lambda^2 = rate^2 (I_i - I_j)(I_k - I_i)/(I_j I_k)`` (Goldstein, Classical Mechanics,
    §5.6; Landau & Lifshitz, Mechanics, §37): real (unstable) for the intermediate axis."""
    i = axis
    j, k = [n for n in range(3) if n != i]
    I = np.asarray(inertia, dtype=float)
    return np.sqrt(complex(rate * rate * (I[i] - I[j]) * (I[k] - I[i]) / (I[j] * I[k])))


def sleeping_top(rate: float, A: float = 0.05, C: float = 0.02, m: float = 1.0, l: float = 0.1, g: float = 9.81):
    """A symmetric top (mass m, C about its axis, A about a transverse axis through the pivot, centre of mass l
    above it) on a spherical joint at the origin, upright along +z (gravity -z), spinning at ``rate`` (rad/s).
    Returns (system, top)."""
    s = fm.System(gravity=(0.0, 0.0, -g), name=f"sleeping top {rate:g} rad/s")
    Ac = A - m * l * l
    top = s.add(fm.RigidBody(m, (Ac, Ac, C), position=(0.0, 0.0, l), angular_velocity=(0.0, 0.0, rate), name="top"))
    s.add(fm.Spherical(s.ground, top, (0.0, 0.0, 0.0), name="pivot"))
    return s, top


def top_eigenvalues(rate: float, A: float = 0.05, C: float = 0.02, m: float = 1.0, l: float = 0.1,
                    g: float = 9.81) -> np.ndarray:
    """The four tilt eigenvalues (1/s) of the sleeping top: ``A z'' - i C w z' - m g l z = 0`` for the tilt
    ``z = x + i y`` of its axis, ``lambda = i (C w -+ sqrt(C^2 w^2 - 4 A m g l))/(2 A)`` and their conjugates
    (Goldstein, Classical Mechanics, §5.7: stable iff C^2 w^2 > 4 A m g l)."""
    D = np.sqrt(complex(C * C * rate * rate - 4.0 * A * m * g * l))
    lam = np.array([1j * (C * rate + D), 1j * (C * rate - D)]) / (2.0 * A)
    return np.concatenate([lam, lam.conj()])


def circling_disc(theta: float = 0.3, rho: float = 1.0, R: float = 0.1, m: float = 1.0, g: float = 9.81,
                  lean_rate: float = 0.0):
    """A thin disc (A = m R^2/4, C = m R^2/2) leaning by ``theta`` (rad) toward the centre of the circle of radius
    ``rho`` (m, about the y axis through the origin) traced by its contact point on the plane y = 0 (gravity -y),
    precessing at ``Omega``, ``Omega^2 = g tan(theta)/(3 rho/2 - 5 R sin(theta)/4)`` (docs/theory.md §8), spinning
    at ``-Omega rho/R`` about its axis (rolling); ``lean_rate`` (rad/s) added about the direction of travel.
    Returns (system, disc, Omega)."""
    from flexmb import rotations as rot
    Om = np.sqrt(g * np.tan(theta) / (1.5 * rho - 1.25 * R * np.sin(theta)))
    er, et, k = np.array([1.0, 0.0, 0.0]), np.array([0.0, 0.0, -1.0]), np.array([0.0, 1.0, 0.0])
    d = np.cos(theta) * k - np.sin(theta) * er            # contact -> centre
    ax = np.sin(theta) * k + np.cos(theta) * er            # disc axis
    w = Om * k - Om * rho / R * ax + lean_rate * et
    s = fm.System(gravity=(0.0, -g, 0.0), name="disc rolling on a circle")
    disc = s.add(fm.RigidBody(m, np.diag([0.5, 0.25, 0.25]) * m * R * R, position=rho * er + R * d,
                              orientation=rot.from_matrix(np.column_stack([ax, et, d])),
                              velocity=Om * (rho - R * np.sin(theta)) * et, angular_velocity=w, name="disc"))
    s.add(fm.RollingDisc(disc, R, axis=ax))
    return s, disc, Om
