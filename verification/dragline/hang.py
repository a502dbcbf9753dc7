"""The dragline's rig hanging at rest at the start of the drag, against the hand calculation (docs/theory-ropes.md
§8; model: verification/dragline/models.py).

``fm.static_equilibrium`` brings the rig (hoist rope from its drum over the boom-point sheave to the coupler, upper
hoist chain, spreader bar, lower hoist chain, bucket with payload, drag chain and clevis on the drag rope from its
drum under the fairlead sheave, dump rope from the clevis over the dump block to the arch) and the boom (pinned at
its foot to the house, held by the suspension ropes from the mast head) to rest.

Hand calculations, with plane geometry of their own (``models.tangent_point``), not flexmb's rope kernel:

* **rope lengths**: each rope's path, drum point to tangent point, the arc R theta around the sheave, tangent point
  to the rope's end, from the equilibrium positions of its ends and sheave, equals the length the model's rope
  reports (``SheaveRope.values``): rel 1e-12 (round-off of a 143 m sum);
* **tensions**: everything the hoist and drag ropes carry, weight W, hangs from them (the dump rope is inside the
  rig), the hoist rope pulling the coupler towards its tangent point on the boom-point sheave (unit vector e_h) and
  the drag rope the clevis towards its tangent point on the fairlead sheave (e_d), so T_h e_h + T_d e_d = W y, two
  equations for the two tensions; exact for the model: rel 1e-8 (the static Newton tolerance);
* **boom suspension**: moments about the boom foot pin (which takes none): the boom's weight at its centre, the
  hoist rope's tension (the hand value above) along each of its two spans at their tangent points on the boom-point
  sheave, and the suspension rope along its line from the boom point to the mast head, T_s = -M / arm; exact for
  the model: rel 1e-8 (the static Newton tolerance); tests/test_verify_dragline.py also checks the foot pin's
  reaction against the resultant of these forces;
* every chain joint in tension, and the dump rope taut (it holds the bucket's front up at rest, our rigging).
"""
from __future__ import annotations

import math

import numpy as np

from ..framework import CaseResult
from .models import G, MAST_HEAD, Dragline, hang_static, tangent_point

SOURCE = ("Crous 2000 (P. G. Crous, 'Modelling of Dragline Dynamics', MSc thesis, Stellenbosch 2000), Ch. 5; "
          "Marion 7820-M class data and our choices (verification/dragline/models.py); statics by hand")


def hang():
    """(dragline, static result) at the start of the drag."""
    return hang_static()


def _point(res, body, local, row: int) -> np.ndarray:
    return res.position(body, local)[row]


def rope_path(d: Dragline, res, rope, row: int = -1) -> tuple[float, np.ndarray, np.ndarray]:
    """Hand length (m) of ``rope`` (one sheave, axis z, or none, at the equilibrium positions of row ``row``), the
    polyline of its path (for plots) and the unit vector at its end pointing along the rope (towards the sheave,
    or the start for a rope without one)."""
    (ba, Pa), (bb, Pb) = rope.start, rope.end
    A = _point(res, ba, ba.to_local_point(Pa), row)
    B = _point(res, bb, bb.to_local_point(Pb), row)
    if not rope.sheaves:                      # a pendant: straight from end to end
        return float(np.linalg.norm(B - A)), np.array([A, B]), (A - B) / np.linalg.norm(A - B)
    sh = rope.sheaves[0]
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


def suspension_hand(d: Dragline, res, T_hoist: float, row: int = -1) -> tuple[float, float, np.ndarray]:
    """Suspension tension (N) that holds the boom, by moments about the boom foot pin (plane geometry of its own):
    the boom's weight at its centre, the hoist rope pulling the boom-point sheave with ``T_hoist`` (N) along each of
    its two spans (towards the drum and towards the coupler, at their tangent points) and the suspension rope
    pulling the boom point towards the mast head, T_s e_s; the pin takes no moment. Returns (T_s, moment arm of the
    suspension about the foot, m)."""
    F = _point(res, d.boom, d.boom.to_local_point(d.boom_foot.point), row)
    c = res.position(d.boom)[row]
    sh = d.boom_sheave
    C = _point(res, sh.body, sh.body.to_local_point(sh.center), row)
    (ha, Pa), (hb, Pb) = d.hoist.start, d.hoist.end
    A = _point(res, ha, ha.to_local_point(Pa), row)           # hoist drum point
    B = _point(res, hb, hb.to_local_point(Pb), row)           # hoist socket on the coupler
    Ta = tangent_point(A, C, sh.radius, sh.sense, incoming=True)
    Tb = tangent_point(B, C, sh.radius, sh.sense, incoming=False)

    def mz(r, f):
        return float((r[0] - F[0]) * f[1] - (r[1] - F[1]) * f[0])

    W = np.array([0.0, -G * d.boom.mass, 0.0])
    fa, fb = T_hoist * (A - Ta) / np.linalg.norm(A - Ta), T_hoist * (B - Tb) / np.linalg.norm(B - Tb)
    M = mz(c, W) + mz(Ta, fa) + mz(Tb, fb)
    (_, Pm), (_, Pp) = d.suspension.start, d.suspension.end
    Ms = _point(res, d.house, d.house.to_local_point(Pm), row)
    Pb_ = _point(res, d.boom, d.boom.to_local_point(Pp), row)
    es = (Ms - Pb_) / np.linalg.norm(Ms - Pb_)
    arm = mz(Pb_, es)
    Ts = -M / arm
    return Ts, arm, W + fa + fb + Ts * es


def boom_angle_deg(d: Dragline, res) -> np.ndarray:
    """Boom angle (deg) above the horizontal at every saved row (its body x axis; 32 deg as drawn)."""
    A = res.orientation(d.boom)
    return np.degrees(np.arctan2(A[:, 1, 0], np.hypot(A[:, 0, 0], A[:, 2, 0])))


def chain_tensions(d: Dragline, res, row: int = -1, asm=None) -> dict:
    """Axial force (N, positive in tension) at every chain joint: the reaction on the lower link along it.
    ``asm``: the compiled system (compiled here when not given).

    The reaction is the one of ``Assembly.reactions`` (the joint's rows of ``-Phi_q^T lambda`` on the link's
    position coordinates), taken for the chain joints only: ``reactions`` goes over all of the rig's joints, 17 ms a
    row, which made the 50 rows of the quick cycle cost ~1 s; this is the same sum for the 3 chain joints."""
    asm = d.system.compile() if asm is None else asm
    q, v, t = res.q[row], res.v[row], float(res.t[row])
    lam = np.where(asm.active, res.lam[row], 0.0)
    jac = asm.constraints(q, v, t).jac.tocsr()
    out = {}
    for name, chain in d.chains.items():
        vals = []
        for j in chain.joints:
            k = d.system.joints.index(j)
            b = j.body_b
            rows = np.flatnonzero(asm.row_joint == k)
            f = -(jac[rows][:, b.offset:b.offset + 3].toarray().T @ lam[rows])   # force of the joint on the link
            x = res.orientation(b)[row][:, 0]          # link axis, from this joint to the next (rope_chain)
            vals.append(float(-f @ x))                   # the joint pulls the link back: tension
        out[name] = np.array(vals)
    return out


def figure(d: Dragline, res):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(8, 4))
    foot = d.boom_foot.point
    P = _point(res, d.boom, d.boom.to_local_point(d.boom_sheave.center), -1)
    ax.plot([foot[0], P[0]], [foot[1], P[1]], "k-", lw=3, label="boom")
    ax.plot([foot[0] - 2.0, MAST_HEAD[0]], [foot[1], MAST_HEAD[1]], "-", color="0.5", lw=2, label="mast (rigid)")
    for (name, rope), col in zip(d.ropes.items(), "brmg"):
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
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.subplots_adjust(left=0.08, right=0.74, bottom=0.12, top=0.97)
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
    Ts_ref, arm, _ = suspension_hand(d, res, Th_ref)
    Ts = float(V["suspension"]["tension"][-1])
    r.check("suspension_tension", Ts, Ts_ref, "rel 1e-8")
    ct = chain_tensions(d, res)
    r.check("min_chain_tension", min(float(v.min()) for v in ct.values()), tolerance="min 0")
    W = d.suspended_weight()
    r.metrics.update({"suspended_weight_kN": W / 1e3, "hoist_share_of_weight": Th * eh[1] / W,
                      "hoist_angle_from_vertical_deg": float(np.degrees(np.arccos(eh[1]))),
                      "hoist_stretch_m": float(V["hoist"]["stretch"][-1]),
                      "suspension_stretch_m": float(V["suspension"]["stretch"][-1]), "suspension_arm_m": arm,
                      "boom_angle_deg": boom_angle_deg(d, res)[-1],
                      **{f"{k}_chain_tension_kN": float(v.mean() / 1e3) for k, v in ct.items()}})
    r.notes = (f"W = {W / 1e3:.1f} kN; hoist {Th / 1e3:.1f} kN at {np.degrees(np.arccos(eh[1])):.1f} deg from the "
               f"vertical, drag {Td / 1e3:.1f} kN, dump {V['dump']['tension'][-1] / 1e3:.1f} kN, boom suspension "
               f"{Ts / 1e3:.1f} kN (hand {Ts_ref / 1e3:.1f} kN, arm {arm:.2f} m about the foot; boom at "
               f"{boom_angle_deg(d, res)[-1]:.3f} deg); bucket at x = "
               f"{res.position(d.bucket)[-1, 0]:.2f} m")
    r.figures.append(figure(d, res))
    return r


CASES = [dragline_hang]
