"""flexmb: flexible multibody dynamics.

Rigid bodies with Euler parameters, joints as sparse constraint kernels,
force elements, and implicit generalized-alpha integration. See docs/guide.md.
"""
__version__ = "0.1.0"

from . import contact, errors
from .contact import SpherePlaneContact, SphereSphereContact
from .bodies import Body, FlexibleBody, Ground, NonlinearBeam, RigidBody
from .forces import (Bushing, CrushElement, DCMotor, Force, NodalForce, PlasticHinge, RotationalSpringDamper,
                     SpringDamper, Torque, UserForce, far_562_pulse, triangular_pulse, wrench_to_generalized)
from .joints import Cylindrical, Distance, Driver, Fixed, Joint, Planar, Prismatic, Revolute, Spherical, Universal
from .results import Result
from .solvers.campbell import CampbellDiagram, campbell
from .solvers.simulate import simulate
from .studies import Grid, Samples, Study, StudyResult
from .system import System
from .timefunctions import TimeFunction

load_result = Result.load

#: The finite-element path (meshio, element kernels, reduction), imported on first use (PEP 562) so that
#: ``import flexmb`` stays as fast as for a purely rigid model: public name -> defining module.
_LAZY = {
    "read_mesh": "flexmb.fem.mesh", "FEMesh": "flexmb.fem.mesh", "FEModel": "flexmb.fem.model",
    "Material": "flexmb.fem.materials", "BeamSection": "flexmb.fem.sections",
    "craig_bampton": "flexmb.reduction.craig_bampton", "free_free_modes": "flexmb.reduction.freefree",
    "ModeSet": "flexmb.reduction.modeset",
}
_LAZY_MODULES = ("fem", "reduction")


def __getattr__(name: str):
    """Import a name of the finite-element path, or the subpackage ``fem``/``reduction``, on first access."""
    import importlib
    if name in _LAZY_MODULES:
        return importlib.import_module(f"{__name__}.{name}")
    if name not in _LAZY:
        raise AttributeError(f"module 'flexmb' has no attribute {name!r}")
    value = getattr(importlib.import_module(_LAZY[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY) | set(_LAZY_MODULES))


__all__ = [
    "__version__", "errors", "System", "Body", "Ground", "RigidBody", "FlexibleBody", "NonlinearBeam",
    "Joint", "Fixed", "Revolute", "Spherical", "Prismatic", "Cylindrical", "Universal", "Planar", "Distance",
    "Driver", "Force", "Torque", "NodalForce", "DCMotor", "PlasticHinge", "CrushElement", "triangular_pulse", "far_562_pulse", "SpherePlaneContact", "SphereSphereContact", "contact", "campbell", "CampbellDiagram", "SpringDamper", "RotationalSpringDamper", "Bushing", "UserForce",
    "wrench_to_generalized", "TimeFunction", "simulate", "Result", "load_result",
    "Study", "Grid", "Samples", "StudyResult",
    "read_mesh", "FEMesh", "FEModel", "Material", "BeamSection", "craig_bampton", "free_free_modes", "ModeSet",
]
