"""Run monitors: a run whose step size collapses stops, a run whose energy balance explodes is flagged, a run
whose steps were too long for a body's rotation is flagged.

Both are cheap and deterministic (they count steps and simulated time, never wall time), so a run
behaves the same on a busy machine.
"""
from __future__ import annotations

import math
import warnings
from collections import deque

import numpy as np

from ..errors import EnergyBalanceWarning, ResolutionWarning, StallError, user_stacklevel

__all__ = ["StallWatch", "EnergyWatch", "stall_floor", "energy_sample_every", "STALL_WINDOW", "STALL_FRACTION",
           "ENERGY_WARN_FRACTION", "ENERGY_NEGLIGIBLE", "ROUNDING_SHARE", "EULER_RATE_DEFECT", "TURNING",
           "check_rotation_resolution"]

STALL_WINDOW = 200
"""Step attempts (accepted or rejected) over which the progress of a run is measured."""

STALL_FRACTION = 1e-3
"""A run stalls when ``STALL_WINDOW`` attempts advance it by less than this fraction of as many
reference steps: the mean step fell below a thousandth of the step asked for (``h``, or ``h_contact``
if smaller); with adaptive steps, below ten times ``h_min`` if that is smaller still."""

ENERGY_WARN_FRACTION = 0.1
"""The energy balance is flagged when ``|E(t) - E(0)|`` exceeds this fraction of the energy scale,
the largest ``T + |V - V0| + |W|`` of the run so far (T kinetic, V potential, W work of applied loads,
dampers and drivers), plus ``(h / (t - t_start))^2``: the trapezoidal work integral of energies that
grow from zero errs by about that fraction in the first steps. Sound runs stay near 1e-3 or below;
numerical damping of generalized-alpha only lowers E."""
ENERGY_NEGLIGIBLE = 1e-20
"""J: below this energy scale (a 1 g mass at 4.5 nm/s) the balance of a model at rest is rounding noise."""
ROUNDING_SHARE = 1e-12
"""Share of the potential energy (its datum is arbitrary, e.g. m g z far from z = 0) below which its changes are
rounding noise, some thousand units of double precision: a run at rest in a static equilibrium sees only that."""


class StallWatch:
    """Raises StallError when the last ``STALL_WINDOW`` step attempts advanced the run by less than
    ``STALL_WINDOW * floor`` seconds."""

    def __init__(self, floor: float):
        self.floor = floor
        self.advances: deque[float] = deque(maxlen=STALL_WINDOW)
        self.total = 0.0

    def attempt(self, advance: float, t: float, h: float, explain) -> None:
        """Record one attempt that advanced the run by ``advance`` s (0 when rejected).
        ``explain()`` returns the sentence naming the dominating element (called only on a stall)."""
        if len(self.advances) == STALL_WINDOW:
            self.total -= self.advances[0]
        self.advances.append(advance)
        self.total += advance
        if len(self.advances) == STALL_WINDOW and self.total < STALL_WINDOW * self.floor:
            why = explain()
            raise StallError(
                f"the run stalled at t = {t:.6g} s: its last {STALL_WINDOW} step attempts advanced it by "
                f"{self.total:.3g} s in all (step size now h = {h:.3g} s, mean {self.total / STALL_WINDOW:.3g} s "
                f"against a floor of {self.floor:.3g} s)" + (f"; {why}" if why else "")
                + ". The model is too stiff or badly scaled for this step: check the parameters of that "
                "element, or give a smaller h (and h_min)", time=t, step=h, worst=why)


    def accepted(self, advances: np.ndarray) -> None:
        """Record accepted steps that advanced the run by ``advances`` (s) each (steps taken in one
        compiled call); they all advanced it, so no stall can be found among them."""
        self.advances.extend(np.asarray(advances, dtype=float)[-STALL_WINDOW:].tolist())
        self.total = float(sum(self.advances))


class EnergyWatch:
    """Tracks the energy balance at saved states; warns once (EnergyBalanceWarning) when it drifts
    by more than ``ENERGY_WARN_FRACTION`` of the energy scale.

    The energies come from ``Assembly.energies`` / ``Assembly.energy_rows`` (flexmb/compiled/energy.py: every
    body and compiled family in one compiled call, the values of ``kinetic_energy`` / ``potential_energy``);
    :meth:`check_rows` checks the saved rows of a block of steps with one such call."""

    def __init__(self, asm, q0, v0, work0: float = 0.0):
        """Balance from the state (q0, v0), at which the work done so far was ``work0`` (J; not zero
        when a run is resumed)."""
        self.asm = asm
        self.work0 = work0
        self.T0, self.V0 = asm.energies(q0, v0)
        self.scale = abs(self.T0)
        self.worst = 0.0          # largest |E - E0| / scale seen (stats["energy_drift"])
        self.flagged = None       # the drift that raised the warning, once it was raised

    def check(self, q, v, t: float, work: float, h: float, elapsed: float) -> None:
        """Check the balance at a saved state; ``work`` (J) of loads, dampers and drivers since the start,
        ``h`` the last step and ``elapsed`` the simulated time since the start (s)."""
        work = work - self.work0
        T, V = self.asm.energies(q, v)
        dV = V - self.V0
        if not (math.isfinite(T) and math.isfinite(dV)):
            return
        self.scale = max(self.scale, T + abs(dV) + abs(work))
        if self.scale <= ENERGY_NEGLIGIBLE + ROUNDING_SHARE * abs(self.V0):   # at rest: dV is rounding of V
            return
        drift = abs(T + dV - work - self.T0) / self.scale
        self.worst = max(self.worst, drift)
        if drift > ENERGY_WARN_FRACTION + (h / elapsed) ** 2 and self.flagged is None:
            self._flag(drift, self.scale, T, dV, work, t)

    def check_rows(self, Q: np.ndarray, V: np.ndarray, history: np.ndarray | None, t: np.ndarray, work: np.ndarray,
                   h: np.ndarray, elapsed: np.ndarray) -> None:
        """:meth:`check` at the saved states ``Q``, ``V`` (k, nq) of a block of steps, in order, with one
        compiled evaluation of their energies; ``history`` (k, ...) the element history of each state or None
        (the current one), ``t``, ``work``, ``h``, ``elapsed`` arrays (k,)."""
        if len(t) == 0:
            return
        T, U = self.asm.energy_rows(Q, V, history)
        work = np.asarray(work, dtype=float) - self.work0
        dV = U - self.V0
        ok = np.isfinite(T) & np.isfinite(dV)
        if not ok.all():
            T, dV, work, t, h, elapsed = (np.asarray(x)[ok] for x in (T, dV, work, t, h, elapsed))
            if T.size == 0:
                return
        scale = np.maximum.accumulate(np.maximum(T + np.abs(dV) + np.abs(work), self.scale))
        self.scale = float(scale[-1])
        on = scale > ENERGY_NEGLIGIBLE + ROUNDING_SHARE * abs(self.V0)      # else at rest: dV is rounding of V
        if not on.any():
            return
        drift = np.abs(T + dV - work - self.T0)[on] / scale[on]
        self.worst = max(self.worst, float(drift.max()))
        if self.flagged is None:
            over = np.flatnonzero(drift > ENERGY_WARN_FRACTION + (np.asarray(h)[on] / np.asarray(elapsed)[on]) ** 2)
            if over.size:
                k = int(over[0])
                i = int(np.flatnonzero(on)[k])
                self._flag(float(drift[k]), float(scale[i]), float(T[i]), float(dV[i]), float(work[i]),
                           float(np.asarray(t)[i]))

    def _flag(self, drift: float, scale: float, T: float, dV: float, work: float, t: float) -> None:
        """Raise the warning once, attributed to the user's line that ran the simulation."""
        self.flagged = drift
        warnings.warn(
            f"energy balance drifted by {drift:.3g} of the energy scale {scale:.4g} J at t = {t:.6g} s "
            f"(kinetic {T:.4g} J, potential change {dV:.4g} J, work {work:.4g} J); limit "
            f"{ENERGY_WARN_FRACTION:g}. The step is too coarse for the model or the model is unstable: "
            "reduce h or use adaptive=True", EnergyBalanceWarning, stacklevel=user_stacklevel())

    @property
    def message(self) -> str:
        """The Result's message: "completed", and the flagged drift when the warning was raised."""
        return ("completed" if self.flagged is None else
                f"completed; energy balance drifted by {self.flagged:.3g} of the energy scale")


def stall_floor(h: float, h_contact: float | None, h_min: float, adaptive: bool) -> float:
    """Mean step (s) below which a run counts as stalled (see ``STALL_FRACTION``)."""
    ref = min(h, h_contact) if h_contact is not None else h
    if adaptive:
        return min(10.0 * h_min, STALL_FRACTION * ref)
    return STALL_FRACTION * ref


def energy_sample_every(t_span: float, h: float, save_every: int) -> int:
    """Check the balance at about 200 of the saved states (and at the last one)."""
    expected = max(1.0, t_span / h / max(save_every, 1))
    return max(1, int(np.ceil(expected / 200.0)))


EULER_RATE_DEFECT = 0.1
"""A rotating body's Euler-parameter rate is flagged when its component along ``p`` exceeds this share of it:
``|p . p_dot| / (|p| |p_dot|)`` is 0 in every true motion (``p . p = 1``). Measured on a steel cube pinned to the tip
of a 1 kg, 1 m pendulum (h = 1 ms, rho_inf = 0.9, 0.6 s): 5e-4 and 1.7e-3 for a 1 cm and a 3 mm cube, which
follow Lagrange's equations; 0.86 and 0.99 for a 1 mm and a 0.3 mm cube (h omega = 0.21 and 0.32), which complete
up to 1.9 rad off them; a cube spinning alone at 150 rad/s (h omega = 0.15) stays at 1e-4."""

TURNING = 1e-3
"""rad per step (``h |p_dot|``, about half the angle turned): below it a body is taken as not rotating, so that the
rounding noise of a body at rest, whose ``p_dot`` has no direction, is not read as a defect."""


def check_rotation_resolution(res, save_every: int) -> dict:
    """Warn (ResolutionWarning, naming the body, its angular speed and the step that would resolve it) when the
    saved rows of a completed run ``res`` show the index-3 step's parasitic Euler-parameter mode on a rotating body
    (rigid bodies and the floating frames of flexible ones): a rate ``p_dot`` with a component along ``p`` beyond
    ``EULER_RATE_DEFECT`` of it. Undamped, such modes grow at a rate of order omega whatever h; numerical damping
    holds them only while ``h omega`` stays below about ``1 - rho_inf`` (docs/guide.md §3, "Fast rotation"), and a
    run past that may complete far from the true motion with nothing else to show it. Returns
    ``{"h_omega_max": ..., "euler_rate_defect": ...}`` over the bodies (``h`` of a row: the time since the row before
    over ``save_every``)."""
    from ..bodies.flexible import FlexibleBody
    from ..bodies.rigid import RigidBody
    out = {"h_omega_max": 0.0, "euler_rate_defect": 0.0}
    if len(res.t) < 2:
        return out
    h = np.diff(res.t) / save_every
    flagged = None
    for body in res.system.bodies:
        if not isinstance(body, (RigidBody, FlexibleBody)):
            continue
        o = body.offset
        p, pd = res.q[1:, o + 3:o + 7], res.v[1:, o + 3:o + 7]
        rate = np.sqrt(np.einsum("ij,ij->i", pd, pd))
        along = np.abs(np.einsum("ij,ij->i", p, pd)) / np.sqrt(np.einsum("ij,ij->i", p, p))
        turning = h * rate > TURNING
        if not turning.any():
            continue
        # omega = 2 |E(p) p_dot| = 2 sqrt(|p_dot|^2 - (p . p_dot)^2) for unit p (E E^T = I - p p^T)
        omega = 2.0 * np.sqrt(np.maximum(rate ** 2 - along ** 2, 0.0))
        out["h_omega_max"] = max(out["h_omega_max"], float(np.max(h * omega)))
        defect = np.where(turning, along / np.where(turning, rate, 1.0), 0.0)
        k = int(np.argmax(defect))
        if defect[k] > out["euler_rate_defect"]:
            out["euler_rate_defect"] = float(defect[k])
            if defect[k] > EULER_RATE_DEFECT:
                flagged = (body, float(np.max(omega)), float(np.max(h * omega)), float(res.t[k + 1]))
    if flagged is not None:
        body, omega, h_omega, t = flagged
        if h_omega > 0.1:
            advice = f"use h <= {0.1 / omega:.3g} s (h omega <= 0.1), adaptive=True, or rho_inf=1"
        else:       # not a fast rotation: the mode is fed by something else
            advice = ("the body does not turn fast for this step, so something else feeds the mode (an element "
                      "ringing at the step's frequency, a start whose velocities excite stiff modes): check the "
                      "model's stiffest elements or reduce h")
        warnings.warn(
            f"body {body.name!r} turned at up to {omega:.4g} rad/s ({h_omega:.3g} rad per step) and its Euler-parameter "
            f"rate has a component along p of {out['euler_rate_defect']:.2g} of itself at t = {t:.6g} s (0 in any true "
            f"motion): the step's parasitic rotation mode outgrew the numerical damping and the result may be far "
            f"from the true motion; {advice} (docs/guide.md §3, \"Fast rotation\")", ResolutionWarning,
            stacklevel=user_stacklevel())
    return out
