"""Vectorized evaluation of constraint primitives, one call per primitive kind.

For all rows of one kind the kernel returns the residual ``Phi``, its gradient
(rows, 14) in the coordinates of the body pair, the acceleration right-hand side
``gamma = -(Phi_q v)_q v - 2 Phi_qt v - Phi_tt`` and the multiplier-weighted
Hessian ``sum lambda_k d2 Phi_k/dq2`` (instances, 14, 14) that enters Newton's
matrix (docs/theory.md §2-3).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import kinematics as kin
from ..kinematics import NX, PairState
from .base import Primitive

ROWS = {"point": 3, "dot1": 1, "dot2": 1, "distance": 1, "angle": 1, "coordinate": 1}
GROUND_Q = np.array([0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0])


def pair_columns(bodies_i, bodies_j, nq: int) -> tuple[np.ndarray, np.ndarray]:
    """Gather indices (n, 14) into the extended coordinate vector ``[q, ground]``
    and scatter indices with -1 where a column belongs to the ground."""
    def cols(bodies):
        out = np.empty((len(bodies), 7), dtype=np.int64)
        for k, b in enumerate(bodies):
            out[k] = (b.offset if b.ncoord else nq) + np.arange(7)
        return out
    gather = np.concatenate([cols(bodies_i), cols(bodies_j)], axis=1)
    scatter = np.where(gather >= nq, -1, gather)
    return gather, scatter


def extend(q: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Append the ground's fixed coordinates (and zero velocities)."""
    return np.concatenate([q, GROUND_Q]), np.concatenate([v, np.zeros(7)])


@dataclass
class RowEval:
    phi: np.ndarray      # (rows,)
    jac: np.ndarray      # (rows, 14)
    gamma: np.ndarray    # (rows,)
    phi_t: np.ndarray    # (rows,)
    hess: object         # callable: lam (rows,) -> (instances, 14, 14)


class PrimitiveGroup:
    """All primitives of one kind in the system."""

    def __init__(self, kind: str, prims: list[Primitive], row0: int, nq: int):
        self.kind = kind
        self.prims = prims
        self.n = len(prims)
        self.r = ROWS[kind]
        self.rows = row0 + np.arange(self.n * self.r)
        self.gather, self.scatter = pair_columns([p.body_i for p in prims], [p.body_j for p in prims], nq)
        self.labels = []
        for p in prims:
            self.labels += [p.label] if self.r == 1 else [f"{p.label} ({c})" for c in "xyz"]
        names = {"point": ("u_i", "u_j"), "dot1": ("a_i", "a_j"), "dot2": ("a_i", "u_i", "u_j"),
                 "distance": ("u_i", "u_j"), "angle": ("f_i", "g_i", "f_j"), "coordinate": ()}[kind]
        self.vec = {k: np.array([p.vectors[k] for p in prims], dtype=float).reshape(self.n, 3) for k in names}
        self.scalar = np.array([p.scalar for p in prims], dtype=float)
        self.driven = np.array([k for k, p in enumerate(prims) if p.driver is not None], dtype=np.int64)
        self.drivers = [prims[k].driver for k in self.driven]

    def driver_terms(self, t: float):
        """f, f', f'' of every driven instance (one call per user function)."""
        f = np.array([d.value(t) for d in self.drivers])
        return f, np.array([d.rate(t) for d in self.drivers]), np.array([d.acceleration(t) for d in self.drivers])

    def evaluate(self, qe: np.ndarray, ve: np.ndarray, t: float) -> RowEval:
        s = PairState(qe[self.gather], ve[self.gather])
        phi_t = np.zeros(self.n * self.r)
        fdd = np.zeros(self.n)
        f = np.zeros(self.n)
        if self.driven.size:
            fv, fd, fa = self.driver_terms(t)
            f[self.driven], phi_t[self.driven], fdd[self.driven] = fv, -fd, fa
        v = self.vec
        if self.kind == "point":
            d = kin.separation(s, v["u_i"], v["u_j"])
            return RowEval(d.val.reshape(-1), d.jac.reshape(-1, NX), -d.quad.reshape(-1), phi_t,
                           lambda lam: d.hess(lam.reshape(-1, 3)))
        if self.kind == "coordinate":
            k = 7 + self.scalar.astype(np.int64)
            jac = np.zeros((self.n, NX))
            jac[np.arange(self.n), k] = 1.0
            return RowEval(s.x[np.arange(self.n), k] - f, jac, fdd, phi_t,
                           lambda lam: np.zeros((self.n, NX, NX)))
        if self.kind == "dot1":
            e = kin.dot(kin.body_vector(s, 0, v["a_i"]), kin.body_vector(s, 1, v["a_j"]), s.xd)
        elif self.kind == "dot2":
            e = kin.dot(kin.body_vector(s, 0, v["a_i"]), kin.separation(s, v["u_i"], v["u_j"]), s.xd)
        elif self.kind == "distance":
            d = kin.separation(s, v["u_i"], v["u_j"])
            half = kin.dot(d, d, s.xd)
            e = kin.Scalar(0.5 * (half.val - self.scalar ** 2), 0.5 * half.jac, 0.5 * half.quad,
                           lambda lam: half.hess(0.5 * lam))
        else:  # angle: theta unwrapped about the prescribed value f(t)
            fi, gi, fj = (kin.body_vector(s, 0, v["f_i"]), kin.body_vector(s, 0, v["g_i"]),
                          kin.body_vector(s, 1, v["f_j"]))
            e = kin.angle(kin.dot(gi, fj, s.xd), kin.dot(fi, fj, s.xd), f, s.xd)
        return RowEval(e.val - f, e.jac, fdd - e.quad, phi_t, e.hess)


def build_groups(prims: list[Primitive], row0: int, nq: int) -> list[PrimitiveGroup]:
    """Group primitives by kind; rows are numbered kind by kind from ``row0``."""
    groups = []
    for kind in ROWS:
        sel = [p for p in prims if p.kind == kind]
        if sel:
            g = PrimitiveGroup(kind, sel, row0, nq)
            groups.append(g)
            row0 += g.n * g.r
    return groups
