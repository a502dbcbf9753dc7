"""Progress and interruption of ``simulate``, a model that describes itself, and lean packaging
(issue 14, items 3-5): the progress bar and its automatic mode, Ctrl-C keeping the partial Result
(in-process and by a real SIGINT), ``print(system)``, ``flexmb --version`` / ``python -m flexmb``,
optional dependencies refused by their extra, and ``import flexmb`` loading no scipy."""
from __future__ import annotations

import io
import json
import math
import re
import signal
import subprocess
import sys
from importlib.metadata import version
from importlib.resources import files

import numpy as np
import pytest

import flexmb as fm
from flexmb.errors import MissingDependencyError, ModelError
from flexmb.solvers import progress as progress_module


def pendulum_with_contact() -> fm.System:
    """A driven two-link arm with a spring and a floor contact: every kind of item ``print`` lists."""
    s = fm.System(gravity=(0, -9.81, 0), name="demo")
    l1 = s.add(fm.RigidBody(mass=10.0, inertia=(0.01, 0.2, 0.2), position=(0.25, 0, 0), name="link1"))
    l2 = s.add(fm.RigidBody(mass=5.0, inertia=(0.01, 0.2, 0.2), position=(1.0, 0, 0), name="link2"))
    s.add(fm.Revolute(s.ground, l1, point=(0, 0, 0), axis=(0, 0, 1), name="shoulder"))
    s.add(fm.Revolute(l1, l2, point=(0.5, 0, 0), axis=(0, 0, 1), name="elbow"))
    s.add(fm.SpringDamper(l1, l2, point_a=(0.25, 0, 0), point_b=(1.0, 0, 0), k=10.0, name="spring"))
    s.add(fm.SpherePlaneContact(s.ground, l2, point=(0, -1, 0), normal=(0, 1, 0), center=(1.0, 0, 0), radius=0.1,
                                law=fm.contact.LankaraniNikravesh(K=1e6, e=0.8), name="floor"))
    return s


def pendulum() -> fm.System:
    s = fm.System(gravity=(0, -9.81, 0))
    arm = s.add(fm.RigidBody(mass=1.0, inertia=(0.01, 0.1, 0.1), position=(0.5, 0, 0), name="arm"))
    s.add(fm.Revolute(s.ground, arm, point=(0, 0, 0), axis=(0, 0, 1), name="pivot"))
    return s


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


# -- progress ------------------------------------------------------------------------------------

def test_progress_true_draws_a_bar_with_time_rate_and_eta(capsys):
    fm.simulate(pendulum(), 0.1, 1e-3, progress=True)
    err = capsys.readouterr().err
    assert "simulate: 100%" in err
    assert "t = 0.1/0.1 s" in err                 # the bar ends at t_end
    assert re.search(r"\[\d\d:\d\d, ETA (\d\d:\d\d|--:--), [0-9.e+]+ steps/s\]", err), err


@pytest.mark.parametrize("terminal, auto_s, shown", [(True, 0.0, True), (True, math.inf, False),
                                                     (False, 0.0, False)])
def test_automatic_progress_needs_a_terminal_and_a_long_predicted_run(monkeypatch, terminal, auto_s, shown):
    """``progress=None``: the bar appears only on a terminal and when the predicted run time exceeds
    AUTO_S (set to 0 or infinity here, so that no wall-clock speed matters)."""
    stderr = FakeTerminal() if terminal else io.StringIO()
    monkeypatch.setattr(sys, "stderr", stderr)
    monkeypatch.setattr(progress_module, "AUTO_S", auto_s)
    fm.simulate(pendulum(), 0.2, 1e-3)
    assert ("t = 0.2/0.2 s" in stderr.getvalue()) is shown, stderr.getvalue()


def test_automatic_bars_can_be_turned_off_for_a_driver_with_its_own_progress(monkeypatch):
    """``flexmb verify`` calls set_automatic(False): no automatic bar, but progress=True still draws."""
    monkeypatch.setattr(sys, "stderr", FakeTerminal())
    monkeypatch.setattr(progress_module, "AUTO_S", 0.0)
    previous = progress_module.set_automatic(False)
    try:
        fm.simulate(pendulum(), 0.1, 1e-3)
        assert sys.stderr.getvalue() == ""
        fm.simulate(pendulum(), 0.1, 1e-3, progress=True)
        assert "t = 0.1/0.1 s" in sys.stderr.getvalue()
    finally:
        assert progress_module.set_automatic(previous) is False


def test_progress_false_is_silent_on_a_terminal(monkeypatch):
    monkeypatch.setattr(sys, "stderr", FakeTerminal())
    monkeypatch.setattr(progress_module, "AUTO_S", 0.0)
    fm.simulate(pendulum(), 0.1, 1e-3, progress=False)
    assert sys.stderr.getvalue() == ""


@pytest.mark.usefixtures("progress_every_step")
def test_progress_callback_sees_every_accepted_step_when_called_without_pause():
    """``CALLBACK_S = 0``: the callback after every step (the default pause: tests/test_no_cliffs.py)."""
    seen = []
    res = fm.simulate(pendulum(), 0.05, 1e-3, progress=lambda t, t_end: seen.append((t, t_end)))
    assert len(seen) == res.stats["steps"] == 50
    np.testing.assert_allclose([t for t, _ in seen], res.t[1:], rtol=0, atol=1e-15)
    assert {t_end for _, t_end in seen} == {0.05}


@pytest.mark.parametrize("bad", ["yes", 1, 0.5, [True]])
def test_bad_progress_is_refused_by_name(bad):
    with pytest.raises(ModelError, match=r"simulate: progress must be None \(automatic\), True, False or a "
                                         r"callable progress\(t, t_end\), got " + re.escape(repr(bad))):
        fm.simulate(pendulum(), 0.01, 1e-3, progress=bad)


# -- Ctrl-C ---------------------------------------------------------------------------------------

@pytest.mark.usefixtures("progress_every_step")     # its callback stops the run at a chosen step
def test_keyboard_interrupt_carries_the_partial_result_without_output():
    def ctrl_c_at_40_ms(t, t_end):
        if t >= 0.04 - 1e-12:
            raise KeyboardInterrupt

    full = fm.simulate(pendulum(), 0.1, 1e-3)
    with pytest.raises(KeyboardInterrupt) as info:
        fm.simulate(pendulum(), 0.1, 1e-3, progress=ctrl_c_at_40_ms)
    part = info.value.result
    assert part.t[-1] == pytest.approx(0.04) and part.t.size == 41
    np.testing.assert_allclose(part.q, full.q[:41], rtol=0, atol=1e-12)     # the states, not a re-run
    assert "interrupted (Ctrl-C) at t = 0.04 s" in part.message
    assert part.stats["steps"] == 40
    assert np.all(np.isfinite(part.energy()["total"]))


CHILD = """
import json, signal, sys
# Ctrl-C as in a terminal: a test runner started in the background (bash runs background jobs with SIGINT ignored)
# passes an ignored SIGINT on to its children, and Python then keeps it ignored
signal.signal(signal.SIGINT, signal.default_int_handler)
import numpy as np
import flexmb as fm
s = fm.System(gravity=(0, -9.81, 0))
arm = s.add(fm.RigidBody(mass=1.0, inertia=(0.01, 0.1, 0.1), position=(0.5, 0, 0), name="arm"))
s.add(fm.Revolute(s.ground, arm, point=(0, 0, 0), axis=(0, 0, 1)))
started = []

def progress(t, t_end):
    if not started:
        started.append(t)
        print("running", flush=True)

try:
    fm.simulate(s, 1e6, 1e-3, progress=progress)      # does not end by itself
except KeyboardInterrupt as exc:
    r = exc.result
    print(json.dumps({"n": int(r.t.size), "t_last": float(r.t[-1]), "finite": bool(np.isfinite(r.q).all()),
                      "tip_finite": bool(np.isfinite(r.position(arm)).all()), "message": r.message}))
"""


def test_sigint_to_a_running_simulation_leaves_the_partial_result():
    """A real Ctrl-C (SIGINT) to a process in the middle of a run: the KeyboardInterrupt carries the
    states computed so far. The signal is sent after the first step; no timing is asserted (the timeout
    only guards against a hang)."""
    child = subprocess.Popen([sys.executable, "-c", CHILD], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "running"
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=300)
    finally:
        child.kill()
    assert child.returncode == 0, err
    report = json.loads(out)
    assert report["n"] >= 2 and report["t_last"] > 0.0
    assert report["finite"] and report["tip_finite"]
    assert report["message"].startswith("interrupted (Ctrl-C) at t = ")


# -- a model that describes itself ---------------------------------------------------------------

def test_print_system_lists_bodies_joints_forces_and_contacts():
    s = pendulum_with_contact()
    text = str(s)
    assert repr(s) == text == s.summary()
    lines = text.splitlines()
    assert lines[0] == ("System 'demo': 2 bodies, 2 joints, 1 force element, 1 contact; 14 coordinates, "
                        "10 joint equations; gravity (0.0, -9.81, 0.0) m/s^2")
    assert re.search(r"^  link1 +RigidBody +10 kg +7 coordinates$", text, re.M)
    assert re.search(r"^  link2 +RigidBody +5 kg +7 coordinates$", text, re.M)
    assert re.search(r"^  shoulder +Revolute +ground -> link1 +5 equations$", text, re.M)
    assert re.search(r"^  spring +SpringDamper +link1 -> link2$", text, re.M)
    assert re.search(r"^  floor +SpherePlaneContact +ground -> link2$", text, re.M)
    assert lines.index("forces:") < lines.index("contacts:")


def test_summary_of_a_flexible_body_gives_its_mass_and_modal_coordinates():
    x = np.linspace(0.0, 2.0, 11)
    mesh = fm.FEMesh(np.column_stack([x, 0 * x, 0 * x]), {"line": np.column_stack([np.arange(10), np.arange(1, 11)])},
                     node_sets={"hub": [0], "tip": [10]})
    fe = fm.FEModel(mesh, fm.Material(E=70e9, nu=0.33, rho=2700.0), sections=fm.BeamSection.rectangle(0.02, 0.04))
    s = fm.System(name="arm")
    s.add(fm.FlexibleBody(fm.craig_bampton(fe, {"hub": "hub", "tip": "tip"}, n_modes=4, reference="hub"), name="beam"))
    # 2 m x 0.02 m x 0.04 m of 2700 kg/m^3 = 4.32 kg; 4 normal modes + 6 tip interface modes
    assert re.search(r"^  beam +FlexibleBody +4\.32 kg +17 coordinates \(10 modal\)$", str(s), re.M), str(s)


# -- command line --------------------------------------------------------------------------------

def test_version_comes_from_the_installed_metadata(capsys):
    from flexmb.cli import main
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out.strip() == f"flexmb {version('flexmb')}" == f"flexmb {fm.__version__}"


@pytest.mark.parametrize("args, expect", [(["--version"], r"^flexmb \d+\.\d+"),
                                          (["info"], r"^  matplotlib +\S+ \(extra 'plots'\)$")])
def test_python_dash_m_flexmb(args, expect):
    out = subprocess.run([sys.executable, "-m", "flexmb", *args], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert re.search(expect, out.stdout, re.M), out.stdout


# -- lean packaging ------------------------------------------------------------------------------

def test_import_flexmb_loads_numpy_and_nothing_else_from_outside_the_standard_library():
    """No scipy (solvers, contact broad phase), meshio, h5py, tqdm or optional package at import: they load
    when a feature is used (flexmb/__init__.py, _LAZY)."""
    code = ("import sys, flexmb; print(sorted({m.split('.')[0] for m in sys.modules if not m.startswith('_')}"
            " - set(sys.stdlib_module_names)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "['flexmb', 'numpy']"


def test_lazy_names_resolve():
    from flexmb import SpherePlaneContact, simulate
    assert simulate is fm.solvers.simulate.simulate
    assert SpherePlaneContact is fm.contact.pairs.SpherePlaneContact
    assert {"simulate", "contact", "campbell", "__version__"} <= set(dir(fm))


def test_package_is_typed():
    assert files("flexmb").joinpath("py.typed").is_file()


def test_missing_matplotlib_is_named_with_its_extra(monkeypatch):
    from flexmb.solvers.campbell import CampbellDiagram
    monkeypatch.setitem(sys.modules, "matplotlib", None)         # as if not installed
    diagram = CampbellDiagram(np.zeros(2), np.ones((2, 1)), np.zeros(2, bool), np.zeros((2, 1)))
    with pytest.raises(MissingDependencyError, match=r"CampbellDiagram\.plot needs the optional package "
                                                     r"'matplotlib'.*pip install 'flexmb\[plots\]'"):
        diagram.plot()


def test_flexmb_verify_without_matplotlib_names_the_extra(monkeypatch, capsys, tmp_path):
    from flexmb.cli import main
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    assert main(["verify", "rigid", "--out", str(tmp_path)]) == 2
    assert "pip install 'flexmb[plots]'" in capsys.readouterr().err
    assert not any(tmp_path.iterdir())                            # refused before running a case


def test_dask_executor_without_distributed_names_the_extra(monkeypatch):
    from flexmb.studies.executors import _dask_client
    monkeypatch.setitem(sys.modules, "distributed", None)
    with pytest.raises(MissingDependencyError, match=r"Dask executor.*'distributed'.*flexmb\[studies\]"):
        _dask_client("tcp://127.0.0.1:1", timeout=1.0)
    assert issubclass(MissingDependencyError, ImportError)      # `except ImportError` still catches it


def test_compile_kernels_command_fills_the_cache():
    """`flexmb compile-kernels` evaluates every family once (the models need not be solvable) and exits 0."""
    out = subprocess.run([sys.executable, "-m", "flexmb", "compile-kernels"], capture_output=True, text=True,
                         timeout=900)
    assert out.returncode == 0, out.stderr
    assert re.search(r"^done in \d+\.\d s$", out.stdout, re.M), out.stdout
    for family in ("FlexibleBody", "NonlinearBeam", "ExactBeam", "CrushElement", "DCMotor", "SpherePlaneContact"):
        assert family in out.stdout, (family, out.stdout)
