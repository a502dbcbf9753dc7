"""Compiled contact kernels: normal laws, contact pairs, approach speeds and friction.

Contact pairs (sphere-plane, sphere-sphere, clearance joints; flexmb/contact/pairs.py) are scalar force laws on
a measure of their body pair (flexmb/compiled/measures.py). The laws (``law_kernel``, ``hysteresis_one``,
``linear_one``: Hunt & Crossley 1975; Lankarani & Nikravesh 1990; docs/theory-contact.md §4) and the approach
speed (``trial_speed``, ``approach_trial``) also serve the mesh contacts (flexmb/compiled/spheres.py);
``contact_kernel`` evaluates all pairs of a group, ``friction_kernel`` their regularized Coulomb friction
(docs/theory-contact.md §5) and ``friction_coefficient``, ``contact_friction`` the same one pair at a time for
the compiled step.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from . import pairs as kp
from . import rotations as kr
from .hook import user_laws
from .measures import BAD_LENGTH, LENGTH, measure_one, scalar_force_one, workspace

# ---- contact laws and pairs (flexmb/contact/laws.py, pairs.py) -------------------------------------------------

HYSTERESIS, LINEAR, USER = 0, 1, 2
"""Law kinds of :class:`flexmb.contact.laws.LawTable` (USER laws are evaluated in Python)."""


@njit(cache=True, inline="always")
def hysteresis_one(K, n, h, v_min, d, dd, vm):
    """``F = K d^n max(0, 1 + chi dd)``, ``chi = h / max(vm, v_min)`` and ``(dF/d delta, dF/d delta_dot)``
    (docs/theory-contact.md §1.1; Lankarani & Nikravesh 1990, Hunt & Crossley 1975, Flores et al. 2011)."""
    chi = h / max(vm, v_min)
    g = 1.0 + chi * dd
    if not (d > 0.0 and g > 0.0):
        return 0.0, 0.0, 0.0
    dn1 = d ** (n - 1.0)
    Kdn = K * dn1 * d
    return Kdn * g, n * K * dn1 * g, Kdn * chi


@njit(cache=True, inline="always")
def linear_one(K, c, d, dd):
    """``F = max(0, K d + c dd)`` for ``d > 0`` and its derivatives (Kelvin-Voigt, Crous 2000, eq. 3.5.12)."""
    raw = K * d + c * dd
    if d > 0.0 and raw > 0.0:
        return raw, K, c
    return 0.0, 0.0, 0.0


@njit(cache=True, inline="always")
def trial_speed(d, dd, speed, in_contact, last_rate):
    """Approach speed ``delta_dot_minus`` (m/s) of one pair at a trial state (laws.ApproachSpeeds.trial)."""
    if not d > 0.0:
        return 0.0
    if in_contact:
        return speed
    if math.isfinite(last_rate) and last_rate > 0.0:
        return last_rate
    return max(dd, 0.0)


@njit(cache=True)
def law_kernel(kind, K, n, h, v_min, c, which, d, dd, vm, F, dF, dFd):
    """Forces and derivatives of the built-in laws (``which[k]`` indexes the law table of contact ``k``);
    contacts with a USER law are left untouched."""
    for k in range(d.size):
        w = which[k]
        if kind[w] == HYSTERESIS:
            F[k], dF[k], dFd[k] = hysteresis_one(K[w], n[w], h[w], v_min[w], d[k], dd[k], vm[k])
        elif kind[w] == LINEAR:
            F[k], dF[k], dFd[k] = linear_one(K[w], c[w], d[k], dd[k])


@njit(cache=True)
def contact_kernel(code, qe, ve, gather, vec, shp, sides, mi, mj, sign, offset, kind, K, n, h, v_min, c,
                   speed, in_contact, last_rate, given, cC, cK, want_blocks, x, xd, F, dF, dFd, J, Hv, r, blk):
    """Contact pairs (docs/theory-contact.md §4): measure ``x``, penetration ``delta = sign (offset - x)``,
    ``delta_dot = -sign x_dot``, the pair's law (table index = pair index) with its trial approach speed,
    and the scalar force ``f = -sign F`` (``f_x = dF/d delta``, ``f_xd = dF/d delta_dot``): residual ``r``,
    blocks ``blk`` when ``want_blocks``, and per pair ``x``, ``xd``, ``F``, ``dF``, ``dFd``, gradient ``J``
    and ``H v`` (``Hv``, zero unless the K block is wanted). With ``given`` the forces are read from ``F``,
    ``dF``, ``dFd`` (USER laws, evaluated in Python). Returns the first pair whose ``LENGTH`` has no
    direction, or -1."""
    npair, nx = gather.shape
    w = workspace(nx)
    xq = np.empty(nx)
    xv = np.empty(nx)
    hv = np.empty(nx)
    H = np.zeros((nx, nx))
    hess = want_blocks and cK != 0.0
    for i in range(npair):
        kp.pair_state(qe, ve, gather[i], xq, xv)
        x[i], xd[i] = measure_one(code, xq, xv, vec[i], shp[i], sides, mi, mj, 0.0, hess, J[i], H, w)
        if code == LENGTH and x[i] < BAD_LENGTH:
            return i
        if not given:
            d, dd = sign * (offset[i] - x[i]), -sign * xd[i]
            vm = trial_speed(d, dd, speed[i], in_contact[i], last_rate[i])
            if kind[i] == HYSTERESIS:
                F[i], dF[i], dFd[i] = hysteresis_one(K[i], n[i], h[i], v_min[i], d, dd, vm)
            else:
                F[i], dF[i], dFd[i] = linear_one(K[i], c[i], d, dd)
        for a in range(nx):
            t = 0.0
            if hess:
                for b in range(nx):
                    t += H[a, b] * xv[b]
            Hv[i, a] = t
        scalar_force_one(J[i], H, xv, -sign * F[i], dF[i], dFd[i], cK if hess else 0.0, cC, want_blocks, r[i],
                         blk[i] if want_blocks else H, hv)
    return -1




@njit(cache=True)
def contact_pairs(first, code, qe, ve, gather, vec, shp, sides, mi, mj, sign, offset, kind, K, n, h, v_min, c,
                  speed, in_contact, last_rate, cC, cK, want_blocks, x, xd, F, dF, dFd, J, Hv, r, blk):
    """:func:`contact_kernel` of a group of pairs numbered ``first, first + 1, ...`` among the model's pairs, with
    the forces of the pairs that have a USER law from Python through :func:`flexmb.compiled.hook.user_laws`, one
    call for the group and only while one of those pairs penetrates (pairs apart have no force): a first pass for
    the measures and the built-in laws, the user laws at those penetrations, rates and trial approach speeds, then
    the residual and blocks with the forces given. Returns as :func:`contact_kernel`, or the number of pairs when
    a user law failed."""
    false_, true_ = np.bool_(False), np.bool_(True)  # no literals (docs/architecture.md §2)
    user = False
    for i in range(kind.size):
        user = user or kind[i] == USER
    if not user:
        return contact_kernel(code, qe, ve, gather, vec, shp, sides, mi, mj, sign, offset, kind, K, n, h, v_min, c,
                              speed, in_contact, last_rate, false_, cC, cK, want_blocks, x, xd, F, dF, dFd, J, Hv, r,
                              blk)
    bad = contact_kernel(code, qe, ve, gather, vec, shp, sides, mi, mj, sign, offset, kind, K, n, h, v_min, c, speed,
                         in_contact, last_rate, false_, 0.0, 0.0, false_, x, xd, F, dF, dFd, J, Hv, r, blk)
    if bad >= 0:
        return bad
    npair = kind.size
    d, dd, vm = np.empty(npair), np.empty(npair), np.empty(npair)
    touching = False
    for i in range(npair):
        d[i], dd[i] = sign * (offset[i] - x[i]), -sign * xd[i]
        vm[i] = trial_speed(d[i], dd[i], speed[i], in_contact[i], last_rate[i])
        if kind[i] == USER:
            F[i], dF[i], dFd[i] = 0.0, 0.0, 0.0          # a pair apart: no force (LawTable.user_forces)
            touching = touching or d[i] > 0.0
    if touching and not user_laws(first, d, dd, vm, F, dF, dFd):
        return npair
    return contact_kernel(code, qe, ve, gather, vec, shp, sides, mi, mj, sign, offset, kind, K, n, h, v_min, c,
                          speed, in_contact, last_rate, true_, cC, cK, want_blocks, x, xd, F, dF, dFd, J, Hv, r, blk)

@njit(cache=True)
def approach_trial(d, dd, ids, speed, in_contact, last_rate, out):
    """``out[k]`` = approach speed (m/s) of pair ``ids[k]`` at penetration ``d[k]`` and rate ``dd[k]``
    (:func:`trial_speed`; laws.ApproachSpeeds.trial)."""
    for k in range(d.size):
        i = ids[k]
        out[k] = trial_speed(d[k], dd[k], speed[i], in_contact[i], last_rate[i])



# ---- friction of contact pairs (flexmb/contact/friction.py, docs/theory-contact.md §5) ---------------------------

SPHERE_PLANE, SPHERE_SPHERE, CLEARANCE_JOINT = 0, 1, 2
"""Geometry kinds of :func:`friction_kernel`."""


@njit(cache=True, inline="always")
def _unit_grad(e, E, l, u, U):
    """``u = e / l`` and ``U = (I - u u^T) E / l`` (gradient of a unit vector)."""
    nx = E.shape[1]
    for a in range(3):
        u[a] = e[a] / l
    for c in range(nx):
        t = u[0] * E[0, c] + u[1] * E[1, c] + u[2] * E[2, c]
        for a in range(3):
            U[a, c] = (E[a, c] - u[a] * t) / l


@njit(cache=True)
def friction_kernel(full, geo, sign, qe, ve, gather, idx, vec, shp, mi, mj, rad, F, dF, dFd, J, Hv, mu, dmu, mu_s,
                    cK, cC, want_blocks, sp, r, blk):
    """Friction of the pairs ``idx`` in contact (docs/theory-contact.md §5): contact frame of the geometry
    ``geo`` (normal ``u`` and arms ``y_a``, ``y_b`` from the frame origins to the contact point, with
    gradients, §5.2: the sphere point nearest the plane, the middle of the sphere overlap, the pin point
    on the line of the eccentricity), the slip velocity ``v_t`` of the material points and the force
    ``f = -F_n mu(|v_t|) v_t / |v_t|`` with its exact derivatives (§5.3).

    ``full = False``: writes the slip speeds ``sp`` (per listed pair) only, for the friction laws.
    ``full = True``: with ``mu, dmu/ds, mu/s`` (per listed pair) subtracts ``Q = G^T f`` from ``r`` and,
    when ``want_blocks``, ``cK dQ/dq + cC dQ/dq_dot`` from ``blk`` (rows = pair index); returns the
    friction power ``sum f . v`` (W). Normal force ``F_n = F`` with gradients ``-sign (dF J + dFd H v)`` and
    ``-sign dFd J`` (``contact_kernel`` outputs)."""
    i0_, i14_, i1_ = np.int64(0), np.int64(14), np.int64(1)  # no literals (docs/architecture.md §2)
    nx = gather.shape[1]
    ki = 0 if geo == SPHERE_SPHERE else 1               # slots of the separation (u_i, u_j)
    xq = np.empty(nx)
    xv = np.empty(nx)
    bp = np.empty((4, 3))
    val = np.empty((4, 3))
    jac = np.empty((4, 3, nx))
    dval = np.empty(3)
    djac = np.empty((3, nx))
    u = np.empty(3)
    U = np.empty((3, nx))
    ya = np.empty(3)
    Ya = np.empty((3, nx))
    yb = np.empty(3)
    Yb = np.empty((3, nx))
    e = np.empty(3)
    E = np.empty((3, nx))
    Aa = np.empty((3, 3))
    Ab = np.empty((3, 3))
    ua = np.empty(3)
    ub = np.empty(3)
    Bm = np.empty((3, 4))
    G = np.empty((3, nx))
    v = np.empty(3)
    vt = np.empty(3)
    phi = np.empty(3)
    f = np.empty(3)
    tv = np.empty(3)
    ek = np.empty(3)
    Bka = np.empty((3, 3, 4))
    Bkb = np.empty((3, 3, 4))
    dua = np.empty((3, nx))
    dub = np.empty((3, nx))
    Ada = np.empty((3, 3))
    Adb = np.empty((3, 3))
    V = np.empty((3, nx))
    uV = np.empty(nx)
    uG = np.empty(nx)
    Vtx = np.empty((3, nx))
    Vtv = np.empty((3, nx))
    Jphi = np.empty((3, 3))
    dfx = np.empty((3, nx))
    dfv = np.empty((3, nx))
    gx = np.empty(nx)
    gv = np.empty(nx)
    Mfa = np.empty((3, 4))
    Mfb = np.empty((3, 4))
    Qm = np.empty((4, 4))
    power = 0.0
    for k in range(idx.size):
        i = idx[k]
        for c in range(nx):
            xq[c] = qe[gather[i, c]]
            xv[c] = ve[gather[i, c]]
        Sa, Sb = shp[i, ki], shp[i, ki + 1]
        # -- contact frame (theory-contact.md §5.2) --
        for a in range(3):
            dval[a] = 0.0
            for c in range(nx):
                djac[a, c] = 0.0
                jac[0, a, c] = 0.0
                jac[2, a, c] = 0.0
            val[0, a] = 0.0
            val[2, a] = 0.0
        kp.separation(xq, vec[i, ki], Sa, i14_, mi, vec[i, ki + 1], Sb, 14 + mi, mj, bp[ki], bp[ki + 1], dval, djac)
        kp.attached(xq, i0_, vec[i, 0], shp[i, 0], i14_, mi, 1.0, bp[0], val[0], jac[0])
        if geo == SPHERE_PLANE:                          # X = c - R n on the sphere
            kp.attached(xq, i1_, vec[i, 2], shp[i, 2], 14 + mi, mj, 1.0, bp[2], val[2], jac[2])
            R = rad[i, 0]
            for a in range(3):
                u[a] = val[0, a]
                yb[a] = val[2, a] - R * val[0, a]
                for c in range(nx):
                    U[a, c] = jac[0, a, c]
                    Yb[a, c] = jac[2, a, c] - R * jac[0, a, c]
        elif geo == SPHERE_SPHERE:                       # X in the middle of the overlap on the line of centres
            l = math.sqrt(dval[0] * dval[0] + dval[1] * dval[1] + dval[2] * dval[2])
            _unit_grad(dval, djac, l, u, U)
            w = 0.5 * (l + rad[i, 0] - rad[i, 1])
            for c in range(nx):
                dw = 0.5 * (u[0] * djac[0, c] + u[1] * djac[1, c] + u[2] * djac[2, c])
                for a in range(3):
                    Ya[a, c] = jac[0, a, c] + u[a] * dw + w * U[a, c]
            for a in range(3):
                ya[a] = val[0, a] + w * u[a]
        else:                                            # pin point along the eccentricity e = d - (n.d) n
            kp.attached(xq, i1_, vec[i, 2], shp[i, 2], 14 + mi, mj, 1.0, bp[2], val[2], jac[2])
            b = val[0, 0] * dval[0] + val[0, 1] * dval[1] + val[0, 2] * dval[2]
            for a in range(3):
                e[a] = dval[a] - b * val[0, a]
            for c in range(nx):
                db = 0.0
                for a in range(3):
                    db += val[0, a] * djac[a, c] + dval[a] * jac[0, a, c]
                for a in range(3):
                    E[a, c] = djac[a, c] - val[0, a] * db - b * jac[0, a, c]
            _unit_grad(e, E, math.sqrt(e[0] * e[0] + e[1] * e[1] + e[2] * e[2]), u, U)
            rp = rad[i, 0]
            for a in range(3):
                yb[a] = val[2, a] + rp * u[a]
                for c in range(nx):
                    Yb[a, c] = jac[2, a, c] + rp * U[a, c]
        if geo == SPHERE_SPHERE:                         # y_b = y_a + r_a - r_b
            for a in range(3):
                yb[a] = ya[a] + xq[a] - xq[7 + a]
                for c in range(nx):
                    Yb[a, c] = Ya[a, c]
                Yb[a, a] += 1.0
                Yb[a, 7 + a] -= 1.0
        else:                                            # y_a = y_b + r_b - r_a
            for a in range(3):
                ya[a] = yb[a] + xq[7 + a] - xq[a]
                for c in range(nx):
                    Ya[a, c] = Yb[a, c]
                Ya[a, a] -= 1.0
                Ya[a, 7 + a] += 1.0
        # -- slip velocity of the material points (§5.3) --
        kr.rotation_matrix(xq[3:7], Aa)
        kr.rotation_matrix(xq[10:14], Ab)
        for a in range(3):
            ua[a] = Aa[0, a] * ya[0] + Aa[1, a] * ya[1] + Aa[2, a] * ya[2]
            ub[a] = Ab[0, a] * yb[0] + Ab[1, a] * yb[1] + Ab[2, a] * yb[2]
        for a in range(3):
            for c in range(nx):
                G[a, c] = 0.0
            G[a, a] = -1.0
            G[a, 7 + a] = 1.0
        kr.jacobian_B(xq[3:7], ua, Bm)
        for a in range(3):
            for c in range(4):
                G[a, 3 + c] = -Bm[a, c]
        kr.jacobian_B(xq[10:14], ub, Bm)
        for a in range(3):
            for c in range(4):
                G[a, 10 + c] = Bm[a, c]
            for m in range(mi):
                G[a, 14 + m] = -(Aa[a, 0] * Sa[0, m] + Aa[a, 1] * Sa[1, m] + Aa[a, 2] * Sa[2, m])
            for m in range(mj):
                G[a, 14 + mi + m] = Ab[a, 0] * Sb[0, m] + Ab[a, 1] * Sb[1, m] + Ab[a, 2] * Sb[2, m]
        for a in range(3):
            t = 0.0
            for c in range(nx):
                t += G[a, c] * xv[c]
            v[a] = t
        un = u[0] * v[0] + u[1] * v[1] + u[2] * v[2]
        for a in range(3):
            vt[a] = v[a] - un * u[a]
        s = math.sqrt(vt[0] * vt[0] + vt[1] * vt[1] + vt[2] * vt[2])
        if not full:
            sp[k] = s
            continue
        Fn = F[i]
        for a in range(3):
            phi[a] = mu_s[k] * vt[a]                     # mu(|v_t|) v_t / |v_t|
            f[a] = -Fn * phi[a]
        for c in range(nx):
            r[i, c] -= G[0, c] * f[0] + G[1, c] * f[1] + G[2, c] * f[2]
        power += f[0] * v[0] + f[1] * v[1] + f[2] * v[2]
        if not want_blocks:
            continue
        # -- exact derivatives (§5.3) --
        for kk in range(3):
            for a in range(3):
                ek[a] = 0.0
            ek[kk] = 1.0
            kr.jacobian_B(xq[3:7], ek, Bka[kk])
            kr.jacobian_B(xq[10:14], ek, Bkb[kk])
        for kk in range(3):
            for c in range(nx):
                dua[kk, c] = Aa[0, kk] * Ya[0, c] + Aa[1, kk] * Ya[1, c] + Aa[2, kk] * Ya[2, c]
                dub[kk, c] = Ab[0, kk] * Yb[0, c] + Ab[1, kk] * Yb[1, c] + Ab[2, kk] * Yb[2, c]
            for pp in range(4):        # d(A^T y)/dp at fixed y
                dua[kk, 3 + pp] += Bka[kk, 0, pp] * ya[0] + Bka[kk, 1, pp] * ya[1] + Bka[kk, 2, pp] * ya[2]
                dub[kk, 10 + pp] += Bkb[kk, 0, pp] * yb[0] + Bkb[kk, 1, pp] * yb[1] + Bkb[kk, 2, pp] * yb[2]
            for a in range(3):         # dA/dt columns: B(p, e_k) p_dot
                Ada[a, kk] = 0.0
                Adb[a, kk] = 0.0
                for pp in range(4):
                    Ada[a, kk] += Bka[kk, a, pp] * xv[3 + pp]
                    Adb[a, kk] += Bkb[kk, a, pp] * xv[10 + pp]
        for a in range(3):
            for c in range(nx):
                V[a, c] = (Adb[a, 0] * dub[0, c] + Adb[a, 1] * dub[1, c] + Adb[a, 2] * dub[2, c]
                           - Ada[a, 0] * dua[0, c] - Ada[a, 1] * dua[1, c] - Ada[a, 2] * dua[2, c])
        kr.jacobian_B(xv[10:14], ub, Bm)
        for a in range(3):
            for pp in range(4):
                V[a, 10 + pp] += Bm[a, pp]
        kr.jacobian_B(xv[3:7], ua, Bm)
        for a in range(3):
            for pp in range(4):
                V[a, 3 + pp] -= Bm[a, pp]
        if mj:
            for a in range(3):
                t = 0.0
                for m in range(mj):
                    t += Sb[a, m] * xv[14 + mi + m]
                tv[a] = t
            kr.jacobian_B(xq[10:14], tv, Bm)
            for a in range(3):
                for pp in range(4):
                    V[a, 10 + pp] += Bm[a, pp]
        if mi:
            for a in range(3):
                t = 0.0
                for m in range(mi):
                    t += Sa[a, m] * xv[14 + m]
                tv[a] = t
            kr.jacobian_B(xq[3:7], tv, Bm)
            for a in range(3):
                for pp in range(4):
                    V[a, 3 + pp] -= Bm[a, pp]
        for c in range(nx):
            uV[c] = (u[0] * V[0, c] + u[1] * V[1, c] + u[2] * V[2, c]
                     + v[0] * U[0, c] + v[1] * U[1, c] + v[2] * U[2, c])
            uG[c] = u[0] * G[0, c] + u[1] * G[1, c] + u[2] * G[2, c]
            for a in range(3):
                Vtx[a, c] = V[a, c] - u[a] * uV[c] - un * U[a, c]
                Vtv[a, c] = G[a, c] - u[a] * uG[c]
        for a in range(3):
            tv[a] = vt[a] / s if s > 0.0 else 0.0
        for a in range(3):
            for b2 in range(3):
                Jphi[a, b2] = (dmu[k] - mu_s[k]) * tv[a] * tv[b2]
            Jphi[a, a] += mu_s[k]
        for c in range(nx):            # gradients of the normal force (contact_kernel outputs)
            gx[c] = -sign * (dF[i] * J[i, c] + dFd[i] * Hv[i, c])
            gv[c] = -sign * dFd[i] * J[i, c]
        for a in range(3):
            for c in range(nx):
                dfx[a, c] = -phi[a] * gx[c] - Fn * (Jphi[a, 0] * Vtx[0, c] + Jphi[a, 1] * Vtx[1, c]
                                                    + Jphi[a, 2] * Vtx[2, c])
                dfv[a, c] = -phi[a] * gv[c] - Fn * (Jphi[a, 0] * Vtv[0, c] + Jphi[a, 1] * Vtv[1, c]
                                                    + Jphi[a, 2] * Vtv[2, c])
        for kk in range(3):
            for pp in range(4):
                Mfa[kk, pp] = Bka[kk, 0, pp] * f[0] + Bka[kk, 1, pp] * f[1] + Bka[kk, 2, pp] * f[2]
                Mfb[kk, pp] = Bkb[kk, 0, pp] * f[0] + Bkb[kk, 1, pp] * f[1] + Bkb[kk, 2, pp] * f[2]
        for x in range(nx):
            for y in range(nx):
                dqx = G[0, x] * dfx[0, y] + G[1, x] * dfx[1, y] + G[2, x] * dfx[2, y]
                dqv = G[0, x] * dfv[0, y] + G[1, x] * dfv[1, y] + G[2, x] * dfv[2, y]
                blk[i, x, y] -= cK * dqx + cC * dqv
        # derivative of G^T f at fixed f: rows p (through p and u_k) and rows eta (through p)
        for pp in range(4):
            for c in range(nx):
                blk[i, 10 + pp, c] -= cK * (Mfb[0, pp] * dub[0, c] + Mfb[1, pp] * dub[1, c] + Mfb[2, pp] * dub[2, c])
                blk[i, 3 + pp, c] += cK * (Mfa[0, pp] * dua[0, c] + Mfa[1, pp] * dua[1, c] + Mfa[2, pp] * dua[2, c])
        kr.quadratic_Q(f, ub, Qm)
        for a in range(4):
            for b2 in range(4):
                blk[i, 10 + a, 10 + b2] -= cK * 2.0 * Qm[a, b2]
        kr.quadratic_Q(f, ua, Qm)
        for a in range(4):
            for b2 in range(4):
                blk[i, 3 + a, 3 + b2] += cK * 2.0 * Qm[a, b2]
        for m in range(mj):
            for pp in range(4):
                blk[i, 14 + mi + m, 10 + pp] -= cK * (Sb[0, m] * Mfb[0, pp] + Sb[1, m] * Mfb[1, pp]
                                                       + Sb[2, m] * Mfb[2, pp])
        for m in range(mi):
            for pp in range(4):
                blk[i, 14 + m, 3 + pp] += cK * (Sa[0, m] * Mfa[0, pp] + Sa[1, m] * Mfa[1, pp] + Sa[2, m] * Mfa[2, pp])
    return power


# ---- friction laws for the compiled step (flexmb/contact/friction.py FrictionTable, one pair at a time) ----------
@njit(cache=True, inline="always")
def _tanh_ratio(z, th):
    """``tanh(z) / z`` (its series near 0)."""
    return th / z if z > 1e-6 else 1.0 - z * z / 3.0


@njit(cache=True)
def friction_coefficient(kind, p0, p1, p2, s):
    """``(mu, dmu/ds, mu/s)`` of one pair's friction law at slip speed ``s`` (m/s), as ``FrictionTable``:
    kind 0 the linear Coulomb ramp (``p = mu, v0, v_dead``: Ambrosio's ramp with a dead zone), 1 the tanh ramp
    (``mu, v0``), 2 Brown & McPhee (2016) (``mu_s, mu_d, v_s``) (docs/theory-contact.md §5.1)."""
    if kind == 0:
        mu, v0, vd = p0, p1, p2
        c = min(max((s - vd) / (v0 - vd), 0.0), 1.0)
        dmu = mu / (v0 - vd) if (s > vd and s < v0) else 0.0
        if vd == 0.0:
            ratio = mu / v0 if s < v0 else mu / s
        else:
            ratio = mu * c / s if s > vd else 0.0
        return mu * c, dmu, ratio
    if kind == 1:
        mu, v0 = p0, p1
        z = s / v0
        th = math.tanh(z)
        return mu * th, mu / v0 * (1.0 - th * th), mu / v0 * _tanh_ratio(z, th)
    vs, md, dm = p2, p1, p0 - p1
    x = s / vs
    z = 4.0 * x
    th = math.tanh(z)
    D = 0.25 * x * x + 0.75
    return (md * th + dm * x / (D * D), md * 4.0 / vs * (1.0 - th * th) + dm / vs * (D - x * x) / D ** 3,
            md * 4.0 / vs * _tanh_ratio(z, th) + dm / (vs * D * D))


@njit(cache=True)
def contact_friction(geo, sign, qe, ve, gather, vec, shp, mi, mj, rad, fkind, fpar, F, dF, dFd, J, Hv, cK, cC,
                     want_blocks, r, blk):
    """Friction of one contact group's pairs that carry a built-in friction law (``fkind >= 0``) and press
    (``F > 0``), as ``ContactGroup._friction``: the slip speeds, the laws (:func:`friction_coefficient`), then
    the forces subtracted from ``r`` and, with ``want_blocks``, ``cK dQ/dq + cC dQ/dq_dot`` from ``blk``
    (:func:`friction_kernel`); returns the friction power (W)."""
    false_, true_ = np.bool_(False), np.bool_(True)  # no literals (docs/architecture.md §2)
    m = 0
    for i in range(F.size):
        if fkind[i] >= 0 and F[i] > 0.0:
            m += 1
    if m == 0:
        return 0.0
    idx = np.empty(m, dtype=np.int64)
    m = 0
    for i in range(F.size):
        if fkind[i] >= 0 and F[i] > 0.0:
            idx[m] = i
            m += 1
    sp = np.empty(m)
    none = np.zeros(0)
    friction_kernel(false_, geo, sign, qe, ve, gather, idx, vec, shp, mi, mj, rad, F, dF, dFd, J, Hv, none, none, none,
                    0.0, 0.0, false_, sp, r, blk)
    mu, dmu, mus = np.empty(m), np.empty(m), np.empty(m)
    for k in range(m):
        i = idx[k]
        mu[k], dmu[k], mus[k] = friction_coefficient(fkind[i], fpar[i, 0], fpar[i, 1], fpar[i, 2], sp[k])
    return friction_kernel(true_, geo, sign, qe, ve, gather, idx, vec, shp, mi, mj, rad, F, dF, dFd, J, Hv, mu, dmu,
                           mus, cK, cC, want_blocks, sp, r, blk)
