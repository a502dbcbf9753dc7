"""`flexmb verify dragline --quick`: the dragline (seed 000 Ch. 5) rig at rest against the hand calculation (rope
lengths over the sheaves, tensions), and the driven cycle to the end of the hoist (energy balance, ropes never
pushing, chains in tension, rope ends clear of the sheaves); the case and metric names are part of the interface."""
from verify_quick import run_quick


def test_verify_dragline_quick(tmp_path):
    cases = run_quick("dragline", tmp_path / "rep")
    assert {"dragline-hang", "dragline-cycle"} <= set(cases)
    assert {"hoist_rope_length", "drag_rope_length", "dump_rope_length", "hoist_tension", "drag_tension",
            "dump_tension", "min_chain_tension"} <= set(cases["dragline-hang"]["metrics"])
    assert {"energy_balance_rel", "min_hoist_tension", "min_drag_tension", "min_dump_tension",
            "min_chain_tension", "min_sheave_clearance"} <= set(cases["dragline-cycle"]["metrics"])
    assert all(c["passed"] for c in cases.values())
