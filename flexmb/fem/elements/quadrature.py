"""Quadrature rules on the reference hexahedron and tetrahedron (theory §2.3).

A rule is a pair ``(points (nq, 3), weights (nq,))``. The reference hexahedron is
``[-1, 1]^3`` (volume 8); the reference tetrahedron has vertices (0,0,0), (1,0,0),
(0,1,0), (0,0,1) (volume 1/6), and its weights sum to 1/6.
"""
from __future__ import annotations

import itertools
from functools import cache

import numpy as np

Rule = tuple[np.ndarray, np.ndarray]


@cache
def hex_gauss(n: int) -> Rule:
    """Tensor-product Gauss-Legendre rule with ``n`` points per direction (exact to degree 2n-1).

    Bathe, *Finite Element Procedures* (1996), §5.5.
    """
    x, w = np.polynomial.legendre.leggauss(n)
    pts = np.array(list(itertools.product(x, x, x)))
    wts = np.array([a * b * c for a, b, c in itertools.product(w, w, w)])
    return _frozen(pts[:, ::-1], wts)  # xi varies fastest


@cache
def tet_rule(degree: int) -> Rule:
    """Symmetric tetrahedron rule exact for polynomials up to ``degree`` (1, 2 or 5).

    * degree 1: centroid, 1 point;
    * degree 2: 4 points, permutations of barycentric ``(1 - 3b, b, b, b)`` with
      ``b = (5 - sqrt 5) / 20``, weights 1/24 (Keast 1986, Comput. Methods Appl. Mech. Eng.
      55:339-348);
    * degree 5: 14 points, positive weights, two ``S31`` orbits and one ``S22`` orbit
      (Walkington 2000, Carnegie Mellon tech. rep.; Witherden & Vincent 2015, Comput. Math.
      Appl. 69:1232-1241). The abscissae and weights below were re-derived for flexmb by
      solving the moment equations to machine precision (all monomials of degree <= 5).
    """
    if degree == 1:
        return _frozen(np.full((1, 3), 0.25), np.array([1.0 / 6.0]))
    if degree == 2:
        return _from_barycentric(_s31((5.0 - np.sqrt(5.0)) / 20.0), np.full(4, 1.0 / 24.0))
    if degree == 5:
        bary = np.vstack([_s31(0.092735250310891207), _s31(0.31088591926330061), _s22(0.45449629587435042)])
        wts = np.repeat([0.01224884051939365, 0.018781320953002632, 0.0070910034628469008], [4, 4, 6])
        return _from_barycentric(bary, wts)
    raise ValueError(f"no tetrahedron rule of degree {degree}")


def _s31(a: float) -> np.ndarray:
    """The 4 barycentric points that are permutations of ``(a, a, a, 1 - 3a)``."""
    pts = np.full((4, 4), a)
    pts[np.arange(4), np.arange(4)] = 1.0 - 3.0 * a
    return pts


def _s22(a: float) -> np.ndarray:
    """The 6 barycentric points that are permutations of ``(a, a, 1/2 - a, 1/2 - a)``."""
    pts = np.full((6, 4), 0.5 - a)
    for row, (i, j) in enumerate(itertools.combinations(range(4), 2)):
        pts[row, [i, j]] = a
    return pts


def _from_barycentric(bary: np.ndarray, weights: np.ndarray) -> Rule:
    """Reference coordinates ``(L1, L2, L3)`` of barycentric points ``(L0, L1, L2, L3)``."""
    return _frozen(np.ascontiguousarray(bary[:, 1:]), weights)


def _frozen(points: np.ndarray, weights: np.ndarray) -> Rule:
    """Read-only copies, safe to share through the cache."""
    points, weights = np.array(points, dtype=float), np.array(weights, dtype=float)
    points.flags.writeable = False
    weights.flags.writeable = False
    return points, weights
