"""Rotations that carry no inertia and that no joint holds: found when the system compiles, held still, and
refused when a load acts on them.

A rigid body may have zero principal moments of inertia: a slender rod (``inertia=(0, I, I)``, no moment about
its axis) or a point mass (:class:`~flexmb.bodies.rigid.PointMass`, none at all). A rotation about such an axis
enters the equations of motion only through the joints:

* a joint that turns it with the rest of the motion holds it (a rod on a revolute whose axis is not the rod's
  axis; a point mass on a revolute away from its centre, a massless lever): the equations are regular as they
  are;
* otherwise the rotation is free (the spin of a rod between two spherical joints on its axis; every rotation of a
  point mass whose joints attach at its centre; the spin of a point mass on a spherical joint about its lever).
  The mass matrix is singular along it and no constraint row touches it, so the iteration matrix
  ``[[M, Phi_q^T], [Phi_q, 0]]`` is singular: the equations leave that rotation undetermined. It is no part of
  the physical motion (no mass moves with it), so flexmb keeps it still: the body's inertia tensor in the
  equations gets a stand-in moment ``c = max(I_max, m / 4)`` (kg m^2, SI numbers: the body's largest principal
  moment, or for a point mass the size of its translational block, ``m``, in the Euler-parameter block ``4 J``)
  about the free axes, and an initial angular velocity about them is dropped.

With the free axes' angular velocity zero the stand-in adds nothing to the motion, the reactions or the
energies: ``c F F^T omega' = 0`` (F the free axes). The angular velocity stays zero because nothing drives it: no
constraint row has a component along a free axis (that is what free means), gravity acts at the centre of mass,
and the gyroscopic moment about a free axis vanishes. A singular inertia tensor that obeys the triangle
inequality is either zero or that of a rod, ``(0, I, I)``; with the stand-in, Euler's equation about a free axis
``f`` reads ``c w_f' = (J_a - J_b) w_a w_b`` (a, b the other two principal axes), whose right side is zero when
``J_a = J_b`` (the rod ``(c, I, I)``, a point mass with one free axis ``(c, 0, 0)``) or when ``w_a`` or ``w_b`` is
itself a free rate (zero). A load on a free rotation would make the problem ill posed (an infinite angular
acceleration): :func:`check_loads` refuses, when the run starts, a moment about a free axis and a force element
whose moment about it changes as the body turns or spins about it (a spring or damper attached off the axis, a
rotational spring, a bushing), naming the body, the axis and the moment.

A free direction is found per body at the initial configuration: the null space of the constraint Jacobian's
columns of the body's Euler parameters mapped onto its zero-inertia axes (``p_dot = G(p)^T omega' / 2``, the
body-frame form of ``p_dot = E(p)^T omega / 2``, docs/theory.md §3.1). Joints whose geometry makes a rotation free
only at some configurations are not foreseen; a rotation that only several zero-inertia bodies together leave
free is not held (the start then reports a singular configuration naming the bodies without inertia).

A point mass's angular velocity is no input: at the start its Euler-parameter rates are set by its joints from
the velocities given (:func:`lever_rates`).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import rotations as rot
from ..errors import ModelError
from .rigid import RigidBody, stand_in_moment

__all__ = ["FreeRotation", "axis_text", "hold", "unheld_text", "lever_rates", "drop_spin", "check_loads"]

HELD_RTOL = 1e-10
"""A zero-inertia axis counts as held when a constraint row moves with it by more than this fraction of the
largest entry of the body's constraint-Jacobian columns (rows of unit vectors and lever arms in metres)."""

LOAD_RTOL = 1e-10
"""A moment about a free axis larger than this fraction of the body's force times its radius of gyration
(its stand-in one), or of the largest moment on its held axes, is a load: refused."""


@dataclass(frozen=True)
class FreeRotation:
    """A body's rotations that have no inertia and that no joint holds."""

    body: RigidBody
    index: int              # the body's position in the rigid-body group (Assembly.rigid)
    axes: np.ndarray        # (k, 3) orthonormal body-frame axes of the free rotations
    stand_in: float         # kg m^2, the moment given about them in the equations


def axis_text(axis) -> str:
    """``"(1, 0, 0)"``: a body axis in messages (3 significant digits, no negative zeros)."""
    return "(" + ", ".join(f"{x:.3g}" for x in np.asarray(axis, dtype=float) + 0.0) + ")"


def _body_columns(jac, body: RigidBody) -> np.ndarray:
    """The body's 7 columns of the constraint Jacobian ``jac`` (CSC), dense over the rows that touch them only
    (the cost does not grow with the number of rows)."""
    sub = jac[:, body.offset: body.offset + 7]
    rows, at = np.unique(sub.indices, return_inverse=True)
    out = np.zeros((rows.size, 7))
    np.add.at(out, (at, np.repeat(np.arange(7), np.diff(sub.indptr))), sub.data)
    return out


def _free_axes(body: RigidBody, axes: np.ndarray, jac, p: np.ndarray) -> np.ndarray:
    """The combinations of ``axes`` (k, 3) that no row of ``jac`` (the constraint Jacobian, CSC) turns."""
    cols = _body_columns(jac, body)
    scale = float(np.abs(cols).max(initial=0.0))
    turn = cols[:, 3:] @ (0.5 * rot.G(p).T @ axes.T)          # rows x k: Phi_p dp/dtheta
    if scale == 0.0 or not turn.size:
        return axes
    _, sv, vt = np.linalg.svd(turn)
    sv = np.concatenate([sv, np.zeros(len(axes) - sv.size)])
    return vt[sv <= HELD_RTOL * scale] @ axes


def hold(asm) -> None:
    """Find the free rotations without inertia of the system's rigid bodies at the initial configuration and
    give each a stand-in moment in ``asm.rigid.J``, the others (held by joints) none (``asm.rigid.held`` lists
    the free ones). Costs nothing for a model whose bodies all have full inertia."""
    group = asm.rigid
    group.held = []
    if not group.no_inertia:
        return
    q, v = asm.initial_state()
    jac = asm.constraints(q, v, 0.0).jac.tocsc()
    for k, axes in group.no_inertia.items():
        body = group.bodies[k]
        free = _free_axes(body, axes, jac, q[body.offset + 3: body.offset + 7])
        c = stand_in_moment(body.inertia, body.mass)
        group.J[k] = body.inertia + c * free.T @ free
        if len(free):
            group.held.append(FreeRotation(body, k, free, c))


def unheld_text(asm, q: np.ndarray, t: float) -> str:
    """For a start refused as singular: the rotations without inertia that the joints leave free but that
    :func:`hold` could not hold because they turn several bodies together (``"'a' about (1, 0, 0) with 'b' about
    (1, 0, 0)"``, one per free direction, '; '-separated), '' when there are none."""
    group = asm.rigid
    held = {f.index: f.axes for f in group.held}
    jac = asm.constraints(q, np.zeros(asm.nq), t).jac.tocsc()
    owners, columns = [], []
    for k, axes in group.no_inertia.items():
        rest = axes - (axes @ held[k].T) @ held[k] if k in held else axes
        u, sv, _ = np.linalg.svd(rest.T, full_matrices=False)       # orthonormal basis of what is not held
        o = group.bodies[k].offset
        for a in u[:, sv > 0.5].T:
            owners.append((group.bodies[k].name, a))
            columns.append(jac[:, o + 3: o + 7] @ (0.5 * rot.G(q[o + 3: o + 7]).T @ a))
    if not columns:
        return ""
    turn = np.column_stack(columns)
    _, sv, vt = np.linalg.svd(turn)
    sv = np.concatenate([sv, np.zeros(turn.shape[1] - sv.size)])
    scale = float(np.abs(jac).max()) if jac.nnz else 1.0
    texts = []
    for x in vt[sv <= HELD_RTOL * scale]:
        parts = {}
        for (name, a), w in zip(owners, x):
            parts[name] = parts.get(name, 0.0) + w * a
        texts.append(" with ".join(f"{name!r} about {axis_text(v / np.linalg.norm(v))}"
                                   for name, v in parts.items() if np.linalg.norm(v) > 1e-6))
    return "; ".join(texts)


def lever_rates(asm, q: np.ndarray, v: np.ndarray, t: float) -> np.ndarray:
    """``v`` with the Euler-parameter rates of the bodies without any rotational inertia (point masses) set by
    their joints: the least-squares rates that satisfy ``Phi_q v + Phi_t = 0`` with every other rate as given.
    A point mass's angular velocity is no input (it moves no mass); its velocity is, and a lever (a joint away
    from its centre) turns with it: without this the velocity projection would split the given velocity between
    the point's translation and its frame's rotation."""
    group = asm.rigid
    points = [group.bodies[k] for k, axes in group.no_inertia.items() if len(axes) == 3]
    if not points:
        return v
    c = asm.constraints(q, v, t)
    jac = c.jac.tocsr()
    cols = np.concatenate([b.offset + 3 + np.arange(4) for b in points])
    v = v.copy()
    v[cols] = 0.0
    lever = jac[:, cols]
    rows = np.flatnonzero(np.diff(lever.indptr))                  # the rows that the levers enter
    if rows.size:
        v[cols] = np.linalg.lstsq(lever[rows].toarray(), -(jac[rows] @ v + c.phi_t[rows]), rcond=None)[0]
    return v


def drop_spin(asm, q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``v`` without angular velocity about the held free axes (it moves no mass: not part of the motion)."""
    if not asm.rigid.held:
        return v
    v = v.copy()
    for f in asm.rigid.held:
        pc = slice(f.body.offset + 3, f.body.offset + 7)
        G = rot.G(q[pc])
        w = 2.0 * G @ v[pc]                                        # omega' = 2 G p_dot
        v[pc] -= 0.5 * G.T @ (f.axes.T @ (f.axes @ w))
    return v


@dataclass(frozen=True)
class _Loads:
    """What the force elements apply to one held body at a state: body-frame moments about its free axes (N m),
    the size of the moment about its held axes (N m) and of the force (N)."""

    free: np.ndarray
    held: float
    force: float


def _loads(asm, q: np.ndarray, v: np.ndarray, t: float) -> list[_Loads]:
    """The force elements' loads on every held body (gravity and the bodies' own inertia terms left out): the
    residual at zero accelerations and multipliers less the rigid bodies' part, ``Q_p = 2 G^T n'``."""
    zero = np.zeros(asm.nq)
    r0, _, _ = asm.residual(q, v, zero, np.zeros(asm.m), t)
    _, rb, _ = asm.rigid.residual(q, v, zero)
    out = []
    for f in asm.rigid.held:
        o = f.body.offset
        applied = -(r0[o: o + 7] - rb[f.index])
        moment = 0.5 * rot.G(q[o + 3: o + 7]) @ applied[3:]
        about_free = f.axes @ moment
        out.append(_Loads(about_free, float(np.linalg.norm(moment - f.axes.T @ about_free)),
                          float(np.linalg.norm(applied[:3]))))
    return out


PROBE = 1e-6
"""Rotation (rad) and angular velocity (rad/s) about each free axis with which :func:`check_loads` probes the
force elements."""


def _probed(asm, q: np.ndarray, v: np.ndarray, axis: int, rate: bool) -> tuple[np.ndarray, np.ndarray]:
    """``(q, v)`` with every held body turned by PROBE about its free axis number ``axis`` (or, ``rate``, spinning
    at PROBE about it): ``dp = G(p)^T f dtheta / 2``."""
    q, v = q.copy(), v.copy()
    for f in asm.rigid.held:
        if axis < len(f.axes):
            pc = slice(f.body.offset + 3, f.body.offset + 7)
            dp = 0.5 * PROBE * rot.G(q[pc]).T @ f.axes[axis]
            if rate:
                v[pc] += dp
            else:
                q[pc] = (q[pc] + dp) / np.linalg.norm(q[pc] + dp)
    return q, v


def _refuse(f: FreeRotation, k: int, what: str) -> None:
    raise ModelError(
        f"{f.body.kind} {f.body.name!r}: {what} about its body axis {axis_text(f.axes[k])}, a rotation with no "
        f"inertia that no joint holds: its angular acceleration would be infinite. Give the body a moment of "
        f"inertia about that axis, hold the rotation with a joint, or attach the loads at points on the axis")


def check_loads(asm, q: np.ndarray, v: np.ndarray, t: float) -> None:
    """Refuse, at the start, force elements that act on a held free rotation (ModelError naming the body, the
    axis and the moment): a moment about it now, or one that changes when the body turns or spins about it (a
    spring or damper attached off the axis, a rotational spring, a bushing). With no inertia about the axis
    the angular acceleration would be infinite. Loads that only begin later (a contact not yet touching, a
    load function zero at the start) are not seen."""
    if not asm.rigid.held:
        return
    base = _loads(asm, q, v, t)
    for f, b in zip(asm.rigid.held, base):
        lever = np.sqrt(f.stand_in / f.body.mass)         # m: the radius of gyration of the stand-in moment
        k = int(np.argmax(np.abs(b.free)))
        if abs(b.free[k]) > LOAD_RTOL * max(b.force * lever, b.held):
            _refuse(f, k, f"a moment of {b.free[k]:.6g} N m acts at t = {t:.6g} s")
    for axis in range(3):
        for rate, unit in ((False, "rad"), (True, "rad/s")):
            if not any(axis < len(f.axes) for f in asm.rigid.held):
                continue
            probe = _loads(asm, *_probed(asm, q, v, axis, rate), t)
            for f, b, p in zip(asm.rigid.held, base, probe):
                if axis >= len(f.axes):
                    continue
                lever = np.sqrt(f.stand_in / f.body.mass)
                change = p.free[axis] - b.free[axis]
                if abs(change) > LOAD_RTOL * max(b.force, p.force, abs(p.force - b.force)) * lever:
                    _refuse(f, axis, f"a force element's moment changes by {change / PROBE:.6g} N m per {unit} "
                                     f"of rotation")
