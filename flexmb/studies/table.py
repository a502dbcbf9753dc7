"""The results table of a study and its files.

``results.csv`` gets one line per finished case, written and flushed as soon as the
case is recorded (in completion order; a later line for the same case supersedes an
earlier one, e.g. a failed case re-run with ``retry_failed=True``). ``results.npz``
holds the whole table, one array per column (rows sorted by case), rewritten every
few cases and at the end. Both are written so that an interrupt or a crash leaves
complete files: the CSV loses at most a partial last line (dropped on reading), the
npz is written to a temporary name and renamed.
"""
from __future__ import annotations

import csv
import io
import math
from pathlib import Path

import numpy as np

from ..errors import ModelError

__all__ = ["StudyResult", "STATUS_COLUMNS", "TableFiles"]

#: columns every table has, around the parameter and metric columns
LEAD_COLUMNS = ("case", "param_hash")
STATUS_COLUMNS = ("status", "error_type", "error", "wall_s", "t_reached")
_FLOAT_COLUMNS = ("wall_s", "t_reached")


def _fmt(value) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(value)            # exact round trip ('nan', 'inf' included)
    if isinstance(value, str):
        return " | ".join(value.splitlines())
    return str(value)


def _parse_number(text: str):
    try:
        return int(text)
    except ValueError:
        return float(text)


def _column_array(values: list) -> np.ndarray:
    """One column as a numpy array: int64, float64 (None -> nan), bool or str."""
    if values and all(isinstance(v, bool) for v in values):
        return np.array(values, dtype=bool)
    if all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return np.array(values, dtype=np.int64)
    if all(v is None or (isinstance(v, (int, float)) and not isinstance(v, bool)) for v in values):
        return np.array([math.nan if v is None else float(v) for v in values], dtype=float)
    return np.array(["" if v is None else str(v) for v in values], dtype=str)


NPZ_KEYS = ("__columns__", "__params__", "__metrics__", "__name__")
"""Arrays of a table's ``.npz`` file besides its columns (StudyResult.to_npz)."""


def _read_npz(path: Path) -> tuple[list[str], list[str], list[str], str | None, dict[str, list]]:
    """Columns, params, metrics, name and column values of a table written by StudyResult.to_npz. Pickled
    arrays (which could run code when read) and declared sizes the file cannot hold are refused
    (UnsafeFileError); a file of another kind or a damaged one is a ModelError naming it."""
    import zipfile

    from ..errors import UnsafeFileError
    from ..io.safe import checked_npz
    try:
        with checked_npz(path, "study table") as z:
            missing = [k for k in NPZ_KEYS if k not in z.files]
            if missing:
                raise ModelError(f"{str(path)!r} is not a flexmb study table: it lacks {missing}")
            columns = [str(c) for c in z["__columns__"]]
            absent = [c for c in columns if c not in z.files]
            if absent or "case" not in columns:
                raise ModelError(f"study table {str(path)!r} lists columns it does not hold: {absent or ['case']}")
            return (columns, [str(c) for c in z["__params__"]], [str(c) for c in z["__metrics__"]],
                    str(z["__name__"]) or None, {c: z[c].tolist() for c in columns})
    except (UnsafeFileError, ModelError):
        raise
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as exc:
        raise ModelError(f"cannot read the study table {str(path)!r}: {type(exc).__name__}: {exc}") from None


class StudyResult:
    """The table of a study: one row per case with its parameters, metrics, ``status``
    ("ok" or "failed"), ``error_type`` and ``error`` (empty when ok), ``wall_s`` (s, build +
    simulate + metrics in the worker) and ``t_reached`` (s, the last simulated time, NaN
    when nothing ran).

    ``res["hic15"]`` is a column as a numpy array (float for numbers); ``res.rows`` the
    rows as dicts sorted by case; ``res.ok`` a boolean mask; ``res.failed()`` the failed
    rows. Write with :meth:`to_csv` / :meth:`to_npz`; :meth:`dataframe` needs pandas.
    """

    def __init__(self, rows, params, metrics, name: str | None = None):
        self.params = tuple(params)
        self.metrics = tuple(metrics)
        self.name = name
        self.columns = LEAD_COLUMNS + self.params + self.metrics + STATUS_COLUMNS
        self.rows = sorted((dict(r) for r in rows), key=lambda r: r["case"])

    # -- access ------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self):
        return iter(self.rows)

    def __getitem__(self, column: str) -> np.ndarray:
        if column not in self.columns:
            raise KeyError(f"no column {column!r}; columns: {list(self.columns)}")
        return _column_array([r.get(column) for r in self.rows])

    @property
    def ok(self) -> np.ndarray:
        return np.array([r["status"] == "ok" for r in self.rows], dtype=bool)

    def failed(self) -> list[dict]:
        return [r for r in self.rows if r["status"] != "ok"]

    def row(self, case: int) -> dict:
        for r in self.rows:
            if r["case"] == case:
                return dict(r)
        raise KeyError(f"case {case} is not in the table")

    def table(self) -> np.ndarray:
        """The table as a numpy structured array (one field per column)."""
        cols = [self[c] for c in self.columns]
        dtype = [(c, a.dtype) for c, a in zip(self.columns, cols)]
        out = np.empty(len(self.rows), dtype=dtype)
        for c, a in zip(self.columns, cols):
            out[c] = a
        return out

    def dataframe(self):
        """The table as a pandas DataFrame (pandas is not a flexmb dependency)."""
        try:
            import pandas as pd
        except ImportError:
            raise ModelError("StudyResult.dataframe() needs pandas, which is not installed; use "
                             "res.table() (numpy structured array), res.rows or res.to_csv()") from None
        return pd.DataFrame({c: self[c] for c in self.columns})

    def summary(self) -> str:
        n_ok = int(self.ok.sum())
        title = f"study {self.name}" if self.name else "study"
        lines = [f"{title}: {len(self)} cases, {n_ok} ok, {len(self) - n_ok} failed"]
        for m in self.metrics:
            v = self[m][self.ok] if len(self) else np.array([])
            v = v[np.isfinite(v)] if v.dtype.kind == "f" else v
            if v.size and v.dtype.kind in "fi":
                lines.append(f"  {m}: min {v.min():.6g}, max {v.max():.6g}, mean {v.mean():.6g}")
        for r in self.failed()[:10]:
            lines.append(f"  case {r['case']} failed: {r['error_type']}: {r['error'][:120]}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        n_ok = int(self.ok.sum())
        title = f"StudyResult {self.name}" if self.name else "StudyResult"
        return (f"<{title}: {len(self)} cases ({n_ok} ok, {len(self) - n_ok} failed); "
                f"params {list(self.params)}, metrics {list(self.metrics)}>")

    # -- files ---------------------------------------------------------------
    def to_csv(self, path) -> None:
        with open(path, "w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(self.columns)
            for r in self.rows:
                w.writerow([_fmt(r.get(c)) for c in self.columns])

    def to_npz(self, path) -> None:
        """Write the table to ``path`` (``.npz``) under a temporary name, then renamed (flexmb/io/safe.py): a failed
        write raises an OutputError and keeps any previous file. Every column is numbers, booleans or text
        (``_column_array``), never Python objects, which would need a pickle to read."""
        from ..io.safe import write_with
        arrays = {c: self[c] for c in self.columns}
        write_with(Path(path), lambda fh: np.savez(
            fh, __columns__=np.array(self.columns, dtype=str), __params__=np.array(self.params, dtype=str),
            __metrics__=np.array(self.metrics, dtype=str), __name__=np.array(self.name or ""), **arrays),
            "study table")

    @classmethod
    def load(cls, path) -> "StudyResult":
        """Read a table: a study directory (its ``results.csv``, the complete record),
        a ``.csv`` or a ``.npz`` file. Column types are inferred from the text for CSV."""
        path = Path(path)
        if path.is_dir():
            path = path / "results.csv"
        if not path.exists():
            raise ModelError(f"no study results at {path}")
        if path.suffix == ".npz":
            columns, params, metrics, name, cols = _read_npz(path)
            n = len(cols["case"])
            rows = [{c: cols[c][i] for c in columns} for i in range(n)]
            return cls(rows, params, metrics, name)
        header, raw = read_csv_rows(path)
        n_lead, n_status = len(LEAD_COLUMNS), len(STATUS_COLUMNS)
        if tuple(header[:n_lead]) != LEAD_COLUMNS or tuple(header[-n_status:]) != STATUS_COLUMNS:
            raise ModelError(f"{path} is not a flexmb study table (header {header})")
        middle = header[n_lead:-n_status]
        rows = {}
        for rec in raw:
            rows[int(rec["case"])] = rec
        rows = list(rows.values())
        # infer numbers per column
        for c in header:
            if c in ("param_hash", "status", "error_type", "error"):
                continue
            vals = [r[c] for r in rows]
            try:
                parsed = [None if v == "" else _parse_number(v) for v in vals]
            except ValueError:
                continue
            for r, p in zip(rows, parsed):
                r[c] = p
        meta = _read_meta(path.parent)
        if meta is not None and list(meta.get("params", [])) + list(meta.get("metrics", [])) == middle:
            params, metrics, name = meta["params"], meta["metrics"], meta.get("name")
        else:
            params, metrics, name = [], middle, None
        return cls(rows, params, metrics, name)


def _read_meta(directory: Path):
    import json
    p = directory / "study.json"
    if not p.exists():
        return None
    try:
        return json.loads(p.read_text())
    except ValueError:
        return None


def read_csv_rows(path: Path) -> tuple[list[str], list[dict]]:
    """Header and complete rows of a results.csv (a partial last line is ignored)."""
    text = Path(path).read_text()
    if not text:
        return [], []
    lines = text.splitlines(keepends=True)
    if not lines[-1].endswith("\n"):
        lines = lines[:-1]                     # written only in part: interrupted mid-line
    reader = csv.reader(io.StringIO("".join(lines)))
    try:
        header = next(reader)
    except StopIteration:
        return [], []
    rows = []
    for rec in reader:
        if len(rec) != len(header):
            continue
        rows.append(dict(zip(header, rec)))
    return header, rows


class TableFiles:
    """``results.csv`` (appended, flushed per row) and ``results.npz`` (rewritten) of a study."""

    def __init__(self, directory, columns: tuple[str, ...]):
        self.dir = Path(directory)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.csv_path = self.dir / "results.csv"
        self.npz_path = self.dir / "results.npz"
        self.columns = tuple(columns)
        self._fh = None

    def existing(self) -> list[dict]:
        """Rows already in results.csv (raw strings); checks the header."""
        if not self.csv_path.exists() or self.csv_path.stat().st_size == 0:
            return []
        header, rows = read_csv_rows(self.csv_path)
        if tuple(header) != self.columns:
            raise StudyFilesMismatch(header)
        return rows

    def open(self) -> None:
        fresh = not self.csv_path.exists() or self.csv_path.stat().st_size == 0
        if not fresh:
            data = self.csv_path.read_bytes()
            if not data.endswith(b"\n"):           # drop a partial last line (interrupted write)
                cut = data.rfind(b"\n") + 1
                with open(self.csv_path, "r+b") as fh:
                    fh.truncate(cut)
        self._fh = open(self.csv_path, "a", newline="")
        self._writer = csv.writer(self._fh)
        if fresh:
            self._writer.writerow(self.columns)
            self._fh.flush()

    def append(self, row: dict) -> None:
        self._writer.writerow([_fmt(row.get(c)) for c in self.columns])
        self._fh.flush()

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None


class StudyFilesMismatch(Exception):
    def __init__(self, header):
        super().__init__("header mismatch")
        self.header = header
