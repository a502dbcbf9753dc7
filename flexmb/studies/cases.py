"""One case of a study, as a worker runs it: build the model, simulate it, evaluate the metrics, and turn every
failure into a table row (:func:`run_case`, module-level so that process pools and Dask can call it); and the
study's error, :class:`StudyError`. Both :mod:`flexmb.studies.study` and :mod:`flexmb.studies.executors` use them.
"""
from __future__ import annotations

import functools
import inspect
import math
import time as _time

from ..errors import FlexmbError, ModelError
from .parameters import param_hash

__all__ = ["StudyError", "Task", "run_case", "failure_row", "unpack", "simulate_keys"]


class StudyError(FlexmbError):
    """A study cannot run: unusable executor or cluster address, files of another study, ..."""


# -- one case (runs in the worker) --------------------------------------------------------------

class Task:
    """What a worker needs to run any case: picklable when build and metrics are."""

    def __init__(self, build, run: dict, metrics: list, partial_metrics: bool, limit_threads: bool = False):
        self.build = build
        self.run = run
        self.metrics = metrics                  # [(column names tuple, callable), ...]
        self.partial_metrics = partial_metrics
        self.limit_threads = limit_threads

    @property
    def metric_columns(self) -> tuple[str, ...]:
        return tuple(c for names, _ in self.metrics for c in names)


_THREADS_LIMITED = []


def _limit_threads() -> None:
    """One BLAS thread per worker process: the workers are the parallelism (threadpoolctl)."""
    if not _THREADS_LIMITED:
        try:
            from threadpoolctl import threadpool_limits
            _THREADS_LIMITED.append(threadpool_limits(limits=1))
        except Exception:   # pragma: no cover - threadpoolctl is a dependency; never fail a case on it
            _THREADS_LIMITED.append(None)


def _message(exc: BaseException) -> str:
    text = str(exc).strip()
    return text if text else repr(exc)


def failure_row(index: int, params: dict, metric_columns, exc: BaseException, where: str,
                wall_s: float = math.nan) -> dict:
    """The table row of a case that failed outside the case function (worker died, ...)."""
    row = {"case": index, "param_hash": param_hash(params), **params}
    row.update({c: math.nan for c in metric_columns})
    row.update(status="failed", error_type=type(exc).__name__, error=f"{where}: {_message(exc)}",
               wall_s=wall_s, t_reached=math.nan)
    return row


def unpack(built, run: dict, index: int):
    from ..system import System
    extra = {}
    if isinstance(built, tuple) and len(built) == 2 and isinstance(built[1], dict):
        built, extra = built
    if not isinstance(built, System):
        raise ModelError(f"build returned {type(built).__name__}; it must return a flexmb System or "
                         "(System, run settings dict)")
    settings = {**run, **extra}
    if "t_end" not in settings:
        raise ModelError("no t_end for the simulation: give Study(..., run=dict(t_end=..., h=...)) or "
                         "return (system, dict(t_end=..., h=...)) from build")
    bad = sorted(set(settings) - simulate_keys())
    if bad:
        raise ModelError(f"run settings {bad} are not keywords of flexmb.simulate")
    return built, settings


def run_case(task: Task, index: int, params: dict) -> dict:
    """Build, simulate and measure one case; every exception becomes a 'failed' row.

    Runs in the worker (module-level so that process pools and Dask can call it).
    KeyboardInterrupt and SystemExit pass through.
    """
    from ..solvers.simulate import simulate
    if task.limit_threads:
        _limit_threads()
    t0 = _time.perf_counter()
    row = {"case": index, "param_hash": param_hash(params), **params}
    row.update({c: math.nan for c in task.metric_columns})
    system = result = None
    error, where = None, ""
    try:
        where = "build"
        system, settings = unpack(task.build(dict(params)), task.run, index)
        where = "simulate"
        try:
            result = simulate(system, **{"progress": False, **settings})   # the study's bar counts cases
        except Exception as exc:
            result = getattr(exc, "result", None)      # partial results of solver failures
            raise
    except Exception as exc:
        error = exc
    if result is not None and (error is None or task.partial_metrics):
        for names, fn in task.metrics:
            try:
                value = fn(result, system, dict(params))
                values = [value] if len(names) == 1 else list(value)
                if len(values) != len(names):
                    raise ModelError(f"returned {len(values)} values for the {len(names)} columns {list(names)}")
                for c, v in zip(names, values):
                    row[c] = float(v)
            except Exception as exc:
                for c in names:
                    row[c] = math.nan
                if error is None:
                    error, where = exc, f"metric {names[0] if len(names) == 1 else list(names)}"
    row["status"] = "ok" if error is None else "failed"
    row["error_type"] = "" if error is None else type(error).__name__
    row["error"] = "" if error is None else f"{where}: {_message(error)}"
    row["wall_s"] = _time.perf_counter() - t0
    row["t_reached"] = float(result.t[-1]) if result is not None and len(result.t) else math.nan
    return row


@functools.cache
def simulate_keys() -> frozenset:
    """The keywords of flexmb.simulate (read on first use: the solvers import scipy)."""
    from ..solvers.simulate import simulate
    return frozenset(p for p in inspect.signature(simulate).parameters if p != "system")
