"""Euler-parameter identities (Nikravesh 1988 §6) checked numerically."""
import numpy as np
import pytest

from flexmb import rotations as rot

rng = np.random.default_rng(1)


def random_p(n=5):
    return rot.normalize(rng.standard_normal((n, 4)))


def test_A_is_rotation_and_matches_E_G():
    p = random_p()
    A = rot.A(p)
    assert np.allclose(A @ A.transpose(0, 2, 1), np.eye(3), atol=1e-14)
    assert np.allclose(np.linalg.det(A), 1.0)
    assert np.allclose(A, rot.E(p) @ rot.G(p).transpose(0, 2, 1), atol=1e-14)   # A = E G^T


def test_Q_B_T_identities():
    p = rng.standard_normal((4, 4))          # not normalized: identities are algebraic
    w, u, y = rng.standard_normal((3, 4, 3))
    lhs = np.einsum("ni,nij,nj->n", w, rot.A(p), u)
    rhs = np.einsum("ni,nij,nj->n", p, rot.Q(w, u), p) - np.einsum("ni,ni->n", w, u)
    assert np.allclose(lhs, rhs, atol=1e-13)
    # B = d(A u)/dp by central differences
    eps = 1e-6
    Bfd = np.stack([(np.einsum("nij,nj->ni", rot.A(p + eps * np.eye(4)[k]), u)
                     - np.einsum("nij,nj->ni", rot.A(p - eps * np.eye(4)[k]), u)) / (2 * eps) for k in range(4)], -1)
    assert np.allclose(rot.B(p, u), Bfd, atol=1e-8)
    assert np.allclose(np.einsum("nki,nk->ni", rot.G(p), y), np.einsum("nij,nj->ni", rot.T(y), p), atol=1e-14)


def test_second_rate_is_second_directional_derivative():
    p, pd = rng.standard_normal((2, 3, 4))
    u = rng.standard_normal((3, 3))
    h = 1e-4
    f = lambda s: np.einsum("nij,nj->ni", rot.A(p + s * pd), u)   # noqa: E731
    assert np.allclose((f(h) - 2 * f(0) + f(-h)) / h ** 2, rot.second_rate(pd, u), atol=1e-6)


@pytest.mark.parametrize("angle", [0.0, 0.3, np.pi / 2, 3.0, np.pi])
def test_matrix_round_trip(angle):
    axis = rng.standard_normal(3)
    p = rot.from_axis_angle(axis, angle)
    p2 = rot.from_matrix(rot.A(p))
    assert np.allclose(rot.A(p2), rot.A(p), atol=1e-12)
    ax, ang = rot.to_axis_angle(p)
    assert np.isclose(ang, angle, atol=1e-12)
