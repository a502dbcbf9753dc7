"""The version of the installed flexmb distribution (importlib.metadata; pyproject.toml holds the only literal),
read once: ``flexmb.__version__`` and the files flexmb writes (result files, study tables) take it from here."""
from __future__ import annotations

import functools


@functools.cache
def installed_version() -> str:
    """The version of the installed flexmb distribution; "0+unknown" when run from a source tree that was
    never installed (``pip install -e .`` records it)."""
    from importlib.metadata import PackageNotFoundError, version
    try:
        return version("flexmb")
    except PackageNotFoundError:
        return "0+unknown"
