"""Broad phase (flexmb/contact/broadphase.py) against brute force, and the slot map of the pattern."""
import numpy as np
import pytest

from flexmb.contact.broadphase import Skin, SlotMap, box_pairs, sphere_pairs

rng = np.random.default_rng(11)


def brute_spheres(c, e, groups=None):
    d = np.linalg.norm(c[:, None] - c[None], axis=2)
    i, j = np.nonzero(np.triu(d <= e[:, None] + e[None], 1))
    if groups is not None:
        keep = groups[i] != groups[j]
        i, j = i[keep], j[keep]
    return set(zip(i.tolist(), j.tolist()))


@pytest.mark.parametrize("spread", [1.0, 30.0])     # equal sizes, and radii over 1.5 decades (size classes)
def test_sphere_pairs_equal_brute_force(spread):
    n = 800
    c = rng.uniform(0.0, 1.0, (n, 3))
    r = 0.02 * np.exp(rng.uniform(0.0, np.log(spread), n))
    margin = 0.005
    i, j = sphere_pairs(c, r + 0.5 * margin)
    found = set(zip(i.tolist(), j.tolist()))
    assert found == brute_spheres(c, r + 0.5 * margin)
    # every pair whose gap is below the margin is a candidate
    d = np.linalg.norm(c[:, None] - c[None], axis=2) - r[:, None] - r[None]
    a, b = np.nonzero(np.triu(d < margin, 1))
    assert set(zip(a.tolist(), b.tolist())) <= found
    assert len(found) > 50


def test_sphere_pairs_leave_out_one_group():
    c = rng.uniform(0.0, 1.0, (300, 3))
    e = np.full(300, 0.06)
    g = rng.integers(0, 40, 300)
    i, j = sphere_pairs(c, e, g)
    assert set(zip(i.tolist(), j.tolist())) == brute_spheres(c, e, g)
    assert np.all(g[i] != g[j])


def test_box_pairs_equal_brute_force():
    na, nb = 400, 900
    ca = rng.uniform(0, 1, (na, 3))
    ha = rng.uniform(0.001, 0.02, (na, 3))
    cb = rng.uniform(0, 1, (nb, 3))
    hb = rng.uniform(0.001, 0.05, (nb, 3)) * np.where(rng.random((nb, 1)) < 0.05, 8.0, 1.0)   # a few large
    i, j = box_pairs(ca - ha, ca + ha, cb - hb, cb + hb)
    brute = np.all(np.abs(ca[:, None] - cb[None]) <= ha[:, None] + hb[None], axis=2)
    a, b = np.nonzero(brute)
    assert set(zip(i.tolist(), j.tolist())) == set(zip(a.tolist(), b.tolist()))
    assert i.size > 100


def test_empty_inputs():
    z = np.zeros((0, 3))
    assert box_pairs(z, z, np.zeros((2, 3)), np.ones((2, 3)))[0].size == 0
    assert sphere_pairs(np.zeros((1, 3)), [1.0])[0].size == 0


def test_skin_grows_with_the_last_displacement():
    s = Skin(0.1)
    x = np.zeros((2, 3))
    assert np.allclose(s.inflation(x), 0.1)
    x2 = x + [[0.0, 0.0, 0.2], [0.0, 0.0, 0.0]]
    assert np.allclose(s.inflation(x2), [0.1 + 3 * 0.2, 0.1])


def test_slot_map_sums_pair_blocks_and_splits_the_rest():
    class B:
        def __init__(self, offset, ncoord=7):
            self.offset, self.ncoord, self.n_modes = offset, ncoord, 0

    nq = 21
    bodies = [B(0), B(7), B(14)]
    sm = SlotMap(nq, bodies, bodies, np.array([[0, 1]]), True)
    bi, bj = np.array([0, 0, 1]), np.array([1, 1, 2])
    a, b = sm.slots(bi, bj)
    assert list(a[:2]) == [0, 0] and list(b[:2]) == [-1, -1]          # pair (0, 1) has its slot
    assert a[2] == sm.self_i0 + 1 and b[2] == sm.self_j0 + 2          # pair (1, 2) splits into self slots
    vals = rng.standard_normal((3, 14, 14))
    out = sm.aggregate(a, b, vals)
    assert np.allclose(out[0], vals[0] + vals[1])
    # assembled, the uncoupled candidate keeps only its diagonal body blocks
    K = np.zeros((nq, nq))
    for s, blk in zip(sm.scatter, out):
        ok = s >= 0
        K[np.ix_(s[ok], s[ok])] += blk[np.ix_(ok, ok)]
    ref = np.zeros((nq, nq))
    for k, (p, q) in enumerate(zip(bi, bj)):
        cols = np.r_[7 * p:7 * p + 7, 7 * q:7 * q + 7]
        blk = vals[k].copy()
        if k == 2:
            blk[:7, 7:] = blk[7:, :7] = 0.0
        ref[np.ix_(cols, cols)] += blk
    assert np.allclose(K, ref)
