"""The geometrically exact beam: all nodal dofs, consistent co-rotational elements.

A :class:`~flexmb.bodies.flexible.FlexibleBody` whose "modes" are the free nodal dofs of a beam
mesh (``Phi`` selects them), like :class:`~flexmb.bodies.nonlinear_beam.NonlinearBeam`, but with
the elastic forces of :class:`~flexmb.fem.exact_beam.ExactBeamStructure`: a consistent 3-D
co-rotational two-node beam (Crisfield 1990; Battini & Pacoste 2002) whose nodal rotation
coordinates are total rotation vectors, so that displacements and rotations of any size relative
to the body frame are exact (docs/theory-elements.md §7). The body frame is fixed by the held
dofs (clamp one node: frame = that node's initial triad) or by a joint on the frame.

Inertia (docs/theory-elements.md §7.5) comes from a constant mass matrix on the nodal
coordinates through the usual invariants:

* ``mass="consistent"`` (default): the FE model's consistent mass matrix (as NonlinearBeam).
  Its translational part is exact for any motion of the nodes along the cubic shape; its
  coupling of node translations with node rotation vectors is exact for small rotations of the
  nodes relative to the body frame (the floating frame carries the large rigid rotation:
  rotating blades, flexible links).
* ``mass="linear"``: translations interpolated linearly between the nodes (``rho A l / 6
  [[2, 1], [1, 2]]`` per element, exact kinetic energy of the chord polygon for motions of any
  size) plus the diagonal rotary terms of the model's lumped mass (HRZ lumping of the bending
  rotations, ``rho A l^3 / 78`` plus the section's rotary inertia, and ``rho (Iy + Iz) l / 2`` in
  torsion: docs/theory-elements.md eq. 4.8), constant in the node's rotation vector. Its
  translational part is exact for motions of any size relative to the frame; use it when the beam
  itself turns through large angles (a beam rolled up, a swinging rope).

``cable=True`` makes a rope: tension-only bars (``N = EA <l/l0 - 1>_+``, no bending, no torsion,
a slack element carries nothing), every rotational dof held, ``mass="linear"``. Fix the frame of
a cable to the ground (``fm.Fixed``) or hold node translations; its nodes can then be jointed
(``fm.Spherical`` at ``body.node(k)``) and loaded (``fm.NodalForce``).
"""
from __future__ import annotations

from types import SimpleNamespace
from typing import Any, Sequence

import numpy as np
import scipy.sparse as sp

from ..errors import ModelError
from .nonlinear_beam import NodalBeamBody

__all__ = ["ExactBeam"]

MASS_MODELS = ("consistent", "linear")


class ExactBeam(NodalBeamBody):
    """Geometrically exact beam body: every free nodal dof a coordinate (module doc).

    Args:
        model: FEModel of two-node beam elements (6 dofs per node).
        fixed: dofs held at zero relative to the body frame (ids or a node-set name). Without
            ``cable``: at least the six dofs of one node, so that the frame is defined.
        damping: ratio ``zeta`` of stiffness-proportional damping ``D = beta K(0)``, ``beta = 2
            zeta / omega_1`` (lowest frequency of the held linear model).
        rayleigh: ``(alpha, beta)`` of ``D = alpha M + beta K(0)`` (s^-1, s), added to ``damping``.
        mass: ``"consistent"`` or ``"linear"`` (module doc).
        cable: tension-only rope elements (module doc).
        membrane: axial strain of the local element, ``"average"`` (default) or ``"chord"``
            (:class:`~flexmb.fem.exact_beam.ExactBeamStructure`).

    Other arguments as :class:`FlexibleBody` (``position``, ``orientation`` of the mesh axes,
    ``scalar_first`` for 4-number orientations, initial ``velocity`` / ``angular_velocity`` of
    the frame, ``modal_coordinates`` / ``modal_velocities``: the free nodal dofs, m and rad).

    The coordinates ``eta`` are the free nodal dofs in the order of ``structure.free``:
    displacement (m) and rotation vector (rad) of every node, body axes.
    """

    kind = "exact beam"

    def __init__(self, model: Any, fixed: str | Sequence[int] | np.ndarray | None = None, position=(0.0, 0.0, 0.0),
                 orientation=None, velocity=(0.0, 0.0, 0.0), angular_velocity=(0.0, 0.0, 0.0),
                 damping: float | None = None, rayleigh: tuple[float, float] | None = None,
                 mass: str = "consistent", cable: bool = False, membrane: str = "average", modal_coordinates=None, modal_velocities=None,
                 name: str | None = None, *, scalar_first: bool | None = None):
        from ..fem.exact_beam import ExactBeamStructure
        from ..reduction.eigen import check_fe_model, fixed_dofs
        from ..reduction.invariants import inertia_invariants
        from ..reduction.modeset import ModeSet
        owner = f"{self.kind} {name!r}"
        check_fe_model(model, owner)
        if not isinstance(cable, (bool, np.bool_)):
            raise ModelError(f"{owner}: cable must be True or False, got {cable!r}")
        if mass not in MASS_MODELS:
            raise ModelError(f"{owner}: mass must be one of {MASS_MODELS}, got {mass!r}")
        if cable:
            mass = "linear"
        held = fixed_dofs(model, fixed)
        if cable:
            held = np.union1d(held, model.dofs(np.arange(model.n_nodes), ["rx", "ry", "rz"])).astype(np.int64)
        structure = ExactBeamStructure(model, held, cable=bool(cable), membrane=membrane)
        free = structure.free
        phi = np.zeros((model.ndof, free.size))
        phi[free, np.arange(free.size)] = 1.0
        K = model.K.toarray()[np.ix_(free, free)] if not cable else np.zeros((free.size, free.size))
        if mass == "consistent":
            Mfull = model.M
            inv = None
        else:
            source = _linear_mass_model(model)
            Mfull = source.M
            inv = inertia_invariants(source, phi)
        M = np.asarray(Mfull[free][:, free].todense())
        modes = ModeSet(phi, model.points, model.dofs_per_node, M, K, kind="nodal",
                        info={"fixed_dofs": int(held.size)}, model=model, fixed_dofs=held, invariants=inv)
        self._structure = structure
        self.mass_model = mass
        self.cable = bool(cable)
        super().__init__(modes, position, orientation, velocity, angular_velocity, damping=damping,
                         rayleigh=rayleigh, stiffening=False, modal_coordinates=modal_coordinates,
                         modal_velocities=modal_velocities, name=name, scalar_first=scalar_first)
        if not cable and held.size < 6:
            raise ModelError(f"{self.kind} {self.name!r}: hold at least the six dofs of one node (fixed=...) "
                             f"so that the body frame is defined; {held.size} dofs are held")
        self.structure = structure

    def section_forces(self, eta: np.ndarray) -> np.ndarray:
        """(ne, 6) ``(N, T, Mz1, Mz2, My1, My2)`` of each element in its co-rotated axes (N, N m)."""
        return self._structure.section_forces(eta)

    def nodal_values(self, eta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Node displacements (n_nodes, 3) in m and rotation vectors (n_nodes, 3) in rad, body axes."""
        u = self._structure.model.ndof
        full = np.zeros(u)
        full[self._structure.free] = np.asarray(eta, dtype=float)
        full = full.reshape(-1, 6)
        return full[:, :3].copy(), full[:, 3:].copy()


def _linear_mass_model(model: Any) -> SimpleNamespace:
    """The FE model with the ``mass="linear"`` mass matrix (module doc), in the form that
    :func:`flexmb.reduction.invariants.inertia_invariants` reads (``M``, ``translational_mass``)."""
    ndof, n = model.ndof, model.n_nodes
    rows, cols, vals = [], [], []
    srows, scols, svals = [], [], []
    for c in model.chunks:
        kern = c.kernel
        p, s = kern.props, kern.props.section
        L = kern.L
        mA = np.broadcast_to(p.rho * s.A, L.shape) * L
        lumped = kern.mass(lumped=True)                        # (ne, 12, 12) global axes, theory eq. 4.8
        Jrot = (lumped[:, 3:6, 3:6], lumped[:, 9:12, 9:12])    # HRZ rotary terms of the two nodes
        nodes = np.asarray(c.dofmap, dtype=np.int64)[:, ::6] // 6          # node-major, 6 dofs per node
        for a in range(2):
            for b in range(2):
                w = mA * (2.0 if a == b else 1.0) / 6.0
                srows.append(nodes[:, a]); scols.append(nodes[:, b]); svals.append(w)
                for i in range(3):
                    rows.append(6 * nodes[:, a] + i); cols.append(6 * nodes[:, b] + i); vals.append(w)
            for i in range(3):
                for j in range(3):
                    rows.append(6 * nodes[:, a] + 3 + i); cols.append(6 * nodes[:, a] + 3 + j)
                    vals.append(Jrot[a][:, i, j])
    for node, block in getattr(model, "_point_masses", []):
        for i in range(6):
            for j in range(6):
                if block[i, j] != 0.0:
                    rows.append(np.array([6 * node + i])); cols.append(np.array([6 * node + j]))
                    vals.append(np.array([block[i, j]]))
        srows.append(np.array([node])); scols.append(np.array([node])); svals.append(np.array([block[0, 0]]))
    M = sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(ndof, ndof))
    Ms = sp.csr_matrix((np.concatenate(svals), (np.concatenate(srows), np.concatenate(scols))), shape=(n, n))
    P = [[None] * 3 for _ in range(3)]
    zero = sp.csr_matrix((ndof, ndof))
    for i in range(3):
        for j in range(3):
            if i == j:
                E = sp.csr_matrix((np.ones(n), (6 * np.arange(n) + i, np.arange(n))), shape=(ndof, n))
                P[i][j] = (E @ Ms @ E.T).tocsr()
            else:
                P[i][j] = zero
    return SimpleNamespace(M=M, ndof=ndof, points=model.points, dofs_per_node=model.dofs_per_node, n_nodes=n,
                           translational_mass=lambda: P)
