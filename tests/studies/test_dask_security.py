"""Dask studies with a security model (issue 22, item 8).

A peer that controls a Dask worker is played by replacing, inside the worker processes of a real
local cluster on 127.0.0.1, the function the study runs there with a forgery. Each forged row (other
columns, the row of another case, other parameters, a plain dict, a pickled object) must be refused
with UntrustedResultError, and a pickled object must never be unpickled in this process. A TLS
cluster with a self-signed certificate made here runs the study and gives the serial table. A
non-loopback tcp:// address warns; the warning is tested on the address check alone (nothing
connects to a non-loopback address).
"""
import json
import math
import os
import pickle
import re
import shutil
import subprocess
import warnings

import pytest

from flexmb.errors import InsecureConnectionWarning, UntrustedResultError
from flexmb.studies import Grid, Study, StudyError
from flexmb.studies.examples import ball_drop, ball_drop_metrics
from flexmb.studies.parameters import param_hash

distributed = pytest.importorskip("distributed")

GRID = Grid({"v": [2.0, 3.0], "K": [1e7]})
CASES = GRID.cases()


def make_study() -> Study:
    return Study(ball_drop, GRID, {"peak_g": ball_drop_metrics()["peak_g"]}, name="secure drop")


def comparable(res):
    """Rows without the wall time (the only column that differs between two runs of a case)."""
    return [{k: v for k, v in r.items() if k != "wall_s"} for r in res.rows]


@pytest.fixture(scope="module")
def serial_table():
    return make_study().run(None, progress=False)


@pytest.fixture
def cluster():
    """A fresh scheduler and one worker process on 127.0.0.1 (fresh: a worker caches the functions
    it has unpickled, so a forgery must meet a worker that has not run the study yet)."""
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address=None) as c:
        yield c


# -- forgeries, run inside the worker process --------------------------------------------------------

class _Mark:
    """Unpickling this leaves a file named by the unpickling process's id in ``directory``."""

    def __init__(self, directory: str):
        self.directory = directory

    def __reduce__(self):
        return (_mark, (self.directory,))


def _mark(directory: str):
    with open(os.path.join(directory, str(os.getpid())), "w") as fh:
        fh.write("unpickled here")
    return {"case": 0}


def _forged_row(kind: str, index: int, params: dict) -> dict:
    """A well-formed row whose metric values the peer made up, then altered as ``kind`` says."""
    row = {"case": index, "param_hash": param_hash(params), **params, "peak_g": 1.0, "status": "ok",
           "error_type": "", "error": "", "wall_s": 0.0, "t_reached": 0.0}
    if kind == "columns":                      # an extra column
        row["injected"] = 1.0
    elif kind == "other case":                 # the row of the other case of GRID, sent for this one
        other = CASES[1 - index]
        row.update(case=1 - index, param_hash=param_hash(other), **other)
    elif kind == "other params":               # this case's index with other parameters (hash to match)
        row.update(v=99.0, param_hash=param_hash({**params, "v": 99.0}))
    return row


def _install_forgery(kind: str, marks: str) -> None:
    """Make this worker answer every case with a forgery: ``_case_on_worker`` (what the client submits)
    and ``run_case`` (what it submitted before rows travelled as JSON) are both replaced."""
    import flexmb.studies.executors as executors
    import flexmb.studies.study as study

    def payload(index, params):
        if kind == "pickle":                   # a pickle, pre-serialized so that Dask sends it as it is
            from distributed.protocol.serialize import Serialized, serialize
            return Serialized(*serialize(_Mark(marks), serializers=["pickle"]))
        if kind == "pickle bytes":
            return pickle.dumps(_Mark(marks))
        return _forged_row(kind, index, params)

    def forged_case_on_worker(task, index, params):
        value = payload(index, params)
        return json.dumps(value).encode() if isinstance(value, dict) and kind != "dict" else value

    def forged_run_case(task, index, params):
        return payload(index, params)

    executors._case_on_worker = forged_case_on_worker
    executors.run_case = study.run_case = forged_run_case


def forge(cluster, kind: str, marks) -> None:
    with distributed.Client(cluster.scheduler_address, set_as_default=False) as admin:
        admin.run(_install_forgery, kind, str(marks))


# -- a forged row is refused -------------------------------------------------------------------------

def test_forged_columns_are_refused_and_nothing_is_recorded(cluster, tmp_path):
    forge(cluster, "columns", tmp_path)
    with pytest.raises(UntrustedResultError, match=r"case \d .*columns differ.*unexpected \['injected'\]"):
        make_study().run(tmp_path / "out", executor=cluster.scheduler_address, progress=False)
    lines = (tmp_path / "out" / "results.csv").read_text().splitlines()
    assert len(lines) == 1                                                # the header only


@pytest.mark.parametrize("kind, message", [
    ("other case", r"it is the row of case 1"),
    ("other params", r"it carries the parameters \{'v': 99\.0, 'K': 10000000\.0\}"),
    ("dict", r"it is a dict, not JSON bytes"),
    ("pickle bytes", r"it is not JSON"),
])
def test_forged_rows_are_refused(cluster, tmp_path, kind, message):
    forge(cluster, kind, tmp_path)
    study = Study(ball_drop, Grid({"v": [2.0], "K": [1e7]}), {"peak_g": ball_drop_metrics()["peak_g"]})
    with pytest.raises(UntrustedResultError, match=r"case 0 \{'v': 2\.0, 'K': 10000000\.0\} was refused: "
                                                   + message):
        study.run(None, executor=cluster.scheduler_address, progress=False)
    assert list(tmp_path.iterdir()) == []                                # nobody unpickled the bytes


def test_a_pickled_result_is_never_unpickled_here(cluster, tmp_path):
    forge(cluster, "pickle", tmp_path)
    study = Study(ball_drop, Grid({"v": [2.0], "K": [1e7]}), {"peak_g": ball_drop_metrics()["peak_g"]})
    with pytest.raises(UntrustedResultError, match=r"case 0 .* was refused: .*serialized with pickle"):
        study.run(None, executor=cluster.scheduler_address, progress=False)
    assert not (tmp_path / str(os.getpid())).exists(), "the forged pickle was unpickled in the client"
    assert list(tmp_path.iterdir()) == []                                # nor in the scheduler


# -- the row check on its own --------------------------------------------------------------------------

def _good() -> dict:
    return _forged_row("", 0, CASES[0])


@pytest.mark.parametrize("payload, message", [
    ("not bytes", "it is a str, not JSON bytes"),
    (b"\xff\xfe", "it is not JSON"),
    (b"[1, 2]", "it is a JSON list, not an object"),
    (json.dumps({k: v for k, v in _good().items() if k != "peak_g"}).encode(), r"missing \['peak_g'\]"),
    (json.dumps({**_good(), "case": "0"}).encode(), "it is the row of case '0'"),
    (json.dumps({**_good(), "case": False}).encode(), "it is the row of case False"),
    (json.dumps({**_good(), "K": 2e7}).encode(), "carries the parameters"),
    (json.dumps({**_good(), "param_hash": "0" * 12}).encode(), "carries the parameters"),
    (json.dumps({**_good(), "peak_g": "1.0"}).encode(), r"the values \{'peak_g': '1.0'\} are not numbers"),
    (json.dumps({**_good(), "peak_g": [1.0]}).encode(), "are not numbers"),
    (json.dumps({**_good(), "wall_s": True}).encode(), "are not numbers"),
    (json.dumps({**_good(), "peak_g": 10 ** 400}).encode(), "are not numbers"),        # beyond the float range
    (json.dumps({**_good(), "case": list(range(10 ** 5))}).encode(),                   # the message is cut short
     r"row of case \[0, 1, [\d, ]+\.\.\.\. flexmb"),
    (json.dumps({**_good(), "status": "fine"}).encode(), "is not 'ok' or 'failed'"),
    (json.dumps({**_good(), "error": None}).encode(), "is not 'ok' or 'failed' with string error fields"),
    (json.dumps({**_good(), "error": "x"}).encode(), "it is 'ok' but carries an error"),
    (json.dumps({**_good(), "error": "x" * (1 << 20)}).encode(), r"bytes long \(at most 1048576 accepted\)"),
])
def test_row_check_refuses(payload, message):
    from flexmb.studies.executors import _accepted_row
    with pytest.raises(UntrustedResultError, match=message):
        _accepted_row(payload, 0, CASES[0], GRID.names, ("peak_g",))


def test_row_check_accepts_a_worker_row_and_rebuilds_it_from_the_case():
    from flexmb.studies.executors import _accepted_row, _case_on_worker
    study = make_study()
    failed = {**_good(), "peak_g": math.nan, "status": "failed", "error_type": "ConvergenceError",
              "error": "simulate: no convergence", "t_reached": math.inf}
    row = _accepted_row(json.dumps(failed).encode(), 0, CASES[0], GRID.names, ("peak_g",))
    assert math.isnan(row["peak_g"]) and row["t_reached"] == math.inf and row["status"] == "failed"
    assert list(row) == list(study.columns)
    real = _case_on_worker(study._task(), 1, CASES[1])                  # what a flexmb worker sends
    assert isinstance(real, bytes)
    row = _accepted_row(real, 1, CASES[1], GRID.names, ("peak_g",))
    expected = study.run_case(1)
    assert {k: v for k, v in row.items() if k != "wall_s"} == {k: v for k, v in expected.items() if k != "wall_s"}


# -- TLS ---------------------------------------------------------------------------------------------

def _self_signed(directory, name: str):
    """A self-signed certificate and key for 127.0.0.1 made with the openssl command (a test certificate:
    RSA 2048, one day)."""
    if shutil.which("openssl") is None:
        if os.environ.get("CI") == "true":
            pytest.fail("CI must test TLS: the openssl command is missing")
        pytest.skip("the openssl command is missing")
    cert, key = directory / f"{name}.pem", directory / f"{name}.key"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key),
                    "-out", str(cert), "-days", "1", "-subj", f"/CN={name}",
                    "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"],
                   check=True, capture_output=True, timeout=60)
    return str(cert), str(key)


def _security(cert: str, key: str):
    return distributed.security.Security(
        tls_ca_file=cert, tls_client_cert=cert, tls_client_key=key, tls_scheduler_cert=cert,
        tls_scheduler_key=key, tls_worker_cert=cert, tls_worker_key=key, require_encryption=True)


def test_tls_cluster_runs_the_study(serial_table, tmp_path):
    security = _security(*_self_signed(tmp_path, "cluster"))
    stranger = _security(*_self_signed(tmp_path, "stranger"))          # not signed by the cluster's CA
    study = make_study()
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, protocol="tls://",
                                  host="127.0.0.1", security=security, dashboard_address=None) as cluster:
        address = cluster.scheduler_address
        assert address.startswith("tls://127.0.0.1:")
        with warnings.catch_warnings():
            warnings.simplefilter("error", InsecureConnectionWarning)
            res = study.run(None, executor=address, security=security, progress=False)
            by_cluster = study.run(None, executor=cluster, progress=False)   # the cluster lends its security
        with pytest.raises(StudyError, match=re.escape(address) + r".* is TLS: pass security="):
            study.run(None, executor=address, progress=False)
        with pytest.raises(StudyError, match=re.escape(address)):
            study.run(None, executor=address, security=stranger, progress=False, connect_timeout=2.0)
    assert comparable(res) == comparable(serial_table)
    assert comparable(by_cluster) == comparable(serial_table)


def test_security_argument_is_checked():
    study = make_study()
    with pytest.raises(StudyError, match="must be a distributed.security.Security.*got str"):
        study.run(None, executor="tls://127.0.0.1:1", security="cert.pem", progress=False)
    with pytest.raises(StudyError, match="executor='serial' does not connect"):
        study.run(None, security=distributed.security.Security(), progress=False)


# -- tcp:// beyond this machine --------------------------------------------------------------------------

@pytest.mark.parametrize("address", ["tcp://10.0.0.5:8786", "tcp://192.168.1.20:8786", "tcp://[2001:db8::1]:8786",
                                     "tcp://scheduler.example.org:8786", "ws://10.0.0.5:8786"])
def test_unencrypted_remote_scheduler_warns(address):
    from flexmb.studies.executors import check_scheduler_address
    with pytest.warns(InsecureConnectionWarning, match=re.escape(repr(address)) + r" is unencrypted.*tls://"):
        check_scheduler_address(address)


@pytest.mark.parametrize("address", ["tcp://127.0.0.1:8786", "tcp://127.0.1.1:8786", "tcp://localhost:8786",
                                     "tcp://[::1]:8786", "tls://10.0.0.5:8786", "wss://10.0.0.5:8786"])
def test_loopback_or_tls_scheduler_does_not_warn(address):
    from flexmb.studies.executors import check_scheduler_address
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_scheduler_address(address)
    with pytest.raises(StudyError, match="'no-port-here' is not a Dask scheduler address"):
        check_scheduler_address("no-port-here")
