"""Blocks of compiled generalized-alpha steps: the one entry point of the compiled step (docs/architecture.md §1).

:func:`run_block` takes up to ``n`` fixed steps of a model on the compiled step (flexmb/compiled/step.py: the
Newton iteration of one step, :func:`~flexmb.compiled.step.alpha_step`) and books each accepted state with
its powers. It serves every caller: a single step (a block of one), blocks of models without contacts and
blocks of models with contact pairs, whose step-end work and onset tests are those of
flexmb/compiled/step_end.py (``contact_steps``). It is the only function of the step that Python calls
(besides :func:`~flexmb.compiled.equations.equations`, which the sparse compiled evaluation calls and the step
links): numba compiles a function once per distinct signature and re-optimizes all the code it links, so
one entry compiles the step once, where separate plain and contact runs compiled it twice and each
specialization of an entry's argument types (an array's layout, an int for a float) compiles it again
(``CompiledStep`` passes C-contiguous arrays and typed scalars only). The contact pairs' user laws are the
step's one call into Python (flexmb/compiled/hook.py, in ``step.contact_terms`` and ``step_end.accept_contacts``;
numba checks only a kernel's own file for a stale cache, so this note changed with them).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .equations import accept_springs, copy_references
from .step import CONVERGED, alpha_step, powers, set_step_inputs, step_work, switched_off_violation
from .views import unowned
from .step_end import (BAD_CONTACT, ONSET, ONSET_FRACTION_MAX, STEP_CHANGE, accept_contacts, friction_power,
                       onset_fraction, penetrations)

__all__ = ["run_block"]


@njit(cache=True)
def run_block(settings, start, inputs, model, dyn, act, q_tol, off_rows, cscale, pen, h_state, out):
    """Up to ``settings.n_steps`` steps from the state ``start`` (flexmb/compiled/model.py: ``BlockSettings``,
    ``BlockStart``, ``BlockInputs``, ``BlockOutputs``, ``Model``), step k of size ``inputs.sizes[k]`` (s) ending at
    ``inputs.times[k]`` (s) (both from :func:`flexmb.solvers.step_times.step_times`: the one rule of the step times);
    row k of ``out`` gets the state after step k, its non-conservative and driver powers (W, when
    ``settings.energy``), the largest |Phi| of the rows switched off as redundant (``off_rows``) and, when ``out.sref``
    has rows (models with angle springs or contact pairs), the springs' unwrapping references after step k, the
    element history of that row. ``act``: the active constraint rows; ``q_tol`` the coordinates' absolute
    tolerances when ``settings.use_q_tol`` (:func:`~flexmb.compiled.stepping.newton_weights`); ``cscale`` the
    coordinates' scale in the Newton matrix; ``h_state`` (1,) the integrator's step ``h`` (s).

    Without ``contact_steps`` the block ends after ``n_steps`` or at a step that fails (its Newton counts included
    in ``out.stats``). With ``contact_steps`` (a model with contact pairs, flexmb/compiled/step_end.py): the steps
    are of size ``h_b`` (the last of the run stretched or shortened to ``t_end`` in ``sizes``) and the block ends
    before a step that asks another size (``min(h, h_max)``; ``h_contact`` while a pair's penetration ``pen`` (m)
    (contact pairs, then rope-pulley pairs: ``step_end.penetrations``) exceeds ``-contact_tol``, the doubling back
    to ``h_nominal`` after a shorter step, kept in ``h_state``), before a step whose free-flight prediction or
    Newton result starts a contact (``locate``; onsets later than ``aim_min`` into the step), and at a pair without
    a normal; the contacts' step-end work (friction and damping power, the approach-speed history ``dyn`` moved on,
    ``pen`` updated) is done after each step and row k of ``out.dyn`` gets the contacts' history ``(speed,
    in_contact, last_rate)``; Newton counts are those of accepted steps (the integrator takes a discarded attempt
    again and counts it then).

    Returns ``(steps taken, code)``: ``CONVERGED`` when it took ``n_steps``, else a failure
    code of ``alpha_step``, ``ONSET``, ``STEP_CHANGE`` or ``BAD_CONTACT``. ``out.last_a`` gets the algorithmic
    acceleration of the last state."""
    model = unowned(model)      # the caller holds the arrays: no reference counting of them in the block
    contacts, springs = model.contacts, model.springs
    n_steps, h_b, h_max, h_contact = settings.n_steps, settings.h_b, settings.h_max, settings.h_contact
    contact_steps, locate, contact_tol = settings.contact_steps, settings.locate, settings.contact_tol
    energy = settings.energy
    times, sizes, stats = inputs.times, inputs.sizes, out.stats
    speed, in_contact, last_rate = dyn
    nq, m, npair = start.q.size, start.lam.size, pen.size       # contact pairs, then rope-pulley pairs (no history)
    nc = speed.size
    q, v, vd, a, lam = start.q.copy(), start.v.copy(), start.vd.copy(), start.a.copy(), start.lam.copy()
    q1, v1, vd1, a1, lam1 = np.empty(nq), np.empty(nq), np.empty(nq), np.empty(nq), np.empty(m)
    qp, vp = np.empty(nq), np.empty(nq)
    d1, r1 = np.empty(npair), np.empty(npair)
    st = np.zeros(3)
    work = step_work(nq, m)
    h = h_state[0]
    for k in range(n_steps):
        h_try = sizes[k]
        if contact_steps:
            h_ask = min(h, h_max)                      # AlphaIntegrator._attempt
            if settings.use_h_contact:                          # AlphaIntegrator._contact_step
                touching = False
                for i in range(npair):
                    if pen[i] > -contact_tol:
                        touching = True
                if touching:
                    h_ask = min(h_ask, h_contact)
            if h_ask != h_b:
                return k, STEP_CHANGE
            if locate:                                 # the free-flight prediction of the step
                for i in range(nq):
                    qp[i] = q[i] + h_try * v[i] + 0.5 * h_try * h_try * vd[i]
                    vp[i] = v[i] + h_try * vd[i]
                if penetrations(qp, vp, model, d1, r1) >= 0:
                    return k, BAD_CONTACT
                if onset_fraction(pen, d1, contact_tol) < ONSET_FRACTION_MAX:
                    return k, ONSET
        set_step_inputs(k, model, inputs)
        code = alpha_step(q, v, vd, a, lam, h_try, settings, q_tol, act, model, dyn, cscale, q1, v1, vd1, a1, lam1,
                          st, work)
        if not contact_steps:
            stats[0] += st[0]
            stats[1] += st[1]
        if code != CONVERGED:
            return k, code
        if contact_steps:
            if penetrations(q1, v1, model, d1, r1) >= 0:
                return k, BAD_CONTACT
            if locate:                                 # the onset test of the Newton result
                frac = onset_fraction(pen, d1, contact_tol)
                if frac < ONSET_FRACTION_MAX and h_try * frac >= settings.aim_min:
                    return k, ONSET
            stats[0] += st[0]
            stats[1] += st[1]
            if h_try < settings.h_nominal:             # recover the requested step (fixed-step runs)
                h = min(2.0 * h_try, settings.h_nominal)
                h_state[0] = h
        q, q1 = q1, q
        v, v1 = v1, v
        vd, vd1 = vd1, vd
        a, a1 = a1, a
        lam, lam1 = lam1, lam
        out.t[k] = times[k]
        out.q[k] = q
        out.v[k] = v
        out.vd[k] = vd
        out.lam[k] = lam
        # step end (Assembly.step_end): springs, then contacts (power under the step's history, then accept)
        p_nc = accept_springs(q, v, springs)
        if contact_steps:
            if energy:
                p_nc += friction_power(q, v, contacts, speed, in_contact, last_rate)
            p_nc += accept_contacts(d1[:nc], r1[:nc], contacts, speed, in_contact, last_rate)
            pen[:] = d1
        if energy:
            p_rest, out.p_drv[k] = powers(q, v, lam, act, model)
            out.p_nc[k] = p_nc + p_rest
        else:
            out.p_nc[k], out.p_drv[k] = 0.0, 0.0
        out.off[k] = switched_off_violation(q, off_rows, model.joints, model.norm) if off_rows.size else 0.0
        if out.sref.shape[0]:                          # the springs' history of every row (angle springs)
            copy_references(springs, out.sref[k])
        if contact_steps:
            for i in range(nc):
                out.dyn[k, 0, i] = speed[i]
                out.dyn[k, 1, i] = 1.0 if in_contact[i] else 0.0
                out.dyn[k, 2, i] = last_rate[i]
        out.last_a[:] = a
    return n_steps, CONVERGED
