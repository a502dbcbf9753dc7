"""The slider-crank suite's metrics: peaks of the midpoint deflection and the axial force over revolutions 2-3
(``WINDOW``), read the same way from flexmb's runs (cases.py) and from the assumed-modes reference
(assumed_modes.py)."""
from __future__ import annotations

import numpy as np

from . import models

WINDOW = (models.T_REV, models.T_END)


def peak(t: np.ndarray, y: np.ndarray, lo: float = WINDOW[0], hi: float = WINDOW[1], sign: float = 1.0) -> float:
    """Largest value of ``sign * y`` on [lo, hi], refined by a parabola through the largest sample
    and its neighbours (uniform sampling); returned with the sign of ``y``."""
    z = sign * np.asarray(y, dtype=float)
    idx = np.flatnonzero((t >= lo - 1e-12) & (t <= hi + 1e-12))
    i = idx[np.argmax(z[idx])]
    best = z[i]
    if 0 < i < z.size - 1:
        y0, y1, y2 = z[i - 1], z[i], z[i + 1]
        curv = y0 - 2.0 * y1 + y2
        if curv < 0.0:
            best = y1 - (y2 - y0) ** 2 / (8.0 * curv)
    return float(sign * best)


def window_metrics(t, mid, axial=None, axial_t=None) -> dict[str, float]:
    out = {"mid_defl_over_L_max": peak(t, mid), "mid_defl_over_L_min": peak(t, mid, sign=-1.0)}
    if axial is not None:
        out["axial_force_max"] = peak(t if axial_t is None else axial_t, axial)
    return out
