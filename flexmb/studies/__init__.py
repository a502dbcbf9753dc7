"""Parameter studies: ``Study(build, parameters, metrics)`` over a ``Grid`` or ``Samples``,
run serially, in local processes or on a Dask cluster, with results written
incrementally and resumable (docs/guide-studies.md). ``flexmb.studies.metrics`` holds
the crash and impact metrics (peak force, contact duration, penetration, energy
absorbed, peak acceleration in g, HIC15/HIC36)."""
from . import metrics
from .parameters import Cases, Grid, Samples
from .cases import StudyError
from .study import Study
from .table import StudyResult

load_study = StudyResult.load

__all__ = ["Study", "Grid", "Samples", "Cases", "StudyResult", "StudyError", "load_study", "metrics"]
