"""``python -m verification.occupant [OUT_DIR]``: run the example crash study."""
import sys

from . import run_study

res = run_study(sys.argv[1] if len(sys.argv) > 1 else "occupant-study")
print(res.summary())
