"""Compiled flexible-body kernels (flexmb/compiled/flexible.py, flexmb/compiled/beam.py; issue 11).

The equations themselves are checked against central differences in tests/test_jacobians.py and
tests/test_flexible_body.py; here: the packed data layout, the two elastic-force paths (compiled beam
loop and one Python ``internal_force`` call per body), and the energies against the residual.
"""
from __future__ import annotations

import numpy as np
import pytest

import flexmb as fm
from flexmb.bodies.flexible_kernel import FlexibleBodyGroup
from flexmb.compiled import flexible as kernels
from flexmb.fem.materials import Material
from flexmb.fem.mesh import FEMesh
from flexmb.fem.model import FEModel
from flexmb.fem.sections import BeamSection
from flexmb.reduction import craig_bampton

STEEL = Material(E=210e9, nu=0.3, rho=7850.0)
SECTION = BeamSection.rectangle(0.02, 0.03)


def curved(n: int = 6, springs: bool = False, beam: str = "euler-bernoulli") -> FEModel:
    """A 3D space curve of ``n`` beams (varying element frames), node sets ``root`` and ``tip``."""
    s = np.linspace(0.0, 1.0, n + 1)
    points = np.column_stack([s, 0.2 * np.sin(3.0 * s), 0.1 * s**2])
    mesh = FEMesh(points, {"line": np.column_stack([np.arange(n), np.arange(1, n + 1)])},
                  node_sets={"root": [0], "tip": [n]})
    model = FEModel(mesh, STEEL, sections=SECTION, beam=beam)
    if springs:
        model.add_spring(n, [1e5, 2e5, 3e5], [10.0, 20.0, 30.0])
    return model


def modal_bodies(k: int = 3, m: int = 5) -> list:
    modes = craig_bampton(curved(8), {"root": "root"}, n_modes=m, reference="root")
    return [fm.FlexibleBody(modes, damping=0.02 + 0.01 * i, stiffening=(i != 2), name=f"mb{i}") for i in range(k)]


def beam_bodies() -> list:
    return [fm.NonlinearBeam(curved(6, springs=(i == 1), beam="timoshenko" if i == 2 else "euler-bernoulli"),
                             "root", damping=0.01, membrane="pointwise" if i % 2 else "average", name=f"nb{i}")
            for i in range(3)]


def group(bodies, gravity=(0.3, -9.81, 0.5)) -> tuple[FlexibleBodyGroup, int]:
    offset = 0
    for b in bodies:
        b.offset = offset
        offset += b.ncoord
    return FlexibleBodyGroup(bodies, np.array(gravity, dtype=float)), offset


def state(bodies, nq: int, seed: int, scale: float = 0.01):
    rng = np.random.default_rng(seed)
    q, v, a = rng.normal(size=nq) * scale, rng.normal(size=nq), rng.normal(size=nq)
    for b in bodies:
        p = rng.normal(size=4)
        q[b.offset:b.offset + 3] = rng.normal(size=3)
        q[b.offset + 3:b.offset + 7] = p / np.linalg.norm(p)
    return q, v, a


def exact_bodies() -> list:
    """Exact beams and a nonlinear beam in one group (flexmb/compiled/exact_beam.py in the group kernel)."""
    return [fm.ExactBeam(curved(6, springs=(i == 1)), "root", damping=0.01, membrane="chord" if i else "average",
                         name=f"xb{i}") for i in range(2)] + beam_bodies()[:1]


@pytest.fixture(scope="module", params=["modal", "beam", "exact"])
def bodies(request):
    return {"modal": modal_bodies, "beam": beam_bodies, "exact": exact_bodies}[request.param]()


def test_packed_views_have_the_layout_shapes(bodies):
    g, _ = group(bodies)
    tab = g._tab
    n, m, linear, stiff, ne, extra = tab[0]
    npairs = int(tab[1 + len(kernels.FLOATS) + kernels.INTS.index("pair_k"), 1])
    nx = int(tab[1 + kernels.FLOATS.index("exact_l0"), 1])
    fshapes, ishapes, wshapes = kernels.layout(n, m, npairs, bool(linear), bool(stiff), ne, bool(extra), nx)
    exact = kernels._exact(g._fdata, g._idata, g._wdata, tab)       # the exact beam's views, in each list's order
    views = (kernels._floats(g._fdata, tab) + exact[:4], kernels._ints(g._idata, tab) + exact[4:7],
             kernels._work(g._wdata, tab) + exact[7:])
    for names, shapes, got in zip((kernels.FLOATS, kernels.INTS, kernels.WORK), (fshapes, ishapes, wshapes), views):
        assert tuple(shapes) == names
        assert [x.shape for x in got] == list(shapes.values())
    # the views alias the group's buffers: the idx view is the group's coordinate map
    assert np.array_equal(kernels._ints(g._idata, tab)[0], g.idx)


def test_nodal_bodies_store_only_the_coupled_mode_pairs():
    g, _ = group(beam_bodies())
    n_pairs = kernels._ints(g._idata, g._tab)[1].size
    assert 0 < n_pairs < g.m * g.m // 2


class _Delegate:
    """A structure that is not a NonlinearBeamStructure: takes the Python path of the group."""

    def __init__(self, structure):
        self.s = structure

    def internal_force(self, u):
        return self.s.internal_force(u)

    def strain_energy(self, u):
        return self.s.strain_energy(u)

    def tangent_dense(self, u):
        return self.s.tangent_dense(u)


def test_python_structures_give_the_compiled_beam_results():
    compiled = beam_bodies()
    g, nq = group(compiled)
    python = beam_bodies()
    for b in python:
        b.structure = _Delegate(b.structure)
    h, _ = group(python)
    assert h._python_structures and not g._python_structures
    for seed in range(2):
        q, v, a = state(compiled, nq, seed)
        for coef in (None, (1.3, 0.7, 2.1)):
            _, r1, b1 = g.residual(q, v, a, coef)
            _, r2, b2 = h.residual(q, v, a, coef)
            np.testing.assert_allclose(r2, r1, rtol=1e-12, atol=1e-12 * np.abs(r1).max())
            if coef is not None:
                np.testing.assert_allclose(b2, b1, rtol=1e-12, atol=1e-12 * np.abs(b1).max())
        np.testing.assert_allclose(h.strain_energy(q), g.strain_energy(q), rtol=1e-12)
        F1, P1, _ = g.terms(q, v, a, jacobian=True)
        F2, P2, _ = h.terms(q, v, a, jacobian=True)
        np.testing.assert_allclose(F2, F1, rtol=1e-12, atol=1e-12 * np.abs(F1).max())
        for k in P1:
            np.testing.assert_allclose(P2[k], P1[k], rtol=1e-12, atol=1e-12 * np.abs(P1[k]).max())


def test_kinetic_energy_is_half_v_M_v(bodies):
    """``d r/d a`` is the mass matrix (without the stiffening terms, which depend on a0 and alpha too)."""
    bodies = [b for b in bodies if not b.stiffening]
    g, nq = group(bodies)
    q, v, a = state(bodies, nq, 3)
    idx, _, M = g.residual(q, v, a, (1.0, 0.0, 0.0))          # d r / d a = M(q)
    vb = v[idx]
    T = 0.5 * np.einsum("ni,nij,nj->", vb, M, vb)
    assert g.kinetic_energy(q, v) == pytest.approx(T, rel=1e-12)


def test_strain_energy_gradient_is_the_elastic_force(bodies):
    """At rest (v = a = 0, no gravity) F_q is the elastic force dU/deta of each body."""
    g, nq = group(bodies, gravity=(0.0, 0.0, 0.0))
    q, _, _ = state(bodies, nq, 4, scale=0.003)
    zero = np.zeros(nq)
    F, P, _ = g.terms(q, zero, zero, jacobian=True)
    U = g.strain_energy(q)
    assert np.all(U > 0.0)
    h = 1e-7
    for i, b in enumerate(bodies):
        for k in (0, 3, b.n_modes - 1):
            dq = np.zeros(nq)
            dq[b.offset + 7 + k] = h
            dU = (g.strain_energy(q + dq)[i] - g.strain_energy(q - dq)[i]) / (2 * h)
            assert dU == pytest.approx(F[i, 6 + k], rel=1e-6, abs=1e-6 * np.abs(F[i, 6:]).max())
    assert g.potential_energy(q) == pytest.approx(U.sum(), rel=1e-14)


def test_damping_power_and_gravity_potential(bodies):
    g, nq = group(bodies)
    q, v, _ = state(bodies, nq, 5)
    etad = v[g.idx[:, 7:]]
    D = np.array([b.D for b in bodies])
    assert g.damping_power(v) == pytest.approx(-np.einsum("nk,nkl,nl->", etad, D, etad), rel=1e-12)
    # -g . (m r + A S): moving every frame by d changes it by -M_total g . d
    d = np.array([0.1, -0.2, 0.3])
    qd = q.copy()
    for b in bodies:
        qd[b.offset:b.offset + 3] += d
    mass = sum(b.invariants.mass for b in bodies)
    change = g.potential_energy(qd) - g.potential_energy(q)
    assert change == pytest.approx(-mass * float(g.gravity @ d), rel=1e-9)
