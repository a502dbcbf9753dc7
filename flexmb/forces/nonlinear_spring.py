"""Nonlinear spring-damper: a user-chosen force law of the elongation along the line between two points.

The elastic force is a piecewise-linear curve ``F(e)`` of the elongation ``e = |d| - L0`` given as a table (m, N),
extrapolated beyond it with the end segments' slopes, plus linear damping (docs/theory.md §3.3):

    f = F(e) + c e_dot (tension positive),     Q = -f grad |d|,     V = int_0^e F(s) ds,     P_diss = -c e_dot^2.

A measured bushing, buffer or rubber mount characteristic is such a table. The family runs on the compiled step
(flexmb/compiled/nonlinear_spring.py; flexmb/compiled/equations.py ``nonlinear_spring_terms``); its measure is the
``length`` measure of the springs (a ``ScalarSpringGroup``, as DC motors and contact pairs use one).
"""
from __future__ import annotations

import numpy as np

from .. import checks
from ..bodies.base import Body
from ..compiled import lazy_module
from ..errors import ModelError, NonFiniteError
from ..groups import ElementGroup, EvalState
from ..joints.base import point3
from ..joints.kernels import modal_counts
from .springs import ScalarSpringGroup, SpringPrimitive, _PairForce

kn = lazy_module("flexmb.compiled.nonlinear_spring")   # numba loads with the first evaluation, not at import

__all__ = ["NonlinearSpring", "NonlinearSpringGroup", "build_groups"]


def force_table(force, owner: str) -> tuple[np.ndarray, np.ndarray]:
    """``force = (x_table, F_table)`` as two float arrays of at least two finite values each, ``x`` strictly
    increasing; a ModelError naming ``owner`` and the offending value otherwise."""
    try:
        xs, Fs = force
    except (TypeError, ValueError):
        raise ModelError(f"{owner}: force must be a pair (x_table (m), F_table (N)), got {force!r}") from None
    out = []
    for what, v in (("x_table (m)", xs), ("F_table (N)", Fs)):
        try:
            a = np.asarray(v, dtype=float)
        except (TypeError, ValueError):
            raise ModelError(f"{owner}: {what} must be numbers, got {v!r}") from None
        if a.ndim != 1 or a.size < 2:
            raise ModelError(f"{owner}: {what} must be a 1-D table of at least 2 values, got shape {a.shape}")
        if not np.all(np.isfinite(a)):
            raise ModelError(f"{owner}: {what} must be finite, got {a.tolist()}")
        out.append(a)
    xs, Fs = out
    if xs.size != Fs.size:
        raise ModelError(f"{owner}: x_table has {xs.size} values and F_table {Fs.size}; they must match")
    bad = np.flatnonzero(np.diff(xs) <= 0.0)
    if bad.size:
        k = int(bad[0])
        raise ModelError(f"{owner}: x_table must be strictly increasing, got x[{k}] = {xs[k]} then "
                         f"x[{k + 1}] = {xs[k + 1]}")
    return np.ascontiguousarray(xs), np.ascontiguousarray(Fs)


class NonlinearSpring(_PairForce):
    """Spring-damper between ``point_a`` on a and ``point_b`` on b (global points at the start) with a tabulated
    elastic law.

    Args:
        force: ``(x_table, F_table)``: elongations (m, strictly increasing, at least 2) and tension forces (N) of a
            piecewise-linear law ``F(e)``, extrapolated with the end slopes.
        damping: linear damping ``c`` (N s/m, >= 0) on the length rate.
        length: free length ``L0`` (m, >= 0); default the distance of the points at the start.
    Tension positive: a positive ``F`` pulls the points together.
    """

    kind = "nonlinear spring"

    def __init__(self, body_a: Body, body_b: Body, *, point_a, point_b, force, damping: float = 0.0,
                 length: float | None = None, name: str | None = None):
        super().__init__(body_a, body_b, name)
        self.point_a = point3(point_a, "point_a", self.owner)
        self.point_b = point3(point_b, "point_b", self.owner)
        self.x_table, self.F_table = force_table(force, self.owner)
        self.damping = checks.scalar(damping, "damping (N s/m)", self.owner, sign="non-negative")
        L = float(np.linalg.norm(self.point_b - self.point_a))
        if L < 1e-12:
            raise ModelError(f"{self.owner}: point_a and point_b coincide at {self.point_a.tolist()}; the spring "
                             "direction is undefined")
        self.length = L if length is None else checks.scalar(length, "length (m)", self.owner, sign="non-negative")

    def length_primitive(self) -> SpringPrimitive:
        """The distance (m) between the two points, as a ``length`` measure (no stiffness of its own)."""
        return self._attached("length", {"u_i": ("point", self.point_a), "u_j": ("point", self.point_b)},
                              0.0, 0.0, self.length, self.owner)

    def law(self, elongation) -> np.ndarray:
        """The law's tension ``F(e)`` (N) at elongations ``e`` (m) (the compiled law, for plots and checks)."""
        e = np.atleast_1d(np.asarray(elongation, dtype=float))
        return np.array([kn.table_force(self.x_table, self.F_table, x)[0] for x in e])


class NonlinearSpringGroup(ElementGroup):
    """All nonlinear springs whose bodies have the same modal counts: one compiled call per evaluation
    (flexmb/compiled/nonlinear_spring.py ``spring_kernel``)."""

    family = "nonlinear springs"
    compiled_part = "nonlinear_springs"
    compiled_words = "nonlinear springs"

    @classmethod
    def pack_compiled(cls, groups: list) -> "NonlinearSprings":
        """The nonlinear springs' part of the compiled model (flexmb/compiled/model.py ``NonlinearSprings``)."""
        from ..compiled.model import NonlinearSprings, concat, pack_measures
        table, gather, scatter, vec, shape, sides, pos = pack_measures([(g, g.measure, p) for g, p in groups])
        at, base = [], 0
        for g, _ in groups:
            at.append(g.at + base)
            base += g.xs.size
        return NonlinearSprings(table, gather, scatter, vec, shape, sides,
                                *(concat([getattr(g, a) for g, _ in groups], float) for a in ("x0", "c")),
                                concat(at, np.int64), concat([g.size for g, _ in groups], np.int64),
                                *(concat([getattr(g, a) for g, _ in groups], float) for a in ("xs", "Fs")), pos)

    def __init__(self, springs: list[NonlinearSpring], nq: int):
        self.springs = springs
        self.n = len(springs)
        self.labels = [s.owner for s in springs]
        self.measure = ScalarSpringGroup("length", [s.length_primitive() for s in springs], nq)
        self.code, self.gather, self.scatter = self.measure.code, self.measure.gather, self.measure.scatter
        self.x0 = np.array([s.length for s in springs], dtype=float)
        self.c = np.array([s.damping for s in springs], dtype=float)
        self.size = np.array([s.x_table.size for s in springs], dtype=np.int64)
        self.at = np.concatenate([[0], np.cumsum(self.size)[:-1]]).astype(np.int64)
        self.xs = np.concatenate([s.x_table for s in springs])
        self.Fs = np.concatenate([s.F_table for s in springs])

    def _check(self, bad: int, x: np.ndarray) -> None:
        if bad >= 0:
            raise NonFiniteError(f"{self.labels[bad]}: attachment points coincide (length {x[bad]:.3g} m); the "
                                 "force direction is undefined")

    def residual(self, st: EvalState, coef=None):
        """Residual ``f grad |d|`` with ``f = F(e) + c e_dot`` (N) and, with ``coef``, the blocks
        ``cK (grad (F' grad + c H v)^T + f H) + cC c grad grad^T`` (flexmb/compiled/measures.py
        ``scalar_force_one``): one compiled call."""
        m = self.measure
        n, nx = self.gather.shape
        x, xd, r = np.empty(n), np.empty(n), np.empty((n, nx))
        want = coef is not None
        blocks = np.empty((n, nx, nx)) if want else np.empty((1, nx, nx))
        cC, cK = (float(coef[1]), float(coef[2])) if want else (0.0, 0.0)
        self._check(kn.spring_kernel(st.qe, st.ve, self.gather, m.vecs, m.shps, m.sides, *m.n_modes, self.x0, self.c,
                                     self.at, self.size, self.xs, self.Fs, cK, cC, want, x, xd, r, blocks), x)
        return r, (blocks if want else None)

    def potential(self, st: EvalState) -> float:
        """Stored energy ``sum int_0^e F(s) ds`` (J), exact for the piecewise-linear law."""
        x, _ = self.measure.values_at(st)
        return float(kn.spring_energy(x, self.x0, self.at, self.size, self.xs, self.Fs))

    def power(self, st: EvalState) -> float:
        """Damper power ``-sum c e_dot^2`` (W, <= 0)."""
        _, xd = self.measure.values_at(st)
        return float(kn.spring_power(xd, self.c))

    def accept(self, st: EvalState) -> None:
        """No history; drops the measure kept for ``st`` (power, then accept at a step's end)."""
        self.measure.accept(st)


def build_groups(forces, nq: int, st: EvalState) -> list[NonlinearSpringGroup]:
    """The nonlinear-spring groups of a model (flexmb/groups.py ``FAMILY_MODULES``): one per pair of modal counts."""
    springs = [f for f in forces if isinstance(f, NonlinearSpring)]
    keys = sorted({modal_counts(s.length_primitive()) for s in springs})
    return [NonlinearSpringGroup([s for s in springs if modal_counts(s.length_primitive()) == k], nq) for k in keys]
