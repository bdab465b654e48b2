"""The scan version of the Gauss–Markov chain's message against the sequential recursion, long chains and batches.

The reference is the step-by-step recursion on numpy arrays written out
below (a Kalman forward pass, the backward pass β_t = ∫ N(x' | a x, q) μ_{t+1} β_{t+1},
their product with log-scales), one step for all chains at a time. Short
single chains run the Python-float recursion inside the rule, checked here
against the same reference and against the scan.
"""
import math

import numpy as np
import pytest

from fgraph import jit
from fgraph.families import NormalMeanVariance
from fgraph.families.normal import LOG_2PI
from fgraph.nodes.gauss_markov_chain import GaussMarkovChainNode
from fgraph.rules.gauss_markov_chain import out
from tests.rules.tables import message

GAIN, PROCESS_VAR, INITIAL_MEAN, INITIAL_VAR = 0.9, 0.5, 0.3, 2.0


def log_overlaps(mean_a, var_a, mean_b, var_b):
    total = var_a + var_b
    return -0.5 * (LOG_2PI + np.log(total) + (mean_a - mean_b) ** 2 / total)


def sequential_messages(means, variances, scales, a=GAIN, q=PROCESS_VAR, m0=INITIAL_MEAN, v0=INITIAL_VAR):
    """(mean, var, log-scale), each (..., T), of α_t β_t by the recursion one step at a time."""
    means, variances, scales = (np.moveaxis(x, -1, 0) for x in (means, variances, scales))  # (T, ...)
    steps = means.shape[0]
    forward_mean, forward_var, forward_log = np.empty(means.shape), np.empty(means.shape), np.empty(means.shape)
    mean, var, log_scale = np.full(means.shape[1:], m0), np.full(means.shape[1:], v0), np.zeros(means.shape[1:])
    for t in range(steps):
        forward_mean[t], forward_var[t], forward_log[t] = mean, var, log_scale
        log_scale = log_scale + log_overlaps(mean, var, means[t], variances[t]) + scales[t]
        precision = 1.0 / var + 1.0 / variances[t]
        mean = (mean / var + means[t] / variances[t]) / precision
        mean, var = a * mean, a * a / precision + q
    out_mean, out_var, out_log = forward_mean.copy(), forward_var.copy(), forward_log.copy()  # β_T = 1
    g_mean, g_var, g_log = means[-1], variances[-1], scales[-1]
    for t in range(steps - 2, -1, -1):
        back_mean, back_var, back_log = g_mean / a, (g_var + q) / (a * a), g_log - math.log(abs(a))
        out_log[t] = forward_log[t] + back_log + log_overlaps(forward_mean[t], forward_var[t], back_mean, back_var)
        precision = 1.0 / forward_var[t] + 1.0 / back_var
        out_var[t] = 1.0 / precision
        out_mean[t] = (forward_mean[t] / forward_var[t] + back_mean / back_var) / precision
        g_log = back_log + scales[t] + log_overlaps(means[t], variances[t], back_mean, back_var)
        precision = 1.0 / variances[t] + 1.0 / back_var
        g_var = 1.0 / precision
        g_mean = (means[t] / variances[t] + back_mean / back_var) / precision
    return tuple(np.moveaxis(x, 0, -1) for x in (out_mean, out_var, out_log))


def random_messages(rng, shape):
    return rng.normal(size=shape) * 2.0, rng.uniform(0.1, 3.0, size=shape), rng.normal(size=shape)


def rule_message(means, variances, scales):
    return message(GaussMarkovChainNode, "out", {"m_out": NormalMeanVariance(means, variances, log_scale=scales)},
                   batch_shape=means.shape, gain=GAIN, var=PROCESS_VAR, initial_mean=INITIAL_MEAN,
                   initial_var=INITIAL_VAR)


def assert_messages_equal(result, expected):
    """Means and variances to 1e-10; log-scales (of the size of T) to 1e-10 relative."""
    mean, var, log_scale = expected
    np.testing.assert_allclose(result.mean, mean, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(result.var, var, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(result.log_scale, log_scale, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("shape", [(10**5,), (3, 10**4), (2, 2, 777), (4, 1), (2, 2), (out.FLOAT_STEPS + 1,)])
def test_scan_equals_the_sequential_recursion(shape, recursion_path):
    rng = np.random.default_rng(shape[-1])
    means, variances, scales = random_messages(rng, shape)
    result = rule_message(means, variances, scales)
    assert result.batch_shape == shape
    assert_messages_equal(result, sequential_messages(means, variances, scales))


@pytest.mark.parametrize("steps", [1, 2, 7, out.FLOAT_STEPS])
def test_short_chains_on_floats_equal_the_scan_and_the_recursion(steps, monkeypatch):
    """Up to FLOAT_STEPS steps a single chain runs on floats: the same numbers as the scan."""
    rng = np.random.default_rng(steps)
    means, variances, scales = random_messages(rng, (steps,))
    expected = sequential_messages(means, variances, scales)
    node = GaussMarkovChainNode("x", (steps,), gain=GAIN, var=PROCESS_VAR, initial_mean=INITIAL_MEAN,
                                initial_var=INITIAL_VAR)
    assert_messages_equal(out._forward_backward_by_scan(NormalMeanVariance(means, variances, log_scale=scales), node),
                          expected)
    monkeypatch.setattr(out, "_forward_backward_by_scan", None)  # the rule must not reach the scan
    assert_messages_equal(rule_message(means, variances, scales), expected)


def test_longer_chains_run_the_scan(monkeypatch):
    rng = np.random.default_rng(1)
    means, variances, scales = random_messages(rng, (out.FLOAT_STEPS + 1,))
    monkeypatch.setattr(out, "_forward_backward_in_floats", None)  # the rule must not reach the float loop
    assert_messages_equal(rule_message(means, variances, scales), sequential_messages(means, variances, scales))


def test_precise_messages_keep_their_digits(recursion_path):
    """Messages of variance 1e−10 next to a process variance of 0.5: the scan never divides a marginal by μ_t."""
    rng = np.random.default_rng(2)
    means, variances, scales = random_messages(rng, (2, 600))
    variances[:, ::3] = 1e-10
    assert_messages_equal(rule_message(means, variances, scales), sequential_messages(means, variances, scales))


def test_a_negative_gain(recursion_path):
    rng = np.random.default_rng(3)
    means, variances, scales = random_messages(rng, (2, 700))
    result = message(GaussMarkovChainNode, "out", {"m_out": NormalMeanVariance(means, variances, log_scale=scales)},
                     batch_shape=(2, 700), gain=-1.3, var=0.2, initial_mean=1.0, initial_var=0.5)
    assert_messages_equal(result, sequential_messages(means, variances, scales, a=-1.3, q=0.2, m0=1.0, v0=0.5))


@pytest.mark.parametrize("causal", [False, True])
def test_the_loops_equal_the_scan_with_starts_per_chain(causal):
    """Compiled (if numba is installed) and plain-Python loops against the scan; starts per chain, causal or not."""
    from fgraph.rules.gauss_markov_chain import loops

    rng = np.random.default_rng(12)
    means, variances, scales = random_messages(rng, (3, 900))
    node = GaussMarkovChainNode("x", (3, 900), gain=0.8, var=0.3, initial_mean=rng.normal(size=3),
                                initial_var=rng.uniform(0.5, 2.0, size=3), causal=causal)
    incoming = NormalMeanVariance(means, variances, log_scale=scales)
    with jit.compiled_loops(False):
        expected = out._forward_backward_by_scan(incoming, node)
    compiled = loops._compiled_messages
    for version in ([compiled, None] if jit.AVAILABLE else [None]):
        loops._compiled_messages = version  # None: the Python loops that run without numba
        try:
            with jit.compiled_loops(True):
                jit._state["on"] = True  # even without numba: the Python loops
                found = out._forward_backward_by_scan(incoming, node)
        finally:
            loops._compiled_messages = compiled
        assert_messages_equal(found, (expected.mean, expected.var, expected.log_scale))


def test_the_kalman_loops_equal_the_scans_of_folded_messages():
    """The filter and backward information the random-parameter rule takes from the loops (compiled, and the
    Python version that runs without numba) against its scans."""
    from fgraph.rules.gauss_markov_chain import loops

    rng = np.random.default_rng(13)
    means, variances, _ = random_messages(rng, (2, 300))
    starts = rng.normal(size=2), rng.uniform(0.5, 2.0, size=2)
    expected = out._folded_scans(means, variances, 0.7, 0.4, starts[0], starts[1], (2, 300))
    versions = [loops._kalman_loops] + ([loops.kalman_loops] if jit.AVAILABLE else [])
    for version in versions:
        found = version(means, variances, 0.7, 0.4, starts[0], starts[1], False)
        for part, reference in zip(found, expected, strict=True):
            np.testing.assert_allclose(part, reference, rtol=1e-10, atol=1e-12)
