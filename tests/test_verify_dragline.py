"""`flexmb verify dragline --quick`: the dragline (Crous 2000, Ch. 5) rig at rest against the hand calculation (rope
lengths over the sheaves, tensions, the boom suspension by moments about the boom foot), and the driven cycle to the
end of the hoist (energy balance, ropes never pushing, chains in tension, rope ends clear of the sheaves); the case
and metric names are part of the interface. Also the pinned boom's suspension tension at rest against the moment
balance by hand, and the suite's two shortcuts (all ropes' values in one pass, chain-joint reactions only) against
the library calls they replace."""
import numpy as np
from verify_quick import run_quick

from verification.dragline import hang, models


def test_verify_dragline_quick(tmp_path):
    cases = run_quick("dragline", tmp_path / "rep")
    assert {"dragline-hang", "dragline-cycle"} <= set(cases)
    assert {"hoist_rope_length", "drag_rope_length", "dump_rope_length", "suspension_rope_length", "hoist_tension",
            "drag_tension", "dump_tension", "suspension_tension",
            "min_chain_tension"} <= set(cases["dragline-hang"]["metrics"])
    assert {"energy_balance_rel", "min_hoist_tension", "min_drag_tension", "min_dump_tension",
            "min_suspension_tension", "min_chain_tension",
            "min_sheave_clearance"} <= set(cases["dragline-cycle"]["metrics"])
    assert all(c["passed"] for c in cases.values())


def test_pinned_boom_suspension_tension_at_rest():
    """The boom, pinned at its foot, held by the suspension ropes: their tension at rest equals the moment balance
    about the foot pin by hand (boom weight, the hoist rope's two spans on the boom-point sheave with the hand hoist
    tension, the suspension rope's line), rel 1e-8 (the static Newton tolerance); the boom stays near its drawn
    32 deg (the ropes were drawn carrying about the hand tensions), and the foot pin's reaction balances the
    resultant of those forces (rel 1e-8 of T_s)."""
    d, res = models.hang_static()
    Th, _, _, _ = hang.hand_calculation(d, res)
    Ts_hand, arm, R = hang.suspension_hand(d, res, Th)
    Ts = float(d.suspension.values(res)["tension"][-1])
    assert abs(Ts - Ts_hand) <= 1e-8 * Ts_hand
    assert 2.0e6 < Ts < 3.0e6 and 30.0 < arm < 45.0          # the 2.4 MN / 37 m estimate of models.py
    assert abs(hang.boom_angle_deg(d, res)[-1] - 32.0) < 0.05
    # force balance on the boom: the foot pin's reaction (flexmb's multipliers) takes the resultant of the weight
    # and the ropes' pulls by hand
    F, _ = res.reaction(d.boom_foot)
    assert np.allclose(F[-1], -R, rtol=0.0, atol=1e-8 * Ts)


def test_suite_shortcuts_match_library_calls():
    """``models.rope_values`` equals ``SheaveRope.values`` and ``hang.chain_tensions`` equals the reactions of
    ``Assembly.reactions`` along the links, on the rig at rest (exactly: the same sums)."""
    d, res = models.hang_static()
    V = models.rope_values(d, res)
    for k, rope in d.ropes.items():
        ref = rope.values(res)
        assert all(np.array_equal(V[k][f], ref[f]) for f in ref)
    asm = d.system.compile()
    F, _ = asm.reactions(res.q[-1], res.v[-1], res.lam[-1], res.t[-1])
    ct = hang.chain_tensions(d, res, -1, asm)
    for name, chain in d.chains.items():
        ref = [float(-F[d.system.joints.index(j)] @ res.orientation(j.body_b)[-1][:, 0]) for j in chain.joints]
        assert np.allclose(ct[name], ref, rtol=1e-12, atol=0.0)
