"""The scan version of the forward–backward pass against the sequential recursion, long chains and batches.

The reference is the textbook scaled recursion, one time step at a time on
numpy vectors (Rabiner's α/β with per-step normalisers), written out below;
short single chains of few states run the Python-float recursion inside the
rule, which is checked against the same reference and against the scan. Tests taking the
``recursion_path`` fixture run twice: by the numpy scan and by the compiled loops (:mod:`fgraph.jit`).
"""
import numpy as np
import pytest

from fgraph import jit
from fgraph.families import Categorical
from fgraph.nodes.markov_chain import MarkovChainNode
from fgraph.rules.markov_chain import out
from tests.rules.tables import message


def sequential_messages(initial, transition, probabilities, scales):
    """(probabilities (..., T, K), log-scales (..., T)) of α_t β_t by the step-by-step recursion."""
    likelihood = np.moveaxis(probabilities, -2, 0)  # (T, ..., K)
    scales = np.moveaxis(scales, -1, 0)
    steps = likelihood.shape[0]
    forward, forward_log = np.empty(likelihood.shape), np.empty(scales.shape)
    predicted, log_norm = np.broadcast_to(initial, likelihood.shape[1:]), np.zeros(scales.shape[1:])
    for t in range(steps):
        forward[t], forward_log[t] = predicted, log_norm
        joint = predicted * likelihood[t]
        mass = joint.sum(axis=-1)
        log_norm = log_norm + np.log(mass) + scales[t]
        predicted = (joint / mass[..., None]) @ transition.T
    backward, backward_log = np.empty(likelihood.shape), np.empty(scales.shape)
    following, log_norm = np.ones(likelihood.shape[1:]), np.zeros(scales.shape[1:])
    for t in range(steps - 1, -1, -1):
        backward[t], backward_log[t] = following, log_norm
        weighted = (likelihood[t] * following) @ transition
        mass = weighted.sum(axis=-1)
        log_norm = log_norm + np.log(mass) + scales[t]
        following = weighted / mass[..., None]
    product = forward * backward
    mass = product.sum(axis=-1)
    return (np.moveaxis(product / mass[..., None], 0, -2),
            np.moveaxis(forward_log + backward_log + np.log(mass), 0, -1))


def random_chain(rng, count, batch, steps):
    initial = rng.dirichlet(np.ones(count))
    transition = rng.dirichlet(np.ones(count), size=count).T  # columns sum to one
    probabilities = rng.dirichlet(np.ones(count), size=batch + (steps,))
    scales = rng.normal(size=batch + (steps,))
    return initial, transition, probabilities, scales


def rule_message(initial, transition, probabilities, scales):
    return message(MarkovChainNode, "out", {"m_out": Categorical(probabilities, log_scale=scales)},
                   batch_shape=scales.shape, initial=initial, transition=transition)


def assert_messages_equal(result, expected_p, expected_scale):
    """Probabilities to 1e-10; log-scales (of the size of T) to 1e-10 relative."""
    np.testing.assert_allclose(result.probabilities, expected_p, rtol=0, atol=1e-10)
    np.testing.assert_allclose(result.log_scale, expected_scale, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("count, batch, steps", [
    (2, (), 10**5), (2, (3,), 10**4), (3, (2, 2), 1000), (4, (), 3001), (5, (2,), 777), (2, (), 2), (3, (4,), 1),
])
def test_scan_equals_the_sequential_recursion(count, batch, steps, recursion_path):
    rng = np.random.default_rng(steps + count)
    initial, transition, probabilities, scales = random_chain(rng, count, batch, steps)
    result = rule_message(initial, transition, probabilities, scales)
    assert result.batch_shape == batch + (steps,)
    assert_messages_equal(result, *sequential_messages(initial, transition, probabilities, scales))


@pytest.mark.parametrize("steps", [1, 2, 7, out.FLOAT_STEPS])
def test_short_chains_on_floats_equal_the_scan_and_the_recursion(steps, monkeypatch):
    """Up to FLOAT_STEPS steps a single chain of few states runs on floats: same numbers as the scan."""
    rng = np.random.default_rng(steps)
    initial, transition, probabilities, scales = random_chain(rng, 2, (), steps)
    expected = sequential_messages(initial, transition, probabilities, scales)
    scanned = out._forward_backward_by_scan(initial, transition, probabilities, scales)
    assert_messages_equal(scanned, *expected)
    monkeypatch.setattr(out, "_forward_backward_by_scan", None)  # the rule must not reach the scan
    assert_messages_equal(rule_message(initial, transition, probabilities, scales), *expected)


def test_longer_chains_run_the_scan(monkeypatch):
    rng = np.random.default_rng(0)
    initial, transition, probabilities, scales = random_chain(rng, 2, (), out.FLOAT_STEPS + 1)
    expected = sequential_messages(initial, transition, probabilities, scales)
    monkeypatch.setattr(out, "_forward_backward_in_floats", None)  # the rule must not reach the float loop
    assert_messages_equal(rule_message(initial, transition, probabilities, scales), *expected)


def test_a_million_steps_neither_underflow_nor_lose_the_evidence(recursion_path):
    """Independent states (every column of A is π): the evidence factorises into per-step sums.

    The message to z_t is then π with log-scale Σ_{s≠t} (s_s + log Σ_k π_k p_s(k)), a closed form.
    """
    steps = 10**6
    rng = np.random.default_rng(6)
    initial = np.array([0.3, 0.7])
    transition = np.column_stack([initial, initial])
    probabilities = rng.dirichlet([0.3, 0.3], size=steps)
    scales = rng.normal(size=steps)
    result = rule_message(initial, transition, probabilities, scales)
    per_step = scales + np.log(probabilities @ initial)
    np.testing.assert_allclose(result.probabilities, np.broadcast_to(initial, (steps, 2)), rtol=0, atol=1e-10)
    np.testing.assert_allclose(result.log_scale, per_step.sum() - per_step, rtol=1e-10)


def test_an_impossible_observation_gives_zero_evidence_without_warnings(recursion_path):
    """State 0 never leaves itself, then an observation says state 1: p(y) = 0 from there on, log-scale −∞."""
    initial, transition = np.array([1.0, 0.0]), np.array([[1.0, 0.0], [0.0, 1.0]])
    probabilities = np.tile([0.5, 0.5], (out.FLOAT_STEPS + 5, 1))
    probabilities[10] = [0.0, 1.0]
    scales = np.zeros(len(probabilities))
    with np.errstate(all="raise"):
        result = out._forward_backward_by_scan(initial, transition, probabilities, scales)
    assert np.all(np.isneginf(np.delete(result.log_scale, 10)))
    assert result.log_scale[10] == pytest.approx((len(probabilities) - 1) * np.log(0.5))


def test_the_loops_without_numba_equal_the_scan():
    """The Python version of the compiled loops (what runs where numba is absent) gives the scan's numbers."""
    from fgraph.rules.markov_chain import loops

    rng = np.random.default_rng(3)
    initial, transition, probabilities, scales = random_chain(rng, 3, (2,), 60)
    expected = sequential_messages(initial, transition, probabilities, scales)
    monkeypatched = loops._compiled
    try:
        loops._compiled = None
        with jit.compiled_loops(True):
            jit._state["on"] = True  # even without numba: the Python loops
            found = out._forward_backward_by_scan(initial, transition, probabilities, scales)
    finally:
        loops._compiled = monkeypatched
    assert_messages_equal(found, *expected)


@pytest.mark.parametrize("causal", [False, True])
def test_compiled_loops_equal_the_scan_with_starts_per_chain(causal):
    if not jit.AVAILABLE:
        pytest.skip("numba is not installed")
    rng = np.random.default_rng(11)
    _, transition, probabilities, scales = random_chain(rng, 3, (4,), 2000)
    initial = rng.dirichlet(np.ones(3), size=4)  # a start per chain
    probabilities[1, 700] = 0.0  # an impossible step in one chain
    with jit.compiled_loops(False):
        expected = out._forward_backward_by_scan(initial, transition, probabilities, scales, causal)
    with jit.compiled_loops(True):
        found = out._forward_backward_by_scan(initial, transition, probabilities, scales, causal)
    np.testing.assert_allclose(found.probabilities, expected.probabilities, rtol=0, atol=1e-10)
    np.testing.assert_allclose(found.log_scale, expected.log_scale, rtol=1e-10)
