"""Nonlinear two-node beam: Green-Lagrange axial strain with foreshortening (theory-elements §6).

The elastic kernel of the nonlinear floating-frame beam. Element displacements are
measured in the body frame; each element works in its local frame ``R`` of the linear
kernel (:func:`flexmb.fem.elements.beam.beam_frames`, theory eq. 4.1), local dofs per
node ``(u, v, w, theta_x, theta_y, theta_z)`` with ``theta_z = v'``, ``theta_y = -w'``.

Strain energy of one element (theory eqs. 6.1-6.3)::

    U = 1/2 d^T K_b d + U_m,
    K_b = linear bending + shear + torsion stiffness of the linear kernel (theory eq. 4.6),
    eps(x) = u' + 1/2 (u'^2 + v'^2 + w'^2 + r_p^2 theta'^2),   r_p^2 = (Iy + Iz) / A,
    U_m = EA L eps_bar^2 / 2,  eps_bar = (1/L) int eps dx          (membrane="average", default)
    U_m = int EA eps^2 / 2 dx                                      (membrane="pointwise")

``u`` and ``theta`` are linear, ``v`` and ``w`` use the linear kernel's bending
interpolation (cubic Hermite for Euler-Bernoulli, theory eq. 4.3). The ``r_p^2 theta'^2``
(Wagner) term is kept with ``wagner=True``, so that the tangent of a straight pre-stressed
beam is ``K + N K_g`` of the linear model including its torsional term (theory eq. 4.9).
Sources: He, *Multibond graph method for flexible multibody system dynamics* (PhD, Western
Ontario 1992) eqs. 3.7-3.8 and 4.17a (foreshortening, Green-Lagrange strain);
Crisfield, *Non-linear Finite Element Analysis of Solids and Structures*, vol. 1 (1991),
ch. 7 (shallow-arch beam element, membrane locking); Stolarski & Belytschko (1982),
J. Appl. Mech. 49:172-176 (membrane locking).

Every array is stacked over the elements. Energy, internal forces and tangent are evaluated by the
compiled element loop of :mod:`flexmb.compiled.beam` on the arrays of
:meth:`NonlinearBeamKernel.element_data`; the recovery here is vectorized numpy.
"""
from __future__ import annotations

from functools import cache
from typing import NamedTuple

import numpy as np

from flexmb.compiled.beam import MAX_POINTS
from flexmb.errors import ModelError
from flexmb.fem.elements.beam import Beam2, plane_shape_functions

MEMBRANE_MODES = ("average", "pointwise")
"""Membrane-strain treatments: element-mean strain (locking-free, default) or pointwise strain."""

SLOPES = ("u'", "v'", "w'", "r_p theta'")
"""The four slopes whose squares enter the axial strain (theory eq. 6.2)."""

_AXIAL = np.array([0, 6])
_TORSION = np.array([3, 9])
_PLANE_XY = np.array([1, 5, 7, 11])        # v1, theta_z1, v2, theta_z2 (same as beam.py)
_PLANE_XZ = np.array([2, 4, 8, 10])        # w1, theta_y1, w2, theta_y2
_XZ_SIGN = np.array([1.0, -1.0, 1.0, -1.0])  # theta_y = -w' (theory eq. 4.4)
_GAUSS_POINTS = {"average": 3, "pointwise": 5}


class BeamElementData(NamedTuple):
    """Element arrays of the compiled loop (:mod:`flexmb.compiled.beam`), ``ne`` elements."""

    D: np.ndarray       #: (ne, MAX_POINTS, 4, 12) slope operators ``D T`` at the Gauss points (zero past nq)
    w: np.ndarray       #: (ne, MAX_POINTS) Gauss weights on [0, 1] (zero past nq)
    nq: np.ndarray      #: (ne,) int64 Gauss points used
    avg: np.ndarray     #: (ne,) int64 1: average membrane strain, 0: pointwise
    Kb: np.ndarray      #: (ne, 12, 12) bending + shear + torsion stiffness ``T^T K_b T``
    Hbar: np.ndarray    #: (ne, 12, 12) ``sum_q w_q D_q^T D_q`` (average; zero for pointwise)
    EAL: np.ndarray     #: (ne,) axial stiffness times length EA L, N m

    @staticmethod
    def concatenate(parts: "list[BeamElementData]") -> "BeamElementData":
        """All elements of ``parts`` stacked in order."""
        return BeamElementData(*(np.ascontiguousarray(np.concatenate(a)) for a in zip(*parts)))


@cache
def gauss_rule(n: int) -> tuple[np.ndarray, np.ndarray]:
    """``n``-point Gauss-Legendre rule on ``xi = x / L in [0, 1]``: points and weights summing to 1.

    Exact for polynomials of degree ``2 n - 1`` (Bathe 1996, §5.5).
    """
    x, w = np.polynomial.legendre.leggauss(n)
    xi, wt = 0.5 * (x + 1.0), 0.5 * w
    xi.flags.writeable = wt.flags.writeable = False
    return xi, wt


def slope_operators(L: np.ndarray, phi_y: np.ndarray, phi_z: np.ndarray, r_p: np.ndarray,
                    xi: np.ndarray) -> np.ndarray:
    """Rows ``D`` (ne, q, 4, 12) with ``(u', v', w', r_p theta') = D d_local`` at ``xi = x / L``.

    ``u`` and ``theta`` linear; ``v`` (``w``) from the bending interpolation of the x-y (x-z)
    plane with shear parameter ``phi_y`` (``phi_z``), ``w`` through ``theta_y = -w'``
    (theory eqs. 4.3, 4.4 and 6.2). Units: 1/m on translations, 1 on rotations.
    """
    xi = np.asarray(xi, dtype=float)
    D = np.zeros((L.size, xi.size, 4, 12))
    D[:, :, 0, _AXIAL] = np.stack([-1.0 / L, 1.0 / L], axis=-1)[:, None, :]
    D[:, :, 1, _PLANE_XY] = plane_shape_functions(L, phi_y, xi)[1]
    D[:, :, 2, _PLANE_XZ] = plane_shape_functions(L, phi_z, xi)[1] * _XZ_SIGN
    D[:, :, 3, _TORSION] = np.stack([-r_p / L, r_p / L], axis=-1)[:, None, :]
    return D


class NonlinearBeamKernel:
    """Operators and recovery of all elements of one :class:`Beam2` block (forces and tangent:
    :meth:`element_data` for :mod:`flexmb.compiled.beam`).

    Args:
        beam: the linear kernel (frames, lengths, sections, shear parameters are taken from it).
        membrane: ``"average"`` (element-mean axial strain, 3-point Gauss, default) or
            ``"pointwise"`` (``int EA eps^2/2`` with 5-point Gauss); theory §6.3.
        wagner: keep the ``r_p^2 theta'^2`` term of the axial strain (theory eq. 6.2).

    Element dof vectors ``d`` (ne, 12) are node-major ``(ux, uy, uz, rx, ry, rz)`` per node in
    the axes of the mesh (the body frame), m and rad, as ``u[chunk.dofmap]``. The slope
    operators and constant matrices are precomputed in those axes (``D T``, ``T^T K_b T``,
    theory eq. 6.7), so that an evaluation needs no frame transformation.
    """

    def __init__(self, beam: Beam2, membrane: str = "average", wagner: bool = True) -> None:
        if not isinstance(beam, Beam2):
            raise ModelError(f"the nonlinear beam kernel needs a Beam2 ('line') kernel, got {type(beam).__name__}")
        if membrane not in MEMBRANE_MODES:
            raise ModelError(f"membrane must be one of {MEMBRANE_MODES}, got {membrane!r}")
        sec = beam.props.section
        self.beam = beam
        self.membrane, self.wagner = membrane, bool(wagner)
        self.n_elements = beam.n_elements
        self.L, self.R = beam.L, beam.R
        self.EA = beam.props.E * sec.A
        self.r_p = np.sqrt((sec.Iy + sec.Iz) / sec.A) if self.wagner else np.zeros(self.n_elements)
        self.K_b = self._matrix_to_global(self._local_bending_stiffness())     # theory eq. 6.1
        self.xi, self.weights = gauss_rule(_GAUSS_POINTS[membrane])
        self.D = self.operators(self.xi)
        if membrane == "average":                              # theory eq. 6.6: H_bar = mean D^T D
            self.H_bar = np.einsum("q,eqki,eqkj->eij", self.weights, self.D, self.D, optimize=True)

    def _local_bending_stiffness(self) -> np.ndarray:
        """Linear bending + shear + torsion stiffness (ne, 12, 12), local axes (theory eqs. 4.5-4.6)."""
        K = self.beam.local_stiffness()
        K[:, _AXIAL[:, None], _AXIAL[None, :]] = 0.0            # the axial part is in U_m
        return K

    # -- frames ---------------------------------------------------------------------------------
    def _check(self, d: np.ndarray) -> np.ndarray:
        d = np.asarray(d, dtype=float)
        if d.shape != (self.n_elements, 12):
            raise ModelError(f"beam element displacements must have shape {(self.n_elements, 12)}, got {d.shape}")
        return d

    def to_local(self, d: np.ndarray) -> np.ndarray:
        """Element dofs (ne, 12) from body-frame to local components, ``T d`` (theory eq. 4.10)."""
        return np.einsum("eij,eaj->eai", self.R, self._check(d).reshape(-1, 4, 3)).reshape(-1, 12)

    def _matrix_to_global(self, K: np.ndarray) -> np.ndarray:
        """``T^T K T`` for local element matrices (ne, 12, 12), ``T = diag(R, R, R, R)``."""
        K4 = K.reshape(-1, 4, 3, 4, 3)
        return np.einsum("eki,eakbl,elj->eaibj", self.R, K4, self.R, optimize=True).reshape(-1, 12, 12)

    def operators(self, xi: np.ndarray) -> np.ndarray:
        """Slope operators ``D T`` (ne, q, 4, 12) acting on body-frame dofs at ``xi = x / L``."""
        xi = np.atleast_1d(np.asarray(xi, dtype=float))
        D = slope_operators(self.L, self.beam.phi_y, self.beam.phi_z, self.r_p, xi)
        D = np.einsum("eqkai,eij->eqkaj", D.reshape(self.n_elements, xi.size, 4, 4, 3), self.R)
        return D.reshape(self.n_elements, xi.size, 4, 12)

    # -- membrane strain ------------------------------------------------------------------------
    @staticmethod
    def _strain_and_gradient(d: np.ndarray, D: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Axial strain ``eps`` (ne, q) and ``d eps / d d`` (ne, q, 12) at the points of ``D``.

        ``g = D d``; ``eps = g_0 + g.g / 2``; ``d eps/d d = D_0 + g^T D`` (theory eqs. 6.2, 6.4).
        """
        g = np.einsum("eqkj,ej->eqk", D, d)
        eps = g[..., 0] + 0.5 * np.einsum("eqk,eqk->eq", g, g)
        grad = D[:, :, 0, :] + np.einsum("eqk,eqkj->eqj", g, D)
        return eps, grad

    def membrane_strain(self, d: np.ndarray, xi: np.ndarray | None = None) -> np.ndarray:
        """Membrane (Green-Lagrange axial) strain of the formulation (ne, q), dimensionless.

        At ``xi = x / L`` (default: the kernel's Gauss points). ``average``: the element mean
        ``eps_bar`` at every point; ``pointwise``: ``eps(xi)`` (theory eqs. 6.2-6.3).
        """
        d = self._check(d)
        n = self.xi.size if xi is None else np.atleast_1d(xi).size
        if self.membrane == "average":
            mean = self._strain_and_gradient(d, self.D)[0] @ self.weights
            return np.repeat(mean[:, None], n, axis=1)
        D = self.D if xi is None else self.operators(xi)
        return self._strain_and_gradient(d, D)[0]

    def axial_force(self, d: np.ndarray, xi: np.ndarray | None = None) -> np.ndarray:
        """Axial force ``N = EA eps`` (ne, q), N, tension positive, at ``xi`` (default Gauss points).

        ``N`` is the second Piola-Kirchhoff resultant, work-conjugate to ``eps``; a bar under an
        end force ``T`` carries ``N = T / (1 + u')`` (theory eq. 6.8).
        """
        return self.EA[:, None] * self.membrane_strain(d, xi)

    # -- data of the compiled element loop -----------------------------------------------------
    def element_data(self) -> BeamElementData:
        """The element arrays of :mod:`flexmb.compiled.beam` (energy, forces and tangent, theory
        eqs. 6.1-6.7): operators and weights padded to ``MAX_POINTS`` Gauss points, float64, C order."""
        ne, nq = self.n_elements, self.xi.size
        D = np.zeros((ne, MAX_POINTS, 4, 12))
        D[:, :nq] = self.D
        w = np.zeros((ne, MAX_POINTS))
        w[:, :nq] = self.weights
        avg = self.membrane == "average"
        return BeamElementData(D, w, np.full(ne, nq, dtype=np.int64), np.full(ne, int(avg), dtype=np.int64),
                               np.ascontiguousarray(self.K_b),
                               np.ascontiguousarray(self.H_bar) if avg else np.zeros((ne, 12, 12)),
                               np.ascontiguousarray(np.broadcast_to(self.EA * self.L, (ne,)), dtype=float))

    def section_forces(self, d: np.ndarray) -> np.ndarray:
        """Section forces (ne, 2, 6) ``(N, Vy, Vz, T, My, Mz)`` at node 0 and node 1, local axes.

        ``N``: axial force of the formulation at the ends (:meth:`axial_force`). The others come
        from the linear part, ``S(node 0) = -(K_b d)_0``, ``S(node 1) = (K_b d)_1``: for
        Euler-Bernoulli ``Mz = EIz v''``, ``My = -EIy w''``, ``T = GJ theta'``, ``Vy = -dMz/dx``,
        ``Vz = dMy/dx`` (theory eq. 6.9). Equal to ``Beam2.stress`` in the linear limit.
        """
        S = np.einsum("eij,ej->ei", self._local_bending_stiffness(), self.to_local(d)).reshape(-1, 2, 6)
        S[:, 0] *= -1.0
        S[:, :, 0] = self.axial_force(d, np.array([0.0, 1.0]))
        return S
