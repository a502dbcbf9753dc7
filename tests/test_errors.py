"""Bad input is refused with a flexmb.errors exception naming the item and value."""
import numpy as np
import pytest

import flexmb as fm
from flexmb.errors import (ConvergenceError, EnergyBalanceWarning, InconsistentInitialConditions, ModelError,
                           NonFiniteError, RedundantConstraintError, SingularConfigurationError)


def body(**kw):
    args = dict(mass=1.0, inertia=(1.0, 1.0, 1.0), name="b")
    args.update(kw)
    return fm.RigidBody(**args)


@pytest.mark.parametrize("kw, words", [
    (dict(mass=0.0), ["'b'", "mass", "0.0"]),
    (dict(mass=-2.0), ["'b'", "-2.0"]),
    (dict(inertia=(1.0, -1.0, 1.0)), ["'b'", "positive definite"]),
    (dict(inertia=(1.0, 1.0, 3.0)), ["'b'", "triangle inequality"]),
    (dict(inertia=[[1, 2, 0], [0, 1, 0], [0, 0, 1]]), ["'b'", "symmetric"]),
    (dict(orientation=np.diag([1.0, 1.0, -1.0])), ["'b'", "proper rotation"]),
    (dict(position=(0, np.nan, 0)), ["'b'", "position", "nan"]),
])
def test_bad_bodies(kw, words):
    with pytest.raises(ModelError) as e:
        body(**kw)
    for w in words:
        assert w in str(e.value)


def test_zero_length_axis_and_self_joint():
    s = fm.System()
    b = s.add(body())
    with pytest.raises(ModelError, match="axis .* zero length"):
        fm.Revolute(s.ground, b, (0, 0, 0), (0, 0, 0), name="r")
    with pytest.raises(ModelError, match="itself"):
        fm.Spherical(b, b, (0, 0, 0))
    with pytest.raises(ModelError, match="perpendicular"):
        fm.Universal(s.ground, b, point=(0, 0, 0), axis_a=(1, 0, 0), axis_b=(1, 1, 0))


def test_joint_on_body_not_in_system():
    s = fm.System()
    b = s.add(body(name="inside"))
    outsider = body(name="outsider")
    s.add(fm.Spherical(b, outsider, (0, 0, 0), name="j"))
    with pytest.raises(ModelError, match="'outsider'.*not in system"):
        fm.simulate(s, 0.1, 0.01)


def test_driver_nan_and_wrong_joint():
    s = fm.System()
    b = s.add(body())
    j = s.add(fm.Revolute(s.ground, b, (0, 0, 0), (0, 0, 1), name="hinge"))
    s.add(fm.Driver(j, angle=lambda t: np.nan if t > 0.05 else 0.0, name="bad"))
    with pytest.raises(NonFiniteError, match="'bad'.*nan"):
        fm.simulate(s, 0.1, 0.01)
    sph = fm.Spherical(s.ground, b, (0, 0, 0), name="ball")
    with pytest.raises(ModelError, match="revolute or cylindrical.*'ball'"):
        fm.Driver(sph, angle=0.0)


def test_inconsistent_start_named():
    s = fm.System()
    b = s.add(body())
    s.add(fm.Distance(s.ground, b, point_a=(0, 0, 0), point_b=(1, 0, 0), name="rod"))
    s.add(fm.Driver(b, coordinate="x", value=5.0, name="far"))   # |x| = 5 > rod length 1: impossible
    with pytest.raises(InconsistentInitialConditions, match="cannot be made consistent") as e:
        fm.simulate(s, 0.1, 0.01)
    assert "rod" in str(e.value) or "far" in str(e.value)


def test_redundant_refused_on_request():
    s = fm.System()
    b = s.add(body())
    s.add(fm.Revolute(s.ground, b, (0, 0, 0), (0, 0, 1), name="r1"))
    s.add(fm.Revolute(s.ground, b, (0, 0, 0), (0, 0, 1), name="r2"))
    with pytest.raises(RedundantConstraintError) as e:
        fm.simulate(s, 0.1, 0.01, redundant="error")
    assert len(e.value.rows) == 5 and all("r1" in r or "r2" in r for r in e.value.rows)


def test_newton_failure_diagnostic():
    s = fm.System()
    b = s.add(body(position=(0.5, 0.0, 0.0)))
    # rod of length sqrt(0.5) to a body point 0.5 m from the centre of mass: |x| <= 1.207 m
    s.add(fm.Distance(s.ground, b, point_a=(0, 0, 0), point_b=(0.5, 0.5, 0), name="rod"))
    # the driver pushes the centre of mass past the reach of the rod at t = 0.0707 s
    s.add(fm.Driver(b, coordinate="x", value=fm.TimeFunction.linear(10.0, 0.5), name="push"))
    # nearing the rod's reach the rod force and the driver's multiplier grow without bound: the energy balance
    # is flagged (drift 0.135 of the energy scale at t = 0.06 s) before Newton fails
    with pytest.warns(EnergyBalanceWarning, match="energy balance drifted"), pytest.raises(ConvergenceError) as e:
        fm.simulate(s, 0.3, 0.01, h_min=1e-4)
    err = e.value
    assert 0.06 < err.time < 0.09 and err.step < 0.01 and np.isfinite(err.residual)
    assert ("rod" in err.worst or "push" in err.worst) and "t = " in str(err)
    assert err.result is not None and 0.05 < err.result.t[-1] < 0.08


def test_spring_validation():
    s = fm.System()
    b = s.add(body())
    with pytest.raises(ModelError, match="stiffness k.*-1"):
        fm.SpringDamper(s.ground, b, point_a=(0, 0, 0), point_b=(1, 0, 0), k=-1.0)
    with pytest.raises(ModelError, match="coincide"):
        fm.SpringDamper(s.ground, b, point_a=(0, 0, 0), point_b=(0, 0, 0), k=1.0)


def test_singular_start_is_not_silently_dropped():
    """A row that is dependent only at the start (singular configuration) must not be
    switched off for good: once it would be violated the run stops with a clear error."""
    s = fm.System()
    b = s.add(body(position=(0.5, 0.0, 0.0)))
    s.add(fm.Distance(s.ground, b, point_a=(0, 0, 0), point_b=(1.0, 0, 0), name="rod"))   # aligned with the push
    s.add(fm.Driver(b, coordinate="x", value=fm.TimeFunction.linear(10.0, 0.5), name="push"))
    with pytest.warns(UserWarning, match="rod"), pytest.raises(SingularConfigurationError, match="rod.*t = "):
        fm.simulate(s, 0.3, 0.01)
