"""``static_equilibrium``: Newton on the static equations of a System with constraints and load stepping.

Static equations (docs/theory.md §4 with v = a = 0, inertia off), load factor ``lambda`` in [0, 1]:

    r(q, lambda) = r_int(q) + lambda r_ext(q) + Phi_q^T mu = 0,     Phi(q, t) = 0,

``mu`` the multipliers. The external part ``r_ext`` is gravity and the applied loads (``Force``, ``Torque``,
``NodalForce``, ``NodalTorque``); everything else (elastic forces of springs, flexible bodies and beams, contact, user forces)
is internal and held at full value. Gravity enters every body's equations only as the relative acceleration
``a - g`` of the frame origin (flexmb/bodies/rigid.py, flexible_kernel.py: ``w_acc = rdd - g``), so gravity
``lambda g`` is the Assembly's residual at a frame acceleration ``(1 - lambda) g`` -- exact, with its exact
tangent. The applied loads are linear in their values, so their share is removed as ``(lambda - 1) r_loads``
with the tangent ``(lambda - 1) dr_loads/dq``. Drivers are held at the fixed time ``t``.

Newton matrix (Assembly.residual with ``coef = (0, 0, 1, 1, 0)``): ``[[K + H(mu), Phi_q^T], [Phi_q, 0]]``.
Load stepping: the increment of ``lambda`` is ``1 / load_steps``, halved when Newton fails and grown back
(x 1.5, at most the nominal increment) after an easy convergence (Crisfield 1991, Non-linear Finite Element
Analysis of Solids and Structures, vol. 1, ch. 9). Load control cannot pass a limit point (snap-through): a
step whose Newton matrix changes the sign of its determinant is refused (halved, at last a ConvergenceError);
``arc_length=True`` follows the path through it with Crisfield's spherical arc length (class ``_Arc``).
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from .. import checks
from ..errors import ConvergenceError, ModelError
from ..io.arrays import stack_rows
from ..results import Result
from .initial import accelerations, handle_redundancy, project_positions, project_velocities
from ..linalg import SingularMatrixError, factorize, single_blas_thread_for_small_systems, solve_saddle_scaled

__all__ = ["static_equilibrium", "start_from_equilibrium"]

OWNER = "static_equilibrium"
EASY_ITERATIONS = 4
"""A load step that converged in at most this many Newton iterations lets the next increment grow."""
GROWTH = 1.5
"""Growth factor of the load increment after an easy convergence (capped at the nominal increment)."""
RIGID_NAMES = ("x", "y", "z", "p0", "p1", "p2", "p3")
"""Names of a body's first seven coordinates: frame position (m) and Euler parameters."""


@single_blas_thread_for_small_systems
def static_equilibrium(system, load_steps: int = 10, *, t: float = 0.0, tol: float = 1e-10,
                       max_newton: int = 25, max_halvings: int = 10, arc_length: bool = False,
                       max_arc_steps: int = 200, redundant: str = "remove") -> Result:
    """Static equilibrium of ``system`` under gravity and applied loads, reached by load stepping.

    The loads and gravity grow with the load factor ``lambda`` from 0 to 1 (module doc); prescribed motions
    (drivers) are held at time ``t`` (s). ``load_steps``: nominal number of equal increments; an increment is
    halved when Newton fails (down to ``2**-max_halvings`` of the nominal one) and grows back after an easy
    convergence. Newton converges when the correction of q and the constraint violation are below
    ``tol * (1 + max|q|)``, within ``max_newton`` iterations.

    Returns a Result whose rows are the load steps: ``t`` is the load factor (row 0: lambda = 0, the start
    configuration projected onto the constraints), ``q`` the equilibrium coordinates, ``lam`` the
    multipliers, ``v``, ``vd`` and the works zero. ``simulate(system, ..., initial=res)`` starts a dynamic
    run from the last row at rest.

    ``arc_length=True``: after the first load step, follow the path with Crisfield's spherical arc length
    (module doc), through limit points (snap-through) where the load factor falls and rises again, at most
    ``max_arc_steps`` arcs; the rows then follow the path and ``t`` need not grow monotonically.

    Raises ConvergenceError naming the free body coordinate when the model has a direction with neither
    stiffness nor constraint (a mechanism), and naming the load factor reached when a step passes a limit
    point or Newton cannot converge; ModelError for bad keywords.
    """
    steps = checks.count(load_steps, "load_steps", OWNER)
    t = checks.scalar(t, "t (s)", OWNER)
    tol = checks.scalar(tol, "tol", OWNER, sign="positive")
    max_newton = checks.count(max_newton, "max_newton", OWNER)
    max_halvings = checks.count(max_halvings, "max_halvings", OWNER, low=0)
    max_arc_steps = checks.count(max_arc_steps, "max_arc_steps", OWNER)
    if not isinstance(arc_length, (bool, np.bool_)):
        raise ModelError(f"{OWNER}: arc_length must be True or False, got {arc_length!r}")
    if redundant not in ("remove", "error"):
        raise ModelError(f"{OWNER}: redundant must be 'remove' or 'error', got {redundant!r}")
    asm = system.compile()
    asm.start(*asm.initial_state())
    asm.set_active(np.ones(asm.m, dtype=bool))
    q = project_positions(asm, asm.initial_state()[0], t)
    handle_redundancy(asm, q, t, redundant)
    rows = [_row(asm, 0.0, q, np.zeros(asm.m))]
    rows += _load_control(asm, q, t, 1.0 / steps, tol, max_newton, max_halvings, arc_length)
    if arc_length and rows[-1]["t"] < 1.0 - 1e-12:
        rows += _Arc(asm, t, tol, max_newton, rows[-2], rows[-1]).follow(max_halvings, max_arc_steps)
    return _result(system, asm, rows)


def _load_control(asm, q, t: float, nominal: float, tol: float, max_newton: int, max_halvings: int,
                  first_only: bool) -> list[dict]:
    """Load steps from lambda = 0 at ``q`` to 1 (only the first one when ``first_only``): rows. The increment
    ``nominal`` is halved on failure down to ``nominal 2**-max_halvings`` and grown back after easy steps."""
    rows: list[dict] = []
    smallest = nominal * 0.5 ** max_halvings
    factor, increment, sign, limit_seen = 0.0, nominal, None, False
    while factor < 1.0 - 1e-12:
        target = min(1.0, factor + increment)
        if sign is None:                  # first step: no equilibrium yet, multipliers from the loads
            lam = _least_squares_multipliers(asm, q, target, t)
        try:
            q, lam, iterations, sign = _newton(asm, q, lam, target, t, tol, max_newton, sign)
        except _StepFailed as failed:
            limit_seen = limit_seen or failed.limit
            if increment / 2.0 < smallest * (1.0 - 1e-9):
                raise _step_error(factor, increment, failed.reason, limit_seen) from None
            increment /= 2.0
            continue
        factor = target
        asm.step_end(q, np.zeros(asm.nq), lam, t, energy=False)       # element histories at the accepted state
        rows.append(_row(asm, factor, q, lam))
        if iterations <= EASY_ITERATIONS:
            increment = min(GROWTH * increment, nominal)
        if first_only:
            break
    return rows


def start_from_equilibrium(asm, initial: Result, t: float,
                           redundant: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Start of a dynamic run at rest in the last state of ``initial`` (a static_equilibrium Result):
    ``q`` from its last row, velocities projected from zero (drivers' rates at ``t``), accelerations and
    multipliers from the index-1 equations; the element histories (plastic hinges, crush, contacts) as
    they were at that state. Returns ``(q, v, vd, lam)``."""
    if not isinstance(initial, Result) or initial.q.ndim != 2 or initial.q.shape[1] != asm.nq:
        got = getattr(getattr(initial, "q", None), "shape", initial)
        raise ModelError(f"simulate: initial must be a Result of this system with {asm.nq} coordinates per row "
                         f"(from fm.static_equilibrium), got {got!r}")
    q = np.array(initial.q[-1], dtype=float)
    asm.set_active(np.ones(asm.m, dtype=bool))
    handle_redundancy(asm, q, t, redundant)
    if initial.history is not None:
        asm.set_history(initial.history[-1])
    v = project_velocities(asm, q, np.zeros(asm.nq), t)
    vd, lam = accelerations(asm, q, v, t)
    return q, v, vd, lam


def _equations(asm, q, lam, factor: float, t: float):
    """Static residual (nq + m) and Newton matrix at load factor ``factor`` (module doc)."""
    zero = np.zeros(asm.nq)
    a_gravity = _frame_acceleration(asm, (1.0 - factor) * np.asarray(asm.system.gravity, dtype=float))
    r, c, S = asm.residual(q, zero, a_gravity, lam, t, coef=(0.0, 0.0, 1.0, 1.0, 0.0), nh=None)   # no velocity rows
    r_loads, K_loads = _applied_loads(asm, q, t)
    r = r + (factor - 1.0) * r_loads
    K_loads = (factor - 1.0) * K_loads
    S = S + (K_loads.toarray() if isinstance(S, np.ndarray) else K_loads)
    return np.concatenate([r, c.phi]), S


def _frame_acceleration(asm, acc: np.ndarray) -> np.ndarray:
    """Acceleration vector with ``acc`` (m/s^2) on every body's frame-origin coordinates, zero elsewhere."""
    a = np.zeros(asm.nq)
    for b in asm.system.bodies:
        if b.ncoord:
            a[b.offset:b.offset + 3] = acc
    return a


def _applied_loads(asm, q, t: float):
    """Residual share ``-Q`` (nq) of Force, Torque, NodalForce and NodalTorque at ``q`` and its derivative by q, as a
    sparse (nq + m) square matrix (zero outside the q block)."""
    n = asm.nq + asm.m
    r = np.zeros(asm.nq)
    rows, cols, vals = [np.zeros(0, dtype=np.int64)], [np.zeros(0, dtype=np.int64)], [np.zeros(0)]
    st = asm.eval_state(q, np.zeros(asm.nq), np.zeros(asm.nq), t)
    for g in (g for g in asm.families if g.applied):          # prescribed loads (ElementGroup.applied)
        rg, blk = g.residual(st, (0.0, 0.0, 1.0))
        idx = g.scatter                                           # -1: a ground coordinate, dropped
        np.add.at(r, idx[idx >= 0], np.asarray(rg)[idx >= 0])
        R, C = np.broadcast_to(idx[:, :, None], blk.shape), np.broadcast_to(idx[:, None, :], blk.shape)
        keep = (R >= 0) & (C >= 0)
        rows.append(R[keep])
        cols.append(C[keep])
        vals.append(np.asarray(blk)[keep])
    K = sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(n, n))
    return r, K


def _least_squares_multipliers(asm, q, factor: float, t: float) -> np.ndarray:
    """Multipliers that balance the loads at ``q`` best (least squares of ``r + Phi_q^T mu``): a start for
    Newton whose ``H(mu)`` already holds the stiffness of tension in a chain or a pendulum."""
    R, _ = _equations(asm, q, np.zeros(asm.m), factor, t)
    jac = asm.constraints(q, np.zeros(asm.nq), t).jac
    if asm.velocity_rows.any():          # velocity constraints carry no static load (docs/theory.md §8)
        jac = sp.diags((~asm.velocity_rows).astype(float)) @ jac
    return spla.lsqr(jac.T, -R[:asm.nq], atol=1e-14, btol=1e-14)[0]


class _StepFailed(Exception):
    """A load step did not converge; ``reason`` says how (internal: the step is retried with half the increment)."""

    def __init__(self, reason: str, limit: bool = False):
        super().__init__(reason)
        self.reason = reason
        self.limit = limit      # the tangent stiffness lost its definiteness (singular or det sign changed)


def _newton(asm, q, lam, factor: float, t: float, tol: float, max_newton: int, sign: float | None):
    """Newton iterations at one load factor from ``(q, lam)``: ``(q, lam, iterations, sign)`` with ``sign``
    the sign of det of the Newton matrix at the solution. Raises _StepFailed when they do not converge or when
    an iterate's matrix has a determinant sign other than ``sign`` (the last equilibrium's): the step crossed a
    limit or bifurcation point, where an odd number of tangent-stiffness eigenvalues pass zero (the sign of
    the determinant as the indicator of a critical point: Crisfield 1991, vol. 1, ch. 9). A singular matrix at the first
    iteration of the first step (``sign`` None) means a free direction (ConvergenceError naming it); later,
    a singular matrix is a limit or bifurcation point reached."""
    q, lam = q.copy(), lam.copy()
    nq = asm.nq
    for it in range(1, max_newton + 1):
        R, S = _equations(asm, q, lam, factor, t)
        if not np.all(np.isfinite(R)):
            raise _StepFailed("the residual became non-finite")
        try:
            dx = solve_saddle_scaled(S, -R, nq)
        except SingularMatrixError:
            if it == 1 and sign is None:        # singular before any equilibrium: a free direction
                raise _free_direction_error(asm, S, factor) from None
            raise _StepFailed("the tangent stiffness became singular", limit=True) from None
        if sign is not None and _det_sign(S) != sign:
            raise _StepFailed("the tangent stiffness changed the sign of its determinant", limit=True)
        q += dx[:nq]
        lam += dx[nq:]
        scale = tol * (1.0 + np.max(np.abs(q), initial=0.0))
        if np.max(np.abs(dx[:nq]), initial=0.0) <= scale and np.max(np.abs(R[nq:]), initial=0.0) <= scale:
            return q, lam, it, _det_sign(_equations(asm, q, lam, factor, t)[1])
    raise _StepFailed(f"Newton did not converge in {max_newton} iterations")


def _det_sign(S) -> float:
    """Sign of det S: dense by slogdet, sparse from SuperLU's factors (``P_r S P_c = L U``, unit L)."""
    if not sp.issparse(S):
        return float(np.linalg.slogdet(S)[0])
    lu = spla.splu(sp.csc_matrix(S))
    return float(np.prod(np.sign(lu.U.diagonal())) * _parity(lu.perm_r) * _parity(lu.perm_c))


def _parity(perm: np.ndarray) -> int:
    """+1 for an even permutation, -1 for an odd one (n minus the number of cycles transpositions)."""
    seen = np.zeros(perm.size, dtype=bool)
    cycles = 0
    for start in range(perm.size):
        if not seen[start]:
            cycles += 1
            k = start
            while not seen[k]:
                seen[k] = True
                k = perm[k]
    return -1 if (perm.size - cycles) % 2 else 1


class _Arc:
    """Crisfield's spherical arc length (Crisfield 1981, Computers & Structures 13, 55-62; Crisfield 1991,
    vol. 1, ch. 9): each arc of radius ``l`` satisfies ``|dq|^2 + psi^2 dlambda^2 = l^2``, solved together with the
    static equations by Newton on the bordered system ``[[S, dR/dlambda], [2 dq^T, 2 psi^2 dlambda]]``
    (consistent linearization, Crisfield 1991, ch. 9). ``psi`` makes both terms equal on the first load step
    (so ``l`` starts as that step's length); ``l`` is halved when Newton fails and grows (x 1.5) after an easy
    arc; the predictor extends the previous arc (secant predictor), which keeps the direction of travel
    through limit points where the load factor turns back."""

    def __init__(self, asm, t: float, tol: float, max_newton: int, before: dict, after: dict):
        self.asm, self.t, self.tol, self.max_newton = asm, t, tol, max_newton
        self.q, self.lam, self.factor = after["q"], after["lam"], after["t"]
        self.dq, self.dlam = after["q"] - before["q"], after["lam"] - before["lam"]
        self.dfactor = after["t"] - before["t"]
        dq = float(np.linalg.norm(self.dq))
        self.psi = dq / self.dfactor if dq > 0 else 1.0
        self.radius = float(np.hypot(dq, self.psi * self.dfactor))

    def follow(self, max_halvings: int, max_arcs: int) -> list[dict]:
        """Arcs until the load factor reaches 1 (the last one lands on it by load control): rows."""
        rows: list[dict] = []
        smallest = self.radius * 0.5 ** max_halvings      # of the first arc
        while self.factor < 1.0 - 1e-12:
            if len(rows) >= max_arcs:
                raise ConvergenceError(f"{OWNER}: arc length: {max_arcs} arcs (max_arc_steps) did not reach load "
                                       f"factor 1 (at {self.factor:.6g}); raise max_arc_steps or load_steps",
                                       time=self.factor, step=self.radius)
            try:
                q, lam, factor, iterations = self._arc()
                if factor > 1.0:          # past the full load: land on it from the last equilibrium
                    q, lam, _, _ = _newton(self.asm, self.q, self.lam, 1.0, self.t, self.tol, self.max_newton, None)
                    factor = 1.0
            except _StepFailed as failed:
                if self.radius / 2.0 < smallest * (1.0 - 1e-9):
                    raise _step_error(self.factor, self.radius, f"arc length: {failed.reason}", False) from None
                self.radius /= 2.0
                continue
            if iterations <= EASY_ITERATIONS:
                self.radius *= GROWTH
            self.dq, self.dlam, self.dfactor = q - self.q, lam - self.lam, factor - self.factor
            self.q, self.lam, self.factor = q, lam, factor
            self.asm.step_end(q, np.zeros(self.asm.nq), lam, self.t, energy=False)
            rows.append(_row(self.asm, factor, q, lam))
        return rows

    def _load_direction(self, q, lam) -> np.ndarray:
        """dR/dlambda = r_ext (nq + m): the residual is affine in the load factor."""
        return (_equations(self.asm, q, lam, 1.0, self.t)[0] - _equations(self.asm, q, lam, 0.0, self.t)[0])

    def _arc(self):
        """One arc from the last equilibrium: ``(q, lam, factor, iterations)``; _StepFailed when Newton fails."""
        asm, nq, psi2 = self.asm, self.asm.nq, self.psi ** 2
        ahead = self.radius / np.sqrt(self.dq @ self.dq + psi2 * self.dfactor ** 2)     # secant predictor
        q, lam, factor = self.q + ahead * self.dq, self.lam + ahead * self.dlam, self.factor + ahead * self.dfactor
        for it in range(1, self.max_newton + 1):
            R, S = _equations(asm, q, lam, factor, self.t)
            Dq, Df = q - self.q, factor - self.factor
            g = Dq @ Dq + psi2 * Df * Df - self.radius ** 2
            row = np.concatenate([2.0 * Dq, np.zeros(asm.m)])
            try:
                dx = _solve_bordered(S, self._load_direction(q, lam), row, 2.0 * psi2 * Df, -R, -g)
            except SingularMatrixError:
                raise _StepFailed("singular bordered arc-length matrix") from None
            q, lam, factor = q + dx[:nq], lam + dx[nq:-1], factor + dx[-1]
            scale = self.tol * (1.0 + np.max(np.abs(q), initial=0.0))
            if (np.max(np.abs(dx[:nq]), initial=0.0) <= scale and np.max(np.abs(R[nq:]), initial=0.0) <= scale
                    and abs(dx[-1]) <= self.tol):
                return q, lam, factor, it
        raise _StepFailed(f"Newton did not converge on an arc in {self.max_newton} iterations")


def _solve_bordered(S, column: np.ndarray, row: np.ndarray, corner: float, top: np.ndarray,
                    last: float) -> np.ndarray:
    """Solution of ``[[S, column], [row, corner]] x = [top, last]``. The arc equation (row) and the load-factor
    unknown (column) are scaled to the size of S first, which leaves x unchanged but keeps the pivots of a
    stiff model (S ~ 1e9) apart from an arc of micrometres out of the singularity test of the factorization."""
    size = float(abs(S).max())
    c_row = size / max(float(np.abs(row).max(initial=0.0)), abs(corner), 1e-300)
    c_col = size / max(float(np.abs(column).max(initial=0.0)), abs(c_row * corner), 1e-300)
    A = _bordered(S, c_col * column, c_row * row, c_row * c_col * corner)
    x = factorize(A).solve(np.append(top, c_row * last))
    x[-1] *= c_col
    return x


def _bordered(S, column: np.ndarray, row: np.ndarray, corner: float):
    """``[[S, column], [row, corner]]``, dense or sparse like S."""
    if not sp.issparse(S):
        return np.block([[S, column[:, None]], [row[None, :], np.array([[corner]])]])
    return sp.bmat([[S, sp.csr_matrix(column[:, None])], [sp.csr_matrix(row[None, :]), sp.csr_matrix([[corner]])]],
                   format="csr")


def _coordinate_name(asm, k: int) -> str:
    """``body 'name' coordinate x`` (or p0..p3, modal coordinate j, a force element's state) of coordinate
    ``k`` of the system vector."""
    for b in asm.system.bodies:
        if b.ncoord and b.offset <= k < b.offset + b.ncoord:
            j = k - b.offset
            return f"body {b.name!r} coordinate {RIGID_NAMES[j] if j < 7 else f'modal {j - 7}'}"
    offset = sum(b.ncoord for b in asm.system.bodies)
    for f in asm.state_elements:
        if offset <= k < offset + f.n_states:
            return f"state {k - offset} of force element {f.name!r}"
        offset += f.n_states
    return f"coordinate {k}"


def _free_direction_error(asm, S, factor: float) -> ConvergenceError:
    """The free direction of a singular Newton matrix (its null vector, by SVD) named by its largest
    coordinate."""
    dense = S.toarray() if sp.issparse(S) else np.asarray(S)
    null = np.linalg.svd(dense)[2][-1][:asm.nq]
    k = int(np.argmax(np.abs(null)))
    name = _coordinate_name(asm, k)
    return ConvergenceError(
        f"{OWNER}: the stiffness matrix is singular at load factor {factor:.4g}: the model has a free direction "
        f"(neither stiffness nor constraint holds it), mostly along {name}. Add a joint, a spring or a driver "
        "that holds it.", time=factor, worst=name)


def _step_error(factor: float, increment: float, reason: str, limit: bool) -> ConvergenceError:
    """No equilibrium beyond ``factor`` even with the smallest increment: a limit point (``limit``: a step
    tried beyond it saw the tangent stiffness lose its definiteness) or a divergence."""
    why = ("the load path reaches a limit point there (snap-through or buckling: the tangent stiffness loses "
           "its definiteness and the load cannot grow along the path), which load control cannot pass: "
           "follow it with arc_length=True" if limit else "refine load_steps or raise max_newton")
    if factor == 0.0:
        why += ("; at load factor 0 it can also be a contact that carries the load with zero stiffness at zero "
                "penetration (a Hertzian law K delta^n, n > 1, e.g. sprocket flanks touching a seated chain): start "
                "with those contacts pressed (docs/theory-roller-chain.md §5, static start)")
    return ConvergenceError(
        f"{OWNER}: no equilibrium found beyond load factor {factor:.6g}: {reason} with the increment halved "
        f"down to {increment:.3g}; {why}.", time=factor, step=increment)


def _row(asm, factor: float, q, lam) -> dict:
    zero = np.zeros(asm.nq)
    return dict(t=factor, q=q.copy(), v=zero, vd=zero, lam=lam.copy(), work_nc=0.0, work_drivers=0.0,
                history=asm.history())


def _result(system, asm, rows: list[dict]) -> Result:
    arrays = {k: (stack_rows([r[k] for r in rows], asm.history().size) if k == "history"
                  else np.array([r[k] for r in rows])) for k in Result.ARRAYS}
    return Result(**arrays, system=system, stats={"load_steps": len(rows) - 1, "method": "static"},
                  message="completed", redundant=[asm.labels[k] for k in np.flatnonzero(~asm.active)])
