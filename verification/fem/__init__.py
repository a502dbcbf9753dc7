"""Suite ``fem``: finite-element models against closed forms and published values (issue 3).

Beam elements (Euler-Bernoulli and Timoshenko), the solid beam meshes (hex8, hex20), flat shells
(MITC4, MITC3) on square plates against Leissa (NASA SP-160), patch tests of every element type,
rigid-body modes and mass properties of every sample mesh, and a Craig-Bampton reduction against
the full model. Every case states its source, metric, tolerance and why the tolerance is right;
docs/verification.md lists them. Materials: steel (E = 210 GPa, nu = 0.3,
rho = 7850 kg/m^3) unless a case says otherwise.
"""
from __future__ import annotations

from .beams import cantilever_beam_euler_bernoulli, free_free_beam, timoshenko_beam
from .bodies import craig_bampton_cantilever, mass_properties, rigid_modes, rigid_modes_bracket
from .patch import patch_tests
from .plates import plate_cantilever, plate_simply_supported
from .solids import cantilever_solid, free_free_solid

rigid_modes_bracket.slow = True

CASES = [cantilever_beam_euler_bernoulli, timoshenko_beam, free_free_beam, cantilever_solid, free_free_solid,
         plate_simply_supported, plate_cantilever, patch_tests, rigid_modes, rigid_modes_bracket,
         mass_properties, craig_bampton_cantilever]
