"""Compile every kernel ahead of time into numba's disk cache (``flexmb compile-kernels``).

A kernel compiles on its first call in a process and is then cached on disk (``cache=True``); a later
process loads it in milliseconds. This module makes that first call for every family on small models
(each assembled and evaluated with its Newton matrix, one short run through the integrator), so that
the one-time compile happens at install time (``.ci/setup``) instead of inside a user's first run.
"""
from __future__ import annotations

import glob
import os
import time

import numpy as np

__all__ = ["compile_kernels", "clean_cache", "cached_kernel_files"]


def cached_kernel_files(ext: str) -> list[str]:
    """numba's cache files of flexmb with suffix ``ext`` (``"nbi"`` index, ``"nbc"`` machine code): the
    ``__pycache__`` folders beside flexmb's modules, where numba caches when the package is writable."""
    root = os.path.dirname(os.path.abspath(__file__))
    return glob.glob(os.path.join(root, "**", "__pycache__", f"*.{ext}"), recursive=True)


def clean_cache() -> int:
    """Delete numba's cached machine code of flexmb (``__pycache__/*.nbi, *.nbc``) and flexmb's record of the
    compiled forms (flexmb/compiled/specialization.py); returns the count of cache files.
    Needed after editing a helper module that other kernels call: numba checks only the source file of
    the kernel itself (docs/architecture.md §2)."""
    from .compiled.specialization import KernelRecord
    files = cached_kernel_files("nbi") + cached_kernel_files("nbc")
    for f in files:
        os.remove(f)
    KernelRecord.path().unlink(missing_ok=True)     # the record of compiled forms goes with the code
    return len(files)


def _models():
    """Small systems that together use every element family (not physical; only evaluated)."""
    import flexmb as fm
    from flexmb import rotations as rot

    def two():
        s = fm.System(gravity=(0.3, -9.81, 0.2), name="warm")
        a = s.add(fm.RigidBody(3.0, (0.2, 0.3, 0.4), position=(0.1, 0.2, 0.3),
                               orientation=rot.from_axis_angle((1, 2, 3), 0.4), name="a"))
        b = s.add(fm.RigidBody(2.0, (0.1, 0.15, 0.2), position=(1.0, -0.2, 0.4), name="b"))
        return s, a, b

    P, ax = (0.5, 0.1, 0.3), (0.2, 0.3, 1.0)
    s, a, b = two()
    j = s.add(fm.Revolute(a, b, P, ax))
    s.add(fm.Driver(j, angle=lambda t: 0.3 * t * t))
    s.add(fm.DCMotor(j, K_p=0.7, r_a=0.4, L_a=0.05, D=0.2, voltage=60.0))
    s.add(fm.Spherical(s.ground, a, (0.0, 0.0, 0.0)))
    s.add(fm.SpringDamper(a, b, point_a=(0, 0.1, 0), point_b=(1.1, 0.0, 0.3), k=120.0, c=4.0, free_length=0.7))
    s.add(fm.RotationalSpringDamper(a, b, ax, k=30.0, c=2.0))
    s.add(fm.Bushing(a, b, P, stiffness=[10, 20, 30, 4, 5, 6], damping=[1, 2, 3, .4, .5, .6]))
    s.add(fm.Force(a, (1, 2, 3), local_point=(0.1, -0.2, 0.3)))
    s.add(fm.Torque(b, (1, 1, -1), body_fixed=True))
    yield s
    for joint in (lambda a, b: [fm.Prismatic(a, b, P, ax)], lambda a, b: [fm.Cylindrical(a, b, P, ax)],
                  lambda a, b: [fm.Universal(a, b, point=P, axis_a=(1, 0, 0), axis_b=(0, 1, 0))],
                  lambda a, b: [fm.Planar(a, b, P, ax)], lambda a, b: [fm.Fixed(a, b, P)],
                  lambda a, b: [fm.Distance(a, b, point_a=(0, 0, 0), point_b=(1.2, 0.1, 0.2))]):
        s, a, b = two()
        for item in joint(a, b):
            s.add(item)
        yield s
    # particles with links and anchors; a sphere cloud with planes (compiled/particles.py, compiled/spheres.py)
    s, a, b = two()
    P = s.add(fm.Particles([(0.0, 0.0, 0.0), (0.1, 0.0, 0.0), (0.2, 0.05, 0.0)], 0.1))
    s.add(fm.ParticleLinks(P, "chain", 1e3, 0.5))
    s.add(fm.ParticleAnchors(P, 0, stiffness=1e4, damping=1.0))
    c = s.add(fm.RigidBody(1.0, (0.1, 0.1, 0.1), position=(0.1, 0.9, 0.4), name="c"))
    s.add(fm.contact.mesh.SphereCloudContact([a, b, c], [(0.1, 0.2, 0.3), (1.0, -0.2, 0.4), (0.1, 0.9, 0.4)], 0.5,
                                             fm.contact.LankaraniNikravesh(1e4, 0.6),
                                             planes=[(s.ground, (0, 0, 0), (0, 1, 0))]))
    yield s
    s, a, b = two()
    law = fm.contact.LankaraniNikravesh(1e4, 0.6)
    s.add(fm.SpherePlaneContact(s.ground, a, point=(0, 0, 0), normal=(0.1, 1.0, 0.2), center=(0.1, 0.2, 0.3),
                                radius=0.5, law=law, friction=fm.contact.CoulombRamp(0.3, 5.0)))
    s.add(fm.SphereSphereContact(a, b, center_a=(0.1, 0.2, 0.3), center_b=(1.0, -0.2, 0.4), radius_a=0.5,
                                 radius_b=0.5, law=law))
    s.add(fm.CrushElement(a, b, point_a=(0, 0, 0), point_b=(1.0, -0.2, 0.4), curve=([0.0, 0.5], [0.0, 1e3]),
                          unloading_stiffness=1e5))
    s.add(fm.PlasticHinge(a, b, ax, curve=([0.0, 0.5], [0.0, 1e3]), k_elastic=1e4))
    s.add(fm.SheaveRope((s.ground, (-1.0, 1.0, 0.0)), (b, (1.0, -0.2, 0.4)), [fm.Sheave(a, (0.1, 0.2, 0.3), 0.1,
                                                                                         sense=-1)],
                        EA=1e4, damping_time=0.01, initial_tension=10.0))
    yield s
    # a contact pair with a built-in law and no friction, and a rope over a pulley with built-in friction: the
    # compiled step's blocks with contacts (step_end.py)
    s, a, b = two()
    s.add(fm.Revolute(s.ground, a, (0.1, 0.2, 0.3), (0, 0, 1)))
    s.add(fm.RotationalSpringDamper(s.ground, a, (0, 0, 1), k=30.0, c=2.0))
    s.add(fm.SpherePlaneContact(s.ground, b, point=(1.0, -0.45, 0.4), normal=(0, 1, 0), center=(1.0, -0.2, 0.4),
                                radius=0.3, law=law))
    rope = fm.contact.rope_chain(s, [(-0.3, 0.75, 0.3), (0.1, 0.72, 0.3), (0.5, 0.75, 0.3)], 1.0)
    s.add(fm.contact.RopePulleyContact(a, rope, 0.5, 1e4, 10.0, friction=fm.contact.CoulombRamp(0.3, 0.05)))
    yield s
    # modal body and nonlinear beam from a five-element line mesh
    n = 5
    points = np.column_stack([np.linspace(0.0, 1.0, n + 1), np.zeros(n + 1), np.zeros(n + 1)])
    mesh = fm.FEMesh(points, {"line": np.column_stack([np.arange(n), np.arange(1, n + 1)])},
                     node_sets={"root": [0], "tip": [n]})
    model = fm.FEModel(mesh, fm.Material(E=2e9, nu=0.3, rho=2000.0), sections=fm.BeamSection.rectangle(0.05, 0.03))
    modes = fm.craig_bampton(model, {"root": "root", "tip": "tip"}, n_modes=3, reference="root", stress=False)
    for body in (fm.FlexibleBody(modes, name="f"), fm.NonlinearBeam(model, "root", name="f"),
                 fm.ExactBeam(model, "root", name="f")):
        s = fm.System(gravity=(0, -9.81, 0), name="warm")
        f = s.add(body)
        s.add(fm.Revolute(s.ground, f.interface("root") if hasattr(f, "interface") and f.modes.interfaces
                          else f, (0, 0, 0), (0, 0, 1)))
        s.add(fm.NodalForce(f, [n], (0.0, -1.0, 0.0)))
        yield s


def pendulum():
    """A double pendulum of two rigid bodies on revolute joints under gravity: the model whose step specialized to
    its families (rigid bodies, point and dot1 joint rows; flexmb/compiled/specialization.py) the warm-up
    compiles too, for the tests that compare it with the universal step."""
    import flexmb as fm
    s = fm.System(gravity=(0.0, -9.81, 0.0), name="pendulum")
    a = s.add(fm.RigidBody(2.0, (1e-3, 0.05, 0.05), position=(0.25, 0.0, 0.0), name="upper"))
    b = s.add(fm.RigidBody(1.0, (1e-3, 0.08, 0.08), position=(0.5, -0.5, 0.0), name="lower"))
    s.add(fm.Revolute(s.ground, a, (0.0, 0.0, 0.0), (0.0, 0.0, 1.0), name="pivot"))
    s.add(fm.Revolute(a, b, (0.5, 0.0, 0.0), (0.0, 0.0, 1.0), name="elbow"))
    return s


def _warm_specialized() -> tuple[int, str, float]:
    """The step and energy rows specialized to :func:`pendulum`'s families (a short run with energy check)."""
    from flexmb.compiled import specialization
    from flexmb.solvers.simulate import simulate
    c0 = time.process_time()
    saved, specialization.variant = specialization.variant, "specialized"
    try:
        simulate(pendulum(), 0.02, 1e-3, progress=False).energy()
    finally:
        specialization.variant = saved
    return -1, "RigidBody, Revolute (the step specialized to them)", time.process_time() - c0


def _warm(k: int, part: str = "all") -> tuple[int, str, float]:
    """Warm-up model ``k`` of :func:`_models`: ``part`` "evaluate" (the general path: residual, matrix,
    energies, step end), "run" (a short run through the integrator, and an adaptive one for the per-step
    compiled path) or "all"; returns its index, element kinds and CPU seconds. Runs on the universal step."""
    from flexmb.compiled import specialization
    saved, specialization.variant = specialization.variant, "universal"  # the compile that serves every model
    try:
        return _warm_model(k, part)
    finally:
        specialization.variant = saved


def _warm_model(k: int, part: str) -> tuple[int, str, float]:
    import warnings

    from flexmb.solvers.simulate import simulate
    c0 = time.process_time()
    system = next(s for i, s in enumerate(_models()) if i == k)
    if part in ("evaluate", "all"):
        rng = np.random.default_rng(k)
        asm = system.compile()
        q0, v0 = asm.initial_state()
        q = q0 + 0.01 * rng.standard_normal(q0.size)
        v, a = rng.standard_normal((2, q0.size))
        lam = rng.standard_normal(asm.m)
        asm.step_end(q, v, lam, 0.1)
        asm.residual(q, v, a, lam, 0.1, coef=(1.0, 0.5, 0.25, 0.25, 0.0))
        asm.residual(q, v, a, lam, 0.1)
        asm.kinetic_energy(q, v), asm.potential_energy(q, v), asm.nonconservative_power(q, v, 0.1)
    if part in ("run", "all"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for options in ({}, {"adaptive": True}):
                try:
                    simulate(system, 2e-4, 1e-4, progress=False, **options)
                except Exception:   # noqa: BLE001 - the warm-up models need not be solvable; evaluation compiled them
                    pass
    kinds = sorted({type(x).__name__ for x in (*system.bodies, *system.joints, *system.forces)})
    return k, ", ".join(kinds), time.process_time() - c0


def _warm_list(tasks: list[tuple[int, str]]) -> list[tuple[int, str, float]]:
    """:func:`_warm` of each ``(model, part)`` in turn, in one process (model -1: :func:`_warm_specialized`)."""
    return [_warm_specialized() if k < 0 else _warm(k, part) for k, part in tasks]


def _schedule(n: int) -> list[tuple[list, list]]:
    """Phases of the warm-up on two workers, each phase a pair of task lists run side by side. The compiled
    step (blocks.run_block with ``equations``) links every step family's kernels and compiles them first where
    the disk cache does not hold them; its own compile (about 100 s of CPU) can only start when they exist. So:
    (1) the two workers compile the step families' kernels through the general path, split about evenly and
    without overlap (flexible bodies, rigid bodies, springs, loads, motors and joints on one; contacts,
    friction, ropes, crash elements, particles, sphere clouds and beams on the other); (2) one worker compiles
    the step (model 0's run) while the other compiles the kernels outside it (the exact beam, the general
    path's crash and rope runs, the step specialized to :func:`pendulum`); (3) the other models' runs, which load
    the step."""
    flexible, beam, exact = n - 3, n - 2, n - 1
    clouds, crash, blocks = n - 6, n - 5, n - 4
    evaluate = lambda *ks: [(k, "evaluate") for k in ks]       # noqa: E731
    return [(evaluate(flexible, 0, *range(1, clouds)), evaluate(crash, blocks, clouds, beam)),
            ([(0, "run")], [(exact, "all"), (crash, "run"), (-1, "run")]),
            ([(k, "run") for k in (clouds, blocks, flexible)], [(k, "run") for k in (beam, *range(1, clouds))])]


def compile_kernels(verbose: bool = True, jobs: int | None = None) -> float:
    """Compile (or load) every kernel; returns the wall time in seconds. The warm-up models are spread
    over ``jobs`` worker processes (default: the number of CPU cores; :func:`_schedule`; numba writes its
    cache files race-free, so workers that compile the same kernel only duplicate work)."""
    t0 = time.perf_counter()
    n = sum(1 for _ in _models())
    jobs = max(1, min(n, jobs or os.cpu_count() or 1))

    def report(done) -> None:
        for k, kinds, cpu in done:
            if verbose:
                print(f"  {f'model {k + 1}' if k >= 0 else 'model'}: {kinds} ({cpu:.1f} s CPU; {time.perf_counter() - t0:.1f} s)", flush=True)

    if jobs == 1:
        report([*map(_warm, range(n)), _warm_specialized()])
        return time.perf_counter() - t0
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor
    with ProcessPoolExecutor(jobs, mp_context=mp.get_context("fork")) as pool:
        for phase in _schedule(n):
            for fut in [pool.submit(_warm_list, tasks) for tasks in phase]:
                report(fut.result())
    return time.perf_counter() - t0
