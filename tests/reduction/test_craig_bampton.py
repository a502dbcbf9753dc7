"""Craig-Bampton and free-free mode sets with interface points (flexmb/reduction/).

Static checks rest on a property of both bases: the constraint modes (residual attachment
modes) span the static response to interface-point loads exactly, so a static load through an
interface point gives the full model's answer up to rounding amplified by the conditioning of
the slender test beams (~1e-9 relative; tolerance 1e-7).
"""
from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg as sla

from flexmb.errors import ModelError
from flexmb.fem.materials import Material
from flexmb.fem.mesh import read_mesh
from flexmb.fem.model import FEModel
from flexmb.fem.sections import BeamSection
from flexmb.reduction import craig_bampton, free_free_modes, normal_modes, rigid_body_modes
from flexmb.reduction.interfaces import resolve_interfaces

STEEL = Material(E=210e9, nu=0.3, rho=7850.0)
SECTION = BeamSection.rectangle(0.02, 0.02)
STATIC_RTOL = 1e-7


@pytest.fixture(scope="module")
def beam():
    return FEModel(read_mesh("meshes/beam_line.msh"), STEEL, sections=SECTION)


@pytest.fixture(scope="module")
def solid():
    return FEModel(read_mesh("meshes/beam_solid.msh"), STEEL)


def point_response(ms, name: str, load: np.ndarray) -> np.ndarray:
    """Interface-point motion (6,) of the reduced model under a static point load (6,)."""
    psi = ms.interface(name).psi
    return psi @ np.linalg.solve(ms.K, psi.T @ load)


def average_point(model, set_name):
    return resolve_interfaces(model, {set_name: set_name}, "average")[0]


def test_cantilever_converges_to_full_model(beam):
    """Root clamped, tip interface: relative error of the lowest 4 frequencies vs the full model
    falls with the number of fixed-interface modes n (first bending pair: 3.5e-4 at n = 2,
    6.0e-5 at n = 4, 5.8e-6 at n = 8)."""
    full = normal_modes(beam, 4, fixed="root").frequencies_hz
    errors = []
    for n in (2, 4, 8):
        ms = craig_bampton(beam, {"tip": "tip"}, n_modes=n, fixed="root", stress=False)
        assert ms.n_modes == n + 6 and ms.is_orthonormal()
        errors.append(np.abs(ms.frequencies_hz[:4] / full - 1))
    errors = np.array(errors)
    assert np.all(errors >= -1e-12) and np.all(np.diff(errors, axis=0) < 0)
    assert np.all(errors[:, 0] < [4e-4, 7e-5, 7e-6])


def test_reference_interface_is_a_tangent_frame(beam):
    """reference='root' drops the root's constraint modes: same set as clamping the root."""
    clamped = craig_bampton(beam, {"tip": "tip"}, n_modes=4, fixed="root", stress=False)
    tangent = craig_bampton(beam, {"root": "root", "tip": "tip"}, n_modes=4, reference="root", stress=False)
    np.testing.assert_allclose(tangent.frequencies_hz, clamped.frequencies_hz, rtol=1e-9)
    assert np.abs(tangent.interface("root").psi).max() == 0.0
    assert tangent.reference == "root"
    np.testing.assert_allclose(tangent.interface("root").position, [0, 0, 0], atol=1e-15)


def test_floating_set_has_rigid_modes_removed(beam):
    """No reference, no supports: 6 rigid-body directions projected out and dropped; the modes
    are mass-orthogonal to the rigid-body modes and approach the free-free frequencies."""
    ms = craig_bampton(beam, {"root": "root", "tip": "tip"}, n_modes=8, stress=False)
    assert ms.n_modes == 8 + 12 - 6 and ms.info["rigid_modes_removed"] == 6
    R = rigid_body_modes(beam.points, 6)
    assert np.abs(R.T @ beam.M @ ms.phi).max() < 1e-10
    free = normal_modes(beam, 4).frequencies_hz
    np.testing.assert_allclose(ms.frequencies_hz[:4], free, rtol=2e-3)       # 4.4e-4 measured


def test_single_floating_interface_keeps_only_elastic_shapes(beam):
    """One interface, no reference, no supports: its six constraint modes are rigid-body motions
    and all six are dropped; the fixed-interface modes remain, projected mass-orthogonal to R."""
    ms = craig_bampton(beam, {"tip": "tip"}, n_modes=6, stress=False)
    assert ms.n_modes == 6
    R = rigid_body_modes(beam.points, 6)
    assert np.abs(R.T @ beam.M @ ms.phi).max() < 1e-10
    assert np.all(ms.frequencies_hz >= normal_modes(beam, 6).frequencies_hz * (1 - 1e-9))    # Rayleigh-Ritz


def test_rigid_interface_stiffens_average_does_not():
    """Plate clamped at x = 0, interface on the edge x = 1, unit twisting moment about x: RBE3
    matches the full model loaded by the RBE3 distribution; RBE2 keeps the edge straight and
    twists about 30 % less."""
    plate = FEModel(read_mesh("meshes/plate_quad.msh"), STEEL, thickness=0.01)
    load = np.array([0, 0, 0, 1.0, 0, 0])
    rot = {c: point_response(craig_bampton(plate, {"e": "edge_x1"}, n_modes=4, fixed="edge_x0", connection=c,
                                           stress=False), "e", load)[3] for c in ("rigid", "average")}
    p = average_point(plate, "edge_x1")
    f = np.zeros(plate.ndof)
    f[p.dofs] = p.G.T @ load
    u = plate.static(f, plate.dofs("edge_x0"))
    assert rot["average"] == pytest.approx((p.G @ u[p.dofs])[3], rel=STATIC_RTOL)
    assert 0.6 < rot["rigid"] / rot["average"] < 0.75


def test_average_tip_load_on_solid_beam():
    """hex20 cantilever, tip force 100 N through an RBE3 point: full-model tip motion (1e-7) and
    within 0.5 % of Euler-Bernoulli P L^3 / (3 E I) (shear and 3D effects); RBE2 is stiffer."""
    model = FEModel(read_mesh("meshes/beam_solid_hex20.msh"), STEEL)
    load = np.array([0, 0, 100.0, 0, 0, 0])
    w = {c: point_response(craig_bampton(model, {"tip": "tip"}, n_modes=2, fixed="root", connection=c,
                                         stress=False), "tip", load)[2] for c in ("rigid", "average")}
    p = average_point(model, "tip")
    f = np.zeros(model.ndof)
    f[p.dofs] = p.G.T @ load
    u = model.static(f, model.dofs("root"))
    assert w["average"] == pytest.approx((p.G @ u[p.dofs])[2], rel=STATIC_RTOL)
    assert w["average"] == pytest.approx(100.0 / (3 * STEEL.E * 0.02**4 / 12), rel=5e-3)
    assert w["rigid"] < w["average"]


def test_average_interfaces_on_a_free_body(solid):
    """Only RBE3 points and no supports: K_ii is singular, the shifted factorization (sigma < 0)
    is refined for the constraint modes. Reference 'root': the static tip response equals the
    full model held by the RBE3 condition G_root u = 0 (dense saddle-point solve)."""
    ms = craig_bampton(solid, {"root": "root", "tip": "tip"}, n_modes=4, connection="average",
                       reference="root", stress=False)
    assert ms.info["sigma"] < 0.0
    load = np.array([0, 50.0, 0, 0, 0, 2.0])
    root, tip = average_point(solid, "root"), average_point(solid, "tip")
    n = solid.ndof
    G = np.zeros((6, n))
    G[:, root.dofs] = root.G
    f = np.zeros(n)
    f[tip.dofs] = tip.G.T @ load
    kkt = np.block([[solid.K.toarray(), G.T], [G, np.zeros((6, 6))]])
    u = sla.solve(kkt, np.concatenate([f, np.zeros(6)]))[:n]
    np.testing.assert_allclose(point_response(ms, "tip", load), tip.G @ u[tip.dofs], rtol=STATIC_RTOL,
                               atol=STATIC_RTOL * np.abs(tip.G @ u[tip.dofs]).max())


def test_stress_modes_superpose_to_the_static_stress():
    """Stress per unit modal coordinate: sum eta_k sigma_k equals the full model's nodal stress."""
    plate = FEModel(read_mesh("meshes/plate_quad.msh"), STEEL, thickness=0.01)
    ms = craig_bampton(plate, {"e": "edge_x1"}, n_modes=3, fixed="edge_x0", connection="average")
    load = np.array([0, 0, 10.0, 0, 0, 0])
    psi = ms.interface("e").psi
    eta = np.linalg.solve(ms.K, psi.T @ load)
    p = average_point(plate, "edge_x1")
    f = np.zeros(plate.ndof)
    f[p.dofs] = p.G.T @ load
    ref = plate.nodal_stress(plate.static(f, plate.dofs("edge_x0")))
    np.testing.assert_allclose(ms.stress_modes @ eta, ref, rtol=0, atol=STATIC_RTOL * np.abs(ref).max())


def test_free_free_static_correction(beam):
    """Free-free modes + residual attachment modes at the tip: the elastic frequencies are kept,
    all modes are mass-orthogonal to the rigid-body modes, and a tip load gives the exact
    inertia-relief response (dense solve of K x = (I - M R R^T) f with R^T M x = 0)."""
    ms = free_free_modes(beam, 4, static_correction={"tip": "tip"}, stress=False)
    assert ms.n_modes == 10
    free = normal_modes(beam, 4)
    np.testing.assert_allclose(ms.frequencies_hz[:4], free.frequencies_hz, rtol=1e-8)
    R = free.rigid
    assert np.abs(R.T @ beam.M @ ms.phi).max() < 1e-10
    load = np.array([0, 3.0, 20.0, 1.0, 0, 0])
    tip = beam.dofs("tip")
    f = np.zeros(beam.ndof)
    f[tip] = load                                       # single node: the point is the node
    g = f - beam.M @ R @ (R.T @ f)
    MR = beam.M @ R
    kkt = np.block([[beam.K.toarray(), MR], [MR.T, np.zeros((6, 6))]])
    x = sla.solve(kkt, np.concatenate([g, np.zeros(6)]))[:beam.ndof]
    np.testing.assert_allclose(point_response(ms, "tip", load), x[tip], rtol=0,
                               atol=STATIC_RTOL * np.abs(x[tip]).max())


def test_free_free_with_rigid_patch(solid):
    """Rigid tip patch on a solid: the normal modes include it; the set is orthonormal."""
    ms = free_free_modes(solid, 4, static_correction={"tip": "tip"})
    assert ms.is_orthonormal() and ms.n_modes == 10 and ms.stress_modes.shape == (solid.n_nodes, 6, 10)
    R = rigid_body_modes(solid.points, 3)
    assert np.abs(R.T @ solid.M @ ms.phi).max() < 1e-10
    plain = normal_modes(solid, 4).frequencies_hz
    assert np.all(ms.frequencies_hz[:4] >= plain * (1 - 1e-9))              # the patch only stiffens


def test_bad_input(beam, solid):
    with pytest.raises(ModelError, match="reference interface 'nope'"):
        craig_bampton(beam, {"tip": "tip"}, fixed="root", reference="nope")
    with pytest.raises(ModelError, match="no node set 'nope'"):
        craig_bampton(beam, {"tip": "nope"}, fixed="root")
    with pytest.raises(ModelError, match="share 1 node"):
        craig_bampton(beam, {"a": "tip", "b": beam.mesh.node_sets["tip"]}, fixed="root")
    with pytest.raises(ModelError, match="contains fixed dofs"):
        craig_bampton(beam, {"a": "root"}, fixed="root")
    with pytest.raises(ModelError, match="needs interfaces or fixed dofs"):
        craig_bampton(beam, {})
    with pytest.raises(ModelError, match="at least 3 non-collinear nodes"):
        craig_bampton(solid, {"corner": [0]}, fixed="root")
    with pytest.raises(ModelError, match="only 114 dofs are free"):
        craig_bampton(beam, {"tip": "tip"}, n_modes=200, fixed="root")
    with pytest.raises(ModelError, match="connection must be one of"):
        craig_bampton(beam, {"tip": "tip"}, fixed="root", connection="glued")
    with pytest.raises(ModelError, match="only 120 elastic dofs"):
        free_free_modes(beam, 500)
