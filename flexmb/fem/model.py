"""Finite-element model: element blocks, sparse M and K, supports, statics, stresses.

``FEModel`` turns an ``FEMesh`` plus material, section and thickness data into
element kernels (flexmb.fem.elements), assembles the global mass and stiffness
matrices once with a fixed sparsity pattern (flexmb.fem.assembly), and offers
the operations the reduction and flexible-body code needs: dof numbering,
elimination of supports, linear statics, stress recovery and the geometric
stiffness of a displacement state. SI units throughout.

Dofs are numbered node-major, ``dof = node * dofs_per_node + component`` with
components ``ux, uy, uz`` (and ``rx, ry, rz`` when any beam or shell is present).
Large element blocks are split into chunks of about :data:`CHUNK_BYTES` of element
matrices, so that assembly streams through memory instead of holding every
element matrix at once (docs/theory-elements.md §5).
"""
from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from numbers import Real
from typing import Any, Callable, Sequence

import numpy as np
import scipy.sparse as sp

from flexmb.errors import MeshError, ModelError
from flexmb.fem.assembly import BlockAssembler
from flexmb.fem.elements import ElementKernel, ElementProperties, kernel_class
from flexmb.fem.materials import Material
from flexmb.fem.sections import BeamSection, SectionArrays
from flexmb.linalg import SingularMatrixError, factorize

CHUNK_BYTES = 8 * 2**20
"""Target size of the element matrices of one chunk, bytes."""

COMPONENTS = ("ux", "uy", "uz", "rx", "ry", "rz")
"""Names of the node dof components, in numbering order."""

BEAM_THEORIES = ("timoshenko", "euler-bernoulli")


@dataclass(frozen=True)
class ElementChunk:
    """A run of elements of one cell type, evaluated by one kernel instance.

    Attributes:
        cell_type: meshio cell type.
        elements: indices of the elements in ``mesh.cells[cell_type]`` (a contiguous range).
        connectivity: node ids of these elements (ne, nn).
        kernel: the element kernel of these elements.
        dofmap: global dofs of every element dof (ne, nd).
    """

    cell_type: str
    elements: np.ndarray
    connectivity: np.ndarray
    kernel: ElementKernel
    dofmap: np.ndarray


class FEModel:
    """Linear finite-element model of one mesh.

    Args:
        mesh: an ``FEMesh`` (points, cells, cell_sets, node_sets, kind(cell_type)).
        materials: one :class:`Material` for all cells, or cell-set name -> Material.
        sections: beam sections, one :class:`BeamSection` or cell-set name -> BeamSection.
        thickness: shell thickness in m, one number or cell-set name -> number.
        lumped_mass: diagonal (HRZ) element mass matrices instead of consistent ones.
        beam: ``"timoshenko"`` or ``"euler-bernoulli"`` (infinite shear factors, no rotary
            inertia of bending).
        element_options: cell type -> keyword options for that type's kernel
            (e.g. ``{"quad": {"drill": 1e-3}}`` for the shell kernels).
    """

    def __init__(self, mesh: Any, materials: Material | Mapping[str, Material],
                 sections: BeamSection | Mapping[str, BeamSection] | None = None,
                 thickness: float | Mapping[str, float] | None = None,
                 lumped_mass: bool = False, beam: str = "timoshenko",
                 element_options: Mapping[str, Mapping[str, Any]] | None = None) -> None:
        if beam not in BEAM_THEORIES:
            raise ModelError(f"beam theory must be one of {BEAM_THEORIES}, got {beam!r}")
        if not (hasattr(mesh, "points") and hasattr(mesh, "cells")):
            raise ModelError(f"FEModel: mesh must be an FEMesh (flexmb.fem.read_mesh or FEMesh(...)), got {mesh!r}")
        self.mesh = mesh
        self.points = np.asarray(mesh.points, dtype=float)
        self.n_nodes = self.points.shape[0]
        self.lumped_mass = bool(lumped_mass)
        self.beam = beam
        self._materials, self._sections, self._thickness = materials, sections, thickness
        self._options = dict(element_options or {})
        types = self._element_types()
        unknown = sorted(set(self._options) - set(types))
        if unknown:
            raise ModelError(f"element_options given for cell types {unknown} that the mesh has no elements of")
        self.dofs_per_node = 3 if all(kernel_class(t).kind == "solid" for t in types) else 6
        self.ndof = self.n_nodes * self.dofs_per_node
        self.chunks: list[ElementChunk] = [c for t in types for c in self._chunks_of(t)]
        self.assembler = BlockAssembler(self.n_nodes, self.dofs_per_node,
                                        [(c.connectivity, c.kernel.components) for c in self.chunks])
        self._point_masses: list[tuple[int, np.ndarray]] = []
        self._springs: list[tuple[int, np.ndarray]] = []
        self._element_data: dict[str, np.ndarray] = {}
        self._matrices: dict[str, sp.csr_matrix] = {}
        self._static_cache: tuple[bytes, Any] | None = None
        self._component_cache: dict[str, Any] = {}

    # -- construction ---------------------------------------------------------------------------
    def _element_types(self) -> list[str]:
        """Cell types of the mesh that become elements (kinds beam, shell, solid)."""
        types = []
        for cell_type, conn in self.mesh.cells.items():
            kind = self.mesh.kind(cell_type)
            cls = kernel_class(cell_type)
            if cls.kind != kind:
                raise MeshError(f"cell type {cell_type!r} is a {kind} in the mesh but its kernel is a {cls.kind}")
            if len(conn):
                types.append(cell_type)
        if not types:
            raise MeshError("the mesh has no element cells")
        return types

    def _chunks_of(self, cell_type: str) -> list[ElementChunk]:
        """Element chunks of one cell type, each with its kernel and dof map."""
        conn = np.asarray(self.mesh.cells[cell_type], dtype=np.int64)
        cls = kernel_class(cell_type)
        ne = conn.shape[0]
        material_list, material_of = self._assign(self._materials, Material, "material", cell_type, ne)
        props_of = self._property_factory(cell_type, cls.kind, ne, material_list, material_of)
        comps = np.asarray(cls.components, dtype=np.int64)
        nd = conn.shape[1] * comps.size
        size = max(1, CHUNK_BYTES // (8 * nd * nd))
        options = dict(self._options.get(cell_type, {}))
        chunks = []
        for start in range(0, ne, size):
            elements = np.arange(start, min(start + size, ne))
            nodes = conn[elements]
            kernel = cls(self.points[nodes], props_of(elements), **options)
            dofmap = (nodes[:, :, None] * self.dofs_per_node + comps).reshape(elements.size, nd)
            chunks.append(ElementChunk(cell_type, elements, nodes, kernel, dofmap))
        return chunks

    def _property_factory(self, cell_type: str, kind: str, ne: int, materials: list[Material],
                          material_of: np.ndarray) -> Callable[[np.ndarray], ElementProperties]:
        """A function giving the ElementProperties of a subset of the elements of ``cell_type``."""
        thickness = section = None
        if kind == "shell":
            if self._thickness is None:
                raise ModelError(f"{cell_type} (shell) cells need a thickness")
            values, which = self._assign(self._thickness, Real, "thickness", cell_type, ne)
            bad = [v for v in values if not (np.isfinite(v) and v > 0)]
            if bad:
                raise ModelError(f"shell thickness must be positive and finite, got {bad[0]!r} m")
            thickness = np.asarray(values, dtype=float)[which]
        if kind == "beam":
            if self._sections is None:
                raise ModelError(f"{cell_type} (beam) cells need sections=BeamSection(...)")
            sec_list, sec_of = self._assign(self._sections, BeamSection, "section", cell_type, ne)
            section = SectionArrays.from_sections(sec_list, sec_of)
            if self.beam == "euler-bernoulli":
                section = section.euler_bernoulli()

        def props(elements: np.ndarray) -> ElementProperties:
            return ElementProperties.from_materials(
                materials, material_of[elements],
                thickness=None if thickness is None else thickness[elements],
                section=None if section is None else _take_section(section, elements))

        return props

    def _assign(self, value: Any, cls: type, what: str, cell_type: str, ne: int) -> tuple[list, np.ndarray]:
        """Distinct values of a property and the index of each element's value (ne,).

        ``value`` is one value for all cells or a mapping cell-set name -> value; every
        element of ``cell_type`` must receive exactly one value.
        """
        if not isinstance(value, Mapping):
            _check_type(value, cls, what)
            return [value], np.zeros(ne, dtype=np.intp)
        which = np.full(ne, -1, dtype=np.intp)
        values = list(value.values())
        for k, (name, v) in enumerate(value.items()):
            _check_type(v, cls, f"{what} of cell set {name!r}")
            if name not in self.mesh.cell_sets:
                raise ModelError(f"{what}s given for cell set {name!r}, which the mesh does not have; "
                                 f"cell sets: {', '.join(sorted(self.mesh.cell_sets)) or 'none'}")
            idx = np.asarray(self.mesh.cell_sets[name].get(cell_type, []), dtype=np.intp)
            taken = idx[which[idx] >= 0]
            clash = [e for e in taken[:10] if values[which[e]] != v]
            if clash:
                raise ModelError(f"{cell_type} elements {clash} get two different {what}s "
                                 f"(cell set {name!r} overlaps another set)")
            which[idx] = k
        missing = np.flatnonzero(which < 0)
        if missing.size:
            raise ModelError(f"{missing.size} {cell_type} elements have no {what}, e.g. "
                             f"{missing[:10].tolist()}; cover them with a cell set")
        return values, which

    # -- dofs -----------------------------------------------------------------------------------
    def dofs(self, nodes: int | str | Sequence[int] | np.ndarray,
             components: int | str | Sequence[int | str] | None = None) -> np.ndarray:
        """Global dof ids of ``nodes`` (ids or a node-set name), node-major.

        ``components``: None (all of the node's dofs), or component numbers / names
        from :data:`COMPONENTS` (e.g. ``"uz"`` or ``[0, 1, 2]``).
        """
        ids = self._node_ids(nodes)
        comps = self._component_ids(components)
        return (ids[:, None] * self.dofs_per_node + comps[None, :]).reshape(-1)

    def _node_ids(self, nodes: int | str | Sequence[int] | np.ndarray) -> np.ndarray:
        if isinstance(nodes, str):
            if nodes not in self.mesh.node_sets:
                raise ModelError(f"no node set {nodes!r}; node sets: "
                                 f"{', '.join(sorted(self.mesh.node_sets)) or 'none'}")
            nodes = self.mesh.node_sets[nodes]
        ids = np.atleast_1d(np.asarray(nodes))
        if ids.size and (ids.dtype.kind not in "iu" or ids.min() < 0 or ids.max() >= self.n_nodes):
            raise ModelError(f"node ids must be integers in [0, {self.n_nodes}), got {np.asarray(nodes).ravel()[:10]}")
        return ids.astype(np.int64).ravel()

    def _component_ids(self, components: int | str | Sequence[int | str] | None) -> np.ndarray:
        if components is None:
            return np.arange(self.dofs_per_node)
        out = []
        for c in np.atleast_1d(np.asarray(components, dtype=object)).ravel():
            k = COMPONENTS.index(c) if isinstance(c, str) and c in COMPONENTS else c
            if isinstance(k, str) or not 0 <= int(k) < self.dofs_per_node:
                raise ModelError(f"dof component {c!r} does not exist in a model with {self.dofs_per_node} "
                                 f"dofs per node ({', '.join(COMPONENTS[:self.dofs_per_node])})")
            out.append(int(k))
        return np.asarray(out, dtype=np.int64)

    def _check_dofs(self, dofs: Sequence[int] | np.ndarray, what: str) -> np.ndarray:
        d = np.unique(np.asarray(dofs, dtype=np.int64).ravel())
        if d.size and (d[0] < 0 or d[-1] >= self.ndof):
            raise ModelError(f"{what} must lie in [0, {self.ndof}), got {d[0] if d[0] < 0 else d[-1]}")
        return d

    # -- point items ----------------------------------------------------------------------------
    def add_point_mass(self, node: int, mass: float, inertia: float | Sequence | np.ndarray | None = None) -> None:
        """Add a point mass (kg) and optionally a rotary inertia (kg m^2, scalar, 3 diagonal or 3x3) at a node."""
        block = np.zeros((self.dofs_per_node, self.dofs_per_node))
        block[:3, :3] = _point_matrix(mass, "point mass", "kg")
        if inertia is not None:
            self._require_rotations("a rotary inertia")
            block[3:, 3:] = _point_matrix(inertia, "point inertia", "kg m^2")
        self._point_masses.append((self._single_node(node), block))
        self._matrices.pop("M", None)
        self._component_cache.clear()

    def add_spring(self, node: int, k_translational: float | Sequence | np.ndarray,
                   k_rotational: float | Sequence | np.ndarray | None = None) -> None:
        """Ground a node through springs: translational N/m, rotational N m/rad (scalar, 3 diagonal or 3x3)."""
        block = np.zeros((self.dofs_per_node, self.dofs_per_node))
        block[:3, :3] = _point_matrix(k_translational, "spring stiffness", "N/m")
        if k_rotational is not None:
            self._require_rotations("a rotational spring")
            block[3:, 3:] = _point_matrix(k_rotational, "rotational spring stiffness", "N m/rad")
        self._springs.append((self._single_node(node), block))
        self._matrices.pop("K", None)
        self._static_cache = None

    def _single_node(self, node: int) -> int:
        ids = self._node_ids(node)
        if ids.size != 1:
            raise ModelError(f"expected one node id, got {node!r}")
        return int(ids[0])

    def _require_rotations(self, what: str) -> None:
        if self.dofs_per_node != 6:
            raise ModelError(f"{what} needs rotational dofs, but this model has only solids (3 dofs per node)")

    # -- matrices -------------------------------------------------------------------------------
    @property
    def K(self) -> sp.csr_matrix:
        """Stiffness matrix (ndof, ndof), CSR, including node springs; read-only (copy to modify)."""
        return self._matrix("K", lambda c: c.kernel.stiffness(), self._springs)

    @property
    def M(self) -> sp.csr_matrix:
        """Mass matrix (ndof, ndof), CSR, including point masses; read-only (copy to modify)."""
        return self._matrix("M", lambda c: c.kernel.mass(self.lumped_mass), self._point_masses)

    def _matrix(self, name: str, element_matrices: Callable[[ElementChunk], np.ndarray],
                items: list[tuple[int, np.ndarray]]) -> sp.csr_matrix:
        """Assembled matrix ``name``: element part computed once, point items added on top.

        The element part is kept (read-only) so that adding point items only costs one copy
        of the data array; without point items the matrix uses it directly.
        """
        if name not in self._matrices:
            if name not in self._element_data:
                self._element_data[name] = self._assemble(element_matrices)
                self._element_data[name].flags.writeable = False
            data = self._element_data[name]
            if items:
                data = data.copy()
                nodes, blocks = zip(*items)
                self.assembler.add_node_blocks(data, np.array(nodes), np.array(blocks))
                data.flags.writeable = False
            self._matrices[name] = self.assembler.matrix(data)
        return self._matrices[name]

    def _assemble(self, element_matrices: Callable[[ElementChunk], np.ndarray]) -> np.ndarray:
        """CSR data of the sum of ``element_matrices(chunk)`` over all chunks."""
        data = self.assembler.zeros()
        for block, chunk in enumerate(self.chunks):
            self.assembler.add(data, block, element_matrices(chunk))
        return data

    @property
    def inactive_dofs(self) -> np.ndarray:
        """Dofs with exactly zero stiffness diagonal (no element or spring acts on them), sorted."""
        return np.flatnonzero(self.K.diagonal() == 0.0)

    def free_dofs(self, fixed_dofs: Sequence[int] | np.ndarray) -> np.ndarray:
        """All dofs except ``fixed_dofs`` and the inactive ones, sorted."""
        fixed = self._check_dofs(fixed_dofs, "fixed dofs")
        keep = np.ones(self.ndof, dtype=bool)
        keep[fixed] = False
        keep[self.inactive_dofs] = False
        return np.flatnonzero(keep)

    def reduce(self, fixed_dofs: Sequence[int] | np.ndarray) -> tuple[sp.csr_matrix, sp.csr_matrix, np.ndarray]:
        """``(Mr, Kr, free_dofs)``: M and K with fixed and inactive dofs eliminated."""
        free = self.free_dofs(fixed_dofs)
        return _submatrix(self.M, free), _submatrix(self.K, free), free

    # -- analyses -------------------------------------------------------------------------------
    def static(self, f: np.ndarray, fixed_dofs: Sequence[int] | np.ndarray) -> np.ndarray:
        """Linear static displacements ``u`` (ndof,) or (ndof, k) for loads ``f`` (N, N m).

        Fixed and inactive dofs get zero displacement. The factorization of the reduced
        stiffness (CHOLMOD or SuperLU via :func:`flexmb.linalg.factorize`) is kept
        for further calls with the same supports.
        """
        f = np.asarray(f, dtype=float)
        if f.shape[0] != self.ndof or f.ndim > 2:
            raise ModelError(f"load vector must have shape ({self.ndof},) or ({self.ndof}, k), got {f.shape}")
        free = self.free_dofs(fixed_dofs)
        key = free.tobytes()
        if self._static_cache is None or self._static_cache[0] != key:
            try:
                solver = factorize(_submatrix(self.K, free), spd=True)
            except SingularMatrixError as exc:
                raise ModelError(f"the supported stiffness matrix is singular ({exc}); the supports leave "
                                 f"rigid-body modes or mechanisms free") from exc
            self._static_cache = (key, solver)
        u = np.zeros(f.shape)
        u[free] = self._static_cache[1].solve(f[free])
        return u

    def _check_u(self, u: np.ndarray) -> np.ndarray:
        u = np.asarray(u, dtype=float)
        if u.shape != (self.ndof,):
            raise ModelError(f"displacement vector must have shape ({self.ndof},), got {u.shape}")
        return u

    def element_stresses(self, u: np.ndarray) -> dict[str, Any]:
        """Stress state per cell type for displacements ``u`` (ndof,).

        Solids: Cauchy stress (ne, nq, 6) at the quadrature points, Pa, Voigt order
        (xx, yy, zz, yz, xz, xy). Beams: section forces (ne, 2, 6) (N, Vy, Vz, T, My, Mz)
        at both end nodes, local axes. Shells: the shell kernel's stress object.
        """
        u = self._check_u(u)
        states: dict[str, list] = {}
        for chunk in self.chunks:
            states.setdefault(chunk.cell_type, []).append(chunk.kernel.stress(u[chunk.dofmap]))
        return {t: _concatenate_states(s) for t, s in states.items()}

    def nodal_stress(self, u: np.ndarray) -> np.ndarray:
        """Element nodal values (N, 6) averaged over the elements at each node.

        Voigt stress in global axes (Pa) for solids and shells, section forces for beams
        (see :meth:`ElementKernel.nodal_stress`); zero at nodes without elements.
        """
        u = self._check_u(u)
        total = np.zeros((self.n_nodes, 6))
        count = np.zeros(self.n_nodes)
        for chunk in self.chunks:
            values = chunk.kernel.nodal_stress(u[chunk.dofmap])
            nodes = chunk.connectivity.reshape(-1)
            np.add.at(total, nodes, values.reshape(-1, 6))
            np.add.at(count, nodes, 1.0)
        return total / np.maximum(count, 1.0)[:, None]

    def translational_mass(self) -> list[list[sp.csr_matrix]]:
        """``P[i][j] = int rho N_i^T N_j dV`` (ndof, ndof) for global components i, j of the
        translational displacement field (kg; docs/theory-reduction.md §5).

        Exact for beams (from their shape functions) and for solids (one scalar field per
        component: ``P_ij = M_s (x) e_i e_j^T``); shells use the same node-pair scalar masses
        ``tr(M_ab^tt)/3`` as solids, an approximation. Point masses add to ``P_ii``.
        """
        if "P" not in self._component_cache:
            dpn = self.dofs_per_node
            blocks = [self._component_blocks(c) for c in self.chunks]
            out: list[list[sp.csr_matrix]] = [[None] * 3 for _ in range(3)]   # type: ignore[list-item]
            for i in range(3):
                for j in range(3):
                    data = self.assembler.zeros()
                    for k, b in enumerate(blocks):
                        self.assembler.add(data, k, np.ascontiguousarray(b[:, i, j]))
                    P = self.assembler.matrix(data).copy()
                    if i == j and self._point_masses:
                        nodes = np.array([n for n, _ in self._point_masses], dtype=np.int64)
                        m = np.array([b[0, 0] for _, b in self._point_masses])
                        P = (P + sp.csr_matrix((m, (nodes * dpn + i, nodes * dpn + i)), shape=P.shape)).tocsr()
                    out[i][j] = P
            self._component_cache["P"] = out
        return self._component_cache["P"]

    def _component_blocks(self, chunk: ElementChunk) -> np.ndarray:
        """(ne, 3, 3, nd, nd) element component products ``int rho N_i^T N_j``."""
        if hasattr(chunk.kernel, "translational_mass") and not self.lumped_mass:
            return chunk.kernel.translational_mass()
        Me = chunk.kernel.mass(self.lumped_mass)
        ne, nd = Me.shape[0], Me.shape[1]
        dpn = self.dofs_per_node
        nn = nd // dpn
        trans = Me.reshape(ne, nn, dpn, nn, dpn)[:, :, :3, :, :3]
        scalar = np.einsum("eaibi->eab", trans) / 3.0                 # node-pair scalar masses
        out = np.zeros((ne, 3, 3, nn, dpn, nn, dpn))
        for i in range(3):
            for j in range(3):
                out[:, i, j, :, i, :, j] = scalar
        return out.reshape(ne, 3, 3, nd, nd)

    def geometric_stiffness(self, u: np.ndarray) -> sp.csr_matrix:
        """Geometric stiffness Kg(u) (ndof, ndof), CSR, from the element stresses of ``u``.

        Same pattern and dof layout as :attr:`K`; ``K + lambda Kg`` is the linearized
        buckling / stress-stiffened operator.
        """
        u = self._check_u(u)
        data = self._assemble(lambda c: c.kernel.geometric_stiffness(c.kernel.stress(u[c.dofmap])))
        return self.assembler.matrix(data)

    def geometric_stiffness_from_stresses(self, stresses: Mapping[str, Any]) -> sp.csr_matrix:
        """Geometric stiffness (ndof, ndof), CSR, of given element stress states.

        ``stresses``: cell type -> state in the layout of :meth:`element_stresses` (e.g. a
        combination of unit-load-case stresses); cell types left out contribute nothing.
        """
        unknown = set(stresses) - {c.cell_type for c in self.chunks}
        if unknown:
            raise ModelError(f"stresses given for cell types {sorted(unknown)} that the model does not have")
        data = self.assembler.zeros()
        for block, chunk in enumerate(self.chunks):
            if chunk.cell_type in stresses:
                state = _slice_state(stresses[chunk.cell_type], chunk.elements)
                self.assembler.add(data, block, chunk.kernel.geometric_stiffness(state))
        return self.assembler.matrix(data)


def _take_section(section: SectionArrays, elements: np.ndarray) -> SectionArrays:
    """Section arrays of a subset of elements."""
    return SectionArrays(**{f.name: getattr(section, f.name)[elements] for f in dataclasses.fields(section)})


def _check_type(value: Any, cls: type, what: str) -> None:
    if not isinstance(value, cls) or isinstance(value, bool):
        raise ModelError(f"{what} must be a {cls.__name__}, got {type(value).__name__} {value!r}")


def _point_matrix(value: float | Sequence | np.ndarray, what: str, unit: str) -> np.ndarray:
    """3x3 symmetric positive semi-definite matrix from a scalar, 3 diagonal values or a 3x3 array."""
    a = np.asarray(value, dtype=float)
    if a.ndim == 0:
        a = a * np.eye(3)
    elif a.shape == (3,):
        a = np.diag(a)
    if a.shape != (3, 3) or not np.all(np.isfinite(a)):
        raise ModelError(f"{what} must be a finite scalar, 3 values or a 3x3 matrix ({unit}), got {value!r}")
    if not np.allclose(a, a.T, rtol=1e-12, atol=0.0) or np.linalg.eigvalsh(a).min() < -1e-12 * np.abs(a).max():
        raise ModelError(f"{what} must be symmetric and non-negative ({unit}), got {value!r}")
    return a


def _submatrix(A: sp.csr_matrix, dofs: np.ndarray) -> sp.csr_matrix:
    """``A[dofs][:, dofs]`` as CSR."""
    return A[dofs][:, dofs].tocsr()


def _slice_state(state: Any, elements: np.ndarray) -> Any:
    """The part of a stress state (array or dataclass of arrays) belonging to ``elements``."""
    if dataclasses.is_dataclass(state):
        return dataclasses.replace(state, **{f.name: np.asarray(getattr(state, f.name))[elements]
                                             for f in dataclasses.fields(state)})
    return np.asarray(state)[elements]


def _concatenate_states(states: list) -> Any:
    """Join per-chunk stress states: arrays, or dataclasses of arrays, along the element axis."""
    if len(states) == 1:
        return states[0]
    first = states[0]
    if dataclasses.is_dataclass(first):
        return dataclasses.replace(first, **{f.name: np.concatenate([getattr(s, f.name) for s in states])
                                             for f in dataclasses.fields(first)})
    return np.concatenate(states)
