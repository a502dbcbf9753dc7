"""``simulate``: run a System in time with the implicit generalized-alpha family
(default) or, as a reference for checks, an explicit index-1 Runge-Kutta scheme."""
from __future__ import annotations

import math
import time as _time
from collections import deque

import numpy as np

from ..errors import ConvergenceError, FlexmbError, ModelError, SingularConfigurationError
from ..results import Result, stack_rows
from .generalized_alpha import (AlphaParameters, AlphaStepper, ErrorScale, NewtonFailure, StepState,
                                failure_error)
from .initial import consistent_start, project_velocities
from .linalg import single_blas_thread_for_small_systems
from .options import METHODS, check_options
from .progress import ProgressOption, RunProgress
from .watch import EnergyWatch, StallWatch, energy_sample_every, stall_floor

__all__ = ["simulate", "METHODS"]


NEWTON_SHARE = 0.01
"""Adaptive steps: the Newton error in q is held below this share of the step's error allowance."""

MAX_CONTACT_CUTS = 6
"""Retries of one step to land on a contact onset (each interpolates the moment of touch again)."""


def _params(method: str, rho_inf: float, beta: float | None, gamma: float | None) -> AlphaParameters:
    if method == "generalized-alpha":
        return AlphaParameters.generalized_alpha(rho_inf)
    if method == "hht":
        return AlphaParameters.hht(rho_inf)
    return AlphaParameters.newmark(0.25 if beta is None else beta, 0.5 if gamma is None else gamma)


class _History:
    """In-memory history plus the optional chunk writer; each row carries the element history
    (``asm.history()``) after the step was accepted."""

    def __init__(self, asm, writer=None):
        self.rows = {k: [] for k in Result.ARRAYS}
        self.asm = asm
        self.writer = writer

    def add(self, s: StepState, w_nc: float, w_drv: float) -> None:
        row = dict(t=s.t, q=s.q, v=s.v, vd=s.vd, lam=s.lam, work_nc=w_nc, work_drivers=w_drv,
                   history=self.asm.history())
        for k in Result.ARRAYS:
            self.rows[k].append(np.copy(row[k]))
        if self.writer is not None:
            self.writer.append(**row)

    def result(self, system, stats, message, redundant, prefix=None) -> Result:
        n = min(map(len, self.rows.values()))     # a Ctrl-C inside add() leaves a row half appended
        arrays = {k: (stack_rows(v[:n], self.asm.history().size) if k == "history" else np.array(v[:n]))
                  for k, v in self.rows.items()}
        if prefix is not None:
            arrays = {k: stack_rows([*prefix[k], *arrays[k]]) if k == "history" else
                      np.concatenate([prefix[k], arrays[k]]) if arrays[k].size else prefix[k] for k in arrays}
        return Result(**arrays, system=system, stats=stats, message=message, redundant=redundant)


@single_blas_thread_for_small_systems
def simulate(system, t_end: float, h: float | None = None, *, method: str = "generalized-alpha",
             rho_inf: float = 0.9, beta: float | None = None, gamma: float | None = None,
             t_start: float = 0.0, adaptive: bool = False, rtol: float = 1e-4, atol: float = 1e-7,
             h_min: float | None = None, h_max: float | None = None, newton_tol: float = 1e-8,
             max_newton: int = 15, velocity_projection: bool = False, redundant: str = "remove",
             save_every: int = 1, output=None, chunk_steps: int = 1000, resume: bool = False,
             energy: bool = True, progress: ProgressOption = None, h_contact: float | None = None,
             contact_tol: float = 1e-9, initial: Result | None = None) -> Result:
    """Integrate the equations of motion of ``system`` from ``t_start`` to ``t_end`` (s).

    ``method``: "generalized-alpha" (index 3, Arnold & Bruls 2007; spectral
    radius ``rho_inf``), "hht", "newmark" (``beta``, ``gamma``), or the explicit
    index-1 references "rk45"/"dop853" (scipy; constraints drift, for checks: their
    steps are chosen by scipy's error control from ``rtol``, ``atol``, and ``h`` is only
    the spacing of the saved times; ``stats["steps"]`` counts the real steps).
    ``h`` is the step size (the initial one when ``adaptive``); adaptive steps hold the
    local error per unit step so that the global error of each coordinate stays near
    ``atol + rtol * scale`` and falls in proportion to ``rtol`` (docs/guide.md §3,
    "What rtol means"). Newton failures are retried with halved steps down to ``h_min``
    before a ConvergenceError; a run whose steps collapse stops with a StallError, and an
    energy balance that drifts beyond a tenth of the energy scale is flagged
    (EnergyBalanceWarning; flexmb/solvers/watch.py).
    ``redundant``: "remove" switches dependent constraint rows off (with a
    warning naming them), "error" refuses the model. ``output`` names a
    directory that receives the history in chunks of ``chunk_steps`` saved rows,
    and at least every second of computation (flexmb.io.chunks.FLUSH_SECONDS; docs/guide.md §5
    says what a crash keeps); ``resume=True`` continues an interrupted run there, with the
    element history (crash elements, spring winding, contacts) saved with its state. With contact pairs, a step
    in which a pair that was apart penetrates by more than ``contact_tol`` (m) is
    cut back to the interpolated moment of touch (docs/theory-contact.md §4), and
    while any pair penetrates the step is at most ``h_contact`` (s), so that each
    contact is resolved by enough steps.
    ``progress``: True shows a bar on stderr (tqdm: simulated time, steps per second, ETA), False
    nothing; None (default) shows it when stderr is a terminal and the run is predicted to take more
    than a few seconds (flexmb/solvers/progress.py); a callable ``progress(t, t_end)`` is called after
    every accepted step with the time reached (s) and may raise to stop the run.
    Ctrl-C (KeyboardInterrupt), and any flexmb error during the run, propagates with the states
    computed so far attached as ``exc.result`` (a Result; docs/guide.md, "Progress and Ctrl-C").
    ``initial``: a Result of ``fm.static_equilibrium`` on this system; the run starts at rest in its last
    state instead of the bodies' initial state (not used when ``resume`` continues a saved run).
    """
    check_options(locals())          # every keyword, before anything runs (flexmb/solvers/options.py)
    asm = system.compile()
    if method in ("rk45", "dop853"):
        if asm.crash:
            raise ModelError("crash elements update their history at accepted steps; the explicit index-1 "
                             "references do not accept steps: use generalized-alpha, hht or newmark")
        if initial is not None:
            raise ModelError(f"simulate: initial= (a static equilibrium) is not supported by the explicit index-1 "
                             f"reference {method!r}; use generalized-alpha, hht or newmark")
        if output is not None or resume:
            raise ModelError(f"simulate: output={output!r} / resume={resume!r}: the explicit index-1 reference "
                             f"{method!r} writes no output directory; use generalized-alpha, hht or newmark")
        from .index1 import simulate_index1
        return simulate_index1(system, asm, t_start, t_end, h, method, rtol, atol, redundant)
    h_min = h * 1e-6 if h_min is None else h_min
    h_max = (t_end - t_start) if h_max is None else h_max
    h_nominal = h
    params = _params(method, rho_inf, beta, gamma)
    stepper = AlphaStepper(asm, params, newton_tol, max_newton)
    wall0 = _time.perf_counter()

    writer, prefix, state = None, None, None
    if output is not None:
        from ..io.chunks import ChunkWriter, read_chunks
        meta = {"system": system.name, "nq": asm.nq, "m": asm.m, "method": params.name, "h": h,
                "t_start": t_start, "t_end": t_end, "adaptive": bool(adaptive), "save_every": save_every,
                "bodies": [b.name for b in system.bodies], "joints": [j.name for j in system.joints],
                "forces": [f.name for f in system.forces]}
        writer = ChunkWriter(output, meta, chunk_steps, resume=resume)   # checks meta, trims chunks after the state
        state = writer.state
        if state is not None:
            prefix = read_chunks(output)
    elif resume:
        raise ModelError("simulate: resume=True needs output= (the directory of the run to continue)")
    if state is not None:
        s = StepState(float(state["t"]), state["q"], state["v"], state["vd"], state["a"], state["lam"])
        w_nc, w_drv, h = float(state["work_nc"]), float(state["work_drivers"]), float(state["h"])
        from .initial import handle_redundancy
        handle_redundancy(asm, s.q, s.t, redundant)
        asm.set_history(state["history"])          # the elements' history at the saved state: no new accept
        p_nc, p_drv = float(state["p_nc"]), float(state["p_drv"])
        history = _History(asm, writer)
    else:
        asm.start(*asm.initial_state())            # every run starts from the clean element history
        if initial is None:
            q, v, vd, lam = consistent_start(asm, t_start, redundant)
        else:
            from .static import start_from_equilibrium
            q, v, vd, lam = start_from_equilibrium(asm, initial, t_start, redundant)
        s = StepState(t_start, q, v, vd, vd.copy(), lam)
        w_nc = w_drv = 0.0
        p_nc, p_drv = asm.step_end(s.q, s.v, s.lam, s.t, energy)
        history = _History(asm, writer)
        history.add(s, w_nc, w_drv)
    redundant_rows = [asm.labels[k] for k in np.flatnonzero(~asm.active)]

    def snapshot():
        return dict(t=s.t, q=s.q, v=s.v, vd=s.vd, a=s.a, lam=s.lam, work_nc=w_nc, work_drivers=w_drv, h=h,
                    history=asm.history(), p_nc=p_nc, p_drv=p_drv, step_count=step_count)

    switched_off_tol = 1e3 * newton_tol * (1.0 + float(np.abs(s.q).max()))
    stall = StallWatch(stall_floor(h_nominal, h_contact, h_min, adaptive))
    energy_watch = EnergyWatch(asm, s.q, s.v, w_nc + w_drv) if energy else None
    energy_every = energy_sample_every(t_end - s.t, h_nominal, save_every)
    error_scale = ErrorScale(asm, s.q)
    q_scale = error_scale.scale      # the scale of each coordinate in the adaptive error test
    span = t_end - t_start
    recent = deque([(s.t, s.q)], maxlen=3)    # the last accepted (t, q), for the adaptive error estimate

    def explain() -> str:
        from .diagnostics import culprit_text
        P = stepper.p
        coef = ((1.0 - P.alpha_m) / (1.0 - P.alpha_f), P.gamma * h_nominal, P.beta * h_nominal ** 2)
        return culprit_text(asm, s.q, s.v, s.vd, s.lam, s.t, coef)
    stats = {"steps": 0, "rejected": 0, "method": params.name}
    step_count = int(state["step_count"]) if state is not None else 0     # keeps save_every aligned on resume
    cuts = 0
    aim_min = 0.05 * (h_contact if h_contact is not None else h_nominal)   # shortest step aimed at a touch
    reporter = RunProgress(progress, t_start, s.t, t_end, step_count)
    try:
        while s.t < t_end - 1e-12 * max(1.0, abs(t_end)):
            h_try = min(h, h_max, t_end - s.t)
            if asm.contacts:
                if h_contact is not None and asm.in_contact(s.q, s.v, contact_tol):
                    h_try = min(h_try, h_contact)
                # a free-flight prediction that already penetrates: aim the step at the touch
                q_pred = s.q + h_try * s.v + 0.5 * h_try * h_try * s.vd
                frac = (asm.contact_onset(s.q, s.v, q_pred, s.v + h_try * s.vd, contact_tol)
                        if math.isfinite(contact_tol) else None)        # contact_tol = inf: onsets not located
                if frac is not None and frac < 0.99:
                    # aim at the touch, but never below a twentieth of the contact step: a surface
                    # approached ever more slowly must not stall the run in vanishing steps
                    h_try = max(h_try * frac, min(h_try, aim_min))
            try:
                s1 = stepper.step(s, h_try, NEWTON_SHARE * (atol + rtol * q_scale) * (h_try / span)
                                  if adaptive else None)
            except NewtonFailure as exc:
                stats["rejected"] += 1
                stepper.forget_matrix()
                stall.attempt(0.0, s.t, h_try, explain)
                if exc.reused:
                    continue    # retry the same step with a fresh iteration matrix first
                if h_try / 2 < h_min:
                    raise failure_error(exc, s.t + h_try, h_try, asm) from None
                h = h_try / 2
                continue
            if asm.contacts and cuts < MAX_CONTACT_CUTS and math.isfinite(contact_tol):
                frac = asm.contact_onset(s.q, s.v, s1.q, s1.v, contact_tol)
                if frac is not None and frac < 0.99 and h_try * frac >= aim_min:
                    cuts += 1
                    stats["rejected"] += 1
                    stepper.forget_matrix()
                    stall.attempt(0.0, s.t, h_try, explain)
                    h = h_try * frac                 # land on the moment of touch
                    continue
            cuts = 0
            if adaptive:
                q_scale = error_scale.update(s1.q)
                err = stepper.error_norm(s, s1, recent, h_try, rtol, atol, q_scale, span)
                # err ~ h^2 (error per unit step of an O(h^3) local error): exponent 1/2
                if err > 1.0 and h_try / 2 >= h_min:
                    stats["rejected"] += 1
                    stepper.forget_matrix()
                    stall.attempt(0.0, s.t, h_try, explain)
                    h = max(h_try * max(0.2, 0.9 * err ** -0.5), h_min)
                    continue
                h = max(h_try * min(2.0, max(0.2, 0.9 * max(err, 1e-10) ** -0.5)), h_min)
            elif h_try < h_nominal:
                h = min(2.0 * h_try, h_nominal)   # recover the requested step after a Newton retry
            if redundant_rows:
                viol, label = asm.switched_off_violation(s1.q, s1.t)
                if viol > switched_off_tol:
                    raise SingularConfigurationError(
                        f"{label} was switched off as redundant at the start, but at t = {s1.t:.6g} s it is "
                        f"violated by {viol:.3e}: the start was a singular configuration, not a redundant "
                        "constraint. Start the model away from the singular position.")
            if velocity_projection:
                s1.v = project_velocities(asm, s1.q, s1.v, s1.t)
            p_nc1, p_drv1 = asm.step_end(s1.q, s1.v, s1.lam, s1.t, energy, a=s1.vd)
            if energy:
                w_nc += 0.5 * h_try * (p_nc + p_nc1)
                w_drv += 0.5 * h_try * (p_drv + p_drv1)
                p_nc, p_drv = p_nc1, p_drv1
            stall.attempt(h_try, s1.t, h_try, explain)
            recent.append((s1.t, s1.q))
            s = s1
            step_count += 1
            stats["steps"] += 1
            last = s.t >= t_end - 1e-12 * max(1.0, abs(t_end))
            if step_count % save_every == 0 or last:
                history.add(s, w_nc, w_drv)
                if energy_watch is not None and (last or (step_count // save_every) % energy_every == 0):
                    energy_watch.check(s.q, s.v, s.t, w_nc + w_drv, h_try, s.t - t_start)
            if writer is not None:      # every chunk_steps saved rows, and at least every FLUSH_SECONDS
                writer.maybe_flush(snapshot)
            if step_count >= reporter.next_step:       # one comparison per step (flexmb/solvers/progress.py)
                reporter.report(s.t, step_count)
    except ConvergenceError as exc:
        if writer is not None:
            writer.flush(snapshot())
        stats.update(_stats(stepper, wall0))
        exc.result = history.result(system, stats, str(exc), redundant_rows, prefix)
        raise
    except BaseException as exc:
        # singular configuration, instability, a failing user function, Ctrl-C: the states so far as exc.result
        if isinstance(exc, (FlexmbError, KeyboardInterrupt)):
            stats.update(_stats(stepper, wall0))
            message = str(exc) if isinstance(exc, FlexmbError) else f"interrupted (Ctrl-C) at t = {s.t:.6g} s"
            exc.result = history.result(system, stats, message, redundant_rows, prefix)
        if writer is not None:   # KeyboardInterrupt or any other error: keep what was computed
            writer.flush(snapshot())
        raise
    finally:
        reporter.close(s.t, step_count)
    if writer is not None:
        writer.flush(snapshot())
    stats.update(_stats(stepper, wall0))
    message = "completed"
    if energy_watch is not None:
        stats["energy_drift"] = energy_watch.worst
        message = energy_watch.message
    return history.result(system, stats, message, redundant_rows, prefix)


def _stats(stepper, wall0) -> dict:
    return {"newton_iterations": stepper.stats.newton_iterations,
            "factorizations": stepper.stats.factorizations,
            "wall_s": _time.perf_counter() - wall0}
