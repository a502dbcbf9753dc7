"""`flexmb verify dragline --quick`: the dragline rig at rest (seed 000 Ch. 5) against the statics by hand; the
case and metric names are part of the interface."""
from verify_quick import run_quick


def test_verify_dragline_quick(tmp_path):
    cases = run_quick("dragline", tmp_path / "rep")
    assert "dragline-hang" in cases
    assert {"hoist_tension", "drag_tension", "min_chain_tension"} <= set(cases["dragline-hang"]["metrics"])
    assert all(c["passed"] for c in cases.values())
