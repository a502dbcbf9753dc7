"""The compiled time step: which models qualify, and the arrays it runs on.

:class:`CompiledStep` packs a compiled model's bodies, joint primitives and the position maps of its
Newton-matrix pattern once (the model tuple of :mod:`flexmb.compiled.equations`), and then takes a whole
generalized-alpha step in one compiled call, or a block of fixed steps in one call. A model qualifies when
it has rigid bodies and flexible bodies (modal, with or without stiffening, nonlinear or exact beams), joint
primitives between them (drivers included), applied forces and torques, spring-dampers and bushings, DC motors,
sphere-plane, sphere-sphere and clearance contact pairs with any normal law (a user's law written in Python is
called through the one hook of :mod:`flexmb.compiled.hook`, :class:`UserLawHook`) and built-in friction laws,
gravity, and no other force elements, velocity
constraints or joints at stiffened interfaces, and its iteration matrix is small enough for the dense path
(``nq + m <= DENSE_LIMIT``). Everything else takes the general step of
:class:`~flexmb.solvers.generalized_alpha.AlphaStepper`; a step the compiled call does not converge is taken
again there, which retries it or raises the failure with its diagnostics.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..bodies.flexible import FlexibleBody
from ..bodies.rigid import RigidBody
from ..compiled import lazy_module
from ..compiled.measures import concat as _cat, pack_measures as _pack_measures
from ..contact.pairs import ContactGroup
from ..contact.rope import RopePulleyGroup, rope_second_derivatives
from ..contact.spheres import PlaneGroup, SphereGroup
from ..forces.applied import AppliedLoadGroup
from ..forces.motor import DCMotorGroup
from ..forces.particles import ParticleAnchorGroup, ParticleGroup, ParticleLinkGroup
from ..forces.springs import ScalarSpringGroup
from ..groups import EvalState
from ..joints.kernels import ROWS, SLOTS, extend
from ..linalg import DENSE_LIMIT

hook = lazy_module("flexmb.compiled.hook")   # numba loads with the first compiled call, not at import

__all__ = ["CompiledStep", "CompiledEvaluation", "StepBlock"]


class StepBlock:
    """States of consecutive accepted steps taken in one compiled call: row k of ``t`` (s), ``q``, ``v``,
    ``vd``, ``lam`` is the state after step k; ``p_nc``, ``p_drv`` the non-conservative and driver powers
    there (W), ``off`` the largest |Phi| of the rows switched off as redundant; ``failed``: the attempt after
    the last row did not converge (the caller takes that step on the general path)."""

    def __init__(self, n, t, q, v, vd, lam, a_last, p_nc, p_drv, off, failed):
        self.n, self.t, self.q, self.v, self.vd, self.lam = n, t, q, v, vd, lam
        self.a_last, self.p_nc, self.p_drv, self.off, self.failed = a_last, p_nc, p_drv, off, failed
        self.work_nc = self.work_drivers = None     # filled by AlphaIntegrator.advance
        self.history = None     # the element history after each step (asm.history() rows) of a model that keeps one


class CompiledStep:
    """The model tuple of one compiled System for :mod:`flexmb.compiled.equations` and :mod:`flexmb.compiled.step`."""

    def __init__(self, asm, sparse: bool = False, reorder: bool = True):
        self.asm = asm
        self.sparse = sparse
        # block positions in the dense row-major matrix, in the elimination order of the step's dense LU
        # (elimination_order), or in the CSR value array of the pattern (sparse models); reorder=False keeps the
        # natural order (CompiledEvaluation hands the dense matrix to the general step as it is)
        h = asm._h
        if sparse or not reorder:
            self.order = np.arange(asm.nq + asm.m, dtype=np.int64)
            dense = asm.pattern.sparse_positions if sparse else asm.pattern.dense_positions
        else:
            self.order, dense = elimination_order(asm)
        rigid = asm.rigid
        kinds = list(ROWS)
        empty_i, empty_f = np.zeros(0, dtype=np.int64), np.zeros(0)
        # joint primitive groups, flat and concatenated (compiled/equations.py: gtab)
        gtab, gather, scatter, u0, S, drive, pos_jac, pos_jacT, pos_hess = [], [], [], [], [], [], [], [], []
        self._drivers = []          # (group, positions of f and f'' in drive) of groups with driven instances
        og = ou = os_ = dc = oj = oh = 0
        for g, hj, hjT, hh in zip(asm.groups, h["jac"], h["jacT"], h["hess"]):
            n, nx, sm, mi = g.n, g.nx, g.S.shape[3], g.n_modes[0]
            keep = np.arange(nx)
            if g.kind != "coordinate" and sm and not g.S.any():
                # no attachment shape of the group moves with the modes (e.g. a joint at a beam's held root): its
                # rows have zero modal columns, so the group runs on the 14 frame columns (a 62-column Hessian
                # per instance of a 16-element beam's hub otherwise; the same arithmetic, zeros left out)
                keep, nx, sm, mi = keep[:14], 14, 0, 0
            pos_jac.append(dense[hj].reshape(n * g.r, -1)[:, keep].reshape(-1))
            pos_jacT.append(dense[hjT].reshape(n * g.r, -1)[:, keep].reshape(-1))
            pos_hess.append(dense[hh].reshape(n, g.nx, g.nx)[:, keep][:, :, keep].reshape(-1))
            gtab.append((kinds.index(g.kind), n, g.r, nx, mi, sm, og, ou, os_, dc, int(g.rows[0]), oj, oh))
            gather.append(g.gather[:, keep].reshape(-1))
            scatter.append(g.scatter[:, keep].reshape(-1))
            slots = len(SLOTS[g.kind])
            u = np.zeros((n, 3, 3))
            u[:, :slots] = g.u0
            s = np.zeros((n, 3, 3, sm))
            s[:, :slots] = g.S[..., :sm]
            u0.append(u.reshape(-1))
            S.append(s.reshape(-1))
            drive.append(g.drive.reshape(-1))      # f, f'', constant: each (n,)
            if g.drivers:
                self._drivers.append((g, 3 * dc + g.driven, 3 * dc + n + g.driven))
            og, ou, os_, dc = og + n * nx, ou + 9 * n, os_ + 9 * n * sm, dc + n
            oj, oh = oj + n * g.r * nx, oh + n * nx * nx
        cat = np.concatenate
        self.drive = cat(drive) if drive else empty_f
        # flexible-body groups (compiled/flexible.py pack buffers), flat and concatenated
        ftab, fdata, idata, wdata, ftabs, fidx, pos_flex = [], [], [], [], [], [], []
        offs = np.zeros(6, dtype=np.int64)
        for fg, hf in zip(asm.flexible, h["flexible"]):
            k = 7 + fg.m
            ftab.append((offs[0], fg._fdata.size, offs[1], fg._idata.size, offs[2], fg._wdata.size, offs[3],
                         fg._tab.shape[0], fg.n, fg.m, offs[4], offs[5]))
            fdata.append(fg._fdata)
            idata.append(fg._idata)
            wdata.append(fg._wdata.copy())
            ftabs.append(fg._tab)
            fidx.append(fg.idx.reshape(-1))
            pos_flex.append(dense[hf])
            offs += (fg._fdata.size, fg._idata.size, fg._wdata.size, fg._tab.shape[0], fg.n * k, fg.n * k * k)
        bodies = (rigid.idx, rigid.m, rigid.J, rigid.gravity, dense[h["body"]])
        joints = (np.array(gtab, dtype=np.int64).reshape(-1, 13), cat(gather or [empty_i]),
                  cat(scatter or [empty_i]), cat(u0 or [empty_f]), cat(S or [empty_f]), self.drive,
                  cat(pos_jac or [empty_i]), cat(pos_jacT or [empty_i]), cat(pos_hess or [empty_i]),
                  (1,) * len(kinds))
        flex = (np.array(ftab, dtype=np.int64).reshape(-1, 12), cat(fdata or [empty_f]), cat(idata or [empty_i]),
                cat(wdata or [empty_f]), cat(ftabs) if ftabs else np.zeros((0, 6), dtype=np.int64),
                cat(fidx or [empty_i]), cat(pos_flex or [empty_i]))
        norm = (asm.norm.cols, dense[h["norm_jac"]], dense[h["norm_jacT"]], dense[h["norm_hess"]], dense[h["D"]],
                self.order)
        self.model = (bodies, joints, flex, norm, self._springs(asm, dense), self._contacts(asm, dense),
                      self._loads(asm, dense), np.flatnonzero(asm.driver_rows).astype(np.int64),
                      self._motors(asm, dense), self._particles(asm, dense), self._ropes(asm, dense))
        self._chosen = {}          # compiled function -> the model tuple it runs on (variant)
        self._no_contacts = (empty_f, np.zeros(0, dtype=bool), empty_f)
        self.driven = np.array([cat([c0 for _, c0, _ in self._drivers] or [empty_i]),
                                cat([c1 for _, _, c1 in self._drivers] or [empty_i])], dtype=np.int64).reshape(2, -1)
        self.blocks_allowed = not asm._stability_bodies      # the stability check runs after each step, in Python
        # the block inputs of a single step: drivers, loads and voltages are set in the model itself
        self._no_driven = np.zeros((2, 0), dtype=np.int64)
        self._no_values, self._no_loads = np.zeros((1, 2, 0)), np.zeros((1, 0, 3))
        self._no_volts, self._no_rows = np.zeros((1, 0)), np.zeros(0, dtype=np.int64)
        from ..compiled import blocks, step
        self._run_block, self.CONVERGED = blocks.run_block, step.CONVERGED

    def specialized_model(self) -> tuple:
        """The model tuple with None for every family the model lacks: numba then compiles a step without them."""
        parts = list(self.model)
        present = set(int(k) for k in parts[1][0][:, 0])      # the joint kinds of the model's groups
        parts[1] = (*parts[1][:9], tuple(1 if k in present else None for k in range(len(parts[1][9]))))
        for i in _FAMILY_PARTS:
            if parts[i][0].shape[0] == 0:
                parts[i] = None
        p = parts[9]
        if not (p[0].shape[0] or p[4].shape[0] or p[9].shape[0]):     # no particles, links or anchors
            parts[9] = None
        if parts[7].size == 0:          # no driver rows
            parts[7] = None
        return tuple(parts)

    def model_for(self, function, args: list, at: int) -> tuple:
        """The model tuple that the entry point ``function`` runs on, chosen at its first call with ``args`` (the
        model at position ``at``): :attr:`model` or :meth:`specialized_model` (flexmb/compiled/specialization.py)."""
        if function not in self._chosen:
            from ..compiled.specialization import universal
            special = self.specialized_model()
            full = [*args[:at], self.model, *args[at + 1:]]
            self._chosen[function] = (self.model if universal(function, full, [*args[:at], special, *args[at + 1:]],
                                                              self.families(special)) else special)
        return self._chosen[function]

    @staticmethod
    def families(special: tuple) -> str:
        """The families a specialized model holds, in words (the notice of its compile)."""
        names = [name for name, part in zip(_PART_NAMES, special) if name and part is not None]
        kinds = [kind for kind, flag in zip(ROWS, special[1][9]) if flag is not None] if special[1] is not None else []
        if kinds:
            names.insert(1 if special[0] is not None else 0, f"joint rows ({', '.join(kinds)})")
        return ", ".join(names)

    def call(self, function, args: list):
        """``function(*args)``, a compiled entry point on this model, with the model's user contact laws answering
        its calls to Python (flexmb/compiled/hook.py) when it has any."""
        if self._user_law_hook is None:
            return function(*args)
        with hook.serving(self._user_law_hook):
            return function(*args)

    def _springs(self, asm, dense) -> tuple:
        """The spring-damper groups' part of the model (compiled/equations.py); ``self._refs`` keeps each
        group with its slice of the unwrapping references, which are the groups' history."""
        groups = family_blocks(asm, ScalarSpringGroup)
        tab, gather, scatter, vec, shp, sides, pos, first = _pack_measures([(g, g, h) for g, h in groups], dense)
        self._refs = [(g, slice(a, a + g.n)) for (g, _), a in zip(groups, first)]
        self._sref = np.zeros(int(sum(g.n for g, _ in groups)))
        # element history that a block moves on: each row of a block carries its own (run_block's out_sref)
        self.keeps_history = any(g.measure == "angle" for g, _ in groups)
        k, c, x0 = (_cat([getattr(g, a) for g, _ in groups], float) for a in ("k", "c", "x0"))
        return tab, gather, scatter, vec, shp, k, c, x0, self._sref, sides, pos

    def _contacts(self, asm, dense) -> tuple:
        """The contact groups' part of the model tuple (compiled/equations.py); their approach-speed history is read
        from the groups at each call (:meth:`_dynamic`)."""
        groups = family_blocks(asm, ContactGroup)
        tab, gather, scatter, vec, shp, sides, pos, _ = _pack_measures([(g, g.measure, h) for g, h in groups], dense)
        self._contact_groups = [g for g, _ in groups]
        self._user_law_hook = UserLawHook.of(self._contact_groups)
        laws = [g.laws for g, _ in groups]
        fric = [g.frictions for g, _ in groups]
        return (tab, gather, scatter, vec, shp, sides, np.array([g.sign for g, _ in groups], dtype=float),
                _cat([g.offset for g, _ in groups], float), _cat([w.kind for w in laws], np.int64),
                *(_cat([getattr(w, a) for w in laws], float) for a in ("K", "n", "h", "v_min", "c")), pos,
                np.array([bool(g.has_friction.any()) for g, _ in groups], dtype=bool),
                np.array([g.geo for g, _ in groups], dtype=np.int64), _cat([g.rad for g, _ in groups], float).reshape(-1, 2),
                _cat([f.kind for f in fric], np.int64), _cat([f.p for f in fric], float).reshape(-1, 3))

    def _loads(self, asm, dense) -> tuple:
        """The applied loads' part of the model tuple; their vectors (``lvec``) are set before each step."""
        groups = family_blocks(asm, AppliedLoadGroup)
        self._load_group = groups[0][0] if groups else None
        if not groups:
            return (np.zeros((0, 7), dtype=np.int64), np.zeros(0, dtype=bool), np.zeros(0, dtype=bool),
                    np.zeros((0, 3)), np.zeros((0, 3)), np.zeros(0, dtype=np.int64))
        g, hl = groups[0]
        self._lvec = np.zeros((g.n, 3))
        return g.idx, g.is_force, g.body_fixed, g.s, self._lvec, dense[hl]

    def _motors(self, asm, dense) -> tuple:
        """The DC motors' part of the model tuple (compiled/equations.py); their voltages (``mV``) are set before each
        step."""
        groups = family_blocks(asm, DCMotorGroup)
        self._motor_groups = [g for g, _ in groups]
        tab, og = [], np.zeros(5, dtype=np.int64)
        for g, _ in groups:
            m = g.measure
            n, nx = m.gather.shape
            sm = m.shps.shape[3]
            tab.append((n, nx, m.n_modes[0], m.n_modes[1], sm, *og))
            og += (n * nx, 12 * n, 12 * n * sm, n, n * (nx + 1) ** 2)
        ms = [g.measure for g, _ in groups]
        self._volts = np.zeros(int(sum(g.n for g, _ in groups)))
        return (np.array(tab, dtype=np.int64).reshape(-1, 10), _cat([m.gather.reshape(-1) for m in ms], np.int64),
                _cat([g.scatter.reshape(-1) for g, _ in groups], np.int64), _cat([m.vecs.reshape(-1) for m in ms], float),
                _cat([m.shps.reshape(-1) for m in ms], float),
                np.array([m.sides for m in ms], dtype=np.int64).reshape(-1, 4), _cat([g.state for g, _ in groups], np.int64),
                _cat([m.angle_ref for m in ms], float), *(_cat([getattr(g, a) for g, _ in groups], float)
                                                          for a in ("K_p", "r_a", "L_a", "D")),
                self._volts, _cat([dense[h] for _, h in groups], np.int64))

    @staticmethod
    def _particles(asm, dense) -> tuple:
        """The particle family's part of the model tuple (compiled/equations.py ``particle_terms``): gathers (equal to
        the scatters), masses, gravity, per-instance parameters and block positions of the particles, links and
        anchors (empty arrays for a model without them)."""
        f, i = np.float64, np.int64
        parts = {type(g): (g, h) for g, h in zip(asm.families, asm._h["families"])
                 if isinstance(g, (ParticleGroup, ParticleLinkGroup, ParticleAnchorGroup))}

        def arr(x, dtype, shape=(0,)):
            return np.ascontiguousarray(x, dtype=dtype) if x is not None else np.zeros(shape, dtype=dtype)

        g, hp = parts.get(ParticleGroup, (None, None))
        out = [arr(g and g.scatter, i, (0, 3)), arr(g and g.mass, f), arr(g and g.g, f, (3,)),
               arr(g and dense[hp], i)]
        g, hl = parts.get(ParticleLinkGroup, (None, None))
        out += [arr(g and g.scatter, i, (0, 6)), arr(g and g.k, f), arr(g and g.c, f), arr(g and g.L0, f),
                arr(g and dense[hl], i)]
        g, ha = parts.get(ParticleAnchorGroup, (None, None))
        out += [arr(g and g.scatter, i, (0, 3)), arr(g and g.point, f, (0, 3)), arr(g and g.k, f),
                arr(g and g.c, f), arr(g and dense[ha], i)]
        return tuple(out)

    @staticmethod
    def _ropes(asm, dense) -> tuple:
        """The rope-pulley pairs' part of the model tuple (compiled/equations.py ``rope_terms``): the group's arrays
        (empty ones for a model without ropes)."""
        groups = family_blocks(asm, RopePulleyGroup)
        if not groups:
            f, i = np.zeros(0), np.zeros(0, dtype=np.int64)
            return (np.zeros((0, 10), dtype=np.int64), np.zeros((0, 10), dtype=np.int64), np.zeros((0, 3)),
                    rope_second_derivatives(), f, f, f, f, f, f, i, np.zeros((0, 3)), i)
        g, h = groups[0]
        return (g.gather, g.scatter, g.axis, rope_second_derivatives(), g.R, g.K, g.c, g.n_exp, g.ka, g.ca, g.fkind,
                g.fpar, dense[h])

    def _set_loads(self, t: float) -> None:
        if self._load_group is not None:
            self._lvec[:] = self._load_group.vectors(t)
        if self._motor_groups:
            self._volts[:] = np.concatenate([g.supply(t) for g in self._motor_groups])

    def _sample_voltages(self, times: list) -> tuple[np.ndarray, int]:
        """The motors' supply voltages (len(times), motors) at the block's times and how many leading times are
        valid (the block ends before a time at which a voltage function raises; the general step then raises
        it with its message)."""
        out = np.zeros((len(times), self._volts.size))
        if not self._motor_groups:
            return out, len(times)
        for i, t in enumerate(times):
            try:
                out[i] = np.concatenate([g.supply(t) for g in self._motor_groups])
            except Exception:   # noqa: BLE001 - the general step raises it, with the states so far kept
                return out, i
        return out, len(times)

    def _sample_loads(self, times: list) -> tuple[np.ndarray, int]:
        """The load vectors (len(times), loads, 3) at the block's times and how many leading times are valid:
        a function's value taken as it is when it is a finite 3-vector, else through the checked call, and
        the block ends before a time at which that raises."""
        g = self._load_group
        if g is None:
            return np.zeros((len(times), 0, 3)), len(times)
        out = np.array(np.broadcast_to(g._vectors, (len(times), g.n, 3)))
        n = len(times)
        for k in np.flatnonzero(~g.const):
            load = g.loads[k]
            for i, t in enumerate(times[:n]):
                try:
                    x = np.asarray(load.vector(t), dtype=float)
                    if x.shape != (3,) or not np.isfinite(x).all():
                        x = load.value(t)           # the checked call: raises with its message
                except Exception:   # noqa: BLE001 - the general step raises it, with the states so far kept
                    n = i
                    break
                out[i, k] = x
        return out, n

    def _dynamic(self) -> tuple:
        """The contacts' approach-speed history ``(speed, in_contact, last_rate)`` per pair, as it is now."""
        ap = [g.approach for g in self._contact_groups]
        if not ap:
            return self._no_contacts
        return (np.concatenate([a.speed for a in ap]), np.concatenate([a.in_contact for a in ap]),
                np.concatenate([a.last_rate for a in ap]))

    def _load_history(self) -> None:
        """The springs' unwrapping references from their groups (the history of the run so far)."""
        for g, sl in self._refs:
            self._sref[sl] = g.angle_ref

    def _store_history(self) -> None:
        """The references after a block back into the groups (angle measures only keep them)."""
        for g, sl in self._refs:
            if g.measure == "angle":
                g.angle_ref = self._sref[sl].copy()
                g._memo = None          # measures remembered at an earlier state

    @staticmethod
    def qualifies(asm, reuse_matrix: bool) -> bool:
        """Whether a compiled model can take the compiled step (see the module's docstring)."""
        s = asm.system
        return (not reuse_matrix and asm.nq + asm.m <= DENSE_LIMIT
                and all(isinstance(g, _COMPILED_FAMILIES) or _plain_contacts(g) or _plain_ropes(g)
                        for g in asm.families)
                and all(isinstance(b, (RigidBody, FlexibleBody)) for b in s.bodies)
                and not any(g._python_structures for g in asm.flexible)
                and asm.nonholonomic.m == 0 and not asm.interface_loads)

    def _set_drivers(self, t: float) -> None:
        for g, p0, p1 in self._drivers:
            f, _, fa = g.driver_terms(t)
            self.drive[p0], self.drive[p1] = f, fa

    def _block(self, s, times: np.ndarray, sizes: np.ndarray, h_b: float, h: float, params, tol: float, max_iter: int,
               inputs: tuple, energy: bool, check_off: bool = True, *, h_nominal: float = 0.0,
               h_max: float = np.inf, h_contact: float | None = None, locate: bool = False, contact_tol: float = 0.0,
               aim_min: float = 0.0, q_tol=None, contact_steps: bool = False, dyn: tuple | None = None,
               pen: np.ndarray | None = None):
        """One call of :func:`flexmb.compiled.blocks.run_block` (up to ``len(times)`` steps from state ``s``, ending at
        ``times`` (s), of sizes ``sizes`` (s); ``inputs`` =
        (driven, driver values, load vectors, voltages)); returns ``(steps taken, code, outputs, springs'
        references, contact history, last algorithmic acceleration, [iterations, factorizations], next h)``;
        ``check_off``: the rows switched off as redundant are checked at each step. Every argument goes in the
        types of the entry's one compiled signature (C-contiguous arrays, floats, ints, bools): another layout or
        scalar type would compile the whole step again."""
        nq, m, n = s.q.size, s.lam.size, times.size
        c = np.ascontiguousarray
        f = float
        out = (np.empty(n), np.empty((n, nq)), np.empty((n, nq)), np.empty((n, nq)), np.empty((n, m)), np.empty(n),
               np.empty(n), np.empty(n))
        pen = np.zeros(0) if pen is None else pen
        sref = np.empty((n if contact_steps or self.keeps_history else 0, self._sref.size))   # history per row
        dyn = self._dynamic() if dyn is None else dyn
        hist = np.empty((n if contact_steps else 0, 3, dyn[0].size))      # contact pairs' history (ropes have none)
        a_last, stats, h_state = s.a.copy(), np.zeros(2), np.array([f(h)])
        driven, values, loads, volts = inputs
        use_q_tol = q_tol is not None
        off_rows = np.flatnonzero(~self.asm.active).astype(np.int64) if check_off else self._no_rows
        args = [int(n), c(times, dtype=f), c(sizes, dtype=f), f(h_b), h_state, f(h_nominal), f(h_max), f(h_contact or 0.0),
                h_contact is not None, bool(locate), f(contact_tol), f(aim_min), c(s.q, dtype=f), c(s.v, dtype=f),
                c(s.vd, dtype=f), c(s.a, dtype=f), c(s.lam, dtype=f), f(params.alpha_m), f(params.alpha_f),
                f(params.beta), f(params.gamma), f(tol), c(q_tol if use_q_tol else s.q, dtype=f), use_q_tol,
                int(max_iter), c(self.asm.active, dtype=bool), driven, c(values, dtype=f), c(loads, dtype=f),
                c(volts, dtype=f), bool(energy), off_rows, bool(contact_steps), self.model, dyn, pen,
                c(self.asm.inertia_scale, dtype=f), *out, sref, hist, a_last, stats]
        args[_MODEL_ARG] = self.model_for(self._run_block, args, _MODEL_ARG)
        k, code = self.call(self._run_block, args)
        return k, code, out, sref, hist, a_last, stats, float(h_state[0])

    def step(self, s, t1: float, h: float, params, tol: float, max_iter: int, q_tol):
        """The step of size h (s) from state ``s`` to time ``t1`` (s) as ``(q, v, vd, a, lam, iterations, factorizations)``, or
        None when its Newton iteration fails (the caller repeats it on the general path). It is a block of one
        step through the same compiled entry point as :meth:`run` (one function to compile, not two); the
        caller books its energy and history."""
        self._set_drivers(t1)
        self._set_loads(t1)
        self._load_history()
        k, code, out, _, _, a, stats, _ = self._block(
            s, np.array([t1]), np.array([h]), h, h, params, tol, max_iter,
            (self._no_driven, self._no_values, self._no_loads, self._no_volts), False, False, h_max=h, q_tol=q_tol)
        if k != 1:
            return None
        return out[1][0], out[2][0], out[3][0], a, out[4][0], int(stats[0]), int(stats[1])

    def run(self, s, times: np.ndarray, sizes: np.ndarray, params, tol: float, max_iter: int,
            energy: bool) -> tuple[StepBlock, int, int]:
        """Fixed steps from state ``s`` in one compiled call, ending at ``times`` (s), of sizes ``sizes`` (s)
        (:func:`~flexmb.solvers.step_times.step_times`); returns the block, Newton iterations and factorizations.
        A model whose springs keep history (angle springs) gets it after each step (``block.history``); the groups'
        history is that of the last row. The drivers' functions are evaluated here, at the end times of the steps;
        a block ends before a step whose driver function fails (the general step then raises its error)."""
        values, loads, volts, n = self._sample_inputs(list(times))
        self._load_history()
        h = float(sizes[0])
        k, code, out, sref, hist, a_last, stats, _ = self._block(s, times[:n], sizes[:n], h, h, params, tol, max_iter,
                                                                 (self.driven, values, loads, volts), energy, h_max=h)
        self._store_history()
        block = StepBlock(k, *(x[:k] for x in out[:5]), a_last, *(x[:k] for x in out[5:]), code != self.CONVERGED)
        if k and self.keeps_history:
            block.history = self._history_rows(sref[:k], hist[:k])
        return block, int(stats[0]), int(stats[1])

    # -- blocks of models with contact pairs (flexmb/compiled/step_end.py) ---------------------------------------
    def run_contacts(self, s, times: np.ndarray, sizes: np.ndarray, h_b: float, h: float, h_nominal: float,
                     h_max: float, h_contact: float | None, contact_tol: float, locate: bool, aim_min: float,
                     pen: np.ndarray, params, tol: float, max_iter: int,
                     energy: bool) -> tuple[StepBlock, int, int, float]:
        """Steps of size ``h_b`` (s) from state ``s`` of a model with contact pairs in one compiled call, ending at
        ``times`` (s), of sizes ``sizes`` (s) (:func:`~flexmb.solvers.step_times.step_times`: ``h_b`` but for a
        last step to ``t_end``; :func:`flexmb.compiled.blocks.run_block` with ``contact_steps``: the block ends before
        a step that asks another size or at a contact onset, which the integrator then locates). ``h`` is the integrator's next step (s),
        ``pen`` the penetrations (m) of the accepted state, all pairs concatenated (updated in place). Returns the
        block with the element history after each step (``block.history``), Newton iterations, factorizations and
        the next step ``h``; the groups' histories (approach speeds, unwrapping references) are those of the last
        row."""
        values, loads, volts, n = self._sample_inputs(list(times))
        dyn = self._dynamic()           # fresh arrays (concatenated), moved on by the block
        self._load_history()
        k, code, out, sref, hist, a_last, stats, h_next = self._block(
            s, times[:n], sizes[:n], h_b, h, params, tol, max_iter, (self.driven, values, loads, volts), energy,
            h_nominal=h_nominal, h_max=h_max, h_contact=h_contact, locate=locate, contact_tol=contact_tol,
            aim_min=aim_min, contact_steps=True, dyn=dyn, pen=pen)
        block = StepBlock(k, *(x[:k] for x in out[:5]), a_last, *(x[:k] for x in out[5:]), code != self.CONVERGED)
        if k:
            self._store_history()
            self._store_dynamic(dyn)
            block.history = self._history_rows(sref[:k], hist[:k])
        return block, int(stats[0]), int(stats[1]), h_next

    def _sample_inputs(self, times: list) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
        """The block's time-dependent inputs at ``times``: the driven instances' f and f'' (len(times), 2,
        drivers), the loads' vectors (len(times), loads, 3), the motors' voltages (len(times), motors), and how many
        leading times are valid (a block ends before a time at which a driver, load or voltage function fails;
        the general step then raises its error)."""
        values = np.zeros((len(times), 2, self.driven.shape[1]))
        n, c = len(times), 0
        for g, _, _ in self._drivers:
            for d in g.drivers:
                f, fa, ok = d.sample(times[:n])
                n = min(n, ok)
                values[:n, 0, c], values[:n, 1, c] = f[:n], fa[:n]
                c += 1
        loads, ok = self._sample_loads(times[:n])
        n = min(n, ok)
        volts, ok = self._sample_voltages(times[:n])
        n = min(n, ok)
        return values, loads[:n], volts[:n], n

    def _store_dynamic(self, dyn: tuple) -> None:
        """The approach-speed history ``(speed, in_contact, last_rate)`` after a block back into the contact groups."""
        k = 0
        for g in self._contact_groups:
            sl = slice(k, k + g.n)
            g.approach.speed, g.approach.in_contact, g.approach.last_rate = (x[sl].copy() for x in dyn)
            g._memo = None
            k += g.n

    def _history_rows(self, sref: np.ndarray, dyn: np.ndarray) -> np.ndarray:
        """``asm.history()`` after each step of a block (rows), from the springs' references ``sref`` (k, springs)
        and the contacts' ``(speed, in_contact, last_rate)`` (k, 3, pairs): the layout of
        ``Assembly.history`` (per stateful group its length, then ``ScalarSpringGroup.history`` or
        ``ApproachSpeeds.history``)."""
        cols, k = {}, sref.shape[0]
        for g, sl in self._refs:
            if g.measure == "angle":
                cols[id(g)] = sref[:, sl]
        o = 0
        for g in self._contact_groups:
            speed, touch, rate = (dyn[:, j, o:o + g.n] for j in range(3))
            known = np.isfinite(rate)
            cols[id(g)] = np.hstack([speed, touch, known, np.where(known, rate, 0.0)])
            o += g.n
        parts = []
        for g in self.asm.stateful:
            c = cols[id(g)]
            parts += [np.full((k, 1), float(c.shape[1])), c]
        return np.hstack(parts) if parts else np.zeros((k, 0))


def elimination_order(asm) -> tuple[np.ndarray, list]:
    """The order in which the compiled step's dense LU eliminates the unknowns ``[q, lambda]`` and the block
    positions of the matrix in that order. The frame coordinates of a flexible body couple to all its elastic
    ones, so eliminating them first fills the LU of a nonlinear beam's banded block completely (lu_factor skips
    zeros, not a pattern: 62 unknowns of a 16-element beam, 44 us a factorization in the natural order, 16 us
    with the elastic coordinates first). When the flexible bodies' elastic coordinates are the majority of the
    unknowns they go first (then the other coordinates, then the multipliers, each in their own order);
    otherwise (rigid bodies, a few modes: no gain measured, 18 unknowns 2.6 us either way) the natural order is
    kept and the step's arithmetic is unchanged. Partial pivoting still picks the pivots. Returns
    ``(order, positions)``: position k of the matrix holds unknown ``order[k]``."""
    n = asm.nq + asm.m
    natural = np.arange(n, dtype=np.int64)
    dense = asm.pattern.dense_positions
    elastic = np.concatenate([fg.idx[:, 7:].reshape(-1) for fg in asm.flexible] or [np.zeros(0, dtype=np.int64)])
    if 2 * elastic.size <= n:
        return natural, dense
    first = np.zeros(n, dtype=bool)
    first[elastic] = True
    order = np.concatenate([np.flatnonzero(first), np.flatnonzero(~first)]).astype(np.int64)
    where = np.empty(n, dtype=np.int64)
    where[order] = natural
    moved = [np.where(p >= 0, where[np.maximum(p, 0) // n] * n + where[np.maximum(p, 0) % n], -1) for p in dense]
    return order, moved


_COMPILED_FAMILIES = (ScalarSpringGroup, AppliedLoadGroup, DCMotorGroup, ParticleGroup, ParticleLinkGroup,
                      ParticleAnchorGroup)
"""Element families the compiled evaluation holds (besides contact pairs with built-in laws, no friction)."""


class _Rows:
    """Constraint values of a compiled evaluation (the part of ``Assembly.constraints`` the Newton step reads)."""

    __slots__ = ("phi",)

    def __init__(self, phi: np.ndarray):
        self.phi = phi


class CompiledEvaluation:
    """``Assembly.residual`` of a model the compiled step holds, in one compiled call per Newton iteration, for the
    models that do not take the whole step compiled: sparse ones (``nq + m > DENSE_LIMIT``) and runs that keep the
    iteration matrix across steps. :func:`flexmb.compiled.equations.equations` evaluates the residual, the constraint
    values and the Newton-matrix values straight into the CSR value array of the fixed pattern (the pattern's
    ``sparse_positions``; dense row-major positions for small systems); the factorization (SuperLU, CHOLMOD,
    LAPACK), its reuse across iterations and steps, and everything else of
    :meth:`~flexmb.solvers.generalized_alpha.AlphaStepper.step` stay as they are."""

    def __init__(self, asm):
        self.asm = asm
        self.n = asm.nq + asm.m
        self.dense = self.n <= DENSE_LIMIT
        self.step = CompiledStep(asm, sparse=not self.dense, reorder=False)
        from ..compiled.scatter import add_at
        from ..compiled.equations import equations
        self._equations, self._add_at = equations, add_at
        # candidate contacts (sphere clouds, point-plane): one compiled kernel call per group besides the equations
        pos = asm.pattern.dense_positions if self.dense else asm.pattern.sparse_positions
        self._side = [(g, sc, pos[h]) for g, h, sc in zip(asm.families, asm._h["families"], asm._family_scatter)
                      if _kernel_contacts(g)]
        self._nnz = asm.pattern.nnz
        self._empty = np.zeros(0)

    @staticmethod
    def qualifies(asm) -> bool:
        """Whether the compiled evaluation holds every term of the model (the families, bodies and rows of
        :meth:`CompiledStep.qualifies`, at any size)."""
        s = asm.system
        return (all(isinstance(g, _COMPILED_FAMILIES) or _plain_contacts(g) or _kernel_contacts(g)
                    or _plain_ropes(g) for g in asm.families)
                and all(isinstance(b, (RigidBody, FlexibleBody)) for b in s.bodies)
                and not any(g._python_structures for g in asm.flexible)
                and asm.nonholonomic.m == 0 and not asm.interface_loads)

    def residual(self, q, v, a, lam, t, coef=None):
        """``(r, rows, S)`` as ``Assembly.residual(q, v, a, lam, t, coef)`` (``rows.phi``: the constraint values;
        ``S``: the Newton matrix, CSR on the pattern or dense, when ``coef = (cM, cC, cK, cH, cI)`` is given,
        ``cI`` = 0), or None when an element has no direction there (coincident points; the assembly then
        reports it)."""
        c, asm = self.step, self.asm
        c._set_drivers(t)
        c._set_loads(t)
        c._load_history()
        r, phi = np.empty(asm.nq), np.empty(asm.m)
        want = coef is not None
        if want and coef[4] != 0.0:
            return None
        vals = np.zeros(self.n * self.n if self.dense else self._nnz) if want else self._empty
        cM, cC, cK, cH = (float(x) for x in coef[:4]) if want else (0.0, 0.0, 0.0, 0.0)
        f = np.ascontiguousarray      # the types of the step's call: one compiled signature (CompiledStep._block)
        args = [f(q, dtype=float), f(v, dtype=float), f(a, dtype=float), f(lam, dtype=float),
                f(asm.active, dtype=bool), want, cM, cC, cK, cH, c.model, c._dynamic(), r, phi, vals]
        args[10] = c.model_for(self._equations, args, 10)
        if not c.call(self._equations, args):
            return None
        if self._side:
            qe, ve = extend(q, v)
            st = EvalState(q, v, a, t, qe, ve)
            kc = (cM, cC, cK) if want else None
            for g, sc, pos in self._side:
                rg, bg = g.residual(st, kc)
                self._add_at(r, sc, np.ascontiguousarray(rg, dtype=float).reshape(-1))
                if want:
                    self._add_at(vals, pos, np.ascontiguousarray(bg, dtype=float).reshape(-1))
        if not want:
            return r, _Rows(phi), None
        if self.dense:
            return r, _Rows(phi), vals.reshape(self.n, self.n)
        pat = asm.pattern
        S = sp.csr_matrix(pat.shape)        # empty shell on the fixed structure (as BlockPattern.assemble)
        S.data, S.indices, S.indptr = vals, pat.indices, pat.indptr
        return r, _Rows(phi), S


_FAMILY_PARTS = (0, 1, 2, 4, 5, 6, 8, 10)
"""The parts of the model tuple whose first array has a row per instance or group: rigid bodies, joint groups,
flexible groups, spring groups, contact groups, loads, motor groups, rope-pulley pairs."""

_PART_NAMES = ("rigid bodies", None, "flexible bodies", None, "springs and bushings", "contact pairs",
               "applied loads", "drivers", "DC motors", "particles", "rope-pulley pairs")
"""The families of the model tuple's parts in words (None: joints, named by their row kinds, and the Euler
parameters' normalization rows, which every model has)."""

_MODEL_ARG = 33
"""Position of the model tuple among the arguments of ``blocks.run_block`` (checked by tests/test_compiled_step.py)."""


def family_blocks(asm, kind: type) -> list[tuple]:
    """The element-family groups of type ``kind`` of a compiled model with their Newton-block handles."""
    return [(g, h) for g, h in zip(asm.families, asm._h["families"]) if isinstance(g, kind)]


def _kernel_contacts(g) -> bool:
    """A candidate-contact group with a compiled narrow phase and built-in laws (flexmb/contact/spheres.py)."""
    return isinstance(g, (SphereGroup, PlaneGroup)) and not g.law_table.any_user and g.use_kernel


def _plain_contacts(g) -> bool:
    """A contact-pair group the compiled step evaluates: any normal laws (user laws through the hook,
    :class:`UserLawHook`), friction (if any) of built-in laws."""
    return isinstance(g, ContactGroup) and bool(np.all(g.frictions.kind <= 2))


class UserLawHook:
    """The Python side of the compiled step's one call into Python (flexmb/compiled/hook.py): the user contact laws
    of the model's contact groups (pairs numbered as concatenated in the model tuple, ``offset`` the first pair of
    each group with user laws). Called with the pairs ``first, first + 1, ...`` (a group's, or all of them), it
    writes the forces and derivatives of the pairs with a user law (``LawTable.user_forces``, one call per law
    object) and returns True; when a law fails it returns False: the compiled step then fails the evaluation, and
    the general step repeats it and raises the law's error (``user_law_forces``) with its contact's name."""

    def __init__(self, parts: list):
        self.parts = parts              # (offset, ContactGroup)
        self._at = dict(parts)          # a group's own call (contact_pairs): found by its first pair, no search

    @classmethod
    def of(cls, groups: list) -> "UserLawHook | None":
        """The hook of the contact ``groups`` (in the model's order), or None when no pair has a user law."""
        offsets = np.cumsum([0] + [g.n for g in groups])
        parts = [(int(o), g) for o, g in zip(offsets, groups) if g.laws.any_user]
        return cls(parts) if parts else None

    def __call__(self, first: int, d, dd, vm, F, dF, dFd) -> bool:
        try:
            g = self._at.get(first)
            if g is not None and g.n == d.size:
                g.laws.user_forces(d, dd, vm, F, dF, dFd)
                return True
            for o, g in self.parts:             # the accept-time call: every group's pairs in one array
                a = o - first
                if a >= 0 and a + g.n <= d.size:
                    sl = slice(a, a + g.n)
                    g.laws.user_forces(d[sl], dd[sl], vm[sl], F[sl], dF[sl], dFd[sl])
        except Exception:  # noqa: BLE001 - compiled code cannot take it; the general step raises it
            return False
        return True


def _plain_ropes(g) -> bool:
    """A rope-pulley group the compiled step evaluates: no friction or built-in friction laws."""
    return isinstance(g, RopePulleyGroup) and g.builtin
