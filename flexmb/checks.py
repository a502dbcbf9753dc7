"""Input checks shared by the model classes: a scalar parameter with a clear ModelError."""
from __future__ import annotations

import math

from .errors import ModelError

__all__ = ["scalar"]


def scalar(value, what: str, owner: str, *, sign: str | None = None, unit: str = "") -> float:
    """``float(value)``, refused with a ModelError naming ``owner`` and ``what`` unless it is finite and,
    with ``sign``, ``"positive"`` (> 0) or ``"non-negative"`` (>= 0). ``unit`` is appended to the value."""
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ModelError(f"{owner}: {what} must be a number, got {value!r}") from None
    ok = math.isfinite(x) and (sign is None or (x > 0 if sign == "positive" else x >= 0))
    if not ok:
        need = f"{sign} and finite" if sign else "finite"
        raise ModelError(f"{owner}: {what} must be {need}, got {x}{unit}")
    return x
