"""Verification suites of flexmb, found by name through ``SUITES``.

Each suite is a module with ``CASES``: a list of functions ``case(quick: bool)
-> verification.framework.CaseResult``. ``flexmb verify`` is the only bridge
from the library to this package.
"""
SUITES = {
    "rigid": "verification.rigid",
    "fem": "verification.fem",
    "rotating-beam": "verification.rotating_beam",
    "crank-rocker": "verification.crank_rocker",
    "slider-crank": "verification.slider_crank",
    "impact": "verification.impact",
    "impulsive": "verification.impulsive",
    "train-crash": "verification.train_crash",
    "classics": "verification.classics",
    "manipulator": "verification.manipulator",
    "beams": "verification.beams",
    "ropes": "verification.ropes",
    "dragline": "verification.dragline",
    "linearization": "verification.linearization",
    "roller-chain": "verification.roller_chain",
    "aircraft-seat": "verification.aircraft_seat",
}
DEFAULT_SUITES = list(SUITES)
