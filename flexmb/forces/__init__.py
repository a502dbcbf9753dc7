"""Force elements: applied loads, nodal forces on flexible bodies, spring-dampers, bushings, user forces."""
from .applied import Force, Torque
from .base import ForceElement
from .crash import CrushElement, PlasticHinge, far_562_pulse, triangular_pulse
from .motor import DCMotor
from .nodal import NodalForce, NodalTorque
from .springs import Bushing, RotationalSpringDamper, SpringDamper
from .user import UserForce, wrench_to_generalized

__all__ = ["ForceElement", "PlasticHinge", "CrushElement", "triangular_pulse", "far_562_pulse", "Force", "Torque", "NodalForce", "NodalTorque", "DCMotor", "SpringDamper", "RotationalSpringDamper", "Bushing",
           "UserForce", "wrench_to_generalized"]
