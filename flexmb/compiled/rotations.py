"""Euler-parameter rotation algebra for compiled kernels, one instance per call.

The same formulas as :mod:`flexmb.rotations` (Nikravesh, *Computer-Aided Analysis of Mechanical
Systems*, 1988, §6.3-6.4; Haug, *Computer-Aided Kinematics and Dynamics*, 1989, §9), written
element by element for ``numba``: ``p = (e0, e1, e2, e3)`` scalar first,

* ``A(p) = (2 e0^2 - 1) I + 2 (e e^T + e0 e~)``,
* ``B(p, u) = d(A(p) u)/dp`` (3x4),
* ``Q(w, u)`` with ``w . A(p) u = p^T Q p - w . u`` (so ``d2(w . A u)/dp2 = 2 Q``),
* ``E(p) = [-e, e~ + e0 I]``, ``G(p) = [-e, -e~ + e0 I]`` (``omega = 2 E p_dot``, body ``2 G p_dot``),
* ``second_rate(pd, u) = pd^T (d2 A u/dp2) pd`` (independent of p).

Each function takes its inputs as 1-D arrays (or scalars) and writes into a caller-provided output,
so that a kernel can keep its temporaries in small preallocated arrays.
"""
from __future__ import annotations

from numba import njit


@njit(cache=True, inline="always")
def rotation_matrix(p, out):
    """``out[3, 3] = A(p)``."""
    e0, e1, e2, e3 = p[0], p[1], p[2], p[3]
    d = 2.0 * e0 * e0 - 1.0
    out[0, 0] = d + 2.0 * e1 * e1
    out[1, 1] = d + 2.0 * e2 * e2
    out[2, 2] = d + 2.0 * e3 * e3
    out[0, 1] = 2.0 * (e1 * e2 - e0 * e3)
    out[1, 0] = 2.0 * (e1 * e2 + e0 * e3)
    out[0, 2] = 2.0 * (e1 * e3 + e0 * e2)
    out[2, 0] = 2.0 * (e1 * e3 - e0 * e2)
    out[1, 2] = 2.0 * (e2 * e3 - e0 * e1)
    out[2, 1] = 2.0 * (e2 * e3 + e0 * e1)


@njit(cache=True, inline="always")
def jacobian_B(p, u, out):
    """``out[3, 4] = B(p, u) = d(A(p) u)/dp`` (Nikravesh eq. 6.57 form)."""
    e0, e1, e2, e3 = p[0], p[1], p[2], p[3]
    u1, u2, u3 = u[0], u[1], u[2]
    eu = e1 * u1 + e2 * u2 + e3 * u3
    out[0, 0] = 2.0 * (2.0 * e0 * u1 + e2 * u3 - e3 * u2)
    out[1, 0] = 2.0 * (2.0 * e0 * u2 + e3 * u1 - e1 * u3)
    out[2, 0] = 2.0 * (2.0 * e0 * u3 + e1 * u2 - e2 * u1)
    out[0, 1] = 2.0 * (e1 * u1 + eu)
    out[0, 2] = 2.0 * (e1 * u2 + e0 * u3)
    out[0, 3] = 2.0 * (e1 * u3 - e0 * u2)
    out[1, 1] = 2.0 * (e2 * u1 - e0 * u3)
    out[1, 2] = 2.0 * (e2 * u2 + eu)
    out[1, 3] = 2.0 * (e2 * u3 + e0 * u1)
    out[2, 1] = 2.0 * (e3 * u1 + e0 * u2)
    out[2, 2] = 2.0 * (e3 * u2 - e0 * u1)
    out[2, 3] = 2.0 * (e3 * u3 + eu)


@njit(cache=True, inline="always")
def quadratic_Q(w, u, out):
    """``out[4, 4] = Q(w, u)``: ``[[2 w.u, (u x w)^T], [u x w, w u^T + u w^T]]``."""
    out[0, 0] = 2.0 * (w[0] * u[0] + w[1] * u[1] + w[2] * u[2])
    c0 = u[1] * w[2] - u[2] * w[1]
    c1 = u[2] * w[0] - u[0] * w[2]
    c2 = u[0] * w[1] - u[1] * w[0]
    out[0, 1] = c0
    out[0, 2] = c1
    out[0, 3] = c2
    out[1, 0] = c0
    out[2, 0] = c1
    out[3, 0] = c2
    for a in range(3):
        for b in range(3):
            out[1 + a, 1 + b] = w[a] * u[b] + u[a] * w[b]


@njit(cache=True, inline="always")
def matrix_E(p, out):
    """``out[3, 4] = E(p) = [-e, e~ + e0 I]`` (``omega = 2 E p_dot``, global components)."""
    e0, e1, e2, e3 = p[0], p[1], p[2], p[3]
    out[0, 0] = -e1
    out[1, 0] = -e2
    out[2, 0] = -e3
    out[0, 1] = e0
    out[0, 2] = -e3
    out[0, 3] = e2
    out[1, 1] = e3
    out[1, 2] = e0
    out[1, 3] = -e1
    out[2, 1] = -e2
    out[2, 2] = e1
    out[2, 3] = e0


@njit(cache=True, inline="always")
def matrix_G(p, out):
    """``out[3, 4] = G(p) = [-e, -e~ + e0 I]`` (``omega' = 2 G p_dot``, body components)."""
    e0, e1, e2, e3 = p[0], p[1], p[2], p[3]
    out[0, 0] = -e1
    out[1, 0] = -e2
    out[2, 0] = -e3
    out[0, 1] = e0
    out[0, 2] = e3
    out[0, 3] = -e2
    out[1, 1] = -e3
    out[1, 2] = e0
    out[1, 3] = e1
    out[2, 1] = e2
    out[2, 2] = -e1
    out[2, 3] = e0


@njit(cache=True, inline="always")
def second_rate(pd, u, out):
    """``out[3] = pd^T (d2 (A(p) u)/dp2) pd = 4 (e0d^2 u + ed (ed . u) + e0d ed x u)``: ``A(p) + I`` is a
    homogeneous quadratic form in p, so this second directional derivative does not depend on p."""
    d0, d1, d2, d3 = pd[0], pd[1], pd[2], pd[3]
    eu = d1 * u[0] + d2 * u[1] + d3 * u[2]
    c0 = d2 * u[2] - d3 * u[1]
    c1 = d3 * u[0] - d1 * u[2]
    c2 = d1 * u[1] - d2 * u[0]
    out[0] = 4.0 * (d0 * d0 * u[0] + d1 * eu + d0 * c0)
    out[1] = 4.0 * (d0 * d0 * u[1] + d2 * eu + d0 * c1)
    out[2] = 4.0 * (d0 * d0 * u[2] + d3 * eu + d0 * c2)
