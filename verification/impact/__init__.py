"""Suite ``impact``: contact laws in simulations against Hertz closed forms, each law's exact
restitution, Newton's cradle, a bouncing ball and a flexible beam striking a wall with its energy
balance, and the slider-crank with a revolute clearance joint (issue 6; cases.py and clearance.py
list sources and tolerances).
"""
from .cases import CASES

__all__ = ["CASES"]
