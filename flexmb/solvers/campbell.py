"""Linearized eigen-analysis of a flexible body spinning steadily (Campbell diagrams).

A flexible body whose frame turns at a constant rate ``Omega`` about a body-fixed axis
through its frame origin (the frame held: no translation) has the modal equations
``F_q(eta, eta_d, eta_dd; omega = Omega n) = 0`` of flexmb/bodies/flexible_kernel.py.
Their steady solution ``eta_s`` (the centrifugally deformed state, found by Newton) and
the linearization about it,

    M_ee x_dd + C(Omega) x_d + K(Omega) x = 0,
    C = dF_q/d eta_d     (gyroscopic coupling 2 int rho Phi^T omega~ Phi, damping),
    K = dF_q/d eta       (elastic K or tangent K_t(eta_s), spin softening, stiffening),

give the frequencies as functions of the spin speed (Meirovitch, *Methods of Analytical
Dynamics*, ch. 6; Genta, *Dynamics of Rotating Systems*, §4 -- the same terms as the
time-domain model, so the diagram shows exactly what a simulation would do). With
``stiffening=False`` bodies the stiffness falls as ``Omega^2`` (spin softening) and a
frequency reaching zero marks the divergence speed.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import scipy.linalg as sla

from .. import checks
from ..errors import ConvergenceError, ModelError

__all__ = ["CampbellDiagram", "campbell"]


@dataclass
class CampbellDiagram:
    """Frequencies vs spin speed.

    Attributes:
        speeds: (ns,) spin speeds Omega, rad/s.
        frequencies: (ns, k) lowest natural frequencies, rad/s (ascending; 0 where the
            linearized system is unstable -- a real eigenvalue pair).
        unstable: (ns,) True where any eigenvalue has a positive real part beyond round-off.
        steady_deflection: (ns, m) modal coordinates of the steady (centrifugal) state.
    """

    speeds: np.ndarray
    frequencies: np.ndarray
    unstable: np.ndarray
    steady_deflection: np.ndarray

    def table(self, unit: str = "rad/s") -> str:
        """Plain-text table: one row per speed, frequencies in ``unit`` ("rad/s" or "Hz")."""
        scale = 1.0 if unit == "rad/s" else 1.0 / (2 * np.pi)
        k = self.frequencies.shape[1]
        head = "Omega (rad/s) | " + " | ".join(f"f{j + 1} ({unit})" for j in range(k))
        rows = [f"{w:13.4g} | " + " | ".join(f"{x * scale:10.5g}" for x in f) + ("  unstable" if u else "")
                for w, f, u in zip(self.speeds, self.frequencies, self.unstable)]
        return "\n".join([head] + rows)

    def plot(self, path=None, ax=None, label: str = "", **style):
        """Frequencies vs speed (matplotlib, extra ``plots``); saved to ``path`` when given. Returns the axes."""
        from .._optional import require
        matplotlib = require("matplotlib", "plots", "CampbellDiagram.plot")
        if ax is None:
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
            _, ax = plt.subplots(figsize=(6.0, 4.0))
        for j in range(self.frequencies.shape[1]):
            ax.plot(self.speeds, self.frequencies[:, j], label=(label if j == 0 else None), **style)
        ax.set_xlabel("spin speed (rad/s)")
        ax.set_ylabel("frequency (rad/s)")
        ax.grid(True, alpha=0.3)
        if path is not None:
            ax.figure.tight_layout()
            ax.figure.savefig(path, dpi=120)
        return ax


def campbell(body, axis: Sequence[float], speeds: Sequence[float], n_frequencies: int | None = None,
             tol: float = 1e-10, max_iter: int = 30) -> CampbellDiagram:
    """Campbell diagram of a flexible body spinning about ``axis`` (body-fixed, through the frame origin).

    ``body``: a FlexibleBody or NonlinearBeam (its own stiffening switch and damping apply).
    ``speeds``: spin speeds, rad/s (finite, at least one). Returns the lowest ``n_frequencies`` (default all:
    one per mode, the body's ``m`` modes give ``m`` frequencies; more are refused).
    """
    from ..bodies.flexible import FlexibleBody
    from ..bodies.flexible_kernel import FlexibleBodyGroup
    if not isinstance(body, FlexibleBody):
        raise ModelError(f"campbell needs a flexible body, got {body!r}")
    owner = f"campbell diagram of {body.kind} {body.name!r}"
    n = checks.vector(axis, "axis", owner)
    if np.linalg.norm(n) < 1e-12:
        raise ModelError(f"{owner}: axis must not be zero, got {axis!r}")
    n = n / np.linalg.norm(n)
    speeds = _speeds(speeds, owner)
    m = body.n_modes
    k = m if n_frequencies is None else checks.count(n_frequencies, f"n_frequencies (the body has {m} modes)",
                                                      owner, high=m)
    saved = body.offset
    body.offset = 0
    try:
        group = FlexibleBodyGroup([body], np.zeros(3))
    finally:
        body.offset = saved
    freqs = np.zeros((speeds.size, k))
    unstable = np.zeros(speeds.size, dtype=bool)
    steady = np.zeros((speeds.size, m))
    eta = body.eta0.copy()
    for i, W in enumerate(speeds):
        eta = _steady_state(group, body, W * n, eta, tol, max_iter)
        Mq, Cq, Kq = _linearized(group, W * n, eta)
        lam = _quadratic_eigenvalues(Mq, Cq, Kq)
        freqs[i], unstable[i] = _frequencies(lam, k)
        steady[i] = eta
    return CampbellDiagram(speeds, freqs, unstable, steady)


def _speeds(speeds, owner: str) -> np.ndarray:
    """Spin speeds (rad/s): at least one, all finite."""
    try:
        w = np.asarray(speeds, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        raise ModelError(f"{owner}: speeds must be numbers (rad/s), got {speeds!r}") from None
    if w.size == 0 or not np.all(np.isfinite(w)):
        raise ModelError(f"{owner}: speeds must be one or more finite numbers (rad/s), got {w.tolist()}")
    return w


def _state(m: int, omega: np.ndarray, eta: np.ndarray, etad=None, etadd=None):
    """q, v, a of one body with the frame at the origin turning at body rate ``omega``
    (p = identity, so p_dot = omega / 2 in the vector part)."""
    q = np.concatenate([np.zeros(3), [1.0, 0.0, 0.0, 0.0], eta])
    v = np.concatenate([np.zeros(3), [0.0], 0.5 * omega, np.zeros(m) if etad is None else etad])
    a = np.concatenate([np.zeros(7), np.zeros(m) if etadd is None else etadd])
    return q, v, a


def _linearized(group, omega: np.ndarray, eta: np.ndarray):
    q, v, a = _state(group.m, omega, eta)
    F, P, _ = group.terms(q, v, a, jacobian=True)
    return P["etadd"][0, 6:], P["etad"][0, 6:], P["eta"][0, 6:]


def _steady_state(group, body, omega, eta, tol, max_iter) -> np.ndarray:
    """Newton on F_q(eta; omega) = 0 (zero rates)."""
    for _ in range(max_iter):
        q, v, a = _state(group.m, omega, eta)
        F, P, _ = group.terms(q, v, a, jacobian=True)
        r = F[0, 6:]
        step = np.linalg.solve(P["eta"][0, 6:], -r)
        eta = eta + step
        if np.linalg.norm(step) <= tol * max(1.0, np.linalg.norm(eta)):
            return eta
    raise ConvergenceError(f"campbell: no steady state of {body.name!r} at spin {np.linalg.norm(omega):.6g} rad/s "
                           f"after {max_iter} Newton iterations (the body may buckle or diverge at this speed)")


def _frequencies(lam: np.ndarray, k: int) -> tuple[np.ndarray, bool]:
    """Lowest ``k`` frequencies (one per conjugate pair; 0 for each pair of real eigenvalues,
    i.e. a divergence mode) and whether any eigenvalue grows."""
    scale = max(1.0, float(np.abs(lam).max(initial=1.0)))
    tol = 1e-9 * scale
    oscillating = np.sort(lam.imag[lam.imag > tol])
    n_real_pairs = int(np.count_nonzero(np.abs(lam.imag) <= tol)) // 2
    w = np.concatenate([np.zeros(n_real_pairs), oscillating, np.zeros(k)])[:k]
    return w, bool(np.any(lam.real > 1e-8 * scale))


def _quadratic_eigenvalues(M: np.ndarray, C: np.ndarray, K: np.ndarray) -> np.ndarray:
    """Eigenvalues of ``(lambda^2 M + lambda C + K) x = 0`` through the first-order form."""
    m = M.shape[0]
    A = np.block([[np.zeros((m, m)), np.eye(m)], [-K, -C]])
    B = np.block([[np.eye(m), np.zeros((m, m))], [np.zeros((m, m)), M]])
    return sla.eig(A, B, right=False)
