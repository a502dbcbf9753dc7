"""DC motor: a force element with its own first-order state (the armature current).

A separately excited DC motor between the two bodies of a revolute (or cylindrical) joint,
about the joint axis (He 1992, §9.4 after Samanta 1990):

    L_a di/dt + r_a i + K_p omega = V(t),      torque on body b (reaction on a)  tau = K_p i - D omega,

with omega the relative angular velocity about the axis (rad/s). The current is integrated
together with the mechanism in the same Newton iteration: the element owns one coordinate, the
charge ``Q`` (C), with ``Q_dot = i``, so the electrical equation is second order in ``Q`` --
inductance as mass, resistance as damping, the back-EMF ``K_p omega`` and the torque ``K_p i`` a
gyroscopic (power-conserving) coupling (the electromechanical analogy; Meirovitch, *Methods of
Analytical Dynamics*, §9). Generalized-alpha then integrates it exactly like the bodies.
Energy (Huston & Liu balance): the magnetic energy ``L_a i^2 / 2`` counts as kinetic, the supply
power ``V i`` and the losses ``-r_a i^2 - D omega^2`` as non-conservative power.
"""
from __future__ import annotations

import numpy as np

from ..checks import scalar
from ..compiled import lazy_module
from ..errors import ModelError
from ..groups import ElementGroup, EvalState
from ..timefunctions import as_time_function
from .base import ForceElement
from .springs import ScalarSpringGroup, SpringPrimitive

cf = lazy_module("flexmb.compiled.forces")   # numba loads with the first evaluation, not at import

__all__ = ["DCMotor", "DCMotorGroup", "build_groups"]


def _positive(value, what: str, owner: str, allow_zero: bool = False) -> float:
    return scalar(value, what, owner, sign="non-negative" if allow_zero else "positive")


class DCMotor(ForceElement):
    """Separately excited DC motor on the axis of ``joint`` (revolute or cylindrical).

    Args:
        joint: the joint whose axis the motor turns; body b is the rotor side.
        K_p: torque and back-EMF constant, N m/A (= V s/rad).
        r_a: armature resistance, ohm.
        L_a: armature inductance, H (> 0).
        D: viscous friction on the relative rotation, N m s/rad.
        voltage: supply V(t), volt: a number, a callable ``V(t)`` or a TimeFunction (a table:
            ``TimeFunction.table``).
        current: initial current, A.
    """

    kind = "DC motor"
    n_states = 1

    def __init__(self, joint, K_p: float, r_a: float, L_a: float, D: float = 0.0, voltage=0.0,
                 current: float = 0.0, name: str | None = None):
        super().__init__(name)
        if not hasattr(joint, "angle_primitive"):
            what = f"{joint.kind} joint {joint.name!r}" if hasattr(joint, "kind") and hasattr(joint, "name") else repr(joint)
            raise ModelError(f"{self.owner}: needs a joint with a rotation axis (revolute or cylindrical), got {what}")
        self.joint = joint
        self.K_p = _positive(K_p, "K_p (N m/A)", self.owner)
        self.r_a = _positive(r_a, "r_a (ohm)", self.owner, allow_zero=True)
        self.L_a = _positive(L_a, "L_a (H)", self.owner)
        self.D = _positive(D, "D (N m s/rad)", self.owner, allow_zero=True)
        self.voltage = as_time_function(voltage, self.owner)
        self.constant_voltage = None if callable(voltage) or hasattr(voltage, "value") else float(voltage)
        self.current0 = scalar(current, "initial current (A)", self.owner)
        self.offset = -1

    @property
    def bodies(self):
        """The two bodies of the driven joint."""
        return (self.joint.body_a, self.joint.body_b)

    def angle_primitive(self) -> SpringPrimitive:
        """The relative rotation about the joint axis, as a measure (no stiffness of its own)."""
        p = self.joint.angle_primitive(f"{self.owner} angle")
        return SpringPrimitive("angle", p.body_i, p.body_j, p.vectors, 0.0, 0.0, 0.0, self.owner, p.shapes)

    def supply(self, t: float) -> float:
        """The supply voltage V(t) (V), checked by the TimeFunction bound to this motor: one finite number."""
        return self.voltage.value(t)


class DCMotorGroup(ElementGroup):
    """All DC motors whose bodies have the same modal counts, one compiled call.

    Columns per instance: the pair coordinates of the joint's bodies, then the motor's charge. The
    inductance is the charge's inertia: the magnetic energy ``L_a i^2 / 2`` is the family's ``kinetic``.
    """

    family = "motors"
    compiled_part = "motors"
    compiled_words = "DC motors"

    @classmethod
    def pack_compiled(cls, groups: list) -> tuple:
        """The DC motors' part of the compiled model (flexmb/compiled/model.py ``Motors``); the supply voltages
        ``V`` are set before each step."""
        from ..compiled.model import MotorTable, Motors, concat, int_table
        rows, og = [], np.zeros(5, dtype=np.int64)
        for g, _ in groups:
            m = g.measure
            n, nx = m.gather.shape
            sm = m.shps.shape[3]
            rows.append((n, nx, m.n_modes[0], m.n_modes[1], sm, *og))
            og += (n * nx, 12 * n, 12 * n * sm, n, n * (nx + 1) ** 2)
        ms = [g.measure for g, _ in groups]
        return Motors(int_table(MotorTable, rows), concat([m.gather.reshape(-1) for m in ms], np.int64),
                      concat([g.scatter.reshape(-1) for g, _ in groups], np.int64),
                      concat([m.vecs.reshape(-1) for m in ms], float), concat([m.shps.reshape(-1) for m in ms], float),
                      np.array([m.sides for m in ms], dtype=np.int64).reshape(-1, 4),
                      concat([g.state for g, _ in groups], np.int64), concat([m.angle_ref for m in ms], float),
                      *(concat([getattr(g, a) for g, _ in groups], float) for a in ("K_p", "r_a", "L_a", "D")),
                      np.zeros(int(sum(g.n for g, _ in groups))), concat([p for _, p in groups], np.int64))

    def __init__(self, motors: list[DCMotor], nq: int):
        self.motors = motors
        self.n = len(motors)
        self.labels = [m.owner for m in motors]
        self.measure = ScalarSpringGroup("angle", [m.angle_primitive() for m in motors], nq)
        self.state = np.array([m.offset for m in motors], dtype=np.int64)
        self.scatter = np.concatenate([self.measure.scatter, self.state[:, None]], axis=1)
        self.K_p = np.array([m.K_p for m in motors])
        self.r_a = np.array([m.r_a for m in motors])
        self.L_a = np.array([m.L_a for m in motors])
        self.D = np.array([m.D for m in motors])
        self.V_const = np.array([m.constant_voltage if m.constant_voltage is not None else 0.0 for m in motors])
        self.varying = np.array([k for k, m in enumerate(motors) if m.constant_voltage is None], dtype=np.int64)

    def supply(self, t: float) -> np.ndarray:
        """Supply voltages (V) of all motors at time ``t`` (s); constants precomputed."""
        V = self.V_const.copy()
        for k in self.varying:               # one call per user voltage function (constants precomputed)
            V[k] = self.motors[k].supply(t)
        return V

    def residual(self, st: EvalState, coef=None):
        """(r (n, nx+1), blocks ``cM M + cC C + cK K`` or None) on the columns ``scatter``: one compiled call
        (flexmb/compiled/forces.py, ``motor_kernel``)."""
        m = self.measure
        n, nx = m.gather.shape
        want = coef is not None
        cM, cC, cK = (float(c) for c in coef) if want else (0.0, 0.0, 0.0)
        r = np.empty((n, nx + 1))
        blk = np.empty((n, nx + 1, nx + 1)) if want else np.empty((1, nx + 1, nx + 1))
        cf.motor_kernel(m.code, st.qe, st.ve, st.a, m.gather, self.state, m.vecs, m.shps, m.sides, *m.n_modes, m.angle_ref, self.K_p,
                        self.r_a, self.L_a, self.D, self.supply(st.t), cM, cC, cK, want, r, blk)
        return r, (blk if want else None)

    def kinetic(self, st: EvalState) -> float:
        """Magnetic energy ``sum L_a i^2 / 2`` (J), kinetic in the electromechanical analogy."""
        return float(0.5 * np.sum(self.L_a * st.v[self.state] ** 2))

    def power(self, st: EvalState) -> float:
        """Supply power minus losses ``V i - r_a i^2 - D omega^2`` (W)."""
        _, w = self.measure.values(st.qe, st.ve)
        i = st.ve[self.state]
        return float(np.sum(self.supply(st.t) * i - self.r_a * i * i - self.D * w * w))

    def currents(self, v) -> np.ndarray:
        """Armature currents (A), the motors' own coordinates in ``v``."""
        return v[self.state]

    def torques(self, qe, ve) -> np.ndarray:
        """Motor torque on the rotor side ``K_p i - D omega`` (N m)."""
        _, w = self.measure.values(qe, ve)
        return self.K_p * ve[self.state] - self.D * w


def build_groups(forces, nq: int, st: EvalState) -> list[DCMotorGroup]:
    """The motor groups of a model (flexmb/groups.py ``FAMILY_MODULES``): one per pair of modal counts of the
    driven joint's bodies."""
    motors = [f for f in forces if isinstance(f, DCMotor)]
    keys = sorted({(f.joint.body_a.n_modes, f.joint.body_b.n_modes) for f in motors})
    return [DCMotorGroup([f for f in motors if (f.joint.body_a.n_modes, f.joint.body_b.n_modes) == k], nq)
            for k in keys]
