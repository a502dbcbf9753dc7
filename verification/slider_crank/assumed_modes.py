"""Independent reference of the flexible slider-crank with its chord foreshortening (numpy/scipy only).

Lagrange's equations of the mechanism of models.py (crank driven at OMEGA, rod pinned at the crank
pin A and at the slider B, slider of mass M_SLIDER on the x axis), with the rod an inextensible
Euler-Bernoulli beam of K assumed modes (the exact pinned-pinned modes sin(k pi s / L)):

* material point s of the rod, in the chord frame (origin A, x axis through B):
  ``xi(s) = s - 1/2 int_0^s w'^2 ds'`` (inextensible: the foreshortening of the bent rod),
  ``w(s) = sum_k eta_k sin(k pi s / L)``; so the chord is ``l = L - 1/2 int_0^L w'^2``;
* the loop closes with that chord: ``x_B = a cos(phi) + sqrt(l^2 - a^2 sin(phi)^2)``,
  chord direction ``e = (B - A) / l``, normal ``n = (-e_y, e_x)``, point ``r(s) = A + xi e + w n``;
* kinetic energy of the rod (rho A, no rotary inertia: Euler-Bernoulli) and of the slider,
  strain energy ``1/2 EI int w''^2`` (curvature w'').

Keeping the loop closure with the shortened chord is what the moderate-rotation Galerkin code of
models.py leaves out (it moves the chord like the rigid mechanism): the slider then follows the
bent rod, and the axial force of the rod's own inertia and of the slider enters the bending
equations through ``dl/deta`` -- the geometric stiffening by the actual pin load. The terms
are exact to the order the kinematics are written (xi to second order in w'; the neglected
O(w'^4) is 1e-6 of L here). The accelerations come from verification/jets.py (no hand-derived
velocity terms). The axial force at the slider end follows from the slider's x equation and
the rod's moment balance about A (the pin A transmits no moment).
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

from .. import jets
from ..jets import Jet
from ..pinned_beam import PinnedBeam
from . import models
from .metrics import window_metrics


def rod(K: int) -> PinnedBeam:
    """The rod of models.py as K pinned-pinned modes; its coordinates are all of q."""
    return PinnedBeam(models.L_ROD, models.RHO_A, models.EI, K, n=K, offset=0)


def kinematics(R: PinnedBeam, t: float, eta: np.ndarray, etad: np.ndarray) -> dict:
    """Jets of the slider position, the chord frame and every rod point at time t (crank at OMEGA t)."""
    n, a, w = R.n, models.A_CRANK, models.OMEGA
    phi = w * t
    ca = Jet.of_time(a * math.cos(phi), -a * w * math.sin(phi), -a * w ** 2 * math.cos(phi), n)
    sa = Jet.of_time(a * math.sin(phi), a * w * math.cos(phi), -a * w ** 2 * math.sin(phi), n)
    chord = R.chord(eta, etad)
    xB = ca + jets.sqrt(chord * chord - sa * sa)
    ex, ey = (xB - ca) / chord, -sa / chord
    x, y = R.points(ca, sa, ex, ey, eta, etad)
    return {"xB": xB, "ex": ex, "ey": ey, "x": x, "y": y, "A": (ca, sa), "chord": chord}


def accelerations(R: PinnedBeam, t: float, eta: np.ndarray, etad: np.ndarray, damping: np.ndarray):
    """eta_ddot and the kinematics' jets at (t, eta, eta_dot)."""
    kin = kinematics(R, t, eta, etad)
    M, b = jets.assemble([(R.mass, kin["x"]), (R.mass, kin["y"]), (models.M_SLIDER, kin["xB"])], R.n)
    b -= R.k_modal * eta + damping * etad
    return np.linalg.solve(M, b), kin


def axial_force(R: PinnedBeam, kin: dict, etadd: np.ndarray) -> float:
    """N_B (tension positive): the slider's x equation gives F_x on the slider, the rod's moment
    balance about A, l (e x F_B)_z = sum (r - A) x rho A r_ddot with F_B = -F, gives F_y."""
    acc = lambda j: j.dd0 + j.c @ etadd          # noqa: E731
    fx = models.M_SLIDER * acc(kin["xB"])
    ax, ay = acc(kin["x"]), acc(kin["y"])
    ca, sa = kin["A"]
    moment = float(np.sum(R.mass * ((kin["x"].v - ca.v) * ay - (kin["y"].v - sa.v) * ax)))
    l, ex, ey = kin["chord"].v, kin["ex"].v, kin["ey"].v
    fy = (ey * fx * l - moment) / (ex * l)       # l (ex F_By - ey F_Bx) = moment, F_B = -F
    return float(-(fx * ex + fy * ey))


def solve(K: int, rtol: float = 1e-9, n_out: int = 6001, t_end: float = models.T_END,
          zeta: float = 0.0) -> dict[str, np.ndarray]:
    """Histories t, ``mid`` (midpoint deflection / L), ``axial`` (N_B, N) with K modes (DOP853)."""
    from scipy.integrate import solve_ivp
    R = rod(K)
    damping = R.stiffness_proportional(zeta)

    def f(t, y):
        return np.concatenate([y[K:], accelerations(R, t, y[:K], y[K:], damping)[0]])
    sol = solve_ivp(f, (0.0, t_end), np.zeros(2 * K), method="DOP853", rtol=rtol, atol=1e-12 * models.L_ROD,
                    t_eval=np.linspace(0.0, t_end, n_out))
    if sol.status != 0:
        raise RuntimeError(f"assumed-modes slider-crank reference failed: {sol.message}")
    axial = np.empty(sol.t.size)
    for i, (t, y) in enumerate(zip(sol.t, sol.y.T)):
        etadd, kin = accelerations(R, t, y[:K], y[K:], damping)
        axial[i] = axial_force(R, kin, etadd)
    return {"t": sol.t, "mid": sol.y[:K].T @ R.mid / models.L_ROD, "axial": axial, "nfev": int(sol.nfev)}


DATA = Path(__file__).with_name("assumed_modes_reference.json")
REFERENCE_MODES = 6
"""Mode count of the stored run the nonlinear beam is checked against."""


def stored() -> dict:
    """The stored reference runs (assumed_modes_reference.json)."""
    return json.loads(DATA.read_text())


def metrics(run: dict) -> dict[str, float]:
    """The suite's window metrics of a run (metrics.window_metrics: peaks over revolutions 2-3)."""
    return window_metrics(run["t"], run["mid"], run["axial"])


def main() -> None:
    runs = {}
    for K, rtol in ((2, 1e-8), (4, 1e-8), (6, 1e-8), (4, 1e-10)):
        r = solve(K, rtol)
        runs[f"K{K}_rtol{rtol:g}"] = {"K": K, "rtol": rtol, "nfev": int(r["nfev"]), "metrics": metrics(r)}
        print(K, rtol, runs[f"K{K}_rtol{rtol:g}"], flush=True)
    doc = {"generated_by": "python -m verification.slider_crank.assumed_modes",
           "model": "flexible slider-crank of models.py, inextensible Euler-Bernoulli rod with K pinned-pinned sine "
                    "modes and chord foreshortening in the loop closure, Lagrange's equations (verification/jets.py), "
                    "DOP853, 6001 output points over 3 revolutions", "runs": runs}
    DATA.write_text(json.dumps(doc, indent=1) + "\n")


if __name__ == "__main__":
    main()
