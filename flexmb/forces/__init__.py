"""Force elements: applied loads, spring-dampers, bushings, user forces."""
from .applied import Force, Torque
from .base import ForceElement
from .springs import Bushing, RotationalSpringDamper, SpringDamper
from .user import UserForce, wrench_to_generalized

__all__ = ["ForceElement", "Force", "Torque", "SpringDamper", "RotationalSpringDamper", "Bushing",
           "UserForce", "wrench_to_generalized"]
