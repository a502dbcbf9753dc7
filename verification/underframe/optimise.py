"""Optimisation of the three flange widths of the end-underframe (Pereira & Dias 2002, Table III): minimise the
VCSI of the 30 km/h wall impact subject to no hinge reaching its plastic moment in the 5 km/h service impact.

Variables ``x = b / b_initial`` (so that all three are of order one), bounds ``BOUNDS``; constraints, one per
member family, ``1 - utilization >= 0`` (scipy's sign); gradients by forward differences of step ``FD_STEP``
over full runs (every run evaluated once, memoised). The scipy call is one small function, :func:`minimize`,
so that it can be replaced by the studies optimisation workflow.
"""
from __future__ import annotations

from typing import Callable, NamedTuple

import numpy as np
from scipy import optimize

from .model import DATA, FAMILIES, INITIAL, Data, crash, service

BOUNDS = (0.3, 1.5)      # x = b / b_initial
FD_STEP = 0.02           # forward-difference step in x: 2 % of each width, above the runs' noise (docs)


class Evaluation(NamedTuple):
    """One design: widths (m), the VCSI (g^2) and the service utilization per family."""

    widths: tuple
    vcsi: float
    utilization: dict


class Optimum(NamedTuple):
    """Result of :func:`optimise_widths`."""

    initial: Evaluation
    optimum: Evaluation
    evaluations: int          # designs run (each one crash and one service run)
    iterations: int
    success: bool
    message: str


class Problem:
    """Objective, constraints and their forward-difference gradients over memoised evaluations."""

    def __init__(self, d: Data = DATA, initial=INITIAL):
        self.d, self.b0 = d, np.asarray(initial, dtype=float)
        self.cache: dict = {}

    def evaluate(self, x) -> Evaluation:
        key = tuple(np.round(np.asarray(x, dtype=float), 12))
        if key not in self.cache:
            b = tuple(float(v) for v in self.b0 * np.asarray(key))
            self.cache[key] = Evaluation(b, crash(b, self.d).vcsi, service(b, self.d).family_utilization)
        return self.cache[key]

    def objective(self, x) -> float:
        return self.evaluate(x).vcsi

    def constraints(self, x) -> np.ndarray:
        u = self.evaluate(x).utilization
        return np.array([1.0 - u[f] for f in FAMILIES])

    def _gradient(self, fn: Callable, x) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        f0 = np.asarray(fn(x))
        cols = []
        for i in range(x.size):
            xi = x.copy()
            xi[i] += FD_STEP
            cols.append((np.asarray(fn(xi)) - f0) / FD_STEP)
        return np.array(cols).T

    def objective_gradient(self, x) -> np.ndarray:
        return self._gradient(self.objective, x)

    def constraint_jacobian(self, x) -> np.ndarray:
        return self._gradient(self.constraints, x)


def minimize(problem: Problem, x0, maxiter: int):
    """The scipy call (SLSQP, Kraft 1988): the one place to switch optimisers."""
    return optimize.minimize(problem.objective, x0, jac=problem.objective_gradient, method="SLSQP",
                             bounds=[BOUNDS] * len(x0),
                             constraints=[{"type": "ineq", "fun": problem.constraints,
                                           "jac": problem.constraint_jacobian}],
                             options={"maxiter": maxiter, "ftol": 1e-3})


def optimise_widths(d: Data = DATA, initial=INITIAL, maxiter: int = 15) -> Optimum:
    """Minimise the VCSI over the three widths from ``initial`` (m)."""
    problem = Problem(d, initial)
    x0 = np.ones(len(initial))
    res = minimize(problem, x0, maxiter)
    return Optimum(problem.evaluate(x0), problem.evaluate(res.x), len(problem.cache), int(res.nit),
                   bool(res.success), str(res.message))
