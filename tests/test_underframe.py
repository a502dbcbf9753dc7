"""The ``underframe`` suite (verification/underframe/): Pereira & Dias's end-underframe with plastic hinges --
the quick cases against the paper's VCSI, the energy balance and the hinge-law replay; the replay's and the
sections' closed forms; a crash run too short to see the separation is refused."""
from __future__ import annotations

import numpy as np
import pytest

from flexmb.errors import ModelError
from verification.underframe import model
from verify_quick import run_quick


def test_verify_underframe(tmp_path):
    """The quick cases pass: the calibrated initial design (VCSI 20.2, utilization 0.529 within 2 %), the paper's
    optimal widths predicted within 5 % (VCSI 13.6), kinetic energy lost = hinge + buffer work within 2e-3,
    flexmb's hinges equal the plain return-mapping replay to 1e-8."""
    cases = run_quick("underframe", tmp_path / "rep")
    assert set(cases) == {"initial-design", "paper-optimum-widths"}
    assert cases["paper-optimum-widths"]["tolerance"]["vcsi_g2"] == "rel 0.05"
    assert all(c["passed"] for c in cases.values()), {n: (c.get("error"), c["metrics"]) for n, c in cases.items()}


def test_replay_follows_the_elastic_perfectly_plastic_cycle():
    """Load to 3 yield rotations, back to 0, on to -3: moments k theta up to Mp, the plateau, elastic unloading
    over 2 yield rotations to -Mp, reversed yield from there; the work is the dissipation Mp x (plastic rotation
    2 + 1 + 3 yield rotations) plus the elastic energy Mp^2 / (2k) left at the end."""
    k, Mp = 100.0, 2.0
    ty = Mp / k
    theta = np.concatenate([np.linspace(0, 3 * ty, 301), np.linspace(3 * ty, 0, 301)[1:],
                            np.linspace(0, -3 * ty, 301)[1:]])
    M, work = model.replay_hinge(theta, k, Mp)
    assert M[100] == pytest.approx(Mp) and M[50] == pytest.approx(0.5 * Mp)
    assert M[300] == pytest.approx(Mp)                                 # plateau
    assert M[400] == pytest.approx(Mp - k * ty)                         # elastic unloading
    assert M[500] == pytest.approx(-Mp) and M[600] == pytest.approx(-Mp)  # reversed yield from theta = ty
    assert M[-1] == pytest.approx(-Mp)
    plastic = 6 * ty
    assert work == pytest.approx(Mp * plastic + Mp ** 2 / (2 * k), rel=1e-9)


def test_section_properties_reduce_to_a_rectangle():
    """With the flange width equal to the web thickness the I section is a rectangle t_w x h: Z_p = t_w h^2/4,
    I = t_w h^3/12, A = t_w h."""
    s = model.Section(h=0.2, tf=0.012, tw=0.008)
    assert s.plastic_modulus(s.tw) == pytest.approx(s.tw * s.h ** 2 / 4, rel=1e-12)
    assert s.second_moment(s.tw) == pytest.approx(s.tw * s.h ** 3 / 12, rel=1e-12)
    assert s.area(s.tw) == pytest.approx(s.tw * s.h, rel=1e-12)


def test_model_counts_and_families():
    """26 hinges as in the paper, 19 segments and the car body; every family of the constraints has hinges."""
    m = model.build(model.INITIAL, 30.0)
    assert len(m.hinges) == 26 and len(m.segments) == 19
    assert {h.family for h in m.hinges} == set(model.FAMILIES)


def test_crash_run_that_ends_in_contact_is_refused(monkeypatch):
    monkeypatch.setattr(model, "T_CRASH", 0.05)
    with pytest.raises(ModelError, match=r"end-underframe .*still touch the wall"):
        model.crash(model.INITIAL)


@pytest.mark.parametrize("widths", [(0.1, 0.1), (0.1, -0.1, 0.1), (0.1, float("nan"), 0.1), "abc"])
def test_bad_widths_are_refused(widths):
    with pytest.raises(ModelError, match=r"end-underframe: widths must be three"):
        model.build(widths, 30.0)
