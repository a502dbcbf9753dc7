"""Linearization about an equilibrium or a steady motion, with holonomic and velocity constraints.

The equations ``M a - Q + Phi_q^T lambda + B^T mu = 0``, ``Phi(q, t) = 0``, ``B(q) v = b`` linearized
about a reference state ``(q0, v0, a0, lambda0)`` (docs/theory.md §9):

    M da + C dv + K dq + Phi_q^T dlambda + B^T dmu = 0,     K = dr/dq + sum lambda d2Phi/dq2 + d(B^T mu)/dq,
    Phi_q dq = 0,       B dv + (B v)_q dq = 0,

projected on the constraint manifold with null-space bases (Schwab & Meijaard's minimal-coordinate
recipe, Schwab & Meijaard 2002; Schwab & Meijaard, "Dynamics of flexible multibody systems with non-holonomic
constraints: a finite element approach", Multibody System Dynamics 10 (2003) 107-123):

    dq = N1 y   (N1: null space of Phi_q),      dv = V y + N2 z   (N2: null space of [Phi_q; B]),
    V = -[Phi_q; B]^+ [0; (B v)_q] N1,

so ``y`` (position perturbations) and ``z`` (independent velocity perturbations) are the
minimal state: ``y' = N1^T (V y + N2 z)``, ``N2^T M N2 z' = -N2^T (M V y' + C dv + K N1 y)``.

Steady motions with rotating bodies (relative equilibria, docs/theory.md §9.1): the reference is the orbit
``q0(t) = G(t) q0 + d(t)`` of a one-parameter symmetry group of the model -- the whole system turning about
a fixed axis at ``angular_velocity`` (and translating uniformly), each body listed in ``spin`` turning about
a body-fixed axis (an axisymmetric body about its axis). In the co-moving coordinates ``q = G(t) qb + d(t)``
the reference is an equilibrium, and with ``G1 = G'(0)``, ``G2 = G''(0) = G1^2`` (G(0) = I)

    M dqb'' + (C + 2 M G1) dqb' + (K + C G1 + M G2) dqb + Phi_q^T dlambda + B^T dmu = 0,
    Phi_q dqb = 0,      B dqb' + ((B v)_q + B G1) dqb = 0,

time-invariant when the group is a symmetry of the model; this is checked by forming them again a stretch
further along the orbit, pulling them back by G(tau) and comparing. The Euler parameters transform linearly under the
group (``p -> a(t) * p * b(t)``, quaternion products), so the perturbations stay in the full coordinates.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Sequence

import numpy as np
import scipy.linalg as sla

from ..errors import ModelError
from ..results import Result
from .initial import accelerations, consistent_start, handle_redundancy

if TYPE_CHECKING:
    from ..bodies.base import Body
    from ..system import System

__all__ = ["Linearization", "linearize"]


@dataclass
class Linearization:
    """The linearized motion ``x' = A x`` in minimal coordinates ``x = (y, z)``.

    Attributes:
        A: (n, n) state matrix, 1/s (n = n_position + n_velocity).
        eigenvalues: (n,) complex, 1/s, by decreasing real part (then decreasing imaginary part).
        modes_q, modes_v: (nq, n) complex mode shapes in the full coordinates (dq and dv of each
            eigenvector, normalized to unit largest ``|dq|`` where dq is not zero, else unit largest ``|dv|``); about
            a rotating steady motion they are the co-moving perturbations ``dqb``, ``dqb'`` (module doc).
        N1, N2, V: the bases of the projection (module doc); ``q``, ``v``, ``t``: the reference state.
        generator: (nq, nq) ``G1``, the rate of the co-moving coordinates' transformation (1/s; zero about
            an equilibrium or a steady translation).
    """

    A: np.ndarray
    eigenvalues: np.ndarray
    modes_q: np.ndarray
    modes_v: np.ndarray
    N1: np.ndarray
    N2: np.ndarray
    V: np.ndarray
    q: np.ndarray
    v: np.ndarray
    t: float
    generator: np.ndarray | None = field(default=None, repr=False)

    @property
    def n_position(self) -> int:
        """Independent position perturbations (degrees of freedom of the configuration)."""
        return self.N1.shape[1]

    @property
    def n_velocity(self) -> int:
        """Independent velocity perturbations."""
        return self.N2.shape[1]

    @property
    def frequencies(self) -> np.ndarray:
        """Damped natural frequencies ``|Im lambda|`` (rad/s) of the eigenvalues with Im > 0, ascending."""
        w = self.eigenvalues
        return np.sort(w.imag[w.imag > 0.0])

    @property
    def stable(self) -> bool:
        """Whether every eigenvalue has a negative real part (asymptotic stability), to 1e-9/s."""
        return bool(np.all(self.eigenvalues.real < -1e-9))


def _state(system, asm, state, t, row):
    """Reference (q, v, t) from None (consistent initial state), a Result (its row ``row``) or (q, v)."""
    if state is None:
        q, v, _, _ = consistent_start(asm, 0.0 if t is None else float(t))
        return q, v, 0.0 if t is None else float(t)
    if isinstance(state, Result):
        try:
            q, v, tr = state.q[row], state.v[row], state.t[row]
        except (IndexError, TypeError):
            raise ModelError(f"linearize: row {row!r} is not a row of the Result ({len(state.t)} rows)") from None
        return np.array(q, dtype=float), np.array(v, dtype=float), float(tr) if t is None else float(t)
    try:
        q, v = (np.asarray(x, dtype=float).reshape(-1) for x in state)
    except (TypeError, ValueError):
        raise ModelError(f"linearize: state must be None, a Result or a pair (q, v), got {state!r}") from None
    if q.size != asm.nq or v.size != asm.nq:
        raise ModelError(f"linearize: system {system.name!r} has {asm.nq} coordinates; state has q of {q.size} "
                         f"and v of {v.size}")
    return q, v, 0.0 if t is None else float(t)


def _dense(S) -> np.ndarray:
    return S.toarray() if hasattr(S, "toarray") else np.asarray(S)


def _coordinate_name(asm, k: int) -> str:
    for b in asm.system.bodies:
        if b.offset <= k < b.offset + b.ncoord:
            names = ["x", "y", "z", "e0", "e1", "e2", "e3"]
            return f"body {b.name!r} coordinate {names[k - b.offset] if k - b.offset < 7 else k - b.offset}"
    return f"coordinate {k}"


def _quat_left(w: np.ndarray) -> np.ndarray:
    """4x4 matrix of ``p -> (0, w) * p`` (quaternion product, scalar first)."""
    x, y, z = w
    return np.array([[0.0, -x, -y, -z], [x, 0.0, -z, y], [y, z, 0.0, -x], [z, -y, x, 0.0]])


def _quat_right(w: np.ndarray) -> np.ndarray:
    """4x4 matrix of ``p -> p * (0, w)`` (quaternion product, scalar first)."""
    x, y, z = w
    return np.array([[0.0, -x, -y, -z], [x, 0.0, z, -y], [y, -z, 0.0, x], [z, y, -x, 0.0]])


def _vector3(value, what: str) -> np.ndarray:
    try:
        out = np.asarray(value, dtype=float).reshape(3)
    except (TypeError, ValueError):
        raise ModelError(f"linearize: {what} must be a 3-vector, got {value!r}") from None
    if not np.all(np.isfinite(out)):
        raise ModelError(f"linearize: {what} must be finite, got {value!r}")
    return out


@dataclass
class _Frame:
    """The co-moving coordinates' group motion: ``q(t) = G(t) q + d(t)`` with generator ``X = [[G1, d1], [0, 0]]``
    (homogeneous form; ``d1`` holds the uniform translations, per body when the system does not rotate)."""

    G1: np.ndarray
    d1: np.ndarray
    rotating: bool

    def advance(self, q: np.ndarray, tau: float) -> np.ndarray:
        """The reference a time ``tau`` (s) further along the orbit (exact: matrix exponential of ``tau X``)."""
        n = q.size
        X = np.zeros((n + 1, n + 1))
        X[:n, :n], X[:n, n] = self.G1, self.d1
        return (sla.expm(tau * X) @ np.append(q, 1.0))[:n]


def _frame(system, asm, q, v, angular_velocity, center, spin, tol) -> _Frame:
    """Generator of the co-moving coordinates (module doc) from the system's ``angular_velocity`` about
    ``center`` and the bodies' ``spin``; the reference's uniform translation is read from ``v``."""
    nq = asm.nq
    Om = np.zeros(3) if angular_velocity is None else _vector3(angular_velocity, "angular_velocity")
    c = _vector3(center, "center")
    spins = {}
    for key, rate in (spin or {}).items():
        match = [b for b in system.bodies if b is key or b.name == key]
        if not match:
            raise ModelError(f"linearize: spin names {key!r}, which is not a body of system {system.name!r}")
        spins[match[0]] = _vector3(rate, f"spin of body {match[0].name!r}")
    rotating = bool(np.any(Om) or any(np.any(s) for s in spins.values()))
    G1, d1 = np.zeros((nq, nq)), np.zeros(nq)
    owned = np.zeros(nq, dtype=bool)
    S = np.array([[0.0, -Om[2], Om[1]], [Om[2], 0.0, -Om[0]], [-Om[1], Om[0], 0.0]])
    frames, framed = [], []
    for b in system.bodies:
        owned[b.offset:b.offset + b.ncoord] = True
        if b.ncoord < 7:
            continue
        r, p = slice(b.offset, b.offset + 3), slice(b.offset + 3, b.offset + 7)
        G1[r, r] = S
        d1[r] = -S @ c
        G1[p, p] = 0.5 * (_quat_left(Om) + _quat_right(spins.get(b, np.zeros(3))))
        frames.append(r)
        framed.append(b)
    # the reference's translation: v - G1 q - d1 on the frame positions; with a rotating system it must be one
    # velocity u for all bodies (the group then is a screw motion), otherwise each body may translate uniformly
    w = v - G1 @ q - d1
    if frames:
        trans = np.array([w[r] for r in frames])
        if np.any(Om):
            u = trans.mean(axis=0)
            k = int(np.argmax(np.abs(trans - u).max(axis=1)))
            if np.abs(trans[k] - u).max() > tol:
                raise ModelError(f"linearize: body {framed[k].name!r} translates at {trans[k]} m/s, unlike "
                                 f"the rotating system's common velocity {u} m/s (plus the rotation's): not a "
                                 "steady motion of the given angular_velocity and center")
            for r in frames:
                d1[r] += u
        else:
            for r in frames:
                d1[r] += w[r]
    # coordinates of no body (element states such as a DC motor's charge) are taken as invariant scalars that
    # may grow uniformly (a steady current); a state that should turn with the system (a particle's position)
    # fails the symmetry check instead
    d1[~owned] = v[~owned]
    rest = np.abs(v - G1 @ q - d1)
    k = int(np.argmax(rest))
    if rest[k] > tol:
        hint = ("pass the steady rotation as angular_velocity (the whole system) or spin (a body about a "
                "body-fixed axis)" if _coordinate_name(asm, k).split()[-1].startswith("e")
                else "a steady motion has constant elastic and internal coordinates")
        raise ModelError(f"linearize: the state is not a steady motion: {_coordinate_name(asm, k)} changes at "
                         f"{v[k]:.4g}/s, the steady motion given moves it at {(G1 @ q + d1)[k]:.4g}/s; {hint}")
    return _Frame(G1, d1, rotating)


@dataclass
class _Raw:
    """The linearized equations at one state in co-moving coordinates (module doc): ``M dq'' + C dq' + K dq
    + Phi_q^T dlambda + B^T dmu = 0``, ``Jh dq = 0``, ``B dq' + W dq = 0``."""

    M: np.ndarray
    C: np.ndarray
    K: np.ndarray
    Jh: np.ndarray
    B: np.ndarray
    W: np.ndarray

    def pulled_back(self, G: np.ndarray) -> "_Raw":
        """The same equations in the coordinates ``dq = G dqb`` (rows of the force equations by ``G^T``)."""
        return _Raw(G.T @ self.M @ G, G.T @ self.C @ G, G.T @ self.K @ G, self.Jh @ G, self.B @ G, self.W @ G)


def _raw(system, asm, q, v, t, tol, steady_tol, redundant, frame_args):
    """Constraint and steadiness checks, the co-moving frame and the linearized equations at one state."""
    asm.start(q, v)
    handle_redundancy(asm, q, t, redundant)
    act, vel = asm.active, asm.velocity_rows
    hol, nhv = act & ~vel, act & vel
    c = asm.constraints(q, v, t)
    rate = c.jac @ v + c.phi_t
    velocity = np.where(act, np.where(vel, c.phi, rate), 0.0)
    for what, res in (("position constraint", np.where(hol, c.phi, 0.0)),
                      ("velocity constraint (Phi_q v + Phi_t, B v - b)", velocity)):
        k = int(np.argmax(np.abs(res)))
        if abs(res[k]) > tol:
            raise ModelError(f"linearize: the state violates the {what} {asm.labels[k]!r} (residual "
                             f"{res[k]:.3e} > tol {tol:g}); pass a state of a simulation or of static_equilibrium")
    fr = _frame(system, asm, q, v, *frame_args, steady_tol)
    a, lam = accelerations(asm, q, v, t)
    a_ref = fr.G1 @ (fr.G1 @ q + fr.d1)                 # X^2 [q; 1]: the orbit's acceleration
    acc = np.abs(a - a_ref)
    k = int(np.argmax(acc))
    if acc[k] > steady_tol:
        raise ModelError(f"linearize: the state is not an equilibrium or a steady motion: {_coordinate_name(asm, k)} "
                         f"accelerates at {a[k]:.4g} (m/s^2 or 1/s^2), the steady motion at {a_ref[k]:.4g} "
                         f"(steady_tol {steady_tol:g})")
    nq = asm.nq
    M = _dense(asm.residual(q, v, a, lam, t, coef=(1.0, 0.0, 0.0, 0.0, 0.0))[2])[:nq, :nq]
    C = _dense(asm.residual(q, v, a, lam, t, coef=(0.0, 1.0, 0.0, 0.0, 0.0))[2])[:nq, :nq]
    S = _dense(asm.residual(q, v, a, lam, t, coef=(0.0, 0.0, 1.0, 1.0, 0.0))[2])
    K, J = S[:nq, :nq], S[nq:, :nq]                          # dr/dq + H(lambda) + d(B^T mu)/dq; Phi_q and B
    W = _dense(asm.residual(q, v, a, lam, t, coef=(0.0, 0.0, 0.0, 0.0, 0.0), nh=(0.0, 1.0))[2])[nq:, :nq]
    G1 = fr.G1
    if fr.rotating:                                          # co-moving coordinates (module doc)
        K = K + C @ G1 + M @ G1 @ G1
        C = C + 2.0 * M @ G1
    return fr, _Raw(M, C, K, J[hol], J[nhv], W[nhv] + J[nhv] @ G1)


def _bases(raw: _Raw) -> tuple[np.ndarray, np.ndarray]:
    """Orthonormal null-space bases N1 of Phi_q and N2 of [Phi_q; B] (SVD)."""
    nq = raw.M.shape[0]
    P = np.vstack([raw.Jh, raw.B])
    return (sla.null_space(raw.Jh) if raw.Jh.shape[0] else np.eye(nq),
            sla.null_space(P) if P.shape[0] else np.eye(nq))


def _reduce(raw: _Raw, N1: np.ndarray, N2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """State matrix A of x = (y, z) and V (module doc) on the bases N1, N2."""
    P = np.vstack([raw.Jh, raw.B])
    V = -np.linalg.pinv(P) @ np.vstack([np.zeros_like(raw.Jh), raw.W]) @ N1
    n2 = N2.shape[1]
    Ay = np.hstack([N1.T @ V, N1.T @ N2])                   # y' = Ay (y, z)
    Mr = N2.T @ raw.M @ N2
    rhs = (-(N2.T @ raw.M @ V) @ Ay - N2.T @ raw.C @ np.hstack([V, N2])
           - np.hstack([N2.T @ raw.K @ N1, np.zeros((n2, n2))]))
    try:
        Az = np.linalg.solve(Mr, rhs)
    except np.linalg.LinAlgError:
        raise ModelError("linearize: the reduced mass matrix N2^T M N2 is singular: a free motion has no "
                         "inertia") from None
    return np.vstack([Ay, Az]), V


def _drift(raw: _Raw, later: _Raw, N1: np.ndarray, N2: np.ndarray, A: np.ndarray) -> float:
    """How much the linearized equations change along the orbit: the larger of the change of the null-space
    projectors (both are orthogonal projectors: 0 to 1) and of the state matrix on the same bases, relative to
    its largest entry."""
    L1, L2 = _bases(later)
    proj = max(np.abs(L1 @ L1.T - N1 @ N1.T).max(), np.abs(L2 @ L2.T - N2 @ N2.T).max())
    A2 = _reduce(later, N1, N2)[0]
    return max(proj, np.abs(A2 - A).max() / (1.0 + np.abs(A).max()))


def linearize(system: "System", state: "Result | tuple[np.ndarray, np.ndarray] | None" = None,
              t: float | None = None, tol: float = 1e-8, steady_tol: float = 1e-6, redundant: str = "remove",
              row: int = -1, angular_velocity: "Sequence[float] | None" = None,
              center: "Sequence[float]" = (0.0, 0.0, 0.0), spin: "dict[Body | str, Sequence[float]] | None" = None,
              check_steady: bool = True) -> Linearization:
    """Linearize ``system`` about ``state`` (None: the consistent initial state; a Result: its row ``row``,
    default the last; or ``(q, v)``) at time ``t`` (s; default 0, or the Result's time of that row). Returns a
    :class:`Linearization` (state matrix, eigenvalues, mode shapes in the full coordinates).

    The state must satisfy the constraints (``|Phi|``, ``|Phi_q v + Phi_t|``, ``|B v - b|`` <= ``tol``) and
    be an equilibrium or a steady motion. Steady translations need no arguments. A steady motion with
    rotating bodies is given as the motion of co-moving coordinates (docs/theory.md §9.1):
    ``angular_velocity`` (rad/s, global components) turns the whole system about the axis through ``center``
    (m), e.g. a body spinning about a principal axis or a disc rolling on a circle; ``spin`` maps bodies (or
    their names) to body-fixed angular velocities (rad/s), e.g. a rolling disc's or a top's spin about its
    symmetry axis. The reference velocities must be those of that motion (translations apart), its
    accelerations those of the orbit to ``steady_tol`` (m/s^2), and the motion a symmetry of the model:
    with ``check_steady`` the linearized equations are formed again a stretch further along the orbit, pulled
    back, and must agree (null-space projectors and state matrix to 1e-6); ``check_steady=False`` skips that
    (e.g. a driven mechanism at rest before its drivers move: the frequencies of that instant). Otherwise
    ModelError says which residual is not zero. The eigenvalues are those of the co-moving perturbations (a
    perturbation at rest in space shows as +-i|angular_velocity|). Dense linear algebra: meant for models of up
    to a few hundred coordinates.
    """
    asm = system.compile()
    q, v, t = _state(system, asm, state, t, row)
    frame_args = (angular_velocity, center, spin)
    fr, raw = _raw(system, asm, q, v, t, tol, steady_tol, redundant, frame_args)
    N1, N2 = _bases(raw)
    A, V = _reduce(raw, N1, N2)
    if check_steady:
        rates = [np.abs(np.linalg.eigvals(fr.G1[b.offset + 3:b.offset + 7, b.offset + 3:b.offset + 7])).max()
                 for b in system.bodies if b.ncoord >= 7]
        fastest = max(rates, default=0.0)
        tau = 0.5 / fastest if fastest > 0.0 else 1.0          # 1 rad of rotation (|G1_p| = |omega|/2), or 1 s
        q2 = fr.advance(q, tau)
        v2 = fr.G1 @ q2 + fr.d1
        n = q.size
        X = np.zeros((n + 1, n + 1))
        X[:n, :n] = fr.G1
        G = sla.expm(tau * X)[:n, :n]                            # dq(tau) = G dqb: the orbit's linear part
        try:
            # the reference holds its constraints to tol; along the orbit their residual may grow a little (a
            # rotated residual), not by orders of magnitude unless the motion is not a symmetry: 100 tol
            later = _raw(system, asm, q2, v2, t + tau, 100.0 * tol, steady_tol, redundant, frame_args)[1]
        except ModelError as exc:
            raise ModelError(f"linearize: the steady motion is not a symmetry of the model: {tau:.4g} s further "
                             f"along it, {exc}") from None
        finally:
            asm.start(q, v)
            handle_redundancy(asm, q, t, redundant)
        drift = _drift(raw, later.pulled_back(G), N1, N2, A)
        if drift > 1e-6:
            raise ModelError(f"linearize: the linearized equations change along the steady motion (by {drift:.3e} "
                             f"relative over {tau:.4g} s): it is not a steady motion of the model, or the given "
                             "angular_velocity/spin is not a symmetry of it (a body's spin is one only if the body "
                             "and its attachments are axisymmetric about the spin axis)")
    w, X = np.linalg.eig(A)
    order = np.lexsort((-w.imag, -w.real))
    w, X = w[order], X[:, order]
    n1 = N1.shape[1]
    dq, dv = N1 @ X[:n1], V @ X[:n1] + N2 @ X[n1:]
    for k in range(w.size):
        ref = dq[:, k] if np.abs(dq[:, k]).max() > 1e-12 else dv[:, k]
        s = ref[np.argmax(np.abs(ref))]
        dq[:, k] /= s
        dv[:, k] /= s
    return Linearization(A, w, dq, dv, N1, N2, V, q, v, t, fr.G1)
