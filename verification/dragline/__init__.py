"""Suite ``dragline``: the dragline of P. G. Crous ("Modelling of Dragline Dynamics", MSc thesis,
Stellenbosch 2000, Ch. 5) as an example study; models.py states the machine data and choices (the boom pinned at its
foot and held by suspension ropes from a mast head in the house; hoist, drag and dump ropes over sheaves),
hang.py the rig at rest against the statics by hand, cycle.py the driven dig-hoist-swing-dump cycle
(docs/theory-ropes.md §8)."""
from . import cycle, hang

CASES = hang.CASES + cycle.CASES

__all__ = ["CASES"]
