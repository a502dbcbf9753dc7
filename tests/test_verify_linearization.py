"""Suite ``linearization`` through ``flexmb verify --quick`` (as a user runs it)."""
from tests.verify_quick import run_quick


def test_linearization_suite_passes(tmp_path):
    cases = run_quick("linearization", tmp_path)
    assert {f"shimmy-a0.{k}" for k in range(1, 10)} <= set(cases)
    assert "shimmy-time-domain" in cases and "shimmy-stability-boundary" in cases
    assert {"rolling-disc-lean-eigenvalues", "rolling-disc-critical-speed", "rolling-disc-circle", "torque-free-spin-axes",
            "sleeping-top"} <= set(cases)
    assert all(c["passed"] for c in cases.values())
    assert abs(cases["shimmy-a0.5"]["metrics"]["eig_real_max"] - cases["shimmy-a0.5"]["reference"]["eig_real_max"]) < 1e-9
