"""The compiled narrow phase of sphere clouds (flexmb/compiled/spheres.py) against the vectorized numpy evaluation it
replaces (``residual_numpy``, through flexmb/kinematics.py) and against central differences.

Both evaluate the same expressions (measure, law, exact blocks) in another order of floating-point operations:
residuals and blocks agree to 1e-12 relative to their largest entry. The blocks are the exact derivatives of the
residual: central differences with step 1e-7 agree to 1e-6 relative (truncation ~ h^2 |r'''| and round-off
~ eps |r| / h, both far below that for these smooth laws away from a contact's onset).
"""
from __future__ import annotations

import numpy as np
import pytest

import flexmb as fm
from flexmb.contact import LankaraniNikravesh, LinearSpringDamper
from flexmb.contact.mesh import SphereCloudContact
from flexmb.contact.spheres import PlaneGroup, SphereGroup
from flexmb.groups import EvalState
from flexmb.joints.kernels import extend

R = 0.01


def _cloud(coupling: str, law) -> tuple:
    """Eight spheres on a 2 x 2 x 2 lattice, closer than a diameter (every neighbour pair penetrates), the lowest
    layer below the floor, a wall through the first column; random velocities and spins."""
    rng = np.random.default_rng(3)
    s = fm.System(gravity=(0.0, -9.81, 0.0), name="cloud")
    pos = np.array([(i, j, k) for i in range(2) for j in range(2) for k in range(2)], float) * 1.9 * R
    pos += np.array([0.5 * R, 0.8 * R, 0.0]) + rng.uniform(-0.02 * R, 0.02 * R, pos.shape)
    bodies = [s.add(fm.RigidBody(0.03, (1e-6, 1.2e-6, 0.9e-6), position=p, velocity=rng.normal(0.0, 0.3, 3),
                                 angular_velocity=rng.normal(0.0, 5.0, 3), name=f"b{k}"))
              for k, p in enumerate(pos)]
    # off-centre spheres: the contact measures then depend on the rotations too
    centres = pos + rng.uniform(-0.1 * R, 0.1 * R, pos.shape)
    s.add(SphereCloudContact(bodies, centres, R, law, planes=[(s.ground, (0, 0, 0), (0, 1, 0)),
                                                                (s.ground, (0, 0, 0), (1, 0, 0))],
                             margin=R, coupling=coupling, name="cloud"))
    asm = s.compile()
    q, v = asm.initial_state()
    asm.start(q, v)
    return asm, q, v


def _state(asm, q, v):
    qe, ve = extend(q, v)
    return EvalState(q, v, np.zeros(asm.nq), 0.0, qe, ve)


LAWS = {"hertz": LankaraniNikravesh(1e9, 0.5), "linear": LinearSpringDamper(1e5, 0.5, 0.015)}


@pytest.mark.parametrize("coupling", ["all", "none"])
@pytest.mark.parametrize("law", ["hertz", "linear"])
def test_compiled_narrow_phase_equals_numpy(coupling, law):
    asm, q, v = _cloud(coupling, LAWS[law])
    groups = [g for g in asm.families if isinstance(g, (SphereGroup, PlaneGroup))]
    assert {type(g) for g in groups} == {SphereGroup, PlaneGroup}
    rng = np.random.default_rng(7)
    st = _state(asm, q, v + rng.normal(0.0, 0.05, v.size))
    coef = (0.7, 1e-3, 1e-6)
    touching = 0
    for g in groups:
        assert g.n_candidates > 0
        g.use_kernel, g._cache = False, []
        r0, b0 = g.residual(st, coef)                       # numpy alone (flexmb/kinematics.py)
        d0 = g.penetration(st)
        g.use_kernel, g._cache = True, []
        r1, b1 = g.residual(st, coef)
        d1 = g.penetration(st)
        cand = np.isfinite(d0)                                # -inf: not a candidate (plane combinations)
        assert np.array_equal(cand, np.isfinite(d1))
        assert np.max(np.abs(d1[cand] - d0[cand])) <= 1e-15   # m: penetrations of ~1e-3 m, to round-off
        assert np.max(np.abs(r0)) > 0.0
        touching += np.count_nonzero(np.abs(r0).sum(axis=1))
        assert np.max(np.abs(r1 - r0)) <= 1e-12 * np.max(np.abs(r0))
        assert np.max(np.abs(b1 - b0)) <= 1e-12 * np.max(np.abs(b0))
        r2, none = g.residual(st, None)
        assert none is None and np.max(np.abs(r2 - r0)) <= 1e-12 * np.max(np.abs(r0))
    assert touching >= 4


@pytest.mark.parametrize("coupling", ["all", "none"])
def test_compiled_blocks_are_the_derivatives(coupling):
    """dr/dq (coef (0, 0, 1)) and dr/dv (coef (0, 1, 0)) of the compiled kernel against central differences of its
    residual, scattered to system coordinates (coupled slots: the whole pair block; self slots: the own-body
    blocks only, which is what a self slot keeps)."""
    asm, q, v = _cloud(coupling, LAWS["hertz"])
    g = next(g for g in asm.families if isinstance(g, SphereGroup))
    sc = g.scatter
    st = _state(asm, q, v)

    def assemble(r):
        out = np.zeros(asm.nq)
        ok = sc >= 0
        np.add.at(out, sc[ok], r[ok])
        return out

    def matrix(blk):
        M = np.zeros((asm.nq, asm.nq))
        for s, b in zip(sc, blk):
            ok = s >= 0
            M[np.ix_(s[ok], s[ok])] += b[np.ix_(ok, ok)]
        return M

    for which, coef in ((0, (0.0, 0.0, 1.0)), (1, (0.0, 1.0, 0.0))):
        K = matrix(g.residual(st, coef)[1])
        cols = np.unique(sc[sc >= 0])
        h = 1e-7
        D = np.zeros((asm.nq, asm.nq))
        for c in cols:
            x = [q.copy(), v.copy()]
            x[which][c] += h
            rp = assemble(g.residual(_state(asm, *x), None)[0])
            x[which][c] -= 2 * h
            rm = assemble(g.residual(_state(asm, *x), None)[0])
            D[:, c] = (rp - rm) / (2 * h)
        if coupling == "none":          # self slots keep the own-body blocks only
            own = np.zeros_like(D, dtype=bool)
            for b in range(len(asm.system.bodies)):
                i = np.arange(7 * b, 7 * b + 7)
                own[np.ix_(i, i)] = True
            D = np.where(own, D, 0.0)
        scale = np.max(np.abs(D))
        assert scale > 0.0
        assert np.max(np.abs(K - D)) <= 1e-6 * scale


@pytest.mark.parametrize("n, spread", [(0, 1.0), (1, 1.0), (300, 0.1), (2000, 0.3), (500, 50.0)])
def test_grid_broad_phase_finds_the_pairs_of_the_tree_search(n, spread):
    """The compiled grid search returns exactly the pairs of ``broadphase.sphere_pairs`` (cKDTree), in the same
    order: clustered and sparse clouds, mixed radii, pairs of one group excluded."""
    from flexmb.compiled.spheres import grid_pairs
    from flexmb.contact.broadphase import sphere_pairs
    rng = np.random.default_rng(n)
    c = rng.uniform(0.0, spread, (n, 3))
    e = rng.uniform(0.005, 0.02, n)
    e[::50] *= 5.0                                            # a few large ones
    g = rng.integers(0, max(n // 3, 1), n)
    i0, j0 = sphere_pairs(c, e, g)
    i1, j1 = grid_pairs(c, e, g.astype(np.int64))
    assert np.array_equal(i0, i1) and np.array_equal(j0, j1)
    if n >= 300 and spread < 1.0:
        assert i0.size > n                                    # a dense cloud: many pairs


def _moving_lid_cloud() -> fm.System:
    """The eight off-centre spinning spheres of :func:`_cloud` under gravity, the floor and a wall of the ground, and
    a tilted lid (a plane of a rigid body) coming down onto them: planes of a moving rotated body, spheres away from
    their bodies' origins."""
    rng = np.random.default_rng(3)
    s = fm.System(gravity=(0.0, -9.81, 0.0), name="lid")
    pos = np.array([(i, j, k) for i in range(2) for j in range(2) for k in range(2)], float) * 1.9 * R
    pos += np.array([0.5 * R, 1.05 * R, 0.0]) + rng.uniform(-0.02 * R, 0.02 * R, pos.shape)
    bodies = [s.add(fm.RigidBody(0.03, (1e-6, 1.2e-6, 0.9e-6), position=p, velocity=rng.normal(0.0, 0.3, 3),
                                 angular_velocity=rng.normal(0.0, 5.0, 3), name=f"b{k}"))
              for k, p in enumerate(pos)]
    centres = pos + rng.uniform(-0.1 * R, 0.1 * R, pos.shape)
    top = pos[:, 1].max() + 1.3 * R
    lid = s.add(fm.RigidBody(0.5, (1e-4, 1e-4, 1e-4), position=(0.02, top, 0.01), velocity=(0.0, -0.8, 0.0),
                             angular_velocity=(0.0, 3.0, 0.0), name="lid"))
    s.add(SphereCloudContact(bodies, centres, R, LAWS["hertz"],
                             planes=[(s.ground, (0, 0, 0), (0, 1, 0)), (s.ground, (0, 0, 0), (1, 0, 0)),
                                     (lid, (0.02, top, 0.01), (0.05, -1.0, 0.03))], margin=R, name="cloud"))
    return s


@pytest.mark.parametrize("energy", [True, False])
def test_compiled_step_end_equals_the_numpy_one(monkeypatch, energy):
    """The step end in compiled code (``fused_accept``: flexmb/compiled/spheres.py ``cloud_pairs``, ``cloud_accept``,
    ``plane_candidates``, ``plane_accept``) against the numpy broad phase with separate kernel calls it replaces:
    the same candidates in the same order, so bit for bit the same trajectory, Newton counts, history (broad-phase
    state, approach speeds) and statistics; the contact work of the energy balance (``candidate_power``) to 1e-12
    relative (another order of summation). The broad-phase gaps are computed in another order of operations for
    rotated bodies (equal to round-off, ~1e-18 m, far from any skin boundary here)."""
    from flexmb.contact.candidates import CandidateGroup
    runs = []
    for fused in (True, False):
        monkeypatch.setattr(CandidateGroup, "fused_accept", fused)
        s = _moving_lid_cloud()
        res = fm.simulate(s, t_end=4e-3, h=5e-5, energy=energy)
        groups = [g for g in s.compile().families if isinstance(g, (SphereGroup, PlaneGroup))]
        runs.append((res, groups))
    (a, ga), (b, gb) = runs
    assert "completed" in a.message and a.message == b.message
    assert np.array_equal(a.t, b.t) and np.array_equal(a.q, b.q) and np.array_equal(a.v, b.v)
    assert a.stats["newton_iterations"] == b.stats["newton_iterations"] and a.stats["rejected"] == b.stats["rejected"]
    assert np.array_equal(a.history, b.history)
    if energy:      # the compiled power sums the candidates in order, numpy pairwise: equal to round-off
        scale = np.max(np.abs(b.work_nc))
        assert scale > 0.0 and np.max(np.abs(a.work_nc - b.work_nc)) <= 1e-12 * scale
    for g, h in zip(ga, gb):
        assert {k: v for k, v in g.stats.items() if not k.endswith("_s")} == \
            {k: v for k, v in h.stats.items() if not k.endswith("_s")}
    sph = next(g for g in ga if isinstance(g, SphereGroup))
    lid = next(g for g in ga if isinstance(g, PlaneGroup))
    assert sph.stats["rebuilds"] > 50 and sph.n_candidates > 0
    assert np.any(lid.combos[lid.cand, 1] == 2)             # the lid's plane has candidates at the end


def test_compiled_positions_equal_the_numpy_ones():
    """:func:`flexmb.compiled.spheres.point_positions` (the broad phase's centres) against
    flexmb/contact/surface.py ``_global_points``: rotated bodies, off-origin points, modal shapes."""
    from flexmb.compiled.spheres import point_positions
    from flexmb.contact.surface import _global_points
    rng = np.random.default_rng(5)
    nb, n, m = 4, 12, 3
    qe = rng.normal(size=nb * (7 + m))
    for b in range(nb):
        p = qe[b * (7 + m) + 3:b * (7 + m) + 7]
        p /= np.linalg.norm(p)
    F = np.array([b * (7 + m) + np.arange(7) for b in range(nb)], dtype=np.int64)
    M = np.array([b * (7 + m) + 7 + np.arange(m) for b in range(nb)], dtype=np.int64)
    body = rng.integers(0, nb, n).astype(np.int64)
    for mm, u in ((m, rng.normal(size=(n, 3))), (0, rng.normal(size=(n, 3))), (0, np.zeros((n, 3)))):
        S = rng.normal(size=(n, 3, mm))
        X = np.empty((n, 3))
        point_positions(qe, F, M[:, :mm], body, u, S, X)
        ref, _ = _global_points(qe, np.zeros_like(qe), F[body], M[body, :mm], u, S if mm else None)
        assert np.max(np.abs(X - ref)) <= 1e-15 * np.max(np.abs(ref))


def test_compiled_step_end_reports_missed_sphere_pairs():
    """Two spheres far apart with a tiny margin: no candidate pair; an accepted state where they overlap by
    2 mm is a pair the broad phase missed during the step -- the compiled step end warns with its depth, as the
    numpy one does."""
    from flexmb.errors import ContactMarginWarning
    s = fm.System()
    a = s.add(fm.RigidBody(0.03, (1e-6,) * 3, position=(0.0, 0.0, 0.0)))
    b = s.add(fm.RigidBody(0.03, (1e-6,) * 3, position=(0.1, 0.0, 0.0)))
    s.add(SphereCloudContact([a, b], [(0.0, 0.0, 0.0), (0.1, 0.0, 0.0)], R, LAWS["hertz"], margin=1e-9))
    asm = s.compile()
    g = next(g for g in asm.families if isinstance(g, SphereGroup))
    q, v = asm.initial_state()
    asm.start(q, v)
    asm.step_end(q, v, np.zeros(asm.m), 0.0)
    assert g.n_candidates == 0
    q[7] = 2.0 * R - 2e-3
    with pytest.warns(ContactMarginWarning, match=r"1 pair\(s\) penetrated by up to 0.002 m"):
        asm.step_end(q, v, np.zeros(asm.m), 1e-3)
    assert g.n_candidates == 1 and g.stats["missed"] == 1


def _flexible_cloud() -> fm.System:
    """Spheres (R = 0.1 m) on three nodes of each of two flexible Craig-Bampton beams (1.5 m; 3 fixed-interface
    modes and the tip's 6 constraint modes), the upper beam's spheres 1 cm into the lower one's, over a floor:
    sphere clouds on bodies with modes (attachment shapes in the measures and the broad phase)."""
    from flexmb.fem.materials import Material
    from flexmb.fem.model import FEModel
    from flexmb.fem.sections import BeamSection
    from flexmb.reduction import craig_bampton
    from verification.fem.meshes import line_mesh

    def beam(name, position):
        model = FEModel(line_mesh(4, 1.5, direction=(1.0, 0.0, 0.0)), Material(E=2e9, nu=0.3, rho=2000.0),
                        sections=BeamSection.rectangle(0.05, 0.03, nu=0.3))
        modes = craig_bampton(model, {"root": "root", "tip": "tip"}, n_modes=3, reference="root")
        return fm.FlexibleBody(modes, position=position, damping=0.02, name=name)

    s = fm.System(gravity=(0.0, -9.81, 0.0), name="flexible cloud")
    f = s.add(beam("f", (0.0, 0.0, 0.0)))
    g = s.add(beam("g", (0.05, 0.19, 0.0)))
    sites, centres = [], []
    for body in (f, g):
        for k in (2, 3, 4):
            site = body.node(k)
            sites.append(site)
            centres.append(body.initial_frame()[0] + body.initial_frame()[1] @ body.modes.nodes[k])
    s.add(SphereCloudContact(sites, centres, 0.1, LankaraniNikravesh(1e6, 0.5),
                             planes=[(s.ground, (0, -0.12, 0), (0, 1, 0))], margin=0.05, name="cloud"))
    return s


def test_compiled_step_end_of_flexible_sphere_clouds(monkeypatch):
    """Sphere clouds on flexible bodies through the compiled step end: bit for bit the numpy step end's trajectory,
    Newton counts and history (the candidates' attachment shapes fill the kernel arrays; the broad phase places the
    spheres with the modes)."""
    from flexmb.contact.candidates import CandidateGroup
    runs = []
    for fused in (True, False):
        monkeypatch.setattr(CandidateGroup, "fused_accept", fused)
        s = _flexible_cloud()
        runs.append((fm.simulate(s, t_end=3e-3, h=1e-4, energy=False), s.compile()))
    (a, asm), (b, _) = runs
    assert "completed" in a.message and a.message == b.message
    assert np.array_equal(a.q, b.q) and np.array_equal(a.history, b.history)
    assert a.stats["newton_iterations"] == b.stats["newton_iterations"]
    sph = next(g for g in asm.families if isinstance(g, SphereGroup))
    assert sph.m == asm.system.bodies[0].n_modes > 0 and sph.n_candidates >= 3
    assert np.max(np.abs(a.q[-1] - a.q[0])) > 1e-6
