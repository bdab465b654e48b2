"""An observed mixture output: each sub-model's likelihood of the data point, by sum-product.

y = Mixture(z, [x_1, ..., x_K]) with y observed: the switch receives μ_in_k(y), the
likelihood of y under sub-model k (its scale included), and each sub-model
receives the point mass at y, scaled by the switch's weight of k. Checked
against closed forms for independent observations and against enumeration
of every switch path for a Markov chain of switches (a two-state "silence /
activity" model with Gaussian emissions, the shape of voice activity
detection).
"""
import itertools

import numpy as np
import pytest
from scipy.special import logsumexp
from scipy.stats import norm

import fgraph as fg
from fgraph.nodes import Categorical, Mixture, Normal, Transition

Y = np.array([0.3, -1.2, 2.5, 0.1, 4.0])
PRIOR = np.array([0.4, 0.6])


def independent_model(y):
    """z_n ~ Cat(π); sub-model 1: x_n ~ N(0, 1); sub-model 2: x_n ~ N(h_n, 1), h_n ~ N(2, 2)."""
    n = len(y)
    with fg.Model() as model:
        z = Categorical("z", p=PRIOR, batch_shape=(n,))
        quiet = Normal("quiet", mean=0.0, var=1.0, batch_shape=(n,))
        level = Normal("h", mean=2.0, var=2.0, batch_shape=(n,))
        loud = Normal("loud", mean=level, var=1.0)
        Mixture("y", z, [quiet, loud], observed=y)
    return model


def test_independent_observations_match_the_closed_form():
    result = fg.infer(independent_model(Y), free_energy=True)
    log_joint = np.stack([np.log(0.4) + norm.logpdf(Y, 0.0, 1.0), np.log(0.6) + norm.logpdf(Y, 2.0, np.sqrt(3.0))], -1)
    log_evidence = logsumexp(log_joint, axis=-1)
    np.testing.assert_allclose(result.marginal("z").probabilities, np.exp(log_joint - log_evidence[:, None]), atol=1e-12)
    assert result.log_evidence == pytest.approx(log_evidence.sum(), rel=1e-12)
    assert result.free_energy[-1] == pytest.approx(-log_evidence.sum(), rel=1e-12)
    # inside sub-model 2 the belief of h is its posterior given m = 2 and y: N(2, 2) prior, N(y | h, 1)
    precision = 1 / 2.0 + 1.0
    np.testing.assert_allclose(result.marginal("h").mean, (2.0 / 2.0 + Y) / precision, rtol=1e-12)
    np.testing.assert_allclose(result.marginal("h").var, np.full(len(Y), 1 / precision), rtol=1e-12)
    # its log-scale is log p(y_n, m = 2); sub-model 1's is log p(y_n, m = 1)
    per_variable = result.evidence_per_variable()
    np.testing.assert_allclose(per_variable["h"], log_joint[:, 1], rtol=1e-12)
    np.testing.assert_allclose(per_variable["quiet"], log_joint[:, 0], rtol=1e-12)
    np.testing.assert_allclose(per_variable["z"], log_evidence, rtol=1e-12)


def test_model_selection_with_an_observed_output_keeps_the_argmax_branch():
    result = fg.infer(independent_model(Y), constraints={"form": {"z": "point_mass"}})
    log_joint = np.stack([np.log(0.4) + norm.logpdf(Y, 0.0, 1.0), np.log(0.6) + norm.logpdf(Y, 2.0, np.sqrt(3.0))], -1)
    np.testing.assert_array_equal(result.marginal("z").value.argmax(-1), log_joint.argmax(-1))


T = 8
TRANSITION = np.array([[0.9, 0.2], [0.1, 0.8]])  # columns: from silence, from activity
INITIAL = np.array([0.7, 0.3])
SILENCE, ACTIVITY = (0.0, 0.5), (0.0, 9.0)  # (mean, variance) of the emission of each state


def markov_switch_model(y):
    with fg.Model() as model:
        switches = [Categorical("z0", INITIAL)]
        for t in range(1, T):
            switches.append(Transition(f"z{t}", switches[-1], TRANSITION))
        for t in range(T):
            inputs = [Normal(f"silence{t}", mean=SILENCE[0], var=SILENCE[1]),
                      Normal(f"activity{t}", mean=ACTIVITY[0], var=ACTIVITY[1])]
            Mixture(f"y{t}", switches[t], inputs, observed=y[t])
    return model


def enumerate_paths(y):
    """Log evidence and p(z_t = k | y), shape (T, 2), summing over all 2^T switch paths."""
    paths = np.array(list(itertools.product(range(2), repeat=T)))
    emission = np.stack([norm.logpdf(y, SILENCE[0], np.sqrt(SILENCE[1])),
                         norm.logpdf(y, ACTIVITY[0], np.sqrt(ACTIVITY[1]))], -1)  # (T, 2)
    log_joint = np.log(INITIAL[paths[:, 0]]) + emission[0, paths[:, 0]]
    for t in range(1, T):
        log_joint = log_joint + np.log(TRANSITION[paths[:, t], paths[:, t - 1]]) + emission[t, paths[:, t]]
    log_evidence = logsumexp(log_joint)
    weights = np.exp(log_joint - log_evidence)
    marginals = np.array([[weights[paths[:, t] == k].sum() for k in range(2)] for t in range(T)])
    return log_evidence, marginals


@pytest.mark.parametrize("seed", [0, 1])
def test_markov_chain_of_switches_matches_enumeration(seed):
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(T) < 0.5, rng.normal(0.0, 3.0, T), rng.normal(0.0, 0.7, T))
    result = fg.infer(markov_switch_model(y), free_energy=True)
    assert result.plan.exact
    log_evidence, marginals = enumerate_paths(y)
    assert result.log_evidence == pytest.approx(log_evidence, rel=1e-12)
    assert result.free_energy[-1] == pytest.approx(-log_evidence, rel=1e-12)
    for t in range(T):
        np.testing.assert_allclose(result.marginal(f"z{t}").probabilities, marginals[t], atol=1e-12)
    for name, value in result.evidence_per_variable().items():
        if name.startswith("z"):  # outside the branches every belief carries the whole evidence
            assert float(value) == pytest.approx(log_evidence, rel=1e-12), name


def test_variational_switch_with_an_observed_output_has_the_exact_free_energy():
    """Under VMP the switch is its own cluster; with fixed sub-models q(z) is exact and so is F = −log p(y)."""
    bp = fg.infer(independent_model(Y))
    # the sub-models stay sum-product so that their evidences are exact (docs/model-comparison.md)
    sub_models = {"factorization": {"quiet": "bp", "h": "bp", "loud": "bp"}}
    vmp = fg.infer(independent_model(Y), algorithm="vmp", iterations=5, constraints=sub_models)
    np.testing.assert_allclose(vmp.marginal("z").probabilities, bp.marginal("z").probabilities, atol=1e-12)
    assert vmp.free_energy[-1] == pytest.approx(-bp.log_evidence, rel=1e-12)


def test_markov_switch_under_vmp_has_the_exact_free_energy():
    y = np.random.default_rng(7).normal(0.0, 2.0, T)
    # the chain of switches and the sub-models stay sum-product; the switches are variational at the mixtures
    exact = {f"silence{t}": "bp" for t in range(T)} | {f"activity{t}": "bp" for t in range(T)}
    exact |= {f"z{t}": "bp" for t in range(T)}
    start = {f"z{t}": fg.families.Categorical(np.full(2, 0.5)) for t in range(T)}  # the first sweep reads q(z)
    result = fg.infer(markov_switch_model(y), algorithm="vmp", iterations=6, constraints={"factorization": exact},
                      init=start)
    log_evidence, marginals = enumerate_paths(y)
    for t in range(T):
        np.testing.assert_allclose(result.marginal(f"z{t}").probabilities, marginals[t], atol=1e-10)
    assert result.free_energy[-1] == pytest.approx(-log_evidence, rel=1e-10)
    assert np.all(np.diff(result.free_energy) <= 1e-9 * abs(log_evidence)), "the free energy increased"
