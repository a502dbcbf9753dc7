"""The default contact step of ``simulate``: every contact's Hertz contact duration, known before the run.

docs/theory-contact.md §4.1. An impact of effective mass ``m`` at speed ``v`` on ``F = K delta^n`` lasts (elastic
limit; Johnson, *Contact Mechanics*, 1985, §11.4; Goldsmith, *Impact*, 1960)

    T = c(n) delta_max / v,   delta_max = ((n + 1) m v^2 / (2 K))^(1/(n+1)),   c(n) = 2 B(1/(n+1), 1/2) / (n+1)

(c = 2.943 for n = 3/2, pi for n = 1: ``hertz.duration_coefficient``), so ``T ~ (m/K)^(1/(n+1)) v^((1-n)/(n+1))``.
The impact speed is not known before the run; it is bounded by the energy the model can put into one contact:
``E`` = the initial kinetic energy plus the work gravity can do on every body over the model's height (the
spread of the bodies' positions along g plus the widest initial gap of a contact pair), and
``v = max(MIN_IMPACT_SPEED, sqrt(2 E / m))``. For n > 1 a faster impact is shorter, so this bound gives the
shortest duration the model can reach without drivers or loads that add energy; because ``T ~ v^(-1/5)``
(n = 3/2), an impact 150 times faster than the bound still gets 11 steps (e within 1 %, below). For n = 1 the
duration does not depend on v; for n < 1 slower impacts are shorter and the estimate is no bound.

The effective mass of a contact is ``1 / (1/m_a + 1/m_b)`` with, for each side, ``effective_mass``: a rigid
body's ``1 / (1/m + max_n (r x n) . I^-1 (r x n))`` (r: from the centre of mass to a point of the force's line of
action, at the start; the largest value over the force directions n), a flexible body's mean lumped
node mass (its mass over its node count: the light end of a node's effective mass, conservative), the ground
infinite.

``STEPS_PER_CONTACT`` comes from a convergence study (sphere on a plane, generalized-alpha, rho_inf = 0.9, K =
1e10 and 1e15): the error of the achieved restitution falls like ``N^-2`` with the steps per contact N, at most
(Hunt-Crossley e = 0.5; Lankarani-Nikravesh e = 0.85 about half) 4.8e-2 / 1.2e-2 / 2.6e-3 / 1.2e-3 / 4.2e-4 at
N = 5 / 10 / 20 / 30 / 50, always an excess (energy created). N = 30 keeps e within 1.3e-3 at the bounding
speed.
"""
from __future__ import annotations

import math

import numpy as np

from ..bodies.base import Ground
from .hertz import duration_coefficient

__all__ = ["STEPS_PER_CONTACT", "MIN_IMPACT_SPEED", "elastic_durations", "shortest_duration", "body_mass",
           "effective_mass", "effective_masses", "pair_mass", "lever", "impact_energy", "default_contact_step"]

STEPS_PER_CONTACT = 30
"""Steps per estimated contact duration of the default ``h_contact`` (module docstring: e within 1.3e-3)."""

MIN_IMPACT_SPEED = 1.0
"""m/s: the impact speed assumed when the model's energy bound gives less (a model at rest, no gravity)."""


def elastic_durations(K, n, mass, energy: float) -> np.ndarray:
    """Elastic contact durations (s) of ``F = K delta^n`` (K in N/m^n, exponent n > 0) for effective masses
    ``mass`` (kg), each hit at ``v = max(MIN_IMPACT_SPEED, sqrt(2 energy / mass))`` (energy in J); arrays
    broadcast. ``T = c(n) delta_max / v`` (Johnson 1985 §11.4); an infinite mass (ground on ground) gives inf."""
    K, n, m = np.broadcast_arrays(*(np.asarray(x, dtype=float) for x in (K, n, mass)))
    coef = {float(x): duration_coefficient(float(x)) for x in np.unique(n)}
    c = np.vectorize(coef.__getitem__, otypes=[float])(n) if n.size else np.zeros(n.shape)
    with np.errstate(divide="ignore", invalid="ignore"):
        v = np.maximum(MIN_IMPACT_SPEED, np.sqrt(2.0 * max(energy, 0.0) / m))
        dmax = ((n + 1.0) * m * v * v / (2.0 * K)) ** (1.0 / (n + 1.0))
        return np.where(np.isfinite(m), c * dmax / v, np.inf)


def shortest_duration(K, n, mass, energy: float) -> float | None:
    """The shortest of :func:`elastic_durations` (s), None when there are no contacts (or all are
    ground-to-ground): what a group's ``contact_duration`` returns."""
    T = elastic_durations(K, n, mass, energy)
    T = T[np.isfinite(T)]
    return float(T.min()) if T.size else None


def body_mass(body) -> float:
    """Total mass (kg) of a rigid or flexible body."""
    modes = getattr(body, "modes", None)
    return float(modes.invariants.mass) if modes is not None else float(body.mass)


def effective_mass(body, lever=None) -> float:
    """Effective mass (kg) of ``body`` for a contact force whose line of action passes through ``lever`` (m, body
    axes, from the centre of mass; None: through it): one lever of :func:`effective_masses`."""
    return float(effective_masses(body, np.zeros((1, 3)) if lever is None else np.reshape(lever, (1, 3)))[0])


def effective_masses(body, levers: np.ndarray) -> np.ndarray:
    """Effective masses (kg) of ``body`` for contact forces through each of ``levers`` ((k, 3), m, body axes, from
    the centre of mass): ground inf; rigid ``1 / (1/m + |r|^2 max_w w.I^-1 w)`` over unit w normal to r (the
    largest ``(r x n).I^-1(r x n)`` over all force directions n; ``I^-1`` a pseudo-inverse, a zero principal moment
    turning nothing), evaluated for all levers at once as the largest eigenvalue of ``P I^-1 P`` with ``P`` the
    projector normal to r (``I^-1`` is positive semi-definite, so its largest value on the plane is that eigenvalue);
    flexible (a modal or nodal body) its mass over its node count."""
    levers = np.asarray(levers, dtype=float).reshape(-1, 3)
    body = getattr(body, "body", body)          # a site: its body
    if isinstance(body, Ground):
        return np.full(len(levers), math.inf)
    m = body_mass(body)
    modes = getattr(body, "modes", None)
    if modes is not None:
        return np.full(len(levers), m / max(1, int(modes.nodes.shape[0])))
    r2 = np.einsum("ki,ki->k", levers, levers)
    unit = levers / np.sqrt(np.where(r2 > 0.0, r2, 1.0))[:, None]
    P = np.eye(3) - unit[:, :, None] * unit[:, None, :]                 # (k, 3, 3); the identity where r = 0
    inv = np.linalg.pinv(np.asarray(body.inertia, dtype=float))
    turn = np.linalg.eigvalsh(P @ inv @ P)[:, -1]
    return 1.0 / (1.0 / m + r2 * turn)


def pair_mass(m_a, m_b) -> np.ndarray:
    """``1 / (1/m_a + 1/m_b)`` (kg, arrays), inf where both are."""
    with np.errstate(divide="ignore"):
        return 1.0 / (1.0 / np.asarray(m_a, dtype=float) + 1.0 / np.asarray(m_b, dtype=float))


def lever(body, point) -> np.ndarray | None:
    """The global point ``point`` (m, at the start) in the axes of ``body`` (a body or a site) from its reference
    point (the centre of mass), for :func:`effective_mass`; None for the ground."""
    body = getattr(body, "body", body)
    if isinstance(body, Ground):
        return None
    origin, A = body.initial_frame()
    return A.T @ (np.asarray(point, dtype=float) - origin)


def impact_energy(system, asm, q: np.ndarray, v: np.ndarray) -> float:
    """Bound (J) of the kinetic energy one impact can carry: the kinetic energy at ``(q, v)`` plus the work of
    gravity on all bodies over the model's height (the spread of the bodies' reference points along g plus the
    widest gap of a contact pair at ``q``). Drivers, motors and loads that add energy are not counted."""
    energy = float(asm.kinetic_energy(q, v))
    g = np.asarray(system.gravity, dtype=float)
    g_norm = float(np.linalg.norm(g))
    if g_norm > 0.0:
        heights = [float(np.dot(b.initial_frame()[0], g)) / g_norm for b in system.bodies]
        gaps = [float(np.max(-d, initial=0.0)) for d in asm.penetrations(q, v)]
        height = (max(heights) - min(heights) if heights else 0.0) + max(gaps, default=0.0)
        energy += sum(body_mass(b) for b in system.bodies) * g_norm * height
    return energy


def default_contact_step(system, asm, q: np.ndarray, v: np.ndarray) -> float | None:
    """``h_contact`` when none is given (s): the shortest contact duration of every contact family
    (``ElementGroup.contact_duration``) for the impact energy bound of :func:`impact_energy`, over
    ``STEPS_PER_CONTACT``; None for a model without contact stiffness."""
    energy = impact_energy(system, asm, q, v)
    durations = [T for T in (g.contact_duration(energy) for g in asm.families) if T is not None]
    return min(durations) / STEPS_PER_CONTACT if durations else None
