"""The compiled time step: which models qualify, and the arrays it runs on.

:class:`CompiledStep` packs a compiled model's bodies, joint primitives and the position maps of its
Newton-matrix pattern once (the named model of flexmb/compiled/model.py, packed by flexmb/packing.py), and then takes a whole
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
from ..compiled.model import BlockInputs, BlockOutputs, BlockSettings, BlockStart, JointKinds, Model
from ..groups import EvalState
from ..joints.kernels import ROWS, extend
from ..linalg import DENSE_LIMIT
from ..packing import PART_WORDS, absent_parts, family_parts, pack_model

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


def _step_block(k: int, out: BlockOutputs, failed: bool) -> StepBlock:
    """The first ``k`` rows of a block's outputs as a :class:`StepBlock`."""
    return StepBlock(k, out.t[:k], out.q[:k], out.v[:k], out.vd[:k], out.lam[:k], out.last_a, out.p_nc[:k],
                     out.p_drv[:k], out.off[:k], failed)


class CompiledStep:
    """The compiled model of one System (flexmb/compiled/model.py ``Model``, packed by :func:`flexmb.packing.pack_model`)
    and the calls of :mod:`flexmb.compiled.blocks` and :mod:`flexmb.compiled.equations` on it."""

    def __init__(self, asm, sparse: bool = False, reorder: bool = True):
        self.asm = asm
        self.sparse = sparse
        # block positions in the dense row-major matrix, in the elimination order of the step's dense LU
        # (elimination_order), or in the CSR value array of the pattern (sparse models); reorder=False keeps the
        # natural order (CompiledEvaluation hands the dense matrix to the general step as it is)
        if sparse or not reorder:
            self.order = np.arange(asm.nq + asm.m, dtype=np.int64)
            dense = asm.pattern.sparse_positions if sparse else asm.pattern.dense_positions
        else:
            self.order, dense = elimination_order(asm)
        # the families it holds (the sparse compiled evaluation calls the others on the side)
        held = [g for g in asm.families if g.on_compiled_step] + list(asm.flexible)
        self._held = held
        self.model = pack_model(asm, dense, self.order, groups=held)
        parts = family_parts(asm, groups=held)
        springs = [g for g, _ in parts["springs"]]
        first = self.model.springs.table.first
        self._refs = [(g, slice(int(a), int(a) + g.n)) for g, a in zip(springs, first)]
        self._sref = self.model.springs.ref
        # element history that a block moves on: each row of a block carries its own (run_block's out_sref)
        self.keeps_history = any(g.measure == "angle" for g in springs)
        self._contact_groups = [g for g, _ in parts["contacts"]]
        self._user_law_hook = UserLawHook.of(self._contact_groups)
        self._load_group = parts["loads"][0][0] if parts["loads"] else None
        self._motor_groups = [g for g, _ in parts["motors"]]
        # the driven instances' places in the joints' drive array: f at 3 first + k, f'' at 3 first + n + k
        table = self.model.joints.table
        self._drivers = [(g, 3 * int(first) + g.driven, 3 * int(first) + g.n + g.driven)
                         for g, first in zip(asm.groups, table.first) if g.drivers]
        cat, empty_i = np.concatenate, np.zeros(0, dtype=np.int64)
        self._chosen = {}          # compiled function -> the model it runs on (variant)
        self._no_contacts = (np.zeros(0), np.zeros(0, dtype=bool), np.zeros(0))
        self.driven = np.array([cat([c0 for _, c0, _ in self._drivers] or [empty_i]),
                                cat([c1 for _, _, c1 in self._drivers] or [empty_i])], dtype=np.int64).reshape(2, -1)
        self.blocks_allowed = not asm._stability_bodies      # the stability check runs after each step, in Python
        # the block inputs of a single step: drivers, loads and voltages are set in the model itself
        self._no_driven = np.zeros((2, 0), dtype=np.int64)
        self._no_values, self._no_loads = np.zeros((1, 2, 0)), np.zeros((1, 0, 3))
        self._no_volts, self._no_rows = np.zeros((1, 0)), np.zeros(0, dtype=np.int64)
        from ..compiled import blocks, step
        self._run_block, self.CONVERGED = blocks.run_block, step.CONVERGED

    @property
    def drive(self) -> np.ndarray:
        """The drivers' f, f'' and constants of every joint instance (the compiled joints' ``drive``)."""
        return self.model.joints.drive

    def specialized_model(self) -> Model:
        """The model with None for every family it lacks (:func:`flexmb.packing.absent_parts`): numba then compiles a
        step without them; the joints keep the kinds the model has."""
        m = self.model
        present = set(int(k) for k in m.joints.table.kind)      # the joint kinds of the model's groups
        kinds = JointKinds(*(1 if k in present else None for k in range(len(JointKinds._fields))))
        parts = {"joints": m.joints._replace(kinds=kinds)}
        parts.update({name: None for name in absent_parts(self.asm, self._held)})
        return m._replace(**parts)

    def model_for(self, function, call) -> Model:
        """The model that the entry point ``function`` runs on, chosen at its first call: :attr:`model` or
        :meth:`specialized_model` (flexmb/compiled/specialization.py); ``call(model)`` gives the call's arguments
        with that model."""
        if function not in self._chosen:
            from ..compiled.specialization import universal
            special = self.specialized_model()
            self._chosen[function] = (self.model if universal(function, call(self.model), call(special),
                                                              self.families(special)) else special)
        return self._chosen[function]

    @staticmethod
    def families(special: Model) -> str:
        """The families a specialized model holds, in words (the notice of its compile)."""
        names = [PART_WORDS[name] for name in special._fields
                 if name in PART_WORDS and getattr(special, name) is not None]
        if special.joints is not None:
            kinds = [kind for kind, flag in zip(ROWS, special.joints.kinds) if flag is not None]
            if kinds:
                names.insert(1 if special.bodies is not None else 0, f"joint rows ({', '.join(kinds)})")
        return ", ".join(names)

    def call(self, function, args: list):
        """``function(*args)``, a compiled entry point on this model, with the model's user contact laws answering
        its calls to Python (flexmb/compiled/hook.py) when it has any."""
        if self._user_law_hook is None:
            return function(*args)
        with hook.serving(self._user_law_hook):
            return function(*args)

    def _set_loads(self, t: float) -> None:
        if self._load_group is not None:
            self.model.loads.vec[:] = self._load_group.vectors(t)
        if self._motor_groups:
            self.model.motors.V[:] = np.concatenate([g.supply(t) for g in self._motor_groups])

    def _sample_voltages(self, times: list) -> tuple[np.ndarray, int]:
        """The motors' supply voltages (len(times), motors) at the block's times and how many leading times are
        valid (the block ends before a time at which a voltage function raises; the general step then raises
        it with its message)."""
        out = np.zeros((len(times), self.model.motors.V.size))
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
                and all(g.on_compiled_step for g in asm.families)
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
        (driven, driver values, load vectors, voltages)); returns ``(steps taken, code, outputs, next h)``, the
        outputs a ``BlockOutputs`` (flexmb/compiled/model.py);
        ``check_off``: the rows switched off as redundant are checked at each step. Every argument goes in the
        types of the entry's one compiled signature (C-contiguous arrays, floats, ints, bools): another layout or
        scalar type would compile the whole step again."""
        nq, m, n = s.q.size, s.lam.size, times.size
        c = np.ascontiguousarray
        f = float
        dyn = self._dynamic() if dyn is None else dyn
        out = BlockOutputs(np.empty(n), np.empty((n, nq)), np.empty((n, nq)), np.empty((n, nq)), np.empty((n, m)),
                           np.empty(n), np.empty(n), np.empty(n),
                           np.empty((n if contact_steps or self.keeps_history else 0, self._sref.size)),
                           np.empty((n if contact_steps else 0, 3, dyn[0].size)), s.a.copy(), np.zeros(2))
        pen = np.zeros(0) if pen is None else pen
        h_state = np.array([f(h)])
        driven, values, loads, volts = inputs
        use_q_tol = q_tol is not None
        off_rows = np.flatnonzero(~self.asm.active).astype(np.int64) if check_off else self._no_rows
        settings = BlockSettings(int(n), f(h_b), f(h_nominal), f(h_max), f(h_contact or 0.0), h_contact is not None,
                                 bool(locate), f(contact_tol), f(aim_min), f(params.alpha_m), f(params.alpha_f),
                                 f(params.beta), f(params.gamma), f(tol), use_q_tol, int(max_iter), bool(energy),
                                 bool(contact_steps))
        start = BlockStart(c(s.q, dtype=f), c(s.v, dtype=f), c(s.vd, dtype=f), c(s.a, dtype=f), c(s.lam, dtype=f))
        block_inputs = BlockInputs(c(times, dtype=f), c(sizes, dtype=f), driven, c(values, dtype=f),
                                   c(loads, dtype=f), c(volts, dtype=f))
        rest = (dyn, c(self.asm.active, dtype=bool), c(q_tol if use_q_tol else s.q, dtype=f), off_rows,
                c(self.asm.inertia_scale, dtype=f), pen, h_state, out)

        def args(model):
            return (settings, start, block_inputs, model, *rest)

        k, code = self.call(self._run_block, args(self.model_for(self._run_block, args)))
        return k, code, out, float(h_state[0])

    def step(self, s, t1: float, h: float, params, tol: float, max_iter: int, q_tol):
        """The step of size h (s) from state ``s`` to time ``t1`` (s) as ``(q, v, vd, a, lam, iterations, factorizations)``, or
        None when its Newton iteration fails (the caller repeats it on the general path). It is a block of one
        step through the same compiled entry point as :meth:`run` (one function to compile, not two); the
        caller books its energy and history."""
        self._set_drivers(t1)
        self._set_loads(t1)
        self._load_history()
        k, code, out, _ = self._block(
            s, np.array([t1]), np.array([h]), h, h, params, tol, max_iter,
            (self._no_driven, self._no_values, self._no_loads, self._no_volts), False, False, h_max=h, q_tol=q_tol)
        if k != 1:
            return None
        return out.q[0], out.v[0], out.vd[0], out.last_a, out.lam[0], int(out.stats[0]), int(out.stats[1])

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
        k, code, out, _ = self._block(s, times[:n], sizes[:n], h, h, params, tol, max_iter,
                                      (self.driven, values, loads, volts), energy, h_max=h)
        self._store_history()
        block = _step_block(k, out, code != self.CONVERGED)
        if k and self.keeps_history:
            block.history = self._history_rows(out.sref[:k], out.dyn[:k])
        return block, int(out.stats[0]), int(out.stats[1])

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
        k, code, out, h_next = self._block(
            s, times[:n], sizes[:n], h_b, h, params, tol, max_iter, (self.driven, values, loads, volts), energy,
            h_nominal=h_nominal, h_max=h_max, h_contact=h_contact, locate=locate, contact_tol=contact_tol,
            aim_min=aim_min, contact_steps=True, dyn=dyn, pen=pen)
        block = _step_block(k, out, code != self.CONVERGED)
        if k:
            self._store_history()
            self._store_dynamic(dyn)
            block.history = self._history_rows(out.sref[:k], out.dyn[:k])
        return block, int(out.stats[0]), int(out.stats[1]), h_next

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
        # the families the compiled model does not hold, each through its group's residual (one call per group:
        # candidate contacts' compiled narrow phase, crash elements, nodal loads, user forces, ...), added into the
        # compiled call's residual and matrix values
        pos = asm.pattern.dense_positions if self.dense else asm.pattern.sparse_positions
        self._side = [(g, sc, pos[h]) for g, h, sc in zip(asm.families, asm._h["families"], asm._family_scatter)
                      if not g.on_compiled_step]
        self._nnz = asm.pattern.nnz
        self._empty = np.zeros(0)

    @staticmethod
    def qualifies(asm) -> bool:
        """Whether the compiled evaluation holds the model's bodies and constraint rows (those of
        :meth:`CompiledStep.qualifies`, at any size); families it does not compile are evaluated beside it."""
        s = asm.system
        return (all(isinstance(b, (RigidBody, FlexibleBody)) for b in s.bodies)
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
        head = (f(q, dtype=float), f(v, dtype=float), f(a, dtype=float), f(lam, dtype=float),
                f(asm.active, dtype=bool), want, cM, cC, cK, cH)
        tail = (c._dynamic(), r, phi, vals)

        def args(model):
            return (*head, model, *tail)

        if not c.call(self._equations, args(c.model_for(self._equations, args))):
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


class UserLawHook:
    """The Python side of the compiled step's one call into Python (flexmb/compiled/hook.py): the user contact laws
    of the model's contact groups (pairs numbered as concatenated in the compiled model, ``offset`` the first pair of
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
