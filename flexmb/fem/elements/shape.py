"""Isoparametric shape functions of the solid elements, meshio/VTK node order (theory §2.1).

Each function takes reference points ``(p, 3)`` and returns ``N (p, nn)`` and the
natural derivatives ``dN (p, nn, 3)``. ``NODES[cell_type]`` holds the reference
coordinates of the nodes, in the same order.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

ShapeFunction = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]

_HEX_CORNERS = np.array([[-1, -1, -1], [1, -1, -1], [1, 1, -1], [-1, 1, -1],
                         [-1, -1, 1], [1, -1, 1], [1, 1, 1], [-1, 1, 1]], dtype=float)
_HEX_EDGES = np.array([[0, 1], [1, 2], [2, 3], [3, 0], [4, 5], [5, 6], [6, 7], [7, 4],
                       [0, 4], [1, 5], [2, 6], [3, 7]])
_TET_CORNERS = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], dtype=float)
_TET_EDGES = np.array([[0, 1], [1, 2], [2, 0], [0, 3], [1, 3], [2, 3]])

# d(L0, L1, L2, L3) / d(xi, eta, zeta) for barycentric L0 = 1 - xi - eta - zeta, L1 = xi, ...
_DL = np.array([[-1.0, -1.0, -1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])

NODES: dict[str, np.ndarray] = {
    "tetra": _TET_CORNERS,
    "tetra10": np.vstack([_TET_CORNERS, _TET_CORNERS[_TET_EDGES].mean(axis=1)]),
    "hexahedron": _HEX_CORNERS,
    "hexahedron20": np.vstack([_HEX_CORNERS, _HEX_CORNERS[_HEX_EDGES].mean(axis=1)]),
}
"""Reference coordinates of the nodes of each cell type (theory Table 2.1)."""


def _barycentric(points: np.ndarray) -> np.ndarray:
    """Barycentric coordinates ``(p, 4)`` of tetrahedron reference points."""
    return np.column_stack([1.0 - points.sum(axis=1), points])


def tet4(points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Linear tetrahedron: ``N_i = L_i`` (theory eq. 2.1)."""
    N = _barycentric(points)
    return N, np.broadcast_to(_DL, (points.shape[0], 4, 3)).copy()


def tet10(points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Quadratic tetrahedron: corners ``L_i (2 L_i - 1)``, edge (i, j) ``4 L_i L_j`` (theory eq. 2.2)."""
    L = _barycentric(points)
    i, j = _TET_EDGES[:, 0], _TET_EDGES[:, 1]
    N = np.hstack([L * (2.0 * L - 1.0), 4.0 * L[:, i] * L[:, j]])
    dNdL = np.zeros((points.shape[0], 10, 4))
    corner = np.arange(4)
    dNdL[:, corner, corner] = 4.0 * L - 1.0
    edge = np.arange(4, 10)
    dNdL[:, edge, i] = 4.0 * L[:, j]
    dNdL[:, edge, j] = 4.0 * L[:, i]
    return N, dNdL @ _DL


def hex8(points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Trilinear hexahedron: ``N_i = (1 + xi xi_i)(1 + eta eta_i)(1 + zeta zeta_i) / 8`` (theory eq. 2.3)."""
    f = 1.0 + points[:, None, :] * _HEX_CORNERS[None]             # (p, 8, 3)
    N = f.prod(axis=2) / 8.0
    dN = np.stack([_HEX_CORNERS[None, :, 0] * f[..., 1] * f[..., 2],
                   _HEX_CORNERS[None, :, 1] * f[..., 0] * f[..., 2],
                   _HEX_CORNERS[None, :, 2] * f[..., 0] * f[..., 1]], axis=-1) / 8.0
    return N, dN


def hex20(points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """20-node serendipity hexahedron (theory eq. 2.4).

    Corner ``i``: ``(1 + xi xi_i)(1 + eta eta_i)(1 + zeta zeta_i)(xi xi_i + eta eta_i + zeta zeta_i - 2) / 8``;
    edge node with ``xi_i = 0``: ``(1 - xi^2)(1 + eta eta_i)(1 + zeta zeta_i) / 4`` (likewise for the other axes).
    """
    p = points.shape[0]
    corner_f = 1.0 + points[:, None, :] * _HEX_CORNERS[None]       # (p, 8, 3)
    s = (points[:, None, :] * _HEX_CORNERS[None]).sum(axis=2)      # (p, 8)
    Nc = corner_f.prod(axis=2) * (s - 2.0) / 8.0
    dNc = np.empty((p, 8, 3))
    for d in range(3):
        others = corner_f[..., [k for k in range(3) if k != d]].prod(axis=2)
        xi_i = _HEX_CORNERS[None, :, d]
        dNc[..., d] = xi_i * others * (s - 1.0 + points[:, None, d] * xi_i) / 8.0
    mid = NODES["hexahedron20"][8:]                                # (12, 3), one zero coordinate each
    zero_axis = np.argmin(np.abs(mid), axis=1)
    is_zero = np.arange(3)[None, :] == zero_axis[:, None]          # (12, 3)
    # factor per axis: 1 - x^2 on the zero axis, 1 + x x_i otherwise
    g = np.where(is_zero[None], 1.0 - points[:, None, :] ** 2, 1.0 + points[:, None, :] * mid[None])
    dg = np.where(is_zero[None], -2.0 * points[:, None, :], np.broadcast_to(mid[None], (p, 12, 3)))
    Ne = g.prod(axis=2) / 4.0
    dNe = np.stack([dg[..., 0] * g[..., 1] * g[..., 2],
                    g[..., 0] * dg[..., 1] * g[..., 2],
                    g[..., 0] * g[..., 1] * dg[..., 2]], axis=-1) / 4.0
    return np.hstack([Nc, Ne]), np.concatenate([dNc, dNe], axis=1)


SHAPES: dict[str, ShapeFunction] = {"tetra": tet4, "tetra10": tet10, "hexahedron": hex8, "hexahedron20": hex20}
"""Shape-function evaluator of each solid cell type."""
