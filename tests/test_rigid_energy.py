"""Energies of rigid bodies (flexmb/compiled/rigid.py ``rigid_energies``) against closed forms."""
import numpy as np

import flexmb as fm
from flexmb import rotations as rot


def test_kinetic_and_potential_energy_of_tumbling_bodies_equal_the_closed_forms():
    """T = m |v|^2 / 2 + w^T J_global w / 2 with the body's angular velocity in global components and its inertia
    rotated to the global frame (independent of the Euler-parameter rates the kernel uses), V = -m g . r;
    1e-12 relative (rounding)."""
    rng = np.random.default_rng(7)
    g = np.array([0.3, -9.81, 0.2])
    s = fm.System(gravity=g)
    bodies = []
    for k in range(4):
        J = 0.3 * rng.standard_normal((3, 3))
        J = J @ J.T + 3.0 * np.eye(3)
        bodies.append(s.add(fm.RigidBody(1.0 + k, J, position=rng.standard_normal(3),
                                         orientation=rot.from_axis_angle(rng.standard_normal(3), 0.4 + k),
                                         velocity=rng.standard_normal(3), angular_velocity=rng.standard_normal(3),
                                         name=f"b{k}")))
    asm = s.compile()
    q, v = asm.initial_state()
    T = V = 0.0
    for b in bodies:
        A = rot.A(b.p0)
        w = np.asarray(b.angular_velocity, dtype=float)
        T += 0.5 * b.mass * np.dot(b.velocity, b.velocity) + 0.5 * w @ (A @ b.inertia @ A.T) @ w
        V -= b.mass * np.dot(g, b.position)
    assert abs(asm.kinetic_energy(q, v) - T) < 1e-12 * T
    assert abs(asm.potential_energy(q, v) - V) < 1e-12 * abs(V)
