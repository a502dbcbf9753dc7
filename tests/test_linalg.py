"""Linear-algebra backends: dense, SuperLU, CHOLMOD, and the CHOLMOD-less path."""
import numpy as np
import pytest
import scipy.sparse as sp

from flexmb import linalg


def spd(n, seed=0):
    rng = np.random.default_rng(seed)
    A = sp.random(n, n, density=5.0 / n, random_state=rng)
    return (A @ A.T + n * sp.eye(n)).tocsc()


@pytest.mark.parametrize("n", [50, 2000])
@pytest.mark.parametrize("spd_flag", [True, False])
def test_factorize_solves(n, spd_flag):
    A = spd(n)
    b = np.arange(n, dtype=float)
    f = linalg.factorize(A, spd=spd_flag)
    assert np.allclose(A @ f.solve(b), b, rtol=1e-10, atol=1e-10)
    if n > linalg.DENSE_LIMIT:
        expected = "CHOLMOD" if (spd_flag and linalg.cholmod_available()) else "SuperLU"
        assert f.backend == expected


def test_disabled_cholmod_uses_superlu():
    A = spd(1000)
    with linalg.cholmod_disabled():
        assert not linalg.cholmod_available()
        f = linalg.factorize(A, spd=True)
        assert f.backend == "SuperLU"
        assert "SuperLU" in linalg.backends()["sparse SPD"]
        s = linalg.SPDSolver()
        assert s.factorize(A).backend == "SuperLU"


@pytest.mark.skipif(not linalg.cholmod_available(), reason="CHOLMOD not installed")
def test_spd_solver_reuses_symbolic_analysis():
    s = linalg.SPDSolver()
    A = spd(1000)
    f1 = s.factorize(A)
    f2 = s.factorize(A * 2.0)
    assert f1.symbolic is f2.symbolic
    b = np.ones(1000)
    assert np.allclose(2.0 * f2.solve(b), f1.solve(b))


def test_singular_matrix_raises():
    with pytest.raises(linalg.SingularMatrixError):
        linalg.factorize(np.zeros((3, 3)))
    with pytest.raises(linalg.SingularMatrixError):
        linalg.factorize(sp.csc_matrix((400, 400)))
