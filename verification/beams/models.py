"""Models of the ``beams`` suite: a planar cantilever of ExactBeam elements and how it is loaded.

Cantilever of length ``L = 1 m`` along +x, clamped at x = 0 (node set ``root``; the body frame is fixed
to the ground), loaded at the tip (node set ``tip``). Section data chosen so that the comparison
with the inextensible, shear-rigid elastica is not blurred by axial strain: ``EI = 1 N m^2``,
``EA = 1e7 N`` (axial strain below 1e-6 for the loads used), Euler-Bernoulli (shear factors inf).
Planar: uz, rx, ry of every node are held (in-plane bending about z), as NonlinearBeam's planar models.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import flexmb as fm

L = 1.0
EI = 1.0
EA = 1.0e7
AREA = 1.0e-3
E_MOD = EA / AREA
INERTIA = EI / E_MOD
RHO = 1000.0


def cantilever_model(n_elements: int, length: float = L):
    """FE model of the planar cantilever (module doc) with node sets ``root`` and ``tip``."""
    x = np.linspace(0.0, length, n_elements + 1)
    mesh = fm.FEMesh(np.column_stack([x, 0 * x, 0 * x]),
                     {"line": np.column_stack([np.arange(n_elements), np.arange(1, n_elements + 1)])},
                     node_sets={"root": [0], "tip": [n_elements]})
    section = fm.BeamSection(A=AREA, Iy=INERTIA, Iz=INERTIA, J=2 * INERTIA, ky=np.inf, kz=np.inf)
    return fm.FEModel(mesh, fm.Material(E=E_MOD, nu=0.3, rho=RHO), sections=section)


def planar_held(fe) -> np.ndarray:
    """The root's six dofs and uz, rx, ry of every other node."""
    return np.union1d(fe.dofs("root"), fe.dofs(np.arange(1, fe.n_nodes), ["uz", "rx", "ry"]))


@dataclass
class Cantilever:
    """A built cantilever: system, beam body, its FE model."""

    system: fm.System
    beam: object
    fe: object

    @property
    def n(self) -> int:
        return self.fe.n_nodes - 1

    def free_index(self, node: int, component: int) -> int:
        """Position in the beam's coordinates eta of a free nodal dof (component 0..5)."""
        free = self.beam.structure.free
        dof = 6 * node + component
        j = int(np.searchsorted(free, dof))
        if j >= free.size or free[j] != dof:
            raise ValueError(f"dof {component} of node {node} is held")
        return j


def cantilever(n_elements: int, tip_force=None) -> Cantilever:
    """The clamped planar cantilever with a dead tip force (N, global) if given."""
    fe = cantilever_model(n_elements)
    s = fm.System(name="cantilever")
    beam = s.add(fm.ExactBeam(fe, planar_held(fe), name="beam"))
    s.add(fm.Fixed(s.ground, beam, name="clamp"))
    if tip_force is not None:
        s.add(fm.NodalForce(beam, "tip", tip_force, name="tip load"))
    return Cantilever(s, beam, fe)


def tip_load(k: float, n_elements: int) -> dict:
    """Static tip of the cantilever under the dead load ``F = k EI / L^2`` towards -y
    (fm.static_equilibrium, 2 load steps per unit k, at least 2): u (shortening), v (deflection) in m,
    tip rotation in rad."""
    c = cantilever(n_elements, (0.0, -k * EI / L**2, 0.0))
    res = fm.static_equilibrium(c.system, load_steps=max(2, int(np.ceil(2 * k))))
    d = res.deflection(c.beam, c.n)[-1]
    rot = res.modal_coordinates(c.beam)[-1, c.free_index(c.n, 5)]
    return {"u": float(-d[0]), "v": float(-d[1]), "rotation": float(-rot), "load_steps": int(res.t.size - 1)}


def end_moment(n_elements: int, moment: float, increments: int = 8) -> dict:
    """Cantilever under an end moment about z (N m), applied by ``increments`` static solves of
    fm.static_equilibrium with the moment raised between them, each starting at the previous
    equilibrium (a user force on the tip rotation coordinate: for a rotation about the fixed z axis the
    moment's generalized force on the rotation-vector coordinate is the moment itself, exactly).

    Returns tip displacement (m, body axes), tip rotation (rad) and the node positions (n+1, 3)."""
    c = cantilever(n_elements)
    m = c.beam.n_modes
    j = c.free_index(c.n, 5)
    level = {"M": 0.0}

    def func(t, q, v):
        Q = np.zeros(7 + m)
        Q[7 + j] = level["M"]
        return Q

    def jac(t, q, v):
        return np.zeros((7 + m, 7 + m)), np.zeros((7 + m, 7 + m))

    c.system.add(fm.UserForce(c.beam, func, jac, name="end moment"))
    eta = np.zeros(m)
    for i in range(1, increments + 1):
        level["M"] = moment * i / increments
        c.beam.eta0 = eta
        res = fm.static_equilibrium(c.system, load_steps=1)
        eta = res.modal_coordinates(c.beam)[-1].copy()
    u, psi = c.beam.nodal_values(eta)
    pos = c.fe.points + u
    return {"tip": u[c.n], "rotation": float(psi[c.n, 2]), "positions": pos}


def column(n_elements: int, p_values, h_ratio: float) -> list[dict]:
    """Cantilever column under a dead compressive tip load ``P = p EI / L^2`` with the lateral
    imperfection load ``h_ratio P`` (+y), static load control to each ``p`` (ascending) in one
    fm.static_equilibrium run with 40 steps up to max(p); tip lateral deflection and shortening (m)."""
    p_max = float(max(p_values))
    c = cantilever(n_elements, (-p_max * EI / L**2, h_ratio * p_max * EI / L**2, 0.0))
    res = fm.static_equilibrium(c.system, load_steps=40)
    d = res.deflection(c.beam, c.n)
    lam = res.t
    out = []
    for p in p_values:
        delta = float(np.interp(p / p_max, lam, d[:, 1]))
        i = int(np.argmin(np.abs(lam - p / p_max)))
        out.append({"p": float(p), "delta": float(d[i, 1]), "u": float(-d[i, 0]), "lambda": float(lam[i]),
                    "delta_interp": delta})
    return out


CABLE_SPAN, CABLE_LENGTH, CABLE_EA, CABLE_RHO_A = 8.0, 10.0, 1.0e6, 2.0
"""Catenary case: supports 8 m apart at one height, rope 10 m (unstretched), EA = 1 MN, 2 kg/m (our choices:
a steel wire rope of about 6 mm class, stretched by 1e-4 under its own weight)."""
G = 9.81


def hanging_cable(n_elements: int) -> dict:
    """A cable (ExactBeam, cable=True) hung between two supports at the same height under gravity (-y),
    static. Stress-free reference: nodes at equal arc length on the inextensible catenary of the rope (its
    chords are the unstretched element lengths), both end nodes held. A cable without tension has no
    transverse stiffness, so gravity is not ramped from zero: one fm.static_equilibrium step at full load,
    started with 1 % extra sag (every element stretched). Returns the midspan sag (m), the horizontal
    tension H (N, mean over the elements of N cos(element, x); its spread is reported) and the axial force
    of the end element (N; it acts at the element's middle, a half element from the support)."""
    n = n_elements
    from scipy.optimize import brentq
    half, L = CABLE_SPAN / 2.0, CABLE_LENGTH
    a = brentq(lambda c: 2.0 * c * np.sinh(half / c) - L, 0.05 * half, 1e3 * half)   # inextensible catenary
    arc = np.linspace(-L / 2.0, L / 2.0, n + 1)                        # nodes at equal arc length on it
    x = half + a * np.arcsinh(arc / a)
    y = np.sqrt(a * a + arc ** 2) - np.sqrt(a * a + (L / 2.0) ** 2)
    mesh = fm.FEMesh(np.column_stack([x, y, 0 * x]), {"line": np.column_stack([np.arange(n), np.arange(1, n + 1)])},
                     node_sets={"ends": [0, n], "middle": [n // 2]})
    area = 1e-4
    section = fm.BeamSection(A=area, Iy=1e-12, Iz=1e-12, J=2e-12)
    fe = fm.FEModel(mesh, fm.Material(E=CABLE_EA / area, nu=0.3, rho=CABLE_RHO_A / area), sections=section)
    held = np.union1d(fe.dofs("ends", ["ux", "uy", "uz"]), fe.dofs(np.arange(n + 1), ["uz"]))
    probe = fm.ExactBeam(fe, held, cable=True)
    start = np.zeros((n + 1, 6))
    start[:, 1] = 0.01 * y                                               # 1 % more sag
    sysm = fm.System(gravity=(0.0, -G, 0.0), name="catenary")
    rope = sysm.add(fm.ExactBeam(fe, held, cable=True, modal_coordinates=start.ravel()[probe.structure.free],
                                 name="rope"))
    sysm.add(fm.Fixed(sysm.ground, rope, name="anchor"))
    res = fm.static_equilibrium(sysm, load_steps=1)
    eta = res.modal_coordinates(rope)[-1]
    u, _ = rope.nodal_values(eta)
    pos = fe.points + u
    N = rope.axial_force(eta)
    d = np.diff(pos, axis=0)
    cosx = d[:, 0] / np.linalg.norm(d, axis=1)
    return {"sag": float(-pos[:, 1].min()) if n % 2 == 0 else float(-pos[n // 2, 1]),
            "H": float(np.mean(N * cosx)), "H_spread": float(np.ptp(N * cosx)), "N_end": float(N[0])}
