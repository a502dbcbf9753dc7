"""Vectorized equations of motion of flexible bodies (docs/theory-flexible.md §2).

With body-frame quantities ``a0 = A^T (r_dd - g)``, ``alpha = 2 G p_dd``,
``omega = 2 G p_d``, ``S = int rho u``, ``L = int rho u~ Phi``, ``J = int rho u~^T u~``
and ``W = int rho u w^T`` (``u = x + Phi eta``, ``w = Phi eta_d``), the virtual work
of the inertia forces ``int rho dR . R_dd`` gives (Shabana, *Dynamics of Multibody
Systems*, 3rd ed., §5.4-5.5; Schwertassek & Wallrapp 1999, §5.3):

    F_V  = m a0 + alpha x S + omega x (omega x S) + 2 omega x (S_t eta_d) + S_t eta_dd
    F_pi = S x a0 + J alpha + omega x J omega + 2 (omega tr W - W^T omega) + L eta_dd
    F_q  = S_t^T a0 + L^T alpha + c(omega, eta) + 2 S_w^T omega + M_ee eta_dd
           + K eta + D eta_d + sum_k c_k G_k eta

with the centrifugal modal force ``c_k = omega^T Z_k omega - |omega|^2 tr Z_k``
(``Z_k,ab = int rho Phi_k,a u_b``), ``S_w = sum_l eta_d,l int rho Phi_l~ Phi`` and the
dynamic-stiffening term of the 12 unit inertial load cases ``c = (a0, alpha, omega_i
omega_j)``. The residual in the body coordinates is ``(A F_V, 2 G^T F_pi, F_q)``.
All Jacobians are exact (chain rule through a0, alpha, omega; tested against
central differences in tests/test_flexible_body.py).

Each evaluation is one compiled call over all bodies of a group (:mod:`flexmb.compiled.flexible`);
the elastic forces of nonlinear beams and of geometrically exact beams come from the compiled element loops
of :mod:`flexmb.compiled.beam` and :mod:`flexmb.compiled.exact_beam` in the same call, written into dense
(m, m) tangents per body. A group with any other structure (``body.structure`` of another type with
``internal_force(u) -> (f, sparse K_t)``) calls each body's ``internal_force`` in Python and passes the
forces to the kernel (``_python_structures``; such a group does not take the compiled step).
"""
from __future__ import annotations

import numpy as np

from ..compiled import lazy_module
from ..errors import ConvergenceError

kernels = lazy_module("flexmb.compiled.flexible")   # loads with the first flexible body, not with Assembly


class FlexibleBodyGroup:
    """All flexible bodies with the same number of modes ``m``, evaluated at once."""

    @staticmethod
    def pack_compiled(groups: list) -> tuple:
        """The flexible-body groups' part of the compiled model (flexmb/compiled/model.py ``Flexible``) from
        ``[(group, block positions), ...]``: their buffers concatenated (work buffers copied: the compiled code
        writes into them)."""
        from ..compiled.model import FlexTable, Flexible, concat, int_table
        rows, offs = [], np.zeros(6, dtype=np.int64)
        for fg, _ in groups:
            k = 7 + fg.m
            rows.append((offs[0], fg._fdata.size, offs[1], fg._idata.size, offs[2], fg._wdata.size, offs[3],
                         fg._tab.shape[0], fg.n, fg.m, offs[4], offs[5]))
            offs += (fg._fdata.size, fg._idata.size, fg._wdata.size, fg._tab.shape[0], fg.n * k, fg.n * k * k)
        tabs = [fg._tab for fg, _ in groups]
        return Flexible(int_table(FlexTable, rows), concat([fg._fdata for fg, _ in groups], np.float64),
                        concat([fg._idata for fg, _ in groups], np.int64),
                        concat([fg._wdata.copy() for fg, _ in groups], np.float64),
                        np.ascontiguousarray(np.concatenate(tabs), dtype=np.int64) if tabs
                        else np.zeros((0, 6), dtype=np.int64),
                        concat([fg.idx.reshape(-1) for fg, _ in groups], np.int64),
                        concat([p for _, p in groups], np.int64))

    def __init__(self, bodies: list, gravity: np.ndarray):
        self.bodies = bodies
        self.n = n = len(bodies)
        self.m = m = bodies[0].n_modes
        self.idx = np.array([b.offset + np.arange(7 + m) for b in bodies], dtype=np.int64).reshape(n, 7 + m)
        inv = [b.invariants for b in bodies]
        structures = [b.structure for b in bodies] if bodies[0].structure is not None else None
        self.structures = structures
        linear = structures is None
        stiff = any(b.stiffening for b in bodies)
        pp = np.array([i.phi_phi for i in inv], dtype=float).reshape(n, 3, 3, m, m)
        Jkl = np.array([i.J_kl for i in inv], dtype=float).reshape(n, m, m, 3, 3)
        Skl = np.array([i.S_kl for i in inv], dtype=float).reshape(n, m, 3, m)
        # mode pairs (k, l) with a non-zero second-order invariant in some body
        used = (np.abs(pp).sum(axis=(0, 1, 2)) + np.abs(Jkl).sum(axis=(0, 3, 4)) + np.abs(Skl).sum(axis=(0, 2))) > 0
        pk, pl = (x.astype(np.int64) for x in np.nonzero(used))
        values = dict(gravity=np.asarray(gravity, dtype=float).reshape(3), mass=[i.mass for i in inv],
                      s0=[i.first_moment for i in inv], J0=[i.inertia for i in inv], St=[i.S_t for i in inv],
                      Sr=[i.S_r for i in inv], Mee=[i.M_ee for i in inv], xp=[i.x_phi for i in inv],
                      Jk=[i.J_k for i in inv], pp=pp[:, :, :, pk, pl].transpose(0, 3, 1, 2), Jkl=Jkl[:, pk, pl],
                      Skl=Skl.transpose(0, 1, 3, 2)[:, pk, pl], D=[b.D for b in bodies])
        if linear:
            values["K"] = [b.K for b in bodies]
        if stiff:
            values["G"] = [b.G_inertial if b.stiffening else np.zeros((12, m, m)) for b in bodies]
        ints = dict(idx=self.idx, pair_k=pk, pair_l=pl)
        # elastic forces of nonlinear structures: the compiled element loops, or one Python call per body
        self._python_structures = False
        ne = nx = 0
        extra = False
        self._exact_first = np.zeros(0, dtype=np.int64)
        if not linear:
            from ..fem.exact_beam import ExactBeamStructure
            from ..fem.nonlinear_beam import NonlinearBeamStructure
            if all(type(st) in (NonlinearBeamStructure, ExactBeamStructure) for st in structures):
                ne = _pack_elements(structures, NonlinearBeamStructure, "beam", values, ints, ("nq", "avg"))
                nx = _pack_elements(structures, ExactBeamStructure, "exact", values, ints, ("cable",))
                owners = ints.get("exact_owner", np.zeros(0, dtype=np.int64))
                self._exact_first = np.concatenate([[0], np.cumsum(np.bincount(owners, minlength=n))])
                springs = [st.extra_stiffness for st in structures]
                extra = any(x is not None for x in springs)
                if extra:
                    values["Kextra"] = [np.zeros((m, m)) if x is None else x.toarray() for x in springs]
            else:
                self._python_structures = True
        # columns of the non-zeros of each elastic row of the m x m matrices (a beam's are banded)
        if self._python_structures:
            ints["band"] = np.array([np.zeros(m), np.full(m, m)], dtype=np.int64)
        else:
            mats = [values[k] for k in ("Mee", "D", "K", "G", "Kextra") if k in values]
            locs = [ints[k] for k in ("beam_loc", "exact_loc") if k in ints]
            ints["band"] = _band(m, mats, np.concatenate(locs or [np.zeros((0, 12), dtype=np.int64)]), pk, pl)
        fshapes, ishapes, wshapes = kernels.layout(n, m, pk.size, linear, stiff, ne, extra, nx)
        self._fdata, ftab, fviews = kernels.pack(fshapes, np.float64, values)
        self._idata, itab, _ = kernels.pack(ishapes, np.int64, ints)
        self._wdata, wtab, wviews = kernels.pack(wshapes, np.float64)
        flags = np.array([[n, m, int(linear), int(stiff), ne, int(extra)]], dtype=np.int64)
        self._tab = np.ascontiguousarray(np.vstack([flags, ftab, itab, wtab]))
        self._fel, self._Kel = wviews["fel"], wviews["Kel"]
        self._exact_bad = wviews["exact_bad"]
        # empty outputs of the mode of kernels.evaluate not asked for
        self._no_energy = np.zeros(0)
        self._no_r, self._no_blk = np.zeros((0, 7 + m)), np.zeros((0, 7 + m, 7 + m))
        self._no_terms = (np.zeros((0, 6 + m)), *(np.zeros((0, 6 + m, k)) for k in (3, 3, 3, m, m, m)),
                          np.zeros((0, 3, 3)), np.zeros((0, 3, 4)))
        self.gravity = fviews["gravity"]

    # -- body-frame terms -------------------------------------------------------------------------
    def _split(self, x):
        xb = x[self.idx]
        return xb[:, :3], xb[:, 3:7], xb[:, 7:]

    def _prepare(self, q):
        """``q`` as float64 C array; forces and dense tangents of structures that are not compiled
        (one ``internal_force`` call per body) into the work buffer."""
        q = np.ascontiguousarray(q, dtype=float)
        if self._python_structures:
            eta = q[self.idx[:, 7:]]
            for i, st in enumerate(self.structures):
                f, Kt = st.internal_force(eta[i])
                self._fel[i] = f
                self._Kel[i] = Kt.toarray()
        return q

    def _check_exact(self) -> None:
        """ConvergenceError when an exact-beam element failed in the last compiled evaluation (its local rotation is
        pi: flexmb/compiled/exact_beam.py); the body's forces are NaN then."""
        e = int(self._exact_bad[0]) - 1
        if e >= 0:
            self._exact_bad[0] = 0.0
            b = int(np.searchsorted(self._exact_first, e, side="right")) - 1
            raise ConvergenceError(f"exact beam {self.bodies[b].name!r}: element {e - self._exact_first[b]} turns by "
                                   "pi relative to its chord (the local rotation is undefined there; refine the mesh "
                                   "or reduce the step)")

    def terms(self, q, v, a, jacobian: bool):
        """Body-frame forces ``F = (F_V, F_pi, F_q)`` (n, 6+m) and, with ``jacobian``, their
        partial derivatives by a0, alpha, omega, eta, eta_d, eta_dd (dict of (n, 6+m, 3 or m));
        third: the state dict (``A`` (n, 3, 3), ``Gp`` (n, 3, 4), ``p``, ``pd``, ``pdd``, ``w_acc``)."""
        n, m = self.n, self.m
        q = self._prepare(q)
        v, a = np.ascontiguousarray(v, dtype=float), np.ascontiguousarray(a, dtype=float)
        F = np.empty((n, 6 + m))
        P = {key: np.empty((n, 6 + m, 3 if key in ("a0", "al", "om") else m))
             for key in ("a0", "al", "om", "eta", "etad", "etadd")}
        A, Gp = np.empty((n, 3, 3)), np.empty((n, 3, 4))
        kernels.evaluate(q, v, a, self._fdata, self._idata, self._wdata, self._tab, 0.0, 0.0, 0.0, jacobian,
                         self._no_r, self._no_blk, F, P["a0"], P["al"], P["om"], P["eta"], P["etad"], P["etadd"], A, Gp)
        self._check_exact()
        _, p, _ = self._split(q)
        _, pd, _ = self._split(v)
        rdd, pdd, _ = self._split(a)
        state = dict(A=A, Gp=Gp, w_acc=rdd - self.gravity, p=p, pd=pd, pdd=pdd)
        return F, (P if jacobian else None), state

    # -- residual and Newton block -----------------------------------------------------------------
    def residual(self, q, v, a, coef=None):
        """Return (idx, r (n, 7+m), blocks ``cM M + cC C + cK K`` (n, 7+m, 7+m) or None)."""
        n, m = self.n, self.m
        jac = coef is not None
        r = np.empty((n, 7 + m))
        blk = np.empty((n if jac else 0, 7 + m, 7 + m))
        cM, cC, cK = (float(c) for c in coef) if jac else (0.0, 0.0, 0.0)
        kernels.evaluate(self._prepare(q), np.ascontiguousarray(v, dtype=float), np.ascontiguousarray(a, dtype=float),
                         self._fdata, self._idata, self._wdata, self._tab, cM, cC, cK, jac, r, blk, *self._no_terms)
        self._check_exact()
        return self.idx, r, (blk if jac else None)

    # -- energies -----------------------------------------------------------------------------------
    def kinetic_energy(self, q, v) -> float:
        """``T = 1/2 v^T M v`` in body-frame velocities (V, omega, eta_d)."""
        return self._energy(q, v, 0)

    def potential_energy(self, q) -> float:
        """Strain energy ``eta^T K eta / 2`` plus gravity ``-g . (m r + A S)`` (J)."""
        q = np.ascontiguousarray(q, dtype=float)
        return float(self.strain_energy(q).sum() + self._energy(q, q, 1))

    def strain_energy(self, q) -> np.ndarray:
        """Strain energy of each body (n,), J."""
        q = np.ascontiguousarray(q, dtype=float)
        if self._python_structures:
            return np.array([b.strain_energy(e) for b, e in zip(self.bodies, q[self.idx[:, 7:]])])
        out = np.empty(self.n)
        self._energy(q, q, 2, out)
        self._check_exact()
        return out

    def damping_power(self, v) -> float:
        """Power of the modal damping forces (W, <= 0)."""
        return self._energy(v, v, 3)

    def _energy(self, q, v, which: int, out=None) -> float:
        """:func:`flexmb.compiled.flexible.energy` ``which`` (0 kinetic, 1 gravity, 2 strain into ``out``, 3 damping)."""
        return float(kernels.energy(np.ascontiguousarray(q, dtype=float), np.ascontiguousarray(v, dtype=float),
                                    self._fdata, self._idata, self._wdata, self._tab, which,
                                    self._no_energy if out is None else out))


def _pack_elements(structures, kind: type, prefix: str, values: dict, ints: dict, int_fields: tuple) -> int:
    """The element arrays (``structure.elements``, a named tuple) of the structures of type ``kind`` stacked into
    ``values`` (floats) and ``ints`` (``int_fields``) under ``<prefix>_<field>``, with ``<prefix>_loc`` (ne, 12)
    the position of each element dof among its body's coordinates and ``<prefix>_owner`` (ne,) its body's row
    in the group (flexmb/compiled/flexible.py ``layout``). Returns the number of elements."""
    rows = [i for i, st in enumerate(structures) if type(st) is kind]
    if not rows:
        return 0
    E = [structures[i].elements for i in rows]
    for k in E[0]._fields:
        (ints if k in int_fields else values)[f"{prefix}_{k}"] = np.concatenate([getattr(e, k) for e in E])
    ints[f"{prefix}_loc"] = np.concatenate([structures[i].element_free_dofs for i in rows])
    ints[f"{prefix}_owner"] = np.concatenate([np.full(structures[i].element_free_dofs.shape[0], i) for i in rows])
    return int(ints[f"{prefix}_owner"].size)


def _band(m: int, mats: list, loc: np.ndarray, pk: np.ndarray, pl: np.ndarray) -> np.ndarray:
    """``(2, m)`` int64: for each elastic row k the columns ``lo[k] <= l < hi[k]`` that hold every non-zero of
    the group's m x m matrices ``mats`` (mass, damping, stiffness, stiffening load cases, node springs; any
    leading dimensions), of the tangent of the beam elements ``loc`` (ne, 12; -1 held) and of the mode
    pairs ``(pk, pl)`` in both orders. The compiled kernel (flexmb/compiled/flexible.py) loops over these
    columns only: the terms it skips are exact zeros, so the results are the same (a 16-element beam's
    48 x 48 blocks have ~9 non-zero columns a row)."""
    nz = np.eye(m, dtype=bool)
    for M in mats:
        nz |= (np.abs(np.asarray(M, dtype=float)) > 0).reshape(-1, m, m).any(axis=0)
    for row in np.asarray(loc):
        d = row[row >= 0]
        nz[np.ix_(d, d)] = True
    nz[pk, pl] = True
    nz[pl, pk] = True
    lo = nz.argmax(axis=1)
    hi = m - nz[:, ::-1].argmax(axis=1)
    return np.array([lo, hi], dtype=np.int64)
