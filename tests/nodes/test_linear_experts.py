"""LinearExperts node: DSL validation and the average energy against Monte Carlo."""
import numpy as np
import pytest

import fgraph as fg
from fgraph.errors import ModelError
from fgraph.families import Categorical, MvNormalMeanCovariance, PointMass
from fgraph.families.matrix_normal_gamma import MatrixNormalGamma as MatrixNormalGammaFamily
from fgraph.families.mixture import Mixture
from fgraph.nodes import Categorical as CategoricalNode, LinearExperts, MatrixNormalGamma
from fgraph.nodes.linear_experts import LinearExpertsNode
from tests.rules.tables import energy

RNG = np.random.default_rng(5)
K, h, d, N = 2, 2, 1, 3
PARAMETERS = MatrixNormalGammaFamily(RNG.normal(size=(K, 1, h, d + 1)), np.array([[[[0.5, 0.1], [0.1, 0.3]]],
                                                                                 [[[0.2, 0.0], [0.0, 0.4]]]]),
                                     np.array([[[2.0, 3.0]], [[4.0, 1.5]]]), np.array([[[1.0, 2.0]], [[0.5, 1.0]]]))
X = RNG.normal(size=(N, d))


def monte_carlo_log_likelihood(y_draws, count=400_000):
    """E log N(y | A_k x̃_n, Λ_k⁻¹) per (k, n) over q(θ) and the given draws of y (count, K, N, h)."""
    matrix, precisions = PARAMETERS.sample(np.random.default_rng(1), count)  # (count, K, 1, h, D), (count, K, 1, h)
    xt = np.concatenate([X, np.ones((N, 1))], axis=1)
    predicted = np.einsum("skid,nd->skni", matrix[:, :, 0], xt)
    lam = precisions[:, :, 0][:, :, None, :]
    values = np.sum(0.5 * np.log(lam / (2 * np.pi)) - 0.5 * lam * (y_draws - predicted) ** 2, axis=-1)
    return values.mean(0), values.std(0) / np.sqrt(count)


def test_structured_energy_against_monte_carlo():
    gamma = RNG.dirichlet(np.ones(K), size=N)
    means, scales = RNG.normal(size=(K, N, h)), np.array([0.3, 0.7])
    joint = Mixture.create(np.log(gamma), [MvNormalMeanCovariance(means[k], scales[k] * np.eye(h)) for k in range(K)])
    value = energy(LinearExpertsNode, {"q_out_switch": joint, "q_input": PointMass(X, 1), "q_parameters": PARAMETERS},
                   batch_shape=(K, N), plate_shape=(N,))
    assert value.shape == (K, N)  # one term per (expert, point): the node's batch
    draws = means[None] + np.sqrt(scales)[None, :, None, None] * np.random.default_rng(2).normal(
        size=(400_000, K, N, h))
    expected, error = monte_carlo_log_likelihood(draws)
    assert np.all(np.abs(value - (-gamma.T * expected)) < 5 * gamma.T * error + 1e-12)


def test_mean_field_energy_with_a_known_output_against_monte_carlo():
    y = RNG.normal(size=(N, h))
    probabilities = RNG.dirichlet(np.ones(K), size=N)
    value = energy(LinearExpertsNode, {"q_out": PointMass(y, 1), "q_switch": Categorical(probabilities),
                                       "q_input": PointMass(X, 1), "q_parameters": PARAMETERS},
                   batch_shape=(K, N), plate_shape=(N,))
    expected, error = monte_carlo_log_likelihood(np.broadcast_to(y, (1, K, N, h)))
    assert np.all(np.abs(value - (-probabilities.T * expected)) < 5 * probabilities.T * error + 1e-12)


def model_pieces(K=2, N=4, theta_batch=None):
    with fg.Model() as model:
        z = CategoricalNode("z", p=np.full(K, 1.0 / K), batch_shape=(N,))
        theta = MatrixNormalGamma("theta", np.zeros((2, 1, h, d + 1)), 10.0, 2.0, 1.0,
                                  batch_shape=theta_batch or (2, 1))
    return model, z, theta


def test_shapes():
    model, z, theta = model_pieces()
    with model:
        x1 = LinearExperts("x1", switch=z, input=np.zeros((4, d)), parameters=theta)
    assert x1.batch_shape == (4,) and x1.event_shape == (h,)
    node = model.nodes[-1]
    assert node.batch_shape == (2, 4)
    assert node.interface_batch_shape("out") == (4,) and node.interface_batch_shape("parameters") == (2, 1)


@pytest.mark.parametrize("arguments, message", [
    (lambda z, theta: dict(switch=z, input=np.zeros((4, d + 1)), parameters=theta), "D = 2 columns"),
    (lambda z, theta: dict(switch=z, input=np.zeros((5, d)), parameters=theta), "do not broadcast"),
    (lambda z, theta: dict(switch=z, input=np.zeros((4, d)), parameters=z), "event shape"),
    (lambda z, theta: dict(switch=z, input=z, parameters=theta), "must be known"),
], ids=["input-width", "plate-sizes", "parameters-not-mng", "latent-input"])
def test_bad_connections_are_reported(arguments, message):
    model, z, theta = model_pieces()
    with model:
        with pytest.raises(ModelError, match=message):
            LinearExperts("x1", **arguments(z, theta))


def test_parameters_batch_must_have_one_pair_per_expert():
    model, z, theta = model_pieces(K=3)
    with model:
        with pytest.raises(ModelError, match=r"need batch shape \(3, 1\)"):
            LinearExperts("x1", switch=z, input=np.zeros((4, d)), parameters=theta)


@pytest.mark.parametrize("outer_products", [False, True])
def test_no_plate_by_experts_by_d_by_d_array(outer_products, monkeypatch):
    """The parameters' message and the expected factor over a plate of N use memory of order N (K + D), far below
    the N × K × D × D numbers of per-point messages (traced allocations); with the rows' outer products (N × D²
    numbers, within ``ROW_OUTER_BUDGET``) of order N (K + D²)."""
    import tracemalloc

    import fgraph.families.linalg
    from tests.rules.tables import message
    if not outer_products:
        monkeypatch.setattr(fgraph.families.linalg, "ROW_OUTER_BUDGET", 0)
    rng = np.random.default_rng(0)
    N, K, D, h = 4000, 10, 12, 2
    x, y = rng.normal(size=(N, D - 1)), rng.normal(size=(N, h))
    gamma = rng.dirichlet(np.ones(K), size=N)
    parameters = MatrixNormalGammaFamily(rng.normal(size=(K, 1, h, D)), np.eye(D), 2.0, 1.0)
    inputs = {"q_out": PointMass(y, 1), "q_switch": Categorical(gamma), "q_input": PointMass(x, 1)}
    node = dict(batch_shape=(K, N), plate_shape=(N,))
    message(LinearExpertsNode, "parameters", inputs, **node)  # warm up (imports, caches)
    tracemalloc.start()
    message(LinearExpertsNode, "parameters", inputs, **node)
    message(LinearExpertsNode, "switch", {"q_out": PointMass(y, 1), "q_parameters": parameters,
                                          "q_input": PointMass(x, 1)}, **node)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < N * K * D * D * 8 / (4 if outer_products else 10), peak


def test_a_known_switch_must_be_one_hot():
    model, z, theta = model_pieces()
    with model:
        with pytest.raises(ModelError, match="one-hot"):
            LinearExperts("x1", switch=np.full((4, 2), 0.5), input=np.zeros((4, d)), parameters=theta)
