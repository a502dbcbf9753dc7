"""Cases of the ``impulsive`` suite: impacts with Newton's restitution (flexmb.contact.Impulsive) against closed
forms of the impact equations written independently, in minimal coordinates.

* ``rod-wall``: a free rod (no gravity) translating and turning strikes a plane with one end. Planar rigid-body
  impact at a point (Goldsmith, *Impact*, 1960, ch. 2; Brach, *Mechanical Impact Dynamics*, 1991, §4):
  ``P = (1 + e) u / (1/m + (rho x n)_z^2 / I)`` with ``u`` the approach speed of the contact point and ``rho`` its
  lever from the centre of mass; ``v+ = v- + P n / m``, ``omega+ = omega- + P (rho x n)_z / I``.
* ``double-pendulum-wall``: a double pendulum of two uniform rods swings under gravity into a wall with the tip
  of its second link. Minimal coordinates (the links' absolute angles): mass matrix ``M(theta)``, contact row
  ``J`` (the tip's normal speed per angle rate), ``P = (1 + e) J theta_dot- / (J M^-1 J^T)``,
  ``theta_dot+ = theta_dot- - M^-1 J^T P`` (Schwab & van der Linde, *Multibody Dynamics B*, TU Delft, 2002,
  §2.3): the joint impulses never appear, where flexmb solves for them with the Euler parameters' rates.
* ``bouncing-ball``: a ball dropped from rest bounces on a plane under gravity: the apex heights above the
  touch fall as ``e^(2k)``, the impacts come at the times of free fall.
* ``newtons-cradle-sequential`` / ``-simultaneous``: five equal balls in a row touching, the first strikes the
  row at 1 m/s. Sequential impacts (``rule="sequential"``) hand the momentum along: the last ball leaves at
  1 m/s, the others stand (e = 1). Simultaneous (the default) with Newton's law on every touching pair: the
  struck row moves as one, ``V = (1 + e) v / 5``, the striker keeps ``V - e v``.
* ``compliant-limit``: the rod of ``rod-wall`` with a Lankarani-Nikravesh contact of stiffness K: its rebound
  converges to the impulsive one with the law's achieved restitution as K grows, at the rate of the contact
  duration (``T ~ K^(-2/5)``, Hertz): the rod turns by about ``omega T`` while in contact.
"""
from __future__ import annotations

import numpy as np

import flexmb as fm
from flexmb import rotations as rot
from flexmb.contact import LankaraniNikravesh, predicted_restitution
from flexmb.contact.impulsive import Impulsive

from ..framework import CaseResult

ROUND_OFF = 1e-10
"""Relative agreement of velocities after an impact with a closed form at the same configuration: both solve
linear equations of a few unknowns exactly, flexmb's with the Euler parameters and joint impulses (condition
~1e3 here), so 1e-10 leaves three orders above double precision."""


def _omega_z(q: np.ndarray, v: np.ndarray, body) -> float:
    """The z angular velocity (rad/s) of a body from its Euler parameters and their rates (omega = 2 E p_dot)."""
    o = body.offset
    return float(2.0 * (rot.E(q[o + 3:o + 7]) @ v[o + 3:o + 7])[2])


def _angle_z(q: np.ndarray, body) -> float:
    o = body.offset
    p = q[o + 3:o + 7]
    return float(2.0 * np.arctan2(p[3], p[0]))


def _rod(law, theta0=0.4, omega0=1.5, v0=2.0, L=1.0, m=2.0, r=0.01):
    """The free rod above the plane y = 0: centre at height 0.8 m, tilted by theta0 about z, moving down at v0 and
    turning at omega0; its lower end carries a contact sphere of radius r."""
    s = fm.System()
    I = m * L * L / 12.0
    R = rot.from_axis_angle((0, 0, 1), theta0)
    rod = s.add(fm.RigidBody(m, (I, 1e-4, I), position=(0.0, 0.8, 0.0), orientation=R,
                             velocity=(0.0, -v0, 0.0), angular_velocity=(0.0, 0.0, omega0), name="rod"))
    end = np.array([0.0, -L / 2, 0.0])          # body frame; the contact takes the sphere's global centre at start
    s.add(fm.SpherePlaneContact(s.ground, rod, point=(0, 0, 0), normal=(0, 1, 0),
                                center=tuple(np.array([0.0, 0.8, 0.0]) + rot.A(R) @ end), radius=r, law=law, name="end"))
    return s, rod, end, m, I


def _rod_closed_form(q, v, rod, end, m, I, e):
    """Post-impact (vy, omega_z) of the rod at configuration q, velocities v (planar point impact)."""
    o = rod.offset
    A = rot.A(q[o + 3:o + 7])
    rho = A @ end                               # lever of the sphere centre (the force line passes through it)
    n = np.array([0.0, 1.0, 0.0])
    w = _omega_z(q, v, rod)
    vc = v[o:o + 3]
    u = -(vc[1] + w * rho[0])                  # approach speed of the contact point: -(v + w x rho) . n
    arm = rho[0] * n[1] - rho[1] * n[0]         # (rho x n)_z
    P = (1.0 + e) * u / (1.0 / m + arm * arm / I)
    return vc[1] + P / m, w + P * arm / I


def rod_wall(quick: bool) -> CaseResult:
    r = CaseResult("rod-wall", "planar point impact of a rigid rod with restitution (Goldsmith 1960 ch. 2; "
                   "Brach 1991 §4): P = (1+e) u / (1/m + (rho x n)^2 / I)")
    e = 0.7
    s, rod, end, m, I = _rod(Impulsive(e))
    res = fm.simulate(s, 0.6, 1e-3, progress=False)
    r.check("impacts", len(res.impacts), 1, "abs 0")
    ev = res.impacts[0]
    vy, w = _rod_closed_form(ev.q, ev.v_before, rod, end, m, I, e)
    o = rod.offset
    r.check("vy_after", ev.v_after[o + 1], vy, f"rel {ROUND_OFF:g}")
    r.check("omega_after", _omega_z(ev.q, ev.v_after, rod), w, f"rel {ROUND_OFF:g}")
    r.check("approach_reversed", ev.speed_after[0], -e * ev.speed_before[0], f"rel {ROUND_OFF:g}")
    r.check("touch_gap", abs(_gap(ev.q, rod, end)), tolerance="max 1e-8")
    ek = res.energy()
    r.check("energy_balance", float(np.abs(ek["total"] - ek["total"][0]).max() / ek["kinetic"][0]), tolerance="max 1e-6")
    r.metrics.update({"energy_lost_J": ev.energy_lost, "t_impact": ev.t})
    r.notes = ("rod 1 m, 2 kg, no gravity, tilted 0.4 rad, 2 m/s down and 1.5 rad/s; e = 0.7; the closed form is "
               "evaluated at the configuration and velocities of the impact flexmb located (the touch is landed on to "
               "1e-8 m); energy balance relative to the initial kinetic energy (the impact's loss booked as work), "
               "limited by the generalized-alpha step's O(h^2) energy error of the free rotation (6e-8 J of 4.2 J)")
    return r


def _gap(q, rod, end, r=0.01) -> float:
    o = rod.offset
    return float(q[o + 1] + (rot.A(q[o + 3:o + 7]) @ end)[1] - r)


def _double_pendulum(e: float, L=1.0, m=1.0, wall=1.2, r=0.02):
    """Two uniform rods (L, m) hanging from the origin along -y at theta = 0, released from theta = (-pi/2, -pi/2)
    (stretched along -x) under gravity; the second link's tip carries a sphere that meets the wall x = wall."""
    s = fm.System(gravity=(0.0, -9.81, 0.0))
    I = m * L * L / 12.0
    th0 = -np.pi / 2
    R = rot.from_axis_angle((0, 0, 1), th0)
    d = np.array([np.sin(th0), -np.cos(th0), 0.0])      # the links' direction
    a = s.add(fm.RigidBody(m, (I, 1e-4, I), position=tuple(0.5 * L * d), orientation=R, name="upper"))
    b = s.add(fm.RigidBody(m, (I, 1e-4, I), position=tuple(1.5 * L * d), orientation=R, name="lower"))
    s.add(fm.Revolute(s.ground, a, (0, 0, 0), (0, 0, 1), name="shoulder"))
    s.add(fm.Revolute(a, b, tuple(L * d), (0, 0, 1), name="elbow"))
    s.add(fm.SpherePlaneContact(s.ground, b, point=(wall, 0, 0), normal=(-1, 0, 0), center=tuple(2 * L * d), radius=r,
                                law=Impulsive(e), name="wall"))
    return s, a, b, L, m, I


def double_pendulum_wall(quick: bool) -> CaseResult:
    r = CaseResult("double-pendulum-wall", "impact equations in minimal coordinates (Schwab & van der Linde 2002 "
                   "§2.3): P = (1+e) J w- / (J M^-1 J^T), w+ = w- - M^-1 J^T P")
    e = 0.5
    s, a, b, L, m, I = _double_pendulum(e)
    # velocity projection: index-3 generalized-alpha holds the joints' velocity constraints only to O(h^2) (1e-6
    # here), and the minimal-coordinate form assumes velocities on the constraint manifold
    res = fm.simulate(s, 1.5, 1e-3, progress=False, velocity_projection=True)
    r.check("impacted", float(len(res.impacts) >= 1), 1.0, "abs 0")
    ev = res.impacts[0]
    th = np.array([_angle_z(ev.q, a), _angle_z(ev.q, b)])
    w = np.array([_omega_z(ev.q, ev.v_before, a), _omega_z(ev.q, ev.v_before, b)])
    c1, c2 = np.cos(th)
    s1, s2 = np.sin(th)
    # centres: c1 = L/2 (sin t1, -cos t1), c2 = L (sin t1, -cos t1) + L/2 (sin t2, -cos t2)
    J1 = np.array([[0.5 * L * c1, 0.0], [0.5 * L * s1, 0.0]])
    J2 = np.array([[L * c1, 0.5 * L * c2], [L * s1, 0.5 * L * s2]])
    M = m * (J1.T @ J1 + J2.T @ J2) + I * np.eye(2)
    Jc = np.array([[L * c1, L * c2]])              # the tip's x speed per angle rate (the wall's normal is -x)
    u = (Jc @ w)[0]                                # approach speed
    P = (1.0 + e) * u / (Jc @ np.linalg.solve(M, Jc.T))[0, 0]
    w_plus = w - np.linalg.solve(M, Jc.T).ravel() * P
    w_flexmb = np.array([_omega_z(ev.q, ev.v_after, a), _omega_z(ev.q, ev.v_after, b)])
    r.check("omega_upper_after", w_flexmb[0], w_plus[0], f"rel {ROUND_OFF:g}")
    r.check("omega_lower_after", w_flexmb[1], w_plus[1], f"rel {ROUND_OFF:g}")
    r.check("approach_speed_before", ev.speed_before[0], u, f"rel {ROUND_OFF:g}")
    r.metrics.update({"impacts": len(res.impacts), "t_first_impact": ev.t, "theta_at_impact": th.tolist()})
    r.notes = ("two uniform rods 1 m, 1 kg, released stretched along -x under gravity; the second link's tip "
               "(sphere 0.02 m) meets the wall x = 1.2 m, e = 0.5; the closed form uses the angles and rates of the "
               "located impact (velocities projected on the "
               "joints' velocity constraints at every step, so the energy balance is not checked here: rod-wall and "
               "bouncing-ball check it)")
    return r


def bouncing_ball(quick: bool) -> CaseResult:
    r = CaseResult("bouncing-ball", "free fall between impacts with restitution: apex heights h0 e^(2k), impact "
                   "times t1 = sqrt(2 h0 / g), t(k+1) - t(k) = 2 e^k sqrt(2 h0 / g)")
    e, R, y0, g = 0.8, 0.05, 1.0, 9.81
    s = fm.System(gravity=(0, -g, 0))
    ball = s.add(fm.RigidBody(1.0, (1e-3,) * 3, position=(0, y0, 0), name="ball"))
    s.add(fm.SpherePlaneContact(s.ground, ball, point=(0, 0, 0), normal=(0, 1, 0), center=(0, y0, 0), radius=R,
                                law=Impulsive(e), name="floor"))
    res = fm.simulate(s, 2.0, 1e-3, progress=False)
    h0 = y0 - R
    t1 = np.sqrt(2 * h0 / g)
    times = np.array([ev.t for ev in res.impacts])
    expect = t1 + np.concatenate([[0.0], np.cumsum([2 * e ** k * t1 for k in range(1, times.size)])])
    r.check("impacts", times.size, 3, "abs 0")
    r.check("impact_times", float(np.max(np.abs(times - expect))), tolerance="max 1e-9")
    # apex after impact k from any state of the flight after it: y + vy^2 / (2 g) (free flight)
    y, vy = res.position(ball)[:, 1], res.velocity(ball)[:, 1]
    for k, ev in enumerate(res.impacts[:3], start=1):
        row = int(np.searchsorted(res.t, ev.t)) + 5
        apex = y[row] - R + vy[row] ** 2 / (2 * g)
        r.check(f"apex_{k}", apex / h0, e ** (2 * k), "rel 1e-8")
    r.notes = ("ball R = 0.05 m dropped from 1 m onto a plane, e = 0.8, h = 1 ms; the apex heights are computed "
               "from the free flight after each impact (y + vy^2 / 2g), so the only error is the touch's location "
               "(landed on to about 1e-10 m) and the integration of the free flight, which generalized-alpha holds "
               "exactly for constant gravity")
    return r


def _cradle(rule: str, e: float = 1.0, n: int = 5, R=0.02, v0=1.0):
    s = fm.System()
    balls = [s.add(fm.RigidBody(0.1, (1e-5,) * 3, position=(2 * R * k + (-1e-3 if k == 0 else 0.0), 0, 0),
                                velocity=(v0 if k == 0 else 0.0, 0, 0), name=f"ball{k}")) for k in range(n)]
    for k in range(n - 1):
        s.add(fm.SphereSphereContact(balls[k], balls[k + 1], center_a=balls[k].position, center_b=balls[k + 1].position,
                                     radius_a=R,
                                     radius_b=R, law=Impulsive(e, rule=rule), name=f"c{k}"))
    res = fm.simulate(s, 0.01, 1e-3, progress=False)
    return res, balls


def cradle_sequential(quick: bool) -> CaseResult:
    r = CaseResult("newtons-cradle-sequential", "sequential elastic impacts of equal balls swap their velocities: "
                   "the last ball leaves at the striker's speed, the others stand")
    res, balls = _cradle("sequential")
    v = np.array([res.velocity(b)[-1, 0] for b in balls])
    r.check("last_ball", v[-1], 1.0, "rel 1e-12")
    r.check("others_still", float(np.abs(v[:-1]).max()), tolerance="max 1e-12")
    r.notes = "five balls 0.1 kg, R = 0.02 m, touching; the first strikes the row at 1 m/s after 1 mm; e = 1"
    return r


def cradle_simultaneous(quick: bool) -> CaseResult:
    r = CaseResult("newtons-cradle-simultaneous", "Newton's law on every touching pair at once: the struck row "
                   "moves as one, V = (1+e) v / 5, the striker keeps V - e v")
    e = 1.0
    res, balls = _cradle("simultaneous", e)
    v = np.array([res.velocity(b)[-1, 0] for b in balls])
    V = (1 + e) / 5
    r.check("row", float(np.abs(v[1:] - V).max()), tolerance="max 1e-12")
    r.check("striker", v[0], V - e, "rel 1e-12")
    r.notes = ("the same five balls; with the default rule the impulses of all touching pairs are solved together, "
               "which conserves energy at e = 1 but moves the row as one body: the sequential rule gives the "
               "cradle's known behaviour")
    return r


def compliant_limit(quick: bool) -> CaseResult:
    r = CaseResult("compliant-limit", "a compliant Lankarani-Nikravesh contact converges to the impulsive impact "
                   "with the law's achieved restitution as K grows, at the rate of the contact duration K^(-2/5)")
    e_law = 0.9
    e_eff = predicted_restitution(LankaraniNikravesh(1e8, e_law))
    s, rod, end, m, I = _rod(Impulsive(e_eff))
    imp = fm.simulate(s, 0.6, 1e-3, progress=False)
    w_imp = _omega_z(imp.q[-1], imp.v[-1], rod)
    Ks = (1e6, 1e7, 1e8) if quick else (1e6, 1e7, 1e8, 1e9)
    errs = []
    for K in Ks:
        s, rod, end, m, I = _rod(LankaraniNikravesh(K, e_law))
        res = fm.simulate(s, 0.6, 1e-3, progress=False)
        errs.append(abs(_omega_z(res.q[-1], res.v[-1], rod) - w_imp) / abs(w_imp))
    slope = float(np.polyfit(np.log(Ks), np.log(errs), 1)[0])
    r.check("rate", slope, -0.4, "abs 0.1")
    r.check("error_at_largest_K", errs[-1], tolerance=f"max {errs[0]:.3g}")
    r.metrics.update({"K": list(Ks), "omega_error_rel": errs, "e_achieved": e_eff})
    r.notes = ("rod of rod-wall; Lankarani-Nikravesh e = 0.9 (achieved restitution of a single Hertz impact "
               "e_eff from flexmb.contact.predicted_restitution) against the impulsive law with e_eff; relative error "
               "of the rod's spin after the impact; the slope of log(error) over log(K) is checked against -2/5 "
               "within 0.1 (the contact duration's exponent; the rod turns through omega T during contact)")
    return r


CASES = [rod_wall, double_pendulum_wall, bouncing_ball, cradle_sequential, cradle_simultaneous, compliant_limit]
