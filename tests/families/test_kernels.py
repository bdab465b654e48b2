"""Kernels against scikit-learn's, their log-hyperparameter gradients against finite differences, bad input."""
import numpy as np
import pytest
from sklearn.gaussian_process import kernels as sk

from fgraph.errors import DataError, ModelError
from fgraph.families.kernels import (
    Constant, ExponentiatedQuadratic, Kernel, Linear, Matern32, Matern52, ProductKernel, SumKernel,
)

RNG = np.random.default_rng(3)
X = RNG.normal(size=(9, 3))
Z = RNG.normal(size=(5, 3))

PAIRS = [
    pytest.param(ExponentiatedQuadratic(2.0, 0.7), sk.ConstantKernel(2.0) * sk.RBF(0.7), id="eq"),
    pytest.param(ExponentiatedQuadratic(0.5, [0.5, 1.0, 2.0]), sk.ConstantKernel(0.5) * sk.RBF([0.5, 1.0, 2.0]),
                 id="eq-ard"),
    pytest.param(Matern32(1.3, 1.1), sk.ConstantKernel(1.3) * sk.Matern(1.1, nu=1.5), id="matern32"),
    pytest.param(Matern52(0.8, [1.5, 0.4, 0.9]), sk.ConstantKernel(0.8) * sk.Matern([1.5, 0.4, 0.9], nu=2.5),
                 id="matern52-ard"),
    pytest.param(Linear(0.6), sk.ConstantKernel(0.6) * sk.DotProduct(sigma_0=0.0), id="linear"),
    pytest.param(Linear(0.6) + Constant(1.7), sk.ConstantKernel(0.6) * sk.DotProduct(sigma_0=0.0)
                 + sk.ConstantKernel(1.7), id="linear-plus-bias"),
    pytest.param(Matern52(1.2, 0.9) * ExponentiatedQuadratic(0.5, 2.0),
                 sk.ConstantKernel(0.6) * sk.Matern(0.9, nu=2.5) * sk.RBF(2.0), id="product"),
]


@pytest.mark.parametrize("ours, theirs", PAIRS)
def test_matrices_and_diagonals_equal_scikit_learn(ours, theirs):
    np.testing.assert_allclose(ours(X), theirs(X), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(ours(X, Z), theirs(X, Z), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(ours.diagonal(X), theirs.diag(X), rtol=1e-12)


KERNELS = [p.values[0] for p in PAIRS] + [SumKernel(Matern32(1.0, [0.3, 2.0, 1.0]), Constant(0.2)),
                                         Constant(0.5) + (Linear(0.4) + ExponentiatedQuadratic(0.8, 1.5))]


def _finite_difference(kernel: Kernel, value, step=1e-6):
    theta = kernel.log_parameters
    gradient = np.empty(theta.size)
    for p in range(theta.size):
        shift = np.zeros(theta.size)
        shift[p] = step
        gradient[p] = (value(kernel.with_log_parameters(theta + shift))
                       - value(kernel.with_log_parameters(theta - shift))) / (2 * step)
    return gradient


@pytest.mark.parametrize("kernel", KERNELS, ids=[type(k).__name__ for k in KERNELS])
def test_contracted_gradients_equal_finite_differences(kernel):
    weights = RNG.normal(size=(9, 5))
    expected = _finite_difference(kernel, lambda k: np.sum(weights * k(X, Z)))
    np.testing.assert_allclose(kernel.contract_gradients(X, Z, weights), expected, rtol=1e-6, atol=1e-8)
    square = RNG.normal(size=(9, 9))
    expected = _finite_difference(kernel, lambda k: np.sum(square * k(X)))
    np.testing.assert_allclose(kernel.contract_gradients(X, None, square), expected, rtol=1e-6, atol=1e-8)
    vector = RNG.normal(size=9)
    expected = _finite_difference(kernel, lambda k: np.sum(vector * k.diagonal(X)))
    np.testing.assert_allclose(kernel.contract_diagonal_gradients(X, vector), expected, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("kernel", KERNELS, ids=[type(k).__name__ for k in KERNELS])
def test_log_parameters_round_trip(kernel):
    again = kernel.with_log_parameters(kernel.log_parameters)
    assert again == kernel and len(kernel.parameter_names) == kernel.log_parameters.size
    np.testing.assert_allclose(again(X), kernel(X), rtol=0, atol=0)


def test_coincident_inputs_give_the_variance_and_finite_gradients():
    twins = np.array([[0.3, 1.0], [0.3, 1.0]])
    for kernel in (Matern32(1.5, 0.5), Matern52(1.5, 0.5), ExponentiatedQuadratic(1.5, 0.5)):
        np.testing.assert_allclose(kernel(twins), 1.5, rtol=1e-14)
        assert np.all(np.isfinite(kernel.contract_gradients(twins, None, np.ones((2, 2)))))


@pytest.mark.parametrize("build, words", [
    (lambda: ExponentiatedQuadratic(0.0, 1.0), "variance must be positive"),
    (lambda: Matern32(1.0, -2.0), "lengthscale must be positive"),
    (lambda: Matern52(1.0, [1.0, np.nan]), "lengthscale must be positive"),
    (lambda: Linear([1.0, 2.0]), "one positive number"),
    (lambda: Constant("a"), "positive number"),
    (lambda: ExponentiatedQuadratic(1.0, [1.0, 2.0]) + Matern32(1.0, [1.0, 2.0, 3.0]), "different input dimensions"),
])
def test_bad_hyperparameters_are_named(build, words):
    with pytest.raises(ModelError, match=words):
        build()


@pytest.mark.parametrize("inputs, words", [
    (np.zeros((0, 3)), "N = 0"),
    (np.array([[0.0, np.nan, 1.0]]), "not finite"),
    (np.zeros((2, 2, 2)), "shape"),
])
def test_bad_inputs_are_named(inputs, words):
    with pytest.raises(DataError, match=words):
        ExponentiatedQuadratic()(inputs)


def test_ard_lengthscales_fix_the_input_dimension():
    with pytest.raises(DataError, match="expects 2"):
        ExponentiatedQuadratic(1.0, [1.0, 2.0])(X)
    assert isinstance(ExponentiatedQuadratic() * Linear(), ProductKernel)


@pytest.mark.parametrize("kernel", KERNELS, ids=[type(k).__name__ for k in KERNELS])
def test_input_gradients_equal_finite_differences(kernel):
    weights = RNG.normal(size=(9, 5))
    analytic = kernel.contract_input_gradients(X, Z, weights)
    numeric = np.empty(X.shape)
    step = 1e-6
    for n in range(X.shape[0]):
        for j in range(X.shape[1]):
            shift = np.zeros(X.shape)
            shift[n, j] = step
            numeric[n, j] = (np.sum(weights * kernel(X + shift, Z)) - np.sum(weights * kernel(X - shift, Z))) / (2 * step)
    np.testing.assert_allclose(analytic, numeric, rtol=1e-6, atol=1e-8)
