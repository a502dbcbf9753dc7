"""Helpers shared by the ``fem`` cases: convergence checks and the report figures."""
from __future__ import annotations

import numpy as np

from ..framework import CaseResult

BOUND_SAFETY = 2.0
"""Factor on the a-priori error bound ``e(h0) (h / h0)^p`` of the finest mesh.

The bound takes its constant from the coarsest mesh; where that mesh is not yet in the
asymptotic range its error differs from ``C h0^p`` by the next term of the error expansion.
The cases show (metric ``..._bound_ratio``) that the measured finest error stays below 1.4x the
prediction, so 2 leaves margin; over a fourfold refinement an element one order slower exceeds
the bound twofold, and the order check catches it on any study.
"""


def observed_order(h: np.ndarray, e: np.ndarray) -> np.ndarray:
    """Convergence order from the two finest meshes, ``log(e1 / e2) / log(h1 / h2)`` per mode."""
    return np.log(np.abs(e[-2]) / np.abs(e[-1])) / np.log(h[-2] / h[-1])


def convergence_checks(r: CaseResult, prefix: str, h, errors, p: float, order_tol: float | None = None,
                       order_min: float | None = None, modes: list[int] | None = None,
                       safety: float = BOUND_SAFETY) -> dict:
    """Order and error-bound checks of a refinement study; returns the numbers for the notes.

    ``h`` (levels,) element sizes, coarse to fine; ``errors`` (levels, modes) signed relative
    errors against the exact reference. Per mode: ``{prefix}order_mode{k}`` (two finest meshes)
    must be ``p +- order_tol`` (or at least ``order_min``, where the rate is only bounded from
    below), and ``{prefix}error_mode{k}`` (finest mesh, absolute value) must
    be below ``safety * |e(h0)| (h / h0)^p`` -- the rate-``p`` bound with its constant taken from
    the coarsest mesh.
    """
    h = np.asarray(h, dtype=float)
    errors = np.atleast_2d(np.asarray(errors, dtype=float))
    orders = observed_order(h, errors)
    bound = safety * np.abs(errors[0]) * (h[-1] / h[0]) ** p
    modes = modes or list(range(1, errors.shape[1] + 1))
    for k, mode in enumerate(modes):
        if order_min is None:
            r.check(f"{prefix}order_mode{mode}", orders[k], p, f"abs {order_tol}")
        else:
            r.check(f"{prefix}order_mode{mode}", orders[k], tolerance=f"min {order_min}")
        r.check(f"{prefix}error_mode{mode}", abs(errors[-1, k]), tolerance=f"max {_round_up(bound[k])}")
    r.metrics[f"{prefix}bound_ratio_max"] = float(np.max(np.abs(errors[-1]) / (bound / safety)))
    return {"orders": orders, "bound": bound}


def _round_up(x: float, digits: int = 2) -> str:
    """``x`` rounded up to ``digits`` significant digits, as text (a tolerance must not shrink)."""
    if x <= 0 or not np.isfinite(x):
        return f"{x:.{digits}g}"
    e = np.floor(np.log10(x)) - digits + 1
    return f"{np.ceil(x / 10**e) * 10**e:.{digits}g}"


# ----------------------------------------------------------------------------------------------
# figures
# ----------------------------------------------------------------------------------------------
def _axes(figsize=(6.0, 3.6)):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt.subplots(figsize=figsize)


def convergence_figure(title: str, series: list[tuple[str, np.ndarray, np.ndarray]], p: float | None = None,
                       xlabel: str = "element size h (m)"):
    """Log-log |relative error| vs h, one line per (label, h, errors); slopes of the finest pair in the legend."""
    fig, ax = _axes()
    for label, h, e in series:
        h, e = np.asarray(h, dtype=float), np.abs(np.asarray(e, dtype=float))
        slope = np.log(e[-2] / e[-1]) / np.log(h[-2] / h[-1]) if len(h) > 1 else np.nan
        ax.loglog(h, e, "o-", label=f"{label} (slope {slope:.2f})", lw=1.2, ms=4)
    if p is not None and series:
        h0 = np.asarray(series[0][1], dtype=float)
        e0 = np.abs(np.asarray(series[0][2], dtype=float))
        ax.loglog(h0, e0[0] * (h0 / h0[0]) ** p, "k:", lw=1, label=f"slope {p:g}")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("|relative frequency error|")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3, which="both")
    return fig


def parameter_figure(title: str, reference: np.ndarray, series: list[tuple[str, np.ndarray]],
                     ref_label: str = "reference", ylabel: str = "lambda / reference - 1 (%)"):
    """Grouped bars of each series' relative deviation from ``reference`` per mode."""
    fig, ax = _axes((6.4, 3.6))
    reference = np.asarray(reference, dtype=float)
    modes = np.arange(1, reference.size + 1)
    width = 0.8 / max(len(series), 1)
    for k, (label, values) in enumerate(series):
        dev = 100.0 * (np.asarray(values, dtype=float)[:reference.size] / reference - 1.0)
        ax.bar(modes - 0.4 + (k + 0.5) * width, dev, width, label=label)
    ax.axhline(0.0, color="k", lw=0.8)
    ax.set_xticks(modes, [f"{m}\n{v:.4g}" for m, v in zip(modes, reference)])
    ax.set_xlabel(f"mode / {ref_label} value")
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=7, ncol=2)
    ax.grid(alpha=0.3, axis="y")
    return fig


def line_figure(title: str, x, series: list[tuple[str, np.ndarray]], xlabel: str, ylabel: str, logy: bool = True):
    """Plain line plot (e.g. Craig-Bampton error vs mode count)."""
    fig, ax = _axes()
    for label, y in series:
        (ax.semilogy if logy else ax.plot)(x, np.abs(y), "o-", label=label, lw=1.2, ms=4)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3, which="both")
    return fig
