"""fm.ExactBeam (issue 12, item 1): the consistent co-rotational beam of flexmb/fem/exact_beam.py.

1. the exact tangent and internal force against central differences of the energy, at a state with
   large rotations (also through Shepperd's branch of the logarithm, local rotations above 138 deg);
2. the tangent at the undeformed state equals the linear Timoshenko / Euler-Bernoulli stiffness;
3. objectivity: a rigid rotation of the nodal coordinates gives no strain energy and no force;
4. the elastica (k = 1 and 5) through fm.static_equilibrium, tolerance of the convergence study;
5. a full circle by an end moment 2 pi EI / L (tip back at the root, rotation 2 pi);
6. cable mode: no compression (slack element: no force, no stiffness), tension EA strain; a hanging cable;
7. a nodal force and a joint at a node (a propped cantilever) against the linear FE solution.
"""
from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import flexmb as fm
from flexmb.fem.exact_beam import ExactBeamStructure, element_energy
from verification.beams import cases, elastica, models


def frame_model(n=4, timoshenko=False):
    """A skew straight beam (not along an axis), 6 dofs per node."""
    x = np.linspace(0.0, 1.0, n + 1)
    pts = np.column_stack([x, 0.3 * x, -0.2 * x])
    mesh = fm.FEMesh(pts, {"line": np.column_stack([np.arange(n), np.arange(1, n + 1)])},
                     node_sets={"root": [0], "tip": [n]})
    sec = fm.BeamSection.rectangle(0.02, 0.04)
    if not timoshenko:
        sec = fm.BeamSection(A=sec.A, Iy=sec.Iy, Iz=sec.Iz, J=sec.J, ky=np.inf, kz=np.inf)
    return fm.FEModel(mesh, fm.Material(E=70e9, nu=0.33, rho=2700.0), sections=sec)


def fd_check(st, u, h=1e-6):
    f, K = st.internal_force(u)
    K = K.toarray()
    Kfd, ffd = np.zeros_like(K), np.zeros_like(f)
    for i in range(u.size):
        e = np.zeros(u.size)
        e[i] = h
        Kfd[:, i] = (st.internal_force(u + e)[0] - st.internal_force(u - e)[0]) / (2 * h)
        ffd[i] = (st.strain_energy(u + e) - st.strain_energy(u - e)) / (2 * h)
    return np.abs(f - ffd).max() / np.abs(f).max(), np.abs(K - Kfd).max() / np.abs(K).max(), np.abs(K - K.T).max()


@pytest.mark.parametrize("membrane", ["average", "chord"])
@pytest.mark.parametrize("timoshenko", [False, True])
def test_tangent_matches_finite_differences(membrane, timoshenko):
    fe = frame_model(timoshenko=timoshenko)
    st = ExactBeamStructure(fe, fe.dofs("root"), membrane=membrane)
    rng = np.random.default_rng(3)
    u = np.zeros(st.ndof_free).reshape(-1, 6)
    u[:, :3] = 0.05 * rng.standard_normal((u.shape[0], 3))
    u[:, 3:] = np.cumsum(0.4 * rng.standard_normal((u.shape[0], 3)), axis=0)   # rotation vectors up to ~1.5 rad
    ef, eK, asym = fd_check(st, u.ravel())
    # central differences with h = 1e-6 on energies of order 1e5 J: truncation and round-off ~1e-9
    assert ef < 1e-7 and eK < 1e-7
    assert asym == 0.0 or asym < 1e-12 * np.abs(st.tangent_dense(u.ravel())).max()


@pytest.mark.parametrize("psi2", [(0.0, 0.0, 2.6), (0.3, -2.2, 1.5), (0.0, 0.0, 3.0)])
def test_element_hessian_through_large_local_rotations(psi2):
    """Local rotations 2.6-3.0 rad use Shepperd's branch of the quaternion (1 + tr R < 1/2)."""
    k = np.array([10.0, 3.0, 4.0, 2.0, 4.0, 5.0, 2.5, 5.0, 1.0])
    z = np.r_[1.1, 0.1, -0.05, 0.2, -0.1, 0.3, psi2]

    def energy(zz):
        return element_energy(zz[:3], zz[3:6], zz[6:], np.eye(3), 1.0, k)

    U, g, H, dl = energy(z)
    assert np.linalg.norm(dl[4:]) > 2.5
    h = 1e-6
    E = np.eye(9) * h
    gfd = np.array([(energy(z + e)[0] - energy(z - e)[0]) / (2 * h) for e in E])
    Hfd = np.array([(energy(z + e)[1] - energy(z - e)[1]) / (2 * h) for e in E])
    assert np.abs(g - gfd).max() < 1e-8 * np.abs(g).max()
    assert np.abs(H - Hfd).max() < 1e-8 * np.abs(H).max()


@pytest.mark.parametrize("timoshenko", [False, True])
def test_tangent_at_rest_is_the_linear_stiffness(timoshenko):
    fe = frame_model(timoshenko=timoshenko)
    st = ExactBeamStructure(fe, fe.dofs("root"))
    K = st.tangent_dense(np.zeros(st.ndof_free))
    Kref = fe.K.toarray()[np.ix_(st.free, st.free)]
    assert np.abs(K - Kref).max() < 1e-12 * np.abs(Kref).max()


def test_rigid_rotation_gives_no_strain():
    fe = frame_model()
    st = ExactBeamStructure(fe, [])
    R = Rotation.from_rotvec([0.3, -1.2, 2.0])          # 2.4 rad
    u = np.zeros((fe.n_nodes, 6))
    u[:, :3] = R.apply(np.array(fe.points)) - fe.points + np.array([0.5, -1.0, 2.0])
    u[:, 3:] = R.as_rotvec()
    f, _ = st.internal_force(u.ravel())
    # energy scale: EA l0 (1e-3)^2 ~ 1e2 J for a 1e-3 strain; force scale EA ~ 6e7 N
    assert abs(st.strain_energy(u.ravel())) < 1e-18
    assert np.abs(f).max() < 1e-14 * 70e9 * 8e-4


@pytest.mark.parametrize("k", [1.0, 5.0])
def test_cantilever_matches_elastica(k):
    ref = elastica.cantilever_tip_load(k)
    got = models.tip_load(k, 16)
    for q in ("u", "v", "rotation"):
        # suite tolerance (verification/beams/cases.py TIP_TOL_16): 2.5-5x the largest error measured at 16 elements
        assert abs(got[q] / ref[q] - 1.0) < cases.TIP_TOL_16[q], q


def test_elastica_reference_reproduces_mattiasson():
    for k, (u, v) in elastica.MATTIASSON_1981.items():
        ref = elastica.cantilever_tip_load(k)
        assert abs(ref["u"] - u) <= 5.1e-6 and abs(ref["v"] - v) <= 5.1e-6


def test_end_moment_rolls_a_full_circle():
    out = models.end_moment(8, 2.0 * np.pi * models.EI / models.L, increments=8)
    pos = out["positions"]
    # Newton tolerance 1e-10 (1 + |q|): the constant-curvature state is exact for the element
    assert np.linalg.norm(pos[-1] - pos[0]) < 1e-8 * models.L
    assert out["rotation"] == pytest.approx(2.0 * np.pi, abs=1e-8)
    alpha = 2.0 * np.pi / 8
    c = models.L / 8 * (1.0 - alpha ** 2 / 24.0)
    R = c / (2.0 * np.sin(alpha / 2.0))
    assert pos[:, 1].max() == pytest.approx(2.0 * R, rel=1e-8)


def test_cable_is_tension_only():
    fe = frame_model()
    st = ExactBeamStructure(fe, fe.dofs(np.arange(fe.n_nodes), ["rx", "ry", "rz"]), cable=True)
    X = np.array(fe.points)
    L = np.linalg.norm(X[-1] - X[0])
    for scale, expect_tension in ((0.98, False), (1.001, True)):
        u = np.zeros((fe.n_nodes, 6))
        u[:, :3] = (scale - 1.0) * X
        u = u.ravel()[st.free]
        f, K = st.internal_force(u)
        N = st.axial_force(u)
        if expect_tension:
            EA = 70e9 * 0.02 * 0.04
            assert N == pytest.approx(np.full(4, EA * 1e-3), rel=1e-9)
            assert st.strain_energy(u) == pytest.approx(0.5 * EA * 1e-6 * L, rel=1e-9)
        else:                    # slack: compressed by 2 %, carries nothing
            assert not N.any() and not f.any() and st.strain_energy(u) == 0.0
            assert np.abs(K.toarray()).max() <= 144 * 1e-300     # only the structural marker of the pattern
    # a slack cable is bent freely (no bending stiffness): zero force for a zig-zag of shorter chords
    u = np.zeros((fe.n_nodes, 6))
    u[1::2, 1] = 0.01
    u[:, :3] -= 0.05 * X
    assert not st.internal_force(u.ravel()[st.free])[0].any()


def test_hanging_cable_stretches_by_its_weight():
    """A vertical cable hanging from a fixed point under gravity: tip drop rho g L^2 / (2 E) (the discrete
    model with linear consistent mass gives the continuum value exactly, see verification/beams/cases.py)."""
    n, L, E, rho = 4, 2.0, 1e8, 1000.0
    x = np.linspace(0.0, -L, n + 1)
    mesh = fm.FEMesh(np.column_stack([0 * x, x, 0 * x]), {"line": np.column_stack([np.arange(n), np.arange(1, n + 1)])},
                     node_sets={"top": [0], "bottom": [n]})
    sec = fm.BeamSection(A=1e-4, Iy=1e-10, Iz=1e-10, J=2e-10, orientation=(1.0, 0.0, 0.0))
    fe = fm.FEModel(mesh, fm.Material(E=E, nu=0.3, rho=rho), sections=sec)
    s = fm.System(gravity=(0.0, -9.81, 0.0))
    # start slightly stretched: a cable without tension has no transverse stiffness (singular first Newton step)
    start = np.zeros((n + 1, 6))
    start[:, 1] = 1e-5 * x
    free = fm.ExactBeam(fe, fe.dofs("top", ["ux", "uy", "uz"]), cable=True).structure.free
    rope = s.add(fm.ExactBeam(fe, fe.dofs("top", ["ux", "uy", "uz"]), cable=True, name="rope",
                              modal_coordinates=start.ravel()[free]))
    s.add(fm.Fixed(s.ground, rope, name="hook"))
    res = fm.static_equilibrium(s, load_steps=1)
    drop = -res.deflection(rope, n)[-1, 1]
    assert drop == pytest.approx(rho * 9.81 * L ** 2 / (2 * E), rel=1e-6)   # strain 1e-4: geometric terms 1e-8
    assert np.all(rope.axial_force(res.modal_coordinates(rope)[-1]) > 0.0)


def test_nodal_force_and_joint_at_a_node():
    """A nodal force at mid-span of a 3-D cantilever (static, small load) against the linear FE solution; the
    same beam with its tip node pinned to the ground by a spherical joint at the node, in a short dynamic run,
    against NonlinearBeam on the same FE model (at this load both are linear to 1e-9)."""
    n = 8
    fe = frame_model(n)
    F = np.array([0.6, -2.0, 0.0])         # perpendicular to the beam axis (1, 0.3, -0.2): no axial force
    s = fm.System()
    beam = s.add(fm.ExactBeam(fe, fe.dofs("root"), name="beam"))
    s.add(fm.Fixed(s.ground, beam, name="clamp"))
    s.add(fm.NodalForce(beam, n // 2, tuple(F)))
    res = fm.static_equilibrium(s, load_steps=1)
    f = np.zeros(fe.ndof)
    f[fe.dofs(n // 2)[:3]] = F
    u = fe.static(f, fe.dofs("root"))
    w_ref = u[fe.dofs(n // 2)[:3]]
    assert np.linalg.norm(w_ref) > 5e-5
    # biaxial bending of the rectangular section couples to torsion at first order in the rotations: the
    # nonlinear solution differs from the linear one by O(w / L) ~ 5e-5 relative (measured 6e-4 at 10x the
    # load); 2e-4 bounds it with the Newton tolerance (1e-10 absolute, 2e-6 relative)
    np.testing.assert_allclose(res.deflection(beam, n // 2)[-1], w_ref, rtol=0, atol=2e-4 * np.linalg.norm(w_ref))

    histories = {}
    for cls in (fm.NonlinearBeam, fm.ExactBeam):
        s = fm.System()
        b = s.add(cls(fe, fe.dofs("root"), rayleigh=(0.0, 1e-4), name="beam"))
        s.add(fm.Fixed(s.ground, b, name="clamp"))
        s.add(fm.Spherical(b.node(n), s.ground, tuple(fe.points[n]), name="prop"))
        s.add(fm.NodalForce(b, n // 2, tuple(F)))
        r = fm.simulate(s, 0.05, 5e-4)
        assert np.abs(r.deflection(b, n)).max() < 1e-12          # the pinned node stays on the ground point
        histories[cls.__name__] = r.deflection(b, n // 2)
    a, e = histories["NonlinearBeam"], histories["ExactBeam"]
    # measured 1.1e-7: the two element formulations differ at second order in the rotations (~1e-4 here)
    assert np.abs(a - e).max() < 1e-5 * np.abs(a).max()


@pytest.mark.parametrize("mass", ["consistent", "linear"])
def test_swinging_beam_keeps_its_energy(mass):
    """A flexible pendulum (frame on a revolute, root clamped to the frame) released horizontally swings for
    1 s (about half a period) under gravity: the energy balance of the run."""
    n = 8
    x = np.linspace(0.0, 1.0, n + 1)
    mesh = fm.FEMesh(np.column_stack([x, 0 * x, 0 * x]), {"line": np.column_stack([np.arange(n), np.arange(1, n + 1)])},
                     node_sets={"root": [0], "tip": [n]})
    fe = fm.FEModel(mesh, fm.Material(E=2e9, nu=0.3, rho=1000.0), sections=fm.BeamSection(A=1e-4, Iy=1e-9, Iz=1e-9,
                                                                                          J=2e-9))
    s = fm.System(gravity=(0.0, -9.81, 0.0))
    held = np.union1d(fe.dofs("root"), fe.dofs(np.arange(1, n + 1), ["uz", "rx", "ry"]))
    b = s.add(fm.ExactBeam(fe, held, mass=mass, name="pendulum"))
    s.add(fm.Revolute(s.ground, b, (0.0, 0.0, 0.0), (0.0, 0.0, 1.0)))
    res = fm.simulate(s, 1.0, 2e-3)
    e = res.energy()
    swing = np.abs(e["potential"]).max()                 # ~0.49 J: the mass falls by about L/2
    assert swing > 0.4
    # generalized-alpha (rho_inf = 0.9), h = 2 ms: max |energy error| 8.9e-6 J (consistent), 9.3e-6 J (linear),
    # falling as h^2 (2.3e-6 J at 1 ms), against 0.49 J
    assert np.abs(e["total"]).max() < 5e-5 * swing


def test_joint_at_a_node_in_static_equilibrium():
    """Propped cantilever (tip node pinned to the ground by a spherical joint at the node), static, against the
    linear FE solution with the tip translations held. E = 70 GPa: the static solver scales its constraint rows
    by the stiffness (before, the saddle-point matrix of so stiff a beam was declared singular)."""
    n = 8
    x = np.linspace(0.0, 1.0, n + 1)
    mesh = fm.FEMesh(np.column_stack([x, 0.3 * x, -0.2 * x]), {"line": np.column_stack([np.arange(n), np.arange(1, n + 1)])},
                     node_sets={"root": [0], "tip": [n]})
    fe = fm.FEModel(mesh, fm.Material(E=70e9, nu=0.33, rho=2700.0), sections=fm.BeamSection.rectangle(0.02, 0.04))
    F = np.array([0.6, -2.0, 0.0])            # perpendicular to the axis; w / L ~ 1e-5
    s = fm.System()
    beam = s.add(fm.ExactBeam(fe, fe.dofs("root"), name="beam"))
    s.add(fm.Fixed(s.ground, beam, name="clamp"))
    s.add(fm.Spherical(beam.node(n), s.ground, tuple(fe.points[n]), name="prop"))
    s.add(fm.NodalForce(beam, n // 2, tuple(F)))
    res = fm.static_equilibrium(s, load_steps=1)
    f = np.zeros(fe.ndof)
    f[fe.dofs(n // 2)[:3]] = F
    u = fe.static(f, np.union1d(fe.dofs("root"), fe.dofs(n, ["ux", "uy", "uz"])))
    w_ref = u[fe.dofs(n // 2)[:3]]
    # nonlinear terms O(w / L) ~ 1e-5 relative; Newton tolerance 1e-10 absolute (1e-5 relative)
    np.testing.assert_allclose(res.deflection(beam, n // 2)[-1], w_ref, rtol=0, atol=1e-4 * np.linalg.norm(w_ref))
    assert np.linalg.norm(res.deflection(beam, n)[-1]) < 1e-10
