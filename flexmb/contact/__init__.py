"""Contact: normal force laws, Hertz stiffness helpers, restitution analysis (docs/theory-contact.md).

``laws``: Lankarani-Nikravesh (the default law of flexmb), Hunt-Crossley, Flores and a linear spring-damper,
vectorized over contacts with exact derivatives, and ``ApproachSpeeds`` (per-pair approach speed state).
``hertz``: stiffness K from E, nu and radii; closed forms of an elastic Hertzian impact.
``restitution``: the restitution each law achieves, analytic and by direct integration.
``pairs``: sphere-plane, sphere-sphere and the revolute clearance joint (``ClearanceJoint``) in a System.
``friction``: regularized Coulomb (``CoulombRamp``) and Brown-McPhee (``BrownMcPhee``) friction laws of the pairs.
"""
from .hertz import (HERTZ_DURATION_COEFFICIENT, HertzImpact, cylinder_line, duration_coefficient,
                    effective_modulus, effective_radius, hertz_impact, sphere_plane, sphere_sphere)
from .laws import (ApproachSpeeds, ContactLaw, Flores, HuntCrossley, HysteresisLaw, LankaraniNikravesh,
                   LinearSpringDamper, linear_damping_ratio, linear_restitution)
from .friction import BrownMcPhee, CoulombRamp, FrictionLaw
from .mesh import (ContactMarginWarning, NodeMeshContact, NodePlaneContact, SphereCloudContact, SphereMeshContact,
                   TriangleMesh)
from .pairs import ClearanceJoint, ContactGroup, SpherePlaneContact, SphereSphereContact
from .rope import (Rope, RopePulleyContact, over_pulley_points, rope_chain, rope_pulley_forces, rope_segments,
                   wound_drum_points)
from .sheave_rope import Sheave, SheaveRope
from .impulsive import ImpactEvent, Impulsive
from .restitution import (ImpactResult, achieved_restitution, exact_hysteresis_factor, hysteresis_restitution,
                          predicted_restitution, restitution_table, simulate_impact)

__all__ = [
    "ContactLaw", "HysteresisLaw", "LankaraniNikravesh", "HuntCrossley", "Flores", "LinearSpringDamper",
    "ApproachSpeeds", "linear_restitution", "linear_damping_ratio",
    "effective_modulus", "effective_radius", "sphere_sphere", "sphere_plane", "cylinder_line",
    "HertzImpact", "hertz_impact", "duration_coefficient", "HERTZ_DURATION_COEFFICIENT",
    "hysteresis_restitution", "exact_hysteresis_factor", "predicted_restitution", "ImpactResult",
    "simulate_impact", "achieved_restitution", "restitution_table",
    "SpherePlaneContact", "SphereSphereContact", "ClearanceJoint", "ContactGroup",
    "FrictionLaw", "CoulombRamp", "BrownMcPhee",
    "TriangleMesh", "SphereMeshContact", "NodeMeshContact", "NodePlaneContact", "SphereCloudContact",
    "ContactMarginWarning",
    "RopePulleyContact", "Rope", "rope_chain", "rope_segments", "over_pulley_points", "rope_pulley_forces",
    "wound_drum_points", "Sheave", "SheaveRope", "Impulsive", "ImpactEvent",
]
