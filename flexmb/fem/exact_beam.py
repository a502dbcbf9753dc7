"""Geometrically exact two-node beam: consistent 3-D co-rotational formulation (theory-elements §7).

``ExactBeamStructure`` evaluates the strain energy, internal forces and exact tangent stiffness of
a mesh of two-node beams for arbitrarily large displacements and rotations, on all nodal dofs,
in the body frame. Nodal coordinates per node: displacement ``u`` (m) and the total rotation
vector ``psi`` (rad) of the node triad, ``Q = exp(psi~)`` (Argyris 1982); the end triads of an
element are ``T_i = Q_i R0`` with ``R0`` (columns) the element's initial local axes (same axes
as the linear kernel :class:`~flexmb.fem.elements.beam.Beam2`).

Co-rotational frame (Crisfield 1990, Comput. Methods Appl. Mech. Engrg 81:131-150, §3;
Battini & Pacoste 2002, Comput. Methods Appl. Mech. Engrg 191:1755-1789, eqs. 8-11)::

    r1 = (x2 - x1) / l_n,   q = (T1 e2 + T2 e2) / 2,   r3 = (r1 x q) / |r1 x q|,   r2 = r3 x r1

local deformations (Battini & Pacoste eq. 12)::

    u_bar = l_n - l_0,   theta_bar_i = log(R_r^T T_i),  i = 1, 2   (log: quaternion, |theta| < pi)

and the strain energy of the linear local Timoshenko element (theory-elements eq. 4.6)::

    U = EA l0 / 2 eps^2 + GJ/(2 l0) (theta_bar_2x - theta_bar_1x)^2
        + 1/2 [th1, th2]_z k(EIz, Phi_y) [th1, th2]_z + 1/2 [th1, th2]_y k(EIy, Phi_z) [th1, th2]_y,
    k(EI, Phi) = EI / ((1 + Phi) l0) [[4 + Phi, 2 - Phi], [2 - Phi, 4 + Phi]]
    eps = u_bar / l0 + sum_{y,z} (2 th1^2 - th1 th2 + 2 th2^2) / 30      (membrane="average")
    eps = u_bar / l0                                                     (membrane="chord")

(Przemieniecki 1968, ch. 5: the end-rotation part of the exact two-node Timoshenko element, so an
infinite shear factor gives the Euler-Bernoulli limit and no shear locking occurs). The "average"
axial strain is the element mean of ``u' + (v'^2 + w'^2)/2`` over the local cubic deflection
(``int_0^l v'^2 dx = l (2 th1^2 - th1 th2 + 2 th2^2) / 15``), the second-order local element of
Crisfield 1991 (*Non-linear FE Analysis of Solids and Structures* vol. 1, §7.3, shallow arch, mean
membrane strain: no membrane locking) used inside the co-rotational frame as by Battini & Pacoste
2002 §4: axial force now stiffens or softens bending inside each element (centrifugal stiffening,
buckling) instead of only through the chord rotations. Internal force
``f = dU/dd`` and tangent ``K = d^2U/dd^2`` are the exact first and second derivatives of this
energy, computed by second-order forward-mode differentiation (value, gradient, Hessian carried
through every operation) over the 9 independent variables ``(x2 - x1, psi1, psi2)`` of an
element, compiled with numba (:mod:`flexmb.compiled.exact_beam`, shared with the flexible-body kernel that
evaluates the exact beams of a simulation): one call evaluates all elements and scatters into the free-dof
force vector and the CSR values of a pattern built once.

Objectivity: a rigid rotation ``x -> S x``, ``T_i -> S T_i`` leaves ``R_r^T T_i`` and ``l_n``
unchanged, so it produces no strain and no force. Cable mode (``cable=True``): tension-only
bar ``U = EA/(2 l0) <u_bar>_+^2`` (no bending or torsion; a slack element carries nothing).

Rotation parameterization: ``exp`` of the total rotation vector is singular (its differential
drops rank) where ``|psi| = 2 pi`` for perturbations across the axis; a rotation about a fixed
axis (planar problems, out-of-plane rotation dofs held) has no such limit, the angle is unbounded.
SI units: m, rad, N, N m, J.
"""
from __future__ import annotations

from typing import NamedTuple, Sequence

import numpy as np
import scipy.sparse as sp

from flexmb.compiled.exact_beam import NJ, NJ3, NV, TRIAD_ROWS, WORK_ROWS, element, forces_sparse
from flexmb.errors import ConvergenceError, ModelError
from flexmb.fem.model import FEModel
from flexmb.fem.nonlinear_beam import FreeDofStructure, _check_fixed, _check_model, _entry_positions, _free_pattern

__all__ = ["ExactBeamStructure", "ExactBeamElementData", "element_energy"]

MEMBRANE = ("average", "chord")
"""Axial strain of the local element: element mean including the bending part, or chord stretch only."""


class ExactBeamElementData(NamedTuple):
    """Element arrays of the compiled loops (:mod:`flexmb.compiled.exact_beam`), ``ne`` elements."""

    X21: np.ndarray     #: (ne, 3) initial chord ``X2 - X1``, m
    R0: np.ndarray      #: (ne, 3, 3) initial local axes as columns
    l0: np.ndarray      #: (ne,) initial length, m
    k: np.ndarray       #: (ne, 9) ``(EA/l0, GJ/l0, kz11, kz12, kz22, ky11, ky12, ky22, average)`` (module doc), N, N m
    cable: np.ndarray   #: (ne,) int64 1: tension-only bar, 0: beam


def element_energy(d: np.ndarray, psi1: np.ndarray, psi2: np.ndarray, R0: np.ndarray, l0: float,
                   k: np.ndarray, cable: bool = False) -> tuple[float, np.ndarray, np.ndarray, np.ndarray]:
    """One element: ``(U, dU/dz, d2U/dz2, local deformations)`` for ``z = (x2 - x1, psi1, psi2)``.

    For tests and recovery; ``R0`` (3, 3) columns = initial local axes, ``k`` as in the module."""
    W = np.zeros((WORK_ROWS, NJ))
    U = np.zeros(NJ)
    dl = np.zeros(7)
    if not element(np.asarray(d, float), np.asarray(psi1, float), np.asarray(psi2, float),
                   np.ascontiguousarray(R0, dtype=float), float(l0), np.asarray(k, float), bool(cable), np.arange(NV),
                   W, np.zeros(TRIAD_ROWS * NJ3), U, dl):
        raise ConvergenceError("exact beam element: a local rotation is pi")
    H = np.zeros((NV, NV))
    H[np.triu_indices(NV)] = U[1 + NV:]
    return float(U[0]), U[1:1 + NV].copy(), H + np.triu(H, 1).T, dl


class ExactBeamStructure(FreeDofStructure):
    """All two-node beams of an :class:`FEModel` as geometrically exact co-rotational elements.

    Args:
        model: an FEModel made only of ``line`` (two-node beam) elements, 6 dofs per node; its
            sections give ``EA``, ``GJ``, ``EIy``, ``EIz`` and the shear parameters ``Phi``
            (``beam="euler-bernoulli"`` models: ``Phi = 0``).
        fixed_dofs: global dof ids held at zero (the floating-frame constraints).
        cable: tension-only bar elements (no bending, no torsion, no compression; module doc).
        membrane: ``"average"`` (default): local axial strain = element mean of ``u' + (v'^2 + w'^2)/2``
            of the local cubic element, ``u_bar/l0 + (2 th1^2 - th1 th2 + 2 th2^2)/30`` per bending
            plane (the second-order local element: tension and compression stiffen/soften bending
            inside each element); ``"chord"``: ``u_bar / l0`` only (the classic linear local element).

    Attributes:
        free: free global dof ids (sorted); ``ndof_free`` their number.
        elements: the element arrays of the compiled loops (all chunks stacked).
        element_free_dofs: (ne, 12) int64 position of every element dof among the free dofs, -1 if held.
    """

    def __init__(self, model: FEModel, fixed_dofs: Sequence[int] | np.ndarray | None = None, *,
                 cable: bool = False, membrane: str = "average") -> None:
        _check_model(model)
        if membrane not in MEMBRANE:
            raise ModelError(f"exact beam: membrane must be one of {MEMBRANE}, got {membrane!r}")
        self.model = model
        self.cable = bool(cable)
        self.membrane = membrane
        self.fixed = _check_fixed(model, fixed_dofs)
        self.free = model.free_dofs(self.fixed)
        self.free.flags.writeable = False
        self.ndof_free = int(self.free.size)
        self._positions, self._indptr, self._indices = _free_pattern(model, self.free)
        self._nnz = int(self._positions.size)
        dofmaps, X21, R0, l0, k = [], [], [], [], []
        for c in model.chunks:
            kern = c.kernel
            p, s = kern.props, kern.props.section
            X = kern.X
            X21.append(X[:, 1] - X[:, 0])
            R0.append(np.transpose(kern.R, (0, 2, 1)))          # columns: local x, y, z
            L = kern.L
            l0.append(L)
            ez = p.E * s.Iz / ((1.0 + kern.phi_y) * L)
            ey = p.E * s.Iy / ((1.0 + kern.phi_z) * L)
            ke = np.column_stack([p.E * s.A / L, p.G * s.J / L,
                                  ez * (4.0 + kern.phi_y), ez * (2.0 - kern.phi_y), ez * (4.0 + kern.phi_y),
                                  ey * (4.0 + kern.phi_z), ey * (2.0 - kern.phi_z), ey * (4.0 + kern.phi_z),
                                  np.full(L.size, 1.0 if membrane == "average" else 0.0)])
            for name, v in (("EA", p.E * s.A), ("EIy", p.E * s.Iy), ("EIz", p.E * s.Iz), ("GJ", p.G * s.J)):
                v = np.broadcast_to(v, L.shape)
                if not np.all(np.isfinite(v) & (v > 0.0)):
                    bad = np.flatnonzero(~(np.isfinite(v) & (v > 0.0)))
                    raise ModelError(f"exact beam: {name} must be positive and finite; elements "
                                     f"{bad[:10].tolist()} have {v[bad[0]]!r}")
            k.append(np.broadcast_to(ke, (L.size, 9)))
            dofmaps.append(c.dofmap)
        self._dofmap = np.ascontiguousarray(np.concatenate(dofmaps), dtype=np.int64)
        contiguous = np.ascontiguousarray
        l0 = contiguous(np.concatenate(l0), dtype=float)
        self.elements = ExactBeamElementData(contiguous(np.concatenate(X21), dtype=float),
                                             contiguous(np.concatenate(R0), dtype=float), l0,
                                             contiguous(np.concatenate(k), dtype=float),
                                             np.full(l0.size, int(self.cable), dtype=np.int64))
        self.n_elements = int(l0.size)
        where = np.full(model.ndof, -1, dtype=np.int64)
        where[self.free] = np.arange(self.ndof_free)
        self.element_free_dofs = contiguous(where[self._dofmap])
        self._pos = np.concatenate([_entry_positions(dm, self.free, model.ndof, self._indptr, self._indices)
                                    for dm in dofmaps]).astype(np.int64)
        self._extra, self._extra_data = self._linear_extra()

    def _evaluate(self, u_free: np.ndarray, tangent: bool):
        u_free = np.asarray(u_free, dtype=float)
        if u_free.shape != (self.ndof_free,):
            raise ModelError(f"free dofs must have shape ({self.ndof_free},), got {u_free.shape}")
        if not np.all(np.isfinite(u_free)):
            raise ConvergenceError("exact beam: non-finite nodal coordinates")
        u = np.zeros(self.model.ndof)
        u[self.free] = u_free
        ue = u[self._dofmap]
        f_full = np.zeros(self.model.ndof)
        kdata = np.zeros(self._nnz + 1)
        energy = np.zeros(self.n_elements)
        local = np.zeros((self.n_elements, 7))
        E = self.elements
        bad = forces_sparse(ue, self.element_free_dofs, E.X21, E.R0, E.l0, E.k, self.cable, tangent, f_full, kdata,
                            self._dofmap, self._pos, energy, local)
        if bad >= 0:
            raise ConvergenceError(f"exact beam: element {bad} turns by pi relative to its chord (the "
                                   "local rotation is undefined there; refine the mesh or reduce the step)")
        return f_full[self.free], kdata[:-1], energy, local

    def strain_energy(self, u_free: np.ndarray) -> float:
        """Strain energy, J (module doc), plus ``u^T K_s u / 2`` of node springs."""
        _, _, energy, _ = self._evaluate(u_free, False)
        out = float(energy.sum())
        if self._extra is not None:
            u_free = np.asarray(u_free, dtype=float)
            out += 0.5 * float(u_free @ (self._extra @ u_free))
        return out

    def internal_force(self, u_free: np.ndarray) -> tuple[np.ndarray, sp.csr_matrix]:
        """Internal force ``f = dU/du`` (nfree,), N and N m, and exact tangent ``K_t = d^2U/du^2`` (CSR,
        constant pattern)."""
        f, kdata, _, _ = self._evaluate(u_free, True)
        if self._extra is not None:
            f = f + self._extra @ np.asarray(u_free, dtype=float)
            kdata = kdata + self._extra_data
        return f, self._csr(kdata)

    def tangent_dense(self, u_free: np.ndarray) -> np.ndarray:
        """Tangent stiffness (nfree, nfree) as a dense array."""
        return self.internal_force(u_free)[1].toarray()

    def local_deformations(self, u_free: np.ndarray) -> np.ndarray:
        """(ne, 7): ``u_bar`` (m), ``theta_bar_1`` (3, rad), ``theta_bar_2`` (3, rad) in the co-rotated frame."""
        return self._evaluate(u_free, False)[3]

    def section_forces(self, u_free: np.ndarray) -> np.ndarray:
        """(ne, 6) local end forces ``(N, T, Mz1, Mz2, My1, My2)``: axial force (tension positive, N),
        torque and the end moments conjugate to the local rotations (N m), from the local element."""
        d = self.local_deformations(u_free)
        k, l0 = self.elements.k, self.elements.l0
        stretch = d[:, 0].copy()
        if not self.cable and self.membrane == "average":
            for a, b in ((3, 6), (2, 5)):
                stretch += l0 / 30.0 * (2.0 * d[:, a] ** 2 - d[:, a] * d[:, b] + 2.0 * d[:, b] ** 2)
        N = k[:, 0] * stretch
        if self.cable:
            N = np.maximum(N, 0.0)
            z = np.zeros_like(N)
            return np.column_stack([N, z, z, z, z, z])
        T = k[:, 1] * (d[:, 4] - d[:, 1])
        Mz1 = k[:, 2] * d[:, 3] + k[:, 3] * d[:, 6]
        Mz2 = k[:, 3] * d[:, 3] + k[:, 4] * d[:, 6]
        My1 = k[:, 5] * d[:, 2] + k[:, 6] * d[:, 5]
        My2 = k[:, 6] * d[:, 2] + k[:, 7] * d[:, 5]
        return np.column_stack([N, T, Mz1, Mz2, My1, My2])

    def axial_force(self, u_free: np.ndarray) -> np.ndarray:
        """Axial force (ne,) of each element, N, tension positive."""
        return self.section_forces(u_free)[:, 0]
