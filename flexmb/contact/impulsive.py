"""Impulsive impact with Newton's restitution: the velocity jump of a constrained system at an impact.

A contact pair whose law is :class:`Impulsive` exerts no force. When it touches while its surfaces approach, the
integrator stops on the moment of touch (the contact-onset location of docs/theory-contact.md §4) and replaces
the velocities there by the solution of the impact equations of the constrained system (Schwab & van der Linde,
*Multibody Dynamics B*, TU Delft lecture notes, 2002, §1.4, eq. 20; Pfeiffer & Glocker, *Multibody Dynamics with
Unilateral Contacts*, 1996, ch. 6)::

    [ M      Phi_q^T   C^T ] [ v+    ]   [ M v-            ]
    [ Phi_q  0         0   ] [ mu    ] = [ -Phi_t          ]          (1)
    [ C      0         0   ] [ rho   ]   [ -e (C v-)       ]

``M`` the mass matrix, ``Phi_q`` the Jacobian of every constraint (joints, drivers, Euler-parameter
normalizations: their impulses ``mu`` keep the joints closed through the impact), ``C`` the rows
``d delta / dq`` of the impacting pairs (``delta`` the penetration, so ``C v`` is the approach speed) and ``e``
their restitution coefficients: the configuration does not change, non-impulsive forces drop out, the
approach speeds reverse scaled by ``e``. A pair may only push: ``rho >= 0`` (the impulse ``-C^T rho`` on the
system lowers the approach speed ``C v``).

**Several contacts at once** (``rule``):

* ``"simultaneous"`` (default): every pair that touches (penetration above ``-touch``) and approaches faster
  than ``v_rest`` enters (1) together; a pair whose impulse comes out pulling (``rho > 0``) leaves the set and
  (1) is solved again (an active-set rule; at most one solve per pair).
* ``"sequential"``: the pairs are taken one at a time, the fastest approaching first, each with (1) for its own
  row, until no touching pair approaches faster than ``v_rest`` (Gauss-Seidel on the impacts: a row of touching
  balls hit at one end passes the momentum along, Newton's cradle).

**When a contact stays closed.** A pair that touches while approaching slower than ``v_rest`` (m/s) takes a
plastic impact (``e = 0``): its approach speed becomes zero and it stays at the surface as long as the other
forces do not press it in. An impulsive pair models impacts, not resting contact: when a pair is pressed in by
more than ``depth`` (m) at an accepted state, the run stops with a :class:`~flexmb.errors.ModelError` naming it
(use a compliant law, e.g. :class:`~flexmb.contact.LankaraniNikravesh`, where bodies come to rest on each other).

The kinetic energy an impact takes out of the system (``T+ - T- <= 0`` for ``e <= 1``) is booked as
non-conservative work, so the run's energy balance holds across impacts.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ..errors import ModelError, SingularConfigurationError
from ..linalg import SingularMatrixError, solve_saddle_scaled
from .laws import ContactLaw

__all__ = ["Impulsive", "ImpactEvent", "Impacts"]

RULES = ("simultaneous", "sequential")


class Impulsive(ContactLaw):
    """Newton's impact law for a contact pair: no force; at touch the approach speed reverses, scaled by the
    restitution coefficient ``e`` (0 <= e <= 1), through the impact equations of the whole constrained system
    (module docstring). ``v_rest`` (m/s): below this approach speed the impact is plastic; ``depth`` (m): the
    deepest penetration tolerated at an accepted state; ``rule``: ``"simultaneous"`` or ``"sequential"`` for
    several pairs touching at once (every impulsive pair of a model must use the same rule)."""

    name = "impulsive"

    def __init__(self, e: float, *, v_rest: float = 1e-3, depth: float = 1e-4, rule: str = "simultaneous"):
        e = float(e)
        if not 0.0 <= e <= 1.0:
            raise ModelError(f"Impulsive: restitution coefficient e = {e!r} must be in [0, 1]")
        for what, x in (("v_rest", v_rest), ("depth", depth)):
            if not (np.isfinite(x) and x > 0.0):
                raise ModelError(f"Impulsive: {what} = {x!r} must be a positive number")
        if rule not in RULES:
            raise ModelError(f"Impulsive: rule = {rule!r} must be one of {RULES}")
        self.e, self.v_rest, self.depth, self.rule = e, float(v_rest), float(depth), rule
        self.K, self.n = 0.0, 1.0          # no stiffness: no contact duration, no default contact step

    def force(self, delta, delta_dot, delta_dot_minus=None):
        z = np.zeros(np.shape(delta))
        return z, z.copy(), z.copy()

    def elastic_energy(self, delta) -> np.ndarray:
        return np.zeros(np.shape(delta))

    def nonconservative_power(self, delta, delta_dot, delta_dot_minus=None) -> np.ndarray:
        return np.zeros(np.shape(delta))

    def __repr__(self) -> str:
        return f"Impulsive(e={self.e:.6g}, v_rest={self.v_rest:.3g}, rule={self.rule!r})"


@dataclass(frozen=True)
class ImpactEvent:
    """One impact: time ``t`` (s), the configuration ``q`` and the velocities ``v_before``, ``v_after`` of the
    system, the pairs' names, their approach speeds before and after (m/s), their impulses (N s, >= 0) and the
    kinetic energy the impact took out (J, >= 0)."""

    t: float
    q: np.ndarray
    v_before: np.ndarray
    v_after: np.ndarray
    pairs: tuple
    speed_before: np.ndarray
    speed_after: np.ndarray
    impulse: np.ndarray
    energy_lost: float


class Impacts:
    """The impulsive pairs of an assembly and the velocity jump of an impact (eq. 1 of the module docstring).
    ``of(asm)`` is None for a model without impulsive pairs."""

    def __init__(self, asm, groups: list):
        self.asm = asm
        self.groups = groups    # (ContactGroup, indices of its impulsive pairs, their laws, its contact family number)
        laws = [w for _, _, ws, _ in groups for w in ws]
        rules = {w.rule for w in laws}
        if len(rules) > 1:
            raise ModelError(f"impulsive contact pairs use different rules {sorted(rules)}: one model, one rule")
        self.rule = rules.pop()
        self.e = np.array([w.e for w in laws])
        self.v_rest = np.array([w.v_rest for w in laws])
        self.depth = np.array([w.depth for w in laws])
        self.names = [g.labels[i] for g, idx, _, _ in groups for i in idx]
        self.events: list[ImpactEvent] = []

    @classmethod
    def of(cls, asm) -> "Impacts | None":
        from .pairs import ContactGroup
        groups = []
        for fam, g in enumerate(asm._contact_families):
            if isinstance(g, ContactGroup):
                idx = [i for i, c in enumerate(g.contacts) if isinstance(c.law, Impulsive)]
                if idx:
                    groups.append((g, np.array(idx), [g.contacts[i].law for i in idx], fam))
        return cls(asm, groups) if groups else None

    def _state(self, q: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Penetrations ``delta`` (m) and approach speeds ``d delta / dt`` (m/s) of every impulsive pair at ``(q, v)``
        (one compiled measure call per contact group)."""
        st = self.asm.eval_state(q, v, np.zeros(self.asm.nq), 0.0)
        parts = [g.state(st.qe, st.ve) for g, _, _, _ in self.groups]
        return (np.concatenate([d[idx] for (_, d, _), (_, idx, _, _) in zip(parts, self.groups)]),
                np.concatenate([r[idx] for (_, _, r), (_, idx, _, _) in zip(parts, self.groups)]))

    def rows(self, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        """The rows ``C = d delta / dq`` (pairs, nq) of every impulsive pair at ``q`` (an impact's equations only)."""
        nq = self.asm.nq
        st = self.asm.eval_state(q, v, np.zeros(nq), 0.0)
        rows = []
        for g, idx, _, _ in self.groups:
            J = -g.sign * g.measure_gradient(st.qe, st.ve)[2][idx]      # d delta / d qe, gathered columns
            C = np.zeros((idx.size, nq + 7))
            np.add.at(C, (np.arange(idx.size)[:, None], g.gather[idx]), J)
            rows.append(C[:, :nq])
        return np.vstack(rows)

    def check_depth(self, penetrations: list, t: float) -> None:
        """Raise ModelError when a pair is pressed in deeper than its ``depth`` (resting contact); ``penetrations``:
        those of every contact family at the accepted state, as the integrator keeps them
        (``Assembly.accepted_penetrations``): no evaluation of its own."""
        delta = np.concatenate([penetrations[fam][idx] for _, idx, _, fam in self.groups])
        deep = np.flatnonzero(delta > self.depth)
        if deep.size:
            k = int(deep[0])
            raise ModelError(
                f"impulsive contact {self.names[k]!r} is pressed in by {delta[k]:.3g} m at t = {t:.6g} s (depth "
                f"{self.depth[k]:.3g} m): an impulsive pair models impacts, not resting contact; give it a compliant "
                "law (e.g. LankaraniNikravesh) where bodies come to rest on each other")

    def jump(self, q: np.ndarray, v: np.ndarray, t: float, tol: float, lead: float) -> np.ndarray | None:
        """The velocities after the impacts of the pairs that touch and approach at ``(q, v, t)``, or None when no
        pair does; records an :class:`ImpactEvent`. A pair touches when its penetration exceeds ``-tol`` (m) or it
        would reach the surface within ``lead`` (s) at its approach speed (the integrator lands a step on the
        moment of touch to within its shortest aimed step)."""
        delta, rate = self._state(q, v)
        touching = delta > -tol - np.maximum(rate, 0.0) * lead
        tiny = 1e-12 * max(float(np.abs(rate).max()), 1.0)
        if not (touching & (rate > tiny)).any():
            return None
        C = self.rows(q, v)
        asm = self.asm
        _, c, S = asm.residual(q, v, np.zeros(asm.nq), np.zeros(asm.m), t, coef=(1.0, 0.0, 0.0, 0.0, 0.0))
        M = S[:asm.nq, :asm.nq]
        b = -c.phi_t
        v1, rho = v.copy(), np.zeros(rate.size)
        if self.rule == "simultaneous":
            # every touching pair that does not separate, Newton's law on each (a resting one stays at rest);
            # pairs whose impulse comes out pulling leave the set
            e = np.where(rate > self.v_rest, self.e, 0.0)     # slow touches are plastic (module docstring)
            active = np.flatnonzero(touching & (rate > -tiny))
            while active.size:
                v1, r = self._solve(S, C[active], M @ v, b, -e[active] * rate[active])
                if not (r < 0.0).any():
                    rho[active] = r
                    break
                active = active[r >= 0.0]
        else:
            # one pair at a time, the fastest approaching first, until no touching pair approaches
            for _ in range(100 * rate.size):
                speed = C @ v1
                moving = np.flatnonzero(touching & (speed > tiny))
                if moving.size == 0:
                    break
                k = int(moving[np.argmax(speed[moving])])
                e_k = self.e[k] if speed[k] > self.v_rest[k] else 0.0
                v1, r = self._solve(S, C[k:k + 1], M @ v1, b, np.array([-e_k * speed[k]]))
                rho[k] += r[0]
        hit = touching & ((rate > tiny) | (rho != 0.0))
        after = C @ v1
        T0, T1 = asm.kinetic_energy(q, v), asm.kinetic_energy(q, v1)
        which = np.flatnonzero(hit)
        self.events.append(ImpactEvent(float(t), q.copy(), v.copy(), v1.copy(), tuple(self.names[k] for k in which),
                                       rate[which], after[which], rho[which], float(T0 - T1)))
        return v1

    def _solve(self, S, C, Mv, b, target) -> tuple[np.ndarray, np.ndarray]:
        """Eq. (1) for the rows ``C`` (k, nq) with right-hand side ``target`` (= C v+); returns ``(v+, rho)``."""
        asm = self.asm
        nq, m, k = asm.nq, asm.m, C.shape[0]
        Ce = np.hstack([C, np.zeros((k, m))])
        if sp.issparse(S):
            A = sp.bmat([[S, sp.csr_matrix(Ce.T)], [sp.csr_matrix(Ce), None]], format="csc")
        else:
            A = np.block([[np.asarray(S), Ce.T], [Ce, np.zeros((k, k))]])
        rhs = np.concatenate([Mv, b, target])
        try:
            x = solve_saddle_scaled(A, rhs, nq, asm.inertia_scale)
        except SingularMatrixError as exc:
            raise SingularConfigurationError(f"impact equations singular ({exc}): the impacting pairs' normals "
                                             "depend on each other or on the joints") from None
        return x[:nq], x[nq + m:]
