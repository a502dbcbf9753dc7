"""Results with scipy's manners (issue 25, item 3, and the pyvista part of item 6): a short repr, ``res[name]``
and ``res.series(name)`` on a live result as on a loaded file, ``success``/``message``, result-file suffixes,
``simulate``'s ``h``, accessors that take contacts by name, the row-vectorized reactions behind
``to_dataframe``, a sane first ETA of the progress bar, and the ParaView file read by ``pyvista.read``."""
from __future__ import annotations

import inspect

import numpy as np
import pytest

import flexmb as fm
from flexmb.errors import ModelError
from flexmb.solvers import progress as progress_module
from flexmb.solvers.progress import RunProgress


def double_pendulum(name: str = "chain") -> fm.System:
    """Two 1 kg links in a vertical plane, pinned at the origin and to each other."""
    s = fm.System(gravity=(0, -9.81, 0), name=name)
    a = s.add(fm.RigidBody(1.0, (1e-3, 1 / 12, 1 / 12), position=(0.5, 0, 0), name="link1"))
    b = s.add(fm.RigidBody(1.0, (1e-3, 1 / 12, 1 / 12), position=(1.5, 0, 0), name="link2"))
    s.add(fm.Revolute(s.ground, a, (0, 0, 0), (0, 0, 1), name="pin1"))
    s.add(fm.Revolute(a, b, (1, 0, 0), (0, 0, 1), name="pin2"))
    return s


def bouncing_link() -> fm.System:
    """A pendulum with a ball on its tip that strikes a wall (a named sphere-plane contact), a driven second
    pin, and a redundant third pin (coaxial with the first: its rows are switched off)."""
    s = fm.System(gravity=(0, -9.81, 0), name="wall test")
    arm = s.add(fm.RigidBody(2.0, (1e-3, 0.2, 0.2), position=(0.5, 0, 0), name="arm"))
    hand = s.add(fm.RigidBody(0.5, (1e-3, 0.01, 0.01), position=(1.2, 0, 0), name="hand"))
    s.add(fm.Revolute(s.ground, arm, (0, 0, 0), (0, 0, 1), name="shoulder"))
    s.add(fm.Revolute(s.ground, arm, (0, 0, 0.1), (0, 0, 1), name="shoulder twin"))
    wrist = s.add(fm.Revolute(arm, hand, (1.0, 0, 0), (0, 0, 1), name="wrist"))
    s.add(fm.Driver(wrist, angle=lambda t: 0.5 * t * t, name="wrist drive"))
    s.add(fm.SpherePlaneContact(s.ground, hand, point=(0, -0.9, 0), normal=(0, 1, 0), center=(1.3, 0, 0),
                                radius=0.05, law=fm.contact.LankaraniNikravesh(K=1e7, e=0.8), name="wall"))
    return s


@pytest.fixture(scope="module")
def run():
    return fm.simulate(double_pendulum(), 0.2, 1e-3, progress=False)


@pytest.fixture(scope="module")
def wall_run():
    with pytest.warns(fm.errors.RedundantConstraintWarning):
        return fm.simulate(bouncing_link(), 0.6, 1e-3, progress=False)


# -- repr ---------------------------------------------------------------------------------------

def test_repr_of_a_live_result_is_a_short_summary(run):
    """Before: 12,032 characters of arrays for a two-body model (here 4,123 for 201 rows)."""
    text = repr(run)
    assert str(run) == text
    assert len(text) < 800 and "array(" not in text, text
    assert text.splitlines()[0] == "Result of system 'chain'"
    for line in ("  success: True", "  message: completed", "  t: 0 .. 0.2 s, 201 saved times",
                 "  bodies (2): link1, link2", "  joints (2): pin1, pin2"):
        assert line in text.splitlines(), (line, text)
    assert "stats: steps=200" in text


def test_repr_names_contacts_and_a_loaded_file_reads_the_same(wall_run, tmp_path):
    assert "  contacts (1): wall" in repr(wall_run).splitlines()
    path = wall_run.save(tmp_path / "wall.h5")
    saved = fm.load_result(path)
    text = repr(saved)
    assert len(text) < 800 and text.splitlines()[0].startswith("SavedResult of system 'wall test' from ")
    lines = text.splitlines()
    assert "  success: True" in lines and f"  t: 0 .. 0.6 s, {wall_run.t.size} saved times" in lines, text
    assert "  forces (1): wall" in lines                   # the file names its force elements, not their kinds
    assert saved.success and saved.message == wall_run.message


def test_repr_of_a_result_loaded_without_its_system(run, tmp_path):
    bare = fm.Result.load(run.save(tmp_path / "chain.npz"))
    lines = repr(bare).splitlines()
    assert lines[:4] == ["Result (no system attached)", "  success: True", "  message: completed",
                         "  t: 0 .. 0.2 s, 201 saved times"]


# -- res[name], res.series(name) ----------------------------------------------------------------

def test_named_series_of_a_live_result_as_of_a_loaded_file(run, tmp_path):
    """Before: res["bodies/link1/position"] raised TypeError ('Result' object is not subscriptable)."""
    saved = fm.load_result(run.save(tmp_path / "chain.h5"))
    for name in ("bodies/link1/position", "joints/pin2/coordinates", "joints/pin1/reaction_force",
                 "energy/total", "time"):
        live = run[name]
        assert np.array_equal(live, run.series(name)) and np.array_equal(live, run.series[name])
        # the HDF5 file holds the same arrays (float64, written and read exactly)
        assert np.array_equal(saved[name], live) and np.array_equal(saved.series(name), live), name
    assert np.array_equal(run["bodies/link1/position"], run.position("link1"))
    assert run.series_names() == saved.series_names()


@pytest.mark.parametrize("which", ["live", "saved"])
def test_an_unknown_series_name_lists_the_names(run, tmp_path, which):
    res = run if which == "live" else fm.load_result(run.save(tmp_path / "chain.h5"))
    with pytest.raises(ModelError, match=r"no series named 'bodies/link3/position'.*bodies/link1/position"):
        res["bodies/link3/position"]


# -- success and message ------------------------------------------------------------------------

@pytest.mark.usefixtures("progress_every_step")     # its callback stops the run at a chosen step
def test_a_completed_run_succeeds_and_an_interrupted_one_says_why():
    res = fm.simulate(double_pendulum(), 0.05, 1e-3, progress=False)
    assert res.success is True and res.message == "completed"

    def stop(t, t_end):
        if t >= 0.02:
            raise KeyboardInterrupt
    with pytest.raises(KeyboardInterrupt) as info:
        fm.simulate(double_pendulum(), 0.05, 1e-3, progress=stop)
    partial = info.value.result
    assert partial.success is False
    assert partial.message.startswith("interrupted (Ctrl-C) at t = 0.02 s")
    assert "success: False" in repr(partial)


@pytest.mark.usefixtures("progress_every_step")     # its callback stops the run at a chosen step
def test_a_run_read_from_its_chunks_succeeds_only_when_it_reached_t_end(tmp_path):
    fm.simulate(double_pendulum(), 0.02, 1e-3, output=tmp_path / "whole", progress=False)
    whole = fm.load_result(tmp_path / "whole")
    assert whole.success and whole.message.startswith("completed")

    def stop(t, t_end):
        if t >= 0.01:
            raise KeyboardInterrupt
    with pytest.raises(KeyboardInterrupt):
        fm.simulate(double_pendulum(), 0.02, 1e-3, output=tmp_path / "cut", progress=stop)
    cut = fm.load_result(tmp_path / "cut")
    assert not cut.success and "stopped at t = 0.01 s of t_end = 0.02 s" in cut.message


# -- save / load suffixes -------------------------------------------------------------------------

def test_save_refuses_an_unknown_suffix_and_load_applies_the_same_rule(run, tmp_path):
    """Before: save("y.csv") wrote y.csv.npz silently, and load("y.csv") said the file did not exist."""
    target = tmp_path / "y.csv"
    with pytest.raises(ModelError, match=r"'\.csv'.*\.npz.*\.h5.*\.hdf5.*Result\.to_csv"):
        run.save(target)
    assert list(tmp_path.iterdir()) == []                          # nothing written
    with pytest.raises(ModelError, match=r"Result\.load: .*'\.csv'.*\.npz"):
        fm.Result.load(target)


def test_a_name_without_suffix_is_an_npz_file_both_ways(run, tmp_path):
    written = run.save(tmp_path / "run")
    assert written == tmp_path / "run.npz" and written.is_file()
    back = fm.Result.load(tmp_path / "run", system=run.system)
    assert np.array_equal(back.q, run.q) and back.message == run.message
    assert run.save(tmp_path / "RUN.NPZ") == tmp_path / "RUN.NPZ"     # suffixes in any case


# -- simulate's h -------------------------------------------------------------------------------

def test_simulate_signature_and_docstring_agree_about_h():
    """Before: simulate(s, 0.1) raised 'h must be a finite number > 0, got None', and the docstring did not
    say that h is required."""
    h = inspect.signature(fm.simulate).parameters["h"]
    assert h.default is None and h.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
    doc = " ".join(fm.simulate.__doc__.split())
    assert '``h`` (s) is required by the default method and by "hht" and "newmark"' in doc
    assert 'Its default None serves only the explicit references "rk45"/"dop853"' in doc
    for method in ("generalized-alpha", "hht", "newmark"):
        for adaptive in (False, True):
            with pytest.raises(ModelError, match=rf"step size h \(s\) is required by method '{method}'.*"
                                                  r"got h=None.*simulate\(system, t_end, h\)"):
                fm.simulate(double_pendulum(), 0.1, method=method, adaptive=adaptive)
    res = fm.simulate(double_pendulum(), 0.01, method="rk45")        # chooses its own steps
    assert res.success and res.t[-1] == pytest.approx(0.01, abs=1e-15)


# -- accessors take names, contacts included ----------------------------------------------------

def test_contact_accessors_take_the_contact_by_name(wall_run):
    """Before: contact_force("wall") said "'wall' is not a sphere or clearance contact"."""
    wall = next(f for f in wall_run.system.forces if f.name == "wall")
    force = wall_run.contact_force("wall")
    assert np.array_equal(force, wall_run.contact_force(wall))
    assert force.max() > 10.0                                        # it did strike the wall
    with pytest.raises(ModelError, match=r"'floor' is not a sphere or clearance contact .*\['wall'\]"):
        wall_run.contact_force("floor")
    with pytest.raises(ModelError, match=r"'wall' is not a mesh, node or sphere-cloud contact .*"
                                         r"SpherePlaneContact.*Result\.contact_force"):
        wall_run.contact_forces("wall")
    with pytest.raises(ModelError, match=r"'wall' is not a particle set .*SpherePlaneContact"):
        wall_run.particles("wall")


def test_unknown_body_and_joint_names_list_the_names(run):
    with pytest.raises(ModelError, match=r"no body named 'link3' \(bodies: \['link1', 'link2'\]\)"):
        run.position("link3")
    with pytest.raises(ModelError, match=r"joint 'pin3' is not in the simulated system \(joints: \['pin1', 'pin2'\]\)"):
        run.reaction("pin3")


# -- reactions of all rows at once (to_dataframe) ----------------------------------------------

def reactions_row_by_row(res) -> tuple[np.ndarray, np.ndarray]:
    """The reference, written out independently of Assembly.reactions_at: at each saved state the assembled sparse
    Jacobian, and for each joint ``g = -lambda_rows Phi_q[rows, body]``, force ``g_r``, torque ``E(p) g_p / 2 - (P -
    r) x g_r`` (the per-joint loop Assembly.reactions ran before it called reactions_at)."""
    from flexmb import rotations as rot
    asm = res.system.compile()
    F = np.zeros((res.t.size, len(res.system.joints), 3))
    T = np.zeros_like(F)
    for i, (t, q, v, lam) in enumerate(zip(res.t, res.q, res.v, res.lam)):
        jac = asm.constraints(q, v, t).jac.tocsr()
        lam_act = np.where(asm.active, lam, 0.0)
        for k, joint in enumerate(res.system.joints):
            b = joint.body_b if joint.body_b.ncoord else joint.body_a
            rows = np.flatnonzero(asm.row_joint == k)
            g = -(lam_act[rows] @ jac[rows][:, b.offset:b.offset + 7].toarray())
            F[i, k] = g[:3]
            T[i, k] = 0.5 * rot.E(q[b.offset + 3:b.offset + 7]) @ g[3:] - np.cross(joint.point - q[b.offset:b.offset + 3], g[:3])
    return F, T


@pytest.fixture(scope="module")
def flexible_run():
    from test_labelled_results import arm_with_tip_mass        # a flexible arm, driven hub, ball joint to a mass
    return fm.simulate(arm_with_tip_mass(), 0.1, 5e-3, progress=False)


@pytest.mark.parametrize("fixture", ["run", "wall_run", "flexible_run"])
def test_reactions_of_all_rows_equal_the_row_by_row_rule(fixture, request):
    """The same sums of the same products, in another order: equal to round-off (1e-12 of the largest
    reaction). ``wall_run`` has a driver's rows and switched-off redundant rows, ``flexible_run`` joints on
    a flexible body's interfaces."""
    res = request.getfixturevalue(fixture)
    F0, T0 = reactions_row_by_row(res)
    F, T = res.reactions()
    scale = max(np.abs(F0).max(), np.abs(T0).max())
    np.testing.assert_allclose(F, F0, rtol=0, atol=1e-12 * scale)
    np.testing.assert_allclose(T, T0, rtol=0, atol=1e-12 * scale)
    for k, joint in enumerate(res.system.joints):
        f, tq = res.reaction(joint.name)
        np.testing.assert_allclose(f, F[:, k], rtol=0, atol=1e-12 * scale)
        np.testing.assert_allclose(tq, T[:, k], rtol=0, atol=1e-12 * scale)


def test_dataframe_columns_equal_the_accessors_row_by_row(wall_run):
    pytest.importorskip("pandas")
    df = wall_run.to_dataframe()
    F0, T0 = reactions_row_by_row(wall_run)
    scale = max(np.abs(F0).max(), np.abs(T0).max())
    for k, joint in enumerate(wall_run.system.joints):
        for c, axis in enumerate("xyz"):
            assert abs(df[f"{joint.name}.reaction_force.{axis}"].to_numpy() - F0[:, k, c]).max() <= 1e-12 * scale
            assert abs(df[f"{joint.name}.reaction_torque.{axis}"].to_numpy() - T0[:, k, c]).max() <= 1e-12 * scale
    assert np.array_equal(df[["hand.position.x", "hand.position.y", "hand.position.z"]].to_numpy(),
                          wall_run.position("hand"))
    assert np.array_equal(df["energy.total"].to_numpy(), wall_run.energy()["total"])
    assert np.array_equal(df.index.to_numpy(), wall_run.t)


# -- the progress bar's ETA ---------------------------------------------------------------------

class Clock:
    """A wall clock the test moves by hand (s)."""

    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_first_eta_waits_for_the_warm_up_then_follows_the_simulated_time_rate(capsys):
    """The issue's case: a 0.4 s run whose bar said ETA 03:22 at its first update. The bar opens at wall
    time 0; the first refresh comes after a slow first step (0.3 s for 1 ms of 0.4 s); then the run goes
    at 1 s of simulated time per wall second. No ETA until 0.5 s and 3 refreshes; then (0.4 - t) at that
    rate -- never minutes."""
    clock = Clock()
    bar = RunProgress(True, 0.0, 0.0, 0.4, 0, clock=clock)
    etas = []
    for wall, t in [(0.3, 0.001), (0.4, 0.101), (0.5, 0.201), (0.6, 0.301)]:
        clock.now = wall
        bar._draw(t, int(t * 1000))
        etas.append(bar.eta(t, wall))
    bar.close(0.4, 400)
    assert etas[:2] == ["--:--", "--:--"]                  # before 0.5 s and 3 refreshes: no guess
    # 0.3 s of simulated time in 0.6 s since the bar opened: 0.099 s left take 0.198 s, shown as 00:00
    assert etas[2:] == ["00:00", "00:00"]
    assert "ETA 00:00" in capsys.readouterr().err


def test_eta_of_a_long_run_is_its_simulated_time_left_over_its_rate():
    clock = Clock()
    bar = RunProgress(True, 0.0, 0.0, 10.0, 0, clock=clock)
    for wall in (1.0, 2.0, 3.0):
        clock.now = wall
        bar._draw(0.1 * wall, int(wall * 100))
    assert bar.eta(0.3, 3.0) == "01:37"                    # 9.7 s of simulated time at 0.1 s per second
    bar.close(10.0, 10000)
    assert progress_module.BAR_FORMAT.count("remaining") == 0      # tqdm's own estimate is not shown


# -- ParaView file read by pyvista --------------------------------------------------------------

def test_paraview_file_reads_with_pyvista(run, tmp_path):
    """Before: pyvista.read refused the file ("vtkPartitionedDataSetCollection is not currently supported").
    The blocks' points equal the result's positions at the first saved time (pyvista.read) and at a later
    one (the same reader at that time): the box of each link is centred on its centre of mass, a joint's
    vertex sits at the joint point (1e-12 m: float64 written and read back)."""
    pv = pytest.importorskip("pyvista")
    path = run.export_paraview(tmp_path / "chain.vtkhdf")["vtkhdf"]
    first = pv.read(path)
    assert isinstance(first, pv.MultiBlock)
    assert list(first.keys()) == ["link1", "link2", "pin1 (revolute joint)", "pin2 (revolute joint)"]
    for k in (0, 150):
        blocks = first if k == 0 else _at_time(pv, path, run.t[k])
        for body in ("link1", "link2"):
            np.testing.assert_allclose(blocks[body].points.mean(axis=0), run.position(body)[k], rtol=0, atol=1e-12)
        np.testing.assert_allclose(blocks["pin2 (revolute joint)"].points[0], run.position("link1", (0.5, 0, 0))[k],
                                   rtol=0, atol=1e-12)


def _at_time(pv, path, t: float):
    """The file's blocks at time ``t`` (s), as pyvista wraps them: pyvista.read gives the first time, so a
    fresh vtkHDFReader (the reader pyvista.read uses) is moved to ``t``."""
    from vtkmodules.vtkIOHDF import vtkHDFReader
    reader = vtkHDFReader()
    reader.SetFileName(str(path))
    reader.UpdateTimeStep(t)
    return pv.wrap(reader.GetOutputDataObject(0))
