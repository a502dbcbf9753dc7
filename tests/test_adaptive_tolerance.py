"""Adaptive steps keep their promise: the global error tracks rtol (tolerance proportionality).

Reference: the explicit index-1 dop853 run at rtol = atol = 1e-11 (an independent method; its
constraint drift over 1 s is below 1e-9, far under the errors compared here). The quantity is the
final angle of the last link (rad, scale 1). Second-order steps held per unit step (docs/guide.md §3)
give a global error of about rtol; the bounds allow the constant of the error estimate (a factor 30)
and, for proportionality, a factor 5 either side of the ideal 100 for a 100x change of rtol.
"""
import numpy as np
import pytest

import flexmb as fm

T_END = 1.0


def double_pendulum():
    s = fm.System(gravity=(0, -9.81, 0))
    l1 = s.add(fm.RigidBody(10.0, (0.01, 10 * 0.5 ** 2 / 12, 10 * 0.5 ** 2 / 12), position=(0.25, 0, 0), name="l1"))
    l2 = s.add(fm.RigidBody(5.0, (0.01, 5 / 12, 5 / 12), position=(1.0, 0, 0), name="l2"))
    s.add(fm.Revolute(s.ground, l1, (0, 0, 0), (0, 0, 1)))
    s.add(fm.Revolute(l1, l2, (0.5, 0, 0), (0, 0, 1)))
    return s, l2


def four_bar():
    """A closed loop under gravity: crank 0.2 m, coupler 0.6 m, heavy rocker 0.5 m, ground 0.5 m."""
    s = fm.System(gravity=(0, -9.81, 0))
    A, D, B = np.zeros(3), np.array([0.5, 0, 0]), np.array([0.0, 0.2, 0])
    # rocker angle th closing the loop: |D + 0.5 (cos th, sin th) - B| = 0.6 (bisection, no scipy needed)
    lo, hi = 0.0, 2.3
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        f = np.linalg.norm(D + 0.5 * np.array([np.cos(mid), np.sin(mid), 0]) - B) - 0.6
        lo, hi = (mid, hi) if f < 0 else (lo, mid)
    C = D + 0.5 * np.array([np.cos(lo), np.sin(lo), 0])

    def rod(p, q, m, name):
        L = np.linalg.norm(q - p)
        ex = (q - p) / L
        R = np.column_stack([ex, np.cross([0, 0, 1], ex), [0, 0, 1]])
        return s.add(fm.RigidBody(m, (1e-4, m * L * L / 12, m * L * L / 12), position=0.5 * (p + q),
                                  orientation=R, name=name))
    crank, coupler, rocker = rod(A, B, 1.0, "crank"), rod(B, C, 2.0, "coupler"), rod(D, C, 3.0, "rocker")
    s.add(fm.Revolute(s.ground, crank, A, (0, 0, 1), name="A"))
    s.add(fm.Revolute(crank, coupler, B, (0, 0, 1), name="B"))
    s.add(fm.Revolute(coupler, rocker, C, (0, 0, 1), name="C"))
    s.add(fm.Spherical(s.ground, rocker, D, name="D"))
    return s, rocker


def final_angle(res, body):
    R = res.orientation(body)[-1]
    return np.arctan2(R[1, 0], R[0, 0])


@pytest.mark.filterwarnings("ignore::flexmb.errors.RedundantConstraintWarning")
@pytest.mark.parametrize("build", [double_pendulum, four_bar], ids=["double-pendulum", "four-bar"])
def test_global_error_tracks_rtol(build):
    s, body = build()
    reference = final_angle(fm.simulate(s, T_END, method="dop853", rtol=1e-11, atol=1e-11), body)
    errors = {}
    for rtol in (1e-3, 1e-5):
        res = fm.simulate(s, T_END, 1e-3, adaptive=True, rtol=rtol)
        errors[rtol] = abs(final_angle(res, body) - reference)
        assert errors[rtol] <= 30.0 * rtol, (rtol, errors[rtol])
    ratio = errors[1e-3] / errors[1e-5]
    assert 20.0 <= ratio <= 500.0, (errors, ratio)

