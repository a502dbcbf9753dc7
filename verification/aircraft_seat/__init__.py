"""Suite ``aircraft-seat``: the FAR 25.562 front-row head impact of Lankarani, Olivares & Nagarajan (2002),
Table I -- component test (calibration), MADYMO column and the full sled run (predictions); cases.py
states the data, which numbers are calibrated and the tolerances."""
from .cases import CASES

__all__ = ["CASES"]
