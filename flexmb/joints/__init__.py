"""Joints: each type compiles to vectorized constraint primitives."""
from .base import Joint
from .driver import Driver
from .nonholonomic import KnifeEdge, RollingDisc, VelocityConstraint
from .types import Cylindrical, Distance, Fixed, Planar, Prismatic, Revolute, Spherical, Universal

__all__ = ["Joint", "Driver", "Fixed", "Revolute", "Spherical", "Prismatic", "Cylindrical",
           "Universal", "Planar", "Distance", "KnifeEdge", "RollingDisc", "VelocityConstraint"]
