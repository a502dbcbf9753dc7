"""The parameter values of a model, as a resume check: ``parameters(system)`` lists every numeric value each
body, joint and force element holds (masses, inertias, stiffnesses, geometry, initial state, mode sets, mesh
arrays, the numbers inside user functions) and the system's gravity, item by item, so that a run is resumed
only with the model that started it, and a difference names the item and the parameter.

Each item maps attribute paths (``inertia``, ``modes.K``, ``law.k``) to a value: numbers and small arrays
(at most ``INLINE`` entries) as themselves, larger arrays as ``"sha256:<hex> <dtype> <shape>"`` of their packed
bytes, references to other bodies and items as ``"<item 'name'>"``. Functions are fingerprinted by their
bytecode, constants, defaults and closure values (``"code:<hex>"``): an edited lambda is a changed parameter,
but a function that reads globals or files can change without its fingerprint. Attributes that only one of two
fingerprints has (values cached lazily) are not compared.
"""
from __future__ import annotations

import functools
import hashlib
import numbers
import types

import numpy as np

__all__ = ["parameters", "first_difference", "INLINE"]

INLINE = 16
"""Arrays with at most this many entries are stored as values (readable in meta.json and in the error)."""

_MAX_DEPTH = 8
_MAX_LEAVES = 20000


def _digest_array(a: np.ndarray) -> str:
    a = np.ascontiguousarray(a)
    h = hashlib.sha256(a.view(np.uint8).reshape(-1) if a.size else b"")
    return f"sha256:{h.hexdigest()[:32]} {a.dtype.str} {list(a.shape)}"


def _number(x):
    if isinstance(x, (bool, np.bool_)):
        return bool(x)
    if isinstance(x, numbers.Integral):
        return int(x)
    if isinstance(x, numbers.Real):
        x = float(x)
        return x if np.isfinite(x) else repr(x)          # nan != nan: compared as text
    return [_number(float(np.real(x))), _number(float(np.imag(x)))]


def _code_digest(code: types.CodeType) -> str:
    h = hashlib.sha256(code.co_code)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            h.update(_code_digest(c).encode())
        elif isinstance(c, frozenset):
            h.update(repr(sorted(map(repr, c))).encode())      # a set's order varies with the hash seed
        else:
            h.update(repr(c).encode())
    h.update(repr(code.co_names).encode())
    return h.hexdigest()[:32]


class _Walk:
    """Collects ``path -> value`` leaves of one item (see the module docstring)."""

    def __init__(self, root, is_item):
        self.root, self.is_item = root, is_item
        self.out: dict[str, object] = {}
        self.seen: set[int] = set()

    def leaf(self, path: str, value) -> None:
        if len(self.out) < _MAX_LEAVES:
            self.out[path] = value

    def walk(self, value, path: str, depth: int) -> None:
        if value is self.root and path:
            return
        if self.is_item(value):
            self.leaf(path, f"<{type(value).__name__} {getattr(value, 'name', '')!r}>")
        elif value is None or isinstance(value, str):
            self.leaf(path, value)
        elif isinstance(value, (numbers.Number, np.generic)) and not isinstance(value, np.void):
            self.leaf(path, _number(value))
        elif isinstance(value, np.ndarray):
            self.array(value, path, depth)
        elif isinstance(value, (list, tuple)):
            if value and all(isinstance(v, numbers.Number) for v in value):
                self.array(np.asarray(value), path, depth)
            else:
                self.leaf(path + "#len", len(value))
                for k, v in enumerate(value):
                    self.walk(v, f"{path}[{k}]", depth + 1)
        elif isinstance(value, dict):
            for k in sorted(value, key=repr):
                self.walk(value[k], f"{path}[{k!r}]", depth + 1)
        elif depth >= _MAX_DEPTH or id(value) in self.seen:
            self.leaf(path, f"<{type(value).__name__}>")
        else:
            self.seen.add(id(value))
            self.composite(value, path, depth)

    def array(self, a: np.ndarray, path: str, depth: int) -> None:
        if a.dtype.hasobject:
            self.leaf(path + "#shape", list(a.shape))
            for k, v in enumerate(a.reshape(-1)):
                self.walk(v, f"{path}[{k}]", depth + 1)
        elif a.size <= INLINE and a.dtype.kind in "biufc":
            self.leaf(path, [_number(x) for x in a.reshape(-1)] + ([list(a.shape)] if a.ndim != 1 else []))
        else:
            self.leaf(path, _digest_array(a))

    def composite(self, value, path: str, depth: int) -> None:
        sub = f"{path}." if path else ""
        if isinstance(value, types.FunctionType):
            self.leaf(sub + "code", "code:" + _code_digest(value.__code__))
            self.walk(value.__defaults__, sub + "defaults", depth + 1)
            self.walk(value.__kwdefaults__, sub + "kwdefaults", depth + 1)
            for name, cell in zip(value.__code__.co_freevars, value.__closure__ or ()):
                try:
                    self.walk(cell.cell_contents, f"{sub}closure.{name}", depth + 1)
                except ValueError:                   # an empty cell
                    pass
        elif isinstance(value, types.MethodType):
            self.walk(value.__func__, sub + "function", depth + 1)
            self.walk(value.__self__, sub + "self", depth + 1)
        elif isinstance(value, functools.partial):
            self.walk(value.func, sub + "function", depth + 1)
            self.walk(value.args, sub + "args", depth + 1)
            self.walk(value.keywords, sub + "keywords", depth + 1)
        elif isinstance(value, (type, types.BuiltinFunctionType, np.ufunc)):
            self.leaf(path, f"<{getattr(value, '__module__', '')}.{getattr(value, '__qualname__', value.__name__)}>")
        elif hasattr(value, "tocsr") and hasattr(value, "shape"):      # a scipy sparse matrix
            m = value.tocsr()
            self.leaf(path, [_digest_array(m.data), _digest_array(m.indices), _digest_array(m.indptr),
                             list(m.shape)])
        else:
            self.leaf(sub + "type", type(value).__name__)
            fields = dict(vars(value)) if hasattr(value, "__dict__") else {}
            for slot in getattr(type(value), "__slots__", ()):
                if hasattr(value, slot):
                    fields[slot] = getattr(value, slot)
            for name in sorted(fields):
                self.walk(fields[name], sub + name, depth + 1)


def _item_name(kind: str, item) -> str:
    return f"{kind} {item.name!r}"


def parameters(system) -> dict[str, dict[str, object]]:
    """``{"system": {...}, "body 'arm'": {...}, "joint 'pin'": {...}, "force element 'spring'": {...}}``: every
    parameter value of each item (see the module docstring); JSON-serializable."""
    from ..bodies.base import Body
    from ..forces.base import ForceElement
    from ..joints.base import Joint
    from ..system import System

    def is_item(x) -> bool:
        return isinstance(x, (Body, Joint, ForceElement, System))

    out = {"system": {"gravity": [_number(x) for x in np.asarray(system.gravity).reshape(-1)]}}
    for kind, items in (("body", system.bodies), ("joint", system.joints), ("force element", system.forces)):
        for item in items:
            w = _Walk(item, is_item)
            w.composite(item, "", 0)
            out[_item_name(kind, item)] = w.out
    return out


def first_difference(old: dict, new: dict) -> tuple[str, str, object, object] | None:
    """``(item, parameter, old value, new value)`` of the first parameter that differs between two
    :func:`parameters` (items in the new model's order; an item only one has is a difference of ``"(item)"``),
    or None when they agree on every parameter both hold."""
    for item, values in new.items():
        if item not in old:
            return item, "(item)", "absent", "present"
        before = old[item]
        for name, value in values.items():
            if name in before and before[name] != value:
                return item, name, before[name], value
    for item in old:
        if item not in new:
            return item, "(item)", "present", "absent"
    return None
