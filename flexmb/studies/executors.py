"""Executors of a study: this process, a local process pool, or a Dask cluster.

All three run the same module-level :func:`~flexmb.studies.cases.run_case` on the
same task and hand each finished row to the study (in completion order). A pool
keeps only a small window of cases in flight, so an interrupt loses little and a
crash is easy to place: when a worker process dies (a crash in native code,
``os._exit``, the out-of-memory killer), the cases in flight are re-run one at a
time in a fresh pool, and only the one that kills its worker again is recorded as
failed ("WorkerCrashed"). A Dask worker sends each row back as plain JSON, which the
client decodes without unpickling and checks against the study before recording it
(docs/guide-studies.md, "Security").
"""
from __future__ import annotations

import json
import math
import os
import pickle
import sys
import time as _time
import warnings
from collections import deque

from ..errors import InsecureConnectionWarning, UntrustedResultError
from .parameters import param_hash
from .cases import StudyError, failure_row, run_case
from .table import LEAD_COLUMNS, STATUS_COLUMNS

__all__ = ["execute", "Progress", "check_scheduler_address"]


class WorkerCrashed(Exception):
    """The worker process running a case died."""


def execute(study, pending, on_row, executor="serial", workers=None, connect_timeout=5.0, mp_context=None,
            security=None):
    if security is not None and isinstance(executor, str) and executor in ("serial", "processes"):
        raise StudyError(f"security= holds the TLS certificates of a Dask cluster; executor={executor!r} "
                         "does not connect to one")
    if isinstance(executor, str) and executor == "serial":
        task = study._task()
        for i, p in pending:
            on_row(run_case(task, i, p))
        return
    if isinstance(executor, str) and executor == "processes":
        _run_processes(study, pending, on_row, workers, mp_context)
        return
    if isinstance(executor, str) or _looks_like_dask(executor):
        _run_dask(study, pending, on_row, executor, connect_timeout, security)
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
#
# What a Dask peer can send into this process, and what flexmb accepts (docs/guide-studies.md, "Security"):
# each case's row travels as UTF-8 JSON bytes (``_case_on_worker``); the client that flexmb makes accepts
# task results only in Dask's "msgpack" serialization family (plain data: no pickle, and no class named in
# a header as the "dask" family has), and ``_accepted_row`` checks every row against the study's columns
# and the case it was asked for. Dask's own messages (task errors, objects a peer marks as pickled) are
# still unpickled by Dask: the scheduler and everything that can connect to it remain trusted.

#: Serialization families the client accepts for task results: "msgpack" decodes plain data only.
RESULT_DESERIALIZERS = ("msgpack",)
#: Largest row a worker may send (bytes of JSON): rows are a few hundred bytes plus an error message.
MAX_ROW_BYTES = 1 << 20
#: Dask transports that neither encrypt nor authenticate.
UNENCRYPTED_SCHEMES = ("tcp", "ws", "ucx")
#: Dask transports over TLS (they need a ``distributed.security.Security``).
TLS_SCHEMES = ("tls", "wss")


def _case_on_worker(task, index: int, params: dict) -> bytes:
    """Run one case on a Dask worker and return its row as UTF-8 JSON bytes (NaN and infinity as the
    JSON extensions ``NaN``/``Infinity`` that Python's json module reads): plain data that the client
    decodes without unpickling and checks with :func:`_accepted_row`."""
    return json.dumps(run_case(task, index, params), allow_nan=True).encode("utf-8")


def _accepted_row(payload, index: int, params: dict, param_names, metric_columns) -> dict:
    """The table row of case ``index`` from a worker's ``payload``, or :class:`UntrustedResultError`.

    The payload must be JSON bytes of at most :data:`MAX_ROW_BYTES` holding exactly the study's columns;
    its case index, parameter values and parameter hash must be those of the case the client asked for
    (so a peer cannot file a row under another case); metrics, ``wall_s`` and ``t_reached`` numbers;
    ``status`` "ok" (with empty error fields) or "failed"; ``error_type`` and ``error`` strings. The row
    returned is rebuilt from the client's own case index and parameters and the checked values.
    """
    def refuse(what: str):
        raise UntrustedResultError(f"the Dask result of case {index} {params} was refused: {what}. flexmb "
                                   "workers send the row as JSON bytes; a worker of another flexmb version "
                                   "or a peer that is not a flexmb worker sent this (check who can reach "
                                   "the scheduler)")

    if not isinstance(payload, bytes):
        refuse(f"it is a {type(payload).__name__}, not JSON bytes")
    if len(payload) > MAX_ROW_BYTES:
        refuse(f"it is {len(payload)} bytes long (at most {MAX_ROW_BYTES} accepted)")
    try:
        raw = json.loads(payload.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        refuse(f"it is not JSON ({exc}; starts {payload[:40]!r})")
    if not isinstance(raw, dict):
        refuse(f"it is a JSON {type(raw).__name__}, not an object")
    expected = (*LEAD_COLUMNS, *param_names, *metric_columns, *STATUS_COLUMNS)
    if set(raw) != set(expected):
        refuse(f"its columns differ from the study's: missing {sorted(set(expected) - set(raw))}, "
               f"unexpected {_short(sorted(set(raw) - set(expected)))}")
    if type(raw["case"]) is not int or raw["case"] != index:
        refuse(f"it is the row of case {_short(raw['case'])}")
    sent_params = {name: raw[name] for name in param_names}
    if raw["param_hash"] != param_hash(params) or param_hash(sent_params) != param_hash(params):
        refuse(f"it carries the parameters {_short(sent_params)} (hash {_short(raw['param_hash'])})")
    numbers = {c: _as_float(raw[c]) for c in (*metric_columns, "wall_s", "t_reached")}
    bad = {c: raw[c] for c, v in numbers.items() if v is None}
    if bad:
        refuse(f"the values {_short(bad)} are not numbers")
    texts = {c: raw[c] for c in ("status", "error_type", "error")}
    if not all(isinstance(v, str) for v in texts.values()) or texts["status"] not in ("ok", "failed"):
        refuse(f"its status {_short(texts)} is not 'ok' or 'failed' with string error fields")
    if texts["status"] == "ok" and (texts["error_type"] or texts["error"]):
        refuse(f"it is 'ok' but carries an error {_short(texts)}")
    row = {"case": index, "param_hash": param_hash(params), **params}
    row.update({c: numbers[c] for c in metric_columns})
    row.update(texts)
    row.update(wall_s=numbers["wall_s"], t_reached=numbers["t_reached"])
    return row


def _as_float(value) -> float | None:
    """``value`` as a float when JSON gave a number (not a bool) within the float range, else None."""
    if type(value) not in (float, int):
        return None
    try:
        return float(value)
    except OverflowError:
        return None


def _short(value, limit: int = 200) -> str:
    """The repr of a value a peer sent, cut to ``limit`` characters for an error message."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def _split_address(address: str) -> tuple[str, str | None, int | None]:
    """``(scheme, host, port)`` of a Dask address (host and port None for in-process addresses), or
    :class:`StudyError` naming the address."""
    from distributed.comm import parse_address
    from distributed.comm.addressing import parse_host_port
    try:
        scheme, loc = parse_address(address)
        if scheme == "inproc":
            return scheme, None, None
        host, port = parse_host_port(loc)
    except Exception as exc:
        raise StudyError(f"{address!r} is not a Dask scheduler address ({exc}); expected e.g. "
                         "'tcp://127.0.0.1:8786' or 'tls://10.0.0.5:8786'") from None
    return scheme, host.strip("[]"), port


def check_scheduler_address(address: str) -> None:
    """Warn (:class:`~flexmb.errors.InsecureConnectionWarning`) when ``address`` is an unencrypted Dask
    transport (``tcp://``, ``ws://``, ``ucx://``) to a host that is not this machine's loopback interface.

    Loopback: an IP literal in 127.0.0.0/8 or ::1, or the name ``localhost``; any other name is taken
    as remote (it is not resolved: no network look-up is made). Nothing connects. A malformed address
    raises :class:`StudyError`.
    """
    import ipaddress
    scheme, host, _ = _split_address(address)
    if scheme not in UNENCRYPTED_SCHEMES:
        return
    try:
        loopback = ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = host.lower() == "localhost"
    if not loopback:
        warnings.warn(InsecureConnectionWarning(
            f"the Dask scheduler address {address!r} is unencrypted and unauthenticated ({scheme}://) and "
            f"not on this machine: anyone on the network path can read and alter the study's traffic, and "
            f"anyone who can reach the scheduler can run code on its workers and in this process. Use a "
            f"tls:// address with security=distributed.security.Security(...) (docs/guide-studies.md, "
            f"'Security'), or a scheduler reachable only from trusted machines"), stacklevel=2)


def _probe(address: str, timeout: float, connection_args: dict) -> None:
    """Check that a Dask scheduler answers at ``address`` before a Client is made (a Client
    that fails half-way lingers and complains at exit): a TCP connect (a refused port fails
    at once), then Dask's own "identity" handshake within ``timeout`` seconds, over TLS with
    ``connection_args`` (``Security.get_connection_args("client")``) for a tls:// address."""
    import socket
    hint = (f"start one with `dask scheduler` and workers with `dask worker {address}`, or check the address")
    scheme, host, port = _split_address(address)
    t0 = _time.monotonic()
    if host is not None:
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
        reply = pool.submit(_identity, address, left, connection_args).result(timeout=left + 1.0)
    except (FutureTimeout, TimeoutError, OSError) as exc:
        raise StudyError(f"no Dask scheduler answers at {address!r} within {timeout:g} s "
                         f"({type(exc).__name__}: {exc}); {hint}"
                         f"{'; for tls:// check the certificates of security=' if scheme in TLS_SCHEMES else ''}"
                         ) from None
    except Exception as exc:
        raise StudyError(f"something answers at {address!r}, but not a Dask scheduler "
                         f"({type(exc).__name__}: {exc}); {hint}") from None
    finally:
        pool.shutdown(wait=False)
    if not isinstance(reply, dict) or reply.get("type") != "Scheduler":
        raise StudyError(f"{address!r} answers, but it is not a Dask scheduler (identity {reply!r:.200}); {hint}")


def _identity(address: str, timeout: float, connection_args: dict):
    import asyncio
    from distributed.comm import connect

    async def ask():
        comm = await connect(address, timeout=timeout, **connection_args)
        try:
            await comm.write({"op": "identity", "reply": True})
            return await comm.read()
        finally:
            comm.abort()

    async def bounded():
        return await asyncio.wait_for(ask(), timeout)

    return asyncio.run(bounded())


def _dask_client(executor, timeout: float, security=None):
    """A new ``distributed.Client`` of flexmb's own (closed after the study) that accepts task results
    only as :data:`RESULT_DESERIALIZERS`; ``executor`` is a scheduler address, a Client or a cluster
    object (the latter two lend their scheduler address and, unless ``security`` is given, their
    ``security``)."""
    from .._optional import require
    distributed = require("distributed", "studies", "a Dask executor of a Study")
    if isinstance(executor, distributed.Client):
        address = executor.scheduler.address
    else:
        address = getattr(executor, "scheduler_address", executor)
    if not isinstance(address, str):
        raise StudyError(f"cannot use {executor!r} as a Dask executor: give a scheduler address, a "
                         "distributed.Client or a cluster object")
    if security is None and not isinstance(executor, str):
        security = getattr(executor, "security", None)
    if security is not None and not isinstance(security, distributed.Security):
        raise StudyError(f"security must be a distributed.security.Security (the certificates of the "
                         f"cluster at {address!r}), got {type(security).__name__} {security!r:.100}")
    scheme = _split_address(address)[0]
    if scheme in TLS_SCHEMES and security is None:
        raise StudyError(f"the Dask scheduler address {address!r} is TLS: pass security=distributed.security."
                         "Security(tls_ca_file=..., tls_client_cert=..., tls_client_key=...) with the "
                         "cluster's certificates")
    check_scheduler_address(address)
    connection_args = security.get_connection_args("client") if security is not None else {}
    _probe(address, timeout, connection_args)
    try:
        client = distributed.Client(address, timeout=timeout, set_as_default=False, security=security,
                                    deserializers=RESULT_DESERIALIZERS)
    except Exception as exc:
        raise StudyError(f"could not connect to a Dask scheduler at {address!r} within {timeout:g} s "
                         f"({type(exc).__name__}: {exc})") from None
    return client


def _run_dask(study, pending, on_row, executor, timeout, security=None):
    client = _dask_client(executor, timeout, security)      # refuses a missing 'distributed' by its extra
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
                fut = client.submit(_case_on_worker, task_f, i, p, pure=False,
                                    key=f"flexmb-case-{i}-{os.urandom(4).hex()}")
                inflight[fut] = (i, p)
                finished.add(fut)
            fut = next(finished)
            i, p = inflight.pop(fut)
            on_row(_row_of(fut, i, p, study))
    finally:
        if inflight:
            try:
                client.cancel(list(inflight))
            except Exception:
                pass
        client.close()


def _row_of(fut, index: int, params: dict, study) -> dict:
    """The checked row of a case future that as_completed gave back: a failure row when Dask lost,
    cancelled or killed the case, :class:`UntrustedResultError` when the result is not a flexmb row."""
    if fut.status != "finished":
        try:
            fut.result()
        except Exception as exc:      # KilledWorker, cancelled, an error outside run_case ...
            return failure_row(index, params, study.metric_columns, exc, "dask")
    try:
        payload = fut.result()
    except TypeError as exc:          # Dask refused its encoding: not one of RESULT_DESERIALIZERS
        raise UntrustedResultError(f"the Dask result of case {index} {params} was refused: {exc}. flexmb "
                                   f"workers send plain JSON bytes; a peer that is not a flexmb worker sent "
                                   f"this (check who can reach the scheduler)") from None
    except Exception as exc:          # the result was lost between finishing and fetching it
        return failure_row(index, params, study.metric_columns, exc, "dask")
    return _accepted_row(payload, index, params, study.parameters.names, study.metric_columns)


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
