"""Suite ``roller-chain``: roller-chain drives of point-mass rollers, spring-damper links and Lankarani-Nikravesh
roller-sprocket contact (issue 13 item 4; S. L. Pedersen, J. M. Hansen & J. A. C. Ambrosio, "A novel roller-chain
drive model using multibody dynamics analysis tools", NATO ASI Virtual Nonlinear Multibody Systems, Prague 2002).
drive.py (two-sprocket drive: static tension, static start under load, polygonal action, energy balance) lists
the models, sources, data choices and tolerances. marine.py: the paper's four-sprocket marine-engine drive; its
first 0.4 s are the case ``marine-start``; the 27 s run (about an hour on a shared machine) is the script
``python -m verification.roller_chain.marine`` (docs/theory-roller-chain.md §6), not a case of `flexmb verify`.
"""
from . import drive, marine

CASES = drive.CASES + [marine.marine_start]

__all__ = ["CASES"]
