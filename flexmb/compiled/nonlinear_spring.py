"""Compiled nonlinear spring-dampers: a piecewise-linear force law of the elongation along the line of two points.

The law of each instance (flexmb/forces/nonlinear_spring.py ``NonlinearSpring``; docs/theory.md §3.3) is a table
``(x_k, F_k)``, k = 0..m-1, of elongations ``x_k`` (m, strictly increasing) and tension forces ``F_k`` (N),
interpolated linearly and extrapolated with the end segments' slopes, plus linear damping ``c`` (N s/m):

    f = F(e) + c e_dot,     e = |d| - L0,     Q = -f grad |d|,
    V(e) = int_0^e F(s) ds  (exact: the trapezoid of each segment),     P_diss = -c e_dot^2,

on the ``LENGTH`` measure of flexmb/compiled/measures.py (``measure_one``), with the residual and blocks of
``scalar_force_one`` (``f_x = F'(e)``, the slope of the segment holding ``e``; ``f_xd = c``). At a breakpoint the
slope of the segment to its right is taken (the law is continuous; its derivative jumps there).

The tables of a group's instances are concatenated: instance i owns ``xs[at[i]:at[i] + size[i]]`` and the same
range of ``Fs``.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from . import pairs as kp
from .measures import BAD_LENGTH, LENGTH, measure_one, scalar_force_one, workspace

__all__ = ["segment", "table_force", "table_energy", "spring_kernel", "spring_power", "spring_energy"]


@njit(cache=True)
def segment(xs, e):
    """Index k of the segment ``[xs[k], xs[k+1]]`` that holds (or, beyond the table, extends to) ``e``: 0 left of
    ``xs[1]``, m - 2 right of ``xs[m-2]``; a breakpoint belongs to the segment on its right (binary search)."""
    lo, hi = 0, xs.size - 2
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if xs[mid] <= e:
            lo = mid
        else:
            hi = mid - 1
    return lo


@njit(cache=True)
def table_force(xs, Fs, e):
    """The force ``F(e)`` (N) of the table and its slope ``F'(e)`` (N/m) at the elongation ``e`` (m)."""
    k = segment(xs, e)
    slope = (Fs[k + 1] - Fs[k]) / (xs[k + 1] - xs[k])
    return Fs[k] + slope * (e - xs[k]), slope


@njit(cache=True)
def _antiderivative(xs, Fs, e):
    """``int_{xs[0]}^{e} F(s) ds`` (J) of the piecewise-linear law with its end extrapolations, exactly: the
    trapezoids of the whole segments left of ``e``, then the part of the segment that holds ``e``."""
    k = segment(xs, e)
    G = 0.0
    for j in range(k):
        G += 0.5 * (Fs[j] + Fs[j + 1]) * (xs[j + 1] - xs[j])
    d = e - xs[k]
    slope = (Fs[k + 1] - Fs[k]) / (xs[k + 1] - xs[k])
    return G + Fs[k] * d + 0.5 * slope * d * d


@njit(cache=True)
def table_energy(xs, Fs, e):
    """The stored energy ``V(e) = int_0^e F(s) ds`` (J) of the law at the elongation ``e`` (m)."""
    return _antiderivative(xs, Fs, e) - _antiderivative(xs, Fs, 0.0)


@njit(cache=True)
def spring_kernel(qe, ve, gather, vec, shp, sides, mi, mj, x0, c, at, size, xs, Fs, cK, cC, want_blocks, x, xd, r,
                  blk):
    """Every instance of a group (module docstring): lengths ``x`` (m) and rates ``xd`` (m/s) (n,), residual ``r``
    (n, nx) and, when ``want_blocks``, the blocks ``cK dr/dq + cC dr/dq_dot`` ``blk`` (n, nx, nx). Returns the first
    instance whose points coincide (no direction), or -1."""
    n, nx = gather.shape
    w = workspace(nx)
    xq = np.empty(nx)
    xv = np.empty(nx)
    g = np.empty(nx)
    hv = np.empty(nx)
    H = np.empty((nx, nx))
    hess = want_blocks and cK != 0.0
    code = np.int64(LENGTH)     # no literal (docs/architecture.md §2)
    for i in range(n):
        kp.pair_state(qe, ve, gather[i], xq, xv)
        x[i], xd[i] = measure_one(code, xq, xv, vec[i], shp[i], sides, mi, mj, 0.0, hess, g, H, w)
        if x[i] < BAD_LENGTH:
            return i
        F, dF = table_force(xs[at[i]:at[i] + size[i]], Fs[at[i]:at[i] + size[i]], x[i] - x0[i])
        scalar_force_one(g, H, xv, F + c[i] * xd[i], dF, c[i], cK if hess else 0.0, cC, want_blocks, r[i],
                         blk[i] if want_blocks else H, hv)
    return -1


@njit(cache=True)
def spring_power(xd, c):
    """Damper power ``-sum c e_dot^2`` (W, <= 0) at the length rates ``xd`` (m/s)."""
    P = 0.0
    for i in range(xd.size):
        P -= c[i] * xd[i] * xd[i]
    return P


@njit(cache=True)
def spring_energy(x, x0, at, size, xs, Fs):
    """Stored energy ``sum V(x - x0)`` (J) of the instances at the lengths ``x`` (m)."""
    V = 0.0
    for i in range(x.size):
        V += table_energy(xs[at[i]:at[i] + size[i]], Fs[at[i]:at[i] + size[i]], x[i] - x0[i])
    return V
