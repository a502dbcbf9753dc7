"""Batched kinematic expressions between two bodies, with exact derivatives.

Every joint row and every two-body force element is built from a few
expressions of the coordinates of a body pair ``(i, j)``. Each body contributes
its frame coordinates ``(r, p)`` and, when flexible, ``m`` modal coordinates
``eta``; an expression over a pair is a function of
``x = (r_i, p_i, r_j, p_j, eta_i, eta_j)`` (14 + m_i + m_j coordinates). A
body-fixed point or vector of a flexible body is affine in its modal
coordinates, ``u = u0 + S eta`` (S: (3, m), the mode shapes at an attachment,
docs/theory-flexible.md §3). For ``n`` instances at once an expression carries

* ``val``  value, (n,) for scalars or (n, 3) for vectors;
* ``jac``  gradient d val/dx, (n, nx) or (n, 3, nx);
* ``quad`` the velocity-quadratic part of the second time derivative,
  ``xd^T (d2 val/dx2) xd`` (the acceleration right-hand side ``gamma``);
* ``hess(w)`` the weighted Hessian ``sum_k w_k d2 val_k/dx2``, (n, nx, nx).

The closed forms rest on ``w . A(p) u = p^T Q(w, u) p - w . u`` (rotations.Q),
see docs/theory.md §2.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from . import rotations as rot

NX = 14  # frame coordinates of a body pair: r_i(3) p_i(4) r_j(3) p_j(4); modal ones follow
_PI = slice(3, 7)
_PJ = slice(10, 14)


@dataclass
class PairState:
    """Coordinates and velocities of ``n`` body pairs (ground = fixed identity frame).

    Columns: ``r_i, p_i, r_j, p_j`` (14), then ``m_i`` modal coordinates of body
    i and ``m_j`` of body j.
    """

    x: np.ndarray    # (n, 14 + m_i + m_j)
    xd: np.ndarray
    m_i: int = 0
    m_j: int = 0

    def __post_init__(self):
        self._A = [None, None]

    def A(self, side: int) -> np.ndarray:
        """Rotation matrices of one side, computed once per state."""
        if self._A[side] is None:
            self._A[side] = rot.A(self.p(side))
        return self._A[side]

    @property
    def n(self) -> int:
        return self.x.shape[0]

    @property
    def nx(self) -> int:
        return self.x.shape[1]

    def modal(self, side: int) -> slice:
        """Columns of the modal coordinates of one side."""
        return slice(NX, NX + self.m_i) if side == 0 else slice(NX + self.m_i, NX + self.m_i + self.m_j)

    def r(self, side: int) -> np.ndarray:
        return self.x[:, 7 * side:7 * side + 3]

    def p(self, side: int) -> np.ndarray:
        return self.x[:, 7 * side + 3:7 * side + 7]

    def pd(self, side: int) -> np.ndarray:
        return self.xd[:, 7 * side + 3:7 * side + 7]


@dataclass
class Vec:
    """A vector expression (n, 3) with Jacobian, quadratic rate and weighted Hessian."""

    val: np.ndarray
    jac: np.ndarray
    quad: np.ndarray
    hess: Callable[[np.ndarray], np.ndarray]

    def rate(self, xd: np.ndarray) -> np.ndarray:
        """First time derivative ``jac @ xd``."""
        return np.einsum("nkx,nx->nk", self.jac, xd)


@dataclass
class Scalar:
    """A scalar expression (n,) with gradient, quadratic rate and weighted Hessian."""

    val: np.ndarray
    jac: np.ndarray
    quad: np.ndarray
    hess: Callable[[np.ndarray], np.ndarray]

    def rate(self, xd: np.ndarray) -> np.ndarray:
        return np.einsum("nx,nx->n", self.jac, xd)


def _empty_hess(s: PairState) -> np.ndarray:
    return np.zeros((s.n, s.nx, s.nx))


class _Attached:
    """``A(p) u`` with ``u = u0 + S eta`` on one side of a pair: value, Jacobian
    blocks, quadratic rate and Hessian blocks (docs/theory-flexible.md §3).

    ``d(A u)/dp = B(p, u)``, ``d(A u)/deta = A S``; the velocity-quadratic part of
    the second rate is ``pd^T (d2 A u/dp2) pd + 2 B(p, S eta_dot) pd``; the weighted
    Hessian has ``pp = 2 Q(w, u)`` and ``p eta_k = B(p, S_k)^T w``.
    """

    def __init__(self, s: PairState, side: int, u0: np.ndarray, S: np.ndarray | None):
        self.s, self.side = s, side
        self.p_cols = _PI if side == 0 else _PJ
        self.m_cols = s.modal(side)
        self.flexible = S is not None and S.shape[-1] > 0
        p = s.p(side)
        self.S = S
        if self.flexible:
            self.u = u0 + np.einsum("nkm,nm->nk", S, s.x[:, self.m_cols])
            ud = np.einsum("nkm,nm->nk", S, s.xd[:, self.m_cols])
        else:
            self.u = u0
        self.val = np.einsum("nij,nj->ni", s.A(side), self.u)
        self.B = rot.B(p, self.u)
        self.quad = rot.second_rate(s.pd(side), self.u)
        if self.flexible:
            self.quad = self.quad + 2.0 * np.einsum("nij,nj->ni", rot.B(p, ud), s.pd(side))
            self.AS = np.einsum("nij,njm->nim", s.A(side), S)

    def add_jac(self, jac: np.ndarray, sign: float) -> None:
        jac[:, :, self.p_cols] += sign * self.B
        if self.flexible:
            jac[:, :, self.m_cols] += sign * self.AS

    def add_hess(self, h: np.ndarray, w: np.ndarray, sign: float) -> None:
        h[:, self.p_cols, self.p_cols] += sign * 2.0 * rot.Q(w, self.u)
        if self.flexible:
            # B(p, S_k)^T w for every mode k: (n, 4, m)
            Bk = rot.B(self.s.p(self.side)[:, None, :], np.swapaxes(self.S, 1, 2))   # (n, m, 3, 4)
            pm = sign * np.einsum("nmkp,nk->npm", Bk, w)
            h[:, self.p_cols, self.m_cols] += pm
            h[:, self.m_cols, self.p_cols] += np.swapaxes(pm, 1, 2)


def body_vector(s: PairState, side: int, u: np.ndarray, S: np.ndarray | None = None) -> Vec:
    """``A(p_side) u`` for body-fixed vectors ``u = u0 + S eta`` (u0 (n, 3), S (n, 3, m) or None)."""
    t = _Attached(s, side, u, S)
    jac = np.zeros((s.n, 3, s.nx))
    t.add_jac(jac, 1.0)

    def hess(w: np.ndarray) -> np.ndarray:
        h = _empty_hess(s)
        t.add_hess(h, w, 1.0)
        return h

    return Vec(t.val, jac, t.quad, hess)


def separation(s: PairState, u_i: np.ndarray, u_j: np.ndarray,
               S_i: np.ndarray | None = None, S_j: np.ndarray | None = None) -> Vec:
    """``d = r_j + A_j u_j - r_i - A_i u_i``: from a point on body i to one on body j
    (``u = u0 + S eta`` on flexible sides)."""
    ti, tj = _Attached(s, 0, u_i, S_i), _Attached(s, 1, u_j, S_j)
    val = s.r(1) + tj.val - s.r(0) - ti.val
    jac = np.zeros((s.n, 3, s.nx))
    eye = np.broadcast_to(np.eye(3), (s.n, 3, 3))
    jac[:, :, 0:3] = -eye
    jac[:, :, 7:10] = eye
    ti.add_jac(jac, -1.0)
    tj.add_jac(jac, 1.0)
    quad = tj.quad - ti.quad

    def hess(w: np.ndarray) -> np.ndarray:
        h = _empty_hess(s)
        ti.add_hess(h, w, -1.0)
        tj.add_hess(h, w, 1.0)
        return h

    return Vec(val, jac, quad, hess)


def dot(a: Vec, b: Vec, xd: np.ndarray) -> Scalar:
    """``a . b`` with exact derivatives (product rule)."""
    val = np.einsum("nk,nk->n", a.val, b.val)
    jac = np.einsum("nk,nkx->nx", b.val, a.jac) + np.einsum("nk,nkx->nx", a.val, b.jac)
    quad = (np.einsum("nk,nk->n", a.quad, b.val) + np.einsum("nk,nk->n", a.val, b.quad)
            + 2.0 * np.einsum("nk,nk->n", a.rate(xd), b.rate(xd)))

    def hess(w: np.ndarray) -> np.ndarray:
        cross = np.einsum("nkx,nky->nxy", a.jac, b.jac)
        h = w[:, None, None] * (cross + cross.transpose(0, 2, 1))
        return h + a.hess(w[:, None] * b.val) + b.hess(w[:, None] * a.val)

    return Scalar(val, jac, quad, hess)


def component(v: Vec, k: int) -> Scalar:
    """Scalar component ``v[k]`` of a vector expression."""
    def hess(w: np.ndarray) -> np.ndarray:
        wk = np.zeros((w.shape[0], 3))
        wk[:, k] = w
        return v.hess(wk)

    return Scalar(v.val[:, k], v.jac[:, k, :], v.quad[:, k], hess)


def norm(d: Vec, xd: np.ndarray) -> Scalar:
    """Length ``|d|`` (must stay positive; callers check)."""
    l = np.linalg.norm(d.val, axis=1)
    n = d.val / l[:, None]
    jac = np.einsum("nk,nkx->nx", n, d.jac)
    dd = d.rate(xd)
    ld = np.einsum("nk,nk->n", n, dd)
    quad = (np.einsum("nk,nk->n", dd, dd) + np.einsum("nk,nk->n", d.val, d.quad) - ld * ld) / l

    def hess(w: np.ndarray) -> np.ndarray:
        jtj = np.einsum("nkx,nky->nxy", d.jac, d.jac)
        h = (jtj - jac[:, :, None] * jac[:, None, :]) / l[:, None, None] + d.hess(n / l[:, None]) * l[:, None, None]
        return w[:, None, None] * h

    return Scalar(l, jac, quad, hess)


def angle(sin_: Scalar, cos_: Scalar, reference: np.ndarray, xd: np.ndarray) -> Scalar:
    """Rotation angle ``atan2(sin_, cos_)`` unwrapped to within pi of ``reference``.

    ``sin_`` and ``cos_`` are the projections ``g_i . f_j`` and ``f_i . f_j`` of
    a vector of body j on two orthogonal unit vectors of body i (docs/theory.md §2).
    """
    s, c = sin_.val, cos_.val
    r2 = s * s + c * c
    raw = np.arctan2(s, c)
    val = reference + np.angle(np.exp(1j * (raw - reference)))
    th_s, th_c = c / r2, -s / r2
    jac = th_s[:, None] * sin_.jac + th_c[:, None] * cos_.jac
    sd, cd = sin_.rate(xd), cos_.rate(xd)
    thd = th_s * sd + th_c * cd
    quad = th_s * sin_.quad + th_c * cos_.quad - 2.0 * thd * (c * cd + s * sd) / r2
    th_ss = -2.0 * c * s / (r2 * r2)
    th_sc = (s * s - c * c) / (r2 * r2)

    def hess(w: np.ndarray) -> np.ndarray:
        h = sin_.hess(w * th_s) + cos_.hess(w * th_c)
        gs, gc = sin_.jac, cos_.jac
        outer_ss = gs[:, :, None] * gs[:, None, :]
        outer_cc = gc[:, :, None] * gc[:, None, :]
        outer_sc = gs[:, :, None] * gc[:, None, :]
        h += (w * th_ss)[:, None, None] * (outer_ss - outer_cc)
        h += (w * th_sc)[:, None, None] * (outer_sc + outer_sc.transpose(0, 2, 1))
        return h

    return Scalar(val, jac, quad, hess)


def linear_combination(terms: list[tuple[float, Scalar]]) -> Scalar:
    """``sum c_k e_k`` of scalar expressions."""
    val = sum(c * e.val for c, e in terms)
    jac = sum(c * e.jac for c, e in terms)
    quad = sum(c * e.quad for c, e in terms)

    def hess(w: np.ndarray) -> np.ndarray:
        return sum(e.hess(c * w) for c, e in terms)

    return Scalar(val, jac, quad, hess)
