"""The dig-hoist-swing-dump cycle of the dragline (model: verification/dragline/models.py; docs/theory-ropes.md §8).

Operating profile (our choice; seed 000 Ch. 5 drives its model by "the swing motion of the machine and the
rotational speed of ... the winches", whose measured values it did not publish); speed ramps of 1 s:

| phase | time (s) | drag winch (m/s) | hoist winch (m/s) | swing |
|---|---|---|---|---|
| at rest in static equilibrium | 0 - 2 | 0 | 0 | 0 |
| drag (dig; no soil model) | 2 - 10 | -2.0 | +0.5 | 0 |
| hoist | 10 - 18 | +1.0 | -2.5 | 0 |
| swing 90 deg (cycloidal) | 18 - 34 | 0 | 0 | 0 -> 90 deg |
| dump: drag released | 34 - 38 | +2.0 | 0 | 90 deg |
| hold | 38 - 42 | 0 | 0 | 90 deg |

Negative speeds reel in. The run starts at rest in the rig's static equilibrium (``fm.static_equilibrium``).
"""
from __future__ import annotations

import math

import numpy as np

import flexmb as fm

from .models import Dragline

SPEED_TIMES = [0.0, 2.0, 4.0, 8.0, 10.0, 12.0, 16.0, 18.0, 34.0, 35.0, 37.0, 38.0]
DRAG_SPEEDS = [0.0, 0.0, -1.0, -1.0, 0.0, 0.5, 0.5, 0.0, 0.0, 1.0, 1.0, 0.0]
HOIST_SPEEDS = [0.0, 0.0, 0.0, 0.0, 0.0, -2.0, -2.0, 0.0, 0.0, 0.0, 0.0, 0.0]
SWING_START, SWING_TIME, SWING_ANGLE = 18.0, 16.0, math.radians(90.0)
T_END = 42.0
PHASES = {"rest": (0.0, 2.0), "drag": (2.0, 10.0), "hoist": (10.0, 18.0), "swing": (18.0, 34.0),
          "dump": (34.0, 38.0), "hold": (38.0, 42.0)}


def swing_profile(t0: float = SWING_START, T: float = SWING_TIME, angle: float = SWING_ANGLE) -> fm.TimeFunction:
    """Cycloidal swing (rad): theta = angle (tau - sin(2 pi tau)/(2 pi)), tau = (t - t0)/T clipped to [0, 1]."""
    def tau(t):
        return min(max((t - t0) / T, 0.0), 1.0)

    def f(t):
        x = tau(t)
        return angle * (x - math.sin(2.0 * math.pi * x) / (2.0 * math.pi))

    def df(t):
        x = tau(t)
        return angle / T * (1.0 - math.cos(2.0 * math.pi * x)) if 0.0 < x < 1.0 else 0.0

    def ddf(t):
        x = tau(t)
        return angle / T ** 2 * 2.0 * math.pi * math.sin(2.0 * math.pi * x) if 0.0 < x < 1.0 else 0.0

    return fm.TimeFunction(f, df, ddf, name="swing")


def run(t_end: float = T_END, h: float = 1e-2, progress=False):
    """The driven dragline simulated from its static equilibrium to ``t_end`` (s) at step ``h`` (s); returns
    (dragline, result)."""
    held = Dragline(hold_pulleys=True, name="dragline rig at rest")
    static = fm.static_equilibrium(held.system, load_steps=5)
    d = Dragline(swing_profile(), fm.payout_profile(SPEED_TIMES, HOIST_SPEEDS, "hoist speed"),
                 fm.payout_profile(SPEED_TIMES, DRAG_SPEEDS, "drag speed"))
    res = fm.simulate(d.system, t_end, h, initial=static, progress=progress, contact_tol=np.inf)
    return d, res


def _figures(d: Dragline, res: fm.Result, T: dict, E: dict):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    figs = []
    fig, ax = plt.subplots(figsize=(7, 3.6))
    for name, v in T.items():
        ax.plot(res.t, v, label=name)
    for a, _ in PHASES.values():
        ax.axvline(a, color="0.8", lw=0.8)
    ax.set_xlabel("t (s)")
    ax.set_ylabel("tension (kN)")
    ax.set_title("rope tensions over the cycle (phases: " + ", ".join(PHASES) + ")", fontsize=8)
    ax.legend(fontsize=7)
    fig.tight_layout()
    figs.append(fig)
    B = res.position(d.bucket)
    fig, ax = plt.subplots(1, 2, figsize=(9, 3.8))
    ax[0].plot(B[:, 0], -B[:, 2])
    ax[0].set_xlabel("x (m)")
    ax[0].set_ylabel("-z (m)")
    ax[0].set_title("bucket path, plan view", fontsize=8)
    ax[0].set_aspect("equal")
    ax[1].plot(np.hypot(B[:, 0], B[:, 2]), B[:, 1])
    ax[1].set_xlabel("radius from the swing axis (m)")
    ax[1].set_ylabel("height y (m)")
    ax[1].set_title("bucket path, radius and height", fontsize=8)
    fig.tight_layout()
    figs.append(fig)
    fig, ax = plt.subplots(figsize=(7, 3.6))
    for k in ("kinetic", "potential", "work_drivers"):
        ax.plot(res.t, E[k] - E[k][0], label=k)
    ax.plot(res.t, E["total"] - E["total"][0], "k", label="balance")
    ax.set_xlabel("t (s)")
    ax.set_ylabel("kJ")
    ax.legend(fontsize=7)
    fig.tight_layout()
    figs.append(fig)
    return figs


def dragline_cycle(quick: bool):
    """dragline-cycle: the driven cycle (to the end of the hoist in quick mode): energy balance with the winch and
    swing work, ropes and chains in tension throughout."""
    from ..framework import CaseResult
    from .hang import SOURCE, chain_tensions
    r = CaseResult("dragline-cycle", SOURCE + "; operating profile: verification/dragline/cycle.py")
    t_end = 18.0 if quick else T_END
    d, res = run(t_end)
    E = res.energy()
    scale = float(np.abs(E["work_drivers"]).max())
    drift = float(np.abs(E["total"] - E["total"][0]).max())
    r.check("energy_balance_rel", drift / scale, tolerance="max 1e-4")
    T = {"hoist": d.hoist_winch.tension(res), "drag": d.drag_winch.tension(res)}
    rows = np.arange(0, res.t.size, 10)
    asm = d.system.compile()
    chains = np.array([min(float(v.min()) for v in chain_tensions(d, res, int(k), asm).values()) for k in rows])
    T["lowest chain joint (every 10th row)"] = np.interp(res.t, res.t[rows], chains)
    r.check("min_hoist_tension", float(T["hoist"].min()), tolerance="min 0")
    r.check("min_drag_tension", float(T["drag"].min()), tolerance="min 0")
    r.check("min_chain_tension", float(chains.min()), tolerance="min 0")
    B = res.position(d.bucket)
    pitch = np.degrees(np.arctan2(res.orientation(d.bucket)[:, 1, 0],
                                  np.hypot(res.orientation(d.bucket)[:, 0, 0], res.orientation(d.bucket)[:, 2, 0])))
    r.metrics.update({"t_end_s": t_end, "wall_s": res.stats.get("wall_s"), "steps": res.stats.get("steps"),
                      "work_drivers_kJ": float(E["work_drivers"][-1]),
                      "bucket_lift_m": float(B[:, 1].max() - B[0, 1]),
                      "bucket_pitch_range_deg": float(pitch.max() - pitch.min()),
                      "peak_hoist_tension_kN": float(T["hoist"].max()), "peak_drag_tension_kN": float(T["drag"].max())})
    r.notes = (f"{t_end:g} s of the cycle in {res.stats.get('wall_s', 0):.0f} s ({res.stats.get('steps')} steps of "
               f"10 ms); forces in kN, energies in kJ (the model's units: t, m, s); hoist {T['hoist'].min():.0f}-"
               f"{T['hoist'].max():.0f} kN, drag {T['drag'].min():.0f}-{T['drag'].max():.0f} kN")
    r.figures.extend(_figures(d, res, T, E))
    return r


CASES = [dragline_cycle]
