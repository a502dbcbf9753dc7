"""Command line: ``flexmb info`` and ``flexmb verify``."""
from __future__ import annotations

import argparse
import importlib
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


def cmd_info(_args) -> int:
    import flexmb
    from flexmb.solvers import linalg
    print(f"flexmb {flexmb.__version__} on Python {platform.python_version()} ({platform.machine()})")
    for pkg in ("numpy", "scipy", "meshio", "matplotlib", "scikit-sparse"):
        print(f"  {pkg:14s} {_version(pkg)}")
    print("linear-algebra backends:")
    for role, name in linalg.backends().items():
        print(f"  {role:15s} {name}")
    if not linalg.cholmod_available():
        why = linalg.cholmod_import_error() or "disabled (FLEXMB_NO_CHOLMOD or set_cholmod(False))"
        print(f"  CHOLMOD not active: {why}; sparse SPD systems use SuperLU")
    return 0


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
    import matplotlib
    matplotlib.use("Agg")
    started = framework.now_iso()
    t0 = time.perf_counter()
    results = {}
    for name in names:
        print(f"suite {name}{' (quick)' if args.quick else ''}:", flush=True)
        results[name] = framework.run_suite(name, args.quick, progress=lambda m: print(m, flush=True))
    out = Path(args.out)
    framework.write_report(out, results, time.perf_counter() - t0, started)
    failed = [f"{s}/{c.name}" for s, cs in results.items() for c in cs if not c.passed]
    total = sum(len(cs) for cs in results.values())
    print(f"{total - len(failed)} passed, {len(failed)} failed; report: {out / 'report.html'}, {out / 'results.json'}")
    if failed:
        print("failed: " + ", ".join(failed))
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="flexmb", description="flexible multibody dynamics")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("info", help="versions and active linear-algebra backends")
    p.set_defaults(func=cmd_info)
    p = sub.add_parser("verify", help="run verification suites and write results.json and report.html")
    p.add_argument("suites", nargs="*", help="suite names (default: all)")
    p.add_argument("--out", default="verification-report", help="output directory (default: %(default)s)")
    p.add_argument("--quick", action="store_true", help="fast subset (the one the tests run)")
    p.set_defaults(func=cmd_verify)
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
