"""Named, unit-labelled time series of a simulation (HDF5 files, DataFrames, CSV; docs/guide-output.md).

A series is named by a path ``group/item/quantity`` and holds one row per saved time:

* ``time`` (s);
* ``bodies/<body>/position`` (m), ``euler_parameters`` (1, scalar first), ``rotation_matrix`` (1, body ->
  global, rows x columns ``R11`` ... ``R33``), ``velocity`` (m/s), ``angular_velocity`` (rad/s),
  ``acceleration`` (m/s^2), ``angular_acceleration`` (rad/s^2): the reference point (a rigid body's centre
  of mass), global axes, as ``Result.position`` etc. return them;
* ``bodies/<body>/modal_coordinates`` (1, one column per mode) of a flexible body;
* ``joints/<joint>/coordinates`` (``Result.joint_coordinates``: rad or m per column) of joints that have
  relative coordinates, ``joints/<joint>/reaction_force`` (N) and ``reaction_torque`` (N m) of every joint
  (``Result.reaction``);
* ``energy/kinetic``, ``potential``, ``work``, ``work_nc``, ``work_drivers``, ``total`` (J, ``Result.energy``).

Item names are stored escaped (``escape``) so that a ``/`` in a body's name cannot split its path.
"""
from __future__ import annotations

import csv
import functools
from dataclasses import dataclass
from pathlib import Path
from collections.abc import Mapping
from typing import Callable, Iterable

import numpy as np

from .._optional import require
from ..errors import ModelError

__all__ = ["SeriesInfo", "SeriesMap", "SeriesAccess", "escape", "unescape", "catalog", "select", "columns",
           "to_dataframe", "write_csv"]

XYZ = ("x", "y", "z")


@dataclass(frozen=True)
class SeriesInfo:
    """Labels of one series: ``components`` names its columns (empty for a scalar series, one value per
    time), ``units`` gives one unit per column (one unit for a scalar series)."""
    components: tuple[str, ...]
    units: tuple[str, ...]
    description: str


def escape(name: str) -> str:
    """An item name as one HDF5 path element: ``%`` -> ``%25``, ``/`` -> ``%2F``; ``.`` -> ``%2E``."""
    safe = name.replace("%", "%25").replace("/", "%2F")
    return "%2E" if safe == "." else safe


def unescape(element: str) -> str:
    """The item name of an ``escape``-d path element."""
    return element.replace("%2F", "/").replace("%2E", ".").replace("%25", "%")


def _info(components: Iterable[str], unit: str | tuple[str, ...], description: str) -> SeriesInfo:
    components = tuple(components)
    units = (unit,) * max(1, len(components)) if isinstance(unit, str) else tuple(unit)
    return SeriesInfo(components, units, description)


_BODY = {   # quantity -> (Result accessor, components, unit, description)
    "position": ("position", XYZ, "m", "global position of the body's reference point (rigid: centre of mass)"),
    "euler_parameters": ("euler_parameters", ("e0", "e1", "e2", "e3"), "1",
                         "Euler parameters, scalar first, body -> global"),
    "rotation_matrix": ("orientation", tuple(f"R{i}{j}" for i in "123" for j in "123"), "1",
                        "rotation matrix body -> global, rows x columns"),
    "velocity": ("velocity", XYZ, "m/s", "global velocity of the reference point"),
    "angular_velocity": ("angular_velocity", XYZ, "rad/s", "angular velocity, global axes"),
    "acceleration": ("acceleration", XYZ, "m/s^2", "global acceleration of the reference point"),
    "angular_acceleration": ("angular_acceleration", XYZ, "rad/s^2", "angular acceleration, global axes"),
}

_ENERGY = {"kinetic": "kinetic energy", "potential": "potential energy of gravity, springs and contacts",
           "work": "work of applied loads, dampers and drivers since the start (work_nc + work_drivers)",
           "work_nc": "work of applied loads, dampers and user forces since the start",
           "work_drivers": "work of driver constraints since the start",
           "total": "kinetic + potential - work: constant for an accurate run (Huston & Liu)"}


def _joint_labels(joint) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """Components and units of ``Result.joint_coordinates(joint)`` (flexmb/joints/coordinates.py), None for
    joints without relative coordinates (fixed, distance, coordinate drivers)."""
    from ..joints.driver import Driver
    from ..joints.types import Cylindrical, Planar, Prismatic, Revolute, Spherical, Universal
    if isinstance(joint, Driver):
        return None if joint.joint is None else _joint_labels(joint.joint)
    table = ((Revolute, (), ("rad",)), (Prismatic, (), ("m",)),
             (Cylindrical, ("angle", "displacement"), ("rad", "m")),
             (Universal, ("theta_1", "theta_2"), ("rad", "rad")), (Spherical, XYZ, ("rad",) * 3),
             (Planar, ("f", "g", "angle"), ("m", "m", "rad")))
    return next(((c, u) for cls, c, u in table if isinstance(joint, cls)), None)


def catalog(res) -> dict[str, tuple[SeriesInfo, Callable[[], np.ndarray]]]:
    """Every series of a Result with a system attached: name -> (labels, function computing the values).
    Reactions of all joints and the energies are computed once, on first use."""
    system = res.system
    entries: dict[str, tuple[SeriesInfo, Callable[[], np.ndarray]]] = {
        "time": (_info((), "s", "saved times"), lambda: res.t)}
    for body in system.bodies:
        base = f"bodies/{escape(body.name)}"
        for quantity, (accessor, comps, unit, text) in _BODY.items():
            entries[f"{base}/{quantity}"] = (_info(comps, unit, text),
                                             functools.partial(getattr(res, accessor), body))
        if body.n_modes:
            entries[f"{base}/modal_coordinates"] = (
                _info((f"eta{k + 1}" for k in range(body.n_modes)), "1", "modal amplitudes (scale the mode shapes)"),
                functools.partial(res.modal_coordinates, body))
    reactions = functools.cache(res.reactions)
    for k, joint in enumerate(system.joints):
        base = f"joints/{escape(joint.name)}"
        labels = _joint_labels(joint)
        if labels is not None:
            entries[f"{base}/coordinates"] = (_info(labels[0], labels[1], "relative coordinates from the start"),
                                              functools.partial(res.joint_coordinates, joint))
        entries[f"{base}/reaction_force"] = (_info(XYZ, "N", "reaction force on the joint's second body, global"),
                                             lambda k=k: reactions()[0][:, k])
        entries[f"{base}/reaction_torque"] = (_info(XYZ, "N m", "reaction torque about the joint point, global"),
                                              lambda k=k: reactions()[1][:, k])
    energy = functools.cache(res.energy)
    for kind, text in _ENERGY.items():
        entries[f"energy/{kind}"] = (_info((), "J", text), lambda kind=kind: energy()[kind])
    return entries


def select(available: Iterable[str], series: Iterable[str] | None, owner: str) -> list[str]:
    """The series names asked for (all when ``series`` is None), checked against ``available``
    (ModelError naming the unknown name and ``owner``, the method that was called)."""
    available = list(available)
    if series is None:
        return available
    if isinstance(series, str):
        series = [series]
    chosen = list(series)
    for name in chosen:
        if name not in available:
            raise ModelError(f"{owner}: no series named {name!r}; series are named like "
                             f"{available[:4]} ... (all: {available})")
    return chosen


def flat_name(name: str, component: str = "") -> str:
    """Column name ``item.quantity.component`` (``arm.position.x``, ``energy.kinetic``, ``time``)."""
    parts = name.split("/")
    if parts[0] in ("bodies", "joints"):
        parts = [unescape(parts[1]), *parts[2:]]
    return ".".join([*parts, component] if component else parts)


def columns(values: dict[str, np.ndarray], info: dict[str, SeriesInfo],
            n_times: int) -> tuple[list[tuple], np.ndarray]:
    """The chosen series side by side: column labels ``(series, component, unit)`` and an array
    (n_times, n_columns); matrices are flattened row by row."""
    labels, blocks = [], []
    for name, v in values.items():
        n = v.shape[0]
        blocks.append(v.reshape(n, -1))
        comps = info[name].components or ("",)
        labels += [(name, c, u) for c, u in zip(comps, info[name].units)]
    return labels, np.hstack(blocks) if blocks else np.empty((n_times, 0))


def to_dataframe(t: np.ndarray, values: dict[str, np.ndarray], info: dict[str, SeriesInfo], layout: str):
    """A pandas DataFrame indexed by time (s): ``layout="flat"`` columns ``arm.position.x`` with the units
    in ``df.attrs["units"]`` (column -> unit), ``layout="multiindex"`` columns (series, component, unit)."""
    pd = require("pandas", "frames", "Result.to_dataframe")
    if layout not in ("flat", "multiindex"):
        raise ModelError(f"to_dataframe: layout must be 'flat' or 'multiindex', got {layout!r}")
    values = {k: v for k, v in values.items() if k != "time"}
    labels, data = columns(values, info, np.size(t))
    index = pd.Index(np.asarray(t), name="time")
    if layout == "multiindex":
        cols = pd.MultiIndex.from_tuples(labels, names=["series", "component", "unit"])
        frame = pd.DataFrame(data, index=index, columns=cols)
    else:
        names = [flat_name(s, c) for s, c, _ in labels]
        frame = pd.DataFrame(data, index=index, columns=names)
        frame.attrs["units"] = {"time": "s", **{n: u for n, (_, _, u) in zip(names, labels)}}
    return frame


def write_csv(path, t: np.ndarray, values: dict[str, np.ndarray], info: dict[str, SeriesInfo]) -> Path:
    """Write ``time`` and the chosen series to a CSV file, one row per saved time; the header names each
    column ``arm.position.x [m]``. Floats are written with repr precision (round trip exact)."""
    values = {k: v for k, v in values.items() if k != "time"}
    labels, data = columns(values, info, np.size(t))
    p = Path(path)
    try:
        with open(p, "w", newline="") as f:
            out = csv.writer(f)
            out.writerow(["time [s]"] + [f"{flat_name(s, c)} [{u}]" for s, c, u in labels])
            for k, row in enumerate(data):
                out.writerow([repr(float(t[k]))] + [repr(float(x)) for x in row])
    except OSError as exc:
        raise ModelError(f"cannot write the CSV file {str(p)!r}: {exc.strerror or exc}") from exc
    return p


class SeriesMap(Mapping):
    """Named series of one result, read-only: name -> values (one row per saved time).

    ``entries`` gives each series as its array or as a function computing it, called on first use and
    kept. An unknown name is a ModelError naming ``owner`` and listing the names that exist (``select``).
    The map is also callable: ``series(name)`` is ``series[name]``.
    """

    def __init__(self, entries: dict[str, np.ndarray | Callable[[], np.ndarray]], owner: str):
        self._entries = dict(entries)
        self.owner = owner

    def __getitem__(self, name: str) -> np.ndarray:
        if not (isinstance(name, str) and name in self._entries):
            select(self._entries, [name], self.owner)          # the ModelError listing the names
        value = self._entries[name]
        if callable(value):
            value = self._entries[name] = value()
        return value

    __call__ = __getitem__

    def __contains__(self, name) -> bool:
        return name in self._entries

    def get(self, name, default=None):
        """The series ``name``, or ``default`` when there is none by that name."""
        return self[name] if name in self._entries else default

    def __iter__(self):
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        return f"<{len(self)} series of {self.owner}: {', '.join(list(self)[:3])} ...>"


class SeriesAccess:
    """``obj[name]``: the named series ``obj.series[name]`` -- one rule for a live Result and a result file
    read without its System (flexmb.io.hdf5.SavedResult); both define ``series`` as a :class:`SeriesMap`."""

    series: SeriesMap

    def __getitem__(self, name: str) -> np.ndarray:
        return self.series[name]
