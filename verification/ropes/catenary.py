"""A hanging chain of rigid segments against the catenary: ``fm.static_equilibrium`` (issue 12 items 2-3).

Model: a rope of length l = 10 m, rho = 2 kg/m, hung between two anchors at equal height a span S = 8 m apart
(our choices; Crous 2000 gives no catenary case), as n rigid segments on universal joints (``rope_chain`` with a
``bend_axis``: spherical joints would leave each segment's spin free, which a static solve rightly refuses),
pinned to the ground by a universal joint at the left end (a spherical one there would leave a twist of the whole
chain free: the spin of the first link, passed on through the crosses) and a spherical one at the right; it starts
as a polygon of equal chords on a circular arc and is brought to rest under gravity by ``fm.static_equilibrium``.

References (docs/theory-ropes.md §6):

* the chain's own closed form. Each link carries its weight w = rho g L at its centre; the horizontal force H is
  the same in every link and the vertical one drops by w per link, so the moment balance of link k puts it along
  the mean of its end forces: slope s_k = w (n - 2k - 1) / (2 H). H solves ``S = sum L / sqrt(1 + s_k^2)``; the sag
  is ``sum_{k < n/2} L s_k / sqrt(1 + s_k^2)``. Exact for the discrete model, so the tolerance is the solver's:
  rel 1e-8 (Newton stops at 1e-10 of the coordinates; H from the multipliers).
* the continuous catenary, ``l = 2 a sinh(S / 2a)``, sag ``a (cosh(S / 2a) - 1)``, H = rho g a, which the chain
  approaches as (L/l)^2 (measured: 1.3e-3 for 20 links, 3.3e-4 for 40): checked as ``sag_continuum`` within
  rel (L/l)^2 = 1/n^2.
"""
from __future__ import annotations

import math

import numpy as np
from scipy.optimize import brentq

import flexmb as fm
from flexmb.contact import rope_chain

from ..framework import CaseResult

SPAN, LENGTH, RHO, G = 8.0, 10.0, 2.0, 9.81
SEGMENTS, SEGMENTS_QUICK = 40, 20        # even: a joint at mid-span
TOL = 1e-8


def chain_closed_form(n: int) -> tuple[float, float]:
    """Horizontal tension H (N) and mid-span sag (m) of n rigid links with their weight at their centres."""
    L, w = LENGTH / n, RHO * G * LENGTH / n
    k = np.arange(n)

    def slopes(H):
        return w * (n - 2 * k - 1) / (2.0 * H)

    H = brentq(lambda H: np.sum(L / np.sqrt(1.0 + slopes(H) ** 2)) - SPAN, 1e-6, 1e6, xtol=1e-14, rtol=1e-15)
    s = slopes(H)[: n // 2]
    return H, float(np.sum(L * s / np.sqrt(1.0 + s * s)))


def catenary() -> tuple[float, float]:
    """Horizontal tension H (N) and sag (m) of the continuous catenary of LENGTH over SPAN."""
    a = brentq(lambda a: 2.0 * a * math.sinh(SPAN / (2.0 * a)) - LENGTH, 0.1, 1e3, xtol=1e-14, rtol=1e-15)
    return RHO * G * a, a * (math.cosh(SPAN / (2.0 * a)) - 1.0)


def arc_points(n: int) -> np.ndarray:
    """n equal chords of LENGTH/n inscribed in a circular arc through (-S/2, 0) and (S/2, 0), sagging down."""
    L = LENGTH / n
    psi = brentq(lambda p: math.sin(n * p / 2.0) / math.sin(p / 2.0) - SPAN / L, 1e-9, 2.0 * math.pi / n - 1e-9)
    R = L / (2.0 * math.sin(psi / 2.0))
    yc = R * math.cos(n * psi / 2.0)
    ang = -0.5 * math.pi - n * psi / 2.0 + psi * np.arange(n + 1)
    return np.column_stack([R * np.cos(ang), yc + R * np.sin(ang), np.zeros(n + 1)])


def hanging_chain(quick: bool) -> CaseResult:
    """catenary: static equilibrium of the chain against its closed form and the continuous catenary."""
    n = SEGMENTS_QUICK if quick else SEGMENTS
    r = CaseResult("catenary", "closed forms (module doc; docs/theory-ropes.md §6); our data")
    s = fm.System(gravity=(0.0, -G, 0.0), name=f"hanging chain, {n} segments")
    pts = arc_points(n)
    rope = rope_chain(s, pts, RHO, diameter=0.02, bend_axis=(0.0, 0.0, 1.0), name="chain")
    left = s.add(fm.Universal(s.ground, rope.segments[0], point=pts[0], axis_a=(0.0, 0.0, 1.0),
                              axis_b=np.cross((0.0, 0.0, 1.0), pts[1] - pts[0]), name="left anchor"))
    s.add(fm.Spherical(s.ground, rope.segments[-1], pts[-1], name="right anchor"))
    res = fm.static_equilibrium(s, load_steps=5)
    # the sag is the depth of the middle joint (n even), read from the segment that starts there
    joint = res.position(rope.segments[n // 2], local_point=rope.segments[n // 2].to_local_point(pts[n // 2]))[-1]
    sag = -float(joint[1])
    F, _ = res.reaction(left)
    H = abs(float(F[-1, 0]))
    H_ref, sag_ref = chain_closed_form(n)
    H_cat, sag_cat = catenary()
    r.check("sag", sag, sag_ref, f"rel {TOL:g}")
    r.check("horizontal_tension", H, H_ref, f"rel {TOL:g}")
    r.check("sag_continuum", sag, sag_cat, f"rel {1.0 / n ** 2:g}")
    r.metrics.update({"segments": n, "horizontal_tension_catenary": H_cat,
                      "sag_rel_to_catenary": sag / sag_cat - 1.0, "load_steps_taken": len(res.t) - 1})
    r.notes = (f"span {SPAN:g} m, rope {LENGTH:g} m, {RHO:g} kg/m, {n} segments on universal joints; the chain "
               f"sags {sag / sag_cat - 1.0:+.2e} relative to the continuous catenary (O((L/l)^2))")
    return r


CASES = [hanging_chain]
