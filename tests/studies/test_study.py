"""Studies: the same study gives the same table serially, in local processes and on a
Dask cluster; failing cases are kept with their error; an interrupted study resumes
without running a case twice; a Dask address that does not answer is a clear error."""
import math
import os
import re
from pathlib import Path

import numpy as np
import pytest

from flexmb.errors import ModelError
from flexmb.studies import Grid, Study, StudyError, StudyResult, load_study
from flexmb.studies.examples import ball_drop, ball_drop_metrics, hertz_max_penetration

# Builders live at module level so that process pools and Dask workers can import them.
CALLS = []
GRID = Grid({"v": [2.0, 3.5, 5.0], "K": [1e7, 1e8]})


class _Rough:
    """The contact law plus a violent ripple beyond half the Hertz penetration: Newton fails there."""

    def __init__(self, law, depth):
        self.law, self.depth = law, depth

    def __call__(self, t, q, v):
        Q = self.law(t, q, v)
        if 0.1 - q[2] > self.depth:
            Q[2] += 1e4 * math.sin(1e9 * q[2])
        return Q


def impact(params):
    """ball_drop with two faulty cases: v = 5, K = 1e7 cannot be built; v = 5, K = 1e8 fails
    in the solver mid-impact (ConvergenceError with a partial result)."""
    CALLS.append((params["v"], params["K"]))
    if params["v"] == 5.0 and params["K"] == 1e7:
        raise RuntimeError("no pad data for this case")
    s, run = ball_drop(params)
    if params["v"] == 5.0 and params["K"] == 1e8:
        f = s.forces[0]
        f.func, f.jacobian = _Rough(f.func, 0.5 * hertz_max_penetration(4.5, 5.0, 1e8)), None
        run["h_min"] = run["h"]                  # no step-size retries: fail where Newton fails
    return s, run


def crashing(params):
    """A case that kills its worker process (as a segfault in native code would)."""
    if params["v"] == 3.5 and params["K"] == 1e8:
        os._exit(3)
    return ball_drop(params)


def comparable(res):
    """Rows without the wall time, NaN made comparable."""
    return [{k: ("nan" if isinstance(v, float) and math.isnan(v) else v) for k, v in r.items() if k != "wall_s"}
            for r in res.rows]


def make_study(**kw):
    return Study(impact, GRID, ball_drop_metrics(), name="impact", **kw)


@pytest.fixture(scope="module")
def serial_table():
    return make_study().run(None, progress=False)


def test_serial_table_keeps_failures(serial_table, tmp_path):
    res = serial_table
    assert len(res) == 6 and list(res["case"]) == list(range(6))
    assert list(res["status"]) == ["ok", "ok", "ok", "ok", "failed", "failed"]
    build_fail, solve_fail = res.row(4), res.row(5)
    assert build_fail["error_type"] == "RuntimeError"
    assert build_fail["error"] == "build: no pad data for this case"
    assert math.isnan(build_fail["peak_force"]) and math.isnan(build_fail["t_reached"])
    assert solve_fail["error_type"] == "ConvergenceError" and solve_fail["error"].startswith("simulate: Newton")
    assert 0 < solve_fail["t_reached"] < 0.003 and math.isnan(solve_fail["hic15"])
    ok = res.ok
    assert np.all(np.isfinite(res["hic15"][ok])) and np.all(res["hic15_t1"][ok] < res["hic15_t2"][ok])
    # peak acceleration of the free ball = peak contact force / m (both metrics, one table)
    np.testing.assert_allclose(res["peak_g"][ok], res["peak_force"][ok] / 4.5 / 9.80665, rtol=1e-6)
    assert "2 failed" in res.summary() and "failed" in repr(res)
    # partial_metrics: the failed solve's metrics come from its partial result
    row = make_study(partial_metrics=True).run_case(5)
    assert row["status"] == "failed" and row["peak_force"] > 0 and math.isfinite(row["max_penetration"])
    # writers and readers agree
    res.to_csv(tmp_path / "t.csv")
    res.to_npz(tmp_path / "t.npz")
    for path in (tmp_path / "t.csv", tmp_path / "t.npz"):
        back = StudyResult.load(path)
        assert comparable(back)[:4] == comparable(res)[:4]
        assert list(back["status"]) == list(res["status"])
    assert res.table()["peak_force"].shape == (6,)


def test_processes_and_dask_give_the_serial_table(serial_table, tmp_path):
    study = make_study()
    proc = study.run(tmp_path / "proc", executor="processes", workers=2, progress=False)
    assert comparable(proc) == comparable(serial_table)
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        dask = study.run(tmp_path / "dask", executor=cluster.scheduler_address, progress=False)
    assert comparable(dask) == comparable(serial_table)
    # the files hold the same table
    assert comparable(load_study(tmp_path / "dask")) == comparable(load_study(tmp_path / "proc"))


def test_interrupt_and_resume(serial_table, tmp_path):
    out = tmp_path / "study"
    study = make_study()
    CALLS.clear()

    def stop_after_three(row):
        if len(CALLS) == 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        study.run(out, progress=False, callback=stop_after_three)
    assert len(CALLS) == 3
    lines = (out / "results.csv").read_text().splitlines()
    assert len(lines) == 1 + 3                          # header + the three finished cases
    assert len(StudyResult.load(out / "results.npz")) == 3
    with open(out / "results.csv", "a") as fh:           # a line cut short by the interrupt
        fh.write("3,abc,5.0")
    res = study.run(out, progress=False)
    assert sorted(CALLS) == sorted((c["v"], c["K"]) for c in study.cases)   # no case ran twice
    assert comparable(res) == comparable(serial_table)
    assert comparable(load_study(out)) == comparable(serial_table)
    CALLS.clear()
    again = study.run(out, progress=False)              # all recorded: nothing runs
    assert CALLS == [] and comparable(again) == comparable(serial_table)
    study.run(out, progress=False, retry_failed=True)   # only the two failed cases run again
    assert sorted(CALLS) == [(5.0, 1e7), (5.0, 1e8)]
    with pytest.raises(StudyError, match="already holds 6 recorded cases"):
        study.run(out, progress=False, resume=False)
    other = Study(impact, Grid({"v": [2.0, 3.0, 5.0], "K": [1e7, 1e8]}), ball_drop_metrics(), name="impact")
    with pytest.raises(StudyError, match="different study: case 2"):
        other.run(out, progress=False)
    with pytest.raises(StudyError, match="another study"):
        Study(impact, GRID, {"peak_g": ball_drop_metrics()["peak_g"]}).run(out, progress=False)


def test_worker_crash_is_recorded_and_the_study_goes_on(tmp_path):
    study = Study(crashing, GRID, {"peak_g": ball_drop_metrics()["peak_g"]})
    res = study.run(tmp_path, executor="processes", workers=2, progress=False)
    assert list(res["status"]) == ["ok", "ok", "ok", "failed", "ok", "ok"]
    assert res.row(3)["error_type"] == "WorkerCrashed"
    assert np.all(res["peak_g"][res.ok] > 0)


def test_bad_dask_address_is_a_clear_error():
    pytest.importorskip("distributed")
    study = make_study()
    import socket
    with socket.socket() as sock:                       # a port where nothing listens
        sock.bind(("127.0.0.1", 0))
        refused = f"tcp://127.0.0.1:{sock.getsockname()[1]}"
    with socket.socket() as silent:                     # a port that accepts but never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(4)
        hung = f"tcp://127.0.0.1:{silent.getsockname()[1]}"
        # the refused port fails at once; the silent one gives up after connect_timeout and says so (the
        # time it takes is not asserted: a busy machine must not fail this test)
        with pytest.raises(StudyError, match=re.escape(repr(refused)) + ".*refused"):
            study.run(None, executor=refused, progress=False, connect_timeout=5.0)
        with pytest.raises(StudyError, match=re.escape(repr(hung)) + " within 1 s"):
            study.run(None, executor=hung, progress=False, connect_timeout=1.0)
    with pytest.raises(StudyError, match="not a Dask scheduler address"):
        study.run(None, executor="no-port-here", progress=False)


def test_bad_input():
    with pytest.raises(ModelError, match="not keywords of flexmb.simulate"):
        Study(ball_drop, GRID, {}, run={"t_end": 1.0, "dt": 1e-3})
    with pytest.raises(ModelError, match="used twice"):
        Study(ball_drop, GRID, {"v": lambda r, s, p: 0.0})
    with pytest.raises(ModelError, match="not callable"):
        Study(ball_drop, GRID, {"x": 3.0})
    with pytest.raises(StudyError, match="pickle"):
        Study(lambda p: ball_drop(p), GRID, {}).run(None, executor="processes", workers=1, progress=False)
    row = Study(lambda p: "not a system", GRID, {}).run_case(0)
    assert row["status"] == "failed" and "must return a flexmb System" in row["error"]
    row = Study(lambda p: ball_drop(p)[0], GRID, {}).run_case(0)
    assert row["error_type"] == "ModelError" and "no t_end" in row["error"]


def test_progress_bar_text(capsys, monkeypatch):
    import builtins
    real_import = builtins.__import__

    def no_tqdm(name, *args, **kw):                      # the plain bar, whether tqdm is installed or not
        if name.startswith("tqdm"):
            raise ImportError(name)
        return real_import(name, *args, **kw)

    monkeypatch.setattr(builtins, "__import__", no_tqdm)
    Study(ball_drop, Grid({"v": [2.0], "K": [1e8]}), {}, name="bar").run(None, progress=True)
    err = capsys.readouterr().err
    assert "bar: [" in err and "1/1" in err


def test_guide_examples_run(tmp_path, monkeypatch):
    guide = Path(__file__).resolve().parents[2] / "docs" / "guide-studies.md"
    code = re.findall(r"```python\n(.*?)```", guide.read_text(), re.S)
    assert code
    monkeypatch.chdir(tmp_path)
    ns = {"__name__": "__main__"}
    for block in code:
        exec(compile(block, str(guide), "exec"), ns)
