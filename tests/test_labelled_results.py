"""Labelled results (flexmb/io/series.py, flexmb/io/hdf5.py): HDF5 files, DataFrames and CSV.

A flexible arm driven at its hub carries a rigid mass on a ball joint at its tip. Its result goes through
an HDF5 file and back, read without the System (every named series equals the accessor it came from, with
its units) and with it (every accessor equals the original's); the DataFrame and CSV views hold the same
numbers under their column names; mismatched systems and foreign or corrupt files are refused naming the file.
"""
import re
import sys
from pathlib import Path

import h5py
import numpy as np
import pytest

import flexmb as fm
from flexmb.errors import MissingDependencyError, ModelError
from flexmb.io.hdf5 import SavedResult

GUIDE = Path(__file__).resolve().parents[1] / "docs" / "guide-output.md"
TIP = "tip/mass"                       # a "/" in a name: escaped in HDF5 paths, kept in column names
TIP_PATH = "tip%2Fmass"


def arm_with_tip_mass(n_modes: int = 2):
    x = np.linspace(0.0, 1.0, 7)
    mesh = fm.FEMesh(np.column_stack([x, 0 * x, 0 * x]), {"line": np.column_stack([np.arange(6), np.arange(1, 7)])},
                     node_sets={"hub": [0], "tip": [6]})
    fe = fm.FEModel(mesh, fm.Material(E=70e9, nu=0.33, rho=2700.0), sections=fm.BeamSection.rectangle(0.02, 0.04))
    modes = fm.craig_bampton(fe, {"hub": "hub", "tip": "tip"}, n_modes=n_modes, reference="hub")
    s = fm.System(gravity=(0, -9.81, 0), name="arm rig")
    arm = s.add(fm.FlexibleBody(modes, damping=0.01, name="arm"))
    tip = s.add(fm.RigidBody(0.5, (1e-3, 1e-3, 1e-3), position=(1.0, 0, 0), name=TIP))
    hub = s.add(fm.Revolute(s.ground, arm.interface("hub"), (0, 0, 0), (0, 0, 1), name="hub"))
    s.add(fm.Driver(hub, angle=fm.TimeFunction.spin_up(omega_s=4.0, T_s=0.1), name="drive"))
    s.add(fm.Spherical(arm.interface("tip"), tip, (1.0, 0, 0), name="ball"))
    return s


@pytest.fixture(scope="module")
def run():
    return fm.simulate(arm_with_tip_mass(), 0.1, 5e-3)


@pytest.fixture(scope="module")
def h5(run, tmp_path_factory):
    path = tmp_path_factory.mktemp("h5") / "arm.h5"
    run.save(path)
    return path


def expected_series(res) -> dict[str, tuple[np.ndarray, tuple[str, ...]]]:
    """What the accessors give, by series name, with the units each series must carry (one per column)."""
    out = {"time": (res.t, ("s",))}
    for body in ("arm", TIP):
        base = f"bodies/{body.replace('/', '%2F')}"
        out |= {f"{base}/position": (res.position(body), ("m",) * 3),
                f"{base}/euler_parameters": (res.euler_parameters(body), ("1",) * 4),
                f"{base}/rotation_matrix": (res.orientation(body), ("1",) * 9),
                f"{base}/velocity": (res.velocity(body), ("m/s",) * 3),
                f"{base}/angular_velocity": (res.angular_velocity(body), ("rad/s",) * 3),
                f"{base}/acceleration": (res.acceleration(body), ("m/s^2",) * 3),
                f"{base}/angular_acceleration": (res.angular_acceleration(body), ("rad/s^2",) * 3)}
    n_modes = res.system.body("arm").n_modes                      # 2 fixed-interface + 6 constraint modes
    out["bodies/arm/modal_coordinates"] = (res.modal_coordinates("arm"), ("1",) * n_modes)
    out["joints/hub/coordinates"] = (res.joint_coordinates("hub"), ("rad",))
    out["joints/drive/coordinates"] = (res.joint_coordinates("drive"), ("rad",))
    out["joints/ball/coordinates"] = (res.joint_coordinates("ball"), ("rad",) * 3)
    for joint in ("hub", "drive", "ball"):
        force, torque = res.reaction(joint)
        out[f"joints/{joint}/reaction_force"] = (force, ("N",) * 3)
        out[f"joints/{joint}/reaction_torque"] = (torque, ("N m",) * 3)
    out |= {f"energy/{k}": (v, ("J",)) for k, v in res.energy().items()}
    return out


# -- HDF5 round trip ----------------------------------------------------------------------------
def test_hdf5_read_without_the_system_gives_every_series_with_units(run, h5):
    saved = fm.load_result(h5)
    assert isinstance(saved, SavedResult)
    expected = expected_series(run)
    assert sorted(saved.series) == sorted(expected)
    for name, (values, units) in expected.items():
        # the file holds the accessors' float64 values as computed: equal bit for bit
        assert np.array_equal(saved.series[name], values), name
        assert saved.info[name].units == units, name
    assert np.array_equal(saved["joints/hub/coordinates"], run.joint_coordinates("hub"))
    assert saved.info["bodies/arm/position"].components == ("x", "y", "z")
    assert saved.info["joints/ball/coordinates"].components == ("x", "y", "z")
    assert saved.info["bodies/arm/modal_coordinates"].components == tuple(f"eta{k}" for k in range(1, 9))


def test_hdf5_metadata_names_the_system_and_its_coordinate_layout(run, h5):
    meta = fm.load_result(h5).metadata
    assert meta["system"] == "arm rig" and meta["flexmb_version"] == fm.__version__
    assert meta["bodies"] == ["arm", TIP] and meta["joints"] == ["hub", "drive", "ball"]
    assert meta["layout"] == {"arm": {"type": "FlexibleBody", "offset": 0, "ncoord": 15, "n_modes": 8},
                              TIP: {"type": "RigidBody", "offset": 15, "ncoord": 7, "n_modes": 0}}
    with h5py.File(h5) as f:                          # self-describing for any HDF5 reader
        assert f["bodies/arm/position"].attrs["units"].tolist() == ["m", "m", "m"]
        assert f[f"bodies/{TIP_PATH}"].attrs["name"] == TIP
        assert f["raw/q"].shape == run.q.shape


def test_hdf5_read_with_the_system_restores_every_accessor(run, h5):
    s = run.system
    res = fm.load_result(h5, system=s)
    assert isinstance(res, fm.Result) and res.system is s and res.message == run.message
    for k in fm.Result.ARRAYS:
        assert np.array_equal(getattr(res, k), getattr(run, k)), k
    for name, (values, _) in expected_series(res).items():
        assert np.array_equal(values, expected_series(run)[name][0]), name
    assert np.array_equal(res.node_position("arm"), run.node_position("arm"))
    assert np.array_equal(res.position(TIP, (0.1, 0, 0)), run.position(TIP, (0.1, 0, 0)))
    assert np.array_equal(res.constraint_violation(), run.constraint_violation())
    assert np.array_equal(fm.Result.load(h5, system=s).q, run.q)


def test_npz_files_still_load_as_results(run, tmp_path):
    run.save(tmp_path / "arm.npz")
    res = fm.load_result(tmp_path / "arm.npz", system=run.system)
    assert isinstance(res, fm.Result) and np.array_equal(res.lam, run.lam)


@pytest.mark.parametrize("change", ["other body", "more modes"])
def test_a_system_that_did_not_produce_the_file_is_refused(h5, change):
    other = arm_with_tip_mass(n_modes=3) if change == "more modes" else fm.System(name="other")
    if change == "other body":
        other.add(fm.RigidBody(1.0, (1, 1, 1), name="box"))
    message = {"other body": r"bodies \['arm', 'tip/mass'\], but system 'other' has \['box'\]",
               "more modes": r"body 'arm' has 15 coordinates there, but 16 in system 'arm rig'"}[change]
    with pytest.raises(ModelError, match=re.escape(str(h5)) + ".*" + message):
        fm.load_result(h5, system=other)


def test_foreign_and_corrupt_hdf5_files_are_refused_naming_the_file(h5, tmp_path):
    foreign = tmp_path / "foreign.h5"
    with h5py.File(foreign, "w") as f:
        f["t"] = np.arange(3.0)
    garbage = tmp_path / "garbage.hdf5"
    garbage.write_bytes(b"not an HDF5 file at all" * 10)
    truncated = tmp_path / "truncated.h5"
    truncated.write_bytes(h5.read_bytes()[:2000])
    cases = {foreign: "is an HDF5 file but not a flexmb result", garbage: "is not a readable HDF5 file",
             truncated: "is not a readable HDF5 file", tmp_path / "missing.h5": "does not exist"}
    for path, message in cases.items():
        for system in (None, arm_with_tip_mass()):
            with pytest.raises(ModelError, match=re.escape(f"result file {str(path)!r} {message}")):
                fm.load_result(path, system=system)


def test_saving_hdf5_needs_the_system(run, h5, tmp_path):
    bare = fm.Result.load(h5)                                # raw arrays only
    with pytest.raises(ModelError, match=r"cannot write '.*bare\.h5': .* has none attached; load it with system="):
        bare.save(tmp_path / "bare.h5")
    assert not (tmp_path / "bare.h5").exists()


# -- DataFrame and CSV -----------------------------------------------------------------------------
def test_dataframe_flat_columns_carry_the_values_and_units(run, h5):
    chosen = ["bodies/tip%2Fmass/position", "joints/hub/coordinates", "energy/total"]
    for source in (run, fm.load_result(h5)):
        df = source.to_dataframe(chosen)
        assert list(df.columns) == ["tip/mass.position.x", "tip/mass.position.y", "tip/mass.position.z",
                                    "hub.coordinates", "energy.total"]
        assert df.index.name == "time" and np.array_equal(df.index.to_numpy(), run.t)
        assert np.array_equal(df[["tip/mass.position.x", "tip/mass.position.y", "tip/mass.position.z"]].to_numpy(),
                              run.position(TIP))
        assert np.array_equal(df["hub.coordinates"].to_numpy(), run.joint_coordinates("hub"))
        assert np.array_equal(df["energy.total"].to_numpy(), run.energy()["total"])
        assert df.attrs["units"] == {"time": "s", "tip/mass.position.x": "m", "tip/mass.position.y": "m",
                                     "tip/mass.position.z": "m", "hub.coordinates": "rad", "energy.total": "J"}


def test_dataframe_multiindex_has_series_component_and_unit_levels(run):
    df = run.to_dataframe(layout="multiindex")
    assert list(df.columns.names) == ["series", "component", "unit"]
    assert np.array_equal(df["bodies/arm/rotation_matrix"].to_numpy(), run.orientation("arm").reshape(-1, 9))
    assert df["bodies/arm/rotation_matrix"].columns.get_level_values("component")[5] == "R23"
    assert np.array_equal(df[("joints/ball/reaction_torque", "z", "N m")].to_numpy(), run.reaction("ball")[1][:, 2])
    assert df.shape == (run.t.size, sum(np.prod(v.shape[1:], dtype=int) for k, (v, _) in
                                        expected_series(run).items() if k != "time"))


def test_csv_of_chosen_series_has_a_labelled_header_and_exact_values(run, h5, tmp_path):
    chosen = ["joints/ball/reaction_force", "bodies/arm/modal_coordinates"]
    for k, source in enumerate((run, fm.load_result(h5))):
        path = source.to_csv(tmp_path / f"arm{k}.csv", series=chosen)
        lines = path.read_text().splitlines()
        modal = ",".join(f"arm.modal_coordinates.eta{k} [1]" for k in range(1, 9))
        assert lines[0] == "time [s],ball.reaction_force.x [N],ball.reaction_force.y [N],ball.reaction_force.z [N]," + modal
        values = np.loadtxt(path, delimiter=",", skiprows=1)
        assert np.array_equal(values, np.column_stack([run.t, run.reaction("ball")[0], run.modal_coordinates("arm")]))


def test_unknown_series_missing_pandas_and_bad_layout_are_named(run, monkeypatch, tmp_path):
    with pytest.raises(ModelError, match=r"Result.to_csv: no series named 'bodies/tip/mass/position'"):
        run.to_csv(tmp_path / "x.csv", ["bodies/tip/mass/position"])
    with pytest.raises(ModelError, match=r"layout must be 'flat' or 'multiindex', got 'wide'"):
        run.to_dataframe(["time"], layout="wide")
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(MissingDependencyError, match=r"needs the optional package 'pandas'.*flexmb\[all\]"):
        run.to_dataframe()


def test_series_of_a_result_without_system_are_refused(h5):
    with pytest.raises(ModelError, match=r"Result.to_dataframe\(\) evaluates the model, but this result has no system"):
        fm.Result.load(h5).to_dataframe()


def test_guide_section_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    section = GUIDE.read_text().split("## Labelled results")[1].split("\n## ")[0]
    code = re.findall(r"```python\n(.*?)```", section, re.S)
    assert code
    ns: dict = {}
    for block in code:
        exec(compile(block, str(GUIDE), "exec"), ns)
    assert fm.load_result(tmp_path / "pendulum.h5").metadata["system"] == "pendulum"
    assert (tmp_path / "pendulum.csv").read_text().startswith("time [s],pin.coordinates [rad],energy.total [J]\n")
