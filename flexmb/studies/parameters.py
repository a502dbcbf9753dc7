"""Parameter sets of a study: a full factorial ``Grid``, random ``Samples`` (Latin
hypercube or plain uniform), or an explicit list of cases.

Every case is a plain dict ``{name: value}`` with values that are numbers, strings,
booleans or None, so that a case prints in one CSV line and has a stable hash
(used to recognise already finished cases when a study is resumed).
"""
from __future__ import annotations

import hashlib
import itertools
import json
import math
import numbers
import re

import numpy as np

from ..errors import ModelError

__all__ = ["Grid", "Samples", "Cases", "as_parameter_set", "param_hash", "check_name"]

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.]*$")


def check_name(name, what: str) -> str:
    """A parameter or metric name: a column of the results table (letters, digits, '_', '.')."""
    if not isinstance(name, str) or not _NAME.match(name):
        raise ModelError(f"{what} name {name!r} is not usable as a table column: use letters, digits, "
                         "'_' and '.', starting with a letter or '_'")
    return name


def scalar(value, where: str):
    """A parameter value as a plain Python scalar (numbers, str, bool, None); refuses the rest."""
    if value is None or isinstance(value, (str, bool)):
        return value
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, bool):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        if not math.isfinite(value):
            raise ModelError(f"{where}: parameter values must be finite, got {value!r}")
        return float(value)
    raise ModelError(f"{where}: parameter values must be numbers, strings, booleans or None, got "
                     f"{type(value).__name__} {value!r}; pass a key (a name or an index) and look the "
                     "object up inside the build function")


def _canonical(value):
    if isinstance(value, float):
        return {"f": repr(value)}        # exact (shortest round-trip) and NaN-safe
    return value


def param_hash(params: dict) -> str:
    """A 12-hex-digit hash of a case's parameters (names and exact values)."""
    text = json.dumps({k: _canonical(v) for k, v in params.items()}, sort_keys=True)
    return hashlib.sha1(text.encode()).hexdigest()[:12]


class ParameterSet:
    """Base class: ``cases()`` gives the list of parameter dicts, ``names`` the columns."""

    names: tuple[str, ...] = ()

    def cases(self) -> list[dict]:  # pragma: no cover - interface
        raise NotImplementedError

    def __len__(self) -> int:
        return len(self.cases())

    def describe(self) -> dict:  # pragma: no cover - interface
        raise NotImplementedError


class Grid(ParameterSet):
    """Full factorial grid: ``Grid({"v": [2, 4, 6], "k": [1e6, 1e7]})`` gives 6 cases.

    Cases are ordered like ``itertools.product`` over the dict in insertion order
    (the last parameter varies fastest). A scalar value is a constant parameter.
    """

    def __init__(self, values: dict):
        if not isinstance(values, dict) or not values:
            raise ModelError(f"Grid needs a non-empty dict name -> list of values, got {values!r}")
        self.values: dict[str, list] = {}
        for name, vals in values.items():
            check_name(name, "parameter")
            if isinstance(vals, (str, bytes)) or not np.iterable(vals):
                vals = [vals]
            vals = [scalar(v, f"Grid parameter {name!r}") for v in vals]
            if not vals:
                raise ModelError(f"Grid parameter {name!r} has no values, got {values[name]!r}")
            self.values[name] = vals
        self.names = tuple(self.values)

    def cases(self) -> list[dict]:
        return [dict(zip(self.names, combo)) for combo in itertools.product(*self.values.values())]

    def __len__(self) -> int:
        return math.prod(len(v) for v in self.values.values())

    def describe(self) -> dict:
        return {"kind": "Grid", "values": self.values}


class Samples(ParameterSet):
    """``n`` random cases: ``Samples({"v": (2.0, 8.0), "k": (1e6, 1e8)}, n=100, seed=1, log=("k",))``.

    ``method="lhs"`` (default): Latin hypercube -- each parameter range is cut into
    ``n`` equal strata and every stratum is used exactly once, at a uniformly random
    place in it, with the strata of different parameters paired by independent random
    permutations (McKay, Beckman & Conover, Technometrics 21, 1979). ``"uniform"``:
    independent uniform draws. Parameters named in ``log`` are sampled uniformly in
    log10 (ranges must be positive). A scalar value (not a 2-tuple) is a constant.
    The same ``seed`` gives the same cases (numpy ``default_rng``).
    """

    def __init__(self, ranges: dict, n: int, seed: int | None = 0, method: str = "lhs", log=()):
        if not isinstance(ranges, dict) or not ranges:
            raise ModelError(f"Samples needs a non-empty dict name -> (low, high), got {ranges!r}")
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
            raise ModelError(f"Samples: n must be a positive integer, got {n!r}")
        if method not in ("lhs", "uniform"):
            raise ModelError(f"Samples: method must be 'lhs' or 'uniform', got {method!r}")
        log = (log,) if isinstance(log, str) else tuple(log)
        self.ranges: dict[str, tuple | object] = {}
        for name, r in ranges.items():
            check_name(name, "parameter")
            if isinstance(r, (tuple, list)) and len(r) == 2:
                lo, hi = (scalar(x, f"Samples parameter {name!r}") for x in r)
                if not all(isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)
                           for x in (lo, hi)) or not hi >= lo:
                    raise ModelError(f"Samples parameter {name!r}: range must be two finite numbers "
                                     f"low <= high, got {r!r}")
                if name in log and lo <= 0:
                    raise ModelError(f"Samples parameter {name!r} is log-sampled: its range must be "
                                     f"positive, got {r!r}")
                self.ranges[name] = (float(lo), float(hi))
            else:
                self.ranges[name] = scalar(r, f"Samples parameter {name!r}")
        unknown = [k for k in log if k not in self.ranges or not isinstance(self.ranges[k], tuple)]
        if unknown:
            raise ModelError(f"Samples: log names {unknown} are not sampled ranges")
        self.n, self.seed, self.method, self.log = int(n), seed, method, log
        self.names = tuple(self.ranges)
        self._cases = None

    def unit_samples(self) -> np.ndarray:
        """(n, d) points in the unit cube, one column per sampled parameter."""
        sampled = [k for k, r in self.ranges.items() if isinstance(r, tuple)]
        rng = np.random.default_rng(self.seed)
        d = len(sampled)
        if self.method == "uniform":
            return rng.random((self.n, d))
        u = rng.random((self.n, d))
        strata = np.column_stack([rng.permutation(self.n) for _ in range(d)]) if d else np.zeros((self.n, 0))
        return (strata + u) / self.n

    def cases(self) -> list[dict]:
        if self._cases is None:
            sampled = [k for k, r in self.ranges.items() if isinstance(r, tuple)]
            u = self.unit_samples()
            cols = {}
            for j, k in enumerate(sampled):
                lo, hi = self.ranges[k]
                if k in self.log:
                    cols[k] = 10.0 ** (math.log10(lo) + u[:, j] * (math.log10(hi) - math.log10(lo)))
                else:
                    cols[k] = lo + u[:, j] * (hi - lo)
            self._cases = [{k: (float(cols[k][i]) if k in cols else r) for k, r in self.ranges.items()}
                           for i in range(self.n)]
        return [dict(c) for c in self._cases]

    def __len__(self) -> int:
        return self.n

    def describe(self) -> dict:
        return {"kind": "Samples", "ranges": self.ranges, "n": self.n, "seed": self.seed,
                "method": self.method, "log": list(self.log)}


class Cases(ParameterSet):
    """An explicit list of cases, each a dict with the same names."""

    def __init__(self, cases):
        cases = list(cases)
        if not cases or not all(isinstance(c, dict) for c in cases):
            raise ModelError("Cases needs a non-empty list of dicts name -> value")
        names = tuple(cases[0])
        for i, c in enumerate(cases):
            if tuple(c) != names:
                raise ModelError(f"case {i} has parameters {list(c)}, case 0 has {list(names)}; "
                                 "every case must name the same parameters in the same order")
        for n in names:
            check_name(n, "parameter")
        self._cases = [{k: scalar(v, f"case {i}, parameter {k!r}") for k, v in c.items()}
                       for i, c in enumerate(cases)]
        self.names = names

    def cases(self) -> list[dict]:
        return [dict(c) for c in self._cases]

    def __len__(self) -> int:
        return len(self._cases)

    def describe(self) -> dict:
        return {"kind": "Cases", "n": len(self._cases)}


def as_parameter_set(parameters) -> ParameterSet:
    if isinstance(parameters, ParameterSet):
        return parameters
    if isinstance(parameters, dict):
        return Grid(parameters)
    if isinstance(parameters, (list, tuple)):
        return Cases(parameters)
    raise ModelError(f"parameters must be a Grid, Samples, a dict (a grid) or a list of dicts, got "
                     f"{type(parameters).__name__} {parameters!r}")
