"""The dragline cycle's rope checks can fail (verification/dragline/cycle.py ``taut_bounds``, ``check_taut_ropes``):
the rope kernel clamps tensions at 0, so the former ``min tension >= 0`` checks passed a slack rope; the bounds from
the rig's statics refuse a slack or unloaded boom suspension and a slack hoist rope."""
import numpy as np
import pytest

from verification.dragline import cycle, hang, models
from verification.framework import CaseResult


@pytest.fixture(scope="module")
def rig():
    d, static = models.hang_static()
    bounds = cycle.taut_bounds(d, static)
    rest = {k: float(d.ropes[k].values(static)["tension"][-1]) for k in ("suspension", "hoist")}
    return d, static, bounds, rest


def test_bounds_from_the_statics(rig):
    """The suspension's bound is the moment balance about the boom foot with the hoist rope unloaded: the suspension
    at rest equals it plus a positive multiple of the hoist tension (the hoist rope's pull only adds moment), and the
    hoist's bound is half the rig's weight, below the hoist tension at rest."""
    d, static, bounds, rest = rig
    Th = hang.hand_calculation(d, static)[0]
    Ts, _, _ = hang.suspension_hand(d, static, Th)
    assert abs(Ts - rest["suspension"]) <= 1e-8 * Ts                # the hand statics is the model's (hang.py)
    per_hoist = (Ts - bounds["suspension"]) / Th
    assert 1.0 < per_hoist < 1.6                                     # 1.32: the hoist's pull adds to the moment
    assert 0.35 < bounds["suspension"] / rest["suspension"] < 0.5     # 0.425 of the rest tension
    assert bounds["hoist"] == pytest.approx(0.5 * d.suspended_weight(), rel=1e-15)
    assert bounds["hoist"] < 0.5 * rest["hoist"]


@pytest.mark.parametrize("rope, share, passes", [("suspension", 0.0, False), ("suspension", 0.4, False),
                                                 ("hoist", 0.0, False), ("suspension", 0.5, True),
                                                 ("hoist", 0.5, True)])
def test_a_slack_or_unloaded_rope_fails(rig, rope, share, passes):
    """Tension histories at rest with one rope's minimum set to ``share`` of its rest tension: slack (0) fails, as
    does a suspension unloaded to 0.4 of its rest tension (below the boom's own weight), while 0.5 passes."""
    _, _, bounds, rest = rig
    T = {k: np.full(5, v) for k, v in rest.items()}
    T[rope][2] = share * rest[rope]
    r = CaseResult("dragline-cycle", "test")
    cycle.check_taut_ropes(r, T, bounds)
    assert r.passed == passes
