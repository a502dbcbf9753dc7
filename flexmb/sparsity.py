"""Sparse matrices with a fixed pattern, refilled from dense blocks.

The pattern is built once from the index arrays of every contributor (bodies,
forces, joints); each evaluation only computes block values and sums them into
the CSR data array (or a dense array for small systems) through position maps built once, one
compiled scatter per block family (docs/theory.md §5.1, flexmb/compiled/scatter.py).
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .compiled.scatter import add_at


class BlockPattern:
    """Collects blocks ``(n, a, b)`` placed at ``rows (n, a)`` x ``cols (n, b)``.

    Index -1 marks an entry to drop (a column of the ground, say).
    """

    def __init__(self, shape: tuple[int, int]):
        self.shape = shape
        self._rows: list[np.ndarray] = []
        self._cols: list[np.ndarray] = []
        self._masks: list[np.ndarray] = []
        self._sizes: list[int] = []
        self.shapes: list[tuple[int, int, int]] = []
        self.finalized = False

    def add(self, rows: np.ndarray, cols: np.ndarray, structure: np.ndarray | None = None) -> int:
        """Register a block family; returns its handle (index in ``assemble``'s list).

        ``structure`` (broadcastable to (n, a, b), boolean) marks the entries that
        can be non-zero; the others are left out of the pattern.
        """
        rows = np.asarray(rows, dtype=np.int64)
        cols = np.asarray(cols, dtype=np.int64)
        n, a = rows.shape
        b = cols.shape[1]
        R = np.broadcast_to(rows[:, :, None], (n, a, b)).reshape(-1)
        C = np.broadcast_to(cols[:, None, :], (n, a, b)).reshape(-1)
        mask = (R >= 0) & (C >= 0)
        if structure is not None:
            mask &= np.broadcast_to(structure, (n, a, b)).reshape(-1)
        self._rows.append(R[mask])
        self._cols.append(C[mask])
        self._masks.append(mask)
        self._sizes.append(n * a * b)
        self.shapes.append((n, a, b))
        return len(self._masks) - 1

    def finalize(self) -> None:
        R = np.concatenate(self._rows) if self._rows else np.zeros(0, np.int64)
        C = np.concatenate(self._cols) if self._cols else np.zeros(0, np.int64)
        key = R * self.shape[1] + C
        uniq, self._inverse = np.unique(key, return_inverse=True)
        self.nnz = uniq.size
        rr, cc = np.divmod(uniq, self.shape[1])
        self.indices = cc.astype(np.int32)
        self.indptr = np.concatenate([[0], np.cumsum(np.bincount(rr, minlength=self.shape[0]))]).astype(np.int32)
        # position of every block entry in the CSR data array and in a dense row-major array (-1: dropped)
        self.sparse_positions, self.dense_positions = [], []
        start = 0
        for mask, size in zip(self._masks, self._sizes):
            sparse = np.full(size, -1, dtype=np.int64)
            kept = int(mask.sum())
            sparse[mask] = self._inverse[start:start + kept]
            start += kept
            dense = np.where(sparse >= 0, rr[np.maximum(sparse, 0)] * self.shape[1] + cc[np.maximum(sparse, 0)], -1)
            self.sparse_positions.append(sparse)
            self.dense_positions.append(dense.astype(np.int64))
        self._all_sparse = np.concatenate(self.sparse_positions) if self._sizes else np.zeros(0, np.int64)
        self._all_dense = np.concatenate(self.dense_positions) if self._sizes else np.zeros(0, np.int64)
        self._zeros = [np.zeros(size) for size in self._sizes]
        self.finalized = True

    def assemble(self, blocks: list, dense: bool = False):
        """Sum the given blocks (same order as ``add``; None = zeros) into a CSR matrix
        (or a dense array when ``dense``; small systems skip the sparse machinery)."""
        values = np.concatenate([z if b is None else np.asarray(b, dtype=float).reshape(-1)
                                 for b, z in zip(blocks, self._zeros)]) if blocks else np.zeros(0)
        if dense:
            out = np.zeros(self.shape[0] * self.shape[1])
            add_at(out, self._all_dense, values)
            return out.reshape(self.shape)
        data = np.zeros(self.nnz)
        add_at(data, self._all_sparse, values)
        m = sp.csr_matrix(self.shape)      # empty shell; the fixed structure is set directly
        m.data, m.indices, m.indptr = data, self.indices, self.indptr
        return m

    @staticmethod
    def add_blocks(out: np.ndarray, blocks: list, positions: list) -> None:
        """Add every block (None = zeros) into ``out`` at its positions: one compiled scatter per block."""
        for blk, pos in zip(blocks, positions):
            if blk is not None:
                add_at(out, pos, np.ascontiguousarray(blk, dtype=float).reshape(-1))
