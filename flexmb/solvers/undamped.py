"""Undamped steps (``gamma = 1/2``: generalized-alpha at ``rho_inf = 1``, HHT at ``alpha = 0``, Newmark's
trapezoidal rule) end on a consistent state (docs/theory.md §5.1, "Undamped settings").

The index-3 step enforces the constraints on positions only. Their velocity-level and acceleration-level
errors are parasitic modes of the scheme that alternate in sign from step to step; numerical damping
(``rho_inf < 1``) divides them by about ``rho_inf`` per step, the undamped scheme does not damp them at all
(with the trapezoidal rule they even grow linearly on a linear constrained system: Cardona & Géradin,
*Computers & Structures* 33, 1989). On rotating bodies the Euler parameters and the joints turn these modes into
one another by an angle of order ``h omega`` per step, so that undamped they grow at a rate of order ``omega``
in time whatever the step: measured with the index-3 step alone, a double pendulum fails at 8.4 s, a heavy top
spinning at 200 rad/s at 0.17 s, a body spun about its intermediate axis at 28 s (h = 1 ms, 0.5 ms, 1 ms).

So an undamped step is followed by the projections of Bayo & Ledesma (*Nonlinear Dynamics* 9, 1996), which
remove the parasitic modes: the velocities are projected onto the velocity constraints in the metric of the
mass matrix,

    M v* + Phi_q^T mu = M v,      Phi_q v* = -Phi_t,

and the accelerations and multipliers are those of the index-1 equations at ``(q, v*)``,

    M vd + Phi_q^T lambda = Q(q, v*, t),      Phi_q vd = gamma(q, v*, t),

with the algorithmic acceleration ``a = vd`` (for ``gamma = 1/2`` the generalized-alpha relation holds with
``a = vd`` at every step). Each step thus starts, as the run does (flexmb/solvers/initial.py), from a state that
satisfies every constraint on positions, velocities and accelerations. Both solves share one factorization of the
mass/constraint matrix. The scheme stays second order (double pendulum: orders 1.99 and 2.00 between h = 4, 2
and 1 ms); the energy error stays at the scheme's truncation level (tests/test_undamped.py).
"""
from __future__ import annotations

import numpy as np

from ..errors import SingularConfigurationError
from .generalized_alpha import StepState
from ..linalg import SingularMatrixError, factorize, saddle_scale, scaled

__all__ = ["consistent_step_end"]


def consistent_step_end(asm, s: StepState) -> StepState:
    """The state ``s`` (an accepted undamped step) with its velocities projected mass-orthogonally onto the
    velocity constraints and the accelerations and multipliers of the index-1 equations there (module
    docstring); positions and time unchanged. Raises SingularConfigurationError where the mass/constraint
    matrix is singular."""
    nq, m = asm.nq, asm.m
    zero = np.zeros(nq)
    _, rows, S = asm.residual(s.q, zero, zero, np.zeros(m), s.t, coef=(1.0, 0.0, 0.0, 0.0, 0.0))
    d = saddle_scale(S, nq, asm.inertia_scale)
    try:
        lu = factorize(scaled(S, d))
    except SingularMatrixError as exc:
        raise SingularConfigurationError(
            f"undamped step at t = {s.t:.6g} s: the mass/constraint matrix of the velocity projection is singular "
            f"({exc})") from None
    mass_times_v = (S @ np.concatenate([s.v, np.zeros(m)]))[:nq]       # M v: the upper block row of S
    v = (lu.solve(np.concatenate([mass_times_v, -rows.phi_t]) * d) * d)[:nq]
    r0, rows, _ = asm.residual(s.q, v, zero, np.zeros(m), s.t)
    x = lu.solve(np.concatenate([-r0, rows.gamma]) * d) * d
    vd = x[:nq]
    return StepState(s.t, s.q, v, vd, vd.copy(), x[nq:])
