"""The nonlinear floating-frame beam: all nodal dofs, Green-Lagrange axial strain.

A :class:`~flexmb.bodies.flexible.FlexibleBody` whose "modes" are the free nodal dofs of
a beam mesh (``Phi`` selects them, no truncation): inertia from the FE mass matrix
through the same invariants, elastic forces from
:class:`~flexmb.fem.nonlinear_beam.NonlinearBeamStructure` (strain
``eps = u' + (u'^2 + v'^2 + w'^2)/2``, docs/theory-elements.md §6). Centrifugal tension
stiffens bending through the strain itself, so no stiffening load cases are used.
The held dofs define the body frame: clamp one node (all six dofs) for a tangent frame
at that node; hold out-of-plane dofs as well for planar motion.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..checks import scalar
from ..errors import ModelError
from .flexible import FlexibleBody, rayleigh_damping

__all__ = ["NonlinearBeam", "NodalBeamBody"]


class NodalBeamBody(FlexibleBody):
    """A floating-frame beam whose "modes" are its free nodal dofs and whose elastic forces come from a
    nonlinear structure (``self._structure``): the common part of :class:`NonlinearBeam` and
    :class:`~flexmb.bodies.exact_beam.ExactBeam`."""

    def _check_modes(self, modes: Any, owner: str) -> Any:
        if modes.n_modes == 0:
            raise ModelError(f"{owner}: every dof is held; nothing can deform")
        return modes

    def _damping_matrix(self, damping, rayleigh, owner: str) -> np.ndarray:
        """``D = beta K(0)`` with ``beta = 2 zeta / omega_1`` for ``damping = zeta``, plus Rayleigh ``(alpha, beta)``."""
        K, M = self.modes.K, self.modes.M
        D = np.zeros_like(K)
        if damping is not None:
            z = scalar(damping, "damping ratio", owner, sign="non-negative")
            import scipy.linalg as sla
            w1 = float(np.sqrt(max(sla.eigh(K, M, eigvals_only=True, subset_by_index=[0, 0])[0], 0.0)))
            if w1 > 0.0:
                D += (2.0 * z / w1) * K
        if rayleigh is not None:
            D += rayleigh_damping(M, K, rayleigh, owner)
        return D

    def strain_energy(self, eta: np.ndarray) -> float:
        """Strain energy at nodal coordinates ``eta`` (J)."""
        return self._structure.strain_energy(eta)

    def axial_force(self, eta: np.ndarray) -> np.ndarray:
        """Axial force of each element (N, tension positive)."""
        return self._structure.axial_force(eta)


class NonlinearBeam(NodalBeamBody):
    """Beam body with every free nodal dof as a coordinate and nonlinear axial strain.

    Args:
        model: FEModel of two-node beam elements (6 dofs per node).
        fixed: dofs held at zero relative to the body frame (ids or a node-set name); at least
            the six dofs of one node, so that the frame is defined.
        damping: ratio ``zeta`` of stiffness-proportional damping ``D = beta K(0)`` with
            ``beta = 2 zeta / omega_1`` (omega_1 the lowest frequency of the held linear
            model), i.e. ``zeta`` at the first mode, more above it.
        rayleigh: ``(alpha, beta)`` of ``D = alpha M + beta K(0)``, added to ``damping``.
        membrane: axial-strain option of NonlinearBeamStructure (``"average"``: locking-free).

    Other arguments as :class:`FlexibleBody`.
    """

    kind = "nonlinear beam"

    def __init__(self, model: Any, fixed: str | Sequence[int] | np.ndarray, position=(0.0, 0.0, 0.0),
                 orientation=None, velocity=(0.0, 0.0, 0.0), angular_velocity=(0.0, 0.0, 0.0),
                 damping: float | None = None, rayleigh: tuple[float, float] | None = None,
                 membrane: str = "average", modal_coordinates=None, modal_velocities=None, name: str | None = None):
        from ..fem.nonlinear_beam import NonlinearBeamStructure
        from ..reduction.eigen import check_fe_model, fixed_dofs
        from ..reduction.modeset import ModeSet
        check_fe_model(model, f"{self.kind} {name!r}")
        held = fixed_dofs(model, fixed)
        structure = NonlinearBeamStructure(model, held, membrane=membrane)
        free = structure.free
        phi = np.zeros((model.ndof, free.size))
        phi[free, np.arange(free.size)] = 1.0
        M, K, _ = model.reduce(held)
        modes = ModeSet(phi, model.points, model.dofs_per_node, M.toarray(), K.toarray(), kind="nodal",
                        info={"fixed_dofs": int(held.size)}, model=model, fixed_dofs=held)
        self._structure = structure
        super().__init__(modes, position, orientation, velocity, angular_velocity, damping=damping,
                         rayleigh=rayleigh, stiffening=False, modal_coordinates=modal_coordinates,
                         modal_velocities=modal_velocities, name=name)
        if held.size < 6:
            raise ModelError(f"{self.kind} {self.name!r}: hold at least the six dofs of one node (fixed=...) "
                             f"so that the body frame is defined; {held.size} dofs are held")
        self.structure = structure

