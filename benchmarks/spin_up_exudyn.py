"""Rotating-beam spin-up benchmark: the Exudyn side (benchmark peer only).

Problem (He 1992, section 9.3; the spin-up law with the thesis's misprint corrected): a uniform
cantilever, clamped at the hub axis (no hub radius), turns about the vertical z axis and bends
in the x-y plane; no gravity. L = 10 m, EA = 2.8e7 N, EI = 1.4e4 N m^2, rho A = 1.2 kg/m. The
hub angle is prescribed,

    Omega(t) = (Omega_s/T_s) [t - (T_s/2 pi) sin(2 pi t/T_s)]   for t < T_s, then Omega_s,
    theta(t) = (Omega_s/T_s) [t^2/2 + (T_s/2 pi)^2 (cos(2 pi t/T_s) - 1)]   for t < T_s,
             = Omega_s T_s/2 + Omega_s (t - T_s)                             after,

T_s = 15 s, 20 s simulated, Omega_s in {2, 4, 6, 10} rad/s. Output: the in-plane tip deflection
relative to the rotating hub frame (beam along +x at rest, rotation positive about +z, a lagging
tip is negative): tip = -sin(theta) x_tip + cos(theta) y_tip from the global tip position.

Two Exudyn models, each a function that builds, runs and returns the time history:

* :func:`exudyn_ancf_cable`: the nonlinear beam, ``n_elements`` ObjectANCFCable2D elements
  (geometrically exact axial strain and curvature, so centrifugal stiffening is included). The
  root is clamped (position and slope direction) by an ObjectJointGeneric (x, y and the rotation
  about z) to a 2D rigid hub (NodeRigidBody2D) whose three coordinates are held by
  CoordinateConstraints, the angle one with the offset theta(t).
* :func:`exudyn_ffrf`: the modal body, ObjectFFRFreducedOrder with 4 fixed-interface modes of a
  hex20 solid model of the same beam (built and assembled by flexmb, :func:`solid_beam_model`);
  Exudyn's FEMinterface computes the modes (``ComputeHurtyCraigBamptonModes`` with the root face
  as the only interface; its rigid-body static modes are dropped, so only eigenmodes with the root
  face clamped remain). The floating frame is the clamp frame, so its node (Tait-Bryan
  NodeRigidBodyRxyz) is driven directly: x, y, z, rx, ry held, rz = theta(t). ``attach="hub"``
  instead joins a MarkerSuperElementRigid on the root-face nodes to a driven rigid hub with a
  GenericJoint (Euler-parameter frame node); both give the same tip history (Newton-tolerance
  level). Exudyn's FFRF body has a constant reduced stiffness matrix: **no geometric (centrifugal)
  stiffening**, so the in-plane bending frequencies soften as omega_k^2 - Omega^2 and the first
  one turns unstable above Omega = omega_1 = 3.80 rad/s.

Numerics (both models): Exudyn's implicit generalized-alpha (``MainSolverImplicitSecondOrder``),
index-3 constraints, spectral radius rho_inf = 0.9 (Exudyn's default), fixed step h (adaptive
step reduction switched off: a failing step stops the run, which is reported), Exudyn's default
modified Newton (Jacobian kept across steps and refreshed when the iteration contracts badly),
relative tolerance 1e-8 (default) and absolute residual tolerance 1e-6 N (the default 1e-10 lies
below the round-off floor of the cable's residual, ~2e-7 N for 16 elements with EA = 2.8e7 N:
Newton then never converges and the adaptive step control halves the step, 67 iterations per
step and 100 s for the run; the tolerance is scaled by (n_elements/16)^2 for finer cables, whose
floor is higher: 2.5e-6 N at 64 elements, where 1e-6 fails in the first step). Changing it
tenfold moves the tip by a few 1e-9 m. theta(t) is a symbolic (C++-evaluated) user function by
default (``symbolic=False``: a Python one, about 8 calls per step, +1.2 s on the ANCF run). One
thread; linear solver EigenSparse for the cable (1.4x faster than the dense default), EXUdense
(the default) for the FFRF model (10 + 6 coordinates); no solution file; the tip is recorded
every step by a sensor kept in memory.

What the runs show (``--all --check``): the cable is converged (16 elements at h = 1e-3 against
64 at h/2: tip histories within 3e-7 .. 2e-5 m) and follows the linear modal equations *with*
centrifugal stiffening (:func:`modal_reference`) to 3e-5, 2e-4, 5e-4, 1.6e-3 m at Omega_s = 2, 4, 6, 10. The
FFRF body follows the same equations *without* stiffening (1.2e-5 m at Omega_s = 2): its lag
peak is 11 % too large at Omega_s = 2 (-0.2298 m against -0.2067 m), and for Omega_s = 4, 6, 10
the first mode goes unstable once Omega(t) passes omega_1 = 3.80 rad/s: the tip passes 1 m at
t = 9.8, 6.8 and 4.9 s and reaches -3.7e4 m at 20 s (Omega_s = 4); for 6 and 10 Exudyn's Newton
stops at t = 18.6 and 13.0 s when the solution norm passes its limit (maximumSolutionNorm = 1e38),
SolveSteps returning False without an exception.

Timing: ``wall_s`` is ``SolveSteps`` only; building (items + ``Assemble``) is ``build_s`` and
``InitializeSolver`` (initial accelerations) ``init_s``; for the FFRF model the flexmb assembly
of the solid beam (``fe_s``) and Exudyn's mode computation (``modes_s``) are reported apart.

Run:  python benchmarks/spin_up_exudyn.py               # Omega_s = 4, both models
      python benchmarks/spin_up_exudyn.py --all         # Omega_s = 2, 4, 6, 10
      python benchmarks/spin_up_exudyn.py --omegas 2 6 --check --out /tmp/spin_up_exudyn.json
"""
from __future__ import annotations

import argparse
import functools
import json
import math
import os
import sys
import time
from pathlib import Path

if __name__ == "__main__":
    for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_var, "1")

import numpy as np

ROOT = Path(__file__).resolve().parents[1]

# ---------------------------------------------------------------------------
# problem data (SI)
# ---------------------------------------------------------------------------
L = 10.0          # m
EA = 2.8e7        # N
EI = 1.4e4        # N m^2 (in-plane bending)
RHO_A = 1.2       # kg/m
T_S = 15.0        # s, spin-up time
T_END = 20.0      # s
H = 1e-3          # s
OMEGAS = (2.0, 4.0, 6.0, 10.0)   # rad/s
RHO_INF = 0.9
NEWTON_ABS_TOL = 1e-6            # see the module docstring
BETA_L = (1.8751040687119611, 4.6940911329741745, 7.8547574382376126, 10.995540734875467,
          14.137168391046471, 17.278759532088237)   # roots of cos(b) cosh(b) + 1 = 0

# Solid model of the beam for the modal body (hex20, flexmb assembly). The rectangular section
# h x b has EA/EI = 12/h^2, so h = sqrt(12 EI/EA); b = 2 h puts the out-of-plane bending modes at
# twice the in-plane ones (no degenerate pairs); E = EA/A, rho = rho A/A, nu = 0 (no Poisson
# coupling: the solid's bending stiffness is exactly E I and clamping the whole root face is the
# beam's clamp). 40 x 1 x 1 hex20 cells (1464 dofs): the four in-plane fixed-root frequencies are
# within 0.09 % of the Euler-Bernoulli values (1 x 1 cells through the section do not lock:
# the serendipity hex20 represents linear bending exactly).
SECTION_H = math.sqrt(12.0 * EI / EA)      # m, in-plane (y) height, 0.0775 m
SECTION_B = 2.0 * SECTION_H                # m, out-of-plane (z) width
SOLID_BEAM = {
    "cell_type": "hexahedron20",
    "cells": (40, 1, 1),                   # along x, y, z
    "box_lo": (0.0, -SECTION_H / 2, -SECTION_B / 2),
    "box_hi": (L, SECTION_H / 2, SECTION_B / 2),
    "E": EA / (SECTION_H * SECTION_B),     # Pa, 2.333e9
    "nu": 0.0,
    "rho": RHO_A / (SECTION_H * SECTION_B),  # kg/m^3, 100
    "generator": "verification.fem.meshes.solid_box(cell_type, cells, box_lo, box_hi)",
    "node_sets": "root: x = 0 face (clamped, the interface), tip: x = L face (tip = mean of its nodes)",
}


def theta(t: float, omega_s: float) -> float:
    """Prescribed hub angle (rad), the integral of the spin-up law."""
    w = 2.0 * math.pi / T_S
    if t < T_S:
        return omega_s / T_S * (0.5 * t * t + (math.cos(w * t) - 1.0) / (w * w))
    return omega_s * T_S / 2.0 + omega_s * (t - T_S)


def omega(t: float, omega_s: float) -> float:
    """Prescribed hub angular velocity (rad/s)."""
    w = 2.0 * math.pi / T_S
    return omega_s / T_S * (t - math.sin(w * t) / w) if t < T_S else omega_s


def beam_frequencies(n: int = 4) -> np.ndarray:
    """Clamped-free Euler-Bernoulli bending frequencies (rad/s) of the beam at rest."""
    return np.asarray(BETA_L[:n]) ** 2 * math.sqrt(EI / (RHO_A * L ** 4))


def _theta_array(t: np.ndarray, omega_s: float) -> np.ndarray:
    return np.array([theta(float(x), omega_s) for x in t])


def _hub_frame_tip(data: np.ndarray, omega_s: float) -> tuple[np.ndarray, np.ndarray]:
    """Times and in-plane tip deflection in the hub frame from sensor rows (t, x, y, ...)."""
    t = data[:, 0]
    th = _theta_array(t, omega_s)
    return t, -np.sin(th) * data[:, 1] + np.cos(th) * data[:, 2]


# ---------------------------------------------------------------------------
# Exudyn helpers
# ---------------------------------------------------------------------------
def exudyn_version() -> str | None:
    try:
        import exudyn as exu
    except ImportError:
        return None
    try:
        return exu.config.Version()
    except Exception:  # older releases
        return getattr(exu, "__version__", "unknown")


def _offset_function(mbs, omega_s: float, symbolic: bool):
    """Offset user function theta(t) of a CoordinateConstraint (symbolic: evaluated in C++)."""
    import exudyn as exu
    w = 2.0 * math.pi / T_S
    a = omega_s / T_S
    if not symbolic:
        def theta_py(mbs_, t, item, offset):
            return theta(t, omega_s)
        return theta_py
    from exudyn.advancedUtilities import CreateSymbolicUserFunction
    esym = exu.symbolic

    def theta_sym(mbs_, t, itemNumber, lOffset):   # argument names as Exudyn records them
        return esym.IfThenElse(t < T_S, a * (0.5 * t * t + (esym.cos(w * t) - 1.0) / (w * w)),
                               a * (0.5 * T_S * T_S) + omega_s * (t - T_S))
    return CreateSymbolicUserFunction(mbs, theta_sym, "offsetUserFunction", itemTypeName="ObjectConnectorCoordinate")


def _drive(mbs, node, n_coords: int, omega_s: float, symbolic: bool):
    """Hold coordinates 0..n-2 of ``node`` at zero and drive the last one with theta(t)."""
    from exudyn.itemInterface import CoordinateConstraint, MarkerNodeCoordinate, NodePointGround
    ground = mbs.AddNode(NodePointGround())
    m_ground = mbs.AddMarker(MarkerNodeCoordinate(nodeNumber=ground, coordinate=0))
    uf = _offset_function(mbs, omega_s, symbolic)
    for k in range(n_coords):
        m = mbs.AddMarker(MarkerNodeCoordinate(nodeNumber=node, coordinate=k))
        if k < n_coords - 1:
            mbs.AddObject(CoordinateConstraint(markerNumbers=[m_ground, m]))
        else:   # q_k - 0 - offset = 0
            mbs.AddObject(CoordinateConstraint(markerNumbers=[m_ground, m], offsetUserFunction=uf))
    return uf   # a symbolic function must stay alive as long as the system


def _settings(h: float, t_end: float, jacobian_every_step: bool = False, abs_tol: float = NEWTON_ABS_TOL,
              sparse: bool = False):
    import exudyn as exu
    ss = exu.SimulationSettings()
    ti = ss.timeIntegration
    ti.numberOfSteps = int(round(t_end / h))
    ti.endTime = t_end
    ti.verboseMode = 0
    ti.adaptiveStep = False                        # fixed h; a failed step ends the run
    ti.generalizedAlpha.spectralRadius = RHO_INF
    ti.generalizedAlpha.useIndex2Constraints = False   # index 3
    ti.generalizedAlpha.useNewmark = False
    ti.generalizedAlpha.computeInitialAccelerations = True
    ti.newton.useModifiedNewton = True             # Exudyn's default
    ti.newton.modifiedNewtonJacUpdatePerStep = jacobian_every_step
    ti.newton.absoluteTolerance = abs_tol
    ss.solution.file.write = False
    ss.solution.sensors.writePeriod = h
    ss.parallel.numberOfThreads = 1
    ss.linearSolver.solverType = exu.LinearSolverType.EigenSparse if sparse else exu.LinearSolverType.EXUdense
    return ss


def solve(mbs, ss) -> dict:
    """InitializeSolver + SolveSteps + FinalizeSolver with timers; tolerates a failed step. ``steps``: the steps of
    the fixed-step grid up to where it stopped; ``steps_taken``: Exudyn's step counter (adaptive runs, whose control
    shortens h); ``rejected``: its rejected adaptive steps; also used by benchmarks/ropes.py."""
    import exudyn as exu
    solver = exu.MainSolverImplicitSecondOrder()
    t0 = time.perf_counter()
    solver.InitializeSolver(mbs, ss)
    t1 = time.perf_counter()
    error = None
    try:
        ok = solver.SolveSteps(mbs, ss)
    except Exception as exc:   # noqa: BLE001 - Exudyn raises RuntimeError/ValueError on breakdown
        ok, error = False, f"{type(exc).__name__}: {exc}"
    t2 = time.perf_counter()
    try:
        solver.FinalizeSolver(mbs, ss)
    except Exception:   # noqa: BLE001
        pass
    t_stop = float(solver.it.currentTime)
    steps = max(int(round(t_stop / ss.timeIntegration.endTime * ss.timeIntegration.numberOfSteps)), 1)
    done = bool(ok) and abs(t_stop - ss.timeIntegration.endTime) < 1e-9
    return {"init_s": t1 - t0, "wall_s": t2 - t1, "completed": done,
            "t_stop": t_stop, "error": error, "steps": steps,
            "steps_taken": max(int(solver.it.currentStepIndex), 1),
            "rejected": int(solver.it.rejectedAutomaticStepSizeSteps),
            "newton_per_step": solver.it.newtonStepsCount / steps,
            "jacobians_per_step": solver.it.newtonJacobiCount / steps,
            "n_ode2": int(solver.GetODE2size()), "n_ae": int(solver.GetAEsize())}


def _summary(t: np.ndarray, tip: np.ndarray) -> dict:
    finite = np.isfinite(tip)
    over = np.flatnonzero(~finite | (np.abs(np.where(finite, tip, np.inf)) > 1.0))
    return {"tip_min": float(np.min(tip[finite])) if finite.any() else float("nan"),
            "tip_max": float(np.max(tip[finite])) if finite.any() else float("nan"),
            "tip_end": float(tip[-1]), "t_end_reached": float(t[-1]),
            "t_tip_beyond_1m": float(t[over[0]]) if over.size else None}


# ---------------------------------------------------------------------------
# 1. nonlinear beam: ANCFCable2D
# ---------------------------------------------------------------------------
def exudyn_ancf_cable(omega_s: float, n_elements: int = 16, h: float = H, t_end: float = T_END,
                      symbolic: bool = True, jacobian_every_step: bool = False,
                      newton_abs_tol: float | None = None) -> dict:
    """Spin-up of the beam as ``n_elements`` ANCFCable2D elements clamped to a driven 2D hub.

    ``newton_abs_tol`` (N): Newton's absolute residual tolerance; default NEWTON_ABS_TOL for up to
    16 elements, scaled with (n_elements/16)^2 above (the residual's round-off floor grows with
    the element stiffness EA/l_e: about 2e-7 for 16 elements, 2.5e-6 for 64).

    Returns a dict with ``t``, ``tip`` (in-plane tip deflection in the hub frame, m), ``wall_s``
    (SolveSteps), ``build_s``, ``init_s``, ``n_coordinates`` (ODE2) and ``n_constraints`` (AE),
    Newton statistics, ``completed``/``t_stop`` and ``notes``.
    """
    import exudyn as exu
    from exudyn.itemInterface import (NodePoint2DSlope1, NodeRigidBody2D, ObjectANCFCable2D, ObjectJointGeneric,
                                      ObjectRigidBody2D, MarkerBodyRigid, SensorBody)
    t0 = time.perf_counter()
    sc = exu.SystemContainer()
    mbs = sc.AddSystem()
    # rigid hub: (x, y, phi) held at (0, 0, theta(t)); its mass and inertia play no role
    hub_node = mbs.AddNode(NodeRigidBody2D(referenceCoordinates=[0.0, 0.0, 0.0]))
    hub = mbs.AddObject(ObjectRigidBody2D(nodeNumber=hub_node, mass=1.0, inertia=1.0))
    keep = _drive(mbs, hub_node, 3, omega_s, symbolic)
    le = L / n_elements
    nodes = [mbs.AddNode(NodePoint2DSlope1(referenceCoordinates=[i * le, 0.0, 1.0, 0.0]))
             for i in range(n_elements + 1)]
    elements = [mbs.AddObject(ObjectANCFCable2D(nodeNumbers=[nodes[i], nodes[i + 1]], length=le,
                                                massPerLength=RHO_A, bendingStiffness=EI, axialStiffness=EA))
                for i in range(n_elements)]
    # clamp: root position and slope direction follow the hub (x, y, rotation about z)
    m_hub = mbs.AddMarker(MarkerBodyRigid(bodyNumber=hub, localPosition=[0.0, 0.0, 0.0]))
    m_root = mbs.AddMarker(MarkerBodyRigid(bodyNumber=elements[0], localPosition=[0.0, 0.0, 0.0]))
    mbs.AddObject(ObjectJointGeneric(markerNumbers=[m_hub, m_root], constrainedAxes=[1, 1, 0, 0, 0, 1]))
    sensor = mbs.AddSensor(SensorBody(bodyNumber=elements[-1], localPosition=[le, 0.0, 0.0],
                                      outputVariableType=exu.OutputVariableType.Position,
                                      storeInternal=True, writeToFile=False))
    mbs.Assemble()
    build = time.perf_counter() - t0
    if newton_abs_tol is None:
        newton_abs_tol = NEWTON_ABS_TOL * max(1.0, n_elements / 16) ** 2
    run = solve(mbs, _settings(h, t_end, jacobian_every_step, newton_abs_tol, sparse=True))
    t, tip = _hub_frame_tip(np.asarray(mbs.GetSensorStoredData(sensor)), omega_s)
    # check of the clamp: slope angle at the root against theta at the last time
    q0 = np.asarray(mbs.GetNodeOutput(nodes[0], exu.OutputVariableType.Coordinates)) + [0.0, 0.0, 1.0, 0.0]
    d = math.atan2(q0[3], q0[2]) - theta(float(t[-1]), omega_s)
    clamp_err = abs(math.atan2(math.sin(d), math.cos(d)))
    del keep
    out = {"model": f"Exudyn ANCFCable2D x {n_elements}", "omega_s": omega_s, "h": h, "t_end": t_end,
           "t": t, "tip": tip, "build_s": build, **run, "n_coordinates": run["n_ode2"],
           "n_constraints": run["n_ae"], "clamp_angle_error_end": clamp_err, **_summary(t, tip)}
    out["notes"] = (
        f"{n_elements} ObjectANCFCable2D (2 NodePoint2DSlope1 each, 4 coordinates per node; massPerLength={RHO_A}, "
        f"bendingStiffness={EI}, axialStiffness={EA}; useReducedOrderIntegration=0: Gauss order 9 axial / 5 bending; "
        "nonlinear axial strain |r'|-1 and curvature: centrifugal stiffening included). Root clamped by "
        "ObjectJointGeneric(constrainedAxes=[1,1,0,0,0,1]) between MarkerBodyRigid on the first element (x=0) and "
        "on an ObjectRigidBody2D hub whose NodeRigidBody2D coordinates are held by CoordinateConstraints "
        f"(x=y=0, phi=theta(t) via a {'symbolic' if symbolic else 'Python'} offsetUserFunction). Tip = SensorBody "
        "position at the end of the last element, rotated by -theta(t). Implicit generalized-alpha, index 3, "
        f"rho_inf={RHO_INF}, h={h}, fixed step, modified Newton (Jacobian "
        f"{'refreshed every step' if jacobian_every_step else 'kept across steps, Exudyn default'}), "
        f"relTol 1e-8, absTol {newton_abs_tol:g} N; sparse linear solver (EigenSparse; 1.4x faster than the "
        "dense default here); 1 thread.")
    return out


# ---------------------------------------------------------------------------
# 2. modal body: ObjectFFRFreducedOrder on 4 fixed-root modes of a solid beam
# ---------------------------------------------------------------------------
def solid_beam_model():
    """The flexmb FEModel of the solid beam of :data:`SOLID_BEAM` and its root and tip node ids.

    Returns ``(model, root, tip)``; the mesh also carries them as node sets ``"root"``/``"tip"``.
    """
    from flexmb.fem.materials import Material
    from flexmb.fem.mesh import FEMesh
    from flexmb.fem.model import FEModel
    try:
        from verification.fem.meshes import solid_box
    except ImportError:   # run from a checkout without installing the package
        sys.path.insert(0, str(ROOT))
        from verification.fem.meshes import solid_box
    p = SOLID_BEAM
    points, cells = solid_box(p["cell_type"], p["cells"], p["box_lo"], p["box_hi"])
    tol = 1e-9 * L
    root = np.flatnonzero(points[:, 0] < tol)
    tip = np.flatnonzero(points[:, 0] > L - tol)
    mesh = FEMesh(points, {p["cell_type"]: cells}, node_sets={"root": root, "tip": tip})
    model = FEModel(mesh, Material(E=p["E"], nu=p["nu"], rho=p["rho"], name="beam"))
    return model, np.asarray(mesh.node_sets["root"]), np.asarray(mesh.node_sets["tip"])


def _uy_share(Phi: np.ndarray, M) -> np.ndarray:
    """Share of each mode's kinetic energy (mass-weighted norm) in the y components."""
    Py = np.zeros_like(Phi)
    Py[1::3] = Phi[1::3]
    return np.einsum("ik,ik->k", Py, M @ Py) / np.einsum("ik,ik->k", Phi, M @ Phi)


@functools.lru_cache(maxsize=4)
def _modal_data(n_modes: int, n_candidates: int):
    """Solid beam (flexmb) and its fixed-root modes (Exudyn FEMinterface); cached across runs."""
    import exudyn.FEM as efem
    t0 = time.perf_counter()
    model, root, tip = solid_beam_model()
    K, M = model.K.tocsr(), model.M.tocsr()
    t1 = time.perf_counter()
    fem = efem.FEMinterface()
    fem.nodes = {"Position": np.asarray(model.points, dtype=float)}
    fem.massMatrix, fem.stiffnessMatrix = M, K
    # one interface (the root face, RBE2); excludeRigidBodyMotion drops its 6 static modes, so the
    # basis is the n_candidates lowest eigenmodes with the root face clamped
    fem.ComputeHurtyCraigBamptonModes(boundaryNodesList=[[int(i) for i in root]], nEigenModes=n_candidates,
                                      useSparseSolver=True, computationMode=efem.HCBstaticModeSelection.RBE2,
                                      excludeRigidBodyMotion=True)
    t2 = time.perf_counter()
    Phi = np.asarray(fem.modeBasis["matrix"])
    lam = np.abs(np.asarray(fem.eigenValues))
    share = _uy_share(Phi, M)
    in_plane = np.flatnonzero(share > 0.5)
    if in_plane.size < n_modes:
        raise RuntimeError(f"only {in_plane.size} in-plane modes among the {n_candidates} computed; raise n_candidates")
    sel = in_plane[:n_modes]
    fem.modeBasis = {"matrix": Phi[:, sel]}
    fem.eigenValues = lam[sel]
    Mr, Kr = Phi[:, sel].T @ (M @ Phi[:, sel]), Phi[:, sel].T @ (K @ Phi[:, sel])
    import scipy.linalg as sla
    reduced = np.sqrt(np.abs(sla.eigh(0.5 * (Kr + Kr.T), 0.5 * (Mr + Mr.T), eigvals_only=True)))
    info = {"fe_s": t1 - t0, "modes_s": t2 - t1, "ndof": int(model.ndof), "n_nodes": int(model.n_nodes),
            "n_elements": int(sum(len(c) for c in model.mesh.cells.values())),
            "root_nodes": int(root.size), "tip_nodes": int(tip.size),
            "all_frequencies_rad_s": np.sqrt(lam).tolist(), "uy_share": share.tolist(),
            "selected": sel.tolist(), "mode_frequencies_rad_s": np.sqrt(lam[sel]).tolist(),
            "reduced_frequencies_rad_s": reduced.tolist(),
            "beam_frequencies_rad_s": beam_frequencies(n_modes).tolist()}
    info["mode_frequency_rel_error"] = [(a - b) / b for a, b in
                                        zip(info["mode_frequencies_rad_s"], info["beam_frequencies_rad_s"])]
    return fem, root, tip, Phi[:, sel], info


def exudyn_ffrf(omega_s: float, n_modes: int = 4, h: float = H, t_end: float = T_END, symbolic: bool = True,
                attach: str = "frame", n_candidates: int = 8, jacobian_every_step: bool = False,
                newton_abs_tol: float = NEWTON_ABS_TOL) -> dict:
    """Spin-up of the modal body: ObjectFFRFreducedOrder with ``n_modes`` in-plane fixed-root modes.

    ``attach="frame"``: the floating-frame node (NodeRigidBodyRxyz) is the clamp and is driven
    directly; ``attach="hub"``: a MarkerSuperElementRigid on the root-face nodes is joined
    (GenericJoint, all 6 axes) to a driven rigid hub, frame node with Euler parameters.
    Returns the dict of :func:`exudyn_ancf_cable` plus the mode frequencies and mesh data.
    """
    import exudyn as exu
    import exudyn.FEM as efem
    from exudyn.itemInterface import (MarkerBodyRigid, MarkerSuperElementPosition, MarkerSuperElementRigid,
                                      NodeRigidBodyRxyz, ObjectJointGeneric, ObjectRigidBody, SensorMarker)
    if attach not in ("frame", "hub"):
        raise ValueError(f"attach must be 'frame' or 'hub', got {attach!r}")
    fem, root, tip_nodes, Phi, info = _modal_data(n_modes, n_candidates)
    t0 = time.perf_counter()
    sc = exu.SystemContainer()
    mbs = sc.AddSystem()
    node_type = "NodeType.RotationRxyz" if attach == "frame" else "NodeType.RotationEulerParameters"
    cms = efem.ObjectFFRFreducedOrderInterface(fem, rigidBodyNodeType=node_type)
    body = cms.AddObjectFFRFreducedOrder(mbs, positionRef=[0.0, 0.0, 0.0], initialVelocity=[0.0, 0.0, 0.0],
                                         initialAngularVelocity=[0.0, 0.0, 0.0], gravity=[0.0, 0.0, 0.0])
    ffrf = body["oFFRFreducedOrder"]
    if attach == "frame":
        keep = _drive(mbs, body["nRigidBody"], 6, omega_s, symbolic)
    else:
        hub_node = mbs.AddNode(NodeRigidBodyRxyz(referenceCoordinates=[0.0] * 6))
        hub = mbs.AddObject(ObjectRigidBody(nodeNumber=hub_node, mass=1.0,
                                            inertia=[1.0, 1.0, 1.0, 0.0, 0.0, 0.0]))
        keep = _drive(mbs, hub_node, 6, omega_s, symbolic)
        root_list = [int(i) for i in root]
        m_root = mbs.AddMarker(MarkerSuperElementRigid(bodyNumber=ffrf, meshNodeNumbers=root_list,
                                                       weightingFactors=[1.0 / len(root_list)] * len(root_list),
                                                       offset=[0.0, 0.0, 0.0]))
        m_hub = mbs.AddMarker(MarkerBodyRigid(bodyNumber=hub, localPosition=[0.0, 0.0, 0.0]))
        mbs.AddObject(ObjectJointGeneric(markerNumbers=[m_hub, m_root], constrainedAxes=[1, 1, 1, 1, 1, 1]))
    tips = [int(i) for i in tip_nodes]
    m_tip = mbs.AddMarker(MarkerSuperElementPosition(bodyNumber=ffrf, meshNodeNumbers=tips,
                                                     weightingFactors=[1.0 / len(tips)] * len(tips)))
    sensor = mbs.AddSensor(SensorMarker(markerNumber=m_tip, outputVariableType=exu.OutputVariableType.Position,
                                        storeInternal=True, writeToFile=False))
    mbs.Assemble()
    build = time.perf_counter() - t0
    run = solve(mbs, _settings(h, t_end, jacobian_every_step, newton_abs_tol))
    t, tip = _hub_frame_tip(np.asarray(mbs.GetSensorStoredData(sensor)), omega_s)
    del keep
    out = {"model": f"Exudyn FFRFreducedOrder, {n_modes} modes", "omega_s": omega_s, "h": h, "t_end": t_end,
           "attach": attach, "t": t, "tip": tip, "build_s": build, "fe_s": info["fe_s"], "modes_s": info["modes_s"],
           **run, "n_coordinates": run["n_ode2"], "n_constraints": run["n_ae"], **_summary(t, tip),
           "mode_frequencies_rad_s": info["mode_frequencies_rad_s"],
           "beam_frequencies_rad_s": info["beam_frequencies_rad_s"],
           "mode_frequency_rel_error": info["mode_frequency_rel_error"],
           "reduced_frequencies_rad_s": info["reduced_frequencies_rad_s"],
           "mesh": {**{k: (list(v) if isinstance(v, tuple) else v) for k, v in SOLID_BEAM.items()},
                    "ndof": info["ndof"], "n_nodes": info["n_nodes"], "n_elements": info["n_elements"],
                    "root_nodes": info["root_nodes"], "tip_nodes": info["tip_nodes"]},
           "candidate_modes": {"frequencies_rad_s": info["all_frequencies_rad_s"], "uy_share": info["uy_share"],
                               "selected": info["selected"]}}
    w = ", ".join(f"{x:.4f}" for x in info["mode_frequencies_rad_s"])
    out["notes"] = (
        f"Solid beam {SOLID_BEAM['cells'][0]}x{SOLID_BEAM['cells'][1]}x{SOLID_BEAM['cells'][2]} "
        f"{SOLID_BEAM['cell_type']} on [0,{L}]x[-h/2,h/2]x[-b/2,b/2], h={SECTION_H:.6f} m (in-plane), "
        f"b=2h={SECTION_B:.6f} m, E={SOLID_BEAM['E']:.6e} Pa, nu=0, rho={SOLID_BEAM['rho']:.6g} kg/m^3 "
        f"({info['ndof']} dofs), built by verification.fem.meshes.solid_box and assembled by flexmb FEModel "
        "(consistent mass). Modes: Exudyn FEMinterface (nodes, massMatrix, stiffnessMatrix set directly) "
        f".ComputeHurtyCraigBamptonModes(boundaryNodesList=[root face, {info['root_nodes']} nodes], "
        f"nEigenModes={n_candidates}, RBE2, excludeRigidBodyMotion=True) = the {n_candidates} lowest eigenmodes "
        "with the root face clamped; of these the first "
        f"{n_modes} in-plane ones (kinetic-energy share of u_y > 0.5; modes {info['selected']} of the "
        f"{n_candidates}: the others are out-of-plane bending, which the in-plane loading of the z-symmetric "
        f"mesh leaves unexcited) are kept: omega = {w} rad/s (Euler-Bernoulli: "
        + ", ".join(f"{x:.4f}" for x in info["beam_frequencies_rad_s"]) + "). "
        "ObjectFFRFreducedOrderInterface + AddObjectFFRFreducedOrder (C++ FFRF terms, no user functions); "
        "constant reduced stiffness: NO geometric/centrifugal stiffening. "
        + ("Frame node NodeRigidBodyRxyz driven directly by 6 CoordinateConstraints (x,y,z,rx,ry=0, rz=theta(t)); "
           if attach == "frame" else
           "Frame node with Euler parameters; MarkerSuperElementRigid on the root-face nodes (equal weights) joined "
           "by ObjectJointGeneric (6 axes) to a NodeRigidBodyRxyz hub driven by 6 CoordinateConstraints; ")
        + f"tip = MarkerSuperElementPosition on the {info['tip_nodes']} tip-face nodes (equal weights), global "
        "position rotated by -theta(t). Same integrator settings as the ANCF model; dense linear solver "
        "(EXUdense, Exudyn's default; faster than EigenSparse for these 16 coordinates).")
    return out


# ---------------------------------------------------------------------------
# independent check: linear modal equations of the rotating beam (scipy)
# ---------------------------------------------------------------------------
def modal_reference(omega_s: float, n_modes: int = 4, stiffening: bool = True, t_end: float = T_END,
                    h_out: float = H) -> dict:
    """Tip history of the linear rotating-cantilever modal equations (a cross-check, not Exudyn).

    In the hub frame, with the clamped-free Euler-Bernoulli modes phi_k (int phi_k^2 = L):
    M q'' + (K - Omega^2 M + s Omega^2 K_g) q = -Omega' rho A int x phi dx, where
    K_g = int rho A (L^2 - x^2)/2 phi_i' phi_j' dx is the centrifugal geometric stiffness and
    s = 1 (stiffening) or 0 (what a linear floating-frame body without stiffening computes).
    Integrated by scipy's DOP853 at rtol 1e-10.
    """
    from scipy.integrate import solve_ivp
    b = np.asarray(BETA_L[:n_modes])
    xg, wg = np.polynomial.legendre.leggauss(200)
    x, wq = 0.5 * L * (xg + 1.0), 0.5 * L * wg
    z = np.outer(b, x) / L
    c = ((np.cosh(b) + np.cos(b)) / (np.sinh(b) + np.sin(b)))[:, None]
    phi = np.cosh(z) - np.cos(z) - c * (np.sinh(z) - np.sin(z))
    dphi = (b / L)[:, None] * (np.sinh(z) + np.sin(z) - c * (np.cosh(z) - np.cos(z)))
    M = RHO_A * (phi * wq) @ phi.T
    K = EI * np.diag(b ** 4 / L ** 4) @ ((phi * wq) @ phi.T)
    Kg = (dphi * (wq * RHO_A * (L * L - x * x) / 2.0)) @ dphi.T
    f = RHO_A * phi @ (wq * x)
    tip_row = np.cosh(b) - np.cos(b) - c[:, 0] * (np.sinh(b) - np.sin(b))
    Minv = np.linalg.inv(M)
    w = 2.0 * math.pi / T_S
    s = 1.0 if stiffening else 0.0

    def rhs(t, y):
        q, v = y[:n_modes], y[n_modes:]
        W = omega(t, omega_s)
        Wd = omega_s / T_S * (1.0 - math.cos(w * t)) if t < T_S else 0.0
        return np.concatenate([v, Minv @ (-(K + W * W * (s * Kg - M)) @ q - Wd * f)])

    t = np.linspace(0.0, t_end, int(round(t_end / h_out)) + 1)
    sol = solve_ivp(rhs, (0.0, t_end), np.zeros(2 * n_modes), t_eval=t, rtol=1e-10, atol=1e-12, method="DOP853")
    return {"model": f"linear modal equations, {n_modes} modes, {'with' if stiffening else 'no'} stiffening (scipy)",
            "omega_s": omega_s, "t": sol.t, "tip": tip_row @ sol.y[:n_modes],
            "frequencies_rad_s": np.sqrt(np.linalg.eigvalsh(np.linalg.solve(M, K))).tolist()}


# ---------------------------------------------------------------------------
# comparison and main
# ---------------------------------------------------------------------------
def _max_diff(a: dict, b: dict) -> float:
    """Largest |tip_a - tip_b| over a's time points within both runs (b interpolated linearly)."""
    ta, tb = np.asarray(a["t"]), np.asarray(b["t"])
    keep = ta <= min(ta[-1], tb[-1]) + 1e-12
    d = np.abs(np.asarray(a["tip"])[keep] - np.interp(ta[keep], tb, np.asarray(b["tip"])))
    return float(np.max(d)) if np.all(np.isfinite(d)) else float("nan")


def _status(r: dict) -> str:
    """ok / diverged (|tip| beyond the beam length) / stopped (Exudyn's Newton gave up)."""
    big = not np.all(np.isfinite(r["tip"])) or float(np.max(np.abs(r["tip"]))) > L
    if not r["completed"]:
        return f"stopped at t = {r['t_stop']:.3f} s" + (" (diverged)" if big else "")
    return "diverged (tip beyond L)" if big else "ok"


def _row(r: dict, ref: dict | None) -> str:
    def num(v, fmt):
        return "-" if v is None or not np.isfinite(v) else format(v, fmt)
    diff = "" if ref is None or ref is r else f"{_max_diff(r, ref):.3e}"
    return (f"| {r['omega_s']:g} | {r['model']} | {r['n_coordinates']} + {r['n_constraints']} | "
            f"{num(r['wall_s'], '.2f')} | {num(r['build_s'], '.3f')} | {num(r['init_s'], '.4f')} | "
            f"{num(r['newton_per_step'], '.2f')} | {r['tip_min']:.6g} | {r['tip_end']:.6g} | {diff} | {_status(r)} |")


def _jsonable(r: dict) -> dict:
    return {k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in r.items()}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--all", action="store_true", help="Omega_s = 2, 4, 6, 10")
    ap.add_argument("--omegas", type=float, nargs="+", default=[4.0])
    ap.add_argument("--h", type=float, default=H)
    ap.add_argument("--t-end", type=float, default=T_END)
    ap.add_argument("--n-elements", type=int, default=16, help="ANCF elements")
    ap.add_argument("--python-uf", action="store_true", help="theta(t) as a Python user function (not symbolic)")
    ap.add_argument("--check", action="store_true",
                    help="also: FFRF attached through a superelement marker to a hub, ANCF with 4x elements and "
                         "h/2, and the linear modal equations with and without stiffening (scipy)")
    ap.add_argument("--out", help="write all results (time histories included) to this JSON file")
    args = ap.parse_args(argv)
    if exudyn_version() is None:
        print("exudyn is not installed (pip install 'flexmb[bench]')", file=sys.stderr)
        return 1
    omegas = list(OMEGAS) if args.all else args.omegas
    sym = not args.python_uf
    results = []
    for om in omegas:
        print(f"Omega_s = {om:g}: ANCF ...", file=sys.stderr, flush=True)
        a = exudyn_ancf_cable(om, args.n_elements, args.h, args.t_end, symbolic=sym)
        print(f"  {a['wall_s']:.2f} s; FFRF ...", file=sys.stderr, flush=True)
        f = exudyn_ffrf(om, 4, args.h, args.t_end, symbolic=sym)
        print(f"  {f['wall_s']:.2f} s", file=sys.stderr, flush=True)
        group = [a, f]
        if args.check:
            group.append(exudyn_ffrf(om, 4, args.h, args.t_end, symbolic=sym, attach="hub"))
            group[-1]["model"] += " (hub + superelement marker)"
            group.append(exudyn_ancf_cable(om, 4 * args.n_elements, args.h / 2, args.t_end, symbolic=sym))
            for stiff in (True, False):
                m = modal_reference(om, 4, stiff, args.t_end, args.h)
                m.update(_summary(m["t"], m["tip"]), completed=True, t_stop=float(m["t"][-1]),
                         n_coordinates=8, n_constraints=0, wall_s=float("nan"), build_s=float("nan"),
                         init_s=float("nan"), newton_per_step=float("nan"))
                group.append(m)
        results.append(group)
    print(f"Exudyn {exudyn_version()}, h = {args.h}, T = {args.t_end} s, generalized-alpha (index 3, "
          f"rho_inf = {RHO_INF}); wall = SolveSteps only")
    print("| Omega_s | model | ODE2 + AE coordinates | wall (s) | build (s) | init (s) | Newton it./step | "
          "tip_min (m) | tip_20 (m) | max abs(tip - ANCF) (m) | run |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for group in results:
        for r in group:
            print(_row(r, group[0]))
    f0 = results[0][1]
    print("FFRF modes (rad/s): " + ", ".join(f"{x:.4f}" for x in f0["mode_frequencies_rad_s"])
          + "; beam: " + ", ".join(f"{x:.4f}" for x in f0["beam_frequencies_rad_s"])
          + "; rel. error: " + ", ".join(f"{x:+.2e}" for x in f0["mode_frequency_rel_error"]))
    print(f"FFRF set-up outside the timing: flexmb solid beam + K, M {f0['fe_s']:.2f} s, "
          f"Exudyn mode computation {f0['modes_s']:.2f} s")
    for group in results:
        a, f = group[0], group[1]
        line = f"Omega_s = {a['omega_s']:g}: wall-time ratio ANCF / FFRF = {a['wall_s'] / f['wall_s']:.2f}"
        if _status(f) != "ok":
            line += f" (FFRF {_status(f)})"
        print(line)
        if args.check:   # group: ANCF, FFRF, FFRF via hub, fine ANCF, modal with / without stiffening
            print(f"  max |tip difference| (m): FFRF frame vs hub {_max_diff(f, group[2]):.2e}; ANCF vs ANCF "
                  f"x{4 * args.n_elements} at h/2 {_max_diff(a, group[3]):.2e}; ANCF vs linear modal with stiffening "
                  f"{_max_diff(a, group[4]):.2e}; FFRF vs linear modal without stiffening {_max_diff(f, group[5]):.2e}")
    if args.out:
        report = {"benchmark": "spin_up_exudyn", "exudyn": exudyn_version(), "h": args.h, "t_end": args.t_end,
                  "rho_inf": RHO_INF, "newton_abs_tol": NEWTON_ABS_TOL,
                  "problem": {"L": L, "EA": EA, "EI": EI, "rhoA": RHO_A, "T_s": T_S},
                  "results": [[_jsonable(r) for r in g] for g in results]}
        Path(args.out).write_text(json.dumps(report) + "\n")
        print(f"written {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
