"""Assembly and FEModel (flexmb/fem/assembly.py, flexmb/fem/model.py; theory §5)."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import flexmb.fem.model as model_module
from flexmb.errors import ModelError
from flexmb.fem.assembly import BlockAssembler
from flexmb.fem.materials import Material
from flexmb.fem.mesh import FEMesh
from flexmb.fem.model import FEModel
from flexmb.fem.sections import BeamSection

STEEL = Material(E=210e9, nu=0.3, rho=7850.0, name="steel")
ALU = Material(E=70e9, nu=0.33, rho=2700.0, name="aluminium")


def hex_bar(n: int = 3, length: float = 3.0) -> tuple[np.ndarray, np.ndarray]:
    """n unit hexahedra (VTK order) in a row along x."""
    x = np.arange(n + 1, dtype=float) * length / n
    grid = np.array([[xi, y, z] for z in (0.0, 1.0) for y in (0.0, 1.0) for xi in x])
    ids = np.arange(grid.shape[0]).reshape(2, 2, n + 1)          # [z, y, x]
    i = np.arange(n)
    cells = np.stack([ids[0, 0, i], ids[0, 0, i + 1], ids[0, 1, i + 1], ids[0, 1, i],
                      ids[1, 0, i], ids[1, 0, i + 1], ids[1, 1, i + 1], ids[1, 1, i]], axis=1)
    return grid, cells


def mixed_mesh() -> FEMesh:
    """Three hexahedra with a two-element beam sticking out of node 1 of the last face."""
    points, hexes = hex_bar()
    tip = np.array([[4.0, 0.0, 0.0], [5.0, 0.0, 0.0]])
    start = int(np.flatnonzero((points == [3.0, 0.0, 0.0]).all(axis=1))[0])
    points = np.vstack([points, tip])
    n = points.shape[0]
    lines = np.array([[start, n - 2], [n - 2, n - 1]])
    return FEMesh(points, {"hexahedron": hexes, "line": lines},
                  cell_sets={"block": {"hexahedron": np.arange(3)}, "arm": {"line": np.arange(2)},
                             "first": {"hexahedron": np.array([0])}},
                  node_sets={"root": np.flatnonzero(points[:, 0] == 0.0)})


def same_pattern(A: sp.csr_matrix, B) -> bool:
    """True when A and B (a matrix or an assembler) use the very same index arrays (no copies)."""
    return np.shares_memory(A.indices, B.indices) and np.shares_memory(A.indptr, B.indptr)


def dense_reference(model: FEModel, which: str) -> np.ndarray:
    """Element-by-element dense assembly (a Python loop, for checking only)."""
    A = np.zeros((model.ndof, model.ndof))
    for chunk in model.chunks:
        mats = chunk.kernel.stiffness() if which == "K" else chunk.kernel.mass(model.lumped_mass)
        for dofs, Ae in zip(chunk.dofmap, mats):
            A[np.ix_(dofs, dofs)] += Ae
    return A


# ------------------------------------------------------------------------------------------------
# the assembler
# ------------------------------------------------------------------------------------------------
def test_block_assembler_matches_coo_sum_and_reuses_pattern():
    rng = np.random.default_rng(1)
    conn_a = rng.integers(0, 12, (7, 4))                   # 3-component blocks, repeated nodes allowed
    conn_b = rng.integers(0, 12, (5, 2))                   # 6-component blocks
    asm = BlockAssembler(12, 6, [(conn_a, (0, 1, 2)), (conn_b, tuple(range(6)))])
    A = rng.normal(size=(7, 12, 12))
    B = rng.normal(size=(5, 12, 12))
    rows, cols, vals = [], [], []
    for conn, comps, mats in ((conn_a, np.arange(3), A), (conn_b, np.arange(6), B)):
        dofs = (conn[:, :, None] * 6 + comps).reshape(conn.shape[0], -1)
        rows.append(np.repeat(dofs, dofs.shape[1], axis=1).ravel())
        cols.append(np.tile(dofs, dofs.shape[1]).ravel())
        vals.append(mats.ravel())
    ref = sp.coo_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(72, 72))
    first = asm.assemble([A, B])
    assert abs(first - ref).max() <= 1e-14 * abs(ref).max()         # summation order only
    assert first.has_canonical_format
    second = asm.assemble([2.0 * A, None])
    # the pattern is built once: every assembly shares the same read-only index arrays
    assert same_pattern(first, asm) and same_pattern(second, asm)
    assert not asm.indices.flags.writeable and not first.indices.flags.writeable
    with pytest.raises(ValueError):
        first.eliminate_zeros()
    assert abs(second - 2.0 * sp.coo_matrix((vals[0], (rows[0], cols[0])), shape=(72, 72))).max() < 1e-13


def test_assembler_rejects_bad_input():
    with pytest.raises(ModelError, match="do not fit"):
        BlockAssembler(4, 3, [(np.array([[0, 1]]), (0, 3))])
    asm = BlockAssembler(4, 3, [(np.array([[0, 1]]), (0, 1, 2))])
    with pytest.raises(ModelError, match="does not fit"):
        asm.assemble([np.zeros((1, 5, 5))])


# ------------------------------------------------------------------------------------------------
# FEModel: dofs, matrices, pattern
# ------------------------------------------------------------------------------------------------
def test_solid_model_has_three_dofs_per_node_and_symmetric_matrices():
    points, cells = hex_bar()
    model = FEModel(FEMesh(points, {"hexahedron": cells}), STEEL)
    assert model.dofs_per_node == 3 and model.ndof == 3 * points.shape[0]
    assert model.inactive_dofs.size == 0
    for A in (model.K, model.M):
        assert isinstance(A, sp.csr_matrix)
        assert abs(A - A.T).max() <= 1e-15 * abs(A).max()
    assert np.allclose(model.K.toarray(), dense_reference(model, "K"), rtol=0, atol=1e-12 * abs(model.K).max())
    assert same_pattern(model.M, model.assembler) and same_pattern(model.K, model.assembler)
    assert same_pattern(model.geometric_stiffness(np.zeros(model.ndof)), model.assembler)


def test_mixed_model_dofs_and_inactive_rotations():
    mesh = mixed_mesh()
    model = FEModel(mesh, STEEL, sections=BeamSection.circle(0.05))
    assert model.dofs_per_node == 6
    assert np.array_equal(model.dofs(2), np.arange(12, 18))
    assert np.array_equal(model.dofs([1, 3], ["uz", "rx"]), [8, 9, 20, 21])
    assert np.array_equal(model.dofs("root", 0), np.flatnonzero(mesh.points[:, 0] == 0.0) * 6)
    # rotations of nodes touched only by solids are inactive; the beam's first node is not
    beam_nodes = np.unique(mesh.cells["line"])
    solid_only = np.setdiff1d(np.unique(mesh.cells["hexahedron"]), beam_nodes)
    assert np.array_equal(model.inactive_dofs, np.sort(model.dofs(solid_only, ["rx", "ry", "rz"])))
    assert np.allclose(model.K.toarray(), dense_reference(model, "K"), rtol=0, atol=1e-12 * abs(model.K).max())
    with pytest.raises(ModelError, match="dof component 'wx'"):
        model.dofs(0, "wx")
    with pytest.raises(ModelError, match="node ids"):
        model.dofs(10_000)


def test_chunked_assembly_equals_single_block(monkeypatch):
    mesh = mixed_mesh()
    whole = FEModel(mesh, STEEL, sections=BeamSection.circle(0.05))
    monkeypatch.setattr(model_module, "CHUNK_BYTES", 1)          # one element per chunk
    split = FEModel(mesh, STEEL, sections=BeamSection.circle(0.05))
    assert len(split.chunks) == 5 and len(whole.chunks) == 2
    for name in ("K", "M"):
        a, b = getattr(whole, name), getattr(split, name)
        assert abs(a - b).max() <= 1e-15 * abs(a).max()
    u = np.random.default_rng(3).normal(size=whole.ndof) * 1e-4
    for t, s in whole.element_stresses(u).items():
        assert np.allclose(split.element_stresses(u)[t], s, rtol=1e-13, atol=0)
    assert abs(whole.geometric_stiffness(u) - split.geometric_stiffness(u)).max() <= 1e-12 * abs(
        whole.geometric_stiffness(u)).max()


def test_materials_by_cell_set():
    mesh = mixed_mesh()
    sec = BeamSection.circle(0.05)
    model = FEModel(mesh, {"block": STEEL, "arm": ALU}, sections={"arm": sec})
    single = FEModel(mesh, STEEL, sections=sec)
    hexa = model.chunks[0]
    assert np.allclose(hexa.kernel.props.E, STEEL.E) and np.allclose(model.chunks[1].kernel.props.E, ALU.E)
    assert abs(model.K).max() == pytest.approx(abs(single.K).max())     # the solids dominate
    with pytest.raises(ModelError, match="have no material"):
        FEModel(mesh, {"first": STEEL, "arm": ALU}, sections=sec)
    with pytest.raises(ModelError, match="does not have"):
        FEModel(mesh, {"nowhere": STEEL}, sections=sec)
    with pytest.raises(ModelError, match="two different materials"):
        FEModel(mesh, {"block": STEEL, "first": ALU, "arm": ALU}, sections=sec)
    with pytest.raises(ModelError, match="must be a Material"):
        FEModel(mesh, "steel", sections=sec)


@pytest.mark.parametrize("kwargs, match", [
    (dict(E=0.0, nu=0.3, rho=1.0), "Young's modulus E must be positive.*0.0"),
    (dict(E=1.0, nu=0.5, rho=1.0), "Poisson ratio nu must lie in .*0.5"),
    (dict(E=1.0, nu=-1.0, rho=1.0), "Poisson ratio"),
    (dict(E=1.0, nu=0.3, rho=-2.0), "density rho.*-2.0"),
    (dict(E=float("nan"), nu=0.3, rho=1.0, name="bad"), "material 'bad'"),
])
def test_material_validation(kwargs, match):
    with pytest.raises(ModelError, match=match):
        Material(**kwargs)


def test_material_elasticity_matrix():
    D = STEEL.elasticity_matrix()
    lam, mu = STEEL.lame
    eps = np.array([1e-3, -2e-4, 3e-4, 1e-4, -5e-5, 2e-4])     # engineering shear strains
    sig = D @ eps
    assert sig[0] == pytest.approx(lam * eps[:3].sum() + 2 * mu * eps[0], rel=1e-14)
    assert sig[3] == pytest.approx(mu * eps[3], rel=1e-14)


# ------------------------------------------------------------------------------------------------
# point items, elimination, statics
# ------------------------------------------------------------------------------------------------
def test_point_mass_and_spring_reuse_pattern():
    mesh = mixed_mesh()
    model = FEModel(mesh, STEEL, sections=BeamSection.circle(0.05))
    M0, K0 = model.M, model.K
    tip = mesh.points.shape[0] - 1
    model.add_point_mass(tip, 12.0, inertia=[1.0, 2.0, 3.0])
    model.add_spring(tip, [1e5, 2e5, 3e5], k_rotational=7.0)
    M1, K1 = model.M, model.K
    assert M1 is not M0 and K1 is not K0
    assert same_pattern(M1, M0) and same_pattern(K1, K0)                 # refilled, same pattern
    dM = (M1 - M0).toarray()
    dK = (K1 - K0).toarray()
    d = model.dofs(tip)
    assert np.allclose(dM[np.ix_(d, d)], np.diag([12, 12, 12, 1, 2, 3]), rtol=0, atol=1e-9)
    assert np.allclose(dK[np.ix_(d, d)], np.diag([1e5, 2e5, 3e5, 7, 7, 7]), rtol=0, atol=1e-6)
    assert abs(dM).sum() == pytest.approx(12 * 3 + 6, rel=1e-12)
    with pytest.raises(ModelError, match="symmetric and non-negative"):
        model.add_point_mass(tip, -1.0)
    solid = FEModel(FEMesh(*[mesh.points[:16], {"hexahedron": mesh.cells["hexahedron"]}]), STEEL)
    with pytest.raises(ModelError, match="needs rotational dofs"):
        solid.add_point_mass(0, 1.0, inertia=1.0)


def test_cantilever_with_tip_spring_static():
    """Beam cantilever with a grounded tip spring: w = P / (k + 3 EI / L^3) (exact, EB element)."""
    L, n, P, k = 2.0, 4, 1e3, 5e4
    points = np.column_stack([np.linspace(0, L, n + 1), np.zeros(n + 1), np.zeros(n + 1)])
    mesh = FEMesh(points, {"line": np.column_stack([np.arange(n), np.arange(1, n + 1)])})
    sec = BeamSection.rectangle(0.03, 0.05)
    model = FEModel(mesh, STEEL, sections=sec, beam="euler-bernoulli")
    model.add_spring(n, [0.0, 0.0, k])
    f = np.zeros(model.ndof)
    f[model.dofs(n, "uz")] = P
    u = model.static(f, model.dofs(0))
    w = u[model.dofs(n, "uz")][0]
    assert w == pytest.approx(P / (k + 3 * STEEL.E * sec.Iy / L**3), rel=1e-12)
    assert np.all(u[model.dofs(0)] == 0.0)
    # several load cases at once reuse the factorization
    U = model.static(np.column_stack([f, 2 * f]), model.dofs(0))
    assert np.allclose(U[:, 1], 2 * u, rtol=1e-12, atol=0)


def test_reduce_eliminates_fixed_and_inactive():
    mesh = mixed_mesh()
    model = FEModel(mesh, STEEL, sections=BeamSection.circle(0.05))
    # the beam meets the solid in one node, a hinge (solid nodes have no rotational stiffness):
    # hold that node's rotations too, else the arm is a mechanism
    junction = mesh.cells["line"][0, 0]
    fixed = np.concatenate([model.dofs("root"), model.dofs(junction, ["rx", "ry", "rz"])])
    Mr, Kr, free = model.reduce(fixed)
    assert np.intersect1d(free, fixed).size == 0 and np.intersect1d(free, model.inactive_dofs).size == 0
    assert free.size == model.ndof - np.union1d(fixed, model.inactive_dofs).size
    assert np.allclose(Kr.toarray(), model.K.toarray()[np.ix_(free, free)], rtol=0, atol=0)
    assert np.linalg.eigvalsh(Kr.toarray()).min() > 0.0          # supported: positive definite
    assert np.allclose(Mr.toarray(), model.M.toarray()[np.ix_(free, free)], rtol=0, atol=0)


def test_singular_supports_refused():
    points, cells = hex_bar()
    model = FEModel(FEMesh(points, {"hexahedron": cells}), STEEL)
    f = np.zeros(model.ndof)
    with pytest.raises(ModelError, match="singular"):
        model.static(f, model.dofs(0, "ux"))


def test_stresses_and_nodal_average_of_uniform_stretch():
    points, cells = hex_bar()
    model = FEModel(FEMesh(points, {"hexahedron": cells}), STEEL)
    u = np.zeros(model.ndof)
    u[model.dofs(np.arange(points.shape[0]), "ux")] = 1e-3 * points[:, 0]
    sigma = model.element_stresses(u)["hexahedron"]
    assert sigma.shape == (3, 8, 6)
    lam, mu = STEEL.lame
    expected = np.array([lam + 2 * mu, lam, lam, 0, 0, 0]) * 1e-3
    assert np.allclose(model.nodal_stress(u), expected, rtol=0, atol=1e-12 * expected.max())


# ------------------------------------------------------------------------------------------------
# shells through the same kernel interface
# ------------------------------------------------------------------------------------------------
def test_shell_cells_through_the_kernel_interface():
    points = np.array([[0.0, 0, 0], [1, 0, 0], [2, 0, 0], [0, 1, 0], [1, 1, 0], [2, 1, 0]])
    quads = np.array([[0, 1, 4, 3], [1, 2, 5, 4]])
    mesh = FEMesh(points, {"quad": quads}, cell_sets={"plate": {"quad": np.arange(2)}})
    with pytest.raises(ModelError, match="need a thickness"):
        FEModel(mesh, STEEL)
    model = FEModel(mesh, STEEL, thickness={"plate": 0.01}, element_options={"quad": {"drill": 1e-2}})
    assert model.dofs_per_node == 6
    assert abs(model.K - model.K.T).max() <= 1e-12 * abs(model.K).max()
    m = STEEL.rho * 0.01 * 2.0
    one = np.zeros(model.ndof)
    one[model.dofs(np.arange(6), "uz")] = 1.0
    assert one @ model.M @ one == pytest.approx(m, rel=1e-12)
    u = np.random.default_rng(0).normal(size=model.ndof) * 1e-6
    states = model.element_stresses(u)
    Kg = model.geometric_stiffness(u)
    assert abs(model.geometric_stiffness_from_stresses(states) - Kg).max() <= 1e-12 * abs(Kg).max()
    assert model.nodal_stress(u).shape == (6, 6)


def test_element_options_checked():
    points, cells = hex_bar()
    mesh = FEMesh(points, {"hexahedron": cells})
    with pytest.raises(ModelError, match="take no options"):
        FEModel(mesh, STEEL, element_options={"hexahedron": {"drill": 1.0}})
    with pytest.raises(ModelError, match="no elements of"):
        FEModel(mesh, STEEL, element_options={"quad": {"drill": 1.0}})
