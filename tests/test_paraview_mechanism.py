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
from flexmb.bodies.shapes import inertia_box
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
    return {out.GetMetaData(i).Get(vtk.vtkCompositeDataSet.NAME()): out.GetBlock(i)       # a multiblock
            for i in range(out.GetNumberOfBlocks())}


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


# -- mesh, node and sphere-cloud contacts: one vertex per contactor ------------------------------------------
BALL_R = 0.01
FLOOR_LAW = LankaraniNikravesh(1e9, 0.7)


def _ball_on_floor(mesh: bool):
    """A 33 g ball of radius 1 cm falling on a fixed floor y = 0: the floor a two-triangle mesh
    (SphereMeshContact) or a plane (SpherePlaneContact), as in tests/contact/test_mesh_contact.py."""
    from flexmb.contact.mesh import SphereMeshContact, TriangleMesh
    s = fm.System(gravity=(0, -9.81, 0))
    floor = s.add(fm.RigidBody(1.0, (1, 1, 1), position=(0.0, -0.5, 0.0), name="floor"))
    s.add(fm.Fixed(s.ground, floor, (0, -0.5, 0)))
    c = (0.1, BALL_R + 1e-4, 0.2)
    ball = s.add(fm.RigidBody(0.033, (1e-6,) * 3, position=c, velocity=(0.3, -1.0, 0.1), name="ball"))
    if mesh:
        # in the floor's axes (its centre 0.5 m below y = 0)
        square = TriangleMesh([[-1, 0.5, -1], [1, 0.5, -1], [1, 0.5, 1], [-1, 0.5, 1]], [[0, 2, 1], [0, 3, 2]])
        s.add(SphereMeshContact(floor, ball, mesh=square, center=c, radius=BALL_R, law=FLOOR_LAW, name="floor mesh"))
    else:
        s.add(fm.SpherePlaneContact(floor, ball, point=(0, 0, 0), normal=(0, 1, 0), center=c, radius=BALL_R,
                                    law=FLOOR_LAW, name="floor plane"))
    return s, ball


def test_sphere_mesh_contact_point_and_force_equal_sphere_plane(tmp_path):
    """A ball bouncing on a two-triangle floor: at every saved time the mesh contact's one vertex sits at
    the touch point (the centre when apart) and carries the force of the same case run with
    SpherePlaneContact (the two give the same penetration to 1e-15 m)."""
    (plane, ball_p), (mesh, ball_m) = _ball_on_floor(False), _ball_on_floor(True)
    r_plane = fm.simulate(plane, 1.5e-3, 2e-5, h_contact=2e-6)
    r_mesh = fm.simulate(mesh, 1.5e-3, 2e-5, h_contact=2e-6)
    normal_force = r_plane.contact_force(plane.forces[0])
    touching = normal_force > 0.0
    assert 0 < touching.sum() < touching.size and normal_force.max() > 100.0   # it touched and left
    centre = r_mesh.position(ball_m)
    touch_point = np.where(touching[:, None], centre - [0.0, BALL_R, 0.0], centre)
    path_mesh = r_mesh.export_paraview(tmp_path / "mesh")["vtkhdf"]
    path_plane = r_plane.export_paraview(tmp_path / "plane")["vtkhdf"]
    # the forces of the two runs differ by their trajectories' round-off (1e-10 m in position)
    scale = 1e-10 * normal_force.max()
    for k, t in enumerate(r_mesh.t):
        vertex = _read(path_mesh, t)["floor mesh (sphere-mesh contact)"]
        marker = _read(path_plane, t)["floor plane (sphere-plane contact)"]
        assert vertex.GetNumberOfPoints() == 1 and vertex.GetNumberOfCells() == 1
        np.testing.assert_allclose(_points(vertex)[0], touch_point[k], rtol=0, atol=1e-12)
        np.testing.assert_allclose(_field(vertex, "contact_force")[0], _field(marker, "contact_force")[0],
                                   rtol=0, atol=scale)
        np.testing.assert_allclose(_field(vertex, "contact_force")[0], [0.0, normal_force[k], 0.0], rtol=0,
                                   atol=scale)
    with pytest.raises(ModelError, match=r"'floor mesh' is not a sphere or clearance contact .*Result\.contact_forces"):
        r_mesh.contact_force(mesh.forces[0])
    with pytest.raises(ModelError, match=r"'floor plane' is not a mesh, node or sphere-cloud contact"):
        r_plane.contact_forces(plane.forces[0])


def _cantilever(contact):
    """A 1 m aluminium beam (6 nodes along x) swinging down about y from a pin at its root, with one
    node contact ``contact(s, ground, beam)``."""
    x = np.linspace(0.0, 1.0, 6)
    mesh = fm.FEMesh(np.column_stack([x, 0 * x, 0 * x]), {"line": np.column_stack([np.arange(5), np.arange(1, 6)])},
                     node_sets={"root": [0], "outer": [3, 4, 5]})
    fe = fm.FEModel(mesh, fm.Material(E=70e9, nu=0.33, rho=2700.0), sections=fm.BeamSection.rectangle(0.02, 0.03))
    s = fm.System(gravity=(0, 0, -9.81))
    beam = s.add(fm.FlexibleBody(fm.craig_bampton(fe, {"root": "root"}, n_modes=3, reference="root"), name="arm"))
    s.add(fm.Revolute(s.ground, beam.interface("root"), (0, 0, 0), (0, 1, 0), name="pin"))
    element = s.add(contact(s.ground, beam))
    return fm.simulate(s, 0.12, 2e-3, h_contact=2e-4), beam, element


@pytest.mark.parametrize("kind", ["node-plane", "node-mesh"])
def test_node_contact_block_one_vertex_per_node(kind, tmp_path):
    """Nodes 3-5 of a swinging beam against a floor 5 cm below the pin (a plane, or a two-triangle mesh
    under them): one vertex per node at the node's position at every time, zero force while apart, an
    upward force on the nodes that touch."""
    from flexmb.contact.mesh import NodeMeshContact, NodePlaneContact, TriangleMesh
    law = LankaraniNikravesh(1e7, e=0.5)
    if kind == "node-plane":
        def contact(ground, beam):
            return NodePlaneContact(ground, beam, nodes="outer", point=(0, 0, -0.05), normal=(0, 0, 1), law=law,
                                    name="stop")
    else:
        floor = TriangleMesh([[0.3, -1, -0.05], [1.5, -1, -0.05], [1.5, 1, -0.05], [0.3, 1, -0.05]],
                             [[0, 1, 2], [0, 2, 3]])

        def contact(ground, beam):
            return NodeMeshContact(ground, beam, nodes="outer", mesh=floor, law=law, name="stop")

    res, beam, element = _cantilever(contact)
    path = res.export_paraview(tmp_path / "stop")["vtkhdf"]
    nodes = res.node_position(beam, [3, 4, 5])
    _, forces = res.contact_forces(element)
    apart = nodes[..., 2] > -0.05
    assert apart[0].all() and not apart.all()                  # apart at the start, touching later
    np.testing.assert_array_equal(forces[apart], 0.0)
    assert np.all(forces[~apart][:, 2] > 0.0)
    np.testing.assert_allclose(forces[..., :2], 0.0, atol=1e-9 * np.abs(forces).max())   # along the normal
    for k in (0, len(res.t) // 2, len(res.t) - 1):
        block = _read(path, res.t[k])[f"stop ({kind} contact)"]
        assert block.GetNumberOfPoints() == 3 and block.GetNumberOfCells() == 3
        # the contact is evaluated with the integrator's Euler parameters, node_position with them
        # normalized (|p| - 1 ~ 1e-11 after 60 steps)
        np.testing.assert_allclose(_points(block), nodes[k], rtol=0, atol=1e-10)
        np.testing.assert_allclose(_field(block, "contact_force"), forces[k], rtol=0, atol=0)


def test_sphere_cloud_forces_sum_over_pairs_and_planes(tmp_path):
    """Two spheres of a cloud pressed into each other and into the floor, a third falling from above:
    each sphere's vertex carries the sum of its sphere-sphere and sphere-plane forces, which is the
    sphere's body's contact force ``m (a - g)`` of the run (the third: zero, at its centre)."""
    from flexmb.contact.mesh import SphereCloudContact
    s = fm.System(gravity=(0, 0, -9.81))
    centres = [(0.0, 0.0, 0.0995), (0.1995, 0.0, 0.0995), (0.1, 0.0, 0.3)]
    balls = [s.add(fm.RigidBody(1.0, (0.004,) * 3, position=c, name=f"ball {k}")) for k, c in enumerate(centres)]
    cloud = s.add(SphereCloudContact(balls, centres, 0.1, LankaraniNikravesh(1e6, e=0.5),
                                     planes=[(s.ground, (0, 0, 0), (0, 0, 1))], name="pile"))
    res = fm.simulate(s, 0.02, 1e-3, newton_tol=1e-12)
    points, forces = res.contact_forces(cloud)
    assert points.shape == forces.shape == (res.t.size, 3, 3)
    assert forces[0, 0, 0] < -10.0 and forces[0, 0, 2] > 10.0          # pushed back by ball 1 and up by the floor
    for k, ball in enumerate(balls):
        o = ball.offset
        # the run's accelerations satisfy the equations of motion to the Newton tolerance (1e-12 relative)
        np.testing.assert_allclose(forces[:, k], res.vd[:, o:o + 3] - [0.0, 0.0, -9.81], rtol=0, atol=1e-6)
    np.testing.assert_array_equal(forces[:, 2], 0.0)
    size = np.linalg.norm(forces, axis=2, keepdims=True)
    direction = np.divide(forces, size, out=np.zeros_like(forces), where=size > 0.0)
    centre = np.stack([res.position(b) for b in balls], axis=1)
    block = _read(res.export_paraview(tmp_path / "pile")["vtkhdf"], res.t[1])["pile (sphere cloud contact)"]
    assert block.GetNumberOfPoints() == 3
    np.testing.assert_allclose(_points(block), centre[1] - 0.1 * direction[1], rtol=0, atol=1e-10)
    np.testing.assert_allclose(_field(block, "contact_force"), forces[1], rtol=0, atol=0)
