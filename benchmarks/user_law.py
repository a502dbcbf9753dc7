"""User contact law benchmark (issue 24): a contact model with one Python contact law against the same law built in.

Case ``pendulum`` (the issue's row): a pendulum striking a stop. A rigid arm (0.5 m, 1 kg, inertias (1e-4,
m L^2/12, m L^2/12) kg m^2) on a revolute joint about z at the origin starts horizontal (+x) at rest and falls under
gravity (-y). A steel sphere (R = 20 mm) at its tip strikes a steel plane (the stop) through (-R, 0, 0) with
normal +x as the arm passes the vertical, bounces back, swings up and strikes again; T = 2 s, h = 1 ms. Normal
law: Lankarani-Nikravesh with the Hertz stiffness of steel on steel (E = 210 GPa, nu = 0.3), e = 0.8.

Case ``resting_ball`` (the worst case: every step in contact): a 1 kg ball (R = 50 mm) dropped from 0.1 mm onto a
floor, Lankarani-Nikravesh K = 1e8 N/m^1.5, e = 0.5; it settles at the static penetration (mg/K)^(2/3) = 21.3 um
within the first 0.1 s and rests; T = 0.3 s, h = 1 ms (the default h_contact, about 70 us, holds throughout).

Runs that differ only in how the law is given:

* ``builtin``: ``flexmb.contact.LankaraniNikravesh(K, e)``;
* ``user``: :class:`UserLankaraniNikravesh` below, the same law written by a user in numpy as a
  ``flexmb.contact.ContactLaw`` subclass (the documented protocol: ``force(delta, delta_dot, delta_dot_minus)``
  returns ``(F, dF/d delta, dF/d delta_dot)`` for arrays of pairs, docs/guide.md §9);
* ``builtin_evaluation`` (pendulum only, the cost floor of the other design, "option a"): the built-in law with
  the compiled step switched off for the run (``CompiledStep.qualifies`` patched to False), so each Newton
  iteration is one compiled evaluation (``CompiledEvaluation``) inside the Python Newton loop of
  ``AlphaStepper.step``: what a user-law model would cost at best if it ran that way.

All: ``fm.simulate(system, T, h)`` with default settings (fixed h, the default ``h_contact`` and ``contact_tol``,
energy bookkeeping on), no environment variable. Measured: the time per step of the step loop
(``Result.stats["loop_s"]`` / steps), best of ``--repeat`` interleaved runs (the first run of each compiles and is
one of the repeats), Newton iterations, compiled steps and compiled evaluations per step, and the largest
difference of the user and built-in runs' coordinates (they must agree to the Newton tolerance).

Run:  python benchmarks/user_law.py [--repeat 5] [--out benchmarks/results/user_law.json]
"""
from __future__ import annotations

import argparse
import datetime as _dt
import json
import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from rigid_chain import best_of, machine  # noqa: E402

import flexmb as fm  # noqa: E402
from flexmb.contact import ContactLaw, LankaraniNikravesh, effective_modulus, sphere_plane  # noqa: E402

ARM, MASS, R, E_REST = 0.5, 1.0, 0.02, 0.8          # m, kg, m, -
GRAVITY = (0.0, -9.81, 0.0)


class UserLankaraniNikravesh(ContactLaw):
    """Lankarani & Nikravesh (1990), J. Mech. Des. 112:369, as a user writes it in numpy:
    ``F = K delta^n max(0, 1 + chi delta_dot)``, ``chi = 3 (1 - e^2) / (4 max(delta_dot_minus, v_min))``,
    with its exact derivatives (N, N/m, N s/m)."""

    name = "user Lankarani-Nikravesh"

    def __init__(self, K: float, e: float, n: float = 1.5, v_min: float = 1e-3):
        self.K, self.e, self.n, self.v_min = K, e, n, v_min

    def force(self, delta, delta_dot, delta_dot_minus=None):
        chi = 0.75 * (1.0 - self.e ** 2) / np.maximum(delta_dot_minus, self.v_min)
        g = 1.0 + chi * delta_dot
        on = (delta > 0.0) & (g > 0.0)
        d = np.where(on, delta, 0.0)
        Kdn = self.K * d ** self.n
        return (np.where(on, Kdn * g, 0.0), np.where(on, self.n * self.K * d ** (self.n - 1.0) * g, 0.0),
                np.where(on, Kdn * chi, 0.0))


def pendulum(law_type) -> fm.System:
    """The pendulum and its stop with a law of type ``law_type(K, e)``."""
    K = sphere_plane(R, effective_modulus(2.1e11, 0.3, 2.1e11, 0.3))          # N/m^1.5
    s = fm.System(gravity=GRAVITY)
    arm = s.add(fm.RigidBody(MASS, (1e-4, MASS * ARM ** 2 / 12, MASS * ARM ** 2 / 12), position=(ARM / 2, 0, 0),
                             name="arm"))
    s.add(fm.Revolute(s.ground, arm, (0, 0, 0), (0, 0, 1), name="hinge"))
    s.add(fm.SpherePlaneContact(s.ground, arm, point=(-R, 0, 0), normal=(1, 0, 0), center=(ARM, 0, 0), radius=R,
                                law=law_type(K, E_REST), name="stop"))
    return s


def resting_ball(law_type) -> fm.System:
    """A 1 kg ball (R = 50 mm) dropped from 0.1 mm onto a floor, law ``law_type(1e8, 0.5)``."""
    r, m = 0.05, 1.0
    s = fm.System(gravity=GRAVITY)
    ball = s.add(fm.RigidBody(m, (0.4 * m * r * r,) * 3, position=(0, r + 1e-4, 0), name="ball"))
    s.add(fm.SpherePlaneContact(s.ground, ball, point=(0, 0, 0), normal=(0, 1, 0), center=(0, r + 1e-4, 0),
                                radius=r, law=law_type(1e8, 0.5), name="floor"))
    return s


CASES = {"pendulum": (pendulum, 2.0, 1e-3), "resting_ball": (resting_ball, 0.3, 1e-3)}
"""Model, T (s) and h (s) of each case."""


def run(model, T: float, h: float, compiled_step: bool = True) -> dict:
    from flexmb.solvers import compiled_step as cs
    qualifies = cs.CompiledStep.qualifies
    if not compiled_step:
        cs.CompiledStep.qualifies = staticmethod(lambda asm, reuse_matrix: False)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = fm.simulate(model, T, h)
    finally:
        cs.CompiledStep.qualifies = qualifies
    st = res.stats
    steps = int(st["steps"])
    return {"steps": steps, "per_step_s": float(st["loop_s"]) / steps,
            "newton_per_step": st["newton_iterations"] / steps,
            "compiled_steps_per_step": st.get("compiled_steps", 0) / steps,
            "compiled_evaluations_per_step": st.get("compiled_evaluations", 0) / steps,
            "q_end": res.q[-1].tolist(), "_q": res.q}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--out", default=str(Path(__file__).parent / "results" / "user_law.json"))
    args = ap.parse_args(argv)
    out, lines = {}, [f"best of {args.repeat}"]
    for case, (model, T, h) in CASES.items():
        configs = {"builtin": lambda: run(model(LankaraniNikravesh), T, h),
                   "user": lambda: run(model(UserLankaraniNikravesh), T, h)}
        if case == "pendulum":
            configs["builtin_evaluation"] = lambda: run(model(LankaraniNikravesh), T, h, compiled_step=False)
        runs = {k: [] for k in configs}
        for _ in range(max(1, args.repeat)):
            for k, fn in configs.items():
                runs[k].append(fn())
        qb, qu = runs["builtin"][-1]["_q"], runs["user"][-1]["_q"]
        for v in runs.values():
            for r in v:
                del r["_q"]
        res = {k: best_of(v) for k, v in runs.items()}
        res.update(T=T, h=h, ratio_per_step=res["user"]["per_step_s"] / res["builtin"]["per_step_s"],
                   max_q_difference=float(np.max(np.abs(qb - qu))) if qb.shape == qu.shape else None)
        out[case] = res
        lines.append(f"{case}: T = {T:g} s, h = {h:g} s")
        for k in configs:
            r = res[k]
            lines.append(f"  {k:18s} {1e6 * r['per_step_s']:8.1f} us/step  {r['steps']} steps  "
                         f"Newton {r['newton_per_step']:.2f}/step  compiled steps {r['compiled_steps_per_step']:.2f}"
                         f"/step  compiled evaluations {r['compiled_evaluations_per_step']:.2f}/step")
        lines.append(f"  ratio user / builtin per step: {res['ratio_per_step']:.2f}; largest coordinate difference "
                     f"{res['max_q_difference']}")
    print("\n".join(lines))
    out.update({"date": _dt.datetime.now().isoformat(timespec="seconds"), "machine": machine()})
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
