"""Small systems run with BLAS on one thread inside flexmb (no environment variable needed)."""
import numpy as np
from threadpoolctl import threadpool_info

import flexmb as fm


def blas_threads() -> list[int]:
    return [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]


def test_simulate_limits_blas_threads_for_small_systems_and_restores_them():
    before = blas_threads()
    seen = []
    s = fm.System()
    b = s.add(fm.RigidBody(1.0, (1.0, 1.0, 1.0), name="b"))

    def probe(t, q, v):
        seen.extend(blas_threads())
        return np.zeros(7)
    s.add(fm.UserForce(b, probe, name="probe"))
    s.compile()            # the sparsity probe calls the force once, outside any run
    seen.clear()
    fm.simulate(s, 0.003, 1e-3)
    assert seen and set(seen) == {1}
    assert blas_threads() == before
