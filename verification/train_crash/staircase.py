"""SAFETRAIN staircase crush characteristics of Pereira & Dias 2002, Table II, and their closed-form energies.

Pereira & Dias ("Optimization of rigid-flexible multibody systems with application to vehicle dynamics and
crashworthiness", in Virtual Nonlinear Multibody Systems vol. II, NATO ASI, Prague 2002), Table II, initial
design: low-energy (LE) devices 1000 / 2000 / 3500 kN, high-energy (HE) devices 1000 / 2000 / 3000 kN, one
"Displacement" row for both designs and both device types: LE 100 / 800 / 1000 mm, HE 200 / 200 / 500 mm.

How the displacement row is read: as the *length of each step*, not as the crush at which a step ends. The HE
row (200, 200, 500) cannot be cumulative (its second step would have zero length), and the table prints one
row for both device types, so the same reading is used for both. LE steps therefore end at 0.1, 0.9 and
1.9 m of crush (capacity 5.2 MJ), HE steps at 0.2, 0.4 and 0.9 m (capacity 2.1 MJ).

A staircase is given to :class:`flexmb.CrushElement` as a tabulated curve: the force rises linearly over
``rise`` (m) at the start of every step (a jump needs a finite slope no steeper than the unloading
stiffness), holds the step level to the step's end, and after the last step the exhausted device blocks
with the slope ``block_stiffness`` (the solid length; a run that reaches it fails the stroke check).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

KN = 1e3            # N per kN
MM = 1e-3           # m per mm


@dataclass(frozen=True)
class Staircase:
    """A staircase crush characteristic: step force levels (N) and step lengths (m)."""

    name: str
    levels: tuple[float, ...]
    lengths: tuple[float, ...]

    @property
    def ends(self) -> np.ndarray:
        """Crush (m) at which each step ends."""
        return np.cumsum(self.lengths)

    @property
    def stroke(self) -> float:
        """Usable crush (m) of the device: the end of the last step."""
        return float(self.ends[-1])

    def capacity(self) -> float:
        """Energy (J) of the ideal staircase crushed to its stroke, sum F_i l_i."""
        return float(np.dot(self.levels, self.lengths))

    def step_energies(self, crush: float) -> np.ndarray:
        """Energy (J) of each ideal step crushed up to ``crush`` (m): F_i times the part of step i crushed,
        F_i min(l_i, max(0, crush - s_{i-1})) with s_{i-1} the start of step i."""
        starts = self.ends - np.asarray(self.lengths)
        return np.asarray(self.levels) * np.clip(crush - starts, 0.0, np.asarray(self.lengths))

    def curve(self, rise: float, block_stiffness: float) -> tuple[list[float], list[float]]:
        """Tabulated crush curve (crush m, force N) for :class:`flexmb.CrushElement` (module docstring)."""
        x, y = [0.0], [0.0]
        start = 0.0
        for level, length in zip(self.levels, self.lengths):
            x += [start + rise, start + length]
            y += [level, level]
            start += length
        x.append(start + rise)
        y.append(self.levels[-1] + block_stiffness * rise)
        return x, y


#: Pereira & Dias 2002, Table II, initial design (step lengths as read in the module docstring).
LE = Staircase("LE", (1000 * KN, 2000 * KN, 3500 * KN), (100 * MM, 800 * MM, 1000 * MM))
HE = Staircase("HE", (1000 * KN, 2000 * KN, 3000 * KN), (200 * MM, 200 * MM, 500 * MM))


def curve_work(curve: tuple, crush: float) -> float:
    """Closed-form work (J) of a piecewise-linear loading curve from 0 to ``crush`` (m): the exact area under
    its segments (trapezoids), the last slope continued beyond the table."""
    x, y = (np.asarray(c, dtype=float) for c in curve)
    if crush <= 0.0:
        return 0.0
    slope_end = (y[-1] - y[-2]) / (x[-1] - x[-2])
    xs = np.append(x, max(crush, x[-1]))
    ys = np.append(y, y[-1] + slope_end * (xs[-1] - x[-1]))
    keep = xs < crush
    xk, yk = xs[keep], ys[keep]
    y_end = float(np.interp(crush, xs, ys))
    xk, yk = np.append(xk, crush), np.append(yk, y_end)
    return float(np.sum(0.5 * (yk[1:] + yk[:-1]) * np.diff(xk)))


def absorbed_after(curve: tuple, max_crush: float, end_crush: float, unloading_stiffness: float) -> float:
    """Closed-form energy (J) a crush element holds as absorbed work when it reached ``max_crush`` (m) and now
    sits at ``end_crush`` (m) on its unloading line (docs/theory-crash.md §3): the area under the loading curve
    to the largest crush less the elastic energy the unloading line has returned,
    (F_max^2 - F_end^2) / (2 k_u), F_end = max(0, F_max - k_u (max_crush - end_crush))."""
    x, y = (np.asarray(c, dtype=float) for c in curve)
    f_max = float(np.interp(max_crush, x, y)) if max_crush <= x[-1] else \
        float(y[-1] + (y[-1] - y[-2]) / (x[-1] - x[-2]) * (max_crush - x[-1]))
    f_end = max(0.0, f_max - unloading_stiffness * (max_crush - end_crush))
    return curve_work(curve, max_crush) - (f_max ** 2 - f_end ** 2) / (2.0 * unloading_stiffness)
