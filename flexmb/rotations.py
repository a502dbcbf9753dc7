"""Euler parameters and rotation matrices (batched).

Conventions (docs/theory.md §1): Euler parameters ``p = (e0, e1, e2, e3)``,
scalar first; ``A(p)`` maps body-fixed components to global ones.
Equations after Nikravesh, *Computer-Aided Analysis of Mechanical Systems*
(1988), §6.3-6.4 and Haug, *Computer-Aided Kinematics and Dynamics* (1989), §9:

* ``A = (2 e0^2 - 1) I + 2 (e e^T + e0 e~)``
* ``omega = 2 E(p) p_dot`` (global), ``omega' = 2 G(p) p_dot`` (body),
  with ``E = [-e, e~ + e0 I]`` and ``G = [-e, -e~ + e0 I]``.

Every function accepts a single parameter set ``(..., 4)`` and broadcasts over
leading dimensions.
"""
from __future__ import annotations

import numpy as np

__all__ = [
    "cross", "skew", "A", "E", "G", "B", "Q", "T", "second_rate",
    "from_matrix", "from_axis_angle", "to_axis_angle", "normalize",
    "from_quaternion", "from_scipy", "is_scipy_rotation",
]


def cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a x b`` over the last axis (faster than np.cross for small stacked arrays)."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    return a[..., _I1] * b[..., _I2] - a[..., _I2] * b[..., _I1]


def skew(v: np.ndarray) -> np.ndarray:
    """Skew-symmetric matrix ``v~`` with ``v~ w = v x w``; shape (..., 3, 3)."""
    v = np.asarray(v, dtype=float)
    out = np.zeros(v.shape[:-1] + (3, 3))
    out[..., 0, 1] = -v[..., 2]
    out[..., 0, 2] = v[..., 1]
    out[..., 1, 0] = v[..., 2]
    out[..., 1, 2] = -v[..., 0]
    out[..., 2, 0] = -v[..., 1]
    out[..., 2, 1] = v[..., 0]
    return out


def A(p: np.ndarray) -> np.ndarray:
    """Rotation matrix ``A(p)`` (Nikravesh eq. 6.19); exact quadratic form in p."""
    p = np.asarray(p, dtype=float)
    if p.size <= _SMALL:
        return _quadratic(p, p, _C_H, (3, 3)) - _EYE3
    return _A_elementwise(p)


def _A_elementwise(p: np.ndarray) -> np.ndarray:
    e0, e1, e2, e3 = p[..., 0], p[..., 1], p[..., 2], p[..., 3]
    d = 2.0 * e0 * e0 - 1.0
    out = np.empty(p.shape[:-1] + (3, 3))
    out[..., 0, 0] = d + 2.0 * e1 * e1
    out[..., 1, 1] = d + 2.0 * e2 * e2
    out[..., 2, 2] = d + 2.0 * e3 * e3
    out[..., 0, 1] = 2.0 * (e1 * e2 - e0 * e3)
    out[..., 1, 0] = 2.0 * (e1 * e2 + e0 * e3)
    out[..., 0, 2] = 2.0 * (e1 * e3 + e0 * e2)
    out[..., 2, 0] = 2.0 * (e1 * e3 - e0 * e2)
    out[..., 1, 2] = 2.0 * (e2 * e3 - e0 * e1)
    out[..., 2, 1] = 2.0 * (e2 * e3 + e0 * e1)
    return out


def E(p: np.ndarray) -> np.ndarray:
    """``E(p) = [-e, e~ + e0 I]`` (3x4): ``omega = 2 E p_dot`` (global)."""
    p = np.asarray(p, dtype=float)
    return (p @ _C_E).reshape(p.shape[:-1] + (3, 4))


def G(p: np.ndarray) -> np.ndarray:
    """``G(p) = [-e, -e~ + e0 I]`` (3x4): ``omega' = 2 G p_dot`` (body-fixed)."""
    p = np.asarray(p, dtype=float)
    return (p @ _C_G).reshape(p.shape[:-1] + (3, 4))


def Q(w: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Symmetric 4x4 ``Q(w, u)`` with ``w . A(p) u = p^T Q p - w . u``.

    Hence ``d(w.A u)/dp = 2 Q p`` and ``d2(w.A u)/dp2 = 2 Q`` exactly (A is
    quadratic in p), which gives every constraint Hessian in closed form
    (docs/theory.md §1.2).
    """
    return _quadratic(np.asarray(w, dtype=float), np.asarray(u, dtype=float), _C_Q, (4, 4))


def _Q_elementwise(w: np.ndarray, u: np.ndarray) -> np.ndarray:
    w, u = np.broadcast_arrays(w, u)
    out = np.empty(w.shape[:-1] + (4, 4))
    out[..., 0, 0] = 2.0 * np.einsum("...i,...i->...", w, u)
    c = cross(u, w)
    out[..., 0, 1:] = c
    out[..., 1:, 0] = c
    out[..., 1:, 1:] = w[..., :, None] * u[..., None, :] + u[..., :, None] * w[..., None, :]
    return out


def B(p: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Jacobian ``d(A(p) u)/dp`` (3x4), Nikravesh eq. 6.57 form.

    ``B = 2 [2 e0 u + e~ u,  e u^T + (e.u) I - e0 u~]``.
    """
    return _quadratic(np.asarray(p, dtype=float), np.asarray(u, dtype=float), _C_B, (3, 4))


def _B_elementwise(p: np.ndarray, u: np.ndarray) -> np.ndarray:
    lead = np.broadcast_shapes(p.shape[:-1], u.shape[:-1])
    e0, e1, e2, e3 = p[..., 0], p[..., 1], p[..., 2], p[..., 3]
    u1, u2, u3 = u[..., 0], u[..., 1], u[..., 2]
    eu = e1 * u1 + e2 * u2 + e3 * u3
    out = np.empty(lead + (3, 4))
    out[..., 0, 0] = 2.0 * e0 * u1 + e2 * u3 - e3 * u2
    out[..., 1, 0] = 2.0 * e0 * u2 + e3 * u1 - e1 * u3
    out[..., 2, 0] = 2.0 * e0 * u3 + e1 * u2 - e2 * u1
    out[..., 0, 1] = e1 * u1 + eu
    out[..., 0, 2] = e1 * u2 + e0 * u3
    out[..., 0, 3] = e1 * u3 - e0 * u2
    out[..., 1, 1] = e2 * u1 - e0 * u3
    out[..., 1, 2] = e2 * u2 + eu
    out[..., 1, 3] = e2 * u3 + e0 * u1
    out[..., 2, 1] = e3 * u1 + e0 * u2
    out[..., 2, 2] = e3 * u2 - e0 * u1
    out[..., 2, 3] = e3 * u3 + eu
    out *= 2.0
    return out


def T(y: np.ndarray) -> np.ndarray:
    """4x4 matrix with ``G(p)^T y = T(y) p``: ``T = [[0, -y^T], [y, -y~]]``."""
    y = np.asarray(y, dtype=float)
    out = np.zeros(y.shape[:-1] + (4, 4))
    out[..., 0, 1:] = -y
    out[..., 1:, 0] = y
    out[..., 1:, 1:] = -skew(y)
    return out


def second_rate(pd: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Second directional derivative of ``A(p) u`` along ``pd``: ``pd^T (d2 A u/dp2) pd``.

    A is quadratic in p, so this is ``4 (e0d^2 u + ed (ed.u) + e0d ed x u)``,
    independent of p. It is the velocity-quadratic part of d2(A u)/dt2.
    """
    pd = np.asarray(pd, dtype=float)
    u = np.asarray(u, dtype=float)
    # A(p) + I is homogeneous quadratic: its second derivative along pd is 2 (A(pd) + I)
    return 2.0 * np.einsum("...ij,...j->...i", _quadratic(pd, pd, _C_H, (3, 3)), u)


def _quadratic(x: np.ndarray, y: np.ndarray, C: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    """Bilinear form ``sum_kl C[kl, :] x_k y_l`` over stacked vectors, reshaped to ``shape``.

    One outer product and one matrix product: much faster than elementwise formulas on the
    small stacks of a time step (numpy's per-call overhead dominates there)."""
    lead = np.broadcast_shapes(x.shape[:-1], y.shape[:-1])
    outer = (x[..., :, None] * y[..., None, :]).reshape(lead + (x.shape[-1] * y.shape[-1],))
    return (outer @ C).reshape(lead + shape)


def _coefficients(f, nx: int, ny: int) -> np.ndarray:
    """Coefficient matrix (nx*ny, k) of a bilinear map ``f(x, y)`` from basis evaluations."""
    ex, ey = np.eye(nx), np.eye(ny)
    return np.array([f(ex[k], ey[l]).reshape(-1) for k in range(nx) for l in range(ny)])


def _homogeneous_A(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Symmetric bilinear form H(x, y) with H(p, p) = A(p) + I."""
    h = lambda z: _A_elementwise(z) + _EYE3   # noqa: E731
    return 0.5 * (h(x + y) - h(x) - h(y))


_I1, _I2 = np.array([1, 2, 0]), np.array([2, 0, 1])
_EYE3 = np.eye(3)
_SMALL = 400            # stacks up to this many entries use the matrix-product forms
_C_B = _coefficients(_B_elementwise, 4, 3)          # (12, 12)
_C_H = _coefficients(_homogeneous_A, 4, 4)          # (16, 9)
_C_Q = _coefficients(_Q_elementwise, 3, 3)          # (9, 16)


def _linear_map(sign: float) -> np.ndarray:
    """(4, 12) with ``p @ C`` = [-e, sign e~ + e0 I] (E: sign +1, G: sign -1)."""
    out = np.zeros((4, 3, 4))
    for k, e in enumerate(np.eye(4)):
        out[k, :, 0] = -e[1:]
        out[k, :, 1:] = sign * skew(e[1:]) + e[0] * np.eye(3)
    return out.reshape(4, 12)


_C_E, _C_G = _linear_map(1.0), _linear_map(-1.0)


def normalize(p: np.ndarray) -> np.ndarray:
    """Scale Euler parameters to unit norm (and a non-negative scalar part)."""
    p = np.asarray(p, dtype=float)
    n = np.linalg.norm(p, axis=-1, keepdims=True)
    return p / n


def from_matrix(R: np.ndarray) -> np.ndarray:
    """Euler parameters of a rotation matrix (Shepperd's method, numerically safe)."""
    R = np.asarray(R, dtype=float)
    tr = np.trace(R)
    diag = np.array([tr, R[0, 0], R[1, 1], R[2, 2]])
    k = int(np.argmax(diag))
    p = np.empty(4)
    if k == 0:
        p[0] = 0.5 * np.sqrt(1.0 + tr)
        f = 0.25 / p[0]
        p[1] = (R[2, 1] - R[1, 2]) * f
        p[2] = (R[0, 2] - R[2, 0]) * f
        p[3] = (R[1, 0] - R[0, 1]) * f
    else:
        i = k - 1
        j, m = (i + 1) % 3, (i + 2) % 3
        p[k] = 0.5 * np.sqrt(1.0 + 2.0 * R[i, i] - tr)
        f = 0.25 / p[k]
        p[0] = (R[m, j] - R[j, m]) * f
        p[1 + j] = (R[j, i] + R[i, j]) * f
        p[1 + m] = (R[m, i] + R[i, m]) * f
    if p[0] < 0:
        p = -p
    return p / np.linalg.norm(p)


def from_quaternion(q, scalar_first: bool) -> np.ndarray:
    """Euler parameters (scalar first) of a quaternion given in either component order.

    ``scalar_first=True``: ``(w, x, y, z)`` -- flexmb, Nikravesh (1988) eq. 6.15, Eigen's
    ``Quaternion(w, x, y, z)``; ``False``: ``(x, y, z, w)`` -- scipy's ``Rotation.as_quat()``,
    ROS ``geometry_msgs/Quaternion``. The rotation is the same, only the storage differs.
    """
    q = np.asarray(q, dtype=float)
    return q if scalar_first else q[..., [3, 0, 1, 2]]


def is_scipy_rotation(obj: object) -> bool:
    """True for a ``scipy.spatial.transform.Rotation`` (checked without importing scipy.spatial)."""
    cls = type(obj)
    return cls.__name__ == "Rotation" and cls.__module__.startswith("scipy.spatial.transform")


def from_scipy(rotation) -> np.ndarray:
    """Euler parameters of one ``scipy.spatial.transform.Rotation``, through its rotation
    matrix (``as_matrix()``: body -> global, the same meaning as ``A(p)``), so that no
    quaternion component order is involved."""
    return from_matrix(rotation.as_matrix())


def from_axis_angle(axis, angle: float) -> np.ndarray:
    """Euler parameters of a rotation by ``angle`` (rad) about unit ``axis``."""
    a = np.asarray(axis, dtype=float)
    a = a / np.linalg.norm(a)
    return np.concatenate([[np.cos(0.5 * angle)], np.sin(0.5 * angle) * a])


def to_axis_angle(p: np.ndarray) -> tuple[np.ndarray, float]:
    """Axis and angle (rad, in [0, pi]) of unit Euler parameters."""
    p = normalize(p)
    if p[0] < 0:
        p = -p
    s = np.linalg.norm(p[1:])
    angle = 2.0 * np.arctan2(s, p[0])
    axis = p[1:] / s if s > 0 else np.array([1.0, 0.0, 0.0])
    return axis, angle
