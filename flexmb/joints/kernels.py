"""Vectorized evaluation of constraint primitives, one call per primitive kind.

For all rows of one kind (and one pair of modal-coordinate counts) the kernel
returns the residual ``Phi``, its gradient (rows, nx) in the coordinates of the
body pair (14 frame coordinates, then the modal ones of flexible bodies), the acceleration right-hand side
``gamma = -(Phi_q v)_q v - 2 Phi_qt v - Phi_tt`` and the multiplier-weighted
Hessian ``sum lambda_k d2 Phi_k/dq2`` (instances, nx, nx) that enters Newton's
matrix (docs/theory.md §2-3).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import kinematics as kin
from ..kinematics import PairState
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


@dataclass
class RowEval:
    """Values of one primitive group at a state: ``phi`` (m or rad), ``jac``, ``gamma``, ``phi_t`` and the
    Hessian callable ``hess(lam)``."""

    phi: np.ndarray      # (rows,)
    jac: np.ndarray      # (rows, 14)
    gamma: np.ndarray    # (rows,)
    phi_t: np.ndarray    # (rows,)
    hess: object         # callable: lam (rows,) -> (instances, 14, 14)


class PrimitiveGroup:
    """All primitives of one kind (and one pair of modal counts) in the system."""

    def __init__(self, kind: str, prims: list[Primitive], row0: int, nq: int):
        self.kind = kind
        self.prims = prims
        self.n = len(prims)
        self.r = ROWS[kind]
        self.rows = row0 + np.arange(self.n * self.r)
        self.n_modes = modal_counts(prims[0])
        self.gather, self.scatter = pair_columns([p.body_i for p in prims], [p.body_j for p in prims], nq)
        self.labels = []
        for p in prims:
            self.labels += [p.label] if self.r == 1 else [f"{p.label} ({c})" for c in "xyz"]
        names = {"point": ("u_i", "u_j"), "dot1": ("a_i", "a_j"), "dot2": ("a_i", "u_i", "u_j"),
                 "distance": ("u_i", "u_j"), "angle": ("f_i", "g_i", "f_j"), "coordinate": ()}[kind]
        self.vec = {k: np.array([p.vectors[k] for p in prims], dtype=float).reshape(self.n, 3) for k in names}
        self.shape = stack_shapes(prims, names, self.n_modes)
        self.scalar = np.array([p.scalar for p in prims], dtype=float)
        self.driven = np.array([k for k, p in enumerate(prims) if p.driver is not None], dtype=np.int64)
        self.drivers = [prims[k].driver for k in self.driven]

    def driver_terms(self, t: float):
        """f, f', f'' of every driven instance (one call per user function)."""
        f = np.array([d.value(t) for d in self.drivers])
        return f, np.array([d.rate(t) for d in self.drivers]), np.array([d.acceleration(t) for d in self.drivers])

    def evaluate(self, qe: np.ndarray, ve: np.ndarray, t: float) -> RowEval:
        """Residual, Jacobian, ``gamma`` and ``Phi_t`` of all rows of this group at one state, with the
        multiplier-weighted Hessian as a callable (docs/theory.md §2-3)."""
        s = PairState(qe[self.gather], ve[self.gather], *self.n_modes)
        phi_t = np.zeros(self.n * self.r)
        fdd = np.zeros(self.n)
        f = np.zeros(self.n)
        if self.driven.size:
            fv, fd, fa = self.driver_terms(t)
            f[self.driven], phi_t[self.driven], fdd[self.driven] = fv, -fd, fa
        v, S = self.vec, self.shape
        if self.kind == "point":
            d = kin.separation(s, v["u_i"], v["u_j"], S["u_i"], S["u_j"])
            return RowEval(d.val.reshape(-1), d.jac.reshape(-1, s.nx), -d.quad.reshape(-1), phi_t,
                           lambda lam: d.hess(lam.reshape(-1, 3)))
        if self.kind == "coordinate":
            k = 7 + self.scalar.astype(np.int64)
            jac = np.zeros((self.n, s.nx))
            jac[np.arange(self.n), k] = 1.0
            return RowEval(s.x[np.arange(self.n), k] - f, jac, fdd, phi_t,
                           lambda lam: np.zeros((self.n, s.nx, s.nx)))
        if self.kind == "dot1":
            e = kin.dot(kin.body_vector(s, 0, v["a_i"], S["a_i"]), kin.body_vector(s, 1, v["a_j"], S["a_j"]), s.xd)
        elif self.kind == "dot2":
            e = kin.dot(kin.body_vector(s, 0, v["a_i"], S["a_i"]),
                        kin.separation(s, v["u_i"], v["u_j"], S["u_i"], S["u_j"]), s.xd)
        elif self.kind == "distance":
            d = kin.separation(s, v["u_i"], v["u_j"], S["u_i"], S["u_j"])
            half = kin.dot(d, d, s.xd)
            e = kin.Scalar(0.5 * (half.val - self.scalar ** 2), 0.5 * half.jac, 0.5 * half.quad,
                           lambda lam: half.hess(0.5 * lam))
        else:  # angle: theta unwrapped about the prescribed value f(t)
            fi, gi, fj = (kin.body_vector(s, 0, v["f_i"], S["f_i"]), kin.body_vector(s, 0, v["g_i"], S["g_i"]),
                          kin.body_vector(s, 1, v["f_j"], S["f_j"]))
            e = kin.angle(kin.dot(gi, fj, s.xd), kin.dot(fi, fj, s.xd), f, s.xd)
        return RowEval(e.val - f, e.jac, fdd - e.quad, phi_t, e.hess)


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
