"""Addition node: DSL choices of node type and validation."""
import numpy as np
import pytest

import fgraph as fg
from fgraph import registry
from fgraph.errors import ModelError
from nodes import Add, MvNormal, Normal
from nodes.addition import Addition, MvAddition


def test_node_type_follows_the_event_rank():
    with fg.Model() as model:
        x = Normal("x", mean=np.zeros(3), var=1.0)
        v = MvNormal("v", mean=np.zeros(2), cov=np.eye(2))
        s = Add("s", x, 1.0)
        u = Add("u", v, np.array([1.0, 2.0]))
    assert type(model.nodes[2]) is Addition and s.event_shape == () and s.batch_shape == (3,)
    assert type(model.nodes[3]) is MvAddition and u.event_shape == (2,)


def test_invalid_inputs_are_reported():
    with fg.Model():
        x = Normal("x", mean=0.0, var=1.0)
        v = MvNormal("v", mean=np.zeros(2), cov=np.eye(2))
        with pytest.raises(ModelError, match="at least one input must be a variable"):
            Add("a", 1.0, 2.0)
        with pytest.raises(ModelError, match="different event shapes"):
            Add("b", x, v)
        with pytest.raises(ModelError, match="last axis must match"):
            Add("c", v, np.ones(3))


def test_no_average_energy_is_registered():
    """The factor is a delta: -E_q[log δ] is not finite, so none is registered (see nodes/addition.py)."""
    registry.load_rule_packages()
    assert registry.available(registry.ENERGY, Addition) == []
