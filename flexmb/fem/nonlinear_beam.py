"""Nonlinear beam structure: the elastic part of the nonlinear floating-frame beam (theory-elements §6).

``NonlinearBeamStructure`` evaluates the strain energy, internal forces and exact tangent
stiffness of a mesh of two-node beams with Green-Lagrange axial strain (foreshortening), on
all nodal dofs, in the body frame. Element operators: :mod:`flexmb.fem.elements.beam_nonlinear`;
the element loop is compiled (:mod:`flexmb.compiled.beam`). The tangent on the free dofs has one
CSR pattern (the model assembler's, restricted), built at construction, that every call refills
through precomputed data positions (theory §6.5).

At ``u = 0`` the tangent equals the model's linear stiffness ``K`` on the free dofs; node
springs of the model (its linear stiffness that does not come from the beam elements) are
carried as a constant linear term. SI units: m, rad, N, N m, J.
"""
from __future__ import annotations

from collections import Counter
from typing import Sequence

import numpy as np
import scipy.sparse as sp

from flexmb.compiled import beam as compiled
from flexmb.errors import ModelError, NonFiniteError
from flexmb.fem.elements import kernel_class
from flexmb.fem.elements.beam import Beam2
from flexmb.fem.elements.beam_nonlinear import MEMBRANE_MODES, BeamElementData, NonlinearBeamKernel
from flexmb.fem.model import FEModel

__all__ = ["NonlinearBeamStructure", "MEMBRANE_MODES"]


class FreeDofStructure:
    """Shared part of the beam structures on the free dofs of an FEModel (``model``, ``ndof_free`` and the
    free CSR pattern ``_positions``, ``_indptr``, ``_indices`` set by the subclass)."""

    def _linear_extra(self) -> tuple[sp.csr_matrix | None, np.ndarray | None]:
        """The part of ``model.K`` not made by the beam elements (node springs), on the free dofs.

        Returns ``(matrix, data aligned with the free pattern)`` or ``(None, None)`` when zero.
        """
        asm, K = self.model.assembler, self.model.K
        if K.nnz != asm.nnz or not np.array_equal(K.indices, asm.indices):
            raise ModelError("the model's stiffness matrix does not use the model assembler's pattern")
        elements = asm.zeros()
        for block, chunk in enumerate(self.model.chunks):
            asm.add(elements, block, chunk.kernel.stiffness())
        extra = K.data - elements
        # element and model assembly sum in different orders: below 1e-12 of the largest entry is round-off
        if not np.any(np.abs(extra) > 1e-12 * max(np.abs(K.data).max(initial=0.0), 1.0)):
            return None, None
        data = extra[self._positions]
        return self._csr(data.copy()), data

    @property
    def extra_stiffness(self) -> sp.csr_matrix | None:
        """The constant linear stiffness of node springs on the free dofs (None when there is none)."""
        return self._extra

    def _csr(self, data: np.ndarray) -> sp.csr_matrix:
        """CSR matrix on the free dofs with the constant pattern and values ``data``."""
        A = sp.csr_matrix((data, self._indices, self._indptr), shape=(self.ndof_free,) * 2, copy=False)
        A.has_sorted_indices = True
        A.has_canonical_format = True
        return A


class NonlinearBeamStructure(FreeDofStructure):
    """All two-node beams of an :class:`FEModel` with nonlinear (foreshortening) axial strain.

    Args:
        model: an FEModel made only of ``line`` (two-node beam) elements, 6 dofs per node.
        fixed_dofs: global dof ids held at zero (e.g. the floating-frame constraints).
        membrane: ``"average"`` (element-mean axial strain, locking-free, default) or
            ``"pointwise"`` (theory §6.3).
        wagner: keep the torsional ``r_p^2 theta'^2`` term of the axial strain (theory eq. 6.2).

    Attributes:
        free: free global dof ids (sorted): all dofs but ``fixed_dofs`` and the model's inactive ones.
        ndof_free: number of free dofs.
        elements: the element arrays of the compiled loop (all chunks stacked).
        element_free_dofs: (ne, 12) int64 position of every element dof among the free dofs, -1 if held.
    """

    def __init__(self, model: FEModel, fixed_dofs: Sequence[int] | np.ndarray | None = None, *,
                 membrane: str = "average", wagner: bool = True) -> None:
        _check_model(model)
        self.model = model
        self.fixed = _check_fixed(model, fixed_dofs)
        self.free = model.free_dofs(self.fixed)
        self.free.flags.writeable = False
        self.ndof_free = int(self.free.size)
        self.kernels = [NonlinearBeamKernel(c.kernel, membrane, wagner) for c in model.chunks]
        self.membrane, self.wagner = membrane, bool(wagner)
        self._dofmaps = [c.dofmap for c in model.chunks]
        self._positions, self._indptr, self._indices = _free_pattern(model, self.free)
        self._nnz = int(self._positions.size)
        dofmap = np.concatenate(self._dofmaps).astype(np.int64)
        self._entries = _entry_positions(dofmap, self.free, model.ndof, self._indptr, self._indices).reshape(-1, 144)
        where = np.full(model.ndof, -1, dtype=np.int64)
        where[self.free] = np.arange(self.ndof_free)
        self.element_free_dofs = np.ascontiguousarray(where[dofmap])
        self.elements = BeamElementData.concatenate([k.element_data() for k in self.kernels])
        self._identity = np.arange(self.ndof_free, dtype=np.int64)[None, :]      # coordinate maps of the kernels
        self._owner = np.zeros(dofmap.shape[0], dtype=np.int64)
        self._extra, self._extra_data = self._linear_extra()

    # -- vectors --------------------------------------------------------------------------------
    def _check_u(self, u_free: np.ndarray) -> np.ndarray:
        """``u_free`` as a float64 array (nfree,); ModelError for a wrong shape, NonFiniteError for NaN/inf."""
        u_free = np.ascontiguousarray(u_free, dtype=float)
        if u_free.shape != (self.ndof_free,):
            raise ModelError(f"free displacements must have shape ({self.ndof_free},), got {u_free.shape}")
        if not np.all(np.isfinite(u_free)):
            bad = self.free[np.flatnonzero(~np.isfinite(u_free))[:10]]
            raise NonFiniteError(f"free displacements are not finite at global dofs {bad.tolist()}")
        return u_free

    def expand(self, u_free: np.ndarray) -> np.ndarray:
        """Full dof vector (ndof,) with ``u_free`` on :attr:`free` and zero elsewhere, m and rad."""
        u = np.zeros(self.model.ndof)
        u[self.free] = self._check_u(u_free)
        return u

    def _element_dofs(self, u_free: np.ndarray) -> list[np.ndarray]:
        """Element dof arrays (ne, 12) of every chunk."""
        u = self.expand(u_free)
        return [u[dm] for dm in self._dofmaps]

    # -- energy, forces, tangent ----------------------------------------------------------------
    def strain_energy(self, u_free: np.ndarray) -> float:
        """Strain energy, J (theory eq. 6.1), plus ``u^T K_s u / 2`` of node springs."""
        u_free = self._check_u(u_free)
        E, out = self.elements, np.zeros(1)
        compiled.energy(u_free, self._identity, 0, self.element_free_dofs, self._owner, E.D, E.w, E.nq, E.avg,
                        E.Kb, E.EAL, out)
        energy = float(out[0])
        if self._extra is not None:
            energy += 0.5 * float(u_free @ (self._extra @ u_free))
        return energy

    def internal_force(self, u_free: np.ndarray) -> tuple[np.ndarray, sp.csr_matrix]:
        """Internal force ``f = dU/du`` (nfree,), N and N m, and tangent ``K_t = d^2U/du^2``.

        ``K_t`` is a CSR matrix (nfree, nfree), symmetric, whose ``indptr``/``indices`` are the
        same (read-only) arrays on every call.
        """
        u_free = self._check_u(u_free)
        E = self.elements
        f = np.zeros(self.ndof_free)
        kdata = np.zeros(self._nnz)
        compiled.forces_sparse(u_free, self.element_free_dofs, E.D, E.w, E.nq, E.avg, E.Kb, E.Hbar, E.EAL,
                               self._entries, f, kdata, self._identity)
        if self._extra is not None:
            f += self._extra @ u_free
            kdata += self._extra_data
        return f, self._csr(kdata)

    def tangent_dense(self, u_free: np.ndarray) -> np.ndarray:
        """Tangent stiffness (nfree, nfree) as a dense array."""
        u_free = self._check_u(u_free)
        E = self.elements
        K = np.zeros((1, self.ndof_free, self.ndof_free))
        compiled.forces_dense(u_free, self._identity, 0, self.element_free_dofs, self._owner, E.D, E.w, E.nq, E.avg,
                              E.Kb, E.Hbar, E.EAL, np.zeros((1, self.ndof_free)), K)
        if self._extra is not None:
            K[0] += self._extra.toarray()
        return K[0]

    # -- recovery -------------------------------------------------------------------------------
    def axial_force(self, u_free: np.ndarray) -> np.ndarray:
        """Axial force ``N`` (ne,) at the element midpoints, N, tension positive (theory eq. 6.8).

        Elements in the order of ``mesh.cells["line"]``.
        """
        mid = np.array([0.5])
        return np.concatenate([k.axial_force(d, mid)[:, 0] for k, d in zip(self.kernels, self._element_dofs(u_free))])

    def section_forces(self, u_free: np.ndarray) -> np.ndarray:
        """Section forces (ne, 2, 6) ``(N, Vy, Vz, T, My, Mz)`` at both element ends, local axes.

        N, N m; bending moments ``Mz = EIz v''``, ``My = -EIy w''`` (theory eq. 6.9).
        """
        return np.concatenate([k.section_forces(d) for k, d in zip(self.kernels, self._element_dofs(u_free))])

    def curvature(self, u_free: np.ndarray) -> np.ndarray:
        """Bending curvatures (ne, 2, 2) ``(w'', v'')`` at both element ends, 1/m (Euler-Bernoulli).

        ``w'' = -My / EIy``, ``v'' = Mz / EIz`` from :meth:`section_forces`; for Timoshenko
        sections this is the rotation gradient ``(-theta_y', theta_z')``.
        """
        S = self.section_forces(u_free)
        EIy = np.concatenate([k_.props.E * k_.props.section.Iy for k_ in self._beams()])
        EIz = np.concatenate([k_.props.E * k_.props.section.Iz for k_ in self._beams()])
        return np.stack([-S[:, :, 4] / EIy[:, None], S[:, :, 5] / EIz[:, None]], axis=-1)

    def _beams(self) -> list[Beam2]:
        return [c.kernel for c in self.model.chunks]


def _check_model(model: FEModel) -> None:
    """Refuse anything but an FEModel of two-node beams with 6 dofs per node (ModelError)."""
    if not isinstance(model, FEModel):
        raise ModelError(f"NonlinearBeamStructure needs an FEModel, got {type(model).__name__}")
    counts: Counter[str] = Counter()
    for chunk in model.chunks:
        if chunk.cell_type != "line" or not isinstance(chunk.kernel, Beam2):
            counts[chunk.cell_type] += chunk.elements.size
    if counts:
        listed = ", ".join(f"{n} {t!r} ({kernel_class(t).kind})" for t, n in sorted(counts.items()))
        raise ModelError(f"NonlinearBeamStructure needs a model made only of 2-node beam elements "
                         f"(cell type 'line'); this model also has {listed} elements")
    if model.dofs_per_node != 6:
        raise ModelError(f"NonlinearBeamStructure needs 6 dofs per node, the model has {model.dofs_per_node}")


def _check_fixed(model: FEModel, fixed_dofs: Sequence[int] | np.ndarray | None) -> np.ndarray:
    """Sorted unique fixed dof ids; ModelError for non-integers or ids outside ``[0, ndof)``."""
    if fixed_dofs is None:
        return np.zeros(0, dtype=np.int64)
    a = np.asarray(fixed_dofs).ravel()
    if a.size == 0:
        return np.zeros(0, dtype=np.int64)
    if a.dtype.kind not in "iu":
        raise ModelError(f"fixed dofs must be integer dof ids, got {a[:10].tolist()}")
    bad = a[(a < 0) | (a >= model.ndof)]
    if bad.size:
        raise ModelError(f"fixed dofs {bad[:10].tolist()} lie outside the model's dofs [0, {model.ndof})")
    return np.unique(a.astype(np.int64))


def _free_pattern(model: FEModel, free: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """CSR pattern of the model's matrices restricted to ``free`` rows and columns.

    Returns ``(positions, indptr, indices)``: ``positions[k]`` is the data position, in the
    model assembler's full pattern, of the k-th stored entry of the free submatrix.
    """
    asm = model.assembler
    marker = asm.matrix(np.arange(1.0, asm.nnz + 1.0))       # entry k carries k + 1 (exact in float64)
    sub = marker[free][:, free].tocsr()
    sub.sort_indices()
    positions = sub.data.astype(np.int64) - 1
    indptr, indices = sub.indptr.copy(), sub.indices.copy()
    for a in (positions, indptr, indices):
        a.flags.writeable = False
    return positions, indptr, indices


def _entry_positions(dofmap: np.ndarray, free: np.ndarray, ndof: int, indptr: np.ndarray,
                     indices: np.ndarray) -> np.ndarray:
    """Data position in the free CSR pattern of every element-matrix entry (ne * 12 * 12,), int64.

    Entries in a fixed row or column get ``nnz`` (a slot that is dropped). The position of
    free entry ``(r, c)`` is found by binary search of the key ``r * nfree + c`` among the
    sorted keys of the pattern (rows ascending, columns ascending within a row); computed once,
    so that the compiled element loop adds each entry in place (theory §6.5).
    """
    nfree, nnz = free.size, indices.size
    where = np.full(ndof, -1, dtype=np.int64)
    where[free] = np.arange(nfree)
    local = where[dofmap]                                               # (ne, 12)
    rows = np.broadcast_to(local[:, :, None], local.shape + local.shape[1:]).reshape(-1)
    cols = np.broadcast_to(local[:, None, :], local.shape + local.shape[1:]).reshape(-1)
    keys = np.repeat(np.arange(nfree, dtype=np.int64), np.diff(indptr)) * nfree + indices
    valid = (rows >= 0) & (cols >= 0)
    pos = np.full(rows.size, nnz, dtype=np.int64)
    pos[valid] = np.searchsorted(keys, rows[valid] * nfree + cols[valid])
    if not np.array_equal(keys[pos[valid]], rows[valid] * nfree + cols[valid]):
        raise ModelError("element dofs outside the model's sparsity pattern")   # cannot happen for FEModel
    return pos
