"""Hertz stiffness helpers and the closed forms of an elastic Hertzian impact.

Tolerances: the closed forms are exact, so they are compared with an independent direct integration of
m delta'' = -K delta^(3/2) (solve_ivp DOP853, rtol 1e-12 on the scaled problem) to 1e-8 relative, and with
adaptive quadrature of the duration integral to 1e-9.
"""
import math

import numpy as np
import pytest
from scipy.integrate import quad, solve_ivp

from flexmb.contact import (HERTZ_DURATION_COEFFICIENT, LankaraniNikravesh, cylinder_line, duration_coefficient,
                            effective_modulus, effective_radius, hertz_impact, simulate_impact, sphere_plane,
                            sphere_sphere)
from flexmb.errors import ModelError

STEEL = (210e9, 0.3)


def test_effective_modulus():
    Es = effective_modulus(*STEEL, *STEEL)
    assert Es == pytest.approx(210e9 / (2 * (1 - 0.09)))
    assert effective_modulus(*STEEL) == pytest.approx(210e9 / 0.91)           # rigid counter-body
    assert effective_modulus(70e9, 0.33, *STEEL) == pytest.approx(effective_modulus(*STEEL, 70e9, 0.33))


def test_sphere_plane_against_johnson_contact_radius_route():
    """K from Johnson's contact radius a = (3 F R/(4 E*))^(1/3) and approach delta = a^2/R (§4.2)."""
    R, Es = 0.0125, effective_modulus(*STEEL, 70e9, 0.33)
    K = sphere_plane(R, Es)
    for F in (1.0, 250.0, 1e4):
        a = (3 * F * R / (4 * Es)) ** (1 / 3)
        assert K * (a * a / R) ** 1.5 == pytest.approx(F, rel=1e-12)
    # Ambrosio 2002, eq. (19): K = 4/(3 pi) sqrt(R) / (h1 + h2), h = (1 - nu^2)/(pi E)
    h = (1 - 0.09) / (math.pi * 210e9) + (1 - 0.33 ** 2) / (math.pi * 70e9)
    assert K == pytest.approx(4 / (3 * math.pi) * math.sqrt(R) / h, rel=1e-12)


def test_sphere_sphere_radii():
    Es = 1e11
    assert sphere_sphere(0.01, math.inf, Es) == pytest.approx(sphere_plane(0.01, Es))
    assert sphere_sphere(0.01, 0.01, Es) == pytest.approx(sphere_plane(0.005, Es))
    assert effective_radius(0.01, -0.011) == pytest.approx(1 / (100 - 1 / 0.011))     # ball in a cup
    assert sphere_sphere(0.01, -0.011, Es) > sphere_plane(0.01, Es)                     # conforming: stiffer


def test_cylinder_line():
    assert cylinder_line(0.02, 1e11) == pytest.approx(math.pi * 1e11 * 0.02 / 4)


@pytest.mark.parametrize("call, words", [
    (lambda: effective_modulus(-1.0, 0.3), ["E1", "-1.0"]),
    (lambda: effective_modulus(210e9, 0.6), ["nu1", "0.6"]),
    (lambda: effective_modulus(210e9, 0.3, 70e9, -1.0), ["nu2", "-1.0"]),
    (lambda: effective_modulus(math.inf, 0.3), ["rigid"]),
    (lambda: effective_radius(0.01, -0.005), ["conform", "|R2| > R1"]),
    (lambda: effective_radius(0.0), ["R1", "0.0"]),
    (lambda: effective_radius(0.01, 0.0), ["R2", "non-zero"]),
    (lambda: sphere_plane(0.01, float("nan")), ["E*", "NaN"]),
    (lambda: sphere_plane("big", 1e11), ["R (m)", "'big'"]),
    (lambda: cylinder_line(-0.1, 1e11), ["L (m)", "-0.1"]),
    (lambda: hertz_impact(0.0, 1.0, 1e9), ["mass", "0.0"]),
])
def test_bad_input(call, words):
    with pytest.raises(ModelError) as err:
        call()
    for w in words:
        assert w in str(err.value)


def test_duration_constant():
    """2 int_0^1 dx / sqrt(1 - x^(5/2)) = 2.9432..., Johnson's 2.94; in (m/K)^(2/5) v^(-1/5) units 3.218."""
    I, _ = quad(lambda x: 1 / math.sqrt(1 - x ** 2.5), 0, 1, epsabs=1e-13, epsrel=1e-13, limit=200)
    assert 2 * I == pytest.approx(HERTZ_DURATION_COEFFICIENT, rel=1e-9)
    assert HERTZ_DURATION_COEFFICIENT == pytest.approx(2.9433, abs=5e-5)
    assert duration_coefficient(1.5) == pytest.approx(HERTZ_DURATION_COEFFICIENT, rel=1e-14)
    assert duration_coefficient(1.0) == pytest.approx(math.pi, rel=1e-14)     # half period of a linear spring
    assert HERTZ_DURATION_COEFFICIENT * 1.25 ** 0.4 == pytest.approx(3.2181, abs=5e-5)
    assert abs(HERTZ_DURATION_COEFFICIENT - 2.868) > 0.07                     # not the 2.868 sometimes quoted


def _integrate_hertz(m, v, K, n=1.5):
    """Independent direct integration: touch at t = 0, separation when delta returns to zero."""
    def rhs(t, y):
        return [y[1], -K * max(y[0], 0.0) ** n / m]

    def sep(t, y):
        return y[0]
    sep.terminal, sep.direction = True, -1
    scale = ((n + 1) * m * v * v / (2 * K)) ** (1 / (n + 1))
    s = solve_ivp(rhs, (0, 100 * scale / v), [0.0, v], method="DOP853", rtol=1e-12, atol=1e-14 * scale,
                  events=sep, dense_output=True)
    T = s.t_events[0][0]
    t = np.linspace(0, T, 20001)
    dmax = s.sol(t)[0].max()
    return dmax, K * dmax ** n, T, s.y_events[0][0][1]


@pytest.mark.parametrize("m, v, R", [(0.0327, 1.0, 0.01), (1.5, 0.2, 0.05), (4e-3, 12.0, 0.005)])
def test_hertz_impact_closed_forms(m, v, R):
    K = sphere_plane(R, effective_modulus(*STEEL, *STEEL))
    h = hertz_impact(m, v, K)
    assert h.max_penetration == pytest.approx((5 * m * v * v / (4 * K)) ** 0.4, rel=1e-14)
    assert h.peak_force == pytest.approx(K * h.max_penetration ** 1.5, rel=1e-14)
    assert h.duration == pytest.approx(3.2180654597 * (m / K) ** 0.4 * v ** -0.2, rel=1e-9)
    dmax, Fmax, T, v_out = _integrate_hertz(m, v, K)
    assert dmax == pytest.approx(h.max_penetration, rel=1e-8)
    assert Fmax == pytest.approx(h.peak_force, rel=1e-8)
    assert T == pytest.approx(h.duration, rel=1e-8)
    assert -v_out == pytest.approx(v, rel=1e-9)                              # elastic: e = 1


def test_lankarani_nikravesh_with_e_1_is_hertz():
    K = sphere_plane(0.01, effective_modulus(*STEEL, *STEEL))
    h = hertz_impact(0.0327, 1.0, K)
    r = simulate_impact(LankaraniNikravesh(K, 1.0), 0.0327, 1.0)
    assert r.restitution == pytest.approx(1.0, abs=1e-8)
    assert r.max_penetration == pytest.approx(h.max_penetration, rel=1e-8)
    assert r.peak_force == pytest.approx(h.peak_force, rel=1e-8)
    assert r.duration == pytest.approx(h.duration, rel=1e-8)
    assert r.time_to_peak == pytest.approx(h.time_to_peak, rel=1e-6)


def test_general_exponent():
    h = hertz_impact(2.0, 0.5, 8e4, n=1.0)                  # linear spring: half a period, pi sqrt(m/K)
    assert h.duration == pytest.approx(math.pi * math.sqrt(2.0 / 8e4), rel=1e-12)
    assert h.max_penetration == pytest.approx(0.5 * math.sqrt(2.0 / 8e4), rel=1e-12)
    h = hertz_impact(0.3, 2.0, 1e9, n=2.2)
    dmax, Fmax, T, _ = _integrate_hertz(0.3, 2.0, 1e9, n=2.2)
    assert (h.max_penetration, h.peak_force, h.duration) == pytest.approx((dmax, Fmax, T), rel=1e-8)
