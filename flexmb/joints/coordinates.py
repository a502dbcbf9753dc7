"""Relative coordinates of joints over saved states (post-processing behind ``Result.joint_coordinates``).

Each side of a joint carries a triad ``T = (t_1, t_2, t_3)`` (orthonormal, given in global axes at the
start) and the joint point ``P``. At a saved state both are carried by their site: on a body frame by
``r + A(p) u`` and ``A(p) u`` (Haug 1989, §9.2), on a site of a flexible body with its deformation,
``u = u_0 + S eta`` (docs/theory-flexible.md §3). With ``a_k``, ``b_k`` the images of the triad on
sides a and b:

* relative rotation in triad axes ``R_kl = a_k . b_l`` (identity at the start);
* relative translation ``d = P_b - P_a`` (zero at the start), components ``a_k . d``.

Angles are ``atan2`` of entries of ``R`` unwrapped over the saved times (``numpy.unwrap``), so a joint
must turn less than pi between two saved states for the count of turns to be right.
"""
from __future__ import annotations

import numpy as np

from .. import rotations as rot
from ..errors import ModelError
from .base import Joint
from .driver import Driver
from .types import Cylindrical, Planar, Prismatic, Revolute, Spherical, Universal

__all__ = ["joint_coordinates", "COORDINATES"]

#: what ``joint_coordinates`` returns per joint type (columns, units)
COORDINATES = {
    "revolute": "angle (n,) rad about the axis",
    "prismatic": "displacement (n,) m along the axis",
    "cylindrical": "(n, 2): angle (rad), displacement (m)",
    "universal": "(n, 2): angle about axis_a, angle about axis_b (rad)",
    "spherical": "(n, 3) rotation vector (rad) in body a's axes",
    "planar": "(n, 3): displacements along f and g (m), angle about the normal (rad)",
}


def _frames(site, q: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Position r (n, 3), rotation A (n, 3, 3) and modal coordinates eta (n, m) of a site's body."""
    body = site.body
    n = q.shape[0]
    if not body.ncoord:                                  # the ground
        return np.zeros((n, 3)), np.broadcast_to(np.eye(3), (n, 3, 3)), np.zeros((n, 0))
    o = body.offset
    return q[:, o:o + 3], rot.A(rot.normalize(q[:, o + 3:o + 7])), q[:, o + 7:o + 7 + body.n_modes]


def _images(site, q: np.ndarray, triad: np.ndarray, point: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Global images at every saved state of the triad columns (n, 3, 3) and of the point (n, 3)."""
    r, A, eta = _frames(site, q)
    cols = []
    for t in triad.T:
        u = site.to_local_vector(t)[None] + eta @ site.vector_shape(t).T
        cols.append(np.einsum("nij,nj->ni", A, u))
    u = site.to_local_point(point)[None] + eta @ site.point_shape(point).T
    return np.stack(cols, axis=2), r + np.einsum("nij,nj->ni", A, u)


def _relative(joint: Joint, q: np.ndarray, triad: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Relative rotation ``R`` (n, 3, 3) and translation ``a_k . d`` (n, 3), both in triad axes."""
    Fa, Pa = _images(joint.site_a, q, triad, joint.point)
    Fb, Pb = _images(joint.site_b, q, triad, joint.point)
    return np.einsum("nik,nil->nkl", Fa, Fb), np.einsum("nik,ni->nk", Fa, Pb - Pa)


def _angle(R: np.ndarray, axis: int) -> np.ndarray:
    """Unwrapped rotation angle (rad) about triad axis ``axis`` of rotations about that axis:
    ``atan2(R[j, i], R[i, i])`` with (i, j, axis) cyclic."""
    i, j = (axis + 1) % 3, (axis + 2) % 3
    return np.unwrap(np.arctan2(R[:, j, i], R[:, i, i]))


def _axis_triad(joint) -> np.ndarray:
    return np.column_stack([joint.f, joint.g, joint.axis])


def _revolute(joint, q):
    return _angle(_relative(joint, q, _axis_triad(joint))[0], 2)


def _prismatic(joint, q):
    return _relative(joint, q, _axis_triad(joint))[1][:, 2]


def _cylindrical(joint, q):
    R, d = _relative(joint, q, _axis_triad(joint))
    return np.column_stack([_angle(R, 2), d[:, 2]])


def _universal(joint, q):
    """``R = Rot(axis_a, theta_1) Rot(axis_b, theta_2)`` in the triad (axis_a, axis_b, axis_a x axis_b):
    ``theta_1 = atan2(R_32, R_22)``, ``theta_2 = atan2(R_13, R_11)``."""
    R, _ = _relative(joint, q, np.column_stack([joint.axis_a, joint.axis_b, np.cross(joint.axis_a, joint.axis_b)]))
    return np.column_stack([np.unwrap(np.arctan2(R[:, 2, 1], R[:, 1, 1])),
                            np.unwrap(np.arctan2(R[:, 0, 2], R[:, 0, 0]))])


def _spherical(joint, q):
    from scipy.spatial.transform import Rotation
    R, _ = _relative(joint, q, np.eye(3))
    return Rotation.from_matrix(R).as_rotvec()


def _planar(joint, q):
    R, d = _relative(joint, q, np.column_stack([joint.f, joint.g, joint.normal]))
    return np.column_stack([d[:, 0], d[:, 1], _angle(R, 2)])


_KINDS = ((Revolute, _revolute), (Prismatic, _prismatic), (Cylindrical, _cylindrical), (Universal, _universal),
          (Spherical, _spherical), (Planar, _planar))


def joint_coordinates(joint: Joint, q: np.ndarray) -> np.ndarray:
    """Relative coordinates of ``joint`` at the saved coordinates ``q`` (n, nq), measured from the start
    configuration, of body b relative to body a (see ``COORDINATES`` for each type):

    * revolute: angle (n,) rad, positive for a right-handed turn of b about the joint axis;
    * prismatic: displacement (n,) m of b along the axis;
    * cylindrical: (n, 2), the angle (rad) and the displacement (m);
    * universal: (n, 2), ``theta_1`` about ``axis_a`` (fixed in a) and ``theta_2`` about ``axis_b`` (fixed in
      b), the relative rotation being ``Rot(axis_a, theta_1) Rot(axis_b, theta_2)`` (rad);
    * spherical: (n, 3) rotation vector (rad, |.| <= pi) of b relative to a, components in body a's axes
      (the global axes at the start, turning with a);
    * planar: (n, 3), displacements (m) along the joint's in-plane directions ``f``, ``g`` and the angle
      (rad) about its normal;
    * a driver on a joint: the coordinates of that joint.

    Angles other than the rotation vector are unwrapped over the saved times. Fixed and distance joints
    and coordinate drivers have no relative coordinate: ModelError."""
    if isinstance(joint, Driver) and joint.joint is not None:
        return joint_coordinates(joint.joint, q)
    for cls, fun in _KINDS:
        if isinstance(joint, cls):
            return fun(joint, q)
    raise ModelError(f"{joint.owner} has no relative coordinate; joint_coordinates takes a joint of type "
                     f"{', '.join(COORDINATES)} (or a driver on one)")
