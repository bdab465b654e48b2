"""Bayesian model averaging, selection and combination with the mixture node (van Erp et al. 2023, §4–5).

K sub-models share a likelihood and differ in their prior on the shared
variable; the mixture node ``x = Mixture("x", z, [x_1, ..., x_K])`` joins them
and the switch ``z`` selects one. Every claim is checked against the
sub-models run on their own (with fgraph BP) and against closed forms:

* Gaussian: y_i ~ N(x, V) (i = 1..N) with x ~ N(m_k, s_k) under model k, so
  p(y | m_k) = N(y | m_k 1, s_k 1 1ᵀ + V I) (a multivariate normal logpdf) and
  p(x | y, m_k) = N(x | (m_k/s_k + Σy/V)/P_k, 1/P_k), P_k = 1/s_k + N/V;
* Beta–Bernoulli: y_i ~ Ber(p), p ~ Beta(a_k, b_k):
  p(y | m_k) = B(a_k + n_1, b_k + n_0) / B(a_k, b_k), p(p | y, m_k) = Beta(a_k + n_1, b_k + n_0).

Sub-model 2 of the Gaussian case is itself hierarchical (x_2 ~ N(h, 0.2),
h ~ N(2, 0.3); marginally x_2 ~ N(2, 0.5)) so that evidence has to travel
through a deeper branch.
"""
import numpy as np
import pytest
from scipy.special import betaln, digamma, gammaln, logsumexp
from scipy.stats import beta as beta_distribution
from scipy.stats import multivariate_normal, norm

import fgraph as fg
from fgraph.nodes import Add, Bernoulli, Beta, Categorical, Dirichlet, Gamma, Mixture, MvNormal, Normal

TOL = dict(rtol=0, atol=1e-8)

# ------------------------------------------------------------------ Gaussian sub-models
Y = np.array([0.3, 1.2, -0.4, 0.9, 0.5])
V = 0.7
PRIOR_MEANS = np.array([0.0, 2.0, -1.0])
PRIOR_VARS = np.array([1.0, 0.5, 3.0])  # sub-model 2: 0.3 (h) + 0.2 (x_2 | h)
PI = np.array([0.2, 0.5, 0.3])


def gaussian_prior(k: int):
    """The end variable ``x<k+1>`` of sub-model k (0-based) in the current model."""
    if k == 1:
        h = Normal("h", mean=2.0, var=0.3)
        return Normal("x2", mean=h, var=0.2)
    return Normal(f"x{k + 1}", mean=PRIOR_MEANS[k], var=PRIOR_VARS[k])


SUB_MODEL_NODES = ["x1", "h", "x2", "x3"]

# per-observation switches (plated mixtures): y_n ~ N(x_n, 0.8), x_n ~ N(c_k, 0.5) or x_n = c_k under model k
COMBINATION_DATA = np.array([-2.1, -1.4, -2.9, -1.8, 0.2, 1.7, 1.1, 2.3, -2.4, 1.4])
CENTRES = np.array([-2.0, 0.0, 1.5])
COMBINATION_V = 0.8
PRIOR_SPREAD = 0.5


def closed_form_log_evidence(y=Y, extra_var: float = 0.0) -> np.ndarray:
    """``log p(y | m_k)`` for each k; ``extra_var`` is the variance of a shared latent between x and y."""
    n = y.size
    return np.array([
        multivariate_normal(np.full(n, m), (s + extra_var) * np.ones((n, n)) + V * np.eye(n)).logpdf(y)
        for m, s in zip(PRIOR_MEANS, PRIOR_VARS)
    ])


def closed_form_posteriors(y=Y):
    """Means and variances of ``p(x | y, m_k)``, shape (K,)."""
    precision = 1 / PRIOR_VARS + y.size / V
    return (PRIOR_MEANS / PRIOR_VARS + y.sum() / V) / precision, 1 / precision


def run_sub_model_alone(k: int):
    """Sub-model k with the shared likelihood, by fgraph BP: (log evidence, posterior of x_k, result)."""
    with fg.Model() as model:
        x = gaussian_prior(k)
        Normal("y", mean=x, var=V, observed=Y)
    result = fg.infer(model, algorithm="bp")
    return result.log_evidence, result.marginal(x.name), result


def averaging_model(pi=PI, y=Y):
    with fg.Model() as model:
        z = Categorical("z", p=pi)
        x = Mixture("x", z, [gaussian_prior(k) for k in range(3)])
        Normal("y", mean=x, var=V, observed=y)
    return model


def mixture_of_posteriors(weights, means, variances):
    """Mean, variance and log-density of ``Σ_k w_k N(x | means_k, variances_k)``."""
    mean = np.sum(weights * means)
    var = np.sum(weights * (variances + means**2)) - mean**2

    def logpdf(x):
        return logsumexp(np.log(weights) + norm.logpdf(x, means, np.sqrt(variances)))

    return mean, var, logpdf


POINTS = [-1.0, 0.0, 0.37, 0.8, 2.0]


# ------------------------------------------------------------------ a. model averaging (Gaussian)
def test_sub_model_evidences_by_fgraph_equal_the_closed_form():
    closed = closed_form_log_evidence()
    means, variances = closed_form_posteriors()
    for k in range(3):
        log_evidence, posterior, _ = run_sub_model_alone(k)
        np.testing.assert_allclose(log_evidence, closed[k], **TOL)
        np.testing.assert_allclose([posterior.mean, posterior.var], [means[k], variances[k]], rtol=1e-10)


@pytest.mark.parametrize("pi", [PI, np.array([0.05, 0.05, 0.9]), np.array([1 / 3, 1 / 3, 1 / 3])],
                         ids=["pi-a", "pi-b", "uniform"])
def test_gaussian_model_averaging(pi):
    closed = closed_form_log_evidence()
    by_fgraph = np.array([run_sub_model_alone(k)[0] for k in range(3)])
    expected = logsumexp(np.log(pi) + closed)
    result = fg.infer(averaging_model(pi), algorithm="bp")
    assert result.plan.exact
    # the message to the switch is the scaled categorical of the evidences p(y | m_k) (Table 1)
    switch = result.messages("x", "switch")[0]
    np.testing.assert_allclose(switch.log_scale, logsumexp(closed), **TOL)
    np.testing.assert_allclose(switch.log_scale + np.log(switch.probabilities), by_fgraph, **TOL)
    evidence = result.evidence_per_variable()
    # the belief at z is μ_prior(z) μ_switch(z): its log-scale is log Σ_k π_k p(y | m_k)
    np.testing.assert_allclose(evidence["z"], expected, **TOL)
    np.testing.assert_allclose(evidence["z"], logsumexp(np.log(pi) + by_fgraph), **TOL)
    np.testing.assert_allclose(result.log_evidence, expected, **TOL)
    # posterior model probabilities π_k p(y | m_k) / Σ
    posterior_models = np.exp(np.log(pi) + closed - expected)
    np.testing.assert_allclose(result.marginal("z").probabilities, posterior_models, **TOL)
    # the shared variable's posterior is the mixture of the separate posteriors
    means, variances = closed_form_posteriors()
    mean, var, logpdf = mixture_of_posteriors(posterior_models, means, variances)
    q = result.marginal("x")
    np.testing.assert_allclose([q.mean, q.var], [mean, var], **TOL)
    for point in POINTS:
        np.testing.assert_allclose(q.logpdf(point), logpdf(point), **TOL)
    # each input's belief is the separate posterior of its sub-model, its log-scale log π_k p(y | m_k)
    for k in range(3):
        separate = run_sub_model_alone(k)[1]
        belief = result.marginal(f"x{k + 1}")
        np.testing.assert_allclose([belief.mean, belief.var], [separate.mean, separate.var], **TOL)
        np.testing.assert_allclose(evidence[f"x{k + 1}"], np.log(pi[k]) + closed[k], **TOL)


def test_latent_variable_deep_inside_a_branch():
    """The hierarchical sub-model's inner variable h: its belief is p(h | y, m_2), its scale log π_2 p(y | m_2)."""
    closed = closed_form_log_evidence()
    result = fg.infer(averaging_model(), algorithm="bp")
    _, _, alone = run_sub_model_alone(1)
    np.testing.assert_allclose(result.evidence_per_variable()["h"], np.log(PI[1]) + closed[1], **TOL)
    np.testing.assert_allclose([result.marginal("h").mean, result.marginal("h").var],
                               [alone.marginal("h").mean, alone.marginal("h").var], **TOL)


def test_private_observations_count_in_their_branch_only():
    """Sub-model k also explains its own datum w_k ~ N(x_k, 1): p(y, m = k) = π_k p(y, w_k | m_k) (eq. 15)."""
    private = [0.1, 2.5]
    pi = np.array([0.5, 0.5])
    with fg.Model() as model:
        z = Categorical("z", p=pi)
        inputs = []
        for k in range(2):
            x_k = Normal(f"x{k + 1}", mean=PRIOR_MEANS[k], var=PRIOR_VARS[k])
            Normal(f"w{k + 1}", mean=x_k, var=1.0, observed=private[k])
            inputs.append(x_k)
        x = Mixture("x", z, inputs)
        Normal("y", mean=x, var=V, observed=Y)
    result = fg.infer(model, algorithm="bp", free_energy=True)
    n = Y.size + 1
    closed = np.array([
        multivariate_normal(np.full(n, PRIOR_MEANS[k]), PRIOR_VARS[k] * np.ones((n, n)) + np.diag([V] * Y.size + [1.0]))
        .logpdf(np.append(Y, private[k]))
        for k in range(2)
    ])
    expected = logsumexp(np.log(pi) + closed)
    np.testing.assert_allclose(result.log_evidence, expected, **TOL)
    np.testing.assert_allclose(result.free_energy[-1], -expected, **TOL)
    np.testing.assert_allclose(result.marginal("z").probabilities, np.exp(np.log(pi) + closed - expected), **TOL)


def test_plated_model_averaging_per_observation():
    """A switch per observation (fixed π) under BP: evidences add over the plate, each z_n is its own posterior."""
    n = COMBINATION_DATA.size
    with fg.Model() as model:
        z = Categorical("z", p=PI, batch_shape=(n,))
        x = Mixture("x", z, [Normal(f"x{k + 1}", mean=c, var=PRIOR_SPREAD, batch_shape=(n,))
                             for k, c in enumerate(CENTRES)])
        Normal("y", mean=x, var=COMBINATION_V, observed=COMBINATION_DATA)
    result = fg.infer(model, algorithm="bp", free_energy=True)
    log_joint = np.log(PI) + norm.logpdf(COMBINATION_DATA[:, None], CENTRES, np.sqrt(COMBINATION_V + PRIOR_SPREAD))
    per_observation = logsumexp(log_joint, axis=1)
    np.testing.assert_allclose(result.log_evidence, per_observation.sum(), **TOL)
    np.testing.assert_allclose(result.free_energy[-1], -per_observation.sum(), **TOL)
    np.testing.assert_allclose(result.evidence_per_variable()["z"], per_observation, **TOL)
    np.testing.assert_allclose(result.marginal("z").probabilities, np.exp(log_joint - per_observation[:, None]), **TOL)
    for k in range(3):
        np.testing.assert_allclose(result.evidence_per_variable()[f"x{k + 1}"], log_joint[:, k], **TOL)


BIVARIATE_Y = np.array([[0.3, 1.0], [1.2, 0.2], [-0.4, 0.8]])
BIVARIATE_NOISE = np.array([[0.7, 0.1], [0.1, 0.5]])
BIVARIATE_MEANS = [np.zeros(2), np.array([1.0, 1.0])]
BIVARIATE_COVS = [np.eye(2), np.array([[0.5, 0.2], [0.2, 0.4]])]


def test_bivariate_model_averaging():
    """2-d sub-models x_k ~ N(m_k, C_k), y_i ~ N(x, S): vec(y) ~ N(1 ⊗ m_k, 1 1ᵀ ⊗ C_k + I ⊗ S)."""
    pi = np.array([0.4, 0.6])
    with fg.Model() as model:
        z = Categorical("z", p=pi)
        x = Mixture("x", z, [MvNormal(f"x{k + 1}", mean=m, cov=c)
                             for k, (m, c) in enumerate(zip(BIVARIATE_MEANS, BIVARIATE_COVS))])
        MvNormal("y", mean=x, cov=BIVARIATE_NOISE, observed=BIVARIATE_Y)
    result = fg.infer(model, algorithm="bp")
    n = len(BIVARIATE_Y)
    closed = np.array([
        multivariate_normal(np.tile(m, n), np.kron(np.ones((n, n)), c) + np.kron(np.eye(n), BIVARIATE_NOISE))
        .logpdf(BIVARIATE_Y.ravel())
        for m, c in zip(BIVARIATE_MEANS, BIVARIATE_COVS)
    ])
    expected = logsumexp(np.log(pi) + closed)
    np.testing.assert_allclose(result.log_evidence, expected, **TOL)
    weights = np.exp(np.log(pi) + closed - expected)
    np.testing.assert_allclose(result.marginal("z").probabilities, weights, **TOL)
    noise_precision = np.linalg.inv(BIVARIATE_NOISE)
    post_means, post_covs = [], []
    for m, c in zip(BIVARIATE_MEANS, BIVARIATE_COVS):
        precision = np.linalg.inv(c) + n * noise_precision
        post_covs.append(np.linalg.inv(precision))
        post_means.append(post_covs[-1] @ (np.linalg.solve(c, m) + noise_precision @ BIVARIATE_Y.sum(axis=0)))
    mean = sum(w * m for w, m in zip(weights, post_means))
    cov = sum(w * (c + np.outer(m, m)) for w, m, c in zip(weights, post_means, post_covs)) - np.outer(mean, mean)
    q = result.marginal("x")
    np.testing.assert_allclose(q.mean, mean, **TOL)
    np.testing.assert_allclose(q.cov, cov, **TOL)
    point = np.array([0.5, 0.6])
    density = sum(w * multivariate_normal(m, c).pdf(point) for w, m, c in zip(weights, post_means, post_covs))
    np.testing.assert_allclose(q.logpdf(point), np.log(density), **TOL)
    for k in range(2):
        np.testing.assert_allclose(result.marginal(f"x{k + 1}").mean, post_means[k], **TOL)
        np.testing.assert_allclose(result.evidence_per_variable()[f"x{k + 1}"], np.log(pi[k]) + closed[k], **TOL)


def test_bivariate_constant_input():
    with fg.Model():
        z = Categorical("z", p=np.array([0.4, 0.6]))
        x = Mixture("x", z, [MvNormal("x1", mean=BIVARIATE_MEANS[0], cov=BIVARIATE_COVS[0]), np.array([1.0, 1.0])])
    assert x.batch_shape == () and x.event_shape == (2,)


# ------------------------------------------------------------------ b. Beta–Bernoulli
FLIPS = np.array([1, 0, 1, 1, 1, 0, 1, 1, 0, 1])
BETA_PRIORS = [(1.0, 1.0), (5.0, 2.0), (2.0, 8.0)]


def beta_closed_form(data=FLIPS):
    ones, zeros = data.sum(), data.size - data.sum()
    log_evidence = np.array([betaln(a + ones, b + zeros) - betaln(a, b) for a, b in BETA_PRIORS])
    posteriors = [(a + ones, b + zeros) for a, b in BETA_PRIORS]
    return log_evidence, posteriors


def beta_sub_model_alone(k: int):
    a, b = BETA_PRIORS[k]
    with fg.Model() as model:
        p = Beta("p", a=a, b=b)
        Bernoulli("y", p=p, observed=FLIPS)
    result = fg.infer(model, algorithm="bp")
    return result.log_evidence, result.marginal("p")


@pytest.mark.parametrize("pi", [np.array([0.3, 0.3, 0.4]), np.array([0.6, 0.1, 0.3])], ids=["pi-a", "pi-b"])
def test_beta_bernoulli_model_averaging(pi):
    """The plate of Bernoulli likelihoods sends a Beta-shaped message to p; Beta × mixture products carry the scales."""
    with fg.Model() as model:
        z = Categorical("z", p=pi)
        p = Mixture("p", z, [Beta(f"p{k + 1}", a=a, b=b) for k, (a, b) in enumerate(BETA_PRIORS)])
        Bernoulli("y", p=p, observed=FLIPS)
    result = fg.infer(model, algorithm="bp", free_energy=True)
    closed, posteriors = beta_closed_form()
    by_fgraph = [beta_sub_model_alone(k) for k in range(3)]
    np.testing.assert_allclose([e for e, _ in by_fgraph], closed, **TOL)
    expected = logsumexp(np.log(pi) + closed)
    np.testing.assert_allclose(result.log_evidence, expected, **TOL)
    np.testing.assert_allclose(result.free_energy[-1], -expected, **TOL)
    np.testing.assert_allclose(result.evidence_per_variable()["z"], expected, **TOL)
    np.testing.assert_allclose(result.evidence_per_variable()["p"], expected, **TOL)
    weights = np.exp(np.log(pi) + closed - expected)
    np.testing.assert_allclose(result.marginal("z").probabilities, weights, **TOL)
    # the posterior of p is the mixture of the Beta posteriors
    q = result.marginal("p")
    means = np.array([a / (a + b) for a, b in posteriors])
    variances = np.array([a * b / ((a + b) ** 2 * (a + b + 1)) for a, b in posteriors])
    mean = np.sum(weights * means)
    np.testing.assert_allclose(q.mean, mean, **TOL)
    np.testing.assert_allclose(q.var, np.sum(weights * (variances + means**2)) - mean**2, **TOL)
    for point in (0.1, 0.5, 0.72, 0.95):
        density = sum(w * beta_distribution(a, b).pdf(point) for w, (a, b) in zip(weights, posteriors))
        np.testing.assert_allclose(q.logpdf(point), np.log(density), **TOL)
    for k, (a, b) in enumerate(posteriors):
        belief = result.marginal(f"p{k + 1}")
        np.testing.assert_allclose([belief.a, belief.b], [a, b], rtol=1e-10)
        np.testing.assert_allclose([belief.a, belief.b], [by_fgraph[k][1].a, by_fgraph[k][1].b], rtol=1e-10)
        np.testing.assert_allclose(result.evidence_per_variable()[f"p{k + 1}"], np.log(pi[k]) + closed[k], **TOL)


# ------------------------------------------------------------------ c. nested mixture
P_OUTER = np.array([0.4, 0.6])
P_INNER = np.array([0.7, 0.3])


def test_nested_mixture_against_enumeration():
    """x = Mixture(z1, [x1, w]), w = Mixture(z2, [x2, x3]); enumerate (z1, z2)."""
    with fg.Model() as model:
        z1 = Categorical("z1", p=P_OUTER)
        z2 = Categorical("z2", p=P_INNER)
        x1, x2, x3 = (gaussian_prior(k) for k in range(3))
        w = Mixture("w", z2, [x2, x3])
        x = Mixture("x", z1, [x1, w])
        Normal("y", mean=x, var=V, observed=Y)
    result = fg.infer(model, algorithm="bp", free_energy=True)
    closed = closed_form_log_evidence()
    # joint log p(y, z1, z2): (z1 = 1) selects sub-model 1 whatever z2; (z1 = 2, z2 = j) selects sub-model 1 + j
    selected = np.array([[0, 0], [1, 2]])
    joint = np.log(P_OUTER)[:, None] + np.log(P_INNER)[None, :] + closed[selected]
    log_evidence = logsumexp(joint)
    np.testing.assert_allclose(result.log_evidence, log_evidence, **TOL)
    np.testing.assert_allclose(result.free_energy[-1], -log_evidence, **TOL)
    for name in ("z1", "x"):
        np.testing.assert_allclose(result.evidence_per_variable()[name], log_evidence, **TOL)
    posterior = np.exp(joint - log_evidence)  # p(z1, z2 | y)
    np.testing.assert_allclose(result.marginal("z1").probabilities, posterior.sum(axis=1), **TOL)
    # z2 lives inside the second branch of the outer mixture: its belief is conditional on z1 = 2
    conditional = posterior[1] / posterior[1].sum()
    np.testing.assert_allclose(result.marginal("z2").probabilities, conditional, **TOL)
    np.testing.assert_allclose(result.evidence_per_variable()["z2"], logsumexp(joint[1]), **TOL)
    np.testing.assert_allclose(result.evidence_per_variable()["w"], logsumexp(joint[1]), **TOL)
    # unconditionally p(z2 | y) = p(z1 = 1 | y) π_inner + p(z1 = 2 | y) p(z2 | y, z1 = 2)
    q_z1 = result.marginal("z1").probabilities
    np.testing.assert_allclose(q_z1[0] * P_INNER + q_z1[1] * result.marginal("z2").probabilities,
                               posterior.sum(axis=0), **TOL)
    # x: the enumeration-weighted mixture of the three sub-model posteriors
    means, variances = closed_form_posteriors()
    weights = np.array([posterior[0].sum(), posterior[1, 0], posterior[1, 1]])
    mean, var, logpdf = mixture_of_posteriors(weights, means, variances)
    q = result.marginal("x")
    np.testing.assert_allclose([q.mean, q.var], [mean, var], **TOL)
    for point in POINTS:
        np.testing.assert_allclose(q.logpdf(point), logpdf(point), **TOL)
    # the inner mixture's belief: sub-models 2 and 3 weighted by p(z2 | y, z1 = 2)
    mean, var, _ = mixture_of_posteriors(conditional, means[1:], variances[1:])
    np.testing.assert_allclose([result.marginal("w").mean, result.marginal("w").var], [mean, var], **TOL)


# ------------------------------------------------------------------ d. model selection
@pytest.mark.parametrize("pi", [PI, np.array([0.1, 0.8, 0.1]), np.array([0.05, 0.05, 0.9])],
                         ids=["pi-a", "pi-b", "pi-c"])
def test_model_selection_picks_the_map_model(pi):
    closed = closed_form_log_evidence()
    best = int(np.argmax(np.log(pi) + closed))
    result = fg.infer(averaging_model(pi), algorithm="bp", constraints={"form": {"z": "point_mass"}},
                      init={"z": fg.Categorical(np.ones(3) / 3)}, iterations=3, free_energy=True)
    np.testing.assert_array_equal(result.marginal("z").value, np.eye(3)[best])
    # the out belief is the selected sub-model's posterior
    means, variances = closed_form_posteriors()
    q = result.marginal("x")
    np.testing.assert_allclose([q.mean, q.var], [means[best], variances[best]], **TOL)
    for point in POINTS:
        np.testing.assert_allclose(q.logpdf(point), norm.logpdf(point, means[best], np.sqrt(variances[best])), **TOL)
    # F = E_q[ln q(m)/p(m)] + F_k̂ = −ln π_k̂ − ln p(y | m_k̂)
    np.testing.assert_allclose(result.free_energy[-1], -np.log(pi[best]) - closed[best], **TOL)


def test_model_selection_cases_differ():
    """The parameters above select different models (π matters, not only the evidence)."""
    closed = closed_form_log_evidence()
    chosen = {int(np.argmax(np.log(pi) + closed)) for pi in (PI, np.array([0.1, 0.8, 0.1]), np.array([0.05, 0.05, 0.9]))}
    assert chosen == {0, 1, 2}


@pytest.mark.parametrize("pi", [PI, np.array([0.05, 0.05, 0.9])], ids=["pi-a", "pi-c"])
def test_model_selection_between_constants_and_a_sub_model(pi):
    """Inputs 0, 1 (constants: x is known under those models) and a N(0, 1) sub-model."""
    with fg.Model() as model:
        z = Categorical("z", p=pi)
        x = Mixture("x", z, [0.0, 1.0, Normal("x3", mean=0.0, var=1.0)])
        Normal("y", mean=x, var=V, observed=Y)
    result = fg.infer(model, algorithm="bp", constraints={"form": {"z": "point_mass"}},
                      init={"z": fg.Categorical(np.ones(3) / 3)}, iterations=2)
    n = Y.size
    closed = np.array([norm.logpdf(Y, 0.0, np.sqrt(V)).sum(), norm.logpdf(Y, 1.0, np.sqrt(V)).sum(),
                       multivariate_normal(np.zeros(n), np.ones((n, n)) + V * np.eye(n)).logpdf(Y)])
    best = int(np.argmax(np.log(pi) + closed))
    np.testing.assert_array_equal(result.marginal("z").value, np.eye(3)[best])
    np.testing.assert_allclose(result.free_energy[-1], -np.log(pi[best]) - closed[best], **TOL)
    if best < 2:  # a constant model: x is that constant
        np.testing.assert_allclose([result.marginal("x").mean, result.marginal("x").var], [float(best), 0.0], **TOL)
    else:
        precision = 1.0 + n / V
        np.testing.assert_allclose([result.marginal("x").mean, result.marginal("x").var],
                                   [Y.sum() / V / precision, 1 / precision], **TOL)


def known_model(k: int):
    with fg.Model() as model:
        z = Categorical("z", p=PI, observed=k)
        x = Mixture("x", z, [gaussian_prior(j) for j in range(3)])
        Normal("y", mean=x, var=V, observed=Y)
    return model


@pytest.mark.parametrize("k", [0, 1, 2])
def test_observed_switch_selects_its_model(k):
    """z observed at k: the out belief is sub-model k's posterior and F = −ln π_k − ln p(y | m_k)."""
    result = fg.infer(known_model(k), algorithm="bp", iterations=2, free_energy=True)
    means, variances = closed_form_posteriors()
    np.testing.assert_allclose([result.marginal("x").mean, result.marginal("x").var], [means[k], variances[k]], **TOL)
    np.testing.assert_allclose(result.free_energy[-1], -np.log(PI[k]) - closed_form_log_evidence()[k], **TOL)


def test_observed_switch_log_evidence():
    result = fg.infer(known_model(1), algorithm="bp")
    np.testing.assert_allclose(result.log_evidence, np.log(PI[1]) + closed_form_log_evidence()[1], **TOL)


# ------------------------------------------------------------------ e. where the evidence is read
U = 0.4  # variance of the shared latent offset b


def test_evidence_outside_and_inside_the_branches():
    """t = x + b, b ~ N(0, U), y_i ~ N(t, V): z, x, b and t hold log p(y); each branch variable log π_k p(y | m_k).

    The mixture message at x passes through the shared addition factor component by
    component (Theorem 4.1 of van Erp et al. 2023), so t and b get mixture beliefs.
    """
    with fg.Model() as model:
        z = Categorical("z", p=PI)
        x = Mixture("x", z, [gaussian_prior(k) for k in range(3)])
        b = Normal("b", mean=0.0, var=U)
        t = Add("t", x, b)
        Normal("y", mean=t, var=V, observed=Y)
    result = fg.infer(model, algorithm="bp", free_energy=True)
    closed = closed_form_log_evidence(extra_var=U)
    expected = logsumexp(np.log(PI) + closed)
    np.testing.assert_allclose(result.log_evidence, expected, **TOL)
    np.testing.assert_allclose(result.free_energy[-1], -expected, **TOL)
    evidence = result.evidence_per_variable()
    for name in ("z", "x", "b", "t"):
        np.testing.assert_allclose(evidence[name], expected, **TOL, err_msg=name)
    for name, k in (("x1", 0), ("h", 1), ("x2", 1), ("x3", 2)):
        np.testing.assert_allclose(evidence[name], np.log(PI[k]) + closed[k], **TOL, err_msg=name)
    # the shared latent t: the mixture of its per-model posteriors (prior N(m_k, s_k + U), N observations)
    n = Y.size
    weights = np.exp(np.log(PI) + closed - expected)
    np.testing.assert_allclose(result.marginal("z").probabilities, weights, **TOL)
    t_precision = 1 / (PRIOR_VARS + U) + n / V
    t_means = (PRIOR_MEANS / (PRIOR_VARS + U) + Y.sum() / V) / t_precision
    mean, var, logpdf = mixture_of_posteriors(weights, t_means, 1 / t_precision)
    q = result.marginal("t")
    np.testing.assert_allclose([q.mean, q.var], [mean, var], **TOL)
    for point in POINTS:
        np.testing.assert_allclose(q.logpdf(point), logpdf(point), **TOL)


def test_mixture_message_through_a_normal_factor():
    with fg.Model() as model:
        z = Categorical("z", p=PI)
        x = Mixture("x", z, [gaussian_prior(k) for k in range(3)])
        t = Normal("t", mean=x, var=U)
        Normal("y", mean=t, var=V, observed=Y)
    result = fg.infer(model, algorithm="bp")
    np.testing.assert_allclose(result.log_evidence, logsumexp(np.log(PI) + closed_form_log_evidence(extra_var=U)), **TOL)


# ------------------------------------------------------------------ f. free energy
def test_bp_free_energy_is_minus_log_evidence():
    result = fg.infer(averaging_model(), algorithm="bp", free_energy=True)
    np.testing.assert_allclose(result.free_energy[-1], -logsumexp(np.log(PI) + closed_form_log_evidence()), **TOL)


EXACT_SUB_MODELS = {"factorization": {name: "bp" for name in SUB_MODEL_NODES + ["y"]}}


def _record(name, attribute, trace):
    def callback(iteration, result):
        trace.append(getattr(result.marginal(name), attribute).copy())

    return callback


def test_variational_switch_with_fixed_prior():
    """F = Σ_k q_k ln(q_k/π_k) + Σ_k q_k F_k, F_k = −ln p(y | m_k); at the optimum q = p(m | y) and F = −ln p(y)."""
    closed = closed_form_log_evidence()
    trace = []
    result = fg.infer(averaging_model(), algorithm="vmp", constraints=EXACT_SUB_MODELS,
                      init={"z": fg.Categorical(np.ones(3) / 3)}, iterations=4,
                      callback=_record("z", "probabilities", trace))
    assert len(trace) == len(result.free_energy) == 4
    for q, free_energy in zip(trace, result.free_energy):
        decomposition = np.sum(q * np.log(q / PI)) + np.sum(q * -closed)
        np.testing.assert_allclose(free_energy, decomposition, **TOL)
    np.testing.assert_allclose(trace[-1], np.exp(np.log(PI) + closed - logsumexp(np.log(PI) + closed)), **TOL)
    np.testing.assert_allclose(result.free_energy[-1], -logsumexp(np.log(PI) + closed), **TOL)
    assert np.all(np.diff(result.free_energy) <= 1e-10)
    # the out belief under a variational switch: Σ_k q_k p(x | y, m_k)
    means, variances = closed_form_posteriors()
    mean, var, _ = mixture_of_posteriors(trace[-1], means, variances)
    np.testing.assert_allclose([result.marginal("x").mean, result.marginal("x").var], [mean, var], **TOL)


def log_beta_function(alpha):
    return np.sum(gammaln(alpha)) - gammaln(np.sum(alpha))


def dirichlet_kl(posterior, prior):
    """KL[Dir(posterior) || Dir(prior)]."""
    e_log = digamma(posterior) - digamma(posterior.sum())
    return log_beta_function(prior) - log_beta_function(posterior) + np.sum((posterior - prior) * e_log)


ALPHA = np.array([1.0, 2.0, 1.5])


def test_variational_switch_with_dirichlet_prior():
    """π ~ Dir(α), z ~ Cat(π): F = KL[q(π)||p(π)] + Σ_k q_k ln q_k − Σ_k q_k E_q[ln π_k] + Σ_k q_k F_k."""
    closed = closed_form_log_evidence()
    with fg.Model() as model:
        weights = Dirichlet("weights", alpha=ALPHA)
        z = Categorical("z", p=weights)
        x = Mixture("x", z, [gaussian_prior(k) for k in range(3)])
        Normal("y", mean=x, var=V, observed=Y)
    q_z, q_pi = [], []

    def callback(iteration, result):
        _record("z", "probabilities", q_z)(iteration, result)
        _record("weights", "alpha", q_pi)(iteration, result)

    result = fg.infer(model, algorithm="vmp", constraints=EXACT_SUB_MODELS, iterations=12, callback=callback,
                      init={"z": fg.Categorical(np.ones(3) / 3), "weights": fg.Dirichlet(ALPHA)})
    for q, alpha, free_energy in zip(q_z, q_pi, result.free_energy):
        e_log_pi = digamma(alpha) - digamma(alpha.sum())
        decomposition = (dirichlet_kl(alpha, ALPHA) + np.sum(q * np.log(q)) - np.sum(q * e_log_pi)
                         + np.sum(q * -closed))
        np.testing.assert_allclose(free_energy, decomposition, **TOL)
    assert np.all(np.diff(result.free_energy) <= 1e-10)
    # the fixed point of the coordinate updates: q(π) = Dir(α + q(z)), q(z) ∝ exp(E ln π) p(y | m)
    np.testing.assert_allclose(q_pi[-1], ALPHA + q_z[-2], rtol=1e-12)
    e_log_pi = digamma(q_pi[-1]) - digamma(q_pi[-1].sum())
    np.testing.assert_allclose(q_z[-1], np.exp(e_log_pi + closed - logsumexp(e_log_pi + closed)), **TOL)
    # the bound: F ≥ −ln p(y) with p(y) = Σ_k E_prior[π_k] p(y | m_k)
    assert result.free_energy[-1] >= -logsumexp(np.log(ALPHA / ALPHA.sum()) + closed) - 1e-12


def test_variational_switch_beside_a_shared_precision():
    """y_i ~ N(x, 1/τ), τ ~ Gamma(2, 1) shared by the models, mean-field q(z) q(x | z) q(τ).

    The likelihood sends x a variational message (scale 0) that changes every
    iteration; the fixed point is compared with coordinate ascent written out here:
    q(x | m_k) ∝ p_k(x) exp E_τ[ln lik(x, τ)] with normaliser Z_k, q(z = k) ∝ π_k Z_k,
    q(τ) = Gamma(2 + N/2, 1 + ½ Σ_k q_k E_{x|k} Σ_i (y_i − x)²), and
    F = Σ_k q_k ln(q_k/π_k) − Σ_k q_k ln Z_k + KL[q(τ) || p(τ)].
    """
    pi, shape0, rate0 = np.array([0.3, 0.7]), 2.0, 1.0
    data = np.random.default_rng(1).normal(1.0, 0.8, 12)
    means, variances = np.array([0.0, 2.0]), np.array([1.0, 0.5])
    with fg.Model() as model:
        z = Categorical("z", p=pi)
        x = Mixture("x", z, [Normal(f"x{k + 1}", mean=m, var=v) for k, (m, v) in enumerate(zip(means, variances))])
        tau = Gamma("tau", shape=shape0, rate=rate0)
        Normal("y", mean=x, precision=tau, observed=data)
    result = fg.infer(model, algorithm="vmp", constraints={"factorization": {"x1": "bp", "x2": "bp"}}, iterations=40,
                      init={"z": fg.Categorical(pi), "tau": fg.Gamma(shape0, rate0)})
    assert np.all(np.diff(result.free_energy) <= 1e-10)

    n, mean_y = data.size, data.mean()
    scatter = np.sum((data - mean_y) ** 2)
    shape, rate = shape0, rate0

    def log_normalisers(shape, rate):
        e_tau, e_log_tau = shape / rate, digamma(shape) - np.log(rate)
        return (n / 2 * e_log_tau - n / 2 * np.log(2 * np.pi) - e_tau / 2 * scatter
                + 0.5 * np.log(2 * np.pi / (n * e_tau)) + norm.logpdf(mean_y, means, np.sqrt(variances + 1 / (n * e_tau))))

    for _ in range(300):
        log_z = log_normalisers(shape, rate)
        q = np.exp(np.log(pi) + log_z - logsumexp(np.log(pi) + log_z))
        precision = 1 / variances + n * shape / rate
        posterior_means = (means / variances + n * shape / rate * mean_y) / precision
        shape = shape0 + n / 2
        rate = rate0 + 0.5 * np.sum(q * (scatter + n * ((posterior_means - mean_y) ** 2 + 1 / precision)))
    log_z = log_normalisers(shape, rate)
    kl_gamma = ((shape - shape0) * digamma(shape) - gammaln(shape) + gammaln(shape0)
                + shape0 * (np.log(rate) - np.log(rate0)) + shape * (rate0 - rate) / rate)
    free_energy = np.sum(q * np.log(q / pi)) - np.sum(q * log_z) + kl_gamma
    np.testing.assert_allclose(result.free_energy[-1], free_energy, **TOL)
    np.testing.assert_allclose(result.marginal("z").probabilities, q, **TOL)
    np.testing.assert_allclose([result.marginal("tau").shape, result.marginal("tau").rate], [shape, rate], rtol=1e-8)


# ------------------------------------------------------------------ g. model combination (variational)


def cavi(log_likelihood, alpha, iterations):
    """Coordinate ascent from q(z_n) uniform: q(π) = Dir(α + Σ_n q(z_n)), then q(z_n) ∝ exp(E ln π_k) p(y_n | m_k).

    Returns the trace of (q(π) concentrations, q(z), F) after each sweep, in the engine's update order.
    """
    n, k = log_likelihood.shape
    q = np.full((n, k), 1.0 / k)
    trace = []
    for _ in range(iterations):
        concentration = alpha + q.sum(axis=0)
        e_log_pi = digamma(concentration) - digamma(concentration.sum())
        log_q = e_log_pi + log_likelihood
        q = np.exp(log_q - logsumexp(log_q, axis=1, keepdims=True))
        free_energy = (dirichlet_kl(concentration, alpha) + np.sum(q * np.log(q)) - np.sum(q * e_log_pi)
                       - np.sum(q * log_likelihood))
        trace.append((concentration, q, free_energy))
    return trace


@pytest.mark.parametrize("inputs", ["sub-model-priors", "constants"])
def test_model_combination_against_cavi(inputs):
    """N observations, each with its own switch z_n ~ Cat(π), π ~ Dir(α), mean-field q(π) Π_n q(z_n)."""
    n = COMBINATION_DATA.size
    with fg.Model() as model:
        weights = Dirichlet("weights", alpha=np.ones(3))
        z = Categorical("z", p=weights, batch_shape=(n,))
        if inputs == "constants":
            x = Mixture("x", z, list(CENTRES))
        else:  # the same prior N(c_k, 0.5) for every n, one copy per observation
            x = Mixture("x", z, [Normal(f"x{k + 1}", mean=c, var=PRIOR_SPREAD, batch_shape=(n,))
                                 for k, c in enumerate(CENTRES)])
        Normal("y", mean=x, var=COMBINATION_V, observed=COMBINATION_DATA)
    exact = ["y"] + ([f"x{k + 1}" for k in range(3)] if inputs == "sub-model-priors" else ["x"])
    iterations = 15
    result = fg.infer(model, algorithm="vmp", constraints={"factorization": {name: "bp" for name in exact}},
                      init={"weights": fg.Dirichlet(np.ones(3)), "z": fg.Categorical(np.ones(3) / 3)},
                      iterations=iterations)
    spread = PRIOR_SPREAD if inputs == "sub-model-priors" else 0.0
    log_likelihood = norm.logpdf(COMBINATION_DATA[:, None], CENTRES[None, :], np.sqrt(COMBINATION_V + spread))
    trace = cavi(log_likelihood, np.ones(3), iterations)
    np.testing.assert_allclose(result.free_energy, [f for _, _, f in trace], **TOL)
    concentration, q, _ = trace[-1]
    np.testing.assert_allclose(result.marginal("weights").alpha, concentration, **TOL)
    np.testing.assert_allclose(result.marginal("z").probabilities, q, **TOL)
    assert np.all(np.diff(result.free_energy) <= 1e-10)


def test_model_combination_constant_inputs_default_factorization():
    n = COMBINATION_DATA.size
    with fg.Model() as model:
        weights = Dirichlet("weights", alpha=np.ones(3))
        z = Categorical("z", p=weights, batch_shape=(n,))
        x = Mixture("x", z, list(CENTRES))
        Normal("y", mean=x, var=COMBINATION_V, observed=COMBINATION_DATA)
    init = {"weights": fg.Dirichlet(np.ones(3)), "z": fg.Categorical(np.ones(3) / 3)}
    default = fg.infer(model, algorithm="vmp", constraints={"factorization": {"y": "bp"}}, init=init, iterations=15)
    explicit = fg.infer(model, algorithm="vmp", constraints={"factorization": {"y": "bp", "x": "bp"}}, init=init,
                        iterations=15)
    # with constant inputs the mixture's own "mf" clusters and "bp" describe the same free energy
    np.testing.assert_allclose(default.free_energy, explicit.free_energy, **TOL)
    np.testing.assert_allclose(default.marginal("weights").alpha, explicit.marginal("weights").alpha, **TOL)
