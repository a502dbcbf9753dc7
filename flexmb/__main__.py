"""``python -m flexmb``: the command line of flexmb/cli.py (``flexmb info``, ``verify``, ``modes``)."""
import sys

from .cli import main

sys.exit(main())
