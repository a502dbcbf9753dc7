"""The inputs of a compiled block of steps (flexmb/solvers/compiled_step.py): its end times and the drivers'
f and f'' sampled as arrays, against the step-by-step loop and the scalar time functions they replace."""
import math

import numpy as np
import pytest

import flexmb as fm
from flexmb.solvers.compiled_step import block_times


def loop_times(t, n, t_end, h, h_max):
    """The loop block_times replaces (CompiledStep.run before): steps of min(h, h_max, t_end - t)."""
    times = []
    done = t_end - 1e-12 * max(1.0, abs(t_end))
    while len(times) < n and t < done:
        t = t + min(h, h_max, t_end - t)
        times.append(t)
    return np.array(times)


def test_block_times_equal_the_loop():
    """Bit-identical to the loop (same additions in the same order) over random starts, ends, steps and sizes,
    including blocks ending on a shortened last step and ends already reached."""
    rng = np.random.default_rng(3)
    for _ in range(3000):
        h = float(rng.choice([1e-3, 1e-4, 0.1, 0.003, 1 / 3]))
        h_max = float(rng.choice([np.inf, h, h / 2, 0.07]))
        t0 = float(rng.choice([0.0, 0.123, 5.0, rng.random() * 3]))
        t_end = t0 + float(rng.choice([rng.random(), 1.0, 10 * h, 3 * h + 1e-13, 2 * h, 0.0, -1.0, 20.0]))
        n = int(rng.choice([0, 1, 5, 100, 500]))
        a, b = block_times(t0, n, t_end, h, h_max), loop_times(t0, n, t_end, h, h_max)
        assert a.shape == b.shape and np.array_equal(a, b), (t0, n, t_end, h, h_max)


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
