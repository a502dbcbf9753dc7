"""Suite ``train-crash``: 1-D trains with crush interfaces.

* cases.py -- trains of one rigid body per car (Milho, Ambrosio & Pereira in Ambrosio 2002; issue 13, item 5): two
  cars against the two-mass closed form, and the paper's eight-car train set running into a standing one at
  30 km/h (quick) and at 40 and 55 km/h (full run), checked by momentum conservation, the energy balance and the
  plastic-limit bounds.
* safetrain.py -- the SAFETRAIN staircases of Pereira & Dias 2002, Table II (staircase.py) on cars of five bodies
  (multibody.py; issue 26, item 2): the HE staircase into a wall against its closed form, two 3-car trains at
  55 km/h (energy per device, conservation, sustained deceleration below 5 g), the 54 km/h SAFETRAIN test and its
  planar model with the anti-climber (anticlimber.py).
"""
from . import cases, safetrain

CASES = cases.CASES + safetrain.CASES

__all__ = ["CASES"]
