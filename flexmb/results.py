"""Simulation results: time histories, body kinematics, reactions and the energy balance."""
from __future__ import annotations

import os
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from . import rotations as rot
from .bodies.base import Body
from .errors import ModelError, NonFiniteError
from .io.arrays import RAW_ARRAYS
from .io.series import SeriesAccess, SeriesMap
from .io.summary import succeeded, summary
from .joints.base import Joint, point3

__all__ = ["Result", "load_result"]

FRAMES = ("global", "body")
"""Allowed ``frame=`` values of the Result accessors: global axes or the body's own axes."""


def _frame(frame: str) -> str:
    """``frame`` if it is one of ``FRAMES`` (ModelError naming the value otherwise)."""
    if not (isinstance(frame, str) and frame in FRAMES):
        raise ModelError(f"frame must be one of {FRAMES}, got {frame!r}")
    return frame


@dataclass(repr=False)
class Result(SeriesAccess):
    """Time histories of one simulation.

    Arrays have one row per saved time: ``t`` (s), ``q``, ``v`` (generalized
    coordinates and their rates), ``vd`` (accelerations), ``lam`` (multipliers),
    ``work_nc`` (J, work of applied loads, dampers and user forces since the
    start) and ``work_drivers`` (J, work of driver constraints); ``impacts``: the impacts of impulsive contact
    pairs (:class:`~flexmb.contact.impulsive.ImpactEvent`: time, pairs, velocities before and after, impulses),
    the rows saved at an impact holding the velocities after it.

    Like scipy's ``solve_ivp`` result: ``success`` (the run reached its end time) and ``message`` (why it
    stopped), a short ``repr``; ``res["bodies/arm/position"]`` or ``res.series("bodies/arm/position")`` gives a
    named series (:meth:`series_names`) as on a file read by ``flexmb.load_result``.
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
    impacts: tuple = ()     # the impacts of impulsive contact pairs (flexmb.contact.impulsive.ImpactEvent), in order

    # -- summary -----------------------------------------------------------
    @property
    def success(self) -> bool:
        """True when the run reached its end time; False for the partial result attached to an error
        (``exc.result``) or a Ctrl-C, whose ``message`` says why it stopped (flexmb/io/summary.py)."""
        return succeeded(self.message)

    def __repr__(self) -> str:
        system = getattr(self.system, "name", None)
        title = f"Result of system {system!r}" if system is not None else "Result (no system attached)"
        return summary(title, self.message, self.t, self._names(), self.stats)

    __str__ = __repr__

    def _names(self) -> dict[str, list[str]]:
        """Names of the bodies, joints, contacts and other force elements of the attached system."""
        if self.system is None:
            return {}
        from .system import _is_contact
        forces = self.system.forces
        return {"bodies": [b.name for b in self.system.bodies], "joints": [j.name for j in self.system.joints],
                "contacts": [f.name for f in forces if _is_contact(f)],
                "forces": [f.name for f in forces if not _is_contact(f)]}

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

    def particles(self, particles, rates: bool = False) -> np.ndarray:
        """Positions (nt, N, 3) (m) of a particle set (``fm.Particles``, the object or its name) at every
        saved time; its velocities (m/s) with ``rates=True``."""
        from .forces.particles import Particles
        p = self._force(particles, "particle set", "particles", (Particles,), "it has no particles")
        x = self.v if rates else self.q
        return x[:, p.offset:p.offset + p.n_states].reshape(len(x), p.count, 3)

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

    def export_paraview(self, path: str | os.PathLike, body: Body | str | Sequence[Body | str] | None = None,
                        every: int = 1, fmt: str | Sequence[str] | None = None) -> dict[str, Path]:
        """Write the mechanism over time for ParaView (docs/guide-output.md); return the files written.

        ``body`` None (default): every body of the system, its joints and its contacts,
        one named block each, in one transient VTKHDF file ``path`` (``.vtkhdf`` added when it has no
        suffix; flexmb/io/mechanism.py lists the blocks and fields): flexible bodies as their deformed
        meshes, rigid bodies as their ``geometry`` or the box of equivalent inertia, joints and contact
        points as vertices, contact forces as vectors. A list of bodies (objects or names) draws those,
        with the joints and contacts that touch them. Returns ``{"vtkhdf": path}``.

        ``body`` one flexible body (object or name) keeps the older form: its deformed mesh as a VTU
        series with a PVD index and/or XDMF (``fmt`` "vtu", "xdmf" or both, the default for this form;
        flexmb.io.paraview.write_time_series) with ``elastic_deflection`` and, for solid meshes with
        stress modes, ``stress``; ``fmt="vtkhdf"`` writes it as a one-body VTKHDF file instead.

        ``every``: write every n-th saved time (applied before anything is computed)."""
        res = self._every(every)
        one = isinstance(body, (Body, str))
        if body is None:
            self._model("export_paraview")                  # a ModelError without a system
            bodies = list(self.system.bodies)
        elif one:
            bodies = [self._body(body)]
        elif isinstance(body, Sequence):
            bodies = [self._body(b) for b in body]
        else:
            raise ModelError(f"export_paraview: body must be a body, a body's name or a list of them, got {body!r}")
        if fmt is None:
            fmt = ("vtu", "xdmf") if one else "vtkhdf"
        if fmt == "vtkhdf":
            from .io.mechanism import export_mechanism
            return {"vtkhdf": export_mechanism(res, path, bodies)}
        if not one:
            raise ModelError(f"export_paraview: fmt={fmt!r} writes one flexible body (give body=); the whole "
                             "mechanism is written with fmt='vtkhdf'")
        return res._export_flexible(path, bodies[0], fmt)

    def _every(self, every) -> "Result":
        """This result at every ``every``-th saved time (the same object for 1)."""
        if isinstance(every, bool) or not isinstance(every, (int, np.integer)) or every < 1:
            raise ModelError(f"export_paraview: every must be a positive whole number of saved times, got {every!r}")
        if every == 1:
            return self
        return replace(self, **{k: getattr(self, k)[::int(every)] for k in self.ARRAYS})

    def _export_flexible(self, path, body: Body, fmt) -> dict:
        """One flexible body as a VTU/PVD and/or XDMF series (flexmb.io.paraview.write_time_series)."""
        from .io.mechanism import flexible_block
        from .io.paraview import VTK_FROM_VOIGT, write_time_series
        self._flexible(body)
        block = flexible_block(self, body)
        data = {"elastic_deflection": block.point_data["elastic_deflection"]}
        voigt = ()
        if "stress" in block.point_data and body.modes.dofs_per_node == 3:
            data["stress"] = block.point_data["stress"][..., np.argsort(VTK_FROM_VOIGT)]     # back to Voigt
            voigt = ("stress",)
        return write_time_series(path, body.modes.nodes, block.cells, self.t, block.points, point_data=data,
                                 fmt=fmt, voigt=voigt)

    # -- contact -------------------------------------------------------------
    def _force(self, item, kind: str, accessor: str, wanted: tuple[type, ...], other: str):
        """The force element ``item`` (the object or its name) of the attached system, one of the types
        ``wanted``; a ModelError naming ``accessor`` and listing the names of that ``kind`` that exist, or, for
        an element of another type, naming its type and ``other``, the accessor that reads it."""
        self._model(accessor)
        forces = self.system.forces
        found = next((f for f in forces if f is item or (isinstance(item, str) and f.name == item)), None)
        names = [f.name for f in forces if isinstance(f, wanted)]
        if found is None:
            raise ModelError(f"Result.{accessor}: {getattr(item, 'name', item)!r} is not a {kind} of the simulated "
                             f"system ({kind}s: {names})")
        if not isinstance(found, wanted):
            raise ModelError(f"Result.{accessor}: {found.name!r} is not a {kind} of the simulated system but a "
                             f"{type(found).__name__}: {other} ({kind}s of this system: {names})")
        return found

    def contact_force(self, contact) -> np.ndarray:
        """Normal force (N) of a sphere-plane, sphere-sphere or clearance contact (the object or its name) at
        every saved time.

        Each saved state is evaluated with the approach speeds saved with it (``history``), as the
        integrator captured them at accepted steps: exact for any ``save_every``."""
        from .contact.pairs import CONTACT_TYPES
        from .joints.kernels import extend
        contact = self._force(contact, "sphere or clearance contact", "contact_force", CONTACT_TYPES,
                              "mesh, node and sphere-cloud contacts are read with Result.contact_forces")
        asm = self._model("contact_force")
        group = next(g for g in asm.contacts if contact in getattr(g, "contacts", []))
        k = group.contacts.index(contact)
        cols = self._history_columns(asm, group)
        if cols is not None:            # every row's history in one layout: one vectorized pass
            return group.replay_forces(self.q, self.v, self.history[:, cols])[:, k]
        return self._replay(asm, lambda q, v: group.normal_forces(*extend(q, v))[k])

    def _history_columns(self, asm, group) -> slice | None:
        """The columns of ``history`` that hold ``group``'s history in every saved row, or None when the rows
        do not share one layout there (a group of changing length before it) or hold no history."""
        k = 0
        for g in asm.stateful:
            size = g.history().size
            if k + 1 + size > self.history.shape[1] or not np.all(self.history[:, k] == size):
                return None
            if g is group:
                return slice(k + 1, k + 1 + size)
            k += 1 + size
        return None

    def contact_forces(self, contact) -> tuple[np.ndarray, np.ndarray]:
        """Contact point (m) and total contact force (N) on each contactor of a sphere-mesh, node-mesh,
        node-plane or sphere-cloud contact (flexmb.contact.mesh) at every saved time, global, (nt, n, 3)
        each; the contactors are the element's sphere, its spheres in order, or its nodes in the order of
        ``contact.nodes``.

        The force sums every contact force on the contactor (zero when apart; the ``contactor_forces`` of
        the element's contact groups, flexmb/contact/spheres.py, triangles.py). The point is a node's position, or a
        sphere's centre minus its radius along the force -- the contact normal of a single touch, the
        resultant's direction for several -- and the centre when no force acts. Each saved state is
        evaluated with the history saved with it, as in :meth:`contact_force`."""
        from .contact.mesh import MESH_CONTACTS, SphereCloudContact, SphereMeshContact
        from .joints.kernels import extend
        contact = self._force(contact, "mesh, node or sphere-cloud contact", "contact_forces", MESH_CONTACTS,
                              "sphere-plane, sphere-sphere and clearance contacts are read with Result.contact_force")
        asm = self._model("contact_forces")
        parts = [(g, np.flatnonzero(g.owner == k)) for g in asm.contacts
                 for k, element in enumerate(getattr(g, "elements", ())) if element is contact]

        def centres_and_forces(q, v):
            qe, ve = extend(q, v)
            found = []                                  # a cloud's spheres: in its sphere and plane groups
            for g, idx in parts:
                centres, forces = g.contactor_forces(qe, ve)
                found.append((centres[idx], forces[idx]))
            return np.stack([found[0][0], sum(f for _, f in found)])

        both = self._replay(asm, centres_and_forces)
        points, forces = both[:, 0], both[:, 1]
        if isinstance(contact, (SphereMeshContact, SphereCloudContact)):
            radii = np.array([contact.radius]) if isinstance(contact, SphereMeshContact) else contact.radii
            size = np.linalg.norm(forces, axis=-1, keepdims=True)
            normal = np.divide(forces, size, out=np.zeros_like(forces), where=size > 0.0)
            points = points - radii[:, None] * normal
        return points, forces

    # -- constraints and energy ------------------------------------------
    def _model(self, accessor: str):
        """The compiled assembly of the attached system; a ModelError naming ``accessor`` without one."""
        if self.system is None:
            raise ModelError(f"Result.{accessor}() evaluates the model, but this result has no system attached: "
                             "pass the System that produced it, Result.load(path, system=...)")
        return self.system.compile()

    def constraint_violation(self) -> np.ndarray:
        """``max |Phi|`` at each saved time (velocity constraints, docs/theory.md §8, count with ``|B v - b|``)."""
        asm = self._model("constraint_violation")
        return np.array([np.max(np.abs(asm.constraints(q, v, t).phi), initial=0.0)
                         for t, q, v in zip(self.t, self.q, self.v)])

    def reaction(self, joint) -> tuple[np.ndarray, np.ndarray]:
        """Reaction force (N) and torque about the joint point (N m) on the joint's second
        body (on its first body when the second is the ground), global, each (n, 3); ``joint`` is the
        joint or its name."""
        self._model("reaction")
        F, T = self.reactions([self.system.joints.index(self._joint(joint))])
        return F[:, 0], T[:, 0]

    def reactions(self, joints: Sequence[int] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Reaction forces (N) and torques about the joint points (N m) of the joints with indices ``joints``
        (all when None) at every saved time, each (n_times, n_joints, 3), as :meth:`reaction`
        (``Assembly.reactions_at`` over the saved rows)."""
        asm = self._model("reactions")
        return asm.reactions_at(self.t, self.q, self.v, self.lam, joints)

    def energy(self) -> dict[str, np.ndarray]:
        """Energy balance (J), the accuracy testing function of Huston & Liu 2005:
        ``total = kinetic + potential - work_nc - work_drivers`` stays at its initial value."""
        asm = self._model("energy")
        self._check_history(asm)
        # one compiled evaluation of all rows (flexmb/compiled/energy.py), each under its saved history where the
        # energies depend on it (springs' winding, mesh contacts' candidates)
        T, V = asm.energy_rows(self.q, self.v, self.history if asm.stateful else None)
        W = self.work_nc + self.work_drivers
        return {"kinetic": T, "potential": V, "work": W, "work_nc": self.work_nc.copy(),
                "work_drivers": self.work_drivers.copy(), "total": T + V - W}

    def _replay(self, asm, fn) -> np.ndarray:
        """``fn(q, v)`` at every saved state with the element history saved with it set on the
        assembly (restored afterwards), stacked (nt, ...): exact for any ``save_every``."""
        self._check_history(asm)
        saved = asm.history()
        try:
            out = []
            for i, (q, v) in enumerate(zip(self.q, self.v)):
                if asm.stateful:
                    asm.set_history(self.history[i])
                out.append(fn(q, v))
        finally:
            asm.set_history(saved)
        return np.array(out, dtype=float)

    def _check_history(self, asm) -> None:
        """A ModelError when the model has stateful elements but this result saved no element history."""
        if asm.stateful and self.history.shape[1] == 0:
            raise ModelError(f"this result of system {self.system.name!r} has no element history (saved by an "
                             "older flexmb?); its stateful elements (springs' winding, crash elements, contacts) "
                             "cannot be evaluated")

    # -- persistence -----------------------------------------------------
    ARRAYS = RAW_ARRAYS
    """Saved arrays (``flexmb.io.arrays.RAW_ARRAYS``)."""

    def __post_init__(self):
        if self.history is None:
            self.history = np.zeros((np.size(self.t), 0))

    # -- labelled series (flexmb/io/series.py names them) -----------------
    @property
    def series(self) -> SeriesMap:
        """The labelled series by name, each computed on first use and kept.

        ``res.series["bodies/arm/position"]``, ``res.series("bodies/arm/position")`` and
        ``res["bodies/arm/position"]`` are the same array, as on a file read by ``flexmb.load_result``;
        :meth:`series_names` lists the names."""
        cached = self.__dict__.get("_series")
        if cached is None:
            from .io.series import catalog
            self._model("series")
            self._series_info, entries = {}, {}
            for name, (info, compute) in catalog(self).items():
                self._series_info[name], entries[name] = info, compute
            cached = self.__dict__["_series"] = SeriesMap(entries, "Result")
        return cached

    def series_names(self) -> list[str]:
        """Names of the labelled series (``time``, ``bodies/<body>/position`` ..., ``joints/<joint>/...``,
        ``energy/...``; flexmb/io/series.py lists them with their units) for ``res[name]``, to_dataframe,
        to_csv and the HDF5 file."""
        return list(self.series)

    def _labelled(self, series, owner: str) -> tuple[dict, dict]:
        """Values and labels (SeriesInfo) of the chosen series (all when None), computed once each."""
        from .io.series import select
        self._model(owner)
        chosen = select(self.series, series, f"Result.{owner}")
        return {k: self.series[k] for k in chosen}, {k: self._series_info[k] for k in chosen}

    def to_dataframe(self, series: list[str] | None = None, layout: str = "flat"):
        """The labelled series (all, or the names given, see :meth:`series_names`) as a pandas DataFrame
        indexed by ``time`` (s). ``layout="flat"``: columns ``arm.position.x``, ``pin.coordinates``,
        ``energy.kinetic`` with units in ``df.attrs["units"]`` (column -> unit); ``layout="multiindex"``:
        column levels (series, component, unit). Needs pandas (MissingDependencyError naming it otherwise)
        and the system attached."""
        from .io.series import to_dataframe
        values, info = self._labelled(series, "to_dataframe")
        return to_dataframe(self.t, values, info, layout)

    def to_csv(self, path: str | os.PathLike, series: list[str] | None = None) -> Path:
        """Write ``time`` and the chosen series (names from :meth:`series_names`; all when None) to a CSV
        file, one row per saved time, header ``time [s],arm.position.x [m],...``; returns the path."""
        from .io.series import write_csv
        values, info = self._labelled(series, "to_csv")
        return write_csv(path, self.t, values, info)

    def save(self, path: str | os.PathLike) -> Path:
        """Write the result to ``path`` and return the file's path. Its suffix chooses the format
        (``RESULT_SUFFIXES``; any other suffix is a ModelError naming the ones known):

        * ``.h5``/``.hdf5``: a self-describing HDF5 file (flexmb/io/hdf5.py, docs/guide-output.md):
          every named series with units (time, each body's position, orientation, velocities and
          accelerations, flexible bodies' modal coordinates, joint coordinates and reactions, energies),
          metadata (flexmb version, system, names, coordinate layout) and the raw arrays; it needs the
          system attached and is read back with ``flexmb.load_result``, with or without the system;
        * ``.npz``: all raw arrays in one file; a name without a suffix gets ``.npz`` (``"run"`` writes
          ``run.npz``, and ``Result.load("run")`` reads it).

        The file is written under a temporary name and renamed over ``path`` (flexmb/io/safe.py): a failed save
        (disk full, no such directory) raises an OutputError naming the file and keeps any previous file there."""
        p = result_path(path, "Result.save")
        if _is_hdf5(p):
            from .io.hdf5 import write_result
            return write_result(self, p)
        from .io.safe import write_with
        arrays = {k: getattr(self, k) for k in self.ARRAYS}
        write_with(p, lambda fh: np.savez_compressed(fh, **arrays, message=np.array(self.message)), "result file")
        return p

    @classmethod
    def load(cls, path, system=None) -> "Result":
        """Read a result saved with :meth:`save` (``.npz`` or HDF5's raw arrays) or a chunk directory
        (flexmb.io.chunks).

        ``system``: the System that produced it, needed by every accessor that evaluates the model
        (energy, reactions, positions ...); its coordinate and constraint-row counts (and for HDF5 files
        its body, joint and force names and coordinate counts) must match the file's. A missing,
        unreadable, truncated or foreign file, arrays whose row counts differ, or NaN/inf in them are
        refused with an error naming the file. ``flexmb.load_result`` reads HDF5 files without the system."""
        if not isinstance(path, (str, os.PathLike)):
            raise ModelError(f"Result.load: path must be a file or directory name, got {path!r}")
        p = Path(path)
        if p.is_dir():
            from .io.chunks import read_chunks
            arrays = read_chunks(p)
            msg = _chunks_message(p, arrays["t"])
        elif _is_hdf5(p):
            from .io.hdf5 import check_layout, read_arrays
            arrays, msg = read_arrays(p)
            if system is not None:
                check_layout(p, system)
        else:
            p = result_path(p, "Result.load")
            arrays = _read_result_file(p)
            msg = str(arrays.pop("message"))
        _check_rows(arrays, str(p))
        res = cls(**arrays, system=system, message=msg)
        if system is not None:
            _check_system(res, system, str(p))
        return res


RESULT_SUFFIXES = (".npz", ".h5", ".hdf5")
"""Suffixes of result files (any case): ``.npz`` (raw arrays) and ``.h5``/``.hdf5`` (named series with units)."""


def result_path(path, owner: str) -> Path:
    """The result file ``path`` names: ``.npz`` added to a name without a suffix; a suffix other than
    ``RESULT_SUFFIXES`` is a ModelError naming ``owner`` and the suffixes known (a ``.csv`` is written by
    ``Result.to_csv``)."""
    if not isinstance(path, (str, os.PathLike)):
        raise ModelError(f"{owner}: path must be a file name, got {path!r}")
    p = Path(path)
    if not p.suffix:
        return p.with_name(p.name + ".npz")
    if p.suffix.lower() not in RESULT_SUFFIXES:
        hint = "; a CSV table is written by Result.to_csv" if p.suffix.lower() == ".csv" else ""
        raise ModelError(f"{owner}: {str(p)!r} has the suffix {p.suffix!r}; result files are {RESULT_SUFFIXES} "
                         f"(.npz raw arrays, .h5/.hdf5 named series; no suffix: .npz){hint}")
    return p


def _chunks_message(directory: Path, t: np.ndarray) -> str:
    """The message of a run read from its output directory: "completed" when its rows reach the run's end
    time (meta.json), else where it stopped (an interrupted or crashed run: ``success`` is False)."""
    from .io.chunks import read_meta
    t_end = float(read_meta(directory)["t_end"])
    if t[-1] >= t_end - 1e-9 * max(1.0, abs(t_end)):      # the last step ends on t_end up to round-off
        return "completed (loaded from chunks)"
    return (f"stopped at t = {float(t[-1]):.6g} s of t_end = {t_end:.6g} s (loaded from the chunks of an "
            "interrupted run; resume=True continues it)")


def _is_hdf5(path) -> bool:
    """Whether ``path`` names an HDF5 result file (``.h5``/``.hdf5``) rather than ``.npz``."""
    return isinstance(path, (str, os.PathLike)) and Path(path).suffix.lower() in (".h5", ".hdf5")


def load_result(path: str | os.PathLike, system=None):
    """Read a saved result (``flexmb.load_result``).

    * an HDF5 file (``.h5``/``.hdf5``) without ``system``: a :class:`flexmb.io.hdf5.SavedResult` with the
      named series and their units (``saved.series["bodies/arm/position"]``), its metadata, DataFrame and
      CSV export -- no System needed;
    * with ``system`` (the System that produced it; its bodies, joints and coordinate counts are checked
      against the file's), or an ``.npz`` file or chunk directory: a :class:`Result` (:meth:`Result.load`)."""
    if system is None and _is_hdf5(path) and not Path(path).is_dir():
        from .io.hdf5 import read_saved
        return read_saved(path)
    return Result.load(path, system=system)


def _read_result_file(p: Path) -> dict[str, np.ndarray]:
    """The arrays and message of a file written by Result.save (ModelError naming the file otherwise)."""
    if not p.is_file():
        raise ModelError(f"result file {str(p)!r} does not exist")
    if not zipfile.is_zipfile(p):
        raise ModelError(f"result file {str(p)!r} is not a complete .npz file written by Result.save "
                         "(truncated, or not a zip archive)")
    need = [k for k in Result.ARRAYS if k != "history"] + ["message"]     # older files have no history
    from .io.safe import checked_npz
    try:
        with checked_npz(p, "result file") as z:
            missing = [k for k in need if k not in z.files]
            if not missing:
                return {k: z[k] for k in [*need, "history"] if k in z.files}
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as exc:
        if isinstance(exc, ModelError):         # refused as hostile (UnsafeFileError)
            raise
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
