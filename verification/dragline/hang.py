"""The dragline's rig hanging at rest at the start of the drag, against the hand calculation (docs/theory-ropes.md
§8; model: verification/dragline/models.py).

``fm.static_equilibrium`` brings the rig (hoist rope from its drum over the boom-point sheave to the coupler, upper
hoist chain, spreader bar, lower hoist chain, bucket with payload, drag chain and clevis on the drag rope from its
drum under the fairlead sheave, dump rope from the clevis over the dump block to the arch) to rest.

Hand calculations, with plane geometry of their own (``models.tangent_point``), not flexmb's rope kernel:

* **rope lengths**: each rope's path, drum point to tangent point, the arc R theta around the sheave, tangent point
  to the rope's end, from the equilibrium positions of its ends and sheave, equals the length the model's rope
  reports (``SheaveRope.values``): rel 1e-12 (round-off of a 143 m sum);
* **tensions**: everything the hoist and drag ropes carry, weight W, hangs from them (the dump rope is inside the
  rig), the hoist rope pulling the coupler towards its tangent point on the boom-point sheave (unit vector e_h) and
  the drag rope the clevis towards its tangent point on the fairlead sheave (e_d), so T_h e_h + T_d e_d = W y, two
  equations for the two tensions; exact for the model: rel 1e-8 (the static Newton tolerance);
* every chain joint in tension, and the dump rope taut (it holds the bucket's front up at rest, our rigging).
"""
from __future__ import annotations

import math

import numpy as np

from ..framework import CaseResult
from .models import Dragline, hang_static, tangent_point

SOURCE = ("seed 000 (P. G. Crous, 'Modelling of Dragline Dynamics', MSc thesis, Stellenbosch 2000), Ch. 5; "
          "Marion 7820-M class data and our choices (verification/dragline/models.py); statics by hand")


def hang():
    """(dragline, static result) at the start of the drag."""
    return hang_static()


def _point(res, body, local, row: int) -> np.ndarray:
    return res.position(body, local)[row]


def rope_path(d: Dragline, res, rope, row: int = -1) -> tuple[float, np.ndarray, np.ndarray]:
    """Hand length (m) of ``rope`` (one sheave, axis z, at the equilibrium positions of row ``row``), the polyline
    of its path (for plots) and the unit vector at its end pointing along the rope (towards the sheave)."""
    (ba, Pa), (bb, Pb) = rope.start, rope.end
    sh = rope.sheaves[0]
    A = _point(res, ba, ba.to_local_point(Pa), row)
    B = _point(res, bb, bb.to_local_point(Pb), row)
    C = _point(res, sh.body, sh.body.to_local_point(sh.center), row) if sh.body is not d.system.ground else sh.center
    R, s = sh.radius, sh.sense
    Ta = tangent_point(A, C, R, s, incoming=True)
    Tb = tangent_point(B, C, R, s, incoming=False)
    th_a, th_b = (math.atan2(*(T - C)[[1, 0]]) for T in (Ta, Tb))
    wrap = (s * (th_b - th_a)) % (2.0 * math.pi)
    L = float(np.linalg.norm(Ta - A) + R * wrap + np.linalg.norm(B - Tb))
    arc = [C + R * np.array([math.cos(th_a + s * u), math.sin(th_a + s * u), 0.0]) for u in np.linspace(0, wrap, 24)]
    e_end = (Tb - B) / np.linalg.norm(Tb - B)
    return L, np.array([A, *arc, B]), e_end


def hand_calculation(d: Dragline, res, row: int = -1) -> tuple[float, float, np.ndarray, np.ndarray]:
    """Hoist and drag tensions (N) that hold the rig's weight, and the unit vectors e_h, e_d (module doc)."""
    eh = rope_path(d, res, d.hoist, row)[2]
    ed = rope_path(d, res, d.drag, row)[2]
    A = np.array([[eh[0], ed[0]], [eh[1], ed[1]]])
    Th, Td = np.linalg.solve(A, np.array([0.0, d.suspended_weight()]))
    return float(Th), float(Td), eh, ed


def chain_tensions(d: Dragline, res, row: int = -1, asm=None) -> dict:
    """Axial force (N, positive in tension) at every chain joint: the reaction on the lower link along it.
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


def figure(d: Dragline, res):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(8, 4))
    P = d.boom_sheave.center
    ax.plot([5.0, P[0]], [4.0, P[1]], "k-", lw=3, label="boom")
    for (name, rope), col in zip(d.ropes.items(), "brg"):
        xy = rope_path(d, res, rope)[1]
        ax.plot(xy[:, 0], xy[:, 1], col + "-", lw=1, label=f"{name} rope")
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
    """dragline-hang: the rig at rest; rope lengths and tensions against the hand calculation."""
    r = CaseResult("dragline-hang", SOURCE)
    d, res = hang()
    V = {k: rope.values(res) for k, rope in d.ropes.items()}
    for k, rope in d.ropes.items():
        r.check(f"{k}_rope_length", float(V[k]["length"][-1]), rope_path(d, res, rope)[0], "rel 1e-12")
    Th_ref, Td_ref, eh, ed = hand_calculation(d, res)
    Th, Td = float(V["hoist"]["tension"][-1]), float(V["drag"]["tension"][-1])
    r.check("hoist_tension", Th, Th_ref, "rel 1e-8")
    r.check("drag_tension", Td, Td_ref, "rel 1e-8")
    r.check("dump_tension", float(V["dump"]["tension"][-1]), tolerance="min 1")
    ct = chain_tensions(d, res)
    r.check("min_chain_tension", min(float(v.min()) for v in ct.values()), tolerance="min 0")
    W = d.suspended_weight()
    r.metrics.update({"suspended_weight_kN": W / 1e3, "hoist_share_of_weight": Th * eh[1] / W,
                      "hoist_angle_from_vertical_deg": float(np.degrees(np.arccos(eh[1]))),
                      "hoist_stretch_m": float(V["hoist"]["stretch"][-1]),
                      **{f"{k}_chain_tension_kN": float(v.mean() / 1e3) for k, v in ct.items()}})
    r.notes = (f"W = {W / 1e3:.1f} kN; hoist {Th / 1e3:.1f} kN at {np.degrees(np.arccos(eh[1])):.1f} deg from the "
               f"vertical, drag {Td / 1e3:.1f} kN, dump {V['dump']['tension'][-1] / 1e3:.1f} kN; bucket at x = "
               f"{res.position(d.bucket)[-1, 0]:.2f} m")
    r.figures.append(figure(d, res))
    return r


CASES = [dragline_hang]
