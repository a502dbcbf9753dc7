"""Verification suites of flexmb, found by name through ``SUITES`` (:func:`suite_cases`).

Each suite is a module with ``CASES``: a list of functions ``case(quick: bool)
-> verification.framework.CaseResult``. ``flexmb verify`` is the only bridge
from the library to this package.
"""
from __future__ import annotations

import importlib
from typing import Callable

SUITES = {
    "rigid": "verification.rigid",
    "fem": "verification.fem",
    "rotating-beam": "verification.rotating_beam",
    "crank-rocker": "verification.crank_rocker",
    "slider-crank": "verification.slider_crank",
    "impact": "verification.impact",
    "impulsive": "verification.impulsive",
    "train-crash": "verification.train_crash",
    "underframe": "verification.underframe",
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


def suite_cases(name: str, quick: bool) -> list[Callable]:
    """The case functions of suite ``name`` (without the slow ones when ``quick``)."""
    module = importlib.import_module(SUITES[name])
    return [case for case in module.CASES if not (quick and getattr(case, "slow", False))]


def case_label(case: Callable) -> str:
    """The name a case function is shown under before it has run (its result names it after)."""
    return getattr(case, "__name__", "case").replace("_", "-")
