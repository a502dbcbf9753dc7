"""Head Injury Criterion, exact on the piecewise-linear signal.

    HIC = max over t0 <= t1 < t2 <= tn, t2 - t1 <= W of  f(t1, t2) = D^2.5 / L^1.5,
    D = int_t1^t2 a dt,  L = t2 - t1

(``a`` the resultant acceleration in g; FMVSS No. 208, 49 CFR 571.208 S6.2, W = 15 or
36 ms). The signal is the linear interpolant of the samples; on a segment ``k``
``a = a_k + s_k (tau - t_k)`` and its integral ``V`` is piecewise quadratic and C1, so
``f`` is C1 and its maximum is one of (docs/guide-studies.md §2):

* a pair of samples (scanned at every lag, vectorized: O(n w));
* one end at a sample, the other where df/dt = 0 inside a segment:
  ``a(t2) = 0.6 D/L`` (or ``a(t1) = 0.6 D/L``) -- a quadratic in the free end;
* both ends inside segments with ``a(t1) = a(t2) = 0.6 D/L`` -- with ``a(t1) = a(t2)``
  one end is linear in the other, leaving a quadratic;
* on the window ``L = W``: ``a(t1 + W) = a(t1)`` (linear) or where an end meets a sample.

Only the segment pairs whose upper bound ``min(L_max amax^2.5, D_max^2.5 / L_min^1.5)``
reaches the best sample pair are solved, and every candidate is evaluated by the
exact integral, so the result is the exact maximum up to rounding.
"""
from __future__ import annotations

import math
from collections import namedtuple

import numpy as np

__all__ = ["HICResult", "hic_exact"]

HICResult = namedtuple("HICResult", "value t1 t2")
HICResult.__doc__ = "HIC value and the window [t1, t2] (s) that maximises it."


class _Signal:
    def __init__(self, t, a):
        self.t, self.a = t, a
        self.h = np.diff(t)
        self.s = np.divide(np.diff(a), self.h, out=np.zeros(t.size - 1), where=self.h > 0)
        self.V = np.concatenate([[0.0], np.cumsum(0.5 * (a[1:] + a[:-1]) * self.h)])

    def integral(self, tau):
        """Exact integral from t[0] to tau (array)."""
        k = np.clip(np.searchsorted(self.t, tau, side="right") - 1, 0, self.t.size - 2)
        d = tau - self.t[k]
        return self.V[k] + self.a[k] * d + 0.5 * self.s[k] * d * d

    def best(self, t1, t2, W):
        """Largest f over candidate pairs (arrays), feasible ones only: (value, t1, t2)."""
        t1, t2 = np.asarray(t1, dtype=float).ravel(), np.asarray(t2, dtype=float).ravel()
        lo, hi = self.t[0], self.t[-1]
        tol = 1e-12 * (hi - lo)                   # rounding of t +- W at the ends of the record
        t1 = np.where((t1 < lo) & (t1 > lo - tol), lo, t1)
        t2 = np.where((t2 > hi) & (t2 < hi + tol), hi, t2)
        L = t2 - t1
        ok = (np.isfinite(t1) & np.isfinite(t2) & (t1 >= self.t[0]) & (t2 <= self.t[-1]) & (L > 0)
              & (L <= W * (1 + 1e-12)))
        if not ok.any():
            return 0.0, math.nan, math.nan
        t1, t2, L = t1[ok], t2[ok], L[ok]
        D = self.integral(t2) - self.integral(t1)
        pos = D > 0
        if not pos.any():
            return 0.0, math.nan, math.nan
        val = np.where(pos, np.maximum(D, 0.0) ** 2.5 / L ** 1.5, 0.0)
        i = int(np.argmax(val))
        return float(val[i]), float(t1[i]), float(t2[i])


def _roots(A2, A1, A0):
    """Real roots of A2 x^2 + A1 x + A0 = 0 (elementwise; linear when A2 = 0): two arrays, NaN if none."""
    A2, A1, A0 = np.broadcast_arrays(*(np.asarray(x, dtype=float) for x in (A2, A1, A0)))
    r1 = np.full(A2.shape, np.nan)
    r2 = np.full(A2.shape, np.nan)
    scale = np.abs(A2) + np.abs(A1) + np.abs(A0)
    quad = np.abs(A2) > 1e-14 * scale
    disc = A1 * A1 - 4 * A2 * A0
    q_ok = quad & (disc >= 0)
    if q_ok.any():
        sq = np.sqrt(disc[q_ok])
        qq = -0.5 * (A1[q_ok] + np.copysign(sq, A1[q_ok]))      # stable form
        with np.errstate(divide="ignore", invalid="ignore"):
            r1[q_ok] = qq / A2[q_ok]
            r2[q_ok] = np.where(qq != 0, A0[q_ok] / qq, np.nan)
    lin = ~quad & (np.abs(A1) > 1e-14 * scale)
    r1[lin] = -A0[lin] / A1[lin]
    return r1, r2


def _sample_scan(sig: _Signal, W: float, kmax: int):
    """Best pair of samples ``(value, i, j)``, and per lag k = 0..kmax the largest rise
    ``max_i V[i+k] - V[i]`` and the shortest span ``min_i t[i+k] - t[i]`` (for pruning)."""
    t, V = sig.t, sig.V
    best, bi, bj = 0.0, 0, 0
    rise = np.zeros(kmax + 1)
    span = np.zeros(kmax + 1)
    h = float(sig.h.mean())
    uniform = bool(np.all(np.abs(sig.h - h) <= 1e-9 * h))
    for k in range(1, kmax + 1):
        dv = V[k:] - V[:-k]
        if uniform:      # L = k h at lag k: only the largest rise of V matters
            i = int(np.argmax(dv))
            rise[k], span[k] = dv[i], k * h
            if dv[i] > 0 and k * h <= W * (1 + 1e-9):
                val = float(dv[i]) ** 2.5 / (k * h) ** 1.5
                if val > best:
                    best, bi, bj = val, i, i + k
            continue
        dt = t[k:] - t[:-k]
        i = int(np.argmax(dv))
        rise[k], span[k] = dv[i], dt.min()
        if dv[i] > 0 and 0 < dt[i] <= W * (1 + 1e-9):     # a quick lower bound for the pruning below
            val = float(dv[i]) ** 2.5 / float(dt[i]) ** 1.5
            if val > best:
                best, bi, bj = val, i, i + k
    if not uniform:
        # every pair of the lags whose bound (largest rise, shortest span) can beat the best
        for k in range(1, kmax + 1):
            if rise[k] <= 0 or span[k] > W * (1 + 1e-9) or (
                    span[k] > 0 and rise[k] ** 2.5 / span[k] ** 1.5 <= best):
                continue
            dv = V[k:] - V[:-k]
            dt = t[k:] - t[:-k]
            ok = (dt > 0) & (dt <= W * (1 + 1e-9)) & (dv > 0)
            if not ok.any():
                continue
            val = np.zeros_like(dt)
            val[ok] = dv[ok] ** 2.5 / dt[ok] ** 1.5
            i = int(np.argmax(val))
            if val[i] > best:
                best, bi, bj = float(val[i]), i, i + k
    return best, bi, bj, rise, span


def _segment_pairs(sig: _Signal, W: float, bound: float, rise, span):
    """Segment pairs (I, J = I + k) that could hold a pair better than ``bound``.

    For t1 in segment I, t2 in segment J: ``D <= V_J - V_{I+1} + P_I + P_J`` with ``P`` the
    largest partial integral on a segment (``h max(a_k, a_k+1, 0)``) and ``L >= t_J - t_{I+1}``;
    also ``D <= L max(a)``. A whole lag is skipped when its bound from the scan's largest
    rise and shortest span (lag k - 1) stays below ``bound``; then pair by pair."""
    t, a, h, V = sig.t, sig.a, sig.h, sig.V
    m = h.size
    P = h * np.maximum(np.maximum(a[:-1], a[1:]), 0.0)
    P_max = float(P.max())
    a_top = max(float(a.max()), 0.0) ** 2.5
    target = bound * (1 - 1e-9)
    Is, Js = [], []
    for k in range(0, min(m, rise.size + 1)):
        if k >= 2:
            if span[k - 1] > W:
                break
            d_max = rise[k - 1] + 2.0 * P_max
            ub_lag = 0.0 if d_max <= 0 else (math.inf if span[k - 1] <= 0 else d_max ** 2.5 / span[k - 1] ** 1.5)
            if min(ub_lag, W * a_top) < target:
                continue
        I = np.arange(m - k)
        if k < 2:        # short pairs: L can vanish, bound by L max(a)
            J = I + k
            keep = np.minimum(W, t[J + 1] - t[I]) * a_top >= target
        else:            # D_max^2.5 / L_min^1.5 >= target, as D_max^5 >= target^2 L_min^3
            L_min = t[k:m] - t[1:m - k + 1]
            D_max = V[k:m] - V[1:m - k + 1] + P[:m - k] + P[k:m]
            D2 = D_max * D_max
            keep = (D_max > 0) & (L_min <= W) & (D2 * D2 * D_max >= (target * target) * (L_min * L_min * L_min))
            J = I + k
        if keep.any():
            Is.append(I[keep])
            Js.append(J[keep])
    if not Is:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    return np.concatenate(Is), np.concatenate(Js)


def _continuous(sig: _Signal, W: float, I, J):
    """Candidate pairs (t1, t2) from the stationarity conditions on segment pairs (I, J)."""
    t, a, s, V = sig.t, sig.a, sig.s, sig.V
    c1, c2 = [], []
    # t1 at a sample i (the ends of segment I), t2 inside J with a(t2) = 0.6 D/L:
    # 0.7 s_J y^2 + (0.4 a_J + s_J L0) y + (a_J L0 - 0.6 D0) = 0, y = t2 - t_J
    for i in (I, I + 1):
        L0 = t[J] - t[i]
        D0 = V[J] - V[i]
        for y in _roots(0.7 * s[J], 0.4 * a[J] + s[J] * L0, a[J] * L0 - 0.6 * D0):
            c1.append(t[i])
            c2.append(t[J] + y)
    # t2 at a sample j (the ends of segment J), t1 inside I with a(t1) = 0.6 D/L:
    # -0.7 s_I x^2 + (s_I L0 - 0.4 a_I) x + (a_I L0 - 0.6 D0) = 0, x = t1 - t_I
    for j in (J, J + 1):
        L0 = t[j] - t[I]
        D0 = V[j] - V[I]
        for x in _roots(-0.7 * s[I], s[I] * L0 - 0.4 * a[I], a[I] * L0 - 0.6 * D0):
            c1.append(t[I] + x)
            c2.append(t[j])
    # both inside, a(t1) = a(t2) = c = 0.6 D/L: write the end on the steeper segment as a
    # linear function of the other (no division by a small slope) and solve the quadratic
    inner = I < J
    Ii, Ji = I[inner], J[inner]
    sI, sJ, aI, aJ = s[Ii], s[Ji], a[Ii], a[Ji]
    dV, dt = V[Ji] - V[Ii], t[Ji] - t[Ii]
    steep_I = np.abs(sI) >= np.abs(sJ)
    with np.errstate(divide="ignore", invalid="ignore"):
        # x = al + be y (|s_I| >= |s_J|): a_I + s_I x = a_J + s_J y
        al, be = (aJ - aI) / sI, sJ / sI
        L0, L1 = dt - al, 1.0 - be
        A2 = 0.5 * sJ - 0.5 * sI * be * be - sJ * L1 / 0.6
        A1 = aJ - aI * be - sI * al * be - (aJ * L1 + sJ * L0) / 0.6
        A0 = dV - aI * al - 0.5 * sI * al * al - aJ * L0 / 0.6
        ya, yb = _roots(A2, A1, A0)
        # y = al2 + be2 x (|s_J| > |s_I|)
        al2, be2 = (aI - aJ) / sJ, sI / sJ
        M0, M1 = dt + al2, be2 - 1.0          # L = t_J + y - t_I - x
        B2 = 0.5 * sJ * be2 * be2 - 0.5 * sI - sI * M1 / 0.6
        B1 = aJ * be2 + sJ * al2 * be2 - aI - (aI * M1 + sI * M0) / 0.6
        B0 = dV + aJ * al2 + 0.5 * sJ * al2 * al2 - aI * M0 / 0.6
        xa, xb = _roots(B2, B1, B0)
    flat = (sI == 0) & (sJ == 0)
    for y, x in ((ya, xa), (yb, xb)):
        x_from_y = al + be * y
        y_from_x = al2 + be2 * x
        xx = np.where(steep_I, x_from_y, x)
        yy = np.where(steep_I, y, y_from_x)
        xx[flat] = np.nan
        c1.append(t[Ii] + xx)
        c2.append(t[Ji] + yy)
    # on the window L = W: a(t1 + W) = a(t1) inside the pair, and where an end meets a sample
    with np.errstate(divide="ignore", invalid="ignore"):
        x = np.where(s[J] != s[I], (a[I] - a[J] - s[J] * (t[I] + W - t[J])) / (s[J] - s[I]), np.nan)
    for t1 in (t[I] + x, t[I], t[I + 1], t[J] - W, t[J + 1] - W):
        c1.append(t1)
        c2.append(t1 + W)
    return np.concatenate([np.ravel(c) for c in c1]), np.concatenate([np.ravel(c) for c in c2])


def hic_exact(t: np.ndarray, a: np.ndarray, W: float, continuous: bool = True) -> HICResult:
    """HIC of validated arrays (see :func:`flexmb.studies.metrics.hic`)."""
    n = a.size
    if n < 2 or t[-1] <= t[0]:
        return HICResult(0.0, float(t[0]), float(t[0]))
    sig = _Signal(t, a)
    reach = np.searchsorted(t, t + W * (1 + 1e-9), side="right") - 1 - np.arange(n)
    kmax = min(int(reach.max()) + 1, n - 1)       # one lag beyond the window, for the bounds
    best, i, j, rise, span = _sample_scan(sig, W, kmax)
    t1, t2 = float(t[i]), float(t[j])
    if continuous:
        I, J = _segment_pairs(sig, W, best, rise, span)
        if I.size:
            v, s1, s2 = sig.best(*_continuous(sig, W, I, J), W)
            if v > best:
                best, t1, t2 = v, s1, s2
    if best <= 0.0:
        return HICResult(0.0, float(t[0]), float(t[0]))
    return HICResult(float(best), t1, t2)
