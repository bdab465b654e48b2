"""Addition node: DSL choices of node type, validation, and the energy of a node with every interface known."""
import numpy as np
import pytest

import fgraph as fg
from fgraph import registry
from fgraph.errors import ModelError, RuleNotFoundError
from fgraph.families import NormalMeanVariance, PointMass
from fgraph.nodes import Add, MvNormal, Normal
from fgraph.nodes.addition import Addition, MvAddition
from tests.rules.tables import energy


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


def test_the_only_average_energy_is_for_known_interfaces():
    """The factor is a delta: -E_q[log δ] is not finite for any spread-out q (see nodes/addition.py);
    only a node whose three interfaces are known has an energy (a number)."""
    registry.load_rule_packages()
    assert registry.available(registry.ENERGY, Addition) == [
        "Addition(q_in1: PointMass, q_in2: PointMass, q_out: PointMass)"
    ]
    with pytest.raises(RuleNotFoundError, match="average energy of Addition"):
        energy(Addition, {"q_out": NormalMeanVariance(0.0, 1.0), "q_in1": PointMass(0.0), "q_in2": PointMass(0.0)})


@pytest.mark.parametrize("node_type, out, in1, in2", [
    (Addition, 3.0, 1.0, 2.0),
    (Addition, 0.3, 0.1, 0.2),  # 0.1 + 0.2 = 0.30000000000000004: equal up to rounding
    (Addition, [3.0, -1.0], [1.0, 0.5], [2.0, -1.5]),
    (MvAddition, [[3.0, 1.0]], [[1.0, 0.0]], [[2.0, 1.0]]),
])
def test_a_consistent_known_sum_has_zero_energy(node_type, out, in1, in2):
    event_ndim = 1 if node_type is MvAddition else 0
    inputs = {"q_out": PointMass(out, event_ndim), "q_in1": PointMass(in1, event_ndim), "q_in2": PointMass(in2, event_ndim)}
    result = energy(node_type, inputs)
    np.testing.assert_array_equal(result, np.zeros(np.shape(out)[: np.ndim(out) - event_ndim]))


@pytest.mark.parametrize("node_type, out, in1, in2, words", [
    (Addition, 3.5, 1.0, 2.0, "out = 3.5 is not in1 + in2 = 1.0 + 2.0"),
    (Addition, 3.0 + 1e-9, 1.0, 2.0, "is not in1 + in2"),
    (Addition, [3.0, 0.0], [1.0, 0.5], [2.0, -1.0], "(element (1,))"),
    (MvAddition, [[3.0, 1.0]], [[1.0, 0.0]], [[2.0, 2.0]], "(element (0, 1))"),
])
def test_a_contradicting_known_sum_is_a_data_error_naming_the_node(node_type, out, in1, in2, words):
    event_ndim = 1 if node_type is MvAddition else 0
    inputs = {"q_out": PointMass(out, event_ndim), "q_in1": PointMass(in1, event_ndim), "q_in2": PointMass(in2, event_ndim)}
    with pytest.raises(fg.DataError) as error:
        energy(node_type, inputs)
    assert "node 'node' (" in str(error.value) and words in str(error.value)
