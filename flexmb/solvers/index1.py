"""Explicit index-1 reference integration (acceleration-level constraints).

Solves ``[[M, Phi_q^T],[Phi_q, 0]] [a; lambda] = [Q; gamma]`` at every stage and
integrates ``(q, v)`` with scipy's RK45 or DOP853. The position and velocity
constraints are *not* enforced, so they drift (van der Linde & Schwab 2002, §1;
Neto & Ambrosio 2002); flexmb uses it as an independent check and for the drift
demonstration, not for production runs.
"""
from __future__ import annotations

import numpy as np
from scipy.integrate import DOP853, RK45, solve_ivp

from ..errors import ConvergenceError
from ..results import Result
from .initial import accelerations, consistent_start


def _counting(method: str) -> tuple[type, list]:
    """scipy's Runge-Kutta class of ``method`` that counts its accepted steps (``OdeSolver.step`` is one
    accepted step; rejected trials happen inside it), and the one-element counter list."""
    count = [0]

    class Counting({"rk45": RK45, "dop853": DOP853}[method]):
        def step(self):
            message = super().step()
            count[0] += self.status != "failed"
            return message

    return Counting, count


def simulate_index1(system, asm, t0, t_end, h, method, rtol, atol, redundant) -> Result:
    """Integrate with scipy's ``method`` ("rk45" or "dop853"), whose own error control (``rtol``, ``atol``)
    chooses the steps. ``h`` is only the spacing of the saved times (``None``: every integrator step is
    saved). ``stats``: ``steps`` (accepted integrator steps), ``outputs`` (saved times) and
    ``rhs_evaluations`` (scipy's ``nfev``)."""
    asm.start(*asm.initial_state())     # clean element history; no step is accepted, so it stays so
    q0, v0, _, _ = consistent_start(asm, t0, redundant)
    nq = asm.nq

    def rhs(t, y):
        q, v = y[:nq], y[nq:]
        a, _ = accelerations(asm, q, v, t)
        return np.concatenate([v, a])

    t_eval = None if h is None else np.append(np.arange(t0, t_end, h), t_end)
    solver, steps = _counting(method)
    sol = solve_ivp(rhs, (t0, t_end), np.concatenate([q0, v0]), method=solver, rtol=rtol, atol=atol, t_eval=t_eval)
    if sol.status < 0:
        raise ConvergenceError(f"{method} failed: {sol.message}", time=float(sol.t[-1]))
    q, v = sol.y[:nq].T, sol.y[nq:].T
    acc, lam = zip(*(accelerations(asm, qi, vi, ti) for ti, qi, vi in zip(sol.t, q, v)))
    acc, lam = np.array(acc), np.array(lam)
    n = sol.t.size
    # work of every non-conservative element and of the drivers, at the saved times (trapezoidal rule)
    P = np.array([asm.nonconservative_power(qi, vi, ti) for ti, qi, vi in zip(sol.t, q, v)])
    Pd = np.array([asm.driver_power(qi, vi, li, ti) for ti, qi, vi, li in zip(sol.t, q, v, lam)])
    dt = np.diff(sol.t)
    w_nc = np.concatenate([[0.0], np.cumsum(0.5 * dt * (P[1:] + P[:-1]))])
    w_d = np.concatenate([[0.0], np.cumsum(0.5 * dt * (Pd[1:] + Pd[:-1]))])
    history = np.tile(asm.history(), (n, 1))      # the (unchanged) history every row was evaluated with
    return Result(sol.t, q, v, acc, lam, w_nc, w_d, history, system=system,
                  stats={"steps": steps[0], "outputs": int(sol.t.size), "rhs_evaluations": int(sol.nfev),
                         "method": method},
                  message=sol.message, redundant=[asm.labels[k] for k in np.flatnonzero(~asm.active)])
