"""Streaming a chain model chunk by chunk equals one run over the whole sequence."""
import numpy as np
import pytest

import fgraph as fg
from fgraph.errors import ModelError
from fgraph.models.streaming import OnlineFilter
from fgraph.nodes import MvNormal
from fgraph.nodes.mv_gauss_markov_chain import MvGaussMarkovChain
from tests.models.test_mv_gauss_markov_chain_node import F, M0, P0, Q, R

START = {"initial_mean": M0, "initial_cov": P0}


def builder(causal):
    def build(y, start):
        with fg.Model() as model:
            x = MvGaussMarkovChain("x", F, Q, length=y.shape[-2], batch_shape=y.shape[:-2], causal=causal,
                                   **start.get("x", START))
            MvNormal("y", mean=x, cov=R, observed=y)
        return model
    return build


@pytest.mark.parametrize("sizes", [(50, 50, 100), (1, 7, 192), (200,)])
def test_streaming_equals_one_causal_run_over_the_concatenation(sizes):
    y = np.cumsum(np.random.default_rng(sum(sizes)).normal(size=(sum(sizes), 2)), axis=0) * 0.1
    whole = fg.infer(builder(True)(y, {}))
    stream = OnlineFilter(builder(True))
    means, covs, start = [], [], 0
    for size in sizes:
        result = stream.update(y[start:start + size])
        means.append(result.marginal("x").mean), covs.append(result.marginal("x").cov)
        start += size
    np.testing.assert_allclose(np.concatenate(means), whole.marginal("x").mean, atol=1e-10)
    np.testing.assert_allclose(np.concatenate(covs), whole.marginal("x").cov, atol=1e-10)
    assert stream.log_evidence == pytest.approx(whole.log_evidence, rel=1e-11)
    assert stream.chunks == len(sizes)


def test_a_batch_of_streams_carries_one_state_per_sequence():
    y = np.random.default_rng(3).normal(size=(3, 60, 2))
    whole = fg.infer(builder(True)(y, {}))
    stream = OnlineFilter(builder(True))
    first, second = stream.update(y[:, :25]), stream.update(y[:, 25:])
    assert stream.state["x"]["initial_mean"].shape == (3, 2)
    np.testing.assert_allclose(second.marginal("x").mean, whole.marginal("x").mean[:, 25:], atol=1e-10)
    np.testing.assert_allclose(first.marginal("x").mean, whole.marginal("x").mean[:, :25], atol=1e-12)
    assert stream.log_evidence == pytest.approx(whole.log_evidence, rel=1e-11)


def test_smoothing_chains_smooth_each_chunk_given_the_past():
    """The last step of every chunk is the filtering marginal; earlier steps use the chunk's later data."""
    y = np.random.default_rng(4).normal(size=(40, 2))
    filtered = fg.infer(builder(True)(y, {})).marginal("x").mean
    stream = OnlineFilter(builder(False))
    first = stream.update(y[:20]).marginal("x").mean
    second = stream.update(y[20:]).marginal("x").mean
    np.testing.assert_allclose(first[-1], filtered[19], atol=1e-12)
    np.testing.assert_allclose(second[-1], filtered[-1], atol=1e-12)
    assert not np.allclose(first[:-1], filtered[:19])
    assert stream.log_evidence == pytest.approx(fg.infer(builder(False)(y, {})).log_evidence, rel=1e-11)


def test_bad_builders_are_named_errors():
    with pytest.raises(fg.ModelError, match="build must be a function"):
        OnlineFilter("model")
    with pytest.raises(fg.ModelError, match="not an fg.Model"):
        OnlineFilter(lambda chunk, start: None).update(np.zeros((3, 2)))

    def no_chain(y, start):
        with fg.Model() as model:
            x = MvNormal("x", mean=np.zeros(2), cov=np.eye(2), batch_shape=(len(y),))
            MvNormal("y", mean=x, cov=R, observed=y)
        return model
    with pytest.raises(fg.ModelError, match="no chain that can carry its state"):
        OnlineFilter(no_chain).update(np.zeros((3, 2)))


def test_a_carried_parameter_streams_a_conjugate_classifier_exactly():
    """``carry=("beta",)``: each chunk's posterior of β is the next chunk's prior; under a Gaussian likelihood
    approximation (conjugate) the last marginal and the summed evidence equal one run on all the data."""
    from fgraph.nodes.logistic import Logistic
    from fgraph.nodes.mvnormal import MvNormal

    rng = np.random.default_rng(4)
    X = rng.standard_normal((60, 2))
    y = (rng.random(60) < 1 / (1 + np.exp(-(X @ [1.0, -1.5] + 0.2)))).astype(float)

    def build(chunk, start):
        features, labels = chunk
        prior = start.get("beta")
        with fg.Model() as model:
            beta = MvNormal("beta", *((prior.mean, prior.cov) if prior is not None else (np.zeros(3), 4 * np.eye(3))))
            Logistic("y", beta, features, observed=labels, operator="variational", alpha_epsilon=0.2)
        return model

    stream = OnlineFilter(build, carry=("beta",), algorithm="vmp", iterations=2)
    for start, stop in ((0, 1), (1, 17), (17, 60)):
        stream.update((X[start:stop], y[start:stop]))
    whole = fg.infer(build((X, y), {}), algorithm="vmp", iterations=2)
    np.testing.assert_allclose(stream.state["beta"].mean, whole.marginal("beta").mean, rtol=1e-10)
    np.testing.assert_allclose(stream.state["beta"].cov, whole.marginal("beta").cov, rtol=1e-10)
    assert stream.log_evidence == pytest.approx(-whole.free_energy[-1], rel=1e-11)
    with pytest.raises(ModelError, match="the variable 'theta' to carry is not in the model"):
        OnlineFilter(build, carry=("theta",), algorithm="vmp", iterations=2).update((X[:5], y[:5]))
    with pytest.raises(ModelError, match="carry must be a tuple of variable names"):
        OnlineFilter(build, carry="beta")
