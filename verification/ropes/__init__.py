"""Suite ``ropes``: ropes as chains of rigid segments over pulleys (issue 12 item 3; seed 000, P. G. Crous,
"Modelling of Dragline Dynamics", 2000). pulley.py (rope over a pulley, seed 000 App. D.2) and catenary.py
(static hanging chain) list the models, sources, data choices and tolerances.
"""
from . import catenary, pulley

CASES = pulley.CASES + catenary.CASES

__all__ = ["CASES"]
