"""Contact force laws: exact derivatives, no tension, approach-speed state, bad input, achieved restitution.

The restitution tolerances: the ODE route integrates a scaled O(1) problem with rtol 1e-10, atol 1e-12
(DOP853), so it agrees with the analytic phase-plane solution to ~1e-9; 1e-7 leaves margin. The trend
thresholds are set from the analytic values quoted in docs/theory-contact.md §3 (table), with room for the
last printed digit only -- they are properties of the laws, not of the numerics.
"""
import math

import numpy as np
import pytest

from flexmb.contact import (ApproachSpeeds, Flores, HuntCrossley, HysteresisLaw, LankaraniNikravesh, LinearSpringDamper,
                            achieved_restitution, exact_hysteresis_factor, hysteresis_restitution,
                            linear_damping_ratio, linear_restitution, predicted_restitution, restitution_table,
                            simulate_impact)
from flexmb.errors import ModelError, NonFiniteError

HYST = [LankaraniNikravesh, HuntCrossley, Flores]


def laws():
    out = []
    for cls in HYST:
        for n in (1.0, 1.5, 2.3):
            out.append(cls(2.0e7, 0.6, n=n))
    out.append(LinearSpringDamper(3.0e5, 0.4, 0.7))
    return out


@pytest.mark.parametrize("law", laws(), ids=repr)
def test_derivatives_match_central_differences(law):
    rng = np.random.default_rng(1)
    N = 400
    vm = rng.uniform(0.2, 3.0, N)
    d = rng.uniform(1e-4, 2e-3, N)
    # rates spanning the clamp: the damping factor 1 + h delta_dot/vm (or K delta + c delta_dot) changes sign
    if isinstance(law, LinearSpringDamper):
        dd = rng.uniform(-2.0, 1.0, N) * law.K * d / law.c
    else:
        dd = rng.uniform(-2.0, 1.0, N) * vm / law.h
    F, Fd, Fv = law.force(d, dd, vm)
    hd, hv = 1e-7 * d, 1e-6 * vm
    Fd_fd = (law.force(d + hd, dd, vm)[0] - law.force(d - hd, dd, vm)[0]) / (2 * hd)
    Fv_fd = (law.force(d, dd + hv, vm)[0] - law.force(d, dd - hv, vm)[0]) / (2 * hv)
    # away from the clamp kink (the damping factor at least 1e-3 from zero) the derivatives are smooth
    if isinstance(law, LinearSpringDamper):
        smooth = np.abs(law.K * d + law.c * dd) > 1e-3 * law.K * d
    else:
        smooth = np.abs(1 + law.h / vm * dd) > 1e-3
    assert smooth.sum() > N / 2 and (F[smooth] > 0).any() and (F[smooth] == 0).any()
    scale = np.abs(Fd[smooth]).max()
    np.testing.assert_allclose(Fd[smooth], Fd_fd[smooth], rtol=1e-6, atol=1e-8 * scale)
    np.testing.assert_allclose(Fv[smooth], Fv_fd[smooth], rtol=1e-6, atol=1e-8 * np.abs(Fv[smooth]).max())


@pytest.mark.parametrize("law", laws(), ids=repr)
def test_never_tensile(law):
    rng = np.random.default_rng(2)
    d = rng.uniform(-1e-3, 2e-3, (50, 40))
    dd = rng.normal(0.0, 5.0, (50, 40))
    vm = rng.uniform(0.0, 3.0, (50, 40))
    F, Fd, Fv = law.force(d, dd, vm)
    assert F.shape == Fd.shape == Fv.shape == (50, 40)
    assert (F >= 0).all()
    assert (F[d <= 0] == 0).all()
    off = F == 0
    assert off.any() and (Fd[off] == 0).all() and (Fv[off] == 0).all()     # derivatives of the clamped force
    assert (law.nonconservative_power(d, dd, vm) <= 1e-12).all()            # damping never feeds energy in


def test_lankarani_nikravesh_formula_and_clamp_continuity():
    K, e, n = 3.0e9, 0.7, 1.5
    law = LankaraniNikravesh(K, e, n=n)
    d, dd, vm = 1e-5, 0.4, 1.2
    F = law.force(d, dd, vm)[0]
    assert F == pytest.approx(K * d ** n * (1 + 3 * (1 - e * e) / 4 * dd / vm), rel=1e-14)
    v0 = -vm / law.h                                 # where the damping factor vanishes
    F_lo, F_hi = law.force(d, v0 * (1 + 1e-9), vm)[0], law.force(d, v0 * (1 - 1e-9), vm)[0]
    assert F_lo == 0 and 0 < F_hi < 1e-8 * K * d ** n
    # Hunt-Crossley and Flores factors as published
    assert HuntCrossley(1, 0.3).h == pytest.approx(1.5 * 0.7)
    assert Flores(1, 0.4).h == pytest.approx(8 * 0.6 / (5 * 0.4))


def test_elastic_law_needs_no_approach_speed():
    law = LankaraniNikravesh(1e8, 1.0)
    F, Fd, Fv = law.force(np.array([0.0, 1e-4, -1.0]), np.array([1.0, -3.0, 1.0]))
    np.testing.assert_allclose(F, [0.0, 1e8 * 1e-6, 0.0])
    np.testing.assert_allclose(Fd, [0.0, 1.5e8 * 1e-2, 0.0])
    assert (Fv == 0).all()
    assert law.elastic_energy(1e-4) == pytest.approx(1e8 * 1e-10 / 2.5)
    with pytest.raises(ModelError, match="delta_dot_minus is required"):
        LankaraniNikravesh(1e8, 0.5).force(1e-4, 1.0)


def test_min_approach_speed_floor():
    law = HuntCrossley(1e8, 0.5, min_approach_speed=1e-2)
    F0 = law.force(1e-4, 1e-3, 0.0)[0]
    assert np.isfinite(F0)
    assert F0 == pytest.approx(law.force(1e-4, 1e-3, 1e-2)[0])
    assert law.force(1e-4, 1e-3, 0.5)[0] != F0          # above the floor the capture is used as given


def test_linear_spring_damper_calibration():
    law = LinearSpringDamper(4e5, 0.3, 2.0)
    assert law.c == pytest.approx(2 * law.zeta * math.sqrt(4e5 * 2.0))
    assert linear_restitution(law.zeta) == pytest.approx(0.3, rel=1e-12)
    F, _, _ = law.force(1e-12, 1.0)                        # jumps to c v at touch (Kelvin-Voigt defect)
    assert F == pytest.approx(law.c, rel=1e-6)
    # the classical unclamped value, and the clamp makes it bouncier
    z = linear_damping_ratio(0.3, "kelvin-voigt")
    assert math.exp(-math.pi * z / math.sqrt(1 - z * z)) == pytest.approx(0.3)
    assert linear_restitution(z) > 0.3
    # continuity of the closed form through critical damping, and e ~ 1/(4 zeta^2) for heavy damping
    assert linear_restitution(1 - 1e-9) == pytest.approx(math.exp(-2), rel=1e-6)
    assert linear_restitution(1 + 1e-9) == pytest.approx(math.exp(-2), rel=1e-6)
    assert linear_restitution(300.0) * 4 * 300.0 ** 2 == pytest.approx(1.0, rel=1e-3)


@pytest.mark.parametrize("make, words", [
    (lambda: LankaraniNikravesh(1e9, 1.2), ["Lankarani-Nikravesh", "e", "1.2"]),
    (lambda: LankaraniNikravesh(1e9, -0.1), ["Lankarani-Nikravesh", "-0.1"]),
    (lambda: HuntCrossley(0.0, 0.5), ["Hunt-Crossley", "stiffness K", "0.0"]),
    (lambda: HuntCrossley(-5.0, 0.5), ["Hunt-Crossley", "-5.0"]),
    (lambda: Flores(1e9, 0.5, n=0.0), ["Flores", "exponent n", "0.0"]),
    (lambda: Flores(1e9, 0.0), ["Flores", "(0, 1]", "0.0"]),
    (lambda: Flores(float("nan"), 0.5), ["Flores", "finite", "nan"]),
    (lambda: LankaraniNikravesh(float("inf"), 0.5), ["Lankarani-Nikravesh", "inf"]),
    (lambda: HuntCrossley(1e9, "soft"), ["Hunt-Crossley", "'soft'"]),
    (lambda: LankaraniNikravesh(1e9, 0.5, min_approach_speed=0.0), ["min_approach_speed"]),
    (lambda: LinearSpringDamper(1e9, 0.5, -1.0), ["linear spring-damper", "mass", "-1.0"]),
    (lambda: LinearSpringDamper(1e9, 0.0, 1.0), ["linear spring-damper", "0.0"]),
    (lambda: LinearSpringDamper(1e9, 0.5, 1.0, calibration="x"), ["calibration", "'x'"]),
])
def test_bad_input(make, words):
    with pytest.raises(ModelError) as err:
        make()
    for w in words:
        assert w in str(err.value)


def test_non_finite_state_is_refused():
    with pytest.raises(NonFiniteError, match=r"Flores contact law: delta_dot\[2\] = nan"):
        Flores(1e9, 0.5).force([1e-5, 1e-5, 1e-5], [0.1, 0.2, np.nan], 1.0)


# ---- approach-speed state ------------------------------------------------------------------------------------

def test_approach_speed_capture_hold_release():
    s = ApproachSpeeds(3)
    s.start([-1e-3, -2e-3, 1e-5], [2.0, 0.5, 0.3])        # pair 2 starts penetrated: captures its rate
    assert s.in_contact.tolist() == [False, False, True] and s.speed[2] == 0.3
    # a trial state where pair 0 touches: uses the rate at the last accepted state (2.0), not the trial 1.7
    before = (s.speed.copy(), s.in_contact.copy(), s.last_rate.copy())
    v = s.trial([1e-6, -1e-3, 2e-5], [1.7, 0.5, 0.1])
    np.testing.assert_allclose(v, [2.0, 0.0, 0.3])
    for a, b in zip(before, (s.speed, s.in_contact, s.last_rate)):   # trial (and a rejected step) changes nothing
        np.testing.assert_array_equal(a, b)
    s.accept([1e-6, -1e-3, 2e-5], [1.7, 0.5, 0.1])
    np.testing.assert_allclose(s.speed, [2.0, 0.0, 0.3])
    # held while in contact, whatever the rate does
    s.accept([5e-6, -5e-4, 1e-6], [-0.4, 0.6, -0.2])
    np.testing.assert_allclose(s.speed, [2.0, 0.0, 0.3])
    # pair 2 separates: released; pair 1 touches at its last accepted rate 0.6
    s.accept([1e-6, 1e-7, -1e-7], [-1.0, 0.9, -0.2])
    np.testing.assert_allclose(s.speed, [2.0, 0.6, 0.0])
    assert s.in_contact.tolist() == [True, True, False]
    # pair 2 comes back: captures the new approach speed
    s.accept([1e-6, 1e-7, -1e-8], [-1.0, 0.9, 0.8])
    s.accept([-1e-6, 1e-7, 1e-8], [-1.0, 0.9, 0.7])
    np.testing.assert_allclose(s.speed, [0.0, 0.6, 0.8])


def test_approach_speed_fallbacks_and_ids():
    s = ApproachSpeeds(5)
    s.start(-np.ones(5), [1.0, -0.5, 0.0, 2.0, 3.0])
    # pair 1 was receding at the last accepted state: the trial rate is used (clipped at 0); pair 2 had 0
    v = s.trial([1e-6, 1e-6], [0.7, -0.1], ids=[1, 2])
    np.testing.assert_allclose(v, [0.7, 0.0])
    # accept over a subset: the listed pairs update, unlisted ones are apart and forget their rate
    s.accept([1e-6, 1e-6], [0.7, 0.2], ids=[3, 1])      # pair 3: its last rate 2.0; pair 1: the trial 0.2
    np.testing.assert_allclose(s.speed, [0.0, 0.2, 0.0, 2.0, 0.0])
    assert np.isnan(s.last_rate[[0, 2, 4]]).all()
    v = s.trial([1e-6], [0.25], ids=[4])                 # pair 4's old rate 3.0 was forgotten
    np.testing.assert_allclose(v, [0.25])
    with pytest.raises(ModelError, match="pair ids"):
        s.trial([1.0], [1.0], ids=[5])
    with pytest.raises(ModelError, match="pass ids"):
        s.trial([1.0, 1.0], [1.0, 1.0])


def test_approach_speeds_feed_the_laws_vectorized():
    """One call over all pairs: the law takes the array the state hands it."""
    s = ApproachSpeeds(4)
    s.start(-np.ones(4), [1.0, 2.0, 3.0, 4.0])
    d, dd = np.array([1e-5, 2e-5, -1e-5, 3e-5]), np.array([0.9, 1.5, 3.0, -1.0])
    F = LankaraniNikravesh(1e9, 0.8).force(d, dd, s.trial(d, dd))[0]
    ref = 1e9 * np.maximum(d, 0) ** 1.5 * (1 + 0.75 * 0.36 * dd / np.array([1.0, 2.0, 1.0, 4.0]))
    np.testing.assert_allclose(F, np.where(d > 0, ref, 0.0))


# ---- achieved restitution ------------------------------------------------------------------------------------

@pytest.mark.parametrize("cls", HYST)
@pytest.mark.parametrize("e", [0.1, 0.5, 0.9])
def test_ode_matches_analytic_prediction(cls, e):
    law = cls(5e9, e, n=1.5)
    assert achieved_restitution(law, 0.2, 1.3) == pytest.approx(predicted_restitution(law), abs=1e-7)


def test_hysteresis_restitution_independent_of_mass_speed_stiffness_exponent():
    ref = hysteresis_restitution(LankaraniNikravesh.hysteresis_factor(0.4))
    for K, n, m, v in [(1e6, 1.0, 5.0, 0.1), (2e10, 1.5, 0.01, 7.0), (3e4, 2.5, 1.0, 0.5)]:
        assert achieved_restitution(LankaraniNikravesh(K, 0.4, n=n), m, v) == pytest.approx(ref, abs=1e-7)


@pytest.mark.parametrize("calibration", ["clamped", "kelvin-voigt"])
@pytest.mark.parametrize("e", [0.05, 0.3, 0.8])
def test_linear_law_ode_matches_closed_form(e, calibration):
    law = LinearSpringDamper(2e5, e, 0.5, calibration=calibration)
    for m in (0.5, 2.0):                     # another mass than the calibration one: another zeta
        assert achieved_restitution(law, m, 0.8) == pytest.approx(predicted_restitution(law, m), abs=1e-7)
    if calibration == "clamped":
        assert predicted_restitution(law) == pytest.approx(e, rel=1e-10)


def test_exact_hysteresis_factor_round_trip():
    for e in (0.02, 0.3, 0.77, 0.999):
        assert hysteresis_restitution(exact_hysteresis_factor(e)) == pytest.approx(e, rel=1e-10)
    assert exact_hysteresis_factor(0.999) == pytest.approx(1.5 * 0.001, rel=2e-3)     # Hunt-Crossley limit

    class Exact(HysteresisLaw):                       # a user-defined calibration through the subclass hook
        name = "exact"
        _allow_zero_e = False
        hysteresis_factor = staticmethod(exact_hysteresis_factor)

    for e in (0.1, 0.6):
        assert achieved_restitution(Exact(1e9, e), 0.5, 3.0) == pytest.approx(e, abs=1e-7)


def test_restitution_table_trends():
    t = restitution_table()
    e = t["e"]
    ln, hc, fl = t["Lankarani-Nikravesh"], t["Hunt-Crossley"], t["Flores"]
    near1 = e >= 0.9
    # LN reproduces e near 1 (within 1.5 %), not below: +13.7 % at e = 0.7, +45 % at 0.5, and it never
    # restitutes less than 0.6629 whatever e (its h(e) = 3(1 - e^2)/4 is bounded by 3/4).
    assert (np.abs(ln[near1] / e[near1] - 1) < 0.015).all()
    assert ln[e == 0.7][0] / 0.7 - 1 > 0.13 and ln[e == 0.5][0] / 0.5 - 1 > 0.44
    assert (ln > 0.6629).all() and (ln >= e - 1e-12).all()
    assert hysteresis_restitution(0.75) == pytest.approx(0.66296, abs=1e-5)          # LN at e = 0
    # Hunt-Crossley (linearized calibration): within 1.1 % for e >= 0.9; floor 0.488 at e = 0
    assert (np.abs(hc[near1] / e[near1] - 1) < 0.011).all() and (hc >= e - 1e-12).all()
    assert hysteresis_restitution(1.5) == pytest.approx(0.48774, abs=1e-5)
    # Flores: within 0.045 of e over the whole range, slightly below e, within 6 % for e >= 0.5
    assert (np.abs(fl - e) < 0.045).all() and (fl <= e + 1e-12).all()
    assert (np.abs(fl[e >= 0.5] / e[e >= 0.5] - 1) < 0.06).all()
    # all three are exact to first order at e -> 1: 1 - e_ach = (2/3) h (1 - e) ... , i.e. slope 1, 1, 16/15
    e1 = 0.9999
    for h, slope in [(0.75 * (1 - e1 ** 2), 1.0), (1.5 * (1 - e1), 1.0), (1.6 * (1 - e1) / e1, 16 / 15)]:
        assert (1 - hysteresis_restitution(h)) / (1 - e1) == pytest.approx(slope, rel=1e-3)
    # the exact and the clamped-linear calibrations reproduce e; the classical Kelvin-Voigt one overshoots
    np.testing.assert_allclose(t["exact hysteresis"][e > 0], e[e > 0], rtol=1e-10)
    np.testing.assert_allclose(t["linear (clamped calibration)"], e, rtol=1e-10)
    kv = t["linear (Kelvin-Voigt calibration)"]
    assert (kv[e < 1] > e[e < 1]).all()


def test_impact_result_is_consistent():
    law = LankaraniNikravesh(1e9, 0.6)
    r = simulate_impact(law, 0.3, 2.0)
    assert r.exit_speed == pytest.approx(2.0 * r.restitution)
    assert 0 < r.time_to_peak < r.duration
    F_at_max = law.force(r.max_penetration, 0.0, 2.0)[0]
    assert r.peak_force >= F_at_max            # with damping the peak force comes before maximum penetration
