"""Which compiled form of an entry point a model runs on, and the notice of a compile a user meets.

The compiled step (flexmb/compiled/blocks.py, with ``equations.equations``) and the energy rows
(flexmb/compiled/energy.py) exist in two forms (docs/architecture.md §2):

* the universal one: every family's part of the model is present, with empty arrays for the families a model
  lacks, so one compile serves every model; ``flexmb compile-kernels`` makes it (a few minutes, once);
* one per set of families present: the absent families' parts are None and numba leaves their code out of the
  compile. It compiles in under a minute (a rigid model: about 25 s on 2 cores) and its steps are faster (every
  call passes the fields of every array of the model, and the universal one has about 120 arrays).

**The rule** (:func:`universal`), under :data:`variant`: ``"auto"`` (the default) takes the specialized form when
flexmb has compiled it before, else the universal form when flexmb has compiled that, else compiles the
specialized form; ``"specialized"`` and ``"universal"`` fix the choice (environment variable ``FLEXMB_STEP``).
"Compiled before" is read from flexmb's own record of the compiles it made (:class:`KernelRecord`, a small JSON
file beside numba's cache), never from numba's cache internals: each compile goes through numba's public
``Dispatcher.compile(signature)``, and its signature, form and duration are recorded. A record is void when the
kernels' source, numba, Python or the CPU differ from those it was made with. A compile that is not on record is
announced on stderr once, before it starts, with the families it covers and its expected duration. If numba's
cache is deleted by hand while the record stays, the next run compiles again without the notice (delete
``flexmb-kernels.json`` beside it too, or run ``flexmb compile-kernels``).
"""
from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from pathlib import Path

from . import notice

__all__ = ["variant", "universal", "KernelRecord", "ensure_compiled"]

variant = os.environ.get("FLEXMB_STEP", "auto")
"""``"auto"``, ``"universal"`` or ``"specialized"`` (module docstring)."""

TYPICAL_SECONDS = {("run_block", "specialized"): 40.0, ("run_block", "universal"): 300.0,
                   ("equations", "specialized"): 25.0, ("equations", "universal"): 200.0,
                   ("energy_rows", "specialized"): 5.0, ("energy_rows", "universal"): 20.0}
"""Expected duration (s) of a compile of an entry point in each form before one is on record: the largest measured
on a 2-core machine beside other work (the step specialized to a rigid pendulum 26-41 s, the universal step 3-5
minutes, the energy rows of a rigid model 2.5 s)."""

RECORD_NAME = "flexmb-kernels.json"


def universal(function, args: tuple, specialized_args: tuple, families: str) -> bool:
    """Whether ``function`` (an ``@njit`` entry point) runs on the universal model (in ``args``) rather than the
    specialized one (in ``specialized_args``), under :data:`variant` (module docstring); the chosen form is
    compiled now if it is not on record (with a notice naming ``families``, the families the specialized form
    covers)."""
    if variant not in ("auto", "universal", "specialized"):
        from ..errors import ModelError
        raise ModelError(f"FLEXMB_STEP / specialization.variant must be 'auto', 'universal' or "
                         f"'specialized', not {variant!r}")
    record = KernelRecord.load()
    if variant == "auto":
        use = not record.has(function, specialized_args) and record.has(function, args)
    else:
        use = variant == "universal"
    ensure_compiled(function, args if use else specialized_args,
                    "every element family (the universal form)" if use else families,
                    "universal" if use else "specialized", record)
    return use


def ensure_compiled(function, args: tuple, families: str, form: str, record: "KernelRecord | None" = None) -> None:
    """Compile ``function`` for the types of ``args`` through numba's ``Dispatcher.compile`` (it loads numba's disk
    cache when that holds the code) unless :class:`KernelRecord` has it, announcing the compile on stderr first;
    the compile's duration is recorded."""
    record = KernelRecord.load() if record is None else record
    sig = _signature(args)
    key = record.key(function, sig)
    if key in record.entries:
        return
    seconds = record.typical(function, form)
    what = "the time step" if function.__name__ == "run_block" else f"'{function.__name__}'"
    print(f"flexmb: compiling {what} for {families} (one time, about {seconds:.0f} s; later runs load it from the "
          f"disk cache)", file=sys.stderr, flush=True)
    t0 = time.perf_counter()
    with notice.announced():
        function.compile(sig)
    record.add(key, function, form, families, time.perf_counter() - t0)


def _signature(args: tuple) -> tuple:
    """numba's argument types of ``args`` (public ``numba.typeof``): the signature a call with them compiles."""
    from numba import typeof
    return tuple(typeof(a) for a in args)


class KernelRecord:
    """flexmb's record of the compiled forms it has made: ``{key: {function, form, families, seconds}}`` in
    ``flexmb-kernels.json`` beside numba's cache (:meth:`path`), valid for one :meth:`stamp`."""

    def __init__(self, path: Path, entries: dict):
        self.path, self.entries = path, entries

    @staticmethod
    def path() -> Path:
        """``NUMBA_CACHE_DIR`` when set (numba caches there), else the ``__pycache__`` beside this module when it
        is writable (numba caches there), else ``~/.cache/flexmb``."""
        from numba import config
        if config.CACHE_DIR:
            return Path(config.CACHE_DIR) / RECORD_NAME
        here = Path(__file__).resolve().parent / "__pycache__"
        try:
            here.mkdir(exist_ok=True)
            if os.access(here, os.W_OK):
                return here / RECORD_NAME
        except OSError:
            pass
        digest = hashlib.sha1(str(here).encode()).hexdigest()[:12]
        return Path.home() / ".cache" / "flexmb" / f"kernels-{digest}.json"

    @staticmethod
    def stamp() -> str:
        """What a record is valid for: a digest of the compiled kernels' source (every module of flexmb with an
        ``@njit`` function), numba's and Python's versions and the CPU numba compiles for."""
        return _stamp()

    @classmethod
    def load(cls) -> "KernelRecord":
        """The record on disk, or an empty one when it is missing, unreadable or made for another stamp."""
        path = cls.path()
        try:
            data = json.loads(path.read_text())
            entries = data["entries"] if data.get("stamp") == cls.stamp() else {}
        except (OSError, ValueError, KeyError, TypeError):
            entries = {}
        return cls(path, dict(entries))

    @staticmethod
    def key(function, sig: tuple) -> str:
        text = f"{function.__module__}.{function.__qualname__}{sig}"
        return hashlib.sha1(text.encode()).hexdigest()

    def has(self, function, args: tuple) -> bool:
        """Whether the form of ``function`` for the types of ``args`` is on record."""
        return self.key(function, _signature(args)) in self.entries

    def typical(self, function, form: str) -> float:
        """The longest recorded compile (s) of ``function`` in ``form``, else :data:`TYPICAL_SECONDS`."""
        done = [e["seconds"] for e in self.entries.values() if e["function"] == function.__name__ and e["form"] == form]
        return max(done) if done else TYPICAL_SECONDS.get((function.__name__, form), 60.0)

    def add(self, key: str, function, form: str, families: str, seconds: float) -> None:
        """Record a compile and write the record (merged with what other processes wrote since it was read; a
        record that cannot be written is skipped: the next run then announces a compile that loads from numba's
        cache)."""
        entry = {"function": function.__name__, "form": form, "families": families, "seconds": round(seconds, 2)}
        self.entries[key] = entry
        latest = KernelRecord.load()
        latest.entries[key] = entry
        self.entries.update(latest.entries)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
            tmp.write_text(json.dumps({"stamp": self.stamp(), "entries": self.entries}, indent=1))
            os.replace(tmp, self.path)
        except OSError:
            pass


_STAMP: list = []


def _stamp() -> str:
    if not _STAMP:
        import platform

        import llvmlite.binding as llvm
        import numba
        root = Path(__file__).resolve().parent.parent
        h = hashlib.sha1()
        for f in sorted(root.rglob("*.py")):
            text = f.read_bytes()
            if b"@njit" in text:
                h.update(str(f.relative_to(root)).encode())
                h.update(text)
        h.update(f"{numba.__version__} {platform.python_version()} {llvm.get_host_cpu_name()}".encode())
        _STAMP.append(h.hexdigest())
    return _STAMP[0]
