"""Metrics for crash and impact studies: peaks, contact duration, penetration, energy
absorbed, the acceleration of a body point (in g) and the Head Injury Criterion.

Functions work on arrays or on a :class:`flexmb.Result`; the classes at the end
(``PeakAccelerationG``, ``HIC``, ``EnergyAbsorbed``, ``MaxPenetration``) wrap them as
study metrics ``f(result, system, params)`` that name bodies by their name (the system
is built anew for each case) and pickle, so they run in process pools and on Dask.
"""
from __future__ import annotations

import math

import numpy as np

from .. import rotations as rot
from ..errors import ModelError
from .cfc import cfc_filter
from .hic import HICResult, hic_exact

__all__ = ["STANDARD_GRAVITY", "peak", "duration", "contact_duration", "max_penetration", "gap_to_plane",
           "energy_absorbed", "point_acceleration", "peak_acceleration_g", "hic", "HICResult", "cfc_filter",
           "user_force_history", "PeakAccelerationG", "HIC", "EnergyAbsorbed", "MaxPenetration"]

#: standard gravity (m/s^2) that converts accelerations to g (CGPM 1901; ISO 80000-3)
STANDARD_GRAVITY = 9.80665


def _series(x, what: str) -> np.ndarray:
    a = np.asarray(x, dtype=float)
    if a.ndim == 2:
        a = np.linalg.norm(a, axis=1)            # vectors per row: their magnitude
    if a.ndim != 1 or a.size == 0:
        raise ModelError(f"{what}: expected a non-empty series (n,) or vectors (n, k), got shape {np.shape(x)}")
    return a


def _times(t, n: int, what: str) -> np.ndarray:
    t = np.asarray(t, dtype=float)
    if t.shape != (n,):
        raise ModelError(f"{what}: t has shape {t.shape}, the signal has {n} samples")
    if not np.all(np.isfinite(t)) or np.any(np.diff(t) < 0):
        raise ModelError(f"{what}: t must be finite and non-decreasing")
    return t


def peak(series, absolute: bool = True) -> float:
    """Largest value of a series: of ``|x|`` (default) or of ``x``; rows of an (n, k) array
    count by their Euclidean norm. NaN values are refused."""
    a = _series(series, "peak")
    if not np.all(np.isfinite(a)):
        raise ModelError("peak: the series contains NaN or infinite values")
    return float(np.max(np.abs(a)) if absolute else np.max(a))


def duration(t, signal, threshold: float = 0.0) -> float:
    """Total time (s) during which ``signal > threshold``, with the crossings placed by
    linear interpolation between samples (exact for the piecewise-linear signal).
    ``contact_duration(t, force)`` is the time a contact force is non-zero."""
    s = _series(signal, "duration") - float(threshold)
    t = _times(t, s.size, "duration")
    if s.size == 1:
        return 0.0
    s0, s1, dt = s[:-1], s[1:], np.diff(t)
    both = (s0 > 0) & (s1 > 0)
    total = float(dt[both].sum())
    up = (s0 <= 0) & (s1 > 0)                    # enters: part after the crossing
    down = (s0 > 0) & (s1 <= 0)                  # leaves: part before the crossing
    total += float(np.sum(dt[up] * s1[up] / (s1[up] - s0[up])))
    total += float(np.sum(dt[down] * s0[down] / (s0[down] - s1[down])))
    return total


contact_duration = duration


def max_penetration(gap) -> float:
    """Largest penetration (m): ``max(0, -min(gap))`` of a signed gap series (negative
    when the bodies overlap), e.g. from :func:`gap_to_plane`."""
    g = np.asarray(gap, dtype=float).reshape(-1)
    if g.size == 0 or not np.all(np.isfinite(g)):
        raise ModelError("max_penetration: the gap series is empty or not finite")
    return float(max(0.0, -g.min()))


def _body(result, body):
    if isinstance(body, str):
        if result.system is None:
            raise ModelError(f"body {body!r} given by name, but the result has no system attached")
        return result.system.body(body)
    return body


def gap_to_plane(result, body, local_point=(0.0, 0.0, 0.0), normal=(0.0, 0.0, 1.0), origin=(0.0, 0.0, 0.0),
                 radius: float = 0.0) -> np.ndarray:
    """Signed distance (n,) of a body point from a plane (m), less ``radius`` (a sphere
    centred at the point): ``n . (x - origin) - radius``; negative = penetration.
    ``body`` is a body or its name."""
    b = _body(result, body)
    n = np.asarray(normal, dtype=float)
    if n.shape != (3,) or not np.linalg.norm(n) > 0:
        raise ModelError(f"gap_to_plane: normal must be a non-zero 3-vector, got {normal!r}")
    n = n / np.linalg.norm(n)
    x = result.position(b, local_point)
    return (x - np.asarray(origin, dtype=float)) @ n - float(radius)


def energy_absorbed(result, t: float | None = None) -> float:
    """Energy (J) taken out of the system by non-conservative forces from the start to the
    end (or to time ``t``, interpolated): ``-(W_nc(t) - W_nc(0))``, from the work record
    behind ``Result.energy()`` (docs/theory.md §6) -- dampers, applied loads and user forces.
    A contact law written as a user force counts whole: while the bodies touch this
    includes the elastic energy stored in it, after separation it is the energy dissipated."""
    w = np.asarray(result.work_nc, dtype=float)
    if w.size == 0:
        raise ModelError("energy_absorbed: the result has no saved steps")
    if t is None:
        return float(-(w[-1] - w[0]))
    return float(-(np.interp(float(t), result.t, w) - w[0]))


def point_acceleration(result, body, local_point=(0.0, 0.0, 0.0), node: int | None = None) -> np.ndarray:
    """Global acceleration (n, 3), m/s^2, of a body point given in body axes from the body's
    reference point (the centre of mass of a rigid body), or of mesh node ``node`` of a
    flexible body (frame motion plus deformation).

    Rigid motion: ``a = r_dd + alpha x s + omega x (omega x s)``, ``s = A(p) s'``, with
    ``omega = 2 E(p) p_dot`` and ``alpha = 2 E(p) p_dd`` (``E(p_dot) p_dot = 0``; docs/theory.md
    §1; Nikravesh 1988, §6.3). A node adds its elastic part ``u = x0 + Phi eta``:
    ``2 omega x (A u_dot) + A u_dd`` (the Coriolis and relative terms)."""
    b = _body(result, body)
    o = result._slice(b)
    p, pd, pdd = (x[:, o + 3:o + 7] for x in (result.q, result.v, result.vd))
    A = rot.A(rot.normalize(p))
    Ep = rot.E(p)
    w = 2.0 * np.einsum("nij,nj->ni", Ep, pd)
    alpha = 2.0 * np.einsum("nij,nj->ni", Ep, pdd)
    r_dd = result.vd[:, o:o + 3]
    if node is None:
        s = A @ np.asarray(local_point, dtype=float)
        return r_dd + np.cross(alpha, s) + np.cross(w, np.cross(w, s))
    if not getattr(b, "n_modes", 0):
        raise ModelError(f"point_acceleration: node= needs a flexible body; {b.name!r} is rigid "
                         "(give local_point instead)")
    b.node(int(node))                            # range check with a clear error
    T, _ = b.node_shapes(int(node))
    m = b.n_modes
    eta, eta_d, eta_dd = (x[:, o + 7:o + 7 + m] for x in (result.q, result.v, result.vd))
    u = b.modes.nodes[int(node)][None] + eta @ T[0].T
    s = np.einsum("nij,nj->ni", A, u)
    s_d = np.einsum("nij,nj->ni", A, eta_d @ T[0].T)
    s_dd = np.einsum("nij,nj->ni", A, eta_dd @ T[0].T)
    return r_dd + np.cross(alpha, s) + np.cross(w, np.cross(w, s)) + 2.0 * np.cross(w, s_d) + s_dd


def peak_acceleration_g(result, body, local_point=(0.0, 0.0, 0.0), node: int | None = None,
                        accelerometer: bool = False, g: float = STANDARD_GRAVITY, cfc: int | None = None) -> float:
    """Peak magnitude of a body point's acceleration in g (``|a| / g``, g = 9.80665 m/s^2).
    ``accelerometer=True`` gives what an accelerometer there reads: ``a - gravity`` of the
    system (the kinematic acceleration otherwise). ``cfc`` (60, 180, 600 or 1000) filters the
    three components with the SAE J211-1 channel frequency class first (flexmb/studies/cfc.py);
    the result must then be saved at a fixed output step."""
    a = point_acceleration(result, body, local_point, node)
    if accelerometer and result.system is not None:
        a = a - np.asarray(result.system.gravity, dtype=float)
    if cfc is not None:
        a = cfc_filter(result.t, a, cfc)
    return peak(a) / float(g)


# -- Head Injury Criterion ---------------------------------------------------------------------

def hic(t, a_g, window: float = 0.015, continuous: bool = True, cfc: int | None = None) -> HICResult:
    """Head Injury Criterion of a resultant acceleration ``a_g`` in g (an (n, 3) array
    counts by row magnitude) sampled at times ``t`` (s)::

        HIC = max over t1 < t2, t2 - t1 <= window of (t2 - t1) [ 1/(t2 - t1) int_t1^t2 a dt ]^2.5

    ``window`` = 0.015 s (HIC15) or 0.036 s (HIC36) -- FMVSS No. 208, 49 CFR 571.208 S6.2;
    the aviation seat rules cap HIC at 1000 (Lankarani, Olivares & Nagarajan, "A virtual
    multibody and finite element analysis environment in the field of aerospace
    crashworthiness", 2002). Returns ``HICResult(value, t1, t2)``.

    The signal is the piecewise-linear interpolant of the samples, integrated exactly.
    ``continuous=True`` (default) gives the exact maximum over all real ``t1``, ``t2``
    (flexmb/studies/hic.py: the sample pairs, then the stationary points of the segment
    pairs that could beat them), so coarse output steps do not under-estimate HIC;
    ``continuous=False`` keeps end points at samples (the test-laboratory convention for
    data sampled at 10 kHz or more). Both scan the pairs lag by lag, vectorized: O(n w)
    for w samples per window. Intervals with a non-positive mean count zero.

    ``cfc`` (60, 180, 600 or 1000 Hz) first filters ``a_g`` -- each component of an (n, 3)
    array, before the resultant is taken -- with the SAE J211-1 channel frequency class
    (flexmb/studies/cfc.py; head accelerations: CFC 1000, J211-1 Table 1); ``t`` must then be
    uniformly spaced.
    """
    if cfc is not None:
        a_g = cfc_filter(t, a_g, cfc)
    a = _series(a_g, "hic")
    t = _times(t, a.size, "hic")
    if not np.all(np.isfinite(a)):
        raise ModelError("hic: the acceleration contains NaN or infinite values")
    W = float(window)
    if not (W > 0 and math.isfinite(W)):
        raise ModelError(f"hic: window must be a positive time (s), got {window!r}")
    return hic_exact(t, a, W, continuous)


# -- forces ------------------------------------------------------------------------------------

def user_force_history(result, force) -> np.ndarray:
    """Generalized force (n, k) of a :class:`flexmb.UserForce` (given or named) at every
    saved time, by calling its function again on the saved states -- e.g. a contact law
    written as a user force: ``peak(user_force_history(res, "contact")[:, 2])``."""
    if isinstance(force, str):
        if result.system is None:
            raise ModelError(f"force {force!r} given by name, but the result has no system attached")
        named = [f for f in result.system.forces if f.name == force]
        if not named:
            raise ModelError(f"system {result.system.name!r} has no force element named {force!r}")
        force = named[0]
    if not hasattr(force, "indices") or not hasattr(force, "generalized"):
        raise ModelError(f"user_force_history needs a flexmb.UserForce, got {force!r}")
    idx = force.indices()
    return np.array([force.generalized(t, q[idx].copy(), v[idx].copy())
                     for t, q, v in zip(result.t, result.q, result.v)])


# -- study metrics (picklable callables) --------------------------------------------------------

class PeakAccelerationG:
    """Study metric: peak acceleration of a body point in g (:func:`peak_acceleration_g`)."""

    def __init__(self, body: str, local_point=(0.0, 0.0, 0.0), node: int | None = None,
                 accelerometer: bool = False, cfc: int | None = None):
        self.body, self.local_point, self.node, self.accelerometer = body, tuple(local_point), node, accelerometer
        self.cfc = cfc

    def __call__(self, result, system=None, params=None) -> float:
        return peak_acceleration_g(result, self.body, self.local_point, self.node, self.accelerometer,
                                   cfc=self.cfc)


class HIC:
    """Study metric: ``(value, t1, t2)`` of the HIC of a body point's acceleration, for a
    tuple of three column names: ``{("hic15", "hic15_t1", "hic15_t2"): HIC("head")}``.
    ``cfc`` filters the acceleration components first (:func:`hic`)."""

    def __init__(self, body: str, local_point=(0.0, 0.0, 0.0), window: float = 0.015, node: int | None = None,
                 accelerometer: bool = False, continuous: bool = True, cfc: int | None = None):
        self.body, self.local_point, self.window, self.node = body, tuple(local_point), window, node
        self.accelerometer, self.continuous, self.cfc = accelerometer, continuous, cfc

    def __call__(self, result, system=None, params=None) -> HICResult:
        a = point_acceleration(result, self.body, self.local_point, self.node)
        if self.accelerometer and result.system is not None:
            a = a - np.asarray(result.system.gravity, dtype=float)
        return hic(result.t, a / STANDARD_GRAVITY, self.window, self.continuous, cfc=self.cfc)


class EnergyAbsorbed:
    """Study metric: :func:`energy_absorbed` at the end of the run (or at time ``t``)."""

    def __init__(self, t: float | None = None):
        self.t = t

    def __call__(self, result, system=None, params=None) -> float:
        return energy_absorbed(result, self.t)


class MaxPenetration:
    """Study metric: largest penetration of a body point (a sphere of ``radius``) into a
    plane (:func:`gap_to_plane`, :func:`max_penetration`)."""

    def __init__(self, body: str, local_point=(0.0, 0.0, 0.0), normal=(0.0, 0.0, 1.0), origin=(0.0, 0.0, 0.0),
                 radius: float = 0.0):
        self.body, self.local_point, self.normal, self.origin, self.radius = \
            body, tuple(local_point), tuple(normal), tuple(origin), float(radius)

    def __call__(self, result, system=None, params=None) -> float:
        return max_penetration(gap_to_plane(result, self.body, self.local_point, self.normal, self.origin,
                                            self.radius))


class PeakContactForce:
    """Study metric: the peak normal force (N) of the contact element named ``name``
    (``Result.contact_force``: sphere-plane, sphere-sphere and clearance contacts)."""

    def __init__(self, name: str):
        self.name = name

    def __call__(self, result, system, params) -> float:
        element = next((f for f in system.forces if f.name == self.name), None)
        if element is None:
            raise ModelError(f"no force element named {self.name!r} in the system")
        return peak(result.contact_force(element))
