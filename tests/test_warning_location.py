"""flexmb's run warnings name the user's line (the ``fm.simulate(...)`` call), not a frame inside flexmb: a fixed
``stacklevel`` pointed at flexmb/linalg.py ('return run(system, *args, **kwargs)', the BLAS-threads
decorator) for EnergyBalanceWarning and at flexmb/solvers/simulate.py for RedundantConstraintWarning."""
import warnings

import flexmb as fm
from flexmb.errors import EnergyBalanceWarning, RedundantConstraintWarning, user_stacklevel


def planar_fourbar() -> fm.System:
    """A planar loop of four revolutes in 3-D: three of its constraint rows are redundant."""
    s = fm.System(gravity=(0, -9.81, 0))
    a, b, c = (0.0, 0.0, 0.0), (0.0, 0.1, 0.0), (0.3, 0.1, 0.0)
    crank = s.add(fm.RigidBody(1.0, (1e-3, 1e-3, 1e-3), position=(0.0, 0.05, 0.0), name="crank"))
    coupler = s.add(fm.RigidBody(1.0, (1e-3, 1e-2, 1e-2), position=(0.15, 0.1, 0.0), name="coupler"))
    rocker = s.add(fm.RigidBody(1.0, (1e-3, 1e-3, 1e-3), position=(0.3, 0.05, 0.0), name="rocker"))
    z = (0, 0, 1)
    s.add(fm.Revolute(s.ground, crank, a, z))
    s.add(fm.Revolute(crank, coupler, b, z))
    s.add(fm.Revolute(coupler, rocker, c, z))
    s.add(fm.Revolute(rocker, s.ground, (0.3, 0.0, 0.0), z))
    return s


def dc_motor_underresolved() -> fm.System:
    """Armature time constant 1 ms run at h = 2 ms: the energy balance is flagged (drift 0.995)."""
    s = fm.System()
    w = s.add(fm.RigidBody(2.0, (0.01, 0.01, 0.01)))
    j = s.add(fm.Revolute(s.ground, w, (0, 0, 0), (0, 0, 1)))
    s.add(fm.DCMotor(j, K_p=0.05, r_a=1.0, L_a=1e-3, D=1e-4, voltage=12.0))
    return s


def caught(run) -> list[warnings.WarningMessage]:
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        run()
    return record


def test_redundant_rows_warning_names_the_simulate_line():
    record = caught(lambda: fm.simulate(planar_fourbar(), 0.01, 1e-3))
    [w] = [w for w in record if issubclass(w.category, RedundantConstraintWarning)]
    assert w.filename == __file__, (w.filename, w.lineno)


def test_energy_balance_warning_names_the_simulate_line():
    record = caught(lambda: fm.simulate(dc_motor_underresolved(), 0.02, 2e-3))
    [w] = [w for w in record if issubclass(w.category, EnergyBalanceWarning)]
    assert w.filename == __file__, (w.filename, w.lineno)


def test_user_stacklevel_counts_the_caller_itself_outside_flexmb():
    assert user_stacklevel() == 1      # called from this test (outside flexmb): the caller's own frame
