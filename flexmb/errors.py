"""Exceptions raised by flexmb.

Every error says what is wrong and where: the body, joint, mesh entity or value
involved. Input errors are raised at construction time (``ModelError``), solver
failures carry the time, step size and residual (``ConvergenceError``).
"""
from __future__ import annotations


class FlexmbError(Exception):
    """Base class of every flexmb exception."""


class ModelError(FlexmbError, ValueError):
    """A model item (body, joint, force, mesh, material ...) was given bad input."""


class MeshError(ModelError):
    """A mesh cannot be used: unsupported cells, bad sets, degenerate elements."""


class ConstraintError(FlexmbError):
    """The constraint set cannot be satisfied or is ill-posed."""


class RedundantConstraintError(ConstraintError):
    """Constraint equations are linearly dependent; ``rows`` names them."""

    def __init__(self, message: str, rows: list[str] | None = None):
        super().__init__(message)
        self.rows = rows or []


class InconsistentInitialConditions(ConstraintError):
    """Position or velocity projection could not make the start consistent."""


class SingularConfigurationError(ConstraintError):
    """The mechanism reached a configuration where the constraints are singular."""


class ConvergenceError(FlexmbError):
    """Newton iteration failed even after step-size retries.

    Attributes ``time``, ``step``, ``residual`` and ``worst`` (the name of the
    worst constraint or coordinate) describe the failure; ``result`` holds the
    part of the solution computed before it, when there is one.
    """

    def __init__(self, message: str, *, time: float = float("nan"), step: float = float("nan"),
                 residual: float = float("nan"), worst: str = ""):
        super().__init__(message)
        self.time = time
        self.step = step
        self.residual = residual
        self.worst = worst
        self.result = None


class NonFiniteError(FlexmbError, FloatingPointError):
    """A user function or the solution produced NaN or infinity."""


class InstabilityError(FlexmbError):
    """The physical model left its range of validity (e.g. buckling of a modal body)."""


class StallError(ConvergenceError):
    """The step size collapsed: the run advanced by less than a set fraction of its step over
    many attempts. Names the element that dominates the equations, the time and the step size;
    ``result`` holds what was computed before."""


class MissingDependencyError(FlexmbError, ImportError):
    """A feature needs an optional package that is not installed; the message names the package and
    the extra that installs it (``pip install 'flexmb[plots]'``)."""


class FlexmbWarning(UserWarning):
    """Base class of every flexmb warning: ``warnings.simplefilter("error", FlexmbWarning)`` turns them
    all into exceptions."""


def user_stacklevel() -> int:
    """The ``stacklevel`` for ``warnings.warn`` called by the caller of this function that attributes the warning
    to the first frame outside the flexmb package: the user's line (``fm.simulate(...)``), however many flexmb
    frames (wrappers, solvers) lie between. A fixed ``stacklevel`` pointed inside flexmb once a decorator was added."""
    import os
    import sys
    package = os.path.dirname(os.path.abspath(__file__)) + os.sep
    frame, level = sys._getframe(1), 1
    while frame.f_back is not None and os.path.abspath(frame.f_code.co_filename).startswith(package):
        frame, level = frame.f_back, level + 1
    return level


class MeshWarning(FlexmbWarning):
    """A mesh was repaired on reading (orphan nodes dropped, duplicates merged, cells ignored)."""


class RedundantConstraintWarning(FlexmbWarning):
    """Redundant constraint rows were found and switched off (``Result.redundant`` names them)."""


class ContactMarginWarning(FlexmbWarning):
    """A contact pair penetrated before the broad phase proposed it: the margin was too small for the step."""


class EnergyBalanceWarning(FlexmbWarning):
    """The energy balance of a run (Huston & Liu's accuracy testing function) drifted by more than
    its stated fraction of the energy scale: the step is too coarse or the model unstable."""


class OutputError(FlexmbError, OSError):
    """A result could not be written, or an output directory cannot be used: the disk is full or read-only, the
    directory was removed during the run, another run holds it (:class:`OutputLockedError`), or it is not a
    flexmb output. The message names the path and the cause; ``result`` holds the part of the solution computed
    before the failure (a Result, when a run was writing), and a solver error that stopped the run at the same
    time is chained as ``__cause__``."""

    def __init__(self, message: str, *, path: str = "", result=None):
        super().__init__(message)
        self.path = path
        self.result = result


class OutputLockedError(OutputError):
    """Another run writes into the output directory; ``holder`` describes it (pid, host, start time)."""

    def __init__(self, message: str, *, path: str = "", holder: dict | None = None):
        super().__init__(message, path=path)
        self.holder = holder or {}


class UnsafeFileError(ModelError):
    """A file refused on reading because it could make flexmb read other files (HDF5 external storage, virtual
    datasets, external links), allocate more memory than its size allows, or run code (pickles)."""


class UntrustedResultError(FlexmbError):
    """A result that another process sent (the row of a study case from a Dask worker) was refused: not
    the plain JSON row flexmb's workers send, columns other than the study's, a value of the wrong type,
    or the row of another case. The message names the case and what was wrong."""


class InsecureConnectionWarning(FlexmbWarning):
    """A connection to a cluster is neither encrypted nor authenticated and leaves this machine (e.g. a Dask
    scheduler at a ``tcp://`` address that is not loopback): anyone on the network path can read and alter
    it, and anyone who can reach the scheduler can run code on its workers and in this process."""


class ResolutionWarning(FlexmbWarning):
    """A run completed with steps too long for a motion it contains: on a body turning fast the step's parasitic
    rotation mode outgrew the numerical damping (its Euler-parameter rate has a component along ``p``), so the
    result may be far from the true motion although every step converged and the energy balance, dominated by
    slower bodies, may not show it."""
