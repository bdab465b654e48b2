"""MvLinear node N(out | M in + c, Σ): construction and its errors, the average energy, and small graphs.

Graphs: a prior and one observation against Gaussian conditioning (posterior, evidence, predictive);
a plate of observations with one matrix per row (Bayesian linear regression); an unrolled linear-Gaussian
state-space model observed through C = [[1, 0]] (rank-one likelihoods flow backwards) against a
hand-written Kalman filter and RTS smoother and against the stacked joint normal of states and data,
and against the compound MvGaussMarkovChain observed by one plated MvLinear node;
VMP with out and in both latent (free energy never increases, the means reach the exact ones, and with
the node in a sum-product cluster the free energy is the exact −log p(y)).
"""
import math

import numpy as np
import pytest
from scipy import integrate
from scipy.stats import multivariate_normal

import fgraph as fg
from fgraph.errors import DataError, ModelError, ModelTypeError
from fgraph.families import GaussianLikelihood, MvNormalMeanCovariance, PointMass
from fgraph.nodes import MvLinear, MvNormal, Normal
from fgraph.nodes.mv_gauss_markov_chain import MvGaussMarkovChain
from fgraph.nodes.mv_linear import MvLinearNode
from tests.rules.quadrature import normal_pdf
from tests.rules.tables import TOLERANCE, energy

LOG_2PI = math.log(2.0 * math.pi)
CLOSE = dict(rtol=1e-10, atol=1e-10)

M0 = np.array([0.3, -0.5])
P0 = np.array([[2.0, 0.3], [0.3, 1.0]])


# ---- construction ---------------------------------------------------------------------------------------


def test_event_and_batch_shapes_and_attributes():
    with fg.Model() as model:
        x = MvNormal("x", mean=M0, cov=P0)
        y = MvLinear("y", x, [[1.0, 2.0], [0.0, 1.0], [1.0, 1.0]], np.eye(3))
        z = MvLinear("z", x, [[1.0, 0.0]], [[0.5]], offset=[2.0], observed=np.ones((4, 1)))
    assert y.event_shape == (3,) and y.batch_shape == ()
    assert z.event_shape == (1,) and z.batch_shape == (4,) and z.observed
    node = model.nodes[1]
    assert isinstance(node, MvLinearNode) and (node.out_dim, node.in_dim) == (3, 2)
    np.testing.assert_array_equal(node.offset, np.zeros(3))  # offset=None is c = 0
    np.testing.assert_array_equal(model.nodes[2].offset, [2.0])


def test_a_matrix_per_plate_element_sets_the_batch():
    """M of shape (5, 1, 2), one row per observation, on a shared x: a plate of 5 without data yet."""
    with fg.Model():
        x = MvNormal("x", mean=M0, cov=P0)
        y = MvLinear("y", x, np.ones((5, 1, 2)), [[1.0]], observed=True)
    assert y.batch_shape == (5,) and y.event_shape == (1,)


def _build(matrix=((1.0, 2.0),), cov=((0.5,),), offset=None, observed=None, prior_dimension=2, **options):
    with fg.Model():
        x = MvNormal("x", mean=np.zeros(prior_dimension), cov=np.eye(prior_dimension))
        MvLinear("y", x, matrix, cov, offset=offset, observed=observed, **options)


@pytest.mark.parametrize("keywords, error, text", [
    (dict(matrix=[1.0, 2.0]), ModelError, r"node 'y': matrix must be a matrix M of shape \(m, n\)"),
    (dict(matrix=[["a", "b"]]), ModelTypeError, r"node 'y': matrix must be numeric"),
    (dict(matrix=[[1.0, np.nan]]), ModelError, r"node 'y': matrix contains NaN or infinite values"),
    (dict(cov=np.eye(2)), ModelError, r"node 'y': cov must be the 1x1 noise covariance of out .* got shape \(2, 2\)"),
    (dict(cov=[[np.inf]]), ModelError, r"node 'y': cov contains NaN or infinite values"),
    (dict(matrix=np.eye(2), cov=[[1.0, 0.5], [0.0, 1.0]]), ModelError, r"node 'y': cov must be symmetric.*symmetrise"),
    (dict(matrix=np.eye(2), cov=[[1.0, 2.0], [2.0, 1.0]]), ModelError,
     r"node 'y': cov must be positive definite \(smallest eigenvalue -1\)"),
    (dict(cov=[[0.0]]), ModelError, r"node 'y': cov must be positive definite"),
    (dict(offset=[1.0, 2.0]), ModelError, r"node 'y': offset must be a vector c of length 1"),
    (dict(offset=[np.nan]), ModelError, r"node 'y': offset contains NaN or infinite values"),
    (dict(matrix=np.ones((3, 1, 2)), cov=np.ones((2, 1, 1))), ModelError,
     r"node 'y': the batch axes of matrix \(3,\), cov \(2,\) and offset \(\) do not broadcast"),
    (dict(prior_dimension=3), ModelError,
     r"node 'y': matrix is 1x2, so input must be a vector of length 2, but variable 'x' has event shape \(3,\)"),
    (dict(observed=np.ones(2)), DataError, r"data for 'y'"),
    (dict(observed=np.array([[1.0], [np.nan]])), DataError, r"data for 'y' contains 1 NaN"),
    (dict(matrix=np.ones((3, 1, 2)), observed=np.ones((4, 1))), ModelError, r"variable 'y'"),
], ids=["matrix-vector", "matrix-strings", "matrix-nan", "cov-shape", "cov-inf", "cov-asymmetric", "cov-indefinite",
        "cov-singular", "offset-length", "offset-nan", "attribute-batches", "input-dimension", "data-shape", "data-nan",
        "batch-against-data"])
def test_invalid_attributes_and_data_are_named(keywords, error, text):
    with pytest.raises(error, match=text):
        _build(**keywords)


def test_a_scalar_input_is_refused():
    with fg.Model():
        x = Normal("x", mean=0.0, var=1.0)
        with pytest.raises(ModelError, match=r"input must be a vector of length 1, but variable 'x' has event shape \(\)"):
            MvLinear("y", x, [[2.0]], [[1.0]])


def test_the_node_checks_what_the_graph_connects():
    """A node placed by hand (no constructor checks): the graph asks the node, which names the interface."""
    with fg.Model() as model:
        x = MvNormal("x", mean=np.zeros(3), cov=np.eye(3))
        model.add_node(MvLinearNode, "f", {"in": x, "out": np.zeros(1)}, matrix=[[1.0, 2.0]], cov=[[1.0]])
    with pytest.raises(ModelError, match=r"node 'f' \(MvLinearNode\): matrix is 1x2, so 'in' must be a vector of length 2"):
        fg.infer(model)


def test_node_refuses_attribute_batches_larger_than_its_own():
    with pytest.raises(ValueError, match=r"node 'f': matrix, cov and offset have batch axes \(3,\)"):
        MvLinearNode("f", (2,), matrix=np.ones((3, 1, 2)), cov=[[1.0]])


# ---- average energy -------------------------------------------------------------------------------------

# U = ½ (m log 2π + log|Σ| + tr(Σ⁻¹ Cov[out]) + tr(MᵀΣ⁻¹M Cov[in]) + rᵀΣ⁻¹r), r = E[out] − M E[in] − c
# M = [[1, 2]], Σ = 1/2, c = 1
ROW = dict(matrix=[[1.0, 2.0]], cov=[[0.5]], offset=[1.0])
ENERGY_CASES = [
    # r = 4 − 5 − 1 = −2: ½ (log 2π + log ½ + 4/½)
    pytest.param(ROW, {"q_out": PointMass([4.0], 1), "q_in": PointMass([1.0, 2.0], 1)},
                 0.5 * (LOG_2PI - math.log(2.0) + 8.0), id="point-masses"),
    # + tr(MᵀM/½ · I) = 2 (1 + 4) = 10
    pytest.param(ROW, {"q_out": PointMass([4.0], 1), "q_in": MvNormalMeanCovariance([1.0, 2.0], np.eye(2))},
                 0.5 * (LOG_2PI - math.log(2.0) + 18.0), id="normal-in"),
    # + Var[out]/Σ = 3/½ = 6
    pytest.param(ROW, {"q_out": MvNormalMeanCovariance([4.0], [[3.0]]), "q_in": MvNormalMeanCovariance([1.0, 2.0], np.eye(2))},
                 0.5 * (LOG_2PI - math.log(2.0) + 24.0), id="normals"),
    # M = Σ = I, c = 0: 2 log 2π/2 + ½ (tr diag(1, 2) + tr I + |(1, 1)|²) = log 2π + ½ (3 + 2 + 2)
    pytest.param(dict(matrix=np.eye(2), cov=np.eye(2)),
                 {"q_out": MvNormalMeanCovariance([1.0, 1.0], np.diag([1.0, 2.0])), "q_in": MvNormalMeanCovariance([0.0, 0.0], np.eye(2))},
                 LOG_2PI + 3.5, id="square"),
]


@pytest.mark.parametrize("attributes, inputs, expected", ENERGY_CASES)
def test_average_energy(attributes, inputs, expected):
    np.testing.assert_allclose(energy(MvLinearNode, inputs, **attributes), expected, **TOLERANCE)


def test_energy_of_point_masses_is_minus_the_log_factor():
    rng = np.random.default_rng(3)
    matrix, offset = rng.normal(size=(2, 3)), rng.normal(size=2)
    cov = np.array([[0.7, 0.2], [0.2, 0.4]])
    x, y = rng.normal(size=3), rng.normal(size=2)
    value = energy(MvLinearNode, {"q_out": PointMass(y, 1), "q_in": PointMass(x, 1)}, matrix=matrix, cov=cov, offset=offset)
    np.testing.assert_allclose(value, -multivariate_normal(matrix @ x + offset, cov).logpdf(y), rtol=1e-13)


def test_energy_against_quadrature_in_one_dimension():
    """−∫∫ q(x) q(y) log N(y | a x + c, s) dx dy by adaptive quadrature."""
    a, c, s = -1.5, 0.3, 0.4
    q_in, q_out = (0.2, 0.8), (-0.5, 1.3)  # (mean, var)
    value = energy(MvLinearNode, {"q_out": MvNormalMeanCovariance([q_out[0]], [[q_out[1]]]),
                                  "q_in": MvNormalMeanCovariance([q_in[0]], [[q_in[1]]])}, matrix=[[a]], cov=[[s]], offset=[c])

    def integrand(y, x):  # plain floats: dblquad calls it some 10⁵ times
        log_factor = -0.5 * (LOG_2PI + math.log(s) + (y - a * x - c) ** 2 / s)
        return -normal_pdf(x, *q_in) * normal_pdf(y, *q_out) * log_factor

    half_x, half_y = 12 * math.sqrt(q_in[1]), 12 * math.sqrt(q_out[1])
    expected, _ = integrate.dblquad(integrand, q_in[0] - half_x, q_in[0] + half_x, q_out[0] - half_y,
                                    q_out[0] + half_y, epsabs=1e-12, epsrel=1e-11)
    np.testing.assert_allclose(value, expected, rtol=1e-9)


# ---- graphs: conjugate observation --------------------------------------------------------------------------


def conditioned(matrix, cov, offset, y):
    """Posterior mean, covariance and log p(y) of x ~ N(M0, P0), y ~ N(M x + c, Σ): Gaussian conditioning."""
    predicted_mean, predicted_cov = matrix @ M0 + offset, matrix @ P0 @ matrix.T + cov
    gain = P0 @ matrix.T @ np.linalg.inv(predicted_cov)
    return (M0 + gain @ (y - predicted_mean), P0 - gain @ matrix @ P0,
            multivariate_normal(predicted_mean, predicted_cov).logpdf(y), predicted_mean, predicted_cov)


@pytest.mark.parametrize("matrix, cov, offset, y", [
    (np.array([[1.0, 2.0]]), np.array([[0.5]]), np.array([0.2]), np.array([1.3])),  # rank-one message to x
    (np.array([[1.0, -0.5], [0.3, 2.0]]), np.array([[0.6, 0.2], [0.2, 0.5]]), np.array([0.4, -0.3]), np.array([1.0, -2.0])),
    (np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]), 0.3 * np.eye(3), np.zeros(3), np.array([0.5, -0.2, 0.1])),
], ids=["row", "square", "tall"])
def test_prior_and_observation_give_the_conditioned_normal_and_the_evidence(matrix, cov, offset, y):
    with fg.Model() as model:
        x = MvNormal("x", mean=M0, cov=P0)
        MvLinear("y", x, matrix, cov, offset=offset, observed=y)
    result = fg.infer(model, free_energy=True)
    mean, posterior_cov, log_evidence, predicted_mean, predicted_cov = conditioned(matrix, cov, offset, y)
    np.testing.assert_allclose(result.marginal("x").mean, mean, **CLOSE)
    np.testing.assert_allclose(result.marginal("x").cov, posterior_cov, **CLOSE)
    np.testing.assert_allclose(result.log_evidence, log_evidence, **CLOSE)
    np.testing.assert_allclose(result.free_energy[-1], -log_evidence, **CLOSE)
    # the predictive of y is the push-forward of the posterior: N(M m + c, M P Mᵀ + Σ)
    predictive = result.predictive("y")
    np.testing.assert_allclose(predictive.mean, matrix @ mean + offset, **CLOSE)
    np.testing.assert_allclose(predictive.cov, matrix @ posterior_cov @ matrix.T + cov, **CLOSE)


def test_latent_output_is_the_push_forward_of_the_prior():
    """x ~ N(M0, P0), z = M x + c + noise, nothing observed: q(z) = N(M M0 + c, M P0 Mᵀ + Σ), evidence 0."""
    matrix, cov, offset = np.array([[1.0, -0.5], [0.3, 2.0], [0.0, 1.0]]), 0.2 * np.eye(3), np.array([1.0, 0.0, -1.0])
    with fg.Model() as model:
        x = MvNormal("x", mean=M0, cov=P0)
        MvLinear("z", x, matrix, cov, offset=offset)
    result = fg.infer(model)
    np.testing.assert_allclose(result.marginal("z").mean, matrix @ M0 + offset, **CLOSE)
    np.testing.assert_allclose(result.marginal("z").cov, matrix @ P0 @ matrix.T + cov, **CLOSE)
    np.testing.assert_allclose(result.log_evidence, 0.0, atol=1e-12)


def test_regression_with_one_matrix_per_observation():
    """y_n = X_n w + c + N(0, Σ) with X_n (2, 3) per row of a plate of 6: the stacked linear-Gaussian model."""
    rng = np.random.default_rng(5)
    designs, offset = rng.normal(size=(6, 2, 3)), np.array([0.5, -0.5])
    cov = np.array([[0.4, 0.1], [0.1, 0.3]])
    prior_mean, prior_cov = np.zeros(3), 2.0 * np.eye(3)
    y = np.einsum("nij,j->ni", designs, [1.0, -1.0, 0.5]) + rng.normal(size=(6, 2)) * 0.5
    with fg.Model() as model:
        w = MvNormal("w", mean=prior_mean, cov=prior_cov)
        MvLinear("y", w, designs, cov, offset=offset, observed=y)
    result = fg.infer(model)
    stacked = designs.reshape(12, 3)
    noise = np.kron(np.eye(6), cov)
    predicted_cov = stacked @ prior_cov @ stacked.T + noise
    residual = y.reshape(-1) - np.tile(offset, 6) - stacked @ prior_mean
    gain = prior_cov @ stacked.T @ np.linalg.inv(predicted_cov)
    np.testing.assert_allclose(result.marginal("w").mean, prior_mean + gain @ residual, **CLOSE)
    np.testing.assert_allclose(result.marginal("w").cov, prior_cov - gain @ stacked @ prior_cov, **CLOSE)
    np.testing.assert_allclose(result.log_evidence,
                               multivariate_normal(np.tile(offset, 6) + stacked @ prior_mean, predicted_cov).logpdf(y.reshape(-1)),
                               **CLOSE)


# ---- graphs: a linear-Gaussian state-space model observed in part ---------------------------------------------

F = np.array([[1.0, 0.5], [-0.2, 0.9]])
Q = np.array([[0.3, 0.05], [0.05, 0.2]])
B = np.array([0.1, -0.2])  # the transition's offset
C = np.array([[1.0, 0.0]])  # the first component observed: y_t → x_t is a rank-one likelihood
R = np.array([[0.4]])


# a full observation of the state, for the runs whose free energy needs proper messages (see the VMP tests)
C_FULL = np.array([[1.0, 0.0], [0.5, 1.0]])
R_FULL = np.array([[0.4, 0.1], [0.1, 0.3]])


def state_space_model(y, C=C, R=R, offset=B):
    with fg.Model() as model:
        x = MvNormal("x_1", mean=M0, cov=P0)
        MvLinear("y_1", x, C, R, observed=y[0])
        for t in range(2, len(y) + 1):
            x = MvLinear(f"x_{t}", x, F, Q, offset=offset)
            MvLinear(f"y_{t}", x, C, R, observed=y[t - 1])
    return model


def kalman_smoother(y, C=C, R=R):
    """Kalman filter and RTS smoother written as a loop: smoothed means, covariances and log p(y)."""
    mean, cov, log_evidence = M0, P0, 0.0
    filtered, predicted = [], []
    for t in range(len(y)):
        if t > 0:
            mean, cov = F @ mean + B, F @ cov @ F.T + Q
        predicted.append((mean, cov))
        innovation = C @ cov @ C.T + R
        log_evidence += multivariate_normal(C @ mean, innovation).logpdf(y[t])
        gain = cov @ C.T @ np.linalg.inv(innovation)
        mean, cov = mean + gain @ (y[t] - C @ mean), cov - gain @ C @ cov
        filtered.append((mean, cov))
    smoothed = [filtered[-1]]
    for t in range(len(y) - 2, -1, -1):
        (mean, cov), (next_mean, next_cov) = filtered[t], smoothed[0]
        gain = cov @ F.T @ np.linalg.inv(predicted[t + 1][1])
        smoothed.insert(0, (mean + gain @ (next_mean - predicted[t + 1][0]),
                            cov + gain @ (next_cov - predicted[t + 1][1]) @ gain.T))
    return [m for m, _ in smoothed], [P for _, P in smoothed], log_evidence


def stacked_joint(y, C=C, R=R):
    """Condition the joint normal of (x_1..x_T, y_1..y_T) built by stacking: means, covariances, log p(y)."""
    steps, d = len(y), 2
    mean = np.zeros(steps * d)
    cov = np.zeros((steps * d, steps * d))
    block = lambda t: slice(d * t, d * (t + 1))  # noqa: E731
    mean[block(0)], cov[block(0), block(0)] = M0, P0
    for t in range(1, steps):  # x_t = F x_{t−1} + B + w_t: Cov(x_t, x_s) = F Cov(x_{t−1}, x_s) for s < t
        mean[block(t)] = F @ mean[block(t - 1)] + B
        for s in range(t):
            cov[block(t), block(s)] = F @ cov[block(t - 1), block(s)]
            cov[block(s), block(t)] = cov[block(t), block(s)].T
        cov[block(t), block(t)] = F @ cov[block(t - 1), block(t - 1)] @ F.T + Q
    observe = np.kron(np.eye(steps), C)
    data_mean, data_cov = observe @ mean, observe @ cov @ observe.T + np.kron(np.eye(steps), R)
    cross = cov @ observe.T
    gain = cross @ np.linalg.inv(data_cov)
    posterior_mean = mean + gain @ (y.reshape(-1) - data_mean)
    posterior_cov = cov - gain @ cross.T
    return ([posterior_mean[block(t)] for t in range(steps)], [posterior_cov[block(t), block(t)] for t in range(steps)],
            multivariate_normal(data_mean, data_cov).logpdf(y.reshape(-1)))


@pytest.mark.parametrize("steps", [2, 5])
def test_partially_observed_chain_equals_kalman_smoother_and_stacked_joint(steps):
    y = np.random.default_rng(steps).normal(size=(steps, 1))
    result = fg.infer(state_space_model(y))
    assert result.plan.exact
    means, covs, log_evidence = stacked_joint(y)
    kalman_means, kalman_covs, kalman_evidence = kalman_smoother(y)
    np.testing.assert_allclose(kalman_evidence, log_evidence, **CLOSE)  # the two references agree
    np.testing.assert_allclose(result.log_evidence, log_evidence, **CLOSE)
    for t in range(steps):
        marginal = result.marginal(f"x_{t + 1}")
        for reference_mean, reference_cov in ((means[t], covs[t]), (kalman_means[t], kalman_covs[t])):
            np.testing.assert_allclose(marginal.mean, reference_mean, **CLOSE, err_msg=f"mean of x_{t + 1}")
            np.testing.assert_allclose(marginal.cov, reference_cov, **CLOSE, err_msg=f"covariance of x_{t + 1}")
    for name, value in result.evidence_per_variable().items():
        np.testing.assert_allclose(value, log_evidence, **CLOSE, err_msg=name)


def test_unrolled_chain_equals_the_compound_chain_observed_by_a_plate():
    """The same model as one MvGaussMarkovChain variable x of batch (T,) observed by one plated node,
    MvLinear("y", x, C, R, observed=y) with y of shape (T, 1): equal marginals and evidence."""
    y = np.random.default_rng(9).normal(size=(6, 1))
    with fg.Model() as model:
        x = MvGaussMarkovChain("x", F, Q, M0, P0, length=6)
        MvLinear("y", x, C, R, observed=y)
    compound = fg.infer(model)
    unrolled = fg.infer(state_space_model(y, offset=None))
    np.testing.assert_allclose(compound.log_evidence, unrolled.log_evidence, **CLOSE)
    for t in range(6):
        np.testing.assert_allclose(compound.marginal("x").mean[t], unrolled.marginal(f"x_{t + 1}").mean, **CLOSE)
        np.testing.assert_allclose(compound.marginal("x").cov[t], unrolled.marginal(f"x_{t + 1}").cov, **CLOSE)


def test_two_step_chain_passes_a_rank_one_likelihood_through_the_transition():
    """In the two-step chain the message from y_2 reaches x_2's transition node as a rank-one
    GaussianLikelihood on ``out`` (what the test above checks the results of), and the message that
    node sends back to x_1 is still improper: the transition is invertible, but C sees one direction."""
    result = fg.infer(state_space_model(np.array([[0.4], [-1.1]])))
    steps = str(result.schedule).splitlines()
    assert any("x_2 (MvLinearNode) -> in  [m_out]  fgraph.rules.mv_linear.in.sum_product" in step for step in steps), steps
    backwards, incoming = result.messages("x_2", "in")[0], result.messages("x_2", "out")[1]
    assert isinstance(incoming, GaussianLikelihood) and np.linalg.matrix_rank(incoming.precision) == 1
    assert isinstance(backwards, GaussianLikelihood) and np.linalg.matrix_rank(backwards.precision) == 1


# ---- VMP with out and in latent ---------------------------------------------------------------------------


def vmp_chain(y, C=C, R=R, **options):
    init = {f"x_{t}": MvNormalMeanCovariance(np.zeros(2), np.eye(2)) for t in range(1, len(y) + 1)}
    return fg.infer(state_space_model(y, C, R), algorithm="vmp", init=init, **options)


@pytest.mark.parametrize("C, R", [(C, R), (C_FULL, R_FULL)], ids=["partial", "full"])
def test_mean_field_free_energy_never_increases_and_reaches_the_exact_means(C, R):
    """Mean-field over x_1..x_T of a Gaussian chain: coordinate descent on F; its fixed point has the exact
    posterior means (a property of mean-field on Gaussians) and −F below log p(y)."""
    y = np.random.default_rng(4).normal(size=(4, len(C)))
    result = vmp_chain(y, C, R, iterations=300, tol=1e-13)
    free_energy = np.array(result.free_energy)
    assert len(free_energy) > 5
    assert np.all(np.diff(free_energy) <= 1e-10 * np.abs(free_energy[1:])), np.diff(free_energy)
    means, _, log_evidence = stacked_joint(y, C, R)
    for t in range(4):
        np.testing.assert_allclose(result.marginal(f"x_{t + 1}").mean, means[t], rtol=1e-6, atol=1e-6)
    assert -free_energy[-1] < log_evidence - 1e-3  # mean-field is not exact here: a strict bound


@pytest.mark.parametrize("factorization", ["bp", [("out", "in")]], ids=["bp", "structured"])
def test_sum_product_cluster_inside_vmp_gives_the_exact_free_energy(factorization):
    """Under algorithm="vmp" with every MvLinear transition one (out, in) cluster, the chain is solved exactly
    (the other nodes have one latent interface each): −F = log p(y) and the exact marginals.

    With a full observation of each state: the free energy of a sum-product cluster next to mean-field
    nodes takes E_q[log μ] of its incoming messages, which fgraph's GaussianLikelihood does not provide
    (its cross-entropy asks for a log-partition), so a partial observation cannot be run this way.
    """
    y = np.random.default_rng(6).normal(size=(3, 2))
    constraints = {"factorization": {f"x_{t}": factorization for t in (2, 3)}}
    result = vmp_chain(y, C_FULL, R_FULL, constraints=constraints, iterations=20, tol=1e-12)
    means, covs, log_evidence = stacked_joint(y, C_FULL, R_FULL)
    np.testing.assert_allclose(result.free_energy[-1], -log_evidence, **CLOSE)
    for t in range(3):
        np.testing.assert_allclose(result.marginal(f"x_{t + 1}").mean, means[t], **CLOSE)
        np.testing.assert_allclose(result.marginal(f"x_{t + 1}").cov, covs[t], **CLOSE)
