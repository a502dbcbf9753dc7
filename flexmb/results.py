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
