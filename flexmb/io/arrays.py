"""The raw arrays of a run: what a solver fills, a Result holds and every result file (npz, output chunks,
HDF5) stores."""
from __future__ import annotations

import numpy as np

__all__ = ["RAW_ARRAYS", "stack_rows"]

RAW_ARRAYS = ("t", "q", "v", "vd", "lam", "work_nc", "work_drivers", "history")
"""Saved arrays; ``history`` (n, n_history) holds, per saved time, the history of the force elements
after that step was accepted (Assembly.history: crash elements' plastic state, springs' winding, contact
approach speeds and broad phase), zero-padded when its length changes (sphere clouds)."""


def stack_rows(rows, width: int = 0) -> np.ndarray:
    """History rows (1-D, lengths may differ) as one (n, max length) array, zero-padded on the right
    (Assembly.set_history ignores the padding); ``width`` is the least number of columns."""
    n = max([width] + [np.size(r) for r in rows])
    out = np.zeros((len(rows), n))
    for i, r in enumerate(rows):
        out[i, :np.size(r)] = r
    return out
