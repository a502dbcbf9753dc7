"""``simulate``: run a System in time with the implicit generalized-alpha family
(default) or, as a reference for checks, an explicit index-1 Runge-Kutta scheme."""
from __future__ import annotations

import time as _time

import numpy as np

from ..contact.duration import default_contact_step
from ..errors import FlexmbError, ModelError, SingularConfigurationError
from ..io.chunks import releases_output
from ..io.arrays import stack_rows
from ..results import Result
from .generalized_alpha import AlphaParameters, StepState
from .initial import consistent_start
from ..linalg import single_blas_thread_for_small_systems
from .options import METHODS, check_options
from .progress import ProgressOption, RunProgress
from .stepper import AlphaIntegrator
from .watch import EnergyWatch, check_rotation_resolution, energy_sample_every

__all__ = ["simulate", "METHODS", "BLOCK_STEPS"]

BLOCK_STEPS = 500
"""Most steps taken in one compiled call by runs that can (fixed steps, models on the compiled step:
flexmb/solvers/compiled_step.py); the progress reporter, the saved rows and an output directory see them after
the call."""


def _params(method: str, rho_inf: float, beta: float | None, gamma: float | None) -> AlphaParameters:
    if method == "generalized-alpha":
        return AlphaParameters.generalized_alpha(rho_inf)
    if method == "hht":
        return AlphaParameters.hht(rho_inf)
    return AlphaParameters.newmark(0.25 if beta is None else beta, 0.5 if gamma is None else gamma)


class _Rows:
    """Rows of equal width appended one at a time into a buffer that doubles when full (a copy per row,
    no Python list of small arrays)."""

    def __init__(self, shape: tuple[int, ...]):
        self.buf = np.empty((64, *shape))
        self.n = 0

    def append(self, x) -> None:
        if self.n == self.buf.shape[0]:
            self.buf = np.concatenate([self.buf, np.empty_like(self.buf)])
        self.buf[self.n] = x
        self.n += 1

    def extend(self, x) -> None:
        """Append the rows of ``x`` (k, *shape) in one copy."""
        k = len(x)
        if self.n + k > self.buf.shape[0]:
            grown = np.empty((max(2 * self.buf.shape[0], self.n + k), *self.buf.shape[1:]))
            grown[:self.n] = self.buf[:self.n]
            self.buf = grown
        self.buf[self.n:self.n + k] = x
        self.n += k

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, s):
        return self.buf[:self.n][s]


class _HistoryRows:
    """Element-history rows kept as the 2-D pieces they come in (a row of a single step, the rows of a block) and
    stacked once at the end, zero-padded to the widest (a sphere cloud's history length changes with its
    candidates; ``Assembly.set_history`` ignores the padding): a copy per piece, not a Python step per row."""

    def __init__(self):
        self.pieces: list[np.ndarray] = []
        self.n = 0

    def append(self, x) -> None:
        self.extend(np.reshape(x, (1, -1)))

    def extend(self, x: np.ndarray) -> None:
        """Append the rows of ``x`` (k, width)."""
        self.pieces.append(x)
        self.n += len(x)

    def __len__(self) -> int:
        return self.n

    def stacked(self, n: int, width: int) -> np.ndarray:
        """The first ``n`` rows as one (n, at least ``width``) array."""
        out = np.zeros((n, max([width] + [p.shape[1] for p in self.pieces])))
        k = 0
        for p in self.pieces:
            m = min(len(p), n - k)
            if m <= 0:
                break
            out[k:k + m, :p.shape[1]] = p[:m]
            k += m
        return out


class _History:
    """In-memory history plus the optional chunk writer; each row carries the element history
    (``asm.history()``) after the step was accepted."""

    def __init__(self, asm, writer=None):
        self.asm = asm
        self.writer = writer
        self.rows = {"t": _Rows(()), "q": _Rows((asm.nq,)), "v": _Rows((asm.nq,)), "vd": _Rows((asm.nq,)),
                     "lam": _Rows((asm.m,)), "work_nc": _Rows(()), "work_drivers": _Rows(()), "history": _HistoryRows()}
        self._stateless = not asm.stateful

    def add(self, s: StepState, w_nc: float, w_drv: float, hist: np.ndarray | None = None) -> None:
        """Append the accepted state ``s``; ``hist``: its element history when not the groups' current one (a row
        inside a block of steps)."""
        rows = self.rows
        if hist is None:
            hist = _NO_HISTORY if self._stateless else self.asm.history()
        rows["t"].append(s.t)
        rows["q"].append(s.q)
        rows["v"].append(s.v)
        rows["vd"].append(s.vd)
        rows["lam"].append(s.lam)
        rows["work_nc"].append(w_nc)
        rows["work_drivers"].append(w_drv)
        rows["history"].append(hist)
        if self.writer is not None:
            self.writer.append(t=s.t, q=s.q, v=s.v, vd=s.vd, lam=s.lam, work_nc=w_nc, work_drivers=w_drv,
                               history=hist)

    def add_block(self, block, rows: np.ndarray) -> None:
        """The rows ``rows`` of a block of steps taken in one compiled call, each with its own element history
        (``block.history``) when the model keeps one that moves (angle springs, contacts), else with the
        element history as it is now, which the block left unchanged (as :meth:`add` row by row); the chunk
        writer, if any, gets them too."""
        if rows.size == 0:
            return
        r = self.rows
        fields = {"t": block.t[rows], "q": block.q[rows], "v": block.v[rows], "vd": block.vd[rows],
                  "lam": block.lam[rows], "work_nc": block.work_nc[rows], "work_drivers": block.work_drivers[rows]}
        for name, x in fields.items():
            r[name].extend(x)
        if block.history is not None:
            hist = block.history[rows]
        else:
            now = _NO_HISTORY if self._stateless else self.asm.history()
            hist = np.broadcast_to(now, (rows.size, now.size))
        r["history"].extend(hist)
        if self.writer is not None:
            self.writer.extend(**fields, history=hist)

    def result(self, system, stats, message, redundant, prefix=None) -> Result:
        n = min(map(len, self.rows.values()))     # a Ctrl-C inside add() leaves a row half appended
        width = self.asm.history().size
        arrays = {k: v.stacked(n, width) if k == "history" else np.array(v[:n]) for k, v in self.rows.items()}
        if prefix is not None:
            arrays = {k: stack_rows([*prefix[k], *arrays[k]]) if k == "history" else
                      np.concatenate([prefix[k], arrays[k]]) if arrays[k].size else prefix[k] for k in arrays}
        return Result(**arrays, system=system, stats=stats, message=message, redundant=redundant)


_NO_HISTORY = np.zeros(0)
_NO_HISTORY.flags.writeable = False


@releases_output
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

    ``h`` (s) is required by the default method and by "hht" and "newmark", with fixed steps and with
    ``adaptive=True`` (its first step): ``simulate(system, t_end, h)``. Its default None serves only the
    explicit references "rk45"/"dop853", which choose their own steps; without ``h`` the others raise a
    ModelError saying so.

    ``method``: "generalized-alpha" (index 3, Arnold & Bruls 2007; spectral
    radius ``rho_inf``), "hht", "newmark" (``beta``, ``gamma``), or the explicit
    index-1 references "rk45"/"dop853" (scipy; constraints drift, for checks: their
    steps are chosen by scipy's error control from ``rtol``, ``atol``, and ``h`` is only
    the spacing of the saved times; ``stats["steps"]`` counts the real steps).
    ``rho_inf=1``, HHT at ``rho_inf=1`` and Newmark's trapezoidal rule (``gamma=0.5``, its default) are
    undamped: energy is conserved, each step ending on a consistent state (flexmb/solvers/undamped.py,
    docs/guide.md §3 "Undamped runs").
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
    contact is resolved by enough steps; when not given, it is the shortest Hertz contact duration of the
    model's contacts (stiffness, exponent, effective mass, and an impact speed bounded by the model's energy)
    over ``STEPS_PER_CONTACT`` = 30 (flexmb/contact/duration.py, docs/theory-contact.md §4.1);
    ``h_contact=math.inf`` sets no limit.
    ``progress``: True shows a bar on stderr (tqdm: simulated time, steps per second, ETA), False
    nothing; None (default) shows it when stderr is a terminal and the run is predicted to take more
    than a few seconds (flexmb/solvers/progress.py); a callable ``progress(t, t_end)`` is called with the
    time reached (s) at most every 0.1 s of wall time (``progress.CALLBACK_S``), between steps or blocks of
    steps, and once at the end of the run; it may raise to stop the run (the states up to its call are kept).
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
    params = _params(method, rho_inf, beta, gamma)
    wall0 = _time.perf_counter()

    writer, prefix, state = None, None, None
    if output is not None:
        from ..io.chunks import ChunkWriter, run_meta
        settings = dict(method=params.name, h=h, t_start=t_start, t_end=t_end, adaptive=adaptive,
                        save_every=save_every, rtol=rtol, atol=atol, h_min=h_min, h_max=h_max, newton_tol=newton_tol,
                        max_newton=max_newton, velocity_projection=velocity_projection, redundant=redundant,
                        h_contact=h_contact, contact_tol=contact_tol)
        # locks the directory, checks names, settings and parameter values on resume, trims chunks after the state
        writer = ChunkWriter(output, run_meta(system, asm, settings), chunk_steps, resume=resume)
        state, prefix = writer.state, writer.prefix
    elif resume:
        raise ModelError("simulate: resume=True needs output= (the directory of the run to continue)")
    if h_contact is None and asm.has_contacts:     # the contacts' durations, known before the run
        h_contact = default_contact_step(system, asm, *asm.initial_state())
    elif h_contact == np.inf:                      # asked for: no limit while in contact
        h_contact = None
    options = dict(h_nominal=h, adaptive=adaptive, rtol=rtol, atol=atol, h_min=h_min, h_max=h_max,
                   newton_tol=newton_tol, max_newton=max_newton, velocity_projection=velocity_projection,
                   energy=energy, h_contact=h_contact, contact_tol=contact_tol)
    if state is not None:
        s = StepState(float(state["t"]), state["q"], state["v"], state["vd"], state["a"], state["lam"])
        from .initial import handle_redundancy
        handle_redundancy(asm, s.q, s.t, redundant)
        asm.set_history(state["history"])          # the elements' history at the saved state: no new accept
        run = AlphaIntegrator(asm, params, s, t_start, t_end, float(state["h"]), **options,
                              work=(float(state["work_nc"]), float(state["work_drivers"])),
                              powers=(float(state["p_nc"]), float(state["p_drv"])))
        history = _History(asm, writer)
    else:
        asm.start(*asm.initial_state())            # every run starts from the clean element history
        if initial is None:
            q, v, vd, lam = consistent_start(asm, t_start, redundant)
        else:
            from .static import start_from_equilibrium
            q, v, vd, lam = start_from_equilibrium(asm, initial, t_start, redundant)
        s = StepState(t_start, q, v, vd, vd.copy(), lam)
        run = AlphaIntegrator(asm, params, s, t_start, t_end, h, **options)     # accepts the start state
        history = _History(asm, writer)
        history.add(s, 0.0, 0.0)
    redundant_rows = [asm.labels[k] for k in np.flatnonzero(~asm.active)]
    step_count = int(state["step_count"]) if state is not None else 0     # keeps save_every aligned on resume

    def snapshot():
        s = run.state
        return dict(t=s.t, q=s.q, v=s.v, vd=s.vd, a=s.a, lam=s.lam, work_nc=run.work_nc,
                    work_drivers=run.work_drivers, h=run.h, history=asm.history(), p_nc=run.powers[0],
                    p_drv=run.powers[1], step_count=step_count)

    switched_off_tol = 1e3 * newton_tol * (1.0 + float(np.abs(s.q).max()))
    energy_watch = EnergyWatch(asm, s.q, s.v, run.work_nc + run.work_drivers) if energy else None
    energy_every = energy_sample_every(t_end - s.t, h, save_every)
    reporter = RunProgress(progress, t_start, s.t, t_end, step_count)

    def record(s: StepState, work_nc: float, work_drivers: float, last: bool, h_last: float,
               off: float | None = None, hist: np.ndarray | None = None, in_block: bool = False) -> None:
        """The bookkeeping after accepted step ``step_count``: save it every ``save_every`` steps (``off``: the
        largest |Phi| of the rows switched off as redundant, when already known; ``hist``: the element history
        of a row inside a block; ``in_block``: a row of a block, whose energy check the block's bulk check does)."""
        if step_count % save_every == 0 or last:
            if redundant_rows and (off is None or off > switched_off_tol):
                _check_switched_off(asm, s, switched_off_tol)
            history.add(s, work_nc, work_drivers, hist)
            if (energy_watch is not None and not in_block
                    and (last or (step_count // save_every) % energy_every == 0)):
                energy_watch.check(s.q, s.v, s.t, work_nc + work_drivers, h_last, s.t - t_start)

    # fixed-step runs on the compiled step take blocks of steps in one compiled call (solvers/compiled_step.py);
    # each row of a block carries its own element history, so blocks end neither at saved rows nor per step
    blocks = run.can_advance()
    flush_steps = BLOCK_STEPS       # steps of about a writer's flush interval, at the rate of the last block
    loop0 = _time.perf_counter()
    try:
        while not run.done:
            t_before = run.state.t
            n = min(BLOCK_STEPS, reporter.next_step - step_count)
            if writer is not None:      # a block ends where a chunk is full or a flush is due, as single steps
                n = min(n, flush_steps, _steps_to_chunk(writer, step_count, save_every))
            wall = _time.perf_counter() if writer is not None else 0.0
            block = run.advance(n) if blocks else None
            if block is not None and writer is not None:
                flush_steps = _steps_in(writer.flush_seconds, (_time.perf_counter() - wall) / block.n)
            if block is None:
                s = run.step()
                step_count += 1
                record(s, run.work_nc, run.work_drivers, run.done, run.h_last)
                blocks = blocks and run.can_advance()
            else:
                # the saved rows only, no loop over the steps: stored in bulk but for those that go through record
                # (a switched-off row to verify, the last row); the rows due an energy check are checked together,
                # their energies in one compiled evaluation (EnergyWatch.check_rows)
                counts = step_count + 1 + np.arange(block.n)
                saved = np.flatnonzero((counts % save_every == 0) | (counts == counts[-1]))
                special = counts[saved] == counts[-1]
                if redundant_rows:
                    special |= block.off[saved] > switched_off_tol
                first = 0
                for j in [*np.flatnonzero(special).tolist(), saved.size]:
                    history.add_block(block, saved[first:j])
                    if j == saved.size:
                        break
                    k = int(saved[j])
                    step_count = int(counts[k])
                    s = StepState(float(block.t[k]), block.q[k], block.v[k], block.vd[k],
                                  block.a_last if k == block.n - 1 else None, block.lam[k])
                    h_k = float(block.t[k] - (block.t[k - 1] if k else t_before))
                    record(s, float(block.work_nc[k]), float(block.work_drivers[k]),
                           run.done and k == block.n - 1, h_k, float(block.off[k]),
                           None if block.history is None else block.history[k], in_block=True)
                    first = j + 1
                if energy_watch is not None:
                    due = (counts[saved] // save_every) % energy_every == 0
                    if run.done:
                        due[-1] = True          # the last row of the run
                    rows = saved[due]
                    if rows.size:
                        tk = block.t[rows]
                        h_k = tk - np.where(rows > 0, block.t[rows - 1], t_before)
                        energy_watch.check_rows(block.q[rows], block.v[rows],
                                                None if block.history is None else block.history[rows], tk,
                                                block.work_nc[rows] + block.work_drivers[rows], h_k, tk - t_start)
                step_count = int(counts[-1])
                if block.failed:
                    s = run.step()          # the attempt that failed in the block, with retries and diagnostics
                    step_count += 1
                    record(s, run.work_nc, run.work_drivers, run.done, run.h_last)
            if writer is not None:      # every chunk_steps saved rows, and at least every FLUSH_SECONDS
                writer.maybe_flush(snapshot)
            if step_count >= reporter.next_step:       # one comparison per step (flexmb/solvers/progress.py)
                reporter.report(run.state.t, step_count)
        reporter.finish(run.state.t, step_count)       # a callback's last call, at the end
    except BaseException as exc:
        # a failed step, a singular configuration, an instability, a failing user function, Ctrl-C:
        # the states so far as exc.result
        if isinstance(exc, (FlexmbError, KeyboardInterrupt)):
            stats = {**run.stats, **_stats(run, wall0, loop0)}
            message = str(exc) if isinstance(exc, FlexmbError) else f"interrupted (Ctrl-C) at t = {run.state.t:.6g} s"
            exc.result = history.result(system, stats, message, redundant_rows, prefix)
        if writer is not None:   # any error: keep what was computed (an OutputError chained to exc if that fails)
            writer.close(snapshot(), failure=exc, partial=getattr(exc, "result", None))
        raise
    finally:
        reporter.close(run.state.t, step_count)
    stats = {**run.stats, **_stats(run, wall0, loop0)}
    message = "completed"
    if energy_watch is not None:
        stats["energy_drift"] = energy_watch.worst
        message = energy_watch.message
    res = history.result(system, stats, message, redundant_rows, prefix)
    if run.impacts is not None:
        res.impacts = tuple(run.impacts.events)
    stats.update(check_rotation_resolution(res, save_every))
    if writer is not None:
        writer.close(snapshot(), partial=res)     # the last rows; an OutputError carrying res if that fails
    return res


def _steps_to_chunk(writer, step_count: int, save_every: int) -> int:
    """Steps from step counter ``step_count`` until the chunk writer holds a whole chunk (``chunk_steps`` saved
    rows, one every ``save_every`` steps): a block ends there, so chunks hold the rows single steps give them."""
    free = writer.chunk_steps - len(writer.buffer["t"])
    return max(1, free * save_every - step_count % save_every)


def _steps_in(seconds: float, per_step: float) -> int:
    """Steps of ``per_step`` seconds (s) each that take about ``seconds`` (s): 1 to ``BLOCK_STEPS``."""
    return BLOCK_STEPS if per_step * BLOCK_STEPS <= seconds else max(1, int(seconds / per_step))


def _check_switched_off(asm, s: StepState, tol: float) -> None:
    """Rows switched off as redundant are dependent, so they stay satisfied on their own; if one does not,
    the start was a singular configuration, not a redundancy (checked at saved states)."""
    viol, label = asm.switched_off_violation(s.q, s.t)
    if viol > tol:
        raise SingularConfigurationError(
            f"{label} was switched off as redundant at the start, but at t = {s.t:.6g} s it is "
            f"violated by {viol:.3e}: the start was a singular configuration, not a redundant "
            "constraint. Start the model away from the singular position.")


def _stats(run: AlphaIntegrator, wall0: float, loop0: float | None = None) -> dict:
    """Counters and times: ``wall_s`` of the whole call, ``loop_s`` of its time-stepping loop (s)."""
    now = _time.perf_counter()
    return {**run.counters(), "wall_s": now - wall0, "loop_s": now - (wall0 if loop0 is None else loop0)}
