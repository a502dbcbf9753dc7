"""The inputs of a compiled block of steps (flexmb/solvers/compiled_step.py): the drivers' f and f'' sampled as
arrays, against the scalar time functions they replace (the block's end times: tests/test_end_times.py)."""
import math

import numpy as np
import pytest

import flexmb as fm


@pytest.mark.parametrize("tf", [fm.TimeFunction.spin_up(4.0, 15.0), fm.TimeFunction.spin_up(10.0, 15.0, angle=False),
                                fm.TimeFunction.constant(2.5), fm.TimeFunction.linear(0.3, 1.0),
                                fm.TimeFunction.table([0.0, 1.0, 2.0, 3.0], [0.0, 1.0, 0.0, 5.0])],
                         ids=["spin-up angle", "spin-up rate", "constant", "linear", "table"])
def test_vectorized_sample_equals_scalar_functions(tf):
    """The built-in profiles' array forms give f and f'' equal to their scalar functions to the last bit (the
    same expressions), before, inside and after their ranges (spin-up T_s = 15 s, table 0..3 s)."""
    tf = tf.bound("driver 'hub'")
    times = np.concatenate([np.linspace(-1.0, 20.0, 2001), [0.0, 1.0, 3.0, 15.0]])
    f, a, n = tf.sample(times)
    assert n == times.size
    assert np.array_equal(f, [tf.value(t) for t in times])
    assert np.array_equal(a, [tf.acceleration(t) for t in times])


def test_user_function_sampled_per_time_and_failure_ends_the_block():
    """A user function has no array form: sampled time by time, and the first time it fails ends the valid part
    (the general step then raises its error)."""
    tf = fm.TimeFunction(lambda t: math.sqrt(1.0 - t), lambda t: 0.0, lambda t: 0.0).bound("driver 'd'")
    f, a, n = tf.sample([0.0, 0.5, 1.0, 2.0, 3.0])
    assert n == 3 and np.allclose(f[:3], [1.0, math.sqrt(0.5), 0.0])
