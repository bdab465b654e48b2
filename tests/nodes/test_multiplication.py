"""Multiplication nodes: DSL choices of node type and gain validation."""
import numpy as np
import pytest

import fgraph as fg
from fgraph.errors import ModelError
from fgraph.nodes import Multiply, MvNormal, Normal
from fgraph.nodes.multiplication import Multiplication, MvMultiplication


def test_node_type_and_event_shape_follow_the_gain():
    with fg.Model() as model:
        x = Normal("x", mean=0.0, var=1.0)
        v = MvNormal("v", mean=np.zeros(2), cov=np.eye(2))
        a = Multiply("a", 3.0, x)
        b = Multiply("b", np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]), v)
        c = Multiply("c", 2.0, v)
    nodes = {node.name: node for node in model.nodes}
    assert type(nodes["a"]) is Multiplication and a.event_shape == () and nodes["a"].gain == 3.0
    assert type(nodes["b"]) is MvMultiplication and b.event_shape == (3,)
    # a number times a vector is that number times the identity
    np.testing.assert_array_equal(nodes["c"].gain, 2.0 * np.eye(2))
    assert c.event_shape == (2,)


def test_invalid_gains_are_reported():
    with fg.Model():
        x = Normal("x", mean=0.0, var=1.0)
        v = MvNormal("v", mean=np.zeros(2), cov=np.eye(2))
        with pytest.raises(ModelError, match="zero gain"):
            Multiply("a", 0.0, x)
        with pytest.raises(ModelError, match="scalar gain"):
            Multiply("b", np.eye(2), x)
        with pytest.raises(ModelError, match="m x 2 matrix"):
            Multiply("c", np.eye(3), v)
        with pytest.raises(ModelError, match="NaN or infinite"):
            Multiply("d", np.inf, x)
        with pytest.raises(ModelError, match="must be a variable"):
            Multiply("e", 2.0, 1.0)
