"""Normal contact force laws: the scalar force of one contact from its penetration (docs/theory-contact.md §1).

Every law maps, for an array of contacts at once,

    penetration delta (m, > 0 when the surfaces overlap),
    penetration rate delta_dot (m/s, > 0 while approaching),
    approach speed delta_dot_minus (m/s, the rate captured at first touch of each pair)

to the compressive normal force ``F >= 0`` (N) and its exact partial derivatives ``dF/d delta`` (N/m) and
``dF/d delta_dot`` (N s/m). No law ever pulls: the damping term is clamped so that ``F`` never becomes tensile,
the derivatives are those of the clamped function, and ``delta <= 0`` gives ``F = 0``.

The hysteresis-damping laws share one form (theory-contact.md §1.1),

    F = K delta^n (1 + h(e) delta_dot / delta_dot_minus),

with ``h(e)`` the law's hysteresis factor:

* ``LankaraniNikravesh``  h = 3 (1 - e^2) / 4      (Lankarani & Nikravesh 1990, J. Mech. Des. 112:369, eq. for D;
  Ambrosio 2002, eqs. (17)-(20));
* ``HuntCrossley``        h = 3 (1 - e) / 2        (Hunt & Crossley 1975, J. Appl. Mech. 42:440, with the linear
  restitution law e = 1 - alpha v and lambda = 3 alpha K / 2, the form used by Marhefka & Orin 1999);
* ``Flores``              h = 8 (1 - e) / (5 e)    (Flores, Machado, Silva & Martins 2011, Nonlinear Dyn. 64:25).

``LinearSpringDamper`` is the Kelvin-Voigt comparison ``F = K delta + c delta_dot`` (clamped), with ``c`` calibrated
from ``e`` and an effective mass.

``delta_dot_minus`` is state the caller keeps per contact pair: captured at first touch, held while the pair
stays in contact, released at separation. ``ApproachSpeeds`` keeps that state for an integrator.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ..checks import scalar
from ..compiled import lazy_module
from ..errors import ModelError, NonFiniteError

cf = lazy_module("flexmb.compiled.contact")   # numba loads with the first evaluation, not at import

__all__ = ["ContactLaw", "HysteresisLaw", "LankaraniNikravesh", "HuntCrossley", "Flores", "LinearSpringDamper",
           "ApproachSpeeds", "LawTable", "UserLaw", "user_law_forces", "hysteresis_force", "linear_force",
           "linear_restitution", "linear_damping_ratio"]


def _number(value, what: str, owner: str) -> float:
    return scalar(value, what, owner)


def _positive(value, what: str, owner: str) -> float:
    return scalar(value, what, owner, sign="positive")


def _restitution(value, owner: str, allow_zero: bool = True) -> float:
    e = _number(value, "restitution coefficient e", owner)
    if not (0.0 <= e <= 1.0) or (e == 0.0 and not allow_zero):
        span = "[0, 1]" if allow_zero else "(0, 1] (e = 0 would need infinite damping)"
        raise ModelError(f"{owner}: restitution coefficient e must lie in {span}, got {e}")
    return e


def _state(name: str, *arrays):
    """Broadcast the inputs to float arrays and refuse NaN/inf with the law's name and the first bad index."""
    out = np.broadcast_arrays(*[np.asarray(a, dtype=float) for a in arrays])
    for label, a in zip(("delta", "delta_dot", "delta_dot_minus"), out):
        bad = ~np.isfinite(a)
        if bad.any():
            k = int(np.flatnonzero(bad.ravel())[0])
            raise NonFiniteError(f"{name} contact law: {label}[{k}] = {a.ravel()[k]} is not finite")
    return out


class ContactLaw:
    """Common interface of the normal contact laws.

    Attributes: ``K`` stiffness (N/m^n), ``n`` exponent (-), ``e`` restitution coefficient (-).

    A law of your own is a subclass with ``K``, ``n`` (its elastic part ``K delta^n``: stored energy, default
    ``h_contact``), a ``name`` and :meth:`force`. flexmb calls its ``force`` once per evaluation for all the pairs
    that use this law object and penetrate (``delta > 0``; pairs apart have no force), from the compiled step
    through flexmb/compiled/hook.py (docs/guide.md §9, "Your own law"); it must return the three finite arrays.
    """

    name = "contact"
    K: float
    n: float
    e: float

    def force(self, delta, delta_dot, delta_dot_minus=None):
        """``(F, dF/d delta, dF/d delta_dot)`` for arrays of contacts (N, N/m, N s/m); ``F >= 0``."""
        raise NotImplementedError

    def elastic_energy(self, delta) -> np.ndarray:
        """Energy stored in the elastic part ``K delta^(n+1) / (n+1)`` (J), zero when not penetrating."""
        d = np.maximum(np.asarray(delta, dtype=float), 0.0)
        return self.K * d ** (self.n + 1.0) / (self.n + 1.0)

    def nonconservative_power(self, delta, delta_dot, delta_dot_minus=None) -> np.ndarray:
        """Power of the non-elastic part of the force on the bodies, ``-(F - K delta^n) delta_dot`` (W).

        With the clamp it is ``<= 0`` only where the damping term is active; where the clamp holds ``F = 0``
        while ``delta > 0`` it is the power of removing the elastic force (still dissipative: ``delta_dot < 0``).
        """
        d, dd, *_ = _state(self.name, delta, delta_dot)
        F = self.force(d, dd, delta_dot_minus)[0]
        return -(F - self.K * np.maximum(d, 0.0) ** self.n) * dd

    def __repr__(self) -> str:
        return f"{type(self).__name__}(K={self.K:.6g}, e={self.e:.6g}, n={self.n:.6g})"


class HysteresisLaw(ContactLaw):
    """``F = K delta^n max(0, 1 + chi delta_dot)``, ``chi = h(e) / max(delta_dot_minus, v_min)``.

    Args:
        K: stiffness, N/m^n (``hertz.sphere_plane`` etc. give it for n = 3/2).
        e: restitution coefficient the law is calibrated for, in [0, 1].
        n: exponent, > 0 (3/2 for Hertzian point contact).
        min_approach_speed: ``v_min`` (m/s), floor applied to ``delta_dot_minus`` so a pair touching at (almost)
            zero relative speed -- a body set down on a surface -- gets a finite, large damping instead of a
            division by zero. Impacts faster than ``v_min`` are unaffected.

    Subclasses define ``hysteresis_factor(e)``.
    """

    def __init__(self, K: float, e: float, n: float = 1.5, *, min_approach_speed: float = 1e-3):
        owner = f"{self.name} contact law"
        self.K = _positive(K, "stiffness K (N/m^n)", owner)
        self.n = _positive(n, "exponent n", owner)
        self.e = _restitution(e, owner, allow_zero=self._allow_zero_e)
        self.min_approach_speed = _positive(min_approach_speed, "min_approach_speed (m/s)", owner)
        self.h = float(self.hysteresis_factor(self.e))

    _allow_zero_e = True

    @staticmethod
    def hysteresis_factor(e: float) -> float:
        """Dimensionless factor ``chi(e)`` of the damping ``D = chi K delta^n / delta_dot_minus``
        (docs/theory-contact.md §1)."""
        raise NotImplementedError

    def force(self, delta, delta_dot, delta_dot_minus=None):
        """``(F, dF/d delta, dF/d delta_dot)``: N, N/m, N s/m, arrays of the broadcast shape.

        ``delta_dot_minus`` (m/s) is the approach speed of each pair at first touch (see ``ApproachSpeeds``);
        it may be omitted only when e = 1 (no damping).
        """
        if delta_dot_minus is None:
            if self.h != 0.0:
                raise ModelError(f"{self.name} contact law: the approach speed delta_dot_minus is required "
                                 f"(e = {self.e} < 1)")
            delta_dot_minus = 1.0
        d, dd, vm = _state(self.name, delta, delta_dot, delta_dot_minus)
        return hysteresis_force(self.K, self.n, self.h, self.min_approach_speed, d, dd, vm)


def hysteresis_force(K, n, h, v_min, d, dd, vm):
    """``F = K d^n max(0, 1 + chi dd)``, ``chi = h / max(vm, v_min)`` and its derivatives, with the law
    parameters scalars or arrays over the contacts (one call for every hysteresis law of a group)."""
    chi = h / np.maximum(vm, v_min)                                  # s/m
    g = 1.0 + chi * dd                                               # hysteresis factor of the force
    on = (d > 0.0) & (g > 0.0)                                       # compressive: tension clamped to 0
    dp = np.where(on, d, 0.0)
    dn1 = np.zeros_like(dp)
    np.power(dp, np.broadcast_to(n, dp.shape) - 1.0, out=dn1, where=on)   # delta^(n-1), only in contact
    Kdn = K * dn1 * dp                                               # K delta^n
    F = np.where(on, Kdn * g, 0.0)
    dF_dd = np.where(on, n * K * dn1 * g, 0.0)
    dF_dv = np.where(on, Kdn * chi, 0.0)
    return F, dF_dd, dF_dv


def linear_force(K, c, d, dd):
    """``F = max(0, K d + c dd)`` for ``d > 0`` and its derivatives; parameters scalars or arrays."""
    raw = K * d + c * dd
    on = (d > 0.0) & (raw > 0.0)
    return np.where(on, raw, 0.0), np.where(on, K, 0.0), np.where(on, c, 0.0)


class LankaraniNikravesh(HysteresisLaw):
    """Lankarani & Nikravesh (1990): ``F = K delta^n [1 + 3 (1 - e^2)/4 * delta_dot / delta_dot_minus]``.

    Derived for e close to 1; the achieved restitution of a single impact never falls below 0.663 (0.66296 at e = 0)
    (theory-contact.md §3, ``restitution.restitution_table``).
    """

    name = "Lankarani-Nikravesh"

    @staticmethod
    def hysteresis_factor(e: float) -> float:
        """Hysteresis factor ``chi = 3 (1 - e^2) / 4`` of Lankarani & Nikravesh, J. Mech. Des. 112:369 (1990);
        docs/theory-contact.md §1."""
        return 0.75 * (1.0 - e * e)


class HuntCrossley(HysteresisLaw):
    """Hunt & Crossley (1975): ``F = K delta^n (1 + chi delta_dot)``, ``chi = 3 (1 - e) / (2 delta_dot_minus)``.

    The damping ``lambda = 3 alpha K / 2`` with ``alpha = (1 - e)/delta_dot_minus`` from Hunt & Crossley's
    linearized restitution law ``e = 1 - alpha v`` (valid near e = 1), i.e. the form used by Marhefka & Orin
    (1999, IEEE Trans. SMC-A 29:566). Other calibrations of ``chi`` exist (Herbert & McWhannell 1977, Lee &
    Wang 1983, Gonthier et al. 2004; compared in Flores et al. 2011); ``restitution.exact_hysteresis_factor``
    gives the one that reproduces e exactly.
    """

    name = "Hunt-Crossley"

    @staticmethod
    def hysteresis_factor(e: float) -> float:
        """Hysteresis factor ``chi = 3 (1 - e) / 2`` of Hunt & Crossley, J. Appl. Mech. 42:440 (1975);
        docs/theory-contact.md §1."""
        return 1.5 * (1.0 - e)


class Flores(HysteresisLaw):
    """Flores, Machado, Silva & Martins (2011): ``F = K delta^n [1 + 8 (1 - e)/(5 e) * delta_dot / delta_dot_minus]``.

    Meant for the whole range of e, soft materials included; e must be in (0, 1].
    """

    name = "Flores"
    _allow_zero_e = False

    @staticmethod
    def hysteresis_factor(e: float) -> float:
        """Hysteresis factor ``chi = 8 (1 - e) / (5 e)`` of Flores, Machado, Silva & Martins, Nonlinear Dyn. 64:25
        (2011); docs/theory-contact.md §1."""
        return 8.0 * (1.0 - e) / (5.0 * e)


# ---- linear spring-damper ------------------------------------------------------------------------------------

def linear_restitution(zeta):
    """Restitution of ``m x'' + c x' + K x = 0`` entered at speed v with the force clamped at zero (no tension).

    ``zeta = c / (2 sqrt(K m))``. The mass leaves when the force ``K x + c x'`` returns to zero, before x = 0
    (theory-contact.md §1.2):
    ``e = exp(-zeta (pi - 2 asin zeta) / sqrt(1 - zeta^2))`` for zeta < 1, ``exp(-2)`` at zeta = 1, and
    ``q^((1+q)/(1-q))`` with ``sqrt(q) = zeta - sqrt(zeta^2 - 1)`` for zeta > 1. Vectorized.
    """
    z = np.asarray(zeta, dtype=float)
    e = np.full(z.shape, math.exp(-2.0))
    lo = z < 1.0
    zl = np.clip(z, 0.0, 1.0 - 1e-300)
    with np.errstate(divide="ignore", invalid="ignore"):
        under = np.exp(-zl * (np.pi - 2.0 * np.arcsin(zl)) / np.sqrt(1.0 - zl * zl))
        zh = np.maximum(z, 1.0)
        sq = 1.0 / (zh + np.sqrt(zh * zh - 1.0))          # = zeta - sqrt(zeta^2 - 1), without cancellation
        q = sq * sq
        over = np.exp(np.log(q) * (1.0 + q) / (1.0 - q))
    e = np.where(lo, under, np.where(z > 1.0, over, e))
    return e if e.ndim else float(e)


def linear_damping_ratio(e: float, calibration: str = "clamped") -> float:
    """Damping ratio ``zeta = c / (2 sqrt(K m))`` of the linear spring-damper for restitution ``e`` in (0, 1].

    ``"clamped"``: the exact inverse of ``linear_restitution`` (the force is clamped, as implemented), so a
    single impact of the calibration mass gives exactly e. ``"kelvin-voigt"``: the classical unclamped value
    ``zeta = -ln e / sqrt(pi^2 + ln^2 e)`` of the free damped oscillator, which the clamp then makes bouncier.
    """
    if calibration not in ("clamped", "kelvin-voigt"):
        raise ModelError(f"linear spring-damper: calibration must be 'clamped' or 'kelvin-voigt', got {calibration!r}")
    if e == 1.0:
        return 0.0
    if calibration == "kelvin-voigt":
        L = math.log(e)
        return -L / math.sqrt(math.pi ** 2 + L * L)
    from scipy.optimize import brentq
    hi = 1.0
    while linear_restitution(hi) > e:                 # monotone decreasing; e ~ 1/(4 zeta^2) for large zeta
        hi *= 4.0
    return float(brentq(lambda z: linear_restitution(z) - e, 0.0, hi, xtol=1e-15, rtol=1e-14))


class LinearSpringDamper(ContactLaw):
    """Kelvin-Voigt contact ``F = max(0, K delta + c delta_dot)`` for ``delta > 0`` (comparison law, n = 1;
    Crous 2000, eq. (3.5.12)).

    Args:
        K: stiffness, N/m.
        e: restitution coefficient in (0, 1] the damping is calibrated for.
        mass: effective mass of the pair ``m1 m2 / (m1 + m2)`` (kg) used for the calibration
            ``c = 2 zeta sqrt(K m)``; an impact of a different mass gives a different restitution.
        calibration: ``"clamped"`` (default; exact for the clamped law) or ``"kelvin-voigt"`` (see
            ``linear_damping_ratio``).

    The force jumps to ``c delta_dot_minus`` at first touch (the known defect of this model, Flores et al. 2011)
    and the approach speed is not used.
    """

    name = "linear spring-damper"

    def __init__(self, K: float, e: float, mass: float, *, calibration: str = "clamped"):
        owner = f"{self.name} contact law"
        self.K = _positive(K, "stiffness K (N/m)", owner)
        self.e = _restitution(e, owner, allow_zero=False)
        self.mass = _positive(mass, "effective mass (kg)", owner)
        self.n = 1.0
        self.calibration = calibration
        self.zeta = linear_damping_ratio(self.e, calibration)
        self.c = 2.0 * self.zeta * math.sqrt(self.K * self.mass)        # N s/m

    def force(self, delta, delta_dot, delta_dot_minus=None):
        """``(F, dF/d delta, dF/d delta_dot)``: N, N/m, N s/m; ``delta_dot_minus`` is ignored."""
        d, dd = _state(self.name, delta, delta_dot)
        return linear_force(self.K, self.c, d, dd)

    def __repr__(self) -> str:
        return f"LinearSpringDamper(K={self.K:.6g}, e={self.e:.6g}, mass={self.mass:.6g}, c={self.c:.6g})"


# ---- many laws at once ---------------------------------------------------------------------------------------

class UserLaw(NamedTuple):
    """A law written in Python (a :class:`ContactLaw` that is not built in) and the entries of a
    :class:`LawTable` that are this very law object (its pairs are evaluated in one call); ``every``: it is every
    entry of the table."""
    law: ContactLaw
    entries: np.ndarray
    every: bool


def user_law_forces(law: ContactLaw, d: np.ndarray, dd: np.ndarray, vm: np.ndarray, owners: list, idx: np.ndarray):
    """``(F, dF/d delta, dF/d delta_dot)`` (N, N/m, N s/m) of a user law for its pairs at once: penetrations ``d``
    (m), rates ``dd`` (m/s), approach speeds ``vm`` (m/s), each (n,); ``owners[idx[k]]`` names pair k.

    The protocol (docs/guide.md §9): ``law.force(delta, delta_dot, delta_dot_minus)`` returns the three arrays,
    each of the pairs' shape (or broadcastable to it) and finite. A law that raises, or returns anything else,
    stops the run with a :class:`~flexmb.errors.ModelError` (:class:`~flexmb.errors.NonFiniteError` for a value
    that is not finite) naming the contact and the law."""
    try:
        out = law.force(d, dd, vm)
    except Exception as exc:  # noqa: BLE001 - any error of the user's code, named with its contact and law
        raise ModelError(f"{_names(owners, idx)}: the user contact law {law!r} raised {type(exc).__name__}: {exc} "
                         f"(at delta = {d.tolist()} m, delta_dot = {dd.tolist()} m/s)") from exc
    if not (isinstance(out, (tuple, list)) and len(out) == 3):
        raise ModelError(f"{_names(owners, idx)}: the user contact law {law!r}: force(delta, delta_dot, "
                         f"delta_dot_minus) must return the three arrays (F, dF/d delta, dF/d delta_dot), got "
                         f"{type(out).__name__}")
    try:
        F, dF, dFd = (_fit(a, d.shape) for a in out)
    except (TypeError, ValueError) as exc:
        raise ModelError(f"{_names(owners, idx)}: the user contact law {law!r} returned arrays that do not fit its "
                         f"{d.size} pairs in contact ({exc})") from None
    if not math.isfinite(sum(F.tolist()) + sum(dF.tolist()) + sum(dFd.tolist())):   # inf and nan propagate
        for label, a in (("F", F), ("dF/d delta", dF), ("dF/d delta_dot", dFd)):
            bad = np.flatnonzero(~np.isfinite(a))
            if bad.size:
                k = int(bad[0])
                raise NonFiniteError(f"{owners[idx[k]]}: the user contact law {law!r} gave {label} = {a[k]} at "
                                     f"delta = {d[k]} m, delta_dot = {dd[k]} m/s, delta_dot_minus = {vm[k]} m/s")
    return F, dF, dFd


def _fit(a, shape: tuple) -> np.ndarray:
    """``a`` as a float array of ``shape`` (as it is when it already is one)."""
    if type(a) is np.ndarray and a.shape == shape and a.dtype == np.float64:
        return a
    return np.broadcast_to(np.asarray(a, dtype=float), shape)


def _names(owners: list, idx: np.ndarray) -> str:
    """The pairs ``owners[idx]`` for a message: the first, and how many more."""
    return owners[idx[0]] + (f" (and {idx.size - 1} more pairs with this law)" if idx.size > 1 else "")


class LawTable:
    """The normal laws of many contacts evaluated together (no loop over contacts or law objects):
    every :class:`HysteresisLaw` (Lankarani-Nikravesh, Hunt-Crossley, Flores, any parameters) in one call
    with per-contact ``K, n, h, v_min``, every :class:`LinearSpringDamper` in another; a law written in Python
    (any other :class:`ContactLaw` subclass) in one call per law object for all the contacts that use it
    (:func:`user_law_forces`).

    ``laws``: the distinct laws; ``which`` (per contact, optional) indexes into them (default: contact k
    uses ``laws[k]``); ``owners``: per law entry the name of the element that uses it (for error messages).
    """

    def __init__(self, laws, owners=None):
        self.laws = list(laws)
        L = len(self.laws)
        self.owners = list(owners) if owners is not None else ["contact"] * L
        self.kind = np.array([cf.HYSTERESIS if isinstance(w, HysteresisLaw) else cf.LINEAR
                              if isinstance(w, LinearSpringDamper) else cf.USER for w in self.laws],
                             dtype=np.int64).reshape(L)
        self.K = np.array([w.K for w in self.laws], dtype=float).reshape(L)
        self.n = np.array([w.n for w in self.laws], dtype=float).reshape(L)
        self.h = np.array([getattr(w, "h", 0.0) for w in self.laws], dtype=float).reshape(L)
        self.v_min = np.array([getattr(w, "min_approach_speed", 1.0) for w in self.laws], dtype=float).reshape(L)
        self.c = np.array([getattr(w, "c", 0.0) for w in self.laws], dtype=float).reshape(L)
        self.any_user = bool(np.any(self.kind == cf.USER))
        entries: dict[int, list] = {}
        for k in np.flatnonzero(self.kind == cf.USER):
            entries.setdefault(id(self.laws[k]), []).append(int(k))
        self.user = [UserLaw(self.laws[e[0]], np.array(e, dtype=np.int64), len(e) == L) for e in entries.values()]

    def force(self, d, dd, vm, which=None):
        """``(F, dF/d delta, dF/d delta_dot)`` of every contact (N, N/m, N s/m): the built-in laws in one compiled
        call (flexmb/compiled/contact.py, ``law_kernel``), user laws one call per law object."""
        w = np.arange(d.size) if which is None else np.asarray(which, dtype=np.int64)
        F, dF, dFd = np.zeros(d.size), np.zeros(d.size), np.zeros(d.size)
        d, dd, vm = (np.ascontiguousarray(a, dtype=float) for a in (d, dd, vm))
        cf.law_kernel(self.kind, self.K, self.n, self.h, self.v_min, self.c, w, d, dd, vm, F, dF, dFd)
        if self.any_user:
            self.user_forces(d, dd, vm, F, dF, dFd, None if which is None else w)
        return F, dF, dFd

    def user_forces(self, d, dd, vm, F, dF, dFd, which=None) -> None:
        """The user laws' forces and derivatives written into ``F``, ``dF``, ``dFd`` (N, N/m, N s/m) at the contacts
        that have one, at penetrations ``d`` (m), rates ``dd`` (m/s) and approach speeds ``vm`` (m/s) (``which``
        as in :meth:`force`): one call of :func:`user_law_forces` per law object for all its contacts that
        penetrate (``delta > 0``); a contact apart has no force (F and its derivatives 0), and a law none of whose
        contacts penetrates is not called."""
        for u in self.user:
            if which is None and u.every and (d > 0.0).all():       # one law for all contacts, all in contact
                F[:], dF[:], dFd[:] = user_law_forces(u.law, d, dd, vm, self.owners, u.entries)
                continue
            m = u.entries if which is None else np.flatnonzero(np.isin(which, u.entries))
            on = m[d[m] > 0.0]
            if on.size < m.size:
                F[m], dF[m], dFd[m] = 0.0, 0.0, 0.0
            if on.size:
                F[on], dF[on], dFd[on] = user_law_forces(u.law, d[on], dd[on], vm[on], self.owners,
                                                         on if which is None else which[on])

    def elastic_energy(self, d, which=None) -> np.ndarray:
        """``K delta^(n+1) / (n+1)`` of every contact (J)."""
        w = np.arange(d.size) if which is None else np.asarray(which, dtype=np.int64)
        dp = np.maximum(d, 0.0)
        return self.K[w] * dp ** (self.n[w] + 1.0) / (self.n[w] + 1.0)

    def nonconservative_power(self, d, dd, vm, which=None) -> np.ndarray:
        """``-(F - K delta^n) delta_dot`` of every contact (W), as ``ContactLaw.nonconservative_power``."""
        w = np.arange(d.size) if which is None else np.asarray(which, dtype=np.int64)
        F = self.force(d, dd, vm, w)[0]
        return -(F - self.K[w] * np.maximum(d, 0.0) ** self.n[w]) * dd


# ---- per-pair approach speed ---------------------------------------------------------------------------------

class ApproachSpeeds:
    """The approach speed ``delta_dot_minus`` (m/s) of each contact pair, for an implicit time integrator.

    Pairs are numbered ``0 .. n_pairs - 1``. The state changes only in ``start`` and ``accept`` (once per
    accepted step); ``trial`` is a pure function of the stored state and the trial penetration, so rejected
    steps and Newton iterations leave nothing behind.

    Semantics (theory-contact.md §1.3):

    * a pair in contact at the last accepted state keeps the speed captured when it touched;
    * a pair that was apart at the last accepted state but penetrates at the trial state is touching during
      this step: its approach speed is the penetration rate at the last accepted state (the speed just before
      touch, constant over the Newton iterations of the step), or, where that is unknown or not positive, the
      trial rate ``max(delta_dot, 0)``;
    * ``accept`` captures that value for the pairs that penetrate at the accepted state and releases (sets to
      zero) every pair that does not -- separation is ``delta <= 0``.

    ``ids`` selects the pairs an array refers to (default: all, in order). In ``accept`` the pairs *not* listed
    are treated as apart (the broad phase did not propose them): they are released and their last rate is
    forgotten.
    """

    def __init__(self, n_pairs: int):
        n = int(n_pairs)
        if n < 0:
            raise ModelError(f"ApproachSpeeds: n_pairs must be >= 0, got {n_pairs}")
        self.n_pairs = n
        self.speed = np.zeros(n)                 # captured delta_dot_minus (m/s), 0 when apart
        self.in_contact = np.zeros(n, dtype=bool)
        self.last_rate = np.full(n, np.nan)      # delta_dot at the last accepted state (nan: unknown)

    def _ids(self, ids, size: int) -> np.ndarray:
        if ids is None:
            if size != self.n_pairs:
                raise ModelError(f"ApproachSpeeds: {size} values for {self.n_pairs} pairs; pass ids")
            return np.arange(self.n_pairs)
        idx = np.ascontiguousarray(ids, dtype=np.int64).reshape(-1)
        if idx.size != size:
            raise ModelError(f"ApproachSpeeds: {idx.size} ids for {size} values")
        if idx.size and (idx.min() < 0 or idx.max() >= self.n_pairs):
            raise ModelError(f"ApproachSpeeds: pair ids must lie in [0, {self.n_pairs}), got "
                             f"{int(idx.min())} .. {int(idx.max())}")
        return idx

    def trial(self, delta, delta_dot, ids=None) -> np.ndarray:
        """``delta_dot_minus`` (m/s) for the given pairs at a trial state (no state change; one compiled call).

        Zero where the pair does not penetrate (the laws give F = 0 there anyway).
        """
        d = np.ascontiguousarray(delta, dtype=float).reshape(-1)
        dd = np.ascontiguousarray(np.broadcast_to(np.asarray(delta_dot, dtype=float), d.shape))
        idx = self._ids(ids, d.size)
        out = np.empty(d.size)
        cf.approach_trial(d, dd, idx, self.speed, self.in_contact, self.last_rate, out)
        return out

    def accept(self, delta, delta_dot, ids=None) -> None:
        """Record an accepted state: capture at touch, hold in contact, release at separation."""
        d = np.asarray(delta, dtype=float).reshape(-1)
        dd = np.broadcast_to(np.asarray(delta_dot, dtype=float), d.shape)
        idx = self._ids(ids, d.size)
        v = self.trial(d, dd, idx)
        if ids is not None:
            self.speed[:] = 0.0
            self.in_contact[:] = False
            self.last_rate[:] = np.nan
        touching = d > 0.0
        self.in_contact[idx] = touching
        self.speed[idx] = np.where(touching, v, 0.0)
        self.last_rate[idx] = dd

    def start(self, delta, delta_dot, ids=None) -> None:
        """Initial state: pairs already penetrating capture ``max(delta_dot, 0)``; the rest are apart."""
        self.speed[:] = 0.0
        self.in_contact[:] = False
        self.last_rate[:] = np.nan
        self.accept(delta, delta_dot, ids)

    def history(self) -> np.ndarray:
        """``[speed, in_contact, rate known, last rate (0 where unknown)]``, 4 values per pair."""
        known = np.isfinite(self.last_rate)
        return np.concatenate([self.speed, self.in_contact, known, np.where(known, self.last_rate, 0.0)])

    def set_history(self, x: np.ndarray) -> None:
        """Restore a vector from :meth:`history` (its length fixes the number of pairs)."""
        x = np.asarray(x, dtype=float).reshape(-1)
        if x.size % 4:
            raise ModelError(f"ApproachSpeeds: a history vector needs 4 values per pair, got {x.size} values")
        n = x.size // 4
        self.n_pairs = n
        self.speed = x[:n].copy()
        self.in_contact = x[n:2 * n] != 0.0
        self.last_rate = np.where(x[2 * n:3 * n] != 0.0, x[3 * n:], np.nan)

    def __repr__(self) -> str:
        return f"ApproachSpeeds({self.n_pairs} pairs, {int(self.in_contact.sum())} in contact)"
