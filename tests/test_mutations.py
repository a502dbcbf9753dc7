"""The tests that claim a fast path was taken fail when that path is switched off (tests/mutations.py).

Each mutation leaves a model qualifying for the path but makes the path decline, so the solver falls back silently
to the general path and gives the same answer: a parity test that compares the general path with itself, or a
"takes the X path" test that checks only the qualification, passes under it. The named tests below must each fail
under their mutation, by an assertion (a crash would not show that they check the path). They run in a subprocess
of pytest with ``FLEXMB_TEST_MUTATION`` set (tests/conftest.py applies it for that session). Tests of those files
not named here test kernels, the choice of path or its failure path, which the mutations do not change.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from mutations import ENV, MUTATIONS

ROOT = Path(__file__).resolve().parents[1]

STEP = "tests/test_compiled_step.py::"
SPARSE = "tests/test_compiled_sparse.py::"
ROPES = "tests/test_compiled_step_ropes.py::"

MUST_FAIL = {
    "no-compiled-step": [
        STEP + "test_every_kind_model_takes_the_compiled_step",
        *(STEP + f"test_compiled_step_repeats_the_general_step[kw{k}]" for k in range(3)),
        STEP + "test_specialized_step_equals_the_universal_step",
        STEP + "test_flexible_models_take_the_compiled_step[modal]",
        STEP + "test_flexible_models_take_the_compiled_step[nonlinear-beam]",
        STEP + "test_spring_models_take_the_compiled_step[False]",
        STEP + "test_spring_models_take_the_compiled_step[True]",
        STEP + "test_contact_models_take_the_compiled_step",
        STEP + "test_contact_blocks_of_every_pair_kind[1]",
        STEP + "test_contact_blocks_of_every_pair_kind[7]",
        STEP + "test_loaded_models_take_the_compiled_step",
        STEP + "test_motor_models_take_the_compiled_step[blocks]",
        STEP + "test_motor_models_take_the_compiled_step[single steps]",
        STEP + "test_motor_models_take_the_compiled_step[contact blocks]",
        STEP + "test_contact_friction_takes_the_compiled_step",
        SPARSE + "test_small_particle_chain_takes_the_compiled_step",
        ROPES + "test_dense_rope_model_takes_the_compiled_step[0.3-linear]",
        ROPES + "test_dense_rope_model_takes_the_compiled_step[0.2-tanh]",
        ROPES + "test_dense_rope_model_takes_the_compiled_step[0.0-linear]",
    ],
    "no-compiled-evaluation": [
        SPARSE + "test_sparse_particle_chain_takes_the_compiled_evaluation",
        SPARSE + "test_sparse_rigid_models_take_the_compiled_evaluation",
        SPARSE + "test_sphere_clouds_take_the_compiled_evaluation[27]",
        SPARSE + "test_sphere_clouds_take_the_compiled_evaluation[64]",
        ROPES + "test_sparse_rope_model_takes_the_compiled_evaluation",
    ],
    "no-cholmod": [
        "tests/test_simulate.py::test_solution_identical_without_cholmod",
    ],
}
"""Per mutation, the node ids of the tests that must fail under it."""


def _failures(report: str) -> dict[str, str]:
    """The failed node ids of a pytest report with its short summary (``-rf``) and the reason of each."""
    out = {}
    for line in report.splitlines():
        if line.startswith("FAILED "):
            node, _, reason = line[len("FAILED "):].partition(" - ")
            out[node] = reason
    return out


def test_every_mutation_has_named_tests():
    assert set(MUST_FAIL) == set(MUTATIONS)


@pytest.mark.parametrize("mutation", sorted(MUST_FAIL))
def test_named_tests_fail_under_the_mutation(mutation):
    """The mutation's named tests, run under it: pytest exits 1 (tests failed, not a usage or collection error),
    every named test fails and by an assertion (an AssertionError, or a bare ``assert`` pytest reports as such)."""
    named = MUST_FAIL[mutation]
    env = {**os.environ, ENV: mutation, "COLUMNS": "400"}     # COLUMNS: the summary lines are not cut short
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--tb=no", "-rf",
                           "-o", "addopts=", *named], cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    report = proc.stdout + proc.stderr
    assert f"mutation: {mutation}" in report, report           # the session ran under the mutation
    assert proc.returncode == 1, report
    failed = _failures(report)
    assert sorted(set(named) - set(failed)) == [], report      # named tests that passed under the mutation
    crashed = {node: reason for node, reason in failed.items() if not reason.startswith(("AssertionError", "assert "))}
    assert crashed == {}, report
