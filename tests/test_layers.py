"""Layers you can see (issue 24, item 3): every module of ``flexmb/`` imports only modules of its own layer or of
layers below it, and no module imports itself back through others (no import cycle), in ``flexmb/`` and in
``verification/``.

The layer order is written once, in ``docs/architecture.md``, section "Layers" (the fenced block after the line
``<!-- layers: read by tests/test_layers.py -->``): one layer a line, top first, ``name: module module ...``
with module paths relative to ``flexmb/`` (a package stands for all its modules; the longest listed prefix
decides; ``__init__`` is the package ``flexmb`` itself, the public API). Every module must be listed: a new module
is placed on purpose.

An import is any ``import``/``from ... import`` statement anywhere in a module (inside functions and
``TYPE_CHECKING`` blocks too: an import deferred to a function is still a dependency) and any
``lazy_module("flexmb...")`` / ``importlib.import_module("flexmb...")`` call with a literal name.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parents[1]
MARKER = "<!-- layers: read by tests/test_layers.py -->"


class Import(NamedTuple):
    """One import of module ``source`` (dotted name) at ``line``: the imported module ``target``."""
    source: str
    target: str
    line: int


def modules(package: str) -> dict[str, Path]:
    """Dotted module name -> file, for every ``.py`` file of ``package`` (a directory under the repository root);
    a package's ``__init__.py`` is the package's name."""
    out = {}
    for path in sorted((ROOT / package).rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _owner(name: str, known: dict[str, Path]) -> str | None:
    """The module that ``name`` (a module or a name inside one) belongs to: its longest known prefix."""
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def imports(package: str) -> list[Import]:
    """Every import between modules of ``package`` (see the module docstring for what counts)."""
    known = modules(package)
    out = []
    for name, path in known.items():
        here = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            targets = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = here.split(".")[:len(here.split(".")) - node.level + 1]
                    full = ".".join(base + ([node.module] if node.module else []))
                else:
                    full = node.module or ""
                # "from pkg import sub": the submodule when it is one, else a name defined in pkg
                targets = [f"{full}.{a.name}" if f"{full}.{a.name}" in known else full for a in node.names]
            elif (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)
                  and isinstance(node.args[0].value, str)
                  and getattr(node.func, "attr", getattr(node.func, "id", "")) in ("lazy_module", "import_module")):
                targets = [node.args[0].value]
            for t in targets:
                target = _owner(t, known) if t.split(".")[0] == package else None
                if target is not None and target != name:
                    out.append(Import(name, target, node.lineno))
    return sorted(set(out))


def layer_table() -> list[tuple[str, list[str]]]:
    """``(layer name, module prefixes)`` bottom first, read from docs/architecture.md, section "Layers"."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    assert MARKER in text, f"docs/architecture.md has lost the layer table (the line {MARKER!r})"
    block = text.split(MARKER, 1)[1].split("```", 2)[1]
    rows = []
    for line in block.splitlines()[1:]:
        m = re.match(r"\s*([\w /-]+?)\s*:\s*(.+)$", line)
        if m:
            rows.append((m.group(1), re.findall(r"[\w.]+", m.group(2).split("#")[0])))
    assert len(rows) >= 10, rows
    return rows[::-1]


def layer_of(table: list[tuple[str, list[str]]]) -> dict[str, int]:
    """Module name -> layer index (0 = bottom) of every module of flexmb/; unlisted modules are left out."""
    prefix = {}
    for i, (_, mods) in enumerate(table):
        for m in mods:
            key = "flexmb" if m == "__init__" else f"flexmb.{m}"
            assert key not in prefix, f"{m} is listed in two layers"
            prefix[key] = i
    out = {}
    for name in modules("flexmb"):
        key = name
        while key not in prefix and key.count(".") > 1:     # "flexmb" (__init__) is the package, not a prefix
            key = key.rpartition(".")[0]
        if key in prefix:
            out[name] = prefix[key]
    return out


def upward(table) -> list[Import]:
    """The imports that point up the layer order (modules without a layer: test_every_module_has_a_layer)."""
    layer = layer_of(table)
    return [i for i in imports("flexmb") if layer.get(i.target, -1) > layer.get(i.source, len(table))]


def cycles(package: str, limit: int = 200) -> list[list[str]]:
    """Every import cycle of ``package`` (up to ``limit``), each as the module list ``a -> b -> ... -> a``
    beginning at its smallest name: a depth-first search from each module ``s`` through larger names only
    finds each elementary cycle once (the graphs here have a few hundred edges)."""
    graph: dict[str, set[str]] = {m: set() for m in modules(package)}
    for i in imports(package):
        graph[i.source].add(i.target)
    out: list[list[str]] = []

    def walk(path: list[str]) -> None:
        for w in sorted(graph[path[-1]]):
            if len(out) >= limit:
                return
            if w == path[0]:
                out.append([*path, w])
            elif w > path[0] and w not in path:
                walk([*path, w])

    for s in sorted(graph):
        walk([s])
    return out


def test_every_module_has_a_layer():
    layer = layer_of(layer_table())
    missing = sorted(set(modules("flexmb")) - set(layer))
    assert not missing, f"modules with no layer in docs/architecture.md (section 'Layers'): {missing}"


def test_no_import_points_up():
    table = layer_table()
    names = [n for n, _ in table]
    layer = layer_of(table)
    bad = [f"{i.source} (line {i.line}, layer {names[layer[i.source]]}) imports {i.target} "
           f"(layer {names[layer[i.target]]})" for i in upward(table)]
    assert not bad, f"{len(bad)} imports point up the layers:\n" + "\n".join(bad)


def test_no_import_cycle_in_flexmb():
    found = cycles("flexmb")
    assert not found, f"{len(found)} import cycles:\n" + "\n".join(" -> ".join(c) for c in found)


def test_no_import_cycle_in_verification():
    found = cycles("verification")
    assert not found, f"{len(found)} import cycles:\n" + "\n".join(" -> ".join(c) for c in found)


def test_the_checks_can_fail():
    """The graph sees what is there (a check that cannot fail proves nothing): a known import is found, the same
    table read upside down finds most imports pointing up, and a made-up import back down-to-up is a cycle."""
    table = layer_table()
    edges = imports("flexmb")
    assert len(edges) > 300
    assert any(i.source == "flexmb.system" and i.target == "flexmb.assembly" for i in edges)
    assert len(upward(table[::-1])) > 200
    without_energies = [(name, [m for m in mods if m != "energies"]) for name, mods in table]
    assert "flexmb.energies" in layer_of(table) and "flexmb.energies" not in layer_of(without_energies)
    assert any(i.source == "flexmb.compiled.step" and i.target.startswith("flexmb.compiled.") for i in edges)
