"""The independent assumed-modes references of the crank-rocker and the slider-crank (numpy/scipy, no flexmb).

Their own checks, independent of flexmb: the jets' derivatives against finite differences along a path,
energy conservation of the crank-rocker's Lagrange equations with the motor and damping off, and the stored
reference data reproduced by the code that wrote them.
"""
import math

import numpy as np
import pytest

from verification.crank_rocker import assumed_modes as cr
from verification.crank_rocker import models as cr_models
from verification.pinned_beam import slope_integral
from verification.slider_crank import assumed_modes as sc


def test_jets_match_finite_differences_along_a_path():
    """x(q(t)), y(q(t)), theta3(q(t)) on q(t) = q + qd t + a t^2 / 2: first and second derivatives of the
    jets against central differences (step 1e-4 s: truncation ~1e-8, round-off ~1e-8 relative)."""
    C = cr.coupler(2)
    q, qd, a = np.array([0.3, 1e-3, -2e-4]), np.array([5.0, 0.1, 0.2]), np.array([3.0, 10.0, -7.0])
    kin = cr.kinematics(C, q, qd)
    h = 1e-4

    def pos(tau):
        k = cr.kinematics(C, q + qd * tau + 0.5 * a * tau ** 2, qd + a * tau)
        return np.concatenate([k["x"].v, k["y"].v, [k["theta3"].v]])
    d1 = (pos(h) - pos(-h)) / (2 * h)
    d2 = (pos(h) - 2 * pos(0) + pos(-h)) / h ** 2
    js = (kin["x"], kin["y"], kin["theta3"])
    an1 = np.concatenate([np.ravel(j.d) for j in js])
    an2 = np.concatenate([np.ravel(j.dd0 + j.c @ a) for j in js])
    assert np.abs(d1 - an1).max() <= 1e-6 * np.abs(an1).max()
    assert np.abs(d2 - an2).max() <= 1e-5 * np.abs(an2).max()
    # the loop closes: rocker length a3 and chord l = a2 - 1/2 eta^T P_L eta
    (ax, ay), (bx, by) = kin["A"], kin["B"]
    assert math.hypot(bx.v - cr_models.A4, by.v) == pytest.approx(cr_models.A3, rel=1e-14)
    assert math.hypot(bx.v - ax.v, by.v - ay.v) == pytest.approx(cr_models.A2 - 0.5 * q @ C.P_L[0] @ q, rel=1e-14)


def test_crank_rocker_lagrange_equations_conserve_energy():
    """Motor torque, friction and damping off, the mechanism set spinning with the coupler bent: kinetic plus
    strain energy constant to the integrator's tolerance (rtol 1e-10: measured drift about 1e-9). A wrong
    velocity term in the equations breaks it at order 1e-3."""
    from scipy.integrate import solve_ivp
    C = cr.coupler(2)
    n = C.n

    def energy(y):
        q, qd = y[:n], y[n:]
        kin = cr.kinematics(C, q, qd)
        T = 0.5 * (cr_models.J1 * qd[0] ** 2 + cr_models.J3 * kin["theta3"].d ** 2
                   + np.sum(C.mass * (kin["x"].d ** 2 + kin["y"].d ** 2)))
        return T + 0.5 * np.sum(C.k_modal * q[1:] ** 2)

    def f(t, y):
        motor_off = y[n] * cr_models.MOTOR["D"] / cr_models.MOTOR["K_p"]   # cancels the friction term
        return np.concatenate([y[n:], cr.accelerations(C, y[:n], y[n:], motor_off, np.zeros(C.K))[0]])
    y0 = np.array([0.0, 2e-3, -5e-4, 40.0, 0.0, 0.0])
    sol = solve_ivp(f, (0.0, 0.05), y0, method="DOP853", rtol=1e-10, atol=1e-13)
    E = np.array([energy(y) for y in sol.y.T])
    assert np.abs(E / E[0] - 1.0).max() < 1e-7


def test_crank_rocker_stored_reference_is_reproduced():
    """The short stored run (2 modes, 0.25 s) comes out of the code again to the integrator's tolerance."""
    stored = cr.stored()["runs"][cr.SHORT_RUN]
    got = cr.solve(stored["K"], stored["rtol"], t_end=stored["t_end"])["metrics"]
    for k, v in stored["metrics"].items():
        assert got[k] == pytest.approx(v, rel=1e-6), k


def test_slider_crank_stored_reference_is_reproduced():
    stored = sc.stored()["runs"]["K2_rtol1e-08"]
    got = sc.metrics(sc.solve(2, rtol=1e-8))
    for k, v in stored["metrics"].items():
        assert got[k] == pytest.approx(v, rel=1e-6), k


def test_foreshortening_matrix_closed_form():
    """int_0^s phi_k' phi_j' in closed form against Gauss quadrature (200 points)."""
    k = np.arange(1, 5) * math.pi / 0.3
    s = 0.17
    xg, wg = np.polynomial.legendre.leggauss(200)
    x, w = 0.5 * s * (xg + 1), 0.5 * s * wg
    d = np.cos(np.outer(x, k)) * k
    assert np.abs(slope_integral(k, s) - (d.T * w) @ d).max() < 1e-10 * np.abs((d.T * w) @ d).max()
