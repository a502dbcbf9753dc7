"""Example crash study (issue 6, item 7): an occupant-like head-torso linkage on a seat that is
decelerated by a triangular floor pulse and strikes a rigid bulkhead with its head.

Model (planar, x forward, y up, gravity -y): a sled on a prismatic track along x, driven by
``fm.triangular_pulse`` (16 g peak, velocity change ``v``, sled at rest at the end); a torso link
(40 kg, 0.55 m hip-to-neck) on a revolute hip joint at the seat with a rotational spring-damper
(lap belt and hip, 2e3 N m/rad, 50 N m s/rad); a head-neck link (5 kg, neck 0.15 m, head centre
0.25 m above the neck pivot) on a revolute neck joint with a rotational spring-damper
(neck: 150 N m/rad, 2 N m s/rad); the head a 0.09 m sphere striking a rigid bulkhead plane fixed to
the sled, ``setback`` metres ahead of the head at rest (Lankarani-Nikravesh, K = 1e6 N/m^1.5,
e = 0.5: a padded surface). The numbers are illustrative, of the size used in seat studies
(Lankarani, Olivares & Nagarajan 2002), not a dummy calibration.
The FAR 25.562 case calibrated against that paper's Table I is the suite ``aircraft-seat``
(verification/aircraft_seat, ``flexmb verify aircraft-seat``).

Sweep: velocity change v in {9, 10.7, 13.4} m/s (the 13.4 m/s = 44 ft/s of FAR 25.562(b)(2)) x
setback in {0.15, 0.3, 0.45} m, nine cases. Metrics: HIC15 and HIC36 of the head (flexmb.studies),
peak head acceleration (g), peak bulkhead contact force (N), the time of the HIC window. ``run_study`` writes the table
(CSV/npz), a HIC plot and prints seconds per case:

    .venv/bin/python -m verification.occupant [OUT_DIR]
"""
from __future__ import annotations

import numpy as np

import flexmb as fm
from flexmb.contact import LankaraniNikravesh
from flexmb.studies import Grid, Study
from flexmb.studies import metrics as mt

PEAK_G = 16.0
G0 = 9.80665
HIP, NECK = np.array([0.0, 0.0, 0.0]), np.array([0.0, 0.55, 0.0])
HEAD = NECK + np.array([0.0, 0.25, 0.0])
HEAD_RADIUS = 0.09
SPEEDS, SETBACKS = (9.0, 10.7, 13.4), (0.15, 0.3, 0.45)
PARAMETERS = Grid({"v": list(SPEEDS), "setback": list(SETBACKS)})


def build(params: dict):
    """The sled, torso and head for one case (a module-level function: picklable for process executors)."""
    v, setback = float(params["v"]), float(params["setback"])
    duration = 2.0 * v / (PEAK_G * G0)
    s = fm.System(gravity=(0.0, -9.81, 0.0), name="occupant")
    z = (0.0, 0.0, 1.0)
    sled = s.add(fm.RigidBody(100.0, (10.0, 10.0, 10.0), position=(0.0, -0.3, 0.0), velocity=(v, 0.0, 0.0),
                              name="sled"))
    track = s.add(fm.Prismatic(s.ground, sled, (0.0, -0.3, 0.0), (1.0, 0.0, 0.0), name="track"))
    s.add(fm.Driver(track, displacement=fm.triangular_pulse(PEAK_G, duration, v0=v), name="pulse"))
    torso = s.add(fm.RigidBody(40.0, (1.0, 1.0, 1.0), position=0.5 * (HIP + NECK), velocity=(v, 0.0, 0.0),
                               name="torso"))
    head = s.add(fm.RigidBody(5.0, (0.03, 0.03, 0.03), position=HEAD, velocity=(v, 0.0, 0.0), name="head"))
    s.add(fm.Revolute(sled, torso, HIP, z, name="hip"))
    s.add(fm.Revolute(torso, head, NECK, z, name="neck"))
    s.add(fm.RotationalSpringDamper(sled, torso, z, k=2e3, c=50.0, name="belt"))
    s.add(fm.RotationalSpringDamper(torso, head, z, k=150.0, c=2.0, name="neck spring"))
    wall = HEAD + np.array([HEAD_RADIUS + setback, 0.0, 0.0])
    s.add(fm.SpherePlaneContact(sled, head, point=wall, normal=(-1.0, 0.0, 0.0), center=HEAD, radius=HEAD_RADIUS,
                                law=LankaraniNikravesh(1e6, 0.5), name="bulkhead"))
    return s, dict(t_end=duration + 0.05, h=2e-4, h_contact=2e-5)


METRICS = {("hic15", "hic15_t1", "hic15_t2"): mt.HIC("head", window=0.015),
           ("hic36", "hic36_t1", "hic36_t2"): mt.HIC("head", window=0.036),
           "peak_head_g": mt.PeakAccelerationG("head"),
           "peak_bulkhead_force": mt.PeakContactForce("bulkhead")}


def study() -> Study:
    return Study(build, PARAMETERS, METRICS, name="occupant")


def run_study(out_dir="occupant-study", executor: str = "serial"):
    """Run the sweep; write the table and a HIC plot; return the StudyResult."""
    import pathlib
    res = study().run(out_dir, executor=executor, progress=True)
    from matplotlib import use
    use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6.0, 3.8))
    for sb in SETBACKS:
        sel = np.isclose(res["setback"], sb)
        ax.plot(res["v"][sel], res["hic15"][sel], "o-", label=f"setback {sb:g} m")
    ax.axhline(700.0, color="k", ls=":", label="HIC15 700 (FMVSS 208)")
    ax.set_xlabel("velocity change (m/s)")
    ax.set_ylabel("HIC15")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(pathlib.Path(out_dir) / "hic15.png", dpi=110)
    return res
