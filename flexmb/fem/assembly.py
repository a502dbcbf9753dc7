"""Vectorized assembly of stacked element matrices into CSR with a pattern built once.

The matrix is viewed as dense ``dpn x dpn`` node blocks (``dpn`` dofs per node,
node-major dof numbering ``dof = node * dpn + component``). The pattern is the
node graph ``C^T C`` of the node-element incidence ``C``, in which every node has
its diagonal block (where point masses and springs go), expanded to dofs. It is
computed once, together with the CSR data position of every element-matrix
entry (int32 while the matrix allows it). Filling the matrix is then one
``np.add.at`` of the element values at those positions per block of elements
(docs/theory-elements.md §5).

The returned matrices share the pattern's read-only ``indices`` and ``indptr``
arrays: their structure cannot be changed in place (``eliminate_zeros`` and the like
raise); ``A.copy()`` gives an independent matrix.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import scipy.sparse as sp

from flexmb.errors import ModelError


def node_graph(n_nodes: int, conns: Sequence[np.ndarray]) -> sp.csr_array:
    """Node adjacency ``C^T C`` (n_nodes, n_nodes), CSR with sorted indices and a full diagonal.

    ``C`` is the incidence of all elements of all connectivities, plus one single-node row
    for every node in no element (so that every node has its diagonal block). The data of
    the result numbers the stored entries ("node pairs") 0, 1, ... in CSR order.
    """
    lonely = np.flatnonzero(np.bincount(np.concatenate([c.reshape(-1) for c in conns]), minlength=n_nodes) == 0)
    rows = [c.reshape(-1) for c in conns] + [lonely.astype(conns[0].dtype)]
    lengths = np.concatenate([np.full(c.shape[0], c.shape[1]) for c in conns] + [np.ones(lonely.size, dtype=int)])
    indptr = np.concatenate([[0], np.cumsum(lengths)])
    C = sp.csr_array((np.ones(indptr[-1]), np.concatenate(rows), indptr), shape=(lengths.size, n_nodes))
    G = (C.T @ C).tocsr()
    G.sort_indices()
    G.data = np.arange(G.nnz, dtype=float)
    return G


def pair_ids(G: sp.csr_array, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """Node-pair numbers (``G.data``) of broadcastable node arrays ``rows`` and ``cols`` (int64)."""
    shape = np.broadcast_shapes(rows.shape, cols.shape)
    r = np.broadcast_to(rows, shape).reshape(-1)
    c = np.broadcast_to(cols, shape).reshape(-1)
    return np.asarray(G[r, c]).astype(np.int64).reshape(shape)


class BlockAssembler:
    """Sparsity pattern and assembly map for a list of element blocks.

    Args:
        n_nodes: number of mesh nodes ``N``.
        dofs_per_node: ``dpn``; the matrix is ``N dpn x N dpn``.
        blocks: one ``(connectivity (ne, nn), components)`` per block of elements, where
            ``components`` are the node dof components of the element's nodal dofs
            (element dof ``a * len(components) + k`` is component ``components[k]`` of node ``a``).
    """

    def __init__(self, n_nodes: int, dofs_per_node: int,
                 blocks: Sequence[tuple[np.ndarray, Sequence[int]]]) -> None:
        self.n_nodes = int(n_nodes)
        self.dofs_per_node = dpn = int(dofs_per_node)
        self.shape = (self.n_nodes * dpn, self.n_nodes * dpn)
        if not blocks:
            raise ModelError("an assembler needs at least one block of elements")
        self.components = [np.array(comps, dtype=np.int64) for _, comps in blocks]
        for comps in self.components:
            if comps.size == 0 or comps.min() < 0 or comps.max() >= dpn:
                raise ModelError(f"element components {comps.tolist()} do not fit {dpn} dofs per node")
        conns = [np.asarray(conn, dtype=np.int32 if self.n_nodes < 2**31 else np.int64) for conn, _ in blocks]
        G = node_graph(self.n_nodes, conns)
        g = G.indptr.astype(np.int64)
        self.n_pairs = G.nnz
        self._build_csr(g, G.indices)
        # data offset of the (0, 0) entry of every node-pair block, and the dof-row length of every node
        rows = np.repeat(np.arange(self.n_nodes, dtype=np.int64), np.diff(g))
        pair_offset = dpn * dpn * g[rows] + dpn * (np.arange(self.n_pairs) - g[rows])
        self._row_length = dpn * np.diff(g)
        self._positions = [self._entry_positions(pair_offset[pair_ids(G, c[:, :, None], c[:, None, :])],
                                                 self._row_length[c], comps)
                           for c, comps in zip(conns, self.components)]
        nodes = np.arange(self.n_nodes)
        self._diagonal_offset = pair_offset[pair_ids(G, nodes, nodes)]

    def _build_csr(self, g: np.ndarray, cols: np.ndarray) -> None:
        """CSR ``indptr``/``indices`` of the node-block pattern (theory eq. 5.1).

        With ``g`` the node-graph row pointer and ``deg(n) = g[n+1] - g[n]``, dof row
        ``n dpn + i`` starts at ``dpn^2 g[n] + i dpn deg(n)`` and lists, for each neighbour
        ``m`` of ``n`` in increasing order, the columns ``m dpn + j``, ``j = 0..dpn-1``.
        """
        dpn = self.dofs_per_node
        deg = np.diff(g)
        self.nnz = int(g[-1]) * dpn * dpn
        index_dtype = np.int32 if max(self.nnz, self.shape[0]) < np.iinfo(np.int32).max else np.int64
        pairs_per_row = np.repeat(deg, dpn)                       # per dof row
        row_start = np.cumsum(pairs_per_row) - pairs_per_row      # in units of pairs
        shift = (row_start - np.repeat(g[:-1], dpn)).astype(index_dtype)
        pair_seq = np.arange(int(g[-1]) * dpn, dtype=index_dtype)
        pair_seq -= np.repeat(shift, pairs_per_row)               # node pair listed at each block slot
        block_cols = cols.astype(index_dtype) * dpn
        indices = (block_cols[pair_seq][:, None] + np.arange(dpn, dtype=index_dtype)[None, :]).reshape(-1)
        indptr = np.append(dpn * row_start, self.nnz).astype(index_dtype)
        indptr.flags.writeable = False
        indices.flags.writeable = False
        self.indptr, self.indices = indptr, indices

    def _entry_positions(self, offset: np.ndarray, row_length: np.ndarray, comps: np.ndarray) -> np.ndarray:
        """CSR data position of every element-matrix entry (ne * nd * nd,), in (e, a, i, b, j) order.

        ``offset`` (ne, nn, nn) is the data offset of the node-pair block of ``(a, b)``,
        ``row_length`` (ne, nn) the length of node ``a``'s dof rows: entry ``(a, i, b, j)``
        sits at ``offset + comps[i] row_length + comps[j]`` (theory eq. 5.2).
        """
        ne, nn, _ = offset.shape
        dtype = self.indices.dtype
        comps = comps.astype(dtype)
        by_column = (offset.astype(dtype)[:, :, :, None] + comps).reshape(ne, nn, nn * comps.size)
        return (by_column[:, :, None, :] + (row_length.astype(dtype)[:, :, None] * comps)[..., None]).reshape(-1)

    def zeros(self) -> np.ndarray:
        """A zero CSR data array (nnz,) for :meth:`add` and :meth:`matrix`."""
        return np.zeros(self.nnz)

    def add(self, data: np.ndarray, block: int, element_matrices: np.ndarray) -> None:
        """Add stacked element matrices (ne, nd, nd) of block ``block`` into ``data``, in place."""
        pos = self._positions[block]
        if element_matrices.size != pos.size:
            raise ModelError(f"element matrices of block {block} have shape {element_matrices.shape}, "
                             f"which does not fit {pos.size} entries")
        np.add.at(data, pos, element_matrices.reshape(-1))

    def add_node_blocks(self, data: np.ndarray, nodes: np.ndarray, blocks: np.ndarray) -> None:
        """Add ``blocks`` (n, dpn, dpn) to the diagonal blocks of ``nodes`` (n,) in ``data``, in place."""
        nodes = np.asarray(nodes, dtype=np.intp)
        ar = np.arange(self.dofs_per_node)
        pos = (self._diagonal_offset[nodes][:, None, None] + (self._row_length[nodes][:, None] * ar)[:, :, None]
               + ar[None, None, :])
        np.add.at(data, pos.reshape(-1), np.asarray(blocks, dtype=float).reshape(-1))

    def matrix(self, data: np.ndarray) -> sp.csr_matrix:
        """CSR matrix with values ``data`` (nnz,), sharing this pattern's index arrays."""
        A = sp.csr_matrix((data, self.indices, self.indptr), shape=self.shape, copy=False)
        A.has_sorted_indices = True
        A.has_canonical_format = True
        return A

    def assemble(self, element_matrices: Sequence[np.ndarray | None]) -> sp.csr_matrix:
        """CSR matrix ``sum_e A_e`` of one element-matrix stack per block (None: no contribution)."""
        if len(element_matrices) != len(self.components):
            raise ModelError(f"{len(element_matrices)} element matrix stacks for {len(self.components)} blocks")
        data = self.zeros()
        for block, Ae in enumerate(element_matrices):
            if Ae is not None:
                self.add(data, block, Ae)
        return self.matrix(data)
