"""Craig-Bampton reduction benchmark (issue 3): flexmb side by side with scipy's SuperLU path and Exudyn.

The tet10 angle bracket (meshes/make_bracket.py) at two sizes: ``--scales 1`` is the committed
meshes/bracket_tet10.msh (64 239 dofs), ``--scales 2`` the same bracket with half the element size,
built in memory (463 281 dofs). Steel, E = 210 GPa, nu = 0.3, rho = 7850 kg/m^3. Two interfaces,
the node sets "base" (bottom of the base plate) and "flange_top" (top of the flange), each
condensed to one 6-dof rigid (RBE2) point; 20 fixed-interface normal modes (both node sets held);
the body frame is attached to the base point, so its six constraint modes are dropped and the
mode set has 20 + 6 = 26 modes. All three codes reduce the *same* M and K (assembled once by
flexmb and checked by checksum):

* ``flexmb``: ``craig_bampton(model, {"base": "base", "top": "flange_top"}, n_modes=20,
  reference="base", stress=False)`` (one CHOLMOD factorization of K_ii for the Lanczos iteration
  and the constraint modes); the nodal-stress recovery that ``stress=True`` adds is timed apart;
* ``scipy``: the same reduction written plainly with scipy's defaults, ``eigsh(K_ii, k=20,
  M=M_ii, sigma=0)`` (SuperLU of K_ii inside) plus ``splu(K_ii).solve(-K_ib T)`` for the static
  constraint modes of the top point (T: its RBE2 rigid map), then the 26 x 26 reduced matrices;
* ``exudyn``: ``FEMinterface.ComputeHurtyCraigBamptonModes(boundaryNodesList=[base, top],
  nEigenModes=20, useSparseSolver=True, computationMode=RBE2)`` (excludeRigidBodyMotion=True
  drops the base point's modes, as ``reference="base"``).

Every method runs in its own subprocess under an address-space limit (``--mem-limit-gb``) and a
wall-time limit (``--time-limit``); a run that exceeds either is recorded as such. Measured: the
wall and CPU time of the reduction call only (M and K in memory), the peak resident memory
during it (VmHWM reset just before the call) and of the whole process (``wait4`` rusage), the
ratio flexmb / scipy, and the accuracy cross-check: the 20 fixed-interface frequencies and the 26
frequencies of the reduced system from every code (max relative difference against flexmb).

Run:  python benchmarks/cb_reduction.py                    # 64k and 463k bracket
      python benchmarks/cb_reduction.py --quick            # 64k bracket only
      python benchmarks/cb_reduction.py --scales 1 --methods flexmb scipy --repeat 3
      python benchmarks/cb_reduction.py --flexmb-variant reference_blas=DIRS   # also flexmb with CHOLMOD
          on the BLAS in DIRS, e.g. /usr/lib/x86_64-linux-gnu/blas:/usr/lib/x86_64-linux-gnu/lapack
"""
from __future__ import annotations

import argparse
import datetime as _dt
import gc
import hashlib
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
N_MODES = 20
INTERFACES = {"base": "base", "top": "flange_top"}
METHODS = ("flexmb", "scipy", "exudyn")


# ---------------------------------------------------------------------------
# helpers used in the workers
# ---------------------------------------------------------------------------
def _status_kb(key: str) -> float:
    text = Path("/proc/self/status").read_text()
    m = re.search(rf"^{key}:\s+(\d+) kB", text, re.M)
    return float(m.group(1)) if m else float("nan")


def reset_peak() -> float:
    """Reset this process's peak-RSS counter (VmHWM) to the current RSS; returns the RSS in MB.

    Also prints the start time of the measured call (CLOCK_MONOTONIC, shared by all processes),
    so that the parent knows how long a run that fails or is killed had been reducing.
    """
    gc.collect()
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        pass
    print(f"reduction-start {time.monotonic()!r}", flush=True)
    return _status_kb("VmRSS") / 1024


def peak_mb() -> float:
    return _status_kb("VmHWM") / 1024


def blas_libraries() -> list[str]:
    """BLAS/LAPACK shared libraries mapped into this process (which BLAS CHOLMOD got)."""
    maps = Path("/proc/self/maps").read_text()
    return sorted({p for p in re.findall(r"(/\S+\.so[.\d]*)", maps) if re.search(r"blas|lapack", p)})


def build_model(scale: int):
    """The bracket FEModel of ``scale`` (1: the committed .msh file; >1: built in memory)."""
    from flexmb.fem.materials import Material
    from flexmb.fem.mesh import FEMesh, read_mesh
    from flexmb.fem.model import FEModel
    if scale == 1:
        mesh = read_mesh(ROOT / "meshes" / "bracket_tet10.msh")
    else:
        sys.path.insert(0, str(ROOT / "meshes"))
        from make_bracket import bracket
        points, tets, base, top = bracket(scale)
        mesh = FEMesh(points, {"tetra10": tets}, node_sets={"base": np.unique(base), "flange_top": np.unique(top)})
    return FEModel(mesh, Material(E=E, nu=NU, rho=RHO))


def checksum(*arrays) -> str:
    h = hashlib.sha256()
    for a in arrays:
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()[:16]


def matrix_checksum(K, M) -> str:
    return checksum(K.indptr.astype(np.int64), K.indices.astype(np.int64), K.data,
                    M.indptr.astype(np.int64), M.indices.astype(np.int64), M.data)


def load_data(path: str):
    import scipy.sparse as sp
    d = np.load(path)
    n = int(d["ndof"])
    K = sp.csr_matrix((d["K_data"], d["K_indices"], d["K_indptr"]), shape=(n, n))
    M = sp.csr_matrix((d["M_data"], d["M_indices"], d["M_indptr"]), shape=(n, n))
    return K, M, d["points"], d["base"], d["top"]


def reduced_frequencies(Phi, K, M) -> list[float]:
    """Frequencies (Hz) of the reduced system Phi^T K Phi, Phi^T M Phi."""
    import scipy.linalg as sla
    Mr = Phi.T @ np.asarray(M @ Phi)
    Kr = Phi.T @ np.asarray(K @ Phi)
    lam = sla.eigh(0.5 * (Kr + Kr.T), 0.5 * (Mr + Mr.T), eigvals_only=True)
    return (np.sqrt(np.maximum(lam, 0.0)) / (2 * np.pi)).tolist()


def rigid_map(points: np.ndarray) -> np.ndarray:
    """RBE2 map (3 n, 6) of a point at the nodes' centroid: u_k = u + theta x (x_k - c)."""
    r = points - points.mean(axis=0)
    n = r.shape[0]
    T = np.zeros((n, 3, 6))
    T[:, :, :3] = np.eye(3)
    T[:, 0, 4], T[:, 0, 5] = r[:, 2], -r[:, 1]
    T[:, 1, 3], T[:, 1, 5] = -r[:, 2], r[:, 0]
    T[:, 2, 3], T[:, 2, 4] = r[:, 1], -r[:, 0]
    return T.reshape(3 * n, 6)


# ---------------------------------------------------------------------------
# workers (one method per process)
# ---------------------------------------------------------------------------
def work_prepare(scale: int, data: str) -> dict:
    t0 = time.perf_counter()
    model = build_model(scale)
    t1 = time.perf_counter()
    K, M = model.K, model.M
    t2 = time.perf_counter()
    base = np.unique(np.asarray(model.mesh.node_sets["base"]))
    top = np.unique(np.asarray(model.mesh.node_sets["flange_top"]))
    np.savez(data, ndof=model.ndof, points=model.points, base=base, top=top,
             K_data=K.data, K_indices=K.indices, K_indptr=K.indptr,
             M_data=M.data, M_indices=M.indices, M_indptr=M.indptr)
    return {"ndof": int(model.ndof), "nodes": int(model.n_nodes), "elements": int(len(model.mesh.cells["tetra10"])),
            "nnz_K": int(K.nnz), "base_nodes": int(base.size), "top_nodes": int(top.size),
            "boundary_dofs": int(3 * (base.size + top.size)), "interior_dofs": int(model.ndof - 3 * (base.size + top.size)),
            "mesh_and_model_s": t1 - t0, "assembly_K_M_s": t2 - t1, "checksum": matrix_checksum(K, M)}


def _timed(fn, log: dict, key: str):
    """``fn`` wrapped so that its calls add to log[key] (seconds) and log[key + '_calls']."""
    def wrapper(*a, **kw):
        t = time.perf_counter()
        try:
            return fn(*a, **kw)
        finally:
            log[key] = log.get(key, 0.0) + time.perf_counter() - t
            log[key + "_calls"] = log.get(key + "_calls", 0) + 1
    return wrapper


def work_flexmb(scale: int, data: str, expected_checksum: str) -> dict:
    import importlib
    from flexmb.reduction import craig_bampton
    cbm = importlib.import_module("flexmb.reduction.craig_bampton")   # the module (the package exports the function)
    eig = importlib.import_module("flexmb.reduction.eigen")
    from flexmb.linalg import backends
    model = build_model(scale)
    K, M = model.K, model.M
    same = matrix_checksum(K, M) == expected_checksum
    # phase timers around flexmb's own functions (the benchmark only observes them)
    phases: dict = {}
    eig.factorize = _timed(eig.factorize, phases, "factorize")
    cbm.ShiftInvert.eigen = _timed(cbm.ShiftInvert.eigen, phases, "eigen_lanczos")
    cbm.ShiftInvert._constrained = _timed(cbm.ShiftInvert._constrained, phases, "factor_solves")
    cbm._constraint_modes = _timed(cbm._constraint_modes, phases, "constraint_modes")
    cbm.modeset_from_basis = _timed(cbm.modeset_from_basis, phases, "modeset_from_basis")
    cbm.Condensation = _timed(cbm.Condensation, phases, "condensation")
    rss0 = reset_peak()
    c0, t0 = time.process_time(), time.perf_counter()
    ms = craig_bampton(model, INTERFACES, n_modes=N_MODES, reference="base", stress=False)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    peak = peak_mb()
    t = time.perf_counter()
    for k in range(ms.n_modes):
        model.nodal_stress(ms.phi[:, k])
    stress_s = time.perf_counter() - t
    return {"wall_s": wall, "cpu_s": cpu, "rss_before_mb": rss0, "peak_rss_mb": peak, "phases_s": phases,
            "stress_recovery_s": stress_s, "same_matrices": same, "n_modes": int(ms.n_modes),
            "fixed_interface_hz": list(ms.info["fixed_interface_frequencies_hz"]),
            "reduced_hz": ms.frequencies_hz.tolist(), "backends": backends(), "blas": blas_libraries()}


def work_scipy(scale: int, data: str) -> dict:
    import scipy.sparse.linalg as spla
    K, M, points, base, top = load_data(data)
    phases: dict = {}
    rss0 = reset_peak()
    c0, t0 = time.process_time(), time.perf_counter()
    n = K.shape[0]
    top_dofs = (3 * top[:, None] + np.arange(3)).ravel()
    b = np.union1d((3 * base[:, None] + np.arange(3)).ravel(), top_dofs)
    i = np.setdiff1d(np.arange(n), b)
    Ki = K[i]
    Kii, Mii = Ki[:, i], M[i][:, i]                            # CSR, as sliced (eigsh takes them as they are)
    T = rigid_map(points[top])
    rhs = -np.asarray(Ki[:, top_dofs] @ T)
    phases["submatrices"] = time.perf_counter() - t0
    t = time.perf_counter()
    lam, X = spla.eigsh(Kii, k=N_MODES, M=Mii, sigma=0)        # scipy default: SuperLU of K_ii inside
    phases["eigsh_superlu"] = time.perf_counter() - t
    t = time.perf_counter()
    lu = spla.splu(Kii.tocsc())                                  # scipy default: COLAMD ordering
    phases["splu_factor"] = time.perf_counter() - t
    t = time.perf_counter()
    psi = lu.solve(rhs)
    phases["splu_solve"] = time.perf_counter() - t
    del lu
    t = time.perf_counter()
    order = np.argsort(lam)
    lam, X = lam[order], X[:, order]
    Phi = np.zeros((n, N_MODES + 6))
    Phi[i, :N_MODES] = X
    Phi[i, N_MODES:] = psi
    Phi[top_dofs, N_MODES:] = T
    reduced = reduced_frequencies(Phi, K, M)
    phases["reduced_system"] = time.perf_counter() - t
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    return {"wall_s": wall, "cpu_s": cpu, "rss_before_mb": rss0, "peak_rss_mb": peak_mb(), "phases_s": phases,
            "n_modes": N_MODES + 6, "fixed_interface_hz": (np.sqrt(lam) / (2 * np.pi)).tolist(),
            "reduced_hz": reduced, "blas": blas_libraries()}


def work_exudyn(scale: int, data: str) -> dict:
    import exudyn
    from exudyn.FEM import FEMinterface, HCBstaticModeSelection
    K, M, points, base, top = load_data(data)
    fem = FEMinterface()
    fem.nodes = {"Position": np.asarray(points)}
    fem.massMatrix, fem.stiffnessMatrix = M, K
    boundary = [base.tolist(), top.tolist()]
    rss0 = reset_peak()
    c0, t0 = time.process_time(), time.perf_counter()
    fem.ComputeHurtyCraigBamptonModes(boundaryNodesList=boundary, nEigenModes=N_MODES, useSparseSolver=True,
                                      computationMode=HCBstaticModeSelection.RBE2)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    peak = peak_mb()
    Phi = fem.modeBasis["matrix"]
    lam = np.sort(np.asarray(fem.eigenValues))
    return {"wall_s": wall, "cpu_s": cpu, "rss_before_mb": rss0, "peak_rss_mb": peak, "n_modes": int(Phi.shape[1]),
            "fixed_interface_hz": (np.sqrt(lam) / (2 * np.pi)).tolist(), "reduced_hz": reduced_frequencies(Phi, K, M),
            "exudyn": exudyn.__version__, "blas": blas_libraries()}


def worker(args) -> int:
    if args.worker == "prepare":
        out = work_prepare(args.scale, args.data)
    elif args.worker == "flexmb":
        out = work_flexmb(args.scale, args.data, args.checksum)
    elif args.worker == "scipy":
        out = work_scipy(args.scale, args.data)
    elif args.worker == "exudyn":
        out = work_exudyn(args.scale, args.data)
    else:
        raise SystemExit(f"unknown worker {args.worker}")
    Path(args.result).write_text(json.dumps(out))
    return 0


# ---------------------------------------------------------------------------
# parent: subprocesses under limits
# ---------------------------------------------------------------------------
def run_limited(cmd: list[str], mem_gb: float, time_s: float, env: dict | None = None) -> dict:
    """Run ``cmd`` with RLIMIT_AS = mem_gb and a wall-time limit; returns status, rusage and output."""
    limit = int(mem_gb * 2**30)

    def limits():
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        t0 = time.perf_counter()
        p = subprocess.Popen(cmd, stdout=out, stderr=err, preexec_fn=limits, env=env)
        status, ru, rc = None, None, None
        while True:
            pid, st, ru = os.wait4(p.pid, os.WNOHANG)
            if pid:
                rc = os.waitstatus_to_exitcode(st)
                p.returncode = rc
                break
            if time.perf_counter() - t0 > time_s:
                os.kill(p.pid, signal.SIGKILL)
                _, st, ru = os.wait4(p.pid, 0)
                p.returncode = rc = os.waitstatus_to_exitcode(st)
                status = f"timeout: killed after the {time_s:g} s limit"
                break
            time.sleep(0.2)
        elapsed = time.perf_counter() - t0
        end = time.monotonic()
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    if status is None:
        if rc == 0:
            status = "ok"
        elif re.search(r"MemoryError|not enough memory|std::bad_alloc|Cannot allocate memory|out of memory",
                       stderr, re.I):
            status = f"out of memory under the {mem_gb:g} GB address-space limit"
        elif "gstrf was called with invalid arguments" in stderr:
            # SuperLU's failed workspace expansion, as scipy reports it (the byte count overflows an int)
            status = (f"out of memory under the {mem_gb:g} GB address-space limit (SuperLU could not grow "
                      f"its L/U workspace: 'gstrf was called with invalid arguments')")
        else:
            status = f"error (exit code {rc})"
    started = re.findall(r"^reduction-start (\S+)$", stdout, re.M)
    reducing = end - float(started[-1]) if started else None
    return {"status": status, "returncode": rc, "process_wall_s": elapsed, "reducing_s": reducing,
            "process_maxrss_mb": ru.ru_maxrss / 1024 if ru else None,
            "stdout": stdout[-4000:], "stderr": stderr[-3000:] if status != "ok" else stderr[-1000:]}


def run_worker(kind: str, scale: int, data: str, mem_gb: float, time_s: float, checksum_: str = "",
               env_extra: dict | None = None) -> dict:
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        result = f.name
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", kind, "--scale", str(scale), "--data", data,
           "--result", result, "--checksum", checksum_]
    env = dict(os.environ)
    env.update(env_extra or {})
    load0 = list(os.getloadavg())
    proc = run_limited(cmd, mem_gb, time_s, env)
    proc["loadavg_before"], proc["loadavg_after"] = load0, list(os.getloadavg())
    if kind == "exudyn":   # Exudyn prints its own stage timers for more than 20 000 dofs
        stages = [float(t) for t in re.findall(r"needed ([\d.]+) seconds", proc["stdout"])]
        if len(stages) == 2:
            proc["exudyn_stages_s"] = {"eigsh_superlu": stages[0], "factorized_superlu_and_solve": stages[1]}
    try:
        if proc["status"] == "ok":
            proc.update(json.loads(Path(result).read_text()))
    finally:
        Path(result).unlink(missing_ok=True)
    return proc


def rel_diff(a, b) -> float | None:
    if not a or not b or len(a) != len(b):
        return None
    a, b = np.asarray(a), np.asarray(b)
    return float(np.max(np.abs(a - b) / np.abs(a)))


def best(runs: list[dict]) -> dict:
    ok = [r for r in runs if r["status"] == "ok"]
    if not ok:
        return runs[-1]
    out = dict(min(ok, key=lambda r: r["wall_s"]))
    out["wall_all_s"] = [r["wall_s"] for r in ok]
    out["runs"] = len(runs)
    return out


def exudyn_version() -> str | None:
    try:
        import exudyn
        return exudyn.__version__
    except Exception:  # noqa: BLE001 - any import failure means: no peer
        return None


def machine() -> dict:
    cpu = platform.processor() or ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    import scipy
    import flexmb
    try:
        import sksparse
        sks = getattr(sksparse, "__version__", "?")
    except ImportError:
        sks = None
    try:
        rev = subprocess.run(["git", "describe", "--always", "--dirty"], cwd=ROOT, capture_output=True, text=True,
                             timeout=10).stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        rev = None
    mem = None
    try:
        mem = round(int(re.search(r"MemTotal:\s+(\d+)", Path("/proc/meminfo").read_text()).group(1)) / 2**20, 1)
    except (OSError, AttributeError):
        pass
    return {"cpu": cpu, "cores": os.cpu_count(), "memory_gb": mem, "platform": platform.platform(),
            "flexmb_git": rev, "python": platform.python_version(), "numpy": np.__version__,
            "scipy": scipy.__version__, "scikit-sparse": sks, "flexmb": flexmb.__version__, "exudyn": exudyn_version(),
            "blas_threads": os.environ.get("OPENBLAS_NUM_THREADS")}


LABELS = {"flexmb": "flexmb (CHOLMOD)", "flexmb_reference_blas": "flexmb (CHOLMOD on the reference BLAS)",
          "scipy": "scipy default (SuperLU)", "exudyn": "Exudyn FEMinterface"}


def _n(x: int) -> str:
    return f"{x:,}".replace(",", " ")


def markdown_table(results: list[dict]) -> str:
    lines = ["| DOF | method | wall (s) | CPU (s) | peak RSS in reduction (MB) | process peak RSS (MB) | "
             "ratio to scipy | max rel. diff. of frequencies vs flexmb (fixed-interface / reduced) |",
             "|---|---|---|---|---|---|---|---|"]
    for r in results:
        for m, v in r["methods"].items():
            if v["status"] != "ok":
                ran = "" if v.get("reducing_s") is None else f" after {v['reducing_s']:.0f} s"
                lines.append(f"| {_n(r['ndof'])} | {LABELS.get(m, m)} | {v['status']}{ran} | | | "
                             f"{v['process_maxrss_mb'] or 0:.0f} | | |")
                continue
            ratio = r.get("ratio_to_scipy", {}).get(m)
            acc = r.get("accuracy", {}).get(m, {})
            fi, red = acc.get("fixed_interface"), acc.get("reduced")
            acc_s = "-" if m == "flexmb" else f"{fi:.1e} / {red:.1e}" if fi is not None and red is not None else "n/a"
            lines.append(f"| {_n(r['ndof'])} | {LABELS.get(m, m)} | {v['wall_s']:.1f} | {v['cpu_s']:.1f} | "
                         f"{v['peak_rss_mb']:.0f} | {v['process_maxrss_mb']:.0f} | "
                         f"{'-' if ratio is None else f'{ratio:.2f}'} | {acc_s} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scales", type=int, nargs="+", default=[1, 2], help="bracket sizes (1: 64k dofs, 2: 463k)")
    ap.add_argument("--quick", action="store_true", help="64k bracket only, one run per method")
    ap.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS)
    ap.add_argument("--repeat", type=int, default=2, help="runs per method at scale 1 (interleaved, best kept)")
    ap.add_argument("--repeat-large", type=int, default=1, help="runs per method at scales > 1")
    ap.add_argument("--mem-limit-gb", type=float, default=16.0, help="address-space limit of every run")
    ap.add_argument("--time-limit", type=float, default=900.0, help="wall-time limit of every run, s")
    ap.add_argument("--flexmb-variant", action="append", default=[], metavar="NAME=DIRS",
                    help="extra flexmb configuration 'flexmb_NAME' run with LD_LIBRARY_PATH=DIRS, e.g. "
                         "reference_blas=/usr/lib/x86_64-linux-gnu/blas:/usr/lib/x86_64-linux-gnu/lapack "
                         "(CHOLMOD then uses the BLAS found there); repeatable")
    ap.add_argument("--variants-all-scales", action="store_true",
                    help="run the --flexmb-variant configurations at every scale (default: scale 1 only)")
    ap.add_argument("--out", default=str(Path(__file__).with_name("results") / "cb_reduction.json"))
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--scale", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--data", help=argparse.SUPPRESS)
    ap.add_argument("--result", help=argparse.SUPPRESS)
    ap.add_argument("--checksum", default="", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        return worker(args)
    scales = [1] if args.quick else args.scales
    repeat = 1 if args.quick else args.repeat
    methods = list(args.methods)
    if "exudyn" in methods and exudyn_version() is None:
        print("exudyn is not installed (pip install 'flexmb[bench]'); skipping it", file=sys.stderr)
        methods.remove("exudyn")
    configs = [(m, {}) for m in methods]
    for k, spec in enumerate(args.flexmb_variant):
        name, _, dirs = spec.partition("=")
        if not name or not dirs:
            raise SystemExit(f"--flexmb-variant needs NAME=DIRS, got {spec!r}")
        configs.insert(1 + k, (f"flexmb_{name}", {"LD_LIBRARY_PATH": dirs}))
    started = _dt.datetime.now().astimezone()
    results = []
    with tempfile.TemporaryDirectory(prefix="cb_bench_") as tmp:
        for scale in scales:
            data = str(Path(tmp) / f"bracket_{scale}.npz")
            print(f"scale {scale}: assembling M and K ...", file=sys.stderr, flush=True)
            prep = run_worker("prepare", scale, data, args.mem_limit_gb, args.time_limit)
            if prep["status"] != "ok":
                raise SystemExit(f"preparing scale {scale} failed: {prep['status']}\n{prep['stderr']}")
            row = {k: prep[k] for k in ("ndof", "nodes", "elements", "nnz_K", "base_nodes", "top_nodes",
                                       "boundary_dofs", "interior_dofs", "mesh_and_model_s", "assembly_K_M_s",
                                       "checksum")}
            row["scale"] = scale
            print(f"  {row['ndof']} dofs, {row['interior_dofs']} interior", file=sys.stderr, flush=True)
            reps = repeat if scale == 1 else args.repeat_large
            here = [(m, env) for m, env in configs if scale == 1 or not env or args.variants_all_scales]
            runs: dict[str, list] = {m: [] for m, _ in here}
            for k in range(reps):
                for m, env in here:
                    kind = "flexmb" if m.startswith("flexmb") else m
                    print(f"  {m} run {k + 1}/{reps} ...", file=sys.stderr, flush=True)
                    r = run_worker(kind, scale, data, args.mem_limit_gb, args.time_limit, row["checksum"], env)
                    msg = f"{r['wall_s']:.1f} s" if r["status"] == "ok" else r["status"]
                    print(f"    {msg}, process peak RSS {r['process_maxrss_mb'] or 0:.0f} MB", file=sys.stderr,
                          flush=True)
                    runs[m].append(r)
            row["methods"] = {m: best(v) for m, v in runs.items()}
            ok = {m: v for m, v in row["methods"].items() if v["status"] == "ok"}
            if "scipy" in ok:
                row["ratio_to_scipy"] = {m: v["wall_s"] / ok["scipy"]["wall_s"] for m, v in ok.items()}
            elif "flexmb" in ok and row["methods"].get("scipy", {}).get("reducing_s"):
                # the SuperLU path did not finish: it had run reducing_s when it failed or was killed
                row["speedup_over_scipy_at_least"] = row["methods"]["scipy"]["reducing_s"] / ok["flexmb"]["wall_s"]
            if "flexmb" in ok:
                ref = ok["flexmb"]
                row["accuracy"] = {m: {"fixed_interface": rel_diff(ref["fixed_interface_hz"], v["fixed_interface_hz"]),
                                       "reduced": rel_diff(ref["reduced_hz"], v["reduced_hz"])}
                                   for m, v in ok.items()}
            pairs = [(a, b) for a in ok for b in ok if a < b]
            if pairs:
                row["accuracy_max_pairwise"] = {
                    key: max(rel_diff(ok[a][f"{key}_hz"], ok[b][f"{key}_hz"]) or 0.0 for a, b in pairs)
                    for key in ("fixed_interface", "reduced")}
            results.append(row)
    report = {
        "benchmark": "cb_reduction",
        "started": started.isoformat(timespec="seconds"),
        "wall_s": (_dt.datetime.now().astimezone() - started).total_seconds(),
        "machine": machine(),
        "limits": {"address_space_gb": args.mem_limit_gb, "wall_time_s": args.time_limit},
        "problem": {"mesh": "tet10 angle bracket (meshes/make_bracket.py)", "material": {"E": E, "nu": NU, "rho": RHO},
                    "interfaces": "base, flange_top: each one 6-dof rigid (RBE2) point; body frame at base",
                    "fixed_interface_modes": N_MODES, "modes": N_MODES + 6},
        "results": results,
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=1) + "\n")
    print(markdown_table(results))
    for r in results:
        if "speedup_over_scipy_at_least" in r:
            print(f"{_n(r['ndof'])} dofs: the SuperLU path did not finish; flexmb is at least "
                  f"{r['speedup_over_scipy_at_least']:.1f}x faster")
    print(f"written {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
