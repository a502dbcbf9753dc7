"""The four-sprocket marine-engine chain drive of Pedersen, Hansen & Ambrosio (NATO ASI Virtual Nonlinear Multibody
Systems, Prague 2002, §4 and Fig. 3): 122 links, pitch 0.0889 m, 3.01 kg per link, link stiffness 640 MN/m (the
paper's data), driven from rest to constant crankshaft speed over 2 s, then held for 25 s.

The paper gives no other data; ours (stated in the report and docs/theory-roller-chain.md §6):

* layout: crankshaft sprocket z = 48 at the bottom, camshaft sprocket z = 48 above it (same speed: a two-stroke
  engine), an idler z = 24 on the right and the tightener sprocket z = 24 on the left on a weight arm (pivot 0.6 m
  below it) held by a spring-damper to the ground (the paper's hydraulic damper: k = 2 MN/m, c = 2e4 N s/m,
  preloaded to 20 kN). The closed chain is built as an exact polygon of 122 edges of one pitch whose wrapped
  vertices are seats of the sprockets (:func:`chain_polygon`): every link starts at its free length;
* crankshaft speed 150 rpm (2.5 Hz) reached with the smooth ramp (models.ramp_angle); camshaft load 10 kN m
  (about 160 kW, 2 % of the largest engine's power) plus 30 % fluctuation at 6 per revolution (fuel-pump cams of a
  six-cylinder engine), ramped with the speed;
* sprockets 200 kg (z 48) and 60 kg (z 24), radius of gyration 0.7 R_p; arm 40 kg; contact K = 2.5e10 N/m^1.5
  (the series compliance of the hollow roller on its bush and of the tooth's bending, about 4e8 N/m at 40 kN:
  docs/theory-roller-chain.md §6; a Hertz point contact of solid steel, 1e11, is stiffer and leaves the engagement
  impacts unresolved at h = 0.1 ms), n = 1.5, e = 0.5 at 0.5 m/s; link damping 5000 N s/m; gravity 9.81 m/s^2 down.

Cases: ``marine-start`` (quick, in the suite): the first 0.4 s at h = 0.1 ms, the settling of the pretensioned
polygon and the start of the ramp: the energy balance within 5e-2 of the driver's work (ENERGY_TOL_START), the
camshaft - crankshaft angle below half a tooth (no tooth skipped), link forces below 120 kN. ``marine-drive``
(slow, the 27 s run, not in the suite): no slip (camshaft / crankshaft mean speed over the last second, rel 1e-3);
the moment balance of the camshaft sprocket's mean load (mean tight minus slack span tension times R_p against
the mean load torque, rel 5 %: the dynamic span tensions are averaged over whole tooth periods); the energy
balance within 3 % of the driver's work (measured 1.48 %); the reference link's force below 120 kN (75.0 kN).

Energy balance (docs/theory-roller-chain.md §6): no power is missing (the work of the load, the driver's reaction,
the link and tightener dampers and the energies computed independently from rows saved at every step agree with
the booked ones to 1e-4 J over 0.3 s); the error comes in jumps at single
engagement impacts that the step does not resolve: rollers of the slack span hitting the tightener sprocket at
up to 7 m/s while the span whips. With K = 1e11 these impacts last about 0.1-0.2 ms and at h = 0.1 ms a roller
resting against a tightener flank rattles with energy pumped in by the unresolved contact (26 J gained in 0.3 s
of 21 J driver work; 1.3 kJ of 37 kJ at 1.2 s even at h = 0.05 ms). With K = 2.5e10 the error at 1.2 s is 0.8 %
of the driver work at h = 0.2 and 0.1 ms and 0.27 % at 0.05 ms. A second error is in the booked driver work:
the crankshaft driver's multiplier oscillates at period 2h, barely damped with rho_inf = 0.9 (at h = 0.05 ms it
grows to +-320 kN m by 0.35 s and the balance is 59 J off by 0.4 s); rho_inf = 0.6 keeps it smooth (0.41 % at
1.2 s, h = 0.1 ms). The runs here use rho_inf = 0.9, with which the 27 s run was measured. Reported: the link-force history of one
reference link, its peak (the paper's Fig. 3 reaches about 90 kN, with unknown load data), wall time and cost
per link and step.

Command (benchmarks/README.md): ``python -m verification.roller_chain.marine --t-end 27 --out marine_chain``
(``--t-end 3`` for a short look): writes ``summary.json``, ``link_force.npz`` and ``link_force.png`` in OUT, the
history in chunks in OUT/history (``--summarize WALL_S`` summarizes an interrupted run from there).
"""
from __future__ import annotations

import argparse
import json
import math
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

import flexmb as fm
from flexmb.contact.sprocket import SprocketContact, pitch_radius
from flexmb.errors import EnergyBalanceWarning
from flexmb.forces.particles import link_tensions

from ..framework import CaseResult
from .models import ramp_angle, smooth_ramp

PITCH = 0.0889            # m (paper)
LINKS = 122               # paper
ROLLER_MASS = 3.01        # kg (paper: the mass of one link)
LINK_STIFFNESS = 640e6    # N/m (paper)


@dataclass
class MarineData:
    teeth: tuple = (48, 24, 48, 24)              # crank, idler, camshaft, tightener (counter-clockwise)
    centres: tuple = ((0.0, 0.0), (0.95, 1.55), (0.0, 3.1), (-0.95, 1.5))   # nominal, m
    link_damping: float = 5000.0                 # N s/m (about 6 % of critical for one link)
    flank_angle: float = math.radians(10.0)      # rad: 20 deg let the loaded rollers climb the camshaft teeth
    contact_stiffness: float = 2.5e10            # N/m^1.5 (docs/theory-roller-chain.md §6: compliance of the roller ring and tooth)
    restitution: float = 0.5
    approach_speed: float = 0.5                  # m/s
    guide_stiffness: float = 1e8                 # N/m, axial guide of engaged rollers (planar: inactive)
    rpm: float = 150.0
    ramp: float = 2.0                            # s
    cam_torque: float = 10e3                     # N m
    cam_fluctuation: float = 0.3
    cam_order: int = 6
    tightener_k: float = 2e6                     # N/m
    tightener_c: float = 2e4                     # N s/m
    tightener_preload: float = 20e3              # N
    pretension: float = 20e3                     # N, chain tension of the initial polygon
    arm_length: float = 0.6                      # m
    gravity: float = 9.81


def _polygon(heading0: float, turns: list, counts: list) -> np.ndarray:
    """Vertices of a chain of edges of one pitch: ``counts[i]`` edges after turning by ``turns[i]`` (rad)."""
    v = [np.zeros(2)]
    h = heading0
    for a, n in zip(turns, counts):
        h += a
        e = PITCH * np.array([math.cos(h), math.sin(h)])
        for _ in range(n):
            v.append(v[-1] + e)
    return np.array(v)


def chain_polygon(d: MarineData):
    """The closed chain as an exact polygon of LINKS edges of one pitch (counter-clockwise): on sprocket i, k_i
    chords turning 2 pi / z_i between them (its wrapped vertices are seats); between sprockets, straight spans of
    n_i edges; at the ends of each span the chain turns by the free angles a_i (arrival) and d_i (departure),
    nominally pi / z (tangent to the pitch circle). The integers k_i, n_i come from the belt path of the nominal
    layout; three turn angles are then corrected (minimum-norm Newton) so that the polygon closes and turns once.
    Returns (vertices (LINKS, 3), sprocket centres (4, 2), first wrapped vertex index per sprocket)."""
    z = np.array(d.teeth)
    R = np.array([pitch_radius(PITCH, k) for k in z])
    C = np.array(d.centres, dtype=float)
    m = len(z)
    # belt path of the nominal layout: wrap angle on each sprocket, span lengths
    nrm = []
    for i in range(m):
        c1, c2, r1, r2 = C[i], C[(i + 1) % m], R[i], R[(i + 1) % m]
        L = np.linalg.norm(c2 - c1)
        u = (c2 - c1) / L
        cb = (r1 - r2) / L
        sb = math.sqrt(1 - cb * cb)
        nrm.append(np.array([u[0] * cb + u[1] * sb, -u[0] * sb + u[1] * cb]))
    spans = []
    for i in range(m):
        p1 = C[i] + R[i] * nrm[i]
        p2 = C[(i + 1) % m] + R[(i + 1) % m] * nrm[i]
        spans.append(float(np.linalg.norm(p2 - p1)))
    wraps = []
    for i in range(m):                          # sprocket i is wrapped from span i-1's normal to span i's
        a0 = math.atan2(nrm[i - 1][1], nrm[i - 1][0])
        a1 = math.atan2(nrm[i][1], nrm[i][0])
        wraps.append((a1 - a0) % (2 * math.pi))
    k = [max(2, int(round(w / (2 * math.pi / zz)))) for w, zz in zip(wraps, z)]
    n = [max(1, int(round(s / PITCH))) for s in spans]
    n[-1] += LINKS - (sum(k) + sum(n))          # the tightener's outgoing span takes up the difference
    # turn sequence: per sprocket [arrival a_i, (k_i - 1) x 2 pi / z_i], then span [departure d_i]
    base = np.array([math.pi / zz for zz in z] * 2)          # a_0..a_3, d_0..d_3

    def build(ang):
        turns, counts = [], []
        for i in range(m):
            turns.append(ang[i])
            counts.append(1)
            for _ in range(k[i] - 1):
                turns.append(2 * math.pi / z[i])
                counts.append(1)
            turns.append(ang[m + i])
            counts.append(n[i])
        return turns, counts

    def resid(ang):
        turns, counts = build(ang)
        V = _polygon(0.0, turns, counts)
        return np.array([V[-1, 0], V[-1, 1], sum(turns) - 2 * math.pi])

    ang = base.copy()
    free = [m + 1, m + 2, m + 3]                # departures from idler, camshaft, tightener
    for _ in range(50):
        F = resid(ang)
        if np.abs(F).max() < 1e-13:
            break
        J = np.empty((3, len(free)))
        for j, f in enumerate(free):
            e = np.zeros_like(ang)
            e[f] = 1e-7
            J[:, j] = (resid(ang + e) - resid(ang - e)) / 2e-7
        ang[free] -= np.linalg.solve(J, F)
    else:
        raise RuntimeError("the chain polygon does not close")
    turns, counts = build(ang)
    limit = np.array([2 * math.pi / zz for zz in z] * 2)
    if np.any(ang < 0) or np.any(ang > limit):
        raise RuntimeError(f"chain polygon: a span turns outside (0, 2 pi / z): {ang} (limits {limit})")
    V = _polygon(0.0, turns, counts)[:-1]
    # wrapped vertices of sprocket i: indices start_i .. start_i + k_i; the centre is their circumcentre
    centres, first, idx = [], [], 0
    for i in range(m):
        W = V[[idx, idx + k[i] // 2, idx + k[i]]] if k[i] >= 2 else None
        A = 2 * np.array([W[1] - W[0], W[2] - W[0]])
        b = np.array([W[1] @ W[1] - W[0] @ W[0], W[2] @ W[2] - W[0] @ W[0]])
        centres.append(np.linalg.solve(A, b))
        first.append(idx)
        idx += k[i] + n[i]
    # place it as the nominal layout: crankshaft centre at its nominal place, crank -> camshaft as nominal
    centres = np.array(centres)
    dn, da = C[2] - C[0], centres[2] - centres[0]
    rot = math.atan2(dn[1], dn[0]) - math.atan2(da[1], da[0])
    Q = np.array([[math.cos(rot), -math.sin(rot)], [math.sin(rot), math.cos(rot)]])
    V = (V - centres[0]) @ Q.T + C[0]
    centres = (centres - centres[0]) @ Q.T + C[0]
    X = np.column_stack([V, np.zeros(len(V))])
    return X, centres, first, k, n


@dataclass
class Marine:
    system: fm.System
    sprockets: list
    crank_shaft: object
    cam_shaft: object
    rollers: fm.Particles
    links: fm.ParticleLinks
    data: MarineData
    wraps: list
    spans: list
    first: list


def marine_drive(d: MarineData | None = None) -> Marine:
    """The marine chain drive (module doc): crankshaft driven, camshaft loaded, tightener on a weight arm."""
    d = d or MarineData()
    X, Cs, first, k, n = chain_polygon(d)
    s = fm.System(gravity=(0.0, -d.gravity, 0.0), name="marine roller-chain drive")
    names = ("crankshaft", "idler", "camshaft", "tightener")
    spr, shafts = [], []
    w = 2 * math.pi * d.rpm / 60.0
    for i, (zz, c, nm) in enumerate(zip(d.teeth, Cs, names)):
        R = pitch_radius(PITCH, zz)
        mass = 200.0 if zz >= 40 else 60.0
        J = mass * (0.7 * R) ** 2
        b = s.add(fm.RigidBody(mass, (0.5 * J, 0.5 * J, J), position=(c[0], c[1], 0.0), name=nm))
        spr.append(b)
    arm = None
    for i, b in enumerate(spr):
        c = Cs[i]
        if names[i] == "tightener":
            pivot = (c[0], c[1] - d.arm_length, 0.0)
            arm = s.add(fm.RigidBody(40.0, (1.0, 1.0, 40.0 * d.arm_length ** 2 / 12),
                                     position=(c[0], c[1] - 0.5 * d.arm_length, 0.0), name="weight arm"))
            s.add(fm.Revolute(s.ground, arm, pivot, (0.0, 0.0, 1.0), name="arm pivot"))
            shafts.append(s.add(fm.Revolute(arm, b, (c[0], c[1], 0.0), (0.0, 0.0, 1.0), name="tightener shaft")))
            anchor = (c[0] - 1.0, c[1], 0.0)
            s.add(fm.SpringDamper(arm, s.ground, point_a=(c[0], c[1], 0.0), point_b=anchor, k=d.tightener_k,
                                  c=d.tightener_c, free_length=1.0 - d.tightener_preload / d.tightener_k,
                                  name="tightener spring"))
        else:
            shafts.append(s.add(fm.Revolute(s.ground, b, (c[0], c[1], 0.0), (0.0, 0.0, 1.0), name=f"{names[i]} shaft")))
    angle = ramp_angle(w, d.ramp)
    s.add(fm.Driver(shafts[0], angle=angle, name="engine"))
    T0, fl, order, tr = d.cam_torque, d.cam_fluctuation, d.cam_order, d.ramp
    s.add(fm.Torque(spr[2], lambda t: (0.0, 0.0, -T0 * smooth_ramp(t, tr) * (1.0 + fl * math.sin(order * angle(t)))),
                    name="camshaft load"))
    rollers = s.add(fm.Particles(X, ROLLER_MASS, name="rollers"))
    # free length p - F0 / k: the chain built on the seats at pitch p carries the pretension F0 (the static solve
    # then balances it with the tightener's preload)
    links = s.add(fm.ParticleLinks(rollers, "closed", LINK_STIFFNESS, d.link_damping,
                                   free_length=PITCH - d.pretension / LINK_STIFFNESS, name="links"))
    for i, b in enumerate(spr):
        seat = X[first[i]] - np.array([Cs[i][0], Cs[i][1], 0.0])
        s.add(SprocketContact(b, rollers, d.teeth[i], PITCH, d.contact_stiffness, restitution=d.restitution,
                              approach_speed=d.approach_speed, seat_direction=seat, flank_angle=d.flank_angle,
                              guide_stiffness=d.guide_stiffness, name=f"{names[i]} mesh"))
    return Marine(s, spr, shafts[0], shafts[2], rollers, links, d, k, n, first)


def run(t_end: float = 27.0, h: float = 1e-4, save_every: int = 10, progress=None, output=None):
    """Build and simulate from the pretensioned polygon at rest (the first tenths of a second settle the preload:
    ``fm.static_equilibrium`` does not start, see docs/theory-roller-chain.md §6); returns (model, result, wall
    seconds)."""
    m = marine_drive()
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EnergyBalanceWarning)
        res = fm.simulate(m.system, t_end, h, progress=progress, save_every=save_every, output=output)
    return m, res, time.perf_counter() - t0


def summarize(m: Marine, res, wall: float, h: float) -> dict:
    """Numbers of a run: reference link force history and peak, speeds, moment balance, energy balance, cost."""
    f = link_tensions(m.links, res.q, res.v)
    ref = f[:, 0]
    t = res.t
    d = m.data
    w = 2 * math.pi * d.rpm / 60.0
    last = t >= t[-1] - 1.0
    th_c = res.joint_coordinates(m.cam_shaft).ravel()
    th_k = res.joint_coordinates(m.crank_shaft).ravel()
    ratio = (th_c[last][-1] - th_c[last][0]) / (th_k[last][-1] - th_k[last][0])
    steady = t >= min(d.ramp + 0.5, t[-1] - 0.5)
    # the chain runs counter-clockwise (crankshaft -> idler -> camshaft -> tightener): the crankshaft pulls the
    # span from the tightener, so the camshaft's outgoing span (span 2, to the tightener) is the tight one and its
    # incoming span (span 1, from the idler) the slack one. The chain moves: at each saved time the link whose
    # centre is nearest to the middle of the span (a fixed place, from the initial polygon) is read.
    idx = np.cumsum([0] + [a + b for a, b in zip(m.wraps, m.spans)])
    X0 = m.rollers.positions
    x = res.particles(m.rollers)
    cen = 0.5 * (x + np.roll(x, -1, axis=1))                 # link k joins rollers k and k+1 (closed)
    rows = np.arange(len(t))

    def span_force(i):
        probe = X0[idx[i] + m.wraps[i] + m.spans[i] // 2]
        k = np.argmin(np.linalg.norm(cen - probe, axis=2), axis=1)
        return f[rows, k]
    Ft = span_force(2)[steady].mean()
    Fs = span_force(1)[steady].mean()
    R = pitch_radius(PITCH, d.teeth[2])
    E = res.energy()
    drift = float(np.abs(E["total"] - E["total"][0]).max())
    steps = int(round((t[-1] - t[0]) / h))
    return {"t_end": float(t[-1]), "peak_link_force": float(ref.max()), "min_link_force": float(ref.min()),
            "mean_link_force_steady": float(ref[steady].mean()), "speed_ratio": float(ratio),
            "tight_tension": float(Ft), "slack_tension": float(Fs),
            "moment_ratio": float((Ft - Fs) * R / d.cam_torque), "energy_drift": drift,
            "driver_work": float(np.abs(E["work_drivers"]).max()), "wall_s": wall, "steps": steps,
            "us_per_step": 1e6 * wall / max(steps, 1), "us_per_link_step": 1e6 * wall / max(steps, 1) / LINKS,
            "crank_speed": w}


def marine(quick: bool) -> CaseResult:
    """marine-drive: the paper's 122-link drive, 27 s (slow; a script in benchmarks/README.md, not in the suite)."""
    r = CaseResult("marine-drive",
                   "Pedersen, Hansen & Ambrosio 2002, §4 and Fig. 3; our layout and loads (module doc)")
    h = 1e-4
    m, res, wall = run(27.0, h, save_every=10)
    out = summarize(m, res, wall, h)
    r.check("speed_ratio", out["speed_ratio"], 1.0, "rel 1e-3")
    r.check("moment_ratio", out["moment_ratio"], 1.0, "rel 0.05")
    r.check("energy_balance_rel", out["energy_drift"] / out["driver_work"], None, f"max {ENERGY_TOL_FULL:g}")
    r.check("link_force_peak", out["peak_link_force"], None, f"max {PEAK_LIMIT:g}")
    r.metrics.update({k: v for k, v in out.items() if k not in ("speed_ratio", "moment_ratio", "peak_link_force")})
    r.metrics["paper_peak_link_force"] = 9.0e4
    r.notes = (f"reference link: peak {out['peak_link_force'] / 1e3:.1f} kN (paper's Fig. 3: about 90 kN with its "
               f"unpublished loads); {out['wall_s']:.0f} s wall for {out['steps']} steps, "
               f"{out['us_per_link_step']:.2f} us per link and step")
    return r


marine.slow = True

START_T = 0.4           # s, the quick case's run
ENERGY_TOL_START = 5e-2
"""Energy balance of the quick case, relative to the driver's work (about 157 J), at h = 0.1 ms. The error is that
of single under-resolved impacts (rollers seating on teeth and the tightener), so it depends on where the steps fall
against the impacts, which a change of the last bits moves: measured 3.13e-3 here and 3.1e-3 on another machine (the
1.5e-3 stated before is not reproduced on either), and with the step changed by 1e-7 and 3e-7 relative (standing in
for another machine's round-off) 1.4e-3, 1.9e-3, 2.9e-3 and 2.27e-2 -- the last one impact that gains 2.14 J in
one step (t = 0.2529 s). A smaller step does not help: at h = 0.05 ms the crankshaft driver's multiplier grows
(docs/theory-roller-chain.md §6; measured 0.29 of the driver work). The bound 5e-2 is 2.2 x the worst of these
runs and stays below the non-conservative work (link damping and contact dissipation, 31 J = 0.20 of the
driver work): a lost or doubled dissipation term fails it, a lucky or unlucky impact does not."""
ENERGY_TOL_FULL = 0.03
"""Energy balance of the 27 s run, relative to the driver's work: measured 0.0148 at h = 0.1 ms (61.8 kJ of
4185 kJ; docs/theory-roller-chain.md §6), the error of the unresolved impacts, growing about in proportion to the
driver's work; the bound leaves a factor 2."""
PEAK_LIMIT = 1.2e5
"""N: the paper's Fig. 3 reaches about 90 kN with its unpublished loads; 1.2e5 N bounds our link forces with a
third more for our own load and tightener data (the check is against gross errors, spikes of 1 MN of
unresolved impacts)."""


def marine_start(quick: bool) -> CaseResult:
    """marine-start: the marine drive's first 0.4 s (the settling of the pretensioned polygon and the start of
    the crankshaft ramp) at h = 0.1 ms: energy balance, no tooth skipped, link forces bounded."""
    r = CaseResult("marine-start", "conservation of energy, tooth count (module doc); Pedersen, Hansen & "
                                   "Ambrosio 2002 §4 for the data they give, ours for the rest")
    h = 1e-4
    m, res, wall = run(START_T, h, save_every=10)
    E = res.energy()
    drift = float(np.abs(E["total"] - E["total"][0]).max())
    work = float(np.abs(E["work_drivers"]).max())
    th_c = res.joint_coordinates(m.cam_shaft).ravel()
    th_k = res.joint_coordinates(m.crank_shaft).ravel()
    lag = float(np.abs(th_c - th_k).max())
    f = link_tensions(m.links, res.q, res.v)
    half_tooth = math.pi / m.data.teeth[0]
    r.check("energy_balance_rel", drift / work, None, f"max {ENERGY_TOL_START:g}")
    # camshaft and crankshaft have the same number of teeth: their angles differ only by the chain's stretch and
    # the flank penetrations while no roller skips a tooth (a skip is 2 pi / z)
    r.check("cam_crank_angle_over_half_tooth", lag / half_tooth, None, "max 1")
    r.check("link_force_peak", float(f.max()), None, f"max {PEAK_LIMIT:g}")
    r.metrics.update({"energy_drift": drift, "driver_work": work, "crank_angle": float(th_k[-1]),
                      "max_cam_crank_angle": lag, "min_link_force": float(f.min()), "wall_s": wall,
                      "steps": int(round(START_T / h))})
    r.notes = (f"{START_T:g} s at h = {h * 1e3:g} ms: energy balance {drift:.3g} J of {work:.3g} J driver work; "
               f"camshaft - crankshaft angle at most {lag * 1e3:.2f} mrad (half a tooth {half_tooth * 1e3:.1f} "
               f"mrad); link forces {f.min() / 1e3:.1f} .. {f.max() / 1e3:.1f} kN; {wall:.1f} s wall")
    return r


CASES = [marine_start, marine]


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description="the marine roller-chain drive of Pedersen, Hansen & Ambrosio (2002)")
    ap.add_argument("--t-end", type=float, default=27.0)
    ap.add_argument("--h", type=float, default=1e-4)
    ap.add_argument("--out", type=Path, default=Path("marine_chain"))
    ap.add_argument("--summarize", type=float, default=None, metavar="WALL_S",
                    help="only summarize the history already in OUT/history (an interrupted run), giving its wall "
                         "time (s)")
    a = ap.parse_args(argv)
    if a.summarize is not None:
        m = marine_drive()
        res = fm.load_result(a.out / "history", system=m.system)
        wall = a.summarize
    else:
        m, res, wall = run(a.t_end, a.h, progress=True, save_every=max(1, int(round(1e-3 / a.h))),
                           output=a.out / "history")
    out = summarize(m, res, wall, a.h)
    a.out.mkdir(parents=True, exist_ok=True)
    f = link_tensions(m.links, res.q, res.v)
    np.savez_compressed(a.out / "link_force.npz", t=res.t, reference_link=f[:, 0], all_links=f.astype(np.float32))
    (a.out / "summary.json").write_text(json.dumps(out, indent=2))
    print(json.dumps(out, indent=2))
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(figsize=(8, 3.5))
        ax.plot(res.t, f[:, 0] / 1e3, lw=0.5)
        ax.set_xlabel("time (s)")
        ax.set_ylabel("link force (kN)")
        ax.set_title("marine chain drive: force of link 0")
        fig.tight_layout()
        fig.savefig(a.out / "link_force.png", dpi=120)
    except ImportError:
        pass


if __name__ == "__main__":
    main()
