"""Model reduction: eigen-solutions, Craig-Bampton and free-free mode sets, inertia invariants,
geometric-stiffness load cases for dynamic stiffening.

See docs/theory-reduction.md. Typical use::

    from flexmb.reduction import craig_bampton
    ms = craig_bampton(model, {"root": "root", "tip": "tip"}, n_modes=20, reference="root")
    ms.save("beam.npz")
"""
from flexmb.reduction.craig_bampton import craig_bampton
from flexmb.reduction.eigen import Modes, normal_modes
from flexmb.reduction.freefree import free_free_modes
from flexmb.reduction.interfaces import Interface, rigid_body_modes
from flexmb.reduction.invariants import Invariants, inertia_invariants
from flexmb.reduction.modeset import ModeSet
from flexmb.reduction.stiffening import (INERTIAL_CASES, INTERFACE_CASES, StiffeningMatrices, inertial_coefficients,
                                         stiffening_matrices)

__all__ = ["normal_modes", "Modes", "craig_bampton", "free_free_modes", "ModeSet", "Interface",
           "inertia_invariants", "Invariants", "rigid_body_modes", "INERTIAL_CASES", "INTERFACE_CASES",
           "StiffeningMatrices", "stiffening_matrices", "inertial_coefficients"]
