"""Command line: ``flexmb info``, ``flexmb verify``, ``flexmb modes`` and ``flexmb --version``
(also as ``python -m flexmb``)."""
from __future__ import annotations

import argparse
import importlib
import os
import platform
import sys
import time
from pathlib import Path


def _version(module: str) -> str:
    try:
        from importlib.metadata import version
        return version(module)
    except Exception:
        try:
            return getattr(importlib.import_module(module), "__version__", "?")
        except Exception:
            return "not installed"


def _kernel_cache_line() -> str:
    """The state of numba's on-disk cache of flexmb's kernels, read from the cache's index files
    (``*.nbi`` in the ``__pycache__`` folders beside the modules): how many there are, and how many are
    older than their module's source (numba recompiles those on first use)."""
    from flexmb.warm import cached_kernel_files
    if os.environ.get("NUMBA_CACHE_DIR"):
        return f"in NUMBA_CACHE_DIR={os.environ['NUMBA_CACHE_DIR']} (not inspected)"
    index = cached_kernel_files("nbi")
    if not index:
        return ("not compiled (no cached kernels): run 'flexmb compile-kernels' once, "
                "or a model's first run compiles what it needs")
    stale = sum(1 for f in index if _source_is_newer(f))
    state = "compiled" if stale == 0 else f"partly stale: {stale} older than their source, recompiled on first use"
    return f"{state} ({len(index)} index files *.nbi in flexmb's __pycache__ folders)"


def _record_line() -> str:
    """The forms of the compiled step that flexmb has compiled (flexmb/compiled/specialization.py ``KernelRecord``):
    whether the universal one is among them and the families of the specialized ones."""
    from flexmb.compiled.specialization import KernelRecord
    record = KernelRecord.load()
    steps = [e for e in record.entries.values() if e["function"] == "run_block"]
    if not steps:
        return f"none ({record.path}); a model's first run compiles its step (under a minute, announced)"
    special = sorted({e["families"] for e in steps if e["form"] == "specialized"})
    universal = any(e["form"] == "universal" for e in steps)
    return (f"universal {'yes' if universal else 'no'}; specialized for {len(special)} family sets"
            + "".join(f"\n    {f}" for f in special))


def _source_is_newer(index_file: str) -> bool:
    """Whether the module a numba index file ``pkg/__pycache__/module.func-line.pyXY.nbi`` caches is newer."""
    folder, name = os.path.split(index_file)
    source = os.path.join(os.path.dirname(folder), name.split(".", 1)[0] + ".py")
    return os.path.exists(source) and os.path.getmtime(source) > os.path.getmtime(index_file)


def cmd_info(_args) -> int:
    import flexmb
    from flexmb import linalg
    print(f"flexmb {flexmb.__version__} on Python {platform.python_version()} ({platform.machine()})")
    for pkg in ("numpy", "scipy", "numba", "meshio", "h5py", "tqdm"):
        print(f"  {pkg:14s} {_version(pkg)}")
    print(f"numba kernel cache: {_kernel_cache_line()}")
    print(f"compiled step forms on record: {_record_line()}")
    from flexmb._optional import EXTRAS
    print("optional (pip install 'flexmb[all]'):")
    for extra, packages in EXTRAS.items():
        for pkg in packages:
            print(f"  {pkg:14s} {_version(pkg)} (extra '{extra}')")
    print("linear-algebra backends:")
    for role, name in linalg.backends().items():
        print(f"  {role:15s} {name}")
    if not linalg.cholmod_available():
        why = linalg.cholmod_import_error() or "disabled (FLEXMB_NO_CHOLMOD or set_cholmod(False))"
        print(f"  CHOLMOD not active: {why}; sparse SPD systems use SuperLU")
    return 0


def cmd_compile_kernels(args) -> int:
    """``flexmb compile-kernels``: compile the numba kernels into the disk cache (one-time)."""
    from flexmb.warm import clean_cache, compile_kernels
    if args.clean:
        print(f"removed {clean_cache()} cached kernel files", flush=True)
    print("compiling flexmb's kernels (once per installation; later runs load them from the cache) ...", flush=True)
    wall = compile_kernels(verbose=True, jobs=args.jobs)
    print(f"done in {wall:.1f} s")
    return 0


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text}")
    return value


def _run_text(suites: list[str], quick: bool | None) -> str:
    """``"a report of suites rigid, fem (quick subset)"``-like description of a verification run."""
    kind = {True: " (quick subset)", False: " (full)", None: ""}[quick]
    return f"a report of suite{'s' if len(suites) != 1 else ''} {', '.join(suites)}{kind}"


def _report_clash(out: Path, suites: list[str], quick: bool) -> str:
    """What ``out/results.json`` holds, if it is a report of other suites than ``suites`` or of the other
    kind (``--quick`` against full); ``""`` when there is none or it is a report of this same run. A report
    written before results.json recorded ``quick`` is compared by its suites alone."""
    path = out / "results.json"
    if not path.is_file():
        return ""
    import json
    try:
        doc = json.loads(path.read_text())
        held, held_quick = list(doc["suites"]), doc.get("quick")
    except (ValueError, KeyError, TypeError, OSError):
        return "a results.json that is not a flexmb verification report"
    if sorted(held) == sorted(suites) and held_quick in (None, quick):
        return ""
    return _run_text(held, held_quick)


def cmd_verify(args) -> int:
    try:
        import verification
        from verification import framework
    except ImportError as exc:
        print(f"flexmb verify: the verification package is not installed ({exc})", file=sys.stderr)
        return 2
    names = args.suites or list(verification.SUITES)
    unknown = [n for n in names if n not in verification.SUITES]
    if unknown:
        print(f"flexmb verify: unknown suite(s) {unknown}; available: {sorted(verification.SUITES)}", file=sys.stderr)
        return 2
    from flexmb._optional import require
    from flexmb.errors import MissingDependencyError
    try:
        require("matplotlib", "plots", "flexmb verify (the report's figures)").use("Agg")
    except MissingDependencyError as exc:
        print(f"flexmb verify: {exc}", file=sys.stderr)
        return 2
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        print(f"flexmb verify: --out {out} is a file, not a directory; name a directory for the report",
              file=sys.stderr)
        return 2
    clash = _report_clash(out, names, args.quick)
    if clash and not args.force:
        print(f"flexmb verify: {out}/ holds {clash}; this run ({_run_text(names, args.quick)}) would replace it. "
              f"Give another --out DIR, or --force to replace it.", file=sys.stderr)
        return 2
    from flexmb.solvers.progress import set_automatic
    set_automatic(False)             # the cases' runs show no bars of their own: verify prints a line per case
    started = framework.now_iso()
    t0 = time.perf_counter()
    live = sys.stdout.isatty()        # on a terminal, also show the case that is running (overwritten)

    def progress(line: str) -> None:
        print(("\r\033[K" if live else "") + line, flush=True)

    def on_start(line: str) -> None:
        print("\r\033[K" + line, end="", flush=True)

    print(f"flexmb verify: {len(names)} suite{'s' if len(names) != 1 else ''} ({', '.join(names)})"
          f"{', quick subset' if args.quick else ''}; report in {out}/", flush=True)
    jobs = args.jobs if args.jobs is not None else (os.cpu_count() or 1)
    results = framework.run_suites(names, args.quick, progress=progress,
                                   on_start=on_start if live and jobs == 1 else None, jobs=jobs)
    wall = time.perf_counter() - t0
    framework.write_report(out, results, wall, started, quick=args.quick)
    failed = [f"{s}/{c.name}" for s, cs in results.items() for c in cs if not c.passed]
    total = sum(len(cs) for cs in results.values())
    print(f"{total - len(failed)} passed, {len(failed)} failed in {int(wall) // 60}:{int(wall) % 60:02d}; "
          f"report: {out / 'report.html'}, {out / 'results.json'}")
    if failed:
        print("failed: " + ", ".join(failed))
    return 1 if failed else 0


def cmd_modes(args) -> int:
    """``flexmb modes``: frequencies of a mesh on screen (or JSON); with ``-o`` its ModeSet (.npz)."""
    import json

    from flexmb.errors import FlexmbError
    from flexmb.fem.materials import Material
    from flexmb.fem.mesh import read_mesh
    from flexmb.fem.model import FEModel
    from flexmb.fem.sections import BeamSection
    from flexmb.reduction import craig_bampton, free_free_modes

    t0 = time.perf_counter()
    try:
        values = {}
        for option, text, count in (("--material", args.material, 3), ("--section", args.section, 2)):
            try:
                values[option] = [float(v) for v in text.split(",")]
            except ValueError:
                values[option] = []
            if len(values[option]) != count:
                print(f"flexmb modes: {option} takes {count} comma-separated numbers, got {text!r}", file=sys.stderr)
                return 2
        mesh = read_mesh(args.mesh)
        model = FEModel(mesh, Material(*values["--material"]), sections=BeamSection.rectangle(*values["--section"]),
                        thickness=args.thickness)
        interfaces = {name: name for name in args.interface}
        output = args.output is not None
        if interfaces or args.fix:
            ms = craig_bampton(model, interfaces, n_modes=args.n, fixed=args.fix, connection=args.connection,
                               reference=args.reference, stress=output)
        else:
            ms = free_free_modes(model, args.n, stress=output)
        if output:
            ms.save(args.output)
    except (FlexmbError, OSError) as exc:
        print(f"flexmb modes: {exc}", file=sys.stderr)
        return 2
    freqs = ms.frequencies_hz
    counts = _mode_counts(ms)
    report = {"mesh": str(args.mesh), "nodes": model.n_nodes, "dofs": model.ndof, "fixed": args.fix,
              "interfaces": list(interfaces), "reference": args.reference, "kind": ms.kind,
              "rigid_body_modes": ms.info["rigid_modes_removed"], **counts,
              "frequencies_hz": freqs.tolist(), "output": args.output, "wall_s": time.perf_counter() - t0}
    if args.json:
        print(json.dumps(report, indent=1))
        return 0
    held = f", fixed: {args.fix}" if args.fix else ", free-free (6 rigid-body modes separated)"
    static = (f" + {counts['interface_modes']} interface (static) modes = {counts['mode_set_size']} in the set"
              if counts["interface_modes"] else "")
    print(f"{args.mesh}: {model.n_nodes} nodes, {model.ndof} dofs{held}; {ms.kind}, {counts['n_modes']} "
          f"normal modes{static}")
    print("  mode   frequency [Hz]")
    for k, f in enumerate(freqs, 1):
        print(f"  {k:4d}   {f:14.6g}")
    if output:
        print(f"mode set written to {args.output}")
    print(f"wall time {report['wall_s']:.1f} s")
    return 0


def _mode_counts(ms) -> dict[str, int]:
    """The mode set's columns by kind: ``n_modes`` normal modes (fixed-interface for Craig-Bampton, as asked
    by ``-n``), ``interface_modes`` static (constraint or correction) modes, 6 per interface point other than
    the reference, and ``mode_set_size``, their sum: the columns of the saved ModeSet."""
    normal = ms.info.get("fixed_interface_modes", ms.info.get("elastic_modes", ms.n_modes))
    return {"n_modes": int(normal), "interface_modes": int(ms.n_modes - normal), "mode_set_size": int(ms.n_modes)}


def _suite_names() -> str:
    try:
        import verification
        return ", ".join(verification.SUITES)
    except ImportError:
        return "none (the verification package is not installed)"


def main(argv: list[str] | None = None) -> int:
    import flexmb
    parser = argparse.ArgumentParser(prog="flexmb", description="flexible multibody dynamics")
    parser.add_argument("--version", action="version", version=f"flexmb {flexmb.__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("info", help="versions and active linear-algebra backends")
    p.set_defaults(func=cmd_info)
    p = sub.add_parser("verify", help="run verification suites and write results.json and report.html",
                       description="Run verification suites against their references; write DIR/results.json "
                                   "(machine-readable) and DIR/report.html (one self-contained page: summary "
                                   "table, notes and plots). Prints a line per finished case with an n/N "
                                   "counter and the elapsed time. Exit status 0 if every case passes, 1 if "
                                   "one fails, 2 on a usage error.",
                       epilog=f"available suites: {_suite_names()}. The full suites take minutes; "
                              "see docs/verification.md for the cases, sources and tolerances.")
    p.add_argument("suites", nargs="*", metavar="SUITE", help="suites to run (default: all of them)")
    p.add_argument("--out", default="verification-report", metavar="DIR",
                   help="output directory (default: %(default)s)")
    p.add_argument("--quick", action="store_true",
                   help="fast subset: fewer cases and coarser settings (the one the tests run)")
    p.add_argument("--jobs", "-j", type=_positive_int, default=None, metavar="N",
                   help="cases run in N worker processes (default: the number of CPU cores)")
    p.add_argument("--force", action="store_true",
                   help="replace a report in DIR of other suites, or of a full run by a quick one (or the reverse); "
                        "without it such a report is kept and verify stops")
    p.set_defaults(func=cmd_verify)
    p = sub.add_parser("compile-kernels", help="compile the numba kernels into the disk cache (one-time)",
                       description="Compile every compiled kernel of flexmb once, on small models, into numba's "
                                   "disk cache, so that a first simulation does not wait for it.")
    p.add_argument("--clean", action="store_true",
                   help="delete the cached kernels first (after editing flexmb's compiled helpers)")
    p.add_argument("--jobs", "-j", type=_positive_int, default=None, metavar="N",
                   help="warm-up models compiled in N worker processes (default: the number of CPU cores)")
    p.set_defaults(func=cmd_compile_kernels)
    p = sub.add_parser("modes", help="eigen-frequencies and a Craig-Bampton / free-free mode set of a mesh")
    p.add_argument("mesh", help="mesh file (Gmsh .msh, Abaqus .inp, ...)")
    p.add_argument("--material", default="210e9,0.3,7850", metavar="E,nu,rho",
                   help="Young's modulus Pa, Poisson ratio, density kg/m^3 (default: steel, %(default)s)")
    p.add_argument("--section", default="0.02,0.02", metavar="B,H",
                   help="rectangular beam section width,height in m, for beam meshes (default: %(default)s)")
    p.add_argument("--thickness", type=float, default=0.01, help="shell thickness in m (default: %(default)s)")
    p.add_argument("--fix", metavar="SET", help="node set whose dofs are held")
    p.add_argument("--interface", action="append", default=[], metavar="SET",
                   help="node set condensed to a 6-dof interface point (repeatable)")
    p.add_argument("--connection", choices=("rigid", "average"), default="rigid",
                   help="interface connection: rigid (RBE2-like) or average (RBE3-like)")
    p.add_argument("--reference", metavar="SET", help="interface the body frame is attached to")
    p.add_argument("-n", type=int, default=10, help="number of (fixed-interface) normal modes (default: %(default)s)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("-o", "--output", metavar="FILE", help="write the ModeSet to this .npz file")
    p.set_defaults(func=cmd_modes)
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
