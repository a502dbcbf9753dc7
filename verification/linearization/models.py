"""Models of suite ``linearization``: Schwab & Meijaard's swivel-wheel shimmy (seed 003), an upright rolling disc."""
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
    """Roots of Schwab & Meijaard's characteristic equation (seed 003) ``L^3 + (1 + mu) w L^2 + wn^2 L + w wn^2
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


def upright_disc(v: float, R: float = 0.1, m: float = 1.0, g: float = 9.81, lean_rate: float = 0.01):
    """A thin disc (radius R, mass m, A = m R^2/4, C = m R^2/2) upright on the plane y = 0 (gravity -y), axis
    along x, rolling along -z at speed v (m/s), with an initial lean rate ``lean_rate`` (rad/s, about z).
    Returns (system, disc)."""
    s = fm.System(gravity=(0.0, -g, 0.0), name=f"rolling disc v={v:.3g}")
    d = s.add(fm.RigidBody(m, np.array([0.5, 0.25, 0.25]) * m * R * R, position=(0.0, R, 0.0), velocity=(0.0, 0.0, -v),
                           angular_velocity=(-v / R, 0.0, lean_rate), name="disc"))
    s.add(fm.RollingDisc(d, R, axis=(1.0, 0.0, 0.0)))
    return s, d
