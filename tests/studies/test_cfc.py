"""SAE J211-1 / ISO 6487 channel-frequency-class filter (flexmb/studies/cfc.py) and its use by
the HIC and peak metrics."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.signal import butter

import flexmb as fm
from flexmb.errors import ModelError
from flexmb.studies import metrics as mt
from flexmb.studies.cfc import CFC_CLASSES, J211_FACTOR, cfc_coefficients, cfc_filter, cfc_response


def _db(x):
    return 20.0 * np.log10(x)


@pytest.mark.parametrize("cfc", CFC_CLASSES)
@pytest.mark.parametrize("fs", [10_000.0, 20_000.0])
def test_coefficients_are_the_bilinear_butterworth(cfc, fs):
    """Appendix C coefficients = scipy's 2nd-order Butterworth at 2.0775 CFC (bilinear, pre-warped),
    an independent derivation; and |H| = 1/(1 + (tan(pi f T)/wa)^4) for the two passes."""
    a, b = cfc_coefficients(cfc, 1.0 / fs)
    num, den = butter(2, J211_FACTOR * cfc, fs=fs)
    np.testing.assert_allclose(a, num, rtol=1e-12)
    np.testing.assert_allclose([1.0, -b[0], -b[1]], den, rtol=1e-12, atol=1e-15)
    f = np.linspace(1.0, 0.45 * fs, 50)
    wa = np.tan(np.pi * J211_FACTOR * cfc / fs)
    np.testing.assert_allclose(cfc_response(f, cfc, 1.0 / fs), 1.0 / (1.0 + (np.tan(np.pi * f / fs) / wa) ** 4),
                               rtol=1e-10)


@pytest.mark.parametrize("cfc", CFC_CLASSES)
@pytest.mark.parametrize("fs", [10_000.0, 20_000.0])
def test_response_inside_the_j211_corridor(cfc, fs):
    """SAE J211-1 Figure 1 / ISO 6487: F_H = CFC, F_N = 1.65 CFC; +-0.5 dB from 0.1 Hz to F_H,
    +0.5/-1 dB at F_H, +0.5/-4 dB at F_N, above F_N at most +0.5 dB - 9 dB per octave (not below
    the -30 dB floor of the upper limit)."""
    dt = 1.0 / fs
    f_h, f_n = float(cfc), 1.65 * cfc
    passband = _db(cfc_response(np.geomspace(0.1, f_h, 200), cfc, dt))
    assert np.all(np.abs(passband) <= 0.5)
    assert -1.0 <= _db(cfc_response(f_h, cfc, dt)) <= 0.5
    assert -4.0 <= _db(cfc_response(f_n, cfc, dt)) <= 0.5
    f = np.geomspace(f_n, 0.45 * fs, 200)
    upper = np.maximum(0.5 - 9.0 * np.log2(f / f_n), -30.0)
    assert np.all(_db(cfc_response(f, cfc, dt)) <= upper)


def test_minus_3_db_at_five_thirds_cfc():
    """The factor 2.0775 puts -3 dB of the 4-pole filter at 5/3 CFC (analogue limit, fine sampling)."""
    assert abs(_db(cfc_response(1000.0 * 5.0 / 3.0, 1000, 1e-7)) - _db(0.5 ** 0.5)) < 1e-3


@pytest.mark.parametrize("cfc, f, low, high", [(1000, 100.0, 0.9999, 1.0), (180, 10.0, 0.9999, 1.0),
                                               (1000, 5000.0, 0.0, 0.05), (60, 400.0, 0.0, 0.05)])
def test_sines_far_below_pass_and_far_above_are_attenuated_by_the_closed_form(cfc, f, low, high):
    """Away from the record's ends the output is ``|H(f)| sin(2 pi f t)``: no phase shift, the
    closed-form gain (about 1 far below the class, below 0.05 far above)."""
    fs = 20_000.0
    t = np.arange(0.0, 1.0, 1.0 / fs)
    y = cfc_filter(t, np.sin(2 * np.pi * f * t), cfc)
    wa = np.tan(np.pi * J211_FACTOR * cfc / fs)
    gain = 1.0 / (1.0 + (np.tan(np.pi * f / fs) / wa) ** 4)
    assert low <= gain <= high
    middle = slice(t.size // 4, 3 * t.size // 4)
    np.testing.assert_allclose(y[middle], gain * np.sin(2 * np.pi * f * t[middle]), rtol=0, atol=1e-4 * gain)


def test_constant_and_columns():
    t = np.arange(0.0, 0.05, 1e-4)
    np.testing.assert_allclose(cfc_filter(t, np.full(t.size, 3.0), 60), 3.0, rtol=1e-12)
    x = np.column_stack([np.sin(300 * t), np.cos(900 * t), t])
    both = cfc_filter(t, x, 180)
    for k in range(3):
        np.testing.assert_array_equal(both[:, k], cfc_filter(t, x[:, k], 180))


@pytest.mark.parametrize("args, words", [
    ((np.arange(10) * 1e-4, np.ones(10), 100), ["cfc", "(60, 180, 600, 1000)", "100"]),
    ((np.r_[0.0, 1e-4, 3e-4], np.ones(3), 60), ["uniformly sampled", "0.0001", "0.0002"]),
    ((np.arange(10) * 1e-3, np.ones(10), 1000), ["cfc=1000", "1000 Hz", "2077.5 Hz"]),
    ((np.arange(3) * 1e-4, np.ones(4), 60), ["t has shape (3,)", "4 samples"]),
])
def test_refusals_name_the_value(args, words):
    with pytest.raises(ModelError) as info:
        cfc_filter(*args)
    for word in words:
        assert word in str(info.value)


def _head_pulse(fs=10_000.0):
    t = np.arange(0.0, 0.03, 1.0 / fs)
    clean = np.where(t < 0.01, 80.0 * np.sin(np.pi * t / 0.01), 0.0)
    return t, clean, clean + 20.0 * np.sin(2 * np.pi * 3000.0 * t)


def test_hic_and_peak_of_a_noisy_head_pulse():
    """80 g, 10 ms half-sine with 20 g of 3 kHz ringing: CFC 1000 brings the peak back near 80 g and
    HIC within 1 % of the clean pulse's (the filter also rounds the pulse itself slightly)."""
    t, clean, noisy = _head_pulse()
    reference = mt.hic(t, clean).value
    filtered = mt.hic(t, noisy, cfc=1000)
    assert abs(filtered.value - reference) < 0.01 * reference
    assert mt.peak(noisy) > 95.0 and abs(mt.peak(cfc_filter(t, noisy, 1000)) - 80.0) < 2.5
    vectors = np.column_stack([noisy, np.zeros_like(t), np.zeros_like(t)])
    assert mt.hic(t, vectors, cfc=1000).value == pytest.approx(filtered.value, rel=1e-12)


def _pad_drop():
    s = fm.System(gravity=(0, 0, -9.81))
    head = s.add(fm.RigidBody(4.5, (0.02, 0.02, 0.02), position=(0, 0, 0.05), velocity=(0, 0, -4.0), name="head"))
    s.add(fm.SpringDamper(s.ground, head, point_a=(0, 0, 0), point_b=(0, 0, 0.05), k=5e5, c=200.0))
    return s


def test_study_metrics_take_cfc():
    s = _pad_drop()
    res = fm.simulate(s, t_end=0.02, h=1e-4)
    a = mt.point_acceleration(res, "head")
    expected_peak = mt.peak(cfc_filter(res.t, a, 180)) / mt.STANDARD_GRAVITY
    assert mt.PeakAccelerationG("head", cfc=180)(res, s, {}) == pytest.approx(expected_peak, rel=1e-12)
    assert mt.peak_acceleration_g(res, "head", cfc=180) == pytest.approx(expected_peak, rel=1e-12)
    value, t1, t2 = mt.HIC("head", cfc=1000)(res, s, {})
    assert value == pytest.approx(mt.hic(res.t, cfc_filter(res.t, a, 1000) / mt.STANDARD_GRAVITY).value, rel=1e-12)
    assert value == pytest.approx(mt.HIC("head")(res, s, {}).value, rel=0.02)   # a smooth 6.6 ms pulse
