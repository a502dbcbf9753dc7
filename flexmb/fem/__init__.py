"""Finite-element path: meshes (meshio bridge), materials, beam sections, element kernels, assembled models.

The user-facing names are reachable from here and from ``flexmb`` itself::

    import flexmb as fm
    mesh = fm.read_mesh("meshes/beam_line.msh")          # or flexmb.fem.read_mesh
    fe = fm.FEModel(mesh, fm.Material(E=70e9, nu=0.33, rho=2700.0), sections=fm.BeamSection.rectangle(0.02, 0.04))

Shells take their thickness (m) as a number or a cell-set mapping, ``FEModel(..., thickness=...)``: there is
no shell-section class. Deep imports (``flexmb.fem.mesh.read_mesh`` ...) keep working. The names are
imported on first use (PEP 562), so ``import flexmb.fem.materials`` does not import meshio.
See docs/theory-mesh.md and docs/theory-elements.md.
"""
from __future__ import annotations

import importlib
from typing import Any

#: public name -> module that defines it
_LAZY = {
    "read_mesh": "flexmb.fem.mesh", "from_meshio": "flexmb.fem.mesh", "FEMesh": "flexmb.fem.mesh",
    "SUPPORTED_CELLS": "flexmb.fem.mesh", "FEModel": "flexmb.fem.model", "Material": "flexmb.fem.materials",
    "BeamSection": "flexmb.fem.sections",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    """Import a public name of the finite-element path on first access (PEP 562)."""
    if name not in _LAZY:
        raise AttributeError(f"module 'flexmb.fem' has no attribute {name!r}")
    value = getattr(importlib.import_module(_LAZY[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
