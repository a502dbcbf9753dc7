"""The integrator object of ``simulate``: it owns its step (SciPy's ``OdeSolver`` pattern).

:class:`AlphaIntegrator` advances a run by one accepted step per call of :meth:`~AlphaIntegrator.step`:
the Newton iteration of a generalized-alpha step (:class:`~flexmb.solvers.generalized_alpha.AlphaStepper`),
retries with halved steps after a Newton failure, the step-size control of adaptive runs
(docs/theory.md §5.2), the cut of a step back to the moment a contact begins (an event located by
interpolating the penetration, docs/theory-contact.md §4), the reuse of the iteration matrix, the
stall monitor, and at each accepted step the element history and the powers of the energy balance.
``simulate`` only loops over ``step()``, saves, reports progress and writes output.
"""
from __future__ import annotations

import math
import warnings
from collections import deque


import numpy as np

from ..contact.impulsive import Impacts
from .generalized_alpha import AlphaParameters, AlphaStepper, ErrorScale, NewtonFailure, StepState, failure_error
from .initial import accelerations, project_velocities
from .step_times import StepGrid, controlled_step, next_step, step_times
from .undamped import consistent_step_end
from .watch import StallWatch, stall_floor

__all__ = ["AlphaIntegrator", "NEWTON_SHARE", "MAX_CONTACT_CUTS"]

NEWTON_SHARE = 0.01
"""Adaptive steps: the Newton error in q is held below this share of the step's error allowance."""

IMPACT_AIM = 1e-6
"""Models with impulsive pairs (flexmb/contact/impulsive.py): the shortest step aimed at a touch, as a share of the
nominal step (the impact's configuration is landed on to about the approach speed times this step)."""

MAX_CONTACT_CUTS = 6
"""Retries of one step to land on a contact onset (each interpolates the moment of touch again)."""


class AlphaIntegrator:
    """A generalized-alpha run from state ``s0`` to ``t_end`` (s), one accepted step per :meth:`step`.

    Attributes after each step: ``state`` (the accepted :class:`StepState`), ``h_last`` (its size, s),
    ``work_nc`` / ``work_drivers`` (J: trapezoidal integrals of the non-conservative and driver powers
    since the start), ``powers`` (the powers at ``state``, W), ``h`` (the next step to try), ``stats``.
    """

    def __init__(self, asm, params: AlphaParameters, s0: StepState, t_start: float, t_end: float, h: float, *,
                 h_nominal: float, adaptive: bool, rtol: float, atol: float, h_min: float, h_max: float,
                 newton_tol: float, max_newton: int, velocity_projection: bool, energy: bool,
                 h_contact: float | None, contact_tol: float, work=(0.0, 0.0), powers=None):
        self.asm = asm
        self.newton = AlphaStepper(asm, params, newton_tol, max_newton, span=t_end - t_start)
        self.state = s0
        self.t_start, self.t_end = t_start, t_end
        self.h, self.h_nominal, self.h_min, self.h_max = h, h_nominal, h_min, h_max
        self.h_last = h
        self.adaptive, self.rtol, self.atol = adaptive, rtol, atol
        self.velocity_projection, self.energy = velocity_projection, energy
        self.h_contact, self.contact_tol = h_contact, contact_tol
        self.work_nc, self.work_drivers = work
        self.powers = powers if powers is not None else asm.step_end(s0.q, s0.v, s0.lam, s0.t, energy)
        self.stats = {"steps": 0, "rejected": 0, "blocks": 0, "method": params.name}   # blocks: calls of advance
        self._stall = StallWatch(stall_floor(h_nominal, h_contact, h_min, adaptive))
        self._error_scale = ErrorScale(asm, s0.q)
        self._recent = deque([(s0.t, s0.q)], maxlen=3)   # last accepted (t, q), for the error estimate
        self._span = t_end - t_start
        self._grid = _start_grid(s0.t, t_start, min(h_nominal, h_max))
        self._newton_warned = False
        self._cuts = 0
        self._aim_min = 0.05 * (h_contact if h_contact is not None else h_nominal)   # shortest step aimed at a touch
        self._contacts = asm.has_contacts
        self._locate_onsets = self._contacts and math.isfinite(contact_tol)     # contact_tol = inf: not located
        # penetrations at the accepted state under its history, evaluated once per accepted state: the
        # contact-step limit and both onset tests of the next step start from them
        self._pen = asm.penetrations(s0.q, s0.v, s0.t) if self._contacts else None
        # impulsive contact pairs: the velocity jump at each located touch (flexmb/contact/impulsive.py)
        self.impacts = Impacts.of(asm)
        if self.impacts is not None:
            self.stats["impacts"] = 0
            self._aim_min = IMPACT_AIM * h_nominal      # impacts are applied where the touch is landed on

    @property
    def done(self) -> bool:
        """Whether the run reached ``t_end`` (its last step lands on it exactly, flexmb/solvers/step_times.py)."""
        return self.state.t >= self.t_end

    def step(self) -> StepState:
        """Take one accepted step (retrying as needed) and return its state; raises ConvergenceError when a
        step fails down to ``h_min``, StallError when the steps collapse."""
        while True:
            s1, h_try, grid = self._attempt()
            if s1 is not None:
                self._grid = grid.after(1)
                s1 = self._accept(s1, h_try)
                return s1 if self.impacts is None else self._impact(s1)

    def _plan(self, h: float) -> tuple[StepGrid, float, float]:
        """The grid of steps of size ``h`` (s) from the accepted state, the end time (s) and size (s) of its next
        step (``h``, or the last step to ``t_end``; adaptive runs: at most ``h``. flexmb/solvers/step_times.py)."""
        grid = self._grid.at(self.state.t, h)
        if self.adaptive:
            t1, h1 = controlled_step(self.state.t, h, self.t_end)
            return grid, t1, h1
        t1, h1 = next_step(grid, self.t_end)
        return grid, t1, h1

    # -- one attempt -------------------------------------------------------
    def _attempt(self) -> tuple[StepState | None, float, StepGrid]:
        s, asm = self.state, self.asm
        grid, t1, h_try = self._plan(min(self.h, self.h_max))
        if self._contacts:
            h_c = self._contact_step(s, h_try)
            if h_c != h_try:
                grid, t1, h_try = self._plan(h_c)
        q_tol = (NEWTON_SHARE * (self.atol + self.rtol * self._error_scale.scale) * (h_try / self._span)
                 if self.adaptive else None)
        try:
            s1 = self.newton.step(s, h_try, q_tol, t1)
        except NewtonFailure as exc:
            self._reject(h_try, newton_failed=True)
            if exc.reused:
                return None, h_try, grid    # retry the same step with a fresh iteration matrix first
            if h_try / 2 < self.h_min:
                raise failure_error(exc, t1, h_try, asm) from None
            self.h = h_try / 2
            return None, h_try, grid
        if self._locate_onsets and self._cuts < MAX_CONTACT_CUTS:
            frac = asm.contact_onset(s.q, s.v, s1.q, s1.v, self.contact_tol, d0=self._pen)
            if frac is not None and frac < 0.99 and h_try * frac >= self._aim_min:
                self._cuts += 1
                self._reject(h_try)
                self.h = h_try * frac                 # land on the moment of touch
                return None, h_try, grid
        self._cuts = 0
        if self.adaptive:
            err = self.newton.error_norm(s, s1, self._recent, h_try, self.rtol, self.atol,
                                         self._error_scale.update(s1.q), self._span)
            # err ~ h^2 (error per unit step of an O(h^3) local error): exponent 1/2
            if err > 1.0 and h_try / 2 >= self.h_min:
                self._reject(h_try)
                self.h = max(h_try * max(0.2, 0.9 * err ** -0.5), self.h_min)
                return None, h_try, grid
            self.h = max(h_try * min(2.0, max(0.2, 0.9 * max(err, 1e-10) ** -0.5)), self.h_min)
        elif h_try < self.h_nominal:
            self.h = min(2.0 * h_try, self.h_nominal)   # recover the requested step after a retry
        return s1, h_try, grid

    def _contact_step(self, s: StepState, h_try: float) -> float:
        """The step limited to ``h_contact`` while a pair touches, and aimed at the moment of touch when a
        free-flight prediction already penetrates."""
        asm = self.asm
        if self.h_contact is not None and asm.in_contact(s.q, s.v, self.contact_tol, d=self._pen):
            h_try = min(h_try, self.h_contact)
        if not self._locate_onsets:
            return h_try
        q_pred = s.q + h_try * s.v + 0.5 * h_try * h_try * s.vd
        frac = asm.contact_onset(s.q, s.v, q_pred, s.v + h_try * s.vd, self.contact_tol, d0=self._pen)
        if frac is not None and frac < 0.99:
            # never below a twentieth of the contact step: a surface approached ever more slowly
            # must not stall the run in vanishing steps
            h_try = max(h_try * frac, min(h_try, self._aim_min))
        return h_try

    def can_advance(self) -> bool:
        """Whether :meth:`advance` may take several steps in one compiled call: a model on the compiled step
        (flexmb/solvers/compiled_step.py) without per-step stability checks, fixed steps, no velocity
        projection; without contacts at the nominal size (the per-step work of :meth:`step` is then the powers
        of the energy balance, which the compiled call computes), with contact pairs at any size (the compiled
        call also moves their history on and tests for onsets, flexmb/compiled/step_end.py)."""
        c = self.newton.compiled
        return (c is not None and c.blocks_allowed and not self.adaptive and not self.velocity_projection
                and self.impacts is None
                and not self.newton.p.undamped and (self._contacts or self.h == self.h_nominal))

    def advance(self, n: int):
        """Take up to ``n`` steps in one compiled call (only when :meth:`can_advance`); returns the
        :class:`~flexmb.solvers.compiled_step.StepBlock` with the work of the energy balance added (trapezoidal,
        as :meth:`step`) and, for a model with element history, that history after each step (``block.history``,
        the rows :meth:`step` would leave in ``asm.history()``), or None when it took no step. When
        ``block.failed``, the next attempt did not converge, or (contact models) it is a contact onset to locate
        or a step of another size: :meth:`step` takes it."""
        s = self.state
        if self._contacts:
            block, iterations, factorizations, grid = self._contact_block(n)
        else:
            grid = self._grid.at(s.t, min(self.h, self.h_max))
            times, sizes = step_times(grid, self.t_end, n)
            block, iterations, factorizations = self.newton.compiled.run(
                s, times, sizes, self.newton.p, self.newton.tol, self.newton.max_iter, self.energy)
        self.newton.stats.newton_iterations += iterations
        self.newton.stats.factorizations += factorizations
        if block.n == 0:
            return None
        self._grid = grid.after(block.n)
        self.stats["blocks"] += 1
        self.newton.stats.compiled_steps += block.n
        t_prev = np.concatenate([[s.t], block.t[:-1]])
        dt = block.t - t_prev
        if self.energy:
            p_nc = np.concatenate([[self.powers[0]], block.p_nc])
            p_drv = np.concatenate([[self.powers[1]], block.p_drv])
            block.work_nc = self.work_nc + np.cumsum(0.5 * dt * (p_nc[:-1] + p_nc[1:]))
            block.work_drivers = self.work_drivers + np.cumsum(0.5 * dt * (p_drv[:-1] + p_drv[1:]))
            self.work_nc, self.work_drivers = float(block.work_nc[-1]), float(block.work_drivers[-1])
            self.powers = (float(block.p_nc[-1]), float(block.p_drv[-1]))
        else:
            block.work_nc = np.full(block.n, self.work_nc)
            block.work_drivers = np.full(block.n, self.work_drivers)
        self.h_last = float(dt[-1])
        self._stall.accepted(dt)
        self._recent.extend(zip(block.t[-3:], block.q[-3:]))
        self.state = StepState(float(block.t[-1]), block.q[-1], block.v[-1], block.vd[-1], block.a_last,
                               block.lam[-1])
        self.stats["steps"] += block.n
        return block

    def _contact_block(self, n: int):
        """A block of a model with contact pairs: up to ``n`` steps of the size :meth:`_attempt` would take next
        (``min(h, h_max)``, limited to ``h_contact`` while a pair touches; the last to ``t_end`` as
        flexmb/solvers/step_times.py says), ending before a step of another size or a contact onset
        (flexmb/compiled/step_end.py); the penetrations of the accepted state and the next step size move on with
        it. Returns the block, Newton iterations, factorizations and the step grid it ran on."""
        s, asm = self.state, self.asm
        h_b = min(self.h, self.h_max)
        if self.h_contact is not None and asm.in_contact(s.q, s.v, self.contact_tol, d=self._pen):
            h_b = min(h_b, self.h_contact)
        grid = self._grid.at(s.t, h_b)
        times, sizes = step_times(grid, self.t_end, n)
        pen = np.concatenate(self._pen)
        block, iterations, factorizations, self.h = self.newton.compiled.run_contacts(
            s, times, sizes, h_b, self.h, self.h_nominal, self.h_max, self.h_contact, self.contact_tol,
            self._locate_onsets, self._aim_min, pen, self.newton.p, self.newton.tol, self.newton.max_iter,
            self.energy)
        if block.n:
            counts = np.cumsum([d.size for d in self._pen])[:-1]
            self._pen = np.split(pen, counts)
        return block, iterations, factorizations, grid

    def _reject(self, h_try: float, newton_failed: bool = False) -> None:
        """Count a rejected attempt; a Newton failure also drops the kept iteration matrix (a step rejected by the
        error test or cut at a contact onset keeps it: the next attempt starts from the same state)."""
        self.stats["rejected"] += 1
        if newton_failed:
            self.newton.forget_matrix()
        self._stall.attempt(0.0, self.state.t, h_try, self.explain)

    def _accept(self, s1: StepState, h_try: float) -> StepState:
        asm = self.asm
        if self.newton.p.undamped:             # the parasitic modes removed (flexmb/solvers/undamped.py)
            s1 = consistent_step_end(asm, s1)
        elif self.velocity_projection:
            s1.v = project_velocities(asm, s1.q, s1.v, s1.t)
        p1 = asm.step_end(s1.q, s1.v, s1.lam, s1.t, self.energy, a=s1.vd, penetrations=self._contacts)
        if self._contacts:              # after the histories moved on (mesh contacts: new candidates)
            self._pen = asm.accepted_penetrations
        if self.energy:
            self.work_nc += 0.5 * h_try * (self.powers[0] + p1[0])
            self.work_drivers += 0.5 * h_try * (self.powers[1] + p1[1])
            self.powers = p1
        self._stall.attempt(h_try, s1.t, h_try, self.explain)
        self._recent.append((s1.t, s1.q))
        self.state, self.h_last = s1, h_try
        self.stats["steps"] += 1
        if self.newton.stats.newton_to_truncation > 1.0 and not self._newton_warned:
            self._warn_newton_error(s1.t)
        return s1

    def _impact(self, s: StepState) -> StepState:
        """The accepted state ``s`` after the impacts of the impulsive pairs that touch there while approaching
        (flexmb/contact/impulsive.py): the velocity jump, then consistent accelerations and multipliers for the new
        velocities, the algorithmic acceleration restarted on them (as at a run's start), the energy the impacts
        took booked as non-conservative work."""
        asm, impacts = self.asm, self.impacts
        impacts.check_depth(self._pen, s.t)
        v1 = impacts.jump(s.q, s.v, s.t, self.contact_tol, self._aim_min)
        if v1 is None:
            return s
        vd, lam = accelerations(asm, s.q, v1, s.t)
        s = StepState(s.t, s.q, v1, vd, vd.copy(), lam)
        p1 = asm.step_end(s.q, s.v, s.lam, s.t, self.energy, a=s.vd, penetrations=self._contacts)
        self._pen = asm.accepted_penetrations
        if self.energy:
            self.work_nc -= impacts.events[-1].energy_lost
            self.powers = p1
        self._recent = deque([(s.t, s.q)], maxlen=3)      # the error estimate does not reach across the jump
        self.state = s
        self.stats["impacts"] += 1
        return s

    def _warn_newton_error(self, t: float) -> None:
        """Say once that a step's Newton error exceeds its share of the truncation error (docs/theory.md §5.5)."""
        from ..errors import FlexmbWarning, user_stacklevel
        self._newton_warned = True
        warnings.warn(FlexmbWarning(
            f"at t = {t:.6g} s the Newton error a step left is {self.newton.stats.newton_to_truncation:.3g} times "
            "its share of the truncation error: round-off in the coordinates limits Newton at this step size, and "
            "the global error no longer falls with h (a larger h, or the model nearer the origin; "
            "res.stats['newton_to_truncation'])"), stacklevel=user_stacklevel())

    def explain(self) -> str:
        """The sentence naming the element that dominates the iteration matrix at the current state."""
        from .diagnostics import culprit_text
        P, s, h = self.newton.p, self.state, self.h_nominal
        coef = ((1.0 - P.alpha_m) / (1.0 - P.alpha_f), P.gamma * h, P.beta * h ** 2)
        return culprit_text(self.asm, s.q, s.v, s.vd, s.lam, s.t, coef)

    def counters(self) -> dict:
        """Newton iterations, factorizations, steps taken by the compiled step and Newton iterations evaluated by the
        compiled evaluation so far (flexmb/solvers/compiled_step.py), and the largest ratio of a step's Newton error
        to its share of the truncation error (``StepStats.newton_to_truncation``)."""
        st = self.newton.stats
        return {"newton_iterations": st.newton_iterations, "factorizations": st.factorizations,
                "compiled_steps": st.compiled_steps, "compiled_evaluations": st.compiled_evaluations,
                "newton_to_truncation": st.newton_to_truncation}


def _start_grid(t: float, t_start: float, h: float) -> StepGrid:
    """The step grid at the start state ``t`` (s) of a run from ``t_start`` (s) with steps ``h`` (s): rows at
    ``t_start + k h``; a run resumed on such a row continues that grid, any other start time anchors its own."""
    k = round((t - t_start) / h)
    grid = StepGrid(t_start, k, h)
    return grid if grid.t == t else StepGrid(t, 0, h)
