"""Compiled narrow phase of sphere clouds and point-plane contacts (flexmb/contact/spheres.py ``SphereGroup``,
``PlaneGroup``; docs/theory-contact.md §8).

:func:`candidate_kernel` evaluates every broad-phase candidate of one group in one call: its scalar measure
through :func:`flexmb.compiled.measures.measure_one`, the penetration ``delta = offset - x`` and its rate
``-x_dot``, and (``want_forces``) the normal force of its law at the trial approach speed
(:func:`~flexmb.compiled.contact.trial_speed`, ``hysteresis_one``, ``linear_one``), the residual ``-F grad x`` and,
with ``want_blocks``, the exact block ``cK (grad x (F_delta grad x + F_delta_dot H v)^T - F H) + cC F_delta_dot grad x
grad x^T`` (:func:`~flexmb.compiled.measures.scalar_force_one` with ``f = -F``; gradient and Hessian from
:func:`~flexmb.compiled.measures.measure_one`, only for the candidates with a force), summed into the body-pair slots of
the group's Newton blocks (broadphase.SlotMap: slot ``a`` of each candidate and, for a pair without a coupled slot,
also the self slot ``b`` of its second body). The measures:

* sphere-sphere: ``LENGTH``, ``x = |c_j - c_i|``, ``offset = R_i + R_j`` (slots u_i, u_j);
* point-plane: ``AXIAL``, ``x = n . (X - P)`` with ``n = A_i n'`` the plane's normal, ``P`` its point, ``X`` the
  centre on body j, ``offset = R`` (slots n', P', u_j).

Same expressions as the vectorized numpy evaluation through flexmb/kinematics.py (``kin.norm(kin.separation)``,
``kin.dot(kin.body_vector, kin.separation)``), checked against it to 1e-12 in tests/test_compiled_spheres.py.
Candidates between two rigid bodies (no modes) take their value and rate in scalars read straight from the
coordinates (:func:`_rigid_value`: the same operations in the same order as the general path, whose helpers take
array views and cost ~150 ns a candidate).

The step end of a group runs here too (mesh.py ``SphereGroup.accept``, ``PlaneGroup.accept``), in two calls: the
broad phase at the accepted state (:func:`cloud_pairs`: centres, Verlet skins, :func:`grid_pairs`;
:func:`plane_candidates`: the gaps of every point-plane combination against the skins), then :func:`cloud_accept`
or :func:`plane_accept`: the candidates' kernel arrays written into preallocated buffers, their penetrations and
rates, the pairs the previous broad phase missed, and the approach speeds carried across the rebuild and moved on
(``ApproachSpeeds.accept``). :func:`candidate_power` gives the contact power of the energy balance at an accepted
state. tests/test_compiled_spheres.py checks the step end against the numpy one it replaced (``fused_accept =
False``): the same candidates in the same order, trajectories bit for bit equal.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from . import pairs as kp
from .contact import HYSTERESIS, LINEAR, hysteresis_one, linear_one, trial_speed
from .measures import BAD_LENGTH, LENGTH, measure_one, scalar_force_one, workspace
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


@njit(cache=True, inline="always")
def _rigid_point(qe, ve, gather, i, f, u0, u1, u2, origin):
    """:func:`_attached` of a rigid body (no modes) for candidate ``i``: the global value and rate ``(X, V)`` (6
    scalars) of body-fixed ``u`` on the body whose frame columns start at ``gather[i, f]``, read straight from the
    extended ``qe``, ``ve`` -- the entries of ``rotation_matrix`` and ``jacobian_B`` and the sums of :func:`_attached`
    in the same order, in scalars (array arguments of helpers cost more than this arithmetic)."""
    if origin and u0 == 0.0 and u1 == 0.0 and u2 == 0.0:         # the body's origin (a centre)
        c0, c1, c2 = gather[i, f], gather[i, f + 1], gather[i, f + 2]
        return qe[c0], qe[c1], qe[c2], ve[c0], ve[c1], ve[c2]
    g = f + 3
    e0, e1, e2, e3 = qe[gather[i, g]], qe[gather[i, g + 1]], qe[gather[i, g + 2]], qe[gather[i, g + 3]]
    w0, w1, w2, w3 = ve[gather[i, g]], ve[gather[i, g + 1]], ve[gather[i, g + 2]], ve[gather[i, g + 3]]
    d = 2.0 * e0 * e0 - 1.0
    a00, a11, a22 = d + 2.0 * e1 * e1, d + 2.0 * e2 * e2, d + 2.0 * e3 * e3
    a01, a10 = 2.0 * (e1 * e2 - e0 * e3), 2.0 * (e1 * e2 + e0 * e3)
    a02, a20 = 2.0 * (e1 * e3 + e0 * e2), 2.0 * (e1 * e3 - e0 * e2)
    a12, a21 = 2.0 * (e2 * e3 - e0 * e1), 2.0 * (e2 * e3 + e0 * e1)
    eu = e1 * u0 + e2 * u1 + e3 * u2
    b00 = 2.0 * (2.0 * e0 * u0 + e2 * u2 - e3 * u1)
    b10 = 2.0 * (2.0 * e0 * u1 + e3 * u0 - e1 * u2)
    b20 = 2.0 * (2.0 * e0 * u2 + e1 * u1 - e2 * u0)
    b01, b02, b03 = 2.0 * (e1 * u0 + eu), 2.0 * (e1 * u1 + e0 * u2), 2.0 * (e1 * u2 - e0 * u1)
    b11, b12, b13 = 2.0 * (e2 * u0 - e0 * u2), 2.0 * (e2 * u1 + eu), 2.0 * (e2 * u2 + e0 * u0)
    b21, b22, b23 = 2.0 * (e3 * u0 + e0 * u1), 2.0 * (e3 * u1 - e0 * u0), 2.0 * (e3 * u2 + eu)
    if origin:
        c0, c1, c2 = gather[i, f], gather[i, f + 1], gather[i, f + 2]
        x0, x1, x2, v0, v1, v2 = qe[c0], qe[c1], qe[c2], ve[c0], ve[c1], ve[c2]
    else:
        x0 = x1 = x2 = v0 = v1 = v2 = 0.0
    x0 += a00 * u0
    x0 += a01 * u1
    x0 += a02 * u2
    x1 += a10 * u0
    x1 += a11 * u1
    x1 += a12 * u2
    x2 += a20 * u0
    x2 += a21 * u1
    x2 += a22 * u2
    v0 += b00 * w0
    v0 += b01 * w1
    v0 += b02 * w2
    v0 += b03 * w3
    v1 += b10 * w0
    v1 += b11 * w1
    v1 += b12 * w2
    v1 += b13 * w3
    v2 += b20 * w0
    v2 += b21 * w1
    v2 += b22 * w2
    v2 += b23 * w3
    return x0, x1, x2, v0, v1, v2


@njit(cache=True, inline="always")
def _rigid_value(code, qe, ve, gather, vec, i):
    """:func:`_value` of candidate ``i`` between two rigid bodies (:func:`_rigid_point`), the same arithmetic."""
    if code == LENGTH:
        p0, p1, p2, pv0, pv1, pv2 = _rigid_point(qe, ve, gather, i, 0, vec[i, 0, 0], vec[i, 0, 1], vec[i, 0, 2], True)
        q0, q1, q2, qv0, qv1, qv2 = _rigid_point(qe, ve, gather, i, 7, vec[i, 1, 0], vec[i, 1, 1], vec[i, 1, 2], True)
        d0, d1, d2 = q0 - p0, q1 - p1, q2 - p2
        dd = 0.0
        dd += d0 * d0
        dd += d1 * d1
        dd += d2 * d2
        dv = 0.0
        dv += d0 * (qv0 - pv0)
        dv += d1 * (qv1 - pv1)
        dv += d2 * (qv2 - pv2)
        x = np.sqrt(dd)
        return x, (dv / x if x > 0.0 else 0.0)
    n0, n1, n2, nv0, nv1, nv2 = _rigid_point(qe, ve, gather, i, 0, vec[i, 0, 0], vec[i, 0, 1], vec[i, 0, 2], False)
    p0, p1, p2, pv0, pv1, pv2 = _rigid_point(qe, ve, gather, i, 0, vec[i, 1, 0], vec[i, 1, 1], vec[i, 1, 2], True)
    q0, q1, q2, qv0, qv1, qv2 = _rigid_point(qe, ve, gather, i, 7, vec[i, 2, 0], vec[i, 2, 1], vec[i, 2, 2], True)
    d0, d1, d2 = q0 - p0, q1 - p1, q2 - p2
    x = 0.0
    x += n0 * d0
    x += n1 * d1
    x += n2 * d2
    xd = 0.0
    xd += n0 * (qv0 - pv0) + nv0 * d0
    xd += n1 * (qv1 - pv1) + nv1 * d1
    xd += n2 * (qv2 - pv2) + nv2 * d2
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
    rigid = mi == 0 and mj == 0
    for i in range(nc):
        if rigid:
            x, xd = _rigid_value(code, qe, ve, gather, vec, i)
            stated = False
        else:
            kp.pair_state(qe, ve, gather[i], xq, xv)
            x, xd = _value(code, xq, xv, vec[i], shp[i], mi, mj, X, V, A, B, ud)
            stated = True
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
        if not stated:
            kp.pair_state(qe, ve, gather[i], xq, xv)
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
    D0, D1, D2 = dims[0], dims[1], dims[2]
    for i in range(n):
        first = m
        c0, c1, c2, ei, gi = c[i, 0], c[i, 1], c[i, 2], e[i], groups[i]      # in registers (25 % faster)
        X0, Y0, Z0 = cid[i, 0], cid[i, 1], cid[i, 2]
        for x in range(max(X0 - 1, 0), min(X0 + 2, D0)):
            for y in range(max(Y0 - 1, 0), min(Y0 + 2, D1)):
                for z in range(max(Z0 - 1, 0), min(Z0 + 2, D2)):
                    k = (x * D1 + y) * D2 + z
                    for s in range(start[k], count[k + 1]):
                        j = members[s]
                        if j <= i or gi == groups[j]:
                            continue
                        d0, d1, d2 = c[j, 0] - c0, c[j, 1] - c1, c[j, 2] - c2
                        r = ei + e[j]
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


# ---- the step-end work of sphere clouds and point-plane contacts (mesh.py SphereGroup.accept, PlaneGroup.accept) ---
# Once per accepted step: the broad phase at the accepted state (positions, Verlet skins, candidates), the candidates'
# kernel arrays rebuilt in place, their penetrations and rates (candidate_kernel), the missed-pair check and the
# approach speeds moved on -- in two compiled calls per group instead of some 60 numpy operations.


@njit(cache=True, inline="always")
def _slot_of(bi, bj, pair_keys, nbj, self_slots, self_i0, self_j0):
    """Slot rows ``(a, b)`` of a candidate of body pair ``(bi, bj)``: the pair slot (``b = -1``) when the pair has one,
    else the self slots of both bodies (broadphase.SlotMap.slots); ``a = -1`` when neither exists."""
    key = bi * nbj + bj
    lo, hi = 0, pair_keys.size
    while lo < hi:                    # np.searchsorted(pair_keys, key) (sorted, unique)
        mid = (lo + hi) // 2
        if pair_keys[mid] < key:
            lo = mid + 1
        else:
            hi = mid
    if lo < pair_keys.size and pair_keys[lo] == key:
        return lo, -1
    if self_slots:
        return self_i0 + bi, self_j0 + bj
    return -1, -1


@njit(cache=True, inline="always")
def _sorted_has(keys, n, key):
    """Whether ``key`` is among the first ``n`` entries of the ascending array ``keys``; its index or -1."""
    lo, hi = 0, n
    while lo < hi:
        mid = (lo + hi) // 2
        if keys[mid] < key:
            lo = mid + 1
        else:
            hi = mid
    if lo < n and keys[lo] == key:
        return lo
    return -1


@njit(cache=True)
def point_positions(qe, F, M, body, u, S, X):
    """``X[k] = r + A(p) (u_k + S_k eta)`` (m), the global position of point k (body-fixed ``u``, shapes ``S``
    (n, 3, m)) on body ``body[k]`` (frame columns ``F``, modal columns ``M`` of the extended ``[q, ground]``): the
    positions of flexmb/contact/surface.py ``_global_points``, ``r`` alone for a rigid body's origin. Sums in the
    order of numpy's ``einsum("nij,nj->ni")`` up to round-off (the broad phase only compares them with a skin)."""
    m = S.shape[2]
    A = np.empty((3, 3))
    p = np.empty(4)
    ud = np.empty(3)
    for k in range(body.size):
        b = body[k]
        if m == 0 and u[k, 0] == 0.0 and u[k, 1] == 0.0 and u[k, 2] == 0.0:
            for a in range(3):
                X[k, a] = qe[F[b, a]]
            continue
        for a in range(3):
            t = u[k, a]
            for j in range(m):
                t += S[k, a, j] * qe[M[b, j]]
            ud[a] = t
        for a in range(4):
            p[a] = qe[F[b, 3 + a]]
        rotation_matrix(p, A)
        for a in range(3):
            X[k, a] = qe[F[b, a]] + (A[a, 0] * ud[0] + A[a, 1] * ud[1] + A[a, 2] * ud[2])


@njit(cache=True)
def skin_inflation(X, grow, last, has_last, out):
    """Verlet-skin inflation (m) of objects at positions ``X`` (n, 3): ``grow + 3 |X - last|`` (only ``grow`` without
    a previous rebuild), as flexmb/contact/broadphase.py ``Skin.inflation``; ``last`` becomes ``X`` (in place)."""
    for k in range(X.shape[0]):
        g = grow[k]
        if has_last:
            d0, d1, d2 = X[k, 0] - last[k, 0], X[k, 1] - last[k, 1], X[k, 2] - last[k, 2]
            g = g + 3.0 * np.sqrt(d0 * d0 + d1 * d1 + d2 * d2)
        out[k] = g
        for a in range(3):
            last[k, a] = X[k, a]


@njit(cache=True)
def cloud_pairs(qe, F, M, sb, u, S, R, grow, last, has_last, cloud):
    """The broad phase of a SphereGroup at an accepted state (mesh.py ``SphereGroup._build``): sphere centres, skin
    inflations (``last`` updated in place), the grid's pairs (:func:`grid_pairs`) of spheres on different bodies of one
    cloud, each pair ordered so that its first sphere's body index is the smaller (one slot per body pair). Returns
    ``(ci, cj, keys)``, keys ``min(i, j) n + max(i, j)`` ascending (the grid's pairs are sorted by i then j, i < j)."""
    n = sb.size
    X = np.empty((n, 3))
    point_positions(qe, F, M, sb, u, S, X)
    e = np.empty(n)
    skin_inflation(X, grow, last, has_last, e)
    for k in range(n):
        e[k] = R[k] + e[k]
    i, j = grid_pairs(X, e, sb)
    m = 0
    for k in range(i.size):
        if cloud[i[k]] == cloud[j[k]]:
            m += 1
    ci = np.empty(m, dtype=np.int64)
    cj = np.empty(m, dtype=np.int64)
    keys = np.empty(m, dtype=np.int64)
    m = 0
    for k in range(i.size):
        a, b = i[k], j[k]
        if cloud[a] != cloud[b]:
            continue
        if sb[a] > sb[b]:
            ci[m], cj[m] = b, a
        else:
            ci[m], cj[m] = a, b
        keys[m] = min(a, b) * n + max(a, b)
        m += 1
    return ci, cj, keys


@njit(cache=True)
def plane_candidates(qe, F_j, M_j, pb, u, S, R, grow_p, last_p, has_p, F_i, lb, lu, ln, last_l, has_l, combos):
    """The broad phase of a PlaneGroup at an accepted state (mesh.py ``PlaneGroup._build``): point positions, plane
    points and normals (``A(p) n'`` of each plane's body), skins (``last_p``, ``last_l`` updated in place) and the
    combinations ``(point, plane)`` whose gap ``n . (X - P) - R`` is at most the two inflations, ascending."""
    npnt, nl = pb.size, lb.size
    X = np.empty((npnt, 3))
    point_positions(qe, F_j, M_j, pb, u, S, X)
    L = np.empty((nl, 3))
    point_positions(qe, F_i, M_j[:0], lb, lu, np.zeros((nl, 3, 0)), L)
    gp, gl = np.empty(npnt), np.empty(nl)
    skin_inflation(X, grow_p, last_p, has_p, gp)
    skin_inflation(L, np.zeros(nl), last_l, has_l, gl)
    N = np.empty((nl, 3))
    A = np.empty((3, 3))
    p = np.empty(4)
    for l in range(nl):
        for a in range(4):
            p[a] = qe[F_i[lb[l], 3 + a]]
        rotation_matrix(p, A)
        for a in range(3):
            N[l, a] = A[a, 0] * ln[l, 0] + A[a, 1] * ln[l, 1] + A[a, 2] * ln[l, 2]
    keep = np.empty(combos.shape[0], dtype=np.int64)
    m = 0
    for c in range(combos.shape[0]):
        k, l = combos[c, 0], combos[c, 1]
        d0, d1, d2 = X[k, 0] - L[l, 0], X[k, 1] - L[l, 1], X[k, 2] - L[l, 2]
        h = (N[l, 0] * d0 + N[l, 2] * d2) + N[l, 1] * d1 - R[k]      # numpy einsum's order for 3 terms
        if h <= gp[k] + gl[l]:
            keep[m] = c
            m += 1
    return keep[:m].copy()


@njit(cache=True)
def _evaluate_and_accept(code, qe, ve, gather, vec, shp, sides, mi, mj, offset, law, a, b, delta, rate, old_keys,
                         n_old, keys, speed, in_contact, last_rate):
    """Penetrations and rates of the new candidates (:func:`candidate_kernel` without forces), then the missed-pair
    count and depth (a candidate penetrating now whose key was no candidate before, ``n_old < 0``: no check) and the
    approach speeds moved on as ``ApproachSpeeds.accept`` on the state in ``speed``, ``in_contact``, ``last_rate``
    (indexed by candidate). Returns ``(bad, missed, deepest)``: ``bad`` as :func:`candidate_kernel`."""
    false_ = np.bool_(False)  # no literal (docs/architecture.md §2)
    n = gather.shape[0]
    ids = np.arange(n)
    bad = candidate_kernel(code, qe, ve, gather, vec, shp, sides, mi, mj, offset, ids, law, np.zeros(1, np.int64),
                           np.zeros(1), np.zeros(1), np.zeros(1), np.zeros(1), np.zeros(1), speed, in_contact,
                           last_rate, a, b, 0.0, 0.0, false_, false_, delta, rate, np.empty((0, gather.shape[1])),
                           np.empty((0, gather.shape[1], gather.shape[1])))
    if bad >= 0:
        return bad, 0, 0.0
    missed, deepest = 0, -np.inf
    if n_old >= 0:
        for k in range(n):
            if delta[k] > 0.0 and _sorted_has(old_keys, n_old, keys[k]) < 0:
                missed += 1
                deepest = max(deepest, delta[k])
    return -1, missed, deepest


@njit(cache=True)
def cloud_accept(code, qe, ve, ci, cj, sb, u, S, R, slaw, F_i, M_i, F_j, M_j, pair_keys, nbj, self_slots, self_i0,
                 self_j0, sides, gather, vec, shp, offset, ids, law, a, b, delta, rate, keys, old_keys, has_old,
                 old_speed, old_in, old_rate, speed, in_contact, last_rate):
    """The rest of a SphereGroup's step end after :func:`cloud_pairs` (mesh.py ``SphereGroup.accept``): the kernel
    arrays of the n candidates ``(ci, cj)`` written into the first n rows of ``gather``, ``vec``, ``shp``, ``offset``,
    ``ids``, ``law``, ``a``, ``b`` (``SphereGroup._candidate_arrays``, ``SlotMap.gather``, ``SlotMap.slots``), their
    penetrations ``delta`` (m) and rates ``rate`` (m/s), the pairs missed by the last broad phase, and the approach
    speeds of the new candidates (``speed``, ``in_contact``, ``last_rate``, each (n,)): those of a pair kept across
    the rebuild (same key in ``old_keys``, ascending) carried over (broadphase.transfer_approach), then
    ``ApproachSpeeds.accept``. Returns ``(bad, missed, deepest)`` (:func:`_evaluate_and_accept`; ``bad = -2``: a
    candidate's body pair has no slot)."""
    n = ci.size
    m = S.shape[2]
    for k in range(n):
        i, j = ci[k], cj[k]
        bi, bj = sb[i], sb[j]
        for c in range(7):
            gather[k, c] = F_i[bi, c]
            gather[k, 7 + c] = F_j[bj, c]
        for c in range(m):
            gather[k, 14 + c] = M_i[bi, c]
            gather[k, 14 + m + c] = M_j[bj, c]
        for c in range(3):              # elementwise: an array view per row costs more than the row
            vec[k, 0, c] = u[i, c]
            vec[k, 1, c] = u[j, c]
            vec[k, 2, c] = 0.0
            vec[k, 3, c] = 0.0
            for s in range(m):
                shp[k, 0, c, s] = S[i, c, s]
                shp[k, 1, c, s] = S[j, c, s]
                shp[k, 2, c, s] = 0.0
                shp[k, 3, c, s] = 0.0
        offset[k] = R[i] + R[j]
        ids[k] = k
        law[k] = slaw[i]
        a[k], b[k] = _slot_of(bi, bj, pair_keys, nbj, self_slots, self_i0, self_j0)
        if a[k] < 0:
            return -2, 0, 0.0
        speed[k], in_contact[k], last_rate[k] = 0.0, False, np.nan
        if has_old:
            o = _sorted_has(old_keys, old_keys.size, keys[k])
            if o >= 0:
                speed[k], in_contact[k], last_rate[k] = old_speed[o], old_in[o], old_rate[o]
    g, vv, sh = gather[:n], vec[:n], shp[:n]
    out = _evaluate_and_accept(code, qe, ve, g, vv, sh, sides, m, m, offset[:n], law[:n], a[:n], b[:n], delta, rate,
                               old_keys, old_keys.size if has_old else -1, keys, speed, in_contact, last_rate)
    if out[0] >= 0:
        return out
    for k in range(n):                  # ApproachSpeeds.accept (all pairs listed)
        d = delta[k]
        v = trial_speed(d, rate[k], speed[k], in_contact[k], last_rate[k])
        touching = d > 0.0
        in_contact[k] = touching
        speed[k] = v if touching else 0.0
        last_rate[k] = rate[k]
    return out


@njit(cache=True)
def plane_accept(code, qe, ve, cand, combos, pb, u, S, R, plaw, lb, lu, ln, F_i, M_i, F_j, M_j, pair_keys, nbj,
                 self_slots, self_i0, self_j0, sides, gather, vec, shp, offset, ids, law, a, b, delta, rate, old_cand,
                 has_old, speed, in_contact, last_rate):
    """The rest of a PlaneGroup's step end after :func:`plane_candidates` (mesh.py ``PlaneGroup.accept``): the kernel
    arrays of the n candidate combinations ``cand`` written into the first n rows of ``gather``, ``vec``, ``shp``,
    ``offset``, ``ids``, ``law``, ``a``, ``b`` (``PlaneGroup._candidate_arrays``), their penetrations ``delta`` (m)
    and rates ``rate`` (m/s), the combinations missed by the last broad phase (not in ``old_cand``, ascending) and the
    approach speeds of all combinations (``speed``, ``in_contact``, ``last_rate``, in place) moved on as
    ``ApproachSpeeds.accept(delta, rate, ids=cand)``: the candidates capture or keep theirs, the rest are released.
    Returns ``(bad, missed, deepest)`` (:func:`_evaluate_and_accept`; ``bad = -2``: a combination's body pair has no
    slot)."""
    n = cand.size
    mi, mj = M_i.shape[1], M_j.shape[1]
    for k in range(n):
        c = cand[k]
        p, l = combos[c, 0], combos[c, 1]
        bi, bj = lb[l], pb[p]
        for x in range(7):
            gather[k, x] = F_i[bi, x]
            gather[k, 7 + x] = F_j[bj, x]
        for x in range(mi):
            gather[k, 14 + x] = M_i[bi, x]
        for x in range(mj):
            gather[k, 14 + mi + x] = M_j[bj, x]
        for x in range(3):              # elementwise: an array view per row costs more than the row
            vec[k, 0, x] = ln[l, x]
            vec[k, 1, x] = lu[l, x]
            vec[k, 2, x] = u[p, x]
            vec[k, 3, x] = 0.0
            for s in range(shp.shape[3]):
                shp[k, 0, x, s] = 0.0
                shp[k, 1, x, s] = 0.0
                shp[k, 2, x, s] = S[p, x, s] if s < mj else 0.0
                shp[k, 3, x, s] = 0.0
        offset[k] = R[p]
        ids[k] = c
        law[k] = plaw[p]
        a[k], b[k] = _slot_of(bi, bj, pair_keys, nbj, self_slots, self_i0, self_j0)
        if a[k] < 0:
            return -2, 0, 0.0
    out = _evaluate_and_accept(code, qe, ve, gather[:n], vec[:n], shp[:n], sides, mi, mj, offset[:n], law[:n], a[:n],
                               b[:n], delta, rate, old_cand, old_cand.size if has_old else -1, cand, speed, in_contact,
                               last_rate)
    if out[0] >= 0:
        return out
    v = np.empty(n)
    for k in range(n):                 # the trial speeds under the step's history, then ApproachSpeeds.accept
        c = cand[k]
        v[k] = trial_speed(delta[k], rate[k], speed[c], in_contact[c], last_rate[c])
    speed[:] = 0.0
    in_contact[:] = False
    last_rate[:] = np.nan
    for k in range(n):
        c = cand[k]
        touching = delta[k] > 0.0
        in_contact[c] = touching
        speed[c] = v[k] if touching else 0.0
        last_rate[c] = rate[k]
    return out


@njit(cache=True)
def candidate_power(code, qe, ve, gather, vec, shp, sides, mi, mj, offset, ids, law, kind, K, n, h, v_min, c, speed,
                    in_contact, last_rate):
    """The power of the non-elastic part of the candidates' forces, ``-sum (F - K delta_+^n) delta_dot`` (W, <= 0
    where the damping acts), at ``(qe, ve)`` under the approach speeds of the step (``speed``, ``in_contact``,
    ``last_rate`` indexed by ``ids``): ``LawTable.nonconservative_power`` of the penetrations and rates of
    :func:`candidate_kernel`, summed in candidate order (Lankarani & Nikravesh, J. Mech. Des. 112:369, 1990, for the
    hysteresis law). Returns ``(bad, P)``: ``bad`` as :func:`candidate_kernel`."""
    false_ = np.bool_(False)  # no literal (docs/architecture.md §2)
    nc, nx = gather.shape
    delta, rate = np.empty(nc), np.empty(nc)
    bad = candidate_kernel(code, qe, ve, gather, vec, shp, sides, mi, mj, offset, ids, law, kind, K, n, h, v_min, c,
                           speed, in_contact, last_rate, ids, ids, 0.0, 0.0, false_, false_, delta, rate,
                           np.empty((0, nx)), np.empty((0, nx, nx)))
    if bad >= 0:
        return bad, 0.0
    P = 0.0
    for i in range(nc):
        d, dd = delta[i], rate[i]
        k = ids[i]
        vm = trial_speed(d, dd, speed[k], in_contact[k], last_rate[k])
        wl = law[i]
        if kind[wl] == HYSTERESIS:
            F = hysteresis_one(K[wl], n[wl], h[wl], v_min[wl], d, dd, vm)[0]
        elif kind[wl] == LINEAR:
            F = linear_one(K[wl], c[wl], d, dd)[0]
        else:
            F = 0.0
        P -= (F - K[wl] * max(d, 0.0) ** n[wl]) * dd
    return -1, P
