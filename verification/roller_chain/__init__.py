"""Suite ``roller-chain``: roller-chain drives of point-mass rollers, spring-damper links and Lankarani-Nikravesh
roller-sprocket contact (issue 13 item 4; S. L. Pedersen, J. M. Hansen & J. A. C. Ambrosio, "A novel roller-chain
drive model using multibody dynamics analysis tools", NATO ASI Virtual Nonlinear Multibody Systems, Prague 2002).
drive.py (two-sprocket drive: static tension, polygonal action, energy balance) lists the models, sources, data
choices and tolerances. The paper's four-sprocket marine-engine drive (marine.py) is a script,
``python -m verification.roller_chain.marine``, not a case: its 27 s run takes about half an hour and does not
close its energy balance (docs/theory-roller-chain.md §6), so it would neither pass nor fit `flexmb verify`.
"""
from . import drive

CASES = drive.CASES

__all__ = ["CASES"]
