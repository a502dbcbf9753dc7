"""The step-end work of compiled-step models with contact pairs.

A model on the compiled step (flexmb/compiled/step.py, :class:`flexmb.solvers.compiled_step.CompiledStep`) with
sphere-plane, sphere-sphere or clearance pairs (built-in normal and friction laws) needs, after each accepted step,
what :class:`flexmb.solvers.stepper.AlphaIntegrator` does between steps: the contact damping and friction power
under the step's approach-speed history, the history moved on (``ContactGroup.accept``), the penetrations of the
accepted state for the contact-step limit and the two onset tests of the next step, the spring and driver powers.
This module does that in compiled code (:func:`contact_penetrations`, :func:`accept_contacts`,
:func:`friction_power`, :func:`onset_fraction`); :func:`flexmb.compiled.blocks.run_block` takes blocks of such
steps in one call with it. A block repeats the integrator's decisions step by step (fixed-step runs;
docs/theory-contact.md §4):

* the step is ``min(h, h_max, t_end - t)``, limited to ``h_contact`` while a pair penetrates or touches
  (penetration ``> -contact_tol``), and after a step shorter than the nominal one the next one may double
  (``h = min(2 h_try, h_nominal)``);
* a block runs at one step size ``h_b`` (the drivers and loads are sampled for its times beforehand) and ends
  before a step of another size;
* it ends before a step whose free-flight prediction ``q + h v + h^2 vd / 2`` brings a pair that is apart to
  penetrate (the prediction test of ``AlphaIntegrator._contact_step``) and it discards a step whose Newton result
  does (the onset cut of ``AlphaIntegrator._attempt``): the Python integrator then locates the onset
  exactly as it would have, from the same state, so blocks give the trajectories of single steps.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .contact import HYSTERESIS, USER, contact_friction, contact_pairs, hysteresis_one, linear_one, trial_speed
from .hook import user_laws
from .measures import measure_kernel
from .equations import _contact_group, _extended, rope_terms

ONSET, STEP_CHANGE, BAD_CONTACT = 10, 11, 12
"""Why a block of contact steps (flexmb/compiled/blocks.py ``run_block``) ended early (besides the failure codes of
``alpha_step``): a contact onset to locate, a step of another size, a pair without a normal at the accepted state."""

ONSET_FRACTION_MAX = 0.99
"""An onset at or after this fraction of a step is not cut to (``AlphaIntegrator``)."""


@njit(cache=True)
def contact_penetrations(q, v, contacts, delta, rate):
    """Penetration ``delta = sign (x0 - x)`` (m) and its rate ``-sign x_dot`` (m/s) of every pair of the model's
    contact groups (``contacts``, the model's part; pairs concatenated group by group), as
    ``ContactGroup.state``. Returns the first pair whose ``LENGTH`` measure has no direction, or -1."""
    if contacts is None:
        return -1
    false_ = np.bool_(False)  # no literal (docs/architecture.md §2)
    t = contacts.table
    qe, ve = _extended(q, v)
    for cg in range(t.n.size):
        code, n, nx, mi, mj, sm = t.code[cg], t.n[cg], t.nx[cg], t.m_i[cg], t.m_j[cg], t.modes[cg]
        og, ov, osh, op = t.at_gather[cg], t.at_vec[cg], t.at_shape[cg], t.first[cg]
        sign = contacts.sign[cg]
        x, xd = np.empty(n), np.empty(n)
        bad = measure_kernel(code, qe, ve, contacts.gather[og:og + n * nx].reshape((n, nx)),
                             contacts.vec[ov:ov + 12 * n].reshape((n, 4, 3)),
                             contacts.shape[osh:osh + 12 * n * sm].reshape((n, 4, 3, sm)), contacts.sides[cg], mi, mj,
                             np.zeros(n), false_, x, xd, np.empty((n, nx)), np.empty((0, nx, nx)))
        if bad >= 0:
            return op + bad
        for i in range(n):
            delta[op + i] = sign * (contacts.offset[op + i] - x[i])
            rate[op + i] = -sign * xd[i]
    return -1


@njit(cache=True)
def penetrations(q, v, model, delta, rate):
    """:func:`contact_penetrations` of the pairs, then the rope-pulley pairs' ``radius - rho`` (m) after them (the
    order of ``Assembly.penetrations``: pair groups, then ropes; ``RopePulleyGroup.penetration``) in ``delta``
    (their ``rate`` entries are not used). Returns the first pair without a direction, or -1."""
    bad = contact_penetrations(q, v, model.contacts, delta, rate)
    if bad < 0:
        rope_penetrations(q, v, model.ropes, delta, rate)
    return bad


@njit(cache=True)
def rope_penetrations(q, v, ropes, delta, rate):
    """The rope-pulley pairs' ``radius - rho`` (m) into the last entries of ``delta`` (rates 0)."""
    if ropes is None or ropes.gather.shape[0] == 0:
        return
    false_ = np.bool_(False)  # no literal (docs/architecture.md §2)
    n = ropes.gather.shape[0]
    qe, ve = _extended(q, v)
    p = rope_terms(ropes, qe, ve, 0.0, 0.0, false_, np.zeros(q.size), np.zeros(0))
    o = delta.size - n
    for k in range(n):
        delta[o + k] = p[k, 4]
        rate[o + k] = 0.0


@njit(cache=True)
def accept_contacts(delta, rate, contacts, speed, in_contact, last_rate):
    """At an accepted state with penetrations ``delta`` (m) and rates ``rate`` (m/s): the damping power
    ``-sum (F - K delta_+^n) delta_dot`` (W) of the pairs' laws under the step's approach-speed history
    (``LawTable.nonconservative_power``), then the history moved on as ``ApproachSpeeds.accept``: a pair that
    penetrates keeps (or captures, at touch) its approach speed, the others are released; every pair's last
    rate is its rate here (docs/theory-contact.md §1.3; Lankarani & Nikravesh 1990 for the hysteresis law)."""
    if contacts is None:
        return 0.0
    kind, K, nn, hh, vmin, cc = contacts.law, contacts.K, contacts.n, contacts.h, contacts.v_min, contacts.c
    n = delta.size
    vm = np.empty(n)
    user = False
    for i in range(n):
        vm[i] = trial_speed(delta[i], rate[i], speed[i], in_contact[i], last_rate[i])
        user = user or (kind[i] == USER and delta[i] > 0.0)
    Fu = np.zeros(n if user else 0)
    if user:            # the user laws of pairs in contact at the accepted state, through the hook (compiled/hook.py)
        user_laws(0, delta, rate, vm, Fu, np.zeros(n), np.zeros(n))
    P = 0.0
    for i in range(n):
        d, dd = delta[i], rate[i]
        if kind[i] == HYSTERESIS:
            F = hysteresis_one(K[i], nn[i], hh[i], vmin[i], d, dd, vm[i])[0]
        elif kind[i] == USER:
            F = Fu[i] if user else 0.0
        else:
            F = linear_one(K[i], cc[i], d, dd)[0]
        P -= (F - K[i] * max(d, 0.0) ** nn[i]) * dd
        touching = d > 0.0
        in_contact[i] = touching
        speed[i] = vm[i] if touching else 0.0
        last_rate[i] = dd
    return P


@njit(cache=True)
def friction_power(q, v, contacts, speed, in_contact, last_rate):
    """Power (W, <= 0) of the friction of the pairs with a friction law at an accepted state, under the step's
    approach-speed history (the normal forces of ``ContactGroup._powers``, then ``contact_friction``)."""
    if contacts is None:
        return 0.0
    false_ = np.bool_(False)  # no literal (docs/architecture.md §2)
    P = 0.0
    qe, ve = _extended(q, v)
    for cg in range(contacts.table.n.size):
        if not contacts.has_friction[cg]:
            continue
        (code, mi, mj, sign, gg, sc, vec, shp, sides, offset, kind, K, nn, hh, vmin, cc, pos,
         par) = _contact_group(cg, contacts)
        n, nx = gg.shape
        x, xd, F, dF, dFd = np.empty(n), np.empty(n), np.empty(n), np.empty(n), np.empty(n)
        J, Hv, r, blk = np.empty((n, nx)), np.empty((n, nx)), np.empty((n, nx)), np.empty((1, nx, nx))
        contact_pairs(contacts.table.first[cg], code, qe, ve, gg, vec, shp, sides, mi, mj, sign, offset, kind, K, nn, hh,
                      vmin, cc, speed[par], in_contact[par], last_rate[par], 0.0, 0.0, false_, x, xd, F, dF, dFd, J, Hv,
                      r, blk)
        P += contact_friction(contacts.geometry[cg], sign, qe, ve, gg, vec, shp, mi, mj, contacts.radii[par],
                              contacts.friction[par], contacts.friction_par[par], F, dF, dFd, J, Hv, 0.0, 0.0, false_, r, blk)
    return P


@njit(cache=True)
def onset_fraction(d0, d1, tol):
    """Fraction of a step at which the first new contact begins: over the pairs apart at its start
    (``d0 < -tol``) that penetrate at its end (``d1 > tol``), the smallest ``-d0 / (d1 - d0)`` (linear
    interpolation of the penetration, docs/theory-contact.md §4; ``Assembly.contact_onset``); ``inf`` when
    no pair touches."""
    frac = np.inf
    for i in range(d0.size):
        if d0[i] < -tol and d1[i] > tol:
            frac = min(frac, -d0[i] / (d1[i] - d0[i]))
    return frac
