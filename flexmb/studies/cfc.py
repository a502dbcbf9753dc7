"""Channel-frequency-class (CFC) filter of SAE J211-1 / ISO 6487 for crash-test signals.

Crash accelerations are filtered before HIC and peaks are taken: CFC 1000 for head
accelerations, CFC 180 for other body parts, CFC 60 for vehicle structure
(SAE J211-1, Instrumentation for Impact Test, Rev. Mar 1995, §1 and Appendix C; ISO 6487).
The filter is the J211-1 Appendix C digital 4-pole phaseless Butterworth: a 2-pole
low-pass run forward over the record and then backward over the result. With the
sample interval ``T`` (s)::

    wd = 2 pi CFC 2.0775            (design frequency, rad/s)
    wa = sin(wd T/2) / cos(wd T/2)  (pre-warped, bilinear transform)
    a0 = wa^2 / (1 + sqrt(2) wa + wa^2),  a1 = 2 a0,  a2 = a0
    b1 = -2 (wa^2 - 1) / (1 + sqrt(2) wa + wa^2)
    b2 = (-1 + sqrt(2) wa - wa^2) / (1 + sqrt(2) wa + wa^2)
    Y[t] = a0 X[t] + a1 X[t-1] + a2 X[t-2] + b1 Y[t-1] + b2 Y[t-2]

The two passes give the magnitude ``|H(f)| = 1 / (1 + (tan(pi f T) / wa)^4)`` (no phase),
-3 dB at ``(sqrt(2) - 1)^(1/4) 2.0775 CFC = 5/3 CFC``; the factor 2.0775 is chosen for that.
The response stays inside the J211-1 / ISO 6487 corridor (docs/guide-studies.md §2.1).
Each pass starts from the steady state of its first sample, so a record that starts at
rest shows no start-up transient (J211-1 asks for pre-event data; a constant one is assumed).
"""
from __future__ import annotations

import math

import numpy as np

from ..errors import ModelError

__all__ = ["CFC_CLASSES", "J211_FACTOR", "cfc_coefficients", "cfc_filter", "cfc_response"]

#: channel frequency classes of SAE J211-1 / ISO 6487 (Hz)
CFC_CLASSES = (60, 180, 600, 1000)

#: J211-1 Appendix C design factor: wd = 2 pi CFC J211_FACTOR
J211_FACTOR = 2.0775

_UNIFORM_RTOL = 1e-6        # sample intervals may differ by this fraction of the mean (rounding of t)


def _check_class(cfc) -> int:
    if cfc not in CFC_CLASSES:
        raise ModelError(f"cfc must be one of the SAE J211 / ISO 6487 classes {CFC_CLASSES}, got {cfc!r}")
    return int(cfc)


def _prewarped(cfc: int, dt: float) -> float:
    """``wa = tan(wd T/2)``; refused when the design frequency is not below the Nyquist frequency."""
    if not (dt > 0 and math.isfinite(dt)):
        raise ModelError(f"cfc: the sample interval must be a positive time (s), got {dt!r}")
    half_angle = math.pi * cfc * J211_FACTOR * dt
    if half_angle >= 0.5 * math.pi:
        raise ModelError(f"cfc={cfc}: the signal is sampled at {1.0 / dt:.6g} Hz, but the filter's design "
                         f"frequency {J211_FACTOR * cfc:.6g} Hz needs more than twice that "
                         f"(J211-1 recommends at least 10 x {cfc} Hz); sample more finely")
    return math.tan(half_angle)


def cfc_coefficients(cfc: int, dt: float) -> tuple[np.ndarray, np.ndarray]:
    """J211-1 Appendix C coefficients ``(a0, a1, a2)`` and ``(b1, b2)`` of one 2-pole pass
    for the class ``cfc`` (Hz) and the sample interval ``dt`` (s)."""
    wa = _prewarped(_check_class(cfc), float(dt))
    den = 1.0 + math.sqrt(2.0) * wa + wa * wa
    a0 = wa * wa / den
    b1 = -2.0 * (wa * wa - 1.0) / den
    b2 = (-1.0 + math.sqrt(2.0) * wa - wa * wa) / den
    return np.array([a0, 2.0 * a0, a0]), np.array([b1, b2])


def cfc_response(f, cfc: int, dt: float) -> np.ndarray:
    """Magnitude (1 = 0 dB) of the phaseless 4-pole filter at frequencies ``f`` (Hz):
    ``|H|^2`` of one 2-pole pass, evaluated from its coefficients on ``z = exp(2 pi i f dt)``."""
    a, b = cfc_coefficients(cfc, dt)
    z = np.exp(-2j * np.pi * np.asarray(f, dtype=float) * float(dt))      # z^-1
    h = (a[0] + a[1] * z + a[2] * z * z) / (1.0 - b[0] * z - b[1] * z * z)
    return np.abs(h) ** 2


def _pass(x: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """One 2-pole pass (the recursion above) over axis 0, started in the steady state of ``x[0]``."""
    from scipy.signal import lfilter, lfilter_zi       # lazily: scipy.signal is slow to import

    den = np.array([1.0, -b[0], -b[1]])
    zi = lfilter_zi(a, den).reshape((2,) + (1,) * (x.ndim - 1)) * x[0]
    return lfilter(a, den, x, axis=0, zi=zi)[0]


def _sample_interval(t, n: int) -> float:
    t = np.asarray(t, dtype=float)
    if t.shape != (n,) or n < 2:
        raise ModelError(f"cfc: t has shape {t.shape}, the signal has {n} samples (at least 2 needed)")
    steps = np.diff(t)
    dt = float(steps.mean())
    if not np.all(np.isfinite(t)) or not dt > 0 or np.max(np.abs(steps - dt)) > _UNIFORM_RTOL * dt:
        raise ModelError(f"cfc: the CFC filter needs uniformly sampled data; sample intervals range from "
                         f"{steps.min():.6g} to {steps.max():.6g} s (save results at a fixed output step)")
    return dt


def cfc_filter(t, x, cfc: int) -> np.ndarray:
    """``x`` (n,) or (n, k), sampled at the uniform times ``t`` (s), filtered with the SAE J211-1
    channel frequency class ``cfc`` (60, 180, 600 or 1000 Hz): the 2-pole Butterworth pass of
    Appendix C forward, then backward (phaseless, 4-pole). Columns are filtered separately --
    filter acceleration components before taking their resultant."""
    x = np.asarray(x, dtype=float)
    if x.ndim not in (1, 2) or x.shape[0] == 0 or not np.all(np.isfinite(x)):
        raise ModelError(f"cfc: expected a finite series (n,) or (n, k), got shape {x.shape}")
    a, b = cfc_coefficients(cfc, _sample_interval(t, x.shape[0]))
    forward = _pass(x, a, b)
    return _pass(forward[::-1], a, b)[::-1].copy()
