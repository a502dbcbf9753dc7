"""The compiled step of rigid multibody models: which models qualify, and the arrays it runs on.

:class:`CompiledRigidStep` packs a compiled model's rigid bodies, joint primitives and the position maps of
its Newton-matrix pattern once, and then takes a whole generalized-alpha step in one compiled call
(:func:`flexmb.compiled.rigid_step.alpha_step`). A model qualifies when it has only rigid bodies, joint
primitives between them (drivers included), gravity and no force elements or velocity constraints, and
its iteration matrix is small enough for the dense path (``nq + m <= DENSE_LIMIT``). Everything else takes
the general step of :class:`~flexmb.solvers.generalized_alpha.AlphaStepper`; a step the compiled call does
not converge is taken again there, which raises the failure with its diagnostics.
"""
from __future__ import annotations

import numpy as np

from ..bodies.rigid import RigidBody
from ..joints.kernels import ROWS, SLOTS
from .linalg import DENSE_LIMIT

__all__ = ["CompiledRigidStep", "StepBlock"]


class StepBlock:
    """States of consecutive accepted steps taken in one compiled call: row k of ``t`` (s), ``q``, ``v``,
    ``vd``, ``lam`` is the state after step k, ``power`` the driver power there (W), ``off`` the largest
    |Phi| of the rows switched off as redundant; ``failed``: the attempt after the last row did not
    converge (the caller takes that step on the general path)."""

    def __init__(self, n, t, q, v, vd, lam, a_last, power, off, failed):
        self.n, self.t, self.q, self.v, self.vd, self.lam = n, t, q, v, vd, lam
        self.a_last, self.power, self.off, self.failed = a_last, power, off, failed


class CompiledRigidStep:
    """The arrays of one rigid model for :func:`~flexmb.compiled.rigid_step.alpha_step`."""

    def __init__(self, asm):
        self.asm = asm
        pat, h = asm.pattern, asm._h
        dense = pat.dense_positions
        rigid = asm.rigid
        self.body = (rigid.idx, rigid.m, rigid.J, rigid.gravity, dense[h["body"]])
        kinds = list(ROWS)
        groups = asm.groups
        P = sum(g.n for g in groups)
        self.gather = np.zeros((P, 14), dtype=np.int64)
        self.scatter = np.zeros((P, 14), dtype=np.int64)
        self.u0 = np.zeros((P, 3, 3))
        self.S = np.zeros((P, 3, 3, 0))
        self.drive = np.zeros((3, P))
        self.seg = np.zeros((6, 2), dtype=np.int64)
        self.rowseg = np.zeros((6, 2), dtype=np.int64)
        self._drivers = []        # (group, columns of drive) of groups with driven instances
        start = row = 0
        for g in groups:
            k = kinds.index(g.kind)
            sl = slice(start, start + g.n)
            self.gather[sl], self.scatter[sl] = g.gather, g.scatter
            self.u0[sl, :len(SLOTS[g.kind])] = g.u0
            self.drive[:, sl] = g.drive
            self.seg[k] = (start, start + g.n)
            self.rowseg[k] = (row, row + g.n * g.r)
            if g.drivers:
                self._drivers.append((g, start + g.driven))
            start += g.n
            row += g.n * g.r
        cat = np.concatenate
        empty = np.zeros(0, dtype=np.int64)
        self.joint_positions = (cat([dense[x] for x in h["jac"]] or [empty]),
                                cat([dense[x] for x in h["jacT"]] or [empty]),
                                cat([dense[x] for x in h["hess"]] or [empty]))
        self.norm = (asm.norm.cols, dense[h["norm_jac"]], dense[h["norm_jacT"]], dense[h["norm_hess"]],
                     dense[h["D"]])
        self.driven = np.concatenate([cols for _, cols in self._drivers] or [empty])
        self.driver_rows = np.flatnonzero(asm.driver_rows).astype(np.int64)
        self._static = (*self.body, self.gather, self.scatter, self.u0, self.S, self.drive, self.seg, self.rowseg,
                        *self.joint_positions, *self.norm)
        from ..compiled import rigid_step
        self._kernel = rigid_step.alpha_step
        self._run = rigid_step.alpha_run
        self.CONVERGED = rigid_step.CONVERGED
        self.stats = np.zeros(3)

    @staticmethod
    def qualifies(asm, reuse_matrix: bool) -> bool:
        """Whether a compiled model can take the compiled rigid step (see the module's docstring)."""
        s = asm.system
        return (not reuse_matrix and asm.nq + asm.m <= DENSE_LIMIT and not s.forces
                and all(isinstance(b, RigidBody) for b in s.bodies) and not asm.flexible
                and asm.nonholonomic.m == 0 and not asm.interface_loads
                and all(g.n_modes == (0, 0) for g in asm.groups)
                and len({g.kind for g in asm.groups}) == len(asm.groups))

    def step(self, s, h: float, params, tol: float, max_iter: int, q_tol):
        """The step of size h from state ``s`` as ``(q, v, vd, a, lam, iterations, factorizations)``, or
        None when its Newton iteration fails (the caller repeats it on the general path)."""
        t1 = s.t + h
        for g, cols in self._drivers:
            f, _, fa = g.driver_terms(t1)
            self.drive[0, cols], self.drive[1, cols] = f, fa
        nq, m = s.q.size, s.lam.size
        q, v, vd, a, lam = np.empty(nq), np.empty(nq), np.empty(nq), np.empty(nq), np.empty(m)
        use_q_tol = q_tol is not None
        code = self._kernel(s.q, s.v, s.vd, s.a, s.lam, h, params.alpha_m, params.alpha_f, params.beta,
                            params.gamma, tol, q_tol if use_q_tol else s.q, use_q_tol, max_iter,
                            self.asm.active, *self._static, q, v, vd, a, lam, self.stats)
        if code != self.CONVERGED:
            return None
        return q, v, vd, a, lam, int(self.stats[0]), int(self.stats[1])

    def run(self, s, n: int, t_end: float, h: float, h_max: float, params, tol: float, max_iter: int,
            energy: bool) -> tuple[StepBlock, int, int]:
        """Up to ``n`` fixed steps from state ``s`` in one compiled call, with the step sizes of
        ``AlphaIntegrator`` (``min(h, h_max, t_end - t)``); returns the block, Newton iterations and
        factorizations. The drivers' functions are evaluated here, at the end times of the steps."""
        times, t = [], s.t
        done = t_end - 1e-12 * max(1.0, abs(t_end))
        while len(times) < n and t < done:
            t = t + min(h, h_max, t_end - t)
            times.append(t)
        values = np.zeros((len(times), 2, self.driven.size))
        for k, tk in enumerate(times if self.driven.size else ()):
            try:
                values[k, 0], values[k, 1] = np.concatenate([g.driver_terms(tk)[::2] for g, _ in self._drivers],
                                                            axis=1)
            except Exception:    # noqa: BLE001 - a driver that fails at t_k: the block ends before that step,
                del times[k:]    # and the general step raises the driver's error there
                break
        n = len(times)
        nq, m = s.q.size, s.lam.size
        out = (np.empty(n), np.empty((n, nq)), np.empty((n, nq)), np.empty((n, nq)), np.empty((n, m)), np.empty(n),
               np.empty(n))
        a_last = s.a.copy()
        off_rows = np.flatnonzero(~self.asm.active).astype(np.int64)
        self.stats[:] = 0.0
        k, code = self._run(n, s.t, t_end, h, h_max, s.q, s.v, s.vd, s.a, s.lam, params.alpha_m, params.alpha_f,
                            params.beta, params.gamma, tol, max_iter, self.asm.active, self.driven, values,
                            self.driver_rows, energy, off_rows, *self._static, *out, a_last, self.stats)
        block = StepBlock(k, *(x[:k] for x in out[:5]), a_last, out[5][:k], out[6][:k], code != self.CONVERGED)
        return block, int(self.stats[0]), int(self.stats[1])
