"""The verification framework refuses a check that would pass at zero (issue 23, item 4)."""
import pytest

from verification.framework import CaseResult, VacuousToleranceError, run_case


@pytest.mark.parametrize("reference,tolerance", [(1e-3, "abs 1e-3"), (-6.6e-3, "abs 0.01"), (2.0, "rel 1"),
                                                 (-5.0, "rel 1.5")])
def test_a_tolerance_that_passes_at_zero_is_refused(reference, tolerance):
    r = CaseResult("case", "source")
    with pytest.raises(VacuousToleranceError, match="would pass"):
        r.check("tip_20", 0.0, reference, tolerance)


@pytest.mark.parametrize("value,reference,tolerance", [(1.0e-3, 1.0e-3, "abs 9.9e-4"), (0.0, 0.0, "abs 1e-9"),
                                                       (3.0, 3.0, "abs 0"), (2.0, 2.0, "rel 0.999"),
                                                       (0.5, None, "max 1.0"), (True, None, "true")])
def test_discriminating_tolerances_are_accepted(value, reference, tolerance):
    """A zero reference keeps its abs tolerance (the quantity is meant to vanish); bounds are not comparisons."""
    assert CaseResult("case", "source").check("m", value, reference, tolerance).passed


def test_a_case_with_a_vacuous_check_fails_with_the_message():
    def case(quick):
        r = CaseResult("vacuous", "source")
        r.check("max_abs_tip_after_Ts", 1.2e-3, 1.18e-3, "abs 0.01")
        return r
    res = run_case(case, quick=True)
    assert not res.passed
    assert "VacuousToleranceError" in res.error and "max_abs_tip_after_Ts" in res.error
