"""fm.linearize: a pendulum's frequency, the Campbell diagram at rest, the swivel-wheel shimmy, bad states."""
import numpy as np
import pytest

import flexmb as fm
from flexmb.errors import ModelError
from verification.linearization import models


def pendulum(l=0.8, m=2.0, Ic=0.01, g=9.81):
    s = fm.System(gravity=(0, -g, 0))
    bob = s.add(fm.RigidBody(m, (Ic, Ic, Ic), position=(0, -l, 0), name="bob"))
    s.add(fm.Revolute(s.ground, bob, (0, 0, 0), (0, 0, 1)))
    return s, np.sqrt(m * g * l / (Ic + m * l * l))       # compound pendulum about the pin


def test_pendulum_frequency():
    s, w = pendulum()
    lin = fm.linearize(s)
    assert (lin.n_position, lin.n_velocity) == (1, 1)
    # both sides exact: round-off of the 7-coordinate projection only
    assert np.allclose(np.sort(lin.eigenvalues.imag), [-w, w], rtol=1e-10, atol=1e-10)
    assert np.abs(lin.eigenvalues.real).max() < 1e-10
    # mode shape: the bob swings along x (dq_x / dq_y -> infinity at the bottom)
    dq = lin.modes_q[:, 0]
    assert abs(abs(dq[0]) - 1.0) < 1e-12 and abs(dq[1]) < 1e-10


def test_matches_campbell_for_a_clamped_modal_beam():
    from tests.test_jacobians import beam_modes
    beam = fm.FlexibleBody(beam_modes(4), position=(0.0, 0.0, 0.0), name="beam")
    s = fm.System()
    s.add(beam)
    s.add(fm.Fixed(s.ground, beam.interface("root"), (0.0, 0.0, 0.0)))
    lin = fm.linearize(s)
    ref = fm.campbell(beam, (0.0, 0.0, 1.0), [0.0]).frequencies[0]
    # same modal M and K through two code paths (the assembly's Newton blocks vs campbell's kernel call)
    assert np.allclose(lin.frequencies, np.sort(ref), rtol=1e-8)


def test_shimmy_eigenvalues_match_the_cubic():
    s, _ = models.shimmy(0.5)
    lin = fm.linearize(s)
    ref = models.cubic(0.5)
    assert lin.A.shape == (3, 3)
    # exact eigenvalues of the same 3rd-order system on both sides: round-off only
    assert np.allclose(np.sort_complex(lin.eigenvalues), np.sort_complex(ref), atol=1e-10)
    assert lin.stable
    # about a later state of the steady motion (the strut 0.5 m further, t = 0.5 s): the same eigenvalues, the
    # linearization is time-invariant along a steady translation; the simulated state holds its constraints to
    # the Newton tolerance 1e-8, which bounds the change of the eigenvalues
    later = fm.linearize(s, fm.simulate(s, 0.5, 0.01))
    assert later.t == pytest.approx(0.5) and later.q[0] == pytest.approx(lin.q[0] + 0.5, abs=1e-9)
    assert np.allclose(np.sort_complex(later.eigenvalues), np.sort_complex(ref), atol=1e-8)


def test_not_a_steady_motion_says_which_coordinate_accelerates():
    s, _ = pendulum()
    q, v = s.compile().initial_state()
    c, sn = np.cos(0.2), np.sin(0.2)
    q[:2] = 0.8 * sn, -0.8 * c
    q[3:7] = fm.rotations.from_axis_angle((0, 0, 1), 0.2)
    with pytest.raises(ModelError, match="not an equilibrium or a steady motion: body 'bob' coordinate x"):
        fm.linearize(s, (q, v))
    q[0] += 0.1
    with pytest.raises(ModelError, match="violates the position constraint"):
        fm.linearize(s, (q, v))


def test_spinning_body_needs_its_steady_rotation():
    s, b = models.free_body((1.0, 2.0, 2.5), 2, 3.0)
    with pytest.raises(ModelError, match="pass the steady rotation as angular_velocity"):
        fm.linearize(s)
    # a body spin is a symmetry only of an axisymmetric body: refused for this one, whose inertia seen from the
    # space-fixed perturbation axes turns with it
    with pytest.raises(ModelError, match="not a symmetry"):
        fm.linearize(s, spin={b: (0.0, 0.0, 3.0)})
    # the wrong rate: the Euler parameters move at another rate than the given motion
    with pytest.raises(ModelError, match="changes at"):
        fm.linearize(s, angular_velocity=(0.0, 0.0, 2.0))
    with pytest.raises(ModelError, match="spin names 'nobody'"):
        fm.linearize(s, spin={"nobody": (0.0, 0.0, 3.0)})
    with pytest.raises(ModelError, match="angular_velocity must be a 3-vector"):
        fm.linearize(s, angular_velocity=(1.0, 2.0))


def test_intermediate_axis_is_unstable_with_eulers_growth_rate():
    inertia, w0 = (1.0, 2.0, 2.5), 3.0
    s, b = models.free_body(inertia, 1, w0)
    lin = fm.linearize(s, angular_velocity=(0.0, w0, 0.0))
    # Euler's equations: lambda^2 = w0^2 (I2 - I1)(I3 - I2)/(I1 I3); exact on both sides
    assert lin.eigenvalues.real.max() == pytest.approx(models.euler_eigenvalue(inertia, 1, w0).real, rel=1e-10)
    assert not lin.stable and lin.generator is not None


def test_rolling_disc_and_a_later_state_of_its_steady_motion():
    v, R = 1.0, 0.1
    s, d = models.upright_disc(v, R=R, lean_rate=0.0)
    lin = fm.linearize(s, spin={d: (-v / R, 0.0, 0.0)})
    ref = models.disc_lean_eigenvalue(v, R=R)
    assert np.abs(lin.eigenvalues - ref).min() < 1e-9 * abs(ref)
    # 0.2 s later along the simulated steady motion: the disc has turned by 2 rad about its axis and rolled 0.2 m;
    # the same eigenvalues (the simulated state holds the rolling constraints to the Newton tolerance)
    res = fm.simulate(s, 0.2, 1e-3)
    later = fm.linearize(s, res, spin={d: (-v / R, 0.0, 0.0)})
    assert np.abs(later.eigenvalues - ref).min() < 1e-6 * abs(ref)


def test_spinning_flexible_beam_matches_campbell():
    """A stiffened modal beam driven about z at 30 rad/s, at its steady centrifugal deflection: fm.linearize in the
    frame turning with it against fm.campbell (the flexible kernel's own co-rotating linearization, gyroscopic
    and stiffening terms included): the same 10 frequencies to round-off."""
    from tests.test_jacobians import beam_modes
    W = 30.0
    modes = beam_modes(4, direction=(1.0, 0.0, 0.0))
    ref = fm.campbell(fm.FlexibleBody(modes, stiffening=True, name="probe"), (0.0, 0.0, 1.0), [W])
    s = fm.System()
    beam = s.add(fm.FlexibleBody(modes, stiffening=True, angular_velocity=(0.0, 0.0, W),
                                 modal_coordinates=ref.steady_deflection[0], name="beam"))
    hub = s.add(fm.Revolute(s.ground, beam, (0.0, 0.0, 0.0), (0.0, 0.0, 1.0)))
    s.add(fm.Driver(hub, angle=fm.TimeFunction.linear(W)))
    lin = fm.linearize(s, angular_velocity=(0.0, 0.0, W))
    assert np.allclose(lin.frequencies, np.sort(ref.frequencies[0]), rtol=1e-8)
    assert np.abs(lin.eigenvalues.real).max() < 1e-8


def test_dc_motor_driving_a_spinning_rotor():
    """A rotor on a revolute joint spun by a DC motor at its steady speed (the motor's charge, an element-owned
    coordinate, grows at the steady current): (J s + D)(L s + r) + K^2 = 0 for speed and current (the motor's
    equations, flexmb/forces/motor.py), plus zeros for the rotor angle and the charge."""
    Kp, ra, La, D, Jz, w = 0.5, 2.0, 0.05, 0.01, 0.02, 40.0
    i0 = D * w / Kp                                   # steady: K i = D w
    s = fm.System()
    rotor = s.add(fm.RigidBody(1.0, (0.03, 0.03, Jz), angular_velocity=(0.0, 0.0, w), name="rotor"))
    hinge = s.add(fm.Revolute(s.ground, rotor, (0.0, 0.0, 0.0), (0.0, 0.0, 1.0)))
    s.add(fm.DCMotor(hinge, Kp, ra, La, D=D, voltage=ra * i0 + Kp * w, current=i0))
    lin = fm.linearize(s, angular_velocity=(0.0, 0.0, w))
    ref = np.roots([Jz * La, Jz * ra + D * La, D * ra + Kp * Kp])
    w_lin = lin.eigenvalues[np.abs(lin.eigenvalues) > 1e-6]
    assert np.allclose(np.sort(w_lin.real), np.sort(ref.real), rtol=1e-8) and np.abs(w_lin.imag).max() < 1e-8


def _stiffness_by_differences(asm, q, v, a, lam, t):
    """dr/dq at fixed v, a, lambda by fourth-order central differences of the residual (step 1e-4 (1 + |q_j|))."""
    K = np.empty((asm.nq, asm.nq))
    for j in range(asm.nq):
        h = 1e-4 * (1.0 + abs(q[j]))
        f = []
        for sgn in (-2.0, -1.0, 1.0, 2.0):
            dq = np.zeros(asm.nq)
            dq[j] = sgn * h
            f.append(asm.residual(q + dq, v, a, lam, t)[0])
        K[:, j] = (f[0] - 8.0 * f[1] + 8.0 * f[2] - f[3]) / (12.0 * h)
    return K


@pytest.mark.parametrize("make", [lambda: models.sleeping_top(30.0)[0], lambda: models.circling_disc()[0],
                                  lambda: models.free_body((1.0, 2.0, 2.5), 1, 3.0)[0]])
def test_newton_stiffness_block_is_exact_for_spinning_bodies(make):
    """fm.linearize uses the Newton matrix's K block; for a spinning body it must hold d(M(q) a)/dq (the Euler
    parameters accelerate): against fourth-order differences of the residual at the consistent state."""
    from flexmb.solvers.initial import consistent_start
    s = make()
    asm = s.compile()
    q, v, a, lam = consistent_start(asm, 0.0)
    asm.start(q, v)
    nq = asm.nq
    S = asm.residual(q, v, a, lam, 0.0, coef=(0.0, 0.0, 1.0, 1.0, 0.0))[2]
    K = (S.toarray() if hasattr(S, "toarray") else np.asarray(S))[:nq, :nq]
    F = _stiffness_by_differences(asm, q, v, a, lam, 0.0)
    # differences: truncation ~h^4, round-off ~1e-16 |r|/h ~ 1e-12 relative; measured 4e-13 to 1e-12
    assert np.abs(K - F).max() < 1e-9 * np.abs(F).max()
