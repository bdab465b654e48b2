"""Multinomial logistic regression by stick-breaking Pólya-Gamma VMP, against hand-written numpy PG-VB.

    β_k ~ N(0, σ²I) (k = 0..K−2),   p(y = j | ψ) = σ(ψ_j) Π_{k<j} σ(−ψ_k),   ψ_k = β_kᵀ[x; 1].

* Observed labels: the engine's q(β_k), tilts and free energy equal a hand-written numpy PG-VB (per
  sweep: q(β_k) for every stick from the tilts of the previous sweep, then ξ_k = sqrt(E[ψ_k²])) at
  every iteration to 1e-10, from the same start (ξ = 0, the node's declared default).
* A latent class with a categorical likelihood elsewhere (a noisy label o ~ Cat(A z)): the same, with
  q(z) ∝ exp(E log f_SBL(z)) A[o, z] updated after the tilts, as the engine's schedule orders it.
* A latent input x_n ~ N(m_n, S_n) (the CMN's output layer): q(β_k), then every q(x_n) (the logistic input
  message summed over the sticks), then the tilts, against numpy CAVI to 1e-10.
* The free energy never increases.
* K = 2 is the binary Logistic node with the label flipped: messages, free energy and posterior equal.
* The predictive p(y = j | x*) = E[σ(ψ_j)] Π_{k<j} E[σ(−ψ_k)] under the independent Gaussian logits
  of q, each factor by the logistic estimator's 1-D quadrature, against Monte Carlo from q; it sums to 1.
"""
import numpy as np
import pytest
from scipy import integrate
from scipy.special import expit, log_expit, logsumexp
from scipy.stats import norm

import fgraph as fg
from fgraph.families import Categorical
from fgraph.nodes import MvNormal
from fgraph.nodes.logistic import Logistic
from fgraph.nodes.stick_breaking_logistic import StickBreakingLogistic
from fgraph.nodes.transition import Transition

PRIOR_VAR = 25.0
ITERATIONS = 25


def stick_breaking_probabilities(logits):
    """p(y = j | ψ) = σ(ψ_j) Π_{k<j} σ(−ψ_k) (the last class: Π_k σ(−ψ_k)), written afresh, shape (..., K)."""
    passed = np.concatenate([np.zeros(logits.shape[:-1] + (1,)), np.cumsum(log_expit(-logits), axis=-1)], axis=-1)
    return np.exp(passed + np.concatenate([log_expit(logits), np.zeros(logits.shape[:-1] + (1,))], axis=-1))


def data(count, dimension, classes, seed):
    rng = np.random.default_rng(seed)
    features = rng.normal(size=(count, dimension))
    truth = rng.normal(scale=1.5, size=(classes - 1, dimension + 1))
    probabilities = stick_breaking_probabilities(augment(features) @ truth.T)
    labels = np.array([rng.choice(classes, p=p / p.sum()) for p in probabilities])
    return features, labels


def augment(features):
    return np.column_stack([features, np.ones(len(features))])


def priors(classes, dimension):
    return [MvNormal(f"beta{k}", mean=np.zeros(dimension + 1), cov=PRIOR_VAR * np.eye(dimension + 1))
            for k in range(classes - 1)]


def log_cosh_half(xi):
    return np.logaddexp(xi / 2, -xi / 2) - np.log(2)


def stick_weights(p):
    """E[b_k] = Σ_{j≥k} p_j, E[κ_k] = p_k − E[b_k]/2 (written afresh: reverse cumulative sums)."""
    reached = np.flip(np.cumsum(np.flip(p, -1), -1), -1)[:, :-1]
    return reached, p[:, :-1] - reached / 2


def numpy_stick_breaking_vb(features, iterations, labels=None, classes=None, noise=None, observed_noisy=None):
    """Hand-written PG-VB; ``labels`` observed, or a latent class z with p(o | z) = noise[o, z] observed as ``observed_noisy``.

    Per sweep: for every stick q(β_k) = N(μ_k, Σ_k) with Σ_k⁻¹ = I/σ² + X̃ᵀ diag(E[b_k] ω̄(ξ_k)) X̃,
    μ_k = Σ_k X̃ᵀ E[κ_k]; then ξ_k = sqrt(diag(X̃ E[β_kβ_kᵀ] X̃ᵀ)); then (latent class) q(z). Returns per
    sweep (means, covariances, ξ, q(z), ELBO).
    """
    rows = augment(features)
    count, dimension = rows.shape
    sticks = classes - 1
    p = np.eye(classes)[labels] if labels is not None else np.full((count, classes), 1.0 / classes)
    xi = np.zeros((count, sticks))
    trace = []
    for _ in range(iterations):
        omega = np.where(xi > 0, np.tanh(xi / 2) / (2 * np.where(xi > 0, xi, 1.0)), 0.25)
        reached, kappa = stick_weights(p)
        means, covs = [], []
        for k in range(sticks):
            precision = np.eye(dimension) / PRIOR_VAR + (rows.T * (reached[:, k] * omega[:, k])) @ rows
            cov = np.linalg.inv(precision)
            means.append(cov @ (rows.T @ kappa[:, k]))
            covs.append(cov)
        seconds = [c + np.outer(m, m) for m, c in zip(means, covs)]
        xi = np.sqrt(np.stack([np.einsum("ni,ij,nj->n", rows, s, rows) for s in seconds], axis=1))
        logits = np.stack([rows @ m for m in means], axis=1)
        cost = np.log(2) + log_cosh_half(xi)  # ξ at its optimum: no slack term
        if labels is None:
            log_m = np.zeros((count, classes))
            for j in range(classes):
                for k in range(min(j + 1, sticks)):
                    log_m[:, j] += (0.5 if k == j else -0.5) * logits[:, k] - cost[:, k]
            log_q = log_m + np.log(noise[observed_noisy, :])
            p = np.exp(log_q - logsumexp(log_q, axis=1, keepdims=True))
        reached, kappa = stick_weights(p)
        elbo = np.sum(kappa * logits - reached * cost)
        for m, c in zip(means, covs):
            elbo -= 0.5 * (np.trace(c) / PRIOR_VAR + m @ m / PRIOR_VAR - dimension + dimension * np.log(PRIOR_VAR)
                           - np.linalg.slogdet(c)[1])
        if labels is None:
            elbo += np.sum(p * np.log(noise[observed_noisy, :])) - np.sum(p * np.log(p))
        trace.append((means, covs, xi, p, elbo))
    return trace


def recorder(model, names):
    steps = []

    def callback(iteration, result):
        steps.append({name: result.marginal(name) for name in names})
    return steps, callback


CASES = [pytest.param(3, 2, 40, 1, id="3-classes-2d"), pytest.param(4, 1, 30, 2, id="4-classes-1d"),
         pytest.param(5, 3, 60, 3, id="5-classes-3d")]


@pytest.mark.parametrize("classes, dimension, count, seed", CASES)
def test_observed_labels_equal_hand_written_pg_vb_every_iteration(classes, dimension, count, seed):
    features, labels = data(count, dimension, classes, seed)
    with fg.Model() as model:
        StickBreakingLogistic("y", priors(classes, dimension), features, observed=labels)
    names = [f"beta{k}" for k in range(classes - 1)] + ["y_xi"]
    steps, callback = recorder(model, names)
    result = fg.infer(model, algorithm="vmp", iterations=ITERATIONS, callback=callback)
    reference = numpy_stick_breaking_vb(features, ITERATIONS, labels=labels, classes=classes)
    assert len(steps) == ITERATIONS
    for step, (means, covs, xi, _, elbo), free_energy in zip(steps, reference, result.free_energy):
        for k in range(classes - 1):
            np.testing.assert_allclose(step[f"beta{k}"].mean, means[k], rtol=1e-10, atol=1e-10)
            np.testing.assert_allclose(step[f"beta{k}"].cov, covs[k], rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(step["y_xi"].value, xi, rtol=1e-10)
        assert free_energy == pytest.approx(-elbo, rel=1e-10)
    assert np.all(np.diff(result.free_energy) <= 1e-9 * np.abs(result.free_energy[1:]))


@pytest.mark.parametrize("classes, dimension, count, seed", CASES[:2])
def test_a_latent_class_with_a_categorical_likelihood_equals_hand_written_pg_vb(classes, dimension, count, seed):
    features, labels = data(count, dimension, classes, seed)
    noise = np.full((classes, classes), 0.2 / (classes - 1)) + 0.8 * np.eye(classes) - 0.2 / (classes - 1) * np.eye(classes)
    with fg.Model() as model:
        z = StickBreakingLogistic("z", priors(classes, dimension), features)
        Transition("o", z, noise, observed=labels)
    names = [f"beta{k}" for k in range(classes - 1)] + ["z_xi", "z"]
    steps, callback = recorder(model, names)
    result = fg.infer(model, algorithm="vmp", iterations=ITERATIONS, callback=callback,
                      init={"z": Categorical(np.full(classes, 1.0 / classes))})
    reference = numpy_stick_breaking_vb(features, ITERATIONS, classes=classes, noise=noise, observed_noisy=labels)
    for step, (means, covs, xi, p, elbo), free_energy in zip(steps, reference, result.free_energy):
        for k in range(classes - 1):
            np.testing.assert_allclose(step[f"beta{k}"].mean, means[k], rtol=1e-10, atol=1e-10)
            np.testing.assert_allclose(step[f"beta{k}"].cov, covs[k], rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(step["z_xi"].value, xi, rtol=1e-10)
        np.testing.assert_allclose(step["z"].probabilities, p, rtol=1e-10, atol=1e-13)
        assert free_energy == pytest.approx(-elbo, rel=1e-10)
    assert np.all(np.diff(result.free_energy) <= 1e-9 * np.abs(result.free_energy[1:]))


def test_two_classes_are_the_logistic_node_with_the_label_flipped():
    features, labels = data(30, 2, 2, 7)
    with fg.Model() as binary:
        beta = MvNormal("beta", mean=np.zeros(3), cov=PRIOR_VAR * np.eye(3))
        Logistic("y", beta, features, observed=(labels == 0).astype(float))  # class 0 is σ(ψ_0)
    with fg.Model() as sticks:
        StickBreakingLogistic("y", [MvNormal("beta", mean=np.zeros(3), cov=PRIOR_VAR * np.eye(3))], features,
                              observed=labels)
    a, b = fg.infer(binary, algorithm="vmp", iterations=20), fg.infer(sticks, algorithm="vmp", iterations=20)
    np.testing.assert_allclose(b.free_energy, a.free_energy, rtol=1e-12)
    np.testing.assert_allclose(b.marginal("beta").mean, a.marginal("beta").mean, rtol=1e-11)
    np.testing.assert_allclose(b.marginal("beta").cov, a.marginal("beta").cov, rtol=1e-11)
    np.testing.assert_allclose(b.marginal("y_xi").value[:, 0], a.marginal("y_xi").value, rtol=1e-12)


def test_the_predictive_integrates_over_the_posterior_and_matches_monte_carlo():
    pytest.importorskip("sklearn")  # the predictive lives with the estimators (the ``models`` extra)
    from fgraph.models.logistic import predictive_log_probabilities, stick_breaking_log_probabilities
    classes, dimension = 4, 2
    features, labels = data(50, dimension, classes, 11)
    with fg.Model() as model:
        StickBreakingLogistic("y", priors(classes, dimension), features, observed=labels)
    result = fg.infer(model, algorithm="vmp", iterations=60)
    posteriors = [result.marginal(f"beta{k}") for k in range(classes - 1)]
    queries = augment(np.array([[0.0, 0.0], [1.5, -2.0], [-3.0, 0.5]]))
    means = np.stack([queries @ q.mean for q in posteriors], axis=1)
    stds = np.stack([np.sqrt(np.einsum("ni,ij,nj->n", queries, q.cov, queries)) for q in posteriors], axis=1)
    predictive = np.exp(stick_breaking_log_probabilities(means, stds))
    np.testing.assert_allclose(predictive.sum(axis=1), 1.0, rtol=1e-13)
    # Monte Carlo over q(β) = Π_k N(μ_k, Σ_k): the average of the stick-breaking probabilities
    rng = np.random.default_rng(0)
    draws = 200_000
    logits = np.stack([rng.multivariate_normal(q.mean, q.cov, size=draws) @ queries.T for q in posteriors], axis=-1)
    probabilities = stick_breaking_probabilities(logits)
    monte_carlo = probabilities.mean(axis=0)
    standard_error = probabilities.std(axis=0) / np.sqrt(draws)
    # far out a class probability is a product of lognormal-like tails (σ(−ψ) ≈ e^{−ψ}), whose Monte Carlo
    # mean is carried by rare draws and whose sample standard error is biased low: compare where it is not
    # (every probability above 1e-4; the far query keeps two such classes), and the factors by quadrature below
    common = monte_carlo > 1e-4
    assert common.sum() >= 8
    assert np.all(np.abs(predictive - monte_carlo)[common] < 5 * standard_error[common])
    # every factor E[σ(±ψ_k)], tiny ones included, against adaptive quadrature over ψ_k ~ N(m_k, s_k²)
    log_break, log_pass = predictive_log_probabilities(means, stds)
    for (n, k), m in np.ndenumerate(means):
        s_ = stds[n, k]
        for sign, computed in ((1.0, log_break[n, k]), (-1.0, log_pass[n, k])):
            value, _ = integrate.quad(lambda z, sign=sign, m=m, s_=s_: expit(sign * (m + s_ * z)) * norm.pdf(z),
                                      -40, 40, epsabs=0, epsrel=1e-12, limit=400, points=[-m / s_])
            assert np.exp(computed) == pytest.approx(value, rel=1e-9)
    # not the plug-in: σ at the mean logits differs by far more than the Monte Carlo error somewhere
    plug_in = np.exp(stick_breaking_log_probabilities(means, np.zeros_like(means)))
    assert np.max(np.abs(plug_in - monte_carlo)) > 50 * np.max(standard_error)


def test_the_predictive_of_known_logits_is_the_stick_breaking_distribution():
    pytest.importorskip("sklearn")
    from fgraph.models.logistic import stick_breaking_log_probabilities
    logits = np.array([[1.0, 1.5], [-2.0, 0.3]])
    expected = np.array([[expit(1.0), expit(-1.0) * expit(1.5), expit(-1.0) * expit(-1.5)],
                         [expit(-2.0), expit(2.0) * expit(0.3), expit(2.0) * expit(-0.3)]])
    np.testing.assert_allclose(np.exp(stick_breaking_log_probabilities(logits, 1e-300 * np.ones_like(logits))),
                               expected, rtol=1e-12)


def test_a_latent_input_equals_hand_written_cavi():
    """q(β_0) q(β_1) Π_n q(x_n): x_n ~ N(m_n, S_n) latent, the class observed (the CMN's output layer)."""
    rng = np.random.default_rng(12)
    count, dimension, classes = 8, 2, 3
    prior_means = rng.normal(size=(count, dimension))
    prior_covs = np.array([[[0.5, 0.1], [0.1, 0.3]], [[1.0, -0.2], [-0.2, 0.6]]])[np.arange(count) % 2]
    labels = rng.integers(0, classes, size=count)
    beta_var = 4.0
    with fg.Model() as model:
        betas = [MvNormal(f"beta{k}", mean=np.zeros(dimension + 1), cov=beta_var * np.eye(dimension + 1))
                 for k in range(classes - 1)]
        x = MvNormal("x", mean=prior_means, cov=prior_covs)
        StickBreakingLogistic("y", betas, x, observed=labels)
    result = fg.infer(model, algorithm="vmp", iterations=20, init={"x": fg.MvNormalMeanCovariance(prior_means, prior_covs)})
    assert [(step.node.name, step.interface) for step in result.schedule.steps] == [
        ("beta0", "out"), ("y", "coefficients1"), ("beta1", "out"), ("y", "coefficients2"), ("x", "out"),
        ("y", "input"), ("y", "xi")]

    def kl(mean, cov, prior_mean, prior_cov):
        solve = np.linalg.solve(prior_cov, np.column_stack([cov, mean - prior_mean]))
        return 0.5 * (np.trace(solve[:, :len(mean)]) + (mean - prior_mean) @ solve[:, len(mean)] - len(mean)
                      + np.linalg.slogdet(prior_cov)[1] - np.linalg.slogdet(cov)[1])

    reached, kappa = stick_weights(np.eye(classes)[labels])
    x_means, x_covs = prior_means.copy(), prior_covs.copy()
    xi = np.zeros((count, classes - 1))
    free_energies = []
    for _ in range(20):
        omega = np.where(xi > 0, np.tanh(xi / 2) / (2 * np.where(xi > 0, xi, 1.0)), 0.25)
        weights = reached * omega
        rows = augment(x_means)
        seconds = np.einsum("ni,nj->nij", rows, rows)
        seconds[:, :dimension, :dimension] += x_covs
        beta_means, beta_seconds, kls = [], [], 0.0
        for k in range(classes - 1):
            cov = np.linalg.inv(np.eye(dimension + 1) / beta_var + np.einsum("n,nij->ij", weights[:, k], seconds))
            mean = cov @ (rows.T @ kappa[:, k])
            beta_means.append(mean)
            beta_seconds.append(cov + np.outer(mean, mean))
            kls += kl(mean, cov, np.zeros(dimension + 1), beta_var * np.eye(dimension + 1))
        for n in range(count):  # Σ_k of the logistic input message, ψ_k = v_kᵀx + β₀_k
            precision = np.linalg.inv(prior_covs[n]) + sum(weights[n, k] * beta_seconds[k][:dimension, :dimension]
                                                           for k in range(classes - 1))
            shift = np.linalg.solve(prior_covs[n], prior_means[n]) + sum(
                kappa[n, k] * beta_means[k][:dimension] - weights[n, k] * beta_seconds[k][:dimension, dimension]
                for k in range(classes - 1))
            x_covs[n] = np.linalg.inv(precision)
            x_means[n] = x_covs[n] @ shift
            kls += kl(x_means[n], x_covs[n], prior_means[n], prior_covs[n])
        rows = augment(x_means)
        seconds = np.einsum("ni,nj->nij", rows, rows)
        seconds[:, :dimension, :dimension] += x_covs
        xi = np.sqrt(np.stack([np.einsum("ij,nij->n", s, seconds) for s in beta_seconds], axis=1))
        logits = np.stack([rows @ m for m in beta_means], axis=1)
        energy = -np.sum(kappa * logits - reached * (np.log(2) + log_cosh_half(xi)))
        free_energies.append(energy + kls)
    np.testing.assert_allclose(result.free_energy, free_energies, rtol=1e-10)
    np.testing.assert_allclose(result.marginal("x").mean, x_means, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(result.marginal("x").cov, x_covs, rtol=1e-10, atol=1e-12)
    for k in range(classes - 1):
        np.testing.assert_allclose(result.marginal(f"beta{k}").mean, beta_means[k], rtol=1e-10, atol=1e-12)
    assert np.all(np.diff(result.free_energy) <= 1e-12 * np.abs(result.free_energy[1:]))


def test_a_large_plate_never_forms_its_per_observation_matrices():
    """N = 5·10⁴, d = 20, K = 4: the messages to each β_k are sums over the plate; the N 21×21 matrices of a
    stick (178 MB, three sticks) are never made."""
    import tracemalloc

    from fgraph.families import gaussian_plate

    count, dimension, classes = 50_000, 20, 4
    rng = np.random.default_rng(9)
    features = rng.normal(size=(count, dimension))
    labels = rng.integers(0, classes, size=count)
    formed = []
    original = gaussian_plate.GaussianLikelihoodOnDemand.__getattr__

    def spy(self, name):
        formed.append(name)
        return original(self, name)

    gaussian_plate.GaussianLikelihoodOnDemand.__getattr__ = spy
    try:
        tracemalloc.start()
        with fg.Model() as model:
            StickBreakingLogistic("y", priors(classes, dimension), features, observed=labels)
        result = fg.infer(model, algorithm="vmp", iterations=3)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        gaussian_plate.GaussianLikelihoodOnDemand.__getattr__ = original
    assert not formed
    # the data (8 MB), x̃ and the one-hot labels (8 and 1.6 MB), a few (N, d + 1) and (N, K − 1) arrays
    assert peak < 80e6
    assert np.all(np.diff(result.free_energy) <= 0.0)
