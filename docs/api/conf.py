"""Sphinx configuration of the flexmb API reference (generated from the docstrings).

Build (one command, warnings are errors, broken cross-references fail)::

    .venv/bin/python -m sphinx -b html -W --keep-going -n docs/api docs/_build/api

``tests/test_api_docs.py`` runs this build. The pages list the public API (``flexmb.__all__`` and the public
modules of the subpackages); autosummary writes one page per object into ``docs/api/generated/`` (not kept
in git: the build regenerates it).
"""
from __future__ import annotations

import os
import sys
from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as _dist_version

_REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
if os.path.isdir(os.path.join(_REPO, "flexmb")):      # a source checkout: document it, installed or not
    sys.path.insert(0, _REPO)

project = "flexmb"
author = "the flexmb authors"
try:
    release = _dist_version("flexmb")
except PackageNotFoundError:          # a source tree that was never installed
    release = "0+unknown"

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",       # the docstrings' numpydoc / Google sections (Parameters, Returns, Args, ...)
    "sphinx.ext.mathjax",
]
root_doc = "index"
exclude_patterns = ["_build"]
templates_path = ["_templates"]

autosummary_generate = True
autosummary_imported_members = False
autodoc_default_options = {"members": True, "undoc-members": False}
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_mock_imports: list[str] = []
napoleon_numpy_docstring = True
napoleon_google_docstring = True
napoleon_use_rtype = False

# Broken references are errors (-n -W): every cross-reference to flexmb must resolve. References to other
# projects' objects (numpy, scipy, the standard library, ...) cannot resolve without their intersphinx
# inventories, which the build does not download (it runs offline, in CI and on a user's machine), so those
# targets are ignored by name; a reference to flexmb itself is never ignored.
nitpicky = True
EXTERNAL = r"(numpy|np|scipy|sp|pandas|pd|matplotlib|dask|distributed|meshio|h5py|numba|vtk|pyvista|sksparse)"
STDLIB = (r"(pathlib|typing|collections|os|io|enum|dataclasses|datetime|concurrent|threading|multiprocessing|"
          r"subprocess|types|abc|contextlib|warnings|json|zipfile|functools|itertools|logging|socket|ssl)")
nitpick_ignore_regex = [
    (r"py:.*", EXTERNAL + r"(\..*)?"),
    (r"py:.*", STDLIB + r"\..*"),
    (r"py:.*", r"(Path|PathLike|Callable|Iterable|Iterator|Sequence|Mapping|MutableMapping|Any|Self|Literal|"
               r"Optional|Union|NamedTuple|TypeVar|Generator|ndarray|ArrayLike|NDArray|DataFrame|"
               r"spmatrix|csr_matrix|csc_matrix|coo_matrix|sparray|Future|Client|Executor|TextIO|BinaryIO)"),
    # numpydoc's type vocabulary in "name : type" lines (array_like, optional, ...), not objects
    (r"py:class", r"(array_like|array-like|mapping|optional|sequence|callable|scalar|default.*)"),
]

html_theme = "alabaster"
html_static_path: list[str] = []
html_title = f"flexmb {release} API reference"

napoleon_use_ivar = True      # an "Attributes" section becomes fields, not a second description of each attribute


def _public_alias(app, env, node, contnode):
    """Resolve a reference the docstrings write as users do, ``flexmb.simulate`` or ``TimeFunction``, to the
    object's page under its defining module (``flexmb.solvers.simulate.simulate``). Only names that are
    documented here resolve, and an unqualified name only when exactly one documented object has it; anything
    else stays a broken reference (an error under ``-n -W``)."""
    if node.get("refdomain") != "py":
        return None
    import flexmb
    domain = env.get_domain("py")
    target = node["reftarget"].lstrip("~.")
    if target.startswith("flexmb.") and target.count(".") == 1 and target[7:] in flexmb.__all__:
        obj = getattr(flexmb, target[7:])
        target = getattr(obj, "__module__", "") + "." + getattr(obj, "__qualname__", target[7:])
    candidates = [name for name in domain.objects if name == target or name.endswith("." + target)]
    if len(candidates) != 1:
        return None
    name = candidates[0]
    entry = domain.objects[name]
    from sphinx.util.nodes import make_refnode
    return make_refnode(app.builder, node["refdoc"], entry.docname, entry.node_id, contnode, name)


def _summary_outside_literals(doc: list[str], document) -> str:
    """autosummary's one-line summary, but never cut inside a ``literal``: the docstrings write dot products as
    ``h_i . f_j``, whose " . " autosummary would take for the end of the first sentence."""
    summary = _extract_summary(doc, document)
    if summary.count("``") % 2:
        paragraph = []
        for line in doc:
            if not line.strip():
                break
            paragraph.append(line.strip())
        summary = " ".join(paragraph)
    return summary


import sphinx.ext.autosummary as _autosummary  # noqa: E402

_extract_summary = _autosummary.extract_summary
_autosummary.extract_summary = _summary_outside_literals


def setup(app):
    app.connect("missing-reference", _public_alias)
