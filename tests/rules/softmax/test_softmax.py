"""The softmax node under its Gaussian likelihood approximations (operators "laplace", "variational", "moment",
"moment-original"): each label y (one-hot c) is K pseudo-observations N(ψ_k; m_k, v_k) of the logits, (m_k, v_k)
the log-basis Gaussian of Gamma(α_ε,k + c_k, 1).

Tables by hand (the messages to β_k and to x, the average energy), with (m_k, v_k) from the closed forms below
(not from the library); the model as a whole against independent computations: K independent Bayesian linear
regressions of the targets m_{·k} on x̃ with noise variances v_{·k} (known inputs), and the Gaussian posterior of
a latent input given known coefficients; the named errors; the Monte Carlo predictive helper against a large
sample and, for K = 2, a one-dimensional quadrature.
"""
import numpy as np
import pytest
from scipy import integrate
from scipy.special import digamma, expit, polygamma
from scipy.stats import multivariate_normal, norm

import fgraph as fg
from fgraph.errors import DataError, ModelError, RuleNotFoundError
from fgraph.families import (
    GaussianLikelihood,
    MultivariateNormal,
    MvNormalMeanCovariance,
    PointMass,
)
from fgraph.families.gaussian_plate import GaussianLikelihoodOnDemand
from fgraph.nodes.mvnormal import MvNormal
from fgraph.nodes.softmax import APPROXIMATIONS, Softmax, SoftmaxNode, predictive_probabilities
from tests.rules.tables import assert_message, energy, message

INTERFACES = ("out", "input", "coefficients1", "coefficients2", "coefficients3")


def hand_pseudo(labels, alpha, method, classes=3):
    """(m, v) of log ω_k, ω_k ~ Gamma(a_k, 1), a_k = α_k + [y = k], by the closed forms, shape labels + (K,):
    laplace N(log a, 1/a); variational N(log a − 1/(2a), 1/a); moment N(ψ(a), ψ₁(a));
    moment-original v = log(1 + 1/a), N(log a − v/2, v)."""
    a = np.asarray(alpha, dtype=float) + (np.asarray(labels)[..., None] == np.arange(classes))
    if method == "laplace":
        return np.log(a), 1.0 / a
    if method == "variational":
        return np.log(a) - 0.5 / a, 1.0 / a
    if method == "moment":
        return digamma(a), polygamma(1, a)
    v = np.log(1.0 + 1.0 / a)
    return np.log(a) - 0.5 * v, v


def one_hot(labels, classes=3):
    return PointMass(np.eye(classes)[np.asarray(labels)], 1)


ALPHA = (0.2, 0.5, 0.3)
# three Gaussian class coefficient vectors over x̃ = [x_1, x_2, 1]
MEANS = [np.array([0.5, -1.0, 0.3]), np.array([-0.2, 0.4, 1.0]), np.array([1.5, 0.0, -0.7])]
COVS = [np.array([[1.0, 0.2, 0.1], [0.2, 2.0, -0.3], [0.1, -0.3, 0.5]]), np.diag([0.3, 0.2, 0.4]),
        np.array([[0.6, -0.1, 0.05], [-0.1, 0.4, 0.0], [0.05, 0.0, 0.2]])]
CLASSES = tuple(MvNormalMeanCovariance(m, c) for m, c in zip(MEANS, COVS))
SECONDS = [c + np.outer(m, m) for m, c in zip(MEANS, COVS)]


def test_hand_pseudo_observations_reproduce_known_values():
    """The reference formulas themselves: a = 1.1 (the label's class, α = 0.1), a = 0.1 (the others)."""
    m, v = hand_pseudo(0, 0.1, "laplace")
    np.testing.assert_allclose(m, np.log([1.1, 0.1, 0.1]), rtol=1e-15)
    np.testing.assert_allclose(v, [1 / 1.1, 10.0, 10.0], rtol=1e-15)
    m, v = hand_pseudo(2, 0.1, "moment")  # ψ(1.1) = −0.4237549404..., ψ₁(1.1) = 1.4332991507...
    np.testing.assert_allclose([m[2], v[2]], [-0.42375494041107653, 1.4332991507927588], rtol=1e-12)


# ----------------------------------------------------------------- the message to the coefficients


@pytest.mark.parametrize("method", APPROXIMATIONS)
@pytest.mark.parametrize("index", [0, 1, 2])
def test_message_to_coefficients_of_a_known_input(method, index):
    """x = [1, −3] (x̃ = [1, −3, 1]), y = 1: weighted mean (m_k/v_k) x̃, precision x̃x̃ᵀ / v_k, class k alone."""
    m, v = hand_pseudo(1, ALPHA, method)
    rows = np.array([1.0, -3.0, 1.0])
    inputs = {"q_out": one_hot(1), "q_input": PointMass(np.array([1.0, -3.0]), 1)}
    result = message(SoftmaxNode, "coefficients", inputs, index=index, interfaces=INTERFACES, operator=method,
                     alpha_epsilon=ALPHA)
    assert_message(result, {"family": GaussianLikelihood, "weighted_mean": m[index] / v[index] * rows,
                            "precision": np.outer(rows, rows) / v[index]})


@pytest.mark.parametrize("method", APPROXIMATIONS)
def test_message_to_coefficients_over_a_plate_carries_the_sums(method):
    """Labels [2, 0, 1, 2], x = [[1, 0], [−1, 2], [0.5, 0.5], [2, −1]]: Σ_n (m_nk/v_nk) x̃_n, Σ_n x̃_n x̃_nᵀ / v_nk."""
    labels = np.array([2, 0, 1, 2])
    x = np.array([[1.0, 0.0], [-1.0, 2.0], [0.5, 0.5], [2.0, -1.0]])
    rows = np.hstack([x, np.ones((4, 1))])
    m, v = hand_pseudo(labels, 0.1, method)
    for index in range(3):
        result = message(SoftmaxNode, "coefficients", {"q_out": one_hot(labels), "q_input": PointMass(x, 1)},
                         index=index, interfaces=INTERFACES, operator=method, alpha_epsilon=0.1, batch_shape=(4,))
        assert isinstance(result, GaussianLikelihoodOnDemand) and result.batch_shape == (4,)
        weighted, minus_half_precision = result.natural_parameter_totals()
        np.testing.assert_allclose(weighted, rows.T @ (m[:, index] / v[:, index]), rtol=1e-13, atol=1e-14)
        np.testing.assert_allclose(minus_half_precision, -0.5 * rows.T @ (rows / v[:, index, None]), rtol=1e-13)


def test_what_is_kept_on_the_labels_is_per_operator_and_epsilon():
    """One labels point mass read by every operator and two α_ε in turn (as by several nodes, or runs): each gets its
    own pseudo-observations and plate sums."""
    labels = np.array([2, 0, 1])
    x = np.array([[1.0, 0.0], [-1.0, 2.0], [0.5, 0.5]])
    rows = np.hstack([x, np.ones((3, 1))])
    q_out, q_input = one_hot(labels), PointMass(x, 1)
    for alpha in (0.1, ALPHA):
        for method in APPROXIMATIONS:
            m, v = hand_pseudo(labels, alpha, method)
            result = message(SoftmaxNode, "coefficients", {"q_out": q_out, "q_input": q_input}, index=1,
                             interfaces=INTERFACES, operator=method, alpha_epsilon=alpha, batch_shape=(3,))
            weighted, minus_half_precision = result.natural_parameter_totals()
            np.testing.assert_allclose(weighted, rows.T @ (m[:, 1] / v[:, 1]), rtol=1e-13, atol=1e-14)
            np.testing.assert_allclose(minus_half_precision, -0.5 * rows.T @ (rows / v[:, 1, None]), rtol=1e-13)


@pytest.mark.parametrize("method", APPROXIMATIONS)
def test_message_to_coefficients_of_a_latent_input(method):
    """x ~ N([1, −1], Σ): weighted mean (m_k/v_k) E[x̃], precision E[x̃x̃ᵀ]/v_k (proper: Cov[x] > 0)."""
    mu, cov = np.array([1.0, -1.0]), np.array([[0.5, 0.1], [0.1, 0.3]])
    mean = np.array([1.0, -1.0, 1.0])
    second = np.outer(mean, mean)
    second[:2, :2] += cov
    m, v = hand_pseudo(0, 0.4, method)
    result = message(SoftmaxNode, "coefficients", {"q_out": one_hot(0), "q_input": MvNormalMeanCovariance(mu, cov)},
                     index=2, interfaces=INTERFACES, operator=method, alpha_epsilon=0.4)
    assert_message(result, {"family": MultivariateNormal, "weighted_mean": m[2] / v[2] * mean,
                            "precision": second / v[2]})


def test_without_an_intercept_the_input_is_not_extended():
    m, v = hand_pseudo(2, 0.1, "laplace")
    result = message(SoftmaxNode, "coefficients", {"q_out": one_hot(2), "q_input": PointMass(np.array([1.0, -3.0]), 1)},
                     index=1, interfaces=INTERFACES, operator="laplace", alpha_epsilon=0.1, intercept=False)
    rows = np.array([1.0, -3.0])
    assert_message(result, {"family": GaussianLikelihood, "weighted_mean": m[1] / v[1] * rows,
                            "precision": np.outer(rows, rows) / v[1]})


# ----------------------------------------------------------------- the message to the input


@pytest.mark.parametrize("method", APPROXIMATIONS)
def test_message_to_a_latent_input(method):
    """β_k = [w_k; β_k0] Gaussian, y = 2: weighted mean Σ_k ((m_k/v_k) E[w_k] − E[w_k β_k0]/v_k),
    precision Σ_k E[w_k w_kᵀ]/v_k."""
    m, v = hand_pseudo(2, ALPHA, method)
    weighted_mean = sum(m[k] / v[k] * MEANS[k][:2] - SECONDS[k][:2, 2] / v[k] for k in range(3))
    precision = sum(SECONDS[k][:2, :2] / v[k] for k in range(3))
    result = message(SoftmaxNode, "input", {"q_out": one_hot(2), "q_coefficients": CLASSES}, interfaces=INTERFACES,
                     operator=method, alpha_epsilon=ALPHA)
    assert_message(result, {"family": MultivariateNormal, "weighted_mean": weighted_mean, "precision": precision})


@pytest.mark.parametrize("method", APPROXIMATIONS)
def test_message_to_the_input_from_known_coefficients(method):
    """Known β_k = [w_k; b_k]: Σ_k (m_k − b_k) w_k / v_k and Σ_k w_k w_kᵀ / v_k (a plate of two labels)."""
    betas = np.array([[1.0, 2.0, -0.5], [0.0, -1.0, 0.3], [2.0, 0.5, 0.0]])
    labels = np.array([0, 2])
    m, v = hand_pseudo(labels, 0.1, method)
    coefficients = tuple(PointMass(b, 1) for b in betas)
    result = message(SoftmaxNode, "input", {"q_out": one_hot(labels), "q_coefficients": coefficients},
                     interfaces=INTERFACES, operator=method, alpha_epsilon=0.1, batch_shape=(2,))
    for n in range(2):
        weighted_mean = sum((m[n, k] - betas[k, 2]) / v[n, k] * betas[k, :2] for k in range(3))
        precision = sum(np.outer(betas[k, :2], betas[k, :2]) / v[n, k] for k in range(3))
        np.testing.assert_allclose(result.weighted_mean[n], weighted_mean, rtol=1e-13)
        np.testing.assert_allclose(result.precision[n], precision, rtol=1e-13)


def test_message_to_the_input_without_an_intercept():
    """β_k = w_k (dimension d): Σ_k (m_k/v_k) E[w_k], Σ_k E[w_kw_kᵀ]/v_k."""
    m, v = hand_pseudo(0, 0.1, "moment")
    result = message(SoftmaxNode, "input", {"q_out": one_hot(0), "q_coefficients": CLASSES}, interfaces=INTERFACES,
                     operator="moment", alpha_epsilon=0.1, intercept=False)
    assert_message(result, {"family": MultivariateNormal,
                            "weighted_mean": sum(m[k] / v[k] * MEANS[k] for k in range(3)),
                            "precision": sum(SECONDS[k] / v[k] for k in range(3))})


# ----------------------------------------------------------------- the average energy


def hand_energy(m, v, mean_logit, mean_square):
    return np.sum(0.5 * np.log(2 * np.pi * v) + (m * m - 2 * m * mean_logit + mean_square) / (2 * v), axis=-1)


@pytest.mark.parametrize("method", APPROXIMATIONS)
def test_average_energy_over_a_plate_of_known_inputs(method):
    """U_n = Σ_k ½ log 2πv_nk + (m_nk² − 2m_nk E[ψ_nk] + E[ψ_nk²]) / (2v_nk), E[ψ_nk] = μ_kᵀx̃_n,
    E[ψ_nk²] = x̃_nᵀ(Σ_k + μ_kμ_kᵀ)x̃_n, per label."""
    labels = np.array([1, 0, 2])
    x = np.array([[0.5, 1.0], [-2.0, 0.3], [1.0, 1.0]])
    rows = np.hstack([x, np.ones((3, 1))])
    m, v = hand_pseudo(labels, ALPHA, method)
    mean_logit = np.stack([rows @ MEANS[k] for k in range(3)], axis=-1)
    mean_square = np.stack([np.einsum("ni,ij,nj->n", rows, SECONDS[k], rows) for k in range(3)], axis=-1)
    result = energy(SoftmaxNode, {"q_out": one_hot(labels), "q_input": PointMass(x, 1), "q_coefficients": CLASSES},
                    interfaces=INTERFACES, operator=method, alpha_epsilon=ALPHA, batch_shape=(3,))
    np.testing.assert_allclose(result, hand_energy(m, v, mean_logit, mean_square), rtol=1e-12)


@pytest.mark.parametrize("method", APPROXIMATIONS)
def test_average_energy_with_a_latent_input(method):
    """x ~ N(μ_x, Σ_x): E[ψ_k] = μ_kᵀE[x̃], E[ψ_k²] = tr(E[β_kβ_kᵀ] E[x̃x̃ᵀ])."""
    mu, cov = np.array([0.3, -0.8]), np.array([[0.4, -0.1], [-0.1, 0.9]])
    mean = np.array([0.3, -0.8, 1.0])
    second = np.outer(mean, mean)
    second[:2, :2] += cov
    m, v = hand_pseudo(2, 0.1, method)
    mean_logit = np.array([MEANS[k] @ mean for k in range(3)])
    mean_square = np.array([np.sum(SECONDS[k] * second) for k in range(3)])
    result = energy(SoftmaxNode, {"q_out": one_hot(2), "q_input": MvNormalMeanCovariance(mu, cov),
                                  "q_coefficients": CLASSES}, interfaces=INTERFACES, operator=method, alpha_epsilon=0.1)
    np.testing.assert_allclose(result, hand_energy(m, v, mean_logit, mean_square), rtol=1e-12)


def test_energy_of_point_masses_is_minus_the_log_of_the_gaussian_factor():
    """All inputs known: U = −Σ_k log N(m_k; ψ_k, v_k)."""
    betas = np.array([[1.0, 2.0, -0.5], [0.0, -1.0, 0.3], [2.0, 0.5, 0.0]])
    x = np.array([0.7, -0.4])
    psi = betas @ np.append(x, 1.0)
    m, v = hand_pseudo(1, 0.1, "variational")
    result = energy(SoftmaxNode, {"q_out": one_hot(1), "q_input": PointMass(x, 1),
                                  "q_coefficients": tuple(PointMass(b, 1) for b in betas)},
                    interfaces=INTERFACES, operator="variational", alpha_epsilon=0.1)
    assert result == pytest.approx(-np.sum(norm.logpdf(m, psi, np.sqrt(v))), rel=1e-13)


# ----------------------------------------------------------------- the node in a model


def data(N=60, d=2, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((N, d))
    weights = np.array([[1.5, -1.0, 0.3], [-0.5, 1.0, 0.0], [0.0, 0.0, -0.2]])
    logits = np.hstack([X, np.ones((N, 1))]) @ weights.T
    probabilities = np.exp(logits - logits.max(axis=1, keepdims=True))
    probabilities /= probabilities.sum(axis=1, keepdims=True)
    labels = np.array([rng.choice(3, p=p) for p in probabilities])
    return X, labels


def regressions(labels, X, prior_var, method, alpha):
    """Per class k: Bayesian linear regression of m_{·k} on x̃ with noise variances v_{·k}: mean, cov, log p(m_{·k})."""
    m, v = hand_pseudo(labels, alpha, method)
    rows = np.hstack([X, np.ones((len(X), 1))])
    out = []
    for k in range(m.shape[1]):
        precision = np.eye(rows.shape[1]) / prior_var + rows.T @ (rows / v[:, k, None])
        cov = np.linalg.inv(precision)
        mean = cov @ (rows.T @ (m[:, k] / v[:, k]))
        evidence = multivariate_normal(np.zeros(len(X)), prior_var * rows @ rows.T + np.diag(v[:, k])).logpdf(m[:, k])
        out.append((mean, cov, evidence))
    return out


def build(X, labels, prior_var=4.0, **options):
    with fg.Model() as model:
        betas = [MvNormal(f"beta{k}", np.zeros(3), prior_var * np.eye(3)) for k in range(3)]
        Softmax("y", betas, X, observed=labels, **options)
    return model


@pytest.mark.parametrize("method", APPROXIMATIONS)
def test_softmax_regression_becomes_independent_gaussian_regressions(method):
    """K = 3, N = 60, d = 2, β_k ~ N(0, σ²I): one sweep is exact: every q(β_k) and the free energy
    −Σ_k log N(m_{·k}; 0, σ²X̃X̃ᵀ + diag(v_{·k})) of every sweep."""
    X, labels = data()
    model = build(X, labels, operator=method, alpha_epsilon=ALPHA)
    result = fg.infer(model, algorithm="vmp", iterations=2)
    expected = regressions(labels, X, 4.0, method, ALPHA)
    for k, (mean, cov, _) in enumerate(expected):
        q = result.marginal(f"beta{k}")
        np.testing.assert_allclose(q.mean, mean, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(q.cov, cov, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(result.free_energy, -sum(e for _, _, e in expected), rtol=1e-11)


def test_the_operator_chosen_by_constraints_and_the_default_epsilon():
    """``constraints={"operator": ...}`` overrides the constructor's operator; α_ε = 0.1 unless given; the default
    operator is "moment"; integer labels and one-hot rows are the same data."""
    X, labels = data(N=25, seed=3)
    model = build(X, labels, prior_var=9.0)
    result = fg.infer(model, algorithm="vmp", iterations=1, constraints={"operator": {"y": "laplace"}})
    expected = regressions(labels, X, 9.0, "laplace", 0.1)
    np.testing.assert_allclose(result.marginal("beta1").mean, expected[1][0], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(result.free_energy[-1], -sum(e for _, _, e in expected), rtol=1e-11)
    default = fg.infer(model, algorithm="vmp", iterations=1)
    moment = regressions(labels, X, 9.0, "moment", 0.1)
    np.testing.assert_allclose(default.free_energy[-1], -sum(e for _, _, e in moment), rtol=1e-11)
    assert abs(default.free_energy[-1] - result.free_energy[-1]) > 1.0
    one_hot_run = fg.infer(build(X, np.eye(3)[labels], prior_var=9.0), algorithm="vmp", iterations=1)
    np.testing.assert_array_equal(one_hot_run.free_energy, default.free_energy)


@pytest.mark.parametrize("method", APPROXIMATIONS)
def test_a_latent_input_with_known_coefficients_is_gaussian_conditioning(method):
    """x ~ N(μ0, Σ0), known β_k = [w_k; b_k], y = 1: m_k = w_kᵀx + b_k + N(0, v_k) is linear-Gaussian, so q(x) after
    one sweep is the exact posterior (precision Σ0⁻¹ + Σ_k w_kw_kᵀ/v_k, weighted mean Σ0⁻¹μ0 + Σ_k (m_k − b_k)w_k/v_k)
    and the free energy −log N(m; Wμ0 + b, WΣ0Wᵀ + diag(v))."""
    betas = np.array([[1.0, 2.0, -0.5], [0.0, -1.0, 0.3], [2.0, 0.5, 0.0]])
    mu0, cov0 = np.array([0.5, -0.5]), np.array([[1.0, 0.3], [0.3, 2.0]])
    W, b = betas[:, :2], betas[:, 2]
    m, v = hand_pseudo(1, 0.25, method)
    with fg.Model() as model:
        x = MvNormal("x", mu0, cov0)
        Softmax("y", betas, x, observed=1, operator=method, alpha_epsilon=0.25)
    result = fg.infer(model, algorithm="vmp", iterations=2)
    precision = np.linalg.inv(cov0) + W.T @ (W / v[:, None])
    weighted_mean = np.linalg.solve(cov0, mu0) + W.T @ ((m - b) / v)
    q = result.marginal("x")
    np.testing.assert_allclose(q.cov, np.linalg.inv(precision), rtol=1e-11)
    np.testing.assert_allclose(q.mean, np.linalg.solve(precision, weighted_mean), rtol=1e-11)
    evidence = multivariate_normal(W @ mu0 + b, W @ cov0 @ W.T + np.diag(v)).logpdf(m)
    np.testing.assert_allclose(result.free_energy, -evidence, rtol=1e-11)


def test_labels_bound_later_and_copies_of_the_model_are_the_single_model():
    """A plan run on new labels (the kept pseudo-observations follow the data), and copies with per-copy labels over
    shared inputs (the plate sums per copy), equal a model built for those labels."""
    X, labels = data(N=30, seed=4)
    other = np.random.default_rng(9).integers(0, 3, 30)

    def alone(given):
        result = fg.infer(build(X, given, operator="laplace"), algorithm="vmp", iterations=1)
        return result.free_energy[-1], result.marginal("beta1").mean

    with fg.Model() as model:
        Softmax("y", [MvNormal(f"beta{k}", np.zeros(3), 4.0 * np.eye(3)) for k in range(3)], X, observed=True,
                batch_shape=(30,), operator="laplace")
    plan = fg.compile(model, algorithm="vmp")
    for given in (labels, other):
        result = fg.run(plan, data={"y": np.eye(3)[given]}, iterations=1)
        free_energy, mean = alone(given)
        assert result.free_energy[-1] == pytest.approx(free_energy, rel=1e-13)
        np.testing.assert_allclose(result.marginal("beta1").mean, mean, rtol=1e-12, atol=1e-14)
    with fg.Model(copies=2) as model:
        Softmax("y", [MvNormal(f"beta{k}", np.zeros(3), 4.0 * np.eye(3)) for k in range(3)], X,
                observed=fg.per_copy(np.stack([labels, other])), operator="laplace")
    result = fg.infer(model, algorithm="vmp", iterations=1)
    for copy, given in enumerate((labels, other)):
        free_energy, mean = alone(given)
        assert np.asarray(result.free_energy[-1])[copy] == pytest.approx(free_energy, rel=1e-13)
        np.testing.assert_allclose(result.marginal("beta1").mean[copy], mean, rtol=1e-12, atol=1e-14)


def test_the_model_holds_one_variable_per_class_and_the_one_hot_labels():
    X, labels = data(N=5)
    model = build(X, labels)
    assert model["y"].batch_shape == (5,) and model["y"].event_shape == (3,)
    np.testing.assert_array_equal(model.data["y"], np.eye(3)[labels])
    assert sorted(model.variables) == ["beta0", "beta1", "beta2", "y"]  # no tilt variable


# ----------------------------------------------------------------- named errors


def test_missing_labels_are_refused():
    with fg.Model():
        betas = [MvNormal(f"beta{k}", np.zeros(3), np.eye(3)) for k in range(3)]
        with pytest.raises(ModelError, match=r"Softmax 'y': observed= \(the labels\) is required.*StickBreakingLogistic"):
            Softmax("y", betas, np.ones((4, 2)))


def test_labels_outside_the_classes_are_refused_naming_the_variable():
    with pytest.raises(DataError, match=r"data for 'y': labels must lie in 0..2, got 3 at index \(1,\)"):
        build(np.ones((3, 2)), np.array([0, 3, 1]))
    with pytest.raises(DataError, match=r"data for 'y': labels must lie in 0..2, got -1"):
        build(np.ones((3, 2)), np.array([0, -1, 1]))
    with pytest.raises(DataError, match="not one-hot"):
        build(np.ones((2, 2)), np.array([[0.5, 0.5, 0.0], [1.0, 0.0, 0.0]]))


@pytest.mark.parametrize("bad", [0.0, -1.0, float("nan"), float("inf"), "0.1", True, [0.1, 0.2], [0.1, -0.1, 0.2],
                                 np.ones((3, 1))])
def test_a_bad_alpha_epsilon_is_refused(bad):
    with pytest.raises(ModelError, match="Softmax 'y': alpha_epsilon must be a positive number"):
        build(np.ones((3, 2)), np.array([0, 1, 2]), alpha_epsilon=bad)


def test_alpha_epsilon_per_class_is_accepted():
    build(np.ones((3, 2)), np.array([0, 1, 2]), alpha_epsilon=np.array([0.1, 0.2, 0.3]))


def test_an_unknown_operator_is_refused():
    with pytest.raises(ModelError, match="Softmax 'y': unknown operator 'probit'; operators: laplace, variational, "
                                         "moment, moment-original"):
        build(np.ones((3, 2)), np.array([0, 1, 2]), operator="probit")
    model = build(np.ones((3, 2)), np.array([0, 1, 2]))
    with pytest.raises(RuleNotFoundError, match="SoftmaxNode has no operator 'probit'; operators: laplace, moment, "
                                                "moment-original, variational"):
        fg.infer(model, algorithm="vmp", iterations=1, constraints={"operator": {"y": "probit"}})


def test_there_is_no_operator_free_rule_set():
    """No Pólya-Gamma rules: operator=None is refused by the constructor, and a node left without an operator
    (constraints mapping it to None, or the bare node type) finds no rule."""
    with pytest.raises(ModelError, match="Softmax 'y': operator must be one of .* no Pólya-Gamma rule set "
                                         r"\(use StickBreakingLogistic"):
        build(np.ones((3, 2)), np.array([0, 1, 2]), operator=None)
    model = build(np.ones((3, 2)), np.array([0, 1, 2]))
    with pytest.raises(RuleNotFoundError, match="no message rule for interface 'coefficients' of SoftmaxNode"):
        fg.infer(model, algorithm="vmp", iterations=1, constraints={"operator": {"y": None}})
    with pytest.raises(RuleNotFoundError, match="no message rule for interface 'input' of SoftmaxNode"):
        message(SoftmaxNode, "input", {"q_out": one_hot(0), "q_coefficients": CLASSES}, interfaces=INTERFACES)
    with pytest.raises(RuleNotFoundError, match="no average_energy rule for average energy of SoftmaxNode"):
        energy(SoftmaxNode, {"q_out": one_hot(0), "q_input": PointMass(np.zeros(2), 1), "q_coefficients": CLASSES},
               interfaces=INTERFACES)


def test_bad_coefficients_are_refused():
    with fg.Model():
        beta = MvNormal("beta", np.zeros((3, 3)), np.broadcast_to(np.eye(3), (3, 3, 3)))
        with pytest.raises(ModelError, match=r"one vector variable per class.*single variable 'beta'"):
            Softmax("y", beta, np.ones((3, 2)), observed=np.array([0, 1, 2]))
    labels = np.array([0, 1, 2])
    cases = [
        ((np.zeros((1, 3)), np.ones((3, 2))), {}, "K >= 2 classes need at least two coefficient vectors; got 1"),
        ((np.zeros((3, 4)), np.ones((3, 2))), {},
         r"input has dimension 2, but the coefficients have dimension 4 \(the last coefficient is the bias\)"),
        ((np.zeros((3, 3)), np.ones((3, 2))), {"intercept": False},
         r"input has dimension 2, but the coefficients have dimension 3 \(no intercept\)"),
    ]
    for (coefficients, features), options, pattern in cases:
        with fg.Model(), pytest.raises(ModelError, match=pattern):
            Softmax("y", coefficients, features, observed=labels[: len(coefficients)], **options)
    with fg.Model():
        mixed = [MvNormal("a", np.zeros(3), np.eye(3)), MvNormal("b", np.zeros(2), np.eye(2))]
        with pytest.raises(ModelError, match="different dimensions"):
            Softmax("y", mixed, np.ones((2, 2)), observed=np.array([0, 1]))


# ----------------------------------------------------------------- the predictive helper


MU = np.array([[0.5, -1.0, 0.2], [2.0, 0.0, -2.0], [0.0, 0.0, 0.0]])
VAR = np.array([[1.0, 0.5, 2.0], [0.1, 3.0, 0.5], [4.0, 4.0, 4.0]])


def test_predictive_probabilities_against_a_large_sample():
    """10⁵ draws against 10⁶ with another seed: within 5 standard errors (≤ 1/(2√n) each), and the standard
    errors it reports are below that bound; the probabilities sum to one; symmetric logits give 1/K."""
    estimate, error = predictive_probabilities(MU, VAR, n_samples=100_000, seed=0, return_standard_error=True)
    reference = predictive_probabilities(MU, VAR, n_samples=1_000_000, seed=123)
    assert np.all(error <= 0.5 / np.sqrt(100_000)) and np.all(error > 0)
    np.testing.assert_allclose(estimate, reference, rtol=0, atol=5 * (0.5 / np.sqrt(1e5) + 0.5 / np.sqrt(1e6)))
    assert np.max(np.abs(estimate - reference) / error) < 5
    np.testing.assert_allclose(estimate.sum(axis=-1), 1.0, rtol=1e-13)
    np.testing.assert_allclose(reference[2], 1 / 3, atol=3e-3)
    # the moments matter: not the plug-in softmax of the means
    plug_in = np.exp(MU[1]) / np.exp(MU[1]).sum()
    assert np.abs(reference[1] - plug_in).max() > 0.05


def test_predictive_probabilities_for_two_classes_against_quadrature():
    """K = 2: E[softmax(ψ)]_1 = E[σ(ψ₁ − ψ₀)], ψ₁ − ψ₀ ~ N(μ₁ − μ₀, v₀ + v₁), by scipy quad."""
    for means, variances in (([0.3, 1.2], [0.5, 2.0]), ([-1.0, 2.0], [3.0, 0.2]), ([0.0, 0.0], [0.01, 0.01])):
        difference, spread = means[1] - means[0], np.sqrt(sum(variances))
        exact = integrate.quad(lambda t, mu=difference, sd=spread: expit(t) * norm.pdf(t, mu, sd), -np.inf, np.inf,
                               epsabs=1e-13)[0]
        estimate, error = predictive_probabilities(np.array(means), np.array(variances), n_samples=200_000, seed=1,
                                                   return_standard_error=True)
        assert abs(estimate[1] - exact) < 5 * error[1] + 1e-12
        assert abs(estimate[0] - (1 - exact)) < 5 * error[0] + 1e-12


def test_predictive_probabilities_are_common_random_numbers():
    """The same seed gives the same draws whatever the chunk size and batch; zero variances give the exact softmax."""
    first = predictive_probabilities(MU, VAR, n_samples=30_001, seed=7, chunk=1_000)
    again = predictive_probabilities(MU, VAR, n_samples=30_001, seed=7, chunk=50_000)
    np.testing.assert_allclose(first, again, rtol=1e-13)
    single = predictive_probabilities(MU[1], VAR[1], n_samples=30_001, seed=7)
    np.testing.assert_allclose(single, first[1], rtol=1e-13)
    assert np.abs(predictive_probabilities(MU, VAR, n_samples=30_001, seed=8) - first).max() > 1e-5
    exact = predictive_probabilities(MU[0], np.zeros(3), n_samples=10, seed=0)
    np.testing.assert_allclose(exact, np.exp(MU[0]) / np.exp(MU[0]).sum(), rtol=1e-14)
    with pytest.raises(ValueError, match="variances finite and >= 0"):
        predictive_probabilities(MU, -VAR)
