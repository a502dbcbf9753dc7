"""The whole mechanism over time as named blocks for ParaView (``Result.export_paraview``).

One block per body, joint and contact, each an unstructured grid whose points move:

* flexible body (FlexibleBody, NonlinearBeam): its deformed mesh, ``R = r + A (x + Phi eta)``
  (docs/theory-flexible.md §1); point fields ``elastic_deflection`` (``A Phi eta``, global, m),
  with stress modes ``stress`` (Voigt stress in body axes, Pa, stored in VTK's tensor order) or, for
  beam meshes, ``section_forces`` (N, N m, as the element defines them); for 6-dof meshes
  ``rotation`` (small nodal rotation vector ``A Phi_r eta``, global, rad); a NonlinearBeam adds the
  cell field ``axial_force`` (N, tension positive);
* rigid body: its ``geometry`` surface, else the box of equivalent inertia (flexmb.bodies.shapes), moved
  by ``R = r + A s``; point field ``velocity`` (m/s);
* joint ``<name> (<kind> joint)``: one vertex at the joint point, carried by the second body (the
  first when the second is the ground) with the deformation at its site;
* contact ``<name> (<kind>)`` (sphere-plane, sphere-sphere, clearance): one vertex at the contact
  point with the point field ``contact_force``, the normal force on the second body (global, N,
  ``Result.contact_force`` times the contact normal);
* mesh, node and sphere-cloud contact ``<name> (<kind>)`` (sphere-mesh, node-mesh, node-plane, sphere
  cloud; flexmb/contact/mesh.py): one vertex per contactor (a block keeps its number of points over
  time), each sphere at its contact point (centre minus radius along the contact normal, the centre
  when apart) and each node at its position, with the point field ``contact_force``, the total contact
  force on that contactor (global, N, zero when apart; ``Result.contact_forces``).
"""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from .. import rotations as rot
from ..errors import ModelError
from .paraview import VTK_FROM_VOIGT
from ..bodies.shapes import inertia_box
from .vtkhdf import Block, write_vtkhdf


def _frame(result, body) -> tuple[np.ndarray, np.ndarray]:
    """Origin (nt, 3) and rotation (nt, 3, 3) of a body's frame at every saved time."""
    nt = result.t.size
    if body.ncoord == 0:                                   # the ground
        return np.zeros((nt, 3)), np.broadcast_to(np.eye(3), (nt, 3, 3))
    o = body.offset
    return result.q[:, o:o + 3], rot.A(rot.normalize(result.q[:, o + 3:o + 7]))


def _eta(result, body) -> np.ndarray:
    o = body.offset
    return result.q[:, o + 7:o + 7 + body.n_modes]


def site_point(result, site, point) -> np.ndarray:
    """Global position (nt, 3) of ``point`` (global at the start) attached to ``site``, with the
    deformation there: ``r + A (s + S eta)`` (docs/theory-flexible.md §3)."""
    body = site.body
    r, A = _frame(result, body)
    local = np.broadcast_to(site.to_local_point(point), r.shape)
    if body.n_modes:
        local = local + _eta(result, body) @ site.point_shape(point).T
    return r + np.einsum("nij,nj->ni", A, local)


def site_vector(result, site, vector) -> np.ndarray:
    """Global direction (nt, 3) of ``vector`` (global at the start) fixed at ``site``."""
    body = site.body
    _, A = _frame(result, body)
    local = np.broadcast_to(site.to_local_vector(vector), (result.t.size, 3))
    if body.n_modes:
        local = local + _eta(result, body) @ site.vector_shape(vector).T
    return np.einsum("nij,nj->ni", A, local)


# ----------------------------------------------------------------------------------------------
# Bodies
# ----------------------------------------------------------------------------------------------
def flexible_block(result, body) -> Block:
    """The deformed mesh of a flexible body (fields in the module docstring)."""
    modes = body.modes
    if modes.cells is None:
        raise ModelError(f"flexible body {body.name!r}: its mode set holds no mesh cells, so it cannot be drawn: "
                         "give ModeSet(..., cells=...), or, for a file saved by an older flexmb, save the set "
                         "again from its FE model")
    nodes = np.arange(modes.nodes.shape[0])
    t, r = body.node_shapes(nodes)
    eta = _eta(result, body)
    origin, A = _frame(result, body)
    elastic = np.einsum("kim,nm->nki", t, eta)
    points = origin[:, None] + np.einsum("nij,nkj->nki", A, modes.nodes[None] + elastic)
    cells = list(modes.cells.items())
    pd = {"elastic_deflection": np.einsum("nij,nkj->nki", A, elastic)}
    if modes.dofs_per_node == 6:
        pd["rotation"] = np.einsum("nij,nkj->nki", A, np.einsum("kim,nm->nki", r, eta))
    if modes.stress_modes is not None:
        values = np.einsum("pcm,nm->npc", modes.stress_modes, eta)
        beams = all(cell_type.startswith("line") for cell_type, _ in cells)
        pd["section_forces" if beams else "stress"] = values if beams else values[..., VTK_FROM_VOIGT]
    cd = {}
    if hasattr(body, "axial_force"):
        cd["axial_force"] = np.array([body.axial_force(e) for e in eta])
    return Block(body.name, points, cells, pd, cd)


def rigid_block(result, body) -> Block:
    """The surface of a rigid body (its geometry, else the box of equivalent inertia)."""
    pts, tris = body.geometry if body.geometry is not None else inertia_box(body.mass, body.inertia)
    origin, A = _frame(result, body)
    arm = np.einsum("nij,pj->npi", A, pts)
    o = body.offset
    w = 2.0 * np.einsum("nij,nj->ni", rot.E(result.q[:, o + 3:o + 7]), result.v[:, o + 3:o + 7])
    velocity = result.v[:, None, o:o + 3] + np.cross(w[:, None], arm)
    return Block(body.name, origin[:, None] + arm, [("triangle", tris)], {"velocity": velocity})


def body_block(result, body) -> Block:
    """The block of one body: flexible mesh or rigid surface."""
    from ..bodies.rigid import RigidBody
    if body.n_modes:
        return flexible_block(result, body)
    if isinstance(body, RigidBody):
        return rigid_block(result, body)
    raise ModelError(f"body {body.name!r} ({type(body).__name__}) cannot be drawn: the export draws rigid and "
                     "flexible bodies")


# ----------------------------------------------------------------------------------------------
# Markers
# ----------------------------------------------------------------------------------------------
def _marker(name: str, points: np.ndarray, point_data: dict | None = None) -> Block:
    return Block(name, points[:, None], [("vertex", np.zeros((1, 1), dtype=np.int64))],
                 {k: v[:, None] for k, v in (point_data or {}).items()})


def joint_block(result, joint) -> Block:
    """A vertex at the joint point, carried by its second body (its first when the second is the ground)."""
    site = joint.site_b if joint.body_b.ncoord else joint.site_a
    return _marker(f"{joint.name} ({joint.kind} joint)", site_point(result, site, joint.point))


def _contact_point(result, c) -> tuple[np.ndarray, np.ndarray]:
    """Contact point (nt, 3) and unit normal on the second body (nt, 3), global (flexmb/contact/pairs.py)."""
    if c.geometry == "sphere-plane":
        n = site_vector(result, c.site_a, c.normal)
        return site_point(result, c.site_b, c.center) - c.radius * n, n
    if c.geometry == "sphere-sphere":
        ca, cb = site_point(result, c.site_a, c.center_a), site_point(result, c.site_b, c.center_b)
        u = (cb - ca) / np.linalg.norm(cb - ca, axis=1, keepdims=True)
        return ca + c.radius_a * u, u
    # clearance: eccentricity e of the pin centre from the hole axis; the force pushes the pin back, along -e
    pin = site_point(result, c.site_b, c.pin_center)
    axis = site_vector(result, c.site_a, c.axis)
    d = pin - site_point(result, c.site_a, c.point)
    e = d - np.sum(d * axis, axis=1, keepdims=True) * axis
    size = np.linalg.norm(e, axis=1, keepdims=True)
    u = np.divide(e, size, out=np.zeros_like(e), where=size > 0.0)
    return pin + c.radius_pin * u, -u


def contact_block(result, contact) -> Block:
    """A vertex at the contact point with the normal force on the second body as ``contact_force`` (N)."""
    point, normal = _contact_point(result, contact)
    force = result.contact_force(contact)[:, None] * normal
    return _marker(f"{contact.name} ({contact.kind})", point, {"contact_force": force})


def contactor_block(result, contact) -> Block:
    """A vertex per contactor of a mesh, node or sphere-cloud contact at its contact point, with the total
    contact force on it as ``contact_force`` (N; ``Result.contact_forces``)."""
    points, forces = result.contact_forces(contact)
    vertices = np.arange(points.shape[1], dtype=np.int64)[:, None]
    return Block(f"{contact.name} ({contact.kind})", points, [("vertex", vertices)], {"contact_force": forces})


# ----------------------------------------------------------------------------------------------
# The export
# ----------------------------------------------------------------------------------------------
def mechanism_blocks(result, bodies) -> list[Block]:
    """Blocks of ``bodies`` and of the joints and drawable contacts that touch one of them."""
    from ..contact.mesh import MESH_CONTACTS
    from ..contact.pairs import CONTACT_TYPES
    system = result.system
    chosen = {id(b) for b in bodies}

    def touches(item) -> bool:
        return any(id(b) in chosen for b in item.bodies)

    blocks = [body_block(result, b) for b in bodies]
    blocks += [joint_block(result, j) for j in system.joints if touches(j)]
    blocks += [contact_block(result, c) for c in system.forces if isinstance(c, CONTACT_TYPES) and touches(c)]
    blocks += [contactor_block(result, c) for c in system.forces if isinstance(c, MESH_CONTACTS) and touches(c)]
    return blocks


def export_mechanism(result, path: str | os.PathLike, bodies) -> Path:
    """Write ``bodies`` (and their joints and contacts) of a result to one transient VTKHDF file;
    return its path (``.vtkhdf`` added when ``path`` has no suffix)."""
    return write_vtkhdf(path, result.t, mechanism_blocks(result, bodies))
