"""Compiled narrow phase of sphere clouds and point-plane contacts (flexmb/contact/mesh.py ``SphereGroup``,
``PlaneGroup``; docs/theory-contact.md §8).

:func:`candidate_kernel` evaluates every broad-phase candidate of one group in one call: its scalar measure
through :func:`flexmb.compiled.forces.measure_one`, the penetration ``delta = offset - x`` and its rate
``-x_dot``, and (``want_forces``) the normal force of its law at the trial approach speed
(:func:`~flexmb.compiled.forces.trial_speed`, ``hysteresis_one``, ``linear_one``), the residual ``-F grad x`` and,
with ``want_blocks``, the exact block ``cK (grad x (F_delta grad x + F_delta_dot H v)^T - F H) + cC F_delta_dot grad x
grad x^T`` (:func:`~flexmb.compiled.forces.scalar_force_one` with ``f = -F``), summed into the body-pair slots of
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
    if want_forces:
        r[:] = 0.0
        if want_blocks:
            blk[:] = 0.0
    for i in range(nc):
        kp.pair_state(qe, ve, gather[i], xq, xv)
        x, xd = measure_one(code, xq, xv, vec[i], shp[i], sides, mi, mj, 0.0, hess, g, H, w)
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
