"""Compiled force-element kernels: scalar measures of a body pair and the scalar-force helper.

Every two-body force element of flexmb (springs, dampers, bushings, DC motors, plastic hinges, crush
elements, contact pairs) is a scalar force law ``f(x, x_dot)`` acting along the gradient of a scalar
measure ``x(q)`` of a body pair (docs/theory.md §3.3, §4; docs/theory-contact.md §4):

    residual  r = f grad x,
    K block   d r/dq     = grad x (f_x grad x + f_xd (H v))^T + f H,
    C block   d r/dq_dot = f_xd grad x grad x^T,

with ``H`` the Hessian of ``x`` and ``f_x``, ``f_xd`` the partial derivatives of the law
(:func:`scalar_force_one`, written once and used by springs, motors, crash elements and contacts).
Coordinates of one instance are those of :mod:`flexmb.kinematics` (``x = (r_i, p_i, r_j, p_j, eta_i,
eta_j)``, 14 + m_i + m_j columns); body-fixed vectors of flexible bodies are affine in the modal
coordinates, ``u = u0 + S eta``. The measures are built from the pair expressions of
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
beyond a side's count), ``sides`` (4,) the body (0: i, 1: j) of each slot. Per family: springs
(``spring_kernel``), DC motors (``motor_kernel``), contact pairs (``contact_kernel``, ``friction_kernel``;
the laws ``law_kernel``, ``approach_trial`` also serve the mesh contacts), applied loads and nodal forces
(``loads_kernel``, ``nodal_kernel``), crash elements (``crash_kernel``; ``hinge_law``, ``crush_law`` for the
once-per-step history updates); ``measure_kernel`` gives values, gradients and Hessians alone.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from . import pairs as kp
from . import rotations as kr
from .hook import user_laws

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


@njit(cache=True)
def spring_kernel(code, qe, ve, gather, vec, shp, sides, mi, mj, ref, k, c, x0, cK, cC, want_blocks, x, xd, r, blk):
    """Linear spring-dampers ``f = k (x - x0) + c x_dot`` on the measures of all instances (docs/theory.md
    §3.3): ``x``, ``xd`` (n,), residual ``r`` (n, nx) and blocks ``blk`` (n, nx, nx) when ``want_blocks``.
    Returns the first instance whose ``LENGTH`` has no direction, or -1."""
    n, nx = gather.shape
    w = workspace(nx)
    xq = np.empty(nx)
    xv = np.empty(nx)
    g = np.empty(nx)
    hv = np.empty(nx)
    H = np.empty((nx, nx))
    hess = want_blocks and cK != 0.0
    for i in range(n):
        kp.pair_state(qe, ve, gather[i], xq, xv)
        x[i], xd[i] = measure_one(code, xq, xv, vec[i], shp[i], sides, mi, mj, ref[i], hess, g, H, w)
        if code == LENGTH and x[i] < BAD_LENGTH:
            return i
        f = k[i] * (x[i] - x0[i]) + c[i] * xd[i]
        scalar_force_one(g, H, xv, f, k[i], c[i], cK if hess else 0.0, cC, want_blocks, r[i],
                         blk[i] if want_blocks else H, hv)
    return -1


@njit(cache=True)
def motor_kernel(code, qe, ve, ae, gather, state, vec, shp, sides, mi, mj, ref, K_p, r_a, L_a, D, V, cM, cC, cK,
                 want_blocks, r, blk):
    """DC motors (flexmb/forces/motor.py, He 1992, §9.4): torque ``tau = K_p i - D omega`` on the relative
    rotation ``theta`` (measure ``code``, the ``ANGLE``; ``omega = theta_dot``) and the armature equation
    ``L_a di/dt + r_a i + K_p omega - V`` in the last column (the charge, index ``state``). Residual ``r``
    (n, nx + 1) and blocks ``cM M + cC C + cK K`` (n, nx + 1, nx + 1) when ``want_blocks``."""
    n, nx = gather.shape
    w = workspace(nx)
    xq = np.empty(nx)
    xv = np.empty(nx)
    g = np.empty(nx)
    hv = np.empty(nx)
    H = np.zeros((nx, nx))
    hess = want_blocks and cK != 0.0
    for i in range(n):
        kp.pair_state(qe, ve, gather[i], xq, xv)
        _, om = measure_one(code, xq, xv, vec[i], shp[i], sides, mi, mj, ref[i], hess, g, H, w)
        cur, dcur = ve[state[i]], ae[state[i]]
        tau = K_p[i] * cur - D[i] * om
        scalar_force_one(g, H, xv, -tau, 0.0, D[i], cK if hess else 0.0, cC, want_blocks, r[i, :nx],
                         blk[i, :nx, :nx], hv)
        r[i, nx] = L_a[i] * dcur + r_a[i] * cur + K_p[i] * om - V[i]
        if not want_blocks:
            continue
        for a in range(nx):        # d(K_p omega)/dq = K_p H v, d/dv = K_p grad theta; torque on the current
            t = 0.0
            if hess:
                for b in range(nx):
                    t += H[a, b] * xv[b]
            blk[i, nx, a] = cK * K_p[i] * t + cC * K_p[i] * g[a]
            blk[i, a, nx] = -cC * K_p[i] * g[a]
        blk[i, nx, nx] = cC * r_a[i] + cM * L_a[i]


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


# ---- applied loads and nodal forces (flexmb/forces/applied.py, nodal.py) -----------------------------------------

@njit(cache=True, inline="always")
def _torque_matrix(y, sgn, out):
    """``out[4, 4] = [[0, -y^T], [y, sgn y~]]``: ``E(p)^T y = out p`` for ``sgn = 1``, ``G(p)^T y = out p`` for
    ``sgn = -1`` (Nikravesh 1988, §6.3; rotations.T)."""
    out[0, 0] = 0.0
    for a in range(3):
        out[0, 1 + a] = -y[a]
        out[1 + a, 0] = y[a]
        out[1 + a, 1 + a] = 0.0
    out[1, 2] = -sgn * y[2]
    out[1, 3] = sgn * y[1]
    out[2, 1] = sgn * y[2]
    out[2, 3] = -sgn * y[0]
    out[3, 1] = -sgn * y[1]
    out[3, 2] = sgn * y[0]


@njit(cache=True)
def loads_kernel(q, v, idx, is_force, body_fixed, s, F, cK, want_blocks, r, blk):
    """Forces and torques on rigid bodies (docs/theory.md §3.3, Nikravesh 1988 §6.5), s' the body-fixed point:
    global force f: ``Q_r = f, Q_p = 2 Q(f, s') p``; body force f': ``Q_r = A f', Q_p = 2 G^T (s' x f')``;
    global torque n: ``Q_p = 2 E^T n``; body torque n': ``Q_p = 2 G^T n'``. Writes ``r = -Q`` (n, 7) and, when
    ``want_blocks``, ``blk = -cK dQ/dq`` (n, 7, 7); returns the power ``sum Q . v`` (W)."""
    n = idx.shape[0]
    p = np.empty(4)
    A = np.empty((3, 3))
    Bm = np.empty((3, 4))
    T = np.empty((4, 4))
    nb = np.empty(3)
    Q = np.empty(7)
    power = 0.0
    for i in range(n):
        for a in range(4):
            p[a] = q[idx[i, 3 + a]]
        f = F[i]
        for a in range(7):
            Q[a] = 0.0
        if want_blocks:
            for a in range(7):
                for b in range(7):
                    blk[i, a, b] = 0.0
        if is_force[i] and not body_fixed[i]:
            kr.quadratic_Q(f, s[i], T)
            for a in range(3):
                Q[a] = f[a]
            for a in range(4):
                for b in range(4):
                    T[a, b] *= 2.0
        elif is_force[i]:
            kr.rotation_matrix(p, A)
            si = s[i]
            nb[0] = si[1] * f[2] - si[2] * f[1]
            nb[1] = si[2] * f[0] - si[0] * f[2]
            nb[2] = si[0] * f[1] - si[1] * f[0]
            for a in range(3):
                Q[a] = A[a, 0] * f[0] + A[a, 1] * f[1] + A[a, 2] * f[2]
            _torque_matrix(nb, -1.0, T)
            for a in range(4):
                for b in range(4):
                    T[a, b] *= 2.0
            if want_blocks:
                kr.jacobian_B(p, f, Bm)
                for a in range(3):
                    for b in range(4):
                        blk[i, a, 3 + b] = -cK * Bm[a, b]
        else:
            _torque_matrix(f, -1.0 if body_fixed[i] else 1.0, T)
            for a in range(4):
                for b in range(4):
                    T[a, b] *= 2.0
        for a in range(4):
            Q[3 + a] = T[a, 0] * p[0] + T[a, 1] * p[1] + T[a, 2] * p[2] + T[a, 3] * p[3]
        if want_blocks:
            for a in range(4):
                for b in range(4):
                    blk[i, 3 + a, 3 + b] = -cK * T[a, b]
        for a in range(7):
            r[i, a] = -Q[a]
            power += Q[a] * v[idx[i, a]]
    return power


@njit(cache=True)
def nodal_kernel(q, v, idx, x0, phi, body_fixed, F, cK, want_blocks, r, blk):
    """Forces on mesh nodes of flexible bodies (docs/theory-flexible.md §2), ``u = x0 + Phi eta``:
    global f: ``Q_r = f, Q_p = B(p, u)^T f, Q_eta = Phi^T A^T f``; body-fixed f': ``Q_r = A f',
    Q_p = 2 G^T (u x f'), Q_eta = Phi^T f'``. Writes ``r = -Q`` (n, 7 + m) and, when ``want_blocks``,
    ``blk = -cK dQ/dq``; returns the power ``sum Q . v`` (W)."""
    n, nc = idx.shape
    m = nc - 7
    p = np.empty(4)
    pc = np.empty(4)
    u = np.empty(3)
    col = np.empty(3)
    nb = np.empty(3)
    A = np.empty((3, 3))
    Bm = np.empty((3, 4))
    G = np.empty((3, 4))
    T = np.empty((4, 4))
    Q = np.empty(nc)
    power = 0.0
    for i in range(n):
        for a in range(4):
            p[a] = q[idx[i, 3 + a]]
        f = F[i]
        P = phi[i]
        for a in range(3):
            t = x0[i, a]
            for k in range(m):
                t += P[a, k] * q[idx[i, 7 + k]]
            u[a] = t
        kr.rotation_matrix(p, A)
        for a in range(nc):
            Q[a] = 0.0
        if want_blocks:
            for a in range(nc):
                for b in range(nc):
                    blk[i, a, b] = 0.0
        if not body_fixed[i]:
            kr.jacobian_B(p, u, Bm)
            for a in range(3):
                Q[a] = f[a]
            for b in range(4):
                Q[3 + b] = Bm[0, b] * f[0] + Bm[1, b] * f[1] + Bm[2, b] * f[2]
            for a in range(3):            # A^T f
                col[a] = A[0, a] * f[0] + A[1, a] * f[1] + A[2, a] * f[2]
            for k in range(m):
                Q[7 + k] = P[0, k] * col[0] + P[1, k] * col[1] + P[2, k] * col[2]
            if want_blocks:
                kr.quadratic_Q(f, u, T)
                for a in range(4):
                    for b in range(4):
                        blk[i, 3 + a, 3 + b] = -cK * 2.0 * T[a, b]
                for k in range(m):        # B(p, Phi_k)^T f
                    for a in range(3):
                        col[a] = P[a, k]
                    kr.jacobian_B(p, col, Bm)
                    for b in range(4):
                        blk[i, 3 + b, 7 + k] = -cK * (Bm[0, b] * f[0] + Bm[1, b] * f[1] + Bm[2, b] * f[2])
                # d(A^T f)/dp = B(p*, f) diag(1, -1, -1, -1), p* = (e0, -e): A(p)^T = A(p*)
                pc[0] = p[0]
                for a in range(3):
                    pc[1 + a] = -p[1 + a]
                kr.jacobian_B(pc, f, Bm)
                for k in range(m):
                    for b in range(4):
                        t = P[0, k] * Bm[0, b] + P[1, k] * Bm[1, b] + P[2, k] * Bm[2, b]
                        blk[i, 7 + k, 3 + b] = -cK * (t if b == 0 else -t)
        else:
            nb[0] = u[1] * f[2] - u[2] * f[1]
            nb[1] = u[2] * f[0] - u[0] * f[2]
            nb[2] = u[0] * f[1] - u[1] * f[0]
            kr.matrix_G(p, G)
            for a in range(3):
                Q[a] = A[a, 0] * f[0] + A[a, 1] * f[1] + A[a, 2] * f[2]
            for b in range(4):
                Q[3 + b] = 2.0 * (G[0, b] * nb[0] + G[1, b] * nb[1] + G[2, b] * nb[2])
            for k in range(m):
                Q[7 + k] = P[0, k] * f[0] + P[1, k] * f[1] + P[2, k] * f[2]
            if want_blocks:
                kr.jacobian_B(p, f, Bm)
                for a in range(3):
                    for b in range(4):
                        blk[i, a, 3 + b] = -cK * Bm[a, b]
                _torque_matrix(nb, -1.0, T)
                for a in range(4):
                    for b in range(4):
                        blk[i, 3 + a, 3 + b] = -cK * 2.0 * T[a, b]
                for k in range(m):        # -2 G^T (f~ Phi_k)
                    col[0] = f[1] * P[2, k] - f[2] * P[1, k]
                    col[1] = f[2] * P[0, k] - f[0] * P[2, k]
                    col[2] = f[0] * P[1, k] - f[1] * P[0, k]
                    for b in range(4):
                        blk[i, 3 + b, 7 + k] = cK * 2.0 * (G[0, b] * col[0] + G[1, b] * col[1] + G[2, b] * col[2])
        for a in range(nc):
            r[i, a] = -Q[a]
            power += Q[a] * v[idx[i, a]]
    return power


# ---- crash elements (flexmb/forces/crash.py, docs/theory-crash.md) ------------------------------------------------

@njit(cache=True, inline="always")
def _segment(B, v):
    """Index of the last breakpoint of the row ``B`` (+inf padded, increasing) not above ``v`` (0 below the
    first)."""
    j = 0
    for k in range(1, B.size):
        if B[k] <= v:
            j = k
    return j


@njit(cache=True, inline="always")
def _curve(X, Y, S, v):
    """Piecewise-linear curve value and slope at ``v`` (breakpoints ``X``, values ``Y``, slopes ``S``)."""
    j = _segment(X, v)
    return Y[j] + S[j] * (v - X[j]), S[j]


@njit(cache=True, inline="always")
def _hinge_one(theta, thd, theta_p, alpha, k, X, Y, S, P, has_rate, C, p, w0):
    """One plastic hinge (docs/theory-crash.md §1; Nikravesh, Chung & Benedict 1983, Ambrosio 2002
    eqs. 6-7): return mapping of the rate-independent moment ``M_s`` with tangent ``K_t`` and plastic state
    ``alpha'`` from the history (``theta_p``, ``alpha``), times the Cowper-Symonds factor ``R`` while
    loading. Returns ``(M = R M_s (N m), dM/dtheta, dM/dtheta_dot, M_s, K_t, alpha', R)``."""
    e = theta - theta_p
    ae = abs(e)
    sg = -1.0 if e < 0 else 1.0
    My, _ = _curve(X, Y, S, alpha)
    if k * ae > My:                                   # plastic: on the curve M_y(a) + k a = k (|e| + alpha)
        y = k * (ae + alpha)
        j = _segment(P, y)
        an = X[j] + (y - P[j]) / (S[j] + k)
        Ms = sg * (Y[j] + S[j] * (an - X[j]))
        Kt = k * S[j] / (S[j] + k)
    else:
        Ms = k * e
        Kt = k
        an = alpha
    w = abs(thd)
    cw = (w0 / C) ** (1.0 / p) / w0                   # chord slope below rate_min
    if w >= w0:
        phi = (w / C) ** (1.0 / p)
        dphi = phi / (p * w)
    else:
        phi = cw * w
        dphi = cw
    loading = has_rate and Ms * thd > 0
    R = 1.0 + (phi if loading else 0.0)
    return R * Ms, R * Kt, (abs(Ms) * dphi if loading else 0.0), Ms, Kt, an, R


@njit(cache=True, inline="always")
def _crush_one(L, L0, dm, ku, X, Y, S):
    """One crush element (docs/theory-crash.md §2): force ``F >= 0`` (N) from the curve while the crush
    ``delta = L0 - L`` (m) grows past its maximum ``dm``, elastic unloading/reloading with ``ku`` below it,
    never tension. Returns ``(F, dF/d delta (N/m), delta)``."""
    d = L0 - L
    if d >= dm:
        F, K = _curve(X, Y, S, max(d, 0.0))
        return F, K, d
    Fm, _ = _curve(X, Y, S, dm)
    Fu = Fm - ku * (dm - d)
    return max(Fu, 0.0), (ku if Fu > 0 else 0.0), d


@njit(cache=True)
def hinge_law(theta, thd, theta_p, alpha, k, X, Y, S, P, has_rate, C, p, w0, M, dM, dMd, Ms, Kt, a_new, R):
    """:func:`_hinge_one` for all hinges, into the arrays ``M .. R`` (n,)."""
    for i in range(theta.size):
        M[i], dM[i], dMd[i], Ms[i], Kt[i], a_new[i], R[i] = _hinge_one(
            theta[i], thd[i], theta_p[i], alpha[i], k[i], X[i], Y[i], S[i], P[i], has_rate[i], C[i], p[i], w0[i])


@njit(cache=True)
def crush_law(L, L0, max_crush, ku, X, Y, S, F, K, d):
    """:func:`_crush_one` for all crush elements, into ``F``, ``K``, ``d`` (n,)."""
    for i in range(L.size):
        F[i], K[i], d[i] = _crush_one(L[i], L0[i], max_crush[i], ku[i], X[i], Y[i], S[i])


@njit(cache=True)
def crash_kernel(hinge, code, qe, ve, gather, vec, shp, sides, mi, mj, ref, theta_p, alpha, k, P, has_rate, C, p,
                 w0, L0, max_crush, ku, X, Y, S, cC, cK, want_blocks, r, blk):
    """Plastic hinges (``hinge``, ``ANGLE`` measure, ``f = M``) or crush elements (``LENGTH``, ``f = -F``,
    ``df/dL = dF/d delta``) in one call: measure, law (:func:`_hinge_one`, :func:`_crush_one`) and the
    scalar-force helper. Residual ``r`` (n, nx), blocks ``cC C + cK K`` when ``want_blocks``. Returns -1,
    the instance whose ``LENGTH`` has no direction, or ``n + i`` when the law of instance ``i`` is not finite."""
    n, nx = gather.shape
    w = workspace(nx)
    xq = np.empty(nx)
    xv = np.empty(nx)
    g = np.empty(nx)
    hv = np.empty(nx)
    H = np.zeros((nx, nx))
    hess = want_blocks and cK != 0.0
    for i in range(n):
        kp.pair_state(qe, ve, gather[i], xq, xv)
        x, xd = measure_one(code, xq, xv, vec[i], shp[i], sides, mi, mj, ref[i], hess, g, H, w)
        if code == LENGTH and x < BAD_LENGTH:
            return i
        if hinge:
            f, f_x, f_xd, _, _, _, _ = _hinge_one(x, xd, theta_p[i], alpha[i], k[i], X[i], Y[i], S[i], P[i],
                                                  has_rate[i], C[i], p[i], w0[i])
        else:
            F, f_x, _ = _crush_one(x, L0[i], max_crush[i], ku[i], X[i], Y[i], S[i])
            f, f_xd = -F, 0.0
        if not math.isfinite(f):
            return n + i
        scalar_force_one(g, H, xv, f, f_x, f_xd, cK if hess else 0.0, cC, want_blocks, r[i],
                         blk[i] if want_blocks else H, hv)
    return -1


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
