"""The two-sprocket check drive (models.py): static chain tension (settled, and the static start under load),
polygonal action, energy balance.

Model (our data, DriveData: an ANSI 80-size chain, p = 25.4 mm, z = 12 on both sprockets, 8 links per span,
0.1 kg per roller, links 2 MN/m and 20 N s/m, 400 N pretension, contact K = 1e9 N/m^1.5, n = 1.5, e = 0.5 at
0.1 m/s): the chain lies exactly on the seats and spans, the pretension is brought to static equilibrium first
(``fm.static_equilibrium`` with the load at zero), then the load torque on the driven sprocket is ramped up.

Cases and references (docs/theory-roller-chain.md §5):

* ``static-tension``: driver held, load torque T = 20 N m ramped over 0.05 s, settled by 0.25 s (a viscous
  drag on the rollers, zero at rest, damps the spans' transverse vibration, which the axial link dampers leave
  undamped). Statics of the driven sprocket with its wrapped rollers: ``(F_tight - F_slack) h = T`` with the
  lever h of the span lines between ``R_p cos(pi/z)`` and ``R_p``, so ``tension_ratio = (F_tight - F_slack)
  R_p / T`` is 1 within ``1 - cos(pi/z)`` (3.4 % for z = 12; the spans leave at the top and bottom seats, so
  the lever is R_p less the radial contact compression: measured 7e-4). ``torque_balance``: the same moment
  with the measured levers of the span links, exact for a resting system: rel 2e-3 (the rest motion left at
  0.25 s). ``motor_torque``: the driver's reaction carries T through the chain: rel 2e-3.
* ``static-start``: ``fm.static_equilibrium`` under the full load T = 20 N m, no dynamics, from the chain seated
  with the driven sprocket turned by ``models.seated_angle`` (on the bare seated chain the flanks touch at zero
  penetration, where the Hertzian law has no stiffness, and the first load step fails). The same
  ``tension_ratio`` bound; ``torque_balance`` (the spans' moment on the driven sprocket with the measured levers)
  and ``motor_torque`` (the driver's reaction against the spans' moment about the driver) rel 1e-6, exact statics
  to Newton's tolerance; ``motor_torque_load`` against T rel 1e-3 (the levers at the driver differ from the
  driven ones by the radial contact compression: measured 1.9e-4); ``span_uniformity`` max 1e-6 (measured
  3e-13).
* ``polygonal-action``: driver brought to f = 2.5 Hz over 0.2 s (smooth ramp), load T = 20 N m; the tension of
  the link at the middle of the tight span (the link found there at each saved time: a fixed place, as a strain
  gauge on a guide would see it) from 0.4 s to 1.6 s (quick: to 1.2 s). The chain advances one pitch per tooth
  period, so in
  steady motion this signal is periodic at the tooth frequency ``z f = 30 Hz``: its strongest line in (0.5, 1.5)
  z f must be z f within one frequency bin (0.83 Hz; quick 1.25 Hz), at least 80 % of its spectral power (mean
  removed, Hann
  window) must lie within 1.5 bins of the harmonics of z f (measured 0.93 over 0.4-1.4 s; the rest is the decaying
  start transient), and the strongest line overall must
  be a harmonic. Same run: ``speed_ratio`` (mean driven / driver speed, no slip: rel 1e-3) and the energy
  balance (kinetic + stored - damper and drag work - load work - driver work constant: within ENERGY_TOL of the
  driver work).
"""
from __future__ import annotations

import math
import time
import warnings

import numpy as np

import flexmb as fm
from flexmb.errors import EnergyBalanceWarning
from flexmb.forces.particles import link_tensions

from ..framework import CaseResult
from .models import DriveData, ramp_angle, seated_angle, smooth_ramp, two_sprocket_drive

TORQUE = 20.0          # N m, load on the driven sprocket
SHAFT_HZ = 2.5         # driver speed in the running case
DRAG = 2.0             # N s/m per roller: viscous drag (our choice; damps the spans' transverse vibration)
H = 2e-4               # s


def _span_mid_link(drive, x: np.ndarray, top: bool) -> np.ndarray:
    """Index (nt,) of the link whose centre is nearest to the middle of the top (tight) or bottom span."""
    d = drive.data
    mid = np.array([0.5 * d.span_links * d.pitch, d.radius if top else -d.radius, 0.0])
    L = drive.links.pairs
    cen = 0.5 * (x[:, L[:, 0]] + x[:, L[:, 1]])
    return np.argmin(np.linalg.norm(cen - mid, axis=2), axis=1)


def static_tension(quick: bool) -> CaseResult:
    """static-tension: span tensions of the loaded drive against T / R_p and the moment balance."""
    r = CaseResult("static-tension", "statics of the driven sprocket (module doc); our data")
    d = DriveData()
    drive = two_sprocket_drive(d, load_torque=lambda t: -TORQUE * smooth_ramp(t, 0.05))
    s = drive.system
    s.add(fm.ParticleAnchors(drive.rollers, np.arange(drive.rollers.count), stiffness=0.0, damping=5.0,
                             name="drag"))
    t0 = time.perf_counter()
    st = fm.static_equilibrium(s, load_steps=1)
    res = fm.simulate(s, 0.25, H, progress=False, initial=st, save_every=25)
    wall = time.perf_counter() - t0
    x = res.particles(drive.rollers)
    f = link_tensions(drive.links, res.q, res.v)[-1]
    kt, kb = _span_mid_link(drive, x, True)[-1], _span_mid_link(drive, x, False)[-1]
    Ft, Fb = float(f[kt]), float(f[kb])
    c = res.position(drive.driven)[-1]
    L = drive.links.pairs

    def lever(k):
        a, b = x[-1, L[k, 0]], x[-1, L[k, 1]]
        u = (b - a) / np.linalg.norm(b - a)
        return float(np.cross(u, c - a)[2])      # moment arm about +z of a unit tension pulling from a to b
    # the tight span pulls the driven sprocket's top roller towards -x, the slack one its bottom roller to +x
    moment = Ft * abs(lever(kt)) - Fb * abs(lever(kb))
    _, M = res.reaction(s.joints[2])
    z = d.teeth
    r.check("tension_ratio", (Ft - Fb) * d.radius / TORQUE, 1.0, f"rel {1 - math.cos(math.pi / z):.4f}")
    r.check("torque_balance", moment, TORQUE, "rel 2e-3")
    r.check("motor_torque", float(M[-1, 2]), TORQUE, "rel 2e-3")
    r.metrics.update({"tight_tension": Ft, "slack_tension": Fb, "pretension": d.pretension,
                      "pitch_radius": d.radius, "wall_s": wall})
    r.notes = (f"z = {z}, R_p = {d.radius * 1e3:.3f} mm, T = {TORQUE:g} N m: tight {Ft:.1f} N, slack {Fb:.1f} N, "
               f"(F_t - F_s) R_p / T = {(Ft - Fb) * d.radius / TORQUE:.5f}")
    return r


def static_start(quick: bool) -> CaseResult:
    """static-start: ``fm.static_equilibrium`` of the drive under the full load torque, from the chain seated
    with the driven sprocket turned by :func:`models.seated_angle`; span tensions against T / R_p."""
    r = CaseResult("static-start", "statics of the driven sprocket (module doc); our data")
    d = DriveData()
    drive = two_sprocket_drive(d, load_torque=lambda t: -TORQUE, seated_angle=seated_angle(d, -TORQUE))
    s = drive.system
    t0 = time.perf_counter()
    st = fm.static_equilibrium(s, load_steps=4)
    wall = time.perf_counter() - t0
    x = st.particles(drive.rollers)[-1]
    f = link_tensions(drive.links, st.q[-1:])[0]
    top, bottom = np.array(drive.spans[0]), np.array(drive.spans[1])
    Ft, Fb = float(f[top].mean()), float(f[bottom].mean())
    L = drive.links.pairs

    def lever(k, c):
        a, b = x[L[k, 0]], x[L[k, 1]]
        u = (b - a) / np.linalg.norm(b - a)
        return abs(float(np.cross(u, c - a)[2]))
    kt, kb = top[len(top) // 2], bottom[len(bottom) // 2]
    c, c0 = st.position(drive.driven)[-1], st.position(drive.driver)[-1]
    moment = f[kt] * lever(kt, c) - f[kb] * lever(kb, c)            # the spans' moment on the driven sprocket
    moment0 = f[kt] * lever(kt, c0) - f[kb] * lever(kb, c0)         # ... and on the driver
    _, M = st.reaction(s.joints[2])
    z = d.teeth
    r.check("tension_ratio", (Ft - Fb) * d.radius / TORQUE, 1.0, f"rel {1 - math.cos(math.pi / z):.4f}")
    r.check("torque_balance", float(moment), TORQUE, "rel 1e-6")
    r.check("motor_torque", float(M[-1, 2]), float(moment0), "rel 1e-6")
    r.check("motor_torque_load", float(M[-1, 2]), TORQUE, "rel 1e-3")
    r.check("span_uniformity", float(max(np.ptp(f[top]), np.ptp(f[bottom])) / Fb), None, "max 1e-6")
    r.metrics.update({"tight_tension": Ft, "slack_tension": Fb, "pretension": d.pretension,
                      "pitch_radius": d.radius, "load_steps": st.stats["load_steps"], "wall_s": wall})
    r.notes = (f"static start under T = {TORQUE:g} N m (driven sprocket turned {seated_angle(d, -TORQUE) * 1e3:.3f} "
               f"mrad against the seats): tight {Ft:.2f} N, slack {Fb:.2f} N, (F_t - F_s) R_p / T = "
               f"{(Ft - Fb) * d.radius / TORQUE:.5f}, moment {moment:.6f} N m, motor {float(M[-1, 2]):.6f} N m")
    return r


ENERGY_TOL = 3e-3
"""Energy balance of polygonal_action, relative to the driver's work (0.4-0.5 kJ): the error of the roller-tooth
impacts, first order in h (measured 1.07e-3 at h = 0.2 ms and 5.6e-4 at 0.1 ms, quick run). Measured at
h = 0.2 ms: 1.07e-3 (quick) and 1.08e-3 (full) here, 1.1e-3 on another machine (the 5e-4 stated before was not
reproduced), and 1.05e-3 to 1.18e-3 with the step changed by 1e-7 relative (another machine's round-off). The
bound is 2.5 x the largest of these."""


def polygonal_action(quick: bool) -> CaseResult:
    """polygonal-action: tooth-frequency line in the tight-span link force, no-slip speed, energy balance."""
    r = CaseResult("polygonal-action", "periodicity of the polygonal action, conservation of energy (module doc)")
    d = DriveData()
    w = 2 * math.pi * SHAFT_HZ
    drive = two_sprocket_drive(d, driver_angle=ramp_angle(w, 0.2), load_torque=lambda t: -TORQUE * smooth_ramp(t, 0.2))
    s = drive.system
    s.add(fm.ParticleAnchors(drive.rollers, np.arange(drive.rollers.count), stiffness=0.0, damping=DRAG,
                             name="drag"))
    t0 = time.perf_counter()
    st = fm.static_equilibrium(s, load_steps=1)
    t_end = 1.2 if quick else 1.6
    with warnings.catch_warnings():
        # the run-time watch compares the drift with the kinetic and stored energy (~4 J); it is checked below
        # against the driver's work (~450 J), which is what it accumulates from
        warnings.simplefilter("ignore", EnergyBalanceWarning)
        res = fm.simulate(s, t_end, H, progress=False, initial=st)
    wall = time.perf_counter() - t0
    x = res.particles(drive.rollers)
    f = link_tensions(drive.links, res.q, res.v)
    k = _span_mid_link(drive, x, True)
    span = f[np.arange(len(res.t)), k]
    sel = res.t >= 0.4 - 1e-12
    y = span[sel] - span[sel].mean()
    n = len(y)
    P = np.abs(np.fft.rfft(y * np.hanning(n))) ** 2
    fr = np.fft.rfftfreq(n, H)
    df = fr[1]
    fz = d.teeth * SHAFT_HZ
    band = (fr > 0.5 * fz) & (fr < 1.5 * fz)
    line = float(fr[band][np.argmax(P[band])])
    order = np.round(fr / fz)
    harm = (order >= 1) & (np.abs(fr - order * fz) <= 1.5 * df)
    frac = float(P[harm].sum() / P[1:].sum())
    top = int(np.argmax(P[1:]) + 1)
    th = res.joint_coordinates(drive.shaft).ravel()
    speed = float((th[sel][-1] - th[sel][0]) / (res.t[sel][-1] - res.t[sel][0]))
    E = res.energy()
    drift = float(np.abs(E["total"] - E["total"][0]).max())
    scale = float(np.abs(E["work_drivers"]).max())
    r.check("tooth_frequency_line", line, fz, f"abs {df * 1.01:.3g}")
    r.check("harmonic_power_fraction", frac, None, "min 0.8")
    r.check("strongest_line_is_harmonic", float(abs(fr[top] - round(fr[top] / fz) * fz) <= 1.5 * df), None, "true")
    r.check("speed_ratio", abs(speed) / w, 1.0, "rel 1e-3")
    r.check("energy_balance_rel", drift / scale, None, f"max {ENERGY_TOL:g}")
    r.metrics.update({"tooth_frequency": fz, "strongest_line": float(fr[top]),
                      "mean_tight_tension": float(span[sel].mean()),
                      "tension_range": float(np.ptp(span[sel])), "driver_work": scale, "wall_s": wall,
                      "steps": len(res.t) - 1})
    r.notes = (f"z f = {fz:g} Hz; strongest line {fr[top]:.1f} Hz (harmonic {fr[top] / fz:.2f}), {frac:.3f} of the "
               f"power at harmonics; tight-span tension {span[sel].mean():.0f} N +- {0.5 * np.ptp(span[sel]):.0f} N; "
               f"energy balance {drift:.3g} J of {scale:.3g} J driver work")
    return r


CASES = [static_tension, static_start, polygonal_action]
