"""The Gauss–Markov compound node equals the unrolled chain of Linear nodes and a hand-written Kalman smoother."""
import numpy as np
import pytest

import fgraph as fg
from fgraph.nodes import Normal
from fgraph.nodes.gauss_markov_chain import GaussMarkovChain
from tests.graphs import unrolled_gauss_markov_chain

GAIN, PROCESS_VAR, INITIAL_MEAN, INITIAL_VAR, NOISE_VAR = 0.9, 0.5, 0.2, 1.5, 0.8


def compound(y):
    with fg.Model() as model:
        x = GaussMarkovChain("x", GAIN, PROCESS_VAR, INITIAL_MEAN, INITIAL_VAR, len(y))
        Normal("y", mean=x, var=NOISE_VAR, observed=y)
    return model


def unrolled(y):
    return unrolled_gauss_markov_chain(y, GAIN, PROCESS_VAR, INITIAL_MEAN, INITIAL_VAR, NOISE_VAR)


def kalman_log_evidence(y):
    """Prediction-error decomposition of log p(y), written out."""
    mean, var, total = INITIAL_MEAN, INITIAL_VAR, 0.0
    for value in y:
        innovation_var = var + NOISE_VAR
        total += -0.5 * (np.log(2 * np.pi * innovation_var) + (value - mean) ** 2 / innovation_var)
        gain = var / innovation_var
        mean, var = mean + gain * (value - mean), (1 - gain) * var
        mean, var = GAIN * mean, GAIN**2 * var + PROCESS_VAR
    return total


def test_compound_chain_equals_the_unrolled_chain():
    y = np.random.default_rng(5).normal(size=25)
    a = fg.infer(compound(y), free_energy=True)
    b = fg.infer(unrolled(y))
    assert a.log_evidence == pytest.approx(b.log_evidence, rel=1e-12)
    assert a.free_energy[-1] == pytest.approx(-a.log_evidence, rel=1e-12)
    np.testing.assert_allclose(a.marginal("x").mean, [b.marginal(f"x{t}").mean for t in range(len(y))], atol=1e-12)
    np.testing.assert_allclose(a.marginal("x").var, [b.marginal(f"x{t}").var for t in range(len(y))], rtol=1e-12)
    np.testing.assert_allclose(a.evidence_per_variable()["x"], a.log_evidence, rtol=1e-12)


def test_long_sequences_against_the_prediction_error_decomposition():
    y = np.cumsum(np.random.default_rng(6).normal(size=20000)) * 0.1
    result = fg.infer(compound(y))
    assert result.log_evidence == pytest.approx(kalman_log_evidence(y), rel=1e-11)


@pytest.mark.parametrize("keyword, value, match", [
    ("gain", 0.0, "zero gain"), ("var", -1.0, "var must be strictly positive"),
    ("initial_var", 0.0, "initial_var must be strictly positive"), ("gain", np.nan, "gain must be a finite number"),
])
def test_bad_parameters_are_reported_with_the_node(keyword, value, match):
    parameters = dict(gain=GAIN, var=PROCESS_VAR, initial_mean=INITIAL_MEAN, initial_var=INITIAL_VAR)
    parameters[keyword] = value
    with fg.Model():
        with pytest.raises(fg.ModelError, match=f"node 'x'.*{match}"):
            GaussMarkovChain("x", length=5, **parameters)


def test_a_batch_of_chains_equals_separate_runs():
    """Four independent sequences in one node (batch (4, T), numpy recursions): evidences add, marginals match."""
    sequences = np.random.default_rng(7).normal(size=(4, 12))
    with fg.Model() as model:
        x = GaussMarkovChain("x", GAIN, PROCESS_VAR, INITIAL_MEAN, INITIAL_VAR, 12, batch_shape=(4,))
        Normal("y", mean=x, var=NOISE_VAR, observed=sequences)
    together = fg.infer(model, free_energy=True)
    separate = [fg.infer(compound(y)) for y in sequences]
    assert together.log_evidence == pytest.approx(sum(r.log_evidence for r in separate), rel=1e-12)
    assert together.free_energy[-1] == pytest.approx(-together.log_evidence, rel=1e-12)
    for chain, result in enumerate(separate):
        np.testing.assert_allclose(together.marginal("x").mean[chain], result.marginal("x").mean, atol=1e-12)
        np.testing.assert_allclose(together.marginal("x").var[chain], result.marginal("x").var, rtol=1e-12)


def kalman_filter(y, initial_mean=INITIAL_MEAN, initial_var=INITIAL_VAR):
    """Filtered means and variances, written out."""
    mean, var, means, variances = initial_mean, initial_var, [], []
    for value in y:
        gain = var / (var + NOISE_VAR)
        mean, var = mean + gain * (value - mean), (1 - gain) * var
        means.append(mean), variances.append(var)
        mean, var = GAIN * mean, GAIN**2 * var + PROCESS_VAR
    return np.array(means), np.array(variances)


@pytest.mark.parametrize("steps", [40, 2000])  # the float path and the scan path
def test_a_causal_chain_filters(steps):
    y = np.cumsum(np.random.default_rng(steps).normal(size=steps)) * 0.1
    with fg.Model() as model:
        x = GaussMarkovChain("x", GAIN, PROCESS_VAR, INITIAL_MEAN, INITIAL_VAR, steps, causal=True)
        Normal("y", mean=x, var=NOISE_VAR, observed=y)
    result = fg.infer(model, free_energy=True)
    means, variances = kalman_filter(y)
    np.testing.assert_allclose(result.marginal("x").mean, means, atol=1e-11)
    np.testing.assert_allclose(result.marginal("x").var, variances, rtol=1e-11)
    assert result.log_evidence == pytest.approx(kalman_log_evidence(y), rel=1e-11)
    assert result.free_energy[-1] == pytest.approx(-kalman_log_evidence(y), rel=1e-11)


def test_chains_may_each_start_from_their_own_state_and_stream():
    from fgraph.models.streaming import OnlineFilter

    sequences = np.random.default_rng(8).normal(size=(3, 30))

    def build(y, start):
        with fg.Model() as model:
            x = GaussMarkovChain("x", GAIN, PROCESS_VAR, length=y.shape[-1], batch_shape=y.shape[:-1], causal=True,
                                 **start.get("x", dict(initial_mean=INITIAL_MEAN, initial_var=INITIAL_VAR)))
            Normal("y", mean=x, var=NOISE_VAR, observed=y)
        return model

    whole = fg.infer(build(sequences, {}))
    stream = OnlineFilter(build)
    first, second = stream.update(sequences[:, :12]), stream.update(sequences[:, 12:])
    assert stream.state["x"]["initial_mean"].shape == (3,)
    np.testing.assert_allclose(np.concatenate([first.marginal("x").mean, second.marginal("x").mean], axis=-1),
                               whole.marginal("x").mean, atol=1e-12)
    assert stream.log_evidence == pytest.approx(whole.log_evidence, rel=1e-12)
    assert whole.log_evidence == pytest.approx(sum(kalman_log_evidence(y) for y in sequences), rel=1e-12)
    single = OnlineFilter(build)  # one sequence: the float path, scalar starts
    for chunk in np.split(sequences[0], [5, 17]):
        single.update(chunk)
    assert single.log_evidence == pytest.approx(kalman_log_evidence(sequences[0]), rel=1e-12)
