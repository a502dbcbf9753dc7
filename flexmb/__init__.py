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

__all__ = [
    "__version__", "errors", "System", "Body", "Ground", "RigidBody", "FlexibleBody", "NonlinearBeam",
    "Joint", "Fixed", "Revolute", "Spherical", "Prismatic", "Cylindrical", "Universal", "Planar", "Distance",
    "Driver", "Force", "Torque", "NodalForce", "DCMotor", "PlasticHinge", "CrushElement", "triangular_pulse", "far_562_pulse", "SpherePlaneContact", "SphereSphereContact", "contact", "campbell", "CampbellDiagram", "SpringDamper", "RotationalSpringDamper", "Bushing", "UserForce",
    "wrench_to_generalized", "TimeFunction", "simulate", "Result", "load_result",
    "Study", "Grid", "Samples", "StudyResult",
]
