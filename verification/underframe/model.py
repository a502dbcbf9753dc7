"""The end-underframe of a railway vehicle as a planar frame of rigid beam segments joined by plastic hinges
(Pereira & Dias 2002, "Optimization of rigid-flexible multibody systems with application to vehicle dynamics
and crashworthiness", Example 4.3; the hinge law of Ambrosio 2002, §2.1; docs/theory-underframe.md).

The paper prints the counts (13 rigid + 10 flexible bodies, 26 plastic hinges), the load cases (rigid wall at
30 km/h for the index, 5 km/h for the service constraints), the index, the three I-beam widths and their optima;
it prints no geometry, section, material or mass. Everything below that is not in that list is a stated choice
(:class:`Data`, defaults in ``DATA``; docs/verification.md, suite ``underframe``).

Model (plan view, x forward towards the wall, y lateral, all hinges about z):

* the car body behind the end-underframe: one rigid body (mass ``car_mass``) kept in the x-y plane by a
  ``Planar`` joint; the underframe's rear nodes (x = -``length``) are on it;
* the headstock (buffer beam, width b1) at x = 0 from y = -w_sole to w_sole: five segments, hinges at the
  buffer and centre-sill nodes (4 hinges); the buffers are rigid arms of the two outer segments whose heads
  strike the wall through a linear spring-damper contact (the buffer spring);
* two centre sills (b3) at y = +-w_sill, two sole bars (b3) at y = +-w_sole and two diagonals (b2) from the
  buffer nodes to the car body at (-length, +-w_sill): each two segments, hinges at the front, middle and
  rear nodes (18 hinges); their middle nodes are offset sideways by ``kink`` (sills inwards, sole bars and
  diagonals outwards): the imperfection that decides how the members fold, known beforehand as the
  plastic-hinge method requires (Ambrosio 2002, §2.1);
* two cross-bearers (b2) from the sole-bar middle nodes to the diagonal middle nodes (4 hinges).

20 bodies (19 beam segments and the car body), 26 plastic hinges. The paper's flexible bodies are rigid
segments here: the elastic bending of each member is the elastic branch of its hinges, ``k = 3 E I / L`` with
``L`` the mean length of the two segments the hinge joins (a cantilever of length L under a tip load has the
tip deflection of a rigid bar on that spring).

Hinge law: elastic-perfectly plastic (Ambrosio 2002, Fig. 4 without hardening), yield moment the full plastic
moment of the I section about its flange-dominated axis, ``M_p = sigma_y Z_p``,
``Z_p = b t_f (h - t_f) + t_w (h - 2 t_f)^2 / 4``; ``I = (b h^3 - (b - t_w)(h - 2 t_f)^3) / 12``.
"""
from __future__ import annotations

import warnings
from typing import NamedTuple

import numpy as np

import flexmb as fm
from flexmb.contact import LinearSpringDamper
from flexmb.errors import ModelError, RedundantConstraintWarning
from flexmb.joints.kernels import extend

KMH = 1.0 / 3.6          # m/s per km/h
Z = (0.0, 0.0, 1.0)      # every hinge axis


class Section(NamedTuple):
    """An I section (m): height ``h``, flange thickness ``tf``, web thickness ``tw``; the flange width ``b``
    is the design variable."""

    h: float
    tf: float
    tw: float

    def plastic_modulus(self, b: float) -> float:
        """Z_p (m^3) about the flange-dominated axis: two flanges at lever h - t_f plus the web."""
        return b * self.tf * (self.h - self.tf) + self.tw * (self.h - 2 * self.tf) ** 2 / 4.0

    def second_moment(self, b: float) -> float:
        """I (m^4) about the same axis."""
        return (b * self.h ** 3 - (b - self.tw) * (self.h - 2 * self.tf) ** 3) / 12.0

    def area(self, b: float) -> float:
        """Cross-section area (m^2)."""
        return 2 * b * self.tf + (self.h - 2 * self.tf) * self.tw


class Data(NamedTuple):
    """Every datum the paper leaves unspecified (SI units)."""

    length: float = 2.4          # end-underframe length, headstock to the car body's bolster (m)
    w_sole: float = 1.4          # half distance of the sole bars (m)
    w_buffer: float = 0.875      # half distance of the buffers (m; UIC 1.75 m)
    w_sill: float = 0.4          # half distance of the centre sills (m)
    kink: float = 0.35           # sideways offset of the members' middle nodes (m)
    buffer_length: float = 0.62  # buffer head ahead of the headstock (m; UIC)
    buffer_k: float = 1.898e7    # buffer spring (N/m); calibrated (calibrate()): critical service constraint -0.471
    buffer_e: float = 0.6        # restitution the buffer's damping is tuned to (on the car mass)
    car_mass: float = 43600.0    # car body (kg); calibrated (calibrate()): VCSI of the initial design 20.2
    car_cg: float = 10.0         # car body's mass centre behind the bolster (m)
    section: Section = Section(h=0.2, tf=0.012, tw=0.008)
    E: float = 2.1e11            # Young's modulus (Pa)
    sigma_y: float = 355e6       # yield stress (Pa), S355
    rho: float = 7850.0          # steel density (kg/m^3)


DATA = Data()
INITIAL = (0.120, 0.100, 0.150)          # b1, b2, b3 (m), Pereira & Dias 2002, Table IV
PAPER_OPTIMUM = (0.09736, 0.0753, 0.13038)
PAPER_VCSI = (20.2, 13.6)                # initial, optimal


class Hinge(NamedTuple):
    """A plastic hinge of the model: its revolute joint, its element, the member family (constraint
    group), plastic moment (N m) and elastic stiffness (N m/rad)."""

    joint: fm.Revolute
    element: fm.PlasticHinge
    family: str
    Mp: float
    k: float


class Buffer(NamedTuple):
    """A buffer: its wall contact, the headstock segment carrying it and its head's centre (body frame, m)."""

    contact: fm.SpherePlaneContact
    body: fm.RigidBody
    local_centre: tuple


class Model(NamedTuple):
    """A built end-underframe: the system, the car body, the 26 hinges, the two buffers, the 19 segments."""

    system: fm.System
    car: fm.RigidBody
    hinges: list
    buffers: list
    segments: list


FAMILIES = ("headstock", "sill", "sole bar", "diagonal", "cross-bearer")
WIDTH_OF = {"headstock": 0, "diagonal": 1, "cross-bearer": 1, "sill": 2, "sole bar": 2}   # index into (b1, b2, b3)


def _box_inertia(m: float, lx: float, ly: float, lz: float) -> tuple:
    """Principal inertias (kg m^2) of a uniform box of the given sides (m)."""
    return (m * (ly * ly + lz * lz) / 12.0, m * (lx * lx + lz * lz) / 12.0, m * (lx * lx + ly * ly) / 12.0)


def _segment(s: fm.System, p, q, b: float, d: Data, name: str, v0: float) -> fm.RigidBody:
    """A rigid beam segment from p to q (plan points, m) of flange width b: a slender rod along its axis."""
    p, q = np.asarray(p, float), np.asarray(q, float)
    L = float(np.linalg.norm(q - p))
    m = d.rho * d.section.area(b) * L
    ex = np.append((q - p) / L, 0.0)
    R = np.column_stack([ex, np.cross(Z, ex), Z])
    J = m * L * L / 12.0
    return s.add(fm.RigidBody(m, (0.0, J, J), position=tuple(np.append(0.5 * (p + q), 0.0)), orientation=R,
                              velocity=(v0, 0.0, 0.0), name=name))


def _widths(widths) -> tuple:
    """Three positive, finite flange widths (m), else a ModelError naming the value."""
    try:
        b = tuple(float(x) for x in widths)
    except (TypeError, ValueError):
        raise ModelError(f"end-underframe: widths must be three numbers (b1, b2, b3) in m, got {widths!r}") from None
    if len(b) != 3 or not all(np.isfinite(x) and x > 0 for x in b):
        raise ModelError(f"end-underframe: widths must be three positive numbers (b1, b2, b3) in m, got {widths!r}")
    return b


def build(widths, speed_kmh: float, d: Data = DATA, *, elastic: bool = False) -> Model:
    """The model with flange widths ``(b1, b2, b3)`` (m) moving at ``speed_kmh`` towards the wall (at
    x = buffer_length + contact radius). ``elastic=True`` gives every hinge an unreachable yield moment (the
    service runs: identical to the elastic-plastic model while no hinge yields, and a smooth continuation of
    the elastic moments past it)."""
    b = _widths(widths)
    v0 = speed_kmh * KMH
    s = fm.System(name="end-underframe")
    L, ws, wb, wc, e = d.length, d.w_sole, d.w_buffer, d.w_sill, d.kink
    car = s.add(fm.RigidBody(d.car_mass, _box_inertia(d.car_mass, 20.0, 2.8, 3.5),
                             position=(-L - d.car_cg, 0.0, 0.0), velocity=(v0, 0.0, 0.0), name="car body"))
    s.add(fm.Planar(s.ground, car, point=(0.0, 0.0, 0.0), normal=Z, name="plane"))
    hinges, segments = [], []

    def seg(p, q, fam, name):
        body = _segment(s, p, q, b[WIDTH_OF[fam]], d, name, v0)
        segments.append(body)
        return body

    def hinge(a, bb, point, fam, lengths, name):
        w = b[WIDTH_OF[fam]]
        Mp = d.sigma_y * d.section.plastic_modulus(w)
        k = 3.0 * d.E * d.section.second_moment(w) / float(np.mean(lengths))
        My = Mp * 1e6 if elastic else Mp
        j = s.add(fm.Revolute(a, bb, point=(point[0], point[1], 0.0), axis=Z, name=f"{name} joint"))
        el = s.add(fm.PlasticHinge(a, bb, Z, curve=([0.0, 1.0], [My, My]), k_elastic=k, name=name))
        hinges.append(Hinge(j, el, fam, Mp, k))

    # headstock: y nodes -ws, -wb, -wc, wc, wb, ws
    ys = (-ws, -wb, -wc, wc, wb, ws)
    head = [seg((0.0, ys[i]), (0.0, ys[i + 1]), "headstock", f"headstock {i + 1}") for i in range(5)]
    for i in range(4):
        hinge(head[i], head[i + 1], (0.0, ys[i + 1]), "headstock", (ys[i + 1] - ys[i], ys[i + 2] - ys[i + 1]),
              f"headstock hinge {i + 1}")
    buffers = []
    radius = 0.2
    for sign, outer in ((-1, head[0]), (1, head[4])):
        side = "left" if sign < 0 else "right"
        c = (d.buffer_length, sign * wb, 0.0)
        law = LinearSpringDamper(d.buffer_k, d.buffer_e, 0.5 * d.car_mass)
        contact = s.add(fm.SpherePlaneContact(s.ground, outer, point=(d.buffer_length + radius, 0.0, 0.0),
                                              normal=(-1.0, 0.0, 0.0), center=c, radius=radius, law=law,
                                              name=f"buffer {side}"))
        r0, R0 = outer.initial_frame()[:2]
        buffers.append(Buffer(contact, outer, tuple(R0.T @ (np.asarray(c) - r0))))
        # members: (family, front node, front body, kink sign, rear node)
        members = (("sill", (0.0, sign * wc), head[1] if sign < 0 else head[3], -1.0, (-L, sign * wc)),
                   ("sole bar", (0.0, sign * ws), outer, 1.0, (-L, sign * ws)),
                   ("diagonal", (0.0, sign * wb), outer, 1.0, (-L, sign * wc)))
        mids = {}
        for fam, front, fbody, ksign, rear in members:
            f, r = np.array(front), np.array(rear)
            axis = (r - f) / np.linalg.norm(r - f)
            normal = np.array([-axis[1], axis[0]])
            if normal[1] * sign < 0:
                normal = -normal                       # pointing outwards (away from the centre line)
            mid = 0.5 * (f + r) + ksign * e * normal
            s1 = seg(f, mid, fam, f"{fam} {side} 1")
            s2 = seg(mid, r, fam, f"{fam} {side} 2")
            l1, l2 = np.linalg.norm(mid - f), np.linalg.norm(r - mid)
            hinge(fbody, s1, f, fam, (l1,), f"{fam} {side} front")
            hinge(s1, s2, mid, fam, (l1, l2), f"{fam} {side} middle")
            hinge(s2, car, r, fam, (l2,), f"{fam} {side} rear")
            mids[fam] = (mid, s1)
        (pb, bb), (pd, bd) = mids["sole bar"], mids["diagonal"]
        x = seg(pb, pd, "cross-bearer", f"cross-bearer {side}")
        lx = float(np.linalg.norm(pd - pb))
        hinge(bb, x, pb, "cross-bearer", (lx,), f"cross-bearer {side} outer")
        hinge(x, bd, pd, "cross-bearer", (lx,), f"cross-bearer {side} inner")
    return Model(s, car, hinges, buffers, segments)


# -- responses -------------------------------------------------------------------------------------------
G0 = 9.80665             # m/s^2 per g
H_STEP = 1e-3            # step (s) of every run, also the step limit while the buffers touch (convergence: docs)
T_CRASH, T_SERVICE = 0.7, 0.2     # run lengths (s): past the buffers' separation (checked) / past the service peak


class Crash(NamedTuple):
    """The 30 km/h wall impact of one design."""

    vcsi: float              # (1/T) int a^2 dt, a the car body's deceleration in g, T the contact time (g^2)
    contact_time: float      # T (s): first to last instant a buffer touches the wall
    peak_g: float            # largest deceleration of the car body (g)
    stroke: float            # largest forward travel of the car body after the first touch (m)
    kinetic_lost: float      # kinetic energy lost over the run (J)
    hinge_work: float        # work done on the hinges, flexmb's own trapezoid sum (J)
    hinge_work_replay: float  # the same from the saved rotations through replay_hinge (J)
    law_error: float         # largest |M_flexmb - M_replay| / Mp at the end of the run over all hinges
    contact_work: float      # work done on the buffers' springs and dampers (J)
    energy_drift: float      # |total energy at the end - at the start| (J)
    result: object           # the flexmb Result
    model: Model


class Service(NamedTuple):
    """The 5 km/h wall impact of one design, hinges elastic: the largest elastic moment over the plastic
    moment, per hinge and per member family (the constraints are ``utilization - 1 <= 0``)."""

    hinge_utilization: np.ndarray     # (26,)
    family_utilization: dict          # family -> max over its hinges
    result: object
    model: Model


def _run(model: Model, t_end: float, h: float | None = None):
    h = H_STEP if h is None else h
    with warnings.catch_warnings():          # the planar loops' out-of-plane rows: switched off, by design
        warnings.simplefilter("ignore", RedundantConstraintWarning)
        return fm.simulate(model.system, t_end, h, h_contact=h, progress=False)


def replay_hinge(theta: np.ndarray, k: float, Mp: float) -> tuple[np.ndarray, float]:
    """Moment history (N m) and work (J) of an elastic-perfectly plastic hinge driven through the rotations
    ``theta`` (rad): the return mapping M_{n+1} = clip(M_n + k (theta_{n+1} - theta_n), -Mp, Mp) (Simo &
    Hughes 1998, §1.4; Ambrosio 2002, Fig. 4 without hardening), work by the trapezoid rule. A plain Python
    reimplementation, independent of flexmb's compiled law, for the checks."""
    M = np.zeros_like(theta)
    for n in range(1, theta.size):
        M[n] = min(Mp, max(-Mp, M[n - 1] + k * (theta[n] - theta[n - 1])))
    work = float(np.sum(0.5 * (M[1:] + M[:-1]) * np.diff(theta)))
    return M, work


def crash(widths, d: Data = DATA, speed_kmh: float = 30.0, h: float | None = None) -> Crash:
    """Run the wall impact and evaluate the index (Pereira & Dias 2002, Table III: VCSI = (1/T) int a^2 dt);
    ``h`` the step (s, default ``H_STEP``). A ModelError if the buffers still touch the wall at the run's end."""
    model = build(widths, speed_kmh, d)
    res = _run(model, T_CRASH, h)
    t = res.t
    a = -res.acceleration(model.car)[:, 0] / G0
    forces = [np.abs(res.contact_force(b.contact)) for b in model.buffers]
    force = sum(forces)
    on = np.flatnonzero(force > 0.0)
    if on.size == 0 or on[-1] == t.size - 1:
        raise ModelError(f"end-underframe {tuple(widths)}: the buffers still touch the wall at t = {t[-1]} s; "
                         "raise T_CRASH")
    sel = slice(on[0], on[-1] + 1)
    T = float(t[on[-1]] - t[on[0]])
    vcsi = float(np.trapezoid(a[sel] ** 2, t[sel]) / T)
    x = res.position(model.car)[:, 0]
    E = res.energy()
    groups = [g for g in res.system.compile().crash if hasattr(g, "theta_p")]
    flex_work = float(sum(np.sum(g.absorbed) for g in groups))
    M_end = np.concatenate([g.moments(*_extended(res, -1)) for g in groups])
    replay_work, law_err = 0.0, 0.0
    names = [e.name for g in groups for e in g.elements]
    for hinge_ in model.hinges:
        M, w = replay_hinge(res.joint_coordinates(hinge_.joint), hinge_.k, hinge_.Mp)
        replay_work += w
        law_err = max(law_err, abs(M_end[names.index(hinge_.element.name)] - M[-1]) / hinge_.Mp)
    contact_work = 0.0                        # int F delta_dot dt, delta_dot the head's speed into the wall
    for b, F in zip(model.buffers, forces):
        p = F * res.velocity(b.body, local_point=b.local_centre)[:, 0]
        contact_work += float(np.trapezoid(p, t))
    T0, T1 = float(E["kinetic"][0]), float(E["kinetic"][-1])
    return Crash(vcsi, T, float(a.max()), float(x.max() - x[on[0]]), T0 - T1, flex_work, replay_work, law_err,
                 contact_work, float(abs(E["total"][-1] - E["total"][0])), res, model)


def _extended(res, i: int):
    """Extended (ground appended) coordinates and velocities of saved state ``i``."""
    return extend(res.q[i], res.v[i])


def service(widths, d: Data = DATA, speed_kmh: float = 5.0) -> Service:
    """Run the service impact with elastic hinges and return the utilizations max_t |k theta| / Mp."""
    model = build(widths, speed_kmh, d, elastic=True)
    res = _run(model, T_SERVICE)
    u = np.array([np.abs(res.joint_coordinates(h.joint)).max() * h.k / h.Mp for h in model.hinges])
    fam = {f: float(max(u[i] for i, h in enumerate(model.hinges) if h.family == f)) for f in FAMILIES}
    return Service(u, fam, res, model)


def calibrate(d: Data = DATA, widths=INITIAL, iterations: int = 4) -> Data:
    """The two calibrated data (how ``DATA`` was made; not run by the suite): the car mass so that the initial
    design's VCSI is the paper's 20.2 (VCSI ~ 1/m^2 at fixed force levels), then the buffer spring so that the
    largest service utilization is 0.529, the paper's critical constraint -0.471 read as utilization - 1 (the
    elastic impact force ~ sqrt(k m)); fixed-point iterations on these power laws."""
    target_u = 1.0 - 0.471
    for _ in range(iterations):
        c = crash(widths, d)
        d = d._replace(car_mass=d.car_mass * np.sqrt(c.vcsi / PAPER_VCSI[0]))
        u = max(service(widths, d).family_utilization.values())
        d = d._replace(buffer_k=d.buffer_k * (target_u / u) ** 2)
        print(f"VCSI {c.vcsi:.3f}  u {u:.4f}  ->  car_mass {d.car_mass:.1f} kg, buffer_k {d.buffer_k:.4g} N/m")
    return d
