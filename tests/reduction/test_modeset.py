"""ModeSet: npz round trip, orthonormality, selection, interfaces (flexmb/reduction/modeset.py)."""
from __future__ import annotations

import numpy as np
import pytest

from flexmb.errors import ModelError
from flexmb.fem.materials import Material
from flexmb.fem.mesh import read_mesh
from flexmb.fem.model import FEModel
from flexmb.fem.sections import BeamSection
from flexmb.reduction import ModeSet, craig_bampton, inertia_invariants

STEEL = Material(E=210e9, nu=0.3, rho=7850.0)


@pytest.fixture(scope="module")
def model():
    return FEModel(read_mesh("meshes/beam_line.msh"), STEEL, sections=BeamSection.rectangle(0.02, 0.02))


@pytest.fixture(scope="module")
def modeset(model):
    return craig_bampton(model, {"root": "root", "tip": "tip"}, n_modes=6, reference="root",
                         connection={"root": "rigid", "tip": "average"})


def test_orthonormal_and_consistent_with_the_model(model, modeset):
    ms = modeset
    assert ms.is_orthonormal(1e-10)
    np.testing.assert_allclose(ms.phi.T @ model.M @ ms.phi, ms.M, atol=1e-10)
    np.testing.assert_allclose(ms.phi.T @ model.K @ ms.phi, ms.K, rtol=0, atol=1e-9 * np.abs(ms.K).max())
    np.testing.assert_allclose(ms.frequencies_hz, np.sqrt(np.diag(ms.K)) / (2 * np.pi), rtol=1e-12)
    assert ms.phi.shape == (model.ndof, 12) and ms.nodes.shape == (21, 3) and ms.dofs_per_node == 6
    assert ms.stress_modes.shape == (21, 6, 12)
    tip = ms.interface("tip")
    assert tip.connection == "average" and tip.psi.shape == (6, 12)
    np.testing.assert_allclose(tip.position, [1.0, 0, 0], atol=1e-15)
    np.testing.assert_allclose(tip.psi, ms.phi[model.dofs("tip")], atol=1e-14)   # single node: the node


def test_npz_round_trip_is_exact(modeset, tmp_path):
    path = tmp_path / "beam.npz"
    modeset.save(path)
    back = ModeSet.load(path)
    for name in ("phi", "nodes", "M", "K", "stress_modes"):
        np.testing.assert_array_equal(getattr(back, name), getattr(modeset, name))
    assert (back.kind, back.reference, back.dofs_per_node, back.info) == \
        (modeset.kind, modeset.reference, modeset.dofs_per_node, modeset.info)
    assert list(back.interfaces) == list(modeset.interfaces)
    for name, a in modeset.interfaces.items():
        b = back.interface(name)
        assert (b.name, b.connection) == (a.name, a.connection)
        for field in ("position", "nodes", "psi", "weights"):
            np.testing.assert_array_equal(getattr(b, field), getattr(a, field))
    assert back.model is None
    for name, value in modeset.invariants.arrays().items():
        np.testing.assert_array_equal(back.invariants.arrays()[name], value)


def test_select_and_orthonormalize(model, modeset):
    low = modeset.select(count=4)
    np.testing.assert_array_equal(low.frequencies_hz, modeset.frequencies_hz[:4])
    limit = 0.5 * (modeset.frequencies_hz[3] + modeset.frequencies_hz[4])
    assert modeset.select(max_frequency_hz=limit).n_modes == np.count_nonzero(modeset.frequencies_hz <= limit)
    # a scrambled basis: orthonormalize recovers the same frequencies and an orthonormal set
    V = np.random.default_rng(1).standard_normal((12, 12))
    scrambled = modeset.transformed(V)
    assert not scrambled.is_orthonormal()
    again = scrambled.orthonormalize()
    assert again.is_orthonormal(1e-9)
    np.testing.assert_allclose(again.frequencies_hz, modeset.frequencies_hz, rtol=1e-9)
    # invariants follow the coordinate change (transformed vs recomputed from the model)
    ref = inertia_invariants(model, again.phi)
    for name, value in again.invariants.arrays().items():
        np.testing.assert_allclose(value, ref.arrays()[name], rtol=1e-8, atol=1e-9 * np.abs(ref.arrays()[name]).max())


def test_loaded_set_selects_without_model(modeset, tmp_path):
    path = tmp_path / "beam.npz"
    modeset.save(path)
    low = ModeSet.load(path).select(count=3)
    np.testing.assert_allclose(low.invariants.M_ee, np.eye(3), atol=1e-10)
    np.testing.assert_allclose(low.invariants.S_t, modeset.invariants.S_t[:, :3], rtol=1e-12, atol=1e-15)


def test_errors(modeset, tmp_path):
    with pytest.raises(ModelError, match=r"no interface 'flange'.*interfaces: root, tip"):
        modeset.interface("flange")
    with pytest.raises(ModelError, match="count must be"):
        modeset.select(count=13)
    with pytest.raises(ModelError, match="no mode at or below"):
        modeset.select(max_frequency_hz=1.0)
    bad = tmp_path / "other.npz"
    np.savez(bad, x=np.zeros(2))
    with pytest.raises(ModelError, match="not a flexmb mode set"):
        ModeSet.load(bad)
    with pytest.raises(ModelError, match="cannot read"):
        ModeSet.load(tmp_path / "missing.npz")
    with pytest.raises(ModelError, match="do not match"):
        ModeSet(np.zeros((10, 2)), np.zeros((3, 3)), 3, np.eye(2), np.eye(2))
    loaded_without = ModeSet(modeset.phi, modeset.nodes, 6, modeset.M, modeset.K)
    with pytest.raises(ModelError, match="no FE model attached"):
        loaded_without.invariants
