"""A chain falling over a pulley on a pendulum (P. G. Crous, "Modelling of Dragline Dynamics", MSc thesis,
Stellenbosch 2000, Ch. 4: the experiment that checked the rope-pulley model).

Data from the thesis (§4.1): pulley radius 0.2 m (contact at the effective radius 0.21 m), 4.24 kg, J_zz =
8.3e-2 kg m^2, J_xx = J_yy = 4.15e-2 kg m^2; pendulum 0.46 m, 1.48 kg, J = 3.183e-2 kg m^2 about its centre of mass
across its length; chain ANSI No. 80 (pitch 25.4 mm), 2.695 kg/m, 1.475 m, two links per rigid body (29 bodies of
50.9 mm, 0.137 kg); contact elements 5000 N/m and 500 N s/m.

Our choices where the thesis's data are missing (its Figs. 4.2-4.5, the layout and the initial state, did not
survive the scan, and its printed chain-body inertias, ~1e-2 kg m^2 for a 0.135 kg body 51 mm long, are not
those of a chain link): pendulum pivot at the origin, its centre of mass halfway to the pulley axle 0.46 m below;
the pulley turns freely on the pendulum; the chain's fixed end is anchored 0.6 m left of the pulley centre at the
height of the pulley top; from there the chain runs horizontally onto the pulley, over its top, and the free end is
held horizontally to the right (the "position constraint of the free end", released at t = 0); chain bodies on
universal joints (planar bending, Crous 2000, Ch. 5) with solid-cylinder inertias of diameter 15.9 mm (the roller);
friction mu = 0.3 on the rim (Coulomb ramp, v0 = 0.05 m/s); no sensor damper (the thesis fitted one to its
measurements, which we do not have).

What is checked: the energy balance (kinetic + potential - work of contact damping and friction) closes to 1e-2
of the potential energy released (measured 5.4e-3 over 4 s at h = 2.5e-4 s: generalized-alpha's numerical
dissipation of the whip and of the contact ringing, not booked as work), and the chain does not sink into the
pulley (largest penetration below 0.2 R). The motion itself is chaotic (thesis §4.2: repeated experiments diverge),
so no trajectory is compared; the pendulum angle is reported and plotted.

Why the last session's run failed (Newton at 2e-9 s steps), found by rerunning it: the step, h = 1e-3 s, is too
coarse for the chain's whip, not the contact stiffness, the free chain end or h_contact. Where a fold of the falling
chain runs into the end of a strand, the energy of the moving part gathers in the last few links (the falling
folded chain: in the continuum limit the speed at the fold diverges): links of 51 mm reach 20 m/s, ~400-800 rad/s,
0.4-0.8 rad per step at h = 1e-3. The index-3 generalized-alpha step with Euler parameters then gains energy
(the balance drifted by +1 J within 40 ms, the kinetic energy to 4e6 J in the next steps) and only after that does
Newton fail, at whatever step size. Measured: h = 1e-3 fails at t = 1.35 s (the thesis-like layout, anchor below the
pulley, mu = 0) and at t = 2.56 s (this layout); h = 2.5e-4 runs this layout to 4 s (16 000 steps, 12 rejected,
~2 min). An elastic anchor (1e5 N/m) does not cure h = 1e-3 (stall at 2.95 s). docs/theory-ropes.md §7.
"""
from __future__ import annotations

import math

import numpy as np

import flexmb as fm
from flexmb.contact import CoulombRamp, RopePulleyContact, rope_chain

from ..framework import CaseResult

G = 9.81
PULLEY_R, R_EFF, PULLEY_M, PULLEY_J = 0.2, 0.21, 4.24, (4.15e-2, 4.15e-2, 8.3e-2)
PEND_L, PEND_M, PEND_J = 0.46, 1.48, 3.183e-2
CHAIN_RHO, CHAIN_LEN, CHAIN_BODIES, ROLLER_D = 2.695, 1.475, 29, 0.0159
K, C = 5000.0, 500.0
MU, V0 = 0.3, 0.05
ANCHOR_X = -0.6
T_END, T_END_QUICK = 4.0, 0.6
STEP, STEP_QUICK = 2.5e-4, 5e-4    # s: the whip needs h <= 2.5e-4 (module doc); quick stops before it
SOURCE = ("P. G. Crous ('Modelling of Dragline Dynamics', MSc thesis, Stellenbosch 2000), Ch. 4; "
          "energy balance (no measured trajectory: the motion is chaotic, thesis §4.2)")


def chain_points(n: int = CHAIN_BODIES) -> np.ndarray:
    """Joint points: horizontal from the anchor to the pulley top, chords over the top (centres on R_EFF), then
    horizontal to the right (the held free end)."""
    L = CHAIN_LEN / n
    phi = 2.0 * math.atan(L / (2.0 * R_EFF))
    Rp = math.hypot(R_EFF, 0.5 * L)
    yc = -PEND_L
    # the arc: symmetric about the top, two chords (joints at +-phi/2 ... from the top)
    top = [(Rp * math.cos(0.5 * math.pi + a), yc + Rp * math.sin(0.5 * math.pi + a)) for a in (phi, 0.0, -phi)]
    x_l, y_l = top[0]
    n_left = int(math.floor((x_l - ANCHOR_X) / L))
    left = [(x_l - k * L, y_l) for k in range(n_left, 0, -1)]
    x_r, y_r = top[-1]
    n_right = n - n_left - 2
    right = [(x_r + k * L, y_r) for k in range(1, n_right + 1)]
    return np.array([(x, y, 0.0) for x, y in (*left, *top, *right)])


def build(n: int = CHAIN_BODIES):
    """System: pendulum on a pivot, pulley on an axle at its end, chain anchored at its left end; returns
    (system, pendulum, pulley, rope, contact)."""
    s = fm.System(gravity=(0.0, -G, 0.0), name="chain falling over a pulley on a pendulum")
    down = np.array([[0.0, 1.0, 0.0], [-1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])   # body x along -y
    pend = s.add(fm.RigidBody(PEND_M, (1e-4, PEND_J, PEND_J), position=(0.0, -0.5 * PEND_L, 0.0), orientation=down,
                              name="pendulum"))
    s.add(fm.Revolute(s.ground, pend, (0.0, 0.0, 0.0), (0.0, 0.0, 1.0), name="pivot"))
    pulley = s.add(fm.RigidBody(PULLEY_M, PULLEY_J, position=(0.0, -PEND_L, 0.0), name="pulley"))
    s.add(fm.Revolute(pend, pulley, (0.0, -PEND_L, 0.0), (0.0, 0.0, 1.0), name="axle"))
    pts = chain_points(n)
    rope = rope_chain(s, pts, CHAIN_RHO, diameter=ROLLER_D, bend_axis=(0.0, 0.0, 1.0), name="chain")
    s.add(fm.Universal(s.ground, rope.segments[0], point=pts[0], axis_a=(0.0, 0.0, 1.0),
                       axis_b=np.cross((0.0, 0.0, 1.0), pts[1] - pts[0]), name="anchor"))
    contact = s.add(RopePulleyContact(pulley, rope, R_EFF, K, C, friction=CoulombRamp(MU, V0), name="rim"))
    return s, pend, pulley, rope, contact


def _figure(res, pend, rope, E):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(1, 3, figsize=(12, 3.6))
    R = res.orientation(pend)
    theta = np.degrees(np.arctan2(R[:, 0, 0], -R[:, 1, 0]))
    ax[0].plot(res.t, theta)
    ax[0].set_xlabel("t (s)")
    ax[0].set_ylabel("pendulum angle (deg)")
    for k in np.linspace(0, res.t.size - 1, 6).astype(int):
        xy = np.array([res.q[k, b.offset:b.offset + 2] for b in rope.segments])
        ax[1].plot(xy[:, 0], xy[:, 1], ".-", ms=2, lw=0.8, label=f"t = {res.t[k]:.2f} s")
    ax[1].add_patch(plt.Circle((0.0, -PEND_L), PULLEY_R, fill=False))
    ax[1].set_aspect("equal")
    ax[1].legend(fontsize=6)
    ax[1].set_title("chain (start positions; pulley at t = 0)", fontsize=8)
    for k in ("kinetic", "potential", "work_nc"):
        ax[2].plot(res.t, E[k] - E[k][0], label=k)
    ax[2].plot(res.t, E["total"] - E["total"][0], "k", label="balance")
    ax[2].set_xlabel("t (s)")
    ax[2].set_ylabel("J")
    ax[2].legend(fontsize=7)
    fig.tight_layout()
    return fig


def chain_over_pendulum_pulley(quick: bool) -> CaseResult:
    """chain-over-pendulum-pulley: energy balance of the chain falling over the pulley (thesis Ch. 4)."""
    r = CaseResult("chain-over-pendulum-pulley", SOURCE)
    s, pend, pulley, rope, contact = build()
    t_end = T_END_QUICK if quick else T_END
    h = STEP_QUICK if quick else STEP
    res = fm.simulate(s, t_end, h, progress=False, contact_tol=np.inf)
    E = res.energy()
    released = float(E["potential"][0] - E["potential"].min())
    drift = float(np.abs(E["total"] - E["total"][0]).max())
    r.check("energy_balance_rel", drift / released, tolerance="max 1e-2")
    from flexmb.contact.rope import rope_pulley_forces
    f = rope_pulley_forces(res, contact)
    r.check("max_penetration_rel", float(f["delta"].max()) / R_EFF, tolerance="max 0.2")
    R = res.orientation(pend)
    theta = np.degrees(np.arctan2(R[:, 0, 0], -R[:, 1, 0]))
    r.metrics.update({"pendulum_angle_max_deg": float(np.abs(theta).max()), "energy_released_J": released,
                      "work_contact_J": float(E["work_nc"][-1]), "steps": res.stats.get("steps"),
                      "rejected": res.stats.get("rejected")})
    r.notes = (f"{CHAIN_BODIES} chain bodies, h = {h:g} s to {t_end:g} s; pendulum swings up to "
               f"{np.abs(theta).max():.1f} deg; data choices in verification/ropes/pendulum.py")
    r.figures.append(_figure(res, pend, rope, E))
    return r


CASES = [chain_over_pendulum_pulley]
