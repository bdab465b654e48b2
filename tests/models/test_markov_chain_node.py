"""The Markov-chain compound node equals the unrolled chain of Transition nodes, and scales to long sequences.

Emissions are sub-models behind an observed mixture output (a two-state
"silence / activity" model) or a fixed emission matrix over labels.
"""
import numpy as np
import pytest
from scipy.special import logsumexp
from scipy.stats import norm

import fgraph as fg
from fgraph.nodes import Categorical, Mixture, Normal, Transition
from fgraph.nodes.markov_chain import MarkovChain

INITIAL = np.array([0.7, 0.3])
TRANSITION = np.array([[0.95, 0.1], [0.05, 0.9]])
EMISSIONS = ((0.0, 0.5), (0.0, 9.0))  # (mean, variance) of the observation in each state


def compound(y):
    steps = len(y)
    with fg.Model() as model:
        z = MarkovChain("z", INITIAL, TRANSITION, steps)
        inputs = [Normal(f"state{k}", mean=mean, var=var, batch_shape=(steps,)) for k, (mean, var) in enumerate(EMISSIONS)]
        Mixture("y", z, inputs, observed=y)
    return model


def unrolled(y):
    with fg.Model() as model:
        z = Categorical("z0", INITIAL)
        for t, value in enumerate(y):
            if t > 0:
                z = Transition(f"z{t}", z, TRANSITION)
            inputs = [Normal(f"state{k}_{t}", mean=mean, var=var) for k, (mean, var) in enumerate(EMISSIONS)]
            Mixture(f"y{t}", z, inputs, observed=value)
    return model


def forward_backward_in_log_space(y):
    """A hand-written forward–backward recursion in log space (the reference for long sequences).

    log α_t(i) = log p(y_t | i) + log Σ_j A[i, j] α_{t−1}(j), log β_t(j) = log Σ_i A[i, j] p(y_{t+1} | i) β_{t+1}(i);
    no rescaling, so nothing underflows however long the sequence. Returns log p(y) and p(z_t | y), shape (T, K).
    """
    emission = np.stack([norm.logpdf(y, mean, np.sqrt(var)) for mean, var in EMISSIONS], -1)
    log_transition = np.log(TRANSITION)
    log_alpha, log_beta = np.empty_like(emission), np.zeros_like(emission)
    log_alpha[0] = np.log(INITIAL) + emission[0]
    for t in range(1, len(y)):
        log_alpha[t] = logsumexp(log_transition + log_alpha[t - 1][None, :], axis=1) + emission[t]
    for t in range(len(y) - 2, -1, -1):
        log_beta[t] = logsumexp(log_transition + (emission[t + 1] + log_beta[t + 1])[:, None], axis=0)
    # p(z_t | y) ∝ α_t β_t, normalised per step: log p(y) is tens of thousands of nats, and
    # subtracting it would leave the rounding of the sums above in every marginal
    log_joint = log_alpha + log_beta
    return logsumexp(log_alpha[-1]), np.exp(log_joint - logsumexp(log_joint, axis=1, keepdims=True))


def test_compound_chain_equals_the_unrolled_chain():
    y = np.random.default_rng(3).normal(0.0, 2.0, size=12)
    a = fg.infer(compound(y), free_energy=True)
    b = fg.infer(unrolled(y), free_energy=True)
    assert a.log_evidence == pytest.approx(b.log_evidence, rel=1e-12)
    assert a.free_energy[-1] == pytest.approx(-a.log_evidence, rel=1e-12)
    assert b.free_energy[-1] == pytest.approx(-b.log_evidence, rel=1e-12)
    for t in range(len(y)):
        np.testing.assert_allclose(a.marginal("z").probabilities[t], b.marginal(f"z{t}").probabilities, atol=1e-12)
    # every element of the chain's belief holds the evidence of the whole model
    np.testing.assert_allclose(a.evidence_per_variable()["z"], a.log_evidence, rtol=1e-12)


def test_long_sequences_keep_their_evidence():
    """T = 20000: normalised recursions, no underflow; evidence and marginals of a hand-written log-space pass."""
    rng = np.random.default_rng(4)
    y = np.where(rng.random(20000) < 0.3, rng.normal(0.0, 3.0, 20000), rng.normal(0.0, 0.7, 20000))
    result = fg.infer(compound(y))
    log_evidence, marginals = forward_backward_in_log_space(y)
    assert result.log_evidence == pytest.approx(log_evidence, rel=1e-12)
    assert 0.05 < marginals[:, 1].mean() < 0.95  # both states are visited
    np.testing.assert_allclose(result.marginal("z").probabilities, marginals, rtol=0, atol=1e-10)


def test_labels_through_a_fixed_emission_matrix():
    """A discrete HMM: z (compound) emits labels through one plated Transition node, against the unrolled HMM."""
    emission = np.array([[0.6, 0.1], [0.3, 0.2], [0.1, 0.7]])
    labels = np.array([0, 2, 2, 1, 0, 2, 2, 2, 0])
    with fg.Model() as model:
        z = MarkovChain("z", INITIAL, TRANSITION, len(labels))
        Transition("y", z, emission, observed=labels)
    with fg.Model() as reference:
        state = Categorical("z0", INITIAL)
        for t, label in enumerate(labels):
            if t > 0:
                state = Transition(f"z{t}", state, TRANSITION)
            Transition(f"y{t}", state, emission, observed=label)
    a, b = fg.infer(model), fg.infer(reference)
    assert a.log_evidence == pytest.approx(b.log_evidence, rel=1e-12)
    for t in range(len(labels)):
        np.testing.assert_allclose(a.marginal("z").probabilities[t], b.marginal(f"z{t}").probabilities, atol=1e-12)


@pytest.mark.parametrize("initial, transition, match", [
    ([0.5, 0.6], TRANSITION, "initial must be a probability vector"),
    (INITIAL, np.array([[0.9, 0.2], [0.2, 0.8]]), "column-stochastic"),
    (INITIAL, np.eye(3), "transition must be 2x2"),
])
def test_bad_parameters_are_reported_with_the_node(initial, transition, match):
    with fg.Model():
        with pytest.raises((ValueError, fg.ModelError), match=match):
            MarkovChain("z", initial, transition, 5)


def test_under_vmp_the_chain_is_one_structured_cluster():
    """algorithm="vmp": the chain's forward–backward over variational switch messages; here q(z) is exact."""
    y = np.random.default_rng(8).normal(0.0, 2.0, size=15)
    bp = fg.infer(compound(y))
    sub_models = {"factorization": {"state0": "bp", "state1": "bp"}}  # exact sub-model evidences
    vmp = fg.infer(compound(y), algorithm="vmp", iterations=5, constraints=sub_models)
    np.testing.assert_allclose(vmp.marginal("z").probabilities, bp.marginal("z").probabilities, atol=1e-12)
    assert vmp.free_energy[-1] == pytest.approx(-bp.log_evidence, rel=1e-12)


def test_a_batch_of_chains_equals_separate_runs():
    """Three independent sequences in one node (batch (3, T)): evidences add, marginals match per sequence."""
    rng = np.random.default_rng(9)
    sequences = rng.normal(0.0, 2.0, size=(3, 10))
    with fg.Model() as model:
        z = MarkovChain("z", INITIAL, TRANSITION, 10, batch_shape=(3,))
        inputs = [Normal(f"state{k}", mean=mean, var=var, batch_shape=(3, 10)) for k, (mean, var) in enumerate(EMISSIONS)]
        Mixture("y", z, inputs, observed=sequences)
    together = fg.infer(model, free_energy=True)
    separate = [fg.infer(compound(y)) for y in sequences]
    assert together.log_evidence == pytest.approx(sum(r.log_evidence for r in separate), rel=1e-12)
    assert together.free_energy[-1] == pytest.approx(-together.log_evidence, rel=1e-12)
    for chain, result in enumerate(separate):
        np.testing.assert_allclose(together.marginal("z").probabilities[chain], result.marginal("z").probabilities,
                                   atol=1e-12)


def filtering_in_log_space(y, initial=INITIAL):
    """p(z_t | y_1..y_t) and log p(y) by a hand-written forward recursion in log space."""
    emission = np.stack([norm.logpdf(y, mean, np.sqrt(var)) for mean, var in EMISSIONS], -1)
    log_alpha = np.log(initial) + emission[0]
    filtered = [log_alpha - logsumexp(log_alpha)]
    for t in range(1, len(y)):
        log_alpha = emission[t] + logsumexp(np.log(TRANSITION) + log_alpha[None, :], axis=1)
        filtered.append(log_alpha - logsumexp(log_alpha))
    return logsumexp(log_alpha), np.exp(np.array(filtered))


def causal_compound(y, initial=INITIAL):
    with fg.Model() as model:
        z = MarkovChain("z", initial, TRANSITION, y.shape[-1], batch_shape=y.shape[:-1], causal=True)
        inputs = [Normal(f"state{k}", mean=mean, var=var, batch_shape=y.shape) for k, (mean, var) in enumerate(EMISSIONS)]
        Mixture("y", z, inputs, observed=y)
    return model


@pytest.mark.parametrize("steps", [30, 600])  # the float path and the scan path
def test_a_causal_chain_filters(steps):
    y = np.random.default_rng(steps).normal(0, 2, steps)
    result = fg.infer(causal_compound(y))
    log_evidence, filtered = filtering_in_log_space(y)
    np.testing.assert_allclose(result.marginal("z").probabilities, filtered, atol=1e-12)
    assert result.log_evidence == pytest.approx(log_evidence, rel=1e-12)


def test_a_stream_of_chunks_equals_one_causal_run_with_a_start_per_chain():
    from fgraph.models.streaming import OnlineFilter

    y = np.random.default_rng(3).normal(0, 2, (2, 300))

    def build(chunk, start):
        return causal_compound(chunk, **start.get("z", {}))

    whole = fg.infer(build(y, {}))
    stream = OnlineFilter(build)
    parts = [stream.update(chunk).marginal("z").probabilities for chunk in np.split(y, [100, 220], axis=-1)]
    assert stream.state["z"]["initial"].shape == (2, 2)
    np.testing.assert_allclose(np.concatenate(parts, axis=-2), whole.marginal("z").probabilities, atol=1e-12)
    assert stream.log_evidence == pytest.approx(whole.log_evidence, rel=1e-12)
    assert whole.log_evidence == pytest.approx(sum(filtering_in_log_space(row)[0] for row in y), rel=1e-12)
