"""Element kernels: beams, shells and solids behind one vectorized interface (see ``base``).

Importing this package registers every kernel; :func:`kernel_class` finds the one
for a meshio cell type.
"""
from __future__ import annotations

from flexmb.errors import MeshError
from flexmb.fem.elements import beam, solid  # noqa: F401  (importing registers the kernels)
from flexmb.fem.elements.base import KERNELS, ElementKernel, ElementProperties, register_kernel

try:  # shell kernels live in their own module, written separately
    from flexmb.fem.elements import shell  # noqa: F401
except ModuleNotFoundError as exc:
    if exc.name != f"{__name__}.shell":
        raise

__all__ = ["ElementKernel", "ElementProperties", "KERNELS", "kernel_class", "register_kernel"]

_HINTS = {"line3": "; 3-node beams are not implemented, split each line3 cell into two 'line' cells"}


def kernel_class(cell_type: str) -> type[ElementKernel]:
    """The kernel class registered for ``cell_type``, or a MeshError listing the supported types."""
    try:
        return KERNELS[cell_type]
    except KeyError:
        raise MeshError(f"no element kernel for cell type {cell_type!r}; supported: "
                        f"{', '.join(sorted(KERNELS))}{_HINTS.get(cell_type, '')}") from None
