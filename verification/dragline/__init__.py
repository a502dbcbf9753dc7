"""Suite ``dragline``: the dragline of seed 000 (P. G. Crous, "Modelling of Dragline Dynamics", MSc thesis,
Stellenbosch 2000, Ch. 5) as an example study; models.py states the machine data and choices, hang.py the check
(the rig at rest against the statics by hand). The dynamic dig-hoist-swing-dump cycle does not run yet
(docs/theory-ropes.md §8)."""
from . import hang

CASES = hang.CASES

__all__ = ["CASES"]
