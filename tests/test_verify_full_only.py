"""The verification cases that ``flexmb verify --quick`` leaves out (``slow = True``) run here, in full mode, so
that every case of every suite runs in the test suite and in CI, not only in a hand-started full run.

The list is taken from the suites themselves at collection time: a case marked slow later joins it without an
edit here. Each case is run as ``flexmb verify`` runs it (``framework.run_case(case, quick=False)``) and must pass
every check it makes.
"""
import matplotlib
import pytest

matplotlib.use("Agg")

from verification import SUITES, case_label, suite_cases  # noqa: E402
from verification.framework import run_case  # noqa: E402

FULL_ONLY = [(suite, case) for suite in SUITES for case in suite_cases(suite, quick=False)
             if getattr(case, "slow", False)]


def test_the_full_only_list_is_not_empty():
    # guards the collection itself: if the slow marker changed its name, the parametrized test below would
    # silently run nothing
    assert len(FULL_ONLY) >= 30


@pytest.mark.parametrize("suite,case", FULL_ONLY, ids=[f"{s}/{case_label(c)}" for s, c in FULL_ONLY])
def test_full_only_case_passes(suite, case):
    res = run_case(case, quick=False)
    failed = [f"{c.metric} = {c.value!r} (reference {c.reference!r}, tolerance {c.tolerance})"
              for c in res.checks if not c.passed]
    assert not res.error, res.error
    assert res.checks, f"{suite}/{res.name} made no check"
    assert not failed, f"{suite}/{res.name}: " + "; ".join(failed)
