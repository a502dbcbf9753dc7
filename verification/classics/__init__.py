"""Suite ``classics``: textbook multibody problems of van der Linde & Schwab 2002 (*Multibody
Dynamics B*) against their Lagrange closed forms and independent integrations of the Lagrange
equations (issue 12, item 5; crane.py lists sources, data choices and tolerances).
"""
from .crane import CASES

__all__ = ["CASES"]
