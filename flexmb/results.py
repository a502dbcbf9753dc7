"""Simulation results: time histories, body kinematics, reactions and the energy balance."""
from __future__ import annotations

import os
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from . import rotations as rot
from .bodies.base import Body
from .errors import ModelError, NonFiniteError
from .joints.base import Joint, point3

__all__ = ["Result"]

FRAMES = ("global", "body")
"""Allowed ``frame=`` values of the Result accessors: global axes or the body's own axes."""


def _frame(frame: str) -> str:
    """``frame`` if it is one of ``FRAMES`` (ModelError naming the value otherwise)."""
    if not (isinstance(frame, str) and frame in FRAMES):
        raise ModelError(f"frame must be one of {FRAMES}, got {frame!r}")
    return frame


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
    history: np.ndarray | None = None
    system: object = None
    stats: dict = field(default_factory=dict)
    message: str = "completed"
    redundant: list = field(default_factory=list)

    # -- body kinematics -------------------------------------------------
    def _body(self, body: Body | str) -> Body:
        """A body of the simulated system, given as the object or by its name."""
        if self.system is None:
            raise ModelError("this result has no system attached; pass system= when loading it")
        if isinstance(body, str):
            return self.system.body(body)
        if not any(body is b for b in self.system.bodies):
            raise ModelError(f"body {getattr(body, 'name', body)!r} is not in the simulated system")
        return body

    def _slice(self, body: Body | str) -> int:
        return self._body(body).offset

    def orientation(self, body: Body | str) -> np.ndarray:
        """Rotation matrices (n, 3, 3), body -> global; ``body`` is a body or its name (as everywhere)."""
        o = self._slice(body)
        return rot.A(rot.normalize(self.q[:, o + 3:o + 7]))

    def euler_parameters(self, body: Body | str) -> np.ndarray:
        """Euler parameters (n, 4), scalar first, as integrated (docs/theory.md §1)."""
        o = self._slice(body)
        return self.q[:, o + 3:o + 7]

    def position(self, body: Body | str, local_point=(0.0, 0.0, 0.0)) -> np.ndarray:
        """Global position (n, 3) of a body point given in body axes from the centre of mass (m)."""
        o = self._slice(body)
        s = point3(local_point, "local_point", "Result.position")
        return self.q[:, o:o + 3] + self.orientation(body) @ s

    def angular_velocity(self, body: Body | str, frame: str = "global") -> np.ndarray:
        """Angular velocity (n, 3), rad/s: ``omega = 2 E p_dot`` (global) or ``2 G p_dot`` (body)."""
        o = self._slice(body)
        p, pd = self.q[:, o + 3:o + 7], self.v[:, o + 3:o + 7]
        M = rot.E(p) if _frame(frame) == "global" else rot.G(p)
        return 2.0 * np.einsum("nij,nj->ni", M, pd)

    def velocity(self, body: Body | str, local_point=(0.0, 0.0, 0.0)) -> np.ndarray:
        """Global velocity (n, 3) of a body point (m/s)."""
        o = self._slice(body)
        s = point3(local_point, "local_point", "Result.velocity")
        w = self.angular_velocity(body)
        return self.v[:, o:o + 3] + np.cross(w, self.orientation(body) @ s)

    def angular_acceleration(self, body: Body | str, frame: str = "global") -> np.ndarray:
        """Angular acceleration (n, 3), rad/s^2, from the saved ``vd``: ``alpha = 2 E(p) p_dd`` (global) or
        ``2 G(p) p_dd`` (body axes), since ``E(p_dot) p_dot = G(p_dot) p_dot = 0`` (Nikravesh 1988, §6.3;
        docs/theory.md §1)."""
        o = self._slice(body)
        p, pdd = self.q[:, o + 3:o + 7], self.vd[:, o + 3:o + 7]
        M = rot.E(p) if _frame(frame) == "global" else rot.G(p)
        return 2.0 * np.einsum("nij,nj->ni", M, pdd)

    def acceleration(self, body: Body | str, local_point=(0.0, 0.0, 0.0)) -> np.ndarray:
        """Global acceleration (n, 3), m/s^2, of a point fixed in the body frame (body axes, m, from the
        reference point -- the centre of mass of a rigid body), from the saved ``vd``:
        ``a = r_dd + alpha x s + omega x (omega x s)``, ``s = A(p) s'`` (Nikravesh 1988, §6.3)."""
        o = self._slice(body)
        s = self.orientation(body) @ point3(local_point, "local_point", "Result.acceleration")
        w = self.angular_velocity(body)
        return self.vd[:, o:o + 3] + np.cross(self.angular_acceleration(body), s) + np.cross(w, np.cross(w, s))

    # -- joints --------------------------------------------------------------
    def _joint(self, joint: Joint | str) -> Joint:
        """A joint of the simulated system, given as the object or by its name."""
        if self.system is None:
            raise ModelError("this result has no system attached; pass system= when loading it")
        for j in self.system.joints:
            if j is joint or (isinstance(joint, str) and j.name == joint):
                return j
        raise ModelError(f"joint {getattr(joint, 'name', joint)!r} is not in the simulated system "
                         f"(joints: {[j.name for j in self.system.joints]})")

    def joint_coordinates(self, joint: Joint | str) -> np.ndarray:
        """Relative coordinates of a joint (object or name) at every saved time, from the start configuration,
        body b relative to body a (flexmb/joints/coordinates.py):

        * ``Revolute``: angle (n,) rad about the joint axis (right-handed), unwrapped over the saved times;
        * ``Prismatic``: displacement (n,) m along the axis;
        * ``Cylindrical``: (n, 2), angle (rad) and displacement (m);
        * ``Universal``: (n, 2), ``theta_1`` about ``axis_a`` and ``theta_2`` about ``axis_b`` (rad), the
          relative rotation being ``Rot(axis_a, theta_1) Rot(axis_b, theta_2)``;
        * ``Spherical``: (n, 3) rotation vector (rad, norm <= pi) of b relative to a, in body a's axes;
        * ``Planar``: (n, 3), displacements along the joint's ``f``, ``g`` (m) and the angle about its normal
          (rad); a ``Driver`` on a joint gives that joint's coordinates.

        Unwrapping counts whole turns correctly only if the joint turns less than pi between saved states
        (lower ``save_every`` for fast joints)."""
        from .joints.coordinates import joint_coordinates
        return joint_coordinates(self._joint(joint), self.q)

    # -- flexible bodies ---------------------------------------------------
    def _flexible(self, body: Body) -> int:
        o = self._slice(body)
        if not getattr(body, "n_modes", 0):
            raise ModelError(f"body {body.name!r} is not a flexible body")
        return o

    def modal_coordinates(self, body: Body | str) -> np.ndarray:
        """Modal amplitudes eta (n, m) of a flexible body (units of its mode set)."""
        body = self._body(body)
        o = self._flexible(body)
        return self.q[:, o + 7:o + 7 + body.n_modes]

    def deflection(self, body, node: int, frame: str = "body") -> np.ndarray:
        """Elastic displacement (n, 3) of mesh ``node`` relative to the body frame (m):
        body-frame components (``frame="body"``) or global ones (``"global"``)."""
        body, frame = self._body(body), _frame(frame)
        site = body.node(node)
        t, _ = body.node_shapes(site.node)
        u = self.modal_coordinates(body) @ t[0].T
        if frame == "body":
            return u
        return np.einsum("nij,nj->ni", self.orientation(body), u)

    def node_position(self, body, nodes=None) -> np.ndarray:
        """Global positions of mesh nodes, (n_times, 3) for one node or (n_times, k, 3) (m);
        all nodes when ``nodes`` is None."""
        body = self._body(body)
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
        body = self._body(body)
        return np.array([body.strain_energy(e) for e in self.modal_coordinates(body)])

    def nodal_stress(self, body) -> np.ndarray:
        """Nodal stress (n_times, N, 6) from the mode set's stress modes (Pa, Voigt, body axes;
        beams: section forces N, N m) -- linear post-processing of the modal amplitudes."""
        body = self._body(body)
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
        body = self._body(body)
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

        Each saved state is evaluated with the approach speeds saved with it (``history``), as the
        integrator captured them at accepted steps: exact for any ``save_every``."""
        from .joints.kernels import extend
        asm = self._model("contact_force")
        group = next((g for g in (asm.contacts if asm else []) if contact in getattr(g, "contacts", [])), None)
        if group is None:
            raise ModelError(f"{getattr(contact, 'name', contact)!r} is not a sphere or clearance contact of the "
                             "simulated system")
        k = group.contacts.index(contact)
        return self._replay(asm, lambda q, v: group.normal_forces(*extend(q, v))[k])

    # -- constraints and energy ------------------------------------------
    def _model(self, accessor: str):
        """The compiled assembly of the attached system; a ModelError naming ``accessor`` without one."""
        if self.system is None:
            raise ModelError(f"Result.{accessor}() evaluates the model, but this result has no system attached: "
                             "pass the System that produced it, Result.load(path, system=...)")
        return self.system.compile()

    def constraint_violation(self) -> np.ndarray:
        """max |Phi| at each saved time."""
        asm = self._model("constraint_violation")
        return np.array([np.max(np.abs(asm.constraints(q, v, t).phi), initial=0.0)
                         for t, q, v in zip(self.t, self.q, self.v)])

    def reaction(self, joint) -> tuple[np.ndarray, np.ndarray]:
        """Reaction force (N) and torque about the joint point (N m) on the joint's second
        body (on its first body when the second is the ground), global, each (n, 3); ``joint`` is the
        joint or its name."""
        asm = self._model("reaction")
        k = self.system.joints.index(self._joint(joint))
        F = np.empty((self.t.size, 3))
        T = np.empty((self.t.size, 3))
        for i, (t, q, v, lam) in enumerate(zip(self.t, self.q, self.v, self.lam)):
            f, tq = asm.reactions(q, v, lam, t)
            F[i], T[i] = f[k], tq[k]
        return F, T

    def energy(self) -> dict[str, np.ndarray]:
        """Energy balance (J), the accuracy testing function of Huston & Liu (seed 004):
        ``total = kinetic + potential - work_nc - work_drivers`` stays at its initial value."""
        asm = self._model("energy")
        T = np.array([asm.kinetic_energy(q, v) for q, v in zip(self.q, self.v)])
        V = self._replay(asm, asm.potential_energy)       # springs' winding, contacts: each row's history
        W = self.work_nc + self.work_drivers
        return {"kinetic": T, "potential": V, "work": W, "work_nc": self.work_nc.copy(),
                "work_drivers": self.work_drivers.copy(), "total": T + V - W}

    def _replay(self, asm, fn) -> np.ndarray:
        """``fn(q, v)`` at every saved state with the element history saved with it set on the
        assembly (restored afterwards): exact for any ``save_every``."""
        if asm.stateful and self.history.shape[1] == 0:
            raise ModelError(f"this result of system {self.system.name!r} has no element history (saved by an "
                             "older flexmb?); its stateful elements (springs' winding, crash elements, contacts) "
                             "cannot be evaluated")
        saved = asm.history()
        try:
            out = np.empty(self.t.size)
            for i, (q, v) in enumerate(zip(self.q, self.v)):
                if asm.stateful:
                    asm.set_history(self.history[i])
                out[i] = fn(q, v)
        finally:
            asm.set_history(saved)
        return out

    # -- persistence -----------------------------------------------------
    ARRAYS = ("t", "q", "v", "vd", "lam", "work_nc", "work_drivers", "history")
    """Saved arrays; ``history`` (n, n_history) holds, per saved time, the history of the force elements
    after that step was accepted (Assembly.history: crash elements' plastic state, springs' winding, contact
    approach speeds and broad phase), zero-padded when its length changes (sphere clouds)."""

    def __post_init__(self):
        if self.history is None:
            self.history = np.zeros((np.size(self.t), 0))

    def save(self, path) -> None:
        """Write all arrays to one ``.npz`` file (numpy appends ``.npz`` to a name without it)."""
        try:
            np.savez_compressed(path, **{k: getattr(self, k) for k in self.ARRAYS},
                                message=np.array(self.message))
        except OSError as exc:
            raise ModelError(f"cannot write the result file {str(path)!r}: {exc.strerror or exc}") from exc

    @classmethod
    def load(cls, path, system=None) -> "Result":
        """Read a result saved with :meth:`save` (or a chunk directory, see flexmb.io.chunks).

        ``system``: the System that produced it, needed by every accessor that evaluates the model
        (energy, reactions, positions ...); its coordinate and constraint-row counts must match the
        file's. A missing, unreadable, truncated or foreign file, arrays whose row counts differ, or
        NaN/inf in them are refused with an error naming the file."""
        if not isinstance(path, (str, os.PathLike)):
            raise ModelError(f"Result.load: path must be a file or directory name, got {path!r}")
        p = Path(path)
        if p.is_dir():
            from .io.chunks import read_chunks
            arrays = read_chunks(p)
            msg = "loaded from chunks"
        else:
            arrays = _read_result_file(p)
            msg = str(arrays.pop("message"))
        _check_rows(arrays, str(p))
        res = cls(**arrays, system=system, message=msg)
        if system is not None:
            _check_system(res, system, str(p))
        return res


def _read_result_file(p: Path) -> dict[str, np.ndarray]:
    """The arrays and message of a file written by Result.save (ModelError naming the file otherwise)."""
    if not p.is_file():
        raise ModelError(f"result file {str(p)!r} does not exist")
    if not zipfile.is_zipfile(p):
        raise ModelError(f"result file {str(p)!r} is not a complete .npz file written by Result.save "
                         "(truncated, or not a zip archive)")
    need = [k for k in Result.ARRAYS if k != "history"] + ["message"]     # older files have no history
    try:
        with np.load(p, allow_pickle=False) as z:
            missing = [k for k in need if k not in z.files]
            if not missing:
                return {k: z[k] for k in [*need, "history"] if k in z.files}
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as exc:
        raise ModelError(f"result file {str(p)!r} is corrupt, truncated or not an .npz file "
                         f"({type(exc).__name__}: {exc})") from None
    raise ModelError(f"result file {str(p)!r} is not a flexmb result: it lacks {missing}")


def _check_rows(arrays: dict[str, np.ndarray], source: str) -> None:
    """One row per saved time in every array (1-D ``t`` and works, 2-D states), all finite."""
    t = arrays["t"]
    if t.ndim != 1 or t.size == 0:
        raise ModelError(f"{source!r}: the times 't' must be a list of at least one time, got shape {t.shape}")
    for k, a in arrays.items():
        ndim = 1 if k in ("t", "work_nc", "work_drivers") else 2
        if a.ndim != ndim or a.shape[0] != t.size or a.dtype.kind not in "fiu":
            raise ModelError(f"{source!r}: array {k!r} has shape {a.shape} ({a.dtype}), expected {ndim}-D with "
                             f"one row per saved time ({t.size} in 't')")
        bad = np.flatnonzero(~np.isfinite(a).all(axis=tuple(range(1, ndim))))
        if bad.size:
            raise NonFiniteError(f"{source!r}: array {k!r} holds NaN or inf at t = {float(t[bad[0]])!r} s "
                                 f"(row {bad[0]}): {a[bad[0]].tolist()}")


def _check_system(res: Result, system, source: str) -> None:
    """``system`` is a System with as many coordinates and constraint rows as the result's rows."""
    from .system import System
    if not isinstance(system, System):
        raise ModelError(f"Result.load({source!r}): system must be a flexmb.System, got {system!r}")
    asm = system.compile()
    if res.q.shape[1] != asm.nq or res.lam.shape[1] != asm.m:
        raise ModelError(f"{source!r} holds {res.q.shape[1]} coordinates and {res.lam.shape[1]} constraint rows "
                         f"per saved time, but system {system.name!r} has {asm.nq} and {asm.m}: "
                         "load it with the system that produced it")


def stack_rows(rows, width: int = 0) -> np.ndarray:
    """History rows (1-D, lengths may differ) as one (n, max length) array, zero-padded on the right
    (Assembly.set_history ignores the padding); ``width`` is the least number of columns."""
    n = max([width] + [np.size(r) for r in rows])
    out = np.zeros((len(rows), n))
    for i, r in enumerate(rows):
        out[i, :np.size(r)] = r
    return out
