"""Crash elements: plastic hinge, crush element, triangular deceleration pulse (docs/theory-crash.md).

* :class:`PlasticHinge` -- elastic-plastic rotational element about an axis between two bodies
  (the plastic hinge of Nikravesh, Chung & Benedict 1983 and Ambrosio 2002 §2.1, eqs. 6-7): yield
  moment from a tabulated curve ``M_y(alpha)`` of the accumulated plastic rotation, elastic
  unloading and reloading with ``k_elastic``, isotropic hardening (or softening) for reversed
  loading, optional Cowper-Symonds strain-rate factor.
* :class:`CrushElement` -- axial crush element between two points: force from a tabulated
  curve of the crush ``delta = L0 - L`` while the crush grows past its maximum, elastic
  unloading and reloading with ``unloading_stiffness`` below it, never any tension.
* :func:`triangular_pulse` / :func:`far_562_pulse` -- the prescribed motion of a sled whose
  deceleration is a triangular pulse (FAR 23.562 / 25.562 seat tests, Lankarani, Olivares & Nagarajan 2002).

History variables (plastic rotation, maximum crush) change only in ``accept`` (once per accepted
step); within a step the element force is a continuous, piecewise-linear function of the
measure, and residual and Newton blocks are its exact value and derivatives on the current branch.
"""
from __future__ import annotations


import numpy as np

from ..bodies.base import Body
from ..checks import scalar
from ..compiled import lazy_module
from ..errors import ModelError, NonFiniteError
from ..groups import ElementGroup, EvalState
from ..joints.base import perpendicular_pair, point3, unit
from ..timefunctions import TimeFunction
from .springs import ScalarSpringGroup, SpringPrimitive, _PairForce

cf = lazy_module("flexmb.compiled.forces")   # numba loads with the first evaluation, not at import

__all__ = ["PlasticHinge", "CrushElement", "PlasticHingeGroup", "CrushGroup", "crash_groups", "build_groups",
           "TrianglePulse", "triangular_pulse", "far_562_pulse", "FAR_562", "G0"]

G0 = 9.80665            # standard gravity (m/s^2) to convert g levels
FT = 0.3048             # m per ft (exact)


# -- input checks ---------------------------------------------------------------------------
def _number(value, what: str, owner: str, *, positive: bool = False, nonneg: bool = False) -> float:
    return scalar(value, what, owner, sign="positive" if positive else "non-negative" if nonneg else None)


def _curve(curve, owner: str, xname: str, yname: str, min_slope: float | None = None,
           max_slope: float | None = None, start_at_zero_y: bool = False):
    """Validate a tabulated curve ``(x, y)``; return ``(x, y, s)`` with ``s[k]`` the slope after
    breakpoint ``k`` (the last one is the extension slope). A falling last segment is continued to
    zero, then flat (docs/theory-crash.md §1)."""
    try:
        x, y = (np.asarray(c, dtype=float).reshape(-1) for c in curve)
    except (TypeError, ValueError):
        raise ModelError(f"{owner}: curve must be a pair (x, y) of number arrays ({xname}, {yname}), "
                         f"got {curve!r}") from None
    if x.size != y.size or x.size < 2:
        raise ModelError(f"{owner}: curve needs x and y of equal length >= 2, got {x.size} and {y.size} values")
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
        raise ModelError(f"{owner}: curve values must be finite, got x = {x.tolist()}, y = {y.tolist()}")
    if x[0] != 0.0:
        raise ModelError(f"{owner}: curve must start at {xname} = 0, got {x[0]}")
    dx = np.diff(x)
    if np.any(dx <= 0):
        k = int(np.argmax(dx <= 0)) + 1
        raise ModelError(f"{owner}: curve {xname} must increase strictly (monotone); "
                         f"x[{k}] = {x[k]} follows x[{k - 1}] = {x[k - 1]}")
    if np.any(y < 0):
        k = int(np.argmax(y < 0))
        raise ModelError(f"{owner}: curve {yname} must be non-negative, got y[{k}] = {y[k]}")
    if start_at_zero_y and y[0] != 0.0:
        raise ModelError(f"{owner}: curve must start at (0, 0) (no force at zero crush), got y[0] = {y[0]}; "
                         "give the initial rise as the first segment, e.g. (0, 0), (F0/k, F0)")
    s = np.diff(y) / dx
    if min_slope is not None and np.any(s <= min_slope):
        k = int(np.argmax(s <= min_slope))
        raise ModelError(f"{owner}: curve slope {s[k]:.6g} on segment {k} is not above -k_elastic = {min_slope:.6g}; "
                         "the hinge would snap back (no unique plastic state)")
    if max_slope is not None and np.any(s > max_slope):
        k = int(np.argmax(s > max_slope))
        raise ModelError(f"{owner}: curve slope {s[k]:.6g} on segment {k} exceeds the unloading stiffness "
                         f"{max_slope:.6g}; unloading would run above the loading curve and create energy")
    ext = s[-1]
    if s[-1] < 0:                          # falling end: continue to zero, then carry nothing
        ext = 0.0
        if y[-1] > 0:
            x, y, s = np.append(x, x[-1] - y[-1] / s[-1]), np.append(y, 0.0), np.append(s, s[-1])
    return x, y, np.append(s, ext)


class _Tables:
    """Piecewise-linear curves of different lengths, padded for the compiled lookup
    (flexmb/compiled/forces.py): breakpoints ``X`` (+inf padding), values ``Y``, slopes ``S`` after each
    breakpoint (extension last)."""

    def __init__(self, curves):
        n, L = len(curves), max(c[0].size for c in curves)
        self.X = np.full((n, L), np.inf)
        self.Y = np.zeros((n, L))
        self.S = np.zeros((n, L))
        for i, (x, y, s) in enumerate(curves):
            m = x.size
            self.X[i, :m], self.Y[i, :m], self.S[i, :m] = x, y, s[:m]

    def value(self, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Curve value and slope of every row at ``v`` (n,), extension slope beyond the table (numpy; for
        post-processing, e.g. the peak crush force at the largest crush; runs use the compiled lookup)."""
        v = np.asarray(v, dtype=float)
        j = np.maximum(np.sum(self.X <= v[:, None], axis=1) - 1, 0)
        rows = np.arange(self.X.shape[0])
        X, Y, S = self.X[rows, j], self.Y[rows, j], self.S[rows, j]
        return Y + S * (v - X), S


# -- elements --------------------------------------------------------------------------------
class PlasticHinge(_PairForce):
    """Elastic-plastic rotational hinge about ``axis`` between two bodies (or sites).

    Args:
        axis: hinge axis (global, at the start); the rotation ``theta`` of b relative to a about
            it is measured from the initial configuration (Ambrosio 2002, eq. 6).
        curve: ``(alpha, M_y)``: yield moment (N m) against accumulated plastic rotation (rad),
            piecewise linear; ``alpha`` from 0, strictly increasing; ``M_y >= 0``; every slope
            above ``-k_elastic``. Beyond the table the last slope continues (a falling end stops
            at zero moment).
        k_elastic: elastic stiffness (N m/rad) of loading below yield, unloading and reloading.
        rate_factor: ``None`` or ``(C, p)`` or ``(C, p, rate_min)``: Cowper-Symonds factor
            ``1 + (|theta_dot|/C)^(1/p)`` (C in rad/s) on the moment while the hinge is loaded
            (``M theta_dot > 0``); below ``rate_min`` (default ``1e-4 C``) the power law is
            replaced by its chord through zero so that the derivative stays finite.

    Reversed loading: isotropic hardening -- the hinge yields at ``+-M_y(alpha)`` in both senses,
    ``alpha`` the rotation accumulated plastically in either sense.
    """

    kind = "plastic hinge"

    def __init__(self, body_a: Body, body_b: Body, axis, curve, k_elastic: float, rate_factor=None,
                 name: str | None = None):
        super().__init__(body_a, body_b, name)
        self.axis = unit(axis, "axis", self.owner)
        self.k_elastic = _number(k_elastic, "k_elastic (N m/rad)", self.owner, positive=True)
        self.curve = _curve(curve, self.owner, "plastic rotation (rad)", "yield moment (N m)",
                            min_slope=-self.k_elastic)
        self.rate_factor = None
        if rate_factor is not None:
            rf = tuple(rate_factor) if isinstance(rate_factor, (tuple, list)) else None
            if rf is None or len(rf) not in (2, 3):
                raise ModelError(f"{self.owner}: rate_factor must be (C, p) or (C, p, rate_min), got {rate_factor!r}")
            C = _number(rf[0], "rate_factor C (rad/s)", self.owner, positive=True)
            p = _number(rf[1], "rate_factor p", self.owner, positive=True)
            w0 = _number(rf[2], "rate_factor rate_min (rad/s)", self.owner, positive=True) if len(rf) == 3 else 1e-4 * C
            self.rate_factor = (C, p, w0)

    def measure_primitive(self) -> SpringPrimitive:
        """The relative rotation about the axis, as a measure (no stiffness of its own)."""
        f, g = perpendicular_pair(self.axis)
        return self._attached("angle", {"f_i": ("vector", f), "g_i": ("vector", g), "f_j": ("vector", f)},
                              0.0, 0.0, 0.0, self.owner)


class CrushElement(_PairForce):
    """Axial crush element between ``point_a`` on a and ``point_b`` on b.

    Args:
        curve: ``(delta, F)``: crush force (N) against crush ``delta = L0 - L`` (m), ``L0`` the
            initial distance; from (0, 0), ``delta`` strictly increasing, ``F >= 0``; beyond the
            table the last slope continues (a falling end stops at zero force).
        unloading_stiffness: ``k_u`` (N/m) of unloading and reloading below the largest crush
            reached; at least the steepest slope of the curve (else a cycle would create energy).

    The element only pushes: the force is ``max(0, ...)`` and zero once the points separate.
    """

    kind = "crush element"

    def __init__(self, body_a: Body, body_b: Body, *, point_a, point_b, curve, unloading_stiffness: float,
                 name: str | None = None):
        super().__init__(body_a, body_b, name)
        self.point_a = point3(point_a, "point_a", self.owner)
        self.point_b = point3(point_b, "point_b", self.owner)
        self.free_length = float(np.linalg.norm(self.point_b - self.point_a))
        if self.free_length < 1e-12:
            raise ModelError(f"{self.owner}: point_a and point_b coincide at {self.point_a.tolist()}; the crush "
                             "direction is undefined")
        self.unloading_stiffness = _number(unloading_stiffness, "unloading_stiffness (N/m)", self.owner, positive=True)
        self.curve = _curve(curve, self.owner, "crush (m)", "force (N)", max_slope=self.unloading_stiffness,
                            start_at_zero_y=True)

    def measure_primitive(self) -> SpringPrimitive:
        """The distance of the two points, as a measure (no stiffness of its own)."""
        return self._attached("length", {"u_i": ("point", self.point_a), "u_j": ("point", self.point_b)},
                              0.0, 0.0, self.free_length, self.owner)


# -- groups ----------------------------------------------------------------------------------
class _CrashGroup(ElementGroup):
    """Shared plumbing: the scalar measure (ScalarSpringGroup), state-free evaluation and accept.

    Energy (docs/theory-crash.md §4): the work of the element forces is booked whole as non-conservative
    (``power``, no ``potential``): the recoverable part depends on the plastic history, which moves only at
    accepted steps. ``elastic_energy`` and ``dissipation`` split it for reports."""

    measure_kind = ""
    family = "crash"
    probe_structure = False

    def __init__(self, elements, nq: int):
        self.elements = list(elements)
        self.n = len(self.elements)
        self.labels = [e.owner for e in self.elements]
        self.measure = ScalarSpringGroup(self.measure_kind, [e.measure_primitive() for e in self.elements], nq)
        self.gather, self.scatter = self.measure.gather, self.measure.scatter
        self.tables = _Tables([e.curve for e in self.elements])
        self.absorbed = np.zeros(self.n)     # work done on each element so far (J), trapezoid in the measure
        self._prev = None                    # (measure, load) at the last accepted state

    def _eval(self, qe, ve):
        """Measures (angle rad or length m) and their rates (n,)."""
        return self.measure.values(qe, ve)

    def _forces(self, qe, ve, coef):
        """Residual ``f grad x`` and Newton blocks ``cC C + cK K`` (or None) in one compiled call
        (``crash_kernel``: measure, law and the scalar-force helper)."""
        want = coef is not None
        cC, cK = (float(coef[1]), float(coef[2])) if want else (0.0, 0.0)
        m, T = self.measure, self.tables
        n, nx = self.gather.shape
        r = np.empty((n, nx))
        blk = np.empty((n, nx, nx)) if want else np.empty((1, nx, nx))
        bad = cf.crash_kernel(self.measure_kind == "angle", m.code, qe, ve, self.gather, m.vecs, m.shps, m.sides,
                              *m.n_modes, m.angle_ref, *self._law_arrays(), T.X, T.Y, T.S, cC, cK, want, r, blk)
        if bad >= 0:             # the measure or the law checks name the element
            self._law(*self._eval(qe, ve))
            raise NonFiniteError(f"{self.elements[bad % n].owner}: the element force is not finite")
        return r, (blk if want else None)

    def residual(self, st: EvalState, coef=None):
        """``(r, blocks)``: the element forces on the measure's coordinates and ``cC C + cK K`` (or None)."""
        return self._forces(st.qe, st.ve, coef)

    def _check(self, arr, what):
        if not np.all(np.isfinite(arr)):
            k = int(np.argmax(~np.isfinite(arr)))
            raise NonFiniteError(f"{self.elements[k].owner}: {what} is {arr[k]}")

    def _law_at(self, st: EvalState):
        """Measures, rates and law at ``st`` under the current history, evaluated once per state object
        (``power`` then ``accept`` at a step's end)."""
        if self._memo is None or self._memo[0] is not st:
            x, xd = self.measure.values_at(st)
            self._memo = (st, x, xd, self._law(x, xd))
        return self._memo[1:]

    _memo = None

    def power(self, st: EvalState) -> float:
        """Power of the element forces on the bodies (W) under the current history: ``-(dV_elastic/dt) +
        dissipation``; the energy balance books it as non-conservative power (docs/theory-crash.md §4)."""
        _, xd, law = self._law_at(st)
        return -float(np.sum(self._work_rate(law, xd)))

    def accept(self, st: EvalState) -> None:
        """Update the history at an accepted state: the plastic state, the absorbed work (trapezoid in the
        measure) and the unwrapping reference of angles."""
        x, xd, law = self._law_at(st)
        m, load = self._signed(x, law)
        if self._prev is not None:
            self.absorbed += 0.5 * (self._prev[1] + load) * (m - self._prev[0])
        self._update(x, law)
        self.measure.accept(st)          # unwrapping reference of angles
        m2, load2 = self._signed(x, self._law(x, xd))
        self._prev = (m2, load2)
        self._memo = None

    # -- history protocol (docs/guide.md §5) ---------------------------------------------------------
    _STATE: tuple = ()     # names of the per-element history arrays of the subclass, all (n,)

    def start(self, st: EvalState) -> None:
        """Clean history at the start of a run: no plastic deformation, nothing absorbed."""
        for name in self._STATE:
            setattr(self, name, np.zeros(self.n))
        self.absorbed = np.zeros(self.n)
        self._prev = None
        self._memo = None
        self.measure.start(st)

    def history(self) -> np.ndarray:
        """``[state arrays of the subclass, absorbed, has_prev, prev measure, prev load, unwrapping
        reference]``: one flat vector, fixed size per group."""
        has_prev = self._prev is not None
        prev = self._prev if has_prev else (np.zeros(self.n), np.zeros(self.n))
        return np.concatenate([getattr(self, name) for name in self._STATE]
                              + [self.absorbed, [float(has_prev)], prev[0], prev[1], self.measure.history()])

    def set_history(self, x: np.ndarray) -> None:
        """Restore a vector from :meth:`history`."""
        n, k = self.n, len(self._STATE)
        x = np.asarray(x, dtype=float).reshape(-1)
        size = (k + 3) * n + 1
        if x.size < size:
            raise ModelError(f"{self.elements[0].kind} group: a history vector of {x.size} values for at least "
                             f"{size} expected")
        for i, name in enumerate(self._STATE):
            setattr(self, name, x[i * n:(i + 1) * n].copy())
        self.absorbed = x[k * n:(k + 1) * n].copy()
        has_prev = x[(k + 1) * n] != 0.0
        rest = x[(k + 1) * n + 1:]
        self._prev = (rest[:n].copy(), rest[n:2 * n].copy()) if has_prev else None
        self._memo = None
        self.measure.set_history(rest[2 * n:])

    def dissipation(self, qe, ve) -> float:
        """Dissipation rate (W, <= 0 while the element deforms plastically) under the current history; with
        the rate of :meth:`elastic_energy` it makes up :meth:`power`."""
        x, xd = self._eval(qe, ve)
        return -float(np.sum(self._dissipation(self._law(x, xd), xd)))

    def elastic_energy(self, qe, ve) -> np.ndarray:
        """Recoverable energy per element (J)."""
        x, xd = self._eval(qe, ve)
        return self._elastic(self._law(x, xd))


class PlasticHingeGroup(_CrashGroup):
    """All plastic hinges with the same modal counts: compiled measure, law and force calls."""

    measure_kind = "angle"
    _STATE = ("theta_p", "alpha")

    def __init__(self, hinges, nq: int):
        super().__init__(hinges, nq)
        self.k = np.array([h.k_elastic for h in self.elements])
        self.P = self.tables.Y + self.k[:, None] * self.tables.X      # breakpoints of M_y(a) + k a
        self.theta_p = np.zeros(self.n)     # plastic rotation (signed, rad)
        self.alpha = np.zeros(self.n)       # accumulated plastic rotation (rad)
        rf = [h.rate_factor for h in self.elements]
        self.has_rate = np.array([r is not None for r in rf])
        self.C, self.p, self.w0 = (np.array([r[i] if r is not None else 1.0 for r in rf]) for i in range(3))

    def _law(self, theta, thd):
        """(M, dM/dtheta, dM/dtheta_dot, M_s, K_t, alpha', R) at rotations ``theta`` (rad) and rates (rad/s)
        from the current history (return mapping and rate factor, theory §1; one compiled call)."""
        T = self.tables
        out = tuple(np.empty(self.n) for _ in range(7))
        cf.hinge_law(np.ascontiguousarray(theta, dtype=float), np.ascontiguousarray(thd, dtype=float), self.theta_p,
                     self.alpha, self.k, T.X, T.Y, T.S, self.P, self.has_rate, self.C, self.p, self.w0, *out)
        self._check(out[0], "the hinge moment")
        return out

    def _law_arrays(self):
        """Arguments of ``crash_kernel``: the hinge parameters and history, empty crush ones."""
        e = np.zeros(0)
        return (self.theta_p, self.alpha, self.k, self.P, self.has_rate, self.C, self.p, self.w0, e, e, e)

    def static(self, theta):
        """Rate-independent moment ``M_s``, its slope ``dM_s/dtheta`` and the plastic state
        ``alpha'`` at rotations ``theta`` from the current history (return mapping, theory §1)."""
        law = self._law(theta, np.zeros(self.n))
        return law[3], law[4], law[5]

    def moments(self, qe, ve) -> np.ndarray:
        """Hinge moment (N m), positive when it resists a positive rotation of b relative to a."""
        x, thd = self._eval(qe, ve)
        return self._law(x, thd)[0]

    def rotations(self, qe, ve) -> np.ndarray:
        """Relative rotation theta (rad) from the initial configuration."""
        return self._eval(qe, ve)[0]

    def _signed(self, theta, law):
        return theta, law[0]

    def _update(self, theta, law):
        Ms, a_new = law[3], law[5]
        self.theta_p = theta - Ms / self.k
        self.alpha = a_new

    def _work_rate(self, law, thd):
        return law[0] * thd

    def _elastic(self, law):
        return 0.5 * law[3] ** 2 / self.k

    def _dissipation(self, law, thd):
        Ms, Kt, R = law[3], law[4], law[6]
        return Ms * thd * (1.0 - Kt / self.k) + (R - 1.0) * Ms * thd


class CrushGroup(_CrashGroup):
    """All crush elements with the same modal counts: compiled measure, law and force calls."""

    measure_kind = "length"
    _STATE = ("max_crush",)

    def __init__(self, elements, nq: int):
        super().__init__(elements, nq)
        self.L0 = np.array([e.free_length for e in self.elements])
        self.ku = np.array([e.unloading_stiffness for e in self.elements])
        self.max_crush = np.zeros(self.n)    # largest crush reached at an accepted state (m)

    def _law_arrays(self):
        """Arguments of ``crash_kernel``: empty hinge ones, the crush parameters and history."""
        e = np.zeros(0)
        return (e, e, e, np.zeros((0, 1)), np.zeros(0, dtype=bool), e, e, e, self.L0, self.max_crush, self.ku)

    def _law(self, L, Ld):
        """(F, dF/d delta, delta) at lengths ``L`` (m) from the current history (theory §2; one compiled call)."""
        T = self.tables
        F, K, d = np.empty(self.n), np.empty(self.n), np.empty(self.n)
        cf.crush_law(np.ascontiguousarray(L, dtype=float), self.L0, self.max_crush, self.ku, T.X, T.Y, T.S, F, K, d)
        self._check(F, "the crush force")
        return F, K, d

    def forces(self, qe, ve) -> np.ndarray:
        """Crush force (N, >= 0, pushing the points apart)."""
        x, _ = self._eval(qe, ve)
        return self._law(x, None)[0]

    def crush(self, qe, ve) -> np.ndarray:
        """Crush ``L0 - L`` (m)."""
        return self.L0 - self._eval(qe, ve)[0]

    def _signed(self, L, law):
        return law[2], law[0]

    def _update(self, L, law):
        self.max_crush = np.maximum(self.max_crush, law[2])

    def _work_rate(self, law, Ld):
        return -law[0] * Ld            # F * delta_dot

    def _elastic(self, law):
        return 0.5 * law[0] ** 2 / self.ku

    def _dissipation(self, law, Ld):
        F, K = law[0], law[1]
        return -F * Ld * (1.0 - K / self.ku)


def crash_groups(forces, nq: int) -> list:
    """The groups of all crash elements in ``forces``: one per element type and pair
    of modal counts (plastic hinges: ``r = M dtheta/dx``, blocks ``cC C + cK K``; crush elements:
    ``r = -F dL/dx``, blocks ``cK K``, the law has no rate term)."""
    out = []
    for cls, group in ((PlasticHinge, PlasticHingeGroup), (CrushElement, CrushGroup)):
        els = [f for f in forces if isinstance(f, cls)]
        keys = sorted({(f.body_a.n_modes, f.body_b.n_modes) for f in els})
        out += [group([f for f in els if (f.body_a.n_modes, f.body_b.n_modes) == k], nq) for k in keys]
    return out


def build_groups(forces, nq: int, st: EvalState) -> list:
    """The crash groups of a model (flexmb/groups.py ``FAMILY_MODULES``): :func:`crash_groups`."""
    return crash_groups(forces, nq)


# -- prescribed deceleration pulses ------------------------------------------------------------
class TrianglePulse(TimeFunction):
    """Displacement ``s(t)`` of a sled whose deceleration is a triangular pulse (docs §3).

    Deceleration ``a_p(tau)``, ``tau = t - t0``: rises linearly from 0 to ``A = peak_g g0`` at
    ``t_peak``, falls linearly to 0 at ``duration``, zero outside. The sled moves along +s at
    ``v0`` before the pulse: ``s = x0 + v0 tau - I2(tau)``, ``s' = v0 - I1(tau)``,
    ``s'' = -a_p(tau)`` with ``I1``, ``I2`` the closed-form first and second integrals of
    ``a_p``; the velocity change is ``A duration / 2``.
    """

    def __init__(self, peak_g: float, duration: float, t_peak: float | None = None, v0: float | None = None,
                 x0: float = 0.0, t0: float = 0.0, name: str | None = None):
        owner = "triangular pulse" + (f" {name!r}" if name else "")
        self.peak_g = _number(peak_g, "peak_g (g)", owner, positive=True)
        self.duration = _number(duration, "duration (s)", owner, positive=True)
        self.t_peak = 0.5 * self.duration if t_peak is None else _number(t_peak, "t_peak (s)", owner, nonneg=True)
        if self.t_peak > self.duration:
            raise ModelError(f"{owner}: t_peak = {self.t_peak} s lies after the end of the pulse ({self.duration} s)")
        self.peak = self.peak_g * G0
        self.delta_v = 0.5 * self.peak * self.duration
        self.v0 = self.delta_v if v0 is None else _number(v0, "v0 (m/s)", owner)
        self.x0 = _number(x0, "x0 (m)", owner)
        self.t0 = _number(t0, "t0 (s)", owner)
        super().__init__(self._s, self._sd, self._sdd,
                         name=name or f"triangular pulse {self.peak_g:g} g / {self.duration:g} s")

    def deceleration(self, t: float) -> float:
        """``a_p`` (m/s^2, positive = slowing a sled moving along +s)."""
        A, tp, T, tau = self.peak, self.t_peak, self.duration, t - self.t0
        if tau <= 0.0 or tau >= T:
            return 0.0
        return A * tau / tp if tau <= tp else A * (T - tau) / (T - tp)

    def _I1(self, tau: float) -> float:
        A, tp, T = self.peak, self.t_peak, self.duration
        if tau <= 0.0:
            return 0.0
        if tau <= tp:
            return A * tau * tau / (2.0 * tp)
        if tau < T:
            return A * tp / 2.0 + A * ((T - tp) ** 2 - (T - tau) ** 2) / (2.0 * (T - tp))
        return A * T / 2.0

    def _I2(self, tau: float) -> float:
        A, tp, T = self.peak, self.t_peak, self.duration
        if tau <= 0.0:
            return 0.0
        if tau <= tp:
            return A * tau ** 3 / (6.0 * tp)
        if tau < T:
            u = tau - tp
            return (A * tp * tp / 6.0 + A * tp / 2.0 * u
                    + A / (2.0 * (T - tp)) * ((T - tp) ** 2 * u + ((T - tau) ** 3 - (T - tp) ** 3) / 3.0))
        return self._I2_end() + A * T / 2.0 * (tau - T)

    def _I2_end(self) -> float:
        # I2(T) = int_0^T (T - u) a_p(u) du = (A T / 2) (T - (tp + T)/3): area times centroid distance
        return self.peak * self.duration * (2.0 * self.duration - self.t_peak) / 6.0

    def _s(self, t):
        tau = t - self.t0
        return self.x0 + self.v0 * tau - self._I2(tau)

    def _sd(self, t):
        return self.v0 - self._I1(t - self.t0)

    def _sdd(self, t):
        return -self.deceleration(t)


def triangular_pulse(peak_g: float, duration: float, t_peak: float | None = None, v0: float | None = None,
                     x0: float = 0.0, t0: float = 0.0, name: str | None = None) -> TrianglePulse:
    """Sled displacement (m) for a triangular deceleration pulse, a :class:`~flexmb.TimeFunction`
    with exact rate (m/s) and acceleration (m/s^2).

    ``peak_g`` peak deceleration (g, ``g0 = 9.80665 m/s^2``), ``duration`` (s), ``t_peak`` time of
    the peak after ``t0`` (default: ``duration/2``, isosceles), ``v0`` sled velocity before the
    pulse (default: the velocity change ``peak_g g0 duration / 2``, so the sled ends at rest),
    ``x0`` displacement at ``t0``. Use it as ``Driver(track, displacement=pulse)`` on a prismatic
    track, or ``Driver(sled, coordinate="x", value=triangular_pulse(..., x0=x_sled))``.
    """
    return TrianglePulse(peak_g, duration, t_peak, v0, x0, t0, name)


#: The FAR seat tests of 14 CFR 23.562(b), 25.562(b) and 27.562(b) by ``(part, test, seats)``, each as (minimum
#: velocity change (ft/s), minimum peak floor deceleration (g), latest time of the peak (s)); Lankarani,
#: Olivares & Nagarajan 2002, Fig. 1 and refs 3-5.
FAR_562 = {
    (23, 1, "first row"): (31.0, 19.0, 0.05), (23, 1, "other"): (31.0, 15.0, 0.06),
    (23, 2, "first row"): (42.0, 26.0, 0.05), (23, 2, "other"): (42.0, 21.0, 0.06),
    (25, 1, "all"): (35.0, 14.0, 0.08), (25, 2, "all"): (44.0, 16.0, 0.09),
    (27, 1, "all"): (30.0, 30.0, 0.031), (27, 2, "all"): (42.0, 18.4, 0.071),
}


def far_562_pulse(part: int, test: int, seats: str = "all", v0: float | None = None, x0: float = 0.0,
                  t0: float = 0.0) -> TrianglePulse:
    """The ideal triangular pulse of a FAR Part 23/25/27 dynamic seat test: peak deceleration and
    rise time as in :data:`FAR_562`, duration ``2 dv / (peak g0)`` so that the velocity change is
    the required minimum (``seats``: "first row" or "other" for Part 23, "all" otherwise)."""
    key = (int(part), int(test), seats)
    if key not in FAR_562:
        raise ModelError(f"far_562_pulse: no test {key}; known: {sorted(FAR_562, key=str)}")
    dv_fps, g, tr = FAR_562[key]
    dv = dv_fps * FT
    return TrianglePulse(g, 2.0 * dv / (g * G0), tr, v0, x0, t0, name=f"FAR {part}.562 test {test} ({seats})")
