"""Models of the slider-crank suite and their independent references.

**Flexible slider-crank** (the benchmark of Jahnke, Popp & Dirr 1993 and Simeon, *Computational
Flexible Multibody Dynamics*, Springer 2013, in the variant with a circular rod): rigid crank
a = 0.15 m turning about the z axis at a constant 150 rad/s; steel connecting rod L = 0.30 m,
circular section d = 6 mm, E = 2.0e11 Pa, rho = 7870 kg/m^3 (nu = 0.3; Euler-Bernoulli); slider
of mass m_rod / 2 on a prismatic joint along x; no gravity, no damping. Start at crank angle 0
(crank along +x, rod from (a, 0) to (a + L, 0)), rod undeformed, every body with the velocity of
the rigid mechanism; three crank revolutions. The crank's own inertia does not matter (its
motion is prescribed); it is a 0.1 kg bar.

flexmb models (:func:`flexible_slider_crank`):

* ``rigid-rod``: the rod as a RigidBody;
* ``modal-stiffened-{2,4}`` / ``modal-linear-{2,4}``: FlexibleBody with 2 or 4 pinned-pinned
  modes of a 20-element mesh, with or without geometric stiffening (inertial load cases plus the
  pin loads at the joint nodes);
* ``nonlinear-beam``: NonlinearBeam (Green-Lagrange axial strain, all nodal dofs), 16 elements.

The rod's frame is the chord frame: node A (at the crank pin) holds ux, uy, uz, rx, node B (at the
slider) holds uy, uz, and every node holds its out-of-plane dofs uz, rx, ry. Its origin is at A,
its x axis through B, so the midpoint deflection relative to the chord is the y component of the
midpoint node's deflection in body axes.

**Independent reference** (:func:`galerkin`; numpy/scipy only, no flexmb): with the crank
driven and the chord length fixed at L, the chord moves exactly like the rigid mechanism
(closed form :func:`rigid_kinematics`), so the rod's bending relative to the chord is the
Euler-Bernoulli beam in the moving chord frame,

    rho A (w_tt + a_Ay + beta_dd x - beta_d^2 w) + EI w'''' - (N w')' = 0,   w = w'' = 0 at x = 0, L,

with the chord-frame crank-pin acceleration (a_Ax, a_Ay), the rod angle beta, and the axial force
from axial equilibrium ``N(x) = N_B - rho A int_x^L a_x ds``, ``a_x = a_Ax - beta_d^2 x
[- beta_dd w - 2 beta_d w_t]``. N_B, the axial force at the slider end, follows from the slider
(m_s x_B_dd = F_x) and the moment balance of the rod about A, ``L V_B = int rho A (x a_y - w a_x)``.
Galerkin with the exact pinned-pinned modes sin(k pi x / L), k = 1..K, DOP853 at rtol 1e-10.
Theories: ``"load-case"`` (the axial force of the rigid-frame inertia and of the actual pin force,
which is what the stiffened modal body's load cases contain), ``"second-order"`` (plus the
bracketed flexible inertia in a_x) and ``"linear"`` (no axial-force term: the unstiffened modal
body). It is a moderate-rotation theory: the chord foreshortening of the bent, nearly inextensible
rod and its feedback on the mechanism are absent; the nonlinear beam has them.

**Singular slider-crank** (Neto & Ambrosio 2002 §5.2): crank and rod of equal length
a = b = 0.308 m, driven from rest at crank angle 0 by a constant 100 N m torque. The paper's text
gives the lengths and the torque but not the masses and inertias; here crank and rod are uniform
slender bars of 1 kg, the slider 1 kg, no gravity. At crank angle 90 + k 180 deg the rod lies on
the crank and the slider is at the crank pivot: the constraint Jacobian loses rank and two motion
branches cross, x = 2 a cos(phi) with rod angle -phi (the physical continuation) and x = 0 with
rod angle pi + phi. Work-energy closed form on the first branch: :func:`singular_crank_speed`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

import flexmb as fm
from flexmb.fem.materials import Material
from flexmb.fem.mesh import FEMesh
from flexmb.fem.model import FEModel
from flexmb.fem.sections import BeamSection
from flexmb.reduction import craig_bampton

# -- flexible slider-crank data -----------------------------------------------------------------
A_CRANK = 0.15          # m, crank length
L_ROD = 0.30            # m, rod length
D_ROD = 0.006           # m, rod diameter
E_STEEL, NU_STEEL, RHO_STEEL = 2.0e11, 0.3, 7870.0
OMEGA = 150.0           # rad/s, crank speed
T_REV = 2.0 * math.pi / OMEGA
T_END = 3.0 * T_REV
SECTION = BeamSection.circle(D_ROD, nu=NU_STEEL)
RHO_A = RHO_STEEL * SECTION.A                  # kg/m
EI = E_STEEL * SECTION.Iz                      # N m^2
M_ROD = RHO_A * L_ROD
M_SLIDER = 0.5 * M_ROD
OMEGA_1 = (math.pi / L_ROD) ** 2 * math.sqrt(EI / RHO_A)
"""First pinned-pinned bending frequency of the rod, rad/s (about 829)."""
P_EULER = math.pi ** 2 * EI / L_ROD ** 2
"""Euler buckling load of the pinned-pinned rod, N (about 1395)."""
M_CRANK = 0.1
MODELS = ("rigid-rod", "modal-stiffened-2", "modal-linear-2", "modal-stiffened-4", "modal-linear-4",
          "nonlinear-beam")
N_ELEMENTS_MODAL = 20
N_ELEMENTS_NONLINEAR = 16


def rod_model(n_elements: int) -> FEModel:
    """Euler-Bernoulli line mesh of the rod along +x from its node A (origin) to node B."""
    x = np.linspace(0.0, L_ROD, n_elements + 1)
    points = np.column_stack([x, np.zeros_like(x), np.zeros_like(x)])
    lines = np.column_stack([np.arange(n_elements), np.arange(1, n_elements + 1)])
    mesh = FEMesh(points, {"line": lines}, node_sets={"A": [0], "B": [n_elements]})
    return FEModel(mesh, Material(E=E_STEEL, nu=NU_STEEL, rho=RHO_STEEL), sections=SECTION,
                   beam="euler-bernoulli")


def pinned_pinned_dofs(model: FEModel) -> np.ndarray:
    """Held dofs of the chord frame: A: ux, uy, uz, rx; B: uy, uz; all nodes: uz, rx, ry."""
    n = model.n_nodes - 1
    return np.unique(np.concatenate([model.dofs(0, ["ux", "uy", "uz", "rx"]), model.dofs(n, ["uy", "uz"]),
                                     model.dofs(np.arange(n + 1), ["uz", "rx", "ry"])]))


@dataclass
class SliderCrank:
    """A built flexible slider-crank: the system and what the cases read from it."""

    system: fm.System
    kind: str
    rod: object
    slider: fm.RigidBody
    pin_b: object         # revolute rod-slider; its reaction is the force on the slider
    mid_node: int | None  # mesh node at the rod's midpoint (None for the rigid rod)
    n_elements: int = 0


def flexible_slider_crank(kind: str, n_elements: int | None = None) -> SliderCrank:
    """Build one model of :data:`MODELS` (or ``nonlinear-beam`` with another mesh)."""
    if kind not in MODELS:
        raise ValueError(f"unknown model {kind!r}; choose one of {MODELS}")
    s = fm.System(name=f"slider-crank {kind}")
    w_rod = -OMEGA * A_CRANK / L_ROD             # rigid rod angular velocity at crank angle 0
    v_pin = (0.0, OMEGA * A_CRANK, 0.0)          # crank-pin velocity at crank angle 0
    crank = s.add(fm.RigidBody(M_CRANK, (1e-6, M_CRANK * A_CRANK ** 2 / 12, M_CRANK * A_CRANK ** 2 / 12),
                               position=(A_CRANK / 2, 0, 0), velocity=(0.0, OMEGA * A_CRANK / 2, 0.0),
                               angular_velocity=(0, 0, OMEGA), name="crank"))
    mid = None
    if kind == "rigid-rod":
        J = M_ROD * L_ROD ** 2 / 12
        rod = fm.RigidBody(M_ROD, (1e-3 * J, J, J), position=(A_CRANK + L_ROD / 2, 0, 0),
                           velocity=(0.0, OMEGA * A_CRANK / 2, 0.0), angular_velocity=(0, 0, w_rod), name="rod")
        site_a, site_b = rod, rod
        n_elements = 0
    else:
        if n_elements is None:
            n_elements = N_ELEMENTS_NONLINEAR if kind == "nonlinear-beam" else N_ELEMENTS_MODAL
        fe = rod_model(n_elements)
        held = pinned_pinned_dofs(fe)
        if kind == "nonlinear-beam":
            rod = fm.NonlinearBeam(fe, held, position=(A_CRANK, 0, 0), velocity=v_pin,
                                   angular_velocity=(0, 0, w_rod), name="rod")
        else:
            stiff, n_modes = kind.split("-")[1], int(kind.split("-")[2])
            modes = craig_bampton(fe, None, n_modes=n_modes, fixed=held)
            rod = fm.FlexibleBody(modes, position=(A_CRANK, 0, 0), velocity=v_pin, angular_velocity=(0, 0, w_rod),
                                  stiffening=(stiff == "stiffened"), name="rod")
        site_a, site_b = rod.node(0), rod.node(n_elements)
        mid = n_elements // 2
    s.add(rod)
    slider = s.add(fm.RigidBody(M_SLIDER, (1e-7, 1e-7, 1e-7), position=(A_CRANK + L_ROD, 0, 0), name="slider"))
    hub = s.add(fm.Revolute(s.ground, crank, (0, 0, 0), (0, 0, 1), name="crank bearing"))
    s.add(fm.Driver(hub, angle=fm.TimeFunction.linear(OMEGA), name="crank drive"))
    s.add(fm.Revolute(crank, site_a, (A_CRANK, 0, 0), (0, 0, 1), name="crank pin"))
    pin_b = s.add(fm.Revolute(site_b, slider, (A_CRANK + L_ROD, 0, 0), (0, 0, 1), name="slider pin"))
    s.add(fm.Prismatic(s.ground, slider, (A_CRANK + L_ROD, 0, 0), (1, 0, 0), name="slider guide"))
    return SliderCrank(s, kind, rod, slider, pin_b, mid, n_elements)


# -- rigid kinematics (closed form) ----------------------------------------------------------------
def rigid_kinematics(t) -> dict[str, np.ndarray]:
    """Rigid slider-crank driven at OMEGA from crank angle 0: rod angle beta (sin beta = -(a/L)
    sin phi) and its rates, slider position and acceleration, crank-pin acceleration in chord axes."""
    t = np.asarray(t, dtype=float)
    phi = OMEGA * t
    s, c = np.sin(phi), np.cos(phi)
    lam = A_CRANK / L_ROD
    sb = -lam * s
    cb = np.sqrt(1.0 - sb * sb)
    bd = -lam * OMEGA * c / cb
    bdd = (lam * s * OMEGA ** 2 + sb * bd ** 2) / cb
    x = A_CRANK * c + L_ROD * cb
    xdd = -A_CRANK * c * OMEGA ** 2 - L_ROD * (cb * bd ** 2 + sb * bdd)
    cpb, spb = c * cb + s * sb, s * cb - c * sb          # cos, sin of (phi - beta)
    return {"sin_beta": sb, "cos_beta": cb, "beta_d": bd, "beta_dd": bdd, "x_slider": x, "x_slider_dd": xdd,
            "a_Ax": -A_CRANK * OMEGA ** 2 * cpb, "a_Ay": -A_CRANK * OMEGA ** 2 * spb}


def rigid_axial_force(t) -> np.ndarray:
    """Axial force at the slider end of a rigid rod (tension positive), N: slider x equation plus
    the rod's moment balance about the crank pin."""
    k = rigid_kinematics(t)
    v_b = RHO_A * (k["a_Ay"] * L_ROD / 2 + k["beta_dd"] * L_ROD ** 2 / 3)
    return (-M_SLIDER * k["x_slider_dd"] + v_b * k["sin_beta"]) / k["cos_beta"]


# -- independent Galerkin reference ------------------------------------------------------------------
THEORIES = ("load-case", "second-order", "linear")


def _galerkin_matrices(K: int, nq: int = 96) -> dict:
    xg, wg = np.polynomial.legendre.leggauss(nq)
    x, w = 0.5 * L_ROD * (xg + 1.0), 0.5 * L_ROD * wg
    k = np.arange(1, K + 1)
    arg = np.outer(x, k) * math.pi / L_ROD
    ph, dph = np.sin(arg), np.cos(arg) * (k * math.pi / L_ROD)
    Q = (np.cos(arg) - (-1.0) ** k) * (L_ROD / (k * math.pi))      # int_x^L phi_m ds
    return {"K": K, "I0": w @ ph, "I1": (w * x) @ ph,
            "P0": np.einsum("q,qk,qj->kj", w, dph, dph),
            "P1": np.einsum("q,qk,qj->kj", w * (L_ROD - x), dph, dph),
            "P2": np.einsum("q,qk,qj->kj", w * (L_ROD ** 2 - x ** 2), dph, dph),
            "T": np.einsum("q,qm,qk,qj->mkj", w, Q, dph, dph),
            "k_modal": EI * (k * math.pi / L_ROD) ** 4 * (L_ROD / 2), "mid": np.sin(k * math.pi / 2)}


def _galerkin_accel(S: dict, theory: str):
    """(t, eta, eta_d) -> (eta_dd, N_B) of the Galerkin equations."""
    K, m0 = S["K"], RHO_A * L_ROD / 2

    def solve(t, eta, etad):
        k = rigid_kinematics(t)
        sb, cb, bd, bdd = k["sin_beta"], k["cos_beta"], k["beta_d"], k["beta_dd"]
        aAx, aAy, xdd = k["a_Ax"], k["a_Ay"], k["x_slider_dd"]
        v_rigid = RHO_A * (aAy * L_ROD / 2 + bdd * L_ROD ** 2 / 3)
        rhs = -RHO_A * (aAy * S["I0"] + bdd * S["I1"]) - S["k_modal"] * eta + m0 * bd ** 2 * eta
        M = m0 * np.eye(K)
        if theory != "linear":
            G = -RHO_A * aAx * S["P1"] + 0.5 * RHO_A * bd ** 2 * S["P2"]
            if theory == "second-order":
                G = G + np.einsum("m,mkj->kj", RHO_A * (bdd * eta + 2.0 * bd * etad), S["T"])
            # N_B with the flexible part of V_B: (rho A / L)(I1 . eta_dd - a_Ax I0 . eta)
            nb0 = (-M_SLIDER * xdd + (v_rigid - RHO_A / L_ROD * aAx * (S["I0"] @ eta)) * sb) / cb
            p0eta = S["P0"] @ eta
            M = M + (sb / cb) * (RHO_A / L_ROD) * np.outer(p0eta, S["I1"])
            rhs = rhs - G @ eta - nb0 * p0eta
        etadd = np.linalg.solve(M, rhs)
        v_b = v_rigid + RHO_A / L_ROD * (S["I1"] @ etadd - aAx * (S["I0"] @ eta))
        return etadd, (-M_SLIDER * xdd + v_b * sb) / cb
    return solve


def galerkin(K: int, theory: str = "second-order", rtol: float = 1e-10, n_out: int = 6001,
             t_end: float = T_END) -> dict[str, np.ndarray]:
    """Reference histories: t (s), ``mid`` (midpoint deflection / L) and ``axial`` (N_B, N)."""
    from scipy.integrate import solve_ivp
    if theory not in THEORIES:
        raise ValueError(f"theory must be one of {THEORIES}")
    S = _galerkin_matrices(K)
    solve = _galerkin_accel(S, theory)

    def f(t, y):
        return np.concatenate([y[K:], solve(t, y[:K], y[K:])[0]])
    t_eval = np.linspace(0.0, t_end, n_out)
    sol = solve_ivp(f, (0.0, t_end), np.zeros(2 * K), method="DOP853", rtol=rtol, atol=1e-14, t_eval=t_eval)
    if sol.status != 0:
        raise RuntimeError(f"Galerkin reference failed: {sol.message}")
    axial = np.array([solve(t, y[:K], y[K:])[1] for t, y in zip(sol.t, sol.y.T)])
    return {"t": sol.t, "mid": sol.y[:K].T @ S["mid"] / L_ROD, "axial": axial, "nfev": sol.nfev}


# -- singular slider-crank (Neto & Ambrosio 2002, §5.2) --------------------------------------------
A_SING = 0.308          # m, crank = rod
M_SING = 1.0            # kg, crank, rod and slider (not given in the paper's text; chosen)
TORQUE = 100.0          # N m


def _bar(m: float, length: float) -> tuple[float, float, float]:
    return (1e-4 * m * length ** 2, m * length ** 2 / 12, m * length ** 2 / 12)


def _rz(angle: float) -> np.ndarray:
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


@dataclass
class SingularCrank:
    system: fm.System
    crank: fm.RigidBody
    rod: fm.RigidBody
    slider: fm.RigidBody
    phi0: float


def singular_slider_crank(phi0_deg: float = 0.0) -> SingularCrank:
    """The a = b slider-crank at rest at crank angle ``phi0_deg`` on the branch x = 2 a cos(phi),
    driven by TORQUE about +z."""
    a = A_SING
    phi0 = math.radians(phi0_deg)
    A = a * np.array([math.cos(phi0), math.sin(phi0), 0.0])
    B = np.array([2 * a * math.cos(phi0), 0.0, 0.0])
    s = fm.System(name="singular slider-crank")
    crank = s.add(fm.RigidBody(M_SING, _bar(M_SING, a), position=A / 2, orientation=_rz(phi0), name="crank"))
    rod = s.add(fm.RigidBody(M_SING, _bar(M_SING, a), position=(A + B) / 2, orientation=_rz(-phi0), name="rod"))
    slider = s.add(fm.RigidBody(M_SING, (1e-3, 1e-3, 1e-3), position=B, name="slider"))
    s.add(fm.Revolute(s.ground, crank, (0, 0, 0), (0, 0, 1), name="crank bearing"))
    s.add(fm.Revolute(crank, rod, A, (0, 0, 1), name="crank pin"))
    s.add(fm.Revolute(rod, slider, B, (0, 0, 1), name="slider pin"))
    s.add(fm.Prismatic(s.ground, slider, B, (1, 0, 0), name="slider guide"))
    s.add(fm.Torque(crank, (0.0, 0.0, TORQUE), name="drive torque"))
    return SingularCrank(s, crank, rod, slider, phi0)


def singular_inertia(phi) -> np.ndarray:
    """Generalized inertia of the branch x = 2 a cos(phi), beta = -phi about the crank angle, kg m^2:
    crank a^2 m/3; rod centre (1.5 a cos, 0.5 a sin) and spin -phi_d; slider x_d = -2 a sin(phi) phi_d."""
    s, c = np.sin(phi), np.cos(phi)
    return A_SING ** 2 * M_SING * (1.0 / 3.0 + (2.25 * s ** 2 + 0.25 * c ** 2 + 1.0 / 12.0) + 4.0 * s ** 2)


def singular_crank_speed(phi, phi0: float = 0.0) -> np.ndarray:
    """Crank speed from the work-energy theorem, started from rest at phi0: 1/2 I(phi) phi_d^2 = tau (phi - phi0)."""
    return np.sqrt(2.0 * TORQUE * np.maximum(np.asarray(phi) - phi0, 0.0) / singular_inertia(phi))
