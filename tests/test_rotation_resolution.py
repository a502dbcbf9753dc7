"""A run whose steps are too long for a body's rotation says so (ResolutionWarning) instead of completing silently
wrong: past ``h omega`` of about ``1 - rho_inf`` the index-3 step's parasitic Euler-parameter mode can outgrow the
numerical damping, and it shows as a rate ``p_dot`` with a component along ``p``, which no true motion has
(flexmb/solvers/watch.py ``check_rotation_resolution``; docs/guide.md §3 "Fast rotation")."""
import warnings

import numpy as np
import pytest

import flexmb as fm
from flexmb.errors import ResolutionWarning


def _cube_on_a_link(side: float) -> fm.System:
    """A 1 kg, 1 m link pinned to the ground, a steel cube of ``side`` (m) pinned at its tip (both about z), released
    horizontally under gravity: the cube swings as a pendulum of length side/2 in the link's accelerating frame,
    the faster the smaller it is."""
    s = fm.System(gravity=(0, -9.81, 0))
    link = s.add(fm.RigidBody(mass=1.0, inertia=(0.01, 1 / 12, 1 / 12), position=(0.5, 0, 0), name="link"))
    s.add(fm.Revolute(s.ground, link, point=(0, 0, 0), axis=(0, 0, 1)))
    m = 7800.0 * side ** 3
    cube = s.add(fm.RigidBody(mass=m, inertia=(m * side ** 2 / 6,) * 3, position=(1.0 + side / 2, 0, 0), name="cube"))
    s.add(fm.Revolute(link, cube, point=(1.0, 0, 0), axis=(0, 0, 1)))
    return s


def _cube_angle(res) -> np.ndarray:
    """The cube's rotation angle about z (rad, unwrapped)."""
    R = res.orientation("cube")
    return np.unwrap(np.arctan2(R[:, 1, 0], R[:, 0, 0]))


def test_a_small_body_too_fast_for_the_step_is_flagged():
    # a 1 mm cube at h = 1 ms (up to ~200 rad/s, h omega = 0.21) completes 0.6 s 0.37 rad from the motion a step of
    # 0.1 ms gives, its Euler-parameter rate 0.64 along p at the end (its swing's energy, ~1e-9 of the link's, is
    # invisible to the energy balance): before, no sign of it
    with pytest.warns(ResolutionWarning, match=r"body 'cube' turned at up to .* rad/s .* component along p"):
        coarse = fm.simulate(_cube_on_a_link(1e-3), t_end=0.6, h=1e-3)
    assert coarse.stats["euler_rate_defect"] > 0.1
    with warnings.catch_warnings():
        warnings.simplefilter("error", ResolutionWarning)
        fine = fm.simulate(_cube_on_a_link(1e-3), t_end=0.6, h=1e-4)
    assert fine.stats["euler_rate_defect"] < 0.01
    # the flag is right: the coarse run's cube is off by more than 0.3 rad
    assert np.max(np.abs(_cube_angle(coarse) - _cube_angle(fine)[::10])) > 0.3


def test_a_resolved_run_is_not_flagged():
    with warnings.catch_warnings():
        warnings.simplefilter("error", ResolutionWarning)
        res = fm.simulate(_cube_on_a_link(1e-2), t_end=0.3, h=1e-3)     # a 1 cm cube: h omega ~ 0.06
    assert 0.03 < res.stats["h_omega_max"] < 0.1
    assert res.stats["euler_rate_defect"] < 0.01


def test_a_fast_but_clean_spin_is_not_flagged():
    # a body spinning alone about a revolute at 150 rad/s, h omega = 0.15: its rate stays along E^T omega
    s = fm.System(gravity=(0, 0, 0))
    s.add(fm.RigidBody(mass=7800.0, inertia=(1300.0,) * 3, angular_velocity=(0, 0, 150.0), name="cube"))
    s.add(fm.Revolute(s.ground, s.bodies[-1], point=(0, 0, 0), axis=(0, 0, 1)))
    with warnings.catch_warnings():
        warnings.simplefilter("error", ResolutionWarning)
        res = fm.simulate(s, t_end=0.2, h=1e-3)
    assert res.stats["h_omega_max"] == pytest.approx(0.15, rel=1e-3)
    assert res.stats["euler_rate_defect"] < 1e-3


def test_a_body_at_rest_is_not_read_as_a_defect():
    # rounding noise of a body at rest has no direction: it must not count
    s = fm.System(gravity=(0, -9.81, 0))
    s.add(fm.RigidBody(mass=1.0, inertia=(0.1, 0.1, 0.1), position=(0, -1, 0), name="bob"))
    s.add(fm.Spherical(s.ground, s.bodies[-1], (0, 0, 0)))
    with warnings.catch_warnings():
        warnings.simplefilter("error", ResolutionWarning)
        res = fm.simulate(s, t_end=0.1, h=1e-3)
    assert res.stats["euler_rate_defect"] == 0.0
