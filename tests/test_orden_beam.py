"""García Orden's beam on a wall (verification/impact/orden_beam.py): the references the cases rest on.

The impulsive closed form of the rigid bar must conserve kinetic energy at e = 1 and give the contact point
the reversed normal speed; the independent ODE of the rigid bar must approach it as the contact stiffens; the
contact splitter must find separate runs of positive force. The beam's own runs are in `flexmb verify impact`.
"""
import math

import numpy as np

from verification.impact import orden_beam as ob


def test_impulsive_bar_conserves_energy_and_reverses_the_contact_point():
    v = ob.impulsive_bar(45.0, 5.0, e=1.0)
    before = 0.5 * ob.MASS * 5.0 ** 2
    after = 0.5 * ob.MASS * v.vy ** 2 + 0.5 * ob.BAR_INERTIA * v.omega ** 2
    assert math.isclose(after, before, rel_tol=1e-12)
    d = 0.5 * ob.LENGTH * math.cos(math.radians(45.0))
    contact_vy = v.vy - v.omega * d          # lower end at x = -d: vy + (omega x r)_y = vy - omega d
    assert math.isclose(contact_vy, 5.0, rel_tol=1e-12)


def test_impulsive_bar_with_no_restitution_stops_the_contact_point():
    v = ob.impulsive_bar(30.0, 2.0, e=0.0)
    d = 0.5 * ob.LENGTH * math.cos(math.radians(30.0))
    assert abs(v.vy - v.omega * d) < 1e-12


def test_bar_reference_tends_to_the_impulsive_closed_form_as_the_contact_stiffens():
    jump = ob.impulsive_bar()
    errors = []
    for k in (1.2e8, 1.2e10):
        vy, omega = ob.bar_reference(np.array([0.0, 0.02]), stiffness=k)[-1]
        errors.append(abs(omega / jump.omega - 1.0))
    # the bar turns while in contact (duration ~ K^-0.4): a 100 times stiffer contact is ~6 times shorter
    assert errors[1] < errors[0] / 3.0 and errors[1] < 5e-4


def test_contacts_are_separate_runs_of_positive_force():
    t = np.arange(10.0)
    f = np.array([0, 1, 3, 0, 0, 2, 0, 5, 4, 0], dtype=float)
    runs = ob.contacts(t, f)
    assert [(c.start, c.end, c.peak) for c in runs] == [(1, 2, 3), (5, 5, 2), (7, 8, 5)]
    assert ob.contacts(t, np.zeros(10)) == []
