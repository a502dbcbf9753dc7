"""Independent reference of the crank-rocker with a flexible coupler (numpy/scipy only, no flexmb).

Lagrange's equations of the mechanism of models.py in the generalized coordinates
(phi, eta_1..eta_K) -- crank angle and the coupler's assumed-mode amplitudes -- plus the motor
current i, written with the second-order jets of verification/jets.py:

* coupler: inextensible Euler-Bernoulli beam (rho A, no rotary inertia, EI), the exact
  pinned-pinned modes ``w(s) = sum_k eta_k sin(k pi s / a2)`` in the chord frame (origin at the
  crank pin A, x axis through the rocker pin B); material point s at ``xi(s) = s - 1/2 int_0^s
  w'^2`` along the chord, so the chord is ``l = a2 - 1/2 int_0^a2 w'^2`` (foreshortening);
* loop closure with that chord (open branch of models.angles): ``d = O4 - A``,
  ``theta2 = atan2(d) + arccos((l^2 + |d|^2 - a3^2) / (2 l |d|))``, ``B = A + l e(theta2)``,
  rocker angle ``theta3 = atan2(B - O4)``;
* kinetic energy ``1/2 J1 phi_dot^2 + 1/2 J3 theta3_dot^2 + 1/2 int rho A |r_dot|^2``, strain energy
  ``1/2 EI int w''^2``, stiffness-proportional damping ``D = (2 zeta / omega_1) K`` (the nonlinear
  beam's ``damping = zeta``: zeta at the first pinned-pinned mode);
* DC motor (models.MOTOR): ``L_a di/dt = V - r_a i - K_p phi_dot``, torque ``K_p i - D phi_dot``.

The axial load of the coupler enters the bending equations through ``dl/deta`` in the loop
closure -- the geometric stiffening by the pin loads and by the coupler's own inertia, to the
order the kinematics are written (xi to second order in w'; the neglected O(w'^4) is below 1e-6 of
a2 here). The axial force at B comes from two moment balances: the rocker's about O4 and the
coupler's about A (the pins transmit no moment).

``python -m verification.crank_rocker.assumed_modes`` writes assumed_modes_reference.json (metrics at
K = 2, 3, 4 modes and two integrator tolerances: the reference's own convergence; and a short run that
tests/test_assumed_modes_references.py repeats).
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from .. import jets
from ..jets import Jet
from ..pinned_beam import PinnedBeam
from . import models

A_COUPLER = models.A2
RHO_A = models.STEEL.rho * models.SECTION.A
EI = models.STEEL.E * models.SECTION.Iz
DAMPING_RATIO = 0.01
DATA = Path(__file__).with_name("assumed_modes_reference.json")
REFERENCE_MODES = 4
"""Mode count of the stored reference the flexmb models are checked against."""


def coupler(K: int) -> PinnedBeam:
    """The coupler of models.py as K pinned-pinned modes, coordinates q[1:] (q[0] is the crank angle)."""
    return PinnedBeam(A_COUPLER, RHO_A, EI, K, n=K + 1, offset=1)


def kinematics(C: PinnedBeam, q: np.ndarray, qd: np.ndarray) -> dict:
    """Jets of the crank angle, the pins, the rocker angle and every coupler point; q = (phi, eta)."""
    phi = Jet.coordinate(0, q, qd)
    chord = C.chord(q, qd)
    ax, ay = models.A1 * jets.cos(phi), models.A1 * jets.sin(phi)
    dx, dy = models.A4 - ax, -ay
    dist = jets.sqrt(dx * dx + dy * dy)
    theta2 = jets.atan2(dy, dx) + jets.arccos((chord * chord + dist * dist - models.A3 ** 2) / (2.0 * chord * dist))
    ex, ey = jets.cos(theta2), jets.sin(theta2)
    bx, by = ax + chord * ex, ay + chord * ey
    x, y = C.points(ax, ay, ex, ey, q, qd)
    return {"phi": phi, "theta3": jets.atan2(by, bx - models.A4), "A": (ax, ay), "B": (bx, by), "x": x, "y": y,
            "mid": float(C.mid @ q)}


def accelerations(C: PinnedBeam, q: np.ndarray, qd: np.ndarray, current: float, damping: np.ndarray):
    """(q_ddot, kinematics) at the state: M q_ddot = b + Q of Lagrange's equations."""
    kin = kinematics(C, q, qd)
    M, b = jets.assemble([(C.mass, kin["x"]), (C.mass, kin["y"]), (models.J1, kin["phi"]),
                          (models.J3, kin["theta3"])], C.n)
    b[0] += models.MOTOR["K_p"] * current - models.MOTOR["D"] * qd[0]
    b[1:] -= C.k_modal * q[1:] + damping * qd[1:]
    return np.linalg.solve(M, b), kin


def axial_force(C: PinnedBeam, kin: dict, qdd: np.ndarray) -> float:
    """Axial force of the coupler at B (tension positive): F, the force of the coupler on the
    rocker, from J3 theta3_ddot = ((B - O4) x F)_z and sum (r - A) x rho A r_ddot = ((B - A) x (-F))_z."""
    acc = lambda j: j.dd0 + j.c @ qdd          # noqa: E731
    (ax, ay), (bx, by) = kin["A"], kin["B"]
    rx, ry = kin["x"], kin["y"]
    h_a = float(np.sum(C.mass * ((rx.v - ax.v) * acc(ry) - (ry.v - ay.v) * acc(rx))))
    lhs = np.array([[-by.v, bx.v - models.A4], [by.v - ay.v, -(bx.v - ax.v)]])
    F = np.linalg.solve(lhs, np.array([models.J3 * float(acc(kin["theta3"])), h_a]))
    chord = np.array([ax.v - bx.v, ay.v - by.v])
    return float(F @ chord / np.linalg.norm(chord))


def solve(K: int, rtol: float = 1e-8, dt_out: float = 5e-5, t_end: float = models.T_END) -> dict:
    """Histories (t, omega, current, mid, axial) and the metrics of cases.histories, K modes (DOP853)."""
    from scipy.integrate import solve_ivp
    C = coupler(K)
    n = C.n
    damping = C.stiffness_proportional(DAMPING_RATIO)
    L_a, r_a, K_p = models.MOTOR["L_a"], models.MOTOR["r_a"], models.MOTOR["K_p"]

    def f(t, y):
        q, qd, i = y[:n], y[n:2 * n], y[2 * n]
        qdd = accelerations(C, q, qd, i, damping)[0]
        return np.concatenate([qd, qdd, [(models.VOLTAGE - r_a * i - K_p * qd[0]) / L_a]])
    t_eval = np.linspace(0.0, t_end, int(round(t_end / dt_out)) + 1)
    sol = solve_ivp(f, (0.0, t_end), np.zeros(2 * n + 1), method="DOP853", rtol=rtol, atol=rtol * 1e-4,
                    t_eval=t_eval)
    if sol.status != 0:
        raise RuntimeError(f"assumed-modes crank-rocker reference failed: {sol.message}")
    mid, axial = np.empty(sol.t.size), np.empty(sol.t.size)
    for j, y in enumerate(sol.y.T):
        qdd, kin = accelerations(C, y[:n], y[n:2 * n], y[2 * n], damping)
        mid[j], axial[j] = kin["mid"], axial_force(C, kin, qdd)
    omega, current = sol.y[n], sol.y[2 * n]
    metrics = {"crank_speed_1s": float(omega[-1]), "current_peak": float(current.max()),
               "coupler_mid_defl_max": float(np.abs(mid).max()), "coupler_axial_max": float(axial.max()),
               "coupler_axial_min": float(axial.min())}
    return {"t": sol.t, "omega": omega, "current": current, "mid": mid, "axial": axial, "metrics": metrics,
            "nfev": int(sol.nfev)}


def stored() -> dict:
    """The stored reference runs (assumed_modes_reference.json)."""
    return json.loads(DATA.read_text())


SHORT_RUN = "K2_rtol1e-08_t0.25"
"""Stored run that a test repeats (2 modes, the first 0.25 s): the stored data come from this code."""


def main() -> None:
    runs = {}
    for K, rtol, t_end in ((2, 1e-8, 0.25), (2, 1e-8, 1.0), (3, 1e-8, 1.0), (4, 1e-8, 1.0), (4, 1e-10, 1.0)):
        r = solve(K, rtol, t_end=t_end)
        key = f"K{K}_rtol{rtol:g}" + (f"_t{t_end:g}" if t_end != models.T_END else "")
        runs[key] = {"K": K, "rtol": rtol, "t_end": t_end, "nfev": r["nfev"], "metrics": r["metrics"]}
        print(key, r["metrics"], r["nfev"], flush=True)
    doc = {"generated_by": "python -m verification.crank_rocker.assumed_modes",
           "model": "crank-rocker of models.py, inextensible Euler-Bernoulli coupler with K pinned-pinned sine modes "
                    "and chord foreshortening, Lagrange's equations (verification/jets.py), DOP853, output every "
                    "5e-5 s over 1 s", "runs": runs}
    DATA.write_text(json.dumps(doc, indent=1) + "\n")


if __name__ == "__main__":
    main()
