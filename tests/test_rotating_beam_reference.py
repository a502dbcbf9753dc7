"""Fast checks of the independent rotating-beam reference (verification/rotating_beam/reference.py).

The converged numbers live in reference_data.json (make_reference.py, minutes); here: closed forms,
literature values, conservation, divergence of the linear model, and the stored data against a fresh
coarse computation whose discretisation error the stored convergence study bounds.
"""
import json
import math
import pathlib

import numpy as np
import pytest

from verification.rotating_beam import reference as ref

DATA = pathlib.Path(ref.__file__).with_name("reference_data.json")
W_UNIT = math.sqrt(ref.EI / (ref.RHO_A * ref.L**4))          # omega = (beta L)^2 * W_UNIT
METRIC_KEYS = {"tip_min", "t_tip_min", "tip_7_5", "tip_20", "max_abs_tip_after_Ts", "diverged"}


def test_spin_law():
    om_s, T = 6.0, ref.T_S
    assert ref.spin_law(0.0, om_s) == (0.0, 0.0, 0.0)
    assert ref.spin_law(T, om_s) == (om_s, 0.0, 0.0)
    assert ref.spin_law(0.5 * T, om_s)[0] == pytest.approx(0.5 * om_s, rel=1e-14)
    # continuity of Omega, Omega_dot, Omega_ddot across T_s
    left = ref.spin_law(T - 1e-9, om_s)
    for a, b in zip(left, ref.spin_law(T, om_s)):
        assert abs(a - b) < 1e-8
    # rates are the derivatives of the law (central differences)
    t = np.linspace(0.3, T - 0.3, 17)
    h = 1e-5
    om_p, omd_p, _ = ref.spin_law(t + h, om_s)
    om_m, omd_m, _ = ref.spin_law(t - h, om_s)
    om, omd, omdd = ref.spin_law(t, om_s)
    assert np.allclose((om_p - om_m) / (2 * h), omd, atol=1e-8)
    assert np.allclose((omd_p - omd_m) / (2 * h), omdd, atol=1e-8)
    assert np.all(np.diff(om) > 0) and np.max(omd) <= 2 * om_s / T + 1e-12


def test_frequencies_at_rest_match_cantilever_closed_form():
    closed = np.array([1.87510407, 4.69409113]) ** 2 * W_UNIT        # Blevins (1979) Table 8-1
    assert ref.cantilever_omega(1) == pytest.approx(3.7977, abs=1e-4)   # 'about 3.80 rad/s'
    for model in ("stretch", "linear"):
        assert np.allclose(ref.frequencies(0.0, model, n_bending=4, n_axial=1), closed, rtol=1e-8)
    assert ref.flapwise_frequency(0.0, n_bending=4, n_axial=1) == pytest.approx(closed[0], rel=1e-8)


def test_spin_stiffening_and_softening():
    w0 = ref.cantilever_omega(1)
    s = [ref.frequencies(om, "stretch", n_bending=6, n_axial=1)[0] for om in (2.0, 6.0, 10.0)]
    lin = [ref.frequencies(om, "linear", n_bending=6, n_axial=1)[0] for om in (2.0, 3.7, 3.9)]
    assert w0 < s[0] < s[1] < s[2]
    assert 0 < lin[1] < lin[0] < w0 and lin[2] < 0          # omega_1^2 of K - Omega^2 M crosses zero at w0
    # without Coriolis the linear model is exactly omega^2 = omega_0^2 - Omega^2 (He 1992, eq. 9.17)
    w = ref.frequencies(2.0, "linear", n_bending=6, n_axial=1, gyroscopic=False)[0]
    assert w == pytest.approx(math.sqrt(w0**2 - 4.0), rel=1e-10)
    # the geometrically exact elastica, linearised about the same state, has the same stiffening
    # (inextensible: identical; extensible: within the centrifugal strain ~ rhoA Omega^2 L^2 / EA)
    assert np.allclose(ref.frequencies(6.0, "elastica", 6, 0), ref.frequencies(6.0, "stretch", 6, 0), rtol=1e-10)
    assert np.allclose(ref.frequencies(6.0, "elastica", 6, 1), ref.frequencies(6.0, "stretch", 6, 1), rtol=5e-4)


def test_flapwise_southwell_and_literature():
    k1 = ref.southwell_k1(n_bending=8)
    assert k1 == pytest.approx(1.19334, abs=2e-5)
    w0 = ref.cantilever_omega(1)
    om = 0.05                                               # slope of omega^2 vs Omega^2 at 0
    assert (ref.flapwise_frequency(om, 8, 0) ** 2 - w0**2) / om**2 == pytest.approx(k1, rel=1e-4)
    # the quoted 1.1734 is the secant (omega^2 - omega_0^2)/Omega^2 near Omega = 4.83 rad/s, not the limit
    om = 4.83
    assert (ref.flapwise_frequency(om, 12, 0) ** 2 - w0**2) / om**2 == pytest.approx(1.1734, rel=5e-3)
    # nondimensional first flapwise frequencies, lambda = Omega sqrt(rhoA L^4/EI): Wright, Smith, Thresher &
    # Wang 1982 (J. Appl. Mech. 49:197-202), Hodges & Rutkowski 1981 (AIAA J. 19:1459-1466)
    table = {1: 3.6817, 4: 5.5850, 8: 9.2568, 12: 13.1702}
    for lam, val in table.items():
        assert ref.flapwise_frequency(lam * W_UNIT, 16, 0) / W_UNIT == pytest.approx(val, abs=1.5e-4)


def test_linear_fast_path_equals_full_equations():
    beam = ref.StretchBeam(3, 2, foreshortening=False)
    ops = beam.linear_operators()
    rng = np.random.default_rng(1)
    z, zd = rng.normal(size=beam.n) * 0.1, rng.normal(size=beam.n)
    om, omd = 3.0, 0.7
    M, f = beam.mass_force(z, zd, om, omd)
    f_lin = om**2 * (ops["f2"] + ops["A2"] @ z) + omd * (ops["f1"] + ops["A1"] @ z) - ops["K"] @ z + om * ops["B1"] @ zd
    assert np.allclose(M, ops["M0"], rtol=0, atol=1e-12) and np.allclose(f, f_lin, rtol=1e-12, atol=1e-9)


@pytest.mark.parametrize("model", ["stretch", "elastica", "elastica_vcurv"])
def test_jacobi_integral_conserved_at_constant_spin(model):
    # a short spin-up (T_s = 3 s, tip about -1.1 m) then constant spin: the hub-frame Jacobi integral
    # (1/2 z'Mz' + U - 1/2 Omega^2 int rhoA |r|^2) is constant; checks that (R2) comes from a Lagrangian
    r = ref.integrate(1.5, model, n_bending=2, n_axial=1, rtol=1e-8, T_s=3.0, t_end=4.0)
    assert r["status"] == 0 and np.min(r["tip"]) < -0.3
    beam, n, y = r["beam"], r["beam"].n, r["y"]
    h = [ref.jacobi_integral(beam, y[:n, i], y[n:, i], 1.5) for i in np.flatnonzero(r["t"] >= 3.0)]
    assert np.ptp(h) < 1e-9 * abs(h[0])


def test_linear_model_diverges_above_first_frequency_only():
    # coarse but sufficient: 2 bending modes, no axial modes, rtol 1e-6 (divergence is exponential,
    # growth rate sqrt(Omega^2 - omega_1^2) = 4.6 /s at Omega = 6)
    fast = dict(n_bending=2, n_axial=0, rtol=1e-6)
    m6 = ref.metrics(*ref.spin_up(6.0, "linear", **fast))
    m2 = ref.metrics(*ref.spin_up(2.0, "linear", **fast))
    assert m6["diverged"] and m6["tip_20"] is None
    assert not m2["diverged"] and abs(m2["tip_min"]) < 0.3
    s6 = ref.metrics(*ref.spin_up(6.0, "stretch", n_bending=3, n_axial=0, rtol=1e-7))
    assert not s6["diverged"] and s6["max_abs_tip_after_Ts"] < 0.05
    assert set(m6) == set(m2) == METRIC_KEYS


def test_stored_reference_matches_fresh_coarse_run():
    doc = json.loads(DATA.read_text())
    for key in ("2", "4", "6", "10"):
        for model in ("stretch", "linear", "stretch_linearized", "elastica", "elastica_vcurv"):
            assert set(doc["reference"][key][model]) == METRIC_KEYS
        assert doc["reference"][key]["linear"]["diverged"] is (key != "2")
        assert doc["reference"][key]["stretch"]["diverged"] is False
    # coarse: 4 bending modes, no axial modes (inextensible), rtol 1e-8. The stored convergence study
    # bounds the difference: at Omega_s = 4, n_bending 4 vs 12 changes tip_min / tip_7_5 by 3.0e-5 /
    # 4.2e-5 relative and n_axial 0 vs 3 by 2.3e-5 / 3.2e-5, t_tip_min by < 2e-4 s each; tolerance 2x.
    ref_m = doc["reference"]["4"]["stretch"]
    m = ref.metrics(*ref.spin_up(4.0, "stretch", n_bending=4, n_axial=0, rtol=1e-8))
    assert m["tip_min"] == pytest.approx(ref_m["tip_min"], rel=1.5e-4)
    assert m["tip_7_5"] == pytest.approx(ref_m["tip_7_5"], rel=1.5e-4)
    assert m["t_tip_min"] == pytest.approx(ref_m["t_tip_min"], abs=1e-3)
    # stored history consistent with the stored metrics
    h = doc["histories"]
    t = np.array(h["t"])
    i = int(np.flatnonzero(np.isclose(t, 7.5))[0])
    assert h["4"]["stretch"][i] == pytest.approx(ref_m["tip_7_5"], abs=1e-9)
    # frequency table against a fresh coarser evaluation
    row = doc["frequencies"]["table"][5]
    assert row["omega"] == 5.0
    assert np.allclose(ref.frequencies(5.0, "stretch", 8, 2), row["stretch"], rtol=1e-5)
    assert np.allclose(ref.frequencies(5.0, "linear", 8, 2), row["linear"], rtol=1e-5)
    assert ref.flapwise_frequency(5.0, 8, 2) == pytest.approx(row["flapwise"], rel=1e-5)
    assert doc["flapwise_southwell"]["K1"] == pytest.approx(ref.southwell_k1(8), rel=1e-6)
