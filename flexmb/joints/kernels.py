"""Evaluation of constraint primitives, one compiled call per primitive kind.

For all rows of one kind (and one pair of modal-coordinate counts) one numba kernel
(flexmb/compiled/joints.py, loaded with the first assembled model, not at ``import flexmb``)
returns the residual ``Phi``, its gradient (rows, nx) in the coordinates of the
body pair (14 frame coordinates, then the modal ones of flexible bodies), the acceleration right-hand side
``gamma = -(Phi_q v)_q v - 2 Phi_qt v - Phi_tt``; a second kernel returns the multiplier-weighted
Hessian ``sum lambda_k d2 Phi_k/dq2`` (instances, nx, nx) that enters Newton's
matrix (docs/theory.md §2-3). Both loop over the instances and build each row from the pair
expressions of :mod:`flexmb.compiled.pairs`.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import numpy as np
from .base import Primitive

ROWS = {"point": 3, "dot1": 1, "dot2": 1, "distance": 1, "angle": 1, "coordinate": 1}
GROUND_Q = np.array([0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0])


def pair_columns(bodies_i, bodies_j, nq: int) -> tuple[np.ndarray, np.ndarray]:
    """Gather indices (n, 14 + m_i + m_j) into the extended coordinate vector
    ``[q, ground]`` and scatter indices with -1 where a column belongs to the
    ground. Frame coordinates of both bodies come first, then the modal ones
    (all instances must have the same modal counts ``m_i``, ``m_j``)."""
    def cols(bodies):
        out = np.empty((len(bodies), 7), dtype=np.int64)
        for k, b in enumerate(bodies):
            out[k] = (b.offset if b.ncoord else nq) + np.arange(7)
        return out

    def modal(bodies):
        m = {b.n_modes for b in bodies}
        if len(m) > 1:
            raise ValueError("pair_columns: bodies of one group must have equal modal counts")
        return np.array([b.offset + 7 + np.arange(b.n_modes) for b in bodies], dtype=np.int64).reshape(len(bodies), -1)

    gather = np.concatenate([cols(bodies_i), cols(bodies_j), modal(bodies_i), modal(bodies_j)], axis=1)
    scatter = np.where(gather >= nq, -1, gather)
    return gather, scatter


def modal_counts(prim) -> tuple[int, int]:
    """``(m_i, m_j)`` of a primitive's bodies: groups are formed per kind and counts."""
    return prim.body_i.n_modes, prim.body_j.n_modes


def stack_shapes(prims, names, n_modes: tuple[int, int]) -> dict[str, np.ndarray]:
    """Attachment shapes ``S`` (n, 3, m_side) of the named body-fixed vectors
    (``*_i`` on body i, ``*_j`` on body j); zero where a primitive has none."""
    out = {}
    for k in names:
        m = n_modes[1] if k.endswith("_j") else n_modes[0]
        if m == 0:
            out[k] = None
            continue
        out[k] = np.array([p.shapes.get(k, np.zeros((3, m))) for p in prims], dtype=float).reshape(len(prims), 3, m)
    return out


def extend(q: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Append the ground's fixed coordinates (and zero velocities)."""
    return np.concatenate([q, GROUND_Q]), np.concatenate([v, np.zeros(7)])


# Body-fixed vectors of each kind, as (name, side): the slots of PrimitiveGroup.u0 and .S.
SLOTS = {"point": (("u_i", 0), ("u_j", 1)), "dot1": (("a_i", 0), ("a_j", 1)),
         "dot2": (("a_i", 0), ("u_i", 0), ("u_j", 1)), "distance": (("u_i", 0), ("u_j", 1)),
         "angle": (("f_i", 0), ("g_i", 0), ("f_j", 1)), "coordinate": ()}


@dataclass(slots=True)
class RowEval:
    """Values of one primitive group at a state: ``phi`` (m or rad), ``jac``, ``gamma``, ``phi_t`` and the
    Hessian callable ``hess(lam)``."""

    phi: np.ndarray      # (rows,)
    jac: np.ndarray      # (rows, nx)
    gamma: np.ndarray    # (rows,)
    phi_t: np.ndarray    # (rows,)
    hess: object         # callable: lam (rows,) -> (instances, nx, nx)


class PrimitiveGroup:
    """All primitives of one kind (and one pair of modal counts) in the system."""

    @staticmethod
    def pack_compiled(groups: list) -> tuple:
        """The joint primitive groups' part of the compiled model (flexmb/compiled/model.py ``Joints``) from
        ``[(group, (positions of its Jacobian, of its transpose, of its Hessian)), ...]``: the arrays flat and
        concatenated, the drivers' f, f'' and constant in ``drive`` (group g's block ``drive[3 first:3 (first +
        n)]``). A group whose attachment shapes are all zero (a joint at a beam's held root) runs on the 14 frame
        columns: its rows have zero modal columns (the same arithmetic, the zeros left out)."""
        from ..compiled.model import JointKinds, JointTable, Joints, concat, int_table
        kinds = list(ROWS)
        rows, gather, scatter, u0, S, drive, pos_jac, pos_jacT, pos_hess = [], [], [], [], [], [], [], [], []
        og = ou = os_ = dc = oj = oh = 0
        for g, (hj, hjT, hh) in groups:
            n, nx, sm, mi = g.n, g.nx, g.S.shape[3], g.n_modes[0]
            keep = np.arange(nx)
            if g.kind != "coordinate" and sm and not g.S.any():
                keep, nx, sm, mi = keep[:14], 14, 0, 0
            pos_jac.append(hj.reshape(n * g.r, -1)[:, keep].reshape(-1))
            pos_jacT.append(hjT.reshape(n * g.r, -1)[:, keep].reshape(-1))
            pos_hess.append(hh.reshape(n, g.nx, g.nx)[:, keep][:, :, keep].reshape(-1))
            rows.append((kinds.index(g.kind), n, g.r, nx, mi, sm, og, ou, os_, dc, int(g.rows[0]), oj, oh))
            gather.append(g.gather[:, keep].reshape(-1))
            scatter.append(g.scatter[:, keep].reshape(-1))
            slots = len(SLOTS[g.kind])
            u = np.zeros((n, 3, 3))
            u[:, :slots] = g.u0
            s = np.zeros((n, 3, 3, sm))
            s[:, :slots] = g.S[..., :sm]
            u0.append(u.reshape(-1))
            S.append(s.reshape(-1))
            drive.append(g.drive.reshape(-1))      # f, f'', constant: each (n,)
            og, ou, os_, dc = og + n * nx, ou + 9 * n, os_ + 9 * n * sm, dc + n
            oj, oh = oj + n * g.r * nx, oh + n * nx * nx
        i8, f8 = np.int64, np.float64
        return Joints(int_table(JointTable, rows), concat(gather, i8), concat(scatter, i8), concat(u0, f8),
                      concat(S, f8), concat(drive, f8), concat(pos_jac, i8), concat(pos_jacT, i8),
                      concat(pos_hess, i8), JointKinds(*(1,) * len(kinds)))

    def __init__(self, kind: str, prims: list[Primitive], row0: int, nq: int):
        self.kind = kind
        self.prims = prims
        self.n = len(prims)
        self.r = ROWS[kind]
        self.rows = row0 + np.arange(self.n * self.r)
        self.n_modes = modal_counts(prims[0])
        self.gather, self.scatter = pair_columns([p.body_i for p in prims], [p.body_j for p in prims], nq)
        self.nx = self.gather.shape[1]
        self.labels = []
        for p in prims:
            self.labels += [p.label] if self.r == 1 else [f"{p.label} ({c})" for c in "xyz"]
        slots = SLOTS[kind]
        self.u0 = np.zeros((self.n, len(slots), 3))
        self.S = np.zeros((self.n, len(slots), 3, max(self.n_modes)))
        for k, p in enumerate(prims):
            for s, (name, side) in enumerate(slots):
                self.u0[k, s] = p.vectors[name]
                if name in p.shapes:
                    self.S[k, s, :, :self.n_modes[side]] = p.shapes[name]
        # f(t), f''(t) (filled per call for driven instances) and the constant of each instance
        self.drive = np.zeros((3, self.n))
        self.drive[2] = [p.scalar for p in prims]
        self.driven = np.array([k for k, p in enumerate(prims) if p.driver is not None], dtype=np.int64)
        self.drivers = [prims[k].driver for k in self.driven]
        from ..compiled.joints import KERNELS
        self._rows_kernel, self._hess_kernel = KERNELS[kind]
        self._m_i = self.n_modes[0]
        self._nr = self.n * self.r
        self._jac_shape, self._hess_shape = (self._nr, self.nx), (self.n, self.nx, self.nx)
        self._phi_t = np.zeros(self._nr)          # Phi_t of a group without drivers (shared, read-only)
        self._phi_t.flags.writeable = False

    def driver_terms(self, t: float):
        """f, f', f'' of every driven instance (one call per user function)."""
        f = np.array([d.value(t) for d in self.drivers])
        return f, np.array([d.rate(t) for d in self.drivers]), np.array([d.acceleration(t) for d in self.drivers])

    def evaluate(self, qe: np.ndarray, ve: np.ndarray, t: float) -> RowEval:
        """Residual, Jacobian, ``gamma`` and ``Phi_t`` of all rows of this group at one state, with the
        multiplier-weighted Hessian as a callable (docs/theory.md §2-3). ``qe``, ``ve``: the extended
        vectors of :func:`extend` (float64, C-contiguous; ``hess`` keeps a reference to ``qe``)."""
        phi_t = self._phi_t
        if self.drivers:
            f, fd, fa = self.driver_terms(t)
            self.drive[0, self.driven], self.drive[1, self.driven] = f, fa
            phi_t = np.zeros(self._nr)
            phi_t[self.driven] = -fd
        phi, jac, gamma = np.empty(self._nr), np.empty(self._jac_shape), np.empty(self._nr)
        self._rows_kernel(qe, ve, self.gather, self.u0, self.S, self._m_i, self.drive, phi, jac, gamma)
        return RowEval(phi, jac, gamma, phi_t, partial(self.hessian, qe))

    def hessian(self, qe: np.ndarray, lam: np.ndarray) -> np.ndarray:
        """``sum_k lam_k d2 Phi_k/dx2`` (n, nx, nx) at coordinates ``qe`` for multipliers ``lam`` (n r,)."""
        H = np.empty(self._hess_shape)
        self._hess_kernel(qe, self.gather, self.u0, self.S, self._m_i, lam, H)
        return H


def build_groups(prims: list[Primitive], row0: int, nq: int) -> list[PrimitiveGroup]:
    """Group primitives by kind and modal counts; rows are numbered group by group from ``row0``."""
    groups = []
    for kind in ROWS:
        of_kind = [p for p in prims if p.kind == kind]
        for counts in sorted({modal_counts(p) for p in of_kind}):
            sel = [p for p in of_kind if modal_counts(p) == counts]
            g = PrimitiveGroup(kind, sel, row0, nq)
            groups.append(g)
            row0 += g.n * g.r
    return groups
