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
"""
from __future__ import annotations

import numpy as np

from .. import rotations as rot

# d(omega_i omega_j)/d omega for the product cases wxwx, wywy, wzwz, wxwy, wywz, wxwz
_PRODUCTS = ((0, 0), (1, 1), (2, 2), (0, 1), (1, 2), (0, 2))


def _conj(p: np.ndarray) -> np.ndarray:
    return p * np.array([1.0, -1.0, -1.0, -1.0])


def _products(w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """omega products (n, 6) in the load-case order and their gradient (n, 6, 3)."""
    n = w.shape[0]
    c = np.empty((n, 6))
    dc = np.zeros((n, 6, 3))
    for k, (i, j) in enumerate(_PRODUCTS):
        c[:, k] = w[:, i] * w[:, j]
        dc[:, k, i] += w[:, j]
        dc[:, k, j] += w[:, i]
    return c, dc


class FlexibleBodyGroup:
    """All flexible bodies with the same number of modes ``m``, evaluated at once."""

    def __init__(self, bodies: list, gravity: np.ndarray):
        self.bodies = bodies
        self.n = n = len(bodies)
        self.m = m = bodies[0].n_modes
        self.idx = np.array([b.offset + np.arange(7 + m) for b in bodies], dtype=np.int64).reshape(n, 7 + m)
        inv = [b.invariants for b in bodies]
        self.mass = np.array([i.mass for i in inv])
        self.s0 = np.array([i.first_moment for i in inv]).reshape(n, 3)
        self.J0 = np.array([i.inertia for i in inv]).reshape(n, 3, 3)
        self.St = np.array([i.S_t for i in inv]).reshape(n, 3, m)
        self.Sr = np.array([i.S_r for i in inv]).reshape(n, 3, m)
        self.Mee = np.array([i.M_ee for i in inv]).reshape(n, m, m)
        self.pp = np.array([i.phi_phi for i in inv]).reshape(n, 3, 3, m, m)
        self.xp = np.array([i.x_phi for i in inv]).reshape(n, 3, 3, m)
        self.Skl = np.array([i.S_kl for i in inv]).reshape(n, m, 3, m)
        self.Jk = np.array([i.J_k for i in inv]).reshape(n, m, 3, 3)
        Jkl = np.array([i.J_kl for i in inv]).reshape(n, m, m, 3, 3)
        self.Jkl_sym = Jkl + Jkl.transpose(0, 2, 1, 3, 4)
        self.Jkl = Jkl
        self.structures = [b.structure for b in bodies] if bodies[0].structure is not None else None
        self.K = np.array([b.K if b.structure is None else np.zeros((m, m)) for b in bodies]).reshape(n, m, m)
        self.D = np.array([b.D for b in bodies]).reshape(n, m, m)
        self.G = np.array([b.G_inertial if b.stiffening else np.zeros((12, m, m)) for b in bodies]).reshape(n, 12, m, m)
        self.pp_trace = np.einsum("naakl->nkl", self.pp)
        self.gravity = np.asarray(gravity, dtype=float)

    # -- body-frame terms -------------------------------------------------------------------------
    def _split(self, x):
        xb = x[self.idx]
        return xb[:, :3], xb[:, 3:7], xb[:, 7:]

    def terms(self, q, v, a, jacobian: bool):
        """Body-frame forces ``F = (F_V, F_pi, F_q)`` (n, 6+m) and, with ``jacobian``,
        their partial derivatives by a0, alpha, omega, eta, eta_d, eta_dd."""
        r, p, eta = self._split(q)
        _, pd, etad = self._split(v)
        rdd, pdd, etadd = self._split(a)
        n, m = self.n, self.m
        A = rot.A(p)
        Gp = rot.G(p)
        w_acc = rdd - self.gravity
        a0 = np.einsum("nji,nj->ni", A, w_acc)
        al = 2.0 * np.einsum("nij,nj->ni", Gp, pdd)
        om = 2.0 * np.einsum("nij,nj->ni", Gp, pd)
        St = self.St
        S = self.s0 + np.einsum("nim,nm->ni", St, eta)
        J = (self.J0 + np.einsum("nkij,nk->nij", self.Jk, eta)
             + np.einsum("nklij,nk,nl->nij", self.Jkl, eta, eta))
        L = self.Sr + np.einsum("nkim,nk->nim", self.Skl, eta)
        Sw = np.einsum("nlim,nl->nim", self.Skl, etad)
        Z = self.xp.transpose(0, 2, 1, 3) + np.einsum("nabkl,nl->nabk", self.pp, eta)   # Z[a,b,k]
        Y = Z.transpose(0, 2, 1, 3)                                                    # Y[a,b,l] = int u_a Phi_l,b
        W = np.einsum("nabl,nl->nab", Y, etad)
        trW = np.einsum("naa->n", W)
        vSt = np.einsum("nim,nm->ni", St, etad)
        Jw = np.einsum("nij,nj->ni", J, om)
        w2 = np.einsum("ni,ni->n", om, om)
        c_prod, dc_prod = _products(om)
        coef = np.concatenate([a0, al, c_prod], axis=1)                                 # (n, 12)
        Geta = np.einsum("nkij,nj->nki", self.G, eta)                                   # (n, 12, m)

        F = np.empty((n, 6 + m))
        F[:, :3] = (self.mass[:, None] * a0 + rot.cross(al, S) + rot.cross(om, rot.cross(om, S))
                    + 2.0 * rot.cross(om, vSt) + np.einsum("nim,nm->ni", St, etadd))
        F[:, 3:6] = (rot.cross(S, a0) + np.einsum("nij,nj->ni", J, al) + rot.cross(om, Jw)
                     + 2.0 * (om * trW[:, None] - np.einsum("nab,na->nb", W, om))
                     + np.einsum("nim,nm->ni", L, etadd))
        cf = np.einsum("na,nb,nabk->nk", om, om, Z) - w2[:, None] * np.einsum("naak->nk", Z)
        F[:, 6:] = (np.einsum("nim,ni->nm", St, a0) + np.einsum("nim,ni->nm", L, al) + cf
                    + 2.0 * np.einsum("nim,ni->nm", Sw, om) + np.einsum("nkl,nl->nk", self.Mee, etadd)
                    + np.einsum("nkl,nl->nk", self.K, eta) + np.einsum("nkl,nl->nk", self.D, etad)
                    + np.einsum("nc,nck->nk", coef, Geta))
        tangents = None
        if self.structures is not None:       # nonlinear elastic forces (NonlinearBeam)
            tangents = []
            for i, st in enumerate(self.structures):
                f, Kt = st.internal_force(eta[i])
                F[i, 6:] += f
                tangents.append(Kt)
        state = dict(A=A, Gp=Gp, w_acc=w_acc, p=p, pd=pd, pdd=pdd)
        if not jacobian:
            return F, None, state

        eye = np.broadcast_to(np.eye(3), (n, 3, 3))
        Sx, omx = rot.skew(S), rot.skew(om)
        P = {k: np.zeros((n, 6 + m, 3 if k in ("a0", "al", "om") else m)) for k in ("a0", "al", "om", "eta", "etad", "etadd")}
        # F_V
        P["a0"][:, :3] = self.mass[:, None, None] * eye
        P["al"][:, :3] = -Sx
        omS = np.einsum("ni,ni->n", om, S)
        P["om"][:, :3] = (omS[:, None, None] * eye + om[:, :, None] * S[:, None, :] - 2.0 * S[:, :, None] * om[:, None, :]
                          - 2.0 * rot.skew(vSt))
        P["eta"][:, :3] = np.einsum("nij,njm->nim", rot.skew(al) + omx @ omx, St)
        P["etad"][:, :3] = 2.0 * np.einsum("nij,njm->nim", omx, St)
        P["etadd"][:, :3] = St
        # F_pi
        P["a0"][:, 3:6] = Sx
        P["al"][:, 3:6] = J
        P["om"][:, 3:6] = omx @ J - rot.skew(Jw) + 2.0 * (trW[:, None, None] * eye - W.transpose(0, 2, 1))
        dJ = self.Jk + np.einsum("nklij,nl->nkij", self.Jkl_sym, eta)                   # dJ/deta_k
        dW = np.einsum("nabkl,nl->nkab", self.pp, etad)                                  # dW/deta_k
        trdW = np.einsum("nkaa->nk", dW)
        P["eta"][:, 3:6] = (-np.einsum("nij,njm->nim", rot.skew(a0), St)
                            + np.einsum("nkij,nj->nik", dJ, al)
                            + np.einsum("nij,nkjl,nl->nik", omx, dJ, om)
                            + 2.0 * (om[:, :, None] * trdW[:, None, :] - np.einsum("nkab,na->nbk", dW, om))
                            + np.einsum("nkim,nm->nik", self.Skl, etadd))
        trY = np.einsum("naal->nl", Y)
        P["etad"][:, 3:6] = 2.0 * (om[:, :, None] * trY[:, None, :] - np.einsum("nabl,na->nbl", Y, om))
        P["etadd"][:, 3:6] = L
        # F_q
        P["a0"][:, 6:] = St.transpose(0, 2, 1) + Geta[:, 0:3].transpose(0, 2, 1)
        P["al"][:, 6:] = L.transpose(0, 2, 1) + Geta[:, 3:6].transpose(0, 2, 1)
        trZ = np.einsum("naak->nk", Z)
        P["om"][:, 6:] = (np.einsum("nabk,nb->nka", Z + Z.transpose(0, 2, 1, 3), om) - 2.0 * trZ[:, :, None] * om[:, None, :]
                          + 2.0 * Sw.transpose(0, 2, 1) + np.einsum("njk,nja->nka", Geta[:, 6:], dc_prod))
        P["eta"][:, 6:] = (np.einsum("ni,nlik->nkl", al, self.Skl)
                           + np.einsum("na,nb,nabkl->nkl", om, om, self.pp) - w2[:, None, None] * self.pp_trace
                           + self.K + np.einsum("nc,nckl->nkl", coef, self.G))
        P["etad"][:, 6:] = 2.0 * np.einsum("ni,nlik->nkl", om, self.Skl) + self.D
        P["etadd"][:, 6:] = self.Mee
        if tangents is not None:
            for i, Kt in enumerate(tangents):
                P["eta"][i, 6:] += Kt.toarray()
        return F, P, state

    # -- residual and Newton block -----------------------------------------------------------------
    def residual(self, q, v, a, coef=None):
        """Return (idx, r (n, 7+m), blocks ``cM M + cC C + cK K`` (n, 7+m, 7+m) or None)."""
        F, P, st = self.terms(q, v, a, jacobian=coef is not None)
        n, m = self.n, self.m
        A, Gp = st["A"], st["Gp"]
        r = np.empty((n, 7 + m))
        r[:, :3] = np.einsum("nij,nj->ni", A, F[:, :3])
        r[:, 3:7] = 2.0 * np.einsum("nki,nk->ni", Gp, F[:, 3:6])
        r[:, 7:] = F[:, 6:]
        if coef is None:
            return self.idx, r, None
        cM, cC, cK = coef
        # d a0/dp = d(A(p)^T w)/dp = B(p*, w) diag(1, -1, -1, -1)
        Da = rot.B(_conj(st["p"]), st["w_acc"]) * np.array([1.0, -1.0, -1.0, -1.0])
        twoG = 2.0 * Gp
        inner = np.zeros((n, 6 + m, 7 + m))
        if cM:
            inner[:, :, 0:3] += cM * np.einsum("nij,nkj->nik", P["a0"], A)
            inner[:, :, 3:7] += cM * P["al"] @ twoG
            inner[:, :, 7:] += cM * P["etadd"]
        if cC:
            inner[:, :, 3:7] += cC * P["om"] @ twoG
            inner[:, :, 7:] += cC * P["etad"]
        if cK:
            inner[:, :, 3:7] += cK * (P["a0"] @ Da - P["al"] @ (2.0 * rot.G(st["pdd"])) - P["om"] @ (2.0 * rot.G(st["pd"])))
            inner[:, :, 7:] += cK * P["eta"]
        blk = np.empty((n, 7 + m, 7 + m))
        blk[:, :3] = A @ inner[:, :3]
        blk[:, 3:7] = 2.0 * np.einsum("nki,nkj->nij", Gp, inner[:, 3:6])
        blk[:, 7:] = inner[:, 6:]
        if cK:
            blk[:, :3, 3:7] += cK * rot.B(st["p"], F[:, :3])
            blk[:, 3:7, 3:7] += cK * 2.0 * rot.T(F[:, 3:6])
        return self.idx, r, blk

    # -- energies -----------------------------------------------------------------------------------
    def kinetic_energy(self, q, v) -> float:
        """``T = 1/2 v^T M v`` in body-frame velocities (V, omega, eta_d)."""
        _, p, eta = self._split(q)
        rd, pd, etad = self._split(v)
        A = rot.A(p)
        V = np.einsum("nji,nj->ni", A, rd)
        om = 2.0 * np.einsum("nij,nj->ni", rot.G(p), pd)
        S = self.s0 + np.einsum("nim,nm->ni", self.St, eta)
        J = (self.J0 + np.einsum("nkij,nk->nij", self.Jk, eta) + np.einsum("nklij,nk,nl->nij", self.Jkl, eta, eta))
        L = self.Sr + np.einsum("nkim,nk->nim", self.Skl, eta)
        T = (0.5 * self.mass * np.einsum("ni,ni->n", V, V) + np.einsum("ni,ni->n", V, rot.cross(om, S))
             + np.einsum("ni,nim,nm->n", V, self.St, etad) + 0.5 * np.einsum("ni,nij,nj->n", om, J, om)
             + np.einsum("ni,nim,nm->n", om, L, etad) + 0.5 * np.einsum("nk,nkl,nl->n", etad, self.Mee, etad))
        return float(T.sum())

    def potential_energy(self, q) -> float:
        """Strain energy ``eta^T K eta / 2`` plus gravity ``-g . (m r + A S)`` (J)."""
        r, p, eta = self._split(q)
        S = self.s0 + np.einsum("nim,nm->ni", self.St, eta)
        com = self.mass[:, None] * r + np.einsum("nij,nj->ni", rot.A(p), S)
        return float(self.strain_energy(q).sum() - np.sum(com @ self.gravity))

    def strain_energy(self, q) -> np.ndarray:
        """Strain energy of each body (n,), J."""
        _, _, eta = self._split(q)
        return np.array([b.strain_energy(e) for b, e in zip(self.bodies, eta)])

    def damping_power(self, v) -> float:
        """Power of the modal damping forces (W, <= 0)."""
        _, _, etad = self._split(v)
        return float(-np.einsum("nk,nkl,nl->", etad, self.D, etad))
