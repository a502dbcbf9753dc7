"""Suite ``beams``: the geometrically exact beam ``fm.ExactBeam`` in static large-deflection problems
solved by ``fm.static_equilibrium``, against independent elastica solutions (issue 12, item 1;
cases.py lists sources, element counts and tolerances)."""
from .cases import CASES

__all__ = ["CASES"]
