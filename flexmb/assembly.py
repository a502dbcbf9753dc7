"""Assembled equations of a System: residuals, sparse Jacobians, energies, reactions.

Equations (docs/theory.md §4):

    r(q, v, a, lambda, t) = M(q) a - Q(q, v, t) + Phi_q^T lambda = 0,     Phi(q, t) = 0.

``newton_matrix`` returns, with a fixed sparsity pattern built once,

    [[cM M + cC C + cK K + cH H(lambda) + cI I,  Phi_q^T],
     [Phi_q,                                      D     ]]

with ``K = dr/dq`` (without constraint terms), ``C = dr/dv``, ``H = sum lambda_k
d2 Phi_k/dq2`` and ``D`` diagonal (1 on rows switched off as redundant, or a
small regularization in projections). Velocity constraints ``B(q) v = b`` (docs/theory.md §8)
add rows ``cB B + cV (B v)_q`` with columns ``B^T`` (unsymmetric) and ``d(B^T lambda)/dq`` to H.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from . import rotations as rot
from .bodies.flexible import FlexibleBody
from .bodies.flexible_kernel import FlexibleBodyGroup
from .bodies.interface_loads import InterfaceLoads
from .bodies.rigid import NormalizationGroup, RigidBody, RigidBodyGroup
from .errors import InstabilityError, ModelError
from .joints.driver import Driver
from .joints.kernels import PrimitiveGroup, build_groups, extend
from .joints.nonholonomic import NonholonomicConstraint, NonholonomicRows
from .linalg import DENSE_LIMIT, powers_of_two
from .compiled.scatter import add_at, add_transpose_product
from .groups import EvalState, family_builders
from .sparsity import BlockPattern


_H_KEYS = frozenset({"I", "body", "flexible", "families", "hess", "norm_hess", "interface", "jac", "jacT", "norm_jac",
                     "norm_jacT", "nh", "D"})
"""Block handles of Assembly._h that are not element families (a family of such a name gets no handle list)."""

_BUILT_IN_FAMILIES = ("loads", "nodal", "motors", "springs", "crash", "contacts", "users")
"""``ElementGroup.family`` of the built-in families: ``Assembly._h[name]`` exists for each (empty when absent)."""


@dataclass
class ConstraintEval:
    """Constraint values; ``jac`` (m, nq) CSR is assembled on first access."""

    phi: np.ndarray       # (m,)
    phi_t: np.ndarray     # (m,)
    gamma: np.ndarray     # (m,)
    _pattern: object = None
    _blocks: list | None = None
    _jac: sp.csr_matrix | None = None

    @property
    def jac(self) -> sp.csr_matrix:
        if self._jac is None:
            self._jac = self._pattern.assemble(self._blocks)
        return self._jac


class Assembly:
    """Numbers, kernels and sparsity patterns of one compiled System."""

    def __init__(self, system):
        self.system = system
        bodies = system.bodies
        unsupported = [b for b in bodies if not isinstance(b, (RigidBody, FlexibleBody))]
        if unsupported:
            raise ModelError(f"bodies of type {type(unsupported[0]).__name__} are not supported by this assembly")
        self.state_elements = [f for f in system.forces if getattr(f, "n_states", 0)]
        self.nq = sum(b.ncoord for b in bodies) + sum(f.n_states for f in self.state_elements)
        self.rigid = RigidBodyGroup([b for b in bodies if isinstance(b, RigidBody)], system.gravity)
        flexible = [b for b in bodies if isinstance(b, FlexibleBody)]
        kinds = sorted({(b.n_modes, type(b).__name__) for b in flexible})
        self.flexible = [FlexibleBodyGroup([b for b in flexible if (b.n_modes, type(b).__name__) == k], system.gravity)
                         for k in kinds]
        # constraints: joint primitives first, then one normalization row per body
        prims, owner = [], []
        for k, j in enumerate(system.joints):
            for p in j.primitives():
                prims.append(p)
                owner.append(k)
        self.groups = build_groups(prims, 0, self.nq)
        prim_owner = {id(p): k for p, k in zip(prims, owner)}
        self.m_joint = sum(g.n * g.r for g in self.groups)
        self.norm = NormalizationGroup(bodies, self.m_joint)
        # velocity-level constraints (knife edges, rolling discs) last: docs/theory.md §8
        nh = [(j, k) for k, j in enumerate(system.joints) if isinstance(j, NonholonomicConstraint)]
        self.nonholonomic = NonholonomicRows([j for j, _ in nh], [k for _, k in nh], self.m_joint + self.norm.n)
        self.m = self.m_joint + self.norm.n + self.nonholonomic.m
        # each group's rows are one contiguous range: slices instead of index arrays in the hot path
        self._row_slices = [slice(int(g.rows[0]), int(g.rows[-1]) + 1) for g in self.groups]
        self._norm_slice = slice(self.m_joint, self.m_joint + self.norm.n)
        self._nh_slice = slice(self.m_joint + self.norm.n, self.m)
        self.velocity_rows = np.zeros(self.m, dtype=bool)       # rows B(q) v = b(t)
        self.velocity_rows[self._nh_slice] = self.nonholonomic.velocity
        self.labels = [lab for g in self.groups for lab in g.labels] + self.norm.labels + self.nonholonomic.labels
        self.row_joint = np.full(self.m, -1, dtype=np.int64)
        for g in self.groups:
            self.row_joint[g.rows] = np.repeat([prim_owner[id(p)] for p in g.prims], g.r)
        self.row_joint[self._nh_slice] = self.nonholonomic.owner
        self.driver_rows = np.zeros(self.m, dtype=bool)
        for k, j in enumerate(system.joints):
            if isinstance(j, Driver):
                self.driver_rows[self.row_joint == k] = True
        self.set_active(np.ones(self.m, dtype=bool))   # rows switched off when redundant
        self.interface_loads = InterfaceLoads(self.groups, flexible)
        self.interface_loads_bodies = flexible
        self._stability_bodies = [b for b in flexible if b.stiffening and b.stability_check and b.structure is None]
        # flexible body k (of ``flexible``) is body ``_flex_pos[k]`` of group ``_flex_group[k]``
        where = {id(b): (gi, i) for gi, g in enumerate(self.flexible) for i, b in enumerate(g.bodies)}
        self._flex_group = np.array([where[id(b)][0] for b in flexible], dtype=np.int64)
        self._flex_pos = np.array([where[id(b)][1] for b in flexible], dtype=np.int64)
        self._stability_mask = [np.array([b in self._stability_bodies for b in g.bodies]) for g in self.flexible]
        self._driver_groups = self._driven_subgroups()
        # force elements: every family through the group protocol (flexmb/groups.py), in the order of
        # FAMILY_MODULES then of run-time registrations
        q0, v0 = self.initial_state()
        st0 = self.eval_state(q0, v0, np.zeros(self.nq), 0.0)
        st0.gravity = np.asarray(system.gravity, dtype=float)
        self.families = [g for build in family_builders() for g in build(system.forces, self.nq, st0)]
        self._contact_families = [g for g in self.families if g.penetration(st0) is not None]
        self.accepted_penetrations: list | None = None      # step_end(penetrations=True)
        # groups with a history (start / accept / history / set_history), in family order
        self.stateful = [g for g in self.families if g.history().size]
        self._compiled_energy = None      # flexmb/energies.py, packed on first use
        self._build_patterns()

    def of_family(self, name: str) -> list:
        """The groups of one family (``ElementGroup.family``: "springs", "crash", "contacts", ...), for
        looking elements up (results, reports, tests); the assembly itself treats every group alike."""
        return [g for g in self.families if g.family == name]

    @property
    def contacts(self) -> list:
        """The pair, mesh, node and sphere-cloud contact groups (``of_family("contacts")``)."""
        return self.of_family("contacts")

    @property
    def springs(self) -> list:
        """The scalar spring groups (``of_family("springs")``; their block handles: ``_h["springs"]``)."""
        return self.of_family("springs")

    @property
    def crash(self) -> list:
        """The plastic-hinge and crush-element groups (``of_family("crash")``)."""
        return self.of_family("crash")

    def _driven_subgroups(self) -> list:
        """For the driver power: per primitive group with driver rows, a group of only its driven primitives
        (evaluated alone: the same kernel on fewer instances) and the system rows of those primitives."""
        out = []
        for g in self.groups:
            sel = [k for k in range(g.n) if self.driver_rows[g.rows[k * g.r]]]
            if sel:
                sub = PrimitiveGroup(g.kind, [g.prims[k] for k in sel], 0, self.nq)
                rows = (g.rows.reshape(g.n, g.r)[sel]).reshape(-1)
                out.append((sub, rows))
        return out

    # -- patterns ---------------------------------------------------------
    def _build_patterns(self) -> None:
        """Sparsity patterns of the Newton matrix and of Phi_q, built once.

        Two passes: the first registers every block family in full; a probe
        evaluation at a random state then shows which entries of each block can
        be non-zero (structure is geometric, so one generic state reveals it),
        and the second pass keeps only those. Element families with
        ``probe_structure = False`` (applied and user loads: user functions of time;
        contacts: zero while apart; crash elements) keep their full blocks.
        """
        self._register(structures=None)
        rng = np.random.default_rng(12345)
        q0, v0 = self.initial_state()
        q = q0 + 0.1 * rng.standard_normal(self.nq)
        v, a = rng.standard_normal((2, self.nq))
        lam = rng.standard_normal(self.m)
        blocks = self.residual(q, v, a, lam, 0.0, coef=(1.0, 1.0, 1.0, 1.0, 1.0), _raw=True)
        # blocks whose structure the probe cannot see: the families that say so (ElementGroup.probe_structure)
        keep_full = {self._h["I"], self._h["D"],
                     *(h for g, h in zip(self.families, self._h["families"]) if not g.probe_structure),
                     # nonlinear structures (beams, cables): a slack cable element is zero at the probe state
                     *(h for g, h in zip(self.flexible, self._h["flexible"])
                       if any(b.structure is not None for b in g.bodies)),
                     # velocity rows: (B v)_q and d(B^T lambda)/dq fill entries that B does not
                     *self._h["nh"]}
        shapes = self.pattern.shapes
        structures = [None if (k in keep_full or b is None) else (np.abs(np.asarray(b)) > 0).reshape(shapes[k])
                      for k, b in enumerate(blocks)]
        self._register(structures)

    def _register(self, structures) -> None:
        nq, m = self.nq, self.m
        N = nq + m
        pat = BlockPattern((N, N))
        jac_pat = BlockPattern((m, nq))
        h = self._h = {}
        st = iter(structures) if structures is not None else None

        def add(rows, cols):
            return pat.add(rows, cols, None if st is None else next(st))

        diag = np.arange(nq)[:, None]
        h["I"] = add(diag, diag)
        h["body"] = add(self.rigid.idx, self.rigid.idx)
        h["flexible"] = [add(g.idx, g.idx) for g in self.flexible]
        h["families"] = [add(g.scatter, g.scatter) for g in self.families]
        for g, hg in zip(self.families, h["families"]):        # per named family, e.g. h["springs"]: the same
            if g.family and g.family not in _H_KEYS:           # handles (for the compiled step's look-ups)
                h.setdefault(g.family, []).append(hg)
        for name in _BUILT_IN_FAMILIES:                        # empty lists for the absent built-in ones
            h.setdefault(name, [])
        self._family_scatter = [np.ascontiguousarray(g.scatter, dtype=np.int64).reshape(-1) for g in self.families]
        h["hess"] = [add(g.scatter, g.scatter) for g in self.groups]
        h["norm_hess"] = add(self.norm.cols, self.norm.cols)
        h["interface"] = self.interface_loads.register(add, self.groups, nq)
        self._row_cols = [np.repeat(g.scatter, g.r, axis=0) for g in self.groups]
        h["jac"], h["jacT"], self._jh = [], [], []
        jac_structs: list = []
        for g, cols in zip(self.groups, self._row_cols):
            rows = (nq + g.rows)[:, None]
            h["jac"].append(add(rows, cols))
            jac_structs.append(None if structures is None else structures[h["jac"][-1]].reshape(len(rows), 1, -1))
            h["jacT"].append(add(cols, rows))
            self._jh.append(jac_pat.add(g.rows[:, None], cols, jac_structs[-1]))
        nrows = (nq + self.norm.rows)[:, None]
        h["norm_jac"] = add(nrows, self.norm.cols)
        h["norm_jacT"] = add(self.norm.cols, nrows)
        self._jh_norm = jac_pat.add(self.norm.rows[:, None], self.norm.cols)
        h["nh"], self._jh_nh = [], None
        if self.nonholonomic.m:      # velocity rows: the row block and its transpose are separate (unsymmetric)
            nhr, nhc = self.nonholonomic.rows, self.nonholonomic.cols
            h["nh"] = [add((nq + nhr)[:, None], nhc), add(nhc, (nq + nhr)[:, None]), add(nhc, nhc)]
            self._jh_nh = jac_pat.add(nhr[:, None], nhc)
        ldiag = (nq + np.arange(m))[:, None]
        h["D"] = add(ldiag, ldiag)
        pat.finalize()
        jac_pat.finalize()
        self.pattern, self.jac_pattern = pat, jac_pat
        self._nblocks = len(pat.shapes)

    def eval_state(self, q, v, a, t) -> EvalState:
        """The state handed to protocol groups (flexmb/groups.py), with the ground appended."""
        qe, ve = extend(q, v)
        return EvalState(q, v, a, t, qe, ve)

    # -- initial state -------------------------------------------------
    def initial_state(self) -> tuple[np.ndarray, np.ndarray]:
        """Initial coordinates and rates: the bodies', then the force elements' states: an element's
        ``initial_q()`` / ``initial_v()`` when it has them (elements that own coordinates, docs/architecture.md),
        else 0 (a DC motor's charge) and its ``current0`` (the initial current) or 0."""
        def q0(f):
            return np.asarray(f.initial_q(), dtype=float) if hasattr(f, "initial_q") else np.zeros(f.n_states)

        def v0(f):
            if hasattr(f, "initial_v"):
                return np.asarray(f.initial_v(), dtype=float)
            return np.atleast_1d(getattr(f, "current0", np.zeros(f.n_states)))

        q = np.concatenate([b.initial_q() for b in self.system.bodies] + [q0(f) for f in self.state_elements])
        v = np.concatenate([b.initial_v() for b in self.system.bodies] + [v0(f) for f in self.state_elements])
        return q, v

    # -- history of force elements (docs/guide.md §5) -------------------
    def start(self, q, v) -> None:
        """Reset every element's history to its clean state at the initial state ``(q, v)`` of a
        run (no plastic deformation, angles unwrapped about 0, contacts apart unless penetrating)."""
        st = self.eval_state(q, v, np.zeros(self.nq), 0.0)
        for g in self.families:
            g.start(st)

    def history(self) -> np.ndarray:
        """The history of every stateful group as one flat vector: per group its length, then its
        values (a sphere cloud's length changes with its candidates; the rest is fixed)."""
        parts = []
        for g in self.stateful:
            h = g.history()
            parts += [[float(h.size)], h]
        return np.concatenate(parts) if parts else np.zeros(0)

    def set_history(self, x) -> None:
        """Restore a vector from :meth:`history`; values after the last group (padding) are ignored."""
        x = np.asarray(x, dtype=float).reshape(-1)
        k = 0
        for g in self.stateful:
            n = int(x[k]) if k < x.size else -1
            if n < 0 or k + 1 + n > x.size:
                raise ModelError(f"system {self.system.name!r}: the history vector ({x.size} values) does not "
                                 f"match its stateful elements (a group of {n} values at position {k})")
            g.set_history(x[k + 1:k + 1 + n])
            k += 1 + n

    # -- constraints ---------------------------------------------------
    def _row_evals(self, qe, ve, t):
        return [g.evaluate(qe, ve, t) for g in self.groups]

    def constraints(self, q, v, t, evals=None, norm=None, nh_eval=None) -> ConstraintEval:
        """Phi, Phi_q (sparse, inactive rows zeroed), Phi_t and gamma. Velocity rows (docs/theory.md §8)
        hold ``B v - b`` (m/s) in ``phi``, ``-b`` in ``phi_t``, ``-(B v)_q v + b'`` in ``gamma`` and ``B`` in
        the Jacobian."""
        if evals is None:
            evals = self._row_evals(*extend(q, v), t)
        phi = np.empty(self.m)
        phi_t = np.zeros(self.m)
        gamma = np.empty(self.m)
        blocks = [None] * len(self.jac_pattern.shapes)
        act, all_active = self.active, self._all_active
        for sl, e, h in zip(self._row_slices, evals, self._jh):
            phi[sl], phi_t[sl], gamma[sl] = e.phi, e.phi_t, e.gamma
            blocks[h] = e.jac if all_active else e.jac * act[sl][:, None]
        nphi, njac, nquad = self.norm.evaluate(q, v) if norm is None else norm
        sl = self._norm_slice
        phi[sl], gamma[sl] = nphi, -nquad
        blocks[self._jh_norm] = njac if all_active else njac * act[sl][:, None]
        if self.nonholonomic.m:
            e = self.nonholonomic.evaluate(q, v, t) if nh_eval is None else nh_eval
            sl = self._nh_slice
            phi[sl], phi_t[sl], gamma[sl] = e["phi"], e["phi_t"], e["gamma"]
            blocks[self._jh_nh] = e["jac"] if all_active else e["jac"] * act[sl][:, None]
        if not all_active:
            phi[~act] = 0.0
            gamma[~act] = 0.0
            phi_t[~act] = 0.0
        return ConstraintEval(phi, phi_t, gamma, self.jac_pattern, blocks)

    @property
    def _all_active(self) -> bool:
        return self._n_active == self.m

    def set_active(self, active: np.ndarray) -> None:
        """Switch constraint rows on (True) or off (False, redundant rows)."""
        self.active = np.asarray(active, dtype=bool)
        self._n_active = int(self.active.sum())

    # -- residual and Newton matrix --------------------------------------
    def residual(self, q, v, a, lam, t, coef=None, lam_diag=None, _raw=False, nh=(1.0, 0.0)):
        """Residual r (nq), constraint values (m) and, when ``coef = (cM, cC, cK, cH, cI)``
        is given, the Newton matrix (sparse, (nq+m) square).

        ``nh = (cB, cV)``: the Newton rows of the velocity constraints are ``cB B + cV (B v)_q`` (their
        columns stay ``B^T``): ``(1, 0)`` for projections and accelerations, ``(1, 1/gp)`` in the
        index-3 step (docs/theory.md §8). ``nh=None`` switches them off (position projection, statics:
        velocity rows say nothing about positions): zero rows and columns, 1 on the diagonal, ``phi`` 0
        and no force."""
        r = np.zeros(self.nq)
        blocks = [None] * self._nblocks
        kcoef = None if coef is None else coef[:3]
        idx, rb, blk = self.rigid.residual(q, v, a, kcoef)
        add_at(r, idx.reshape(-1), rb.reshape(-1))
        blocks[self._h["body"]] = blk
        for g, h in zip(self.flexible, self._h["flexible"]):
            idx, rf, blk = g.residual(q, v, a, kcoef)
            r[idx] += rf
            blocks[h] = blk
        qe, ve = extend(q, v)
        if self.families:        # every element family alike (flexmb/groups.py)
            st = EvalState(q, v, a, t, qe, ve)
            for g, h, sc in zip(self.families, self._h["families"], self._family_scatter):
                rg, blocks[h] = g.residual(st, kcoef)
                add_at(r, sc, np.ascontiguousarray(rg, dtype=float).reshape(-1))
        evals = self._row_evals(qe, ve, t)
        norm = self.norm.evaluate(q, v)
        nh_eval = self.nonholonomic.evaluate(q, v, t) if self.nonholonomic.m else None
        c = self.constraints(q, v, t, evals, norm, nh_eval)
        act = self.active
        lam_act = lam if self._all_active else np.where(act, lam, 0.0)
        inert = coef is not None and nh is None
        if inert and self.nonholonomic.m:
            lam_act = np.where(self.velocity_rows, 0.0, lam_act)
            c.phi[self.velocity_rows] = 0.0
        if nh_eval is not None:     # forces B^T lambda of the velocity rows (and g_q^T lambda of rolling contact)
            np.add.at(r, self.nonholonomic.cols.reshape(-1),
                      (lam_act[self._nh_slice, None] * nh_eval["jac"]).reshape(-1))
        for g, sl, e in zip(self.groups, self._row_slices, evals):     # Phi_q^T lambda, group by group
            add_transpose_product(r, g.scatter, e.jac, lam_act[sl], act[sl])
        sl = self._norm_slice
        add_transpose_product(r, self.norm.cols, norm[1], lam_act[sl], act[sl])
        iface = (self.interface_loads.contributions(q, evals, self.groups, lam_act, coef is not None)
                 if self.interface_loads else [])
        for e, res, *_ in iface:
            np.add.at(r, e.modal_rows, res)
        if coef is None:
            return r, c, None
        cM, cC, cK, cH, cI = coef
        for (e, _, d_lam, d_x, _), (h_lam, h_q) in zip(iface, self._h["interface"]):
            g = self.groups[e.group]
            blocks[h_lam] = d_lam * act[g.rows.reshape(g.n, g.r)[e.instances]][:, None, :]
            blocks[h_q] = cK * d_x
        blocks[self._h["I"]] = np.full(self.nq, cI)
        if cH:
            for sl, e, h in zip(self._row_slices, evals, self._h["hess"]):
                blocks[h] = cH * e.hess(lam_act[sl])
            blocks[self._h["norm_hess"]] = cH * self.norm.hessian(lam_act[self._norm_slice])
        if nh_eval is not None:
            self._nonholonomic_blocks(blocks, c, nh_eval, lam_act, cH, nh)
        for h, hT, jh in zip(self._h["jac"], self._h["jacT"], self._jh):
            blocks[h] = blocks[hT] = c._blocks[jh]            # active rows only
        blocks[self._h["norm_jac"]] = blocks[self._h["norm_jacT"]] = c._blocks[self._jh_norm]
        D = (1.0 - act) if lam_diag is None else (1.0 - act) + np.where(act, lam_diag, 0.0)
        if inert and self.nonholonomic.m:
            D = np.where(self.velocity_rows, 1.0, D)
        blocks[self._h["D"]] = D
        if _raw:
            return blocks
        return r, c, self.pattern.assemble(blocks, dense=self.nq + self.m <= DENSE_LIMIT)

    def _nonholonomic_blocks(self, blocks, c, e, lam_act, cH, nh) -> None:
        """Newton blocks of the velocity-constraint family: rows ``cB B + cV (B v)_q`` (holonomic rolling
        rows: ``g_q``), columns ``B^T`` and ``cH d(B^T lambda)/dq`` (docs/theory.md §8); ``nh=None``: the
        velocity rows switched off."""
        h_row, h_col, h_hess = self._h["nh"]
        vel = self.nonholonomic.velocity
        col = c._blocks[self._jh_nh]                     # B and g_q, inactive rows zeroed
        if nh is None:
            col = np.where(vel[:, None], 0.0, col)
            row = col
        else:
            cB, cV = nh
            row = np.where(vel[:, None], cB * col + cV * e["jac_v"] * self.active[self._nh_slice, None], col)
        blocks[h_row] = row[:, None, :]
        blocks[h_col] = col[:, :, None]
        blocks[h_hess] = (cH * lam_act[self._nh_slice, None, None]) * e["dB"]

    def switched_off_violation(self, q, t) -> tuple[float, str]:
        """Largest |Phi| among rows switched off as redundant, and its label.

        Those rows are dependent, so they stay satisfied on their own; if one
        does not, the start was a singular configuration, not a redundancy.
        """
        off = np.flatnonzero(~self.active)
        if off.size == 0:
            return 0.0, ""
        zero = np.zeros(self.nq)
        phi = np.empty(self.m)
        for g, e in zip(self.groups, self._row_evals(*extend(q, zero), t)):
            phi[g.rows] = e.phi
        phi[self.norm.rows] = self.norm.evaluate(q, zero)[0]
        if self.nonholonomic.m:              # velocity rows are 0 at v = 0; rolling contact rows are positions
            phi[self._nh_slice] = self.nonholonomic.evaluate(q, zero, t, derivatives=False)["phi"]
        k = off[int(np.argmax(np.abs(phi[off])))]
        return float(abs(phi[k])), self.labels[k]

    @functools.cached_property
    def inertia_scale(self) -> np.ndarray:
        """The scale ``d_j`` of each coordinate in the Newton and start matrices (flexmb/linalg.py
        :func:`~flexmb.linalg.saddle_scale`, 1/sqrt(kg) or 1/sqrt(kg m^2)): the power of two nearest
        ``1/sqrt(w_j)``, ``w_j`` the coordinate's own inertia, the diagonal of the mass matrix at the start taken
        per body (its translations: the largest of their three; its Euler parameters: the largest of their four,
        ``4 J_max``, or for a body without rotational inertia its translations' ``m``) and 1 for a coordinate
        without inertia. ``D M D`` then has entries of order 1 for a 1000 kg body and a 1 mg one alike; it
        holds no stiffness, so an absurdly stiff element (1e30 N/m) is still diagnosed as singular."""
        w = np.abs(self.mass_matrix(self.initial_state()[0]).diagonal())
        offsets = np.array([b.offset for b in self.system.bodies], dtype=int)
        if offsets.size:
            frame = w[offsets[:, None] + np.arange(7)]                     # (bodies, 7): translations, p
            translation = frame[:, :3].max(axis=1)
            rotation = frame[:, 3:].max(axis=1)
            rotation = np.where(rotation > 0.0, rotation, translation)
            w[offsets[:, None] + np.arange(3)] = translation[:, None]
            w[offsets[:, None] + np.arange(3, 7)] = rotation[:, None]
        return powers_of_two(1.0 / np.sqrt(np.where(w > 0.0, w, 1.0)))

    def mass_matrix(self, q) -> sp.csr_matrix:
        zero = np.zeros(self.nq)
        _, _, S = self.residual(q, zero, zero, np.zeros(self.m), 0.0, coef=(1.0, 0.0, 0.0, 0.0, 0.0))
        return sp.csr_matrix(S[: self.nq, : self.nq])

    def forces(self, q, v, t) -> np.ndarray:
        """Generalized applied + velocity-dependent forces Q(q, v, t) (without constraints)."""
        r, _, _ = self.residual(q, v, np.zeros(self.nq), np.zeros(self.m), t)
        return -r

    # -- energies and reactions -------------------------------------------
    def kinetic_energy(self, q, v) -> float:
        """Kinetic energy of the bodies and of the element families' own coordinates (particles; a motor's
        charge: its magnetic energy) (J)."""
        T = self.rigid.kinetic_energy(q, v) + sum(g.kinetic_energy(q, v) for g in self.flexible)
        if self.families:
            st = self.eval_state(q, v, np.zeros(self.nq), 0.0)
            T += sum(g.kinetic(st) for g in self.families)
        return T

    def potential_energy(self, q, v) -> float:
        """Gravity, strain energy of flexible bodies and the families' stored energy (springs, contacts) (J)."""
        st = self.eval_state(q, v, np.zeros(self.nq), 0.0)
        return (self.rigid.potential_energy(q) + sum(g.potential_energy(q) for g in self.flexible)
                + sum(g.potential(st) for g in self.families))

    def energies(self, q: np.ndarray, v: np.ndarray) -> tuple[float, float]:
        """Kinetic and potential energy (J) at ``(q, v)`` under the current element history: the values of
        :meth:`kinetic_energy` and :meth:`potential_energy` (to rounding), with every body and the families of
        :mod:`flexmb.compiled.energy` in one compiled call (the energy-balance check of a run)."""
        return self.compiled_energy.energies(q, v)

    def energy_rows(self, Q: np.ndarray, V: np.ndarray,
                    history: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Kinetic and potential energy (J) of the states ``Q``, ``V`` (nt, nq), each (nt,); ``history``: the
        element history saved with each state (rows of :meth:`history`), else the current one for all."""
        return self.compiled_energy.rows(Q, V, history)

    @property
    def compiled_energy(self):
        """The model's :class:`flexmb.energies.CompiledEnergy` (packed on first use; numba loads then)."""
        if self._compiled_energy is None:
            from .energies import CompiledEnergy
            self._compiled_energy = CompiledEnergy(self)
        return self._compiled_energy

    def nonconservative_power(self, q, v, t) -> float:
        """Power of modal damping and of the families' non-conservative forces (applied and user loads,
        dampers, motors, contact damping and friction, crash elements) (W), at the current history."""
        st = self.eval_state(q, v, np.zeros(self.nq), t)
        P = sum(g.damping_power(v) for g in self.flexible) + sum(g.power(st) for g in self.families)
        return float(P)

    def driver_power(self, q, v, lam, t) -> float:
        """Power of the driver constraint forces ``-lambda_d . (Phi_q,d v)`` (W), plus that of the velocity
        constraints ``-lambda . (B v)`` (zero for ideal ones, ``b = 0``: docs/theory.md §8)."""
        P = self.nonholonomic_power(q, v, lam, t)
        if not self._driver_groups:
            return P
        qe, ve = extend(q, v)
        for g, rows in self._driver_groups:          # the driven primitives only (_driven_subgroups)
            on = self.active[rows]
            if on.any():
                e = g.evaluate(qe, ve, t)
                vrow = np.repeat(ve[g.gather], g.r, axis=0)
                P -= float(np.dot(lam[rows][on], np.einsum("rx,rx->r", e.jac[on], vrow[on])))
        return P

    def nonholonomic_power(self, q, v, lam, t) -> float:
        """Power ``-lambda . (B v)`` of the velocity-constraint forces ``-B^T lambda`` (W)."""
        if not self.velocity_rows.any():
            return 0.0
        e = self.nonholonomic.evaluate(q, v, t, derivatives=False)
        vel = self.nonholonomic.velocity & self.active[self._nh_slice]
        return -float(np.dot(lam[self._nh_slice][vel], e["phi"][vel] - e["phi_t"][vel]))

    def step_end(self, q, v, lam, t, energy: bool = True, a=None,
                 penetrations: bool = False) -> tuple[float, float]:
        """After an accepted step: check the stability of stiffened modal bodies (``a``: accelerations),
        move every family's history on (``accept``) and return the non-conservative and driver powers (W)
        for the energy balance (``energy=False``: (0, 0), the powers are not evaluated).

        ``penetrations=True``: also keep the contact penetrations at this state, under the new history, in
        ``accepted_penetrations`` (:meth:`penetrations`; evaluated with the state the families just saw,
        so a family reuses what its power and accept computed)."""
        if a is not None and self._stability_bodies:
            self.check_stability(q, v, a, lam, t)
        st = self.eval_state(q, v, np.zeros(self.nq) if a is None else a, t)
        if not energy:
            for g in self.families:
                g.accept(st)
            P = None
        else:
            P = 0.0
            for g in self.families:
                P += g.power(st)          # with the history of the step (approach speeds, plastic state) ...
                g.accept(st)              # ... before it moves on
            P += sum(g.damping_power(v) for g in self.flexible)
        if penetrations:
            self.accepted_penetrations = [g.penetration(st) for g in self._contact_families]
        return (0.0, 0.0) if P is None else (float(P), self.driver_power(q, v, lam, t))

    @property
    def has_contacts(self) -> bool:
        """Whether the model has contact pairs (whose onsets the integrator locates)."""
        return bool(self._contact_families)

    def penetrations(self, q, v, t: float = 0.0) -> list[np.ndarray]:
        """Penetration (m) of every candidate pair of every contact family at ``(q, v)`` under the current
        history (the candidate lists of mesh contacts move on at accepted steps): one array per family."""
        st = self.eval_state(q, v, np.zeros(self.nq), t)
        return [g.penetration(st) for g in self._contact_families]

    def contact_onset(self, q0, v0, q1, v1, tol: float, d0: list | None = None) -> float | None:
        """Fraction of a step at which the first new contact began, when a pair apart at ``q0``
        penetrates by more than ``tol`` (m) at ``q1`` (linear interpolation of the penetration);
        None when no pair touched that deeply (docs/theory-contact.md §4). ``d0``: the
        :meth:`penetrations` at ``(q0, v0)`` when already known (the integrator keeps those of the
        accepted state)."""
        if not self.has_contacts:
            return None
        frac = None
        for d0, d1 in zip(self.penetrations(q0, v0) if d0 is None else d0, self.penetrations(q1, v1)):
            new = (d0 < -tol) & (d1 > tol)       # apart (not already at the surface) -> penetrating
            if new.any():
                f = float(np.min(-d0[new] / (d1[new] - d0[new])))
                frac = f if frac is None else min(frac, f)
        return frac

    def in_contact(self, q, v, tol: float = 0.0, d: list | None = None) -> bool:
        """Whether any pair penetrates or touches (penetration > -tol, m); ``d``: the :meth:`penetrations`
        at ``(q, v)`` when already known."""
        return any(bool(np.any(x > -tol)) for x in (self.penetrations(q, v) if d is None else d))

    def check_stability(self, q, v, a, lam, t) -> None:
        """Raise InstabilityError when the stiffened modal stiffness of a body is indefinite:
        ``K + sum_k c_k G_k + sum_sites f'_j G_j`` (+ spin softening) has a negative eigenvalue, i.e.
        the body buckles under its joint loads or diverges under spin. Names the body, the time and
        the compressive joint loads with their linear buckling loads (docs/theory-flexible.md §2)."""
        lam_act = np.where(self.active, lam, 0.0)
        evals = self._row_evals(*extend(q, v), t) if self.interface_loads else None
        site_loads = self.interface_loads.loads(q, evals, self.groups, lam_act) if self.interface_loads else []
        for gi, g in enumerate(self.flexible):
            check = self._stability_mask[gi]
            if not check.any():
                continue
            _, P, _ = g.terms(q, v, a, jacobian=True)
            Keff = P["eta"][:, 6:].copy()                    # K + stiffening + centrifugal softening
            for e, f in site_loads:                          # joint loads at sites, one add per site group
                mine = self._flex_group[e.body_index] == gi
                if mine.any():
                    np.add.at(Keff, self._flex_pos[e.body_index[mine]],
                              np.einsum("kj,kjab->kab", f[mine], e.G[mine]))
            lam_min = np.linalg.eigvalsh(0.5 * (Keff + Keff.transpose(0, 2, 1)))[:, 0]
            bad = np.flatnonzero(check & (lam_min < 0.0))
            if bad.size:
                raise InstabilityError(self._instability_message(g.bodies[bad[0]], t, float(lam_min[bad[0]]),
                                                                 site_loads))

    def _instability_message(self, body, t, lam_min, site_loads) -> str:
        """The body, the time and each joint load that stiffens or softens it, with the linear
        buckling load of that load's direction (``K x = P G_fx x``)."""
        per_joint: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        for e, f in site_loads:
            g = self.groups[e.group]
            for k, bi in enumerate(e.body_index):
                if self.interface_loads_bodies[bi] is not body or not np.any(e.G[k]):
                    continue
                row = g.rows.reshape(g.n, g.r)[e.instances[k], 0]
                name = self.system.joints[self.row_joint[row]].name
                F, G = per_joint.get(name, (np.zeros(6), e.G[k]))
                per_joint[name] = (F + f[k], G)
        parts = []
        for name, (F, G) in per_joint.items():
            w = np.linalg.eigvals(np.linalg.solve(body.K, G[0])).real
            pcr = 1.0 / w.max() if w.max() > 0 else np.inf
            parts.append(f"joint {name!r} pushes it with an axial (body x) compression of {-F[0]:.4g} N; "
                         f"linear buckling load for that load {pcr:.4g} N")
        return (f"flexible body {body.name!r} became unstable at t = {t:.6g} s: its stiffened modal stiffness "
                f"is indefinite (lowest eigenvalue {lam_min:.4g}), so it buckles or diverges and the linear "
                f"modal model is no longer valid" + ("; " + "; ".join(parts) if parts else "")
                + ". Use a NonlinearBeam (or more modes) to follow the post-buckled motion.")

    def reactions(self, q, v, lam, t, joints=None) -> tuple[np.ndarray, np.ndarray]:
        """Reaction force (N) and torque about the joint point (N m) that each joint (or each of the joint
        indices ``joints``) exerts on its second body, global components; arrays (n_joints, 3). One state of
        :meth:`reactions_at`."""
        F, T = self.reactions_at(np.array([t], dtype=float), np.asarray(q)[None], np.asarray(v)[None],
                                 np.asarray(lam)[None], joints)
        return F[0], T[0]

    def reactions_at(self, t, q, v, lam, joints=None) -> tuple[np.ndarray, np.ndarray]:
        """Reaction forces (N) and torques about the joint points (N m) of the joints with indices ``joints`` (all
        when None) at the states ``(t[i], q[i], v[i], lam[i])``, each (n_states, n_joints, 3), global components, on
        each joint's second body (its first when the second is the ground, whose reaction is not computed): the
        generalized constraint force ``g = -Phi_q^T lambda`` of a joint's active rows on its body's coordinates
        ``(r, p)`` gives the force ``g_r`` and the torque about the body's reference point ``n = E(p) g_p / 2``
        (Nikravesh 1988, §6.3), moved to the joint point ``P``: ``T = n - (P - r) x g_r``.

        The Jacobian has one sparsity pattern (``jac_pattern``) at every state: each state's blocks are scattered
        into its CSR values, then ``lambda_k dPhi_k/dq`` is summed over each joint's rows and its body's
        columns for all states at once."""
        ks = np.arange(len(self.system.joints)) if joints is None else np.asarray(joints, dtype=int)
        bodies = [j.body_b if j.body_b.ncoord else j.body_a for j in (self.system.joints[k] for k in ks)]
        cols = np.array([b.offset for b in bodies], dtype=int).reshape(-1, 1) + np.arange(7)     # (nj, 7)
        t, q, v, lam = (np.asarray(x, dtype=float) for x in (t, q, v, lam))
        pattern = self.jac_pattern
        data = np.zeros((t.size, pattern.nnz))
        for i in range(t.size):
            pattern.add_blocks(data[i], self.constraints(q[i], v[i], t[i])._blocks, pattern.sparse_positions)
        row = np.repeat(np.arange(self.m), np.diff(pattern.indptr))          # constraint row of each entry
        col = pattern.indices
        slot = np.full(len(self.system.joints) + 1, -1)                     # joint index -> its place in ks
        slot[ks] = np.arange(ks.size)
        j = slot[self.row_joint[row]]                                        # row_joint -1 (no joint): slot -1
        local = col - cols[j, 0]                                             # coordinate of the joint's body
        target = np.where((j >= 0) & self.active[row] & (local >= 0) & (local < 7), 7 * j + local, -1)
        used = np.flatnonzero(target >= 0)
        values = data[:, used] * lam[:, row[used]]                           # (n, n_used)
        gather = sp.csr_matrix((np.ones(used.size), (np.arange(used.size), target[used])),
                               shape=(used.size, 7 * ks.size))
        g = -(values @ gather).reshape(t.size, ks.size, 7)
        f = g[..., :3]
        r = q[:, cols[:, :3]]                                                # (n, nj, 3)
        p = q[:, cols[:, 3:]].reshape(-1, 4)
        n_ref = 0.5 * np.einsum("kij,kj->ki", rot.E(p), g[..., 3:].reshape(-1, 4)).reshape(f.shape)
        points = np.array([self.system.joints[k].point for k in ks], dtype=float).reshape(-1, 3)
        return f, n_ref - np.cross(points[None] - r, f)

