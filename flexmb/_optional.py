"""Optional dependencies: imported where a feature needs them, with an error naming the extra.

flexmb runs rigid, flexible and contact models with its core dependencies alone; plots need
``matplotlib`` (extra ``plots``), Dask executors of parameter studies need ``distributed``
(extra ``studies``), ``Result.to_dataframe`` needs ``pandas`` (extra ``frames``), and sparse SPD solves use CHOLMOD when ``scikit-sparse`` is installed (extra
``cholmod``; else scipy's SuperLU, flexmb/linalg.py). ``pip install 'flexmb[all]'`` installs every extra.
"""
from __future__ import annotations

import importlib
from types import ModuleType

from .errors import MissingDependencyError

__all__ = ["EXTRAS", "require"]

EXTRAS = {"cholmod": ("scikit-sparse",), "plots": ("matplotlib",), "studies": ("dask", "distributed"),
          "frames": ("pandas",)}
"""The extras of pyproject.toml (``all`` installs them all): extra -> the distributions it installs."""


def require(module: str, extra: str, feature: str) -> ModuleType:
    """Import ``module`` (e.g. ``"matplotlib.pyplot"``) for ``feature`` (what the user asked for,
    e.g. ``"Campbell diagram plot"``), or raise MissingDependencyError naming the package and the
    ``extra`` that installs it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        package = module.split(".")[0]
        raise MissingDependencyError(
            f"{feature} needs the optional package {package!r}, which is not installed ({exc}); "
            f"install it with: pip install 'flexmb[{extra}]' (or 'flexmb[all]')") from None
