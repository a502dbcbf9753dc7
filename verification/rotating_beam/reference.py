"""Independent reference solution of the rotating-beam (spin-up) problem; scipy only, no flexmb.

Problem (He 1992, chapter 9, eq. 9.18, misprint corrected; data of Kane, Ryan &
Banerjee 1987, J. Guidance 10(2):139-151): a uniform cantilever clamped on the spin axis (no hub radius),
spinning about +z with the prescribed rate ``spin_law``; in-plane (x-y) bending, no gravity.
L = 10 m, EA = 2.8e7 N, EI = 1.4e4 N m^2, rho A = 1.2 kg/m. Output: the tip's y coordinate in the hub
frame (beam along +x at rest, lagging behind the spin is negative).

Everything is derived here from first principles in the rotating hub frame B (angular velocity Omega e_z):
a material point at x has position r = (x + u, v) in B and inertial acceleration, in B components,
    a = r'' + 2 Omega e_z x r' + Omega_dot e_z x r - Omega^2 (r_x, r_y)                 (R1)
Kane's equations with partial velocities dr/dz give, for coordinates z,
    int rho A (dr/dz)^T a dx + K z = 0,   i.e.   M(z) z'' = f(z, z', t)                 (R2)
    M = int rho A J^T J dx,  J = dr/dz,  f = -int rho A J^T (a - J z'') dx - K z.
Models (strain energy U = 1/2 int EA s'^2 + EI v''^2 dx in the first three):

* ``"stretch"`` (the suite's named reference): Kane-Ryan-Banerjee stretch kinematics, axial stretch s = Phi_s p
  (clamped-free axial modes sin((2i-1) pi x / 2L)), transverse v = Psi q (clamped-free bending
  eigenfunctions), u = s - 1/2 int_0^x v'^2 = Phi_s p - 1/2 q^T G(x) q with G(x) = int_0^x Psi' Psi'^T.
  Equations (R2) are kept complete (no linearisation): centrifugal, Coriolis, Euler (angular
  acceleration) and foreshortening terms of every order that the kinematics produce.
* ``"stretch_linearized"``: the same equations linearised in (z, z') about the undeformed state with
  the time-varying coefficients kept, as Kane, Ryan & Banerjee do; the foreshortening supplies the
  geometric stiffness Omega^2 int rho A (L^2 - x^2)/2 Psi' Psi'^T (He 1992, eq. 3.52).
* ``"linear"``: conventional linear modal model, u = s (no foreshortening): spin softening
  -Omega^2 M but no geometric stiffening (He 1992, eq. 9.17); unstable for Omega > omega_1.
* ``"elastica"``: a geometrically exact check (Reissner kinematics without shear; with
  ``n_axial = 0`` the inextensible elastica): axial strain eps = Phi_s' p, slope angle
  theta = Psi' a / L, r(x) = int_0^x (1 + eps)(cos theta, sin theta), energy
  1/2 int EA eps^2 + EI theta'^2. No truncation of the kinematics at all, so its difference from
  ``"stretch"`` measures the model-form error of the second-order foreshortening and of the linear
  curvature v'' that the stretch formulation uses.
* ``"elastica_vcurv"``: the elastica kinematics with the bending energy 1/2 int EI v''^2,
  v'' = d/dx[(1 + eps) sin theta]: exact foreshortening but linear curvature, i.e. the kinematics of a
  beam with full Green-Lagrange axial strain and curvature v''; it splits the stretch-elastica gap
  into its foreshortening and curvature parts.

All integrals over x use composite Gauss-Legendre quadrature; integrals from 0 to x at the quadrature
points use a nested Gauss rule on [element start, x], so G(x) and the elastica positions are exact to
round-off. Cantilever eigenfunctions are evaluated in a form that does not cancel for large beta.

Discretisation and integration errors are below 1e-5 relative (reference_data.json, provenance); the
models differ from each other by O(tip slope^2), up to 0.9 % in tip_min at Omega_s = 10 rad/s ("stretch"
vs "elastica"). Compare a first-order (modal, geometric-stiffness) model with "stretch_linearized", a
beam with axial strain u' + v'^2/2 and curvature v'' (Green-Lagrange / von Karman) with "stretch", a
geometrically exact beam with "elastica", a linear modal model with "linear".
"""
from __future__ import annotations

import math

import numpy as np
from scipy.integrate import solve_ivp
from scipy.interpolate import CubicSpline
from scipy.linalg import eigh
from scipy.optimize import brentq

L = 10.0            # m
EA = 2.8e7          # N
EI = 1.4e4          # N m^2
RHO_A = 1.2         # kg/m
T_S = 15.0          # s, spin-up time (He 1992, eq. 9.18)
T_END = 20.0        # s
OMEGA_S_CASES = (2.0, 4.0, 6.0, 10.0)
DT_OUT = 0.01       # s, output grid of spin_up
DIVERGENCE_LIMIT = 0.5 * L   # |tip| beyond this ends the run and marks it diverged
MODELS = ("stretch", "stretch_linearized", "linear", "elastica", "elastica_vcurv")
DEFAULTS = {"n_bending": 8, "n_axial": 2, "rtol": 1e-10}


# ----------------------------------------------------------------------------------------------
# prescribed spin and mode functions
# ----------------------------------------------------------------------------------------------
def spin_law(t, omega_s, T_s=T_S):
    """Spin rate, its rate and second rate at ``t`` (He 1992, eq. 9.18, misprint corrected).

    Omega = (Omega_s/T_s) [t - (T_s/2 pi) sin(2 pi t/T_s)] for t < T_s, Omega_s after; Omega_dot and
    Omega_ddot are continuous at T_s (both vanish there). Scalars or arrays.
    """
    t = np.asarray(t, dtype=float)
    k = 2.0 * math.pi / T_s
    up = t < T_s
    om = np.where(up, omega_s / T_s * (t - np.sin(k * t) / k), omega_s)
    omd = np.where(up, omega_s / T_s * (1.0 - np.cos(k * t)), 0.0)
    omdd = np.where(up, omega_s / T_s * k * np.sin(k * t), 0.0)
    if om.ndim == 0:
        return float(om), float(omd), float(omdd)
    return om, omd, omdd


def cantilever_roots(n: int) -> np.ndarray:
    """beta_k L of a clamped-free Euler-Bernoulli beam: roots of cos b cosh b + 1 = 0 (He 1992, eq. 9.15)."""
    f = lambda b: math.cos(b) + 1.0 / math.cosh(b)      # same roots, O(1) for large b
    return np.array([brentq(f, (k - 0.5) * math.pi - 0.5 * math.pi + 1e-9,
                            (k - 0.5) * math.pi + 0.5 * math.pi - 1e-9, xtol=1e-15, rtol=1e-15)
                     for k in range(1, n + 1)])


def bending_shape(xi, beta):
    """Cantilever eigenfunction (He 1992, eq. 9.14) and its first two xi-derivatives, xi = x/L.

    psi = cosh - cos - sigma (sinh - sin), sigma = (cosh b + cos b)/(sinh b + sin b); the hyperbolic
    part cosh(b xi) - sigma sinh(b xi) = [c e^{-b(1-xi)} + (1+sigma) e^{-b xi}]/2 with c = (1-sigma) e^b
    written without cancellation. Normalised so that int_0^1 psi^2 = 1 and psi(1) = +-2.
    """
    xi = np.asarray(xi, dtype=float)
    eb = math.exp(-beta)
    sig = (math.cosh(beta) + math.cos(beta)) / (math.sinh(beta) + math.sin(beta))
    c = (-eb + math.sin(beta) - math.cos(beta)) / (0.5 * (1.0 - eb * eb) + math.sin(beta) * eb)
    ep, em = np.exp(-beta * (1.0 - xi)), np.exp(-beta * xi)
    ch_m_sh = 0.5 * (c * ep + (1.0 + sig) * em)          # cosh - sigma sinh
    sh_m_ch = 0.5 * (c * ep - (1.0 + sig) * em)          # sinh - sigma cosh
    co, si = np.cos(beta * xi), np.sin(beta * xi)
    psi = ch_m_sh - co + sig * si
    dpsi = beta * (sh_m_ch + si + sig * co)
    ddpsi = beta**2 * (ch_m_sh + co - sig * si)
    return psi, dpsi, ddpsi


# ----------------------------------------------------------------------------------------------
# quadrature with cumulative (0..x) integrals
# ----------------------------------------------------------------------------------------------
class _Quadrature:
    """Composite Gauss rule on [0, L] (``ne`` elements x ``ng`` points) with a nested rule for int_0^x_g."""

    def __init__(self, ne: int = 16, ng: int = 10):
        t, w = np.polynomial.legendre.leggauss(ng)
        a = np.linspace(0.0, L, ne + 1)
        h = np.diff(a)
        self.x = (a[:-1, None] + 0.5 * h[:, None] * (t + 1.0)).ravel()         # (N,)
        self.w = (0.5 * h[:, None] * w).ravel()                                  # (N,)
        xe = self.x.reshape(ne, ng)
        span = xe - a[:-1, None]                                                 # (ne, ng)
        self.xs = (a[:-1, None, None] + 0.5 * span[:, :, None] * (t + 1.0)).reshape(-1)   # (N*ng,)
        self.ws = (0.5 * span[:, :, None] * w).reshape(ne, ng, ng)
        self.ne, self.ng = ne, ng

    def cumulative(self, f_nodes, f_sub):
        """int_0^{x_g} f for every node g from f at the nodes (N, ...) and the sub-points (N*ng, ...);
        also returns int_0^L f."""
        ne, ng = self.ne, self.ng
        tail = f_nodes.shape[1:]
        fn = f_nodes.reshape(ne, ng, -1)
        fs = f_sub.reshape(ne, ng, ng, -1)
        tot = (self.w.reshape(ne, ng, 1) * fn).sum(axis=1)                   # (ne, k)
        before = np.cumsum(tot, axis=0) - tot
        part = np.matmul(self.ws[:, :, None, :], fs)[:, :, 0, :]             # (ne, ng, k)
        out = before[:, None, :] + part
        return out.reshape((ne * ng,) + tail), tot.sum(axis=0).reshape(tail)


def jacobians(beam, z0, om, omd=0.0, h=1e-30):
    """df/dz and df/dz' of a beam's (R2) at (z0, z' = 0) by complex step (exact to round-off)."""
    n = beam.n
    Jz = np.empty((n, n))
    Jv = np.empty((n, n))
    zero = np.zeros(n, dtype=complex)
    for k in range(n):
        dz = zero.copy()
        dz[k] = 1j * h
        Jz[:, k] = beam.mass_force(z0 + dz, zero, om, omd)[1].imag / h
        Jv[:, k] = beam.mass_force(z0 + zero, dz, om, omd)[1].imag / h
    return Jz, Jv


def equilibrium(beam, om):
    """Steady-spin equilibrium: centrifugal stretch, no bending (f is linear in p when q = 0)."""
    z = np.zeros(beam.n)
    for _ in range(3):
        Jz, _ = jacobians(beam, z, om)
        f = beam.mass_force(z, np.zeros(beam.n), om, 0.0)[1]
        z = z - np.linalg.solve(Jz, f)
    return z


# ----------------------------------------------------------------------------------------------
# assumed-mode models
# ----------------------------------------------------------------------------------------------
class StretchBeam:
    """Assumed-mode beam in the hub frame: coordinates z = (p axial, q transverse), all in metres.

    ``foreshortening=False`` gives the conventional linear model (G = 0). ``plane`` "in" for in-plane
    (chordwise) bending, "flap" for out-of-plane bending (transverse direction e_z, which the spin
    about e_z neither drives nor softens: only the x-part of (R1) acts on it).
    """

    def __init__(self, n_bending=DEFAULTS["n_bending"], n_axial=DEFAULTS["n_axial"],
                 foreshortening=True, plane="in", quad=(16, 10)):
        self.nv, self.ns = int(n_bending), int(n_axial)
        self.n = self.nv + self.ns
        self.plane = plane
        Q = self.Q = _Quadrature(*quad)
        x, xs = Q.x, Q.xs
        self.betas = cantilever_roots(self.nv)
        sh = [bending_shape(x / L, b) for b in self.betas]
        self.Psi = np.array([s[0] for s in sh]).T.reshape(len(x), self.nv)           # (N, nv)
        dPsi = np.array([s[1] for s in sh]).T.reshape(len(x), self.nv) / L
        ddPsi = np.array([s[2] for s in sh]).T.reshape(len(x), self.nv) / L**2
        dPsi_s = np.array([bending_shape(xs / L, b)[1] for b in self.betas]).T.reshape(len(xs), self.nv) / L
        k = (2.0 * np.arange(1, self.ns + 1) - 1.0) * math.pi / (2.0 * L)
        self.Phi = np.sin(np.outer(x, k))                                            # (N, ns)
        dPhi = np.cos(np.outer(x, k)) * k
        self.psi_tip = np.array([bending_shape(1.0, b)[0] for b in self.betas]).reshape(self.nv)
        if foreshortening:
            G, _ = Q.cumulative(dPsi[:, :, None] * dPsi[:, None, :], dPsi_s[:, :, None] * dPsi_s[:, None, :])
        else:
            G = np.zeros((len(x), self.nv, self.nv))
        self.G = G
        self.W = RHO_A * Q.w
        K = np.zeros((self.n, self.n))
        K[:self.ns, :self.ns] = EA * (dPhi.T * Q.w) @ dPhi
        K[self.ns:, self.ns:] = EI * (ddPsi.T * Q.w) @ ddPsi
        self.K = K

    def split(self, z):
        return z[:self.ns], z[self.ns:]

    def tip(self, z):
        return self.psi_tip @ z[self.ns:]

    def strain_energy(self, z):
        return float(0.5 * z @ self.K @ z)

    def positions(self, z):
        """(r_x, r_y or r_z) of the quadrature points in the hub frame."""
        p, q = self.split(z)
        return self.Q.x + self.Phi @ p - 0.5 * ((self.G @ q) @ q), self.Psi @ q

    def mass_force(self, z, zd, om, omd):
        """M(z) and f(z, z', t) of (R2). Complex-safe (used with complex-step derivatives)."""
        p, q = self.split(z)
        pd, qd = self.split(zd)
        Gq = self.G @ q                                                   # (N, nv)
        u = self.Phi @ p - 0.5 * (Gq @ q)
        v = self.Psi @ q
        Jx = np.concatenate([self.Phi.astype(Gq.dtype), -Gq], axis=1)      # d r_x / dz
        Jt = np.concatenate([np.zeros_like(self.Phi), self.Psi], axis=1)  # d r_transverse / dz
        rdx = Jx @ zd
        rdt = Jt @ zd
        rx = self.Q.x + u
        ax = -(self.G @ qd) @ qd - om * om * rx                            # J' z' and centripetal
        if self.plane == "in":
            ax = ax - 2.0 * om * rdt - omd * v
            at = 2.0 * om * rdx + omd * rx - om * om * v
        else:
            at = np.zeros_like(ax)
        W = self.W
        M = (Jx.T * W) @ Jx + (Jt.T * W) @ Jt
        f = -(Jx.T @ (W * ax) + Jt.T @ (W * at)) - self.K @ z
        return M, f

    def jacobians(self, z0, om, omd=0.0):
        return jacobians(self, z0, om, omd)

    def equilibrium(self, om):
        return equilibrium(self, om)

    def linear_operators(self):
        """f(z, z', t) = Omega^2 (f2 + A2 z) + Omega_dot (f1 + A1 z) - K z + Omega B1 z' to first order."""
        zero = np.zeros(self.n)
        J00, _ = self.jacobians(zero, 0.0, 0.0)
        J10, B1 = self.jacobians(zero, 1.0, 0.0)
        J01, _ = self.jacobians(zero, 0.0, 1.0)
        f2 = self.mass_force(zero, zero, 1.0, 0.0)[1]
        f1 = self.mass_force(zero, zero, 0.0, 1.0)[1]
        M0 = self.mass_force(zero, zero, 0.0, 0.0)[0]
        return dict(M0=M0, A2=J10 - J00, A1=J01 - J00, K=-J00, B1=B1, f2=f2, f1=f1)


class Elastica:
    """Geometrically exact planar beam in the hub frame (Reissner kinematics without shear).

    Axial strain eps = Phi_s' p (so that int_0^L eps = Phi_s(L) p as in the stretch model), slope angle
    theta = Psi' a / L (a in metres: v ~ Psi a for small slopes), centreline
    r(x) = int_0^x (1 + eps)(cos theta, sin theta); energy 1/2 int EA eps^2 + EI theta'^2 (the same K as
    the stretch model). ``n_axial = 0``: inextensible elastica. No truncation of the kinematics.
    ``curvature="v''"`` replaces theta' by v'' = d/dx[(1 + eps) sin theta] in the bending energy: a
    diagnostic with exact foreshortening but the curvature of the stretch / Green-Lagrange beams.
    """

    def __init__(self, n_bending=DEFAULTS["n_bending"], n_axial=0, quad=(16, 10), curvature="exact"):
        self.nv, self.ns = int(n_bending), int(n_axial)
        self.n = self.nv + self.ns
        Q = self.Q = _Quadrature(*quad)
        self.betas = cantilever_roots(self.nv)
        pts = np.concatenate([Q.x, Q.xs])
        self.D = np.array([bending_shape(pts / L, b)[1] for b in self.betas]).T.reshape(len(pts), self.nv) / L
        k = (2.0 * np.arange(1, self.ns + 1) - 1.0) * math.pi / (2.0 * L)
        self.E = np.cos(np.outer(pts, k)) * k                                       # Phi_s' (P, ns)
        ddPsi = np.array([bending_shape(Q.x / L, b)[2] for b in self.betas]).T.reshape(len(Q.x), self.nv) / L**2
        K = np.zeros((self.n, self.n))
        N = self.N = len(Q.x)
        K[:self.ns, :self.ns] = EA * (self.E[:N].T * Q.w) @ self.E[:N]
        self.linear_curvature = {"exact": False, "v''": True}[curvature]
        if self.linear_curvature:
            self.Dp, self.Ep = ddPsi, -np.sin(np.outer(Q.x, k)) * k * k             # theta', eps' shapes
        else:
            K[self.ns:, self.ns:] = EI * (ddPsi.T * Q.w) @ ddPsi
        self.K = K
        self.W = RHO_A * Q.w

    def _kappa(self, z):
        """v'' = eps' sin theta + (1 + eps) cos theta theta' at the nodes and d v'' / dz."""
        ns, N = self.ns, self.N
        p, a = z[:ns], z[ns:]
        E, D = self.E[:N], self.D[:N]
        st, ep = 1.0 + E @ p, self.Ep @ p
        th, thp = D @ a, self.Dp @ a
        c, s = np.cos(th), np.sin(th)
        kap = ep * s + st * c * thp
        dk = np.concatenate([self.Ep * s[:, None] + E * (c * thp)[:, None],
                             (ep * c - st * s * thp)[:, None] * D + (st * c)[:, None] * self.Dp], axis=1)
        return kap, dk

    def strain_energy(self, z):
        U = 0.5 * z @ self.K @ z
        if self.linear_curvature:
            kap, _ = self._kappa(z)
            U = U + 0.5 * EI * (self.Q.w @ (kap * kap))
        return float(U)

    def _cum(self, f):
        return self.Q.cumulative(f[:self.N], f[self.N:])

    def positions(self, z):
        st = 1.0 + self.E @ z[:self.ns]
        th = self.D @ z[self.ns:]
        pos, _ = self._cum(np.stack([st * np.cos(th), st * np.sin(th)], axis=1))
        return pos[:, 0], pos[:, 1]

    def tip(self, z):
        st = 1.0 + self.E @ z[:self.ns]
        return self._cum(st * np.sin(self.D @ z[self.ns:]))[1]

    def mass_force(self, z, zd, om, omd):
        ns, n = self.ns, self.n
        st, ed = 1.0 + self.E @ z[:ns], self.E @ zd[:ns]                   # 1 + eps, eps'
        th, thd = self.D @ z[ns:], self.D @ zd[ns:]
        c, s = np.cos(th), np.sin(th)
        # one cumulative integral of every integrand: r, J = dr/dz (axial | bending), J' z'
        #   r' = (1+eps) t,  dr'/dp = Phi_s' t,  dr'/da = (1+eps) Psi'/L n,  t = (c, s), n = (-s, c)
        #   (r')'' - J' z'' = 2 eps' theta' n - (1+eps) theta'^2 t
        sn = st * thd * thd
        F = np.concatenate([(st * c)[:, None], (st * s)[:, None],
                            c[:, None] * self.E, (-st * s)[:, None] * self.D,
                            s[:, None] * self.E, (st * c)[:, None] * self.D,
                            (-2.0 * ed * thd * s - sn * c)[:, None], (2.0 * ed * thd * c - sn * s)[:, None]], axis=1)
        I, _ = self._cum(F)
        rx, ry = I[:, 0], I[:, 1]
        Jx, Jy = I[:, 2:2 + n], I[:, 2 + n:2 + 2 * n]
        rdx, rdy = Jx @ zd, Jy @ zd
        ax = I[:, -2] - 2.0 * om * rdy - omd * ry - om * om * rx
        ay = I[:, -1] + 2.0 * om * rdx + omd * rx - om * om * ry
        W = self.W
        M = (Jx.T * W) @ Jx + (Jy.T * W) @ Jy
        f = -(Jx.T @ (W * ax) + Jy.T @ (W * ay)) - self.K @ z
        if self.linear_curvature:
            kap, dk = self._kappa(z)
            f = f - EI * (dk.T @ (self.Q.w * kap))
        return M, f


# ----------------------------------------------------------------------------------------------
# spin-up time histories
# ----------------------------------------------------------------------------------------------
def _spin(t, omega_s, T_s):
    """Scalar spin_law without numpy overhead (the integrators call it at every stage)."""
    if t >= T_s:
        return omega_s, 0.0
    k = 2.0 * math.pi / T_s
    return omega_s / T_s * (t - math.sin(k * t) / k), omega_s / T_s * (1.0 - math.cos(k * t))


def _system(model, omega_s, T_s, n_bending, n_axial, quad):
    """(rhs, jac or None, tip(y), number of coordinates) of the first-order system y = (z, z')."""
    if model == "stretch":
        beam = StretchBeam(n_bending, n_axial, quad=quad)
        n = beam.n

        def rhs(t, y):
            om, omd = _spin(t, omega_s, T_s)
            M, f = beam.mass_force(y[:n], y[n:], om, omd)
            return np.concatenate([y[n:], np.linalg.solve(M, f)])
        return rhs, None, lambda y: beam.tip(y[:n]), n, beam
    if model in ("linear", "stretch_linearized"):
        beam = StretchBeam(n_bending, n_axial, foreshortening=(model != "linear"), quad=quad)
        n = beam.n
        o = beam.linear_operators()
        Mi = np.linalg.inv(o["M0"])
        A2, A1, K, B1 = Mi @ o["A2"], Mi @ o["A1"], Mi @ o["K"], Mi @ o["B1"]
        f2, f1 = Mi @ o["f2"], Mi @ o["f1"]

        def rhs(t, y):
            om, omd = _spin(t, omega_s, T_s)
            z, zd = y[:n], y[n:]
            return np.concatenate([zd, om * om * (f2 + A2 @ z) + omd * (f1 + A1 @ z) - K @ z + om * (B1 @ zd)])

        def jac(t, y):
            om, omd = _spin(t, omega_s, T_s)
            return np.block([[np.zeros((n, n)), np.eye(n)], [om * om * A2 + omd * A1 - K, om * B1]])
        return rhs, jac, lambda y: beam.tip(y[:n]), n, beam
    if model in ("elastica", "elastica_vcurv"):
        beam = Elastica(n_bending, n_axial, quad=quad, curvature="exact" if model == "elastica" else "v''")
        n = beam.n

        def rhs(t, y):
            om, omd = _spin(t, omega_s, T_s)
            M, f = beam.mass_force(y[:n], y[n:], om, omd)
            return np.concatenate([y[n:], np.linalg.solve(M, f)])
        return rhs, None, lambda y: beam.tip(y[:n]), n, beam
    raise ValueError(f"unknown model {model!r}; expected one of {MODELS}")


def integrate(omega_s, model="stretch", n_bending=None, n_axial=None, rtol=None, atol=None, method=None,
              T_s=T_S, t_end=T_END, dt_out=DT_OUT, quad=(16, 10)):
    """spin_up with run statistics: dict(t, tip, status, nfev, t_stop, message).

    ``method`` None: Radau (implicit, for the stiff axial modes; analytic Jacobian for the linear
    models) when there are axial modes, else DOP853.
    """
    n_bending = DEFAULTS["n_bending"] if n_bending is None else n_bending
    n_axial = DEFAULTS["n_axial"] if n_axial is None else n_axial
    rtol = DEFAULTS["rtol"] if rtol is None else rtol
    atol = rtol * 1e-2 if atol is None else atol          # coordinates in m; tip 1e-2 .. 1 m
    if method is None:
        method = "Radau" if n_axial > 0 else "DOP853"
    rhs, jac, tipf, n, beam = _system(model, float(omega_s), T_s, n_bending, n_axial, quad)
    grid = np.round(np.arange(0.0, t_end + 0.5 * dt_out, dt_out), 10)

    def blow_up(t, y):
        return DIVERGENCE_LIMIT - abs(tipf(y))
    blow_up.terminal = True

    kw = dict(rtol=rtol, atol=atol, method=method, events=blow_up)
    if jac is not None and method in ("Radau", "BDF", "LSODA"):
        kw["jac"] = jac
    y0 = np.zeros(2 * n)
    ts, tips, ys, nfev, status, message, t_stop = [], [], [], 0, 0, "", t_end
    for a, b in ((0.0, min(T_s, t_end)), (T_s, t_end)):   # Omega''' jumps at T_s: restart there
        if b <= a:
            continue
        sel = grid[(grid >= a) & (grid <= b)] if a == 0.0 else grid[(grid > a) & (grid <= b)]
        sol = solve_ivp(rhs, (a, b), y0, t_eval=sel, **kw)
        nfev += sol.nfev
        ts.append(sol.t)
        tips.append(np.array([tipf(y) for y in sol.y.T]))
        ys.append(sol.y)
        if sol.status != 0:
            status, message = sol.status, sol.message
            t_stop = float(sol.t_events[0][0]) if sol.status == 1 and len(sol.t_events[0]) else float(sol.t[-1])
            break
        y0 = sol.y[:, -1]
    return dict(t=np.concatenate(ts), tip=np.concatenate(tips), status=status, nfev=nfev, t_stop=t_stop,
                message=message, y=np.concatenate(ys, axis=1), beam=beam)


def spin_up(omega_s, model="stretch", n_bending=None, n_axial=None, rtol=None, **kw):
    """Tip deflection (m, y in the hub frame) on the grid 0, 0.01, ..., 20 s for final spin ``omega_s``.

    ``model``: "stretch", "stretch_linearized", "linear", "elastica", "elastica_vcurv" (module doc).
    A run whose |tip| exceeds L/2 stops there (grid truncated); ``metrics`` then reports diverged.
    """
    r = integrate(omega_s, model, n_bending, n_axial, rtol, **kw)
    return r["t"], r["tip"]


def jacobi_integral(beam, z, zd, omega):
    """Jacobi integral 1/2 z'^T M z' + U - 1/2 Omega^2 int rho A |r|^2 dx: constant while Omega is
    (the spin is prescribed, so it is the conserved quantity of the hub-frame equations)."""
    M, _ = beam.mass_force(z, zd, omega, 0.0)
    rx, ry = beam.positions(z)
    return float(0.5 * zd @ M @ zd + beam.strain_energy(z) - 0.5 * omega**2 * (beam.W @ (rx * rx + ry * ry)))


def _extremum(t, y, i):
    """Vertex of the parabola through the grid points i-1, i, i+1 (the grid point if at an end)."""
    if i == 0 or i == len(t) - 1:
        return float(t[i]), float(y[i])
    s0, s2 = t[i - 1] - t[i], t[i + 1] - t[i]
    d0, d2 = y[i - 1] - y[i], y[i + 1] - y[i]
    # y = y_i + b s + a s^2 through the two neighbours
    det = s0 * s2 * (s2 - s0)
    a = (d2 * s0 - d0 * s2) / det
    b = (d0 * s2 * s2 - d2 * s0 * s0) / det
    if a == 0.0:
        return float(t[i]), float(y[i])
    sv = -b / (2.0 * a)
    if not (s0 <= sv <= s2):
        return float(t[i]), float(y[i])
    return float(t[i] + sv), float(y[i] - b * b / (4.0 * a))


def metrics(t, tip, T_s=T_S, t_end=T_END, limit=DIVERGENCE_LIMIT):
    """Metrics of a tip history (any increasing time grid; extrema refined by a three-point parabola).

    tip_min, t_tip_min: the most negative tip deflection (m) and its time (s); tip_7_5, tip_20: the tip
    at t = 7.5 s and 20 s (cubic-spline interpolation if not on the grid); max_abs_tip_after_Ts:
    max |tip| for t >= T_s; diverged: the history does not reach t_end, is not finite, or |tip| > limit
    (L/2 = 5 m) somewhere. Values the history does not reach are None.
    """
    t = np.asarray(t, dtype=float)
    tip = np.asarray(tip, dtype=float)
    finite = bool(np.all(np.isfinite(tip))) and len(t) > 0
    diverged = (not finite) or t[-1] < t_end - 1e-9 or bool(np.max(np.abs(tip)) > limit)
    ok = np.isfinite(tip)
    t, tip = t[ok], tip[ok]
    i = int(np.argmin(tip))
    t_min, v_min = _extremum(t, tip, i)

    def at(tq):
        if tq > t[-1] + 1e-12:
            return None
        j = np.flatnonzero(np.abs(t - tq) < 1e-9)
        if len(j):
            return float(tip[j[0]])
        return float(CubicSpline(t, tip)(tq))
    after = t >= T_s - 1e-9
    max_after = None
    if np.any(after) and t[-1] >= t_end - 1e-9:
        ta, ya = t[after], np.abs(tip[after])
        max_after = _extremum(ta, ya, int(np.argmax(ya)))[1]
    return {"tip_min": v_min, "t_tip_min": t_min, "tip_7_5": at(7.5), "tip_20": at(t_end),
            "max_abs_tip_after_Ts": max_after, "diverged": bool(diverged)}


# ----------------------------------------------------------------------------------------------
# frequencies about steady spin
# ----------------------------------------------------------------------------------------------
def _signed(w2):
    return float(np.sign(w2) * math.sqrt(abs(w2)))


def _gyro_frequencies(M, Jz, Jv):
    """Signed omega of M z'' = Jz z + Jv z' (omega^2 = -lambda^2; negative: divergent, growth rate |omega|)."""
    n = M.shape[0]
    Mi = np.linalg.inv(M)
    A = np.block([[np.zeros((n, n)), np.eye(n)], [Mi @ Jz, Mi @ Jv]])
    lam = np.linalg.eigvals(A)
    w2 = np.sort((-lam * lam).real)
    return w2[::2]          # each omega^2 belongs to the pair +-lambda


def frequencies(omega, model="stretch", n_bending=8, n_axial=4, gyroscopic=True):
    """First two in-plane (chordwise) circular frequencies (rad/s) about steady spin ``omega``.

    ``model`` "stretch": linearised about the centrifugal equilibrium (geometric stiffening, spin
    softening, Coriolis coupling to the axial modes); "elastica": the same from the geometrically exact
    model (an independent check); "linear": without foreshortening (He 1992, eq. 9.17, spin-softened,
    K - Omega^2 M). ``gyroscopic=False`` drops the axial modes and Coriolis terms (He 1992, eqs.
    9.16/9.17 exactly). A negative value means omega^2 < 0: the model is statically unstable there and
    diverges with growth rate |omega|.
    """
    if model == "elastica":
        beam = Elastica(n_bending, n_axial)
    elif model in ("stretch", "linear"):
        beam = StretchBeam(n_bending, n_axial, foreshortening=(model == "stretch"))
    else:
        raise ValueError(f"unknown model {model!r}")
    z0 = equilibrium(beam, omega)
    M = beam.mass_force(z0, np.zeros(beam.n), omega, 0.0)[0]
    Jz, Jv = jacobians(beam, z0, omega)
    if gyroscopic:
        w2 = _gyro_frequencies(M, Jz, Jv)
    else:
        b = slice(beam.ns, beam.n)
        w2 = eigh(-Jz[b, b], M[b, b], eigvals_only=True)
    return _signed(w2[0]), _signed(w2[1])


def flapwise_frequency(omega, n_bending=8, n_axial=4):
    """First out-of-plane (flapwise) circular frequency (rad/s) about steady spin ``omega``.

    Same stretch kinematics with the transverse displacement along the spin axis: the centrifugal
    field stiffens it (Omega^2 K_g) without the -Omega^2 M softening of the in-plane motion.
    """
    beam = StretchBeam(n_bending, n_axial, plane="flap")
    z0 = beam.equilibrium(omega)
    M = beam.mass_force(z0, np.zeros(beam.n), omega, 0.0)[0]
    Jz, Jv = beam.jacobians(z0, omega)
    return _signed(_gyro_frequencies(M, Jz, Jv)[0])


def southwell_k1(n_bending=8):
    """Southwell coefficient K1 = d(omega_flap^2)/d(Omega^2) at Omega = 0 (first-order perturbation:
    Rayleigh quotient of the flapwise geometric stiffness on the first cantilever mode)."""
    beam = StretchBeam(n_bending, 0, plane="flap")
    zero = np.zeros(beam.n)
    J0, _ = beam.jacobians(zero, 0.0)
    J1, _ = beam.jacobians(zero, 1.0)
    M = beam.mass_force(zero, zero, 0.0, 0.0)[0]
    w2, V = eigh(-J0, M)
    v = V[:, 0]
    return float(v @ (J0 - J1) @ v / (v @ M @ v))


def cantilever_omega(k=1):
    """Closed form omega_k = (beta_k L)^2 sqrt(EI / (rho A L^4)) of the non-rotating cantilever."""
    return float(cantilever_roots(k)[k - 1] ** 2 * math.sqrt(EI / (RHO_A * L**4)))
