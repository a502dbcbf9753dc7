"""`flexmb verify dragline --quick`: the dragline (seed 000 Ch. 5) rig at rest against the statics by hand, and the
driven cycle to the end of the hoist (energy balance, ropes and chains in tension); the case and metric names are
part of the interface."""
from verify_quick import run_quick


def test_verify_dragline_quick(tmp_path):
    cases = run_quick("dragline", tmp_path / "rep")
    assert {"dragline-hang", "dragline-cycle"} <= set(cases)
    assert {"hoist_tension", "drag_tension", "min_chain_tension"} <= set(cases["dragline-hang"]["metrics"])
    assert {"energy_balance_rel", "min_hoist_tension", "min_drag_tension",
            "min_chain_tension"} <= set(cases["dragline-cycle"]["metrics"])
    assert all(c["passed"] for c in cases.values())
