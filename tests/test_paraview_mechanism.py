"""The whole mechanism in ParaView (issue 14, item 1): Result.export_paraview(path) writes every body,
joint and contact of a run to one transient VTKHDF file, checked with VTK's own reader, and one frame
rendered off-screen shows both the flexible and the rigid bodies."""
from __future__ import annotations

import json

import numpy as np
import pytest

import flexmb as fm
from flexmb.contact.laws import LankaraniNikravesh
from flexmb.errors import ModelError
from flexmb.io.shapes import inertia_box
from verification.examples.paraview_pendulum import LENGTH, TIP_RADIUS, pendulum

vtk = pytest.importorskip("vtk")
from vtkmodules.util.numpy_support import vtk_to_numpy  # noqa: E402  (after the skip)

EVERY = 2


@pytest.fixture(scope="module")
def run():
    """The flexible pendulum with its 2 kg tip mass, 50 steps."""
    return fm.simulate(pendulum(), 0.1, 2e-3)


def _read(path, t: float) -> dict:
    """Block name -> the unstructured grid VTK's vtkHDFReader gives at time ``t`` (a fresh reader per
    time: vtkHDFReader answers UpdateTimeStep after UpdateInformation with the first step)."""
    r = vtk.vtkHDFReader()
    r.SetFileName(str(path))
    r.UpdateTimeStep(t)
    out = r.GetOutput()
    return {out.GetMetaData(i).Get(vtk.vtkCompositeDataSet.NAME()): out.GetPartition(i, 0)
            for i in range(out.GetNumberOfPartitionedDataSets())}


def _times(path) -> np.ndarray:
    r = vtk.vtkHDFReader()
    r.SetFileName(str(path))
    r.UpdateInformation()
    return np.array(r.GetOutputInformation(0).Get(vtk.vtkStreamingDemandDrivenPipeline.TIME_STEPS()))


def _points(grid) -> np.ndarray:
    return vtk_to_numpy(grid.GetPoints().GetData())


def _field(grid, name: str) -> np.ndarray:
    array = grid.GetPointData().GetArray(name)
    assert array is not None, f"no point field {name!r}"
    return vtk_to_numpy(array)


def test_every_body_and_joint_at_every_time(run, tmp_path):
    files = run.export_paraview(tmp_path / "pendulum", every=EVERY)
    path = files["vtkhdf"]
    assert path == tmp_path / "pendulum.vtkhdf" and path.is_file()
    t = run.t[::EVERY]
    np.testing.assert_allclose(_times(path), t, rtol=0, atol=1e-15)
    tip_points = len(run.system.body("tip mass").geometry[0])
    expected = {"beam": 11, "tip mass": tip_points, "block": 8, "pivot (revolute joint)": 1,
                "weld (fixed joint)": 1, "hanger (revolute joint)": 1}
    beam, tip = run.system.body("beam"), run.system.body("tip mass")
    for k in (0, len(t) // 2, len(t) - 1):
        blocks = _read(path, t[k])
        assert {n: g.GetNumberOfPoints() for n, g in blocks.items()} == expected
        i = EVERY * k
        np.testing.assert_allclose(_points(blocks["beam"]), run.node_position(beam)[i], rtol=0, atol=1e-12)
        np.testing.assert_allclose(_points(blocks["tip mass"]).mean(axis=0), run.position(tip)[i], atol=1e-12)
        np.testing.assert_allclose(_points(blocks["weld (fixed joint)"])[0], run.node_position(beam, 10)[i],
                                   atol=1e-9)
        np.testing.assert_allclose(_points(blocks["pivot (revolute joint)"])[0], 0.0, atol=1e-12)
        for name in ("elastic_deflection", "rotation", "section_forces"):
            assert _field(blocks["beam"], name).shape[0] == 11
        np.testing.assert_allclose(_field(blocks["tip mass"], "velocity").mean(axis=0), run.velocity(tip)[i],
                                   atol=1e-9)
    moved = _points(_read(path, t[-1])["tip mass"]).mean(axis=0)
    assert moved[2] < -0.05 * LENGTH            # it swung down: the steps are not all the first one


def test_render_shows_flexible_and_rigid_bodies(run, tmp_path):
    """One frame of the file, rendered off-screen (VTK's EGL/OSMesa window, no display): the beam (red),
    the tip sphere (blue) and the equivalent-inertia block (green) each cover pixels of their colour."""
    pv = pytest.importorskip("pyvista")
    pv.OFF_SCREEN = True
    path = run.export_paraview(tmp_path / "frame")["vtkhdf"]
    blocks = _read(path, run.t[-1])
    colours = {"beam": (255, 0, 0), "tip mass": (0, 0, 255), "block": (0, 255, 0)}
    plotter = pv.Plotter(off_screen=True, window_size=(400, 300))
    plotter.set_background((255, 255, 255))
    for name, colour in colours.items():
        plotter.add_mesh(pv.wrap(blocks[name]), color=colour, lighting=False, line_width=6)
    plotter.camera_position = [(0.5, -3.0, -0.4), (0.5, 0.0, -0.4), (0.0, 0.0, 1.0)]
    image = plotter.screenshot(return_img=True)
    plotter.close()
    counts = {name: int(np.all(image == colour, axis=2).sum()) for name, colour in colours.items()}
    # the sphere's disc: 300 px span 2 d tan(15 deg) at the distance d = 3 m (30 degree view angle);
    # the beam, drawn 6 px wide, covers part of it
    disc = np.pi * (TIP_RADIUS * 300 / (2 * 3.0 * np.tan(np.radians(15)))) ** 2
    assert counts["tip mass"] > 0.5 * disc, (counts, disc)
    assert counts["beam"] > 100 and counts["block"] > 100, counts


def test_mode_set_from_file_exports(tmp_path):
    """A body made from a saved mode set (as ``flexmb modes -o`` writes it) is drawn from the cells the
    file carries; a file without them (older flexmb) loads, and the export names what is missing."""
    x = np.linspace(0.0, 1.0, 6)
    mesh = fm.FEMesh(np.column_stack([x, 0 * x, 0 * x]), {"line": np.column_stack([np.arange(5), np.arange(1, 6)])},
                     node_sets={"root": [0]})
    fe = fm.FEModel(mesh, fm.Material(E=70e9, nu=0.33, rho=2700.0), sections=fm.BeamSection.rectangle(0.02, 0.03))
    fm.craig_bampton(fe, {"root": "root"}, n_modes=3, reference="root").save(tmp_path / "modes.npz")
    modes = fm.ModeSet.load(tmp_path / "modes.npz")
    assert modes.model is None
    np.testing.assert_array_equal(modes.cells["line"], mesh.cells["line"])

    def run_with(m):
        s = fm.System(gravity=(0, 0, -9.81))
        b = s.add(fm.FlexibleBody(m, name="arm"))
        s.add(fm.Revolute(s.ground, b.interface("root"), (0, 0, 0), (0, 1, 0)))
        return fm.simulate(s, 0.01, 2e-3)

    res = run_with(modes)
    blocks = _read(res.export_paraview(tmp_path / "arm")["vtkhdf"], res.t[-1])
    assert blocks["arm"].GetNumberOfPoints() == 6 and blocks["arm"].GetNumberOfCells() == 5
    legacy = res.export_paraview(tmp_path / "arm_series", "arm", fmt="vtu")         # the one-body form
    assert len(list(legacy["vtu"].glob("*.vtu"))) == res.t.size

    with np.load(tmp_path / "modes.npz") as z:
        arrays = {k: z[k] for k in z.files if not k.startswith("cells")}
    header = json.loads(str(arrays["header"]))
    del header["cells"]
    arrays["header"] = np.array(json.dumps(header))
    np.savez(tmp_path / "old.npz", **arrays)
    old = fm.ModeSet.load(tmp_path / "old.npz")
    assert old.cells is None
    with pytest.raises(ModelError, match=r"flexible body 'arm': its mode set holds no mesh cells"):
        run_with(old).export_paraview(tmp_path / "old")


def test_contact_point_and_force_vector(tmp_path):
    """A ball settling on the ground: the contact marker sits under the ball and carries the normal force
    (N, global) that Result.contact_force replays, along the plane normal."""
    s = fm.System(gravity=(0, 0, -9.81))
    ball = s.add(fm.RigidBody(1.0, (0.004,) * 3, position=(0, 0, 0.101), name="ball", geometry={"sphere": 0.1}))
    contact = s.add(fm.SpherePlaneContact(s.ground, ball, point=(0, 0, 0), normal=(0, 0, 1), center=(0, 0, 0.101),
                                          radius=0.1, law=LankaraniNikravesh(1e6, e=0.5), name="floor"))
    res = fm.simulate(s, 0.05, 1e-3)
    force = res.contact_force(contact)
    assert force.max() > 1.0                                   # it touched
    path = res.export_paraview(tmp_path / "ball")["vtkhdf"]
    k = int(np.argmax(force))
    marker = _read(path, res.t[k])["floor (sphere-plane contact)"]
    np.testing.assert_allclose(_field(marker, "contact_force")[0], [0.0, 0.0, force[k]], atol=1e-9)
    np.testing.assert_allclose(_points(marker)[0], res.position(ball)[k] - [0.0, 0.0, 0.1], atol=1e-12)


def test_rigid_geometry_checks_and_inertia_box():
    with pytest.raises(ModelError, match=r"rigid body 'lid': geometry must name one primitive .* got keys \['cone'\]"):
        fm.RigidBody(1.0, (1, 1, 1), name="lid", geometry={"cone": 1.0})
    with pytest.raises(ModelError, match=r"rigid body 'lid': geometry box \(lx, ly, lz\) must be 3 positive"):
        fm.RigidBody(1.0, (1, 1, 1), name="lid", geometry={"box": (1.0, -2.0, 1.0)})
    with pytest.raises(ModelError, match=r"rigid body 'lid': geometry triangle 1 refers to points outside 0..2"):
        fm.RigidBody(1.0, (1, 1, 1), name="lid", geometry=(np.eye(3), [[0, 1, 2], [0, 1, 3]]))
    with pytest.raises(ModelError, match=r"rigid body 'lid': geometry must be a \(points, triangles\) pair"):
        fm.RigidBody(1.0, (1, 1, 1), name="lid", geometry="lid.stl")
    # the equivalent box: a uniform 0.4 x 0.2 x 0.1 m box of 3 kg, turned 30 degrees about z
    m, sides = 3.0, np.array([0.4, 0.2, 0.1])
    J = m / 12.0 * np.diag([sides[1] ** 2 + sides[2] ** 2, sides[0] ** 2 + sides[2] ** 2, sides[0] ** 2 + sides[1] ** 2])
    c, s = np.cos(np.pi / 6), np.sin(np.pi / 6)
    R = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
    pts, tris = inertia_box(m, R @ J @ R.T)
    assert tris.shape == (12, 3)
    np.testing.assert_allclose(np.ptp(pts @ R, axis=0), sides, rtol=1e-12)


def test_export_arguments(run, tmp_path):
    with pytest.raises(ModelError, match=r"every must be a positive whole number of saved times, got 0"):
        run.export_paraview(tmp_path / "x", every=0)
    with pytest.raises(ModelError, match=r"fmt='vtu' writes one flexible body"):
        run.export_paraview(tmp_path / "x", fmt="vtu")
    with pytest.raises(ModelError, match=r"body 'tip mass' is not a flexible body"):
        run.export_paraview(tmp_path / "x", "tip mass", fmt="xdmf")
    with pytest.raises(ModelError, match=r"body must be a body, a body.s name or a list of them, got 7"):
        run.export_paraview(tmp_path / "x", 7)
    with pytest.raises(ModelError, match=r"has no body named 'nothing'"):
        run.export_paraview(tmp_path / "x", ["beam", "nothing"])
    chosen = _read(run.export_paraview(tmp_path / "beam_only", ["beam"])["vtkhdf"], run.t[0])
    assert sorted(chosen) == ["beam", "pivot (revolute joint)", "weld (fixed joint)"]
    assert not list(tmp_path.glob("x*"))


def test_nonlinear_beam_and_awkward_names(tmp_path):
    """A NonlinearBeam carries its axial force per element; block names with '/' or the name of the
    file's own 'Assembly' group still come out as separate, readable blocks."""
    x = np.linspace(0.0, 1.0, 6)
    mesh = fm.FEMesh(np.column_stack([x, 0 * x, 0 * x]), {"line": np.column_stack([np.arange(5), np.arange(1, 6)])},
                     node_sets={"root": [0]})
    fe = fm.FEModel(mesh, fm.Material(E=70e9, nu=0.33, rho=2700.0), sections=fm.BeamSection.rectangle(0.02, 0.03))
    s = fm.System(gravity=(0, 0, -9.81))
    beam = s.add(fm.NonlinearBeam(fe, fe.dofs("root"), name="arm/left"))
    weight = s.add(fm.RigidBody(0.5, (1e-4,) * 3, position=(1.0, 0, 0), name="Assembly"))
    s.add(fm.Revolute(s.ground, beam, (0, 0, 0), (0, 1, 0), name="pin"))
    s.add(fm.Fixed(beam.node(5), weight, (1.0, 0, 0), name="tip"))
    res = fm.simulate(s, 0.01, 2e-3)
    blocks = _read(res.export_paraview(tmp_path / "nl")["vtkhdf"], res.t[-1])
    assert sorted(blocks) == ["Assembly (2)", "arm%2Fleft", "pin (revolute joint)", "tip (fixed joint)"]
    axial = vtk_to_numpy(blocks["arm%2Fleft"].GetCellData().GetArray("axial_force"))
    np.testing.assert_allclose(axial, beam.axial_force(res.modal_coordinates(beam)[-1]), rtol=1e-12)
    assert blocks["Assembly (2)"].GetNumberOfPoints() == 8                 # the box of equivalent inertia


def test_readme_command_writes_the_file(tmp_path, monkeypatch):
    """``python -m verification.examples.paraview_pendulum out/pendulum`` (the README's command)."""
    from verification.examples import paraview_pendulum
    monkeypatch.setattr(paraview_pendulum, "run", lambda: fm.simulate(pendulum(), 0.02, 2e-3))
    paraview_pendulum.main([str(tmp_path / "out" / "pendulum")])
    assert len(_read(tmp_path / "out" / "pendulum.vtkhdf", 0.02)) == 6


def test_solid_body_stress_in_vtk_tensor_order(tmp_path):
    """A hexahedral bar swinging on a pin: its block carries the nodal Voigt stress of the mode set,
    stored in VTK's symmetric-tensor order (xx, yy, zz, xy, yz, xz)."""
    i, j, k = np.meshgrid(np.arange(4), np.arange(2), np.arange(2), indexing="ij")
    pts = np.zeros((16, 3))
    ids = (i + 4 * j + 8 * k).ravel()
    pts[ids] = np.column_stack([0.1 * i.ravel(), 0.02 * j.ravel(), 0.02 * k.ravel()])
    e = np.arange(3)
    mesh = fm.FEMesh(pts, {"hexahedron": np.column_stack([e, e + 1, e + 5, e + 4, e + 8, e + 9, e + 13, e + 12])},
                     node_sets={"root": [0, 4, 8, 12]})
    fe = fm.FEModel(mesh, fm.Material(E=70e9, nu=0.33, rho=2700.0))
    s = fm.System(gravity=(0, 0, -9.81))
    bar = s.add(fm.FlexibleBody(fm.craig_bampton(fe, {"root": "root"}, n_modes=2, reference="root"), name="bar"))
    s.add(fm.Revolute(s.ground, bar.interface("root"), (0, 0.01, 0.01), (0, 1, 0)))
    res = fm.simulate(s, 0.01, 2e-3)
    grid = _read(res.export_paraview(tmp_path / "bar")["vtkhdf"], res.t[-1])["bar"]
    assert grid.GetNumberOfCells() == 3 and grid.GetCellType(0) == vtk.VTK_HEXAHEDRON
    stress = res.nodal_stress(bar)[-1]
    assert np.abs(stress).max() > 0.0
    np.testing.assert_allclose(_field(grid, "stress"), stress[:, [0, 1, 2, 5, 3, 4]], rtol=1e-12)
