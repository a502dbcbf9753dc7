"""``ModeSet``: a reduced flexible body -- mode shapes, reduced matrices, interfaces (theory §4).

A mode set describes the displacement field of a body as ``u = phi eta`` with ``m`` modal
coordinates ``eta``. It keeps the shapes at every node (all dofs of the FE model), the
reduced mass and stiffness ``M = phi^T M_FE phi``, ``K = phi^T K_FE phi``, the interface points
(their six dofs as linear functions ``psi`` of ``eta``), nodal stress per unit modal
coordinate, the inertia invariants and the geometric-stiffness matrices of the stiffening load
cases (docs/theory-stiffening.md). It saves to and loads from one ``.npz`` file.
"""
from __future__ import annotations

import json
import zipfile
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import scipy.linalg as sla

from flexmb.errors import ModelError, UnsafeFileError
from flexmb.reduction.eigen import check_no_zero_modes
from flexmb.reduction.interfaces import Condensation, Interface
from flexmb.reduction.invariants import Invariants, inertia_invariants
from flexmb.reduction.stiffening import StiffeningMatrices, stiffening_matrices

FORMAT = "flexmb.ModeSet/1"
"""Format tag written into every saved mode set."""

DEPENDENT_RTOL = 1e-10
"""Basis directions whose mass eigenvalue (columns mass-normalized) is below this are dropped."""

MATRIX_RTOL = 1e-8
"""Reduced M and K must be symmetric and neither may have a negative eigenvalue, both to this tolerance
relative to their largest entry. Round-off of ``V^T A V`` for m modes is about ``m eps |A|`` (2e-13 for
m = 1000): the margin is over four decades, and any real asymmetry or negative mass/stiffness is far above it."""


def reduced_eigenbasis(M_B: np.ndarray, K_B: np.ndarray, normalize: bool = True
                       ) -> tuple[np.ndarray, np.ndarray, int]:
    """``(V, lambda, dropped)`` with ``V^T M_B V = I``, ``V^T K_B V = diag(lambda)`` (ascending).

    With ``normalize`` the basis columns are first scaled to unit modal mass (otherwise the
    caller has scaled them, before any projection that may cancel a column). Directions whose
    mass eigenvalue is below :data:`DEPENDENT_RTOL` (linearly dependent or massless
    combinations) are dropped and counted in ``dropped``.
    """
    M_B, K_B = 0.5 * (M_B + M_B.T), 0.5 * (K_B + K_B.T)
    d = np.sqrt(np.diag(M_B)) if normalize else np.ones(M_B.shape[0])
    d[d <= 0.0] = 1.0
    mu, U = np.linalg.eigh(M_B / np.outer(d, d))
    keep = mu > DEPENDENT_RTOL * max(mu.max(), 1e-300)
    W = (U[:, keep] / np.sqrt(mu[keep])) / d[:, None]
    lam, Q = np.linalg.eigh(W.T @ K_B @ W)
    return W @ Q, lam, int(np.count_nonzero(~keep))


def unit_modal_mass(M: Any, A: Any, W: np.ndarray) -> np.ndarray:
    """Columns of ``W`` scaled so that ``(A w)^T M (A w) = 1`` (massless columns unchanged)."""
    phi = np.asarray(A @ W)
    norms = np.sqrt(np.einsum("ik,ik->k", phi, np.asarray(M @ phi)))
    return W / np.where(norms > 0.0, norms, 1.0)


def modeset_from_basis(model: Any, cond: Condensation, W: np.ndarray, *, scale: float, kind: str,
                       reference: str | None = None, stress: bool = True, expect_dropped: int = 0,
                       info: dict | None = None) -> "ModeSet":
    """Orthonormal mode set spanned by the basis ``W`` (cond.n, r) in condensed coordinates.

    The columns of ``W`` must have been scaled (:func:`unit_modal_mass`) before any projection,
    so that a column the projection cancels shows as a dependent direction. Solves the reduced eigenproblem (``M = I``, ``K`` diagonal, ascending), requires exactly
    ``expect_dropped`` dependent directions (6 when the basis holds the rigid-body modes
    projected out) and no zero-frequency mode (``lambda < RIGID_RTOL scale``), then maps the
    interface points (``psi = C_j W V``) and, with ``stress``, the nodal stress of every mode.
    """
    phi_b = np.asarray(cond.A @ W)
    V, lam, dropped = reduced_eigenbasis(phi_b.T @ np.asarray(model.M @ phi_b), phi_b.T @ np.asarray(model.K @ phi_b),
                                         normalize=False)
    if dropped != expect_dropped:
        raise ModelError(f"the reduction basis of {W.shape[1]} vectors has {dropped} linearly dependent or "
                         f"massless directions, expected {expect_dropped}")
    check_no_zero_modes(lam, scale, "the reduced basis leaves")
    phi = phi_b @ V
    WV = W @ V
    interfaces = {p.name: Interface(p.name, p.position, p.nodes, np.asarray(cond.C[p.name] @ WV), p.connection,
                                    p.weights) for p in cond.points}
    stress_modes = None
    if stress:
        stress_modes = np.stack([model.nodal_stress(phi[:, k]) for k in range(phi.shape[1])], axis=2)
    return ModeSet(phi, model.points, model.dofs_per_node, np.eye(lam.size), np.diag(lam), interfaces,
                   stress_modes, kind=kind, reference=reference, info=info, model=model,
                   fixed_dofs=_held_dofs(model, cond))


def _held_dofs(model: Any, cond: Condensation) -> np.ndarray:
    """Active dofs that ``cond`` holds (the ``fixed`` supports): neither interior, nor nodes of a
    rigid interface, nor inactive; sorted."""
    moving = np.zeros(model.ndof, dtype=bool)
    moving[cond.interior] = True
    for p in cond.rigid:
        moving[p.dofs] = True
    moving[model.inactive_dofs] = True
    return np.flatnonzero(~moving)


def _check_reduced(A: np.ndarray, what: str, kind: str) -> None:
    """Refuse a reduced matrix that is not finite, not symmetric or has a negative eigenvalue (indefinite),
    naming the matrix and the offending entry or eigenvalue (tolerance :data:`MATRIX_RTOL`)."""
    owner = f"mode set ({kind}): reduced {what}"
    sym = what.split()[-1]
    bad = np.argwhere(~np.isfinite(A))
    if bad.size:
        i, j = bad[0]
        raise ModelError(f"{owner} has non-finite entries, e.g. {sym}[{i}, {j}] = {A[i, j]}")
    if not A.size:
        return
    scale = np.abs(A).max()
    asym = np.abs(A - A.T)
    i, j = np.unravel_index(np.argmax(asym), A.shape)
    if asym[i, j] > MATRIX_RTOL * scale:
        raise ModelError(f"{owner} is not symmetric: {sym}[{i}, {j}] = {A[i, j]:.6g} but {sym}[{j}, {i}] = "
                         f"{A[j, i]:.6g}")
    off = A - np.diag(np.diag(A))
    lowest = float(np.diag(A).min() if not off.any() else np.linalg.eigvalsh(A)[0])
    if lowest < -MATRIX_RTOL * scale:
        raise ModelError(f"{owner} is indefinite: its lowest eigenvalue is {lowest:.6g} (largest entry "
                         f"{scale:.6g}); reduced mass and stiffness matrices have no negative eigenvalues")


class ModeSet:
    """Mode shapes and reduced matrices of a flexible body.

    Args:
        phi: (ndof, m) mode shapes at all dofs of the FE model (m; rad on rotations).
        nodes: (N, 3) undeformed node positions in body axes, m.
        dofs_per_node: 3 (solids) or 6.
        M, K: (m, m) reduced mass (kg per modal coordinate squared) and stiffness.
        interfaces: name -> :class:`Interface`.
        stress_modes: (N, 6, m) nodal Voigt stress per unit modal coordinate (Pa; beams:
            section forces N, N m), or None.
        kind: how the set was made ("craig-bampton", "free-free", ...).
        reference: name of the interface the body frame is attached to, or None.
        info: JSON-serializable notes (counts, shift, connection, ...).
        invariants: precomputed :class:`Invariants`, or None (computed from ``model`` on demand).
        model: the FEModel the modes come from (not saved).
        stiffening: precomputed :class:`StiffeningMatrices`, or None (computed from ``model`` on
            demand).
        fixed_dofs: dofs of the FE model held while the modes were computed (sorted ids), or None
            when unknown (sets not made by this package: then taken as none unless ``info``
            counts some, docs/theory-stiffening.md §2.3).
        cells: the mesh cells, meshio cell type -> (n_e, nodes per cell) node ids, or None (then
            ``model.mesh.cells`` when a model is attached); saved with the set, so that a body made
            from a saved set can be drawn (ParaView export).
    """

    def __init__(self, phi: np.ndarray, nodes: np.ndarray, dofs_per_node: int, M: np.ndarray, K: np.ndarray,
                 interfaces: dict[str, Interface] | None = None, stress_modes: np.ndarray | None = None, *,
                 kind: str = "modes", reference: str | None = None, info: dict | None = None,
                 invariants: Invariants | None = None, model: Any = None,
                 stiffening: StiffeningMatrices | None = None, fixed_dofs: np.ndarray | None = None,
                 cells: dict[str, np.ndarray] | None = None) -> None:
        self.phi = np.asarray(phi, dtype=float)
        self.nodes = np.asarray(nodes, dtype=float)
        self.dofs_per_node = int(dofs_per_node)
        self.M = np.asarray(M, dtype=float)
        self.K = np.asarray(K, dtype=float)
        self.interfaces = dict(interfaces or {})
        self.stress_modes = None if stress_modes is None else np.asarray(stress_modes, dtype=float)
        self.kind, self.reference, self.info = kind, reference, dict(info or {})
        self.model = model
        self._invariants = invariants
        self.fixed_dofs = None if fixed_dofs is None else np.asarray(fixed_dofs, dtype=np.int64).ravel()
        if cells is None and model is not None:
            cells = model.mesh.cells
        self.cells = None if cells is None else {str(k): np.asarray(v, dtype=np.int64) for k, v in cells.items()}
        self._stiffening: StiffeningMatrices | None = None
        self._check()
        if stiffening is not None:
            self.stiffening = stiffening

    def _check(self) -> None:
        n, m = self.phi.shape[0], self.n_modes
        if self.nodes.ndim != 2 or self.nodes.shape[1] != 3 or n != self.nodes.shape[0] * self.dofs_per_node:
            raise ModelError(f"mode shapes ({n} rows) do not match {self.nodes.shape[0]} nodes with "
                             f"{self.dofs_per_node} dofs each")
        if self.M.shape != (m, m) or self.K.shape != (m, m):
            raise ModelError(f"reduced M {self.M.shape} and K {self.K.shape} must be ({m}, {m})")
        for what, A in (("mass M", self.M), ("stiffness K", self.K)):
            _check_reduced(A, what, self.kind)
        bad = [k for k, i in self.interfaces.items() if i.psi.shape != (6, m)]
        if bad:
            raise ModelError(f"interfaces {bad}: psi must have shape (6, {m})")
        if self.stress_modes is not None and self.stress_modes.shape != (self.nodes.shape[0], 6, m):
            raise ModelError(f"stress modes must have shape ({self.nodes.shape[0]}, 6, {m}), "
                             f"got {self.stress_modes.shape}")
        for cell_type, conn in (self.cells or {}).items():
            if conn.ndim != 2 or (conn.size and (conn.min() < 0 or conn.max() >= self.nodes.shape[0])):
                raise ModelError(f"mesh cells {cell_type!r}: connectivity of shape {conn.shape} must be (n_e, "
                                 f"nodes per cell) ids of the {self.nodes.shape[0]} nodes")

    def __repr__(self) -> str:
        f = self.frequencies_hz
        span = f"{f[0]:.4g}..{f[-1]:.4g} Hz" if f.size else "no modes"
        return (f"ModeSet({self.kind}, {self.n_modes} modes, {span}; {self.nodes.shape[0]} nodes; "
                f"interfaces: {', '.join(self.interfaces) or '-'})")

    # -- queries ----------------------------------------------------------------------------------
    @property
    def n_modes(self) -> int:
        """Number of modal coordinates m."""
        return self.phi.shape[1]

    @property
    def frequencies_hz(self) -> np.ndarray:
        """Frequencies of the reduced system (eigenvalues of ``K x = lambda M x``), Hz, ascending."""
        if self.n_modes == 0:
            return np.zeros(0)
        lam = sla.eigh(self.K, self.M, eigvals_only=True)
        return np.sqrt(np.maximum(lam, 0.0)) / (2.0 * np.pi)

    def interface(self, name: str) -> Interface:
        """The interface called ``name``."""
        if name not in self.interfaces:
            raise ModelError(f"no interface {name!r} in this mode set; interfaces: "
                             f"{', '.join(sorted(self.interfaces)) or 'none'}")
        return self.interfaces[name]

    def is_orthonormal(self, rtol: float = 1e-8) -> bool:
        """True when ``M = I`` and ``K`` is diagonal to ``rtol`` (relative to ``max |K|``)."""
        off = self.K - np.diag(np.diag(self.K))
        return bool(np.allclose(self.M, np.eye(self.n_modes), rtol=0.0, atol=rtol)
                    and np.abs(off).max(initial=0.0) <= rtol * np.abs(self.K).max(initial=1.0))

    @property
    def invariants(self) -> Invariants:
        """Inertia invariants (computed from the attached model on first use)."""
        if self._invariants is None:
            self._invariants = inertia_invariants(self)
        return self._invariants

    @property
    def stiffening(self) -> StiffeningMatrices:
        """Geometric-stiffness matrices of the unit load cases (computed from the attached model on
        first use; docs/theory-stiffening.md)."""
        if self._stiffening is None:
            if self.model is None:
                raise ModelError("this mode set has no FE model attached and holds no stiffening matrices; "
                                 "compute them with flexmb.reduction.stiffening_matrices(modes, model) and assign "
                                 "them to modes.stiffening")
            self._stiffening = stiffening_matrices(self)
        return self._stiffening

    @stiffening.setter
    def stiffening(self, value: StiffeningMatrices) -> None:
        if not isinstance(value, StiffeningMatrices):
            raise ModelError(f"stiffening must be a StiffeningMatrices, got {type(value).__name__}")
        if value.n_modes != self.n_modes:
            raise ModelError(f"stiffening matrices for {value.n_modes} modes given to a set of {self.n_modes}")
        expected = sorted(k for k in self.interfaces if k != self.reference)
        if sorted(value.interfaces) != expected:
            raise ModelError(f"stiffening matrices for interfaces {sorted(value.interfaces)}, but this set's loaded "
                             f"interfaces are {expected}")
        self._stiffening = value

    # -- new mode sets ----------------------------------------------------------------------------
    def transformed(self, V: np.ndarray, **changes: Any) -> "ModeSet":
        """The mode set in new coordinates ``eta = V eta'`` (V (m, r))."""
        V = np.asarray(V, dtype=float)
        inv = self._invariants.transformed(V) if self._invariants is not None else None
        stiff = self._stiffening.transformed(V) if self._stiffening is not None else None
        args = dict(kind=self.kind, reference=self.reference, info=self.info, invariants=inv, model=self.model,
                    stiffening=stiff, fixed_dofs=self.fixed_dofs, cells=self.cells)
        args.update(changes)
        return ModeSet(self.phi @ V, self.nodes, self.dofs_per_node, V.T @ self.M @ V, V.T @ self.K @ V,
                       {k: i.transformed(V) for k, i in self.interfaces.items()},
                       None if self.stress_modes is None else self.stress_modes @ V, **args)

    def orthonormalize(self) -> "ModeSet":
        """Equivalent set with ``M = I`` and ``K`` diagonal, modes by ascending frequency."""
        V, lam, dropped = reduced_eigenbasis(self.M, self.K)
        if dropped:
            raise ModelError(f"the reduced mass matrix is singular ({dropped} dependent or massless directions)")
        out = self.transformed(V)
        out.K = np.diag(lam)
        out.M = np.eye(lam.size)
        return out

    def select(self, count: int | None = None, max_frequency_hz: float | None = None) -> "ModeSet":
        """The lowest ``count`` modes and/or those up to ``max_frequency_hz`` (orthonormalized first).

        Selecting from a Craig-Bampton set drops the highest orthonormal modes, which span part of
        the static constraint modes: interface static response is then no longer exact.
        """
        ms = self if self.is_orthonormal() else self.orthonormalize()
        lam = np.diag(ms.K)
        order = np.argsort(lam)
        keep = ms.n_modes
        if count is not None:
            if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or not 0 < count <= keep:
                raise ModelError(f"count must be an integer in [1, {keep}], got {count!r}")
            keep = int(count)
        if max_frequency_hz is not None:
            below = np.sqrt(np.maximum(lam[order], 0.0)) / (2.0 * np.pi) <= max_frequency_hz
            keep = min(keep, int(np.count_nonzero(below)))
            if keep == 0:
                raise ModelError(f"no mode at or below {max_frequency_hz} Hz (lowest "
                                 f"{np.sqrt(max(lam[order[0]], 0.0)) / (2 * np.pi):.4g} Hz)")
        return ms.transformed(np.eye(ms.n_modes)[:, order[:keep]])

    # -- files ------------------------------------------------------------------------------------
    def save(self, path: str | Path, stiffening: bool = True) -> None:
        """Write the set to one ``.npz`` file, with its invariants and (unless ``stiffening`` is
        False) its stiffening matrices, when they are known or can be computed from the model. Written
        under a temporary name and renamed (flexmb/io/safe.py): a failed save raises an OutputError and
        keeps any previous file at ``path``."""
        arrays: dict[str, Any] = {"phi": self.phi, "nodes": self.nodes, "M": self.M, "K": self.K}
        header = {"format": FORMAT, "dofs_per_node": self.dofs_per_node, "kind": self.kind,
                  "reference": self.reference, "info": self.info,
                  "interfaces": [{"name": i.name, "connection": i.connection} for i in self.interfaces.values()]}
        for k, i in enumerate(self.interfaces.values()):
            arrays.update({f"interface{k}_position": i.position, f"interface{k}_nodes": i.nodes,
                           f"interface{k}_psi": i.psi, f"interface{k}_weights": i.weights})
        if self.stress_modes is not None:
            arrays["stress_modes"] = self.stress_modes
        if self._invariants is not None or self.model is not None:
            arrays.update({f"invariants_{k}": v for k, v in self.invariants.arrays().items()})
        if self.fixed_dofs is not None:
            arrays["fixed_dofs"] = self.fixed_dofs
        if self.cells is not None:
            header["cells"] = list(self.cells)
            arrays.update({f"cells{k}": conn for k, conn in enumerate(self.cells.values())})
        if stiffening and (self._stiffening is not None or self.model is not None):
            header["stiffening"] = list(self.stiffening.interfaces)
            arrays["stiffening_inertial"] = self.stiffening.inertial
            arrays.update({f"stiffening_interface{k}": v for k, v in enumerate(self.stiffening.interfaces.values())})
        arrays["header"] = np.array(json.dumps(header))
        from ..io.safe import write_with
        write_with(path, lambda fh: np.savez(fh, **arrays), "mode set file")     # temporary name, then renamed

    @classmethod
    def load(cls, path: str | Path) -> "ModeSet":
        """Read a set written by :meth:`save` (no FE model attached; the mesh cells when the file
        holds them -- files written before they were saved load without)."""
        from ..io.safe import checked_npz
        try:
            with checked_npz(path, "mode set file") as data:      # hostile sizes and pickles refused
                return cls._from_arrays(data)
        except UnsafeFileError:
            raise
        except ModelError as exc:
            raise ModelError(f"mode set file {str(path)!r}: {exc}") from None
        except (OSError, ValueError, TypeError, KeyError, EOFError, zipfile.BadZipFile, zlib.error) as exc:
            raise ModelError(f"cannot read mode set {str(path)!r}: {type(exc).__name__}: {exc}") from exc

    @classmethod
    def _from_arrays(cls, data: Any) -> "ModeSet":
        """The set held by an open ``.npz`` archive (see :meth:`save`)."""
        files = set(data.files)
        header = json.loads(str(data["header"])) if "header" in files else {}
        if header.get("format") != FORMAT:
            raise ModelError(f"not a flexmb mode set (format {header.get('format')!r}, expected {FORMAT!r})")
        interfaces = {}
        for k, spec in enumerate(header["interfaces"]):
            interfaces[spec["name"]] = Interface(spec["name"], data[f"interface{k}_position"],
                                                 data[f"interface{k}_nodes"], data[f"interface{k}_psi"],
                                                 spec["connection"], data[f"interface{k}_weights"])
        inv = {f[len("invariants_"):]: data[f] for f in files if f.startswith("invariants_")}
        stiff = None
        if "stiffening" in header:
            stiff = StiffeningMatrices(data["stiffening_inertial"],
                                       {name: data[f"stiffening_interface{k}"]
                                        for k, name in enumerate(header["stiffening"])})
        return cls(data["phi"], data["nodes"], header["dofs_per_node"], data["M"], data["K"], interfaces,
                   data["stress_modes"] if "stress_modes" in files else None, kind=header["kind"],
                   reference=header["reference"], info=header["info"],
                   invariants=Invariants.from_arrays(inv) if inv else None, stiffening=stiff,
                   fixed_dofs=data["fixed_dofs"] if "fixed_dofs" in files else None,
                   cells={t: data[f"cells{k}"] for k, t in enumerate(header["cells"])} if "cells" in header else None)
