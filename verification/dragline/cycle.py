"""The dig-hoist-swing-dump cycle of the dragline (model: verification/dragline/models.py; docs/theory-ropes.md §8).

Operating profile (our choice; Crous 2000, Ch. 5 drives its model by "the swing motion of the machine and the
rotational speed of ... the winches", whose measured values it did not publish); drum speeds of the rope paid out
(m/s), linear ramps of 2 s between the levels (``fm.payout_profile``):

| phase | time (s) | drag drum (m/s) | hoist drum (m/s) | swing | rope moved |
|---|---|---|---|---|---|
| at rest in static equilibrium | 0 - 2 | 0 | 0 | 0 | |
| drag (no soil model: no digging force) | 2 - 10 | -1.0 | 0 | 0 | drag 6 m in |
| hoist | 10 - 18 | +0.5 | -2.0 | 0 | hoist 12 m in, drag 3 m out |
| swing 90 deg (cycloidal) | 18 - 34 | 0 | 0 | 0 -> 90 deg | |
| dump: drag released | 34 - 44 | +2.5 | 0 | 90 deg | drag 20 m out |
| hold | 44 - 50 | 0 | 0 | 90 deg | |

The dump: paying out the drag lets the bucket swing out under the boom point; the drag tension falls, the dump
rope (clevis - dump block - arch) loses its pull and the bucket turns mouth-down about its trunnions.
Negative speeds reel in. The run starts at rest in the rig's static equilibrium (``fm.static_equilibrium``).
The boom is pinned at its foot and hangs on its suspension ropes (models.py), so it pitches on them as the hoist
load changes; their tension is plotted with the others.

Ropes that must stay taut are checked against lower bounds from the rig's statics (:func:`taut_bounds`), not against
0: the rope kernel clamps a rope's tension at 0 (tension-only), so ``min tension >= 0`` would pass a slack rope. The
boom suspension must hold at least the boom's own weight (moments about the foot pin with the hoist rope unloaded:
1.05 MN, 0.425 of its 2.46 MN at rest); the hoist rope at least half the weight of the rig it holds. The drag and
dump ropes go slack by design when the drag pays out for the dump; their minima are reported, not checked.

Quick mode: the cycle to the end of the hoist (18 s) at 40 ms steps (450 steps; the full run: 50 s at 10 ms).
Against the same 18 s at 10 ms the peak tensions differ by at most 0.11 % and the bucket's end position by 1.4 mm
(docs/theory-ropes.md §8); the checks are those of the full run but the dump.
"""
from __future__ import annotations

import math

import numpy as np

import flexmb as fm

from .models import Dragline, hang_static, rope_values

DUMP_TIP_MIN = 30.0          # deg: the bucket must turn mouth-down by at least this much when the drag pays out
HOIST_SHARE_MIN = 0.5        # the hoist rope carries at least this share of the rig's weight at every row

SPEED_TIMES = [0.0, 2.0, 4.0, 8.0, 10.0, 12.0, 16.0, 18.0, 34.0, 36.0, 42.0, 44.0]
DRAG_SPEEDS = [0.0, 0.0, -1.0, -1.0, 0.0, 0.5, 0.5, 0.0, 0.0, 2.5, 2.5, 0.0]
HOIST_SPEEDS = [0.0, 0.0, 0.0, 0.0, 0.0, -2.0, -2.0, 0.0, 0.0, 0.0, 0.0, 0.0]
SWING_START, SWING_TIME, SWING_ANGLE = 18.0, 16.0, math.radians(90.0)
T_END = 50.0
QUICK_STEP = 4e-2   # s: the quick case's step (full: 10 ms); convergence at 40/20/10 ms in docs/theory-ropes.md §8
PHASES = {"rest": (0.0, 2.0), "drag": (2.0, 10.0), "hoist": (10.0, 18.0), "swing": (18.0, 34.0),
          "dump": (34.0, 44.0), "hold": (44.0, 50.0)}


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
    static = hang_static()[1]
    d = Dragline(swing_profile(), fm.payout_profile(SPEED_TIMES, HOIST_SPEEDS, "hoist speed"),
                 fm.payout_profile(SPEED_TIMES, DRAG_SPEEDS, "drag speed"))
    res = fm.simulate(d.system, t_end, h, initial=static, progress=progress)
    return d, res


def taut_bounds(d: Dragline, static: fm.Result) -> dict[str, float]:
    """Lower bounds (N) of the tensions of the ropes that must stay taut through the cycle, from the statics of the
    rig at rest ``static`` (``models.hang_static``):

    * ``suspension``: the tension that holds the boom's own weight, by moments about its foot pin with the hoist rope
      unloaded (:func:`~verification.dragline.hang.suspension_hand` with T_hoist = 0). The hoist rope's pull on the
      boom-point sheave adds to that moment (at rest T_s = 1.05 MN + 1.32 T_hoist), so the suspension falls below
      it only when the boom is thrown upwards: slack or unloading ropes, not a boom hanging on them;
    * ``hoist``: ``HOIST_SHARE_MIN`` of the weight W of the rig it holds (``Dragline.suspended_weight``; at rest it
      carries 1.07 W): less would need the drag rope to lift the rig or the rig to fall at g/2."""
    from .hang import suspension_hand
    boom_only = suspension_hand(d, static, 0.0)[0]
    return {"suspension": boom_only, "hoist": HOIST_SHARE_MIN * d.suspended_weight()}


def check_taut_ropes(r, tensions: dict[str, np.ndarray], bounds: dict[str, float]) -> None:
    """``min_<rope>_tension`` checked against its lower bound (N) for each rope of ``bounds``."""
    for k, bound in bounds.items():
        r.check(f"min_{k}_tension", float(tensions[k].min()), tolerance=f"min {bound:.6g}")


def pitch_deg(d: Dragline, res: fm.Result) -> np.ndarray:
    """Bucket pitch (deg) in the swinging boom plane: the angle of the bucket's back-pointing body x axis above
    the horizontal (negative: the back down, the mouth up; the bucket dumps as it turns positive)."""
    A = res.orientation(d.bucket)
    return np.degrees(np.arctan2(A[:, 1, 0], np.hypot(A[:, 0, 0], A[:, 2, 0])))


def _cumulative(t: np.ndarray, p: np.ndarray) -> np.ndarray:
    return np.concatenate([[0.0], np.cumsum(0.5 * (p[1:] + p[:-1]) * np.diff(t))])


def _figures(d: Dragline, res: fm.Result, T: dict, E: dict, pitch: np.ndarray):
    """Tensions and pitch, the bucket's path and the energy terms (fixed margins: ``tight_layout`` drew each
    figure once more, ~1.5 s of the quick case)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    figs = []
    fig, ax = plt.subplots(2, 1, figsize=(7, 5.4), sharex=True, gridspec_kw={"height_ratios": [2, 1]})
    for name, v in T.items():
        ax[0].plot(res.t, v / 1e3, label=name)
    for a, _ in PHASES.values():
        ax[0].axvline(a, color="0.8", lw=0.8)
        ax[1].axvline(a, color="0.8", lw=0.8)
    ax[0].set_ylabel("tension (kN)")
    ax[0].set_title("rope tensions over the cycle (phases: " + ", ".join(PHASES) + ")", fontsize=8)
    ax[0].legend(fontsize=7)
    ax[1].plot(res.t, pitch, "k")
    ax[1].set_ylabel("bucket pitch (deg)")
    ax[1].set_xlabel("t (s)")
    fig.subplots_adjust(left=0.11, right=0.97, bottom=0.09, top=0.94, hspace=0.08)
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
    fig.subplots_adjust(left=0.08, right=0.98, bottom=0.13, top=0.92, wspace=0.3)
    figs.append(fig)
    fig, ax = plt.subplots(figsize=(7, 3.6))
    for k in ("kinetic", "potential", "hoist drum", "drag drum", "swing", "rope damping"):
        ax.plot(res.t, (E[k] - E[k][0]) / 1e6, label=k)
    ax.plot(res.t, (E["total"] - E["total"][0]) / 1e6, "k", label="balance")
    ax.set_xlabel("t (s)")
    ax.set_ylabel("MJ")
    ax.set_title("energy: kinetic + potential = work of drums, swing and rope damping", fontsize=8)
    ax.legend(fontsize=7)
    fig.subplots_adjust(left=0.1, right=0.97, bottom=0.13, top=0.92)
    figs.append(fig)
    return figs


def dragline_cycle(quick: bool):
    """dragline-cycle: the driven cycle (to the end of the hoist in quick mode): energy balance with the drum,
    swing and rope-damping work, the boom suspension and the hoist rope taut (lower bounds from the statics,
    :func:`taut_bounds`), chains in tension, the bucket dumping when the drag pays out."""
    from ..framework import CaseResult
    from .hang import SOURCE, boom_angle_deg, chain_tensions
    r = CaseResult("dragline-cycle", SOURCE + "; operating profile: verification/dragline/cycle.py")
    t_end, h = (18.0, QUICK_STEP) if quick else (T_END, 1e-2)
    d, res = run(t_end, h)
    E = res.energy()
    V = rope_values(d, res)
    drums = {f"{k} drum": _cumulative(res.t, V[k]["drum_power"]) for k in ("hoist", "drag")}
    E.update(drums)
    E["swing"] = E["work_drivers"]
    E["rope damping"] = E["work_nc"] - drums["hoist drum"] - drums["drag drum"]
    scale = float(max(np.abs(E["work_nc"]).max(), np.abs(E["work_drivers"]).max()))
    drift = float(np.abs(E["total"] - E["total"][0]).max())
    r.check("energy_balance_rel", drift / scale, tolerance="max 1e-4")
    T = {k: v["tension"] for k, v in V.items()}
    rows = np.unique(np.linspace(0, res.t.size - 1, 50 if quick else 200).astype(int))   # a solve each
    asm = d.system.compile()
    chains = np.array([min(float(v.min()) for v in chain_tensions(d, res, int(k), asm).values()) for k in rows])
    d0, static = hang_static()
    bounds = taut_bounds(d0, static)
    check_taut_ropes(r, T, bounds)
    r.check("min_chain_tension", float(chains.min()), tolerance="min 0")
    r.check("min_sheave_clearance", float(min(v["clearance"].min() for v in V.values())), tolerance="min 0")
    B = res.position(d.bucket)
    pitch = pitch_deg(d, res)
    boom = boom_angle_deg(d, res)
    if not quick:
        before = float(np.interp(PHASES["dump"][0], res.t, pitch))
        after = float(pitch[res.t >= PHASES["dump"][1]].max())
        slack = (res.t >= PHASES["dump"][0]) & (T["dump"] == 0.0)
        r.check("dump_tip_deg", after - before, tolerance=f"min {DUMP_TIP_MIN}")
        r.metrics.update({"pitch_before_dump_deg": before, "pitch_after_dump_deg": after,
                          "dump_rope_slack_s": float(slack.sum() * (res.t[1] - res.t[0]))})
    r.metrics.update({"min_drag_tension": float(T["drag"].min()), "min_dump_tension": float(T["dump"].min()),
                      "suspension_bound_kN": bounds["suspension"] / 1e3, "hoist_bound_kN": bounds["hoist"] / 1e3,
                      "suspension_bound_share_of_rest":
                          bounds["suspension"] / float(d0.suspension.values(static)["tension"][-1]),
                      "t_end_s": t_end, "wall_s": res.stats.get("wall_s"), "steps": res.stats.get("steps"),
                      "rejected_steps": res.stats.get("rejected"),
                      "drum_work_MJ": float((drums["hoist drum"][-1] + drums["drag drum"][-1]) / 1e6),
                      "swing_work_MJ": float(E["swing"][-1] / 1e6),
                      "rope_damping_MJ": float(E["rope damping"][-1] / 1e6),
                      "bucket_lift_m": float(B[:, 1].max() - B[0, 1]),
                      "bucket_pitch_range_deg": float(pitch.max() - pitch.min()),
                      "boom_angle_min_deg": float(boom.min()), "boom_angle_max_deg": float(boom.max()),
                      **{f"peak_{k}_tension_kN": float(v.max() / 1e3) for k, v in T.items()},
                      **{f"slack_rows_{k}": int((v == 0.0).sum()) for k, v in T.items()}})
    r.notes = (f"{t_end:g} s of the cycle in {res.stats.get('wall_s', 0):.0f} s ({res.stats.get('steps')} steps of "
               f"{h * 1e3:g} ms); " + ", ".join(f"{k} {v.min() / 1e3:.0f}-{v.max() / 1e3:.0f} kN" for k, v in T.items())
               + f"; bucket pitch {pitch.min():.0f} to {pitch.max():.0f} deg; boom {boom.min():.2f} to "
               f"{boom.max():.2f} deg")
    r.figures.extend(_figures(d, res, T, E, pitch))
    return r


CASES = [dragline_cycle]
