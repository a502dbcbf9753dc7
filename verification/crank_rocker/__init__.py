"""Suite ``crank-rocker``: start-up of a crank-rocker with a flexible coupler driven by a DC motor
(He 1992, §9.4, after Samanta 1990) with four coupler models, and the heavy-rocker buckling case.
Models and data: models.py; cases, metrics and tolerances: cases.py and docs/verification.md.
"""
from .cases import CASES

__all__ = ["CASES"]
