"""The bad-input catalogue: every entry is a misuse of the public API that must be refused
with an exception from ``flexmb.errors`` whose message names the item (body, joint, element,
keyword or file) and the offending value. Runs that fail part-way must never hand NaN or inf
to a ``Result`` (``err.result``).

Each section builds its cases as ``(id, call, words)``: ``call()`` must raise, ``words`` must
all appear in the message. Sections are independent; shared builders live at the top.
"""
from __future__ import annotations

import functools
import tempfile
from pathlib import Path

import numpy as np
import pytest

import flexmb as fm
from flexmb import errors


def refused(call, words, exc=errors.FlexmbError):
    """Run ``call``; it must raise ``exc`` (a flexmb error) whose message holds every word."""
    with pytest.raises(errors.FlexmbError) as info:
        call()
    assert isinstance(info.value, exc), f"{type(info.value).__name__} is not a {exc.__name__}: {info.value}"
    message = str(info.value)
    for w in words:
        assert w.lower() in message.lower(), f"{w!r} not in message: {message}"
    result = getattr(info.value, "result", None)
    if result is not None:
        for k in ("t", "q", "v", "vd", "lam", "work_nc", "work_drivers"):
            assert np.all(np.isfinite(getattr(result, k))), f"non-finite {k} in err.result"
    return info.value


def pendulum(name="pendulum", **body_kw):
    """A 1 kg rigid pendulum on a revolute joint about z, under gravity (shared builder)."""
    s = fm.System(gravity=(0, -9.81, 0), name=name)
    kw = dict(mass=1.0, inertia=(0.01, 0.01, 0.01), position=(0.5, 0, 0), name="bob")
    kw.update(body_kw)
    b = s.add(fm.RigidBody(**kw))
    s.add(fm.Revolute(s.ground, b, (0, 0, 0), (0, 0, 1), name="hinge"))
    return s, b


# == section: model construction (bodies, joints, forces, contact, FE, reduction) ===========
MODEL_CASES: list = []

# -- shared builders of the model section (fresh objects per case; FE data cached) -------------
import functools  # noqa: E402
import tempfile  # noqa: E402
from pathlib import Path  # noqa: E402

from flexmb import contact as fc  # noqa: E402
from flexmb.fem.materials import Material  # noqa: E402
from flexmb.fem.mesh import FEMesh, read_mesh  # noqa: E402
from flexmb.fem.model import FEModel  # noqa: E402
from flexmb.fem.sections import BeamSection  # noqa: E402
from flexmb.reduction import ModeSet, craig_bampton, free_free_modes  # noqa: E402

NAN, INF = float("nan"), float("inf")
STEEL = dict(E=2.1e11, nu=0.3, rho=7850.0)


def _pair():
    """Two rigid bodies 'a' (at the origin) and 'b' (at x = 1 m)."""
    return (fm.RigidBody(1.0, (0.1, 0.1, 0.1), name="a"),
            fm.RigidBody(1.0, (0.1, 0.1, 0.1), position=(1.0, 0.0, 0.0), name="b"))


def _body(**kw):
    """Rigid body 'bob' with ``kw`` replacing the defaults."""
    args = dict(mass=1.0, inertia=(0.1, 0.1, 0.1), name="bob")
    args.update(kw)
    return fm.RigidBody(**args)


def _hinge(kind=fm.Revolute, name="hinge"):
    a, b = _pair()
    if kind is fm.Spherical:
        return fm.Spherical(a, b, (0.5, 0, 0), name=name)
    return kind(a, b, (0.5, 0, 0), (0, 0, 1), name=name)


def _line_mesh(n=4, length=1.0):
    points = np.column_stack([np.linspace(0.0, length, n + 1), np.zeros(n + 1), np.zeros(n + 1)])
    lines = np.column_stack([np.arange(n), np.arange(1, n + 1)])
    return FEMesh(points, {"line": lines}, node_sets={"root": [0], "tip": [n]})


@functools.lru_cache(maxsize=None)
def _beam():
    """A 1 m steel cantilever of 4 Euler-Bernoulli elements (node sets root, tip)."""
    return FEModel(_line_mesh(), Material(**STEEL), sections=BeamSection.rectangle(0.02, 0.01),
                   beam="euler-bernoulli")


@functools.lru_cache(maxsize=None)
def _modes():
    """Craig-Bampton set of the cantilever: 2 fixed-interface + 6 tip constraint modes (8)."""
    return craig_bampton(_beam(), {"root": "root", "tip": "tip"}, n_modes=2, reference="root")


def _flex(**kw):
    args = dict(name="flex")
    args.update(kw)
    return fm.FlexibleBody(_modes(), **args)


def _modeset(M=None, K=None):
    """The cantilever's mode set with its reduced matrices replaced."""
    ms = _modes()
    return ModeSet(ms.phi, ms.nodes, ms.dofs_per_node, ms.M if M is None else M, ms.K if K is None else K)


def _with(matrix, i, j, value):
    out = np.array(matrix, dtype=float)
    out[i, j] = value
    return out


def _file(name, content: bytes = b"") -> str:
    """Write ``content`` to a fresh temporary directory; returns the path."""
    path = Path(tempfile.mkdtemp(prefix="flexmb-bad-")) / name
    path.write_bytes(content)
    return str(path)


def _saved_modes(name="modes.npz") -> str:
    path = Path(tempfile.mkdtemp(prefix="flexmb-bad-")) / name
    _modes().save(path, stiffening=False)
    return str(path)


def _truncated_npz() -> str:
    path = _saved_modes("truncated.npz")
    data = Path(path).read_bytes()
    Path(path).write_bytes(data[:len(data) // 2])
    return path


def _foreign_npz() -> str:
    path = Path(tempfile.mkdtemp(prefix="flexmb-bad-")) / "foreign.npz"
    np.savez(path, x=np.arange(3.0))
    return str(path)


def _headless_npz() -> str:
    """A file with a mode-set header but without its arrays."""
    path = Path(tempfile.mkdtemp(prefix="flexmb-bad-")) / "headless.npz"
    np.savez(path, header=np.array('{"format": "flexmb.ModeSet/1", "interfaces": []}'))
    return str(path)


def _law():
    return fc.LankaraniNikravesh(1e8, 0.8)


def _ball_on_ground(**kw):
    args = dict(point=(0, 0, 0), normal=(0, 0, 1), center=(0, 0, 0.2), radius=0.1, law=_law(), name="bump")
    args.update(kw)
    return fc.SpherePlaneContact(fm.System().ground, _body(), **args)


def _square():
    return fc.TriangleMesh([(0, 0, 0), (1, 0, 0), (1, 1, 0), (0, 1, 0)], [(0, 1, 2), (0, 2, 3)], name="floor")


def _plate():
    """Two quadrilateral shell cells (for the shell thickness)."""
    pts = np.array([(0, 0, 0), (1, 0, 0), (2, 0, 0), (0, 1, 0), (1, 1, 0), (2, 1, 0)], dtype=float)
    return FEMesh(pts, {"quad": [(0, 1, 4, 3), (1, 2, 5, 4)]})


def _study(**kw):
    args = dict(build=lambda p: _pair(), parameters=fm.Grid({"k": [1.0, 2.0]}), metrics={"peak": lambda r, s, p: 0})
    args.update(kw)
    return fm.Study(**args)


def _hinged(kind, **kw):
    a, b = _pair()
    return kind(a, b, **kw)


def _curve_hinge(curve, **kw):
    a, b = _pair()
    args = dict(axis=(0, 0, 1), curve=curve, k_elastic=1e4, name="knee")
    args.update(kw)
    return fm.PlasticHinge(a, b, **args)


def _crush(curve=((0, 0.01, 0.1), (0, 1e4, 1.2e4)), **kw):
    a, b = _pair()
    args = dict(point_a=(0, 0, 0), point_b=(1, 0, 0), curve=curve, unloading_stiffness=1e7, name="can")
    args.update(kw)
    return fm.CrushElement(a, b, **args)


def _motor(**kw):
    args = dict(K_p=0.1, r_a=1.0, L_a=1e-3, name="motor")
    args.update(kw)
    return fm.DCMotor(_hinge(), **args)


def _system_with(*items, name="sys"):
    s = fm.System(name=name)
    for item in items:
        s.add(item)
    return s


def _compile_joint_outside():
    a, b = _pair()
    s = _system_with(a, name="sys")
    s.add(fm.Revolute(a, b, (0.5, 0, 0), (0, 0, 1), name="hinge"))
    s.compile()


def _nodal(**kw):
    args = dict(nodes="tip", force=(0, -1, 0), name="push")
    args.update(kw)
    body = args.pop("body", None) or _flex()
    return fm.NodalForce(body, **args)


def _user(**kw):
    args = dict(bodies=_body(), func=lambda t, q, v: np.zeros(7), name="wind")
    args.update(kw)
    return fm.UserForce(**args)


# System: gravity, add, look-up, membership
MODEL_CASES += [
    ("system-gravity-nan", lambda: fm.System(gravity=(0, NAN, 0), name="sys"), ["'sys'", "nan"]),
    ("system-gravity-2", lambda: fm.System(gravity=(0, -9.81), name="sys"), ["'sys'", "(0, -9.81)"]),
    ("system-gravity-str", lambda: fm.System(gravity="down", name="sys"), ["'sys'", "'down'"]),
    ("system-gravity-inf", lambda: fm.System(gravity=(0, 0, -INF), name="sys"), ["'sys'", "inf"]),
    ("system-name-int", lambda: fm.System(name=7), ["system", "7"]),
    ("system-add-number", lambda: fm.System(name="sys").add(42), ["'sys'", "42"]),
    ("system-add-ground", lambda: (lambda s: s.add(s.ground))(fm.System(name="sys")), ["'sys'", "'ground'"]),
    ("system-add-twice", lambda: (lambda b: _system_with(b, b))(_body()), ["'bob'", "'sys'"]),
    ("system-duplicate-name", lambda: _system_with(_body(), _body()), ["'sys'", "'bob'"]),
    ("system-add-list-bad", lambda: fm.System(name="sys").add([_body(), "bob"]), ["'sys'", "'bob'"]),
    ("system-body-unknown", lambda: _system_with(_body()).body("nobody"), ["'sys'", "'nobody'"]),
    ("system-joint-body-outside", _compile_joint_outside, ["'hinge'", "'b'"]),
    ("system-no-bodies", lambda: fm.System(name="sys").compile(), ["'sys'", "no bodies"]),
]

# RigidBody: mass, inertia, position, orientation, velocities, names
MODEL_CASES += [
    ("rigid-mass-zero", lambda: _body(mass=0.0), ["'bob'", "0.0"]),
    ("rigid-mass-negative", lambda: _body(mass=-2.0), ["'bob'", "-2.0"]),
    ("rigid-mass-nan", lambda: _body(mass=NAN), ["'bob'", "nan"]),
    ("rigid-mass-inf", lambda: _body(mass=INF), ["'bob'", "inf"]),
    ("rigid-mass-str", lambda: _body(mass="heavy"), ["'bob'", "'heavy'"]),
    ("rigid-mass-none", lambda: _body(mass=None), ["'bob'", "None"]),
    ("rigid-mass-list", lambda: _body(mass=[1.0, 2.0]), ["'bob'", "[1.0, 2.0]"]),
    ("rigid-inertia-negative", lambda: _body(inertia=(0.1, 0.1, -0.1)), ["'bob'", "-0.1"]),
    ("rigid-inertia-two-zero", lambda: _body(inertia=(0.0, 0.0, 0.1)), ["'bob'", "0.0"]),   # no body has them
    ("rigid-inertia-nan", lambda: _body(inertia=(NAN, 0.1, 0.1)), ["'bob'", "nan"]),
    ("rigid-inertia-two", lambda: _body(inertia=(0.1, 0.1)), ["'bob'", "(0.1, 0.1)"]),
    ("rigid-inertia-str", lambda: _body(inertia="big"), ["'bob'", "'big'"]),
    ("rigid-inertia-none", lambda: _body(inertia=None), ["'bob'", "None"]),
    ("rigid-inertia-unsymmetric", lambda: _body(inertia=[[1, 0.5, 0], [0, 1, 0], [0, 0, 1]]), ["'bob'", "0.5"]),
    ("rigid-inertia-triangle", lambda: _body(inertia=(0.1, 0.1, 0.5)), ["'bob'", "0.5"]),
    ("rigid-position-two", lambda: _body(position=(0.0, 1.0)), ["'bob'", "(0.0, 1.0)"]),
    ("rigid-position-nan", lambda: _body(position=(NAN, 0, 0)), ["'bob'", "nan"]),
    ("rigid-position-str", lambda: _body(position="here"), ["'bob'", "'here'"]),
    ("rigid-position-inf", lambda: _body(position=(0, 0, INF)), ["'bob'", "inf"]),
    ("rigid-euler-not-unit", lambda: _body(orientation=(2.0, 0, 0, 0)), ["'bob'", "2"]),
    ("rigid-euler-slightly-off", lambda: _body(orientation=(1.0, 0, 0, 2e-3)), ["'bob'", "1.000002"]),
    ("rigid-euler-zero", lambda: _body(orientation=(0, 0, 0, 0)), ["'bob'", "0"]),
    ("rigid-euler-nan", lambda: _body(orientation=(NAN, 0, 0, 0)), ["'bob'", "nan"]),
    ("rigid-orientation-scaled", lambda: _body(orientation=2 * np.eye(3)), ["'bob'", "2.0"]),
    ("rigid-orientation-mirror", lambda: _body(orientation=np.diag([1.0, 1.0, -1.0])), ["'bob'", "-1.0"]),
    ("rigid-orientation-shape", lambda: _body(orientation=(1.0, 0.0, 0.0)), ["'bob'", "(3,)"]),
    ("rigid-orientation-str", lambda: _body(orientation="up"), ["'bob'", "'up'"]),
    ("rigid-velocity-nan", lambda: _body(velocity=(NAN, 0, 0)), ["'bob'", "nan"]),
    ("rigid-velocity-two", lambda: _body(velocity=(1.0, 2.0)), ["'bob'", "(1.0, 2.0)"]),
    ("rigid-omega-inf", lambda: _body(angular_velocity=(0, 0, INF)), ["'bob'", "inf"]),
    ("rigid-omega-str", lambda: _body(angular_velocity="fast"), ["'bob'", "'fast'"]),
    ("rigid-name-int", lambda: _body(name=5), ["name", "5"]),
    ("rigid-name-empty", lambda: _body(name=""), ["name", "''"]),
]

# Joints: points, axes, bodies, self-connections, NaN/inf, shapes, strings
MODEL_CASES += [
    ("revolute-point-two", lambda: fm.Revolute(*_pair(), (0, 0), (0, 0, 1), name="hinge"), ["'hinge'", "(0, 0)"]),
    ("revolute-point-nan", lambda: fm.Revolute(*_pair(), (NAN, 0, 0), (0, 0, 1), name="hinge"), ["'hinge'", "nan"]),
    ("revolute-point-str", lambda: fm.Revolute(*_pair(), "origin", (0, 0, 1), name="hinge"), ["'hinge'", "'origin'"]),
    ("revolute-axis-zero", lambda: fm.Revolute(*_pair(), (0, 0, 0), (0, 0, 0), name="hinge"), ["'hinge'", "0.0"]),
    ("revolute-axis-nan", lambda: fm.Revolute(*_pair(), (0, 0, 0), (0, NAN, 1), name="hinge"), ["'hinge'", "nan"]),
    ("revolute-axis-str", lambda: fm.Revolute(*_pair(), (0, 0, 0), "z", name="hinge"), ["'hinge'", "'z'"]),
    ("revolute-axis-inf", lambda: fm.Revolute(*_pair(), (0, 0, 0), (0, 0, INF), name="hinge"), ["'hinge'", "inf"]),
    ("revolute-self", lambda: (lambda b: fm.Revolute(b, b, (0, 0, 0), (0, 0, 1), name="hinge"))(_body()),
     ["'hinge'", "'bob'"]),
    ("revolute-body-number", lambda: fm.Revolute(3, _body(), (0, 0, 0), (0, 0, 1), name="hinge"), ["'hinge'", "3"]),
    ("revolute-body-str", lambda: fm.Revolute("a", _body(), (0, 0, 0), (0, 0, 1), name="hinge"), ["'hinge'", "'a'"]),
    ("revolute-name-int", lambda: fm.Revolute(*_pair(), (0, 0, 0), (0, 0, 1), name=12), ["name", "12"]),
    ("spherical-point-inf", lambda: fm.Spherical(*_pair(), (INF, 0, 0), name="ball"), ["'ball'", "inf"]),
    ("spherical-point-four", lambda: fm.Spherical(*_pair(), (0, 0, 0, 0), name="ball"), ["'ball'", "(0, 0, 0, 0)"]),
    ("spherical-self", lambda: (lambda b: fm.Spherical(b, b, (0, 0, 0), name="ball"))(_body()), ["'ball'", "'bob'"]),
    ("prismatic-axis-zero", lambda: fm.Prismatic(*_pair(), (0, 0, 0), (0, 0, 0), name="slide"), ["'slide'", "0.0"]),
    ("prismatic-axis-two", lambda: fm.Prismatic(*_pair(), (0, 0, 0), (1, 1), name="slide"), ["'slide'", "(1, 1)"]),
    ("prismatic-ground-ground", lambda: (lambda g: fm.Prismatic(g, g, (0, 0, 0), (1, 0, 0), name="slide"))(
        fm.System().ground), ["'slide'", "'ground'"]),
    ("cylindrical-point-nan", lambda: fm.Cylindrical(*_pair(), (0, NAN, 0), (1, 0, 0), name="sleeve"),
     ["'sleeve'", "nan"]),
    ("cylindrical-axis-str", lambda: fm.Cylindrical(*_pair(), (0, 0, 0), "x", name="sleeve"), ["'sleeve'", "'x'"]),
    ("universal-not-perpendicular", lambda: fm.Universal(*_pair(), point=(0, 0, 0), axis_a=(1, 0, 0), axis_b=(1, 1, 0), name="cross"),
     ["'cross'", "0.707"]),
    ("universal-axis-zero", lambda: fm.Universal(*_pair(), point=(0, 0, 0), axis_a=(0, 0, 0), axis_b=(0, 1, 0), name="cross"),
     ["'cross'", "axis_a"]),
    ("universal-point-nan", lambda: fm.Universal(*_pair(), point=(NAN, 0, 0), axis_a=(1, 0, 0), axis_b=(0, 1, 0), name="cross"),
     ["'cross'", "nan"]),
    ("planar-normal-zero", lambda: fm.Planar(*_pair(), (0, 0, 0), (0, 0, 0), name="table"), ["'table'", "0.0"]),
    ("planar-normal-nan", lambda: fm.Planar(*_pair(), (0, 0, 0), (0, 0, NAN), name="table"), ["'table'", "nan"]),
    ("planar-point-str", lambda: fm.Planar(*_pair(), "p", (0, 0, 1), name="table"), ["'table'", "'p'"]),
    ("distance-coincide", lambda: fm.Distance(*_pair(), point_a=(1, 0, 0), point_b=(1, 0, 0), name="rod"), ["'rod'", "0"]),
    ("distance-point-nan", lambda: fm.Distance(*_pair(), point_a=(NAN, 0, 0), point_b=(1, 0, 0), name="rod"), ["'rod'", "nan"]),
    ("distance-point-shape", lambda: fm.Distance(*_pair(), point_a=(0, 0, 0), point_b=(1, 0), name="rod"), ["'rod'", "(1, 0)"]),
    ("fixed-point-nan", lambda: fm.Fixed(*_pair(), (0, 0, NAN), name="weld"), ["'weld'", "nan"]),
    ("fixed-self", lambda: (lambda b: fm.Fixed(b, b, name="weld"))(_body()), ["'weld'", "'bob'"]),
]

# Driver: wrong joint kind, bad values
MODEL_CASES += [
    ("driver-angle-on-spherical", lambda: fm.Driver(_hinge(fm.Spherical, "ball"), angle=1.0, name="drv"),
     ["'drv'", "'ball'"]),
    ("driver-displacement-on-revolute", lambda: fm.Driver(_hinge(), displacement=0.1, name="drv"),
     ["'drv'", "'hinge'"]),
    ("driver-angle-on-prismatic", lambda: fm.Driver(_hinge(fm.Prismatic, "slide"), angle=1.0, name="drv"),
     ["'drv'", "'slide'"]),
    ("driver-angle-nan", lambda: fm.Driver(_hinge(), angle=NAN, name="drv"), ["'drv'", "nan"]),
    ("driver-angle-inf", lambda: fm.Driver(_hinge(), angle=INF, name="drv"), ["'drv'", "inf"]),
    ("driver-angle-str", lambda: fm.Driver(_hinge(), angle="fast", name="drv"), ["'drv'", "'fast'"]),
    ("driver-coordinate-unknown", lambda: fm.Driver(_body(), coordinate="w", value=0.0, name="drv"),
     ["'drv'", "'w'"]),
    ("driver-coordinate-no-value", lambda: fm.Driver(_body(), coordinate="x", name="drv"), ["'drv'", "None"]),
    ("driver-coordinate-nan", lambda: fm.Driver(_body(), coordinate="x", value=NAN, name="drv"), ["'drv'", "nan"]),
    ("driver-coordinate-ground", lambda: fm.Driver(fm.System().ground, coordinate="x", value=0.0, name="drv"),
     ["'drv'", "'ground'"]),
    ("driver-nothing", lambda: fm.Driver(_hinge(), name="drv"), ["'drv'", "none"]),
    ("driver-two-modes", lambda: fm.Driver(_hinge(), angle=1.0, displacement=0.1, name="drv"),
     ["'drv'", "'angle', 'displacement'"]),
    ("driver-angle-on-body", lambda: fm.Driver(_body(), angle=1.0, name="drv"), ["'drv'", "'bob'"]),
]

# Applied loads: Force, Torque, NodalForce, UserForce
MODEL_CASES += [
    ("force-vector-nan", lambda: fm.Force(_body(), (NAN, 0, 0), name="push"), ["'push'", "nan"]),
    ("force-vector-two", lambda: fm.Force(_body(), (1.0, 2.0), name="push"), ["'push'", "(1.0, 2.0)"]),
    ("force-vector-str", lambda: fm.Force(_body(), "up", name="push"), ["'push'", "'up'"]),
    ("force-point-nan", lambda: fm.Force(_body(), (0, 1, 0), local_point=(0, NAN, 0), name="push"),
     ["'push'", "nan"]),
    ("force-on-ground", lambda: fm.Force(fm.System().ground, (0, 1, 0), name="push"), ["'push'", "'ground'"]),
    ("force-on-number", lambda: fm.Force(5, (0, 1, 0), name="push"), ["'push'", "5"]),
    ("force-name-empty", lambda: fm.Force(_body(), (0, 1, 0), name=""), ["name", "''"]),
    ("torque-vector-inf", lambda: fm.Torque(_body(), (0, 0, INF), name="twist"), ["'twist'", "inf"]),
    ("torque-vector-four", lambda: fm.Torque(_body(), (0, 0, 1, 0), name="twist"), ["'twist'", "(0, 0, 1, 0)"]),
    ("torque-on-ground", lambda: fm.Torque(fm.System().ground, (0, 0, 1), name="twist"), ["'twist'", "'ground'"]),
    ("user-func-not-callable", lambda: _user(func="f"), ["'wind'", "'f'"]),
    ("user-jacobian-not-callable", lambda: _user(jacobian=3.0), ["'wind'", "3.0"]),
    ("user-no-bodies", lambda: _user(bodies=[]), ["'wind'", "[]"]),
    ("user-ground", lambda: _user(bodies=[fm.System().ground]), ["'wind'", "'ground'"]),
    ("user-body-str", lambda: _user(bodies="bob"), ["'wind'", "'b'"]),
    ("nodal-on-rigid", lambda: _nodal(body=_body()), ["'push'", "'bob'"]),
    ("nodal-node-outside", lambda: _nodal(nodes=[99]), ["'push'", "99"]),
    ("nodal-node-set-unknown", lambda: _nodal(nodes="middle"), ["'push'", "'middle'"]),
    ("nodal-no-nodes", lambda: _nodal(nodes=[]), ["'push'", "[]"]),
    ("nodal-force-nan", lambda: _nodal(force=(0, NAN, 0)), ["'push'", "nan"]),
    ("nodal-node-float", lambda: _nodal(nodes=[1.5]), ["'push'", "1.5"]),
]

# Spring-dampers and bushings
MODEL_CASES += [
    ("spring-k-negative", lambda: fm.SpringDamper(*_pair(), point_a=(0, 0, 0), point_b=(1, 0, 0), k=-1.0, name="coil"),
     ["'coil'", "-1.0"]),
    ("spring-k-nan", lambda: fm.SpringDamper(*_pair(), point_a=(0, 0, 0), point_b=(1, 0, 0), k=NAN, name="coil"), ["'coil'", "nan"]),
    ("spring-c-negative", lambda: fm.SpringDamper(*_pair(), point_a=(0, 0, 0), point_b=(1, 0, 0), k=1.0, c=-3.0, name="coil"),
     ["'coil'", "-3.0"]),
    ("spring-c-str", lambda: fm.SpringDamper(*_pair(), point_a=(0, 0, 0), point_b=(1, 0, 0), k=1.0, c="soft", name="coil"),
     ["'coil'", "'soft'"]),
    ("spring-free-length-negative", lambda: fm.SpringDamper(*_pair(), point_a=(0, 0, 0), point_b=(1, 0, 0), k=1.0,
                                                            free_length=-0.5, name="coil"), ["'coil'", "-0.5"]),
    ("spring-free-length-nan", lambda: fm.SpringDamper(*_pair(), point_a=(0, 0, 0), point_b=(1, 0, 0), k=1.0, free_length=NAN,
                                                       name="coil"), ["'coil'", "nan"]),
    ("spring-points-coincide", lambda: fm.SpringDamper(*_pair(), point_a=(1, 0, 0), point_b=(1, 0, 0), k=1.0, name="coil"),
     ["'coil'", "[1.0, 0.0, 0.0]"]),
    ("spring-point-nan", lambda: fm.SpringDamper(*_pair(), point_a=(NAN, 0, 0), point_b=(1, 0, 0), k=1.0, name="coil"),
     ["'coil'", "nan"]),
    ("spring-self", lambda: (lambda b: fm.SpringDamper(b, b, point_a=(0, 0, 0), point_b=(1, 0, 0), k=1.0, name="coil"))(_body()),
     ["'coil'", "'bob'"]),
    ("spring-body-str", lambda: fm.SpringDamper("a", _body(), point_a=(0, 0, 0), point_b=(1, 0, 0), k=1.0, name="coil"),
     ["'coil'", "'a'"]),
    ("rotspring-free-angle-nan", lambda: fm.RotationalSpringDamper(*_pair(), (0, 0, 1), k=1.0, free_angle=NAN,
                                                                   name="coil"), ["'coil'", "nan"]),
    ("rotspring-free-angle-str", lambda: fm.RotationalSpringDamper(*_pair(), (0, 0, 1), k=1.0, free_angle="ten",
                                                                   name="coil"), ["'coil'", "'ten'"]),
    ("rotspring-k-inf", lambda: fm.RotationalSpringDamper(*_pair(), (0, 0, 1), k=INF, name="coil"), ["'coil'", "inf"]),
    ("rotspring-c-negative", lambda: fm.RotationalSpringDamper(*_pair(), (0, 0, 1), k=1.0, c=-2.0, name="coil"),
     ["'coil'", "-2.0"]),
    ("rotspring-axis-zero", lambda: fm.RotationalSpringDamper(*_pair(), (0, 0, 0), k=1.0, name="coil"),
     ["'coil'", "0.0"]),
    ("bushing-five-values", lambda: fm.Bushing(*_pair(), (0, 0, 0), (1, 1, 1, 1, 1), name="mount"),
     ["'mount'", "(1, 1, 1, 1, 1)"]),
    ("bushing-stiffness-nan", lambda: fm.Bushing(*_pair(), (0, 0, 0), (1, 1, NAN, 1, 1, 1), name="mount"),
     ["'mount'", "nan"]),
    ("bushing-damping-negative", lambda: fm.Bushing(*_pair(), (0, 0, 0), (1,) * 6, (0, 0, 0, -4.0, 0, 0),
                                                    name="mount"), ["'mount'", "-4.0"]),
    ("bushing-axes-skew", lambda: fm.Bushing(*_pair(), (0, 0, 0), (1,) * 6, axes=[[1, 0, 0], [1, 1, 0], [0, 0, 1]],
                                             name="mount"), ["'mount'", "[1.0, 1.0, 0.0]"]),
    ("bushing-point-nan", lambda: fm.Bushing(*_pair(), (0, NAN, 0), (1,) * 6, name="mount"), ["'mount'", "nan"]),
    ("bushing-stiffness-str", lambda: fm.Bushing(*_pair(), (0, 0, 0), "stiff", name="mount"), ["'mount'", "'stiff'"]),
]

# DC motor
MODEL_CASES += [
    ("motor-on-spherical", lambda: fm.DCMotor(_hinge(fm.Spherical, "ball"), 0.1, 1.0, 1e-3, name="motor"),
     ["'motor'", "'ball'"]),
    ("motor-on-body", lambda: fm.DCMotor(_body(), 0.1, 1.0, 1e-3, name="motor"), ["'motor'", "'bob'"]),
    ("motor-kp-zero", lambda: _motor(K_p=0.0), ["'motor'", "0.0"]),
    ("motor-ra-negative", lambda: _motor(r_a=-1.0), ["'motor'", "-1.0"]),
    ("motor-la-zero", lambda: _motor(L_a=0.0), ["'motor'", "0.0"]),
    ("motor-d-nan", lambda: _motor(D=NAN), ["'motor'", "nan"]),
    ("motor-current-nan", lambda: _motor(current=NAN), ["'motor'", "nan"]),
    ("motor-current-str", lambda: _motor(current="1 A"), ["'motor'", "'1 A'"]),
    ("motor-voltage-nan", lambda: _motor(voltage=NAN), ["'motor'", "nan"]),
    ("motor-voltage-str", lambda: _motor(voltage="12 V"), ["'motor'", "'12 V'"]),
]

# Crash elements and pulses
MODEL_CASES += [
    ("hinge-k-zero", lambda: _curve_hinge(((0, 0.1), (100, 120)), k_elastic=0.0), ["'knee'", "0.0"]),
    ("hinge-curve-not-increasing", lambda: _curve_hinge(((0, 0.1, 0.1), (100, 120, 130))), ["'knee'", "0.1"]),
    ("hinge-curve-nan", lambda: _curve_hinge(((0, 0.1), (100, NAN))), ["'knee'", "nan"]),
    ("hinge-curve-start", lambda: _curve_hinge(((0.05, 0.1), (100, 120))), ["'knee'", "0.05"]),
    ("hinge-curve-negative", lambda: _curve_hinge(((0, 0.1), (100, -20))), ["'knee'", "-20"]),
    ("hinge-curve-lengths", lambda: _curve_hinge(((0, 0.1, 0.2), (100, 120))), ["'knee'", "3", "2"]),
    ("hinge-curve-str", lambda: _curve_hinge("steel"), ["'knee'", "'steel'"]),
    ("hinge-curve-snap", lambda: _curve_hinge(((0, 0.1), (100, 0)), k_elastic=100.0), ["'knee'", "-1000"]),
    ("hinge-rate-one", lambda: _curve_hinge(((0, 0.1), (100, 120)), rate_factor=(40.0,)), ["'knee'", "(40.0,)"]),
    ("hinge-rate-c-negative", lambda: _curve_hinge(((0, 0.1), (100, 120)), rate_factor=(-40.0, 5.0)),
     ["'knee'", "-40.0"]),
    ("hinge-axis-zero", lambda: _curve_hinge(((0, 0.1), (100, 120)), axis=(0, 0, 0)), ["'knee'", "0.0"]),
    ("crush-unloading-negative", lambda: _crush(unloading_stiffness=-1.0), ["'can'", "-1.0"]),
    ("crush-curve-not-at-zero", lambda: _crush(curve=((0, 0.1), (500, 1e4))), ["'can'", "500"]),
    ("crush-curve-too-steep", lambda: _crush(curve=((0, 1e-6), (0, 1e4))), ["'can'", "1e+10"]),
    ("crush-points-coincide", lambda: _crush(point_b=(0, 0, 0)), ["'can'", "[0.0, 0.0, 0.0]"]),
    ("crush-curve-decreasing", lambda: _crush(curve=((0, 0.1, 0.05), (0, 1e3, 2e3))), ["'can'", "0.05"]),
    ("crush-point-nan", lambda: _crush(point_a=(0, NAN, 0)), ["'can'", "nan"]),
    ("pulse-peak-zero", lambda: fm.triangular_pulse(0.0, 0.1), ["peak_g", "0.0"]),
    ("pulse-duration-nan", lambda: fm.triangular_pulse(20.0, NAN), ["duration", "nan"]),
    ("pulse-peak-after-end", lambda: fm.triangular_pulse(20.0, 0.1, t_peak=0.2), ["t_peak", "0.2"]),
    ("pulse-v0-inf", lambda: fm.triangular_pulse(20.0, 0.1, v0=INF), ["v0", "inf"]),
    ("pulse-t0-str", lambda: fm.triangular_pulse(20.0, 0.1, t0="later"), ["t0", "'later'"]),
    ("far-pulse-unknown", lambda: fm.far_562_pulse(99, 1), ["far_562_pulse", "99"]),
    ("far-pulse-seats", lambda: fm.far_562_pulse(23, 1, seats="middle"), ["far_562_pulse", "'middle'"]),
]

# TimeFunction: tables, constants, profiles
MODEL_CASES += [
    ("timefunction-not-callable", lambda: fm.TimeFunction(5.0, name="ramp"), ["'ramp'", "5.0"]),
    ("timefunction-df-not-callable", lambda: fm.TimeFunction(abs, df=2.0, name="ramp"), ["'ramp'", "2.0"]),
    ("table-not-increasing", lambda: fm.TimeFunction.table([0.0, 1.0, 1.0], [0, 1, 2]), ["t", "1.0"]),
    ("table-decreasing", lambda: fm.TimeFunction.table([0.0, 2.0, 1.0], [0, 1, 2]), ["t", "1.0"]),
    ("table-nan-y", lambda: fm.TimeFunction.table([0.0, 1.0, 2.0], [0, NAN, 2]), ["y", "nan"]),
    ("table-nan-t", lambda: fm.TimeFunction.table([0.0, NAN, 2.0], [0, 1, 2]), ["t", "nan"]),
    ("table-lengths", lambda: fm.TimeFunction.table([0.0, 1.0, 2.0], [0, 1]), ["3", "2"]),
    ("table-one-point", lambda: fm.TimeFunction.table([0.0], [1.0]), ["table", "[0.0]"]),
    ("table-str", lambda: fm.TimeFunction.table("0 1", [0, 1]), ["table", "'0 1'"]),
    ("constant-nan", lambda: fm.TimeFunction.constant(NAN), ["constant", "nan"]),
    ("linear-rate-str", lambda: fm.TimeFunction.linear("fast"), ["rate", "'fast'"]),
    ("spin-up-zero-time", lambda: fm.TimeFunction.spin_up(10.0, 0.0), ["T_s", "0.0"]),
    ("spin-up-speed-nan", lambda: fm.TimeFunction.spin_up(NAN, 1.0), ["omega_s", "nan"]),
]

# Contact laws, friction laws, Hertz helpers
MODEL_CASES += [
    ("ln-k-negative", lambda: fc.LankaraniNikravesh(-1e8, 0.8), ["Lankarani-Nikravesh", "-100000000.0"]),
    ("ln-e-above-one", lambda: fc.LankaraniNikravesh(1e8, 1.2), ["Lankarani-Nikravesh", "1.2"]),
    ("ln-e-negative", lambda: fc.LankaraniNikravesh(1e8, -0.1), ["Lankarani-Nikravesh", "-0.1"]),
    ("ln-e-nan", lambda: fc.LankaraniNikravesh(1e8, NAN), ["Lankarani-Nikravesh", "nan"]),
    ("ln-n-zero", lambda: fc.LankaraniNikravesh(1e8, 0.8, n=0.0), ["exponent n", "0.0"]),
    ("ln-k-str", lambda: fc.LankaraniNikravesh("stiff", 0.8), ["stiffness K", "'stiff'"]),
    ("ln-min-speed-zero", lambda: fc.LankaraniNikravesh(1e8, 0.8, min_approach_speed=0.0),
     ["min_approach_speed", "0.0"]),
    ("hc-e-two", lambda: fc.HuntCrossley(1e8, 2.0), ["Hunt-Crossley", "2.0"]),
    ("flores-e-zero", lambda: fc.Flores(1e8, 0.0), ["Flores", "0.0"]),
    ("linear-mass-zero", lambda: fc.LinearSpringDamper(1e6, 0.8, 0.0), ["effective mass", "0.0"]),
    ("linear-e-zero", lambda: fc.LinearSpringDamper(1e6, 0.0, 1.0), ["linear spring-damper", "0.0"]),
    ("linear-calibration", lambda: fc.LinearSpringDamper(1e6, 0.8, 1.0, calibration="exact"),
     ["calibration", "'exact'"]),
    ("linear-calibration-e-one", lambda: fc.LinearSpringDamper(1e6, 1.0, 1.0, calibration="exact"),
     ["calibration", "'exact'"]),
    ("coulomb-mu-negative", lambda: fc.CoulombRamp(-0.1, 0.01), ["mu", "-0.1"]),
    ("coulomb-mu-nan", lambda: fc.CoulombRamp(NAN, 0.01), ["mu", "nan"]),
    ("coulomb-v0-zero", lambda: fc.CoulombRamp(0.3, 0.0), ["v0", "0.0"]),
    ("coulomb-dead-zone", lambda: fc.CoulombRamp(0.3, 0.01, v_dead=0.02), ["v_dead", "0.02"]),
    ("coulomb-shape", lambda: fc.CoulombRamp(0.3, 0.01, shape="cubic"), ["shape", "'cubic'"]),
    ("brown-static-below-dynamic", lambda: fc.BrownMcPhee(0.2, 0.3, 0.01), ["mu_s", "0.2"]),
    ("brown-vs-zero", lambda: fc.BrownMcPhee(0.4, 0.3, 0.0), ["v_s", "0.0"]),
    ("brown-mud-negative", lambda: fc.BrownMcPhee(0.4, -0.3, 0.01), ["mu_d", "-0.3"]),
    ("hertz-e-negative", lambda: fc.effective_modulus(-2e11, 0.3), ["E1", "-2"]),
    ("hertz-nu-high", lambda: fc.effective_modulus(2e11, 0.6), ["nu1", "0.6"]),
    ("hertz-radius-zero", lambda: fc.effective_radius(0.0), ["R1", "0.0"]),
    ("hertz-sphere-plane-r", lambda: fc.sphere_plane(-0.01, 1e11), ["R", "-0.01"]),
    ("hertz-impact-mass", lambda: fc.hertz_impact(0.0, 1.0, 1e9), ["mass", "0.0"]),
]

# Contact pairs and meshes (the two bodies positional)
MODEL_CASES += [
    ("sphere-plane-radius-zero", lambda: _ball_on_ground(radius=0.0), ["'bump'", "0.0"]),
    ("sphere-plane-radius-nan", lambda: _ball_on_ground(radius=NAN), ["'bump'", "nan"]),
    ("sphere-plane-normal-zero", lambda: _ball_on_ground(normal=(0, 0, 0)), ["'bump'", "0.0"]),
    ("sphere-plane-center-nan", lambda: _ball_on_ground(center=(0, NAN, 0)), ["'bump'", "nan"]),
    ("sphere-plane-law-str", lambda: _ball_on_ground(law="hard"), ["'bump'", "'hard'"]),
    ("sphere-plane-friction-number", lambda: _ball_on_ground(friction=0.3), ["'bump'", "0.3"]),
    ("sphere-plane-self", lambda: (lambda b: fc.SpherePlaneContact(b, b, point=(0, 0, 0), normal=(0, 0, 1), center=(0, 0, 1), radius=0.1,
                                                                   law=_law(), name="bump"))(_body()),
     ["'bump'", "'bob'"]),
    ("sphere-sphere-radius-negative", lambda: fc.SphereSphereContact(*_pair(), center_a=(0, 0, 0), center_b=(1, 0, 0), radius_a=-0.1, radius_b=0.1,
                                                                     law=_law(), name="clash"), ["'clash'", "-0.1"]),
    ("sphere-sphere-coincide", lambda: fc.SphereSphereContact(*_pair(), center_a=(0, 0, 0), center_b=(0, 0, 0), radius_a=0.1, radius_b=0.1, law=_law(),
                                                              name="clash"), ["'clash'", "[0.0, 0.0, 0.0]"]),
    ("sphere-sphere-radius-str", lambda: fc.SphereSphereContact(*_pair(), center_a=(0, 0, 0), center_b=(1, 0, 0), radius_a=0.1, radius_b="big", law=_law(),
                                                                name="clash"), ["'clash'", "'big'"]),
    ("clearance-zero", lambda: fc.ClearanceJoint(*_pair(), point=(0, 0, 0), axis=(0, 0, 1), clearance=0.0, radius_pin=0.01, law=_law(), name="pin"),
     ["'pin'", "0.0"]),
    ("clearance-radius-nan", lambda: fc.ClearanceJoint(*_pair(), point=(0, 0, 0), axis=(0, 0, 1), clearance=1e-4, radius_pin=NAN, law=_law(),
                                                       name="pin"), ["'pin'", "nan"]),
    ("clearance-axis-zero", lambda: fc.ClearanceJoint(*_pair(), point=(0, 0, 0), axis=(0, 0, 0), clearance=1e-4, radius_pin=0.01, law=_law(),
                                                      name="pin"), ["'pin'", "0.0"]),
    ("clearance-pin-center-nan", lambda: fc.ClearanceJoint(*_pair(), point=(0, 0, 0), axis=(0, 0, 1), clearance=1e-4, radius_pin=0.01, law=_law(),
                                                           name="pin", pin_center=(NAN, 0, 0)), ["'pin'", "nan"]),
    ("trimesh-points-nan", lambda: fc.TriangleMesh([(0, 0, 0), (1, 0, 0), (0, NAN, 0)], [(0, 1, 2)], name="floor"),
     ["'floor'", "nan"]),
    ("trimesh-id-outside", lambda: fc.TriangleMesh([(0, 0, 0), (1, 0, 0), (0, 1, 0)], [(0, 1, 3)], name="floor"),
     ["'floor'", "[0, 1, 3]"]),
    ("trimesh-degenerate", lambda: fc.TriangleMesh([(0, 0, 0), (1, 0, 0), (2, 0, 0)], [(0, 1, 2)], name="floor"),
     ["'floor'", "[0, 1, 2]"]),
    ("trimesh-repeat", lambda: fc.TriangleMesh([(0, 0, 0), (1, 0, 0), (0, 1, 0)], [(0, 1, 1)], name="floor"),
     ["'floor'", "[0, 1, 1]"]),
    ("sphere-mesh-radius-zero", lambda: fc.SphereMeshContact(fm.System().ground, _body(), mesh=_square(), center=(0.5, 0.5, 0.2), radius=0.0, law=_law(), name="drop"), ["'drop'", "0.0"]),
    ("sphere-mesh-center-nan", lambda: fc.SphereMeshContact(fm.System().ground, _body(), mesh=_square(), center=(0.5, NAN, 0.2), radius=0.1, law=_law(), name="drop"), ["'drop'", "nan"]),
    ("sphere-mesh-center-two", lambda: fc.SphereMeshContact(fm.System().ground, _body(), mesh=_square(), center=(0.5, 0.5), radius=0.1, law=_law(), name="drop"), ["'drop'", "(0.5, 0.5)"]),
    ("sphere-mesh-not-mesh", lambda: fc.SphereMeshContact(fm.System().ground, _body(), mesh="floor", center=(0.5, 0.5, 0.2), radius=0.1, law=_law(), name="drop"), ["'drop'", "'floor'"]),
    ("sphere-mesh-margin-negative", lambda: fc.SphereMeshContact(fm.System().ground, _body(), mesh=_square(), center=(0.5, 0.5, 0.2), radius=0.1, law=_law(), margin=-1.0,
                                                                 name="drop"), ["'drop'", "-1.0"]),
    ("node-plane-rigid", lambda: fc.NodePlaneContact(fm.System().ground, _body(), nodes="tip", point=(0, 0, 0), normal=(0, 1, 0),
                                                     law=_law(), name="tips"), ["'tips'", "'bob'"]),
    ("node-plane-thickness", lambda: fc.NodePlaneContact(fm.System().ground, _flex(), nodes="tip", point=(0, 0, 0), normal=(0, 1, 0),
                                                         law=_law(), thickness=-0.01, name="tips"), ["'tips'", "-0.01"]),
    ("node-plane-normal-zero", lambda: fc.NodePlaneContact(fm.System().ground, _flex(), nodes="tip", point=(0, 0, 0),
                                                           normal=(0, 0, 0), law=_law(), name="tips"), ["'tips'", "(0, 0, 0)"]),
    ("node-plane-node-set", lambda: fc.NodePlaneContact(fm.System().ground, _flex(), nodes="middle", point=(0, 0, 0),
                                                        normal=(0, 1, 0), law=_law(), name="tips"), ["'tips'", "'middle'"]),
    ("cloud-radius-negative", lambda: fc.SphereCloudContact(list(_pair()), [(0, 0, 0), (1, 0, 0)], (0.1, -0.1),
                                                            _law(), name="grains"), ["'grains'", "-0.1"]),
    ("cloud-centers-count", lambda: fc.SphereCloudContact(list(_pair()), [(0, 0, 0)], 0.1, _law(), name="grains"),
     ["'grains'", "(1, 3)"]),
    ("cloud-coupling", lambda: fc.SphereCloudContact(list(_pair()), [(0, 0, 0), (1, 0, 0)], 0.1, _law(),
                                                     coupling="some", name="grains"), ["'grains'", "'some'"]),
]

# Studies: Study, Grid, Samples
MODEL_CASES += [
    ("grid-empty", lambda: fm.Grid({}), ["Grid", "{}"]),
    ("grid-no-values", lambda: fm.Grid({"k": []}), ["'k'", "[]"]),
    ("grid-bad-name", lambda: fm.Grid({"spring k": [1.0]}), ["'spring k'", "name"]),
    ("grid-object-value", lambda: fm.Grid({"k": [object]}), ["'k'", "type"]),
    ("grid-nan-value", lambda: fm.Grid({"k": [1.0, NAN]}), ["'k'", "nan"]),
    ("samples-n-zero", lambda: fm.Samples({"k": (0.0, 1.0)}, n=0), ["n", "0"]),
    ("samples-method", lambda: fm.Samples({"k": (0.0, 1.0)}, n=4, method="sobol"), ["method", "'sobol'"]),
    ("samples-range-nan", lambda: fm.Samples({"k": (0.0, NAN)}, n=4), ["'k'", "nan"]),
    ("samples-range-reversed", lambda: fm.Samples({"k": (2.0, 1.0)}, n=4), ["'k'", "(2.0, 1.0)"]),
    ("samples-log-negative", lambda: fm.Samples({"k": (-1.0, 1.0)}, n=4, log=("k",)), ["'k'", "-1.0"]),
    ("samples-log-unknown", lambda: fm.Samples({"k": (1.0, 2.0)}, n=4, log=("c",)), ["log", "'c'"]),
    ("study-build-not-callable", lambda: _study(build=5), ["build", "5"]),
    ("study-metrics-list", lambda: _study(metrics=["peak"]), ["metrics", "['peak']"]),
    ("study-metric-not-callable", lambda: _study(metrics={"peak": 3}), ["'peak'", "3"]),
    ("study-run-unknown", lambda: _study(run={"t_end": 1.0, "steps": 10}), ["run", "'steps'"]),
    ("study-duplicate-column", lambda: _study(metrics={"k": lambda r, s, p: 0}), ["'k'", "twice"]),
    ("study-parameters-bad", lambda: _study(parameters=5), ["parameters", "5"]),
]

# FE path: mesh files, FEMesh, Material, BeamSection, shell thickness, FEModel
MODEL_CASES += [
    ("read-mesh-missing", lambda: read_mesh(str(Path(tempfile.mkdtemp()) / "nothing.msh")), ["nothing.msh"]),
    ("read-mesh-garbage", lambda: read_mesh(_file("garbage.msh", b"\x00\x01 not a mesh")), ["garbage.msh"]),
    ("read-mesh-unknown-format", lambda: read_mesh(_file("mesh.xyz123", b"1 2 3")), ["mesh.xyz123"]),
    ("read-mesh-empty", lambda: read_mesh(_file("empty.inp", b"")), ["empty.inp"]),
    ("femesh-points-nan", lambda: FEMesh([(0, 0, 0), (NAN, 0, 0)], {"line": [(0, 1)]}), ["nodes", "1"]),
    ("femesh-cell-outside", lambda: FEMesh([(0, 0, 0), (1, 0, 0)], {"line": [(0, 2)]}), ["line", "2"]),
    ("femesh-cell-type", lambda: FEMesh([(0, 0, 0), (1, 0, 0)], {"polyhedron": [(0, 1)]}), ["polyhedron", "1 cells"]),
    ("femesh-cell-repeats", lambda: FEMesh([(0, 0, 0), (1, 0, 0)], {"line": [(0, 0), (0, 1)]}), ["line", "0"]),
    ("femesh-node-set-outside", lambda: FEMesh([(0, 0, 0), (1, 0, 0)], {"line": [(0, 1)]}, node_sets={"tip": [5]}),
     ["'tip'", "5"]),
    ("femesh-node-set-float", lambda: FEMesh([(0, 0, 0), (1, 0, 0)], {"line": [(0, 1)]},
                                             node_sets={"tip": [0.5]}), ["'tip'", "float"]),
    ("femesh-cell-set-type", lambda: FEMesh([(0, 0, 0), (1, 0, 0)], {"line": [(0, 1)]},
                                            cell_sets={"web": {"quad": [0]}}), ["'web'", "'quad'"]),
    ("femesh-points-shape", lambda: FEMesh([(0, 0, 0, 0), (1, 0, 0, 0)], {"line": [(0, 1)]}), ["points", "(2, 4)"]),
    ("femesh-add-node-set-twice", lambda: _line_mesh().add_node_set("tip", [1]), ["'tip'", "replace"]),
    ("material-e-zero", lambda: Material(E=0.0, nu=0.3, rho=7850.0, name="steel"), ["'steel'", "0.0"]),
    ("material-e-negative", lambda: Material(E=-2e11, nu=0.3, rho=7850.0), ["E", "-2"]),
    ("material-e-nan", lambda: Material(E=NAN, nu=0.3, rho=7850.0), ["E", "nan"]),
    ("material-nu-half", lambda: Material(E=2e11, nu=0.5, rho=7850.0), ["nu", "0.5"]),
    ("material-nu-high", lambda: Material(E=2e11, nu=0.7, rho=7850.0), ["nu", "0.7"]),
    ("material-nu-nan", lambda: Material(E=2e11, nu=NAN, rho=7850.0), ["nu", "nan"]),
    ("material-rho-negative", lambda: Material(E=2e11, nu=0.3, rho=-1.0), ["rho", "-1.0"]),
    ("material-rho-inf", lambda: Material(E=2e11, nu=0.3, rho=INF, name="foam"), ["'foam'", "inf"]),
    ("material-rho-str", lambda: Material(E=2e11, nu=0.3, rho="dense"), ["rho", "'dense'"]),
    ("section-area-zero", lambda: BeamSection(A=0.0, Iy=1e-8, Iz=1e-8, J=2e-8), ["A", "0.0"]),
    ("section-iy-nan", lambda: BeamSection(A=1e-4, Iy=NAN, Iz=1e-8, J=2e-8), ["Iy", "nan"]),
    ("section-j-negative", lambda: BeamSection(A=1e-4, Iy=1e-8, Iz=1e-8, J=-2e-8), ["J", "-2e-08"]),
    ("section-orientation-zero", lambda: BeamSection(A=1e-4, Iy=1e-8, Iz=1e-8, J=2e-8, orientation=(0, 0, 0)),
     ["orientation", "(0, 0, 0)"]),
    ("section-rectangle-b-zero", lambda: BeamSection.rectangle(0.0, 0.01), ["b", "0.0"]),
    ("section-tube-inverted", lambda: BeamSection.tube(0.01, 0.02), ["d_in", "0.02"]),
    ("section-circle-nan", lambda: BeamSection.circle(NAN), ["d", "nan"]),
    ("shell-thickness-negative", lambda: FEModel(_plate(), Material(**STEEL), thickness=-0.002).K,
     ["thickness", "-0.002"]),
    ("shell-thickness-missing", lambda: FEModel(_plate(), Material(**STEEL)).K, ["quad", "thickness"]),
    ("shell-thickness-nan", lambda: FEModel(_plate(), Material(**STEEL), thickness=NAN).K, ["thickness", "nan"]),
    ("femodel-material-number", lambda: FEModel(_line_mesh(), 5.0, sections=BeamSection.rectangle(0.02, 0.01)).K,
     ["material", "5.0"]),
    ("femodel-beam-theory", lambda: FEModel(_line_mesh(), Material(**STEEL), sections=BeamSection.rectangle(0.02, 0.01),
                                            beam="euler"), ["beam", "'euler'"]),
    ("femodel-no-section", lambda: FEModel(_line_mesh(), Material(**STEEL)).K, ["line", "sections"]),
    ("femodel-mesh-str", lambda: FEModel("beam.msh", Material(**STEEL)), ["mesh", "'beam.msh'"]),
    ("femodel-point-mass-negative", lambda: FEModel(_line_mesh(), Material(**STEEL),
                                                    sections=BeamSection.rectangle(0.02, 0.01)).add_point_mass(2, -1.0),
     ["mass", "-1.0"]),
]

# Reduction: craig_bampton, free_free_modes, ModeSet (constructor and load)
MODEL_CASES += [
    ("cb-missing-node-set", lambda: craig_bampton(_beam(), {"root": "base"}, n_modes=2), ["'base'"]),
    ("cb-n-modes-negative", lambda: craig_bampton(_beam(), {"root": "root"}, n_modes=-1), ["n_modes", "-1"]),
    ("cb-n-modes-too-many", lambda: craig_bampton(_beam(), {"root": "root"}, n_modes=1000), ["1000", "24"]),
    ("cb-n-modes-float", lambda: craig_bampton(_beam(), {"root": "root"}, n_modes=2.5), ["n_modes", "2.5"]),
    ("cb-reference-unknown", lambda: craig_bampton(_beam(), {"root": "root"}, n_modes=2, reference="tip"),
     ["'tip'", "reference"]),
    ("cb-fixed-unknown", lambda: craig_bampton(_beam(), None, n_modes=2, fixed="clamp"), ["'clamp'"]),
    ("cb-nothing-held", lambda: craig_bampton(_beam(), None, n_modes=2), ["interfaces", "fixed"]),
    ("ff-n-modes-zero", lambda: free_free_modes(_beam(), 0), ["n_modes", "0"]),
    ("ff-n-modes-too-many", lambda: free_free_modes(_beam(), 10000), ["10000", "24"]),
    ("cb-model-str", lambda: craig_bampton("beam.msh", {"root": "root"}, n_modes=2), ["model", "'beam.msh'"]),
    ("ff-model-none", lambda: free_free_modes(None, 2), ["model", "None"]),
    ("ff-missing-node-set", lambda: free_free_modes(_beam(), 2, static_correction={"tip": "end"}), ["'end'"]),
    ("modeset-k-nan", lambda: _modeset(K=_with(_modes().K, 1, 1, NAN)), ["K", "nan"]),
    ("modeset-m-nan", lambda: _modeset(M=_with(_modes().M, 0, 0, NAN)), ["M", "nan"]),
    ("modeset-k-unsymmetric", lambda: _modeset(K=_with(_modes().K, 0, 1, 1e3)), ["K", "symmetric", "1000"]),
    ("modeset-m-unsymmetric", lambda: _modeset(M=_with(_modes().M, 0, 1, 0.5)), ["M", "symmetric", "0.5"]),
    ("modeset-k-indefinite", lambda: _modeset(K=_with(_modes().K, 0, 0, -1e4)), ["K", "-1"]),
    ("modeset-m-indefinite", lambda: _modeset(M=_with(_modes().M, 0, 0, -1.0)), ["M", "-1"]),
    ("modeset-m-shape", lambda: _modeset(M=np.eye(3)), ["M", "(3, 3)"]),
    ("modeset-nodes-mismatch", lambda: ModeSet(_modes().phi, _modes().nodes[:-1], 6, _modes().M, _modes().K),
     ["nodes", "4"]),
    ("modeset-load-missing", lambda: ModeSet.load(str(Path(tempfile.mkdtemp()) / "absent.npz")), ["absent.npz"]),
    ("modeset-load-garbage", lambda: ModeSet.load(_file("garbage.npz", b"this is not a zip file")), ["garbage.npz"]),
    ("modeset-load-truncated", lambda: ModeSet.load(_truncated_npz()), ["truncated.npz"]),
    ("modeset-load-foreign", lambda: ModeSet.load(_foreign_npz()), ["foreign.npz", "None"]),
    ("modeset-load-headless", lambda: ModeSet.load(_headless_npz()), ["headless.npz", "phi"]),
    ("modeset-select-count", lambda: _modes().select(count=20), ["count", "20"]),
]

# Flexible bodies, nonlinear beams, Campbell diagrams
MODEL_CASES += [
    ("flex-modes-wrong-type", lambda: fm.FlexibleBody(_beam(), name="flex"), ["'flex'", "FEModel"]),
    ("flex-damping-negative", lambda: _flex(damping=-0.1), ["'flex'", "-0.1"]),
    ("flex-damping-count", lambda: _flex(damping=[0.01, 0.02]), ["'flex'", "[0.01, 0.02]"]),
    ("flex-damping-nan", lambda: _flex(damping=NAN), ["'flex'", "nan"]),
    ("flex-rayleigh-one", lambda: _flex(rayleigh=(0.1,)), ["'flex'", "(0.1,)"]),
    ("flex-rayleigh-negative", lambda: _flex(rayleigh=(0.1, -1e-4)), ["'flex'", "-0.0001"]),
    ("flex-modal-count", lambda: _flex(modal_coordinates=[0.0, 0.0]), ["'flex'", "[0.0, 0.0]"]),
    ("flex-modal-velocity-nan", lambda: _flex(modal_velocities=[NAN] * 8), ["'flex'", "nan"]),
    ("flex-position-nan", lambda: _flex(position=(0, NAN, 0)), ["'flex'", "nan"]),
    ("flex-euler-not-unit", lambda: _flex(orientation=(0.5, 0.5, 0.5, 0.6)), ["'flex'", "1.05356"]),
    ("flex-not-orthonormal", lambda: fm.FlexibleBody(_modeset(M=2 * _modes().M), name="flex"), ["'flex'", "1"]),
    ("flex-stiffening-str", lambda: _flex(stiffening="no"), ["'flex'", "'no'"]),
    ("flex-damping-str", lambda: _flex(damping="low"), ["'flex'", "'low'"]),
    ("flex-rayleigh-str", lambda: _flex(rayleigh="ab"), ["'flex'", "'ab'"]),
    ("flex-stability-check-str", lambda: _flex(stability_check="yes"), ["'flex'", "'yes'"]),
    ("flex-no-model", lambda: fm.FlexibleBody(_modeset(), name="flex"), ["'flex'", "model"]),
    ("flex-interface-unknown", lambda: _flex().interface("middle"), ["'flex'", "'middle'"]),
    ("flex-node-outside", lambda: _flex().node(42), ["'flex'", "42"]),
    ("flex-node-float", lambda: _flex().node(1.0), ["'flex'", "1.0"]),
    ("flex-joint-at-interface-nan", lambda: fm.Revolute(fm.System().ground, _flex().interface("tip"), (NAN, 0, 0),
                                                        (0, 0, 1), name="hinge"), ["'hinge'", "nan"]),
    ("nlbeam-fixed-unknown", lambda: fm.NonlinearBeam(_beam(), "clamp", name="blade"), ["'clamp'"]),
    ("nlbeam-fixed-few", lambda: fm.NonlinearBeam(_beam(), [0, 1, 2], name="blade"), ["'blade'", "3"]),
    ("nlbeam-membrane", lambda: fm.NonlinearBeam(_beam(), "root", membrane="exact", name="blade"),
     ["membrane", "'exact'"]),
    ("nlbeam-damping-negative", lambda: fm.NonlinearBeam(_beam(), "root", damping=-0.02, name="blade"),
     ["'blade'", "-0.02"]),
    ("nlbeam-damping-str", lambda: fm.NonlinearBeam(_beam(), "root", damping="low", name="blade"),
     ["'blade'", "'low'"]),
    ("nlbeam-rayleigh-negative", lambda: fm.NonlinearBeam(_beam(), "root", rayleigh=(-1.0, 0.0), name="blade"),
     ["'blade'", "(-1.0, 0.0)"]),
    ("nlbeam-model-str", lambda: fm.NonlinearBeam("beam.msh", "root", name="blade"), ["'beam.msh'", "model"]),
    ("campbell-rigid", lambda: fm.campbell(_body(), (0, 0, 1), [0.0, 10.0]), ["campbell", "'bob'"]),
    ("campbell-axis-zero", lambda: fm.campbell(_flex(name="rotor"), (0, 0, 0), [0.0, 10.0]), ["axis", "(0, 0, 0)"]),
    ("campbell-speed-nan", lambda: fm.campbell(_flex(name="rotor"), (0, 0, 1), [0.0, NAN]), ["speeds", "nan"]),
    ("campbell-speeds-str", lambda: fm.campbell(_flex(name="rotor"), (0, 0, 1), "fast"), ["speeds", "'fast'"]),
    ("campbell-too-many", lambda: fm.campbell(_flex(name="rotor"), (0, 0, 1), [0.0, 10.0], n_frequencies=100),
     ["'rotor'", "100", "8"]),
    ("campbell-zero-frequencies", lambda: fm.campbell(_flex(name="rotor"), (0, 0, 1), [0.0], n_frequencies=0),
     ["n_frequencies", "0"]),
    ("campbell-no-speeds", lambda: fm.campbell(_flex(name="rotor"), (0, 0, 1), []), ["speeds", "[]"]),
]


def test_unit_euler_parameters_with_round_off_are_accepted():
    """|p| = 1 + 1e-9 (round-off of a unit quaternion typed with 10 digits) is kept, not refused."""
    p = np.array([np.cos(0.3), 0.0, 0.0, np.sin(0.3)]) * (1.0 + 1e-9)
    body = _body(orientation=p)
    assert abs(np.linalg.norm(body.p0) - 1.0) < 1e-15
    np.testing.assert_allclose(body.p0, p / np.linalg.norm(p), rtol=0, atol=1e-15)


# == section: simulate keywords, user callbacks, files and results ==========================
RUN_CASES: list = []


def run_pendulum(system=None, t_end=0.005, h=1e-3, **kw):
    """A few steps of the shared pendulum (or of ``system``) with the given simulate keywords."""
    return fm.simulate(pendulum()[0] if system is None else system, t_end, h, **kw)


def keyword_cases(key, values, **extra):
    """One case per bad value of a simulate keyword: the message names the keyword and the value."""
    return [(f"simulate-{key}={v!r}" + "".join(f"-{k}={x}" for k, x in extra.items()),
             (lambda v=v: run_pendulum(**{key: v}, **extra)), [key, repr(v)]) for v in values]


def cause_kept(call, cause):
    """Run ``call``; its flexmb error must be chained from the user's exception of type ``cause``."""
    try:
        call()
    except errors.FlexmbError as err:
        assert isinstance(err.__cause__, cause), f"not chained from {cause.__name__}: {err.__cause__!r}"
        raise


def partial_result_kept(call):
    """Run ``call``; its flexmb error must carry ``err.result`` with the accepted steps (t > 0)."""
    try:
        call()
    except errors.FlexmbError as err:
        assert err.result is not None and err.result.t[-1] > 0, "the accepted steps were not kept"
        raise


def fails_after(t_fail, good, bad):
    """A user function returning ``good`` up to ``t_fail`` (s) and ``bad`` after it."""
    return lambda *args: bad if args[0] > t_fail else good


def raises_inside(exc):
    """A user function that raises ``exc``."""
    def f(*args):
        raise exc
    return f


def crank_driven(angle):
    """The pendulum with its hinge driven by ``angle`` (driver 'crank')."""
    s, b = pendulum()
    s.add(fm.Driver(s.joints[0], angle=angle, name="crank"))
    return s


def push_loaded(vector, kind=fm.Force):
    """The pendulum with a Force (or Torque) 'push' of value ``vector`` on its bob."""
    s, b = pendulum()
    s.add(kind(b, vector, name="push"))
    return s


def user_forced(func, jacobian=None):
    """The pendulum with a UserForce 'user' on its bob (7 generalized forces)."""
    s, b = pendulum()
    s.add(fm.UserForce(b, func, jacobian, name="user"))
    return s


def coordinate_driven(value):
    """The pendulum with the x coordinate of its bob driven by ``value`` (driver 'slide')."""
    s, b = pendulum()
    s.add(fm.Driver(b, coordinate="x", value=value, name="slide"))
    return s


def motor_driven(voltage):
    """The pendulum with a DC motor 'motor' on its hinge, supplied with ``voltage``."""
    s, b = pendulum()
    s.add(fm.DCMotor(s.joints[0], K_p=0.1, r_a=1.0, L_a=1e-3, voltage=voltage, name="motor"))
    return s


@functools.lru_cache(maxsize=None)
def cantilever_modes():
    """Three Craig-Bampton modes of a 1 m beam (E = 2 GPa, rho = 2000 kg/m^3, 4 elements) clamped at 'root'."""
    from flexmb.fem.materials import Material
    from flexmb.fem.model import FEModel
    from flexmb.fem.sections import BeamSection
    from flexmb.reduction import craig_bampton
    from verification.fem.meshes import line_mesh
    model = FEModel(line_mesh(4, 1.0), Material(E=2e9, nu=0.3, rho=2000.0),
                    sections=BeamSection.rectangle(0.05, 0.03, nu=0.3), beam="euler-bernoulli")
    return craig_bampton(model, {"root": "root"}, n_modes=3, reference="root")


def nodal_loaded(force):
    """A clamped flexible cantilever with a NodalForce 'tip load' of value ``force`` on its tip."""
    s = fm.System(name="cantilever")
    body = s.add(fm.FlexibleBody(cantilever_modes(), stiffening=False, name="beam"))
    s.add(fm.Fixed(s.ground, body, (0, 0, 0)))
    s.add(fm.NodalForce(body, "tip", force, name="tip load"))
    return s


NAN3 = (0.0, np.nan, 0.0)

# -- simulate keywords -------------------------------------------------------------------------
RUN_CASES += keyword_cases("t_end", ["1.0", np.nan, np.inf, -1.0, True, None])
RUN_CASES += keyword_cases("h", [0.0, -1e-3, np.nan, np.inf, "1e-3", None, True])
RUN_CASES += keyword_cases("h", [0.0, -1e-3, np.nan], method="dop853")
RUN_CASES += keyword_cases("method", ["rk4", 5, None])
RUN_CASES += keyword_cases("rho_inf", [1.5, -0.1, np.nan, "x", True])
RUN_CASES += keyword_cases("rho_inf", [0.3], method="hht")
RUN_CASES += keyword_cases("beta", ["x", np.nan, 0.1], method="newmark")
RUN_CASES += keyword_cases("gamma", [0.3, np.inf], method="newmark")
RUN_CASES += keyword_cases("beta", [0.3])          # generalized-alpha has no free beta: not silently ignored
RUN_CASES += keyword_cases("t_start", [np.nan, "a", -np.inf, True])
RUN_CASES += keyword_cases("adaptive", ["yes", None])
RUN_CASES += keyword_cases("rtol", [-1e-4, 0.0, np.nan, "1e-4", True])
RUN_CASES += keyword_cases("atol", [-1e-7, 0.0, np.inf])
RUN_CASES += keyword_cases("h_min", [0.0, -1e-9, np.nan, 2e-3, "x"])
RUN_CASES += keyword_cases("h_max", [0.0, -1.0, np.nan])
RUN_CASES += keyword_cases("h_max", [1e-5], h_min=1e-4)
RUN_CASES += keyword_cases("newton_tol", [-1e-8, 0.0, np.nan, np.inf, True])
RUN_CASES += keyword_cases("max_newton", [0, -3, 2.5, "15", True])
RUN_CASES += keyword_cases("velocity_projection", ["yes", None])
RUN_CASES += keyword_cases("redundant", ["x", None, True])
RUN_CASES += keyword_cases("save_every", [0, -1, 1.5, True, "2"])
RUN_CASES += keyword_cases("chunk_steps", [0, -5, 2.5, True])
RUN_CASES += keyword_cases("energy", ["no", None, 1])
RUN_CASES += keyword_cases("progress", ["yes", 5, "True"])     # True and False are valid (a bar, none)
RUN_CASES += keyword_cases("h_contact", [-1.0, 0.0, np.nan, "x"])
RUN_CASES += keyword_cases("contact_tol", [-1e-9, np.nan, "x", None])
RUN_CASES += [
    ("simulate-system-str", lambda: fm.simulate("pendulum", 0.01, 1e-3), ["system", "'pendulum'"]),
    ("simulate-system-none", lambda: fm.simulate(None, 0.01, 1e-3), ["system", "None"]),
]

# -- user callbacks: the message names the element and the time ---------------------------------
RUN_CASES += [
    ("driver-raises", lambda: cause_kept(lambda: run_pendulum(crank_driven(raises_inside(ZeroDivisionError("oops")))),
                                         ZeroDivisionError), ["'crank'", "ZeroDivisionError", "oops", "t = 0"]),
    ("driver-raises-later", lambda: partial_result_kept(lambda: run_pendulum(crank_driven(
        lambda t: 0.0 if t < 0.0025 else {}["key"]))), ["'crank'", "KeyError", "t = "]),
    ("driver-string", lambda: run_pendulum(crank_driven(lambda t: "abc")), ["'crank'", "'abc'", "t = 0"]),
    ("driver-numeric-string", lambda: run_pendulum(crank_driven(lambda t: "0.5")), ["'crank'", "'0.5'"]),
    ("driver-none", lambda: run_pendulum(crank_driven(lambda t: None)), ["'crank'", "None", "t = 0"]),
    ("driver-shape", lambda: run_pendulum(crank_driven(lambda t: (0.0, 1.0))), ["'crank'", "shape", "(2,)", "t = 0"]),
    ("driver-nan", lambda: partial_result_kept(lambda: run_pendulum(crank_driven(fails_after(0.0025, 0.0, np.nan)))),
     ["'crank'", "nan", "t = "]),
    ("driver-inf", lambda: run_pendulum(crank_driven(lambda t: np.inf)), ["'crank'", "inf", "t = 0"]),
    ("driver-timefunction-rate-nan",
     lambda: run_pendulum(crank_driven(fm.TimeFunction(lambda t: 0.0, lambda t: np.nan))),
     ["'crank'", "first derivative", "nan"]),
    ("driver-timefunction-acceleration-raises", lambda: cause_kept(lambda: run_pendulum(crank_driven(fm.TimeFunction(
        lambda t: 0.0, lambda t: 0.0, raises_inside(RuntimeError("no table"))))), RuntimeError),
     ["'crank'", "second derivative", "RuntimeError", "no table"]),
    ("driver-timefunction-rate-string",
     lambda: run_pendulum(crank_driven(fm.TimeFunction(lambda t: 0.0, lambda t: "x"))),
     ["'crank'", "first derivative", "'x'"]),
    ("driver-table-nan", lambda: crank_driven(fm.TimeFunction.table([0.0, 1.0], [0.0, np.nan])), ["table", "nan"]),
    ("driver-table-inf-time", lambda: crank_driven(fm.TimeFunction.table([0.0, np.inf], [0.0, 1.0])), ["table", "inf"]),
    ("driver-coordinate-shape", lambda: run_pendulum(coordinate_driven(lambda t: [0.5, 0.0])),
     ["'slide'", "shape", "(2,)"]),
    ("force-raises", lambda: cause_kept(lambda: run_pendulum(push_loaded(raises_inside(ValueError("bad load"))),),
                                        ValueError), ["force 'push'", "ValueError", "bad load", "t = 0"]),
    ("force-shape", lambda: run_pendulum(push_loaded(lambda t: (1.0, 2.0))), ["force 'push'", "(2,)", "3", "t = 0"]),
    ("force-nan", lambda: partial_result_kept(lambda: run_pendulum(push_loaded(fails_after(0.0025, (0, 0, 0), NAN3)))),
     ["force 'push'", "nan", "t = "]),
    ("force-string", lambda: run_pendulum(push_loaded(lambda t: "abc")), ["force 'push'", "'abc'"]),
    ("force-none", lambda: run_pendulum(push_loaded(lambda t: None)), ["force 'push'", "None"]),
    ("torque-inf", lambda: run_pendulum(push_loaded(lambda t: (0.0, 0.0, np.inf), fm.Torque)),
     ["torque 'push'", "inf", "t = 0"]),
    ("torque-matrix", lambda: run_pendulum(push_loaded(lambda t: np.eye(2), fm.Torque)), ["torque 'push'", "(2, 2)"]),
    ("torque-raises", lambda: cause_kept(lambda: run_pendulum(push_loaded(raises_inside(TypeError("no")), fm.Torque)),
                                         TypeError), ["torque 'push'", "TypeError", "t = 0"]),
    ("userforce-raises", lambda: cause_kept(lambda: run_pendulum(user_forced(raises_inside(KeyError("k")))), KeyError),
     ["user force 'user'", "KeyError", "t = 0"]),
    ("userforce-shape", lambda: run_pendulum(user_forced(lambda t, q, v: np.zeros(3))),
     ["user force 'user'", "(3,)", "7"]),
    ("userforce-nan", lambda: partial_result_kept(lambda: run_pendulum(user_forced(
        fails_after(0.0025, np.zeros(7), np.full(7, np.nan))))), ["user force 'user'", "nan", "t = "]),
    ("userforce-string", lambda: run_pendulum(user_forced(lambda t, q, v: "force")), ["user force 'user'", "'force'"]),
    ("userforce-jacobian-nan", lambda: run_pendulum(user_forced(lambda t, q, v: np.zeros(7),
                                                                lambda t, q, v: (np.full((7, 7), np.nan),
                                                                                 np.zeros((7, 7))))),
     ["user force 'user'", "jacobian", "nan", "t = "]),
    ("userforce-jacobian-shape", lambda: run_pendulum(user_forced(lambda t, q, v: np.zeros(7),
                                                                  lambda t, q, v: (np.zeros((3, 3)),
                                                                                   np.zeros((7, 7))))),
     ["user force 'user'", "jacobian", "(3, 3)", "(7, 7)"]),
    ("userforce-jacobian-not-a-pair", lambda: run_pendulum(user_forced(lambda t, q, v: np.zeros(7),
                                                                       lambda t, q, v: np.zeros((7, 7)))),
     ["user force 'user'", "jacobian", "pair"]),
    ("userforce-jacobian-raises", lambda: cause_kept(lambda: run_pendulum(user_forced(
        lambda t, q, v: np.zeros(7), raises_inside(ArithmeticError("singular")))), ArithmeticError),
     ["user force 'user'", "jacobian", "ArithmeticError", "singular"]),
    ("nodalforce-raises", lambda: cause_kept(lambda: run_pendulum(nodal_loaded(raises_inside(IndexError("i")))),
                                             IndexError), ["nodal force 'tip load'", "IndexError", "t = 0"]),
    ("nodalforce-nan", lambda: partial_result_kept(lambda: run_pendulum(nodal_loaded(
        fails_after(0.0025, (0, 1.0, 0), NAN3)))), ["nodal force 'tip load'", "nan", "t = "]),
    ("nodalforce-shape", lambda: run_pendulum(nodal_loaded(lambda t: (1.0,))), ["nodal force 'tip load'", "(1,)"]),
    ("motor-voltage-raises", lambda: cause_kept(lambda: run_pendulum(motor_driven(raises_inside(OSError("supply")))),
                                                OSError), ["DC motor 'motor'", "OSError", "supply", "t = 0"]),
    ("motor-voltage-nan", lambda: partial_result_kept(lambda: run_pendulum(motor_driven(
        fails_after(0.0025, 1.0, np.nan)))), ["DC motor 'motor'", "nan", "t = "]),
    ("motor-voltage-string", lambda: run_pendulum(motor_driven(lambda t: "12 V")), ["DC motor 'motor'", "'12 V'"]),
    ("motor-voltage-shape", lambda: run_pendulum(motor_driven(lambda t: [1.0, 2.0])),
     ["DC motor 'motor'", "(2,)"]),
    ("motor-voltage-table-inf", lambda: motor_driven(fm.TimeFunction.table([0.0, 1.0], [np.inf, 0.0])),
     ["table", "inf"]),
]

# -- result files and result accessors -----------------------------------------------------------


@functools.lru_cache(maxsize=None)
def pendulum_result():
    """A short pendulum run (system name 'pendulum', 7 coordinates, 6 constraint rows)."""
    return run_pendulum()


def in_tmp_dir(call):
    """``call(directory)`` in a fresh temporary directory, removed afterwards."""
    with tempfile.TemporaryDirectory() as d:
        return call(Path(d))


def load_written(name, write, **load_kw):
    """Write a file ``name`` with ``write(path)`` in a temporary directory and load it as a Result."""
    def go(d):
        write(d / name)
        return fm.Result.load(d / name, **load_kw)
    return in_tmp_dir(go)


def truncated_result(path):
    pendulum_result().save(path)
    path.write_bytes(path.read_bytes()[:200])


def result_with_nan(path):
    res = pendulum_result()
    np.savez(path, **{k: getattr(res, k) for k in fm.Result.ARRAYS}, message="completed")
    with np.load(path) as z:
        arrays = dict(z)
    arrays["q"] = arrays["q"].copy()
    arrays["q"][2, 0] = np.nan
    np.savez(path, **arrays)


def ragged_result(path):
    res = pendulum_result()
    np.savez(path, **{k: getattr(res, k)[:3] if k == "q" else getattr(res, k) for k in fm.Result.ARRAYS},
             message="completed")


def chunk_dir(write_chunk):
    """A chunk directory whose single chunk is written by ``write_chunk(path)``."""
    def write(d):
        d.mkdir()
        write_chunk(d / "chunk_00000.npz")
    return write


def chain_system():
    """A two-body chain (14 coordinates), system name 'chain'."""
    s = fm.System(gravity=(0, -9.81, 0), name="chain")
    a = s.add(fm.RigidBody(mass=1.0, inertia=(0.01,) * 3, position=(0.5, 0, 0), name="a"))
    b = s.add(fm.RigidBody(mass=1.0, inertia=(0.01,) * 3, position=(1.5, 0, 0), name="b"))
    s.add(fm.Revolute(s.ground, a, (0, 0, 0), (0, 0, 1), name="j1"))
    s.add(fm.Revolute(a, b, (1, 0, 0), (0, 0, 1), name="j2"))
    return s


def free_body_system():
    """One free body: 7 coordinates like the pendulum but 1 constraint row instead of 6."""
    s = fm.System(name="free")
    s.add(fm.RigidBody(mass=1.0, inertia=(0.01,) * 3, name="free bob"))
    return s


def loaded_without_system():
    return in_tmp_dir(lambda d: (pendulum_result().save(d / "r.npz"), fm.Result.load(d / "r.npz"))[1])


def bob_elsewhere():
    return pendulum(name="other")[1]


def saved_bob():
    return pendulum_result().system.bodies[0]


RUN_CASES += [
    ("load-missing-file", lambda: in_tmp_dir(lambda d: fm.Result.load(d / "missing.npz")), ["missing.npz"]),
    ("load-garbage", lambda: load_written("garbage.npz", lambda p: p.write_bytes(b"not a zip file")),
     ["garbage.npz"]),
    ("load-text-file", lambda: load_written("notes.txt", lambda p: p.write_text("t, q\n0, 1\n")), ["notes.txt"]),
    ("load-truncated", lambda: load_written("cut.npz", truncated_result), ["cut.npz"]),
    ("load-foreign", lambda: load_written("other.npz", lambda p: np.savez(p, a=np.arange(3))),
     ["other.npz", "'t'"]),
    ("load-empty-npz", lambda: load_written("empty.npz", lambda p: np.savez(p)), ["empty.npz"]),
    ("load-nan", lambda: load_written("nan.npz", result_with_nan), ["nan.npz", "nan", "q"]),
    ("load-ragged", lambda: load_written("ragged.npz", ragged_result), ["ragged.npz", "q", "3", "6"]),
    ("load-not-a-path", lambda: fm.Result.load(12.5), ["12.5"]),
    ("load-empty-directory", lambda: load_written("run", lambda p: p.mkdir()), ["run", "chunk"]),
    ("load-corrupt-chunk", lambda: load_written("run", chunk_dir(lambda p: p.write_bytes(b"\x00" * 64))),
     ["chunk_00000.npz"]),
    ("load-truncated-chunk", lambda: load_written("run", chunk_dir(truncated_result)), ["chunk_00000.npz"]),
    ("load-foreign-chunk", lambda: load_written("run", chunk_dir(lambda p: np.savez(p, t=np.arange(3.0)))),
     ["chunk_00000.npz", "'q'"]),
    ("load-wrong-system-coordinates", lambda: load_written("r.npz", pendulum_result().save, system=chain_system()),
     ["r.npz", "'chain'", "14", "7"]),
    ("load-wrong-system-constraints", lambda: load_written("r.npz", pendulum_result().save, system=free_body_system()),
     ["r.npz", "'free'", "6", "1"]),
    ("load-system-not-a-system", lambda: load_written("r.npz", pendulum_result().save, system="pendulum"),
     ["system", "'pendulum'"]),
    ("no-system-energy", lambda: loaded_without_system().energy(), ["system", "energy"]),
    ("no-system-reaction", lambda: loaded_without_system().reaction(pendulum()[0].joints[0]),
     ["system", "reaction"]),
    ("no-system-position", lambda: loaded_without_system().position(saved_bob()), ["system"]),
    ("no-system-constraint-violation", lambda: loaded_without_system().constraint_violation(),
     ["system", "constraint_violation"]),
    ("no-system-contact-force", lambda: loaded_without_system().contact_force(saved_bob()),
     ["system", "contact_force"]),
    ("save-into-missing-directory", lambda: in_tmp_dir(lambda d: pendulum_result().save(d / "no" / "r.npz")),
     ["r.npz"]),
    ("save-onto-directory", lambda: in_tmp_dir(lambda d: ((d / "taken.npz").mkdir(),
                                                      pendulum_result().save(d / "taken.npz"))), ["taken.npz"]),
    ("position-body-elsewhere", lambda: pendulum_result().position(bob_elsewhere()), ["'bob'", "not in"]),
    ("position-point-shape", lambda: pendulum_result().position(saved_bob(), (1.0, 2.0)),
     ["local_point", "(1.0, 2.0)"]),
    ("position-point-nan", lambda: pendulum_result().position(saved_bob(), (np.nan, 0, 0)), ["local_point", "nan"]),
    ("position-point-string", lambda: pendulum_result().position(saved_bob(), "tip"), ["local_point", "'tip'"]),
    ("velocity-point-shape", lambda: pendulum_result().velocity(saved_bob(), (1, 2, 3, 4)),
     ["local_point", "(1, 2, 3, 4)"]),
    ("velocity-point-inf", lambda: pendulum_result().velocity(saved_bob(), (0, np.inf, 0)), ["local_point", "inf"]),
    ("angular-velocity-frame", lambda: pendulum_result().angular_velocity(saved_bob(), frame="x"), ["frame", "'x'"]),
    ("angular-velocity-frame-none", lambda: pendulum_result().angular_velocity(saved_bob(), frame=None),
     ["frame", "None"]),
    ("reaction-joint-elsewhere", lambda: pendulum_result().reaction(pendulum()[0].joints[0]), ["'hinge'", "not in"]),
    ("reaction-not-a-joint", lambda: pendulum_result().reaction(saved_bob()), ["'bob'"]),
    ("contact-force-not-a-contact", lambda: pendulum_result().contact_force(pendulum_result().system.joints[0]),
     ["'hinge'", "contact"]),
    ("euler-parameters-not-a-body", lambda: pendulum_result().euler_parameters(3.5), ["3.5"]),
]

# == section: resume and output directories ===================================================
OUTPUT_CASES: list = []


# -- resume and output directories (flexmb/io/chunks.py): a run to resume is written first -------------
def _pend_model(body="bob", joint="hinge", spring=False, double=False):
    """A pendulum named 'pendulum' (optionally a double one, or with a rotational spring)."""
    s = fm.System(gravity=(0, -9.81, 0), name="pendulum")
    b = s.add(fm.RigidBody(1.0, (0.01, 0.01, 0.01), position=(0.5, 0, 0), name=body))
    s.add(fm.Revolute(s.ground, b, (0, 0, 0), (0, 0, 1), name=joint))
    if double:
        b2 = s.add(fm.RigidBody(1.0, (0.01, 0.01, 0.01), position=(1.5, 0, 0), name="bob2"))
        s.add(fm.Revolute(b, b2, (1.0, 0, 0), (0, 0, 1), name="hinge2"))
    if spring:
        s.add(fm.RotationalSpringDamper(s.ground, b, axis=(0, 0, 1), k=1.0, name="spring"))
    return s


def _written_run(tag: str, **sim) -> Path:
    """A finished 5-step pendulum run in a new temporary directory whose name ends with ``tag``."""
    run = Path(tempfile.mkdtemp(suffix=f"_{tag}")) / "run"
    fm.simulate(_pend_model(), sim.pop("t_end", 0.005), sim.pop("h", 1e-3), output=run, **sim)
    return run


def _resume_other(tag: str, model: dict | None = None, **sim):
    """Resume the run of ``_written_run(tag)`` with another model or other settings."""
    run = _written_run(tag)
    kw = dict(t_end=0.005, h=1e-3)
    kw.update(sim)
    fm.simulate(_pend_model(**(model or {})), kw.pop("t_end"), kw.pop("h"), output=run, resume=True, **kw)


def _damaged_run(tag: str, damage) -> Path:
    run = _written_run(tag)
    damage(run)
    return run


def _garbage(path: Path) -> None:
    path.write_bytes(b"not an npz file at all")


def _truncate(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def _an_existing_file() -> Path:
    path = Path(tempfile.mkdtemp()) / "out.txt"
    path.write_text("results of something else")
    return path


OUTPUT_CASES += [
    ("resume-other-model-nq", lambda: _resume_other("runA", dict(double=True)), ["runA", "nq = 7", "nq = 14"]),
    ("resume-other-body-names", lambda: _resume_other("runB", dict(body="weight")), ["runB", "bodies", "bob", "weight"]),
    ("resume-other-joint-names", lambda: _resume_other("runC", dict(joint="pivot")), ["runC", "joints", "hinge", "pivot"]),
    ("resume-other-force-elements", lambda: _resume_other("runD", dict(spring=True)), ["runD", "forces", "spring"]),
    ("resume-other-t_end", lambda: _resume_other("runE", t_end=0.01), ["runE", "t_end = 0.005", "t_end = 0.01"]),
    ("resume-other-h", lambda: _resume_other("runF", h=5e-4), ["runF", "h = 0.001", "h = 0.0005"]),
    ("resume-other-method", lambda: _resume_other("runG", method="hht"), ["runG", "method", "HHT"]),
    ("resume-other-rho_inf", lambda: _resume_other("runH", rho_inf=0.5), ["runH", "rho_inf=0.9", "rho_inf=0.5"]),
    ("resume-other-save_every", lambda: _resume_other("runI", save_every=2), ["runI", "save_every = 1", "save_every = 2"]),
    ("resume-adaptive-after-fixed", lambda: _resume_other("runJ", adaptive=True), ["runJ", "adaptive", "True"]),
    ("resume-without-output", lambda: fm.simulate(_pend_model(), 0.005, 1e-3, resume=True), ["resume", "output"]),
    ("output-is-an-existing-file", lambda: fm.simulate(_pend_model(), 0.005, 1e-3, output=_an_existing_file()),
     ["out.txt", "existing file"]),
    ("output-holds-results-no-resume", lambda: fm.simulate(_pend_model(), 0.005, 1e-3, output=_written_run("runK")),
     ["runK", "already holds results", "resume=True"]),
    ("chunk_steps-zero", lambda: fm.simulate(_pend_model(), 0.005, 1e-3, output=Path(tempfile.mkdtemp()) / "r",
                                             chunk_steps=0), ["chunk_steps", "0"]),
    ("chunk_steps-fraction", lambda: fm.simulate(_pend_model(), 0.005, 1e-3, output=Path(tempfile.mkdtemp()) / "r",
                                                 chunk_steps=2.5), ["chunk_steps", "2.5"]),
    ("output-with-rk45", lambda: fm.simulate(_pend_model(), 0.005, 1e-3, method="rk45",
                                             output=Path(tempfile.mkdtemp()) / "r"), ["rk45", "output"]),
    ("resume-with-dop853", lambda: fm.simulate(_pend_model(), 0.005, 1e-3, method="dop853", resume=True,
                                               output=_written_run("runL")), ["dop853", "resume=True"]),
    ("load-garbage-chunk", lambda: fm.load_result(_damaged_run("runM", lambda r: _garbage(r / "chunk_00000.npz"))),
     ["runM", "chunk_00000.npz", "corrupt"]),
    ("load-truncated-chunk", lambda: fm.load_result(_damaged_run("runN", lambda r: _truncate(r / "chunk_00000.npz"))),
     ["runN", "chunk_00000.npz", "truncated"]),
    ("load-foreign-chunk", lambda: fm.load_result(_damaged_run("runO", lambda r: np.savez(r / "chunk_00000.npz",
                                                                                         t=[0.0]))),
     ["chunk_00000.npz", "lacks", "'q'"]),
    ("load-duplicate-times", lambda: fm.load_result(_damaged_run(
        "runP", lambda r: (r / "chunk_00001.npz").write_bytes((r / "chunk_00000.npz").read_bytes()))),
     ["runP", "times must increase", "0.005"]),
    ("resume-garbage-state", lambda: fm.simulate(_pend_model(), 0.005, 1e-3, resume=True, output=_damaged_run(
        "runQ", lambda r: _garbage(r / "state.npz"))), ["runQ", "state.npz", "corrupt"]),
    ("resume-state-lacks-history", lambda: fm.simulate(_pend_model(), 0.005, 1e-3, resume=True, output=_damaged_run(
        "runR", lambda r: np.savez(r / "state.npz", t=0.0))), ["runR", "state.npz", "lacks", "'history'"]),
    ("resume-garbage-meta", lambda: fm.simulate(_pend_model(), 0.005, 1e-3, resume=True, output=_damaged_run(
        "runS", lambda r: (r / "meta.json").write_text("{not json"))), ["runS", "meta.json", "unreadable"]),
    ("resume-chunks-without-meta", lambda: fm.simulate(_pend_model(), 0.005, 1e-3, resume=True, output=_damaged_run(
        "runT", lambda r: (r / "meta.json").unlink())), ["runT", "no meta.json"]),
]


@pytest.mark.parametrize("call, words", [c[1:] for c in MODEL_CASES], ids=[c[0] for c in MODEL_CASES])
def test_model_construction(call, words):
    refused(call, words)


@pytest.mark.parametrize("call, words", [c[1:] for c in RUN_CASES], ids=[c[0] for c in RUN_CASES])
def test_runs_and_files(call, words):
    refused(call, words)


@pytest.mark.parametrize("call, words", [c[1:] for c in OUTPUT_CASES], ids=[c[0] for c in OUTPUT_CASES])
def test_output_directories(call, words):
    refused(call, words)


def test_catalogue_size():
    """The issue asks for at least 250 bad inputs across the public API."""
    assert len(MODEL_CASES) + len(RUN_CASES) + len(OUTPUT_CASES) >= 250
