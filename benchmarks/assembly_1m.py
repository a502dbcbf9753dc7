"""Assembly benchmark (issue 3): sparse M and K of a solid mesh with about one million dofs.

A steel block (E = 210 GPa, nu = 0.3, rho = 7850 kg/m^3) meshed in memory with structured cells
(meshes/_meshgen.py):

* ``hex8``: n^3 hexahedra (n = 69: 70^3 nodes, 1 029 000 dofs);
* ``tet10``: n^3 hexahedra, each split into 6 tetrahedra along its main diagonal (the split of
  meshes/make_bracket.py), with mid-edge nodes (n = 34: 985 527 dofs).

Every case runs in its own subprocess under an address-space and a wall-time limit. Timed, in
order: the mesh (``FEMesh``: validation of the given points and cells; generating the arrays is
not timed), ``FEModel(mesh, material)`` split into the sparsity pattern (``BlockAssembler``:
node graph, CSR structure and the data position of every element-matrix entry) and the rest
(element kernels: geometry, quadrature data, dof maps), then the first ``model.K`` and the first
``model.M`` (element matrices computed chunk by chunk and added into the fixed pattern). Peak
resident memory of the process (``wait4`` rusage) and after each stage (VmHWM).

Run:  python benchmarks/assembly_1m.py                  # hex8 and tet10, about 1M dofs each
      python benchmarks/assembly_1m.py --quick          # about 250k dofs
      python benchmarks/assembly_1m.py --meshes hex8 --n 80 --repeat 2
"""
from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import re
import resource
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
E, NU, RHO = 210e9, 0.3, 7850.0
DEFAULT_N = {"hex8": 69, "tet10": 34}
QUICK_N = {"hex8": 43, "tet10": 21}


def _status_mb(key: str) -> float:
    m = re.search(rf"^{key}:\s+(\d+) kB", Path("/proc/self/status").read_text(), re.M)
    return float(m.group(1)) / 1024 if m else float("nan")


def block_mesh(kind: str, n: int, size: float = 1.0):
    """Points and cells (meshio type -> connectivity) of a cube of n^3 cells."""
    sys.path.insert(0, str(ROOT / "meshes"))
    from _meshgen import add_midside_nodes, grid_hexahedra, grid_points
    axis = np.linspace(0.0, size, n + 1)
    points = grid_points(axis, axis, axis)
    hexes = grid_hexahedra((n, n, n))
    if kind == "hex8":
        return points, {"hexahedron": hexes}
    from make_bracket import kuhn_split
    tets = hexes[:, kuhn_split()].reshape(-1, 4)
    points, (tet10,) = add_midside_nodes(points, [(tets, "tetra10")])
    return points, {"tetra10": tet10}


def work(kind: str, n: int) -> dict:
    import flexmb.fem.model as fm
    from flexmb.fem.materials import Material
    from flexmb.fem.mesh import FEMesh
    points, cells = block_mesh(kind, n)
    stages: dict = {}
    timer: dict = {}
    original = fm.BlockAssembler

    def timed_assembler(*a, **kw):                 # observe the pattern build inside FEModel.__init__
        t = time.perf_counter()
        out = original(*a, **kw)
        timer["pattern"] = time.perf_counter() - t
        return out

    fm.BlockAssembler = timed_assembler
    t0 = time.perf_counter()
    mesh = FEMesh(points, cells)
    stages["mesh_s"] = time.perf_counter() - t0
    t = time.perf_counter()
    model = fm.FEModel(mesh, Material(E=E, nu=NU, rho=RHO))
    init = time.perf_counter() - t
    stages["pattern_s"] = timer["pattern"]
    stages["kernels_s"] = init - timer["pattern"]
    peak_pattern = _status_mb("VmHWM")
    t = time.perf_counter()
    K = model.K
    stages["K_s"] = time.perf_counter() - t
    t = time.perf_counter()
    M = model.M
    stages["M_s"] = time.perf_counter() - t
    stages["model_total_s"] = init + stages["K_s"] + stages["M_s"]
    stages["total_s"] = time.perf_counter() - t0
    cpu = time.process_time()
    # sanity: total mass and a rigid translation in the null space of K
    ux = np.zeros(model.ndof)
    ux[0::model.dofs_per_node] = 1.0
    mass = float(ux @ (M @ ux))
    rigid_residual = float(np.abs(K @ ux).max() / np.abs(K.data).max())
    return {"kind": kind, "n": n, "ndof": int(model.ndof), "nodes": int(model.n_nodes),
            "elements": int(sum(len(c) for c in cells.values())), "nnz": int(K.nnz),
            "index_dtype": str(K.indices.dtype), "chunks": len(model.chunks), **stages, "cpu_s": cpu,
            "peak_after_pattern_mb": peak_pattern, "peak_rss_mb": _status_mb("VmHWM"), "rss_end_mb": _status_mb("VmRSS"),
            "mass_kg": mass, "mass_expected_kg": RHO * 1.0, "rigid_translation_residual": rigid_residual}


def run_limited(cmd: list[str], mem_gb: float, time_s: float) -> dict:
    limit = int(mem_gb * 2**30)

    def limits():
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    with tempfile.TemporaryFile("w+") as err:
        t0 = time.perf_counter()
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, preexec_fn=limits)
        status = None
        while True:
            pid, st, ru = os.wait4(p.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() - t0 > time_s:
                os.kill(p.pid, signal.SIGKILL)
                _, st, ru = os.wait4(p.pid, 0)
                status = f"timeout: killed after the {time_s:g} s limit"
                break
            time.sleep(0.2)
        p.returncode = rc = os.waitstatus_to_exitcode(st)
        err.seek(0)
        stderr = err.read()
    if status is None:
        status = "ok" if rc == 0 else (f"out of memory: exceeded the {mem_gb:g} GB address-space limit"
                                       if "MemoryError" in stderr else f"error (exit code {rc})")
    return {"status": status, "process_wall_s": time.perf_counter() - t0, "process_maxrss_mb": ru.ru_maxrss / 1024,
            "stderr": stderr[-3000:] if status != "ok" else ""}


def machine() -> dict:
    cpu = ""
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    import scipy
    import flexmb
    try:
        rev = subprocess.run(["git", "describe", "--always", "--dirty"], cwd=ROOT, capture_output=True, text=True,
                             timeout=10).stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        rev = None
    mem = int(re.search(r"MemTotal:\s+(\d+)", Path("/proc/meminfo").read_text()).group(1)) / 2**20
    return {"cpu": cpu, "cores": os.cpu_count(), "memory_gb": round(mem, 1), "platform": platform.platform(),
            "flexmb_git": rev, "python": platform.python_version(), "numpy": np.__version__,
            "scipy": scipy.__version__, "flexmb": flexmb.__version__}


def markdown_table(rows: list[dict]) -> str:
    lines = ["| mesh | DOF | elements | nnz | mesh check (s) | pattern (s) | kernels (s) | K (s) | M (s) | "
             "FEModel + K + M (s) | peak RSS (MB) |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if r["status"] != "ok":
            lines.append(f"| {r['kind']} n={r['n']} | | | | {r['status']} | | | | | | {r['process_maxrss_mb']:.0f} |")
            continue
        lines.append(f"| {r['kind']} {r['n']}^3 | {r['ndof']:,} | {r['elements']:,} | {r['nnz'] / 1e6:.1f} M | "
                     f"{r['mesh_s']:.1f} | {r['pattern_s']:.1f} | {r['kernels_s']:.1f} | {r['K_s']:.1f} | "
                     f"{r['M_s']:.1f} | {r['model_total_s']:.1f} | {r['process_maxrss_mb']:.0f} |".replace(",", " "))
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--meshes", nargs="+", default=["hex8", "tet10"], choices=["hex8", "tet10"])
    ap.add_argument("--n", type=int, default=None, help="cells per edge (default: 69 hex8, 34 tet10)")
    ap.add_argument("--quick", action="store_true", help="about 250k dofs (n = 43 hex8, 21 tet10)")
    ap.add_argument("--repeat", type=int, default=1, help="runs per mesh (the fastest is kept, all stored)")
    ap.add_argument("--mem-limit-gb", type=float, default=12.0)
    ap.add_argument("--time-limit", type=float, default=300.0)
    ap.add_argument("--out", default=str(Path(__file__).with_name("results") / "assembly_1m.json"))
    ap.add_argument("--worker", nargs=2, help=argparse.SUPPRESS)
    ap.add_argument("--result", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        Path(args.result).write_text(json.dumps(work(args.worker[0], int(args.worker[1]))))
        return 0
    started = _dt.datetime.now().astimezone()
    rows = []
    for kind in args.meshes:
        n = args.n or (QUICK_N if args.quick else DEFAULT_N)[kind]
        runs = []
        for k in range(args.repeat):
            print(f"{kind} n={n} run {k + 1}/{args.repeat} ...", file=sys.stderr, flush=True)
            with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
                result = f.name
            load0 = list(os.getloadavg())
            r = run_limited([sys.executable, str(Path(__file__).resolve()), "--worker", kind, str(n),
                             "--result", result], args.mem_limit_gb, args.time_limit)
            r.update({"kind": kind, "n": n, "loadavg_before": load0, "loadavg_after": list(os.getloadavg())})
            if r["status"] == "ok":
                r.update(json.loads(Path(result).read_text()))
                print(f"  {r['ndof']} dofs: FEModel + K + M {r['model_total_s']:.1f} s, peak {r['process_maxrss_mb']:.0f} MB",
                      file=sys.stderr, flush=True)
            else:
                print(f"  {r['status']}", file=sys.stderr, flush=True)
            Path(result).unlink(missing_ok=True)
            runs.append(r)
        ok = [r for r in runs if r["status"] == "ok"]
        row = dict(min(ok, key=lambda r: r["model_total_s"])) if ok else runs[-1]
        row["all_runs"] = [{k: r.get(k) for k in ("status", "mesh_s", "pattern_s", "kernels_s", "K_s", "M_s",
                                                   "model_total_s", "process_maxrss_mb", "loadavg_before")}
                           for r in runs]
        rows.append(row)
    report = {"benchmark": "assembly_1m", "started": started.isoformat(timespec="seconds"),
              "wall_s": (_dt.datetime.now().astimezone() - started).total_seconds(), "machine": machine(),
              "limits": {"address_space_gb": args.mem_limit_gb, "wall_time_s": args.time_limit},
              "material": {"E": E, "nu": NU, "rho": RHO}, "results": rows}
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=1) + "\n")
    print(markdown_table(rows))
    print(f"written {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
