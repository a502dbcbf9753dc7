"""The fem suite's two-solver check (verification/fem/bodies.py ``full_model_two_solvers_rel``) compares two
algorithms: flexmb.reduction's dense LAPACK solve against the suite's shift-invert Lanczos (verification/fem/eigen.py
``method="lanczos"``). Both used to reach the same ``scipy.linalg.eigh`` call at 120 free dofs (difference exactly
0.0), so the check could not fail."""
import numpy as np
import pytest

from verification.fem import bodies, eigen


def test_lanczos_method_runs_arpack_not_lapack(monkeypatch):
    """``method="lanczos"`` reaches ARPACK's ``eigsh`` (spy) and never LAPACK's ``eigh``, at a size the "auto" method
    solves densely; its frequencies agree with the dense ones to 1e-10 (ARPACK residual tolerance 1e-13; measured
    2.5e-13), but not bit for bit."""
    model = bodies.sample_model("beam_line.msh", beam="euler-bernoulli")
    fixed = model.dofs("root")
    dense = eigen.frequencies(model, fixed, 12, method="dense")
    calls = []
    original = eigen.spla.eigsh

    def spy(*args, **kw):
        calls.append(args[0].shape[0])
        return original(*args, **kw)

    def refuse(*args, **kw):
        raise AssertionError("LAPACK eigh called by the Lanczos method")

    monkeypatch.setattr(eigen.spla, "eigsh", spy)
    monkeypatch.setattr(eigen.sla, "eigh", refuse)
    lanczos = eigen.frequencies(model, fixed, 12, method="lanczos")
    assert calls == [model.ndof - fixed.size] and calls[0] <= eigen.DENSE_LIMIT
    rel = np.abs(lanczos / dense - 1.0)
    assert np.max(rel) < 1e-10 and np.max(rel) > 0.0


def test_unknown_method_is_refused():
    model = bodies.sample_model("beam_line.msh", beam="euler-bernoulli")
    with pytest.raises(ValueError, match="lanczos"):
        eigen.frequencies(model, model.dofs("root"), 4, method="arnoldi")


def test_the_case_compares_the_two_algorithms():
    r = bodies.craig_bampton_cantilever(quick=True)
    c = next(c for c in r.checks if c.metric == "full_model_two_solvers_rel")
    assert c.passed and 0.0 < c.value < 1e-10
    assert r.passed
