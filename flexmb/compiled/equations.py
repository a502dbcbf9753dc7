"""The equations of a model on the compiled step: residual ``r = M vd - Q + Phi_q^T lambda``, constraint values
``Phi`` and the values of the Newton matrix, written through the position maps of the fixed pattern
(flexmb/sparsity.py), one function per element family (:func:`rigid_terms`, :func:`flexible_terms`,
:func:`spring_terms`, :func:`load_terms`, :func:`motor_terms`, :func:`contact_terms`, :func:`joint_terms`,
:func:`particle_terms`, :func:`rope_terms`, :func:`nonlinear_spring_terms`), each returning at once for a part that is None, and
:func:`equations`, which calls them all: the Newton iteration of flexmb/compiled/step.py and the sparse compiled
evaluation (:class:`flexmb.solvers.compiled_step.CompiledEvaluation`) both call it.

The model is a named tuple of the families' parts (flexmb/compiled/model.py ``Model``, packed by
flexmb/packing.py ``pack_model``); each function gets only the part it uses (numba passes a named tuple as all its
arrays' fields). A part is None when a specialized model lacks the family. The contacts' approach-speed history
changes at accepted steps (``ContactGroup.accept``, or in a block flexmb/compiled/step_end.py) and comes as the
separate ``dyn`` argument; blocks of models with contacts are taken by ``blocks.run_block`` (``contact_steps``),
which ends a block at a contact onset for the integrator to locate. Rope-pulley pairs carry no history; their
penetrations follow the pairs' in contact blocks.

The block positions are those of a dense row-major matrix for :func:`alpha_step`, or of
the CSR value array of the pattern when :class:`flexmb.solvers.compiled_step.CompiledEvaluation` calls
:func:`equations` for a sparse model.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .contact import contact_friction, contact_pairs
from .flexible import energy as flexible_energy, evaluate as flexible_evaluate
from .forces import loads_kernel, motor_kernel, spring_kernel
from .joints import (_angle_hess, _angle_rows, _coordinate_hess, _coordinate_rows, _distance_hess, _distance_rows,
                     _dot1_hess, _dot1_rows, _dot2_hess, _dot2_rows, _point_hess, _point_rows)
from .measures import ANGLE, measure_kernel
from .nonlinear_spring import spring_kernel as nonlinear_spring_kernel, spring_power as nonlinear_spring_power
from .particles import anchor_kernel, link_kernel, particle_kernel
from .rigid import rigid_residual
from .rope import evaluate_pairs as rope_pairs, pairs_power as rope_pairs_power
from .scatter import add_at, add_scaled_at, add_transpose_product
from .views import flat, view

# -- joint primitive groups ----------------------------------------------------------------------------------
@njit(cache=True)
def _group(g, joints):
    """Views of joint group g: kind, rows per instance, m_i, first row, gather, scatter (n, nx), u0 (n, 3, 3),
    S (n, 3, 3, modes), drive (3, n) (a C-contiguous view: the same kernel signatures as the assembly's calls,
    so that the joint kernels are not compiled a second time for other array layouts)."""
    t = joints.table
    n, nx, sm, og = t.n[g], t.nx[g], t.modes[g], t.at_gather[g]
    return (t.kind[g], t.rows[g], t.m_i[g], t.row0[g], view(joints.gather, og, (n, nx)),
            view(joints.scatter, og, (n, nx)), view(joints.u0, t.at_u0[g], (n, 3, 3)),
            view(joints.S, t.at_S[g], (n, 3, 3, sm)), view(joints.drive, 3 * t.first[g], (3, n)))

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
    for g in range(joints.table.n.size):
        group_rows(g, qe, ve, joints, phi, jac)

@njit(cache=True)
def group_rows(g, qe, ve, joints, phi, jac):
    """``Phi`` and its Jacobian of the rows of joint group ``g`` (into their places in ``phi`` and the flat
    ``jac``); no acceleration terms (an empty gamma: the kernels skip them)."""
    kind, r, mi, row0, gg, sg, ug, Sg, dg = _group(g, joints)
    n, nx, oj = gg.shape[0], gg.shape[1], joints.table.at_jac[g]
    ks = joints.kinds
    _rows(kind, ks.point, ks.dot1, ks.dot2, ks.distance, ks.angle, ks.coordinate, qe, ve, gg, ug, Sg, mi, dg,
          phi[row0:row0 + n * r], view(jac, oj, (n * r, nx)), phi[0:0])

@njit(cache=True)
def _spring_group(sg, springs):
    """Views of spring group sg: code, m_i, m_j, gather, scatter (n, nx), vectors (n, 4, 3), shapes
    (n, 4, 3, modes), sides (4,), k, c, x0, unwrapping reference (n,) and block positions (n nx nx)."""
    t = springs.table
    code, n, nx, mi, mj, sm = t.code[sg], t.n[sg], t.nx[sg], t.m_i[sg], t.m_j[sg], t.modes[sg]
    og, ov, osh, op, opos = t.at_gather[sg], t.at_vec[sg], t.at_shape[sg], t.first[sg], t.at_pos[sg]
    par = slice(op, op + n)
    return (code, mi, mj, springs.gather[og:og + n * nx].reshape((n, nx)),
            springs.scatter[og:og + n * nx].reshape((n, nx)), springs.vec[ov:ov + 12 * n].reshape((n, 4, 3)),
            springs.shape[osh:osh + 12 * n * sm].reshape((n, 4, 3, sm)), springs.sides[sg], springs.k[par],
            springs.c[par], springs.x0[par], springs.ref[par], springs.pos[opos:opos + n * nx * nx])

@njit(cache=True)
def _contact_group(cg, contacts):
    """Views of contact group cg: code, m_i, m_j, sign, gather, scatter (n, nx), vectors, shapes, sides, and per
    pair the offset, law kind, K, n, h, v_min, c, the positions of its blocks and the range of its pairs."""
    t, c = contacts.table, contacts
    code, n, nx, mi, mj, sm = t.code[cg], t.n[cg], t.nx[cg], t.m_i[cg], t.m_j[cg], t.modes[cg]
    og, ov, osh, op, opos = t.at_gather[cg], t.at_vec[cg], t.at_shape[cg], t.first[cg], t.at_pos[cg]
    par = slice(op, op + n)
    return (code, mi, mj, c.sign[cg], c.gather[og:og + n * nx].reshape((n, nx)),
            c.scatter[og:og + n * nx].reshape((n, nx)), c.vec[ov:ov + 12 * n].reshape((n, 4, 3)),
            c.shape[osh:osh + 12 * n * sm].reshape((n, 4, 3, sm)), c.sides[cg], c.offset[par], c.law[par],
            c.K[par], c.n[par], c.h[par], c.v_min[par], c.c[par], c.pos[opos:opos + n * nx * nx], par)

@njit(cache=True)
def _motor_group(g, motors):
    """Views of motor group g: m_i, m_j, gather (n, nx), scatter (n, nx + 1), vectors (n, 4, 3), shapes
    (n, 4, 3, modes), sides (4,), charge columns, unwrapping references, K_p, r_a, L_a, D, V (n,) and block
    positions (n (nx + 1)^2)."""
    t, m = motors.table, motors
    n, nx, mi, mj, sm = t.n[g], t.nx[g], t.m_i[g], t.m_j[g], t.modes[g]
    og, ov, osh, op, opos = t.at_gather[g], t.at_vec[g], t.at_shape[g], t.first[g], t.at_pos[g]
    par = slice(op, op + n)
    return (mi, mj, m.gather[og:og + n * nx].reshape((n, nx)),
            m.scatter[og + op:og + op + n * (nx + 1)].reshape((n, nx + 1)),
            m.vec[ov:ov + 12 * n].reshape((n, 4, 3)), m.shape[osh:osh + 12 * n * sm].reshape((n, 4, 3, sm)),
            m.sides[g], m.charge[par], m.ref[par], m.K_p[par], m.r_a[par], m.L_a[par], m.D[par], m.V[par],
            m.pos[opos:opos + n * (nx + 1) * (nx + 1)])

@njit(cache=True)
def accept_springs(q, v, springs):
    """After an accepted step: the unwrapping reference of angle springs moves to their angles there (as
    ``ScalarSpringGroup.accept``); returns the dampers' power ``-sum c x_dot^2`` (W)."""
    if springs is None:
        return 0.0
    false_ = np.bool_(False)  # no literal (docs/architecture.md §2)
    qe, ve = _extended(q, v)
    P = 0.0
    for sg in range(springs.table.n.size):
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
    idx, mass, J, gravity, pos_body = bodies.idx, bodies.mass, bodies.J, bodies.gravity, bodies.pos
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
    t = flex.table
    for f in range(t.n.size):
        n, oi, op = t.n[f], t.at_idx[f], t.at_pos[f]
        k = 7 + t.m[f]
        rf = np.empty((n, k))
        bf = np.empty((n if with_matrix else 0, k, k))
        e2, e3 = np.zeros((0, 0)), np.zeros((0, 0, 0))     # the terms-mode outputs, unused in residual mode
        flexible_evaluate(q, v, vd, flex.fdata[t.at_f[f]:t.at_f[f] + t.n_f[f]],
                          flex.idata[t.at_i[f]:t.at_i[f] + t.n_i[f]], flex.wdata[t.at_w[f]:t.at_w[f] + t.n_w[f]],
                          flex.tabs[t.at_tab[f]:t.at_tab[f] + t.n_tab[f]], cM, cC, cK, with_matrix, rf, bf,
                          e2, e3, e3, e3, e3, e3, e3, e3, e3)
        add_at(r, flex.idx[oi:oi + n * k], flat(rf))
        if with_matrix:
            add_at(vals, flex.pos[op:op + n * k * k], flat(bf))

@njit(cache=True)
def spring_terms(springs, qe, ve, cC, cK, with_matrix, r, vals):
    """Add the scalar spring-damper and bushing groups' terms (compiled/forces.py ``spring_kernel``, one call per
    group); False when a spring has no direction (the general path reports it)."""
    if springs is None:
        return True
    for sg in range(springs.table.n.size):
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
    """Add the applied forces and torques at their vectors of this time (``loads.vec``; compiled/forces.py
    ``loads_kernel``)."""
    if loads is None:
        return
    lidx = loads.idx
    if lidx.shape[0]:
        nl = lidx.shape[0]
        rl = np.empty((nl, 7))
        bl = np.empty((nl if with_matrix else 1, 7, 7))
        loads_kernel(q, v, lidx, loads.is_force, loads.body_fixed, loads.s, loads.vec, cK if with_matrix else 0.0,
                     with_matrix, rl, bl)
        add_at(r, lidx.reshape(-1), rl.reshape(-1))
        if with_matrix:
            add_at(vals, loads.pos, bl.reshape(-1))

@njit(cache=True)
def motor_terms(motors, qe, ve, vd, cM, cC, cK, with_matrix, r, vals):
    """Add the DC motors' terms, one kernel call per group (compiled/forces.py ``motor_kernel``; the charge's
    acceleration is in ``vd``)."""
    if motors is None:
        return
    angle_ = np.int64(ANGLE)  # no literal (docs/architecture.md §2)
    for g in range(motors.table.n.size):
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
    for cg in range(contacts.table.n.size):
        (code, mi, mj, sign, gg, sc_, vec, shp, sides, offset, kind, K, nn, hh, vmin, cc, pos,
         par) = _contact_group(cg, contacts)
        n, nx = gg.shape
        x, xd, F, dF, dFd = np.empty(n), np.empty(n), np.empty(n), np.empty(n), np.empty(n)
        Jc, Hv, rc = np.empty((n, nx)), np.empty((n, nx)), np.empty((n, nx))
        bc = np.empty((n if with_matrix else 1, nx, nx))
        if contact_pairs(contacts.table.first[cg], code, qe, ve, gg, vec, shp, sides, mi, mj, sign, offset, kind, K, nn,
                         hh, vmin, cc, speed[par], in_contact[par], last_rate[par], cC, cK, with_matrix, x, xd, F, dF,
                         dFd, Jc, Hv, rc, bc) >= 0:
            return False
        if contacts.has_friction[cg]:   # friction of the pairs with a built-in friction law (ContactGroup._friction)
            contact_friction(contacts.geometry[cg], sign, qe, ve, gg, vec, shp, mi, mj, contacts.radii[par],
                             contacts.friction[par], contacts.friction_par[par], F, dF, dFd, Jc, Hv, cK if with_matrix else 0.0,
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
    t, ks = joints.table, joints.kinds
    jac = np.empty(joints.pos_jac.size)
    H = np.empty(joints.pos_hess.size)
    joint_rows(qe, ve, joints, phi, jac)
    for g in range(t.n.size):
        kind, rr, mi, row0, gg, sg, ug, Sg, dg = _group(g, joints)
        n, nx, oj, oh = gg.shape[0], gg.shape[1], t.at_jac[g], t.at_hess[g]
        rows = slice(row0, row0 + n * rr)
        jg = view(jac, oj, (n * rr, nx))
        for i in range(n * rr):
            if not act[row0 + i]:
                jg[i, :] = 0.0
        add_transpose_product(r, sg, jg, lam_act[rows], act[rows])
        if with_matrix and cH != 0.0:
            _hess(kind, ks.point, ks.dot1, ks.dot2, ks.distance, ks.angle, ks.coordinate, qe, gg, ug, Sg, mi, lam_act[rows],
                  view(H, oh, (n, nx, nx)))
    return jac, H

@njit(cache=True)
def joint_matrix(joints, jac, H, cH, vals):
    """Add the joint rows' Jacobian (both blocks ``Phi_q`` and ``Phi_q^T``) and ``cH`` times their Hessians."""
    if joints is None:
        return
    add_at(vals, joints.pos_jac, jac)
    add_at(vals, joints.pos_jacT, jac)
    if cH != 0.0:
        add_scaled_at(vals, joints.pos_hess, H, cH)

@njit(cache=True)
def copy_references(springs, out):
    """The springs' unwrapping references (``springs.ref``) into ``out``."""
    if springs is not None:
        out[:] = springs.ref

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
    norm = model.norm
    ncols, pos_norm_jac, pos_norm_jacT, pos_norm_hess, pos_D = norm.cols, norm.pos_jac, norm.pos_jacT, norm.pos_hess, \
        norm.pos_D
    nb = ncols.shape[0]
    m = phi.size
    mj = m - nb
    qe, ve = _extended(q, v)
    lam_act = np.empty(m)
    for i in range(m):
        lam_act[i] = lam[i] if act[i] else 0.0
    r[:] = 0.0
    rigid_terms(model.bodies, q, v, vd, cM, cC, cK, with_matrix, r, vals)
    flexible_terms(model.flexible, q, v, vd, cM, cC, cK, with_matrix, r, vals)
    if not spring_terms(model.springs, qe, ve, cC, cK, with_matrix, r, vals):
        return False                # a spring without direction: the general path reports it
    load_terms(model.loads, q, v, cK, with_matrix, r, vals)
    motor_terms(model.motors, qe, ve, vd, cM, cC, cK, with_matrix, r, vals)
    if not contact_terms(model.contacts, dyn, qe, ve, cC, cK, with_matrix, r, vals):
        return False
    if not particle_terms(model.particles, q, v, vd, qe, ve, cM, cC, cK, with_matrix, r, vals):
        return False
    rope_terms(model.ropes, qe, ve, cC, cK, with_matrix, r, vals)
    if not nonlinear_spring_terms(model.nonlinear_springs, qe, ve, cC, cK, with_matrix, r, vals):
        return False
    jac, H = joint_terms(model.joints, qe, ve, act, lam_act, with_matrix, cH, r, phi)
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
    joint_matrix(model.joints, jac, H, cH, vals)
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
    position maps (flexmb/compiled/model.py ``Particles``). Returns False when a link has zero length (no
    direction: the general path reports it)."""
    if parts is None:
        return True
    pgather, pmass, pg, pos_p = parts.gather, parts.mass, parts.gravity, parts.pos
    lgather, lk, lc, lL0, pos_l = parts.link_gather, parts.link_k, parts.link_c, parts.link_L0, parts.link_pos
    agather, apoint, ak, ac, pos_a = (parts.anchor_gather, parts.anchor_point, parts.anchor_k, parts.anchor_c,
                                      parts.anchor_pos)
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
    gather, axis, S, R, K, c, nexp = ropes.gather, ropes.axis, ropes.S, ropes.R, ropes.K, ropes.c, ropes.n
    ka, ca, fkind, fpar = ropes.k_a, ropes.c_a, ropes.friction, ropes.friction_par
    n = gather.shape[0]
    parts = np.empty((n, 9))
    if n == 0:
        return parts
    rr = np.empty((n, 10))
    blk = np.empty((n if with_matrix else 0, 10, 10))
    rope_pairs(qe, ve, gather, axis, S, R, K, c, nexp, ka, ca, fkind, fpar, cK if with_matrix else 0.0,
               cC if with_matrix else 0.0, with_matrix, rr, blk, parts)
    add_at(r, flat(ropes.scatter), flat(rr))
    if with_matrix:
        add_at(vals, ropes.pos, flat(blk))
    return parts


# -- nonlinear spring-dampers (flexmb/forces/nonlinear_spring.py) -------------------------------------------------
@njit(cache=True)
def _nonlinear_spring_group(g, part):
    """Views of nonlinear-spring group g: m_i, m_j, gather, scatter (n, nx), vectors (n, 4, 3), shapes
    (n, 4, 3, modes), sides (4,), free lengths, dampings, table offsets and sizes (n,), block positions."""
    t = part.table
    n, nx, mi, mj, sm = t.n[g], t.nx[g], t.m_i[g], t.m_j[g], t.modes[g]
    og, ov, osh, op, opos = t.at_gather[g], t.at_vec[g], t.at_shape[g], t.first[g], t.at_pos[g]
    par = slice(op, op + n)
    return (mi, mj, part.gather[og:og + n * nx].reshape((n, nx)), part.scatter[og:og + n * nx].reshape((n, nx)),
            part.vec[ov:ov + 12 * n].reshape((n, 4, 3)), part.shape[osh:osh + 12 * n * sm].reshape((n, 4, 3, sm)),
            part.sides[g], part.x0[par], part.c[par], part.at[par], part.size[par], part.pos[opos:opos + n * nx * nx])

@njit(cache=True)
def nonlinear_spring_terms(part, qe, ve, cC, cK, with_matrix, r, vals):
    """Add the nonlinear spring-dampers' terms, one kernel call per group (compiled/nonlinear_spring.py
    ``spring_kernel``); False when a spring has no direction (the general path reports it)."""
    if part is None:
        return True
    for g in range(part.table.n.size):
        mi, mj, gg, sc_, vec, shp, sides, x0, c, at, size, pos = _nonlinear_spring_group(g, part)
        n, nx = gg.shape
        x, xd, rs = np.empty(n), np.empty(n), np.empty((n, nx))
        bs = np.empty((n if with_matrix else 1, nx, nx))
        if nonlinear_spring_kernel(qe, ve, gg, vec, shp, sides, mi, mj, x0, c, at, size, part.xs, part.Fs, cK, cC,
                                   with_matrix, x, xd, rs, bs) >= 0:
            return False
        add_at(r, sc_.reshape(-1), rs.reshape(-1))
        if with_matrix:
            add_at(vals, pos, bs.reshape(-1))
    return True

@njit(cache=True)
def nonlinear_springs_power(q, v, part):
    """Damper power ``-sum c e_dot^2`` (W) of the nonlinear springs (as ``NonlinearSpringGroup.power``)."""
    if part is None:
        return 0.0
    false_ = np.bool_(False)  # no literal (docs/architecture.md §2)
    qe, ve = _extended(q, v)
    P = 0.0
    for g in range(part.table.n.size):
        mi, mj, gg, sc_, vec, shp, sides, x0, c, at, size, pos = _nonlinear_spring_group(g, part)
        n, nx = gg.shape
        x, xd = np.empty(n), np.empty(n)
        nonlinear_spring_kernel(qe, ve, gg, vec, shp, sides, mi, mj, x0, c, at, size, part.xs, part.Fs, 0.0, 0.0,
                                false_, x, xd, np.empty((n, nx)), np.empty((1, nx, nx)))
        P += nonlinear_spring_power(xd, c)
    return P


# -- the families' powers at an accepted state (the energy balance of a block) -----------------------------------
@njit(cache=True)
def family_powers(q, v, model):
    """Non-conservative power (W) of the families at an accepted state, the sum of one function per family (each
    returns 0 for a part that is None): modal damping of the flexible bodies, applied loads, DC motors, particle
    links and anchors, rope-pulley pairs, nonlinear springs (springs and contact pairs book theirs when they accept a step)."""
    return (loads_power(q, v, model.loads) + motors_power(q, v, model.motors) + particle_power(q, v, model.particles)
            + rope_power(q, v, model.ropes) + flexible_power(v, model.flexible)
            + nonlinear_springs_power(q, v, model.nonlinear_springs))


@njit(cache=True)
def motors_power(q, v, motors):
    """Supply power minus losses ``sum V i - r_a i^2 - D omega^2`` (W) of the DC motors at their current
    voltages (as ``DCMotorGroup.power``)."""
    if motors is None:
        return 0.0
    false_, angle_ = np.bool_(False), np.int64(ANGLE)  # no literals (docs/architecture.md §2)
    qe, ve = _extended(q, v)
    P = 0.0
    for g in range(motors.table.n.size):
        mi, mj, gg, sc_, vec, shp, sides, state, ref, K, ra, L, D, V, pos = _motor_group(g, motors)
        n, nx = gg.shape
        x, w = np.empty(n), np.empty(n)
        measure_kernel(angle_, qe, ve, gg, vec, shp, sides, mi, mj, ref, false_, x, w, np.empty((n, nx)),
                       np.empty((0, nx, nx)))
        for i in range(n):
            cur = v[state[i]]
            P += V[i] * cur - ra[i] * cur * cur - D[i] * w[i] * w[i]
    return P

@njit(cache=True)
def flexible_power(v, flex):
    """Modal damping power ``-sum eta_d^T D eta_d`` (W) of the flexible-body groups."""
    if flex is None:
        return 0.0
    t = flex.table
    damping_ = np.int64(3)      # energy(): the damping power (no literal, docs/architecture.md §2)
    p = 0.0
    for f in range(t.n.size):
        p += flexible_energy(v, v, flex.fdata[t.at_f[f]:t.at_f[f] + t.n_f[f]],
                             flex.idata[t.at_i[f]:t.at_i[f] + t.n_i[f]], flex.wdata[t.at_w[f]:t.at_w[f] + t.n_w[f]],
                             flex.tabs[t.at_tab[f]:t.at_tab[f] + t.n_tab[f]], damping_, np.zeros(0))
    return p

@njit(cache=True)
def loads_power(q, v, loads):
    """Power ``sum Q . v`` (W) of the applied loads at their current vectors (as ``AppliedLoadGroup.power``)."""
    if loads is None:
        return 0.0
    false_ = np.bool_(False)  # no literal (docs/architecture.md §2)
    lidx = loads.idx
    if lidx.shape[0] == 0:
        return 0.0
    return loads_kernel(q, v, lidx, loads.is_force, loads.body_fixed, loads.s, loads.vec, 0.0, false_,
                        np.empty((lidx.shape[0], 7)), np.empty((1, 7, 7)))

@njit(cache=True)
def particle_power(q, v, parts):
    """Damper power (W) of the particle links ``-sum c L_dot^2`` and anchors ``-sum c |x_dot|^2`` (as
    ``ParticleLinkGroup.power`` and ``ParticleAnchorGroup.power``)."""
    if parts is None:
        return 0.0
    false_ = np.bool_(False)  # no literal (docs/architecture.md §2)
    lgather, lk, lc, lL0 = parts.link_gather, parts.link_k, parts.link_c, parts.link_L0
    agather, apoint, ak, ac = parts.anchor_gather, parts.anchor_point, parts.anchor_k, parts.anchor_c
    P = 0.0
    n = lgather.shape[0]
    if n:
        qe, ve = _extended(q, v)
        pl = np.empty((n, 3))
        link_kernel(qe, ve, lgather, lk, lc, lL0, 0.0, 0.0, false_, np.empty((n, 6)), np.empty((0, 6, 6)), pl)
        for k in range(n):
            P -= lc[k] * pl[k, 2] * pl[k, 2]
    n = agather.shape[0]
    if n:
        pa = np.empty((n, 2))
        anchor_kernel(q, v, agather, apoint, ak, ac, 0.0, 0.0, false_, np.empty((n, 3)), np.empty((0, 3, 3)), pa)
        for k in range(n):
            P += pa[k, 1]
    return P

@njit(cache=True)
def rope_power(q, v, ropes):
    """Power (W, <= 0) of the rope-pulley pairs' radial and axial damping and friction, as
    ``RopePulleyGroup.power``."""
    if ropes is None or ropes.gather.shape[0] == 0:
        return 0.0
    false_ = np.bool_(False)  # no literal (docs/architecture.md §2)
    qe, ve = _extended(q, v)
    return rope_pairs_power(rope_terms(ropes, qe, ve, 0.0, 0.0, false_, np.zeros(q.size), np.zeros(0)), ropes.R,
                            ropes.k_a)
