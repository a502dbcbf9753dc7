"""Every analytic derivative of the assembled equations against central differences.

Checked per joint type and force element at a random, inconsistent state (so
constraint residuals are non-zero and every Hessian term matters). Each entry of a Newton
block is held to the error the central difference can carry in its row (``fd_tolerance``:
truncation plus round-off of the differenced residual values), not to one number for the
whole block (1e-6 of the block's largest entry was 1.33 on flexible bodies, above 14-66 % of
their nonzero entries, while the measured error is about 1e-5).
"""
import numpy as np
import pytest
import scipy.sparse as sp

import flexmb as fm
from flexmb import rotations as rot
from flexmb.contact import mesh as mesh_contact

rng = np.random.default_rng(7)


def two_bodies():
    s = fm.System(gravity=(0.3, -9.81, 0.2))
    a = s.add(fm.RigidBody(3.0, [[0.2, 0.01, 0.0], [0.01, 0.3, 0.02], [0.0, 0.02, 0.4]], position=(0.1, 0.2, 0.3),
                           orientation=rot.from_axis_angle((1, 2, 3), 0.4),
                           name="a"))
    b = s.add(fm.RigidBody(2.0, (0.1, 0.15, 0.2), position=(1.0, -0.2, 0.4), name="b"))
    return s, a, b


def beam_modes(n_modes=3, direction=(1.0, 0.3, 0.2)):
    """A small Craig-Bampton beam (root = frame, tip interface) for flexible-body cases."""
    from flexmb.fem.materials import Material
    from flexmb.fem.model import FEModel
    from flexmb.fem.sections import BeamSection
    from flexmb.reduction import craig_bampton
    from verification.fem.meshes import line_mesh
    model = FEModel(line_mesh(4, 1.5, direction=direction), Material(E=2e9, nu=0.3, rho=2000.0),
                    sections=BeamSection.rectangle(0.05, 0.03, nu=0.3))
    return craig_bampton(model, {"root": "root", "tip": "tip"}, n_modes=n_modes, reference="root")


def flexible(name="f", n_modes=3, position=(0.2, -0.1, 0.3)):
    """A flexible body with damping and random (symmetric) stiffening load-case matrices."""
    body = fm.FlexibleBody(beam_modes(n_modes), position=position, orientation=rot.from_axis_angle((0.3, 0.5, 1), 0.7),
                           damping=0.02, stiffening=False, name=name)
    G = rng.standard_normal((12, body.n_modes, body.n_modes))
    body.G_inertial, body.stiffening = G + G.transpose(0, 2, 1), True
    Gi = rng.standard_normal((6, body.n_modes, body.n_modes))
    body.G_interfaces = {"tip": Gi + Gi.transpose(0, 2, 1)}      # joints at "tip" load the body there
    return body


def make_flexible(kind):
    s, a, b = two_bodies()
    f = s.add(flexible())
    tip = f.modes.interface("tip").position
    Pt = f.initial_frame()[0] + f.initial_frame()[1] @ tip      # tip interface, global
    ax = (0.2, 0.3, 1.0)
    items = {
        "flex-body": lambda: [],
        "flex-revolute-interface": lambda: [fm.Revolute(a, f.interface("tip"), Pt, ax)],
        "flex-fixed-node": lambda: [fm.Fixed(f.node(2), b, Pt + 0.1)],
        "flex-angle-driver": lambda: [j := fm.Revolute(s.ground, f.interface("root"), (0.2, -0.1, 0.3), ax),
                                      fm.Driver(j, angle=lambda t: 0.3 * t * t)],
        "flex-spring-node": lambda: [fm.SpringDamper(f.node(3), a, point_a=Pt, point_b=(0.1, 0.2, 0.3), k=50.0, c=3.0),
                                     fm.Bushing(b, f.interface("tip"), Pt, stiffness=[10, 20, 30, 4, 5, 6],
                                                damping=[1, 2, 3, .4, .5, .6])],
        # elongation 0.2-2.0 m at the random states: inside the segment (-1, 3)
        "flex-nonlinear-spring": lambda: [fm.NonlinearSpring(f.node(3), a, point_a=Pt, point_b=(0.1, 0.2, 0.3),
                                                             force=([-1.0, 3.0, 5.0], [-80.0, 120.0, 400.0]),
                                                             damping=3.0, length=0.4)],
        "flex-nodal-force": lambda: [fm.NodalForce(f, [2, 4], (1.0, -2.0, 3.0)),
                                     fm.NodalForce(f, "tip", lambda t: (t, 1.0, -1.0), body_fixed=True)],
        "flex-flex": lambda: [g := s.add(flexible("g", n_modes=2, position=tuple(Pt))),
                              fm.Spherical(f.interface("tip"), g.interface("root"), Pt),
                              fm.Distance(f.node(1), g.node(3), point_a=Pt - 0.3,
                                          point_b=g.initial_frame()[0] + 0.5)][1:],
        "flex-node-plane": lambda: [mesh_contact.NodePlaneContact(
            s.ground, f, nodes=np.arange(5), point=0.5 * (f.initial_frame()[0] + Pt), normal=(0.0, 1.0, 0.1),
            law=fm.contact.LankaraniNikravesh(1e4, 0.6), thickness=0.3, margin=2.0)],
        "flex-node-mesh": lambda: [mesh_contact.NodeMeshContact(
            a, f, nodes=np.arange(5), mesh=mesh_contact.TriangleMesh(
                a.to_local_point(0.5 * (f.initial_frame()[0] + Pt)) + 0.6 * np.array(
                    [[-1, 0, -1], [1, 0, -1], [1, 0, 1], [-1, 0, 1]]), [[0, 2, 1], [0, 3, 2]]),
            law=fm.contact.HuntCrossley(1e4, 0.8), thickness=0.25, margin=2.0)],
    }[kind]()
    for it in items:
        s.add(it)
    return s


def make(kind):
    if kind.startswith("flex"):
        return make_flexible(kind)
    s, a, b = two_bodies()
    P, ax = (0.5, 0.1, 0.3), (0.2, 0.3, 1.0)
    ground = s.ground
    items = {
        "fixed": lambda: [fm.Fixed(a, b, P)],
        "revolute": lambda: [fm.Revolute(a, b, P, ax)],
        "revolute-ground": lambda: [fm.Revolute(ground, a, P, ax)],
        "spherical": lambda: [fm.Spherical(a, b, P)],
        "prismatic": lambda: [fm.Prismatic(a, b, P, ax)],
        "cylindrical": lambda: [fm.Cylindrical(a, b, P, ax)],
        "universal": lambda: [fm.Universal(a, b, point=P, axis_a=(1, 0, 0), axis_b=(0, 1, 0))],
        "planar": lambda: [fm.Planar(a, b, P, ax)],
        "distance": lambda: [fm.Distance(a, b, point_a=(0, 0, 0), point_b=(1.2, 0.1, 0.2))],
        "angle-driver": lambda: [j := fm.Revolute(a, b, P, ax), fm.Driver(j, angle=lambda t: 0.3 * t * t)],
        "displacement-driver": lambda: [j := fm.Prismatic(a, b, P, ax),
                                        fm.Driver(j, displacement=fm.TimeFunction(np.sin, np.cos, lambda t: -np.sin(t)))],
        "coordinate-driver": lambda: [fm.Driver(b, coordinate="y", value=lambda t: 0.1 * t)],
        "spring-damper": lambda: [fm.SpringDamper(a, b, point_a=(0, 0.1, 0), point_b=(1.1, 0.0, 0.3), k=120.0, c=4.0,
                                                  free_length=0.7)],
        "rotational-spring": lambda: [fm.RotationalSpringDamper(a, b, ax, k=30.0, c=2.0, free_angle=0.2)],
        # elongation about 0.45 m at the random states: inside the middle segment (0, 1.2), away from the kinks
        "nonlinear-spring": lambda: [fm.NonlinearSpring(a, b, point_a=(0, 0.1, 0), point_b=(1.1, 0.0, 0.3),
                                                        force=([-0.5, 0.0, 1.2, 2.0], [-200.0, 0.0, 150.0, 600.0]),
                                                        damping=4.0, length=0.7)],
        "bushing": lambda: [fm.Bushing(a, b, P, stiffness=[10, 20, 30, 4, 5, 6], damping=[1, 2, 3, .4, .5, .6])],
        "forces": lambda: [fm.Force(a, (1, 2, 3), local_point=(0.1, -0.2, 0.3)),
                           fm.Force(b, lambda t: (1, -2, t), local_point=(0.3, 0.1, 0), body_fixed=True),
                           fm.Torque(a, (0.5, -1, 2)), fm.Torque(b, (1, 1, -1), body_fixed=True)],
        "dc-motor": lambda: [j := fm.Revolute(a, b, P, ax),
                             fm.DCMotor(j, K_p=0.7, r_a=0.4, L_a=0.05, D=0.2, voltage=lambda t: 60.0 + t)],
        "contacts": lambda: [fm.SpherePlaneContact(s.ground, a, point=(0, 0, 0), normal=(0.1, 1.0, 0.2), center=(0.1, 0.2, 0.3),
                                                   radius=0.5,
                                                   law=fm.contact.LankaraniNikravesh(1e4, 0.6)),
                             fm.SphereSphereContact(a, b, center_a=(0.1, 0.2, 0.3), center_b=(1.0, -0.2, 0.4),
                                                    radius_a=0.5, radius_b=0.5,
                                                    law=fm.contact.Flores(2e4, 0.7))],
        "user-force": lambda: [fm.UserForce([a, b], lambda t, q, v: -3.0 * q * np.sin(q) - 0.5 * v * q)],
        "sphere-mesh": lambda: [  # a sphere in the face, edge and vertex regions of a tetrahedron on a
            mesh_contact.SphereMeshContact(a, b, mesh=tet, center=a.initial_frame()[0] + a.initial_frame()[1] @ c,
                                           radius=0.5, law=fm.contact.LankaraniNikravesh(1e4, 0.6))
            for tet in [mesh_contact.TriangleMesh([[0, 0, 0], [0.6, 0, 0], [0, 0.6, 0], [0, 0, 0.6]],
                                                  [[0, 2, 1], [0, 1, 3], [1, 2, 3], [0, 3, 2]], closed=True)]
            for c in ((0.37, 0.37, 0.37), (0.3, -0.25, -0.25), (-0.2, -0.2, -0.2))],
        "sphere-cloud": lambda: [mesh_contact.SphereCloudContact(
            [a, a, b, b], [(0.1, 0.2, 0.3), (0.2, 0.3, 0.3), (1.0, -0.2, 0.4), (1.0, -0.3, 0.5)], 0.6,
            fm.contact.Flores(2e4, 0.7), planes=[(s.ground, (0, 0, 0), (0.1, 1.0, 0.2))], coupling="all")],
        # friction: damped laws with a high approach-speed floor keep every pair pressing at the random state;
        # ramp speeds of the order of the random slip speeds put the laws in their non-saturated range
        "contact-friction": lambda: [
            fm.SpherePlaneContact(s.ground, a, point=(0, 0, 0), normal=(0.1, 1.0, 0.2), center=(0.1, 0.2, 0.3),
                                  radius=0.5,
                                  law=fm.contact.LankaraniNikravesh(1e4, 0.6, min_approach_speed=10.0),
                                  friction=fm.contact.CoulombRamp(0.3, 5.0)),
            fm.SphereSphereContact(a, b, center_a=(0.1, 0.2, 0.3), center_b=(1.0, -0.2, 0.4), radius_a=0.6,
                                   radius_b=0.6,
                                   law=fm.contact.Flores(2e4, 0.7, min_approach_speed=10.0),
                                   friction=fm.contact.BrownMcPhee(0.5, 0.3, 0.8))],
        "contact-clearance": lambda: [
            fm.contact.ClearanceJoint(a, b, point=P, axis=ax, clearance=0.01, radius_pin=0.05,
                                      law=fm.contact.LankaraniNikravesh(1e5, 0.8, min_approach_speed=10.0),
                                      friction=fm.contact.CoulombRamp(0.2, 2.0, shape="tanh")),
            fm.contact.ClearanceJoint(b, a, point=(0.7, 0, 0.2), axis=(1, 0, 0.3), clearance=0.02, radius_pin=0.05,
                                      law=fm.contact.LankaraniNikravesh(1e5, 0.8, n=1.0, min_approach_speed=10.0),
                                      friction=fm.contact.BrownMcPhee(0.4, 0.2, 1.5), pin_center=(0.75, 0.03, 0.2))],
    }[kind]()
    for it in items:
        s.add(it)
    return s


KINDS = ["fixed", "revolute", "revolute-ground", "spherical", "prismatic", "cylindrical", "universal", "planar",
         "distance", "angle-driver", "displacement-driver", "coordinate-driver", "spring-damper",
         "rotational-spring", "bushing", "forces", "dc-motor", "contacts", "contact-friction", "contact-clearance",
         "user-force",
         "flex-body", "flex-revolute-interface", "flex-fixed-node", "flex-angle-driver", "flex-spring-node",
         "flex-nodal-force", "flex-flex",
         "sphere-mesh", "sphere-cloud", "flex-node-plane", "flex-node-mesh", "nonlinear-spring", "flex-nonlinear-spring"]


def fd(f, x, eps=1e-6):
    cols = []
    for k in range(x.size):
        d = np.zeros_like(x)
        d[k] = eps
        cols.append((f(x + d) - f(x - d)) / (2 * eps))
    return np.array(cols).T


FD_TRUNCATION = 1e-8
"""Truncation bound of a central difference with h = 1e-6, as a fraction of the row's largest
entry: h^2/6 |f'''| with |f'''| <= |f'| / l^2 for lengths l >= 4 mm (the smallest scale of these
models: contact radii, offsets) is 1e-12 / 6 / 1.6e-5 = 1e-8 of the row's |f'|. The step that balances truncation
h^2 |f'''| against round-off eps_mach |f| / h for unit scales, h ~ eps_mach^(1/3) = 6e-6 (error ~ eps_mach^(2/3)),
is not used: the stiff contact laws have large third derivatives, and at h = 6e-6 the sphere-mesh position
block's error exceeds this bound 20-fold (measured), while at 1e-6 every block stays within 0.43 of it."""


def fd_tolerance(f, x, ref: np.ndarray, eps: float, truncation: float = FD_TRUNCATION) -> np.ndarray:
    """Per-row bound (column vector) on the error of ``ref = fd(f, x, eps)``.

    Round-off: f_i is a sum of terms of size up to s_i = |f_i(x)| + sum_j |df_i/dx_j x_j| (the row's
    terms before they cancel: elastic forces of 1e4-1e5 N in rows that sum to much less), each
    value rounded to a few eps_mach s_i (taken as 10), so the difference quotient errs by up to
    10 eps_mach s_i / eps. Truncation: ``truncation`` times the row's largest entry (zero for
    rows affine in x). Measured here: the analytic blocks differ from the differences by at most
    0.43 of this bound (sphere-mesh, position block), and no nonzero entry is below it, so a
    dropped term fails the check."""
    rows = np.abs(f(x)) + np.abs(ref) @ np.abs(x)
    return (10.0 * np.finfo(float).eps * rows / eps + truncation * np.abs(ref).max(axis=1))[:, None]


def assert_matches_fd(S: np.ndarray, ref: np.ndarray, tol: np.ndarray, what) -> None:
    """Every entry of the analytic block ``S`` within its row's finite-difference bound ``tol``."""
    err = np.abs(S - ref)
    i, j = np.unravel_index(np.argmax(err / tol), err.shape)
    assert (err <= tol).all(), (f"{what}: entry ({i}, {j}) = {S[i, j]:.10g} against finite differences "
                                f"{ref[i, j]:.10g}, error {err[i, j]:.3g} > bound {tol[i, 0]:.3g}")


@pytest.mark.parametrize("kind", KINDS)
def test_newton_matrix_blocks_match_finite_differences(kind):
    asm = make(kind).compile()
    q0, v0 = asm.initial_state()
    q = q0 + 0.05 * rng.standard_normal(q0.size)
    v = v0 + 0.3 * rng.standard_normal(q0.size)
    a = rng.standard_normal(q0.size)
    lam = rng.standard_normal(asm.m)
    t = 0.7
    if asm.contacts:       # contact approach speeds are captured at accepted states, constant within a step
        asm.step_end(q, v, lam, t)
    for coef, fun, x in [((0, 0, 1, 1, 0), lambda x: asm.residual(x, v, a, lam, t)[0], q),
                         ((0, 1, 0, 0, 0), lambda x: asm.residual(q, x, a, lam, t)[0], v),
                         ((1, 0, 0, 0, 0), lambda x: asm.residual(q, v, x, lam, t)[0], a)]:
        S = asm.residual(q, v, a, lam, t, coef=coef)[2]
        S = (S.toarray() if sp.issparse(S) else S)[:asm.nq, :asm.nq]
        # the residual is affine in the accelerations: a large step is exact there and avoids round-off
        step = 1e-3 if coef[0] else 1e-6
        ref = fd(fun, x, eps=step)
        assert_matches_fd(S, ref, fd_tolerance(fun, x, ref, step, truncation=0.0 if coef[0] else FD_TRUNCATION),
                          (kind, coef))
    c = asm.constraints(q, v, t)
    J = c.jac.toarray()
    assert np.abs(J - fd(lambda x: asm.constraints(x, v, t).phi, q)).max() < 1e-6
    # velocity equation Phi_q v + Phi_t = d Phi/dt and acceleration equation Phi_q a = gamma + d2Phi/dt2
    h = 1e-4
    path = lambda tau: asm.constraints(q + tau * v + 0.5 * tau * tau * a, v, t + tau).phi   # noqa: E731
    d1 = (path(h) - path(-h)) / (2 * h)
    d2 = (path(h) - 2 * path(0) + path(-h)) / h ** 2
    assert np.allclose(d1, J @ v + c.phi_t, atol=1e-6)
    assert np.allclose(d2, J @ a - c.gamma, atol=1e-5)


def test_fd_bound_catches_a_dropped_entry_of_a_flexible_block():
    """The per-row bound can fail: on the flexible body's position block (entries up to 1.3e6) a
    single entry below 1.33 set to zero -- accepted by the former block-wide bound 1e-6 max|entry|
    -- is refused, and every nonzero entry exceeds its bound (so dropping any one term fails)."""
    asm = make("flex-body").compile()
    local = np.random.default_rng(11)
    q0, v0 = asm.initial_state()
    q = q0 + 0.05 * local.standard_normal(q0.size)
    v = v0 + 0.3 * local.standard_normal(q0.size)
    a = local.standard_normal(q0.size)
    lam = local.standard_normal(asm.m)
    S = asm.residual(q, v, a, lam, 0.7, coef=(0, 0, 1, 1, 0))[2]
    S = (S.toarray() if sp.issparse(S) else S)[:asm.nq, :asm.nq]
    fun = lambda x: asm.residual(x, v, a, lam, 0.7)[0]   # noqa: E731
    ref = fd(fun, q, eps=1e-6)
    tol = fd_tolerance(fun, q, ref, 1e-6)
    nonzero = np.abs(ref) > 0
    assert (np.abs(ref) > tol)[nonzero].all()
    small = np.flatnonzero(nonzero.ravel() & (np.abs(ref.ravel()) < 1e-6 * np.abs(ref).max()))
    assert small.size, "the block has entries below the former bound"
    wrong = S.copy()
    wrong.ravel()[small[0]] = 0.0
    assert np.abs(wrong - ref).max() <= 1e-6 * np.abs(ref).max()     # the former bound accepted it
    with pytest.raises(AssertionError, match="entry"):
        assert_matches_fd(wrong, ref, tol, "flex-body with one entry dropped")
