"""A massless, tension-only rope from a winch drum over sheaves to its end (docs/theory-ropes.md §9).

:class:`SheaveRope` is the rope of a crane or dragline reduced to what its ends and sheaves feel: a straight
free span between consecutive items of its path (a point on a body, a :class:`Sheave`; between two coplanar
sheaves their common tangent), wrapped around each sheave on a circular arc, of total length

    L(q) = sum of free spans (point to tangent point) + sum of R theta (wrap arcs),

and an axial law that only pulls,

    ell(t) = ell0 + p(t)        unstretched length; p = rope paid out at the start end (the drum) since t = 0,
    delta = L - ell,  T = (EA/ell) (delta + tau delta_dot)  if delta > 0 and that is > 0,  else T = 0,

(Kelvin-Voigt in the rope's mean strain delta/ell; EA axial stiffness in N, tau a damping time in s). The
generalized force is ``Q = -T dL/dq``: every point end is pulled along its span towards the tangent point, and
every sheave by T (e_in + e_out), the resultant of the two spans leaving it (a massless rope over a
frictionless sheave has the same tension on both sides; the envelope property dL/dP = unit span vector is derived
in docs/theory-ropes.md §9 and checked in tests/test_sheave_rope.py). The sheaves do not turn
(no rotational inertia, no friction: the rope slides over them); the rope has no mass, so no sag and no waves.

Geometry of a span from a point P to a sheave (centre C, unit axis n, radius R), all body-fixed: with
``d = P - C`` and its components (x, y, z) on an in-plane frame (e1, e2) and n of the sheave's body,

    span = sqrt(|d|^2 - R^2),   tangent angle = atan2(y, x) + s acos(R / rho),   rho = sqrt(x^2 + y^2),

which is exact for P in the sheave plane and keeps ``|d|^2 - R^2`` out of it (a fleet angle; the wrap is
measured in the sheave plane). The value and its first and second derivatives are evaluated in a compiled
kernel (flexmb/compiled/sheave_rope.py) for all ropes in one call, with the exact Newton blocks.

The energy balance closes: the potential ``EA delta^2 / (2 ell)`` (delta > 0) is a group potential, and the group
power is the damping power plus the explicit time rate of the potential, the work of the drum
(``SheaveRope.values(result)["drum_power"]``).
"""
from __future__ import annotations

import math

import numpy as np

from .. import checks
from .. import rotations as rot
from ..bodies.base import Body, Ground
from ..bodies.rigid import RigidBody
from ..errors import ModelError
from ..forces.base import ForceElement
from ..groups import ElementGroup, EvalState
from ..timefunctions import as_time_function

__all__ = ["Sheave", "SheaveRope", "SheaveRopeGroup", "build_groups"]

# second derivatives of A(p) (quadratic in p): S[a, b, k, i] = d^2 A_ki / dp_a dp_b (flexmb/rotations.py, _C_H)
_C = rot._C_H.reshape(4, 4, 9)
_S = np.ascontiguousarray((_C + _C.transpose(1, 0, 2)).reshape(4, 4, 3, 3))


class Sheave:
    """A sheave (pulley) of a :class:`SheaveRope`: a circle of ``radius`` (m, the radius of the rope's centre
    line) about ``center`` (global point at the initial configuration, m) in the plane normal to ``axis``, fixed
    on ``body`` (``system.ground``, a boom, a hanger). ``sense`` = +1 when the rope, followed from its start (the
    drum) to its end, runs counter-clockwise about ``axis`` (right-hand rule), -1 clockwise. The sheave does not
    turn: the rope slides over it without friction."""

    def __init__(self, body: Body, center, radius: float, *, axis=(0.0, 0.0, 1.0), sense: int = 1,
                 name: str = "sheave"):
        self.name = name
        owner = f"sheave {name!r}"
        if not isinstance(body, (RigidBody, Ground)):
            raise ModelError(f"{owner}: body must be a RigidBody or system.ground, got {body!r}")
        self.body = body
        self.center = checks.vector(center, "center", owner)
        self.radius = checks.scalar(radius, "radius", owner, sign="positive", unit=" m")
        a = checks.vector(axis, "axis", owner)
        na = float(np.linalg.norm(a))
        if na == 0.0:
            raise ModelError(f"{owner}: the axis is the zero vector")
        self.axis = a / na
        if sense not in (1, -1):
            raise ModelError(f"{owner}: sense must be +1 (counter-clockwise about the axis) or -1, got {sense!r}")
        self.sense = int(sense)

    def __repr__(self) -> str:
        return f"<Sheave {self.name!r} R={self.radius} m>"


def _as_end(end, what: str, owner: str) -> tuple[Body, np.ndarray]:
    try:
        body, point = end
    except (TypeError, ValueError):
        raise ModelError(f"{owner}: {what} must be a (body, point) pair, got {end!r}") from None
    if not isinstance(body, (RigidBody, Ground)):
        raise ModelError(f"{owner}: the body of {what} must be a RigidBody or system.ground (points of flexible "
                         f"bodies are not supported), got {body!r}")
    return body, checks.vector(point, what, owner)


def _plane(axis: np.ndarray, d: np.ndarray) -> tuple[np.ndarray, float, float, float]:
    """In-plane unit vector of d about ``axis``, its in-plane length rho, out-of-plane z, and |d|."""
    z = float(d @ axis)
    dp = d - z * axis
    rho = float(np.linalg.norm(dp))
    return (dp / rho if rho > 0 else dp), rho, z, float(np.linalg.norm(d))


class SheaveRope(ForceElement):
    """A massless tension-only rope from a drum over sheaves to its end (module doc; docs/theory-ropes.md §9).

    Args:
        start: ``(body, point)``, the rope's start: the drum's tangent point (global, m, at the initial
            configuration), fixed on body (a house, the ground); the rope is paid out here.
        end: ``(body, point)``, the rope's end (a coupler's socket, a clevis), global point (m).
        via: what the rope runs over, in order from start to end: :class:`Sheave` objects and ``(body, point)``
            pairs (a frictionless eye the rope slides through); two sheaves in a row must lie in one plane with
            their axes in the same direction (their common tangent is the span between them).
        EA: axial stiffness (N): Young's modulus of the rope times its metallic area.
        damping_time: Kelvin-Voigt time ``tau`` (s) of the axial law ``T = (EA/ell)(delta + tau delta_dot)``.
        payout: rope paid out at the start since t = 0, ``p(t)`` (m; negative: reeled in), a TimeFunction (e.g.
            :func:`flexmb.payout_profile`), a callable or a number; ``p(0) = 0``.
        length: unstretched length ``ell0`` (m) at t = 0; default: the rope's length at the initial
            configuration ``L0`` shortened to carry ``initial_tension``, ``ell0 = L0 / (1 + T0/EA)``.
        initial_tension: ``T0`` (N, >= 0), the tension of the rope as drawn when ``length`` is not given (0: taut
            with no tension; a static solve needs a taut rope at its start to see its stiffness).
        name: element name.
    """

    kind = "sheave rope"

    def __init__(self, start, end, via=(), *, EA: float, damping_time: float = 0.0, payout=0.0,
                 length: float | None = None, initial_tension: float = 0.0, name: str | None = None):
        super().__init__(name)
        owner = self.owner
        self.start = _as_end(start, "start", owner)
        self.end = _as_end(end, "end", owner)
        self.path = [self.start]
        for k, it in enumerate(via):
            self.path.append(it if isinstance(it, Sheave) else _as_end(it, f"via[{k}]", owner))
        self.path.append(self.end)
        self.sheaves = [it for it in self.path if isinstance(it, Sheave)]
        self.EA = checks.scalar(EA, "EA", owner, sign="positive", unit=" N")
        self.damping_time = checks.scalar(damping_time, "damping_time", owner, sign="non-negative", unit=" s")
        self.payout = as_time_function(payout, f"{owner} payout")
        p0 = self.payout.value(0.0)
        if abs(p0) > 1e-12:
            raise ModelError(f"{owner}: payout(0) must be 0 (rope paid out since the start), got {p0:g} m")
        self._build_terms()
        self.initial_length = self._exact_length()
        self.constant = self.initial_length - float(sum(self._term_values()))
        T0 = checks.scalar(initial_tension, "initial_tension", owner, sign="non-negative", unit=" N")
        if length is not None and T0 > 0.0:
            raise ModelError(f"{owner}: give length or initial_tension, not both")
        self.free_length = (self.initial_length / (1.0 + T0 / self.EA) if length is None else
                            checks.scalar(length, "length", owner, sign="positive", unit=" m"))

    # -- geometry at the initial configuration -----------------------------------------------------------------
    def _build_terms(self) -> None:
        """The terms of L (flexmb/compiled/sheave_rope.py): for each span, (X, u_X, Y, u_c, E, a, b, c) with
        body-fixed data (module doc; docs/theory-ropes.md §9). The constant of L is set in ``__init__`` from the
        exact initial length."""
        owner = self.owner
        path = self.path
        terms = []
        for k in range(len(path) - 1):
            a, b = path[k], path[k + 1]
            if not isinstance(a, Sheave) and not isinstance(b, Sheave):
                (X, P), (Y, Pb) = a, b
                if np.linalg.norm(P - Pb) < 1e-9:
                    raise ModelError(f"{owner}: span {k} has zero length")
                terms.append((X, X.to_local_point(P), Y, Y.to_local_point(Pb), np.eye(3), 0.0, 0.0, 1.0))
                continue
            if isinstance(a, Sheave) and isinstance(b, Sheave):
                self._check_coplanar(a, b)
                D = b.center - a.center
                dr = a.sense * a.radius - b.sense * b.radius
                if _plane(a.axis, D)[1] <= abs(dr) * (1.0 + 1e-9):
                    raise ModelError(f"{owner}: sheaves {a.name!r} and {b.name!r} overlap (no common tangent for "
                                     "their senses)")
                terms.append((b.body, b.body.to_local_point(b.center), a.body, a.body.to_local_point(a.center),
                              self._frame(a, D), dr, a.sense * a.radius, 1.0))
                terms.append((a.body, a.body.to_local_point(a.center), b.body, b.body.to_local_point(b.center),
                              self._frame(b, -D), 0.0, -b.sense * b.radius, 0.0))
                continue
            sh, (X, P), incoming = (b, a, True) if isinstance(b, Sheave) else (a, b, False)
            _, rho, _, _ = _plane(sh.axis, P - sh.center)
            if rho <= sh.radius * (1.0 + 1e-9):
                raise ModelError(f"{owner}: the point {P.tolist()} is within the radius {sh.radius} m of sheave "
                                 f"{sh.name!r} (in its plane: {rho:.4g} m from the centre); the rope is off the sheave")
            sigma = -sh.sense if incoming else sh.sense
            terms.append((X, X.to_local_point(P), sh.body, sh.body.to_local_point(sh.center),
                          self._frame(sh, P - sh.center), sh.radius, sigma * sh.radius, 1.0))
        self.terms = terms

    @staticmethod
    def _frame(sh: Sheave, d: np.ndarray) -> np.ndarray:
        """Rows e1, e2, n in the sheave body's frame, e1 along the in-plane part of ``d`` (global)."""
        e1 = _plane(sh.axis, d)[0]
        n = sh.axis
        return np.array([sh.body.to_local_vector(e1), sh.body.to_local_vector(np.cross(n, e1)),
                         sh.body.to_local_vector(n)])

    def _check_coplanar(self, a: Sheave, b: Sheave) -> None:
        if float(a.axis @ b.axis) < 1.0 - 1e-9 or abs(float(a.axis @ (b.center - a.center))) > 1e-9 * (
                1.0 + np.linalg.norm(b.center - a.center)):
            raise ModelError(f"{self.owner}: sheaves {a.name!r} and {b.name!r} follow each other but are not in one "
                             "plane with axes in the same direction (a span between two sheaves needs that)")

    def _exact_length(self) -> float:
        """Length (m) of the rope at the initial configuration by plane geometry: straight spans tangent to the
        sheaves, arcs R theta with the wrap theta in (0, 2 pi) (ModelError otherwise)."""
        path = self.path
        n_items = len(path)
        th_in, th_out = {}, {}
        total = 0.0

        def basis(sh):
            n = sh.axis
            e1 = np.eye(3)[int(np.argmin(np.abs(n)))]
            e1 = e1 - (e1 @ n) * n
            e1 /= np.linalg.norm(e1)
            return e1, np.cross(n, e1)

        def ang(sh, v):
            e1, e2 = basis(sh)
            return math.atan2(float(v @ e2), float(v @ e1))

        for k in range(n_items - 1):
            a, b = path[k], path[k + 1]
            if not isinstance(a, Sheave) and not isinstance(b, Sheave):
                total += float(np.linalg.norm(b[1] - a[1]))
            elif isinstance(a, Sheave) and isinstance(b, Sheave):
                D = b.center - a.center
                e1, e2 = basis(a)
                Dx, Dy = float(D @ e1), float(D @ e2)
                dist = math.hypot(Dx, Dy)
                dr = a.sense * a.radius - b.sense * b.radius
                phi = math.atan2(Dy, Dx) + math.asin(dr / dist)
                m = math.sin(phi) * e1 - math.cos(phi) * e2          # the travel direction turned by -90 deg
                th_out[k] = ang(a, a.sense * m)
                th_in[k + 1] = ang(b, b.sense * m)
                total += math.sqrt(dist * dist - dr * dr)
            else:
                sh, (_, P), incoming = (b, a, True) if isinstance(b, Sheave) else (a, b, False)
                d = P - sh.center
                _, rho, _, nd = _plane(sh.axis, d)
                beta = math.acos(sh.radius / rho)
                alpha = ang(sh, d)
                if incoming:
                    th_in[k + 1] = alpha + sh.sense * beta
                else:
                    th_out[k] = alpha - sh.sense * beta
                total += math.sqrt(nd * nd - sh.radius ** 2)
        for k in range(1, n_items - 1):
            sh = path[k]
            if not isinstance(sh, Sheave):
                continue
            theta = (sh.sense * (th_out[k] - th_in[k])) % (2.0 * math.pi)
            if not 1e-6 < theta < 2.0 * math.pi - 1e-6:
                raise ModelError(f"{self.owner}: the rope wraps sheave {sh.name!r} by {theta:.3g} rad at the start "
                                 "(it must touch it: 0 < wrap < 2 pi; check the sense)")
            total += sh.radius * theta
        return total

    def _term_values(self) -> list[float]:
        """The terms' values at the initial configuration (the formula of flexmb/compiled/sheave_rope.py)."""
        out = []
        for X, ux, Y, uc, E, a, b, c in self.terms:
            rX, AX = X.initial_frame()
            rY, AY = Y.initial_frame()
            xi = E @ (AY.T @ (rX + AX @ ux - rY) - uc)
            rho = math.hypot(xi[0], xi[1])
            f = c * math.sqrt(max(float(xi @ xi) - a * a, 0.0))
            if a != 0.0:
                f += a * math.asin(a / rho)
            if b != 0.0:
                f += b * math.atan2(xi[1], xi[0])
            out.append(f)
        return out

    @property
    def bodies(self) -> tuple:
        out = []
        for b in [it.body if isinstance(it, Sheave) else it[0] for it in self.path]:
            if not any(b is o for o in out):
                out.append(b)
        return tuple(out)

    def unstretched_length(self, t) -> np.ndarray:
        """``ell(t) = ell0 + p(t)`` (m) at times ``t`` (s)."""
        return self.free_length + np.array([self.payout.value(float(x)) for x in np.atleast_1d(t)])

    # -- results ----------------------------------------------------------------------------------------------
    def values(self, result) -> dict:
        """At every saved row of ``result``: ``length`` L (m), ``tension`` T (N, >= 0), ``stretch`` delta (m),
        ``clearance`` (m, the smallest in-plane distance of a point end outside a sheave rim), ``drum_power``
        (W, the drum's power on the system, module doc), ``speed`` L_dot (m/s). The payout is taken at each row's
        ``t`` (s); a ``fm.static_equilibrium`` result's ``t`` is its load factor, so read only ropes with no payout
        there (the static solve itself holds the payout at its time ``t``)."""
        asm = result._model("SheaveRope.values")
        groups = [g for g in asm.families if isinstance(g, SheaveRopeGroup)]
        if not groups or not any(e is self for e in groups[0].elements):
            raise ModelError(f"{self.owner} is not part of the simulated system")
        g = groups[0]
        i = next(k for k, e in enumerate(g.elements) if e is self)
        out = {k: np.empty(result.t.size) for k in ("length", "speed", "tension", "stretch", "clearance",
                                                      "drum_power")}
        for row, (t, q, v) in enumerate(zip(result.t, result.q, result.v)):
            p = g.evaluate(asm.eval_state(q, v, np.zeros(asm.nq), float(t)), float(t))[2][i]
            out["length"][row], out["speed"][row], out["tension"][row] = p[0], p[1], p[2]
            out["stretch"][row], out["clearance"][row] = p[4], p[5]
            out["drum_power"][row] = g.drum_power_of(p, i, float(t))
        return out

    def tension(self, result) -> np.ndarray:
        """Rope tension T (N, >= 0) at every saved row of ``result``."""
        return self.values(result)["tension"]


class SheaveRopeGroup(ElementGroup):
    """All :class:`SheaveRope` elements of a model, evaluated in one compiled call (flexmb/compiled/sheave_rope.py).

    Instance coordinates: 7 per body of the rope (position, Euler parameters), padded with the ground to the
    largest rope. History: the time (s) of the last accepted state, at which :meth:`potential` takes the
    unstretched lengths (``Assembly.potential_energy`` passes no time)."""

    probe_structure = False
    family = "sheave ropes"

    def __init__(self, elements: list[SheaveRope], nq: int):
        self.elements = elements
        nb = max(len(e.bodies) for e in elements)
        K = 7 * nb
        scatter = np.full((len(elements), K), -1, dtype=np.int64)
        tbx, tby, tux, tuc, tE, tR, tsig, tspan, start = [], [], [], [], [], [], [], [], [0]
        for n, e in enumerate(elements):
            bodies = list(e.bodies)
            for j, b in enumerate(bodies):
                if not isinstance(b, Ground):
                    scatter[n, 7 * j:7 * j + 7] = b.offset + np.arange(7)

            def idx(b):
                return next(j for j, o in enumerate(bodies) if o is b)
            for X, ux, Y, uc, E, R, sigma, span in e.terms:
                tbx.append(idx(X))
                tby.append(idx(Y))
                tux.append(ux)
                tuc.append(uc)
                tE.append(E)
                tR.append(R)
                tsig.append(sigma)
                tspan.append(span)
            start.append(len(tbx))
        self.scatter = scatter
        self.gather = np.ascontiguousarray(np.where(scatter >= 0, scatter, nq + np.tile(np.arange(7), nb)))
        self.term_start = np.array(start, dtype=np.int64)
        self.tbx, self.tby = np.array(tbx, dtype=np.int64), np.array(tby, dtype=np.int64)
        self.tux, self.tuc = np.ascontiguousarray(tux, dtype=float), np.ascontiguousarray(tuc, dtype=float)
        self.tE = np.ascontiguousarray(tE, dtype=float)
        self.tR, self.tsig = np.array(tR, dtype=float), np.array(tsig, dtype=float)
        self.tspan = np.array(tspan, dtype=float)
        self.const = np.array([e.constant for e in elements])
        self.EA = np.array([e.EA for e in elements])
        self.tau = np.array([e.damping_time for e in elements])
        self.ell0 = np.array([e.free_length for e in elements])
        self.labels = [e.owner for e in elements]
        self._t_cache, self._ell, self._ell_dot = None, None, None
        self._t_hist = 0.0
        n = len(elements)
        self._r, self._parts, self._g = np.empty((n, K)), np.empty((n, 6)), np.empty((n, K))
        self._blk = np.empty((n, K, K))
        from ..compiled import sheave_rope as kernels      # numba: loaded when a model with sheave ropes compiles
        self._kernels = kernels

    def _lengths(self, t: float) -> tuple[np.ndarray, np.ndarray]:
        """Unstretched lengths ell(t) (m) and their rates (m/s), computed once per time."""
        if self._t_cache != t:
            ell = self.ell0 + np.array([e.payout.value(t) for e in self.elements])
            if np.any(ell <= 0.0):
                k = int(np.argmin(ell))
                raise ModelError(f"{self.labels[k]}: the unstretched length reached {ell[k]:.4g} m at t = {t:.6g} s "
                                 "(reeled in more than the rope)")
            self._ell = ell
            self._ell_dot = np.array([e.payout.rate(t) for e in self.elements])
            self._t_cache = t
        return self._ell, self._ell_dot

    def evaluate(self, st: EvalState, t: float, coef=None):
        """Residual (n, K), blocks (n, K, K) or None, parts (n, 6) (L, L_dot, T, T_el, delta, clearance) at the
        unstretched lengths of time ``t``."""
        ell, ell_dot = self._lengths(t)
        want = coef is not None
        cK, cC = (float(coef[2]), float(coef[1])) if want else (0.0, 0.0)
        blk = self._blk if want else np.empty((0, 1, 1))
        self._kernels.rope_kernel(st.qe, st.ve, self.gather, self.term_start, self.tbx, self.tby, self.tux,
                                  self.tuc, self.tE, self.tR, self.tsig, self.tspan, _S, self.const, ell, ell_dot,
                                  self.EA, self.tau, cK, cC, want, self._r, blk, self._parts, self._g)
        return self._r.copy(), (blk.copy() if want else None), self._parts.copy()

    def residual(self, st: EvalState, coef):
        """``r = T dL/dq`` and its blocks (module doc of flexmb/compiled/sheave_rope.py)."""
        r, blk, _ = self.evaluate(st, st.t, coef)
        return r, blk

    def potential(self, st: EvalState) -> float:
        """``EA delta^2 / (2 ell)`` of the stretched ropes (J), at the unstretched lengths of the last accepted
        time (the group's history)."""
        p = self.evaluate(st, self._t_hist)[2]
        ell = self._lengths(self._t_hist)[0]
        d = np.maximum(p[:, 4], 0.0)
        return float(np.sum(self.EA * d * d / (2.0 * ell)))

    def drum_power_of(self, p: np.ndarray, i: int, t: float) -> float:
        """Explicit time rate of the potential plus the damping force's share of the drum (W) for rope ``i``
        at the parts ``p`` of time ``t``: ``-p' (T_el (1 + delta/(2 ell)) + T_d)`` (docs/theory-ropes.md §9)."""
        ell, ell_dot = self._lengths(t)
        if p[4] <= 0.0:
            return 0.0
        Tel, T = p[3], p[2]
        return float(-ell_dot[i] * (Tel * (1.0 + p[4] / (2.0 * ell[i])) + (T - Tel)))

    def power(self, st: EvalState) -> float:
        """Damping power ``-T_d delta_dot`` plus the drum power (W), so that d(K + V)/dt = power."""
        p = self.evaluate(st, st.t)[2]
        ell, ell_dot = self._lengths(st.t)
        on = p[:, 4] > 0.0
        Tel, T, delta = p[:, 3], p[:, 2], p[:, 4]
        P = -(T - Tel) * p[:, 1] - ell_dot * Tel * (1.0 + delta / (2.0 * ell))
        return float(np.sum(np.where(on, P, 0.0)))

    def start(self, st: EvalState) -> None:
        self._t_hist = float(st.t)

    def history(self) -> np.ndarray:
        return np.array([self._t_hist])

    def set_history(self, x: np.ndarray) -> None:
        self._t_hist = float(x[0])

    def accept(self, st: EvalState) -> None:
        self._t_hist = float(st.t)


def build_groups(forces, nq: int, st: EvalState) -> list[ElementGroup]:
    """The sheave-rope group of a model (flexmb/groups.py ``FAMILY_MODULES``): one for all elements."""
    elements = [f for f in forces if isinstance(f, SheaveRope)]
    return [SheaveRopeGroup(elements, nq)] if elements else []
