"""Compiled equations of motion of flexible bodies (docs/theory-flexible.md §2, theory-stiffening.md).

One call evaluates every body of a :class:`flexmb.bodies.flexible_kernel.FlexibleBodyGroup`.
Per body, with ``a0 = A^T (r_dd - g)``, ``alpha = 2 G p_dd``, ``omega = 2 G p_d`` and the
modal invariants contracted with the modal coordinates (Shabana, *Dynamics of Multibody
Systems*, 3rd ed., §5.4-5.5; Schwertassek & Wallrapp 1999, §5.3)::

    S = s0 + S_t eta,  J = J0 + sum_k J_k eta_k + sum_kl J_kl eta_k eta_l,  L = S_r + sum_k S_k eta_k,
    S_w = sum_l S_l eta_d,l,  Z_abk = x_phi,bak + sum_l phi_phi,abkl eta_l,  W_ab = sum_l Z_bal eta_d,l,

the body-frame forces

    F_V  = m a0 + alpha x S + omega x (omega x S) + 2 omega x (S_t eta_d) + S_t eta_dd
    F_pi = S x a0 + J alpha + omega x J omega + 2 (omega tr W - W^T omega) + L eta_dd
    F_q  = S_t^T a0 + L^T alpha + c(omega, eta) + 2 S_w^T omega + M_ee eta_dd + f_el + D eta_d
           + sum_c coef_c G_c eta,   c_k = omega^T Z_k omega - |omega|^2 tr Z_k,

with ``coef = (a0, alpha, omega_i omega_j)`` the 12 inertial load cases of the geometric
stiffening (theory-stiffening.md §1) and ``f_el = K eta`` (linear modal body) or the internal force
of a nonlinear structure (theory-elements.md §6), and their exact partial derivatives by
``a0, alpha, omega, eta, eta_d, eta_dd``. The residual in the body coordinates is
``(A F_V, 2 G^T F_pi, F_q)`` and its Newton block ``cM M + cC C + cK K`` follows by the chain rule
(d a0/dp = B(p*, r_dd - g) diag(1, -1, -1, -1), d(A u)/dp = B(p, u), d(G^T y)/dp = T(y)).

The second-order invariants ``phi_phi_kl`` (3, 3), ``J_kl`` (3, 3) and ``S_kl`` (3,) are stored for
the mode pairs ``(k, l)`` where one of them is non-zero in some body of the group (all pairs for
component modes; few for the nodal "modes" of a nonlinear beam, whose mass matrix is banded).

Data layout: a group packs its constant arrays into one float64 and one int64 buffer and its work
arrays into a third, each array a C-order view ``buf[o:o + size].reshape(shape)`` described by a
row ``(o, d0, d1, ...)`` of the int64 table ``tab`` (row 0: ``n, m, linear, stiff, ne, extra``), so
that a call passes a handful of arrays. :func:`layout` gives the views in order. The compiled code takes
them as borrowed views (flexmb/compiled/views.py ``borrow``: no reference count, which costs an atomic
add per view and was a fifth of a small body's evaluation), valid while the call that received the
buffers runs; the evaluation's temporaries are work views too (no allocation per call).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .beam import MAX_POINTS, energy as beam_energy, forces_dense
from .exact_beam import NJ, NJ3, TRIAD_ROWS, WORK_ROWS, energy as exact_energy, forces_dense as exact_forces_dense
from .rotations import jacobian_B, matrix_G, rotation_matrix
from .views import borrow

# omega products of the load cases wxwx, wywy, wzwz, wxwy, wywz, wxwz (theory-stiffening.md §1.1)
_PI = (0, 1, 2, 0, 1, 0)
_PJ = (0, 1, 2, 1, 2, 2)

FLOATS = ("gravity", "mass", "s0", "J0", "St", "Sr", "Mee", "xp", "Jk", "pp", "Jkl", "Skl", "K", "D", "G", "Kextra",
          "beam_D", "beam_w", "beam_Kb", "beam_Hbar", "beam_EAL", "exact_X21", "exact_R0", "exact_l0", "exact_k")
_NF = len(FLOATS)
INTS = ("idx", "pair_k", "pair_l", "beam_loc", "beam_owner", "beam_nq", "beam_avg", "band", "exact_loc", "exact_owner",
        "exact_cable")
WORK = ("fel", "Kel", "p", "pd", "pdd", "eta", "etad", "etadd", "wacc", "a0", "al", "om", "S", "J", "L", "Sw", "Z",
        "W", "vSt", "Jw", "coef", "dcp", "Geta", "dJ", "dW", "trZ", "trdW", "Jdom", "F", "Pa0", "Pal", "Pom", "Peta",
        "Petad", "Petadd", "inner", "A", "Gp", "pc", "Da", "G2d", "G2dd", "BF", "exact_W", "exact_Ws", "exact_U",
        "exact_dl", "exact_bad")
_NI = len(INTS)
# table rows of the exact beam's views (:func:`_exact`)
_XF = 1 + FLOATS.index("exact_X21")
_XI = 1 + _NF + INTS.index("exact_loc")
_XW = 1 + _NF + _NI + WORK.index("exact_W")


def layout(n: int, m: int, npairs: int, linear: bool, stiff: bool, ne: int, extra: bool,
           nx: int = 0) -> tuple[dict, dict, dict]:
    """Shapes of the float, int and work views (dicts in the order of FLOATS, INTS, WORK) of ``n`` bodies
    with ``m`` modes, ``npairs`` mode pairs, ``ne`` nonlinear-beam and ``nx`` exact-beam elements
    (flexmb/compiled/exact_beam.py); ``linear``: elastic force ``K eta`` (else a structure's, in
    ``fel``/``Kel``); ``stiff``: stiffening load cases; ``extra``: node springs. ``exact_bad`` holds 1 + the
    group's index of the exact-beam element that failed in the last evaluation (its local rotation is pi), else 0."""
    nK = n if linear else 0
    nS = 0 if linear else n
    floats = dict(gravity=(3,), mass=(n,), s0=(n, 3), J0=(n, 3, 3), St=(n, 3, m), Sr=(n, 3, m), Mee=(n, m, m),
                  xp=(n, 3, 3, m), Jk=(n, m, 3, 3), pp=(n, npairs, 3, 3), Jkl=(n, npairs, 3, 3), Skl=(n, npairs, 3),
                  K=(nK, m, m), D=(n, m, m), G=(n if stiff else 0, 12, m, m), Kextra=(n if extra else 0, m, m),
                  beam_D=(ne, MAX_POINTS, 4, 12), beam_w=(ne, MAX_POINTS), beam_Kb=(ne, 12, 12),
                  beam_Hbar=(ne, 12, 12), beam_EAL=(ne,), exact_X21=(nx, 3), exact_R0=(nx, 3, 3), exact_l0=(nx,),
                  exact_k=(nx, 9))
    ints = dict(idx=(n, 7 + m), pair_k=(npairs,), pair_l=(npairs,), beam_loc=(ne, 12), beam_owner=(ne,),
                beam_nq=(ne,), beam_avg=(ne,), band=(2, m), exact_loc=(nx, 12), exact_owner=(nx,), exact_cable=(nx,))
    c = 6 + m
    work = dict(fel=(nS, m), Kel=(nS, m, m), p=(4,), pd=(4,), pdd=(4,), eta=(m,), etad=(m,), etadd=(m,), wacc=(3,),
                a0=(3,), al=(3,), om=(3,), S=(3,), J=(3, 3), L=(3, m), Sw=(3, m), Z=(3, 3, m), W=(3, 3), vSt=(3,),
                Jw=(3,), coef=(12,), dcp=(6, 3), Geta=(12, m), dJ=(m, 3, 3), dW=(m, 3, 3), trZ=(m,), trdW=(m,),
                Jdom=(m, 3), F=(c,), Pa0=(c, 3), Pal=(c, 3), Pom=(c, 3), Peta=(c, m), Petad=(c, m), Petadd=(c, m),
                inner=(c, 7 + m), A=(3, 3), Gp=(3, 4), pc=(4,), Da=(3, 4), G2d=(3, 4), G2dd=(3, 4), BF=(3, 4),
                exact_W=(WORK_ROWS * NJ if nx else 0,), exact_Ws=(TRIAD_ROWS * NJ3 if nx else 0,),
                exact_U=(NJ if nx else 0,), exact_dl=(7,), exact_bad=(1,))
    return floats, ints, work


def pack(shapes: dict, dtype, values: dict | None = None) -> tuple[np.ndarray, np.ndarray, dict]:
    """One buffer holding arrays of ``shapes`` (filled from ``values`` where given), its table rows
    ``(offset, dims...)`` (k, 6) and numpy views of it by name."""
    sizes = [int(np.prod(s)) for s in shapes.values()]
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    buf = np.zeros(int(offsets[-1]), dtype=dtype)
    rows = np.zeros((len(shapes), 6), dtype=np.int64)
    views = {}
    for k, (name, shape) in enumerate(shapes.items()):
        rows[k, 0] = offsets[k]
        rows[k, 1:1 + len(shape)] = shape
        views[name] = buf[offsets[k]:offsets[k + 1]].reshape(shape)
        if values is not None and name in values:
            views[name][...] = np.asarray(values[name], dtype=dtype).reshape(shape)
    return buf, rows, views


@njit(cache=True, inline="always")   # inlined: called with literal row numbers (architecture.md §2)
def _v1(buf, tab, k):
    return borrow(buf, tab[k, 0], (tab[k, 1],))


@njit(cache=True, inline="always")   # inlined: called with literal row numbers (architecture.md §2)
def _v2(buf, tab, k):
    return borrow(buf, tab[k, 0], (tab[k, 1], tab[k, 2]))


@njit(cache=True, inline="always")   # inlined: called with literal row numbers (architecture.md §2)
def _v3(buf, tab, k):
    return borrow(buf, tab[k, 0], (tab[k, 1], tab[k, 2], tab[k, 3]))


@njit(cache=True, inline="always")   # inlined: called with literal row numbers (architecture.md §2)
def _v4(buf, tab, k):
    return borrow(buf, tab[k, 0], (tab[k, 1], tab[k, 2], tab[k, 3], tab[k, 4]))


@njit(cache=True)
def _floats(fd, tab):
    """Views of the float buffer in the order of FLOATS (table rows 1...), up to the exact beam's (:func:`_exact`)."""
    return (_v1(fd, tab, 1), _v1(fd, tab, 2), _v2(fd, tab, 3), _v3(fd, tab, 4), _v3(fd, tab, 5), _v3(fd, tab, 6),
            _v3(fd, tab, 7), _v4(fd, tab, 8), _v4(fd, tab, 9), _v4(fd, tab, 10), _v4(fd, tab, 11), _v3(fd, tab, 12),
            _v3(fd, tab, 13), _v3(fd, tab, 14), _v4(fd, tab, 15), _v3(fd, tab, 16), _v4(fd, tab, 17),
            _v2(fd, tab, 18), _v3(fd, tab, 19), _v3(fd, tab, 20), _v1(fd, tab, 21))


@njit(cache=True)
def _exact(fd, idata, wd, tab):
    """Views of the exact beam's element data and work arrays (the ``exact_*`` names of FLOATS, INTS, WORK)."""
    return (_v2(fd, tab, _XF), _v3(fd, tab, _XF + 1), _v1(fd, tab, _XF + 2), _v2(fd, tab, _XF + 3),
            _v2(idata, tab, _XI), _v1(idata, tab, _XI + 1), _v1(idata, tab, _XI + 2),
            _v1(wd, tab, _XW), _v1(wd, tab, _XW + 1), _v1(wd, tab, _XW + 2), _v1(wd, tab, _XW + 3),
            _v1(wd, tab, _XW + 4))


@njit(cache=True)
def _ints(idata, tab):
    """Views of the int buffer in the order of INTS (table rows after the floats), up to the exact beam's."""
    k = 1 + _NF
    return (_v2(idata, tab, k), _v1(idata, tab, k + 1), _v1(idata, tab, k + 2), _v2(idata, tab, k + 3),
            _v1(idata, tab, k + 4), _v1(idata, tab, k + 5), _v1(idata, tab, k + 6), _v2(idata, tab, k + 7))


@njit(cache=True)
def _work(wd, tab):
    """Views of the work buffer in the order of WORK (table rows after the ints), up to the exact beam's."""
    k = 1 + _NF + _NI
    return (_v2(wd, tab, k), _v3(wd, tab, k + 1), _v1(wd, tab, k + 2), _v1(wd, tab, k + 3), _v1(wd, tab, k + 4),
            _v1(wd, tab, k + 5), _v1(wd, tab, k + 6), _v1(wd, tab, k + 7), _v1(wd, tab, k + 8), _v1(wd, tab, k + 9),
            _v1(wd, tab, k + 10), _v1(wd, tab, k + 11), _v1(wd, tab, k + 12), _v2(wd, tab, k + 13),
            _v2(wd, tab, k + 14), _v2(wd, tab, k + 15), _v3(wd, tab, k + 16), _v2(wd, tab, k + 17),
            _v1(wd, tab, k + 18), _v1(wd, tab, k + 19), _v1(wd, tab, k + 20), _v2(wd, tab, k + 21),
            _v2(wd, tab, k + 22), _v3(wd, tab, k + 23), _v3(wd, tab, k + 24), _v1(wd, tab, k + 25),
            _v1(wd, tab, k + 26), _v2(wd, tab, k + 27), _v1(wd, tab, k + 28), _v2(wd, tab, k + 29),
            _v2(wd, tab, k + 30), _v2(wd, tab, k + 31), _v2(wd, tab, k + 32), _v2(wd, tab, k + 33),
            _v2(wd, tab, k + 34), _v2(wd, tab, k + 35), _v2(wd, tab, k + 36), _v2(wd, tab, k + 37),
            _v1(wd, tab, k + 38), _v2(wd, tab, k + 39), _v2(wd, tab, k + 40), _v2(wd, tab, k + 41),
            _v2(wd, tab, k + 42))


@njit(cache=True, inline="always")
def _contract(i, s0, J0, St, Sr, Jk, Jkl, Skl, pk, pl, eta, etad, S, vSt, J, L, Sw):
    """Invariants of body ``i`` at ``eta``, ``eta_d``: ``S``, ``S_t eta_d``, ``J``, ``L``, ``S_w``."""
    m = eta.size
    for r in range(3):
        t1 = s0[i, r]
        t2 = 0.0
        for k in range(m):
            t1 += St[i, r, k] * eta[k]
            t2 += St[i, r, k] * etad[k]
        S[r] = t1
        vSt[r] = t2
        for c in range(3):
            J[r, c] = J0[i, r, c]
        for c in range(m):
            L[r, c] = Sr[i, r, c]
            Sw[r, c] = 0.0
    for k in range(m):
        e = eta[k]
        for r in range(3):
            for c in range(3):
                J[r, c] += Jk[i, k, r, c] * e
    for s in range(pk.size):
        k = pk[s]
        l = pl[s]
        e = eta[k] * eta[l]
        for r in range(3):
            for c in range(3):
                J[r, c] += Jkl[i, s, r, c] * e
            L[r, l] += Skl[i, s, r] * eta[k]
            Sw[r, l] += Skl[i, s, r] * etad[k]


@njit(cache=True)
def _bodies(q, v, a, fd, idata, wd, tab, linear, jac, cM, cC, cK, res, blk, Fo, Pa0o, Palo, Pomo, Petao, Petado,
            Petaddo, Ao, Gpo):
    """Forces ``F`` (6 + m,) of every body and, with ``jac``, their partials (6 + m, 3 or m), with A(p), G(p).
    Residual mode (``res`` non-empty): each body's into the work arrays, then its residual row and Newton
    block (:func:`_residual`); terms mode: into ``Fo[i]``, ``P*o[i]``, ``Ao[i]``, ``Gpo[i]``. Units: N, N m,
    N (modal, per unit eta). The views of the group's buffers are taken here, not passed in (a call with
    ~60 arrays in its arguments costs about a microsecond)."""
    fl, it, wk = _floats(fd, tab), _ints(idata, tab), _work(wd, tab)
    gravity, mass, s0, J0, St, Sr, Mee, xp, Jk, pp, Jkl, Skl, K, D, G, Kextra, bD, bw, bKb, bH, bEAL = fl
    idx, pk, pl, loc, owner, nq, avg, band = it
    (fel, Kel, p, pd, pdd, eta, etad, etadd, wacc, a0, al, om, S, J, L, Sw, Z, W, vSt, Jw, coef, dcp, Geta, dJ, dW,
     trZ, trdW, Jdom, Fw, Pa0w, Palw, Pomw, Petaw, Petadw, Petaddw, inner, Aw, Gpw, pc, Da, G2d, G2dd, BF) = wk
    m = eta.size
    npairs = pk.size
    stiff = G.shape[0] > 0
    nc = 7 + m
    terms_mode = res.shape[0] == 0
    for i in range(idx.shape[0]):
        if terms_mode:
            F, Pa0, Pal, Pom, Peta, Petad, Petadd, A, Gp = (Fo[i], Pa0o[i], Palo[i], Pomo[i], Petao[i], Petado[i],
                                                            Petaddo[i], Ao[i], Gpo[i])
        else:
            F, Pa0, Pal, Pom, Peta, Petad, Petadd, A, Gp = Fw, Pa0w, Palw, Pomw, Petaw, Petadw, Petaddw, Aw, Gpw
        for k in range(4):
            p[k] = q[idx[i, 3 + k]]
            pd[k] = v[idx[i, 3 + k]]
            pdd[k] = a[idx[i, 3 + k]]
        for k in range(m):
            eta[k] = q[idx[i, 7 + k]]
            etad[k] = v[idx[i, 7 + k]]
            etadd[k] = a[idx[i, 7 + k]]
        rotation_matrix(p, A)
        matrix_G(p, Gp)
        for j in range(3):
            wacc[j] = a[idx[i, j]] - gravity[j]
        for r in range(3):
            a0[r] = A[0, r] * wacc[0] + A[1, r] * wacc[1] + A[2, r] * wacc[2]
            t1 = 0.0
            t2 = 0.0
            for j in range(4):
                t1 += Gp[r, j] * pdd[j]
                t2 += Gp[r, j] * pd[j]
            al[r] = 2.0 * t1
            om[r] = 2.0 * t2
        _contract(i, s0, J0, St, Sr, Jk, Jkl, Skl, pk, pl, eta, etad, S, vSt, J, L, Sw)
        for x in range(3):
            for y in range(3):
                for k in range(m):
                    Z[x, y, k] = xp[i, y, x, k]
        for s in range(npairs):
            k = pk[s]
            e = eta[pl[s]]
            for x in range(3):
                for y in range(3):
                    Z[x, y, k] += pp[i, s, x, y] * e
        trW = 0.0
        for x in range(3):
            for y in range(3):
                t1 = 0.0
                for l in range(m):
                    t1 += Z[y, x, l] * etad[l]
                W[x, y] = t1
            trW += W[x, x]
        for k in range(m):
            trZ[k] = Z[0, 0, k] + Z[1, 1, k] + Z[2, 2, k]
        w2 = om[0] * om[0] + om[1] * om[1] + om[2] * om[2]
        for r in range(3):
            Jw[r] = J[r, 0] * om[0] + J[r, 1] * om[1] + J[r, 2] * om[2]
            coef[r] = a0[r]
            coef[3 + r] = al[r]
        for c in range(6):
            coef[6 + c] = om[_PI[c]] * om[_PJ[c]]
            for r in range(3):
                dcp[c, r] = 0.0
            dcp[c, _PI[c]] += om[_PJ[c]]
            dcp[c, _PJ[c]] += om[_PI[c]]
        if stiff:
            for c in range(12):
                for k in range(m):
                    t1 = 0.0
                    for l in range(band[0, k], band[1, k]):
                        t1 += G[i, c, k, l] * eta[l]
                    Geta[c, k] = t1
        # F_V
        oS = (om[1] * S[2] - om[2] * S[1], om[2] * S[0] - om[0] * S[2], om[0] * S[1] - om[1] * S[0])
        for r in range(3):
            r1 = (r + 1) % 3
            r2 = (r + 2) % 3
            t1 = 0.0
            for k in range(m):
                t1 += St[i, r, k] * etadd[k]
            F[r] = (mass[i] * a0[r] + (al[r1] * S[r2] - al[r2] * S[r1]) + (om[r1] * oS[r2] - om[r2] * oS[r1])
                    + 2.0 * (om[r1] * vSt[r2] - om[r2] * vSt[r1]) + t1)
        # F_pi
        for r in range(3):
            r1 = (r + 1) % 3
            r2 = (r + 2) % 3
            t1 = 0.0
            for k in range(m):
                t1 += L[r, k] * etadd[k]
            WTo = W[0, r] * om[0] + W[1, r] * om[1] + W[2, r] * om[2]
            F[3 + r] = ((S[r1] * a0[r2] - S[r2] * a0[r1]) + (J[r, 0] * al[0] + J[r, 1] * al[1] + J[r, 2] * al[2])
                        + (om[r1] * Jw[r2] - om[r2] * Jw[r1]) + 2.0 * (om[r] * trW - WTo) + t1)
        # F_q
        for k in range(m):
            t1 = 0.0
            for r in range(3):
                t1 += St[i, r, k] * a0[r] + L[r, k] * al[r] + 2.0 * Sw[r, k] * om[r]
            cf = -w2 * trZ[k]
            for x in range(3):
                for y in range(3):
                    cf += om[x] * om[y] * Z[x, y, k]
            t2 = 0.0
            for l in range(band[0, k], band[1, k]):
                t2 += Mee[i, k, l] * etadd[l] + D[i, k, l] * etad[l]
                if linear:
                    t2 += K[i, k, l] * eta[l]
            if not linear:
                t2 += fel[i, k]
            if stiff:
                for c in range(12):
                    t2 += coef[c] * Geta[c, k]
            F[6 + k] = t1 + cf + t2
        if jac:
            Kt = K[i] if linear else Kel[i]
            omS = om[0] * S[0] + om[1] * S[1] + om[2] * S[2]
            for r in range(3):
                r1 = (r + 1) % 3
                r2 = (r + 2) % 3
                for c in range(3):
                    Pa0[r, c] = 0.0
                    Pal[r, c] = 0.0
                    Pa0[3 + r, c] = 0.0
                    Pal[3 + r, c] = J[r, c]
                    Pom[r, c] = om[r] * S[c] - 2.0 * S[r] * om[c]
                    Pom[3 + r, c] = -2.0 * W[c, r]
                Pa0[r, r] = mass[i]
                # skew(S): row r has -S[r2] at column r1 and S[r1] at column r2
                Pal[r, r1] = S[r2]
                Pal[r, r2] = -S[r1]
                Pa0[3 + r, r1] = -S[r2]
                Pa0[3 + r, r2] = S[r1]
                Pom[r, r] += omS
                Pom[r, r1] += 2.0 * vSt[r2]
                Pom[r, r2] -= 2.0 * vSt[r1]
                # omx J - skew(Jw) + 2 trW I
                for c in range(3):
                    Pom[3 + r, c] += om[r1] * J[r2, c] - om[r2] * J[r1, c]
                Pom[3 + r, r1] += Jw[r2]
                Pom[3 + r, r2] -= Jw[r1]
                Pom[3 + r, r] += 2.0 * trW
            for k in range(m):
                for r in range(3):
                    Pa0[6 + k, r] = St[i, r, k]
                    Pal[6 + k, r] = L[r, k]
                    t1 = 2.0 * Sw[r, k] - 2.0 * trZ[k] * om[r]
                    for y in range(3):
                        t1 += (Z[r, y, k] + Z[y, r, k]) * om[y]
                    Pom[6 + k, r] = t1
                if stiff:
                    for r in range(3):
                        Pa0[6 + k, r] += Geta[r, k]
                        Pal[6 + k, r] += Geta[3 + r, k]
                        t1 = 0.0
                        for c in range(6):
                            t1 += Geta[6 + c, k] * dcp[c, r]
                        Pom[6 + k, r] += t1
            # d/d eta, d/d eta_d, d/d eta_dd: dJ_k = J_k + sum_l (J_kl + J_lk) eta_l, dW_k = sum_l phi_phi_kl eta_d,l
            for k in range(m):
                for r in range(3):
                    for c in range(3):
                        dJ[k, r, c] = Jk[i, k, r, c]
                        dW[k, r, c] = 0.0
            for r in range(3):
                for k in range(m):
                    Peta[3 + r, k] = 0.0
            for k in range(m):
                # outside the band the work arrays' elastic rows stay at their packed zeros (residual mode);
                # the caller's arrays of terms mode are written in full
                lo, hi = (0, m) if terms_mode else (band[0, k], band[1, k])
                for l in range(lo, hi):
                    t1 = Kt[k, l]
                    if stiff:
                        for c in range(12):
                            t1 += coef[c] * G[i, c, k, l]
                    Peta[6 + k, l] = t1
                    Petad[6 + k, l] = D[i, k, l]
                    Petadd[6 + k, l] = Mee[i, k, l]
            for s in range(npairs):
                k = pk[s]
                l = pl[s]
                ek, el, edl, eddl = eta[k], eta[l], etad[l], etadd[l]
                t1 = 0.0
                t2 = 0.0
                t3 = 0.0
                for r in range(3):
                    Peta[3 + r, k] += Skl[i, s, r] * eddl
                    t2 += al[r] * Skl[i, s, r]
                    t3 += om[r] * Skl[i, s, r]
                    for c in range(3):
                        dJ[k, r, c] += Jkl[i, s, r, c] * el
                        dJ[l, r, c] += Jkl[i, s, r, c] * ek
                        dW[k, r, c] += pp[i, s, r, c] * edl
                        t1 += om[r] * om[c] * pp[i, s, r, c]
                Peta[6 + k, l] += t1 - w2 * (pp[i, s, 0, 0] + pp[i, s, 1, 1] + pp[i, s, 2, 2])
                Peta[6 + l, k] += t2
                Petad[6 + l, k] += 2.0 * t3
            for k in range(m):
                trdW[k] = dW[k, 0, 0] + dW[k, 1, 1] + dW[k, 2, 2]
                for r in range(3):
                    Jdom[k, r] = dJ[k, r, 0] * om[0] + dJ[k, r, 1] * om[1] + dJ[k, r, 2] * om[2]
            for r in range(3):
                r1 = (r + 1) % 3
                r2 = (r + 2) % 3
                for k in range(m):
                    # (skew(al) + omx omx) St, 2 omx St, St
                    sa = al[r1] * St[i, r2, k] - al[r2] * St[i, r1, k]
                    ox = om[r1] * St[i, r2, k] - om[r2] * St[i, r1, k]
                    oox = om[r] * (om[0] * St[i, 0, k] + om[1] * St[i, 1, k] + om[2] * St[i, 2, k]) - w2 * St[i, r, k]
                    Peta[r, k] = sa + oox
                    Petad[r, k] = 2.0 * ox
                    Petadd[r, k] = St[i, r, k]
                    # F_pi by eta (the S_kl eta_dd part is already in)
                    t1 = -(a0[r1] * St[i, r2, k] - a0[r2] * St[i, r1, k])
                    t1 += dJ[k, r, 0] * al[0] + dJ[k, r, 1] * al[1] + dJ[k, r, 2] * al[2]
                    t1 += om[r1] * Jdom[k, r2] - om[r2] * Jdom[k, r1]
                    t1 += 2.0 * (om[r] * trdW[k] - (dW[k, 0, r] * om[0] + dW[k, 1, r] * om[1] + dW[k, 2, r] * om[2]))
                    Peta[3 + r, k] += t1
                    Petad[3 + r, k] = 2.0 * (om[r] * trZ[k] - (Z[r, 0, k] * om[0] + Z[r, 1, k] * om[1]
                                                              + Z[r, 2, k] * om[2]))
                    Petadd[3 + r, k] = L[r, k]
        if not terms_mode:
            _residual(i, F, Pa0, Pal, Pom, Peta, Petad, Petadd, A, Gp, p, pd, pdd, wacc, m, nc, cM, cC, cK, jac, res,
                      blk, inner, pc, Da, G2d, G2dd, BF, band)


@njit(cache=True)
def _elastic(q, fd, idata, wd, tab, linear):
    """Structure forces and dense tangents of all bodies from the compiled element loops of the nonlinear beam
    and the exact beam (when the group has such elements), plus the constant node-spring stiffness ``Kextra``.
    A failed exact-beam element (a local rotation of pi) leaves its body's forces NaN and its index in
    ``exact_bad``."""
    if linear:
        return
    fl, it, wk = _floats(fd, tab), _ints(idata, tab), _work(wd, tab)
    gravity, mass, s0, J0, St, Sr, Mee, xp, Jk, pp, Jkl, Skl, K, D, G, Kextra, bD, bw, bKb, bH, bEAL = fl
    idx, pk, pl, loc, owner, nq, avg, band = it
    X21, R0, l0, kx, xloc, xowner, cable, xW, xWs, xU, xdl, bad = _exact(fd, idata, wd, tab)
    fel, Kel = wk[0], wk[1]
    if loc.shape[0] == 0 and xloc.shape[0] == 0:
        return
    fel[:, :] = 0.0
    n, m = fel.shape
    for b in range(n):          # outside the band Kel stays at its packed zeros
        for k in range(m):
            for l in range(band[0, k], band[1, k]):
                Kel[b, k, l] = 0.0
    seven = np.int64(7)         # no literal (docs/architecture.md §2)
    if loc.shape[0] > 0:
        forces_dense(q, idx, seven, loc, owner, bD, bw, nq, avg, bKb, bH, bEAL, fel, Kel)
    if xloc.shape[0] > 0:
        bad[0] = 1.0 + exact_forces_dense(q, idx, seven, xloc, xowner, X21, R0, l0, kx, cable, xW, xWs, xU, xdl, fel,
                                         Kel)
    if Kextra.shape[0] > 0:
        for b in range(n):
            for k in range(m):
                t = 0.0
                for l in range(band[0, k], band[1, k]):
                    t += Kextra[b, k, l] * q[idx[b, 7 + l]]
                    Kel[b, k, l] += Kextra[b, k, l]
                fel[b, k] += t


@njit(cache=True)
def evaluate(q, v, a, fd, idata, wd, tab, cM, cC, cK, jac, r, blk, F, Pa0, Pal, Pom, Peta, Petad, Petadd, A, Gp):
    """Evaluate all bodies of a group, in one of two modes.

    Residual mode (``r`` (n, 7 + m), ``F`` etc. of size 0): the residual ``(A F_V, 2 G^T F_pi, F_q)``
    into ``r`` and, with ``jac``, the blocks ``cM M + cC C + cK K`` into ``blk`` (n, 7 + m, 7 + m).
    Terms mode (``r`` of size 0): the body-frame forces into ``F`` (n, 6 + m), with ``jac`` their partials
    into ``P*`` (n, 6 + m, 3 or m), and ``A`` (n, 3, 3), ``Gp`` (n, 3, 4)."""
    linear = tab[0, 2] == 1
    _elastic(q, fd, idata, wd, tab, linear)
    _bodies(q, v, a, fd, idata, wd, tab, linear, jac, cM, cC, cK, r, blk, F, Pa0, Pal, Pom, Peta, Petad, Petadd, A, Gp)


@njit(cache=True, inline="always")
def _residual(i, F, Pa0, Pal, Pom, Peta, Petad, Petadd, A, Gp, p, pd, pdd, wacc, m, nc, cM, cC, cK, jac, r, blk, inner,
              pc, Da, G2d, G2dd, BF, band):
    """Residual row ``i`` and, with ``jac``, Newton block ``i`` from body ``i``'s forces and partials; the elastic
    rows' partials by the modal coordinates are zero outside ``band`` (skipped)."""
    for x in range(3):
        r[i, x] = A[x, 0] * F[0] + A[x, 1] * F[1] + A[x, 2] * F[2]
    for j in range(4):
        r[i, 3 + j] = 2.0 * (Gp[0, j] * F[3] + Gp[1, j] * F[4] + Gp[2, j] * F[5])
    for k in range(m):
        r[i, 7 + k] = F[6 + k]
    if not jac:
        return
    pc[0] = p[0]
    for k in range(1, 4):
        pc[k] = -p[k]
    # d a0/dp = B(p*, w) diag(1, -1, -1, -1)
    jacobian_B(pc, wacc, Da)
    for x in range(3):
        for j in range(1, 4):
            Da[x, j] = -Da[x, j]
    matrix_G(pd, G2d)
    matrix_G(pdd, G2dd)
    inner[:, :] = 0.0
    for row in range(6 + m):
        lo, hi = (0, m) if row < 6 else (band[0, row - 6], band[1, row - 6])
        if cM != 0.0:
            for x in range(3):
                inner[row, x] += cM * (Pa0[row, 0] * A[x, 0] + Pa0[row, 1] * A[x, 1] + Pa0[row, 2] * A[x, 2])
            for j in range(4):
                inner[row, 3 + j] += cM * (2.0 * (Pal[row, 0] * Gp[0, j] + Pal[row, 1] * Gp[1, j]
                                                  + Pal[row, 2] * Gp[2, j]))
            for k in range(lo, hi):
                inner[row, 7 + k] += cM * Petadd[row, k]
        if cC != 0.0:
            for j in range(4):
                inner[row, 3 + j] += cC * (2.0 * (Pom[row, 0] * Gp[0, j] + Pom[row, 1] * Gp[1, j]
                                                  + Pom[row, 2] * Gp[2, j]))
            for k in range(lo, hi):
                inner[row, 7 + k] += cC * Petad[row, k]
        if cK != 0.0:
            for j in range(4):
                t = 0.0
                for x in range(3):
                    t += Pa0[row, x] * Da[x, j] - Pal[row, x] * (2.0 * G2dd[x, j]) - Pom[row, x] * (2.0 * G2d[x, j])
                inner[row, 3 + j] += cK * t
            for k in range(lo, hi):
                inner[row, 7 + k] += cK * Peta[row, k]
    for c in range(nc):
        for x in range(3):
            blk[i, x, c] = A[x, 0] * inner[0, c] + A[x, 1] * inner[1, c] + A[x, 2] * inner[2, c]
        for j in range(4):
            blk[i, 3 + j, c] = 2.0 * (Gp[0, j] * inner[3, c] + Gp[1, j] * inner[4, c] + Gp[2, j] * inner[5, c])
        for k in range(m):
            blk[i, 7 + k, c] = inner[6 + k, c]
    if cK != 0.0:
        # d(A F_V)/dp = B(p, F_V); d(2 G^T F_pi)/dp = 2 T(F_pi), T(y) = [[0, -y^T], [y, -y~]]
        jacobian_B(p, F[0:3], BF)
        for x in range(3):
            for j in range(4):
                blk[i, x, 3 + j] += cK * BF[x, j]
        y0, y1, y2 = F[3], F[4], F[5]
        c2 = cK * 2.0
        blk[i, 3, 4] += c2 * -y0
        blk[i, 3, 5] += c2 * -y1
        blk[i, 3, 6] += c2 * -y2
        blk[i, 4, 3] += c2 * y0
        blk[i, 5, 3] += c2 * y1
        blk[i, 6, 3] += c2 * y2
        blk[i, 4, 5] += c2 * y2
        blk[i, 4, 6] += c2 * -y1
        blk[i, 5, 4] += c2 * -y2
        blk[i, 5, 6] += c2 * y0
        blk[i, 6, 4] += c2 * y1
        blk[i, 6, 5] += c2 * -y0



@njit(cache=True)
def _kinetic(q, v, fl, it, wk, n):
    """``T = 1/2 v^T M v`` of all bodies in body-frame velocities ``(V, omega, eta_d)`` (J)."""
    gravity, mass, s0, J0, St, Sr, Mee, xp, Jk, pp, Jkl, Skl, K, D, G, Kextra, bD, bw, bKb, bH, bEAL = fl
    idx, pk, pl = it[0], it[1], it[2]
    p, eta, etad, om, S, J, L, Sw, vSt = wk[2], wk[5], wk[6], wk[11], wk[12], wk[13], wk[14], wk[15], wk[18]
    m = eta.size
    A = np.empty((3, 3))
    Gp = np.empty((3, 4))
    V = np.empty(3)
    total = 0.0
    for i in range(n):
        for k in range(4):
            p[k] = q[idx[i, 3 + k]]
        for k in range(m):
            eta[k] = q[idx[i, 7 + k]]
            etad[k] = v[idx[i, 7 + k]]
        rotation_matrix(p, A)
        matrix_G(p, Gp)
        for r in range(3):
            V[r] = A[0, r] * v[idx[i, 0]] + A[1, r] * v[idx[i, 1]] + A[2, r] * v[idx[i, 2]]
            t = 0.0
            for j in range(4):
                t += Gp[r, j] * v[idx[i, 3 + j]]
            om[r] = 2.0 * t
        _contract(i, s0, J0, St, Sr, Jk, Jkl, Skl, pk, pl, eta, etad, S, vSt, J, L, Sw)
        VV = V[0] * V[0] + V[1] * V[1] + V[2] * V[2]
        VoS = (V[0] * (om[1] * S[2] - om[2] * S[1]) + V[1] * (om[2] * S[0] - om[0] * S[2])
               + V[2] * (om[0] * S[1] - om[1] * S[0]))
        VSe = V[0] * vSt[0] + V[1] * vSt[1] + V[2] * vSt[2]
        oJo = 0.0
        oLe = 0.0
        for r in range(3):
            oJo += om[r] * (J[r, 0] * om[0] + J[r, 1] * om[1] + J[r, 2] * om[2])
            t = 0.0
            for k in range(m):
                t += L[r, k] * etad[k]
            oLe += om[r] * t
        eMe = 0.0
        for k in range(m):
            t = 0.0
            for l in range(m):
                t += Mee[i, k, l] * etad[l]
            eMe += etad[k] * t
        total += 0.5 * mass[i] * VV + VoS + VSe + 0.5 * oJo + oLe + 0.5 * eMe
    return total


@njit(cache=True)
def _gravity(q, fl, it, n):
    """``-g . sum (m r + A S)`` of all bodies (J)."""
    gravity, mass, s0, St = fl[0], fl[1], fl[2], fl[4]
    idx = it[0]
    m = St.shape[2]
    p = np.empty(4)
    A = np.empty((3, 3))
    S = np.empty(3)
    total = 0.0
    for i in range(n):
        for k in range(4):
            p[k] = q[idx[i, 3 + k]]
        rotation_matrix(p, A)
        for r in range(3):
            t = s0[i, r]
            for k in range(m):
                t += St[i, r, k] * q[idx[i, 7 + k]]
            S[r] = t
        for r in range(3):
            com = mass[i] * q[idx[i, r]] + A[r, 0] * S[0] + A[r, 1] * S[1] + A[r, 2] * S[2]
            total -= com * gravity[r]
    return total


@njit(cache=True, inline="always")
def _quadratic(x, idx, M, i, band):
    """``x_i^T M_i x_i / 2`` with ``x_i = x[idx[i, 7:]]`` (``M_i`` zero outside ``band``)."""
    m = M.shape[1]
    s = 0.0
    for k in range(m):
        t = 0.0
        for l in range(band[0, k], band[1, k]):
            t += M[i, k, l] * x[idx[i, 7 + l]]
        s += x[idx[i, 7 + k]] * t
    return 0.5 * s


@njit(cache=True)
def energy(q, v, fd, idata, wd, tab, which, out):
    """One energy of all bodies (J, W): ``which`` 0 kinetic ``v^T M v / 2`` (returned), 1 gravity
    ``-g . sum (m r + A S)`` (returned), 2 strain energy of each body into ``out`` (n,): ``eta^T K eta / 2``
    (linear) or the compiled beam elements (nonlinear and exact) plus node springs ``eta^T K_s eta / 2``,
    3 damping power ``-sum eta_d^T D eta_d`` (returned, <= 0)."""
    fl, it, wk = _floats(fd, tab), _ints(idata, tab), _work(wd, tab)
    gravity, mass, s0, J0, St, Sr, Mee, xp, Jk, pp, Jkl, Skl, K, D, G, Kextra, bD, bw, bKb, bH, bEAL = fl
    idx, pk, pl, loc, owner, nq, avg, band = it
    n = tab[0, 0]
    total = 0.0
    if which == 0:
        total = _kinetic(q, v, fl, it, wk, n)
    elif which == 1:
        total = _gravity(q, fl, it, n)
    elif which == 2:
        for i in range(n):
            out[i] = _quadratic(q, idx, K, i, band) if tab[0, 2] == 1 else 0.0
        if loc.shape[0] > 0:
            beam_energy(q, idx, 7, loc, owner, bD, bw, nq, avg, bKb, bEAL, out)
        X21, R0, l0, kx, xloc, xowner, cable, xW, xWs, xU, xdl, bad = _exact(fd, idata, wd, tab)
        if xloc.shape[0] > 0:
            bad[0] = 1.0 + exact_energy(q, idx, np.int64(7), xloc, xowner, X21, R0, l0, kx, cable, xW, xWs, xU, xdl,
                                        out)
        if Kextra.shape[0] > 0:
            for i in range(n):
                out[i] += _quadratic(q, idx, Kextra, i, band)
    else:
        for i in range(n):
            total -= 2.0 * _quadratic(v, idx, D, i, band)
    return total
