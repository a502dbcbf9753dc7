"""Session-wide hooks of the test suite."""
from __future__ import annotations

import os

import pytest

_MUTATION: list[pytest.MonkeyPatch] = []       # the session's mutation, undone at its end


def pytest_configure(config: pytest.Config) -> None:
    """Apply the mutation named by ``FLEXMB_TEST_MUTATION`` (tests/mutations.py) for the whole session."""
    name = os.environ.get("FLEXMB_TEST_MUTATION")
    if name:
        from mutations import apply_mutation
        _MUTATION.append(apply_mutation(name))


def pytest_report_header(config: pytest.Config) -> str | None:
    """Name the session's mutation in the report header, so that its failures are not mistaken for real ones."""
    name = os.environ.get("FLEXMB_TEST_MUTATION")
    return f"mutation: {name} (tests/mutations.py): tests of the path it switches off must fail" if name else None


def pytest_unconfigure(config: pytest.Config) -> None:
    while _MUTATION:
        _MUTATION.pop().undo()


@pytest.fixture
def progress_every_step(monkeypatch):
    """A ``progress=`` callback called after every accepted step (``CALLBACK_S = 0``; the default is at most every
    0.1 s of wall time), for tests that stop a run at a chosen step from its callback."""
    from flexmb.solvers import progress
    monkeypatch.setattr(progress, "CALLBACK_S", 0.0)
