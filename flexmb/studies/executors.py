"""Executors of a study: this process, a local process pool, or a Dask cluster.

All three run the same module-level :func:`~flexmb.studies.study.run_case` on the
same task and hand each finished row to the study (in completion order). A pool
keeps only a small window of cases in flight, so an interrupt loses little and a
crash is easy to place: when a worker process dies (a crash in native code,
``os._exit``, the out-of-memory killer), the cases in flight are re-run one at a
time in a fresh pool, and only the one that kills its worker again is recorded as
failed ("WorkerCrashed").
"""
from __future__ import annotations

import math
import os
import pickle
import sys
import time as _time
from collections import deque

from .study import StudyError, failure_row, run_case

__all__ = ["execute", "Progress"]


class WorkerCrashed(Exception):
    """The worker process running a case died."""


def execute(study, pending, on_row, executor="serial", workers=None, connect_timeout=5.0, mp_context=None):
    if isinstance(executor, str) and executor == "serial":
        task = study._task()
        for i, p in pending:
            on_row(run_case(task, i, p))
        return
    if isinstance(executor, str) and executor == "processes":
        _run_processes(study, pending, on_row, workers, mp_context)
        return
    if isinstance(executor, str) or _looks_like_dask(executor):
        _run_dask(study, pending, on_row, executor, connect_timeout)
        return
    raise StudyError(f"executor must be 'serial', 'processes', a Dask scheduler address (e.g. "
                     f"'tcp://127.0.0.1:8786'), a distributed.Client or a Dask cluster; got {executor!r}")


def _looks_like_dask(obj) -> bool:
    return hasattr(obj, "scheduler_address") or type(obj).__module__.startswith("distributed")


# -- local processes ------------------------------------------------------------------------------

def _run_processes(study, pending, on_row, workers, mp_context):
    from concurrent.futures import FIRST_COMPLETED, CancelledError, ProcessPoolExecutor, wait
    from concurrent.futures.process import BrokenProcessPool
    import multiprocessing

    workers = int(workers or os.cpu_count() or 1)
    if workers < 1:
        raise StudyError(f"workers must be at least 1, got {workers}")
    task = study._task(limit_threads=True)
    try:
        pickle.dumps(task)
    except Exception as exc:
        raise StudyError(f"executor='processes' sends the build function and the metrics to worker processes "
                         f"by pickle, which failed ({type(exc).__name__}: {exc}); define them at module level "
                         "(no lambdas or nested functions), or use executor='serial'") from None
    ctx = multiprocessing.get_context(mp_context) if mp_context else None
    window = 2 * workers
    queue = deque(pending)
    suspects: deque = deque()          # cases in flight when a worker died: re-run alone
    inflight: dict = {}                # future -> (index, params, alone)

    def new_pool():
        return ProcessPoolExecutor(max_workers=workers, mp_context=ctx)

    pool = new_pool()
    try:
        while queue or suspects or inflight:
            if suspects:
                if not inflight:
                    i, p = suspects.popleft()
                    inflight[pool.submit(run_case, task, i, p)] = (i, p, True)
            else:
                while queue and len(inflight) < window:
                    i, p = queue.popleft()
                    inflight[pool.submit(run_case, task, i, p)] = (i, p, False)
            done, _ = wait(list(inflight), return_when=FIRST_COMPLETED)
            broken = []
            if any(_is_broken(f, BrokenProcessPool) for f in done):
                done, _ = wait(list(inflight))        # a dead pool fails every future quickly
            for fut in done:
                i, p, alone = inflight.pop(fut)
                try:
                    row = fut.result()
                except BrokenProcessPool:
                    broken.append((i, p, alone))
                    continue
                except CancelledError:
                    queue.appendleft((i, p))
                    continue
                except Exception as exc:              # e.g. a row that cannot be pickled back
                    row = failure_row(i, p, task.metric_columns, exc, "worker")
                on_row(row)
            if broken:
                pool.shutdown(wait=False, cancel_futures=True)
                pool = new_pool()
                for i, p, alone in broken:
                    if alone:
                        on_row(failure_row(i, p, task.metric_columns, WorkerCrashed(
                            "the worker process died while running this case (a crash in native code, "
                            "os._exit, or the out-of-memory killer); it was re-run alone to single it out"),
                            "worker"))
                    else:
                        suspects.append((i, p))
    finally:
        for fut in inflight:
            fut.cancel()
        pool.shutdown(wait=not inflight, cancel_futures=True)


def _is_broken(fut, broken_type) -> bool:
    return not fut.cancelled() and isinstance(fut.exception(), broken_type)


# -- Dask ----------------------------------------------------------------------------------------

def _probe(address: str, timeout: float) -> None:
    """Check that a Dask scheduler answers at ``address`` before a Client is made (a Client
    that fails half-way lingers and complains at exit): a TCP connect (a refused port fails
    at once), then Dask's own "identity" handshake within ``timeout`` seconds."""
    import socket
    from distributed.comm import parse_address
    from distributed.comm.addressing import parse_host_port
    hint = (f"start one with `dask scheduler` and workers with `dask worker {address}`, or check the address")
    try:
        scheme, loc = parse_address(address)
        host, port = parse_host_port(loc) if scheme == "tcp" else (None, None)
    except Exception as exc:
        raise StudyError(f"{address!r} is not a Dask scheduler address ({exc}); expected e.g. "
                         "'tcp://127.0.0.1:8786'") from None
    t0 = _time.monotonic()
    if scheme == "tcp":
        last = None
        while True:
            left = timeout - (_time.monotonic() - t0)
            if left <= 0:
                raise StudyError(f"no Dask scheduler answers at {address!r} ({last}; connect_timeout "
                                 f"{timeout:g} s); {hint}")
            try:
                with socket.create_connection((host, port), timeout=max(0.05, left)):
                    break
            except ConnectionRefusedError as exc:     # nothing listens there: no point in waiting
                raise StudyError(f"no Dask scheduler answers at {address!r} ({exc}); {hint}") from None
            except OSError as exc:                    # unreachable or slow: retry until the timeout
                last = exc
                _time.sleep(min(0.2, max(0.0, left)))
    left = max(0.5, timeout - (_time.monotonic() - t0))
    from concurrent.futures import ThreadPoolExecutor
    from concurrent.futures import TimeoutError as FutureTimeout
    pool = ThreadPoolExecutor(1)      # a thread of its own: the caller may run an event loop (Jupyter)
    try:
        reply = pool.submit(_identity, address, left).result(timeout=left + 1.0)
    except (FutureTimeout, TimeoutError, OSError) as exc:
        raise StudyError(f"no Dask scheduler answers at {address!r} within {timeout:g} s "
                         f"({type(exc).__name__}: {exc}); {hint}") from None
    except Exception as exc:
        raise StudyError(f"something answers at {address!r}, but not a Dask scheduler "
                         f"({type(exc).__name__}: {exc}); {hint}") from None
    finally:
        pool.shutdown(wait=False)
    if not isinstance(reply, dict) or reply.get("type") != "Scheduler":
        raise StudyError(f"{address!r} answers, but it is not a Dask scheduler (identity {reply!r:.200}); {hint}")


def _identity(address: str, timeout: float):
    import asyncio
    from distributed.comm import connect

    async def ask():
        comm = await connect(address, timeout=timeout)
        try:
            await comm.write({"op": "identity", "reply": True})
            return await comm.read()
        finally:
            comm.abort()

    async def bounded():
        return await asyncio.wait_for(ask(), timeout)

    return asyncio.run(bounded())


def _dask_client(executor, timeout: float):
    from .._optional import require
    distributed = require("distributed", "studies", "a Dask executor of a Study")
    if isinstance(executor, distributed.Client):
        return executor, False
    address = getattr(executor, "scheduler_address", executor)
    if not isinstance(address, str):
        raise StudyError(f"cannot use {executor!r} as a Dask executor: give a scheduler address, a "
                         "distributed.Client or a cluster object")
    _probe(address, timeout)
    try:
        client = distributed.Client(address, timeout=timeout, set_as_default=False)
    except Exception as exc:
        raise StudyError(f"could not connect to a Dask scheduler at {address!r} within {timeout:g} s "
                         f"({type(exc).__name__}: {exc})") from None
    return client, True


def _run_dask(study, pending, on_row, executor, timeout):
    client, own = _dask_client(executor, timeout)      # refuses a missing 'distributed' by its extra
    import distributed
    inflight: dict = {}
    try:
        try:
            client.wait_for_workers(1, timeout=timeout)
        except Exception:
            raise StudyError(f"the Dask scheduler at {client.scheduler.address!r} has no workers (waited "
                             f"{timeout:g} s); start some with `dask worker {client.scheduler.address}`") from None
        task = study._task(limit_threads=True)
        try:
            import cloudpickle
            cloudpickle.dumps(task)
        except Exception as exc:
            raise StudyError(f"the build function or a metric cannot be serialized for Dask "
                             f"({type(exc).__name__}: {exc})") from None
        [task_f] = client.scatter([task], broadcast=True, hash=False)
        nthreads = sum(client.nthreads().values()) or 1
        window = max(4, 2 * nthreads)
        queue = deque(pending)
        finished = distributed.as_completed(loop=client.loop)
        while queue or inflight:
            while queue and len(inflight) < window:
                i, p = queue.popleft()
                fut = client.submit(run_case, task_f, i, p, pure=False, key=f"flexmb-case-{i}-{os.urandom(4).hex()}")
                inflight[fut] = (i, p)
                finished.add(fut)
            fut = next(finished)
            i, p = inflight.pop(fut)
            try:
                row = fut.result()
            except Exception as exc:                      # KilledWorker, lost data, cancelled ...
                row = failure_row(i, p, task.metric_columns, exc, "dask")
            on_row(row)
    finally:
        if inflight:
            try:
                client.cancel(list(inflight))
            except Exception:
                pass
        if own:
            client.close()


# -- progress -------------------------------------------------------------------------------------

class Progress:
    """A progress bar on stderr: tqdm when installed, else a plain text bar (redrawn in a
    terminal, a line every 10 % otherwise)."""

    def __init__(self, total: int, done: int, name: str, enabled: bool = True):
        self.total, self.done, self.failed = total, done, 0
        self.enabled = bool(enabled) and total > 0
        self.t0 = _time.perf_counter()
        self.start_done = done
        self._tqdm = None
        self._last_decile = -1
        self.name = name
        if not self.enabled:
            return
        try:
            from tqdm.auto import tqdm
            self._tqdm = tqdm(total=total, initial=done, desc=name, unit="case")
        except ImportError:
            self._tty = sys.stderr.isatty()
            self._draw()

    def update(self, row: dict) -> None:
        self.done += 1
        self.failed += row.get("status") != "ok"
        if not self.enabled:
            return
        if self._tqdm is not None:
            self._tqdm.update(1)
            if self.failed:
                self._tqdm.set_postfix(failed=self.failed)
        else:
            self._draw()

    def _draw(self) -> None:
        frac = self.done / self.total
        if not self._tty:
            decile = int(10 * frac)
            if decile == self._last_decile and self.done < self.total:
                return
            self._last_decile = decile
        elapsed = _time.perf_counter() - self.t0
        ran = self.done - self.start_done
        eta = elapsed / ran * (self.total - self.done) if ran else math.nan
        width = 30
        fill = int(round(width * frac))
        text = (f"{self.name}: [{'#' * fill}{'.' * (width - fill)}] {self.done}/{self.total}"
                f"{f' ({self.failed} failed)' if self.failed else ''} {elapsed:.0f} s"
                f"{'' if math.isnan(eta) else f', {eta:.0f} s left'}")
        if self._tty:
            sys.stderr.write("\r" + text)
        else:
            sys.stderr.write(text + "\n")
        sys.stderr.flush()

    def close(self) -> None:
        if not self.enabled:
            return
        if self._tqdm is not None:
            self._tqdm.close()
        elif self._tty:
            sys.stderr.write("\n")
            sys.stderr.flush()
