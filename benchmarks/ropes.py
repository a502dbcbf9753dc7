"""Ropes with mass over pulleys, flexmb and Exudyn side by side in one run (issue 27, item 4).

Two problems, each a rope of 100 segments (flexmb: rigid segments on spherical joints, ``rope_chain``, with
``RopePulleyContact``; Exudyn: 100 ``ObjectANCFCable2D`` elements with ``ObjectContactFrictionCircleCable2D``, one
per element and pulley), with end masses m1 (left) and m2 (right) on the rope's ends; m1 > m2 drops and lifts m2:

* ``two-pulleys``: the rope hangs over two pulleys side by side (centres (-1, 0) and (1, 0) m, radius 0.5 m, each
  J = 0.1 kg m^2 on an axle): up from m1 on the left, a quarter turn over the left pulley, a free 2 m span (it sags
  under its own weight), a quarter turn over the right pulley, down to m2. Rope 10 m, 1.0 kg/m (a ~16 mm steel wire
  rope), m1 = 6 kg, m2 = 5 kg, friction mu = 0.5 (no slip: the pulleys turn with the rope). T = 0.5 s (Exudyn's
  adaptive step control halves the step on average here, 17 Newton iterations per step; see benchmarks/README.md).
* ``sheave``: the rope over one turning sheave (J = 1.6 kg m^2 on an axle) lifting a load: Crous 2000, App. D.2
  (verification/ropes/models.py, the ``ropes`` suite's model): rope 9.747 m, 7.695 kg/m, sheave radius 2 m,
  m1 = 6 kg, m2 = 5 kg, friction mu = 0.5 (the rope does not slip: the sheave turns with it).

Reference (both problems), the energy solution of an inextensible rope that runs over the pulleys without changing
its shape in between (Crous 2000, eqs. (D.7)-(D.10); docs/theory-ropes.md §3): the drop of m1 is
``x = (beta/2)(cosh(t/alpha) - 1)``, alpha = sqrt(a/b), beta = c/b, a = (m1 + m2 + rho l + J/r^2)/2, b = rho g,
c = (m1 - m2) g (J/r^2 summed over the pulleys), and the rope tension at the load's hook is
``T2 = m2 (g + x_dd)``. For two pulleys the same holds as long as the free span keeps its shape: its static sag
under the tension (~0.06 m) and its sway are not in the closed form (their share is in both codes' errors).

Accuracy measure: the drop x(T) of m1 at the end time T against the closed form and between the codes, and the
tension at m2's hook at T against T2 (flexmb: the reaction of the hook joint; Exudyn: the force of its
``RevoluteJoint2D``); both contain the contact springs' ringing, so T2 is compared as the mean over the last 0.1 s.

Same physical data in both codes: rope mass per length and length, end masses, sheave inertia and radius, gravity,
contact stiffness and damping per length of rope (flexmb: K per segment of L; Exudyn: K/3 per contact segment of
L/3, 3 segments per element, Exudyn's default), friction coefficient. Differences that the codes' rope models make
unavoidable, each stated: flexmb's chain is inextensible and has no bending stiffness; Exudyn's cable gets an axial
stiffness EA of a steel wire rope (stretch under the load ~1e-6) and a small bending stiffness EI (bending length
sqrt(EI/T) below a segment); flexmb's friction is a Coulomb ramp mu F_n min(|v|/v0, 1) (v0 = 0.01 m/s), Exudyn's a
velocity penalty min(mu |F_n|, d_v |v|) with d_v = mu F_n,est / v0 per contact segment (F_n,est = T L/(3 r) of the
static tension): the same slope at the expected normal force. Exudyn is 2-D (4 coordinates per node: 404 + 3 per
pulley), flexmb 3-D (7 per segment: 700, plus the joints).

Numerics: each code's defaults with the same nominal step h = 2e-3 s and end time T: flexmb
``fm.simulate(system, T, h)`` (generalized-alpha rho_inf = 0.9, its default contact step control, which may shorten
or repeat a step: steps are counted as taken); Exudyn ``MainSolverImplicitSecondOrder`` with its defaults
(generalized-alpha rho_inf = 0.9, set explicitly; modified Newton; discontinuous iterations for the contact states;
adaptive step control, which Exudyn needs: at a fixed h = 2e-3 s its Newton fails in the first or second step of
both problems), except: sparse linear solver (EigenSparse; the dense default is slower at 400 coordinates), one
thread, no solution file. Steps taken differ, so both ratios are given: per step and per simulated second.

Timing: time per step of the stepping loop only: flexmb ``res.stats["loop_s"] / res.stats["steps"]``; Exudyn
``SolveSteps`` / number of steps. Each run is repeated ``--repeat`` times, interleaved, the fastest kept.

Run:  python benchmarks/ropes.py                  # both problems, 2 repeats, writes benchmarks/results/ropes.json
      python benchmarks/ropes.py --cases sheave --repeat 1 --out /tmp/ropes.json
"""
from __future__ import annotations

import argparse
import json
import math
import os
import platform
import sys
import time
from dataclasses import dataclass
from pathlib import Path

if __name__ == "__main__":
    for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_var, "1")

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

G = 9.81                      # m/s^2
N_SEGMENTS = 100
H = 2.0e-3                    # s
EXUDYN_CONTACT_SEGMENTS = 3   # per cable element (Exudyn's default)
RHO_INF = 0.9


@dataclass(frozen=True)
class Pulley:
    """A pulley: centre (m, in the x-y plane), effective radius r (m, where the rope's centre line rides),
    inertia J about its axle (kg m^2; 0: fixed to the ground) and mass (kg, of a turning one)."""
    center: tuple
    radius: float
    inertia: float = 0.0
    mass: float = 10.0


@dataclass(frozen=True)
class RopeCase:
    """One benchmark problem: rope data, end masses, pulleys, contact law, end time."""
    name: str
    length: float             # m
    rho: float                # kg/m
    ea: float                 # N, Exudyn's axial stiffness (flexmb's chain is inextensible)
    ei: float                 # N m^2, Exudyn's bending stiffness (flexmb's chain has none)
    m1: float                 # kg, left end mass (drops)
    m2: float                 # kg, right end mass (the load, lifted)
    pulleys: tuple
    stiffness: float          # N/m per flexmb segment (per L of rope)
    damping: float            # N s/m per flexmb segment
    mu: float                 # friction coefficient (0: smooth)
    slip_speed: float         # m/s, v0 of the Coulomb ramp
    t_end: float              # s
    source: str


def _crous_sheave() -> RopeCase:
    from verification.ropes import models as cm
    return RopeCase("sheave", cm.LENGTH, cm.RHO, 1.0e8, 0.1, cm.M1, cm.M2,
                    (Pulley((0.0, 0.0), cm.RADIUS, cm.J_P, 10.0),), cm.STIFFNESS, cm.DAMPING, 0.5, cm.SLIP_SPEED,
                    2.5, "Crous 2000, App. D.2 (verification/ropes/models.py); EA, EI our choices (Exudyn only)")


# the two-pulley rope: K gives a segment of 0.1 kg on its contact spring the same frequency as in the sheave case
# (sqrt(K/m) = 316 rad/s), c a damping ratio of 0.5
TWO_PULLEYS = RopeCase("two-pulleys", 10.0, 1.0, 1.3e7, 0.05, 6.0, 5.0,
                       (Pulley((-1.0, 0.0), 0.5, 0.1, 2.0), Pulley((1.0, 0.0), 0.5, 0.1, 2.0)), 1.0e4, 30.0, 0.5, 0.01, 0.5,
                       "our data (module doc)")


def cases() -> dict:
    """The benchmark problems by name."""
    return {"two-pulleys": TWO_PULLEYS, "sheave": _crous_sheave()}


# ---------------------------------------------------------------------------
# reference
# ---------------------------------------------------------------------------
def closed_form(case: RopeCase, t) -> tuple[np.ndarray, np.ndarray]:
    """Drop of m1 (m) and the tension at m2's hook (N) at times ``t`` (s) (module doc; Crous 2000, eqs.
    (D.7)-(D.10))."""
    j_over_r2 = sum(p.inertia / p.radius ** 2 for p in case.pulleys)
    a = 0.5 * (case.m1 + case.m2 + case.rho * case.length + j_over_r2)
    b, c = case.rho * G, (case.m1 - case.m2) * G
    alpha, beta = math.sqrt(a / b), c / b
    t = np.asarray(t, dtype=float)
    x = 0.5 * beta * (np.cosh(t / alpha) - 1.0)
    xdd = 0.5 * beta / alpha ** 2 * np.cosh(t / alpha)
    return x, case.m2 * (G + xdd)


# ---------------------------------------------------------------------------
# geometry: joint points shared by both codes
# ---------------------------------------------------------------------------
def _centre_path(case: RopeCase, n: int) -> np.ndarray:
    """A dense polyline (m, (k, 2)) of the rope's initial path with the pulleys' arcs at R' = sqrt(r^2 + L^2/4)
    (L = l/n: chords of L between points on R' have their centres on r, touching, unloaded): from far below the left
    side of the first pulley up, over the tops (clockwise), down the right side of the last one far below."""
    L = case.length / n
    pts = []
    ps = case.pulleys
    depth = case.length                                  # long enough on both sides
    for k, p in enumerate(ps):
        Rp = math.hypot(p.radius, 0.5 * L)
        cx, cy = p.center
        a0 = math.pi if k == 0 else 0.5 * math.pi
        a1 = 0.0 if k == len(ps) - 1 else 0.5 * math.pi
        if k == 0:
            pts.append((cx - Rp, cy - depth))
        ang = np.linspace(a0, a1, 20001)
        pts.extend(zip(cx + Rp * np.cos(ang), cy + Rp * np.sin(ang)))
        if k == len(ps) - 1:
            pts.append((cx + Rp, cy - depth))
    return np.array(pts)            # straight pieces are single polyline segments: exact for the marching below


def joint_points(case: RopeCase, n: int = N_SEGMENTS) -> np.ndarray:
    """The n + 1 joint points (m, (n+1, 3)) of a rope of n chords of L = l/n along the initial path, placed so that
    the two hanging ends are equally long: the first point on the left vertical, each next one at chord distance L
    from the previous one."""
    L = case.length / n
    path = _centre_path(case, n)
    seg = np.linalg.norm(np.diff(path, axis=0), axis=1)
    s = np.concatenate([[0.0], np.cumsum(seg)])
    # arc length of the path between the two vertical tangents, and where the left tangent point is
    top_left = 1                                              # path[1] is the left tangent point
    bottom_right = len(path) - 2
    middle = s[bottom_right] - s[top_left]
    hang = 0.5 * (case.length - middle)
    if hang <= L:
        raise ValueError(f"{case.name}: the rope is too short to hang on both sides")
    start = s[top_left] - hang
    p = np.interp(start, s, path[:, 0]), np.interp(start, s, path[:, 1])
    out = [np.array(p)]
    j = int(np.searchsorted(s, start, side="right"))
    for _ in range(n):
        prev = out[-1]
        while np.linalg.norm(path[j] - prev) < L:
            j += 1
        a, b = path[j - 1], path[j]                           # |a - prev| < L <= |b - prev|: solve on [a, b]
        d = b - a
        f = a - prev
        qa, qb, qc = d @ d, 2.0 * f @ d, f @ f - L * L
        u = (-qb + math.sqrt(qb * qb - 4.0 * qa * qc)) / (2.0 * qa)
        out.append(a + u * d)
    P = np.array(out)
    return np.column_stack([P, np.zeros(len(P))])


# ---------------------------------------------------------------------------
# flexmb
# ---------------------------------------------------------------------------
def build_flexmb(case: RopeCase, pts: np.ndarray):
    """flexmb system: pulleys (fixed by a ``Fixed`` joint when J = 0, else on a ``Revolute`` axle), the rope
    (``rope_chain``, spherical joints), m1 and m2 on spherical hooks, one ``RopePulleyContact`` per pulley.
    Returns (system, m1, hook of m2)."""
    import flexmb as fm
    from flexmb.contact import CoulombRamp, RopePulleyContact, rope_chain
    s = fm.System(gravity=(0.0, -G, 0.0), name=f"ropes benchmark: {case.name}")
    rope = rope_chain(s, pts, case.rho, diameter=0.02, name="rope")
    end_inertia = (1e-3,) * 3                 # point masses on spherical joints: their inertia plays no role
    m1 = s.add(fm.RigidBody(case.m1, end_inertia, position=pts[0], name="m1"))
    m2 = s.add(fm.RigidBody(case.m2, end_inertia, position=pts[-1], name="m2"))
    s.add(fm.Spherical(rope.segments[0], m1, pts[0], name="m1 hook"))
    hook = s.add(fm.Spherical(rope.segments[-1], m2, pts[-1], name="m2 hook"))
    for k, p in enumerate(case.pulleys):
        c = (p.center[0], p.center[1], 0.0)
        J = p.inertia if p.inertia > 0.0 else 1.0
        body = s.add(fm.RigidBody(p.mass, (0.5 * J + 0.1, 0.5 * J + 0.1, J), position=c, name=f"pulley {k}"))
        if p.inertia > 0.0:
            s.add(fm.Revolute(s.ground, body, c, (0.0, 0.0, 1.0), name=f"axle {k}"))
        else:
            s.add(fm.Fixed(s.ground, body, c, name=f"mount {k}"))
        s.add(RopePulleyContact(body, rope, p.radius, case.stiffness, case.damping,
                                friction=CoulombRamp(case.mu, case.slip_speed) if case.mu > 0 else None,
                                name=f"contact {k}"))
    return s, m1, hook


def run_flexmb(case: RopeCase, pts: np.ndarray) -> dict:
    import flexmb as fm
    t0 = time.perf_counter()
    s, m1, hook = build_flexmb(case, pts)
    build = time.perf_counter() - t0
    t0 = time.perf_counter()
    res = fm.simulate(s, case.t_end, H, progress=False)
    total = time.perf_counter() - t0
    y = res.q[:, m1.offset + 1]
    F, _ = res.reaction(hook)
    tension = np.linalg.norm(F, axis=1)
    st = res.stats
    steps = int(st["steps"])
    return {"t": res.t, "x": y[0] - y, "tension": tension, "build_s": build, "simulate_s": total,
            "loop_s": float(st["loop_s"]), "steps": steps, "rejected": int(st["rejected"]),
            "per_step_s": float(st["loop_s"]) / steps, "per_simulated_s": float(st["loop_s"]) / case.t_end,
            "mean_h": case.t_end / steps, "newton_per_step": st["newton_iterations"] / steps,
            "factorizations": int(st["factorizations"]), "compiled_steps": int(st["compiled_steps"]),
            "blocks": int(st["blocks"]), "n_coordinates": int(s.compile().nq)}


# ---------------------------------------------------------------------------
# Exudyn
# ---------------------------------------------------------------------------
def _slopes(P: np.ndarray) -> np.ndarray:
    """Unit tangents at the points (central differences; one-sided at the ends)."""
    d = np.empty_like(P)
    d[1:-1] = P[2:] - P[:-2]
    d[0], d[-1] = P[1] - P[0], P[-1] - P[-2]
    return d / np.linalg.norm(d, axis=1)[:, None]


def _hermite_length(p0, t0, p1, t1) -> float:
    """Reference length of an ANCF cable element through p0, p1 with unit slopes t0, t1: the fixed point of
    ``L = arc length of the cubic Hermite curve with end tangents L t0, L t1`` (zero initial axial strain)."""
    xg, wg = np.polynomial.legendre.leggauss(8)
    xi = 0.5 * (xg + 1.0)
    L = float(np.linalg.norm(p1 - p0))
    for _ in range(6):
        dh = np.stack([6 * xi ** 2 - 6 * xi, 3 * xi ** 2 - 4 * xi + 1, -6 * xi ** 2 + 6 * xi, 3 * xi ** 2 - 2 * xi])
        dr = dh[0][:, None] * p0 + dh[1][:, None] * L * t0 + dh[2][:, None] * p1 + dh[3][:, None] * L * t1
        L = float(0.5 * np.sum(wg * np.linalg.norm(dr, axis=1)))
    return L


def exudyn_settings(case: RopeCase):
    import exudyn as exu
    ss = exu.SimulationSettings()
    ti = ss.timeIntegration
    ti.numberOfSteps = int(round(case.t_end / H))
    ti.endTime = case.t_end
    ti.verboseMode = 0
    ti.adaptiveStep = True                     # Exudyn's default; at a fixed h = 2e-3 s Newton fails in step 1 or 2
    ti.generalizedAlpha.spectralRadius = RHO_INF
    ss.solution.file.write = False
    ss.solution.sensors.writePeriod = H
    ss.parallel.numberOfThreads = 1
    ss.linearSolver.solverType = exu.LinearSolverType.EigenSparse
    return ss


def build_exudyn(case: RopeCase, pts: np.ndarray):
    """Exudyn system: ``NodePoint2DSlope1`` + ``ObjectANCFCable2D`` per element at the same joint points, gravity by
    ``LoadMassProportional``, m1/m2 as ``MassPoint2D`` on ``RevoluteJoint2D`` hooks, fixed pulleys as ground
    markers, a turning one as ``ObjectRigidBody2D`` held at its centre by two ``CoordinateConstraint``s, and one
    ``ObjectContactFrictionCircleCable2D`` per element and pulley. Returns (mbs, sensor of m1's position, sensor of
    m2's hook force)."""
    import exudyn as exu
    from exudyn import itemInterface as ei
    sc = exu.SystemContainer()
    mbs = sc.AddSystem()
    P = pts[:, :2]
    T = _slopes(P)
    n = len(P) - 1
    nodes = [mbs.AddNode(ei.NodePoint2DSlope1(referenceCoordinates=[*P[i], *T[i]])) for i in range(n + 1)]
    ground = mbs.AddObject(ei.ObjectGround())
    elements = []
    for i in range(n):
        Le = _hermite_length(P[i], T[i], P[i + 1], T[i + 1])
        e = mbs.AddObject(ei.ObjectANCFCable2D(nodeNumbers=[nodes[i], nodes[i + 1]], length=Le,
                                               massPerLength=case.rho, bendingStiffness=case.ei,
                                               axialStiffness=case.ea))
        elements.append(e)
        mbs.AddLoad(ei.LoadMassProportional(markerNumber=mbs.AddMarker(ei.MarkerBodyMass(bodyNumber=e)),
                                            loadVector=[0.0, -G, 0.0]))
    hooks = []
    for node, mass in ((nodes[0], case.m1), (nodes[-1], case.m2)):
        k = nodes.index(node)
        nm = mbs.AddNode(ei.NodePoint2D(referenceCoordinates=list(P[k])))
        om = mbs.AddObject(ei.ObjectMassPoint2D(mass=mass, nodeNumber=nm))
        mbs.AddLoad(ei.LoadMassProportional(markerNumber=mbs.AddMarker(ei.MarkerBodyMass(bodyNumber=om)),
                                            loadVector=[0.0, -G, 0.0]))
        j = mbs.AddObject(ei.ObjectJointRevolute2D(markerNumbers=[mbs.AddMarker(ei.MarkerNodePosition(nodeNumber=node)),
                                                                  mbs.AddMarker(ei.MarkerNodePosition(nodeNumber=nm))]))
        hooks.append((nm, j))
    L = case.length / n
    n_cs = EXUDYN_CONTACT_SEGMENTS
    T_static = 0.5 * (case.m1 + case.m2) * G
    n_ground = None
    for p in case.pulleys:
        c = [p.center[0], p.center[1], 0.0]
        if p.inertia > 0.0:
            pn = mbs.AddNode(ei.NodeRigidBody2D(referenceCoordinates=[c[0], c[1], 0.0]))
            pb = mbs.AddObject(ei.ObjectRigidBody2D(mass=p.mass, inertia=p.inertia, nodeNumber=pn))
            if n_ground is None:
                n_ground = mbs.AddNode(ei.NodePointGround())
            mg = mbs.AddMarker(ei.MarkerNodeCoordinate(nodeNumber=n_ground, coordinate=0))
            for coord in (0, 1):
                mbs.AddObject(ei.CoordinateConstraint(markerNumbers=[
                    mg, mbs.AddMarker(ei.MarkerNodeCoordinate(nodeNumber=pn, coordinate=coord))]))
            m_circle = mbs.AddMarker(ei.MarkerBodyRigid(bodyNumber=pb, localPosition=[0.0, 0.0, 0.0]))
        else:
            m_circle = mbs.AddMarker(ei.MarkerBodyRigid(bodyNumber=ground, localPosition=c))
        # the cable's nodes lie on R' = sqrt(r^2 + L^2/4) (flexmb's joint points): its contact segments, chords of
        # L/3, touch a circle of R' cos(phi/6) (phi = L/R'), so the rope starts touching, unloaded, as flexmb's
        r_touch = math.hypot(p.radius, 0.5 * L) * math.cos(L / math.hypot(p.radius, 0.5 * L) / (2.0 * n_cs))
        fn_est = T_static * (L / n_cs) / p.radius
        for e in elements:
            m_cable = mbs.AddMarker(ei.MarkerBodyCable2DShape(bodyNumber=e, numberOfSegments=n_cs))
            data = mbs.AddNode(ei.NodeGenericData(initialCoordinates=[0.1] * n_cs + [-2] * n_cs + [0] * n_cs,
                                                  numberOfDataCoordinates=3 * n_cs))
            mbs.AddObject(ei.ObjectContactFrictionCircleCable2D(
                markerNumbers=[m_circle, m_cable], nodeNumber=data, numberOfContactSegments=n_cs,
                contactStiffness=case.stiffness / n_cs, contactDamping=case.damping / n_cs,
                frictionCoefficient=case.mu, frictionVelocityPenalty=case.mu * fn_est / case.slip_speed,
                circleRadius=r_touch))
    s_m1 = mbs.AddSensor(ei.SensorNode(nodeNumber=hooks[0][0], storeInternal=True,
                                       outputVariableType=exu.OutputVariableType.Position))
    s_hook = mbs.AddSensor(ei.SensorObject(objectNumber=hooks[1][1], storeInternal=True,
                                           outputVariableType=exu.OutputVariableType.Force))
    mbs.Assemble()
    return sc, mbs, s_m1, s_hook


def run_exudyn(case: RopeCase, pts: np.ndarray) -> dict:
    from benchmarks.spin_up_exudyn import solve      # one timed Exudyn solve for both scripts
    t0 = time.perf_counter()
    sc, mbs, s_m1, s_hook = build_exudyn(case, pts)
    build = time.perf_counter() - t0
    run = solve(mbs, exudyn_settings(case))
    steps = run["steps_taken"]              # the adaptive control shortens h
    pos = np.asarray(mbs.GetSensorStoredData(s_m1))
    frc = np.asarray(mbs.GetSensorStoredData(s_hook))
    y = pos[:, 2]
    loop = run["wall_s"]
    return {"t": pos[:, 0], "x": y[0] - y, "tension": np.linalg.norm(frc[:, 1:3], axis=1), "build_s": build,
            "init_s": run["init_s"], "loop_s": loop, "steps": steps, "per_step_s": loop / steps,
            "per_simulated_s": loop / max(run["t_stop"], 1e-12), "mean_h": run["t_stop"] / steps,
            "rejected": run["rejected"], "completed": run["completed"], "t_stop": run["t_stop"],
            "error": run["error"], "newton_per_step": run["newton_per_step"] * run["steps"] / steps,
            "jacobians_per_step": run["jacobians_per_step"] * run["steps"] / steps,
            "n_coordinates": run["n_ode2"], "n_constraints": run["n_ae"]}


# ---------------------------------------------------------------------------
# comparison
# ---------------------------------------------------------------------------
def accuracy(case: RopeCase, run: dict) -> dict:
    """x(T) and the hook tension (mean over the last 0.1 s) against the closed form."""
    t, x = run["t"], run["x"]
    x_ref, _ = closed_form(case, case.t_end)
    last = t >= case.t_end - 0.1 - 1e-12
    _, T2_ref = closed_form(case, t[last])
    tension = float(np.mean(run["tension"][last]))
    return {"x_end": float(x[-1]), "x_end_ref": float(x_ref), "x_err_rel": float(x[-1] / x_ref - 1.0),
            "tension_end": tension, "tension_end_ref": float(np.mean(T2_ref)),
            "tension_err_rel": float(tension / np.mean(T2_ref) - 1.0),
            "tension_ripple_rel": float(np.std(run["tension"][last]) / np.mean(T2_ref))}


def measure(case: RopeCase, repeat: int, with_exudyn: bool) -> dict:
    pts = joint_points(case)
    runs = {"flexmb": [], "exudyn": []}
    for _ in range(repeat):
        runs["flexmb"].append(run_flexmb(case, pts))
        if with_exudyn:
            runs["exudyn"].append(run_exudyn(case, pts))
    out = {"case": case.name, "source": case.source, "segments": N_SEGMENTS, "h": H, "t_end": case.t_end,
           "data": {k: v for k, v in case.__dict__.items() if k not in ("name", "source", "pulleys")},
           "pulleys": [p.__dict__ for p in case.pulleys]}
    for code, rs in runs.items():
        if not rs:
            continue
        best = min(rs, key=lambda r: r["per_step_s"])
        out[code] = {k: v for k, v in best.items() if k not in ("t", "x", "tension")}
        out[code]["per_step_all_s"] = [r["per_step_s"] for r in rs]
        out[code]["accuracy"] = accuracy(case, best)
        out[code]["_t"], out[code]["_x"] = best["t"], best["x"]
    if with_exudyn:
        f, e = out["flexmb"], out["exudyn"]
        out["ratio_flexmb_over_exudyn"] = f["per_step_s"] / e["per_step_s"]
        out["ratio_per_simulated_second"] = f["per_simulated_s"] / e["per_simulated_s"]
        tt = np.linspace(0.0, min(f["_t"][-1], e["_t"][-1]), 201)
        out["x_max_diff_between_codes"] = float(np.max(np.abs(np.interp(tt, f["_t"], f["_x"]) -
                                                              np.interp(tt, e["_t"], e["_x"]))))
    for code in runs:
        if code in out:
            out[code].pop("_t"), out[code].pop("_x")
    return out


def _row(r: dict) -> str:
    f, e = r["flexmb"], r.get("exudyn")
    cells = [r["case"], f"{f['steps']}", f"{e['steps']}" if e else "-",
             f"{1e3 * f['per_step_s']:.2f}", f"{1e3 * e['per_step_s']:.2f}" if e else "-",
             f"{r['ratio_flexmb_over_exudyn']:.2f}" if e else "-",
             f"{f['per_simulated_s']:.2f}", f"{e['per_simulated_s']:.2f}" if e else "-",
             f"{r['ratio_per_simulated_second']:.3f}" if e else "-",
             f"{f['accuracy']['x_err_rel']:+.2e}", f"{e['accuracy']['x_err_rel']:+.2e}" if e else "-",
             f"{f['accuracy']['tension_err_rel']:+.2e}", f"{e['accuracy']['tension_err_rel']:+.2e}" if e else "-",
             f"{1e3 * r['x_max_diff_between_codes']:.2f}" if e else "-"]
    return "| " + " | ".join(cells) + " |"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cases", nargs="+", default=["two-pulleys", "sheave"], choices=["two-pulleys", "sheave"])
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--no-exudyn", action="store_true")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "ropes.json"))
    args = ap.parse_args(argv)
    import exudyn
    import flexmb
    all_cases = cases()
    results = []
    for name in args.cases:
        r = measure(all_cases[name], args.repeat, not args.no_exudyn)
        results.append(r)
        print(json.dumps({k: v for k, v in r.items() if k not in ("data", "pulleys")}, indent=1, default=float))
    print("| case | steps flexmb | steps Exudyn | flexmb ms/step | Exudyn ms/step | ratio per step | flexmb s per "
          "simulated s | Exudyn s per simulated s | ratio per simulated s | x(T) err flexmb | x(T) err Exudyn "
          "| T2 err flexmb | T2 err Exudyn | max abs(x_f - x_e) (mm) |")
    print("|---|" + "---|" * 13)
    for r in results:
        print(_row(r))
    meta = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "python": platform.python_version(),
            "numpy": np.__version__, "exudyn": exudyn.__version__, "flexmb": getattr(flexmb, "__version__", "?"),
            "cpus": os.cpu_count(), "load_avg": os.getloadavg(), "command": "python benchmarks/ropes.py "
            + " ".join(argv if argv is not None else sys.argv[1:])}
    Path(args.out).write_text(json.dumps({"meta": meta, "results": results}, indent=1, default=float) + "\n")
    print(f"written {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
