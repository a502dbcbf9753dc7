"""The dragline's rig hanging at rest at the start of the drag, against the hand calculation (docs/theory-ropes.md
§8; model: verification/dragline/models.py).

``fm.static_equilibrium`` brings the rig (hoist span from the boom point, coupler, upper hoist chain, spreader bar,
lower hoist chain, bucket with payload, drag chain and clevis on the drag span from the fairlead) to rest. The hand
calculation: everything the two ropes carry, weight W, hangs from the hoist rope (direction e_h from its socket on
the coupler to the boom point) and the drag rope (e_d from the clevis to the fairlead), so T_h e_h + T_d e_d = W y,
two equations for the two tensions; the rope tensions of the model (kN: the model's units are t, m, s) are its winch multipliers
(``Winch.tension``). Exact for the model: tolerance rel 1e-8 (the static Newton tolerance). Also checked: every
chain joint in tension (no slack where the rig must be taut), and the hoist carrying the weight within the drag's
vertical share (T_h e_h.y = W - T_d e_d.y).
"""
from __future__ import annotations

import numpy as np

import flexmb as fm

from ..framework import CaseResult
from .models import FAIRLEAD, Dragline, boom_point

SOURCE = ("seed 000 (P. G. Crous, 'Modelling of Dragline Dynamics', MSc thesis, Stellenbosch 2000), Ch. 5; "
          "Marion 7820-M class data and our choices (verification/dragline/models.py); statics by hand")


def hang():
    """(dragline, static result) at the start of the drag."""
    d = Dragline(hold_pulleys=True, name="dragline rig at rest")
    return d, fm.static_equilibrium(d.system, load_steps=5)


def hand_calculation(d: Dragline, res: fm.Result, row: int = -1) -> tuple[float, float, np.ndarray, np.ndarray]:
    """Hoist and drag tensions (N) that hold the rig's weight, and the unit vectors e_h, e_d (module doc)."""
    c = res.position(d.coupler, d.coupler.to_local_point(d.hoist_winch.rope_point))[row]
    k = res.position(d.clevis, d.clevis.to_local_point(d.drag_winch.rope_point))[row]
    eh = (boom_point() - c) / np.linalg.norm(boom_point() - c)
    ed = (FAIRLEAD - k) / np.linalg.norm(FAIRLEAD - k)
    A = np.array([[eh[0], ed[0]], [eh[1], ed[1]]])
    Th, Td = np.linalg.solve(A, np.array([0.0, d.suspended_weight()]))
    return float(Th), float(Td), eh, ed


def chain_tensions(d: Dragline, res: fm.Result, row: int = -1, asm=None) -> dict:
    """Axial force (kN, positive in tension) at every chain joint: the reaction on the lower link along it.
    ``asm``: the compiled system (compiled here when not given)."""
    asm = d.system.compile() if asm is None else asm
    F, _ = asm.reactions(res.q[row], res.v[row], res.lam[row], res.t[row])
    out = {}
    for name, chain in d.chains.items():
        vals = []
        for j in chain.joints:
            k = d.system.joints.index(j)
            b = j.body_b
            x = res.orientation(b)[row][:, 0]          # link axis, from this joint to the next (rope_chain)
            vals.append(float(-F[k] @ x))                # the joint pulls the link back: tension
        out[name] = np.array(vals)
    return out


def figure(d: Dragline, res: fm.Result):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(8, 4))
    P = boom_point()
    ax.plot([5.0, P[0]], [4.0, P[1]], "k-", lw=3, label="boom")
    c = res.position(d.coupler, d.coupler.to_local_point(d.hoist_winch.rope_point))[-1]
    k = res.position(d.clevis, d.clevis.to_local_point(d.drag_winch.rope_point))[-1]
    ax.plot([P[0], c[0]], [P[1], c[1]], "b-", label="hoist rope (span)")
    ax.plot([FAIRLEAD[0], k[0]], [FAIRLEAD[1], k[1]], "r-", label="drag rope (span)")
    for name, chain in d.chains.items():
        xy = np.array([res.q[-1, b.offset:b.offset + 2] for b in chain.segments])
        ax.plot(xy[:, 0], xy[:, 1], "o-", ms=3, label=f"{name} chain (link centres)")
    b = res.position(d.bucket)[-1]
    ax.plot(b[0], b[1], "ks", ms=8, label="bucket")
    ax.set_aspect("equal")
    ax.set_xlabel("x (m)")
    ax.set_ylabel("y (m)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def dragline_hang(quick: bool) -> CaseResult:
    """dragline-hang: the rig at rest, rope tensions against the statics by hand."""
    r = CaseResult("dragline-hang", SOURCE)
    d, res = hang()
    Th_ref, Td_ref, eh, ed = hand_calculation(d, res)
    Th, Td = float(d.hoist_winch.tension(res)[-1]), float(d.drag_winch.tension(res)[-1])
    r.check("hoist_tension", Th, Th_ref, "rel 1e-8")
    r.check("drag_tension", Td, Td_ref, "rel 1e-8")
    ct = chain_tensions(d, res)
    r.check("min_chain_tension", min(float(v.min()) for v in ct.values()), tolerance="min 0")
    W = d.suspended_weight()
    r.metrics.update({"suspended_weight_kN": W, "hoist_share_of_weight": Th * eh[1] / W,
                      "hoist_angle_from_vertical_deg": float(np.degrees(np.arccos(eh[1]))),
                      **{f"{k}_chain_tension_kN": float(v.mean()) for k, v in ct.items()}})
    r.notes = (f"W = {W:.1f} kN; hoist {Th:.1f} kN at {np.degrees(np.arccos(eh[1])):.1f} deg from the "
               f"vertical, drag {Td:.1f} kN; bucket at x = {res.position(d.bucket)[-1, 0]:.2f} m (forces in kN: "
               "the model's units are t, m, s)")
    r.figures.append(figure(d, res))
    return r


CASES = [dragline_hang]
