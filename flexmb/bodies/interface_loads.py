"""Geometric stiffening by interface loads (docs/theory-flexible.md §2, theory-stiffening.md).

A joint attached to an interface point or a mesh node ``s`` of a flexible body loads the body
there; the quasi-static stress of a unit force or moment at ``s`` has the modal geometric
stiffness ``G_s,j`` (six load cases: ``StiffeningMatrices.interfaces``, or
``reduction.stiffening.node_stiffening`` for nodes). At run time the load is the
constraint force of the rows attached at ``s``: on the body's frame coordinates
``g = -J_s^T lambda`` (``J_s`` those rows' Jacobian columns of the body), i.e. in body axes

    F' = A^T g_r,     M' = 1/2 G(p) g_p - x_s x F'      (moment about the interface point)

and the modal equations gain ``sum_j f'_j G_s,j eta`` with ``f' = (F', M')``. Its exact
derivatives: by lambda (``-T J_s^T``, a block beside ``Phi_q^T``), by eta (``sum f'_j G_j``), by
the body's p through ``A^T`` and ``G``, and by every coordinate of the joint's body pair
through ``J_s(q)`` (the multiplier-weighted constraint Hessian restricted to the site's rows).
Joints only: springs at an interface do not enter (their forces are not multipliers).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import rotations as rot

_SIGN = np.array([1.0, -1.0, -1.0, -1.0])


@dataclass
class SiteRows:
    """Instances of one primitive group with one side at a stiffened interface."""

    group: int                 # index into Assembly.groups
    instances: np.ndarray      # (k,) instance indices in the group
    side: int                  # 0 or 1
    body_index: np.ndarray     # (k,) index of the body in InterfaceLoads.bodies
    G: np.ndarray              # (k, 6, m, m) interface stiffening matrices
    x_s: np.ndarray            # (k, 3) interface point, body axes
    modal_rows: np.ndarray     # (k, m) global indices of the body's modal coordinates
    frame_cols: np.ndarray     # (k, 7) global indices of the body's r, p


class InterfaceLoads:
    """All joint rows attached at stiffened interfaces of flexible bodies."""

    def __init__(self, groups: list, bodies: list):
        self.entries: list[SiteRows] = []
        index = {id(b): k for k, b in enumerate(bodies)}
        for gi, g in enumerate(groups):
            for side in (0, 1):
                sel = [k for k, p in enumerate(g.prims) if _stiffened_site(p.sites[side])]
                if not sel:
                    continue
                sites = [g.prims[k].sites[side] for k in sel]
                bs = [s.body for s in sites]
                m = bs[0].n_modes
                self.entries.append(SiteRows(
                    gi, np.array(sel), side, np.array([index[id(b)] for b in bs]),
                    np.array([_site_matrices(s) for s in sites]).reshape(len(sel), 6, m, m),
                    np.array([_site_position(s) for s in sites]).reshape(len(sel), 3),
                    np.array([b.offset + 7 + np.arange(m) for b in bs]).reshape(len(sel), m),
                    np.array([b.offset + np.arange(7) for b in bs]).reshape(len(sel), 7)))

    def __bool__(self) -> bool:
        return bool(self.entries)

    def register(self, add, groups, nq: int) -> list[tuple[int, int]]:
        """Pattern blocks: (modal rows x multiplier columns) and (modal rows x pair columns)."""
        handles = []
        for e in self.entries:
            g = groups[e.group]
            rows = g.rows.reshape(g.n, g.r)[e.instances]                       # (k, r)
            h_lam = add(e.modal_rows, nq + rows)
            h_q = add(e.modal_rows, g.scatter[e.instances])
            handles.append((h_lam, h_q))
        return handles

    def loads(self, q, evals, groups, lam) -> list[tuple[SiteRows, np.ndarray]]:
        """Body-axes load ``f' = (F', M')`` (k, 6) at every site entry."""
        out = []
        for e in self.entries:
            g, ev = groups[e.group], evals[e.group]
            rows = g.rows.reshape(g.n, g.r)[e.instances]
            jac = ev.jac.reshape(g.n, g.r, -1)[e.instances]
            c0 = 7 * e.side
            gvec = -np.einsum("krc,kr->kc", jac[:, :, c0:c0 + 7], lam[rows])
            p = q[e.frame_cols[:, 3:7]]
            At = np.swapaxes(rot.A(p), 1, 2)
            F = np.einsum("kij,kj->ki", At, gvec[:, :3])
            M = 0.5 * np.einsum("kij,kj->ki", rot.G(p), gvec[:, 3:]) - rot.cross(e.x_s, F)
            out.append((e, np.concatenate([F, M], axis=1)))
        return out

    def contributions(self, q, evals, groups, lam, jacobian: bool):
        """Per entry: (modal rows (k, m), residual (k, m), d/dlambda (k, m, r), d/dx_pair (k, m, nx))."""
        out = []
        for e in self.entries:
            g, ev = groups[e.group], evals[e.group]
            k, r = e.instances.size, g.r
            rows = g.rows.reshape(g.n, g.r)[e.instances]
            lam_k = lam[rows]                                                   # (k, r)
            jac = ev.jac.reshape(g.n, r, -1)[e.instances]                         # (k, r, nx)
            c0 = 7 * e.side
            Jb = jac[:, :, c0:c0 + 7]                                            # (k, r, 7): body r, p columns
            gvec = -np.einsum("krc,kr->kc", Jb, lam_k)                            # (k, 7)
            p = q[e.frame_cols[:, 3:7]]
            A = rot.A(p)
            Gp = rot.G(p)
            T = np.zeros((k, 6, 7))                                              # f' = T g
            T[:, :3, :3] = np.swapaxes(A, 1, 2)
            T[:, 3:, :3] = -np.einsum("kij,kjl->kil", rot.skew(e.x_s), np.swapaxes(A, 1, 2))
            T[:, 3:, 3:] = 0.5 * Gp
            f = np.einsum("kac,kc->ka", T, gvec)                                 # (k, 6)
            eta = q[e.modal_rows]
            Geta = np.einsum("kjab,kb->kja", e.G, eta)                           # (k, 6, m)
            res = np.einsum("kj,kja->ka", f, Geta)
            if not jacobian:
                out.append((e, res, None, None, None))
                continue
            d_lam = -np.einsum("kja,kjc,krc->kar", Geta, T, Jb)                  # (k, m, r)
            # by the pair coordinates through J(q): lambda-weighted Hessian of the site's rows
            lam_g = np.zeros(g.n * r)
            lam_g.reshape(g.n, r)[e.instances] = lam_k
            H = ev.hess(lam_g)[e.instances]                                      # (k, nx, nx)
            dg = -H[:, c0:c0 + 7, :]                                             # (k, 7, nx)
            d_x = np.einsum("kja,kjc,kcx->kax", Geta, T, dg)
            # through T(p): d(A^T g_r)/dp and d(1/2 G g_p)/dp, and -x_s x d(A^T g_r)/dp
            dAt = rot.B(p * _SIGN, gvec[:, :3]) * _SIGN                          # (k, 3, 4)
            dT = np.zeros((k, 6, 4))
            dT[:, :3] = dAt
            dT[:, 3:] = -np.einsum("kij,kjl->kil", rot.skew(e.x_s), dAt) - 0.5 * rot.G(gvec[:, 3:])
            pcols = slice(c0 + 3, c0 + 7)
            d_x[:, :, pcols] += np.einsum("kja,kjl->kal", Geta, dT)
            # by eta directly
            m = eta.shape[1]
            mcols = _modal_cols(g, e.side)
            d_x[:, :, mcols] += np.einsum("kj,kjab->kab", f, e.G)
            out.append((e, res, d_lam, d_x, m))
        return out


def _modal_cols(g, side: int) -> slice:
    mi, mj = g.n_modes
    return slice(14, 14 + mi) if side == 0 else slice(14 + mi, 14 + mi + mj)


def _stiffened_site(site) -> bool:
    """An interface with load-case matrices, or a mesh node of a stiffened body with an FE model."""
    if site is None or not getattr(site.body, "stiffening", False):
        return False
    if hasattr(site, "node"):
        return site.body.node_stiffening(site.node) is not None
    return site.name in (site.body.G_interfaces or {})


def _site_matrices(site) -> np.ndarray:
    return site.body.node_stiffening(site.node) if hasattr(site, "node") else site.body.G_interfaces[site.name]


def _site_position(site) -> np.ndarray:
    return site.body.modes.nodes[site.node] if hasattr(site, "node") else site.position
