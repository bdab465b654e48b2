"""GaussianMixture node: the average energy against Monte Carlo and at point masses, DSL validation."""
import numpy as np
import pytest
from scipy import stats

import fgraph as fg
from fgraph.errors import ModelError
from fgraph.families import Categorical, MvNormalMeanCovariance, PointMass
from fgraph.families.normal_wishart import NormalWishart as NormalWishartFamily
from fgraph.nodes import Categorical as CategoricalNode, GaussianMixture, NormalWishart, Dirichlet
from fgraph.nodes.gaussian_mixture import GaussianMixtureNode
from tests.rules.tables import energy

RNG = np.random.default_rng(7)
K, d, N = 2, 2, 3
PARAMETERS = NormalWishartFamily(np.array([[[0.5, -0.5]], [[-1.0, 1.0]]]), np.array([[1.5], [0.7]]),
                                 np.array([[[[0.6, 0.1], [0.1, 0.4]]], [[[1.0, -0.2], [-0.2, 0.8]]]]),
                                 np.array([[4.0], [2.5]]))
X = RNG.normal(size=(N, d))
COUNT = 200_000


def monte_carlo_log_likelihood(x_draws):
    """E log N(x | μ_k, Λ_k⁻¹) per (k, n) over q(θ) and draws of x (COUNT, N, d)."""
    means, precisions = PARAMETERS.sample(np.random.default_rng(1), COUNT)  # (S, K, 1, d), (S, K, 1, d, d)
    difference = x_draws[:, None, :, :] - means  # (S, K, N, d)
    log_det = np.linalg.slogdet(precisions)[1]  # (S, K, 1)
    values = 0.5 * log_det - 0.5 * d * np.log(2 * np.pi) - 0.5 * np.einsum("skni,skij,sknj->skn", difference,
                                                                            precisions[:, :, 0], difference)
    return values.mean(0), values.std(0) / np.sqrt(COUNT)


def test_energy_with_known_points_against_monte_carlo():
    probabilities = RNG.dirichlet(np.ones(K), size=N)
    value = energy(GaussianMixtureNode, {"q_out": PointMass(X, 1), "q_switch": Categorical(probabilities),
                                         "q_parameters": PARAMETERS}, batch_shape=(K, N), plate_shape=(N,))
    assert value.shape == (K, N)  # one term per (component, point): the node's batch
    expected, error = monte_carlo_log_likelihood(np.broadcast_to(X, (COUNT, N, d)))
    assert np.all(np.abs(value - (-probabilities.T * expected)) < 5 * probabilities.T * error + 1e-12)


def test_energy_with_latent_points_against_monte_carlo():
    probabilities = RNG.dirichlet(np.ones(K), size=N)
    covariance = np.array([[0.5, 0.2], [0.2, 0.3]])
    draws = X + np.random.default_rng(3).multivariate_normal(np.zeros(d), covariance, size=(COUNT, N))
    value = energy(GaussianMixtureNode, {"q_out": MvNormalMeanCovariance(X, np.broadcast_to(covariance, (N, d, d))),
                                         "q_switch": Categorical(probabilities), "q_parameters": PARAMETERS},
                   batch_shape=(K, N), plate_shape=(N,))
    expected, error = monte_carlo_log_likelihood(draws)
    assert np.all(np.abs(value - (-probabilities.T * expected)) < 5 * probabilities.T * error + 1e-12)


def test_energy_at_point_masses_is_minus_the_log_factor():
    """With z one-hot and θ nearly a point (β, ν → ∞ with ν W fixed), U → −log N(x | μ_k, Λ_k⁻¹) of the chosen k."""
    big = 1e9
    precision = np.array([[2.0, 0.3], [0.3, 1.0]])
    sharp = NormalWishartFamily(np.array([[0.0, 0.0], [1.0, 2.0]]), np.array([big, big]),
                                np.array([precision / big, precision / big]), np.array([big, big]))
    x = np.array([0.4, 1.1])
    value = energy(GaussianMixtureNode, {"q_out": PointMass(x, 1), "q_switch": PointMass(np.array([0.0, 1.0]), 1),
                                         "q_parameters": sharp}, batch_shape=(K,), plate_shape=())
    expected = -stats.multivariate_normal.logpdf(x, [1.0, 2.0], np.linalg.inv(precision))
    np.testing.assert_allclose(value, [0.0, expected], rtol=1e-7)


def test_the_constructor_checks_its_connections():
    with fg.Model():
        pi = Dirichlet("pi", np.ones(2))
        z = CategoricalNode("z", p=pi, batch_shape=(4,))
        theta = NormalWishart("theta", np.zeros(2), 1.0, np.eye(2), 3.0, batch_shape=(2, 1))
        with pytest.raises(ModelError, match="last axis of d = 2"):
            GaussianMixture("x", switch=z, parameters=theta, observed=np.zeros((4, 3)))
        flat = NormalWishart("flat", np.zeros(2), 1.0, np.eye(2), 3.0, batch_shape=(2,))
        with pytest.raises(ModelError, match=r"batch shape \(2, 1\)"):
            GaussianMixture("y", switch=z, parameters=flat, observed=np.zeros((4, 2)))
        with pytest.raises(ModelError, match="normal-Wishart"):
            GaussianMixture("w", switch=z, parameters=np.zeros(2), observed=np.zeros((4, 2)))
        with pytest.raises(ModelError, match="power"):
            GaussianMixture("v", switch=z, parameters=theta, observed=np.zeros((4, 2)), power=1.5)
    with fg.Model():
        with pytest.raises(ModelError, match="df must be greater than d - 1 = 1"):
            NormalWishart("bad_df", np.zeros(2), 1.0, np.eye(2), 1.0)
        with pytest.raises(ModelError, match="scale"):
            NormalWishart("singular", np.zeros(2), 1.0, np.diag([1.0, 0.0]), 3.0)
        with pytest.raises(ModelError, match="precision_scale"):
            NormalWishart("negative", np.zeros(2), -1.0, np.eye(2), 3.0)


@pytest.mark.parametrize("copies", [0, 3])
@pytest.mark.parametrize("latent", [False, True])
def test_the_expected_log_likelihoods_equal_the_direct_quadratic_form(copies, latent):
    """Φ @ C (one matrix product over the plate) against ½ E log|Λ_k| − (d/2) log 2π − ½ (d/β_k + ν_k ((x̄ − m_k)ᵀ
    W_k (x̄ − m_k) + tr(W_k Σ_x))) point by point, for data and for a latent x, with and without copies."""
    from fgraph.nodes.gaussian_mixture import expected_log_likelihoods

    rng = np.random.default_rng(5)
    n, components = 7, 3
    copy_shape = (copies,) if copies else ()
    location = rng.normal(size=copy_shape + (components, 1, d))
    beta = rng.uniform(0.5, 2.0, copy_shape + (components, 1))
    root = rng.normal(size=copy_shape + (components, 1, d, d))
    scale = root @ np.swapaxes(root, -1, -2) + np.eye(d)
    df = rng.uniform(2.5, 6.0, copy_shape + (components, 1))
    q_parameters = NormalWishartFamily(location, beta, scale, df)
    mean = rng.normal(size=(n, d))
    if latent:
        root = rng.normal(size=(n, d, d))
        covariance = 0.3 * root @ np.swapaxes(root, -1, -2) + 0.1 * np.eye(d)
        q_out = MvNormalMeanCovariance(mean, covariance)
    else:
        covariance, q_out = np.zeros((n, d, d)), PointMass(mean, 1)
    node = GaussianMixtureNode("node", batch_shape=copy_shape + (components, n), plate_shape=(n,))
    node.copy_ndim = len(copy_shape)
    result = expected_log_likelihoods(q_out, q_parameters, node)
    mean_logdet = np.asarray(q_parameters.mean_logdet)
    for c in np.ndindex(copy_shape):
        for k in range(components):
            W, m = scale[c + (k, 0)], location[c + (k, 0)]
            difference = mean - m
            quadratic = np.einsum("ni,ij,nj->n", difference, W, difference) + np.einsum("ij,nji->n", W, covariance)
            direct = (0.5 * mean_logdet[c + (k, 0)] - 0.5 * d * np.log(2 * np.pi)
                      - 0.5 * (d / beta[c + (k, 0)] + df[c + (k, 0)] * quadratic))
            got = result[c + (0,) if copies else ()][..., k] if copies else result[..., k]
            np.testing.assert_allclose(got, direct, rtol=1e-12, atol=1e-12)




@pytest.mark.parametrize("copies", [0, 3])
def test_the_summed_energy_equals_the_sum_of_the_energies(copies):
    """The free energy reads the node's energy summed over the plate from the M-step's weighted sums
    (``batch_total``); it equals the per-element energies summed, per copy."""
    from fgraph.nodes.gaussian_mixture import _gaussian_mixture_energy, _gaussian_mixture_energy_total

    rng = np.random.default_rng(8)
    n, components = 9, 3
    copy_shape = (copies,) if copies else ()
    root = rng.normal(size=copy_shape + (components, 1, d, d))
    q_parameters = NormalWishartFamily(rng.normal(size=copy_shape + (components, 1, d)),
                                       rng.uniform(0.5, 2.0, copy_shape + (components, 1)),
                                       root @ np.swapaxes(root, -1, -2) + np.eye(d),
                                       rng.uniform(2.5, 6.0, copy_shape + (components, 1)))
    weights = rng.dirichlet(np.ones(components), size=copy_shape + ((1,) if copies else ()) + (n,))
    q_switch, q_out = Categorical(weights), PointMass(rng.normal(size=(n, d)), 1)
    node = GaussianMixtureNode("node", batch_shape=copy_shape + (components, n), plate_shape=(n,))
    node.copy_ndim = len(copy_shape)
    per_element = _gaussian_mixture_energy(q_out, q_switch, q_parameters, node)  # copies + (K, n)
    total, count = _gaussian_mixture_energy_total(q_out, q_switch, q_parameters, node)
    assert count == components * n
    np.testing.assert_allclose(total, per_element.reshape(copy_shape + (-1,)).sum(-1), rtol=1e-12)
