"""Suite ``impact``: contact laws in simulations against Hertz closed forms, each law's exact
restitution, Newton's cradle, a bouncing ball and a flexible beam striking a wall with its energy
balance (issue 6; cases.py lists sources and tolerances). Still to come: the slider-crank with a
revolute clearance joint.
"""
from .cases import CASES

__all__ = ["CASES"]
