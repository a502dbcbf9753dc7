"""flexmb: flexible multibody dynamics.

Rigid bodies with Euler parameters, joints as sparse constraint kernels,
force elements, and implicit generalized-alpha integration. See docs/guide.md.

``flexmb.__version__`` is the installed distribution's version (flexmb/_version.py), read on first access.
"""
from . import errors
from .bodies import Body, FlexibleBody, Ground, NonlinearBeam, PointMass, RigidBody
from .forces import (Bushing, CrushElement, DCMotor, Force, NodalForce, NodalTorque, PlasticHinge, RotationalSpringDamper,
                     SpringDamper, Torque, UserForce, far_562_pulse, triangular_pulse, wrench_to_generalized)
from .joints import Cylindrical, Distance, Driver, Fixed, Joint, Planar, Prismatic, Revolute, Spherical, Universal
from .joints import KnifeEdge, RollingDisc, VelocityConstraint
from .joints.winch import Winch, payout_profile
from .forces.particles import ParticleAnchors, ParticleLinks, Particles
from .forces.nonlinear_spring import NonlinearSpring
from .results import Result, load_result
from .studies import Grid, Samples, Study, StudyResult
from .system import System
from .timefunctions import TimeFunction

#: Names imported on first use (PEP 562), so that ``import flexmb`` loads no scipy: the finite-element path
#: (meshio, element kernels, reduction), the solvers (scipy.linalg, scipy.sparse, CHOLMOD) and contact
#: (scipy.spatial in the broad phase): public name -> defining module.
_LAZY = {
    "simulate": "flexmb.solvers.simulate", "campbell": "flexmb.solvers.campbell",
    "static_equilibrium": "flexmb.solvers.static", "linearize": "flexmb.solvers.linearize",
    "ExactBeam": "flexmb.bodies.exact_beam",
    "CampbellDiagram": "flexmb.solvers.campbell",
    "SpherePlaneContact": "flexmb.contact.pairs", "SphereSphereContact": "flexmb.contact.pairs",
    "read_mesh": "flexmb.fem.mesh", "FEMesh": "flexmb.fem.mesh", "FEModel": "flexmb.fem.model",
    "Material": "flexmb.fem.materials", "BeamSection": "flexmb.fem.sections",
    "craig_bampton": "flexmb.reduction.craig_bampton", "free_free_modes": "flexmb.reduction.freefree",
    "ModeSet": "flexmb.reduction.modeset",
    "SprocketContact": "flexmb.contact.sprocket",
    "Sheave": "flexmb.contact.sheave_rope", "SheaveRope": "flexmb.contact.sheave_rope",
}
_LAZY_MODULES = ("fem", "reduction", "contact")


def __getattr__(name: str):
    """Import a lazy name (``_LAZY``), a subpackage ``fem``/``reduction``/``contact``, or ``__version__``,
    on first access."""
    import importlib
    if name == "__version__":
        from ._version import installed_version
        globals()[name] = installed_version()
        return globals()[name]
    if name in _LAZY_MODULES:
        return importlib.import_module(f"{__name__}.{name}")
    if name not in _LAZY:
        raise AttributeError(f"module 'flexmb' has no attribute {name!r}")
    value = getattr(importlib.import_module(_LAZY[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY) | set(_LAZY_MODULES) | {"__version__"})


__all__ = [
    "__version__", "errors", "System", "Body", "Ground", "RigidBody", "PointMass", "FlexibleBody", "NonlinearBeam",
    "Joint", "Fixed", "Revolute", "Spherical", "Prismatic", "Cylindrical", "Universal", "Planar", "Distance",
    "Driver", "Winch", "payout_profile", "KnifeEdge", "RollingDisc", "VelocityConstraint", "linearize", "Force", "Torque", "NodalForce", "NodalTorque", "DCMotor", "PlasticHinge", "CrushElement", "triangular_pulse", "far_562_pulse", "SpherePlaneContact", "SphereSphereContact", "contact", "campbell", "CampbellDiagram", "SpringDamper", "RotationalSpringDamper", "Bushing", "NonlinearSpring", "UserForce",
    "Particles", "ParticleLinks", "ParticleAnchors", "SprocketContact", "Sheave", "SheaveRope",
    "wrench_to_generalized", "TimeFunction", "simulate", "static_equilibrium", "Result", "load_result",
    "Study", "Grid", "Samples", "StudyResult",
    "read_mesh", "FEMesh", "FEModel", "Material", "BeamSection", "craig_bampton", "free_free_modes", "ModeSet",
]
