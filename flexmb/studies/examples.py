"""A small impact model for examples, tests and benchmarks of studies: a rigid sphere
(a head form, by default 4.5 kg, R = 0.1 m) that strikes a flat rigid floor at speed
``v``, with the Lankarani--Nikravesh contact force written as a user force:

    F = K delta^1.5 [1 + 3 (1 - e^2)/4 * delta_dot / v]        (delta >= 0, F >= 0)

(Lankarani & Nikravesh, Nonlinear Dynamics 5, 1994, eq. 18 form; Ambrosio 2002, ref. [19]).
``K`` (N/m^1.5) is the Hertz stiffness, ``e`` the coefficient of restitution. The sphere
starts touching the floor (gravity off), so ``v`` is exactly the impact speed. For
``e = 1`` the impact is Hertzian: maximum penetration ``(5 m v^2 / (4 K))^0.4`` and
contact time ``2.9432 delta_max / v`` (Goldsmith, Impact, 1960, §4.2).

The functions are module level so that studies can send them to process pools and Dask.
"""
from __future__ import annotations

import numpy as np

__all__ = ["ball_drop", "contact_force", "peak_force", "contact_time", "penetration", "hertz_max_penetration", "hertz_contact_time", "ball_drop_metrics"]


def hertz_max_penetration(m: float, v: float, K: float) -> float:
    """Maximum penetration (m) of an elastic Hertz impact."""
    return (1.25 * m * v * v / K) ** 0.4


def hertz_contact_time(m: float, v: float, K: float) -> float:
    """Contact duration (s) of an elastic Hertz impact: 2.9432 delta_max / v."""
    return 2.9432 * hertz_max_penetration(m, v, K) / v


class _Contact:
    """The contact law as a picklable callable (and its analytic Jacobian)."""

    def __init__(self, K: float, e: float, v_impact: float, R: float):
        self.K, self.R = float(K), float(R)
        self.c = 0.75 * (1.0 - e * e) / float(v_impact)

    def force(self, q, v):
        d = self.R - q[2]
        if d <= 0.0:
            return 0.0, 0.0, 0.0
        dd = -v[2]
        d15 = d ** 1.5
        f = self.K * d15 * (1.0 + self.c * dd)
        if f <= 0.0:
            return 0.0, 0.0, 0.0
        df_dz = -1.5 * self.K * np.sqrt(d) * (1.0 + self.c * dd)
        df_dzd = -self.K * d15 * self.c
        return f, df_dz, df_dzd

    def __call__(self, t, q, v):
        Q = np.zeros(7)
        Q[2] = self.force(q, v)[0]
        return Q

    def jacobian(self, t, q, v):
        _, dz, dzd = self.force(q, v)
        dq, dv = np.zeros((7, 7)), np.zeros((7, 7))
        dq[2, 2], dv[2, 2] = dz, dzd
        return dq, dv


def ball_drop(params: dict):
    """Build the impact model; returns ``(system, run settings)``.

    ``params``: ``v`` impact speed (m/s), ``K`` contact stiffness (N/m^1.5), optional
    ``e`` (restitution, 0.8), ``m`` (kg, 4.5), ``R`` (m, 0.1), ``steps`` (steps per Hertz
    contact time, 100). The run lasts 1.5 Hertz contact times.
    """
    from ..bodies import RigidBody
    from ..forces import UserForce
    from ..system import System
    v, K = float(params["v"]), float(params["K"])
    e, m, R = float(params.get("e", 0.8)), float(params.get("m", 4.5)), float(params.get("R", 0.1))
    s = System(name="ball drop")
    ball = s.add(RigidBody(m, (0.4 * m * R * R,) * 3, position=(0.0, 0.0, R), velocity=(0.0, 0.0, -v),
                           name="ball"))
    law = _Contact(K, e, v, R)
    s.add(UserForce(ball, law, jacobian=law.jacobian, name="contact"))
    T = hertz_contact_time(m, v, K)
    return s, {"t_end": 1.5 * T, "h": T / float(params.get("steps", 100))}


def contact_force(result, system=None, params=None) -> np.ndarray:
    """Contact force history (n,) of a :func:`ball_drop` result (N)."""
    from .metrics import user_force_history
    return user_force_history(result, "contact")[:, 2]


def peak_force(result, system, params) -> float:
    from .metrics import peak
    return peak(contact_force(result))


def contact_time(result, system, params) -> float:
    from .metrics import duration
    return duration(result.t, contact_force(result))


def penetration(result, system, params) -> float:
    from .metrics import gap_to_plane, max_penetration
    return max_penetration(gap_to_plane(result, "ball", radius=float(params.get("R", 0.1))))


def ball_drop_metrics() -> dict:
    """The usual metrics of a :func:`ball_drop` study (picklable)."""
    from .metrics import HIC, EnergyAbsorbed, PeakAccelerationG
    return {"peak_force": peak_force, "contact_time": contact_time, "max_penetration": penetration,
            "energy_absorbed": EnergyAbsorbed(), "peak_g": PeakAccelerationG("ball"),
            ("hic15", "hic15_t1", "hic15_t2"): HIC("ball", window=0.015)}
