"""Suite ``impact``: contact laws in simulations against Hertz closed forms, each law's exact
restitution, Newton's cradle, a bouncing ball and a flexible beam striking a wall with its energy
balance, the slider-crank with a revolute clearance joint (issue 6; cases.py and clearance.py list
sources and tolerances), and García Orden's beam striking a wall with the paper's data (issue 26;
orden_beam.py).
"""
from .cases import CASES as CONTACT_CASES
from .orden_beam import CASES as ORDEN_CASES

CASES = CONTACT_CASES + ORDEN_CASES

__all__ = ["CASES"]
