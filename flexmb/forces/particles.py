"""Particle sets (point masses with 3 coordinates each, no rotation) and spring-damper links between particles
(docs/theory-roller-chain.md §1-2).

The rollers of a roller chain are point masses joined by linear spring-dampers (Pedersen, Hansen & Ambrosio,
"A novel roller-chain drive model using multibody dynamics analysis tools", NATO ASI Virtual Nonlinear Multibody
Systems, Prague 2002, §2: "the mass of the chain is lumped at the roller locations; translational springs and
dampers with constant stiffness and damping coefficients model the links"; their eq. (1) ``m_r I q_r_ddot = f_r``).

* :class:`Particles` is a force element that owns ``3 N`` coordinates (``n_states``; the system places them after
  the bodies' coordinates). Its family adds the inertia and the weight, ``r = m a - m g`` with the Newton block
  ``cM m I``, for every particle of every set in one compiled call, and reports the kinetic energy and the
  gravity potential.
* :class:`ParticleLinks` joins pairs of particles (of one set) by linear spring-dampers
  ``f = k (L - L0) + c L_dot`` (tension positive), all links of all elements in one compiled call.

Positions in results: ``Result.particles(name)`` (flexmb/results.py), an (nt, N, 3) array.
"""
from __future__ import annotations


import numpy as np

from .. import checks
from ..errors import ModelError
from ..groups import ElementGroup, EvalState
from .base import ForceElement

__all__ = ["Particles", "ParticleLinks", "ParticleAnchors", "ParticleGroup", "ParticleLinkGroup", "ParticleAnchorGroup",
           "build_groups", "closed_chain_pairs", "link_tensions"]


class Particles(ForceElement):
    """A set of N point masses (3 coordinates each, no rotation) that owns its coordinates.

    Args:
        positions: (N, 3) initial positions (m, global).
        mass: mass of every particle (kg), a scalar or (N,) values.
        velocities: (N, 3) initial velocities (m/s); default zero.
        name: element name (``Result.particles(name)`` reads its positions).

    Gravity is the system's (``System(gravity=...)``). The coordinates of particle i are
    ``offset + 3 i + (0, 1, 2)`` (set when the system compiles).
    """

    kind = "particles"

    def __init__(self, positions, mass, *, velocities=None, name: str | None = None):
        super().__init__(name)
        owner = self.owner
        X = np.asarray(positions, dtype=float)
        if X.ndim != 2 or X.shape[1] != 3 or X.shape[0] < 1:
            raise ModelError(f"{owner}: positions must be an (N, 3) array with N >= 1, got shape {X.shape}")
        if not np.all(np.isfinite(X)):
            raise ModelError(f"{owner}: positions are not finite")
        self.positions = X.copy()
        n = X.shape[0]
        m = np.asarray(mass, dtype=float)
        if m.ndim == 0:
            m = np.full(n, float(m))
        if m.shape != (n,):
            raise ModelError(f"{owner}: mass must be a scalar or {n} values (kg), got shape {m.shape}")
        if not np.all(np.isfinite(m)) or np.any(m <= 0.0):
            k = int(np.flatnonzero(~(np.isfinite(m) & (m > 0.0)))[0])
            raise ModelError(f"{owner}: the mass of particle {k} must be positive and finite, got {m[k]} kg")
        self.mass = m
        if velocities is None:
            V = np.zeros_like(X)
        else:
            V = np.asarray(velocities, dtype=float)
            if V.shape != X.shape or not np.all(np.isfinite(V)):
                raise ModelError(f"{owner}: velocities must be a finite ({n}, 3) array (m/s), got shape {V.shape}")
        self.velocities = V.copy()
        self.n_states = 3 * n
        self.offset = -1

    @property
    def count(self) -> int:
        """Number of particles N."""
        return self.positions.shape[0]

    @property
    def bodies(self) -> tuple:
        return ()

    def initial_q(self) -> np.ndarray:
        """Initial coordinates (3N,), m."""
        return self.positions.ravel().copy()

    def initial_v(self) -> np.ndarray:
        """Initial rates (3N,), m/s."""
        return self.velocities.ravel().copy()

    def coordinates(self, i=None) -> np.ndarray:
        """System coordinate indices of particle(s) ``i`` ((3,) or (len(i), 3)); all (N, 3) for None."""
        if self.offset < 0:
            raise ModelError(f"{self.owner}: the system is not compiled yet (coordinates are numbered then)")
        idx = self.offset + np.arange(self.n_states, dtype=np.int64).reshape(-1, 3)
        return idx if i is None else idx[i]


def closed_chain_pairs(n: int) -> np.ndarray:
    """Pairs (n, 2) of a closed chain of n particles: (0, 1), (1, 2), ..., (n-1, 0)."""
    n = checks.count(n, "number of particles", "closed chain", low=3)
    i = np.arange(n)
    return np.column_stack([i, (i + 1) % n])


class ParticleLinks(ForceElement):
    """Linear spring-dampers between pairs of particles of one :class:`Particles` set (the links of a roller
    chain, Pedersen, Hansen & Ambrosio §2).

    Args:
        particles: the particle set.
        pairs: (n, 2) particle indices; ``"chain"`` for (0, 1), ..., (N-2, N-1) or ``"closed"`` for a loop that
            also joins (N-1, 0).
        stiffness: k (N/m), scalar or (n,).
        damping: c (N s/m), scalar or (n,); default 0.
        free_length: L0 (m), scalar or (n,); default: the initial distances.
        name: element name.

    Tension ``f = k (L - L0) + c L_dot`` (N, positive when stretched) acts along the line of the two particles
    (it also pushes when compressed, as the paper's linear springs).
    """

    kind = "particle links"

    def __init__(self, particles: Particles, pairs="chain", stiffness: float = 1.0, damping: float = 0.0, *,
                 free_length=None, name: str | None = None):
        super().__init__(name)
        owner = self.owner
        if not isinstance(particles, Particles):
            raise ModelError(f"{owner}: particles must be a Particles set, got {particles!r}")
        N = particles.count
        if isinstance(pairs, str):
            if pairs == "chain":
                if N < 2:
                    raise ModelError(f"{owner}: a chain needs at least 2 particles, {particles.owner} has {N}")
                P = np.column_stack([np.arange(N - 1), np.arange(1, N)])
            elif pairs == "closed":
                if N < 3:
                    raise ModelError(f"{owner}: a closed chain needs at least 3 particles, {particles.owner} "
                                     f"has {N}")
                P = closed_chain_pairs(N)
            else:
                raise ModelError(f"{owner}: pairs must be 'chain', 'closed' or an (n, 2) index array, got {pairs!r}")
        else:
            P = np.asarray(pairs)
            if P.ndim != 2 or P.shape[1] != 2 or P.shape[0] < 1 or not np.issubdtype(P.dtype, np.integer):
                raise ModelError(f"{owner}: pairs must be an (n, 2) integer array, got {pairs!r}")
            bad = (P < 0) | (P >= N)
            if bad.any():
                k = int(np.flatnonzero(bad.any(axis=1))[0])
                raise ModelError(f"{owner}: pair {k} {tuple(P[k])} names a particle outside 0..{N - 1}")
            same = P[:, 0] == P[:, 1]
            if same.any():
                k = int(np.flatnonzero(same)[0])
                raise ModelError(f"{owner}: pair {k} joins particle {P[k, 0]} to itself")
        self.particles, self.pairs = particles, P.astype(np.int64)
        n = P.shape[0]
        X = particles.positions
        L = np.linalg.norm(X[P[:, 1]] - X[P[:, 0]], axis=1)
        if np.any(L <= 0.0):
            k = int(np.flatnonzero(L <= 0.0)[0])
            raise ModelError(f"{owner}: the particles of pair {k} {tuple(P[k])} coincide (a link of zero length)")
        self.stiffness = self._per_link(stiffness, n, "stiffness", "positive", " N/m")
        self.damping = self._per_link(damping, n, "damping", "non-negative", " N s/m")
        self.free_length = L.copy() if free_length is None else self._per_link(free_length, n, "free_length",
                                                                              "positive", " m")
        uniform = free_length is not None and np.ndim(free_length) == 0       # one pitch for every link
        if isinstance(pairs, str) and pairs == "closed" and uniform:
            gap, L0 = float(L[-1]), float(self.free_length[-1])
            if abs(gap - L0) > 0.5 * L0:
                raise ModelError(f"{owner}: the chain does not close: the last particle ({N - 1}) is {gap:.6g} m from "
                                 f"the first, the link's free length is {L0:.6g} m")

    def _per_link(self, value, n: int, what: str, sign: str, unit: str) -> np.ndarray:
        arr = np.asarray(value, dtype=float)
        if arr.ndim == 0:
            return np.full(n, checks.scalar(float(arr), what, self.owner, sign=sign, unit=unit))
        if arr.shape != (n,):
            raise ModelError(f"{self.owner}: {what} must be a scalar or {n} values, got shape {arr.shape}")
        for k, x in enumerate(arr):
            checks.scalar(x, f"{what}[{k}]", self.owner, sign=sign, unit=unit)
        return arr.copy()

    @property
    def bodies(self) -> tuple:
        return ()


class ParticleAnchors(ForceElement):
    """Isotropic linear spring-dampers that hold particles near fixed points: ``f = -k (x - x0) - c x_dot``
    (a pin of finite stiffness, e.g. the fixed end of a hanging chain).

    Args:
        particles: the particle set.
        indices: the anchored particles (int or sequence).
        points: (n, 3) anchor points x0 (m, global); default the particles' initial positions.
        stiffness: k (N/m); damping: c (N s/m) (scalars, for every anchor).
        name: element name.
    """

    kind = "particle anchors"

    def __init__(self, particles: Particles, indices, points=None, stiffness: float = 1.0, damping: float = 0.0,
                 *, name: str | None = None):
        super().__init__(name)
        owner = self.owner
        if not isinstance(particles, Particles):
            raise ModelError(f"{owner}: particles must be a Particles set, got {particles!r}")
        idx = np.atleast_1d(np.asarray(indices))
        if idx.ndim != 1 or idx.size == 0 or not np.issubdtype(idx.dtype, np.integer):
            raise ModelError(f"{owner}: indices must be particle numbers (int or sequence), got {indices!r}")
        bad = (idx < 0) | (idx >= particles.count)
        if bad.any():
            raise ModelError(f"{owner}: particle index {int(idx[bad][0])} is outside 0..{particles.count - 1}")
        self.particles, self.indices = particles, idx.astype(np.int64)
        X = particles.positions[idx] if points is None else np.asarray(points, dtype=float).reshape(-1, 3)
        if X.shape != (idx.size, 3) or not np.all(np.isfinite(X)):
            raise ModelError(f"{owner}: points must be a finite ({idx.size}, 3) array (m)")
        self.points = X.copy()
        self.stiffness = checks.scalar(stiffness, "stiffness", owner, sign="non-negative", unit=" N/m")
        self.damping = checks.scalar(damping, "damping", owner, sign="non-negative", unit=" N s/m")

    @property
    def bodies(self) -> tuple:
        return ()


# -- groups -------------------------------------------------------------------------------------------------------
_NO_LINKS, _NO_GATHER, _NO_VALUES = np.zeros((0, 6), dtype=np.int64), np.zeros((0, 3), dtype=np.int64), np.zeros(0)


def _pack_particles(cls, groups: list):
    """The particle family's part of the compiled model (flexmb/compiled/model.py ``Particles``) from its groups
    (at most one of each of :class:`ParticleGroup`, :class:`ParticleLinkGroup`, :class:`ParticleAnchorGroup`):
    gathers (equal to the scatters), masses, gravity, per-instance parameters and block positions (empty arrays
    for the kinds a model lacks)."""
    from ..compiled.model import Particles as Part
    f, i = np.float64, np.int64
    one = {type(g): (g, pos) for g, pos in groups}

    def arr(x, dtype, shape=(0,)):
        return np.ascontiguousarray(x, dtype=dtype) if x is not None else np.zeros(shape, dtype=dtype)

    g, hp = one.get(ParticleGroup, (None, None))
    out = [arr(g and g.scatter, i, (0, 3)), arr(g and g.mass, f), arr(g and g.g, f, (3,)), arr(hp, i)]
    g, hl = one.get(ParticleLinkGroup, (None, None))
    out += [arr(g and g.scatter, i, (0, 6)), arr(g and g.k, f), arr(g and g.c, f), arr(g and g.L0, f), arr(hl, i)]
    g, ha = one.get(ParticleAnchorGroup, (None, None))
    out += [arr(g and g.scatter, i, (0, 3)), arr(g and g.point, f, (0, 3)), arr(g and g.k, f), arr(g and g.c, f),
            arr(ha, i)]
    return Part(*out)


class ParticleGroup(ElementGroup):
    """Inertia and weight of every particle of every :class:`Particles` set: one instance per particle
    (k = 3, its coordinates), ``r = m (a - g)`` and ``cM m I`` in one compiled call."""

    compiled_part = "particles"
    compiled_words = "particles"
    pack_compiled = classmethod(_pack_particles)

    def __init__(self, sets: list[Particles], gravity: np.ndarray):
        self.sets = sets
        self.scatter = np.ascontiguousarray(np.vstack([p.coordinates() for p in sets]), dtype=np.int64)
        self.mass = np.ascontiguousarray(np.concatenate([p.mass for p in sets]))
        self.g = np.ascontiguousarray(gravity, dtype=float)
        self.labels = [f"{p.owner}[{i}]" for p in sets for i in range(p.count)]
        n = self.scatter.shape[0]
        self._r, self._blk, self._e = np.empty((n, 3)), np.empty((n, 3, 3)), np.empty(2)
        from ..compiled import particles as kernels       # numba: loaded when a model with particles compiles
        self._k = kernels

    def residual(self, st: EvalState, coef):
        want = coef is not None
        self._k.particle_kernel(st.q, st.v, st.a, self.scatter, self.mass, self.g, float(coef[0]) if want else 0.0,
                                want, self._r, self._blk)
        return self._r.copy(), (self._blk.copy() if want else None)

    def _energy(self, st: EvalState) -> np.ndarray:
        self._k.particle_energy(st.q, st.v, self.scatter, self.mass, self.g, self._e)
        return self._e

    def kinetic(self, st: EvalState) -> float:
        """``sum m v^2 / 2`` (J)."""
        return float(self._energy(st)[0])

    def potential(self, st: EvalState) -> float:
        """Gravity potential ``-sum m g . x`` (J)."""
        return float(self._energy(st)[1])


class ParticleLinkGroup(ElementGroup):
    """Every link of every :class:`ParticleLinks` element (k = 6: the two particles' coordinates), one
    compiled call (flexmb/compiled/particles.py ``link_kernel``)."""

    compiled_part = "particles"
    compiled_words = "particles"
    pack_compiled = classmethod(_pack_particles)

    def __init__(self, elements: list[ParticleLinks], nq: int):
        self.elements = elements
        rows, labels = [], []
        for el in elements:
            idx = el.particles.coordinates()
            rows.append(np.hstack([idx[el.pairs[:, 0]], idx[el.pairs[:, 1]]]))
            labels += [f"{el.owner}: {a}-{b}" for a, b in el.pairs]
        self.scatter = np.ascontiguousarray(np.vstack(rows), dtype=np.int64)
        self.k = np.ascontiguousarray(np.concatenate([el.stiffness for el in elements]))
        self.c = np.ascontiguousarray(np.concatenate([el.damping for el in elements]))
        self.L0 = np.ascontiguousarray(np.concatenate([el.free_length for el in elements]))
        self.labels = labels
        self.sizes = [el.pairs.shape[0] for el in elements]
        from ..compiled import particles as kernels
        self._k = kernels

    def _evaluate(self, st: EvalState, coef):
        n = self.scatter.shape[0]
        want = coef is not None
        r, parts = np.empty((n, 6)), np.empty((n, 3))
        blk = np.empty((n, 6, 6) if want else (0, 6, 6))
        cK, cC = (float(coef[2]), float(coef[1])) if want else (0.0, 0.0)
        self._k.link_kernel(st.qe, st.ve, self.scatter, self.k, self.c, self.L0, cK, cC, want, r, blk, parts)
        return r, (blk if want else None), parts

    def residual(self, st: EvalState, coef):
        r, blk, _ = self._evaluate(st, coef)
        return r, blk

    def potential(self, st: EvalState) -> float:
        """``sum k (L - L0)^2 / 2`` (J)."""
        L = self._evaluate(st, None)[2][:, 1]
        return float(0.5 * np.sum(self.k * (L - self.L0) ** 2))

    def power(self, st: EvalState) -> float:
        """Damper power ``-sum c L_dot^2`` (W), one compiled call (``damper_power``)."""
        return float(self._k.damper_power(st.qe, st.ve, self.scatter, self.c, _NO_GATHER, _NO_VALUES))

    def tensions(self, st: EvalState) -> np.ndarray:
        """Tension of every link (N, positive when stretched), in the order of ``labels``."""
        return self._evaluate(st, None)[2][:, 0].copy()


class ParticleAnchorGroup(ElementGroup):
    """Every anchor of every :class:`ParticleAnchors` element (k = 3), one compiled call."""

    compiled_part = "particles"
    compiled_words = "particles"
    pack_compiled = classmethod(_pack_particles)

    def __init__(self, elements: list[ParticleAnchors]):
        self.scatter = np.ascontiguousarray(np.vstack([el.particles.coordinates(el.indices) for el in elements]),
                                            dtype=np.int64)
        self.point = np.ascontiguousarray(np.vstack([el.points for el in elements]))
        self.k = np.concatenate([np.full(el.indices.size, el.stiffness) for el in elements])
        self.c = np.concatenate([np.full(el.indices.size, el.damping) for el in elements])
        self.labels = [f"{el.owner}: {i}" for el in elements for i in el.indices]
        from ..compiled import particles as kernels
        self._k = kernels

    def _evaluate(self, st: EvalState, coef):
        n = self.scatter.shape[0]
        want = coef is not None
        r, parts = np.empty((n, 3)), np.empty((n, 2))
        blk = np.empty((n, 3, 3) if want else (0, 3, 3))
        cK, cC = (float(coef[2]), float(coef[1])) if want else (0.0, 0.0)
        self._k.anchor_kernel(st.q, st.v, self.scatter, self.point, self.k, self.c, cK, cC, want, r, blk, parts)
        return r, (blk if want else None), parts

    def residual(self, st: EvalState, coef):
        r, blk, _ = self._evaluate(st, coef)
        return r, blk

    def potential(self, st: EvalState) -> float:
        return float(self._evaluate(st, None)[2][:, 0].sum())

    def power(self, st: EvalState) -> float:
        """Damper power ``-sum c |x_dot|^2`` (W), one compiled call (``damper_power``)."""
        return float(self._k.damper_power(st.qe, st.ve, _NO_LINKS, _NO_VALUES, self.scatter, self.c))


def build_groups(forces, nq: int, st: EvalState) -> list[ElementGroup]:
    """The particle, particle-link and anchor groups of a model (flexmb/groups.py ``FAMILY_MODULES``)."""
    sets = [f for f in forces if isinstance(f, Particles)]
    links = [f for f in forces if isinstance(f, ParticleLinks)]
    anchors = [f for f in forces if isinstance(f, ParticleAnchors)]
    known = {id(p) for p in sets}
    for el in links + anchors:
        if id(el.particles) not in known:
            raise ModelError(f"{el.owner} links {el.particles.owner}, which is not in the system; add it first")
    out: list[ElementGroup] = []
    if sets:
        if st.gravity is None:
            raise ModelError("particles: the family builder needs the system's gravity (EvalState.gravity, "
                             "set by System.compile())")
        out.append(ParticleGroup(sets, st.gravity))
    if links:
        out.append(ParticleLinkGroup(links, nq))
    if anchors:
        out.append(ParticleAnchorGroup(anchors))
    return out


def link_tensions(links: ParticleLinks, q: np.ndarray, v: np.ndarray | None = None) -> np.ndarray:
    """Tensions (nt, n) (N) of the links of ``links`` along rows of coordinates ``q`` (nt, nq) and rates ``v``
    (damping included when given); vectorized numpy, for post-processing."""
    idx = links.particles.coordinates()
    a, b = idx[links.pairs[:, 0]], idx[links.pairs[:, 1]]
    q = np.atleast_2d(q)
    d = q[:, b] - q[:, a]
    L = np.linalg.norm(d, axis=2)
    f = links.stiffness * (L - links.free_length)
    if v is not None:
        v = np.atleast_2d(v)
        f = f + links.damping * np.einsum("tni,tni->tn", d / L[..., None], v[:, b] - v[:, a])
    return f
