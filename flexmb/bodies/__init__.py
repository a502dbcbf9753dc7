"""Bodies: the ground frame, rigid bodies and (later) flexible bodies."""
from .base import GROUND, Body, Ground
from .rigid import RigidBody

__all__ = ["GROUND", "Body", "Ground", "RigidBody"]
