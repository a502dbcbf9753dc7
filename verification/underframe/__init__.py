"""Suite ``underframe``: the end-underframe of a railway vehicle with plastic hinges (Pereira & Dias 2002,
Example 4.3): the VCSI of the 30 km/h wall impact and the 5 km/h service constraints of the initial design,
the optimisation of the three I-beam widths, the energy balance and the hinge law (cases.py lists sources,
choices and tolerances; model.py the model; optimise.py the optimisation).
"""
from .cases import CASES

__all__ = ["CASES"]
