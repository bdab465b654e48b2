"""Discrete hidden Markov model by sum-product against brute-force enumeration of all state paths.

s_0 ~ Cat(π0), s_t ~ Cat(A s_{t-1}) (Transition, fixed A), y_t ~ Cat(B s_t) (Transition, fixed emission B,
observed). The chain is a tree, so one sweep of BP gives exact marginals and the exact log evidence
log p(y_0..y_7) = log Σ_paths π0[s_0] Π_t A[s_t, s_{t-1}] Π_t B[y_t, s_t], enumerated over all 3^8 paths.
"""
import itertools

import numpy as np
import pytest
from scipy.special import logsumexp

import fgraph as fg
from fgraph.nodes import Categorical, Transition

T, K, NUM_SYMBOLS = 8, 3, 4


def random_parameters(seed):
    rng = np.random.default_rng(seed)
    transition = rng.dirichlet(np.ones(K), K).T  # columns sum to one: A[i, j] = P(s_t = i | s_{t-1} = j)
    emission = rng.dirichlet(np.ones(NUM_SYMBOLS), K).T  # NUM_SYMBOLS x K
    initial = rng.dirichlet(np.ones(K))
    labels = rng.integers(0, NUM_SYMBOLS, T)
    return initial, transition, emission, labels


def left_to_right_parameters():
    """Structural zeros: a state never goes back, and each state emits only two symbols."""
    transition = np.array([[0.6, 0.0, 0.0], [0.3, 0.7, 0.0], [0.1, 0.3, 1.0]])
    emission = np.array([[0.8, 0.0, 0.0], [0.2, 0.5, 0.0], [0.0, 0.5, 0.4], [0.0, 0.0, 0.6]])
    initial = np.array([0.7, 0.3, 0.0])
    labels = np.array([0, 1, 1, 2, 1, 2, 3, 3])
    return initial, transition, emission, labels


def brute_force(initial, transition, emission, labels):
    """Log evidence and the posterior marginals p(s_t = k | y), shape (T, K), by enumerating K^T paths."""
    paths = np.array(list(itertools.product(range(K), repeat=T)))  # (K^T, T)
    with np.errstate(divide="ignore"):
        log_joint = np.log(initial[paths[:, 0]])
        for t in range(1, T):
            log_joint = log_joint + np.log(transition[paths[:, t], paths[:, t - 1]])
        for t in range(T):
            log_joint = log_joint + np.log(emission[labels[t], paths[:, t]])
    log_evidence = logsumexp(log_joint)
    weights = np.exp(log_joint - log_evidence)
    marginals = np.array([[weights[paths[:, t] == k].sum() for k in range(K)] for t in range(T)])
    return log_evidence, marginals


def build(initial, transition, emission, observations):
    with fg.Model() as model:
        states = [Categorical("s0", initial)]
        for t in range(1, T):
            states.append(Transition(f"s{t}", states[-1], transition))
        for t in range(T):
            Transition(f"y{t}", states[t], emission, observed=observations[t])
    return model


@pytest.mark.parametrize("parameters", [random_parameters(0), random_parameters(1), left_to_right_parameters()],
                         ids=["random-0", "random-1", "left-to-right"])
@pytest.mark.parametrize("encoding", ["labels", "one-hot"])
def test_hmm_matches_enumeration(parameters, encoding):
    initial, transition, emission, labels = parameters
    observations = labels if encoding == "labels" else np.eye(NUM_SYMBOLS)[labels]
    result = fg.infer(build(initial, transition, emission, observations), algorithm="bp")
    assert result.plan.exact
    log_evidence, marginals = brute_force(initial, transition, emission, labels)
    np.testing.assert_allclose(result.log_evidence, log_evidence, rtol=0, atol=1e-10)
    for t in range(T):
        np.testing.assert_allclose(result.marginal(f"s{t}").probabilities, marginals[t], rtol=0, atol=1e-10)
    per_variable = result.evidence_per_variable()
    assert set(per_variable) == {f"s{t}" for t in range(T)}
    for name, value in per_variable.items():
        np.testing.assert_allclose(value, log_evidence, rtol=0, atol=1e-10, err_msg=name)


def test_predictive_of_an_emission():
    """The predictive of y_t is B q(s_t): the emission matrix applied to the posterior marginal."""
    initial, transition, emission, labels = random_parameters(2)
    result = fg.infer(build(initial, transition, emission, labels), algorithm="bp")
    posterior = result.marginal("s5").probabilities
    np.testing.assert_allclose(result.predictive("y5").probabilities, emission @ posterior, rtol=1e-12)
