"""Inertia invariants of a flexible body (docs/theory-reduction.md §5).

With body-frame node positions ``x`` and mode shapes ``Phi`` the volume integrals
``int rho a . b dV`` of fields interpolated by the element shape functions are ``A^T M B`` with
the FE mass matrix ``M`` -- exact for consistent mass (Shabana, *Dynamics of Multibody
Systems*, 3rd ed., ch. 5; Nikravesh 2002, eqs. 3.14 and 4.10 use the same
``I^T M I = m I``, ``b^T M b = J``). The rigid-body terms come from the rigid-body-mode matrix
``R`` (ndof, 6) and include the rotary inertia of beam and shell nodes. The second-order terms
(``S_kl``, ``J_kl``, ``x_phi``-based ``J_k``) use the translational field through the
component products ``int rho N_i^T N_j`` of ``FEModel.translational_mass`` (exact for beams and
solids; node-pair scalar masses ``tr(M_ab^tt) / 3`` for shells); they neglect rotary inertia of
beam and shell nodes (theory §5.3 says why that is acceptable).

Units: modal coordinates ``eta`` are those of the mode set (for mass-orthonormal modes,
sqrt(kg) m); every modal invariant is given per unit modal coordinate.
"""
from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from flexmb.errors import ModelError
from flexmb.reduction.interfaces import rigid_body_modes

_CYCLIC = ((0, 1, 2), (1, 2, 0), (2, 0, 1))


@dataclass(frozen=True, eq=False)
class Invariants:
    """Inertia invariants of a body with ``m`` modes, about the body-frame origin.

    Attributes:
        mass: total mass m, kg.
        first_moment: (3,) ``int rho x dV``, kg m.
        center_of_mass: (3,) centre of mass, m.
        inertia: (3, 3) ``int rho x~^T x~ dV`` about the frame origin (plus beam/shell rotary
            inertia), kg m^2.
        S_t: (3, m) ``int rho Phi dV`` (translational coupling), kg m per modal coordinate.
        S_r: (3, m) ``int rho x~ Phi dV`` (rotational coupling, with rotary terms), kg m^2 per
            modal coordinate.
        M_ee: (m, m) ``Phi^T M Phi`` (modal mass), kg m^2 per modal coordinate squared.
        phi_phi: (3, 3, m, m) ``int rho Phi_i^T Phi_j dV`` for components i, j (Shabana's S_ij).
        x_phi: (3, 3, m) ``int rho x_i Phi_j dV`` for components i, j.
        S_kl: (m, 3, m) ``int rho Phi_k~ Phi_l dV`` (= int rho Phi_k x Phi_l dV).
        J_k: (m, 3, 3) ``int rho (x~^T Phi_k~ + Phi_k~^T x~) dV``: first-order change of the
            inertia tensor, ``J(eta) = inertia + sum_k J_k eta_k + sum_kl J_kl eta_k eta_l``.
        J_kl: (m, m, 3, 3) ``int rho Phi_k~^T Phi_l~ dV`` (quadratic inertia terms).
    """

    mass: float
    first_moment: np.ndarray
    center_of_mass: np.ndarray
    inertia: np.ndarray
    S_t: np.ndarray
    S_r: np.ndarray
    M_ee: np.ndarray
    phi_phi: np.ndarray
    x_phi: np.ndarray
    S_kl: np.ndarray
    J_k: np.ndarray
    J_kl: np.ndarray

    @property
    def n_modes(self) -> int:
        """Number of modal coordinates m."""
        return self.S_t.shape[1]

    def transformed(self, V: np.ndarray) -> "Invariants":
        """Invariants for modal coordinates ``eta = V eta'`` (V (m, r))."""
        pp = np.einsum("ijkl,ka,lb->ijab", self.phi_phi, V, V)
        xp = self.x_phi @ V
        return Invariants(self.mass, self.first_moment, self.center_of_mass, self.inertia,
                          self.S_t @ V, self.S_r @ V, V.T @ self.M_ee @ V, pp, xp, *_second_order(pp, xp))

    def arrays(self) -> dict[str, np.ndarray]:
        """Field name -> array (for saving)."""
        return {f.name: np.asarray(getattr(self, f.name)) for f in fields(self)}

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray]) -> "Invariants":
        """Inverse of :meth:`arrays`."""
        values = {f.name: arrays[f.name] for f in fields(cls)}
        values["mass"] = float(values["mass"])
        return cls(**values)


def inertia_invariants(source: Any, phi: np.ndarray | None = None) -> Invariants:
    """Inertia invariants of an FE model (or of a ModeSet with its model attached).

    ``source``: an ``FEModel``, with mode shapes ``phi`` (ndof, m) or None (rigid terms only);
    or a ``ModeSet`` (its ``phi`` and the model it was computed from). Node positions are the
    model's points, i.e. the body frame is the mesh frame.
    """
    model = source
    if hasattr(source, "phi") and hasattr(source, "model"):
        model, phi = source.model, source.phi if phi is None else phi
        if model is None:
            raise ModelError("this mode set has no FE model attached (it was loaded from a file); "
                             "its invariants must come from the file")
    M = model.M
    phi = np.zeros((model.ndof, 0)) if phi is None else np.asarray(phi, dtype=float)
    if phi.ndim != 2 or phi.shape[0] != model.ndof:
        raise ModelError(f"mode shapes must have shape ({model.ndof}, m), got {phi.shape}")
    R = rigid_body_modes(model.points, model.dofs_per_node)
    MR = np.asarray(M @ R)
    B = R.T @ MR                                               # [[m I, -s~], [s~, J]]
    mass = float(np.trace(B[:3, :3]) / 3.0)
    if not mass > 0.0:
        raise ModelError("the model has no mass (density 0 and no point masses)")
    s_tilde = 0.5 * (B[3:, :3] - B[:3, 3:])
    first = np.array([s_tilde[2, 1], s_tilde[0, 2], s_tilde[1, 0]])
    inertia = 0.5 * (B[3:, 3:] + B[3:, 3:].T)
    coupling = MR.T @ phi
    pp, xp = _translational_products(model, M, phi)
    return Invariants(mass, first, first / mass, inertia, coupling[:3], coupling[3:],
                      phi.T @ np.asarray(M @ phi), pp, xp, *_second_order(pp, xp))


def _translational_products(model: Any, M: Any, phi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``phi_phi`` (3, 3, m, m) and ``x_phi`` (3, 3, m) from the component mass products
    ``P_ij = int rho N_i^T N_j`` of the model (``FEModel.translational_mass``): exact for beams
    and solids, node-pair scalar masses for shells. The position field ``x`` is interpolated by
    the node positions on the translational dofs (exact: the element fields reproduce it)."""
    dpn = model.dofs_per_node
    P = model.translational_mass()
    X = np.zeros(model.ndof)
    X.reshape(model.n_nodes, dpn)[:, :3] = model.points
    pp = np.empty((3, 3, phi.shape[1], phi.shape[1]))
    xp = np.empty((3, 3, phi.shape[1]))
    for i in range(3):
        for j in range(3):
            Pphi = np.asarray(P[i][j] @ phi)
            pp[i, j] = phi.T @ Pphi
            xp[i, j] = X @ Pphi
    return pp, xp


def _second_order(pp: np.ndarray, xp: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``S_kl``, ``J_k`` and ``J_kl`` from ``phi_phi`` and ``x_phi`` (theory eq. 5.3)."""
    m = pp.shape[-1]
    S_kl = np.zeros((m, 3, m))
    for c, i, j in _CYCLIC:                                   # (a x b)_c = a_i b_j - a_j b_i
        S_kl[:, c, :] = pp[i, j] - pp[j, i]
    trace_pp = np.einsum("ssab->ab", pp)
    J_kl = np.einsum("ab,ij->abij", trace_pp, np.eye(3)) - np.einsum("jiab->abij", pp)
    trace_xp = np.einsum("ssk->k", xp)
    J_k = 2.0 * np.einsum("k,ij->kij", trace_xp, np.eye(3)) - np.einsum("jik->kij", xp) - np.einsum("ijk->kij", xp)
    return S_kl, J_k, J_kl
