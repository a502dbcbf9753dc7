"""Models of suite ``ropes``: the rope over a pulley of Crous 2000, App. D.2 and its closed form.

Crous 2000 is P. G. Crous's MSc thesis "Modelling of Dragline Dynamics" (Stellenbosch, 2000); its App. D.2 hangs a
rope of l = 9.747 m and rho = 7.695 kg/m over a pulley (J_p = 1.6 kg m^2) with end masses m1 = 6 kg and
m2 = 5 kg and compares the drop x(t) of m1 with the energy solution (docs/theory-ropes.md §3).
"""
from __future__ import annotations

import math

import numpy as np

import flexmb as fm
from flexmb.contact import CoulombRamp, RopePulleyContact, over_pulley_points, rope_chain

G = 9.81                       # m/s^2
LENGTH = 9.747                 # m, rope length (Crous 2000, App. D.2)
RHO = 7.695                    # kg/m, rope mass per length
M1, M2 = 6.0, 5.0              # kg, end masses (m1 drops)
J_P = 1.6                      # kg m^2, pulley inertia about its axle
RADIUS = 2.0                   # m: the thesis's "diameter of 4 m (r)"; l = pi r + 2 sqrt(3) holds only for r = 2
STIFFNESS, DAMPING = 5.0e4, 500.0   # N/m, N s/m: the thesis's contact force elements (per segment)
SLIP_SPEED = 0.01              # m/s, Coulomb ramp v0 (Crous 2000, eq. (3.5.19) regularization; our choice)
END_INERTIA = (1e-3,) * 3      # kg m^2, the end masses are point masses on spherical joints: irrelevant


def closed_form(t, j_p: float, radius: float = RADIUS):
    """Drop of m1 (m) at times ``t`` (s): x = (beta/2)(cosh(t/alpha) - 1), alpha = sqrt(a/b), beta = c/b with
    a = (m1 + m2 + rho l + J_p/r^2)/2, b = rho g, c = (m1 - m2) g (Crous 2000, eqs. (D.7)-(D.10), rederived in
    docs/theory-ropes.md §3). ``j_p = J_P``: no slip; ``j_p = 0``: a smooth pulley (the rope slides)."""
    a = 0.5 * (M1 + M2 + RHO * LENGTH + j_p / radius ** 2)
    b, c = RHO * G, (M1 - M2) * G
    alpha, beta = math.sqrt(a / b), c / b
    return 0.5 * beta * (np.cosh(np.asarray(t, dtype=float) / alpha) - 1.0)


def rope_over_pulley(n: int, mu: float, j_p: float = J_P):
    """System: pulley (J_p about z) on a revolute axle at the origin, a rope of ``n`` spherical-jointed segments over
    it with end masses m1 (left, x < 0) and m2; friction ``mu`` (CoulombRamp, v0 = SLIP_SPEED; none for mu = 0).
    Returns ``(system, m1 body, pulley)``."""
    s = fm.System(gravity=(0.0, -G, 0.0), name=f"rope over pulley, {n} segments, mu {mu:g}")
    pulley = s.add(fm.RigidBody(10.0, (0.5 * j_p + 0.1, 0.5 * j_p + 0.1, j_p), name="pulley"))
    s.add(fm.Revolute(s.ground, pulley, (0.0, 0.0, 0.0), (0.0, 0.0, 1.0), name="axle"))
    pts = over_pulley_points(n, RADIUS, LENGTH)
    rope = rope_chain(s, pts, RHO, diameter=0.02, name="rope")
    m1 = s.add(fm.RigidBody(M1, END_INERTIA, position=pts[0], name="m1"))
    m2 = s.add(fm.RigidBody(M2, END_INERTIA, position=pts[-1], name="m2"))
    s.add(fm.Spherical(rope.segments[0], m1, pts[0], name="m1 hook"))
    s.add(fm.Spherical(rope.segments[-1], m2, pts[-1], name="m2 hook"))
    s.add(RopePulleyContact(pulley, rope, RADIUS, STIFFNESS, DAMPING,
                            friction=CoulombRamp(mu, SLIP_SPEED) if mu > 0 else None, name="sheave"))
    return s, m1, pulley
