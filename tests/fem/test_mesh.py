"""Tests of the mesh bridge (flexmb/fem/mesh.py, flexmb/fem/selection.py) and the sample meshes."""
from __future__ import annotations

import importlib.util
import itertools
import sys
import warnings
from pathlib import Path

import meshio
import numpy as np
import pytest

from flexmb.errors import MeshError
from flexmb.fem.mesh import SUPPORTED_CELLS, FEMesh, MeshWarning, from_meshio, read_mesh
from flexmb.fem.reference_cells import REFERENCE_CELLS, signed_measure

MESHES = Path(__file__).resolve().parents[2] / "meshes"

# ------------------------------------------------------------------------------------------
# Sample meshes: counts follow from the generators (meshes/make_*.py, meshes/README.md)
# ------------------------------------------------------------------------------------------
SAMPLES = {
    "beam_line.msh": (21, {"line": 20}, {"beam": 20}, {"root": 1, "tip": 1}),
    "beam_line_v2.msh": (21, {"line": 20}, {"beam": 20}, {"root": 1, "tip": 1}),
    "beam_line.inp": (21, {"line": 20}, {"beam": 20}, {"root": 1, "tip": 1}),
    "beam_solid.msh": (459, {"hexahedron": 200}, {"beam": 200}, {"root": 9, "tip": 9}),
    "beam_solid.inp": (459, {"hexahedron": 200}, {"beam": 200}, {"root": 9, "tip": 9}),
    "beam_solid_hex20.msh": (1521, {"hexahedron20": 200}, {"beam": 200}, {"root": 21, "tip": 21}),
    "plate_quad.msh": (289, {"quad": 256}, {"plate": 256},
                       {"edge_x0": 17, "edge_x1": 17, "edge_y0": 17, "edge_y1": 17, "edges": 64}),
    "plate_quad.inp": (289, {"quad": 256}, {"plate": 256},
                       {"edge_x0": 17, "edge_x1": 17, "edge_y0": 17, "edge_y1": 17, "edges": 64}),
    "plate_tri.msh": (289, {"triangle": 512}, {"plate": 512},
                      {"edge_x0": 17, "edge_x1": 17, "edge_y0": 17, "edge_y1": 17, "edges": 64}),
    "bracket_tet10.msh": (21413, {"tetra10": 12960}, {"bracket": 12960},
                          {"base": 2070, "flange_top": 259}),
    "bracket_tet10.inp": (21413, {"tetra10": 12960}, {"bracket": 12960},
                          {"base": 2070, "flange_top": 259}),
}

# node set -> (coordinate axis, value) every node of the set lies on [m]
SET_PLANES = {"root": (0, 0.0), "tip": (0, 1.0), "edge_x0": (0, 0.0), "edge_x1": (0, 1.0),
              "edge_y0": (1, 0.0), "edge_y1": (1, 1.0), "base": (2, 0.0), "flange_top": (2, 0.06)}


@pytest.fixture(scope="module")
def samples() -> dict[str, FEMesh]:
    return {name: read_mesh(MESHES / name) for name in SAMPLES}


@pytest.mark.parametrize("name", SAMPLES)
def test_sample_counts_and_sets(samples, name):
    mesh = samples[name]
    n_nodes, cells, cell_sets, node_sets = SAMPLES[name]
    assert mesh.n_nodes == n_nodes
    assert {t: len(c) for t, c in mesh.cells.items()} == cells
    for set_name, count in cell_sets.items():
        assert sum(len(i) for i in mesh.cell_set(set_name).values()) == count
        assert mesh.node_set(set_name).size == n_nodes  # derived node set: all nodes of its cells
    for set_name, count in node_sets.items():
        ids = mesh.node_set(set_name)
        assert ids.size == count and ids.dtype == np.int64 and np.all(np.diff(ids) > 0)
        if set_name in SET_PLANES:
            axis, value = SET_PLANES[set_name]
            np.testing.assert_allclose(mesh.points[ids, axis], value, atol=1e-12)


def test_plate_edges_union(samples):
    for name in ("plate_quad.msh", "plate_quad.inp", "plate_tri.msh"):
        mesh = samples[name]
        union = np.unique(np.concatenate([mesh.node_set(f"edge_{e}") for e in ("x0", "x1", "y0", "y1")]))
        np.testing.assert_array_equal(mesh.node_set("edges"), union)


def test_bracket_size_and_extent(samples):
    mesh = samples["bracket_tet10.msh"]
    assert 3 * mesh.n_nodes >= 50_000
    np.testing.assert_allclose(mesh.bounding_box(), [[0, 0, 0], [0.1, 0.06, 0.06]], atol=1e-12)
    assert mesh.kind("tetra10") == "solid"


def _same_mesh(a: FEMesh, b: FEMesh) -> None:
    np.testing.assert_array_equal(a.points, b.points)
    assert a.cells.keys() == b.cells.keys()
    for t in a.cells:
        np.testing.assert_array_equal(a.cells[t], b.cells[t])
    assert a.node_sets.keys() == b.node_sets.keys() and a.cell_sets.keys() == b.cell_sets.keys()
    for k in a.node_sets:
        np.testing.assert_array_equal(a.node_sets[k], b.node_sets[k])


def _point_keys(mesh: FEMesh, ids: np.ndarray) -> set:
    return {tuple(p) for p in np.round(mesh.points[ids], 12)}


def test_gmsh_v2_and_v4_agree(samples):
    v4, v2 = samples["beam_line.msh"], samples["beam_line_v2.msh"]
    np.testing.assert_array_equal(np.sort(v4.points, axis=0), np.sort(v2.points, axis=0))
    for mesh in (v4, v2):
        lines = mesh.points[mesh.cells["line"]]
        np.testing.assert_allclose(lines[:, 1, 0] - lines[:, 0, 0], 0.05)  # ordered along x
    for name in ("beam", "root", "tip"):
        assert _point_keys(v4, v4.node_set(name)) == _point_keys(v2, v2.node_set(name))


@pytest.mark.parametrize("stem", ["beam_line", "beam_solid", "plate_quad", "bracket_tet10"])
def test_gmsh_and_abaqus_agree(samples, stem):
    msh, inp = samples[f"{stem}.msh"], samples[f"{stem}.inp"]
    for name in inp.node_sets:
        assert _point_keys(msh, msh.node_set(name)) == _point_keys(inp, inp.node_set(name))
    t = next(iter(msh.cells))
    centroids = [np.sort(np.round(m.points[m.cells[t]].mean(axis=1), 12), axis=0) for m in (msh, inp)]
    np.testing.assert_array_equal(*centroids)


def _load_generator(name: str):
    spec = importlib.util.spec_from_file_location(name, MESHES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(MESHES))
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(MESHES))
    return module


@pytest.mark.parametrize("generator", ["make_beam", "make_plate"])
def test_generators_reproduce_committed_files(tmp_path, generator):
    _load_generator(generator).main(tmp_path)
    files = sorted(p.name for p in tmp_path.iterdir())
    assert files
    for name in files:
        _same_mesh(read_mesh(tmp_path / name), read_mesh(MESHES / name))


def test_bracket_generator_matches_file(tmp_path):
    _load_generator("make_bracket").write(tmp_path / "b.msh")
    _same_mesh(read_mesh(tmp_path / "b.msh"), read_mesh(MESHES / "bracket_tet10.msh"))


@pytest.mark.parametrize("file_format", ["gmsh", "gmsh22"])
def test_binary_gmsh(tmp_path, samples, file_format):
    path = tmp_path / "beam.msh"
    meshio.write(path, meshio.gmsh.read(MESHES / "beam_solid.msh"), file_format=file_format, binary=True)
    mesh, ref = read_mesh(path), samples["beam_solid.msh"]
    np.testing.assert_array_equal(mesh.cells["hexahedron"], ref.cells["hexahedron"])
    for name in ("beam", "root", "tip"):
        np.testing.assert_array_equal(mesh.node_set(name), ref.node_set(name))


def test_vtu_round_trip(tmp_path, samples):
    mesh = samples["beam_solid_hex20.msh"]
    path = tmp_path / "beam.vtu"
    meshio.write(path, meshio.Mesh(mesh.points, list(mesh.cells.items())))
    back = read_mesh(path)
    np.testing.assert_allclose(back.points, mesh.points)
    np.testing.assert_array_equal(back.cells["hexahedron20"], mesh.cells["hexahedron20"])


# ------------------------------------------------------------------------------------------
# Hand-made meshes
# ------------------------------------------------------------------------------------------
CUBE = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0],
                 [0, 0, 1], [1, 0, 1], [1, 1, 1], [0, 1, 1]], dtype=float)
TET = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], dtype=float)


def two_hexes() -> tuple[np.ndarray, dict]:
    """Two unit hexahedra side by side along x (12 nodes)."""
    points = np.vstack([CUBE, CUBE[[1, 2, 5, 6]] + [1, 0, 0]])
    return points, {"hexahedron": [[0, 1, 2, 3, 4, 5, 6, 7], [1, 8, 9, 2, 5, 10, 11, 6]]}


def test_from_arrays_and_sets():
    points, cells = two_hexes()
    mesh = FEMesh(points, cells, cell_sets={"right": {"hexahedron": [1]}},
                  node_sets={"left": [4, 0, 3, 7, 0]})
    assert mesh.n_nodes == 12 and mesh.cells["hexahedron"].dtype == np.int64
    np.testing.assert_array_equal(mesh.node_set("left"), [0, 3, 4, 7])
    np.testing.assert_array_equal(mesh.cell_set("right")["hexahedron"], [1])
    assert mesh.kind("hexahedron") == "solid" and mesh.kind("quad") == "shell" and mesh.kind("line3") == "beam"
    assert set(SUPPORTED_CELLS) == {"line", "line3", "triangle", "quad", "tetra", "tetra10",
                                    "hexahedron", "hexahedron20"}
    with pytest.raises(ValueError):
        mesh.points[0, 0] = 5.0  # read-only


def test_2d_points_are_padded():
    mesh = FEMesh([[0, 0], [1, 0], [0, 1]], {"triangle": [[0, 1, 2]]})
    assert mesh.points.shape == (3, 3) and np.all(mesh.points[:, 2] == 0)


def test_add_node_set():
    mesh = FEMesh(*two_hexes())
    np.testing.assert_array_equal(mesh.add_node_set("a", [3, 1, 1]), [1, 3])
    with pytest.raises(MeshError, match="'a' exists"):
        mesh.add_node_set("a", [2])
    mesh.add_node_set("a", [2], replace=True)
    np.testing.assert_array_equal(mesh.node_set("a"), [2])
    with pytest.raises(MeshError, match="out of range 0..11: 12, 40"):
        mesh.add_node_set("b", [0, 12, 40])
    with pytest.raises(MeshError, match="integers"):
        mesh.add_node_set("c", [0.5])


def test_unknown_set_names_list_the_available_ones():
    mesh = FEMesh(*two_hexes(), cell_sets={"solid": {"hexahedron": [0, 1]}}, node_sets={"fix": [0]})
    with pytest.raises(MeshError, match="no node set 'nope'; available node sets: fix"):
        mesh.node_set("nope")
    with pytest.raises(MeshError, match=r"no cell set 'fix' \('fix' is a node set\); available cell sets: solid"):
        mesh.cell_set("fix")


def test_unsupported_cell_type_named():
    with pytest.raises(MeshError, match=r"wedge \(1 cells\)"):
        FEMesh(np.eye(3).tolist() + [[0, 0, 0], [1, 1, 1], [2, 2, 2]], {"wedge": [[0, 1, 2, 3, 4, 5]]})
    with pytest.raises(MeshError, match="no cells of a supported type"):
        FEMesh(CUBE, {})


def test_cell_set_errors():
    with pytest.raises(MeshError, match="'s' refers to cell type 'tetra'"):
        FEMesh(*two_hexes(), cell_sets={"s": {"tetra": [0]}})
    with pytest.raises(MeshError, match=r"cell set 's' \(hexahedron\): ids out of range 0..1: 2"):
        FEMesh(*two_hexes(), cell_sets={"s": {"hexahedron": [0, 2]}})


def test_connectivity_out_of_range():
    with pytest.raises(MeshError, match=r"outside 0..3: cell 0 -> \[0, 1, 2, 4\]"):
        FEMesh(TET, {"tetra": [[0, 1, 2, 4]]})
    with pytest.raises(MeshError, match="integer"):
        FEMesh(TET, {"tetra": [[0.0, 1.0, 2.0, 3.0]]})


def test_non_finite_points():
    pts = TET.copy()
    pts[2, 1] = np.nan
    with pytest.raises(MeshError, match="non-finite coordinates: 2"):
        FEMesh(pts, {"tetra": [[0, 1, 2, 3]]})


def test_orphans_dropped_or_refused():
    points = np.vstack([[5.0, 5.0, 5.0], TET])  # node 0 is used by no cell
    with pytest.raises(MeshError, match="1 orphan nodes .*: 0"):
        FEMesh(points, {"tetra": [[1, 2, 3, 4]]}, strict=True)
    with pytest.warns(MeshWarning, match="dropped 1 orphan nodes .*: 0; removed from node sets s"):
        mesh = FEMesh(points, {"tetra": [[1, 2, 3, 4]]}, node_sets={"s": [0, 1]})
    np.testing.assert_array_equal(mesh.points, TET)
    np.testing.assert_array_equal(mesh.cells["tetra"], [[0, 1, 2, 3]])
    np.testing.assert_array_equal(mesh.node_set("s"), [0])
    np.testing.assert_array_equal(mesh.source_ids, [1, 2, 3, 4])


def test_duplicates_refused_or_merged():
    points, cells = two_hexes()
    # split the shared face: right hexahedron gets its own copies (nodes 12..15) of nodes 1, 2, 5, 6
    points = np.vstack([points, points[[1, 2, 5, 6]] + 1e-12])
    cells = {"hexahedron": [[0, 1, 2, 3, 4, 5, 6, 7], [12, 8, 9, 13, 14, 10, 11, 15]]}
    with pytest.raises(MeshError, match="4 pairs of duplicate nodes .*1 & 12.*merge_duplicates=True"):
        FEMesh(points, cells)
    with pytest.warns(MeshWarning, match="merged 4 duplicate nodes"):
        mesh = FEMesh(points, cells, node_sets={"face": [12, 13, 14, 15]}, merge_duplicates=True)
    ref = FEMesh(*two_hexes())
    np.testing.assert_array_equal(mesh.cells["hexahedron"], ref.cells["hexahedron"])
    np.testing.assert_array_equal(mesh.node_set("face"), [1, 2, 5, 6])
    assert mesh.n_nodes == 12


def test_repeated_node_in_cell():
    with pytest.raises(MeshError, match=r"1 tetra cells repeat a node: cell 1 \(nodes \[0, 1, 1, 3\]\)"):
        FEMesh(TET, {"tetra": [[0, 1, 2, 3], [0, 1, 1, 3]]})


def test_inverted_hexahedron_named_with_min_det():
    points, cells = two_hexes()
    cells["hexahedron"][1] = [1, 2, 9, 8, 5, 6, 11, 10]  # bottom face clockwise: inverted
    with pytest.raises(MeshError, match=r"1 hexahedron elements are degenerate or inverted .*element 1 \(min -0.125\)"):
        FEMesh(points, cells)


def test_flat_tetra_is_degenerate():
    points = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0.3, 0.3, 0.0]])
    with pytest.raises(MeshError, match="tetra elements are degenerate or inverted .*element 0"):
        FEMesh(points, {"tetra": [[0, 1, 2, 3]]})


def test_distorted_tetra10_caught_at_corner():
    mid = [(TET[a] + TET[b]) / 2 for a, b in [(0, 1), (1, 2), (2, 0), (0, 3), (1, 3), (2, 3)]]
    points = np.vstack([TET, mid])
    FEMesh(points, {"tetra10": [list(range(10))]})
    points[4] = [0.9, 0, 0]  # mid-edge node of edge 0-1 pushed past its quarter point
    with pytest.raises(MeshError, match="tetra10 elements are degenerate or inverted .*element 0"):
        FEMesh(points, {"tetra10": [list(range(10))]})


@pytest.mark.parametrize("cell_type", SUPPORTED_CELLS)
def test_affine_reference_cells(cell_type):
    """An affine image of each reference cell has the constant measure of the map (theory §4.5)."""
    nodes = REFERENCE_CELLS[cell_type].nodes
    d = nodes.shape[1]
    A = np.array([[0.3, 0.05, 0.02], [-0.04, 0.2, 0.01], [0.01, 0.03, 0.25]])[:, :d]
    x = nodes @ A.T + [0.1, -0.2, 0.3]
    conn = [list(range(len(nodes)))]
    FEMesh(x, {cell_type: conn})
    if d == 3:
        expected = np.linalg.det(A)
    elif d == 2:
        expected = np.linalg.norm(np.cross(A[:, 0], A[:, 1]))
    else:
        expected = np.linalg.norm(A[:, 0])
    np.testing.assert_allclose(signed_measure(cell_type, x[None]), expected, rtol=1e-12)
    if d == 3:
        with pytest.raises(MeshError, match=f"1 {cell_type} elements are degenerate or inverted"):
            FEMesh(x * [-1, 1, 1], {cell_type: conn})


def test_many_bad_elements_are_truncated():
    tets = np.array([[0, 2, 1, 3]] * 15)  # 15 inverted copies
    with pytest.raises(MeshError, match=r"15 tetra elements .*element 9 \(min -1\) \.\.\. and 5 more") as info:
        FEMesh(TET, {"tetra": tets})
    assert "element 10 " not in str(info.value)


def test_degenerate_shells():
    with pytest.raises(MeshError, match="triangle elements are degenerate .*element 1"):
        FEMesh([[0, 0], [1, 0], [0, 1], [2, 0]], {"triangle": [[0, 1, 2], [0, 1, 3]]})
    bowtie = [[0, 0], [1, 0], [0, 1], [1, 1]]
    with pytest.raises(MeshError, match="quad elements are degenerate .*element 0"):
        FEMesh(bowtie, {"quad": [[0, 1, 2, 3]]})
    FEMesh(bowtie, {"quad": [[0, 1, 3, 2]]})
    FEMesh(bowtie, {"quad": [[0, 2, 3, 1]]})  # clockwise is just the other normal, not an error


def test_folded_line3():
    FEMesh([[0, 0], [1, 0], [0.5, 0.1]], {"line3": [[0, 1, 2]]})
    with pytest.raises(MeshError, match="line3 elements are degenerate .*folded.*element 0"):
        FEMesh([[0, 0], [1, 0], [1.5, 0]], {"line3": [[0, 1, 2]]})


# ------------------------------------------------------------------------------------------
# read_mesh: cell selection, sets and errors on files
# ------------------------------------------------------------------------------------------
def tet_cube() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Unit cube in 6 tetrahedra (Kuhn split) and its 2 bottom triangles (z = 0)."""
    tets = np.array([[0, 1, 2, 6], [0, 2, 3, 6], [0, 3, 7, 6], [0, 7, 4, 6], [0, 4, 5, 6], [0, 5, 1, 6]])
    tets = np.array([t if np.linalg.det(CUBE[t[1:]] - CUBE[t[0]]) > 0 else t[[0, 2, 1, 3]] for t in tets])
    return CUBE, tets, np.array([[0, 2, 1], [0, 3, 2]])


def test_boundary_cells_define_sets_only():
    points, tets, bottom = tet_cube()
    raw = meshio.Mesh(points, [("tetra", tets), ("triangle", bottom), ("line", [[4, 5]])],
                      cell_sets={"body": [np.arange(6), [], []], "bottom": [[], [0, 1], []],
                                 "edge": [[], [], [0]]})
    mesh = from_meshio(raw)
    assert list(mesh.cells) == ["tetra"]
    np.testing.assert_array_equal(mesh.node_set("bottom"), [0, 1, 2, 3])
    np.testing.assert_array_equal(mesh.node_set("edge"), [4, 5])
    assert sorted(mesh.cell_sets) == ["body"]
    with pytest.raises(MeshError, match="is a node set"):
        mesh.cell_set("bottom")
    both = from_meshio(raw, element_dims=(2, 3))
    assert sorted(both.cells) == ["tetra", "triangle"]
    np.testing.assert_array_equal(both.cell_set("bottom")["triangle"], [0, 1])


def test_gmsh_physical_groups(tmp_path):
    """Named and unnamed physical groups; vertex cells give node sets."""
    points, tets, bottom = tet_cube()
    raw = meshio.Mesh(points, [("tetra", tets), ("triangle", bottom), ("vertex", [[6]])],
                      cell_data={"gmsh:physical": [np.full(6, 1), np.full(2, 7), [3]],
                                 "gmsh:geometrical": [np.full(6, 1), np.full(2, 1), [1]]},
                      field_data={"body": np.array([1, 3]), "corner": np.array([3, 0])})
    path = tmp_path / "cube.msh"
    meshio.write(path, raw, file_format="gmsh22", binary=False)
    mesh = read_mesh(path)
    np.testing.assert_array_equal(mesh.cell_set("body")["tetra"], np.arange(6))
    np.testing.assert_array_equal(mesh.node_set("Physical Surface 7"), [0, 1, 2, 3])
    np.testing.assert_array_equal(mesh.node_set("corner"), [6])


def test_abaqus_sets_from_text(tmp_path):
    path = tmp_path / "two.inp"
    path.write_text("*NODE\n" + "".join(f"{i + 1}, {x}, {y}, {z}\n" for i, (x, y, z) in enumerate(CUBE))
                    + "*ELEMENT, TYPE=C3D8, ELSET=ALL\n1, 1, 2, 3, 4, 5, 6, 7, 8\n"
                    + "*NSET, NSET=TOP\n5, 6, 7, 8\n")
    mesh = read_mesh(path)
    np.testing.assert_array_equal(mesh.node_set("TOP"), [4, 5, 6, 7])
    np.testing.assert_array_equal(mesh.cell_set("ALL")["hexahedron"], [0])


def write_vtu(tmp_path, cells, points=None) -> Path:
    path = tmp_path / "m.vtu"
    pts = np.vstack([TET, [[1, 1, 1]]]) if points is None else points
    meshio.write(path, meshio.Mesh(pts, cells))
    return path


def test_unsupported_cells_in_file(tmp_path):
    path = write_vtu(tmp_path, [("tetra", [[0, 1, 2, 3]]), ("pyramid", [[0, 1, 4, 2, 3]])])
    with pytest.raises(MeshError, match=r"unsupported cell types: pyramid \(1 cells\).*ignore_unsupported=True"):
        read_mesh(path)
    with pytest.warns(MeshWarning) as record:
        mesh = read_mesh(path, ignore_unsupported=True)
    messages = [str(w.message) for w in record]
    assert "ignored unsupported cells: pyramid (1 cells)" in messages[0]
    assert "dropped 1 orphan nodes (used by no cell): 4" in messages[1]
    assert list(mesh.cells) == ["tetra"] and mesh.n_nodes == 4


def test_file_without_supported_cells(tmp_path):
    path = write_vtu(tmp_path, [("pyramid", [[0, 1, 4, 2, 3]])])
    with pytest.raises(MeshError, match=r"no cells of a supported type.*found pyramid \(1 cells\)"):
        read_mesh(path, ignore_unsupported=True)
    path = write_vtu(tmp_path, [("vertex", [[0], [1]])])
    with pytest.raises(MeshError, match=r"no cells of a supported type; found vertex \(2 cells\)"):
        read_mesh(path)


def test_file_errors_name_the_file(tmp_path):
    with pytest.raises(MeshError, match="does not exist"):
        read_mesh(tmp_path / "missing.msh")
    bad = tmp_path / "bad.msh"
    bad.write_text("not a mesh\n")
    with pytest.raises(MeshError, match="cannot read .*bad.msh"):
        read_mesh(bad)
    with pytest.raises(MeshError, match="cannot tell the mesh format"):
        read_mesh(Path(__file__))
    path = write_vtu(tmp_path, [("tetra", [[0, 2, 1, 3]])], points=TET)
    with pytest.raises(MeshError, match=r"m\.vtu: 1 tetra elements are degenerate or inverted"):
        read_mesh(path)


# ------------------------------------------------------------------------------------------
# Geometric selection on a 3 x 3 x 3 node grid of spacing 0.5 m, node (i, j, k) = i + 3j + 9k
# ------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def grid() -> FEMesh:
    x = np.array([0.0, 0.5, 1.0])
    points = np.array([[x[i], x[j], x[k]] for k, j, i in itertools.product(range(3), repeat=3)])
    node = lambda i, j, k: i + 3 * j + 9 * k  # noqa: E731
    hexes = [[node(i + a, j + b, k + c) for a, b, c in
              [(0, 0, 0), (1, 0, 0), (1, 1, 0), (0, 1, 0), (0, 0, 1), (1, 0, 1), (1, 1, 1), (0, 1, 1)]]
             for k, j, i in itertools.product(range(2), repeat=3)]
    return FEMesh(points, {"hexahedron": hexes})


def test_select_box(grid):
    np.testing.assert_array_equal(grid.select_box([0.4, 0.4, -1], [1.1, 1.1, 0.1]), [4, 5, 7, 8])
    np.testing.assert_array_equal(grid.select_box([0.5, 0.5, 0.5], [0.5, 0.5, 0.5]), [13])
    with pytest.raises(MeshError, match="exceeds hi"):
        grid.select_box([1, 0, 0], [0, 1, 1])


def test_select_plane(grid):
    np.testing.assert_array_equal(grid.select_plane([0, 0, 1.0], [0, 0, 2]), np.arange(18, 27))
    # diagonal plane x = y
    np.testing.assert_array_equal(grid.select_plane([0, 0, 0], [1, -1, 0]), [0, 4, 8, 9, 13, 17, 18, 22, 26])
    np.testing.assert_array_equal(grid.select_plane([0, 0, 0.49], [0, 0, 1], tol=0.02), np.arange(9, 18))
    with pytest.raises(MeshError, match="zero vector"):
        grid.select_plane([0, 0, 0], [0, 0, 0])


def test_select_cylinder(grid):
    # axis along z through (0.5, 0.5): radius 0.5 hits the 4 edge midpoints of each layer
    expected = [1, 3, 5, 7]
    ids = grid.select_cylinder([0.5, 0.5, 0], [0, 0, 1], 0.5)
    np.testing.assert_array_equal(ids, np.concatenate([np.array(expected) + 9 * k for k in range(3)]))
    inside = grid.select_cylinder([0.5, 0.5, 0], [0, 0, 1], 0.5, inside=True)
    np.testing.assert_array_equal(inside, np.concatenate([np.array([1, 3, 4, 5, 7]) + 9 * k for k in range(3)]))
    with pytest.raises(MeshError, match="radius must be > 0"):
        grid.select_cylinder([0, 0, 0], [0, 0, 1], 0.0)


def test_nearest_node_and_empty_selection(grid):
    assert grid.nearest_node([0.9, 0.1, 0.95]) == 20
    assert isinstance(grid.nearest_node([0, 0]), int)
    with pytest.raises(MeshError, match="selects no node; the mesh spans"):
        grid.select_plane([0, 0, 1000.0], [0, 0, 1])
    assert grid.select_plane([0, 0, 1000.0], [0, 0, 1], allow_empty=True).size == 0


def test_selection_default_tolerance(grid):
    diag = np.sqrt(3.0)
    np.testing.assert_array_equal(grid.select_plane([0, 0, 0.5 + 0.9e-6 * diag], [0, 0, 1]), np.arange(9, 18))
    assert grid.select_plane([0, 0, 0.5 + 1.1e-6 * diag], [0, 0, 1], allow_empty=True).size == 0


def test_no_warnings_on_clean_samples():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        read_mesh(MESHES / "plate_tri.msh")
