"""Flexible bodies (flexmb/bodies/flexible.py): physics checks, sensors and bad input.

The Jacobians are checked against central differences in test_jacobians.py (cases flex-*).
Here the equations themselves are checked against independent results:

* energy conservation of a free, undamped body (spinning and vibrating): the energy error of
  generalized-alpha with rho_inf = 1 falls as h^2 only if the forces derive from the kinetic
  and strain energies that Assembly.kinetic_energy / potential_energy compute separately;
* the rigid limit: a very stiff beam pendulum swings like the rigid pendulum with the same
  mass and inertia (closed-form rigid model in flexmb);
* statics: a damped cantilever under gravity settles at the FE solution K u = f of the full
  model (all modes kept, so the modal basis spans it exactly).
"""
from __future__ import annotations

import numpy as np
import pytest

import flexmb as fm
from flexmb.errors import ModelError, RedundantConstraintWarning, ResolutionWarning
from flexmb.fem.materials import Material
from flexmb.fem.model import FEModel
from flexmb.fem.sections import BeamSection
from flexmb.reduction import craig_bampton, free_free_modes
from verification.fem.meshes import line_mesh

SECTION = BeamSection.rectangle(0.05, 0.03, nu=0.3)


def beam(n: int = 8, L: float = 2.0, E: float = 2e8, rho: float = 2000.0, origin=(0.0, 0.0, 0.0)) -> FEModel:
    return FEModel(line_mesh(n, L, origin=origin), Material(E=E, nu=0.3, rho=rho), sections=SECTION,
                   beam="euler-bernoulli")


def cantilever_modes(n_modes: int = 4, **kw):
    return craig_bampton(beam(**kw), {"root": "root", "tip": "tip"}, n_modes=n_modes, reference="root")


def energy_error(h: float) -> float:
    ms = free_free_modes(beam(10, origin=(-1.0, 0.0, 0.0)), 4)
    body = fm.FlexibleBody(ms, angular_velocity=(0.5, 0.3, 2.0), stiffening=False,
                           modal_velocities=[0.3, 0.2, 0.1, 0.1])
    s = fm.System()
    s.add(body)
    e = fm.simulate(s, 1.0, h, rho_inf=1.0).energy()
    return float(np.ptp(e["total"]) / e["kinetic"][0])


def test_free_body_conserves_energy_at_second_order():
    e1, e2 = energy_error(4e-3), energy_error(2e-3)
    assert e1 < 1e-3
    assert 3.0 < e1 / e2 < 5.0      # order 2 (ratio 4) within the asymptotic range


def pendulum_difference(h: float) -> float:
    """Largest tip distance (m) between the flexible and the rigid pendulum over 0.5 s."""
    g = (0.0, -9.81, 0.0)
    ms = cantilever_modes(3, E=2e16)
    inv = ms.invariants
    c = inv.center_of_mass
    s1 = fm.System(gravity=g)
    f = s1.add(fm.FlexibleBody(ms, damping=0.05, stiffening=False))
    s1.add(fm.Revolute(s1.ground, f, (0, 0, 0), (0, 0, 1)))
    s2 = fm.System(gravity=g)
    r = s2.add(fm.RigidBody(inv.mass, inv.inertia - inv.mass * (c @ c * np.eye(3) - np.outer(c, c)), position=c))
    s2.add(fm.Revolute(s2.ground, r, (0, 0, 0), (0, 0, 1)))
    tip1 = fm.simulate(s1, 0.5, h).node_position(f, 8)
    tip2 = fm.simulate(s2, 0.5, h).position(r, np.array([2.0, 0.0, 0.0]) - c)
    return float(np.abs(tip1 - tip2).max())


def test_stiff_beam_pendulum_matches_rigid_pendulum():
    """E = 2e16 Pa: static sag rho A g L^4 / 8 EI = 3e-8 m. The two models use different
    coordinates (frame at the pivot vs at the centre of mass), so their time-step errors
    differ; the difference must vanish at order 2."""
    d1, d2 = pendulum_difference(1e-3), pendulum_difference(5e-4)
    assert d2 < 1e-6 and 3.0 < d1 / d2 < 5.0


def test_damped_cantilever_settles_at_static_fe_solution():
    model = beam(6, E=2e9)
    ms = craig_bampton(model, {"root": "root"}, n_modes=30, reference="root")   # all 30 free dofs
    body = fm.FlexibleBody(ms, damping=0.7, stiffening=False)
    s = fm.System(gravity=(0.0, -9.81, 0.0))
    s.add(body)
    s.add(fm.Fixed(s.ground, body, (0, 0, 0)))
    res = fm.simulate(s, 2.0, 2e-3)
    f = np.zeros(model.ndof)
    f[model.dofs(np.arange(model.n_nodes), "uy")] = 1.0
    f = model.M @ (f * -9.81)
    u = model.static(f, model.dofs("root"))
    tip = res.deflection(body, 6)[-1]
    ref = u[model.dofs(6, "uy")][0]
    assert abs(tip[1] - ref) < 1e-4 * abs(ref)       # settled (damping 0.7 over ~10 periods) to 1e-4


def test_sensors_agree_and_export_writes_series(tmp_path):
    ms = cantilever_modes(3)
    body = fm.FlexibleBody(ms, stiffening=False, modal_velocities=0.5 * np.eye(ms.n_modes)[0])
    s = fm.System()
    s.add(body)
    s.add(fm.Revolute(s.ground, body, (0, 0, 0), (0, 0, 1)))
    res = fm.simulate(s, 0.2, 1e-2)
    A = res.orientation(body)
    x = res.node_position(body, 8)
    local = ms.nodes[8] + res.deflection(body, 8)
    assert np.allclose(x, res.position(body) + np.einsum("nij,nj->ni", A, local))
    assert np.allclose(res.deflection(body, 8, "global"), np.einsum("nij,nj->ni", A, res.deflection(body, 8)))
    eta = res.modal_coordinates(body)
    assert np.allclose(res.strain_energy(body), 0.5 * np.einsum("nk,kl,nl->n", eta, ms.K, eta))
    assert res.nodal_stress(body).shape == (res.t.size, ms.nodes.shape[0], 6)
    files = res.export_paraview(tmp_path / "beam", body, every=5)
    assert files["pvd"].exists() and files["xdmf"].exists()


def test_nonlinear_beam_conserves_energy():
    model = beam(6, origin=(-1.0, 0.0, 0.0))
    b = fm.NonlinearBeam(model, model.dofs(3), angular_velocity=(0.0, 0.0, 3.0))
    s = fm.System()
    s.add(b)
    v0 = np.zeros(b.n_modes)
    v0[1::6] = 0.05 * np.sin(np.arange(v0[1::6].size))
    b.etad0 = v0
    e1 = fm.simulate(s, 0.5, 2e-3, rho_inf=1.0).energy()
    e2 = fm.simulate(s, 0.5, 1e-3, rho_inf=1.0).energy()
    d1, d2 = np.ptp(e1["total"]) / e1["kinetic"][0], np.ptp(e2["total"]) / e2["kinetic"][0]
    assert d1 < 1e-4 and d1 / d2 > 3.0      # small, and falling at least at order ~2


# -- bad input ----------------------------------------------------------------------------------
def test_missing_interface_is_refused():
    body = fm.FlexibleBody(cantilever_modes(2), stiffening=False, name="arm")
    with pytest.raises(ModelError, match="arm.*no interface 'hub'.*root, tip"):
        body.interface("hub")


def test_modes_not_mass_orthonormal_are_refused():
    ms = cantilever_modes(2)
    scaled = ms.transformed(2.0 * np.eye(ms.n_modes))
    with pytest.raises(ModelError, match="not mass-orthonormal.*orthonormalize"):
        fm.FlexibleBody(scaled, stiffening=False)


def test_node_outside_mesh_is_refused():
    body = fm.FlexibleBody(cantilever_modes(2), stiffening=False, name="arm")
    with pytest.raises(ModelError, match="node id 9 is outside the mesh .ids 0..8"):
        body.node(9)


def test_massless_mesh_is_refused():
    ms = cantilever_modes(2)
    ms._invariants = None
    ms.model = beam(rho=0.0)           # the same mesh without density: its invariants have no mass
    with pytest.raises(ModelError, match="flexible body 'arm'.*no mass"):
        fm.FlexibleBody(ms, stiffening=False, name="arm")


def test_free_modes_that_are_not_mean_axis_are_refused():
    ms = free_free_modes(beam(6, origin=(-1.0, 0.0, 0.0)), 2)
    rigid_mix = ms.transformed(np.eye(2))
    rigid_mix.phi = rigid_mix.phi + 0.1 * np.repeat(np.eye(6)[:, [1]], 7, axis=1).T.reshape(-1, 1)
    rigid_mix._invariants = None
    with pytest.raises(ModelError, match="mean-axis"):
        fm.FlexibleBody(rigid_mix, stiffening=False)


def test_tip_force_deflection_matches_fe_static_solution():
    model = beam(6, E=2e9)
    ms = craig_bampton(model, {"root": "root"}, n_modes=30, reference="root")
    body = fm.FlexibleBody(ms, damping=0.7, stiffening=False)
    s = fm.System()
    s.add(body)
    s.add(fm.Fixed(s.ground, body, (0, 0, 0)))
    s.add(fm.NodalForce(body, "tip", (0.0, -50.0, 20.0)))
    res = fm.simulate(s, 2.0, 2e-3)
    f = np.zeros(model.ndof)
    f[model.dofs(6, ["uy", "uz"])] = (-50.0, 20.0)
    u = model.static(f, model.dofs("root"))
    assert np.allclose(res.deflection(body, 6)[-1], u[model.dofs(6, ["ux", "uy", "uz"])], rtol=1e-4, atol=1e-12)


def test_campbell_linear_body_diverges_at_first_frequency_and_stiffening_lifts_it():
    """In-plane cantilever bending about the spin axis: spin softening cancels the stiffness
    at Omega = omega_1 (linear body); with stiffening the slope d omega^2 / d Omega^2 at 0 is
    K1 - 1 = 0.1933 (K1 from the exact mode shape, theory-stiffening.md)."""
    model = beam(30)
    held = np.concatenate([model.dofs(np.arange(1, 31), ["uz", "rx", "ry"])])
    ms = craig_bampton(model, {"root": "root"}, n_modes=3, fixed=held, reference="root")
    w1 = float(np.sqrt(ms.K[0, 0]))
    lin = fm.campbell(fm.FlexibleBody(ms, stiffening=False), (0, 0, 1), [0.0, 0.99 * w1, 1.01 * w1], 1)
    assert not lin.unstable[1] and lin.unstable[2]
    assert lin.frequencies[1, 0] == pytest.approx(np.sqrt(w1 ** 2 - (0.99 * w1) ** 2), rel=2e-3)
    small = 0.01 * w1
    st = fm.campbell(fm.FlexibleBody(ms), (0, 0, 1), [0.0, small], 1)
    slope = (st.frequencies[1, 0] ** 2 - st.frequencies[0, 0] ** 2) / small ** 2
    assert slope == pytest.approx(0.19334 - 0.0, rel=2e-3)


def test_beam_component_mass_products_sum_to_consistent_mass():
    """Euler-Bernoulli beams have no bending rotary inertia: every entry of M that involves a
    translational dof equals sum_i int rho N_i^T N_i, for an element in any direction (only the
    torsional inertia rho I_p L remains in the rotation-rotation block). The invariants'
    second-order terms rest on these products."""
    model = FEModel(line_mesh(3, 1.2, direction=(1.0, 2.0, -0.5)), Material(E=2e9, nu=0.3, rho=2000.0),
                    sections=SECTION, beam="euler-bernoulli")
    P = model.translational_mass()
    total = (P[0][0] + P[1][1] + P[2][2]).toarray()
    trans = (np.arange(model.ndof) % 6) < 3
    both_rot = ~trans[:, None] & ~trans[None, :]
    diff = np.where(both_rot, 0.0, total - model.M.toarray())
    assert np.abs(diff).max() <= 1e-12 * np.abs(total).max()
    assert np.allclose(P[0][1].toarray(), P[1][0].toarray().T)


def flexible_fourbar(E: float):
    """The verification four-bar (verification/rigid/models.fourbar geometry) with a flexible coupler:
    a 10-element beam between the crank and rocker pins, Craig-Bampton modes with the body frame at
    pin A (reference) and pin B an interface, revolute joints at both interfaces (closed loop)."""
    from flexmb import rotations as rot
    from flexmb.fem.mesh import FEMesh
    from verification.rigid import models as rigid
    a = rigid.FOURBAR
    a1, a2, a3, a4 = a["a1"], a["a2"], a["a3"], a["a4"]
    th2, th3 = (float(x[0]) for x in rigid.fourbar_angles(np.array([0.0]), a1, a2, a3, a4))
    A = np.array([a1, 0.0, 0.0])
    B = A + a2 * np.array([np.cos(th2), np.sin(th2), 0.0])
    x = np.linspace(0.0, a2, 11)
    mesh = FEMesh(np.column_stack([x, 0 * x, 0 * x]), {"line": np.column_stack([np.arange(10), np.arange(1, 11)])},
                  node_sets={"A": [0], "B": [10]})
    rho = 2.0 / (a2 * SECTION.A)                 # coupler mass 2 kg, as in the rigid model
    model = FEModel(mesh, Material(E=E, nu=0.3, rho=rho), sections=SECTION, beam="euler-bernoulli")
    modes = craig_bampton(model, {"A": "A", "B": "B"}, n_modes=4, reference="A")
    s = fm.System(gravity=(0, -9.81, 0))
    crank = s.add(fm.RigidBody(1.0, (1e-4 * a1 ** 2, a1 ** 2 / 12, a1 ** 2 / 12), position=A / 2, name="crank"))
    coupler = s.add(fm.FlexibleBody(modes, position=A, orientation=rot.from_axis_angle((0, 0, 1), th2),
                                    damping=0.02, name="coupler"))
    R3 = rot.from_axis_angle((0, 0, 1), th3)
    O4 = np.array([a4, 0.0, 0.0])
    rocker = s.add(fm.RigidBody(1.5, (1e-4 * 1.5 * a3 ** 2, 1.5 * a3 ** 2 / 12, 1.5 * a3 ** 2 / 12),
                                position=O4 + 0.5 * a3 * np.array([np.cos(th3), np.sin(th3), 0]), orientation=R3,
                                name="rocker"))
    z = (0, 0, 1)
    j1 = s.add(fm.Revolute(s.ground, crank, (0, 0, 0), z))
    s.add(fm.Revolute(crank, coupler.interface("A"), A, z))
    s.add(fm.Revolute(coupler.interface("B"), rocker, B, z))
    s.add(fm.Revolute(rocker, s.ground, O4, z))
    s.add(fm.Driver(j1, angle=fm.TimeFunction.linear(2 * np.pi)))
    return s, rocker, coupler


# Open finding, not this test's subject: the start's velocity projection (closest v in the mass metric) gives the
# stiff coupler's elastic modes velocity; they ring at the step's Nyquist rate for ~0.1 s, the modal damping's
# work on that ringing (-88 J at h = 2 ms, -8.4 J at 0.2 ms) breaks the energy balance (drift 0.98), and the ringing
# gives the coupler's frame an Euler-parameter rate along p (ResolutionWarning, 0.12 at t = 0.044 s, which says the
# body does not turn fast for the step: something else feeds the mode): both warnings are right. The kinematics
# checked here are unaffected.
@pytest.mark.filterwarnings("ignore::flexmb.errors.EnergyBalanceWarning")
def test_flexible_coupler_closes_the_loop_and_stiff_limit_is_the_rigid_fourbar():
    """Closed loop through two interfaces of one flexible body: constraints hold to round-off, and a
    stiff coupler (first frequency ~ 1e3 x the crank speed) follows the closed-form rigid four-bar."""
    from verification.rigid import models as rigid
    a = rigid.FOURBAR
    s, rocker, _ = flexible_fourbar(E=2e13)
    with pytest.warns(ResolutionWarning, match="does not turn fast for this step, so something else feeds"):
        res = fm.simulate(s, 0.5, 2e-3)     # no redundant rows: the coupler's out-of-plane modes absorb them
    assert res.constraint_violation().max() < 1e-7   # Newton tolerance on the first stiff steps, then 1e-16
    phi = 2 * np.pi * res.t
    _, th3 = rigid.fourbar_angles(phi, a["a1"], a["a2"], a["a3"], a["a4"])
    A = res.orientation(rocker)
    th = np.unwrap(np.arctan2(A[:, 1, 0], A[:, 0, 0]))
    assert np.abs(th - np.unwrap(th3)).max() < 1e-4          # elastic effects ~1e-6 rad; time step 2e-5 rad


RAMP_S = 0.1


def ramped(fx: float):
    """An axial force (N) raised from 0 to ``fx`` over RAMP_S = 0.1 s along 1 - cos, then held. Applied at
    once, it would set off the column's axial vibration (about 1.4 kHz, with the 0.1 kg slider), which
    h = 1 ms does not resolve: the integrator's numerical damping took the whole energy balance
    (EnergyBalanceWarning, drift 1.0 of 21 J at t = 2 ms). The ramp lasts 3 periods of the first bending
    mode (about 33 Hz compressed), so the end state at 0.3 s is the static one: the midspan deflections
    agree with the step load's to 1e-15."""
    return lambda t: (fx * 0.5 * (1.0 - np.cos(np.pi * min(t / RAMP_S, 1.0))), 0.0, 0.0)


# chord-frame modes hold the rod's end B transversely, so the slider at B already fixes the rod's
# direction: the root's Fixed joint has two redundant orientation rows, switched off with a warning
CHORD_FRAME_ROWS = r"2 redundant constraint equation\(s\).*fixed joint .* orientation \(x\.y\); .* orientation \(x\.z\)"


def test_interface_load_stiffening_matches_fe_beam_column():
    """A column clamped at its root and guided laterally at its tip (a slider on a prismatic joint,
    attached by a spherical joint to the tip interface) carries P = P_cr / 2 through the joint and a
    small lateral load at midspan. With interface-load stiffening the midspan deflection is that of
    the FE model with the geometric stiffness of N = -P (K + Kg) -- amplified about 1 / (1 - P/P_cr);
    without stiffening it is the plain K solution."""
    L, n = 1.0, 20
    steel = Material(E=2.1e11, nu=0.3, rho=7850.0)
    sec = BeamSection.rectangle(0.02, 0.02)
    model = FEModel(line_mesh(n, L), steel, sections=sec, beam="euler-bernoulli")
    planar = model.dofs(np.arange(1, n), ["uz", "rx", "ry"])
    modes = craig_bampton(model, {"root": "root", "tip": "tip"}, n_modes=10, fixed=planar, reference="root")
    EI = steel.E * sec.Iz
    P = 0.5 * 2.0457 * np.pi ** 2 * EI / L ** 2            # half the clamped-pinned buckling load
    f_lat = 200.0

    def midspan(stiffening: bool) -> float:
        s = fm.System()
        beam = s.add(fm.FlexibleBody(modes, damping=0.6, stiffening=stiffening))
        s.add(fm.Fixed(s.ground, beam, (0, 0, 0)))
        slider = s.add(fm.RigidBody(0.1, (1e-4, 1e-4, 1e-4), position=(L, 0, 0)))
        s.add(fm.Prismatic(s.ground, slider, (L, 0, 0), (1, 0, 0)))
        s.add(fm.Spherical(beam.interface("tip"), slider, (L, 0, 0)))
        s.add(fm.Force(slider, ramped(-P)))
        s.add(fm.NodalForce(beam, n // 2, (0.0, f_lat, 0.0)))
        res = fm.simulate(s, 0.3, 1e-3)
        return float(res.deflection(beam, n // 2)[-1, 1])

    held = np.concatenate([model.dofs("root"), model.dofs(np.arange(1, n + 1), ["uz", "rx", "ry"])])
    f_ax = np.zeros(model.ndof)
    f_ax[model.dofs(n, "ux")] = -P
    Kg = model.geometric_stiffness(model.static(f_ax, held))
    guided = np.concatenate([held, model.dofs(n, "uy")])
    free = model.free_dofs(guided)
    f = np.zeros(model.ndof)
    f[model.dofs(n // 2, "uy")] = f_lat
    K = (model.K + Kg).tocsr()[free][:, free]
    u = np.zeros(model.ndof)
    import scipy.sparse.linalg as spla
    u[free] = spla.spsolve(K.tocsc(), f[free])
    ref = u[model.dofs(n // 2, "uy")][0]
    u0 = np.zeros(model.ndof)
    u0[free] = spla.spsolve(model.K.tocsr()[free][:, free].tocsc(), f[free])
    ref_linear = u0[model.dofs(n // 2, "uy")][0]
    assert ref / ref_linear == pytest.approx(2.0, rel=0.1)       # the amplification is real and large
    assert midspan(True) == pytest.approx(ref, rel=2e-3)          # modal truncation (10 + 6 modes) < 1e-3
    assert midspan(False) == pytest.approx(ref_linear, rel=2e-3)


def test_node_load_stiffening_pinned_pinned_rod():
    """Pinned-pinned modes (the chord frame: node A held, node B held transversely) and joints at
    mesh nodes: the axial pin force at B stiffens through the node load cases. Compressed to half
    the Euler load, the midspan deflection under a small lateral load matches the FE (K + Kg)
    solution and is about twice the unstiffened one."""
    L, n = 1.0, 20
    steel = Material(E=2.1e11, nu=0.3, rho=7850.0)
    sec = BeamSection.rectangle(0.02, 0.02)
    model = FEModel(line_mesh(n, L), steel, sections=sec, beam="euler-bernoulli")
    held = np.unique(np.concatenate([model.dofs(0, ["ux", "uy", "uz", "rx"]), model.dofs(n, ["uy", "uz"]),
                                     model.dofs(np.arange(n + 1), ["uz", "rx", "ry"])]))
    modes = craig_bampton(model, None, n_modes=6, fixed=held)
    P = 0.5 * np.pi ** 2 * steel.E * sec.Iz / L ** 2
    f_lat = 100.0

    def midspan(stiffening: bool) -> float:
        s = fm.System()
        rod = s.add(fm.FlexibleBody(modes, damping=0.6, stiffening=stiffening))
        s.add(fm.Fixed(s.ground, rod, (0, 0, 0)))
        slider = s.add(fm.RigidBody(0.1, (1e-4, 1e-4, 1e-4), position=(L, 0, 0)))
        s.add(fm.Prismatic(s.ground, slider, (L, 0, 0), (1, 0, 0)))
        s.add(fm.Spherical(rod.node(n), slider, (L, 0, 0)))
        s.add(fm.Force(slider, ramped(-P)))
        s.add(fm.NodalForce(rod, n // 2, (0.0, f_lat, 0.0)))
        with pytest.warns(RedundantConstraintWarning, match=CHORD_FRAME_ROWS):
            res = fm.simulate(s, 0.3, 1e-3)
        return float(res.deflection(rod, n // 2)[-1, 1])

    import scipy.sparse.linalg as spla
    f_ax = np.zeros(model.ndof)
    f_ax[model.dofs(n, "ux")] = -P
    Kg = model.geometric_stiffness(model.static(f_ax, held))
    free = model.free_dofs(held)
    f = np.zeros(model.ndof)
    f[model.dofs(n // 2, "uy")] = f_lat
    u, u0 = np.zeros(model.ndof), np.zeros(model.ndof)
    u[free] = spla.spsolve((model.K + Kg).tocsr()[free][:, free].tocsc(), f[free])
    u0[free] = spla.spsolve(model.K.tocsr()[free][:, free].tocsc(), f[free])
    ref, ref0 = u[model.dofs(n // 2, "uy")][0], u0[model.dofs(n // 2, "uy")][0]
    assert ref / ref0 == pytest.approx(2.0, rel=0.05)
    assert midspan(True) == pytest.approx(ref, rel=2e-3)      # 6 modes: the static shape is nearly mode 1
    assert midspan(False) == pytest.approx(ref0, rel=2e-3)


def test_buckling_is_detected_with_time_and_load():
    """A pinned-pinned rod (chord-frame modes) compressed through its end joint by a force ramped to
    1.5 x the Euler load: with stability_check the run stops when the stiffened modal stiffness turns
    indefinite, near P = P_cr (quasi-static ramp), naming the time, the joint and the load."""
    from flexmb.errors import InstabilityError
    L, n = 1.0, 10
    steel = Material(E=2.1e11, nu=0.3, rho=7850.0)
    sec = BeamSection.rectangle(0.02, 0.02)
    model = FEModel(line_mesh(n, L), steel, sections=sec, beam="euler-bernoulli")
    held = np.unique(np.concatenate([model.dofs(0, ["ux", "uy", "uz", "rx"]), model.dofs(n, ["uy", "uz"]),
                                     model.dofs(np.arange(n + 1), ["uz", "rx", "ry"])]))
    modes = craig_bampton(model, None, n_modes=2, fixed=held)
    P_cr = np.pi ** 2 * steel.E * sec.Iz / L ** 2
    s = fm.System()
    rod = s.add(fm.FlexibleBody(modes, damping=0.05, stability_check=True, name="rod"))
    s.add(fm.Fixed(s.ground, rod, (0, 0, 0)))
    slider = s.add(fm.RigidBody(0.1, (1e-4, 1e-4, 1e-4), position=(L, 0, 0)))
    s.add(fm.Prismatic(s.ground, slider, (L, 0, 0), (1, 0, 0)))
    s.add(fm.Spherical(rod.node(n), slider, (L, 0, 0), name="pin"))
    s.add(fm.Force(slider, lambda t: (-1.5 * P_cr * t, 0.0, 0.0)))
    with pytest.warns(RedundantConstraintWarning, match=CHORD_FRAME_ROWS), pytest.raises(InstabilityError, match=r"'rod' became unstable at t = 0\.6[0-9]* s.*joint 'pin'.*"
                                               r"compression of 2\.76[0-9]*e\+04 N.*buckling load for that load 2\.76") as err:
        fm.simulate(s, 1.0, 1e-3)
    assert err.value.result.t[-1] == pytest.approx(1.0 / 1.5, abs=5e-3)   # P(t) = P_cr at t = 2/3 s
