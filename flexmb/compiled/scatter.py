"""Compiled scatter of element contributions into the assembled arrays.

A contribution is a dense block (instances, a, b) or a vector (instances, a); the position maps
(built once, :class:`flexmb.sparsity.BlockPattern`) send each entry to its place in the residual or in
the value array of the fixed Newton-matrix pattern (-1: dropped, e.g. a column of the ground).
"""
from __future__ import annotations

from numba import njit


@njit(cache=True)
def add_at(out, positions, values):
    """``out[positions[k]] += values[k]`` for every k with ``positions[k] >= 0`` (flat arrays)."""
    for k in range(positions.size):
        i = positions[k]
        if i >= 0:
            out[i] += values[k]


@njit(cache=True)
def add_scaled_at(out, positions, values, scale):
    """``out[positions[k]] += scale * values[k]`` for every k with ``positions[k] >= 0``."""
    for k in range(positions.size):
        i = positions[k]
        if i >= 0:
            out[i] += scale * values[k]


@njit(cache=True)
def add_transpose_product(out, scatter, jac, lam, active):
    """``out[scatter] += J^T (lam * active)`` per instance: the constraint forces ``Phi_q^T lambda`` of one
    primitive group. ``jac`` (n * r, nx), ``lam``/``active`` (n * r,), ``scatter`` (n, nx), -1 = ground."""
    n, nx = scatter.shape
    if n == 0:
        return
    r = jac.shape[0] // n
    for i in range(n):
        for k in range(r):
            row = i * r + k
            if not active[row]:
                continue
            w = lam[row]
            if w == 0.0:
                continue
            for x in range(nx):
                c = scatter[i, x]
                if c >= 0:
                    out[c] += jac[row, x] * w
