"""The container crane of van der Linde & Schwab 2002 (*Multibody Dynamics B*, §2.1, Example 1):
a cart on a rail with a load hanging from it on a rod of length l.

Model. The notes' example has only the point mass (its mass matrix, eq. vb1.9, is singular at
theta = 0 because the cart is massless); we give the cart a mass M, which adds M to the (x, x) entry:

    [[M + m, m l cos th], [m l cos th, m l^2]] [x'', th''] = [F + m l th'^2 sin th, -m g l sin th]

(van der Linde & Schwab 2002, eq. vb1.9 with the cart's kinetic energy M x'^2 / 2 added; theta from the downward
vertical, x_B = x + l sin th, y_B = -l cos th, eq. vb1.1). The notes give no numbers; our choices,
a harbour crane class: cart M = 5000 kg, loaded container m = 20000 kg, rope l = 10 m, g = 9.81 m/s^2.
In flexmb the cart is a rigid body on a ``Prismatic`` joint along x, the load a rigid body whose
centre of mass hangs on a ``Distance`` joint (a massless rod) from the cart's centre of mass.

Cases:

* ``crane-small-swing``: free cart, step force F0 on the cart from rest. Linearized (small th):
  th'' + w^2 th = -F0 / (M l), w^2 = g (M + m) / (M l), so th(t) = -(F0 / (g (M + m))) (1 - cos w t)
  and, from the momentum (M + m) x' + m l th' = F0 t, x(t) = (F0 t^2 / 2 - m l th(t)) / (M + m).
* ``crane-prescribed-cart``: the cart's motion prescribed, x = a0 t^2 / 2 (a ``Driver`` on the rail):
  l th'' + g th = -a0, so th(t) = -(a0 / g) (1 - cos w0 t), w0 = sqrt(g / l).
* ``crane-large-swing``: free cart released at th0 = 60 deg while a smooth ramp force pushes it;
  against scipy's DOP853 on the nonlinear equations above (rtol = atol = 1e-12); the rod tension
  from the Lagrange multiplier, T = m (l th'^2 - x'' sin th + g cos th) (the load's equation of
  motion along the rod), against flexmb's ``Result.reaction``; energy balance.
"""
from __future__ import annotations

import numpy as np
from scipy.integrate import solve_ivp

import flexmb as fm

from ..framework import CaseResult

M_CART, M_LOAD, L_ROD, G = 5000.0, 20000.0, 10.0, 9.81
CART_INERTIA = (1.0e3,) * 3         # kg m^2; irrelevant: the rail locks the cart's rotation
LOAD_INERTIA = (1.0e3,) * 3         # kg m^2; irrelevant: the rod acts at the load's centre of mass (no torque)
STEPS_PER_PERIOD = 200
SMALL_AMPLITUDE = 0.01              # rad, peak swing of the small-swing cases
OMEGA_FREE = np.sqrt(G * (M_CART + M_LOAD) / (M_CART * L_ROD))   # rad/s, free cart
OMEGA_HELD = np.sqrt(G / L_ROD)                                   # rad/s, prescribed cart
DATA = (f"van der Linde & Schwab 2002 give no numbers; our choices: cart M = {M_CART:g} kg, load m = {M_LOAD:g} kg, "
        f"rod l = {L_ROD:g} m, g = {G} m/s^2.")


def _crane(theta0: float = 0.0, force=None, cart_motion=None):
    """The crane with the load at angle ``theta0`` (rad) at rest; ``force(t)`` (N) along x on the cart,
    or ``cart_motion`` (a TimeFunction, m) prescribing the cart's displacement."""
    s = fm.System(gravity=(0.0, -G, 0.0), name="container crane")
    cart = s.add(fm.RigidBody(M_CART, CART_INERTIA, position=(0.0, 0.0, 0.0), name="cart"))
    rail = s.add(fm.Prismatic(s.ground, cart, (0.0, 0.0, 0.0), (1.0, 0.0, 0.0), name="rail"))
    hang = (L_ROD * np.sin(theta0), -L_ROD * np.cos(theta0), 0.0)
    load = s.add(fm.RigidBody(M_LOAD, LOAD_INERTIA, position=hang, name="load"))
    rod = s.add(fm.Distance(cart, load, point_a=(0.0, 0.0, 0.0), point_b=hang, name="rod"))
    if force is not None:
        s.add(fm.Force(cart, lambda t: (force(t), 0.0, 0.0), name="cart drive"))
    if cart_motion is not None:
        s.add(fm.Driver(rail, displacement=cart_motion, name="cart motion"))
    return s, cart, load, rod


def _coordinates(res, cart, load) -> tuple[np.ndarray, np.ndarray]:
    """Cart position x (m) and swing angle theta from the downward vertical (rad), eq. vb1.1."""
    d = res.position(load) - res.position(cart)
    return res.position(cart)[:, 0], np.arctan2(d[:, 0], -d[:, 1])


def _swing_period(t: np.ndarray, theta: np.ndarray, mean: float) -> float:
    """Mean period (s) between upward crossings of ``mean``, linearly interpolated (at a crossing the
    swing's curvature vanishes, so the interpolation error is O(h^3))."""
    y = theta - mean
    k = np.nonzero((y[:-1] < 0.0) & (y[1:] >= 0.0))[0]
    crossings = t[k] - y[k] * (t[k + 1] - t[k]) / (y[k + 1] - y[k])
    return float(np.diff(crossings).mean())


def _figure(title: str, t: np.ndarray, curves: list[tuple[str, np.ndarray, np.ndarray]]):
    """One panel per (label, flexmb, reference) against time t (s): flexmb as a line, the reference dashed."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(len(curves), 1, sharex=True, squeeze=False, figsize=(6.4, 1.2 + 1.8 * len(curves)))
    for ax, (label, value, ref) in zip(axes[:, 0], curves):
        ax.plot(t, value, "C0-", lw=1.2, label="flexmb")
        ax.plot(t, ref, "k--", lw=0.9, label="reference")
        ax.set_ylabel(label)
        ax.legend(fontsize=7)
    axes[-1, 0].set_xlabel("t (s)")
    axes[0, 0].set_title(title)
    fig.tight_layout()
    return fig


def small_swing(quick: bool) -> CaseResult:
    r = CaseResult("crane-small-swing", "linearized Lagrange equations of van der Linde & Schwab 2002, eq. vb1.9 (with cart mass M): "
                   "w = sqrt(g (M + m) / (M l)), th = -(F0 / (g (M + m))) (1 - cos w t), "
                   "x = (F0 t^2 / 2 - m l th) / (M + m)")
    f0 = 0.5 * SMALL_AMPLITUDE * G * (M_CART + M_LOAD)
    period = 2.0 * np.pi / OMEGA_FREE
    s, cart, load, _ = _crane(force=lambda t: f0)
    res = fm.simulate(s, 3.0 * period, period / STEPS_PER_PERIOD)
    x, theta = _coordinates(res, cart, load)
    theta_lin = -(f0 / (G * (M_CART + M_LOAD))) * (1.0 - np.cos(OMEGA_FREE * res.t))
    x_lin = (0.5 * f0 * res.t ** 2 - M_LOAD * L_ROD * theta_lin) / (M_CART + M_LOAD)
    r.check("swing_period", _swing_period(res.t, theta, -0.5 * SMALL_AMPLITUDE), period, "rel 1e-3")
    r.check("theta_amplitude", -theta.min(), SMALL_AMPLITUDE, "rel 2e-3")
    r.check("theta_max_err", np.abs(theta - theta_lin).max() / SMALL_AMPLITUDE, tolerance="max 5e-3")
    r.check("x_err", np.abs(x - x_lin).max() / np.abs(x_lin).max(), tolerance="max 1e-3")
    r.metrics["step_force_N"] = f0
    r.figures.append(_figure("crane, step force on a free cart", res.t,
                             [("theta (rad)", theta, theta_lin), ("x (m)", x, x_lin)]))
    r.notes = (f"{DATA} Step force F0 = {f0:.5g} N for a peak swing of {SMALL_AMPLITUDE} rad, 3 periods, "
               f"{STEPS_PER_PERIOD} steps per period (generalized-alpha, rho_inf = 0.9). Error budget: the "
               "small-angle error is O(th^2) = 1e-4 relative in amplitude and period; the second-order time-step "
               "error of generalized-alpha is a period elongation of order (w h)^2 / 12 ~ 1e-4, which accumulates "
               "to ~2e-3 of the amplitude in phase over 3 periods (theta_max_err, 5e-3; measured 1.4e-3), and "
               "is 1e-4 in the period (1e-3; measured 1.5e-4). The cart's motion is dominated by F0 t^2 / 2 "
               "(x_err relative to its maximum, 1e-3; measured 6e-5).")
    return r


def prescribed_cart(quick: bool) -> CaseResult:
    r = CaseResult("crane-prescribed-cart", "linearized Lagrange equation of van der Linde & Schwab 2002, eq. vb1.9 (second row) with "
                   "x(t) prescribed: l th'' + g th = -x'', w0 = sqrt(g / l), th = -(a0 / g) (1 - cos w0 t)")
    a0 = 0.5 * SMALL_AMPLITUDE * G
    period = 2.0 * np.pi / OMEGA_HELD
    motion = fm.TimeFunction(lambda t: 0.5 * a0 * t * t, lambda t: a0 * t, lambda t: a0, name="cart motion")
    s, cart, load, _ = _crane(cart_motion=motion)
    res = fm.simulate(s, 3.0 * period, period / STEPS_PER_PERIOD)
    x, theta = _coordinates(res, cart, load)
    theta_lin = -(a0 / G) * (1.0 - np.cos(OMEGA_HELD * res.t))
    r.check("swing_period", _swing_period(res.t, theta, -0.5 * SMALL_AMPLITUDE), period, "rel 1e-3")
    r.check("theta_amplitude", -theta.min(), SMALL_AMPLITUDE, "rel 2e-3")
    r.check("theta_max_err", np.abs(theta - theta_lin).max() / SMALL_AMPLITUDE, tolerance="max 5e-3")
    r.check("x_err", np.abs(x - 0.5 * a0 * res.t ** 2).max(), tolerance="max 1e-9")
    r.metrics["cart_acceleration_m_s2"] = a0
    r.figures.append(_figure("crane, prescribed cart acceleration", res.t, [("theta (rad)", theta, theta_lin)]))
    r.notes = (f"{DATA} Cart acceleration a0 = {a0:.5g} m/s^2 from rest (peak swing {SMALL_AMPLITUDE} rad), "
               f"3 periods, {STEPS_PER_PERIOD} steps per period; the same error budget as crane-small-swing. "
               "x_err (m) checks that the driver holds the prescribed motion to the Newton tolerance.")
    return r


def _ramp(f1: float, t_ramp: float):
    """F(t) = f1 (1 - cos(pi t / t_ramp)) / 2 for t < t_ramp, then f1 (N): a smooth push."""
    return lambda t: f1 * (0.5 - 0.5 * np.cos(np.pi * t / t_ramp)) if t < t_ramp else f1


def _lagrange_rates(t: float, y: np.ndarray, force) -> np.ndarray:
    """Rates of (x, th, x', th') from van der Linde & Schwab 2002, eq. vb1.9 with the cart mass M (SI units)."""
    _, th, _, w = y
    c, sn = np.cos(th), np.sin(th)
    mass = np.array([[M_CART + M_LOAD, M_LOAD * L_ROD * c], [M_LOAD * L_ROD * c, M_LOAD * L_ROD ** 2]])
    rhs = np.array([force(t) + M_LOAD * L_ROD * w * w * sn, -M_LOAD * G * L_ROD * sn])
    acc = np.linalg.solve(mass, rhs)
    return np.array([y[2], w, acc[0], acc[1]])


def lagrange_reference(theta0: float, force, t: np.ndarray) -> dict[str, np.ndarray]:
    """x (m), th (rad) and the rod tension T = m (l th'^2 - x'' sin th + g cos th) (N) at times ``t``
    from DOP853 (rtol = atol = 1e-12) on the nonlinear Lagrange equations, starting at rest."""
    sol = solve_ivp(_lagrange_rates, (t[0], t[-1]), [0.0, theta0, 0.0, 0.0], method="DOP853", t_eval=t,
                    rtol=1e-12, atol=1e-12, args=(force,))
    x, th, _, w = sol.y
    xdd = np.array([_lagrange_rates(ti, yi, force)[2] for ti, yi in zip(t, sol.y.T)])
    tension = M_LOAD * (L_ROD * w * w - xdd * np.sin(th) + G * np.cos(th))
    return {"x": x, "theta": th, "tension": tension}


def _rod_tension(res, rod, cart, load) -> np.ndarray:
    """Rod tension (N): the reaction on the load projected on the unit vector from the load to the cart."""
    force, _ = res.reaction(rod)
    d = res.position(cart) - res.position(load)
    return np.einsum("ij,ij->i", force, d / np.linalg.norm(d, axis=1)[:, None])


def large_swing(quick: bool) -> CaseResult:
    r = CaseResult("crane-large-swing", "nonlinear Lagrange equations of van der Linde & Schwab 2002, eq. vb1.9 (with cart mass M) "
                   "integrated by scipy DOP853 (rtol = atol = 1e-12); tension from the Lagrange multiplier; "
                   "energy balance T + V - W = const (Huston & Liu 2005)")
    theta0, f1, t_ramp = np.radians(60.0), 0.1 * (M_CART + M_LOAD) * G, 2.0
    force = _ramp(f1, t_ramp)
    t_end, h = (4.0, 2.0e-3) if quick else (10.0, 1.0e-3)
    s, cart, load, rod = _crane(theta0, force=force)
    res = fm.simulate(s, t_end, h, save_every=5)      # the reaction is evaluated per saved row
    x, theta = _coordinates(res, cart, load)
    ref = lagrange_reference(theta0, force, res.t)
    tension = _rod_tension(res, rod, cart, load)
    e = res.energy()
    r.check("x_err", np.abs(x - ref["x"]).max(), tolerance="max 1e-3")
    r.check("theta_max_err", np.abs(theta - ref["theta"]).max(), tolerance="max 2e-4")
    r.check("tension_max_rel_err", np.abs(tension - ref["tension"]).max() / np.abs(ref["tension"]).max(),
            tolerance="max 3e-4")
    r.check("energy_balance_rel", np.abs(e["total"] - e["total"][0]).max() / e["kinetic"].max(),
            tolerance="max 1e-4")
    r.figures.append(_figure("crane, large swing against DOP853", res.t,
                             [("theta (rad)", theta, ref["theta"]), ("x (m)", x, ref["x"]),
                              ("rod tension (N)", tension, ref["tension"])]))
    r.metrics.update({"theta_max_deg": float(np.degrees(np.abs(ref["theta"]).max())),
                      "tension_max_N": float(ref["tension"].max()), "tension_min_N": float(ref["tension"].min())})
    r.notes = (f"{DATA} Released at rest at th0 = 60 deg while F(t) = F1 (1 - cos(pi t / 2 s)) / 2, then "
               f"F1 = 0.1 (M + m) g = {f1:.4g} N, pushes the cart; {t_end:g} s at h = {h:g} s "
               "(generalized-alpha, rho_inf = 0.9), compared at every 5th step. The reference is DOP853 at "
               "1e-12, so the errors are flexmb's second-order time-step error: measured 3e-4 m, 3e-5 rad, 6e-5 "
               "(tension) and 4e-5 (energy) at h = 2 ms over 4 s, 1.5e-4 m, 2e-5 rad, 3e-5 and 6e-6 at h = 1 ms "
               "over 10 s; the tolerances leave a factor 2 to 7 above the quick run. The tension is the rod's "
               "Lagrange multiplier (Result.reaction on the load, along the rod). The energy balance includes "
               "the work of F and is relative to the largest kinetic energy.")
    return r


CASES = [small_swing, prescribed_cart, large_swing]
