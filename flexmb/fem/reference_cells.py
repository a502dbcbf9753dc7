"""Reference cells of every supported cell type and the signed Jacobian measure
used by the mesh validity checks (docs/theory-mesh.md §4.5).

Shape functions are built generically from a monomial basis in natural
coordinates (meshio = VTK node order), so lines, shells and solids share one
code path; the element kernels in ``flexmb/fem/elements`` have their own
closed-form shape functions for assembly.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

@dataclass(frozen=True)
class _RefCell:
    """Reference element: nodes and monomial basis spanning its shape functions."""

    nodes: np.ndarray      # (n, d) natural coordinates of the nodes
    exponents: np.ndarray  # (n, d) exponents of the monomials spanning the shape functions
    check: np.ndarray      # (m, d) points where the Jacobian is checked: corners + Gauss points
    center: np.ndarray     # (1, d) point where the reference direction of lines/shells is taken


def _midpoints(corners: np.ndarray, edges: list[tuple[int, int]]) -> np.ndarray:
    """Natural coordinates of the mid-edge nodes, in the order of ``edges``."""
    return np.array([(corners[a] + corners[b]) / 2 for a, b in edges])


def _make_refs() -> dict[str, _RefCell]:
    """The reference cells of ``SUPPORTED_CELLS``."""
    g = 1 / np.sqrt(3)
    line = np.array([[-1.0], [1.0]])
    tri = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    quad = np.array([[-1.0, -1.0], [1.0, -1.0], [1.0, 1.0], [-1.0, 1.0]])
    tet = np.vstack([np.zeros(3), np.eye(3)])
    hexa = np.array([[-1, -1, -1], [1, -1, -1], [1, 1, -1], [-1, 1, -1],
                     [-1, -1, 1], [1, -1, 1], [1, 1, 1], [-1, 1, 1]], dtype=float)
    tet_edges = [(0, 1), (1, 2), (2, 0), (0, 3), (1, 3), (2, 3)]
    hex_edges = [(0, 1), (1, 2), (2, 3), (3, 0), (4, 5), (5, 6), (6, 7), (7, 4),
                 (0, 4), (1, 5), (2, 6), (3, 7)]
    a, b = 0.5854101966249685, 0.1381966011250105  # 4-point tetrahedron rule
    tet_gauss = np.array([[b, b, b], [a, b, b], [b, a, b], [b, b, a]])
    quad_gauss = g * quad
    hex_gauss = g * hexa
    lin3 = np.array(list(itertools.product((0, 1), repeat=3)))
    quad2 = np.array([[2, 0, 0], [0, 2, 0], [0, 0, 2], [1, 1, 0], [0, 1, 1], [1, 0, 1]])
    serendipity = np.array([[2, 0, 0], [0, 2, 0], [0, 0, 2], [2, 1, 0], [2, 0, 1], [1, 2, 0],
                            [0, 2, 1], [1, 0, 2], [0, 1, 2], [2, 1, 1], [1, 2, 1], [1, 1, 2]])
    return {
        "line": _RefCell(line, np.array([[0], [1]]), np.vstack([line, g * line]), np.zeros((1, 1))),
        "line3": _RefCell(np.vstack([line, [[0.0]]]), np.array([[0], [1], [2]]),
                          np.vstack([line, [[0.0]], g * line]), np.zeros((1, 1))),
        "triangle": _RefCell(tri, np.array([[0, 0], [1, 0], [0, 1]]), tri, np.full((1, 2), 1 / 3)),
        "quad": _RefCell(quad, np.array([[0, 0], [1, 0], [0, 1], [1, 1]]),
                         np.vstack([quad, quad_gauss]), np.zeros((1, 2))),
        "tetra": _RefCell(tet, np.vstack([np.zeros(3, int), np.eye(3, dtype=int)]), tet,
                          np.full((1, 3), 0.25)),
        "tetra10": _RefCell(np.vstack([tet, _midpoints(tet, tet_edges)]),
                            np.vstack([np.zeros(3, int), np.eye(3, dtype=int), quad2]),
                            np.vstack([tet, tet_gauss]), np.full((1, 3), 0.25)),
        "hexahedron": _RefCell(hexa, lin3, np.vstack([hexa, hex_gauss]), np.zeros((1, 3))),
        "hexahedron20": _RefCell(np.vstack([hexa, _midpoints(hexa, hex_edges)]),
                                 np.vstack([lin3, serendipity]), np.vstack([hexa, hex_gauss]),
                                 np.zeros((1, 3))),
    }


REFERENCE_CELLS = _make_refs()
"""Reference cell of each supported cell type."""


def _shape_gradients(ref: _RefCell, xi: np.ndarray) -> np.ndarray:
    """dN_i/dxi_k at the natural points ``xi`` (m, d) -> (m, n, d).

    N = m(xi) @ C with C = V^-1, V_aj = m_j(node_a) (docs/theory-mesh.md §4.5).
    """
    e = ref.exponents
    coef = np.linalg.inv(np.prod(ref.nodes[:, None, :] ** e[None], axis=2))
    grads = []
    for k in range(e.shape[1]):
        ek = e.copy()
        ek[:, k] = np.maximum(ek[:, k] - 1, 0)
        dm = e[:, k] * np.prod(xi[:, None, :] ** ek[None], axis=2)
        grads.append(dm @ coef)
    return np.stack(grads, axis=-1)


@lru_cache(maxsize=None)
def _check_tables(cell_type: str) -> tuple[np.ndarray, np.ndarray]:
    """Shape gradients at the check points (m, n, d) and at the center (n, d)."""
    ref = REFERENCE_CELLS[cell_type]
    return _shape_gradients(ref, ref.check), _shape_gradients(ref, ref.center)[0]


def signed_measure(cell_type: str, x: np.ndarray) -> np.ndarray:
    """Jacobian measure at each check point of each element, (E, m).

    Solids: det(dx/dxi). Shells: (g1 x g2) . n_c, lines: g1 . t_c, with n_c, t_c the
    unit normal/tangent at the element center (docs/theory-mesh.md §4.5). ``x`` is (E, n, 3).
    """
    d_check, d_center = _check_tables(cell_type)
    g = np.einsum("enj,pnk->epjk", x, d_check)
    if g.shape[-1] == 3:
        return np.linalg.det(g)
    gc = np.einsum("enj,nk->ejk", x, d_center)
    if g.shape[-1] == 2:
        vec, ref = np.cross(g[..., 0], g[..., 1]), np.cross(gc[..., 0], gc[..., 1])
    else:
        vec, ref = g[..., 0], gc[..., 0]
    norm = np.linalg.norm(ref, axis=1, keepdims=True)
    unit = np.divide(ref, norm, out=np.zeros_like(ref), where=norm > 0)
    return np.einsum("epj,ej->ep", vec, unit)
