"""Integrator behaviour: the public API script, drivers, reactions, energy, output chunks."""
import json
import subprocess
import sys

import numpy as np
import pytest

import flexmb as fm
from flexmb import rotations as rot


def api_script():
    s = fm.System(gravity=(0, -9.81, 0))
    l1 = s.add(fm.RigidBody(mass=10.0, inertia=(0.01, 10 * 0.5 ** 2 / 12, 10 * 0.5 ** 2 / 12), position=(0.25, 0, 0),
                            name="link1"))
    l2 = s.add(fm.RigidBody(mass=5.0, inertia=(0.01, 5 / 12, 5 / 12), position=(1.0, 0, 0), name="link2"))
    s.add(fm.Revolute(s.ground, l1, point=(0, 0, 0), axis=(0, 0, 1)))
    s.add(fm.Revolute(l1, l2, point=(0.5, 0, 0), axis=(0, 0, 1)))
    return s, l1, l2


def test_issue_api_script_runs_as_written():
    s, l1, l2 = api_script()
    res = fm.simulate(s, t_end=0.5, h=1e-3)
    tip = res.position(l2, local_point=(0.5, 0, 0))
    w = res.angular_velocity(l2)
    e = res.energy()
    assert tip.shape == (501, 3) and w.shape == (501, 3)
    assert set(e) >= {"kinetic", "potential", "work", "total"}
    # planar motion; link lengths preserved exactly (index 3)
    assert np.abs(tip[:, 2]).max() < 1e-12
    elbow = res.position(l1, (0.25, 0, 0))
    assert np.allclose(np.linalg.norm(elbow, axis=1), 0.5, atol=1e-10)
    assert np.allclose(np.linalg.norm(tip - elbow, axis=1), 1.0, atol=1e-10)
    # energy: numerical dissipation of rho_inf = 0.9 is small against the kinetic energy (~60 J)
    assert np.abs(e["total"] - e["total"][0]).max() < 1e-2


def test_hanging_pendulum_reaction_equals_weight():
    s = fm.System(gravity=(0, -9.81, 0))
    b = s.add(fm.RigidBody(2.0, (0.01, 0.1, 0.1), position=(0, -0.5, 0), name="bob"))
    j = s.add(fm.Revolute(s.ground, b, (0, 0, 0), (0, 0, 1), name="pivot"))
    res = fm.simulate(s, 0.1, 1e-2)
    F, T = res.reaction(j)
    # reaction of the joint on the bob holds its weight: +2*9.81 N upward; no torque about the pivot axis
    assert np.allclose(F, [0, 2 * 9.81, 0], atol=1e-8)
    assert np.allclose(T, 0, atol=1e-8)


def test_angle_driver_velocity_and_acceleration_are_exact():
    """Phi = theta - f(t): the body turns with f'(t) and f''(t) (van der Linde & Schwab 2002, eq. 19 misses Phi_tt)."""
    s = fm.System()
    b = s.add(fm.RigidBody(1.0, (0.1, 0.2, 0.3), position=(0.3, 0, 0), name="arm"))
    j = s.add(fm.Revolute(s.ground, b, (0, 0, 0), (0, 0, 1)))
    f = fm.TimeFunction(lambda t: 0.5 * t ** 3, lambda t: 1.5 * t ** 2, lambda t: 3.0 * t)
    s.add(fm.Driver(j, angle=f))
    res = fm.simulate(s, 1.0, 1e-2, velocity_projection=True)
    w = res.angular_velocity(b)[:, 2]
    assert np.allclose(w, 1.5 * res.t ** 2, atol=1e-9)
    x = res.orientation(b)[:, :, 0]
    assert np.allclose(np.unwrap(np.arctan2(x[:, 1], x[:, 0])), 0.5 * res.t ** 3, atol=1e-9)
    # initial acceleration from the index-1 solve uses f''(0) = 0 and the centripetal term
    assert np.allclose(res.vd[0], 0.0, atol=1e-12)


def test_spring_mass_oscillator_period_and_energy():
    """Mass on a spring: period 2 pi sqrt(m/k); energy constant with c = 0."""
    m, k = 2.0, 800.0
    s = fm.System()
    b = s.add(fm.RigidBody(m, (1, 1, 1), position=(1.1, 0, 0), name="mass"))
    s.add(fm.Prismatic(s.ground, b, (1.1, 0, 0), (1, 0, 0)))
    s.add(fm.SpringDamper(s.ground, b, point_a=(0, 0, 0), point_b=(1.1, 0, 0), k=k, free_length=1.0))
    res = fm.simulate(s, 1.0, 2e-4, rho_inf=1.0)
    x = res.q[:, 0] - 1.0
    # exact solution x = 0.1 cos(w t); error O((w h)^2) ~ 4e-5 relative
    assert np.allclose(x, 0.1 * np.cos(np.sqrt(k / m) * res.t), atol=2e-5)
    e = res.energy()["total"]
    assert np.ptp(e) < 1e-6 * e[0]


def test_damper_work_closes_energy_balance():
    s = fm.System(gravity=(0, -9.81, 0))
    b = s.add(fm.RigidBody(1.0, (0.01, 0.02, 0.03), position=(0.0, -1.0, 0.2), velocity=(1.0, 0, 0), name="b"))
    s.add(fm.Spherical(s.ground, b, (0, 0, 0.2)))
    s.add(fm.Bushing(s.ground, b, (0, -1.0, 0.2), stiffness=[0, 0, 0, 0.5, 0.5, 0.5], damping=[0, 0, 0, .1, .1, .1]))
    s.add(fm.SpringDamper(s.ground, b, point_a=(1.0, 0, 0), point_b=(0.0, -1.0, 0.2), k=5.0, c=0.5))
    res = fm.simulate(s, 2.0, 1e-3)
    e = res.energy()
    assert e["work_nc"][-1] < -1e-3   # dampers dissipated something
    # balance holds to the O(h^2) quadrature error of the work integral
    assert np.abs(e["total"] - e["total"][0]).max() < 1e-3 * np.ptp(e["kinetic"])


@pytest.mark.parametrize("method, kw", [("hht", {"rho_inf": 0.8}), ("newmark", {}), ("generalized-alpha", {"rho_inf": 0.5})])
def test_family_members_agree_with_reference(method, kw):
    from verification.rigid import models
    s, b1, b2 = models.double_pendulum()
    res = fm.simulate(s, 1.0, 1e-3, method=method, **kw)
    th1, th2 = models.double_pendulum_reference(res.t)
    # all members are second order; 1e-3 rad bounds their h = 1 ms error with margin
    assert np.abs(models.rod_angle(res, b1) - th1).max() < 1e-3


def test_adaptive_steps_meet_tolerance():
    from verification.rigid import models
    s, b1, b2 = models.double_pendulum()
    res = fm.simulate(s, 2.0, 1e-2, adaptive=True, rtol=1e-4, atol=1e-7)
    th1, _ = models.double_pendulum_reference(res.t)
    assert res.stats["steps"] < 2000                       # fewer steps than fixed h = 1 ms
    # rtol bounds the global error up to the constant of the estimate (docs/guide.md §3)
    assert np.abs(models.rod_angle(res, b1) - th1).max() < 10 * 1e-4


@pytest.mark.usefixtures("progress_every_step")     # its callback stops the run at a chosen step
def test_chunks_survive_interrupt_and_resume(tmp_path):
    s, l1, l2 = api_script()
    full = fm.simulate(s, 0.2, 1e-3)
    calls = {"n": 0}

    def interrupt(t, t_end):
        calls["n"] += 1
        if calls["n"] == 130:
            raise KeyboardInterrupt

    s2, _, m2 = api_script()
    with pytest.raises(KeyboardInterrupt):
        fm.simulate(s2, 0.2, 1e-3, output=tmp_path / "run", chunk_steps=50, progress=interrupt)
    partial = fm.load_result(tmp_path / "run", system=s2)
    assert partial.t[-1] == pytest.approx(0.13)            # nothing computed was lost
    meta = json.loads((tmp_path / "run" / "meta.json").read_text())
    assert meta["nq"] == 14
    res = fm.simulate(s2, 0.2, 1e-3, output=tmp_path / "run", chunk_steps=50, resume=True)
    assert res.t.size == full.t.size
    assert np.allclose(res.q, full.q, atol=1e-12)


def test_save_and_load_npz(tmp_path):
    s, l1, l2 = api_script()
    res = fm.simulate(s, 0.05, 1e-3)
    res.save(tmp_path / "r.npz")
    back = fm.load_result(tmp_path / "r.npz", system=s)
    assert np.array_equal(back.q, res.q)
    assert np.allclose(back.position(l2), res.position(l2))


def _flexible_pendulum(n: int = 60):
    """A cantilever of n beam elements (1 m, aluminium 40 x 20 mm) reduced by Craig-Bampton at its root (4 modes),
    swinging down from horizontal on a revolute at the root. With n = 60 the reduction factorizes the 360 interior
    dofs, above the dense/sparse threshold (linalg.DENSE_LIMIT = 250): the sparse SPD path, CHOLMOD when on."""
    points = np.column_stack([np.linspace(0.0, 1.0, n + 1), np.zeros(n + 1), np.zeros(n + 1)])
    mesh = fm.FEMesh(points, {"line": np.column_stack([np.arange(n), np.arange(1, n + 1)])},
                     node_sets={"root": [0], "tip": [n]})
    model = fm.FEModel(mesh, fm.Material(E=7e10, nu=0.3, rho=2700.0), sections=fm.BeamSection.rectangle(0.04, 0.02))
    modes = fm.craig_bampton(model, {"root": "root"}, n_modes=4, reference="root", stress=False)
    s = fm.System(gravity=(0.0, -9.81, 0.0))
    beam = s.add(fm.FlexibleBody(modes, name="beam"))
    s.add(fm.Revolute(s.ground, beam, (0.0, 0.0, 0.0), (0.0, 0.0, 1.0), name="hub"))
    return s, beam


def test_solution_identical_without_cholmod(monkeypatch):
    """A sparse SPD model (the reduction of a 366-dof beam) through CHOLMOD and through SuperLU (CHOLMOD disabled):
    CHOLMOD factorized the 360-dof interior stiffness (a spy on the backend counts its factorizations), SuperLU
    alone without it, and the tip deflection and frame motion of the swinging beam agree to round-off (two
    factorizations of one matrix differ only in the order of their operations): measured 1.6e-14 of the 7e-5 m
    deflection and 1.2e-14 m; tolerances 1e-9 relative and 1e-12 m, far under a wrong factorization's error.
    Skipped only where scikit-sparse is missing, and failed then on CI."""
    import os

    from flexmb import linalg
    if linalg.cholmod_import_error():
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI must run the CHOLMOD backend: scikit-sparse does not import ({linalg.cholmod_import_error()})")
        pytest.skip(f"scikit-sparse is not installed ({linalg.cholmod_import_error()})")
    sizes = []
    original = linalg._Cholmod.__init__

    def spy(self, A, *args, **kw):
        sizes.append(A.shape[0])
        original(self, A, *args, **kw)

    monkeypatch.setattr(linalg._Cholmod, "__init__", spy)
    previous = linalg.set_cholmod(True)          # on even where FLEXMB_NO_CHOLMOD switched it off
    try:
        s, beam = _flexible_pendulum()
        ref = fm.simulate(s, 0.2, 1e-3)
    finally:
        linalg.set_cholmod(previous)
    assert sizes and min(sizes) > linalg.DENSE_LIMIT, sizes          # CHOLMOD factorized the sparse stiffness
    with linalg.cholmod_disabled():
        s2, beam2 = _flexible_pendulum()
        res = fm.simulate(s2, 0.2, 1e-3)
    assert len(sizes) == 2                                         # none without it (SuperLU did)
    tip, tip_ref = res.deflection(beam2, 60), ref.deflection(beam, 60)       # node 60: the tip
    assert np.max(np.abs(tip_ref)) > 1e-5                          # the beam bends under its weight
    assert np.max(np.abs(tip - tip_ref)) < 1e-9 * np.max(np.abs(tip_ref))
    assert np.max(np.abs(res.position(beam2, (1.0, 0.0, 0.0)) - ref.position(beam, (1.0, 0.0, 0.0)))) < 1e-12


def test_info_reports_backends_both_ways():
    out = subprocess.run([sys.executable, "-m", "flexmb.cli", "info"], capture_output=True, text=True, check=True).stdout
    assert "CHOLMOD (scikit-sparse)" in out or "CHOLMOD not active" in out
    import os
    env = dict(os.environ, FLEXMB_NO_CHOLMOD="1")
    out = subprocess.run([sys.executable, "-m", "flexmb.cli", "info"], capture_output=True, text=True, check=True,
                         env=env).stdout
    assert "CHOLMOD not active" in out and "SuperLU (scipy; CHOLMOD disabled)" in out


def test_free_body_gyroscopic_rotation_keeps_unit_parameters():
    s = fm.System()
    b = s.add(fm.RigidBody(1.0, (1.0, 2.0, 2.5), orientation=rot.from_axis_angle((1, 1, 0), 0.3),
                           angular_velocity=(3.0, 0.2, 1.0), name="spinner"))
    res = fm.simulate(s, 1.0, 1e-3)
    assert np.allclose(np.linalg.norm(res.euler_parameters(b), axis=1), 1.0, atol=1e-10)


def test_heavy_bodies_beside_light_ones_start():
    """A 1e4 kg house turning on a driven revolute, a 1e4 kg boom fixed to it and a 10 kg pendulum: the start's
    mass/constraint matrix (inertias up to 8e6 kg m^2 beside unit constraint rows) has a pivot ratio of 1e-15
    unless its constraint rows are scaled (flexmb/linalg.py solve_saddle_scaled), and it used to be refused as
    a singular configuration. Check: the driven house turns at the driver's rate 0.1 t (rad/s)."""
    import numpy as np
    s = fm.System(gravity=(0.0, -9.81, 0.0))
    z = (0.0, 0.0, 1.0)
    house = s.add(fm.RigidBody(1e4, (5e5, 5e5, 8e5), position=(0.0, 0.0, 0.0), name="house"))
    hinge = s.add(fm.Revolute(s.ground, house, (0.0, 0.0, 0.0), (0.0, 1.0, 0.0), name="swing"))
    s.add(fm.Driver(hinge, angle=fm.TimeFunction(lambda t: 0.05 * t * t, lambda t: 0.1 * t, lambda t: 0.1),
                    name="swing drive"))
    boom = s.add(fm.RigidBody(1e4, (1e4, 8e6, 8e6), position=(20.0, 10.0, 0.0), name="boom"))
    s.add(fm.Fixed(house, boom, (5.0, 0.0, 0.0), name="foot"))
    bob = s.add(fm.RigidBody(10.0, (0.1, 0.1, 0.1), position=(40.0, 15.0, 0.0), name="bob"))
    s.add(fm.Spherical(boom, bob, (40.0, 20.0, 0.0), name="sheave"))
    res = fm.simulate(s, t_end=0.05, h=1e-3)
    w = res.angular_velocity(house)[-1]
    assert abs(w[1] - 0.1 * res.t[-1]) < 1e-6 * 0.1 * res.t[-1] + 1e-9
