"""Suite ``roller-chain``: roller-chain drives of point-mass rollers, spring-damper links and Lankarani-Nikravesh
roller-sprocket contact (issue 13 item 4; S. L. Pedersen, J. M. Hansen & J. A. C. Ambrosio, "A novel roller-chain
drive model using multibody dynamics analysis tools", NATO ASI Virtual Nonlinear Multibody Systems, Prague 2002).
drive.py (two-sprocket drive: static tension, polygonal action, energy balance) and marine.py (the paper's
four-sprocket marine-engine drive, a slow case) list the models, sources, data choices and tolerances.
"""
from . import drive, marine

CASES = drive.CASES + marine.CASES

__all__ = ["CASES"]
