"""Suite ``slider-crank``: the flexible slider-crank benchmark and the singular a = b slider-crank.

Flexible slider-crank (Jahnke, Popp & Dirr 1993; Simeon 2013): rigid crank 0.15 m at a constant
150 rad/s, steel rod 0.30 m of circular section d = 6 mm, slider of half the rod's mass, started at
crank angle 0 with the rod undeformed and the rigid mechanism's velocities, three revolutions.
Models (models.py): ``rigid-rod``, ``modal-stiffened-{2,4}``, ``modal-linear-{2,4}`` (pinned-pinned
modes in the chord frame) and ``nonlinear-beam``; metrics ``mid_defl_over_L_max``,
``mid_defl_over_L_min`` and ``axial_force_max`` over revolutions 2-3. References: the converged
nonlinear beam (no trustworthy published number was found), an independent Galerkin code of the
moderate-rotation theory (scipy), and the rigid closed form.

Singular slider-crank (Neto & Ambrosio 2002): crank = rod = 0.308 m driven by 100 N m through
the positions where the rod folds onto the crank; flexmb must stay on the physical branch (checked
against x = 2 a cos(phi) and the work-energy theorem) and refuse a start at the singular position
with a SingularConfigurationError naming the time. README.md lists the cases, tolerances and why.
"""
from __future__ import annotations

from .cases import modal_case, nonlinear_beam, nonlinear_beam_mesh, rigid_rod, singular_slider_crank, step_refinement

CASES = [rigid_rod, modal_case("modal-stiffened-2"), modal_case("modal-linear-2"), modal_case("modal-stiffened-4"),
         modal_case("modal-linear-4"), nonlinear_beam, nonlinear_beam_mesh, step_refinement, singular_slider_crank]
