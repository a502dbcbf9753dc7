"""The equations of a model on the compiled step: residual ``r = M vd - Q + Phi_q^T lambda``, constraint values
``Phi`` and the values of the Newton matrix, written through the position maps of the fixed pattern
(flexmb/sparsity.py), one function per element family (:func:`rigid_terms`, :func:`flexible_terms`,
:func:`spring_terms`, :func:`load_terms`, :func:`motor_terms`, :func:`contact_terms`, :func:`joint_terms`,
:func:`particle_terms`, :func:`rope_terms`), each returning at once for a part that is None, and
:func:`equations`, which calls them all: the Newton iteration of flexmb/compiled/step.py and the sparse compiled
evaluation (:class:`flexmb.solvers.compiled_step.CompiledEvaluation`) both call it.

he model is a tuple of tuples of arrays (built by :class:`flexmb.solvers.compiled_step.CompiledStep`; each
helper gets only the part it uses, since numba passes a tuple as all its arrays' fields):
``(bodies, joints, flex, norm, springs, contacts, loads, driver_rows, motors, particles, ropes)`` with

* ``bodies = (idx, mass, J, gravity, pos_body)``: rigid bodies (flexmb/compiled/rigid.py), block positions;
* ``joints = (gtab, gather, scatter, u0, S, drive, pos_jac, pos_jacT, pos_hess, kinds)``: joint primitive groups; row g
  of ``gtab`` is ``(kind, n, rows per instance, nx, m_i, modes of S, offset in gather/scatter, in u0, in S,
  first instance (its drive block of f, f'', constant is ``drive[3 first:3 (first + n)]``), first row, offset
  in the flat Jacobian, in the flat Hessian)``, kinds numbered in
  the order of ``flexmb.joints.kernels.ROWS`` (point, dot1, dot2, distance, angle, coordinate), the other
  arrays flat and concatenated group by group; ``kinds`` has an int per kind, or None for a kind no group has
  (a specialized model, flexmb/compiled/specialization.py: that kind's kernels are not compiled);
* ``flex = (ftab, fdata, idata, wdata, ftabs, fidx, pos_flex)``: flexible-body groups; row f of ``ftab`` is
  ``(offset, length) of its float, int and work buffers, first row and rows of its table in ftabs, n, m,
  offset in fidx, offset in pos_flex`` (flexmb/compiled/flexible.py ``pack``);
* ``norm = (ncols, pos_norm_jac, pos_norm_jacT, pos_norm_hess, pos_D, order)``: the Euler-parameter columns of
  every body (normalization rows last), the remaining block positions and the elimination order of the dense
  Newton matrix: position k of the matrix that the block positions address holds unknown ``order[k]`` of
  ``[q, lambda]`` (flexible bodies' elastic coordinates first, so that a beam's banded block is eliminated
  before the frame coordinates that couple to all of it and the LU fills in little;
  flexmb/solvers/compiled_step.py ``elimination_order``);
* ``springs = (stab, sgather, sscatter, svec, sshp, sk, sc, sx0, sref, ssides, pos_spring)``: scalar
  spring-damper groups (flexmb/forces/springs.py); row s of ``stab`` is ``(measure code, n, nx, m_i, m_j,
  modes of the shapes, offset in sgather/sscatter, in svec, in sshp, in the per-instance parameters, in
  pos_spring)``; ``sref`` the unwrapping reference of angle measures (history, moved on at accepted steps);
* ``contacts = (ctab, cgather, cscatter, cvec, cshp, csides, csign, coffset, ckind, cK, cn, ch, cvmin, cc,
  pos_contact, cfric, cgeo, crad, cfkind, cfpar)``: contact-pair groups (flexmb/contact/pairs.py; user laws,
  kind USER, through the hook of compiled/hook.py),
  ``ctab`` as ``stab``, per pair the measure offset and the law table (flexmb/contact/laws.py ``LawTable``); per
  group whether a pair has friction and the friction geometry, per pair the radii, the built-in friction law's
  kind (-1: none) and parameters (flexmb/contact/friction.py ``FrictionTable``). Their
  approach-speed history changes at accepted steps (``ContactGroup.accept``, or in a block
  flexmb/compiled/step_end.py) and comes as the separate ``dyn`` argument; blocks of models with contacts are
  taken by ``blocks.run_block`` (``contact_steps``), which ends a block at a contact onset for the integrator to
  locate;
* ``loads = (lidx, lis_force, lbody_fixed, ls, lvec, pos_loads)``: applied forces and torques
  (flexmb/forces/applied.py), their vectors at the current time in ``lvec`` (set before each step);
* ``driver_rows``: the rows of driver constraints;
* ``motors = (mtab, mgather, mscatter, mvec, mshp, msides, mstate, mref, mK, mr, mL, mD, mV, pos_motor)``: DC
  motors (flexmb/forces/motor.py), one row of ``mtab`` per group ``(n, nx, m_i, m_j, modes, offset in mgather, in
  mvec, in mshp, in the per-instance values, in pos_motor)``; the scatter has the motor's charge as last column
  (``nx + 1`` per instance), ``mV`` the supply voltages at the current time (set before each step);
* ``particles = (pgather, pmass, gravity, pos_p, lgather, lk, lc, lL0, pos_l, agather, apoint, ak, ac, pos_a)``:
  particles, particle links and anchors (flexmb/forces/particles.py, :func:`particle_terms`);
* ``ropes = (gather, scatter, axis, S, R, K, c, n, k_a, c_a, fkind, fpar, pos_rope)``: the rope-pulley pairs
  (flexmb/contact/rope.py ``RopePulleyGroup``, its arrays: gather and scatter (n, 10), pulley axes (n, 3), the
  second derivatives of A(p) (4, 4, 3, 3), per pair the laws' parameters and the built-in friction law's kind
  and parameters (``FrictionTable``), block positions; :func:`rope_terms`). They carry no history; their
  penetrations follow the pairs' in contact blocks (``blocks.run_block``, ``step_end.penetrations``).

The block positions are those of a dense row-major matrix for :func:`alpha_step`, or of
the CSR value array of the pattern when :class:`flexmb.solvers.compiled_step.CompiledEvaluation` calls
:func:`equations` for a sparse model.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .contact import contact_friction, contact_pairs
from .flexible import evaluate as flexible_evaluate
from .forces import loads_kernel, motor_kernel, spring_kernel
from .joints import (_angle_hess, _angle_rows, _coordinate_hess, _coordinate_rows, _distance_hess, _distance_rows,
                     _dot1_hess, _dot1_rows, _dot2_hess, _dot2_rows, _point_hess, _point_rows)
from .measures import ANGLE, measure_kernel
from .particles import anchor_kernel, link_kernel, particle_kernel
from .rigid import rigid_residual
from .rope import evaluate_pairs as rope_pairs
from .scatter import add_at, add_scaled_at, add_transpose_product
from .views import flat, view

# -- joint primitive groups ----------------------------------------------------------------------------------
@njit(cache=True)
def _group(g, gtab, gather, scatter, u0, S, drive):
    """Views of joint group g: kind, rows per instance, m_i, first row, gather, scatter (n, nx), u0 (n, 3, 3),
    S (n, 3, 3, modes), drive (3, n) (a C-contiguous view: the same kernel signatures as the assembly's calls,
    so that the joint kernels are not compiled a second time for other array layouts)."""
    kind, n, r, nx, mi, sm = gtab[g, 0], gtab[g, 1], gtab[g, 2], gtab[g, 3], gtab[g, 4], gtab[g, 5]
    og, ou, os_, dc, row0 = gtab[g, 6], gtab[g, 7], gtab[g, 8], gtab[g, 9], gtab[g, 10]
    return (kind, r, mi, row0, view(gather, og, (n, nx)), view(scatter, og, (n, nx)), view(u0, ou, (n, 3, 3)),
            view(S, os_, (n, 3, 3, sm)), view(drive, 3 * dc, (3, n)))

@njit(cache=True)
def _rows(kind, point, dot1, dot2, distance, angle, coordinate, qe, ve, gather, u0, S, mi, drive, phi, jac, gamma):
    """The ``_<kind>_rows`` kernel of joint kind ``kind``. The arguments named after the kinds are the joints'
    ``kinds`` (part 9 of the joints); one that is None leaves its kernel out of the compile."""
    if kind == 0 and point is not None:
        _point_rows(qe, ve, gather, u0, S, mi, drive, phi, jac, gamma)
    elif kind == 1 and dot1 is not None:
        _dot1_rows(qe, ve, gather, u0, S, mi, drive, phi, jac, gamma)
    elif kind == 2 and dot2 is not None:
        _dot2_rows(qe, ve, gather, u0, S, mi, drive, phi, jac, gamma)
    elif kind == 3 and distance is not None:
        _distance_rows(qe, ve, gather, u0, S, mi, drive, phi, jac, gamma)
    elif kind == 4 and angle is not None:
        _angle_rows(qe, ve, gather, u0, S, mi, drive, phi, jac, gamma)
    elif kind == 5 and coordinate is not None:
        _coordinate_rows(qe, ve, gather, u0, S, mi, drive, phi, jac, gamma)

@njit(cache=True)
def _hess(kind, point, dot1, dot2, distance, angle, coordinate, qe, gather, u0, S, mi, lam, H):
    """The ``_<kind>_hess`` kernel of joint kind ``kind`` (the kinds' arguments as in :func:`_rows`)."""
    if kind == 0 and point is not None:
        _point_hess(qe, gather, u0, S, mi, lam, H)
    elif kind == 1 and dot1 is not None:
        _dot1_hess(qe, gather, u0, S, mi, lam, H)
    elif kind == 2 and dot2 is not None:
        _dot2_hess(qe, gather, u0, S, mi, lam, H)
    elif kind == 3 and distance is not None:
        _distance_hess(qe, gather, u0, S, mi, lam, H)
    elif kind == 4 and angle is not None:
        _angle_hess(qe, gather, u0, S, mi, lam, H)
    elif kind == 5 and coordinate is not None:
        _coordinate_hess(qe, gather, u0, S, mi, lam, H)

@njit(cache=True)
def _extended(q, v):
    """``[q, ground]`` and ``[v, 0]``: the ground's fixed coordinates (position 0, p = (1, 0, 0, 0)) appended."""
    nq = q.size
    qe = np.zeros(nq + 7)
    ve = np.zeros(nq + 7)
    qe[:nq] = q
    ve[:nq] = v
    qe[nq + 3] = 1.0
    return qe, ve

@njit(cache=True)
def joint_rows(qe, ve, joints, phi, jac):
    """``Phi`` and its Jacobian (flat, group by group) of every joint row at the extended coordinates and
    velocities ``qe``, ``ve``."""
    for g in range(joints[0].shape[0]):
        group_rows(g, qe, ve, joints, phi, jac)

@njit(cache=True)
def group_rows(g, qe, ve, joints, phi, jac):
    """``Phi`` and its Jacobian of the rows of joint group ``g`` (into their places in ``phi`` and the flat
    ``jac``); no acceleration terms (an empty gamma: the kernels skip them)."""
    gtab, gather, scatter, u0, S, drive = joints[0], joints[1], joints[2], joints[3], joints[4], joints[5]
    kind, r, mi, row0, gg, sg, ug, Sg, dg = _group(g, gtab, gather, scatter, u0, S, drive)
    n, nx, oj = gg.shape[0], gg.shape[1], gtab[g, 11]
    ks = joints[9]
    _rows(kind, ks[0], ks[1], ks[2], ks[3], ks[4], ks[5], qe, ve, gg, ug, Sg, mi, dg, phi[row0:row0 + n * r],
          view(jac, oj, (n * r, nx)), phi[0:0])

@njit(cache=True)
def _spring_group(sg, springs):
    """Views of spring group sg: code, m_i, m_j, gather, scatter (n, nx), vectors (n, 4, 3), shapes
    (n, 4, 3, modes), sides (4,), k, c, x0, unwrapping reference (n,) and block positions (n nx nx)."""
    stab, sgather, sscatter, svec, sshp = springs[0], springs[1], springs[2], springs[3], springs[4]
    code, n, nx, mi, mj, sm = stab[sg, 0], stab[sg, 1], stab[sg, 2], stab[sg, 3], stab[sg, 4], stab[sg, 5]
    og, ov, osh, op, opos = stab[sg, 6], stab[sg, 7], stab[sg, 8], stab[sg, 9], stab[sg, 10]
    par = slice(op, op + n)
    return (code, mi, mj, sgather[og:og + n * nx].reshape((n, nx)), sscatter[og:og + n * nx].reshape((n, nx)),
            svec[ov:ov + 12 * n].reshape((n, 4, 3)), sshp[osh:osh + 12 * n * sm].reshape((n, 4, 3, sm)),
            springs[9][sg], springs[5][par], springs[6][par], springs[7][par], springs[8][par],
            springs[10][opos:opos + n * nx * nx])

@njit(cache=True)
def _contact_group(cg, contacts):
    """Views of contact group cg: code, m_i, m_j, sign, gather, scatter (n, nx), vectors, shapes, sides, and per
    pair the offset, law kind, K, n, h, v_min, c, the positions of its blocks and the range of its pairs."""
    ctab, csign = contacts[0], contacts[6]
    code, n, nx, mi, mj, sm = ctab[cg, 0], ctab[cg, 1], ctab[cg, 2], ctab[cg, 3], ctab[cg, 4], ctab[cg, 5]
    og, ov, osh, op, opos = ctab[cg, 6], ctab[cg, 7], ctab[cg, 8], ctab[cg, 9], ctab[cg, 10]
    par = slice(op, op + n)
    return (code, mi, mj, csign[cg], contacts[1][og:og + n * nx].reshape((n, nx)),
            contacts[2][og:og + n * nx].reshape((n, nx)), contacts[3][ov:ov + 12 * n].reshape((n, 4, 3)),
            contacts[4][osh:osh + 12 * n * sm].reshape((n, 4, 3, sm)), contacts[5][cg], contacts[7][par],
            contacts[8][par], contacts[9][par], contacts[10][par], contacts[11][par], contacts[12][par],
            contacts[13][par], contacts[14][opos:opos + n * nx * nx], par)

@njit(cache=True)
def _motor_group(g, motors):
    """Views of motor group g: m_i, m_j, gather (n, nx), scatter (n, nx + 1), vectors (n, 4, 3), shapes
    (n, 4, 3, modes), sides (4,), charge columns, unwrapping references, K_p, r_a, L_a, D, V (n,) and block
    positions (n (nx + 1)^2)."""
    mtab = motors[0]
    n, nx, mi, mj, sm = mtab[g, 0], mtab[g, 1], mtab[g, 2], mtab[g, 3], mtab[g, 4]
    og, ov, osh, op, opos = mtab[g, 5], mtab[g, 6], mtab[g, 7], mtab[g, 8], mtab[g, 9]
    par = slice(op, op + n)
    return (mi, mj, motors[1][og:og + n * nx].reshape((n, nx)),
            motors[2][og + op:og + op + n * (nx + 1)].reshape((n, nx + 1)),
            motors[3][ov:ov + 12 * n].reshape((n, 4, 3)), motors[4][osh:osh + 12 * n * sm].reshape((n, 4, 3, sm)),
            motors[5][g], motors[6][par], motors[7][par], motors[8][par], motors[9][par], motors[10][par],
            motors[11][par], motors[12][par], motors[13][opos:opos + n * (nx + 1) * (nx + 1)])

@njit(cache=True)
def accept_springs(q, v, springs):
    """After an accepted step: the unwrapping reference of angle springs moves to their angles there (as
    ``ScalarSpringGroup.accept``); returns the dampers' power ``-sum c x_dot^2`` (W)."""
    if springs is None:
        return 0.0
    false_ = np.bool_(False)  # no literal (docs/architecture.md §2)
    qe, ve = _extended(q, v)
    P = 0.0
    for sg in range(springs[0].shape[0]):
        code, mi, mj, gg, sc_, vec, shp, sides, k, c, x0, ref, pos = _spring_group(sg, springs)
        n, nx = gg.shape
        x, xd = np.empty(n), np.empty(n)
        measure_kernel(code, qe, ve, gg, vec, shp, sides, mi, mj, ref, false_, x, xd, np.empty((n, nx)),
                       np.empty((0, nx, nx)))
        for i in range(n):
            P -= c[i] * xd[i] * xd[i]
            if code == ANGLE:
                ref[i] = x[i]
    return P

# -- the families' terms (one function per family; each returns at once for a part that is None) ------------
@njit(cache=True)
def rigid_terms(bodies, q, v, vd, cM, cC, cK, with_matrix, r, vals):
    """Add the rigid bodies' residual rows (flexmb/compiled/rigid.py) into ``r`` and, when ``with_matrix``, their
    7 x 7 blocks into ``vals``."""
    if bodies is None:
        return
    idx, mass, J, gravity, pos_body = bodies
    if idx.shape[0]:
        rb = np.empty((idx.shape[0], 7))
        blk = np.empty((idx.shape[0], 7, 7))
        rigid_residual(q, v, vd, idx, mass, J, gravity, cM, cC, cK, with_matrix, rb, blk)
        add_at(r, flat(idx), flat(rb))
        if with_matrix:
            add_at(vals, pos_body, flat(blk))

@njit(cache=True)
def flexible_terms(flex, q, v, vd, cM, cC, cK, with_matrix, r, vals):
    """Add the flexible-body groups' residual rows and blocks (flexmb/compiled/flexible.py ``evaluate``)."""
    if flex is None:
        return
    ftab, fdata, idata, wdata, ftabs, fidx, pos_flex = flex
    for f in range(ftab.shape[0]):
        n, mm, oi, op = ftab[f, 8], ftab[f, 9], ftab[f, 10], ftab[f, 11]
        k = 7 + mm
        rf = np.empty((n, k))
        bf = np.empty((n if with_matrix else 0, k, k))
        e2, e3 = np.zeros((0, 0)), np.zeros((0, 0, 0))     # the terms-mode outputs, unused in residual mode
        flexible_evaluate(q, v, vd, fdata[ftab[f, 0]:ftab[f, 0] + ftab[f, 1]],
                          idata[ftab[f, 2]:ftab[f, 2] + ftab[f, 3]], wdata[ftab[f, 4]:ftab[f, 4] + ftab[f, 5]],
                          ftabs[ftab[f, 6]:ftab[f, 6] + ftab[f, 7]], cM, cC, cK, with_matrix, rf, bf,
                          e2, e3, e3, e3, e3, e3, e3, e3, e3)
        add_at(r, fidx[oi:oi + n * k], flat(rf))
        if with_matrix:
            add_at(vals, pos_flex[op:op + n * k * k], flat(bf))

@njit(cache=True)
def spring_terms(springs, qe, ve, cC, cK, with_matrix, r, vals):
    """Add the scalar spring-damper and bushing groups' terms (compiled/forces.py ``spring_kernel``, one call per
    group); False when a spring has no direction (the general path reports it)."""
    if springs is None:
        return True
    for sg in range(springs[0].shape[0]):
        code, mi, mj, gg, sc_, vec, shp, sides, k, c, x0, ref, pos = _spring_group(sg, springs)
        n, nx = gg.shape
        x, xd, rs = np.empty(n), np.empty(n), np.empty((n, nx))
        bs = np.empty((n if with_matrix else 1, nx, nx))
        if spring_kernel(code, qe, ve, gg, vec, shp, sides, mi, mj, ref, k, c, x0, cK, cC, with_matrix, x, xd,
                         rs, bs) >= 0:
            return False
        add_at(r, sc_.reshape(-1), rs.reshape(-1))
        if with_matrix:
            add_at(vals, pos, bs.reshape(-1))
    return True

@njit(cache=True)
def load_terms(loads, q, v, cK, with_matrix, r, vals):
    """Add the applied forces and torques at their vectors of this time (``loads[4]``; compiled/forces.py
    ``loads_kernel``)."""
    if loads is None:
        return
    lidx = loads[0]
    if lidx.shape[0]:
        nl = lidx.shape[0]
        rl = np.empty((nl, 7))
        bl = np.empty((nl if with_matrix else 1, 7, 7))
        loads_kernel(q, v, lidx, loads[1], loads[2], loads[3], loads[4], cK if with_matrix else 0.0,
                     with_matrix, rl, bl)
        add_at(r, lidx.reshape(-1), rl.reshape(-1))
        if with_matrix:
            add_at(vals, loads[5], bl.reshape(-1))

@njit(cache=True)
def motor_terms(motors, qe, ve, vd, cM, cC, cK, with_matrix, r, vals):
    """Add the DC motors' terms, one kernel call per group (compiled/forces.py ``motor_kernel``; the charge's
    acceleration is in ``vd``)."""
    if motors is None:
        return
    angle_ = np.int64(ANGLE)  # no literal (docs/architecture.md §2)
    for g in range(motors[0].shape[0]):
        mi, mj, gg, sc_, vec, shp, sides, state, ref, K, ra, L, D, V, pos = _motor_group(g, motors)
        n, nx = gg.shape
        rm = np.empty((n, nx + 1))
        bm = np.empty((n if with_matrix else 1, nx + 1, nx + 1))
        motor_kernel(angle_, qe, ve, vd, gg, state, vec, shp, sides, mi, mj, ref, K, ra, L, D, V, cM, cC, cK,
                     with_matrix, rm, bm)
        add_at(r, sc_.reshape(-1), rm.reshape(-1))
        if with_matrix:
            add_at(vals, pos, bm.reshape(-1))

@njit(cache=True)
def contact_terms(contacts, dyn, qe, ve, cC, cK, with_matrix, r, vals):
    """Add the contact pairs, one kernel call per group (compiled/contact.py ``contact_pairs``, ``contact_friction``)
    under the approach-speed history ``dyn``, user laws through the hook (compiled/hook.py); False at a pair without
    a normal or a user law that failed."""
    if contacts is None:
        return True
    speed, in_contact, last_rate = dyn
    for cg in range(contacts[0].shape[0]):
        (code, mi, mj, sign, gg, sc_, vec, shp, sides, offset, kind, K, nn, hh, vmin, cc, pos,
         par) = _contact_group(cg, contacts)
        n, nx = gg.shape
        x, xd, F, dF, dFd = np.empty(n), np.empty(n), np.empty(n), np.empty(n), np.empty(n)
        Jc, Hv, rc = np.empty((n, nx)), np.empty((n, nx)), np.empty((n, nx))
        bc = np.empty((n if with_matrix else 1, nx, nx))
        if contact_pairs(contacts[0][cg, 9], code, qe, ve, gg, vec, shp, sides, mi, mj, sign, offset, kind, K, nn,
                         hh, vmin, cc, speed[par], in_contact[par], last_rate[par], cC, cK, with_matrix, x, xd, F, dF,
                         dFd, Jc, Hv, rc, bc) >= 0:
            return False
        if contacts[15][cg]:        # friction of the pairs with a built-in friction law (ContactGroup._friction)
            contact_friction(contacts[16][cg], sign, qe, ve, gg, vec, shp, mi, mj, contacts[17][par],
                             contacts[18][par], contacts[19][par], F, dF, dFd, Jc, Hv, cK if with_matrix else 0.0,
                             cC if with_matrix else 0.0, with_matrix, rc, bc)
        add_at(r, sc_.reshape(-1), rc.reshape(-1))
        if with_matrix:
            add_at(vals, pos, bc.reshape(-1))
    return True

@njit(cache=True)
def joint_terms(joints, qe, ve, act, lam_act, with_matrix, cH, r, phi):
    """The joint primitive groups (one kernel call per group): ``Phi`` into ``phi``, ``Phi_q^T lambda`` of the active
    rows added into ``r``; returns the flat Jacobian (switched-off rows zero) and, when ``with_matrix`` and
    ``cH`` != 0, the flat Hessians of ``lambda . Phi`` (:func:`joint_matrix` adds them)."""
    if joints is None:
        return np.empty(0), np.empty(0)
    gtab, gather, scatter, u0, S, drive, pos_jac, pos_jacT, pos_hess, ks = joints
    jac = np.empty(pos_jac.size)
    H = np.empty(pos_hess.size)
    joint_rows(qe, ve, joints, phi, jac)
    for g in range(gtab.shape[0]):
        kind, rr, mi, row0, gg, sg, ug, Sg, dg = _group(g, gtab, gather, scatter, u0, S, drive)
        n, nx, oj, oh = gg.shape[0], gg.shape[1], gtab[g, 11], gtab[g, 12]
        rows = slice(row0, row0 + n * rr)
        jg = view(jac, oj, (n * rr, nx))
        for i in range(n * rr):
            if not act[row0 + i]:
                jg[i, :] = 0.0
        add_transpose_product(r, sg, jg, lam_act[rows], act[rows])
        if with_matrix and cH != 0.0:
            _hess(kind, ks[0], ks[1], ks[2], ks[3], ks[4], ks[5], qe, gg, ug, Sg, mi, lam_act[rows],
                  view(H, oh, (n, nx, nx)))
    return jac, H

@njit(cache=True)
def joint_matrix(joints, jac, H, cH, vals):
    """Add the joint rows' Jacobian (both blocks ``Phi_q`` and ``Phi_q^T``) and ``cH`` times their Hessians."""
    if joints is None:
        return
    add_at(vals, joints[6], jac)
    add_at(vals, joints[7], jac)
    if cH != 0.0:
        add_scaled_at(vals, joints[8], H, cH)

@njit(cache=True)
def copy_references(springs, out):
    """The springs' unwrapping references (``springs[8]``) into ``out``."""
    if springs is not None:
        out[:] = springs[8]

# -- the equations -----------------------------------------------------------------------------------------
@njit(cache=True)
def equations(q, v, vd, lam, act, with_matrix, cM, cC, cK, cH, model, dyn, r, phi, vals):
    """Residual ``r`` (nq), constraint values ``phi`` (m: joint rows, then one normalization row per body)
    and, when ``with_matrix``, the Newton matrix ``[[cM M + cC C + cK K + cH H, Phi_q^T], [Phi_q, D]]``
    added into ``vals`` (flat, zeroed by the caller) at the pattern positions. Rows with ``act`` False are
    switched off (zero row, 1 on the diagonal), as in ``Assembly.residual``. ``dyn`` holds the contacts'
    approach-speed history ``(speed, in_contact, last_rate)`` per pair. Returns False when a spring or a
    sphere-sphere contact has no direction (coincident points). A family's part of the model may be None (the
    model has none of it): its code is then not compiled (module docstring)."""
    bodies, joints, flex, norm, springs, contacts, loads, driver_rows, motors, particles = model[:10]
    ncols, pos_norm_jac, pos_norm_jacT, pos_norm_hess, pos_D = norm[0], norm[1], norm[2], norm[3], norm[4]
    nb = ncols.shape[0]
    m = phi.size
    mj = m - nb
    qe, ve = _extended(q, v)
    lam_act = np.empty(m)
    for i in range(m):
        lam_act[i] = lam[i] if act[i] else 0.0
    r[:] = 0.0
    rigid_terms(bodies, q, v, vd, cM, cC, cK, with_matrix, r, vals)
    flexible_terms(flex, q, v, vd, cM, cC, cK, with_matrix, r, vals)
    if not spring_terms(springs, qe, ve, cC, cK, with_matrix, r, vals):
        return False                # a spring without direction: the general path reports it
    load_terms(loads, q, v, cK, with_matrix, r, vals)
    motor_terms(motors, qe, ve, vd, cM, cC, cK, with_matrix, r, vals)
    if not contact_terms(contacts, dyn, qe, ve, cC, cK, with_matrix, r, vals):
        return False
    if not particle_terms(particles, q, v, vd, qe, ve, cM, cC, cK, with_matrix, r, vals):
        return False
    rope_terms(model[10], qe, ve, cC, cK, with_matrix, r, vals)
    jac, H = joint_terms(joints, qe, ve, act, lam_act, with_matrix, cH, r, phi)
    for i in range(mj):
        if not act[i]:
            phi[i] = 0.0
    # Euler-parameter normalization (p.p - 1)/2 = 0
    for bb in range(nb):
        row = mj + bb
        s = 0.0
        for c in range(4):
            s += q[ncols[bb, c]] * q[ncols[bb, c]]
        phi[row] = 0.5 * (s - 1.0) if act[row] else 0.0
        for c in range(4):
            r[ncols[bb, c]] += lam_act[row] * q[ncols[bb, c]]
    if not with_matrix:
        return True
    joint_matrix(joints, jac, H, cH, vals)
    for bb in range(nb):
        row = mj + bb
        w = 1.0 if act[row] else 0.0
        for c in range(4):
            p = q[ncols[bb, c]] * w
            k = pos_norm_jac[4 * bb + c]
            if k >= 0:
                vals[k] += p
            k = pos_norm_jacT[4 * bb + c]
            if k >= 0:
                vals[k] += p
            k = pos_norm_hess[16 * bb + 5 * c]
            if k >= 0:
                vals[k] += cH * lam_act[row]
    for i in range(m):
        if not act[i] and pos_D[i] >= 0:
            vals[pos_D[i]] += 1.0
    return True

# -- particles, particle links and anchors (flexmb/forces/particles.py) -----------------------------------------
@njit(cache=True)
def particle_terms(parts, q, v, vd, qe, ve, cM, cC, cK, with_matrix, r, vals):
    """Add the particles' ``m (a - g)``, the links' and the anchors' ``-Q`` (flexmb/compiled/particles.py) into
    ``r`` and, when ``with_matrix``, their blocks ``cM m I``, ``cK dr/dq + cC dr/dv`` into ``vals`` through their
    position maps. ``parts = (pgather, pmass, gravity, pos_p, lgather, lk, lc, lL0, pos_l, agather, apoint, ak, ac,
    pos_a)`` (:class:`flexmb.solvers.compiled_step.CompiledStep`). Returns False when a link has zero length (no
    direction: the general path reports it)."""
    if parts is None:
        return True
    pgather, pmass, pg, pos_p, lgather, lk, lc, lL0, pos_l, agather, apoint, ak, ac, pos_a = parts
    n = pgather.shape[0]
    if n:
        rp = np.empty((n, 3))
        bp = np.empty((n if with_matrix else 0, 3, 3))
        particle_kernel(q, v, vd, pgather, pmass, pg, cM, with_matrix, rp, bp)
        add_at(r, pgather.reshape(-1), rp.reshape(-1))
        if with_matrix:
            add_at(vals, pos_p, bp.reshape(-1))
    n = lgather.shape[0]
    if n:
        for k in range(n):
            s = 0.0
            for i in range(3):
                d = qe[lgather[k, 3 + i]] - qe[lgather[k, i]]
                s += d * d
            if not s > 0.0:
                return False
        rl = np.empty((n, 6))
        bl = np.empty((n if with_matrix else 0, 6, 6))
        link_kernel(qe, ve, lgather, lk, lc, lL0, cK, cC, with_matrix, rl, bl, np.empty((n, 3)))
        add_at(r, lgather.reshape(-1), rl.reshape(-1))
        if with_matrix:
            add_at(vals, pos_l, bl.reshape(-1))
    n = agather.shape[0]
    if n:
        ra = np.empty((n, 3))
        ba = np.empty((n if with_matrix else 0, 3, 3))
        anchor_kernel(q, v, agather, apoint, ak, ac, cK, cC, with_matrix, ra, ba, np.empty((n, 2)))
        add_at(r, agather.reshape(-1), ra.reshape(-1))
        if with_matrix:
            add_at(vals, pos_a, ba.reshape(-1))
    return True

# -- rope-pulley pairs (flexmb/contact/rope.py) ------------------------------------------------------------------
@njit(cache=True)
def rope_terms(ropes, qe, ve, cC, cK, with_matrix, r, vals):
    """Add the rope-pulley pairs' ``r = -D^T f'`` into ``r`` and, when ``with_matrix``, their blocks
    ``cK dr/dq + cC dr/dq_dot`` into ``vals`` (one :func:`flexmb.compiled.rope.evaluate_pairs` call, as
    ``RopePulleyGroup.residual``); returns the per-pair parts (n, 9) of ``contact_kernel``."""
    if ropes is None:
        return np.empty((0, 9))
    gather, scatter, axis, S, R, K, c, nexp, ka, ca, fkind, fpar, pos = ropes
    n = gather.shape[0]
    parts = np.empty((n, 9))
    if n == 0:
        return parts
    rr = np.empty((n, 10))
    blk = np.empty((n if with_matrix else 0, 10, 10))
    rope_pairs(qe, ve, gather, axis, S, R, K, c, nexp, ka, ca, fkind, fpar, cK if with_matrix else 0.0,
               cC if with_matrix else 0.0, with_matrix, rr, blk, parts)
    add_at(r, flat(scatter), flat(rr))
    if with_matrix:
        add_at(vals, pos, flat(blk))
    return parts
