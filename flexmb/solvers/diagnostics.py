"""Which model item makes a step fail: per-element magnitudes of the Newton equations.

Called only when a step fails or the run stalls, never in the time-step loop. Every body and
force family contributes to the residual ``r`` and to the iteration matrix ``S = cM M + cC C +
cK K`` (docs/theory.md §5) instance by instance; the instance with the largest ``|r|`` or the
largest entry of its block, set against the inertia (``cM M`` of the bodies), is the likely
culprit. A 1e30 N/m spring gives a block 1e23 times the inertia at h = 1e-3 s, far beyond what
Newton's method in double precision can resolve.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["ElementMagnitude", "element_magnitudes", "culprit_text"]


@dataclass(frozen=True)
class ElementMagnitude:
    label: str           # e.g. "spring-damper 'stiff'"
    residual: float      # largest |r| entry of the element (N, N m or generalized)
    matrix: float        # largest |S| entry of its block in the iteration matrix
    inertial: bool       # a body's inertia terms (the scale the others are set against)


def _labels(group, n: int) -> list[str]:
    """Names of the ``n`` instances of a family group, in the group's instance order: its ``labels``
    (flexmb/groups.py), else the names of its items, else the family and its elements' names."""
    labels = getattr(group, "labels", None)
    if labels is not None and len(labels) == n and n:
        return list(labels)
    for attr in ("prims", "elements", "contacts", "loads", "motors", "forces", "bodies"):
        items = getattr(group, attr, None)
        if items is not None and len(items) == n:
            return [getattr(x, "label", None) or getattr(x, "owner", None) or repr(getattr(x, "name", x))
                    for x in items]
    names = [getattr(x, "name", "?") for attr in ("elements", "contacts") for x in getattr(group, attr, [])]
    family = type(group).__name__
    return [f"{family} ({', '.join(map(repr, names))})" if names else family] * n


def _per_instance(label_list, r, blk, inertial=False) -> list[ElementMagnitude]:
    r = np.asarray(r, dtype=float)
    n = r.shape[0] if r.ndim > 1 else 1
    r = r.reshape(n, -1)
    b = np.zeros((n, 1)) if blk is None else np.asarray(blk, dtype=float).reshape(n, -1)
    out = []
    for k in range(n):
        rk, bk = r[k][np.isfinite(r[k])], b[k]
        out.append(ElementMagnitude(label_list[k], float(np.max(np.abs(rk), initial=0.0)),
                                    float(np.max(np.abs(bk), initial=0.0)) if np.all(np.isfinite(bk)) else np.inf,
                                    inertial))
    return out


def element_magnitudes(asm, q, v, a, lam, t, coef) -> list[ElementMagnitude]:
    """Magnitudes of every body and force-element instance at a state (see module doc).

    ``coef = (cM, cC, cK)`` as in ``Assembly.residual``. An element whose evaluation raises
    (a failing user function, coincident spring points) is reported with infinite magnitudes.
    """
    bodies = [(asm.rigid, True)] + [(g, True) for g in asm.flexible]
    st = asm.eval_state(q, v, a, t)
    out: list[ElementMagnitude] = []
    for group, inertial in bodies + [(g, False) for g in asm.families]:
        n = getattr(group, "n", None)
        try:
            if inertial:
                _, r, blk = group.residual(q, v, a, coef)
            else:                                  # every element family alike (flexmb/groups.py)
                r, blk = group.residual(st, coef)
        except Exception:     # noqa: BLE001 - the failing family is the answer, whatever it raised
            out += [ElementMagnitude(lab, np.inf, np.inf, inertial) for lab in _labels(group, n or 1)[:1]]
            continue
        if np.asarray(r).size == 0:
            continue
        out += _per_instance(_labels(group, np.asarray(r).shape[0]), r, blk, inertial)
    return out


def culprit_text(asm, q, v, a, lam, t, coef) -> str:
    """One sentence naming the element that dominates the residual and the iteration matrix,
    set against the bodies' inertia; empty when nothing stands out."""
    try:
        mags = element_magnitudes(asm, q, v, a, lam, t, coef)
    except Exception:   # noqa: BLE001 - a diagnostic must never mask the error it explains
        return ""
    forces = [m for m in mags if not m.inertial]
    inertia = max((m.matrix for m in mags if m.inertial and np.isfinite(m.matrix)), default=0.0)
    if not forces:
        return ""
    by_r = max(forces, key=lambda m: m.residual)
    by_s = max(forces, key=lambda m: m.matrix)
    parts = []
    if by_s.matrix > 0:
        ratio = f", {by_s.matrix / inertia:.3g} times the inertia terms" if inertia > 0 else ""
        parts.append(f"largest iteration-matrix entry from {by_s.label} ({by_s.matrix:.3g}{ratio})")
    if by_r.residual > 0:
        parts.append(f"largest residual from {by_r.label} (|r| = {by_r.residual:.3g})")
    return "; ".join(parts)
