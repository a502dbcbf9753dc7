"""Suite ``ropes``: ropes as chains of rigid segments over pulleys (issue 12 item 3; P. G. Crous,
"Modelling of Dragline Dynamics", 2000). pulley.py (rope over a pulley, Crous 2000, App. D.2) and catenary.py
(static hanging chain) and pendulum.py (chain falling over a pulley on a pendulum, Crous 2000, Ch. 4) list the models, sources, data choices and tolerances.
"""
from . import catenary, pendulum, pulley

CASES = pulley.CASES + catenary.CASES + pendulum.CASES

__all__ = ["CASES"]
