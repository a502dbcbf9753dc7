"""Bodies: the ground frame, rigid bodies and flexible (floating-frame modal) bodies."""
from .base import GROUND, Body, Ground, Site
from .flexible import FlexibleBody, InterfaceSite, NodeSite
from .nonlinear_beam import NonlinearBeam
from .rigid import PointMass, RigidBody

__all__ = ["GROUND", "Body", "Ground", "Site", "RigidBody", "PointMass", "FlexibleBody", "InterfaceSite", "NodeSite", "NonlinearBeam"]
