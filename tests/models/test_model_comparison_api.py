"""The model-comparison API (fgraph/comparison/) against independent computations.

The verification model of van Erp et al. (2023, §6.1): three candidates
x ~ N(-3, 1), N(0, 1), N(4, 1) joined by a switch, observations y ~ N(x, σ² = 5).
With one x shared by N observations, p(y | m = k) = N(y | μ_k 1, σ² I + 1 1ᵀ);
with one x per observation, p(y_n | m_n = k) = N(y_n | μ_k, 1 + σ²). These
closed forms are the oracles for averaging and selection, a hand-written CAVI
loop for variational combination, a hand-written streaming loop (and the
Dirichlet-categorical marginal) for online combination with Bayesian model
reduction, and enumeration of all 27 model sequences for a Markov-chain switch.
"""
import itertools

import numpy as np
import pytest
from scipy.integrate import quad
from scipy.special import betaln, digamma, gammaln, logsumexp
from scipy.stats import beta as beta_distribution
from scipy.stats import multivariate_normal, norm

import fgraph as fg
from fgraph.comparison import (
    ModelComparison,
    average,
    combination_settings,
    combine,
    combine_online,
    compare,
    dirichlet_model_reduction,
    select,
    selection_settings,
)
from fgraph.nodes import Categorical, Normal, Transition

NAMES = ("left", "middle", "right")
MEANS = np.array([-3.0, 0.0, 4.0])
NOISE = 5.0  # observation noise variance σ²


def shared_candidates(prefix="x"):
    """One x per candidate, shared by every observation."""
    return {name: (lambda mean=mean, name=name: Normal(f"{prefix}_{name}", mean=mean, var=1.0))
            for name, mean in zip(NAMES, MEANS)}


def plated_candidates(prefix="x"):
    """Candidates that take the plate: one x per observation."""
    return {name: (lambda batch_shape, mean=mean, name=name: Normal(f"{prefix}_{name}", mean=mean, var=1.0,
                                                                   batch_shape=batch_shape))
            for name, mean in zip(NAMES, MEANS)}


def paper_data(n, seed):
    rng = np.random.default_rng(seed)
    labels = rng.choice(3, size=n, p=[0.2, 0.5, 0.3])
    return rng.normal(MEANS[labels], np.sqrt(1.0 + NOISE)), labels


def shared_log_evidence(data):
    """log p(y | m = k) with one x ~ N(μ_k, 1) shared by all observations."""
    n = len(data)
    return np.array([multivariate_normal(np.full(n, m), NOISE * np.eye(n) + np.ones((n, n))).logpdf(data) for m in MEANS])


def per_observation_log_evidence(data):
    """log p(y_n | m_n = k), shape (N, K)."""
    return norm.logpdf(np.asarray(data)[:, None], MEANS[None, :], np.sqrt(1.0 + NOISE))


def log_beta(alpha):
    return gammaln(alpha).sum(-1) - gammaln(alpha.sum(-1))


def vector(mapping):
    return np.stack([np.asarray(mapping[name]) for name in NAMES], axis=-1)


# ------------------------------------------------------------------ averaging
def test_averaging_matches_closed_form():
    data, _ = paper_data(6, seed=0)
    prior = np.array([0.2, 0.5, 0.3])
    with fg.Model() as model:
        x = average("x", shared_candidates(), prior=prior)
        Normal("y", mean=x, var=NOISE, observed=data)
    comparison = ModelComparison(fg.infer(model), "x")

    evidence = shared_log_evidence(data)
    joint = np.log(prior) + evidence
    posterior = np.exp(joint - logsumexp(joint))
    assert comparison.method == "average" and comparison.names == NAMES
    np.testing.assert_allclose(vector(comparison.log_evidence), evidence, rtol=0, atol=1e-10)
    np.testing.assert_allclose(vector(comparison.probabilities), posterior, rtol=1e-10)
    np.testing.assert_allclose(comparison.total_log_evidence, logsumexp(joint), rtol=0, atol=1e-10)
    assert comparison.best == NAMES[int(np.argmax(posterior))]
    np.testing.assert_allclose(comparison.log_bayes_factor("middle", "left"), evidence[1] - evidence[0], atol=1e-10)

    # conditional posteriors p(x | y, m = k) and their q(m)-weighted average
    precision = 1.0 + len(data) / NOISE
    conditional_means = (MEANS + data.sum() / NOISE) / precision
    for k, name in enumerate(NAMES):
        q = comparison.conditional(name)
        np.testing.assert_allclose([q.mean, q.var], [conditional_means[k], 1.0 / precision], rtol=1e-10)
    np.testing.assert_allclose(comparison.posterior.mean, posterior @ conditional_means, rtol=1e-10)
    assert "middle" in comparison.summary() and compare(fg.infer(model), "x").best == comparison.best


def test_averaging_default_prior_is_uniform_and_dict_prior_is_by_name():
    data, _ = paper_data(4, seed=1)
    results = []
    for prior in (None, {"right": 1 / 3, "left": 1 / 3, "middle": 1 / 3}):
        with fg.Model() as model:
            x = average("x", shared_candidates(), prior=prior)
            Normal("y", mean=x, var=NOISE, observed=data)
        results.append(vector(ModelComparison(fg.infer(model), "x").probabilities))
    evidence = shared_log_evidence(data)
    np.testing.assert_allclose(results[0], np.exp(evidence - logsumexp(evidence)), rtol=1e-10)
    np.testing.assert_allclose(results[1], results[0], rtol=1e-12)


def test_averaging_with_one_sub_model_copy_per_observation():
    """Fig. 5a of the paper: the mixture in a plate, one switch outside; evidences multiply over the plate."""
    data, _ = paper_data(8, seed=2)
    with fg.Model() as model:
        x = average("x", plated_candidates(), batch_shape=(len(data),))
        Normal("y", mean=x, var=NOISE, observed=data)
    result = fg.infer(model)
    comparison = ModelComparison(result, "x")
    evidence = per_observation_log_evidence(data).sum(axis=0)
    np.testing.assert_allclose(vector(comparison.log_evidence), evidence, rtol=0, atol=1e-9)
    np.testing.assert_allclose(vector(comparison.probabilities), np.exp(evidence - logsumexp(evidence)), rtol=1e-9)
    np.testing.assert_allclose(result.log_evidence, logsumexp(evidence + np.log(1 / 3)), rtol=0, atol=1e-9)


def test_fixed_numbers_as_candidates():
    data = np.array([0.3, -0.5, 1.2])
    with fg.Model() as model:
        x = average("x", {"zero": lambda: 0.0, "free": lambda: Normal("x_free", mean=0.0, var=4.0)})
        Normal("y", mean=x, var=1.0, observed=data)
    comparison = ModelComparison(fg.infer(model), "x")
    np.testing.assert_allclose(comparison.log_evidence["zero"], norm.logpdf(data, 0.0, 1.0).sum(), atol=1e-10)
    np.testing.assert_allclose(
        comparison.log_evidence["free"], multivariate_normal(np.zeros(3), np.eye(3) + 4.0).logpdf(data), atol=1e-10
    )
    with pytest.raises(fg.ModelError, match="fixed value"):
        comparison.conditional("zero")


def test_averaging_concentrates_on_the_true_model():
    data = np.random.default_rng(3).normal(0.0, np.sqrt(1.0 + NOISE), size=300)
    with fg.Model() as model:
        x = average("x", plated_candidates(), batch_shape=(len(data),))
        Normal("y", mean=x, var=NOISE, observed=data)
    comparison = ModelComparison(fg.infer(model), "x")
    assert comparison.best == "middle" and comparison.probabilities["middle"] > 1 - 1e-6
    # the losers' evidences are thousands of nats down and still exact (read in log space):
    # log p(y | m = k) = Σ_n log N(y_n | μ_k, 1 + σ²), and so are the gaps between them
    evidence = per_observation_log_evidence(data).sum(axis=0)
    assert evidence[1] - evidence[0] > 100
    np.testing.assert_allclose(vector(comparison.log_evidence), evidence, rtol=1e-12)
    np.testing.assert_allclose(comparison.log_bayes_factor("middle", "left"), evidence[1] - evidence[0], rtol=1e-10)
    np.testing.assert_allclose(comparison.log_bayes_factor("right", "middle"), evidence[2] - evidence[1], rtol=1e-10)
    posterior = np.exp(evidence - logsumexp(evidence))
    np.testing.assert_allclose(vector(comparison.probabilities), posterior, rtol=1e-10, atol=1e-300)


# ------------------------------------------------------------------ selection
@pytest.mark.parametrize("prior", [np.array([1 / 3, 1 / 3, 1 / 3]), np.array([0.98, 0.01, 0.01])])
def test_selection_is_the_map_model(prior):
    """q(m) = δ(m − e_k), k = argmax prior_k p(y | m = k): a strong prior can overrule the evidence."""
    data, _ = paper_data(5, seed=4)
    with fg.Model() as model:
        x = select("x", shared_candidates(), prior=prior)
        Normal("y", mean=x, var=NOISE, observed=data)
    settings = selection_settings(model)
    assert settings["constraints"]["form"] == {"x_model": "point_mass"} and settings["iterations"] == 2
    result = fg.infer(model, **settings)
    comparison = ModelComparison(result, "x")

    evidence = shared_log_evidence(data)
    chosen = int(np.argmax(np.log(prior) + evidence))
    assert comparison.method == "select" and comparison.best == NAMES[chosen]
    np.testing.assert_array_equal(vector(comparison.probabilities), np.eye(3)[chosen])
    np.testing.assert_allclose(vector(comparison.log_evidence), evidence, atol=1e-10)
    # q(x) is the selected model's posterior, and F = −log p(y, m = k̂)
    precision = 1.0 + len(data) / NOISE
    np.testing.assert_allclose(comparison.posterior.mean, (MEANS[chosen] + data.sum() / NOISE) / precision, rtol=1e-10)
    np.testing.assert_allclose(result.free_energy[-1], -(np.log(prior[chosen]) + evidence[chosen]), rtol=1e-10)
    assert comparison.total_log_evidence is None


def test_selection_settings_merge_user_constraints_and_init():
    with fg.Model() as model:
        x = select("x", shared_candidates())
        Normal("y", mean=x, var=NOISE, observed=np.zeros(2))
    settings = selection_settings(model, "x", constraints={"factorization": {"y": "bp"}},
                                  init={"x_model": fg.PointMass(np.array([0.0, 0.0, 1.0]), 1)})
    assert settings["constraints"]["factorization"] == {"y": "bp"}
    np.testing.assert_array_equal(settings["init"]["x_model"].value, [0.0, 0.0, 1.0])
    with pytest.raises(fg.ModelError, match="'y' is not a 'select' comparison"):
        selection_settings(model, "y")


# ------------------------------------------------------ variational combination
def test_variational_combination_matches_hand_written_cavi():
    """q(π) Π q(m_n): q(m_n) ∝ exp(E log π) p(y_n | m_n), q(π) = Dir(α + Σ_n q(m_n)), from q(m_n) = α / Σα."""
    data, _ = paper_data(40, seed=5)
    alpha = np.array([1.0, 2.0, 0.5])
    iterations = 25
    with fg.Model() as model:
        x = combine("x", plated_candidates(), alpha=alpha, batch_shape=(len(data),))
        Normal("y", mean=x, var=NOISE, observed=data)
    settings = combination_settings(model)
    assert settings["algorithm"] == "vmp"
    assert {name for name, spec in settings["constraints"]["factorization"].items() if spec == "bp"} == {
        "x_left", "x_middle", "x_right", "y"}
    result = fg.infer(model, **settings, iterations=iterations)
    comparison = ModelComparison(result, "x")

    evidence = per_observation_log_evidence(data)
    assignment = np.tile(alpha / alpha.sum(), (len(data), 1))
    free_energy = []
    for _ in range(iterations):
        concentrations = alpha + assignment.sum(axis=0)
        expected_log_weights = digamma(concentrations) - digamma(concentrations.sum())
        log_assignment = expected_log_weights + evidence
        assignment = np.exp(log_assignment - logsumexp(log_assignment, axis=1, keepdims=True))
        kl_weights = log_beta(alpha) - log_beta(concentrations) + ((concentrations - alpha) * expected_log_weights).sum()
        free_energy.append(np.sum(assignment * (np.log(assignment) - expected_log_weights - evidence)) + kl_weights)

    assert comparison.method == "combine"
    np.testing.assert_allclose(comparison.weights.alpha, concentrations, rtol=1e-10)
    np.testing.assert_allclose(vector(comparison.probabilities), assignment, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(vector(comparison.log_evidence), evidence, atol=1e-10)
    np.testing.assert_allclose(result.free_energy, free_energy, rtol=1e-10)
    assert comparison.best == NAMES[int(np.argmax(concentrations))]
    np.testing.assert_allclose(vector(comparison.expected_weights), concentrations / concentrations.sum(), rtol=1e-12)


def test_variational_combination_recovers_mixing_weights():
    data, _ = paper_data(600, seed=6)
    with fg.Model() as model:
        x = combine("x", plated_candidates(), alpha=1.0, batch_shape=(len(data),))
        Normal("y", mean=x, var=NOISE, observed=data)
    comparison = ModelComparison(fg.infer(model, **combination_settings(model), iterations=200, tol=1e-9), "x")
    np.testing.assert_allclose(vector(comparison.expected_weights), [0.2, 0.5, 0.3], atol=0.1)


def test_combination_settings_keep_user_choices():
    with fg.Model() as model:
        x = combine("x", plated_candidates(), alpha=1.0, batch_shape=3)
        Normal("y", mean=x, var=NOISE, observed=np.zeros(3))
    settings = combination_settings(model, "x", constraints={"factorization": {"y": "mf"}})
    assert settings["constraints"]["factorization"]["y"] == "mf"
    assert "x_weights" not in settings["constraints"]["factorization"]
    np.testing.assert_allclose(settings["init"]["x_model"].probabilities, np.full(3, 1 / 3))


# ------------------------------------------------------------ online combination
def hand_online(data, start, batch_size=1):
    """The streaming loop of §5.3.1 written out: forward message α/Σα, argmax of the belief, α += e_k."""
    evidence = per_observation_log_evidence(data)
    concentrations = start.copy()
    assignments = []
    for first in range(0, len(data), batch_size):
        belief = np.log(concentrations / concentrations.sum()) + evidence[first:first + batch_size]
        chosen = np.argmax(belief, axis=1)
        concentrations = concentrations + np.bincount(chosen, minlength=3)
        assignments.extend(chosen)
    return np.array(assignments), concentrations, evidence


def online_likelihood(x):
    return Normal("y", mean=x, var=NOISE, observed=True)


@pytest.mark.parametrize("batch_size", [1, 7])
def test_online_combination_matches_hand_written_loop_and_model_reduction(batch_size):
    data, _ = paper_data(30, seed=7)
    target = np.array([0.5, 0.5, 0.5])
    start = np.array([50.0, 50.0, 50.0])
    online = combine_online(plated_candidates(), online_likelihood, data, alpha=target, start_alpha=start,
                            batch_size=batch_size)

    assignments, informative, evidence = hand_online(data, start, batch_size)
    counts = np.bincount(assignments, minlength=3)
    np.testing.assert_array_equal(online.assignments, assignments)
    np.testing.assert_allclose(online.log_evidences, evidence, atol=1e-10)
    np.testing.assert_allclose(online.posterior_informative.alpha, informative)
    # Bayesian model reduction: Dir(α̃ − α + α') and the change in log evidence
    reduced = informative - start + target
    change = log_beta(reduced) - log_beta(informative) - log_beta(target) + log_beta(start)
    np.testing.assert_allclose(online.posterior.alpha, reduced)
    np.testing.assert_allclose(online.log_evidence_change, change, rtol=1e-12)
    # ... which is the change of log p(y, m̂) = Σ log p(y_n | m̂_n) + log B(α + counts) − log B(α)
    assigned = evidence[np.arange(len(data)), assignments].sum()
    np.testing.assert_allclose(online.log_evidence, assigned + log_beta(target + counts) - log_beta(target), rtol=1e-12)
    np.testing.assert_allclose(
        online.log_evidence - online.log_evidence_change,
        assigned + log_beta(start + counts) - log_beta(start), rtol=1e-12,
    )
    assert online.processed == len(data) and not online.interrupted


def test_dirichlet_model_reduction_against_quadrature():
    """For K = 2 the evidence ratio p'(y)/p(y) = ∫ q(π) p'(π)/p(π) dπ by quadrature."""
    prior, posterior, reduced = np.array([20.0, 20.0]), np.array([27.0, 24.0]), np.array([0.7, 1.3])
    ratio, _ = quad(
        lambda p: beta_distribution(*posterior).pdf(p) * beta_distribution(*reduced).pdf(p) / beta_distribution(*prior).pdf(p),
        0.0, 1.0, epsabs=1e-13, limit=200,
    )
    distribution, change = dirichlet_model_reduction(posterior, prior, reduced)
    np.testing.assert_allclose(change, np.log(ratio), rtol=1e-8)
    np.testing.assert_allclose(distribution.alpha, posterior - prior + reduced)
    np.testing.assert_allclose(change, betaln(*(posterior - prior + reduced)) - betaln(*posterior) - betaln(*reduced) + betaln(*prior))
    with pytest.raises(fg.ModelError, match="reduced posterior"):
        dirichlet_model_reduction(np.array([1.5, 1.0]), np.array([2.0, 2.0]), np.array([0.2, 0.2]))


def test_online_vague_prior_collapses_and_the_informative_start_does_not():
    """§6.1: with a vague start the first assignments dominate the forward message and starve a model
    (here the most common one); the informative start, reduced afterwards, keeps every model in play."""
    data, _ = paper_data(200, seed=8)
    truth = np.array([0.2, 0.5, 0.3])
    vague = combine_online(plated_candidates(), online_likelihood, data, alpha=0.01, start_alpha=0.01)
    informative = combine_online(plated_candidates(), online_likelihood, data, alpha=0.01)
    assert vague.counts.min() == 0
    assert informative.counts.min() / len(data) > 0.1 and np.allclose(informative.start_prior, 100.0)
    error = [np.abs(vector(online.expected_weights) - truth).sum() for online in (vague, informative)]
    assert error[1] < 0.5 * error[0]


def test_online_combination_stops_on_keyboard_interrupt_and_keeps_what_it_computed(capsys):
    data, _ = paper_data(20, seed=9)
    seen = []

    def stop_after_ten(processed, concentrations):
        seen.append(concentrations)
        if processed == 10:
            raise KeyboardInterrupt

    online = combine_online(plated_candidates(), online_likelihood, data, alpha=1.0, callback=stop_after_ten, progress=True)
    assignments, informative, _ = hand_online(data[:10], np.full(3, 100.0))
    assert online.interrupted and online.processed == 10
    np.testing.assert_array_equal(online.assignments, assignments)
    np.testing.assert_allclose(online.posterior_informative.alpha, informative)
    np.testing.assert_allclose(seen[-1], informative)
    assert "online combination" in capsys.readouterr().err


# ------------------------------------------------------ temporal prior on the switch
def test_markov_chain_switch_against_enumeration():
    """m_1 ~ Cat(p0), m_t ~ Cat(A m_{t−1}); two observations per step; 27 model sequences enumerated."""
    initial = np.array([0.5, 0.3, 0.2])
    transition = np.array([[0.8, 0.1, 0.2], [0.1, 0.7, 0.2], [0.1, 0.2, 0.6]])  # A[i, j] = p(m_t = i | m_{t−1} = j)
    observations = np.array([[-2.0, -3.5], [0.5, 1.0], [3.0, 5.0]])
    with fg.Model() as model:
        switch = Categorical("m1", p=initial)
        for t in range(3):
            if t > 0:
                switch = Transition(f"m{t + 1}", switch, transition)
            x = average(f"x{t + 1}", shared_candidates(f"x{t + 1}"), switch=switch)
            Normal(f"y{t + 1}", mean=x, var=NOISE, observed=observations[t])
    result = fg.infer(model)

    evidence = np.array([shared_log_evidence(observations[t]) for t in range(3)])
    log_joint = {
        sequence: np.log(initial[sequence[0]]) + np.log(transition[sequence[1], sequence[0]])
        + np.log(transition[sequence[2], sequence[1]]) + sum(evidence[t, sequence[t]] for t in range(3))
        for sequence in itertools.product(range(3), repeat=3)
    }
    total = logsumexp(list(log_joint.values()))
    np.testing.assert_allclose(result.log_evidence, total, rtol=0, atol=1e-10)
    for t in range(3):
        marginal = np.zeros(3)
        for sequence, value in log_joint.items():
            marginal[sequence[t]] += np.exp(value - total)
        comparison = ModelComparison(result, f"x{t + 1}")
        np.testing.assert_allclose(vector(comparison.probabilities), marginal, rtol=1e-10)
        np.testing.assert_allclose(vector(comparison.log_evidence), evidence[t], atol=1e-10)


# ------------------------------------------------------------------ bad input
@pytest.mark.parametrize(
    "prior, message",
    [
        ([0.5, 0.5], r"prior must have one entry per candidate \(3: left, middle, right\)"),
        ([-0.1, 0.6, 0.5], "prior must hold non-negative probabilities, got -0.1 for candidate 'left'"),
        ([0.2, 0.2, 0.2], "prior must sum to one"),
        ({"left": 0.2, "centre": 0.5, "right": 0.3}, r"prior names unknown candidate\(s\) \['centre'\]"),
        ({"left": 0.5, "right": 0.5}, r"prior has no entry for candidate\(s\) \['middle'\]"),
        ([0.2, np.nan, 0.8], "prior contains NaN"),
    ],
)
def test_bad_prior_names_the_argument(prior, message):
    with fg.Model():
        with pytest.raises(fg.ModelError, match=message):
            average("x", shared_candidates(), prior=prior)


@pytest.mark.parametrize(
    "alpha, message",
    [
        (0.0, "alpha must hold positive concentrations"),
        ([1.0, 1.0], "alpha must have one entry per candidate"),
        ({"left": 1.0, "mid": 1.0, "right": 1.0}, r"alpha names unknown candidate\(s\) \['mid'\]"),
    ],
)
def test_bad_concentrations_name_the_argument(alpha, message):
    with fg.Model():
        with pytest.raises(fg.ModelError, match=message):
            combine("x", plated_candidates(), alpha=alpha, batch_shape=(3,))
    with pytest.raises(fg.ModelError, match=message):
        combine_online(plated_candidates(), online_likelihood, np.zeros(3), alpha=alpha)


def test_bad_candidates_and_switches_name_the_argument():
    with fg.Model():
        with pytest.raises(fg.ModelError, match="candidates must be a dict"):
            average("x", [lambda: 0.0, lambda: 1.0])
        with pytest.raises(fg.ModelError, match="at least two"):
            average("x", {"only": lambda: 0.0})
        with pytest.raises(fg.ModelError, match=r"candidates\['b'\] must be a function"):
            average("x", {"a": lambda: 0.0, "b": 1.0})
        with pytest.raises(fg.ModelError, match=r"candidates\['b'\] returned None"):
            average("x", {"a": lambda: 0.0, "b": lambda: None})
        with pytest.raises(fg.ModelError, match="batch_shape is required"):
            combine("x", plated_candidates())
    with fg.Model():
        two = Categorical("two", p=np.array([0.5, 0.5]))
        with pytest.raises(fg.ModelError, match="switch 'two' has event shape"):
            average("x", shared_candidates(), switch=two)
        with pytest.raises(fg.ModelError, match="either prior or switch"):
            average("x", shared_candidates(), prior=[0.2, 0.5, 0.3], switch=two)
    with pytest.raises(fg.ModelError, match=r"candidates \['left', 'middle', 'right'\] take no batch_shape"):
        combine_online(shared_candidates(), online_likelihood, np.zeros(6), batch_size=3)
    with pytest.raises(fg.ModelError, match="likelihood must return the observed variable"):
        combine_online(plated_candidates(), lambda x: Normal("y", mean=x, var=1.0), np.zeros(3))


def test_unknown_candidate_name_in_queries():
    with fg.Model() as model:
        x = average("x", shared_candidates())
        Normal("y", mean=x, var=NOISE, observed=np.zeros(2))
    comparison = ModelComparison(fg.infer(model), "x")
    with pytest.raises(fg.ModelError, match=r"candidate 'centre' is not a candidate of 'x'"):
        comparison.conditional("centre")
    with pytest.raises(fg.ModelError, match=r"second 'centre' is not a candidate"):
        comparison.log_bayes_factor("left", "centre")
    with pytest.raises(fg.ModelError, match="'y' is not the output of a mixture"):
        ModelComparison(fg.infer(model), "y")
