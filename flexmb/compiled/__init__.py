"""Compiled (numba) building blocks of the time step (docs/architecture.md).

Every kernel here works on one instance with explicit loops and is inlined into the per-family
kernels that loop over all instances of a family; nothing in this package allocates inside a
Newton iteration except small fixed-size temporaries on the stack.
"""

import importlib.util
import sys
from types import ModuleType


def lazy_module(name: str) -> ModuleType:
    """The module ``name``, loaded on its first attribute access (``importlib.util.LazyLoader``).

    Element modules that users import with ``flexmb`` (forces, contacts) reach their kernels through it,
    so that ``import flexmb`` does not import numba; the kernels load when a model is first evaluated.
    """
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.find_spec(name)
    loader = importlib.util.LazyLoader(spec.loader)
    spec.loader = loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    loader.exec_module(module)
    return module
