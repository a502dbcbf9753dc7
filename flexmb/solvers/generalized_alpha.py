"""Index-3 generalized-alpha integration (Arnold & Bruls 2007) with Newton iteration.

Per step (docs/theory.md §5):

    (1 - alpha_m) a_{n+1} + alpha_m a_n = (1 - alpha_f) vd_{n+1} + alpha_f vd_n
    q_{n+1} = q_n + h v_n + h^2 (1/2 - beta) a_n + h^2 beta a_{n+1}
    v_{n+1} = v_n + h (1 - gamma) a_n + h gamma a_{n+1}
    M(q) vd + Phi_q^T lambda = Q(q, v, t),   Phi(q, t) = 0       at t_{n+1}

``a`` is the algorithmic acceleration, ``vd`` the true one. Newton runs on
``(q, lambda_hat)`` with ``lambda_hat = beta h^2 lambda`` and the dynamics
scaled by ``beta h^2`` (constraint scaling, Bottasso, Dopico & Trainelli 2008),
so the iteration matrix stays well conditioned as h -> 0:

    [[M (1-alpha_m)/(1-alpha_f) + C gamma h + K beta h^2 + H(lambda_hat),  Phi_q^T],
     [Phi_q,                                                            0      ]].

Velocity constraints ``B v = b`` hold at the step end with ``v = vp + gp (q - qp)``; their rows are
scaled by ``1/gp`` (docs/theory.md §8). Newmark (alpha_m = alpha_f = 0) and HHT (alpha_m = 0) are
special cases.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..compiled.stepping import apply_increment, corrected_rates, newton_rhs, newton_weights, predict
from ..errors import ConvergenceError, ModelError
from ..linalg import DENSE_LIMIT, SingularMatrixError, factorize, saddle_scale, scaled
from .compiled_step import CompiledEvaluation, CompiledStep


@dataclass(frozen=True)
class AlphaParameters:
    """The constants of one member of the generalized-alpha family (docs/theory.md §5.1)."""
    alpha_m: float
    alpha_f: float
    beta: float
    gamma: float
    name: str

    @property
    def undamped(self) -> bool:
        """``gamma = 1/2``: no numerical damping (generalized-alpha at rho_inf = 1, HHT at alpha = 0, Newmark's
        trapezoidal rule and any Newmark beta with gamma = 1/2). Such steps end on the consistent state of
        :func:`flexmb.solvers.undamped.consistent_step_end`: undamped, the index-3 scheme's parasitic modes grow
        on rotating bodies."""
        return abs(self.gamma - 0.5) <= 1e-12

    @classmethod
    def generalized_alpha(cls, rho_inf: float = 0.9) -> "AlphaParameters":
        """Arnold & Bruls (2007) eq. 13 / Chung & Hulbert (1993): second order, spectral radius rho_inf."""
        if not 0.0 <= rho_inf <= 1.0:
            raise ModelError(f"rho_inf must lie in [0, 1], got {rho_inf}")
        am = (2.0 * rho_inf - 1.0) / (rho_inf + 1.0)
        af = rho_inf / (rho_inf + 1.0)
        g = 0.5 + af - am
        return cls(am, af, 0.25 * (g + 0.5) ** 2, g, f"generalized-alpha (rho_inf={rho_inf})")

    @classmethod
    def hht(cls, rho_inf: float = 0.9) -> "AlphaParameters":
        """Hilber-Hughes-Taylor: alpha_m = 0, alpha_f = (1 - rho_inf)/(1 + rho_inf) <= 1/3."""
        if not 0.5 <= rho_inf <= 1.0:
            raise ModelError(f"HHT needs rho_inf in [0.5, 1], got {rho_inf}")
        af = (1.0 - rho_inf) / (1.0 + rho_inf)
        g = 0.5 + af
        return cls(0.0, af, 0.25 * (1.0 + af) ** 2, g, f"HHT (rho_inf={rho_inf})")

    @classmethod
    def newmark(cls, beta: float = 0.25, gamma: float = 0.5) -> "AlphaParameters":
        """Newmark's family (alpha_m = alpha_f = 0); trapezoidal rule by default."""
        if not (gamma >= 0.5 and beta >= 0.25 * (gamma + 0.5) ** 2 - 1e-12):
            raise ModelError(f"Newmark beta={beta}, gamma={gamma} is not unconditionally stable "
                             "(need gamma >= 1/2, beta >= (gamma + 1/2)^2 / 4)")
        return cls(0.0, 0.0, beta, gamma, f"Newmark (beta={beta}, gamma={gamma})")


@dataclass
class StepState:
    t: float
    q: np.ndarray
    v: np.ndarray
    vd: np.ndarray     # true acceleration
    a: np.ndarray      # algorithmic acceleration
    lam: np.ndarray


@dataclass
class StepStats:
    newton_iterations: int = 0
    factorizations: int = 0
    compiled_steps: int = 0         # steps the compiled step converged (single attempts and the steps of blocks)
    compiled_evaluations: int = 0   # Newton iterations whose residual came from the compiled evaluation
    # the largest estimated ratio, over the steps, of the Newton error left to the step's share of the truncation
    # error (truncation_share); above 1 Newton's error dominates the run's (general step only, docs/theory.md §5.5)
    newton_to_truncation: float = 0.0


class NewtonFailure(Exception):
    """A step's Newton iteration failed; ``state`` = (q, v, vd, lam, t, coef) where it stopped,
    for naming the element responsible (flexmb.solvers.diagnostics)."""

    def __init__(self, residual: float, worst: str, reason: str, reused: bool = False, state=None):
        super().__init__(reason)
        self.residual, self.worst, self.reason = residual, worst, reason
        self.reused = reused   # the failed attempt ran on a matrix kept from an earlier step
        self.state = state


TRUNCATION_SHARE = 0.1
"""Newton on an iteration matrix kept from an earlier step stops when its estimated remaining error is below this share
of the Newton error the step may leave (:func:`truncation_share`)."""

MATRIX_DRIFT = 2.0
"""A factorized iteration matrix is kept for a step whose size differs from the one it was made for by up to this
factor (adaptive steps; the matrix depends on h through ``C gamma h + K beta h^2``, and the contraction test refreshes
it when it no longer serves)."""

_ROUND_OFF = 100.0 * np.finfo(float).eps
"""The smallest change of a coordinate ``q`` Newton can resolve, relative to ``1 + |q|``."""


def truncation_share(params: AlphaParameters, h: float, span: float) -> float:
    """The factor that turns a step's first Newton increment (about the distance from the predictor to the solution)
    into the Newton error the step may leave: ``|beta - 1/6| / beta`` (the local position error of the Newmark
    update, ``(beta - 1/6) h^3 d3q/dt3``, Zienkiewicz & Xie 1991, against the constant-acceleration predictor's
    ``beta h^3 d3q/dt3``) times ``h / span`` (``span``: the run's length, s). A Newton error ``delta`` in q gives the
    velocities ``gamma/(beta h) delta``, which persists: over the ``span/h`` steps of a run it adds up to
    ``~ span^2 delta / h^2`` in q, while the local errors ``e`` add up to ``span e / h`` and more; Newton's part stays
    below the truncation error's when ``delta <= e h / span`` (docs/theory.md §5.5). 1 when ``span`` is infinite."""
    if not math.isfinite(span):
        return 1.0
    return abs(params.beta - 1.0 / 6.0) / params.beta * (h / span)


def kept_matrix_converged(err: float, theta: float, it: int, target: float) -> bool:
    """The stopping test of Newton on an iteration matrix kept from an earlier step (``err``: the weighted increment,
    ``theta``: its ratio to the one before, ``it``: the iteration, from 1; ``target``: the error the step may leave,
    in the same weighted units). The iteration then converges linearly and the remaining error is about
    ``theta/(1 - theta)`` times the increment (Hairer & Wanner, Solving ODEs II, §IV.8); the first iteration, whose
    theta is not known, never stops it."""
    return it > 1 and theta < 1.0 and theta / (1.0 - theta) * err <= target


class AlphaStepper:
    """Takes single generalized-alpha steps on an Assembly."""

    def __init__(self, asm, params: AlphaParameters, newton_tol: float = 1e-8, max_iter: int = 15,
                 reuse_matrix: bool | None = None, span: float = math.inf):
        self.asm = asm
        self.p = params
        self.tol = newton_tol
        self.span = span         # the length of the run (s): the Newton error a step may leave (truncation_share)
        self.max_iter = max_iter
        # keeping the matrix across steps pays where factorizing dominates: sparse systems
        self.reuse = (asm.nq + asm.m > DENSE_LIMIT) if reuse_matrix is None else reuse_matrix
        self.stats = StepStats()
        self._lu = None        # iteration matrix kept across steps (modified Newton)
        self._vrows = asm.nq + np.flatnonzero(asm.velocity_rows)    # velocity-constraint rows of the system
        self._lu_h = None
        # models of bodies and joints: the whole step in one compiled call (flexmb/solvers/compiled_step.py)
        self.compiled = CompiledStep(asm) if CompiledStep.qualifies(asm, self.reuse) else None
        # the others of those models (sparse, or keeping the matrix): one compiled evaluation per iteration
        self.evaluation = (CompiledEvaluation(asm) if self.compiled is None and CompiledEvaluation.qualifies(asm)
                           else None)

    def forget_matrix(self) -> None:
        self._lu = None

    def step(self, s: StepState, h: float, q_tol: np.ndarray | None = None, t1: float | None = None) -> StepState:
        """One step of size h (s) from s, ending at ``t1`` (s; ``s.t + h`` when not given: the integrator gives the
        time of its step grid, flexmb/solvers/step_times.py); raises NewtonFailure.

        Newton stops when the RMS of the increment, weighted by ``newton_tol (1 + |q|)``, is below 1;
        ``q_tol`` (absolute, per coordinate) tightens that weight where it is smaller: adaptive steps
        need the Newton error well below the local error they estimate (a third difference of
        positions, which carries the Newton error of every position it uses)."""
        t1 = s.t + h if t1 is None else t1
        if self.compiled is not None:
            out = self.compiled.step(s, t1, h, self.p, self.tol, self.max_iter, q_tol)
            if out is not None:
                q, v, vd, a, lam, iterations, factorizations = out
                self.stats.newton_iterations += iterations
                self.stats.factorizations += factorizations
                self.stats.compiled_steps += 1
                return StepState(t1, q, v, vd, a, lam)
            # not converged: the general path repeats the step and reports the failure with its diagnostics
        P, asm = self.p, self.asm
        am, af, beta, gamma = P.alpha_m, P.alpha_f, P.beta, P.gamma
        nq = asm.nq
        qp, vp, vdp = np.empty(nq), np.empty(nq), np.empty(nq)
        predict(s.q, s.v, s.vd, s.a, h, am, beta, gamma, qp, vp, vdp)
        bp = (1.0 - am) / (beta * h * h * (1.0 - af))   # d vd / d q
        gp = gamma / (beta * h)                          # d v / d q
        scale = beta * h * h
        coef = ((1.0 - am) / (1.0 - af), gamma * h, scale, scale, 0.0)
        # velocity rows B v - b = 0 with v = vp + gp (q - qp), scaled by 1/gp: rows B + (B v)_q / gp (§8)
        nh = (1.0, 1.0 / gp)
        q, lam = qp.copy(), s.lam.copy()
        v, vd = vp.copy(), vdp.copy()
        rhs = np.empty(nq + asm.m)
        kept = self._lu is not None and 1.0 / MATRIX_DRIFT <= h / self._lu_h <= MATRIX_DRIFT
        lu = self._lu if (self.reuse and kept) else None
        fresh = lu is None
        d = None
        prev = first = math.inf
        share = truncation_share(P, h, self.span)
        floor = _ROUND_OFF / self.tol          # a change of round-off size, in the weighted units of the test
        wq = np.empty(nq)
        newton_weights(qp, self.tol, np.zeros(0) if q_tol is None else q_tol, q_tol is not None,
                       _ROUND_OFF, wq)
        for it in range(1, self.max_iter + 1):
            need_matrix = lu is None
            out = (self.evaluation.residual(q, v, vd, lam, t1, coef if need_matrix else None)
                   if self.evaluation is not None else None)
            r, c, S = out if out is not None else asm.residual(q, v, vd, lam, t1, coef=coef if need_matrix else None,
                                                                nh=nh)
            self.stats.compiled_evaluations += out is not None
            here = (q, v, vd, lam, t1, coef[:3])
            if not newton_rhs(r, c.phi, scale, rhs):
                raise NewtonFailure(math.inf, self._worst(c.phi), "non-finite residual", not fresh, here)
            if self._vrows.size:
                rhs[self._vrows] /= gp
            if need_matrix:
                d = saddle_scale(S, nq, asm.inertia_scale)      # each body and constraint row in its own units
                try:
                    lu = factorize(scaled(S, d))
                except SingularMatrixError as exc:
                    raise NewtonFailure(float(np.linalg.norm(rhs)), self._worst(c.phi),
                                        f"singular iteration matrix ({exc})", state=here) from None
                self.stats.factorizations += 1
                fresh = True
                self._lu, self._lu_h, self._d = lu, h, d
            d = self._d if d is None else d
            dx = lu.solve(rhs * d) * d
            self.stats.newton_iterations += 1
            q, lam = q.copy(), lam.copy()      # the state passed to the residual stays as it was
            err = apply_increment(dx, scale, wq, q, lam)
            if not math.isfinite(err):
                raise NewtonFailure(math.inf, self._worst(c.phi), "non-finite Newton increment", not fresh, here)
            v, vd = np.empty(nq), np.empty(nq)
            corrected_rates(q, qp, vp, vdp, gp, bp, v, vd)
            theta = err / prev if it > 1 else 1.0
            first = err if it == 1 else first
            if err <= 1.0 and (fresh or err <= floor or kept_matrix_converged(
                    err, theta, it, max(TRUNCATION_SHARE * share * first, floor))):
                if not fresh and it > 1:        # the Newton error left, against the step's truncation share
                    left = theta / (1.0 - theta) * err / max(share * first, floor)
                    self.stats.newton_to_truncation = max(self.stats.newton_to_truncation, left)
                a = ((1.0 - af) * vd + af * s.vd - am * s.a) / (1.0 - am)
                return StepState(t1, q, v, vd, a, lam)
            if it > 1 and theta > 0.5:
                lu = None   # slow contraction: refresh the iteration matrix
            prev = err
        r, c, _ = asm.residual(q, v, vd, lam, t1)
        raise NewtonFailure(float(np.linalg.norm(np.concatenate([scale * r, c.phi]))), self._worst(c.phi),
                            f"no convergence in {self.max_iter} Newton iterations", not fresh,
                            (q, v, vd, lam, t1, coef[:3]))

    def _worst(self, phi: np.ndarray) -> str:
        """The most violated constraint, or "" when every constraint holds to the Newton tolerance
        (then the constraints are not what failed, and the element diagnostics name the culprit)."""
        if phi.size == 0:
            return ""
        k = int(np.argmax(np.abs(phi)))
        if not abs(phi[k]) > self.tol:
            return ""
        return f"{self.asm.labels[k]} (|Phi| = {abs(phi[k]):.3e})"

    def error_norm(self, s0: StepState, s1: StepState, recent, h: float, rtol: float, atol: float,
                   scale: np.ndarray, span: float) -> float:
        """Local error of the step s0 -> s1 against its share of the run's tolerance (<= 1 accepts it).

        The local position error of the Newmark-type update is ``(beta - 1/6) h^3 d3q/dt3``
        (Zienkiewicz & Xie 1991). The third derivative is taken as 6 times the third divided
        difference of the positions at the last three accepted times ``recent`` (pairs ``(t, q)``)
        and the new one: positions carry none of the spurious oscillation that the index-3 scheme
        leaves in velocities and accelerations after a change of step size, which would otherwise
        feed the step control (Arnold & Bruls 2007, §4). With fewer than three past points the
        acceleration difference ``h^2 |vd_{n+1} - vd_n|`` stands in for ``h^3 d3q/dt3``.
        The error is held per unit step, ``|e_i| <= (atol + rtol scale_i) h / span`` for every
        coordinate (max norm), with ``span`` the length of the run (s) and ``scale`` from
        :class:`ErrorScale`: local errors that add up over the run then stay below
        ``atol + rtol scale``, and the global error of this second-order method falls in proportion
        to rtol (docs/guide.md §3, "What rtol means").
        """
        c = abs(self.p.beta - 1.0 / 6.0)
        if len(recent) >= 3:
            t = [p[0] for p in recent] + [s1.t]
            d = [p[1] for p in recent] + [s1.q]
            for order in range(1, 4):          # Newton's divided differences
                d = [(d[k + 1] - d[k]) / (t[k + order] - t[k]) for k in range(len(d) - 1)]
            e = c * h ** 3 * 6.0 * np.abs(d[0])
        else:
            e = c * h * h * np.abs(s1.vd - s0.vd)
        w = (atol + rtol * scale) * (h / span)
        return float(np.max(e / w, initial=0.0))


class ErrorScale:
    """Scale of each coordinate in the adaptive error test (``AlphaStepper.error_norm``).

    Euler parameters: 1 (an error of e in p is a rotation of about 2e rad). Frame translations: the
    largest |translation| of any body so far, one length scale for the whole model, so a body that
    starts at the origin is not held to ``atol``. Modal amplitudes and element states (motor
    charges): the largest |q_i| so far.
    """

    def __init__(self, asm, q0: np.ndarray):
        self.euler = np.zeros(asm.nq, dtype=bool)
        self.translation = np.zeros(asm.nq, dtype=bool)
        for b in asm.system.bodies:
            self.translation[b.offset:b.offset + 3] = True
            self.euler[b.offset + 3:b.offset + 7] = True
        self.other = ~(self.euler | self.translation)
        self.scale = np.where(self.euler, 1.0, 0.0)
        self.update(q0)

    def update(self, q: np.ndarray) -> np.ndarray:
        """Include the state ``q``; returns the scale array (nq,)."""
        length = float(np.max(np.abs(q[self.translation]), initial=0.0))
        self.scale[self.translation] = np.maximum(self.scale[self.translation], length)
        self.scale[self.other] = np.maximum(self.scale[self.other], np.abs(q[self.other]))
        return self.scale


def failure_error(exc: NewtonFailure, t: float, h: float, asm=None) -> ConvergenceError:
    """The ConvergenceError for a step that failed at every step size down to ``h_min``: names the
    most violated constraint, or, when the constraints hold, the element that dominates."""
    culprit = ""
    if asm is not None and exc.state is not None:
        from .diagnostics import culprit_text
        culprit = culprit_text(asm, *exc.state)
    worst = exc.worst or culprit or "(no constraint violated)"
    detail = f"worst constraint: {exc.worst}" if exc.worst else "the constraints hold"
    if culprit:
        detail += f"; {culprit}"
    return ConvergenceError(
        f"Newton iteration failed at t = {t:.6g} s with step size h = {h:.3g} s after step-size retries: "
        f"{exc.reason}; residual norm {exc.residual:.3e}; {detail}",
        time=t, step=h, residual=exc.residual, worst=worst)
