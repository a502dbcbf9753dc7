"""Suite ``train-crash``: 1-D trains of rigid cars with crush interfaces (Milho, Ambrosio &
Pereira in Ambrosio 2002; issue 13, item 5): two cars against the two-mass closed form, and the paper's eight-car train set
running into a standing one at 30 km/h (quick) and at 40 and 55 km/h (full run), checked by momentum
conservation, the energy balance and the plastic-limit bounds (cases.py states sources and tolerances).
"""
from .cases import CASES

__all__ = ["CASES"]
