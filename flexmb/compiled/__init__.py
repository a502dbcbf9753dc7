"""Compiled (numba) building blocks of the time step (docs/architecture.md).

Every kernel here works on one instance with explicit loops and is inlined into the per-family
kernels that loop over all instances of a family; nothing in this package allocates inside a
Newton iteration except small fixed-size temporaries on the stack.
"""
