"""Suite ``rotating-beam``: the spin-up of a cantilever (He 1992, §9.3; Kane, Ryan & Banerjee 1987).

Three flexmb models -- ``modal-stiffened`` (4 Craig-Bampton modes with dynamic geometric stiffening),
``nonlinear-beam`` (16 elements, Green-Lagrange axial strain) and ``modal-linear`` (stiffening off) --
for Omega_s = 2, 4, 6, 10 rad/s against the converged reference of reference.py; the in-plane
frequencies vs spin speed (Campbell diagram) with and without stiffening; the flapwise Southwell
case against Hodges & Rutkowski (1981); and a rotating cantilever plate of shell elements.
docs/verification.md lists the cases, tolerances and why they are right.
"""
from __future__ import annotations

from .cases import MODELS_AND_SPEEDS, flapwise_southwell, frequencies_vs_speed, spin_case, tip_deflections

CASES = [spin_case(model, omega) for model, omega in MODELS_AND_SPEEDS] + [tip_deflections, frequencies_vs_speed,
                                                                           flapwise_southwell]
try:
    from .plate import rotating_plate
    CASES.append(rotating_plate)
except ImportError:      # pragma: no cover - the plate case is optional while it is written
    pass
