"""Crank-rocker with a flexible coupler driven by a DC motor (He 1992, §9.4, after Samanta 1990).

Planar four-bar in the horizontal x-y plane (no gravity): crank a1 = 0.102 m from O2 = (0, 0, 0),
coupler a2 = 0.610 m, rocker a3 = 0.406 m from O4 = (a4, 0, 0), a4 = 0.559 m; the crank starts along
the ground line (pointing at O4). Crank inertia about its pivot with the motor rotor
J1 = 0.00707 + 0.565 kg m^2, rocker J3 = 0.01245 kg m^2 about its pivot (both modelled with the
centre of mass at the pivot: the thesis gives only these inertias). Coupler: steel (E = 2.07e11 Pa,
rho = 7850 kg/m^3 -- our documented choice, the thesis prints no material), rectangular section
0.010 m deep in the plane of motion and 0.015 m wide; its mass (0.718 kg) and inertia come from
its mesh (the printed J2 = 0.042152 kg m^2 is 1.9 x the mesh's m a2^2 / 12 = 0.0223 kg m^2).
DC motor on the crank pivot: K_p = 0.678 N m/A, r_a = 0.4 ohm, L_a = 0.05 H, D = 0.226 N m s/rad,
60 V step at t = 0 from rest; 1 s.

Models: ``rigid`` (rigid coupler), ``modal-pinned`` (2 pinned-pinned modes in the chord frame,
stiffened by the inertial and pin-load cases), ``modal-freefree`` (2 in-plane free-free modes,
mean axes, no stiffening, as Samanta), ``nonlinear-beam`` (all nodal dofs, chord frame); the
reference is the independent assumed-modes code of assumed_modes.py. Modal damping 1 % (the
nonlinear beam: stiffness-proportional, 1 % at its first mode).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

import flexmb as fm
from flexmb import rotations as rot
from flexmb.errors import ModelError
from flexmb.fem.materials import Material
from flexmb.fem.mesh import FEMesh
from flexmb.fem.model import FEModel
from flexmb.fem.sections import BeamSection
from flexmb.reduction import craig_bampton, free_free_modes, inertia_invariants

A1, A2, A3, A4 = 0.102, 0.610, 0.406, 0.559
J1, J3 = 0.00707 + 0.565, 0.01245
STEEL = Material(E=2.07e11, nu=0.3, rho=7850.0)
DEPTH, WIDTH = 0.010, 0.015
SECTION = BeamSection.rectangle(DEPTH, WIDTH, orientation=(0.0, 0.0, 1.0))
"""``rectangle(b, h)`` puts b along local y, here in the plane of motion: the 0.010 m depth bends
in-plane, I_z = 0.015 x 0.010^3 / 12 = 1.25e-9 m^4, EI = 258.75 N m^2, Euler load pi^2 EI / a2^2 =
6,863 N."""
MOTOR = dict(K_p=0.678, r_a=0.4, L_a=0.05, D=0.226)
VOLTAGE = 60.0
T_END = 1.0
MODELS = ("rigid", "modal-pinned", "modal-freefree", "nonlinear-beam")
N_ELEMENTS = 20


def check_assembly(a1: float, a2: float, a3: float, a4: float) -> None:
    """Refuse link lengths that cannot close the loop at every crank angle (Grashof crank-rocker:
    shortest link the crank and s + l <= p + q), with the numbers in the message."""
    links = {"crank a1": a1, "coupler a2": a2, "rocker a3": a3, "ground a4": a4}
    bad = {k: v for k, v in links.items() if not np.isfinite(v) or v <= 0}
    if bad:
        raise ModelError(f"four-bar link lengths must be positive and finite: {bad}")
    s, l = min(links.values()), max(links.values())
    p_q = sum(links.values()) - s - l
    if s + l > p_q:
        raise ModelError(f"four-bar cannot close at every crank angle: shortest + longest = {s:g} + {l:g} = "
                         f"{s + l:g} m > sum of the other two {p_q:g} m (Grashof condition violated)")
    if a1 != s:
        raise ModelError(f"four-bar is not a crank-rocker: the crank a1 = {a1:g} m is not the shortest link ({s:g} m)")


def angles(phi: float) -> tuple[float, float]:
    """Coupler and rocker angles (rad, from +x) at crank angle phi, open branch (Freudenstein)."""
    A = np.array([A1 * np.cos(phi), A1 * np.sin(phi)])
    d = np.array([A4, 0.0]) - A
    L = np.linalg.norm(d)
    alpha = np.arccos((A2 ** 2 + L ** 2 - A3 ** 2) / (2 * A2 * L))
    th2 = np.arctan2(d[1], d[0]) + alpha
    B = A + A2 * np.array([np.cos(th2), np.sin(th2)])
    return float(th2), float(np.arctan2(B[1], B[0] - A4))


ALUMINIUM = Material(E=7.0e10, nu=0.33, rho=2700.0)
"""The coupler material that reproduces the thesis's buckling time of the heavy-rocker case (cases.py
``heavy_rocker_aluminium``): the thesis prints no material."""


def coupler_fe(n: int = N_ELEMENTS, material: Material = STEEL) -> FEModel:
    """Coupler mesh in its own frame: node 0 at pin A (origin), node n at pin B on +x."""
    x = np.linspace(0.0, A2, n + 1)
    mesh = FEMesh(np.column_stack([x, 0 * x, 0 * x]), {"line": np.column_stack([np.arange(n), np.arange(1, n + 1)])},
                  node_sets={"A": [0], "B": [n]})
    return FEModel(mesh, material, sections=SECTION, beam="euler-bernoulli")


def chord_frame_dofs(fe: FEModel, n: int) -> np.ndarray:
    """Held dofs of the chord frame (pinned-pinned): A ux, uy, uz, rx; B uy, uz; all out-of-plane."""
    return np.unique(np.concatenate([fe.dofs(0, ["ux", "uy", "uz", "rx"]), fe.dofs(n, ["uy", "uz"]),
                                     fe.dofs(np.arange(n + 1), ["uz", "rx", "ry"])]))


@dataclass
class CrankRocker:
    system: fm.System
    crank: fm.RigidBody
    coupler: object
    rocker: fm.RigidBody
    motor: fm.DCMotor
    joint_B: fm.Joint
    model: str
    n: int = N_ELEMENTS
    info: dict = field(default_factory=dict)


def build(model: str, rocker_factor: float = 1.0, n: int = N_ELEMENTS, n_modes: int = 2,
          material: Material = STEEL) -> CrankRocker:
    """The crank-rocker with coupler ``model`` (one of MODELS) of ``material``; ``rocker_factor`` scales J3."""
    check_assembly(A1, A2, A3, A4)
    th2, th3 = angles(0.0)
    A = np.array([A1, 0.0, 0.0])
    B = A + A2 * np.array([np.cos(th2), np.sin(th2), 0.0])
    O4 = np.array([A4, 0.0, 0.0])
    z = (0.0, 0.0, 1.0)
    s = fm.System(name=f"crank-rocker {model}")
    crank = s.add(fm.RigidBody(1.0, (J1 / 2, J1 / 2, J1), name="crank"))
    rocker = s.add(fm.RigidBody(1.0, (J3 * rocker_factor / 2,) * 2 + (J3 * rocker_factor,), position=O4,
                                orientation=rot.from_axis_angle(z, th3), name="rocker"))
    fe = coupler_fe(n, material)
    R2 = rot.from_axis_angle(z, th2)
    if model == "rigid":
        inv = inertia_invariants(fe)
        c = inv.center_of_mass
        J_cm = inv.inertia - inv.mass * (c @ c * np.eye(3) - np.outer(c, c))
        coupler = s.add(fm.RigidBody(inv.mass, J_cm, position=A + rot.A(R2) @ c, orientation=R2, name="coupler"))
        site_A, site_B = coupler, coupler
    elif model == "modal-pinned":
        modes = craig_bampton(fe, None, n_modes=n_modes, fixed=chord_frame_dofs(fe, n))
        coupler = s.add(fm.FlexibleBody(modes, position=A, orientation=R2, damping=0.01, stiffening=True,
                                        stability_check=True, name="coupler"))
        site_A, site_B = coupler.node(0), coupler.node(n)
    elif model == "modal-freefree":
        ff = free_free_modes(fe, 6)
        in_plane = [k for k in range(ff.n_modes) if np.abs(ff.phi[1::6, k]).max() > np.abs(ff.phi[2::6, k]).max()]
        modes = ff.transformed(np.eye(ff.n_modes)[:, in_plane[:n_modes]])
        coupler = s.add(fm.FlexibleBody(modes, position=A, orientation=R2, damping=0.01, stiffening=False,
                                        name="coupler"))
        site_A, site_B = coupler.node(0), coupler.node(n)
    elif model == "nonlinear-beam":
        coupler = s.add(fm.NonlinearBeam(fe, chord_frame_dofs(fe, n), position=A, orientation=R2, damping=0.01,
                                         name="coupler"))
        site_A, site_B = coupler.node(0), coupler.node(n)
    else:
        raise ModelError(f"unknown crank-rocker model {model!r}; models: {MODELS}")
    j1 = s.add(fm.Revolute(s.ground, crank, (0, 0, 0), z, name="O2"))
    s.add(fm.Revolute(crank, site_A, A, z, name="A"))
    jB = s.add(fm.Revolute(site_B, rocker, B, z, name="B"))
    s.add(fm.Revolute(rocker, s.ground, O4, z, name="O4"))
    motor = s.add(fm.DCMotor(j1, voltage=VOLTAGE, name="motor", **MOTOR))
    return CrankRocker(s, crank, coupler, rocker, motor, jB, model, n)
