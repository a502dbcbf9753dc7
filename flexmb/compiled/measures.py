"""Compiled scalar measures of a body pair and the scalar-force Jacobian, written once.

Every two-body force element of flexmb (springs, dampers, bushings, DC motors, plastic hinges, crush
elements, contact pairs) is a scalar force law ``f(x, x_dot)`` acting along the gradient of a scalar
measure ``x(q)`` of a body pair (docs/theory.md §3.3, §4; docs/theory-contact.md §4):

    residual  r = f grad x,
    K block   d r/dq     = grad x (f_x grad x + f_xd (H v))^T + f H,
    C block   d r/dq_dot = f_xd grad x grad x^T,

with ``H`` the Hessian of ``x`` and ``f_x``, ``f_xd`` the partial derivatives of the law
(:func:`scalar_force_one`, used by the force kernels of flexmb/compiled/forces.py and the contact kernels of
flexmb/compiled/contact.py and spheres.py). Coordinates of one instance are those of :mod:`flexmb.kinematics`
(``x = (r_i, p_i, r_j, p_j, eta_i, eta_j)``, 14 + m_i + m_j columns); body-fixed vectors of flexible bodies are
affine in the modal coordinates, ``u = u0 + S eta``. The measures are built from the pair expressions of
flexmb/compiled/pairs.py (``w . A(p) u = p^T Q(w, u) p - w . u``, docs/theory.md §2):

* ``LENGTH``    ``|d|``, ``d = r_j + A_j u_j - r_i - A_i u_i`` (slots u_i, u_j);
* ``ANGLE``     ``atan2(g_i . f_j, f_i . f_j)`` unwrapped about a reference (slots f_i, g_i, f_j);
* ``AXIAL``     ``a_i . d`` (slots a_i, u_i, u_j);
* ``TWIST``     ``(g_i . f_j - f_i . g_j) / 2`` (slots f_i, g_i, f_j, g_j);
* ``CLEARANCE`` ``|e|``, ``e = d - (n . d) n``, ``n = A_i a_i`` (slots a_i, u_i, u_j), derivatives through
  ``|e|^2 = d.d - 2 (n.d)^2 + (n.d)^2 (n.n)`` and zero where ``|e|^2 <= 1e-30``
  (Flores et al., Mech. Mach. Theory 41:247, 2006; docs/theory-contact.md §6).

Kernels loop over all instances of a group and write into caller-provided arrays: ``vec`` (n, 4, 3)
body-fixed vectors per slot, ``shp`` (n, 4, 3, M) attachment shapes (M = max(m_i, m_j); zero columns
beyond a side's count), ``sides`` (4,) the body (0: i, 1: j) of each slot. ``measure_kernel`` gives values,
gradients and Hessians alone; :func:`flexmb.compiled.model.pack_measures` lays the measure groups of a model out in the table the
compiled step and the energies read.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from . import pairs as kp

LENGTH, ANGLE, AXIAL, TWIST, CLEARANCE = 0, 1, 2, 3, 4
MEASURES = {"length": LENGTH, "angle": ANGLE, "axial": AXIAL, "twist": TWIST, "clearance": CLEARANCE}
SLOTS = {LENGTH: (0, 1), ANGLE: (0, 0, 1), AXIAL: (0, 0, 1), TWIST: (0, 0, 1, 1), CLEARANCE: (0, 0, 1)}
"""Side (0: body i, 1: body j) of each body-fixed vector slot, per measure."""
BAD_LENGTH = 1e-12
"""A ``LENGTH`` measure below this (m) has no direction: the kernels report the instance."""


def sides_of(code: int) -> np.ndarray:
    """The slot sides of measure ``code`` as an int64 (4,) array (unused slots: 0)."""
    out = np.zeros(4, dtype=np.int64)
    s = SLOTS[code]
    out[:len(s)] = s
    return out


@njit(cache=True, inline="always")
def _outer(H, sc, a, b):
    """``H += sc (a b^T)``."""
    nx = H.shape[0]
    for x in range(nx):
        for y in range(nx):
            H[x, y] += sc * a[x] * b[y]


@njit(cache=True)
def measure_one(code, xq, xv, vec, shp, sides, mi, mj, ref, want_hess, g, H, w):
    """Scalar measure of one instance: returns ``(x, x_dot)``, writes the gradient ``g`` (nx) and, when
    ``want_hess``, the Hessian ``H`` (nx, nx). ``vec`` (4, 3), ``shp`` (4, 3, M) of the instance, ``ref`` the
    unwrapping reference of an ``ANGLE`` (rad). ``w`` is scratch from :func:`workspace`. A ``LENGTH`` below
    ``BAD_LENGTH`` returns ``x`` without derivatives (the caller reports it). The expressions are those of
    flexmb/compiled/pairs.py (value/gradient, weighted Hessian)."""
    i0_, i14_, i1_ = np.int64(0), np.int64(14), np.int64(1)  # no literals (docs/architecture.md §2)
    u, val, jac, wv, dval, djac, g2, g3 = w
    nx = g.shape[0]
    nslot = 2 if code == LENGTH else (4 if code == TWIST else 3)
    mcs = (14, 14 + mi)
    ms = (mi, mj)
    for c in range(nx):
        g[c] = 0.0
        g2[c] = 0.0
        g3[c] = 0.0
    if want_hess:
        for x in range(nx):
            for y in range(nx):
                H[x, y] = 0.0
    if code == LENGTH or code == AXIAL or code == CLEARANCE:      # separation d between the last two slots
        ki = nslot - 2
        for a in range(3):
            dval[a] = 0.0
            for c in range(nx):
                djac[a, c] = 0.0
        kp.separation(xq, vec[ki], shp[ki], i14_, mi, vec[ki + 1], shp[ki + 1], 14 + mi, mj, u[ki], u[ki + 1],
                      dval, djac)
        first = ki
    else:
        first = nslot
    for k in range(first):                                        # attached vectors A(p) u of the other slots
        for a in range(3):
            val[k, a] = 0.0
            for c in range(nx):
                jac[k, a, c] = 0.0
        sd = sides[k]
        kp.attached(xq, sd, vec[k], shp[k], mcs[sd], ms[sd], 1.0, u[k], val[k], jac[k])
    if code == LENGTH:
        l = math.sqrt(dval[0] * dval[0] + dval[1] * dval[1] + dval[2] * dval[2])
        if l < BAD_LENGTH:
            return l, 0.0
        value = kp.norm(dval, djac, g)
        if want_hess:      # (D^T D - g g^T) / l + d2(n . d)/dx2
            kp.norm_hess(djac, g, l, 1.0, H)
            for a in range(3):
                wv[a] = dval[a] / l
            kp.separation_hess(xq, u[0], shp[0], i14_, mi, u[1], shp[1], 14 + mi, mj, wv, H)
    elif code == AXIAL:
        value = kp.dot(val[0], jac[0], dval, djac, g)
        if want_hess:
            kp.dot_hess(jac[0], djac, 1.0, H)
            kp.attached_hess(xq, i0_, u[0], shp[0], i14_, mi, dval, 1.0, H)
            kp.separation_hess(xq, u[1], shp[1], i14_, mi, u[2], shp[2], 14 + mi, mj, val[0], H)
    elif code == TWIST:            # (g_i . f_j - f_i . g_j) / 2, slots f_i, g_i, f_j, g_j
        s1 = kp.dot(val[1], jac[1], val[2], jac[2], g2)
        s2 = kp.dot(val[0], jac[0], val[3], jac[3], g3)
        value = 0.5 * s1 - 0.5 * s2
        for c in range(nx):
            g[c] = 0.5 * g2[c] - 0.5 * g3[c]
        if want_hess:
            kp.dot_hess(jac[1], jac[2], 0.5, H)
            kp.attached_hess(xq, i0_, u[1], shp[1], i14_, mi, val[2], 0.5, H)
            kp.attached_hess(xq, i1_, u[2], shp[2], 14 + mi, mj, val[1], 0.5, H)
            kp.dot_hess(jac[0], jac[3], -0.5, H)
            kp.attached_hess(xq, i0_, u[0], shp[0], i14_, mi, val[3], -0.5, H)
            kp.attached_hess(xq, i1_, u[3], shp[3], 14 + mi, mj, val[0], -0.5, H)
    elif code == ANGLE:            # atan2(g_i . f_j, f_i . f_j), slots f_i, g_i, f_j
        s = kp.dot(val[1], jac[1], val[2], jac[2], g2)
        cs = kp.dot(val[0], jac[0], val[2], jac[2], g3)
        value = kp.angle(s, g2, cs, g3, ref, g)
        if want_hess:
            ws, wc = kp.angle_hess(s, g2, cs, g3, 1.0, H)
            kp.dot_hess(jac[1], jac[2], ws, H)
            kp.attached_hess(xq, i0_, u[1], shp[1], i14_, mi, val[2], ws, H)
            kp.attached_hess(xq, i1_, u[2], shp[2], 14 + mi, mj, val[1], ws, H)
            kp.dot_hess(jac[0], jac[2], wc, H)
            kp.attached_hess(xq, i0_, u[0], shp[0], i14_, mi, val[2], wc, H)
            kp.attached_hess(xq, i1_, u[2], shp[2], 14 + mi, mj, val[0], wc, H)
    else:                          # CLEARANCE: |e|^2 = d.d - 2 b^2 + b^2 (n.n), b = n.d, slots a_i, u_i, u_j
        n, Nj = val[0], jac[0]
        b = kp.dot(n, Nj, dval, djac, g2)          # g2 = grad b
        nn = kp.dot(n, Nj, n, Nj, g3)              # g3 = grad (n.n)
        dd = dval[0] * dval[0] + dval[1] * dval[1] + dval[2] * dval[2]
        P = b * b
        e2 = dd - 2.0 * P + P * nn
        ok = e2 > 1e-30
        f1 = 0.5 / math.sqrt(e2) if ok else 0.0
        f2 = -0.25 / math.sqrt(e2) ** 3 if ok else 0.0
        for c in range(nx):        # grad e2 = 2 D^T d + (nn - 2) 2 b grad b + P grad nn
            t = 2.0 * (dval[0] * djac[0, c] + dval[1] * djac[1, c] + dval[2] * djac[2, c])
            g[c] = t + (nn - 2.0) * 2.0 * b * g2[c] + P * g3[c]
        if want_hess:
            # f1 H_e2 + f2 g_e2 g_e2^T, H_e2 = H_dd + (nn - 2) H_P + P H_nn + gP gnn^T + gnn gP^T with
            # H_P = 2 gb gb^T + 2 b H_b (product rule, as the expression algebra of flexmb/kinematics.py)
            kp.dot_hess(djac, djac, f1, H)
            for a in range(3):
                wv[a] = 2.0 * f1 * dval[a]
            kp.separation_hess(xq, u[1], shp[1], i14_, mi, u[2], shp[2], 14 + mi, mj, wv, H)
            wb = f1 * (nn - 2.0) * 2.0 * b
            kp.dot_hess(Nj, djac, wb, H)
            kp.attached_hess(xq, i0_, u[0], shp[0], i14_, mi, dval, wb, H)
            for a in range(3):
                wv[a] = wb * n[a]
            kp.separation_hess(xq, u[1], shp[1], i14_, mi, u[2], shp[2], 14 + mi, mj, wv, H)
            _outer(H, f1 * (nn - 2.0) * 2.0, g2, g2)
            kp.dot_hess(Nj, Nj, f1 * P, H)
            for a in range(3):
                wv[a] = 2.0 * n[a]
            kp.attached_hess(xq, i0_, u[0], shp[0], i14_, mi, wv, f1 * P, H)
            _outer(H, f1 * 2.0 * b, g2, g3)
            _outer(H, f1 * 2.0 * b, g3, g2)
            _outer(H, f2, g, g)
        for c in range(nx):
            g[c] *= f1
        value = 0.0
        for a in range(3):
            t = dval[a] - b * n[a]
            value += t * t
        value = math.sqrt(value)
    rate = 0.0
    for c in range(nx):
        rate += g[c] * xv[c]
    return value, rate


@njit(cache=True)
def workspace(nx):
    """Scratch arrays of :func:`measure_one` for ``nx`` pair columns."""
    return (np.empty((4, 3)), np.empty((4, 3)), np.empty((4, 3, nx)), np.empty(3), np.empty(3), np.empty((3, nx)),
            np.empty(nx), np.empty(nx))


@njit(cache=True, inline="always")
def scalar_force_one(g, H, xv, f, f_x, f_xd, cK, cC, want_blocks, r, blk, hv):
    """The scalar-force helper for one instance: ``r = f g`` and, when ``want_blocks``,
    ``blk = cK (g (f_x g + f_xd H v)^T + f H) + cC f_xd g g^T`` (``g`` gradient, ``H`` Hessian of the
    measure -- not read when ``cK == 0`` --, ``xv`` pair velocities, ``hv`` scratch (nx,); units of
    ``f``: N or N m, ``f_x`` per m or rad, ``f_xd`` per m/s or rad/s)."""
    nx = g.shape[0]
    for a in range(nx):
        r[a] = f * g[a]
    if not want_blocks:
        return
    if cK != 0.0:
        for y in range(nx):
            t = 0.0
            for z in range(nx):
                t += H[y, z] * xv[z]
            hv[y] = cK * (f_x * g[y] + f_xd * t) + cC * f_xd * g[y]
        for a in range(nx):
            for b in range(nx):
                blk[a, b] = g[a] * hv[b] + cK * f * H[a, b]
    else:
        for a in range(nx):
            for b in range(nx):
                blk[a, b] = cC * f_xd * g[a] * g[b]


@njit(cache=True)
def measure_kernel(code, qe, ve, gather, vec, shp, sides, mi, mj, ref, want_hess, x, xd, J, H):
    """Measures of all instances: ``x``, ``xd`` (n,), gradients ``J`` (n, nx), Hessians ``H`` (n, nx, nx) when
    ``want_hess`` (else ``H`` may be (0, nx, nx)). Returns the first instance whose ``LENGTH`` has no
    direction, or -1."""
    n, nx = gather.shape
    w = workspace(nx)
    xq = np.empty(nx)
    xv = np.empty(nx)
    Hd = np.empty((nx, nx))
    for i in range(n):
        for c in range(nx):
            xq[c] = qe[gather[i, c]]
            xv[c] = ve[gather[i, c]]
        Hi = H[i] if want_hess else Hd
        x[i], xd[i] = measure_one(code, xq, xv, vec[i], shp[i], sides, mi, mj, ref[i], want_hess, J[i], Hi, w)
        if code == LENGTH and x[i] < BAD_LENGTH:
            return i
    return -1
