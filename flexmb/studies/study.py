"""``Study``: run one model over a set of parameters and tabulate metrics.

A study is three things: ``build(params) -> System`` (or ``(System, run settings)``),
a parameter set (:class:`~flexmb.studies.parameters.Grid`, ``Samples`` or a list of
dicts) and named metrics ``metric(result, system, params) -> float``. ``Study.run``
evaluates every case with one of three executors -- in this process, in local worker
processes, or on a Dask cluster -- with the same study code, records each finished
case at once in ``results.csv`` (and the whole table in ``results.npz``), keeps failed
cases with their error, and skips recorded cases when run again in the same directory.
"""
from __future__ import annotations

import json
import math
from datetime import datetime, timezone
from pathlib import Path

from .._version import installed_version
from ..errors import ModelError
from .cases import StudyError, Task, run_case, simulate_keys, unpack
from .parameters import ParameterSet, as_parameter_set, check_name, param_hash
from .table import LEAD_COLUMNS, STATUS_COLUMNS, StudyFilesMismatch, StudyResult, TableFiles

__all__ = ["Study"]


# -- the study ---------------------------------------------------------------------------------

class Study:
    """A parameter study: ``Study(build, parameters, metrics, run=None, name=None)``.

    ``build(params: dict)`` returns a :class:`flexmb.System`, or ``(system, settings)``
    where ``settings`` are keywords of :func:`flexmb.simulate` for this case (they
    override ``run``). ``parameters``: a :class:`Grid`, :class:`Samples`, a dict (a grid)
    or a list of dicts. ``metrics``: dict name -> ``f(result, system, params) -> float``;
    a tuple of names maps to a function returning that many numbers, e.g.
    ``{("hic15", "hic15_t1", "hic15_t2"): HIC("head")}``. ``run``: keywords of
    ``flexmb.simulate`` for every case (``t_end``, ``h``, ``method``, ``adaptive``, ...).
    ``partial_metrics=True`` evaluates the metrics on the partial result that a
    failed solve carries (the case stays 'failed'); by default a failed case has NaN
    metrics.

    For ``executor="processes"`` the build function and the metrics must be picklable:
    functions defined at module level of an importable module (or of the script run
    as ``__main__``, guarded by ``if __name__ == "__main__":``), or instances of
    module-level classes -- not lambdas or nested functions. Dask serializes with
    cloudpickle, which also takes lambdas, but the workers need flexmb and the
    modules the functions live in.
    """

    def __init__(self, build, parameters, metrics: dict, run: dict | None = None, name: str | None = None,
                 partial_metrics: bool = False):
        if not callable(build):
            raise ModelError(f"Study: build must be a callable params -> System, got {build!r}")
        self.build = build
        self.parameters: ParameterSet = as_parameter_set(parameters)
        if not isinstance(metrics, dict):
            raise ModelError(f"Study: metrics must be a dict name -> callable(result, system, params), got "
                             f"{type(metrics).__name__} {metrics!r}")
        self.metrics: list[tuple[tuple[str, ...], object]] = []
        for key, fn in metrics.items():
            names = key if isinstance(key, tuple) else (key,)
            if not names:
                raise ModelError("Study: an empty tuple is not a metric name")
            for n in names:
                check_name(n, "metric")
            if not callable(fn):
                raise ModelError(f"Study: metric {key!r} is not callable: {fn!r}")
            self.metrics.append((tuple(names), fn))
        self.run_settings = dict(run or {})
        bad = sorted(set(self.run_settings) - simulate_keys())
        if bad:
            raise ModelError(f"Study: run settings {bad} are not keywords of flexmb.simulate "
                             f"(known: {sorted(simulate_keys())})")
        self.partial_metrics = bool(partial_metrics)
        self.name = name or getattr(build, "__name__", "study")
        cols = list(LEAD_COLUMNS) + list(self.parameters.names) + list(self.metric_columns) + list(STATUS_COLUMNS)
        dup = sorted({c for c in cols if cols.count(c) > 1})
        if dup:
            raise ModelError(f"Study: column names {dup} are used twice (parameters, metrics and the "
                             f"reserved columns {list(LEAD_COLUMNS + STATUS_COLUMNS)} share one table)")
        self.columns = tuple(cols)
        self._cases = None

    # -- cases ------------------------------------------------------------------
    @property
    def metric_columns(self) -> tuple[str, ...]:
        return tuple(c for names, _ in self.metrics for c in names)

    @property
    def cases(self) -> list[dict]:
        """The parameter dict of every case, in case order."""
        if self._cases is None:
            self._cases = self.parameters.cases()
        return [dict(c) for c in self._cases]

    def __len__(self) -> int:
        return len(self.parameters)

    def __repr__(self) -> str:
        return (f"<Study {self.name!r}: {len(self)} cases of {list(self.parameters.names)}, "
                f"metrics {list(self.metric_columns)}>")

    def _task(self, limit_threads: bool = False) -> Task:
        return Task(self.build, self.run_settings, self.metrics, self.partial_metrics, limit_threads)

    def run_case(self, index: int) -> dict:
        """Run one case here and return its table row (nothing is written)."""
        return run_case(self._task(), index, self.cases[index])

    def simulate_case(self, index: int):
        """Build and simulate one case here for a closer look: returns ``(result, system)``.
        Errors are raised, not recorded."""
        params = self.cases[index]
        from ..solvers.simulate import simulate
        system, settings = unpack(self.build(dict(params)), self.run_settings, index)
        return simulate(system, **settings), system

    # -- running ----------------------------------------------------------------
    def run(self, out_dir=None, executor="serial", workers: int | None = None, progress: bool = True,
            resume: bool = True, retry_failed: bool = False, callback=None, npz_every: int = 10,
            connect_timeout: float = 5.0, mp_context: str | None = None, security=None) -> StudyResult:
        """Run every case not yet recorded in ``out_dir`` and return the whole table.

        ``executor``: "serial" (this process), "processes" (a local process pool of
        ``workers`` processes, default the CPU count; ``mp_context`` "fork", "spawn" or
        "forkserver" overrides the platform default), a Dask scheduler address such as
        "tls://10.0.0.5:8786", a ``distributed.Client`` or a Dask cluster object
        (``LocalCluster(...)``). ``security``: a ``distributed.security.Security`` with the
        cluster's TLS certificates, needed for a ``tls://`` address (a Client or cluster
        lends its own). ``connect_timeout`` (s) bounds the wait for a Dask scheduler (and
        for its first worker); a scheduler that does not answer raises
        :class:`StudyError` naming the address. A ``tcp://`` address that is not loopback
        warns (:class:`~flexmb.errors.InsecureConnectionWarning`); a worker's row that is
        not a plain flexmb row of the case asked for stops the study with
        :class:`~flexmb.errors.UntrustedResultError` (docs/guide-studies.md, "Security").

        ``out_dir`` (optional) receives ``results.csv`` (one line per finished case,
        flushed at once), ``results.npz`` (the table, rewritten every ``npz_every`` cases
        and at the end) and ``study.json``. Cases already recorded there (same case
        index and parameter hash) are skipped; ``retry_failed=True`` runs the failed
        ones again. ``resume=False`` refuses a directory that holds results.

        ``callback(row)`` is called in this process after each case is recorded; an
        exception from it (KeyboardInterrupt included) stops the study after saving
        the table, and is re-raised. ``progress`` shows a progress bar on stderr
        (tqdm when it is installed).
        """
        from .executors import Progress, execute
        cases = self.cases
        files = None
        done: dict[int, dict] = {}
        if out_dir is not None:
            files = TableFiles(out_dir, self.columns)
            try:
                existing = files.existing()
            except StudyFilesMismatch as exc:
                raise StudyError(f"{files.csv_path} holds the table of another study (columns "
                                 f"{exc.header}; this study has {list(self.columns)}); use another out_dir"
                                 ) from None
            if existing and not resume:
                n_rec = len({r["case"] for r in existing})
                raise StudyError(f"{files.csv_path} already holds {n_rec} recorded cases; pass "
                                 "resume=True to continue that study or use another out_dir")
            done = self._recorded(existing, cases, files.csv_path)
            if retry_failed:
                done = {i: r for i, r in done.items() if r["status"] == "ok"}
            self._write_meta(Path(out_dir))
        pending = [(i, p) for i, p in enumerate(cases) if i not in done]
        rows = dict(done)
        bar = Progress(len(cases), len(done), self.name, enabled=progress)
        state = {"since_npz": 0}

        def table() -> StudyResult:
            return StudyResult(rows.values(), self.parameters.names, self.metric_columns, self.name)

        def on_row(row: dict) -> None:
            rows[row["case"]] = row
            if files is not None:
                files.append(row)
                state["since_npz"] += 1
                if state["since_npz"] >= max(1, npz_every):
                    table().to_npz(files.npz_path)
                    state["since_npz"] = 0
            bar.update(row)
            if callback is not None:
                callback(dict(row))

        if files is not None:
            files.open()
        try:
            if pending:
                execute(self, pending, on_row, executor=executor, workers=workers,
                        connect_timeout=connect_timeout, mp_context=mp_context, security=security)
        finally:
            bar.close()
            if files is not None:
                files.close()
                if rows:
                    table().to_npz(files.npz_path)
        return table()

    def _recorded(self, existing: list[dict], cases: list[dict], where) -> dict[int, dict]:
        """Typed rows of the cases already in results.csv; refuses rows of another study."""
        done = {}
        metric_cols = self.metric_columns
        for raw in existing:
            try:
                i = int(raw["case"])
            except ValueError:
                continue
            if not 0 <= i < len(cases) or raw["param_hash"] != param_hash(cases[i]):
                what = (f"case {i} there has parameters {({k: raw[k] for k in self.parameters.names})} "
                        f"but case {i} of this study is {cases[i]}") if 0 <= i < len(cases) else \
                    f"case {i} is recorded there but this study has {len(cases)} cases"
                raise StudyError(f"{where} holds results of a different study: {what}; use another out_dir")
            row = {"case": i, "param_hash": raw["param_hash"], **cases[i]}
            for c in metric_cols:
                row[c] = float(raw[c]) if raw[c] != "" else math.nan
            row.update(status=raw["status"], error_type=raw["error_type"], error=raw["error"],
                       wall_s=float(raw["wall_s"] or "nan"), t_reached=float(raw["t_reached"] or "nan"))
            done[i] = row                     # a later line for a case supersedes an earlier one
        return done

    def _write_meta(self, directory: Path) -> None:
        meta = {"name": self.name, "params": list(self.parameters.names), "metrics": list(self.metric_columns),
                "n_cases": len(self), "parameters": self.parameters.describe(),
                "run": {k: (v if isinstance(v, (int, float, str, bool, type(None))) else repr(v))
                        for k, v in self.run_settings.items()},
                "build": f"{getattr(self.build, '__module__', '?')}.{getattr(self.build, '__qualname__', repr(self.build))}",
                "flexmb_version": installed_version(), "written": datetime.now(timezone.utc).isoformat(timespec="seconds")}
        p = directory / "study.json"
        tmp = p.with_name("study.json.tmp")
        tmp.write_text(json.dumps(meta, indent=1, default=repr))
        tmp.replace(p)
