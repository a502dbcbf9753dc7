"""Export of deformed meshes over time for ParaView (flexmb/io/paraview.py)."""
from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path
from xml.etree import ElementTree as ET

import meshio
import numpy as np
import pytest

from flexmb.errors import ModelError, NonFiniteError
from flexmb.fem.mesh import FEMesh
from flexmb.io.paraview import VTK_FROM_VOIGT, XDMF_FROM_VOIGT, TimeSeriesWriter, write_time_series

GUIDE = Path(__file__).resolve().parents[1] / "docs" / "guide-output.md"
XDMF_DATA = ["XML", "HDF"]


# ------------------------------------------------------------------------------------------
# Small meshes, each given to the exporter in a different accepted form
# ------------------------------------------------------------------------------------------
def _line():
    pts = np.column_stack([np.linspace(0, 1, 5), np.zeros(5), np.zeros(5)])
    return pts, [("line", np.column_stack([np.arange(4), np.arange(1, 5)]))]


def _quad():
    x, y = np.meshgrid(np.linspace(0, 1, 3), np.linspace(0, 1, 3), indexing="xy")
    pts = np.column_stack([x.ravel(), y.ravel(), np.zeros(9)])
    a = np.arange(4)
    corner = (a % 2) + 3 * (a // 2)                    # lower-left node of each quad: 0, 1, 3, 4
    return pts, {"quad": np.column_stack([corner, corner + 1, corner + 4, corner + 3])}


def _tet():
    pts = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 1]], float)
    return pts, meshio.Mesh(pts, [("tetra", np.array([[0, 1, 2, 3], [1, 2, 3, 4]]))])


def _hex():
    i, j, k = np.meshgrid(np.arange(3), np.arange(2), np.arange(2), indexing="ij")
    pts = np.zeros((12, 3))
    ids = (i + 3 * j + 6 * k).ravel()
    pts[ids] = np.column_stack([i.ravel(), j.ravel(), k.ravel()]).astype(float)
    e = np.arange(2)
    conn = np.column_stack([e, e + 1, e + 4, e + 3, e + 6, e + 7, e + 10, e + 9])
    return pts, FEMesh(pts, {"hexahedron": conn})


MESHES = {"line": _line, "quad": _quad, "tet": _tet, "hex": _hex}


def _series(pts, nt=4, seed=0):
    """times, positions (rigid translation plus a bending-like field), point and cell fields."""
    t = np.linspace(0.0, 0.3, nt)
    shape = np.column_stack([np.zeros(len(pts)), np.zeros(len(pts)), pts[:, 0] ** 2])
    pos = pts[None] + np.array([1.0, 0.0, 0.0]) * t[:, None, None] + 0.1 * np.sin(10 * t)[:, None, None] * shape
    rng = np.random.default_rng(seed)
    stress = rng.normal(size=(nt, len(pts), 6))
    return t, pos, {"stress": stress, "von_mises": np.abs(stress).sum(axis=2)}


def _pvd(path: Path) -> tuple[np.ndarray, list[str]]:
    root = ET.parse(path).getroot()
    assert root.tag == "VTKFile" and root.get("type") == "Collection"
    sets = root.find("Collection").findall("DataSet")
    return np.array([float(d.get("timestep")) for d in sets]), [d.get("file") for d in sets]


def _read_xdmf(path: Path):
    with meshio.xdmf.TimeSeriesReader(path) as r:
        points, cells = r.read_points_cells()
        steps = [r.read_data(k) for k in range(r.num_steps)]
    return points, cells, steps


# ------------------------------------------------------------------------------------------
# Round trips
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("xdmf_data", XDMF_DATA)
@pytest.mark.parametrize("kind", list(MESHES))
def test_round_trip(kind, xdmf_data, tmp_path):
    pts, cells = MESHES[kind]()
    t, pos, pd = _series(pts)
    n_cells = 4 if kind in ("line", "quad") else 2
    cd = {"energy": np.arange(len(t) * n_cells, dtype=float).reshape(len(t), n_cells)}
    files = write_time_series(tmp_path / "run", None if kind in ("tet", "hex") else pts, cells, t, pos,
                              point_data=pd, cell_data=cd, xdmf_data=xdmf_data, voigt=["stress"])
    assert files["pvd"] == tmp_path / "run.pvd" and files["xdmf"] == tmp_path / "run.xdmf"
    assert ("h5" in files) == (xdmf_data == "HDF")
    if xdmf_data == "HDF":
        assert files["h5"] == tmp_path / "run.h5" and files["h5"].is_file()

    # pvd: times and relative file names
    times, names = _pvd(files["pvd"])
    np.testing.assert_array_equal(times, t)
    assert names == [f"run/run_{k:05d}.vtu" for k in range(len(t))]
    assert all((tmp_path / n).is_file() for n in names)

    # one vtu step: the deformed mesh and its fields
    k = 2
    m = meshio.read(tmp_path / names[k])
    np.testing.assert_allclose(m.points, pos[k], rtol=0, atol=1e-15)
    np.testing.assert_allclose(m.point_data["displacement"], pos[k] - pts, rtol=0, atol=1e-15)
    np.testing.assert_array_equal(m.point_data["stress"], pd["stress"][k][:, VTK_FROM_VOIGT])
    np.testing.assert_array_equal(m.point_data["von_mises"], pd["von_mises"][k])
    np.testing.assert_array_equal(m.cell_data["energy"][0], cd["energy"][k])
    assert m.cells[0].type == {"line": "line", "quad": "quad", "tet": "tetra", "hex": "hexahedron"}[kind]

    # xdmf: reference mesh once, displacement and fields per step
    points, xcells, steps = _read_xdmf(files["xdmf"])
    np.testing.assert_array_equal(points, pts)
    np.testing.assert_array_equal(xcells[0].data, m.cells[0].data)
    np.testing.assert_array_equal([s[0] for s in steps], t)
    for j, (_, point_data, cell_data) in enumerate(steps):
        np.testing.assert_allclose(point_data["displacement"], pos[j] - pts, rtol=0, atol=1e-15)
        np.testing.assert_array_equal(point_data["stress"], pd["stress"][j][:, XDMF_FROM_VOIGT])
        np.testing.assert_array_equal(point_data["von_mises"], pd["von_mises"][j])
        np.testing.assert_array_equal(cell_data["energy"][0], cd["energy"][j])


@pytest.mark.parametrize("xdmf_data", XDMF_DATA)
def test_mixed_mesh_with_lines(xdmf_data, tmp_path):
    """Shell + beam blocks in one mesh (meshio 5.3's own XDMF writer fails on this)."""
    pts = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0], [2, 0, 0], [3, 0, 0]], float)
    cells = [("quad", np.array([[0, 1, 2, 3]])), ("line", np.array([[1, 4], [4, 5]]))]
    t, pos, _ = _series(pts, nt=2)
    cd = {"id": [np.full((2, 1), 7.0), np.full((2, 2), 9.0)]}
    files = write_time_series(tmp_path / "mix.xdmf", pts, cells, t, pos, cell_data=cd, xdmf_data=xdmf_data)
    m = meshio.read(files["vtu"] / "mix_00001.vtu")
    assert [b.type for b in m.cells] == ["quad", "line"]
    np.testing.assert_array_equal(m.cell_data["id"][1], [9.0, 9.0])
    points, xcells, steps = _read_xdmf(files["xdmf"])
    assert [(b.type, b.data.tolist()) for b in xcells] == [(c, d.tolist()) for c, d in cells]
    np.testing.assert_array_equal(steps[1][2]["id"][0], [7.0])
    np.testing.assert_allclose(steps[1][1]["displacement"], pos[1] - pts, atol=1e-15)


def test_single_format_and_rewrite(tmp_path):
    pts, cells = _line()
    t, pos, _ = _series(pts, nt=5)
    files = write_time_series(tmp_path / "a", pts, cells, t, pos, fmt="vtu")
    assert set(files) == {"pvd", "vtu"} and not (tmp_path / "a.xdmf").exists()
    assert len(list(files["vtu"].glob("*.vtu"))) == 5
    # a shorter series under the same name leaves no stale steps behind
    files = write_time_series(tmp_path / "a.pvd", pts, cells, t[:2], pos[:2], fmt=["vtu"])
    assert sorted(p.name for p in files["vtu"].iterdir()) == ["a_00000.vtu", "a_00001.vtu"]
    assert _pvd(files["pvd"])[1] == ["a/a_00000.vtu", "a/a_00001.vtu"]
    files = write_time_series(tmp_path / "b", pts, cells, t, pos, fmt="xdmf", xdmf_data="XML")
    assert set(files) == {"xdmf"} and not (tmp_path / "b.pvd").exists()


@pytest.mark.parametrize("xdmf_data", XDMF_DATA)
def test_voigt_tensors_reach_paraview_in_its_order(xdmf_data, tmp_path):
    """A Voigt stress with only xy = 6 (and yz = 4, xz = 5): each file holds it where its
    format's symmetric tensor keeps xy; a 6-component non-tensor field stays as given in VTU."""
    pts, cells = _line()
    voigt = np.tile([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], (1, len(pts), 1))        # xx yy zz yz xz xy
    forces = np.tile(np.arange(6.0), (1, len(pts), 1))
    files = write_time_series(tmp_path / "v", pts, cells, [0.0], pts[None], point_data={"stress": voigt},
                              voigt=["stress"], xdmf_data=xdmf_data)
    vtk = meshio.read(files["vtu"] / "v_00000.vtu").point_data["stress"][0]
    np.testing.assert_array_equal(vtk, [1, 2, 3, 6, 4, 5])                   # xx yy zz xy yz xz
    xdmf = _read_xdmf(files["xdmf"])[2][0][1]["stress"][0]
    np.testing.assert_array_equal(xdmf, [1, 6, 5, 2, 4, 3])                  # xx xy xz yy yz zz
    files = write_time_series(tmp_path / "f", pts, cells, [0.0], pts[None], point_data={"forces": forces},
                              fmt="vtu")
    np.testing.assert_array_equal(meshio.read(files["vtu"] / "f_00000.vtu").point_data["forces"], forces[0])


# ------------------------------------------------------------------------------------------
# Streaming
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("xdmf_data", XDMF_DATA)
def test_streaming_index_valid_after_every_step(xdmf_data, tmp_path):
    pts, cells = _quad()
    t, pos, pd = _series(pts)
    with TimeSeriesWriter(tmp_path / "s", pts, cells, xdmf_data=xdmf_data, voigt="stress") as w:
        assert _pvd(w.files["pvd"])[0].size == 0                    # valid, empty, from the start
        for k in range(len(t)):
            assert w.write(t[k], pos[k], point_data={n: a[k] for n, a in pd.items()},
                           cell_data={"e": [np.full(4, float(k))]}) == k
            times, names = _pvd(w.files["pvd"])
            np.testing.assert_array_equal(times, t[:k + 1])
            if xdmf_data == "XML":     # an open HDF5 file is not read concurrently
                np.testing.assert_array_equal([s[0] for s in _read_xdmf(w.files["xdmf"])[2]], t[:k + 1])
    _, _, steps = _read_xdmf(w.files["xdmf"])
    np.testing.assert_array_equal(steps[3][1]["von_mises"], pd["von_mises"][3])
    np.testing.assert_array_equal(steps[3][2]["e"][0], np.full(4, 3.0))
    with pytest.raises(ModelError, match="closed"):
        w.write(1.0, pos[0])


@pytest.mark.parametrize("xdmf_data", XDMF_DATA)
def test_interrupted_run_keeps_written_steps(xdmf_data, tmp_path):
    """Three steps written, then the process dies without closing anything."""
    script = textwrap.dedent(f"""
        import os
        import numpy as np
        from flexmb.io.paraview import TimeSeriesWriter
        pts = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0.]])
        w = TimeSeriesWriter("out/crash", pts, [("quad", np.array([[0, 1, 2, 3]]))],
                             xdmf_data={xdmf_data!r})
        for k in range(3):
            w.write(0.1 * k, pts + k, point_data={{"s": np.full(4, float(k))}})
        os._exit(3)     # a crash: no close, no finalizers
    """)
    run = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True)
    assert run.returncode == 3, run.stderr
    out = tmp_path / "out"
    times, names = _pvd(out / "crash.pvd")
    np.testing.assert_allclose(times, [0.0, 0.1, 0.2])
    assert names == [f"crash/crash_{k:05d}.vtu" for k in range(3)]
    for k, name in enumerate(names):
        m = meshio.read(out / name)
        np.testing.assert_array_equal(m.point_data["s"], np.full(4, float(k)))
    assert not list(out.rglob("*.tmp"))
    _, _, steps = _read_xdmf(out / "crash.xdmf")
    np.testing.assert_allclose([s[0] for s in steps], [0.0, 0.1, 0.2])
    np.testing.assert_array_equal(steps[2][1]["displacement"], np.full((4, 3), 2.0))


# ------------------------------------------------------------------------------------------
# Bad input: refused before any file is written, with the array and its shape named
# ------------------------------------------------------------------------------------------
def _bad(tmp_path, match, error=ModelError, **change):
    pts, cells = _quad()
    t, pos, pd = _series(pts, nt=3)
    args = dict(points=pts, cells=cells, times=t, positions=pos, point_data=pd, cell_data=None, voigt=["stress"])
    args.update(change)
    with pytest.raises(error, match=match):
        write_time_series(tmp_path / "bad", **args)
    assert not list(tmp_path.iterdir())


def test_bad_shapes(tmp_path):
    pos = _series(_quad()[0], nt=3)[1]
    _bad(tmp_path, r"positions must have shape \(3, 9, 3\).*got \(3, 8, 3\)", positions=pos[:, :8])
    _bad(tmp_path, r"positions must have shape \(3, 9, 3\).*got \(2, 9, 3\)", positions=pos[:2])
    _bad(tmp_path, r"positions must have shape \(3, 9, 3\).*got \(3, 9, 2\)", positions=pos[..., :2])
    _bad(tmp_path, r"point_data\['p'\] must have shape \(3, 9\) or \(3, 9, k\).*got \(3, 4\)",
         point_data={"p": np.zeros((3, 4))})
    _bad(tmp_path, r"cell_data\['e'\] must have shape \(3, 4\).*got \(3, 5\)", cell_data={"e": np.zeros((3, 5))})
    _bad(tmp_path, r"cell_data\['e'\] has 2 blocks, the mesh has 1", cell_data={"e": [np.zeros((3, 4))] * 2})
    _bad(tmp_path, r"points must be an \(N, 3\) array, got shape \(9, 2\)", points=_quad()[0][:, :2])
    _bad(tmp_path, r"times must be a non-empty 1-D array, got shape \(3, 1\)", times=np.zeros((3, 1)))
    _bad(tmp_path, r"times must increase strictly: t\[2\] = 0.1 follows t\[1\] = 0.15",
         times=np.array([0.0, 0.15, 0.1]))
    _bad(tmp_path, r"'displacement' is written by the exporter", point_data={"displacement": pos})
    _bad(tmp_path, r"4 components; XDMF", point_data={"q": np.zeros((3, 9, 4))})
    _bad(tmp_path, r"point_data\['f'\] has 6 components: XDMF stores them as a symmetric tensor",
         point_data={"f": np.zeros((3, 9, 6))})
    _bad(tmp_path, r"point_data\['stress'\] is named in voigt= but has 3 components",
         point_data={"stress": np.zeros((3, 9, 3))})
    _bad(tmp_path, r"cell block 0 \(quad\): 1 cells refer to nodes outside 0..8",
         cells=[("quad", np.array([[0, 1, 4, 3], [1, 2, 5, 9]]))])
    _bad(tmp_path, r"cell block 0 \(quad\): connectivity .* \(n, 4\).*shape \(1, 3\)",
         cells=[("quad", np.array([[0, 1, 4]]))])
    _bad(tmp_path, r"unknown meshio cell type 'quadrangle'", cells=[("quadrangle", np.array([[0, 1, 4, 3]]))])
    _bad(tmp_path, r"fmt must name one or more of", fmt="vtk")
    _bad(tmp_path, r"XDMF export cannot write cell type\(s\) \['line4'\]; use fmt='vtu'",
         cells=[("line4", np.array([[0, 1, 2, 3]]))], point_data=None)
    _bad(tmp_path, r"xdmf_data must be 'auto', 'HDF' or 'XML'", xdmf_data="hdf5")


def test_non_finite_values(tmp_path):
    pts = _quad()[0]
    t, pos, pd = _series(pts, nt=3)
    pos[2, 5, 1] = np.nan
    _bad(tmp_path, r"positions is not finite at time step 2 \(t = 0.3\): 1 nodes, first node 5",
         NonFiniteError, positions=pos)
    vm = pd["von_mises"].copy()
    vm[1, [3, 7]] = np.inf
    _bad(tmp_path, r"point_data\['von_mises'\] is not finite at time step 1 \(t = 0.15\): 2 nodes, first node 3",
         NonFiniteError, point_data={"von_mises": vm})
    e = np.zeros((3, 4))
    e[0, 2] = np.nan
    _bad(tmp_path, r"cell_data\['e'\] is not finite at time step 0 .* first cell 2", NonFiniteError,
         cell_data={"e": [e]})
    _bad(tmp_path, r"times: time step 1", NonFiniteError, times=np.array([0.0, np.nan, 1.0]))


def test_streaming_bad_input(tmp_path):
    pts, cells = _line()
    with TimeSeriesWriter(tmp_path / "s", pts, cells, fmt="vtu") as w:
        w.write(0.0, pts)
        with pytest.raises(ModelError, match=r"positions must have shape \(5, 3\).*got \(4, 3\)"):
            w.write(0.1, pts[:4])
        with pytest.raises(ModelError, match=r"t = 0, does not follow the last written time 0"):
            w.write(0.0, pts)
        bad = pts.copy()
        bad[3, 0] = np.inf
        with pytest.raises(NonFiniteError, match=r"positions is not finite at time step 1 \(t = 0.2\).*node 3"):
            w.write(0.2, bad)
        with pytest.raises(ModelError, match=r"point_data\['s'\] must have shape \(5\) or \(5, k\).*got \(5, 2, 2\)"):
            w.write(0.2, pts, point_data={"s": np.zeros((5, 2, 2))})
        with pytest.raises(NonFiniteError, match="time of step 1"):
            w.write(float("nan"), pts)
        with pytest.raises(ModelError, match="time of step 1 must be a number"):
            w.write([0.3, 0.4], pts)
        w.write(0.2, pts + 1)
    assert _pvd(w.files["pvd"])[1] == ["s/s_00000.vtu", "s/s_00001.vtu"]     # failed writes left no trace


# ------------------------------------------------------------------------------------------
# The guide's example runs as written
# ------------------------------------------------------------------------------------------
def test_guide_example_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code = re.findall(r"```python\n(.*?)```", GUIDE.read_text(), re.S)
    assert code
    ns: dict = {}
    for block in code:
        exec(compile(block, str(GUIDE), "exec"), ns)
    assert len(_pvd(tmp_path / "out" / "plate.pvd")[1]) == 51
    assert len(_pvd(tmp_path / "out" / "plate_run.pvd")[1]) == 51
    assert len(_read_xdmf(tmp_path / "out" / "plate.xdmf")[2]) == 51
    assert (tmp_path / "out" / "pendulum.vtkhdf").is_file() and (tmp_path / "out" / "beam_only.vtkhdf").is_file()
