"""Simulation results: time histories, body kinematics, reactions and the energy balance."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import rotations as rot
from .bodies.base import Body
from .errors import ModelError

__all__ = ["Result"]


@dataclass
class Result:
    """Time histories of one simulation.

    Arrays have one row per saved time: ``t`` (s), ``q``, ``v`` (generalized
    coordinates and their rates), ``vd`` (accelerations), ``lam`` (multipliers),
    ``work_nc`` (J, work of applied loads, dampers and user forces since the
    start) and ``work_drivers`` (J, work of driver constraints).
    """

    t: np.ndarray
    q: np.ndarray
    v: np.ndarray
    vd: np.ndarray
    lam: np.ndarray
    work_nc: np.ndarray
    work_drivers: np.ndarray
    system: object = None
    stats: dict = field(default_factory=dict)
    message: str = "completed"
    redundant: list = field(default_factory=list)

    # -- body kinematics -------------------------------------------------
    def _slice(self, body: Body) -> int:
        if self.system is None:
            raise ModelError("this result has no system attached; pass system= when loading it")
        if body not in self.system.bodies:
            raise ModelError(f"body {getattr(body, 'name', body)!r} is not in the simulated system")
        return body.offset

    def orientation(self, body: Body) -> np.ndarray:
        """Rotation matrices (n, 3, 3), body -> global."""
        o = self._slice(body)
        return rot.A(rot.normalize(self.q[:, o + 3:o + 7]))

    def euler_parameters(self, body: Body) -> np.ndarray:
        o = self._slice(body)
        return self.q[:, o + 3:o + 7]

    def position(self, body: Body, local_point=(0.0, 0.0, 0.0)) -> np.ndarray:
        """Global position (n, 3) of a body point given in body axes from the centre of mass (m)."""
        o = self._slice(body)
        s = np.asarray(local_point, dtype=float)
        return self.q[:, o:o + 3] + self.orientation(body) @ s

    def angular_velocity(self, body: Body, frame: str = "global") -> np.ndarray:
        """Angular velocity (n, 3), rad/s: ``omega = 2 E p_dot`` (global) or ``2 G p_dot`` (body)."""
        o = self._slice(body)
        p, pd = self.q[:, o + 3:o + 7], self.v[:, o + 3:o + 7]
        M = rot.E(p) if frame == "global" else rot.G(p)
        return 2.0 * np.einsum("nij,nj->ni", M, pd)

    def velocity(self, body: Body, local_point=(0.0, 0.0, 0.0)) -> np.ndarray:
        """Global velocity (n, 3) of a body point (m/s)."""
        o = self._slice(body)
        s = np.asarray(local_point, dtype=float)
        w = self.angular_velocity(body)
        return self.v[:, o:o + 3] + np.cross(w, self.orientation(body) @ s)

    # -- flexible bodies ---------------------------------------------------
    def _flexible(self, body):
        o = self._slice(body)
        if not getattr(body, "n_modes", 0):
            raise ModelError(f"body {body.name!r} is not a flexible body")
        return o

    def modal_coordinates(self, body) -> np.ndarray:
        """Modal amplitudes eta (n, m) of a flexible body (units of its mode set)."""
        o = self._flexible(body)
        return self.q[:, o + 7:o + 7 + body.n_modes]

    def deflection(self, body, node: int, frame: str = "body") -> np.ndarray:
        """Elastic displacement (n, 3) of mesh ``node`` relative to the body frame (m):
        body-frame components (``frame="body"``) or global ones (``"global"``)."""
        site = body.node(node)
        t, _ = body.node_shapes(site.node)
        u = self.modal_coordinates(body) @ t[0].T
        if frame == "body":
            return u
        if frame == "global":
            return np.einsum("nij,nj->ni", self.orientation(body), u)
        raise ModelError(f"frame must be 'body' or 'global', got {frame!r}")

    def node_position(self, body, nodes=None) -> np.ndarray:
        """Global positions of mesh nodes, (n_times, 3) for one node or (n_times, k, 3) (m);
        all nodes when ``nodes`` is None."""
        self._flexible(body)
        ids = np.arange(body.modes.nodes.shape[0]) if nodes is None else np.atleast_1d(nodes)
        for k in ids:
            body.node(int(k))   # range check with a clear error
        t, _ = body.node_shapes(ids)
        local = body.modes.nodes[ids][None] + np.einsum("kim,nm->nki", t, self.modal_coordinates(body))
        o = body.offset
        x = self.q[:, None, o:o + 3] + np.einsum("nij,nkj->nki", self.orientation(body), local)
        return x[:, 0] if np.ndim(nodes) == 0 and nodes is not None else x

    def strain_energy(self, body) -> np.ndarray:
        """Strain energy of a flexible body (n,), J."""
        return np.array([body.strain_energy(e) for e in self.modal_coordinates(body)])

    def nodal_stress(self, body) -> np.ndarray:
        """Nodal stress (n_times, N, 6) from the mode set's stress modes (Pa, Voigt, body axes;
        beams: section forces N, N m) -- linear post-processing of the modal amplitudes."""
        self._flexible(body)
        sm = body.modes.stress_modes
        if sm is None:
            raise ModelError(f"the mode set of {body.name!r} has no stress modes (reduce with stress=True)")
        return np.einsum("pcm,nm->npc", sm, self.modal_coordinates(body))

    def export_paraview(self, path, body, every: int = 1, fmt=("vtu", "xdmf")) -> dict:
        """Write the deformed mesh of a flexible body over time for ParaView (VTU series with a
        PVD index and an XDMF file; docs/guide-output.md), with displacement and, when the mode
        set has stress modes, the nodal stress. Needs the FE mesh (``modes.model``)."""
        from .io.paraview import write_time_series
        self._flexible(body)
        model = body.modes.model
        if model is None:
            raise ModelError(f"the mode set of {body.name!r} has no FE model attached; its mesh cells are unknown")
        sel = slice(None, None, max(1, int(every)))
        pos = self.node_position(body)[sel]
        t, _ = body.node_shapes(np.arange(body.modes.nodes.shape[0]))
        elastic = np.einsum("kim,nm->nki", t, self.modal_coordinates(body))[sel]
        data = {"elastic_deflection": np.einsum("nij,nkj->nki", self.orientation(body)[sel], elastic)}
        voigt = ()
        if body.modes.stress_modes is not None and model.dofs_per_node == 3:
            data["stress"] = self.nodal_stress(body)[sel]
            voigt = ("stress",)
        return write_time_series(path, pos[0], model.mesh, self.t[sel], pos, point_data=data, fmt=fmt, voigt=voigt)

    # -- contact -------------------------------------------------------------
    def contact_force(self, contact) -> np.ndarray:
        """Normal force (N) of a sphere-plane, sphere-sphere or clearance contact at every saved time.

        The approach speeds of the force law are replayed over the saved states, as the integrator
        captured them at accepted steps; exact when every step was saved (``save_every=1``)."""
        from .contact.laws import ApproachSpeeds
        from .joints.kernels import extend
        asm = self.system.compile() if self.system is not None else None
        group = next((g for g in (asm.contacts if asm else []) if contact in getattr(g, "contacts", [])), None)
        if group is None:
            raise ModelError(f"{getattr(contact, 'name', contact)!r} is not a sphere or clearance contact of the "
                             "simulated system")
        k = group.contacts.index(contact)
        saved = group.approach
        group.approach = ApproachSpeeds(group.n)
        try:
            out = np.empty(self.t.size)
            for i, (q, v) in enumerate(zip(self.q, self.v)):
                qe, ve = extend(q, v)
                if i == 0:
                    group.start(qe, ve)
                out[i] = group.normal_forces(qe, ve)[k]      # approach speeds of the last accepted state
                group.accept(qe, ve)
        finally:
            group.approach = saved
        return out

    # -- constraints and energy ------------------------------------------
    def constraint_violation(self) -> np.ndarray:
        """max |Phi| at each saved time."""
        asm = self.system.compile()
        return np.array([np.max(np.abs(asm.constraints(q, v, t).phi), initial=0.0)
                         for t, q, v in zip(self.t, self.q, self.v)])

    def reaction(self, joint) -> tuple[np.ndarray, np.ndarray]:
        """Reaction force (N) and torque about the joint point (N m) on the joint's second
        body (on its first body when the second is the ground), global, each (n, 3)."""
        asm = self.system.compile()
        if joint not in self.system.joints:
            raise ModelError(f"joint {getattr(joint, 'name', joint)!r} is not in the simulated system")
        k = self.system.joints.index(joint)
        F = np.empty((self.t.size, 3))
        T = np.empty((self.t.size, 3))
        for i, (t, q, v, lam) in enumerate(zip(self.t, self.q, self.v, self.lam)):
            f, tq = asm.reactions(q, v, lam, t)
            F[i], T[i] = f[k], tq[k]
        return F, T

    def energy(self) -> dict[str, np.ndarray]:
        """Energy balance (J), the accuracy testing function of Huston & Liu (seed 004):
        ``total = kinetic + potential - work_nc - work_drivers`` stays at its initial value."""
        asm = self.system.compile()
        T = np.array([asm.kinetic_energy(q, v) for q, v in zip(self.q, self.v)])
        V = np.array([asm.potential_energy(q, v) for q, v in zip(self.q, self.v)])
        W = self.work_nc + self.work_drivers
        return {"kinetic": T, "potential": V, "work": W, "work_nc": self.work_nc.copy(),
                "work_drivers": self.work_drivers.copy(), "total": T + V - W}

    # -- persistence -----------------------------------------------------
    ARRAYS = ("t", "q", "v", "vd", "lam", "work_nc", "work_drivers")

    def save(self, path) -> None:
        """Write all arrays to one ``.npz`` file."""
        np.savez_compressed(path, **{k: getattr(self, k) for k in self.ARRAYS},
                            message=np.array(self.message))

    @classmethod
    def load(cls, path, system=None) -> "Result":
        """Read a result saved with :meth:`save` (or a chunk directory, see flexmb.io.chunks)."""
        from pathlib import Path
        p = Path(path)
        if p.is_dir():
            from .io.chunks import read_chunks
            arrays = read_chunks(p)
            msg = "loaded from chunks"
        else:
            with np.load(p) as z:
                arrays = {k: z[k] for k in cls.ARRAYS}
                msg = str(z["message"])
        res = cls(**arrays, system=system, message=msg)
        if system is not None:
            system.compile()
        return res
