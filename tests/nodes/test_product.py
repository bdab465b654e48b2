"""The product node: DSL checks and the quadrature its rules integrate with."""
import numpy as np
import pytest

import fgraph as fg
from fgraph.errors import ModelError
from fgraph.nodes import MvNormal, Normal, Product
from fgraph.nodes.product import ProductNode, quadrature


def test_product_of_two_scalar_variables():
    with fg.Model() as model:
        a = Normal("a", mean=0.5, var=1.0, batch_shape=(4,))
        b = Normal("b", mean=0.0, var=1.0)
        ab = Product("ab", a, b, quadrature_points=60)
    node = next(n for n in model.nodes if n.name == "ab")
    assert type(node) is ProductNode and node.quadrature_points == 60
    assert ab.event_shape == () and ab.batch_shape == (4,)


def test_invalid_inputs_are_reported():
    with fg.Model():
        a = Normal("a", mean=0.0, var=1.0)
        v = MvNormal("v", mean=np.zeros(2), cov=np.eye(2))
        with pytest.raises(ModelError, match="must be a variable"):
            Product("p1", a, 2.0)
        with pytest.raises(ModelError, match="must be a scalar"):
            Product("p2", a, v)
        with pytest.raises(ModelError, match="quadrature_points"):
            Product("p3", a, a, quadrature_points=3)


@pytest.mark.parametrize("mean, var", [(0.5, 1.0), (-3.0, 0.01), (0.0, 4.0), (20.0, 1.0)])
def test_quadrature_integrates_gaussian_moments(mean, var):
    nodes, log_weights = quadrature(mean, var, 100)
    weights = np.exp(log_weights)
    assert np.all(np.diff(nodes) > 0) and np.all(nodes != 0.0)
    np.testing.assert_allclose(weights.sum(), 1.0, rtol=1e-13)
    np.testing.assert_allclose(weights @ nodes, mean, atol=1e-12 * (1 + abs(mean)))
    np.testing.assert_allclose(weights @ (nodes - mean) ** 2, var, rtol=1e-10)
    np.testing.assert_allclose(weights @ (nodes - mean) ** 4, 3 * var**2, rtol=1e-8)


def test_quadrature_crowds_nodes_near_zero():
    """Between −0.01 and 0.01 sd of the singular point there are several nodes, on both sides."""
    nodes, _ = quadrature(0.5, 1.0, 100)
    near = nodes[np.abs(nodes) < 0.01]
    assert (near > 0).sum() >= 3 and (near < 0).sum() >= 3


def test_quadrature_batches_distinct_singular_points():
    means, variances = np.array([0.5, 0.5, -1.0]), np.array([1.0, 1.0, 0.25])
    nodes, log_weights = quadrature(means, variances, 50)
    assert nodes.shape == log_weights.shape == (3, 50)
    for i in range(3):
        single_nodes, single_log_weights = quadrature(means[i], variances[i], 50)
        np.testing.assert_allclose(nodes[i], single_nodes, rtol=1e-14)
        np.testing.assert_allclose(log_weights[i], single_log_weights, rtol=1e-14)
