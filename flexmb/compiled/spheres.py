"""Compiled narrow phase of sphere clouds and point-plane contacts (flexmb/contact/mesh.py ``SphereGroup``,
``PlaneGroup``; docs/theory-contact.md §8).

:func:`candidate_kernel` evaluates every broad-phase candidate of one group in one call: its scalar measure
through :func:`flexmb.compiled.forces.measure_one`, the penetration ``delta = offset - x`` and its rate
``-x_dot``, and (``want_forces``) the normal force of its law at the trial approach speed
(:func:`~flexmb.compiled.forces.trial_speed`, ``hysteresis_one``, ``linear_one``), the residual ``-F grad x`` and,
with ``want_blocks``, the exact block ``cK (grad x (F_delta grad x + F_delta_dot H v)^T - F H) + cC F_delta_dot grad x
grad x^T`` (:func:`~flexmb.compiled.forces.scalar_force_one` with ``f = -F``; gradient and Hessian from
:func:`~flexmb.compiled.forces.measure_one`, only for the candidates with a force), summed into the body-pair slots of
the group's Newton blocks (broadphase.SlotMap: slot ``a`` of each candidate and, for a pair without a coupled slot,
also the self slot ``b`` of its second body). The measures:

* sphere-sphere: ``LENGTH``, ``x = |c_j - c_i|``, ``offset = R_i + R_j`` (slots u_i, u_j);
* point-plane: ``AXIAL``, ``x = n . (X - P)`` with ``n = A_i n'`` the plane's normal, ``P`` its point, ``X`` the
  centre on body j, ``offset = R`` (slots n', P', u_j).

Same expressions as the vectorized numpy evaluation through flexmb/kinematics.py (``kin.norm(kin.separation)``,
``kin.dot(kin.body_vector, kin.separation)``), checked against it to 1e-12 in tests/test_compiled_spheres.py.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from . import pairs as kp
from .forces import (BAD_LENGTH, HYSTERESIS, LENGTH, LINEAR, hysteresis_one, linear_one, measure_one,
                     scalar_force_one, trial_speed, workspace)
from .rotations import jacobian_B, rotation_matrix


@njit(cache=True, inline="always")
def _attached(xq, xv, side, mc, m, u0, S, origin, X, V, A, B, ud):
    """Global value ``X`` and rate ``V`` of a body-fixed vector ``u = u0 + S eta`` of pair side ``side`` (0: columns
    0-6, 1: columns 7-13; modes at columns ``mc``): ``A(p) u`` (+ the body's origin ``r`` when ``origin``) and
    ``B(p, u) p_dot + A S eta_dot`` (+ ``r_dot``), as flexmb/contact/surface.py ``_global_points``."""
    f = 7 * side
    if origin and m == 0 and u0[0] == 0.0 and u0[1] == 0.0 and u0[2] == 0.0:     # the body's origin (a centre)
        for a in range(3):
            X[a], V[a] = xq[f + a], xv[f + a]
        return
    for a in range(3):
        t = u0[a]
        for k in range(m):
            t += S[a, k] * xq[mc + k]
        ud[a] = t
    rotation_matrix(xq[f + 3:f + 7], A)
    jacobian_B(xq[f + 3:f + 7], ud, B)
    for a in range(3):
        x = xq[f + a] if origin else 0.0
        v = xv[f + a] if origin else 0.0
        for b in range(3):
            x += A[a, b] * ud[b]
        for b in range(4):
            v += B[a, b] * xv[f + 3 + b]
        for k in range(m):
            w = 0.0
            for b in range(3):
                w += A[a, b] * S[b, k]
            v += w * xv[mc + k]
        X[a], V[a] = x, v


@njit(cache=True, inline="always")
def _value(code, xq, xv, vec, shp, mi, mj, X, V, A, B, ud):
    """The measure and its rate without derivatives: ``LENGTH`` ``|c_j - c_i|``, else (``AXIAL``)
    ``n . (X_j - P_i)`` with ``n = A_i vec[0]``, ``P_i`` from ``vec[1]``, ``X_j`` from ``vec[2]``."""
    if code == LENGTH:
        _attached(xq, xv, 0, 14, mi, vec[0], shp[0], True, X[0], V[0], A, B, ud)
        _attached(xq, xv, 1, 14 + mi, mj, vec[1], shp[1], True, X[1], V[1], A, B, ud)
        dd = 0.0
        dv = 0.0
        for a in range(3):
            d = X[1, a] - X[0, a]
            dd += d * d
            dv += d * (V[1, a] - V[0, a])
        x = np.sqrt(dd)
        return x, (dv / x if x > 0.0 else 0.0)
    _attached(xq, xv, 0, 14, mi, vec[0], shp[0], False, X[0], V[0], A, B, ud)      # the normal n, n_dot
    _attached(xq, xv, 0, 14, mi, vec[1], shp[1], True, X[1], V[1], A, B, ud)       # the plane's point
    _attached(xq, xv, 1, 14 + mi, mj, vec[2], shp[2], True, X[2], V[2], A, B, ud)  # the contact point
    x = 0.0
    xd = 0.0
    for a in range(3):
        d = X[2, a] - X[1, a]
        x += X[0, a] * d
        xd += X[0, a] * (V[2, a] - V[1, a]) + V[0, a] * d
    return x, xd


@njit(cache=True)
def candidate_kernel(code, qe, ve, gather, vec, shp, sides, mi, mj, offset, ids, law, kind, K, n, h, v_min, c,
                     speed, in_contact, last_rate, slot_a, slot_b, cC, cK, want_forces, want_blocks, delta, rate,
                     r, blk):
    """All candidates of one contact group (module docstring): ``delta``, ``rate`` (n,) (m, m/s) always; with
    ``want_forces`` the slot residuals ``r`` (n_slots, nx) and, with ``want_blocks``, the slot blocks ``blk``
    (n_slots, nx, nx), both overwritten. ``gather`` (n, nx) columns of the extended ``[q, ground]``, ``vec``
    (n, 4, 3), ``shp`` (n, 4, 3, M) the measure's slots, ``ids`` each candidate's approach-speed entry
    (``speed``, ``in_contact``, ``last_rate``: laws.ApproachSpeeds), ``law`` its row of the law table (``kind``,
    ``K``, ``n``, ``h``, ``v_min``, ``c``: laws.LawTable; USER laws give no force here). Returns the first
    candidate whose ``LENGTH`` has no direction (coincident centres), or -1."""
    nc, nx = gather.shape
    w = workspace(nx)
    xq = np.empty(nx)
    xv = np.empty(nx)
    g = np.empty(nx)
    hv = np.empty(nx)
    H = np.zeros((nx, nx))
    rc = np.empty(nx)
    bc = np.empty((nx, nx))
    hess = want_forces and want_blocks and cK != 0.0
    X, V, A, B, ud = np.empty((3, 3)), np.empty((3, 3)), np.empty((3, 3)), np.empty((3, 4)), np.empty(3)
    if want_forces:
        r[:] = 0.0
        if want_blocks:
            blk[:] = 0.0
    for i in range(nc):
        kp.pair_state(qe, ve, gather[i], xq, xv)
        x, xd = _value(code, xq, xv, vec[i], shp[i], mi, mj, X, V, A, B, ud)
        if code == LENGTH and x < BAD_LENGTH:
            return i
        d, dd = offset[i] - x, -xd
        delta[i], rate[i] = d, dd
        if not want_forces:
            continue
        k = ids[i]
        vm = trial_speed(d, dd, speed[k], in_contact[k], last_rate[k])
        wl = law[i]
        if kind[wl] == HYSTERESIS:
            F, dF, dFd = hysteresis_one(K[wl], n[wl], h[wl], v_min[wl], d, dd, vm)
        elif kind[wl] == LINEAR:
            F, dF, dFd = linear_one(K[wl], c[wl], d, dd)
        else:
            F, dF, dFd = 0.0, 0.0, 0.0
        if F == 0.0 and dF == 0.0 and dFd == 0.0:
            continue
        measure_one(code, xq, xv, vec[i], shp[i], sides, mi, mj, 0.0, hess, g, H, w)     # gradient, Hessian
        scalar_force_one(g, H, xv, -F, dF, dFd, cK if hess else 0.0, cC, want_blocks, rc, bc, hv)
        a, b = slot_a[i], slot_b[i]
        for x1 in range(nx):
            r[a, x1] += rc[x1]
            if b >= 0:
                r[b, x1] += rc[x1]
        if want_blocks:
            for x1 in range(nx):
                for x2 in range(nx):
                    blk[a, x1, x2] += bc[x1, x2]
                    if b >= 0:
                        blk[b, x1, x2] += bc[x1, x2]
    return -1


@njit(cache=True)
def grid_pairs(c, e, groups):
    """Broad phase of one set of spheres on a uniform grid: every pair ``i < j`` with ``|c_i - c_j| <= e_i + e_j``
    (centres ``c`` (n, 3), m; extents ``e`` (n,), m) and ``groups[i] != groups[j]``, as two int64 arrays sorted by
    ``i`` then ``j`` -- the pairs of :func:`flexmb.contact.broadphase.sphere_pairs`, with the same final test.
    Cells are at least ``2 max(e)`` wide (a touching pair lies in neighbouring cells) and widened by factors of 2
    until there are at most ``8 n + 64`` of them; the spheres are counting-sorted into the cells and each scans
    its 27 neighbour cells: O(n + pairs) for spheres of similar size."""
    n = c.shape[0]
    if n < 2:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    emax = 0.0
    lo = np.empty(3)
    hi = np.empty(3)
    for a in range(3):
        lo[a], hi[a] = c[0, a], c[0, a]
    for i in range(n):
        emax = max(emax, e[i])
        for a in range(3):
            lo[a] = min(lo[a], c[i, a])
            hi[a] = max(hi[a], c[i, a])
    cell = 2.0 * emax
    span = max(hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2])
    if not cell > 0.0:
        cell = max(span, 1.0)
    dims = np.empty(3, dtype=np.int64)
    while True:
        total = 1
        for a in range(3):
            dims[a] = int((hi[a] - lo[a]) / cell) + 1
            total *= dims[a]
        if total <= 8 * n + 64:
            break
        cell *= 2.0
    cid = np.empty((n, 3), dtype=np.int64)
    key = np.empty(n, dtype=np.int64)
    count = np.zeros(total + 1, dtype=np.int64)
    for i in range(n):
        for a in range(3):
            cid[i, a] = min(int((c[i, a] - lo[a]) / cell), dims[a] - 1)
        key[i] = (cid[i, 0] * dims[1] + cid[i, 1]) * dims[2] + cid[i, 2]
        count[key[i] + 1] += 1
    for k in range(total):
        count[k + 1] += count[k]
    start = count[:total].copy()
    members = np.empty(n, dtype=np.int64)
    fill = start.copy()
    for i in range(n):            # ascending i within each cell
        members[fill[key[i]]] = i
        fill[key[i]] += 1
    cap = 4 * n + 16
    pi = np.empty(cap, dtype=np.int64)
    pj = np.empty(cap, dtype=np.int64)
    m = 0
    for i in range(n):
        first = m
        for dx in range(-1, 2):
            x = cid[i, 0] + dx
            if x < 0 or x >= dims[0]:
                continue
            for dy in range(-1, 2):
                y = cid[i, 1] + dy
                if y < 0 or y >= dims[1]:
                    continue
                for dz in range(-1, 2):
                    z = cid[i, 2] + dz
                    if z < 0 or z >= dims[2]:
                        continue
                    k = (x * dims[1] + y) * dims[2] + z
                    for s in range(start[k], count[k + 1]):
                        j = members[s]
                        if j <= i or groups[i] == groups[j]:
                            continue
                        d0, d1, d2 = c[j, 0] - c[i, 0], c[j, 1] - c[i, 1], c[j, 2] - c[i, 2]
                        r = e[i] + e[j]
                        if d0 * d0 + d1 * d1 + d2 * d2 <= r * r:
                            if m == cap:
                                cap *= 2
                                pi2 = np.empty(cap, dtype=np.int64)
                                pj2 = np.empty(cap, dtype=np.int64)
                                pi2[:m] = pi[:m]
                                pj2[:m] = pj[:m]
                                pi, pj = pi2, pj2
                            pi[m], pj[m] = i, j
                            m += 1
        for a in range(first + 1, m):        # insertion sort of i's partners (a few)
            t = pj[a]
            b = a - 1
            while b >= first and pj[b] > t:
                pj[b + 1] = pj[b]
                b -= 1
            pj[b + 1] = t
    return pi[:m].copy(), pj[:m].copy()
