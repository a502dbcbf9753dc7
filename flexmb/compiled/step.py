"""The whole generalized-alpha step in one compiled call, and blocks of such steps (docs/architecture.md §5).

A model of rigid and flexible bodies (modal bodies, with or without stiffening; nonlinear beams) joined by
joint primitives (every kind, drivers included) under gravity spends a time step almost entirely in
per-call overhead when each Newton iteration calls a dozen compiled kernels from Python.
:func:`alpha_step` runs the Newton iteration of one step in one call: the predictor, the residual
``r = M vd - Q + Phi_q^T lambda`` and ``Phi`` through the same kernels as the general assembly
(:func:`~flexmb.compiled.rigid.rigid_residual`, :func:`~flexmb.compiled.flexible.evaluate`, the
``_<kind>_rows``/``_<kind>_hess`` kernels of :mod:`flexmb.compiled.joints`), the Newton matrix written
into a dense array through the position maps of the fixed pattern (flexmb/sparsity.py), a dense LU with
partial pivoting that skips the zeros of the iteration matrix, the increment and the convergence test of
:meth:`flexmb.solvers.generalized_alpha.AlphaStepper.step`, whose arithmetic it repeats term by term
(Arnold & Bruls 2007; constraint scaling of Bottasso, Dopico & Trainelli 2008). Blocks of such steps, with the
driver and damping powers of the energy balance, are taken by :func:`flexmb.compiled.blocks.run_block`, the one
entry point called from Python (a single step is a block of one); the functions only it reaches are inlined into
it (``inline="always"``): numba then compiles and optimizes the step's code once, instead of once more for every
nested function that links the same kernels (the first compile of a nested entry re-optimizes everything it
links, docs/architecture.md §2). :func:`flexmb.compiled.equations.equations` (the residual and Newton values, one
function per family, flexmb/compiled/equations.py) is the exception: the sparse compiled evaluation calls it too,
so it is compiled once on its own and linked into the step. Each family's terms are one function that takes the
family's part of the model and returns at once when the part is None (``equations.rigid_terms``, ...,
:func:`flexible_power`, :func:`driver_power`): a model with None for its absent families compiles a step
without their code (flexmb/compiled/specialization.py; docs/architecture.md §2).

This module holds the Newton iteration of a step (:func:`alpha_step`, with the dense LU of
flexmb/compiled/dense_lu.py), the powers of the energy balance and the redundancy check at a step's end, and the
time-dependent inputs of a block's steps; the model it runs on is described in flexmb/compiled/equations.py.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .dense_lu import lu_factor, lu_solve, PIVOT_RATIO_MIN, saddle_scale
from .equations import _extended, equations, family_powers, group_rows, joint_rows
from .stepping import apply_increment, corrected_rates, newton_rhs, newton_weights, predict
from .views import view

CONVERGED, NONFINITE_RESIDUAL, SINGULAR, NONFINITE_INCREMENT, NO_CONVERGENCE = 0, 1, 2, 3, 4
"""Outcome codes of :func:`alpha_step`."""

# -- one step ----------------------------------------------------------------------------------------------
@njit(cache=True, inline="always")
def step_work(nq, m):
    """The work arrays of :func:`alpha_step` for ``nq`` coordinates and ``m`` constraint rows: predictor
    ``(q, v, vd)``, Newton weights, residual, constraint values, right-hand side and increment (natural and
    elimination order), the Newton matrix (n x n flat, n = nq + m), pivots and row scales."""
    n = nq + m
    return (np.empty(nq), np.empty(nq), np.empty(nq), np.empty(nq), np.empty(nq), np.empty(m), np.empty(n),
            np.empty(n), np.empty(n), np.empty(n), np.zeros(n * n), np.empty(n, dtype=np.int64), np.ones(n))

@njit(cache=True, inline="always")
def alpha_step(q0, v0, vd0, a0, lam0, h, settings, q_tol, act, model, dyn, cscale, q, v, vd, a, lam, stats, work):
    """One generalized-alpha step of size h from ``(q0, v0, vd0, a0, lam0)`` into ``(q, v, vd, a, lam)`` with the
    parameters, tolerance and iteration limit of ``settings`` (flexmb/compiled/model.py ``BlockSettings``);
    the model's ``drive`` holds the drivers' f and f'' at the step's end, ``cscale`` the coordinates' scale in the
    Newton matrix (``Assembly.inertia_scale``, :func:`saddle_scale`). Returns an outcome code
    (``CONVERGED``, ...); ``stats`` gets ``[newton iterations, factorizations, last increment norm]``; ``work``
    the step's arrays (:func:`step_work`, allocated once per block)."""
    am, af, beta, gamma = settings.am, settings.af, settings.beta, settings.gamma
    tol, max_iter = settings.tol, settings.max_iter
    nq = q0.size
    m = lam0.size
    n = nq + m
    qp, vp, vdp, wq, r, phi, rhs, dx, rhs_o, dx_o, vals, piv, d = work
    predict(q0, v0, vd0, a0, h, am, beta, gamma, qp, vp, vdp)
    bp = (1.0 - am) / (beta * h * h * (1.0 - af))
    gp = gamma / (beta * h)
    scale = beta * h * h
    cM, cC, cK, cH = (1.0 - am) / (1.0 - af), gamma * h, scale, scale
    q[:] = qp
    v[:] = vp
    vd[:] = vdp
    lam[:] = lam0
    newton_weights(qp, tol, q_tol, settings.use_q_tol, 100.0 * 2.220446049250313e-16, wq)
    order = model.norm.order
    LU = view(vals, 0, (n, n))
    d[:] = 1.0
    have_lu = False
    prev = np.inf
    stats[0] = 0.0
    stats[1] = 0.0
    for it in range(1, max_iter + 1):
        need = not have_lu
        if need:
            vals[:] = 0.0
        if not equations(q, v, vd, lam, act, need, cM, cC, cK, cH, model, dyn, r, phi, vals):
            return NONFINITE_RESIDUAL
        if not newton_rhs(r, phi, scale, rhs):
            return NONFINITE_RESIDUAL
        if need:
            saddle_scale(LU, nq, cscale, d, order)
            if not lu_factor(LU, piv) > PIVOT_RATIO_MIN:
                return SINGULAR
            stats[1] += 1.0
            have_lu = True
        for i in range(n):
            rhs_o[i] = rhs[order[i]] * d[i]
        lu_solve(LU, piv, rhs_o, dx_o)
        for i in range(n):
            dx[order[i]] = dx_o[i] * d[i]
        stats[0] += 1.0
        err = apply_increment(dx, scale, wq, q, lam)
        stats[2] = err
        if not np.isfinite(err):
            return NONFINITE_INCREMENT
        corrected_rates(q, qp, vp, vdp, gp, bp, v, vd)
        theta = err / prev if it > 1 else 1.0
        if err <= 1.0:        # a fresh matrix every step: the increment test alone (AlphaStepper.step)
            for i in range(nq):
                a[i] = ((1.0 - af) * vd[i] + af * vd0[i] - am * a0[i]) / (1.0 - am)
            return CONVERGED
        if it > 1 and theta > 0.5:
            have_lu = False    # slow contraction: refresh the iteration matrix
        prev = err
    return NO_CONVERGENCE

# -- per-step quantities of the energy balance and the redundancy check ---------------------------------------
@njit(cache=True, inline="always")
def powers(q, v, lam, act, model):
    """``(non-conservative power, driver power)`` (W) at an accepted state: the families' powers
    (:func:`flexmb.compiled.equations.family_powers`) and ``-sum lambda_d (Phi_q,d v)`` over the active driver rows
    (as ``Assembly.step_end``; the springs' damper power comes with their accept)."""
    return family_powers(q, v, model), driver_power(q, v, lam, act, model.joints, model.driver_rows, model.norm.cols.shape[0])

@njit(cache=True)
def driver_power(q, v, lam, act, joints, driver_rows, nb):
    """``-sum lambda_d (Phi_q,d v)`` (W) over the active driver rows ``driver_rows`` (``nb`` normalization rows
    follow the joint rows in ``lam``; None: none)."""
    if joints is None or driver_rows is None or driver_rows.size == 0:
        return 0.0
    t, gather = joints.table, joints.gather
    jac = np.empty(joints.pos_jac.size)
    phi = np.empty(lam.size - nb)
    qe, ve = _extended(q, v)
    for g in range(t.n.size):               # the rows of the groups that hold driver rows only
        n, rr, row0 = t.n[g], t.rows[g], t.row0[g]
        for k in range(driver_rows.size):
            if row0 <= driver_rows[k] < row0 + n * rr:
                group_rows(g, qe, ve, joints, phi, jac)
                break
    p_drv = 0.0
    for k in range(driver_rows.size):
        row = driver_rows[k]
        if not act[row]:
            continue
        for g in range(t.n.size):             # the group, instance and Jacobian row of this row
            n, rr, nx, row0 = t.n[g], t.rows[g], t.nx[g], t.row0[g]
            if row0 <= row < row0 + n * rr:
                inst = (row - row0) // rr
                base = t.at_jac[g] + (row - row0) * nx
                s = 0.0
                for x in range(nx):
                    s += jac[base + x] * ve[gather[t.at_gather[g] + inst * nx + x]]
                p_drv -= lam[row] * s
    return p_drv

@njit(cache=True, inline="always")
def switched_off_violation(q, off_rows, joints, norm):
    """Largest |Phi| of the rows ``off_rows`` (switched off as redundant) at ``q`` (with v = 0)."""
    ncols = norm.cols
    nb = ncols.shape[0]
    phi = joint_values(q, joints, nb)
    mj = phi.size - nb
    for bb in range(nb):
        s = 0.0
        for c in range(4):
            s += q[ncols[bb, c]] * q[ncols[bb, c]]
        phi[mj + bb] = 0.5 * (s - 1.0)
    worst = 0.0
    for k in range(off_rows.size):
        worst = max(worst, abs(phi[off_rows[k]]))
    return worst

@njit(cache=True)
def joint_values(q, joints, extra):
    """``Phi`` of every joint row at ``q`` (v = 0), followed by ``extra`` entries left unset."""
    if joints is None:
        return np.empty(extra)
    t = joints.table
    mj = 0
    for g in range(t.n.size):
        mj = max(mj, t.row0[g] + t.n[g] * t.rows[g])
    phi = np.empty(mj + extra)
    qe, ve = _extended(q, np.zeros(q.size))
    joint_rows(qe, ve, joints, phi[:mj], np.empty(joints.pos_jac.size))
    return phi

# -- the time-dependent inputs of a block step ------------------------------------------------------------------
@njit(cache=True, inline="always")
def set_step_inputs(k, model, inputs):
    """The time-dependent inputs of step k of a block, sampled beforehand (``BlockInputs``): the drivers' f and f''
    into the model's ``drive`` at ``driven``, the applied loads' vectors and the motors' supply voltages (left as
    they are when the arrays are empty: a single step sets them in the model itself)."""
    set_drive(model.joints, inputs.driven, inputs.drive_values[k])
    if inputs.load_values.shape[1]:
        set_load_vectors(model.loads, inputs.load_values[k])
    if inputs.voltage_values.shape[1]:
        set_voltages(model.motors, inputs.voltage_values[k])

@njit(cache=True)
def set_drive(joints, driven, values):
    """The drivers' f and f'' (``values`` (2, len(driven))) into the joints' ``drive`` at ``driven``."""
    if joints is None:
        return
    drive = joints.drive
    for c in range(driven.shape[1]):
        drive[driven[0, c]] = values[0, c]
        drive[driven[1, c]] = values[1, c]

@njit(cache=True)
def set_load_vectors(loads, values):
    """The applied loads' vectors (loads, 3) of this step."""
    if loads is not None:
        loads.vec[:, :] = values

@njit(cache=True)
def set_voltages(motors, values):
    """The motors' supply voltages of this step."""
    if motors is not None:
        motors.V[:] = values

