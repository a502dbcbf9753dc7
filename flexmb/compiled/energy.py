"""Kinetic and potential energy of a whole model in one compiled call (the energy balance, docs/architecture.md §4).

``Assembly.kinetic_energy`` / ``potential_energy`` evaluate the energies body group by body group and family by
family, a few Python calls each (about 70 µs a family). The run's energy-balance check (flexmb/solvers/watch.py)
and ``Result.energy()`` take them instead from :class:`flexmb.energies.CompiledEnergy`: one compiled call of
:func:`energy_rows`
evaluates every state of a list of states, for

* rigid bodies: ``sum m |r_d|^2 / 2 + w'^T J w' / 2`` and ``-m g . r`` (:func:`~flexmb.compiled.rigid.rigid_energies`;
  Nikravesh 1988, §11.2);
* flexible bodies on the compiled kernels (modal bodies, nonlinear beams): ``v^T M v / 2``, gravity
  ``-g . (m r + A S)`` and the strain energy (:func:`flexmb.compiled.flexible.energy`; Shabana, *Dynamics of
  Multibody Systems*, 3rd ed., §5.4);
* scalar springs (spring-dampers, rotational springs, bushings): ``k (x - x0)^2 / 2`` of their measure, angles
  unwrapped about the reference of the history (flexmb/forces/springs.py);
* contact pairs (sphere-plane, sphere-sphere, clearance), user laws included: ``K delta^(n+1) / (n+1)`` for
  ``delta > 0`` (Hunt & Crossley 1975; Lankarani & Nikravesh 1990, the elastic part of the law; the law's ``K``
  and ``n``, as ``LawTable.elastic_energy``);
* DC motors: the magnetic energy ``L_a i^2 / 2`` (kinetic in the electromechanical analogy);
* particles ``m |x_d|^2 / 2``, ``-m g . x``; particle links ``k (L - L0)^2 / 2``; anchors ``k |x - x0|^2 / 2``
  (Pedersen, Hansen & Ambrosio 2004, §2);
* applied loads: no stored energy (their work is in the balance's work term).

Any other family (user forces, crash elements, mesh contacts, ropes, exact beams ...) keeps its Python
``kinetic``/``potential`` and is added per state. The same arithmetic as the per-family methods, summed in
another order: equal to rounding (``tests/test_compiled_energy.py``: 1e-12 relative).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .flexible import energy as flexible_energy
from .measures import measure_kernel
from .particles import anchor_kernel, link_kernel, particle_energy
from .rigid import rigid_energies

__all__ = ["energy_rows"]


@njit(cache=True)
def _measures(Q, V, k, qe, ve, t, gather, vecs, shps, sides, ref, x, xd, out):
    """Measures ``x`` and rates ``xd`` at state ``k`` of ``Q``, ``V`` (extended into the work vectors ``qe``, ``ve``)
    of every instance of the packed groups of table ``t`` (flexmb/compiled/model.py ``MeasureTable``);
    ``out[k, 2]`` set to 1 when a length has no direction."""
    false_ = np.bool_(False)      # no literal (docs/architecture.md §2)
    _extended_rows(Q, V, k, qe, ve)
    for g in range(t.n.size):
        code, n, nx, mi, mj, sm = t.code[g], t.n[g], t.nx[g], t.m_i[g], t.m_j[g], t.modes[g]
        og, ov, osh, op = t.at_gather[g], t.at_vec[g], t.at_shape[g], t.first[g]
        if n == 0:
            continue
        xg, xdg = np.empty(n), np.empty(n)
        gg = gather[og:og + n * nx].reshape((n, nx))
        vg = vecs[ov:ov + 12 * n].reshape((n, 4, 3))
        sg = shps[osh:osh + 12 * n * sm].reshape((n, 4, 3, sm))
        if measure_kernel(code, qe, ve, gg, vg, sg, sides[g], mi, mj, ref[op:op + n], false_, xg, xdg,
                          np.empty((n, nx)), np.empty((0, nx, nx))) >= 0:
            out[k, 2] = 1.0
        x[op:op + n] = xg
        xd[op:op + n] = xdg


@njit(cache=True)
def energy_rows(Q, V, srefs, model, out):
    """Kinetic and potential energy (J) of the states ``Q[k]``, ``V[k]`` (nt, nq) into ``out[k, 0]``, ``out[k, 1]``
    (``out[k, 2]`` = 1 where a spring or contact length has no direction: the caller evaluates that state on the
    per-family path, which raises the error naming the element). ``srefs`` (nt or 1, springs): the springs'
    unwrapping references (angle measures) at each state.

    ``model``: the compiled model (flexmb/compiled/model.py ``Model``, packed by flexmb/packing.py for the
    energies: its bodies, flexible bodies, springs, contact pairs, motors and particles are read). A family given as
    None (the model has none) is left out of the compile. The families are added one after the other, each over all
    states, in the order of the per-family methods."""
    out[:, :] = 0.0
    _rigid_rows(Q, V, model.bodies, out)
    _flexible_rows(Q, V, model.flexible, out)
    _spring_rows(Q, V, srefs, model.springs, out)
    _contact_rows(Q, V, model.contacts, out)
    _motor_rows(V, model.motors, out)
    _particle_rows(Q, V, model.particles, out)


@njit(cache=True)
def _extended_rows(Q, V, k, qe, ve):
    """State k of ``Q``, ``V`` into the extended vectors ``qe``, ``ve`` (the ground's coordinates last)."""
    nq = Q.shape[1]
    qe[:nq] = Q[k]
    ve[:nq] = V[k]
    qe[nq:] = 0.0
    ve[nq:] = 0.0
    qe[nq + 3] = 1.0                    # the ground: position 0, Euler parameters (1, 0, 0, 0), at rest


@njit(cache=True)
def _rigid_rows(Q, V, bodies, out):
    """Rigid bodies: ``m |r_d|^2 / 2 + w'^T J w' / 2`` and ``-m g . r`` (J) of each state, added into ``out``."""
    if bodies is None:
        return
    idx, mass, J, grav = bodies.idx, bodies.mass, bodies.J, bodies.gravity
    for k in range(Q.shape[0]):
        T, U = rigid_energies(Q[k], V[k], idx, mass, J, grav)
        out[k, 0] += T
        out[k, 1] += U


@njit(cache=True)
def _flexible_rows(Q, V, flex, out):
    """Flexible-body groups: kinetic energy, gravity potential and strain energy (J) of each state."""
    if flex is None:
        return
    kinetic_, gravity_, strain_ = np.int64(0), np.int64(1), np.int64(2)     # no literals (docs/architecture.md §2)
    t = flex.table
    no_out = np.zeros(0)
    nf = 0
    for f in range(t.n.size):
        nf = max(nf, flex.tabs[t.at_tab[f], 0])
    strain = np.empty(nf)
    for k in range(Q.shape[0]):
        q, v = Q[k], V[k]
        for f in range(t.n.size):
            fd = flex.fdata[t.at_f[f]:t.at_f[f] + t.n_f[f]]
            it = flex.idata[t.at_i[f]:t.at_i[f] + t.n_i[f]]
            wd = flex.wdata[t.at_w[f]:t.at_w[f] + t.n_w[f]]
            tb = flex.tabs[t.at_tab[f]:t.at_tab[f] + t.n_tab[f]]
            out[k, 0] += flexible_energy(q, v, fd, it, wd, tb, kinetic_, no_out)
            out[k, 1] += flexible_energy(q, q, fd, it, wd, tb, gravity_, no_out)
            nb = tb[0, 0]
            flexible_energy(q, q, fd, it, wd, tb, strain_, strain[:nb])
            for i in range(nb):
                out[k, 1] += strain[i]


@njit(cache=True)
def _spring_rows(Q, V, srefs, springs, out):
    """Scalar springs: ``k (x - x0)^2 / 2`` (J) of each state (``out[k, 2]`` = 1 at a length without direction)."""
    if springs is None:
        return
    sk, sx0 = springs.k, springs.x0
    ns = sk.size
    if ns == 0:
        return
    qe, ve = np.empty(Q.shape[1] + 7), np.empty(Q.shape[1] + 7)
    xs, xds = np.empty(ns), np.empty(ns)
    for k in range(Q.shape[0]):
        _measures(Q, V, k, qe, ve, springs.table, springs.gather, springs.vec, springs.shape, springs.sides,
                  srefs[k % srefs.shape[0]], xs, xds, out)
        for i in range(ns):
            out[k, 1] += 0.5 * sk[i] * (xs[i] - sx0[i]) ** 2


@njit(cache=True)
def _contact_rows(Q, V, contacts, out):
    """Contact pairs: ``K delta^(n+1) / (n+1)`` for ``delta > 0`` (J) of each state (``out[k, 2]`` as springs)."""
    if contacts is None:
        return
    t, csign, coffset, cK, cn = contacts.table, contacts.sign, contacts.offset, contacts.K, contacts.n
    nc = cK.size
    if nc == 0:
        return
    cgroup = np.empty(nc, dtype=np.int64)
    for g in range(t.n.size):
        cgroup[t.first[g]:t.first[g] + t.n[g]] = g
    qe, ve = np.empty(Q.shape[1] + 7), np.empty(Q.shape[1] + 7)
    xc, xdc = np.empty(nc), np.empty(nc)
    no_ref = np.zeros(nc)           # contact measures are lengths (no unwrapping reference)
    for k in range(Q.shape[0]):
        _measures(Q, V, k, qe, ve, t, contacts.gather, contacts.vec, contacts.shape, contacts.sides, no_ref, xc, xdc,
                  out)
        for i in range(nc):
            d = csign[cgroup[i]] * (coffset[i] - xc[i])
            if d > 0.0:
                out[k, 1] += cK[i] * d ** (cn[i] + 1.0) / (cn[i] + 1.0)


@njit(cache=True)
def _motor_rows(V, motors, out):
    """DC motors: ``L_a i^2 / 2`` (J) of each state."""
    if motors is None:
        return
    mstate, mL = motors.charge, motors.L_a
    for k in range(V.shape[0]):
        for i in range(mstate.size):
            out[k, 0] += 0.5 * mL[i] * V[k, mstate[i]] ** 2


@njit(cache=True)
def _particle_rows(Q, V, parts, out):
    """Particles ``m |x_d|^2 / 2``, ``-m g . x``; links ``k (L - L0)^2 / 2``; anchors ``k |x - x0|^2 / 2`` (J)."""
    if parts is None:
        return
    false_ = np.bool_(False)    # no literal (docs/architecture.md §2)
    pgather, pmass, pg = parts.gather, parts.mass, parts.gravity
    lgather, lk, lL0 = parts.link_gather, parts.link_k, parts.link_L0
    agather, apoint, ak = parts.anchor_gather, parts.anchor_point, parts.anchor_k
    nq = Q.shape[1]
    qe, ve = np.zeros(nq + 7), np.zeros(nq + 7)
    pe = np.empty(2)
    nl, na = lgather.shape[0], agather.shape[0]
    lr, lb, lp = np.empty((nl, 6)), np.empty((0, 6, 6)), np.empty((nl, 3))
    ar, ab, ap = np.empty((na, 3)), np.empty((0, 3, 3)), np.empty((na, 2))
    for k in range(Q.shape[0]):
        q, v = Q[k], V[k]
        if pgather.shape[0]:
            particle_energy(q, v, pgather, pmass, pg, pe)
            out[k, 0] += pe[0]
            out[k, 1] += pe[1]
        if nl:
            _extended_rows(Q, V, k, qe, ve)
            link_kernel(qe, ve, lgather, lk, lk, lL0, 0.0, 0.0, false_, lr, lb, lp)
            for i in range(nl):
                out[k, 1] += 0.5 * lk[i] * (lp[i, 1] - lL0[i]) ** 2
        if na:
            anchor_kernel(q, v, agather, apoint, ak, ak, 0.0, 0.0, false_, ar, ab, ap)
            for i in range(na):
                out[k, 1] += ap[i, 0]
