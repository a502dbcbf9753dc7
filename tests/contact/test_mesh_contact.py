"""Triangle-mesh, node and sphere-cloud contacts (flexmb/contact/mesh.py).

Geometry against brute force (closest points by dense sampling), a sphere on a two-triangle plane
against the analytic sphere-plane contact, a cantilever pushed onto a plane against the FE static
solution, mesh checks, and the Newton blocks of every pair type against central differences.
"""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import flexmb as fm
from flexmb.contact import Flores, HuntCrossley, LankaraniNikravesh
from flexmb.contact.mesh import (ContactMarginWarning, NodeMeshContact, NodePlaneContact, SphereCloudContact,
                                 SphereMeshContact, TriangleMesh, closest_point_on_triangles)
from flexmb.contact.surface import EDGE, FACE, VERTEX, feature_measure
from flexmb.errors import MeshError, ModelError

rng = np.random.default_rng(5)

CUBE_P = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0], [0, 0, 1], [1, 0, 1], [1, 1, 1], [0, 1, 1]], float)
CUBE_T = np.array([[0, 2, 1], [0, 3, 2], [4, 5, 6], [4, 6, 7], [0, 1, 5], [0, 5, 4],
                   [1, 2, 6], [1, 6, 5], [2, 3, 7], [2, 7, 6], [3, 0, 4], [3, 4, 7]])
SQUARE_P = [[-1, 0, -1], [1, 0, -1], [1, 0, 1], [-1, 0, 1]]
SQUARE_T = [[0, 2, 1], [0, 3, 2]]          # normals +y


def sampled_closest(P, tri, n=200):
    """Closest point of a triangle by dense barycentric sampling (brute force), refined three times in a
    window around the best sample. Returns the point and a bound on its sampling error."""
    e1, e2 = tri[1] - tri[0], tri[2] - tri[0]
    u0, v0, w = 0.5, 0.5, 1.0
    for _ in range(4):
        u, v = np.meshgrid(np.linspace(u0 - w, u0 + w, n), np.linspace(v0 - w, v0 + w, n))
        u, v = np.clip(u, 0, 1).ravel(), np.clip(v, 0, 1).ravel()
        over = u + v > 1.0
        u[over], v[over] = u[over] / (u[over] + v[over]), v[over] / (u[over] + v[over])
        S = tri[0] + u[:, None] * e1 + v[:, None] * e2
        k = np.argmin(np.linalg.norm(S - P, axis=1))
        u0, v0, w = u[k], v[k], 4.0 * w / n
    return S[k], 2.0 * w * (np.linalg.norm(e1) + np.linalg.norm(e2))


def test_closest_point_regions_match_brute_force():
    tri = np.array([[0.0, 0.0, 0.0], [1.0, 0.1, 0.0], [0.3, 0.9, 0.2]])
    c = tri.mean(axis=0)
    P = c + rng.uniform(-1.5, 1.5, (60, 3))
    A, B, C = (np.repeat(tri[k][None], len(P), axis=0) for k in range(3))
    Q, kind, local = closest_point_on_triangles(P, A, B, C)
    for k in range(len(P)):
        ref, tol = sampled_closest(P[k], tri)
        assert np.linalg.norm(P[k] - Q[k]) <= np.linalg.norm(P[k] - ref) + 1e-12      # ours is never farther
        assert np.linalg.norm(Q[k] - ref) < tol                                        # and it is the same point
    kinds = set(zip(kind.tolist(), local.tolist()))
    assert {(FACE, 0), (EDGE, 0), (EDGE, 1), (EDGE, 2), (VERTEX, 0), (VERTEX, 1), (VERTEX, 2)} <= kinds
    # the feature measure is the distance to the closest point (signed height on the face)
    d = P[:, None, :] - np.stack([A, B, C], axis=1)
    x, _, _ = feature_measure(kind, local, d)
    n = np.cross(B[0] - A[0], C[0] - A[0])
    n /= np.linalg.norm(n)
    dist = np.linalg.norm(P - Q, axis=1)
    face = kind == FACE
    assert np.allclose(x[~face], dist[~face], atol=1e-12)
    assert np.allclose(x[face], (P[face] - A[face]) @ n, atol=1e-12)


def test_feature_measure_derivatives_match_central_differences():
    d = rng.standard_normal((7, 3, 3))
    kind, local = [FACE, EDGE, EDGE, EDGE, VERTEX, VERTEX, VERTEX], [0, 0, 1, 2, 0, 1, 2]
    x, g, H = feature_measure(kind, local, d, second=True)
    eps = 1e-6
    for c in range(7):
        for k in range(9):
            dp, dm = d[c:c + 1].reshape(1, 9).copy(), d[c:c + 1].reshape(1, 9).copy()
            dp[0, k] += eps
            dm[0, k] -= eps
            xp, gp, _ = feature_measure(kind[c:c + 1], local[c:c + 1], dp.reshape(1, 3, 3))
            xm, gm, _ = feature_measure(kind[c:c + 1], local[c:c + 1], dm.reshape(1, 3, 3))
            assert abs((xp - xm)[0] / (2 * eps) - g[c, k]) < 1e-7
            assert np.abs((gp - gm)[0] / (2 * eps) - H[c, :, k]).max() < 1e-6


# -- mesh checks -------------------------------------------------------------------------------------------
def test_mesh_checks_name_the_faces():
    with pytest.raises(MeshError, match=r"degenerate triangles .*triangle 1 "):
        TriangleMesh([[0, 0, 0], [1, 0, 0], [0, 1, 0], [2, 0, 0]], [[0, 1, 2], [0, 1, 3]])
    with pytest.raises(MeshError, match=r"repeat a vertex: triangle 0"):
        TriangleMesh([[0, 0, 0], [1, 0, 0], [0, 1, 0]], [[0, 1, 1]])
    with pytest.raises(MeshError, match="outside 0..2"):
        TriangleMesh([[0, 0, 0], [1, 0, 0], [0, 1, 0]], [[0, 1, 3]])
    with pytest.raises(MeshError, match=r"inconsistent orientation.*triangles \[0, 1\]"):
        TriangleMesh(SQUARE_P, [[0, 2, 1], [0, 2, 3]])
    with pytest.raises(MeshError, match=r"non-manifold edges .*edge \(0, 1\)"):
        TriangleMesh([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, -1, 0], [0, 0, 1]], [[0, 1, 2], [1, 0, 3], [0, 1, 4]])
    with pytest.raises(MeshError, match=r"the mesh is open: 4 boundary edges"):
        TriangleMesh(SQUARE_P, SQUARE_T, closed=True)
    with pytest.raises(MeshError, match="normals point inward"):
        TriangleMesh(CUBE_P, CUBE_T[:, ::-1], closed=True)
    with pytest.raises(MeshError, match=r"the mesh is open: 3 boundary edges"):
        TriangleMesh(CUBE_P, CUBE_T[:-1], closed=True)
    cube = TriangleMesh(CUBE_P, CUBE_T, closed=True)
    assert cube.volume() == pytest.approx(1.0) and cube.n_boundary_edges == 0


def test_surface_of_fe_meshes():
    from flexmb.fem.mesh import FEMesh
    from verification.fem.meshes import plate_grid, solid_box
    box = TriangleMesh.from_femesh(FEMesh(*solid_box("hexahedron", (2, 3, 2), hi=(1.0, 2.0, 0.5))[:1],
                                          {"hexahedron": solid_box("hexahedron", (2, 3, 2), hi=(1.0, 2.0, 0.5))[1]}))
    assert box.closed and box.volume() == pytest.approx(1.0)
    pts, cells = solid_box("tetra10", (2, 2, 2))
    tet = TriangleMesh.from_femesh(FEMesh(pts, {"tetra10": cells}))
    assert tet.closed and tet.volume() == pytest.approx(1.0)
    plate = TriangleMesh.from_femesh(plate_grid(3, 1.0))
    assert not plate.closed and plate.n_triangles == 18 and plate.n_boundary_edges == 12
    assert np.allclose(plate.normals(), [0, 0, 1])


# -- sphere on a triangle-mesh plane == sphere-plane ---------------------------------------------------
R, MASS = 0.01, 0.033
LAW = LankaraniNikravesh(1e9, 0.7)


def ball_system(mesh: bool, x=0.1, z=0.2, vel=(0.3, -1.0, 0.1), rotate=None):
    s = fm.System(gravity=(0, -9.81, 0))
    ori = None if rotate is None else fm.rotations.from_axis_angle(*rotate)
    floor = s.add(fm.RigidBody(1.0, (1, 1, 1), position=(0.0, -0.5, 0.0), orientation=ori, name="floor"))
    s.add(fm.Fixed(s.ground, floor, (0, -0.5, 0)))
    c = (x, R + 1e-4, z)
    ball = s.add(fm.RigidBody(MASS, (1e-6,) * 3, position=c, velocity=vel, name="ball"))
    A = fm.rotations.A(floor.p0)
    n, P = A @ [0, 1, 0], A @ [0, 0.5, 0] + (0, -0.5, 0)
    if mesh:
        s.add(SphereMeshContact(floor, ball, mesh=TriangleMesh(SQUARE_P + np.array([0, 0.5, 0]), SQUARE_T), center=c,
                                radius=R, law=LAW))
    else:
        s.add(fm.SpherePlaneContact(floor, ball, point=P, normal=n, center=c, radius=R, law=LAW))
    return s, ball


def tangent(q):
    """Projection removing the component along p of each body's Euler parameters (two bodies)."""
    T = np.eye(14)
    for b in (0, 7):
        p = q[b + 3:b + 7] / np.linalg.norm(q[b + 3:b + 7])
        T[b + 3:b + 7, b + 3:b + 7] -= np.outer(p, p)
    return T


@pytest.mark.parametrize("x, z", [(0.1, 0.2), (0.3, 0.3), (-0.4, 0.7)])   # (0.3, 0.3): on the diagonal edge
def test_sphere_on_two_triangle_plane_equals_sphere_plane(x, z):
    (s1, b1), (s2, b2) = ball_system(False, x, z), ball_system(True, x, z)
    a1, a2 = s1.compile(), s2.compile()
    q, v = a1.initial_state()
    for dy in (2e-5, 5e-5):
        qq, vv = q.copy(), v.copy()
        qq[b1.offset + 1] = R - dy
        vv[b1.offset + 1] = -0.7
        lam = np.zeros(a1.m)
        for asm in (a1, a2):
            asm.step_end(qq, vv, lam, 0.0)
        coef = (1.0, 0.5, 0.25, 0.25, 0.0)
        r1, _, S1 = a1.residual(qq, vv, 0 * vv, lam, 0.0, coef=coef)
        r2, _, S2 = a2.residual(qq, vv, 0 * vv, lam, 0.0, coef=coef)
        # the two measures agree for rotations; along p itself (not a rotation: A(p) is quadratic in p)
        # they differ, which only changes the normalization multiplier: compare the rotational part
        T = tangent(qq)
        assert np.allclose(T @ r1, T @ r2, rtol=1e-12, atol=1e-9 * np.abs(r1).max())
        assert a1.contacts[0].penetration(a1.eval_state(qq, vv, 0 * vv, 0.0))[0] == pytest.approx(
            a2.contacts[0].penetration(a2.eval_state(qq, vv, 0 * vv, 0.0))[0], abs=1e-15)
        if (x, z) != (0.3, 0.3):       # on the edge the edge feature's Hessian differs (theory-contact.md §8.2)
            S1, S2 = (M.toarray()[:14, :14] if sp.issparse(M) else M[:14, :14] for M in (S1, S2))
            # columns of the ball; rows projected like the residual (the floor's Hessian along p differs)
            assert np.allclose(T @ S1[:, 7:], T @ S2[:, 7:], atol=1e-8 * np.abs(S1).max())
    r1 = fm.simulate(s1, 1.5e-3, 2e-5, h_contact=2e-6)
    r2 = fm.simulate(s2, 1.5e-3, 2e-5, h_contact=2e-6)
    assert np.allclose(r1.position(b1), r2.position(b2), atol=1e-10)
    assert r1.velocity(b1)[-1, 1] > 0.5           # it bounced


def test_tilted_floor_mesh_equals_tilted_plane():
    (s1, b1), (s2, b2) = ball_system(False, rotate=((1, 0, 0.3), 0.2)), ball_system(True, rotate=((1, 0, 0.3), 0.2))
    r1 = fm.simulate(s1, 1.5e-3, 2e-5, h_contact=2e-6)
    r2 = fm.simulate(s2, 1.5e-3, 2e-5, h_contact=2e-6)
    assert np.allclose(r1.position(b1), r2.position(b2), atol=1e-10)


# -- edge and vertex regions: the surface's closest point by brute force -------------------------------------
def test_sphere_near_a_cube_touches_its_closest_feature_once():
    """Spheres around a cube (12 triangles): the penetration is R - (distance to the surface), with the
    surface sampled densely, and the force points from the closest surface point to the centre, whatever
    the region (face, edge, vertex) -- one contact per sphere, no double counting at shared edges."""
    cube = TriangleMesh(CUBE_P, CUBE_T, closed=True)
    s = fm.System()
    box = s.add(fm.RigidBody(1.0, (1, 1, 1), name="box"))
    radius = 0.2
    centers = np.array([[0.5, 0.5, 1.1], [0.3, 0.7, -0.12], [1.1, -0.1, 0.5], [1.08, 1.1, 0.4], [1.1, 1.1, 1.1],
                        [-0.1, -0.12, -0.08], [0.5, -0.15, 1.05], [0.5, 0.5, 1.0 + 1e-3], [0.25, 0.25, 1.1]])
    balls = []
    for k, c in enumerate(centers):
        b = s.add(fm.RigidBody(1.0, (1, 1, 1), position=c, name=f"b{k}"))
        s.add(SphereMeshContact(box, b, mesh=cube, center=c, radius=radius, law=HuntCrossley(1e5, 1.0)))
        balls.append(b)
    asm = s.compile()
    q, v = asm.initial_state()
    asm.step_end(q, v, np.zeros(asm.m), 0.0)
    g = asm.contacts[0]
    pen = g.penetration(asm.eval_state(q, v, 0 * v, 0.0))
    F = -asm.forces(q, v, 0.0)
    tri = CUBE_P[CUBE_T]
    for k, c in enumerate(centers):
        found = [sampled_closest(c, t) for t in tri]
        dist = [np.linalg.norm(c - p) for p, _ in found]
        j = int(np.argmin(dist))
        err = found[j][1]
        assert pen[k] == pytest.approx(radius - dist[j], abs=err)
        f = -F[balls[k].offset:balls[k].offset + 3]             # the force on the ball (generalized r part)
        direction = (c - found[j][0]) / dist[j]
        assert np.linalg.norm(f / np.linalg.norm(f) - direction) < 2.0 * err / dist[j]
        assert np.linalg.norm(f) == pytest.approx(1e5 * (radius - dist[j]) ** 1.5, rel=1e-5)   # one contact only


# -- node contacts of a flexible beam -------------------------------------------------------------------
def cantilever(n_modes=4):
    from flexmb.fem.materials import Material
    from flexmb.fem.model import FEModel
    from flexmb.fem.sections import BeamSection
    from flexmb.reduction import craig_bampton
    from verification.fem.meshes import line_mesh
    model = FEModel(line_mesh(6, 2.0), Material(E=2e10, nu=0.3, rho=2000.0),
                    sections=BeamSection.rectangle(0.05, 0.03, nu=0.3), beam="euler-bernoulli")
    return model, craig_bampton(model, {"root": "root", "tip": "tip"}, n_modes=n_modes, reference="root")


def test_cantilever_pushed_onto_a_plane_stops_at_the_plane():
    """A 50 N tip load bends the cantilever down by u_free; a plane at half that depth stops the tip
    there. Statics (linear beam): the contact carries P (1 - y_plane/u_free) -- checked against the law."""
    model, modes = cantilever()
    P = 50.0
    f = np.zeros(model.ndof)
    f[model.dofs(6, "uy")] = -P
    u_free = -model.static(f, model.dofs("root"))[model.dofs(6, "uy")][0]
    s = fm.System()
    body = s.add(fm.FlexibleBody(modes, damping=0.7, stiffening=False))
    s.add(fm.Fixed(s.ground, body, (0, 0, 0)))
    s.add(fm.NodalForce(body, "tip", (0.0, -P, 0.0)))
    law = LankaraniNikravesh(1e8, 0.5)
    y_plane = -0.5 * u_free
    s.add(NodePlaneContact(s.ground, body, nodes=np.arange(7), point=(0, y_plane, 0), normal=(0, 1, 0), law=law))
    res = fm.simulate(s, 0.8, 2e-3, h_contact=5e-4)
    tip = res.node_position(body, 6)
    assert tip[:, 1].min() > y_plane - 1.5e-2 * u_free      # the impact penetrates 0.9 % of u_free, then it rests
    F_contact = P * (1.0 - 0.5)
    pen = (F_contact / law.K) ** (1 / law.n)
    assert tip[-1, 1] == pytest.approx(y_plane - pen, abs=1e-3 * u_free)
    free = fm.System()
    b2 = free.add(fm.FlexibleBody(modes, damping=0.7, stiffening=False))
    free.add(fm.Fixed(free.ground, b2, (0, 0, 0)))
    free.add(fm.NodalForce(b2, "tip", (0.0, -P, 0.0)))
    assert fm.simulate(free, 0.8, 2e-3).node_position(b2, 6)[-1, 1] == pytest.approx(-u_free, rel=1e-3)


def test_node_points_are_the_node_sites():
    """The points of a node contact are the NodeSites' attachments: same body-frame point and mode shape."""
    _, modes = cantilever(3)
    s = fm.System()
    body = s.add(fm.FlexibleBody(modes, position=(0.1, 0.2, 0.3), stiffening=False))
    c = NodePlaneContact(s.ground, body, nodes=[2, 5], point=(0, -1, 0), normal=(0, 1, 0), law=LAW)
    for k, node in enumerate([2, 5]):
        site = body.node(node)
        X = body.initial_frame()[0] + body.initial_frame()[1] @ body.modes.nodes[node]
        assert np.allclose(c._u[k], site.to_local_point(X))
        assert np.allclose(c._S[k], site.point_shape(X))


def test_node_set_against_a_rigid_mesh_block():
    """The same cantilever, its nodes against a rigid two-triangle floor under the tip half: the same stop."""
    model, modes = cantilever()
    P = 50.0
    f = np.zeros(model.ndof)
    f[model.dofs(6, "uy")] = -P
    u_free = -model.static(f, model.dofs("root"))[model.dofs(6, "uy")][0]
    s = fm.System()
    body = s.add(fm.FlexibleBody(modes, damping=0.7, stiffening=False))
    s.add(fm.Fixed(s.ground, body, (0, 0, 0)))
    s.add(fm.NodalForce(body, "tip", (0.0, -P, 0.0)))
    y = -0.5 * u_free
    floor = TriangleMesh([[1.2, y, -1], [2.5, y, -1], [2.5, y, 1], [1.2, y, 1]], SQUARE_T)
    law = LankaraniNikravesh(1e8, 0.5)
    s.add(NodeMeshContact(s.ground, body, nodes="tip", mesh=floor, law=law))
    res = fm.simulate(s, 0.8, 2e-3, h_contact=5e-4)
    pen = (0.5 * P / law.K) ** (1 / law.n)
    assert res.node_position(body, 6)[-1, 1] == pytest.approx(y - pen, abs=1e-3 * u_free)


# -- sphere clouds ------------------------------------------------------------------------------------------
def test_sphere_cloud_equals_pairwise_contacts():
    law = LankaraniNikravesh(1e9, 0.8)

    def build(cloud):
        s = fm.System(gravity=(0, -9.81, 0))
        pos = [(0, R + 1e-4, 0), (0.3 * R, 3.1 * R, 0.1 * R), (-0.2 * R, 5.3 * R, 0.0)]
        vel = [(0, -0.5, 0), (0, -1.0, 0.1), (0.2, -1.5, 0)]
        bs = [s.add(fm.RigidBody(MASS, (1e-6,) * 3, position=p, velocity=w, name=f"s{k}"))
              for k, (p, w) in enumerate(zip(pos, vel))]
        if cloud:
            s.add(SphereCloudContact(bs, pos, R, law, planes=[(s.ground, (0, 0, 0), (0, 1, 0))], margin=R))
        else:
            for i in range(3):
                s.add(fm.SpherePlaneContact(s.ground, bs[i], point=(0, 0, 0), normal=(0, 1, 0), center=pos[i], radius=R,
                                            law=law))
                for j in range(i + 1, 3):
                    s.add(fm.SphereSphereContact(bs[i], bs[j], center_a=pos[i], center_b=pos[j], radius_a=R, radius_b=R,
                                                 law=law))
        return s, bs

    (s1, b1), (s2, b2) = build(False), build(True)
    r1 = fm.simulate(s1, 4e-3, 2e-5, h_contact=2e-6)
    r2 = fm.simulate(s2, 4e-3, 2e-5, h_contact=2e-6)
    for a, b in zip(b1, b2):
        assert np.allclose(r1.position(a), r2.position(b), atol=1e-10)
    assert s2.compile().contacts[-1].stats["candidates_evaluated"] > 0


def test_missed_pairs_are_reported():
    """With a zero margin and a step that jumps far into the plane, the pair was no candidate: a warning."""
    s = fm.System()
    b = s.add(fm.RigidBody(MASS, (1e-6,) * 3, position=(0, 2 * R, 0), velocity=(0, -20.0, 0)))
    s.add(SphereCloudContact([b], [(0, 2 * R, 0)], R, LAW, planes=[(s.ground, (0, 0, 0), (0, 1, 0))], margin=1e-9))
    asm = s.compile()
    q, v = asm.initial_state()
    asm.step_end(q, v, np.zeros(asm.m), 0.0)
    q[1] = 0.5 * R
    with pytest.warns(ContactMarginWarning, match="increase the contact's margin"):
        asm.step_end(q, v, np.zeros(asm.m), 1e-3)


def test_bad_input_is_refused():
    s = fm.System()
    a = s.add(fm.RigidBody(1.0, (1, 1, 1)))
    mesh = TriangleMesh(SQUARE_P, SQUARE_T)
    with pytest.raises(ModelError, match="radius must be positive"):
        SphereMeshContact(s.ground, a, mesh=mesh, center=(0, 0, 0), radius=0.0, law=LAW)
    with pytest.raises(ModelError, match="law must be a contact law"):
        SphereMeshContact(s.ground, a, mesh=mesh, center=(0, 0, 0), radius=0.1, law=1.0)
    with pytest.raises(ModelError, match="and itself"):
        SphereMeshContact(a, a, mesh=mesh, center=(0, 0, 0), radius=0.1, law=LAW)
    with pytest.raises(ModelError, match="must belong to a flexible body"):
        NodePlaneContact(s.ground, a, nodes=[0], point=(0, 0, 0), normal=(0, 1, 0), law=LAW)
    with pytest.raises(ModelError, match="coupling must be"):
        SphereCloudContact([a], [(0, 0, 0)], 0.1, LAW, coupling="dense")
    with pytest.raises(ModelError, match="centers must be 1 finite points"):
        SphereCloudContact([a], [(0, 0, 0), (1, 1, 1)], 0.1, LAW)
    _, modes = cantilever(2)
    f = s.add(fm.FlexibleBody(modes, stiffening=False))
    with pytest.raises(ModelError, match="does not lie on the mesh nodes"):
        SphereMeshContact(f, a, mesh=mesh, center=(0, 0, 0), radius=0.1, law=LAW)


# -- Newton blocks against central differences -------------------------------------------------------------
def plate_body():
    from flexmb.fem.materials import Material
    from flexmb.fem.model import FEModel
    from flexmb.reduction import craig_bampton
    from verification.fem.meshes import plate_grid
    mesh = plate_grid(3, 0.9, tri=True)
    mesh.add_node_set("edge", np.flatnonzero(mesh.points[:, 0] < 1e-9))
    model = FEModel(mesh, Material(E=2e8, nu=0.3, rho=1000.0), thickness=0.02)
    modes = craig_bampton(model, {"edge": "edge"}, n_modes=3, reference="edge")
    return mesh, modes


def fd(f, x, eps=1e-6):
    return np.array([(f(x + eps * e) - f(x - eps * e)) / (2 * eps) for e in np.eye(x.size)]).T


def check_blocks(s, min_active):
    asm = s.compile()
    q0, v0 = asm.initial_state()
    q = q0 + 0.005 * rng.standard_normal(q0.size)
    v = v0 + 0.3 * rng.standard_normal(q0.size)
    a, lam, t = rng.standard_normal(q0.size), rng.standard_normal(asm.m), 0.3
    asm.step_end(q, v, lam, t)
    active = sum(int(np.sum(g.penetration(asm.eval_state(q, v, 0 * v, 0.0)) > 0)) for g in asm.contacts)
    assert active >= min_active
    for coef, fun, x in [((0, 0, 1, 1, 0), lambda x: asm.residual(x, v, a, lam, t)[0], q),
                         ((0, 1, 0, 0, 0), lambda x: asm.residual(q, x, a, lam, t)[0], v)]:
        S = asm.residual(q, v, a, lam, t, coef=coef)[2]
        S = (S.toarray() if sp.issparse(S) else S)[:asm.nq, :asm.nq]
        ref = fd(fun, x)
        assert np.abs(S - ref).max() <= 1e-6 * max(1.0, np.abs(ref).max()), coef


def test_newton_blocks_sphere_on_flexible_plate():
    mesh, modes = plate_body()
    s = fm.System()
    plate = s.add(fm.FlexibleBody(modes, orientation=fm.rotations.from_axis_angle((1, 2, 0.5), 0.3),
                                  modal_coordinates=[0.01, -0.02, 0.015], stiffening=False, name="plate"))
    surf = TriangleMesh.from_femesh(mesh)
    r, A = plate.initial_frame()
    law = Flores(1e4, 0.7)
    for k, (lx, ly, h) in enumerate([(0.45, 0.45, 0.1), (0.2, 0.65, 0.05), (0.95, 0.5, 0.08), (0.96, 0.97, 0.08)]):
        c = r + A @ (lx, ly, h)
        ball = s.add(fm.RigidBody(1.0, (1, 2, 3), position=c, name=f"ball{k}"))
        s.add(SphereMeshContact(plate, ball, mesh=surf, center=c, radius=0.2, law=law))
    check_blocks(s, 4)


def test_newton_blocks_nodes_of_flexible_plate_on_rigid_mesh_and_plane():
    mesh, modes = plate_body()
    s = fm.System()
    plate = s.add(fm.FlexibleBody(modes, position=(0.0, 0.05, 0.0),
                                  orientation=fm.rotations.from_axis_angle((1, 0, 0), -np.pi / 2),
                                  stiffening=False, name="plate"))
    block = s.add(fm.RigidBody(2.0, (1, 2, 3), position=(0.3, -0.5, 0.2), name="block"))
    s.add(NodeMeshContact(block, plate, nodes=np.arange(16), mesh=TriangleMesh(CUBE_P - 0.5, CUBE_T, closed=True),
                          law=HuntCrossley(1e4, 0.8), thickness=0.06, margin=1.0))
    s.add(NodePlaneContact(s.ground, plate, nodes=np.arange(16), point=(0, 0.03, 0), normal=(0.1, 1, 0),
                           law=LankaraniNikravesh(1e4, 0.6),
                           thickness=0.02, margin=1.0))
    check_blocks(s, 5)


def test_newton_blocks_sphere_cloud_uncoupled_pairs_keep_the_residual_exact():
    """coupling='none': the residual is exact, the Newton matrix drops the i-j coupling of a touching pair."""
    s = fm.System()
    bs = [s.add(fm.RigidBody(1.0, (1, 2, 3), position=(0.5 * k, 0, 0), name=f"b{k}")) for k in range(3)]
    cloud = s.add(SphereCloudContact(bs, [(0.5 * k, 0, 0) for k in range(3)], 0.3, Flores(1e4, 0.7), coupling="none"))
    asm = s.compile()
    q, v = asm.initial_state()
    asm.step_end(q, v, np.zeros(asm.m), 0.0)
    S = asm.residual(q, v, 0 * v, np.zeros(asm.m), 0.0, coef=(0, 0, 1, 1, 0))[2]
    S = S.toarray() if sp.issparse(S) else S
    ref = fd(lambda x: asm.residual(x, v, 0 * v, np.zeros(asm.m), 0.0)[0], q)
    for i in range(3):
        for j in range(3):
            blk = np.s_[7 * i:7 * i + 3, 7 * j:7 * j + 3]
            if i == j:
                assert np.allclose(S[blk], ref[blk], atol=1e-6 * np.abs(ref).max())
            else:
                assert np.abs(S[blk]).max() == 0.0 and (abs(i - j) > 1 or np.abs(ref[blk]).max() > 0)
    assert cloud.coupling == "none"


def test_no_warning_in_a_normal_run():
    s, _ = ball_system(True)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ContactMarginWarning)
        fm.simulate(s, 1e-3, 2e-5, h_contact=2e-6)
