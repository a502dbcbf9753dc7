"""Suite ``impulsive``: impacts with Newton's restitution through the impact equations of the constrained system
(flexmb.contact.Impulsive) against closed forms in minimal coordinates, free-fall bounces, Newton's cradle under
both rules, and the compliant Lankarani-Nikravesh law converging to the impulsive answer (cases.py lists sources
and tolerances).
"""
from .cases import CASES

__all__ = ["CASES"]
