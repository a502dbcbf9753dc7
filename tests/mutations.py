"""Mutations that switch a fast path off while the model still qualifies for it, so that the solver falls back
silently to the general path: a test that claims a path was taken must fail under the mutation of that path
(tests/test_mutations.py runs the named tests under each one in a subprocess and checks that they fail).

A mutation is chosen by the environment variable ``FLEXMB_TEST_MUTATION`` (read by tests/conftest.py at the start
of the pytest session) and stays applied for the whole session:

* ``no-compiled-step``: :class:`~flexmb.solvers.compiled_step.CompiledStep` declines every step (``step`` returns
  None as for a Newton iteration that did not converge, ``run`` and ``run_contacts`` return a block of no steps
  that failed), so every step is taken by the general step of ``AlphaStepper``.
* ``no-compiled-evaluation``: :class:`~flexmb.solvers.compiled_step.CompiledEvaluation` declines every residual
  (``residual`` returns None as for an element without direction), so every Newton iteration is evaluated by
  ``Assembly.residual``.
* ``no-cholmod``: CHOLMOD is switched off and cannot be switched on (``set_cholmod`` keeps it off), so sparse SPD
  matrices are factorized by SuperLU.
"""
from __future__ import annotations

import numpy as np
import pytest

ENV = "FLEXMB_TEST_MUTATION"
"""The environment variable that names the mutation of a pytest session."""


def _decline_compiled_step(mp: pytest.MonkeyPatch) -> None:
    import inspect

    from flexmb.solvers import compiled_step as cs
    contacts = inspect.signature(cs.CompiledStep.run_contacts)

    def no_block(s):
        """A block of no steps whose next attempt failed: the integrator takes that step on the general path."""
        nq, m = s.q.size, s.lam.size
        empty = np.zeros(0)
        return cs.StepBlock(0, empty, np.zeros((0, nq)), np.zeros((0, nq)), np.zeros((0, nq)), np.zeros((0, m)),
                            s.a.copy(), empty, empty, empty, True)

    mp.setattr(cs.CompiledStep, "step", lambda self, s, *args, **kw: None)
    mp.setattr(cs.CompiledStep, "run", lambda self, s, *args, **kw: (no_block(s), 0, 0))

    def no_contact_block(self, s, *args, **kw):
        """No steps, and the integrator's next step ``h`` (the argument) left as it was."""
        return no_block(s), 0, 0, contacts.bind(self, s, *args, **kw).arguments["h"]

    mp.setattr(cs.CompiledStep, "run_contacts", no_contact_block)


def _decline_compiled_evaluation(mp: pytest.MonkeyPatch) -> None:
    from flexmb.solvers import compiled_step as cs
    mp.setattr(cs.CompiledEvaluation, "residual", lambda self, *args, **kw: None)


def _switch_cholmod_off(mp: pytest.MonkeyPatch) -> None:
    from flexmb import linalg
    mp.setattr(linalg, "_cholmod_enabled", False)
    mp.setattr(linalg, "set_cholmod", lambda enabled: False)


MUTATIONS = {"no-compiled-step": _decline_compiled_step,
             "no-compiled-evaluation": _decline_compiled_evaluation,
             "no-cholmod": _switch_cholmod_off}
"""Each mutation's name and the function that applies it to a MonkeyPatch."""


def apply_mutation(name: str) -> pytest.MonkeyPatch:
    """Apply the mutation ``name`` (a key of :data:`MUTATIONS`); returns the MonkeyPatch that undoes it."""
    if name not in MUTATIONS:
        raise pytest.UsageError(f"{ENV}={name!r} is not a mutation; known: {', '.join(sorted(MUTATIONS))}")
    mp = pytest.MonkeyPatch()
    MUTATIONS[name](mp)
    return mp
