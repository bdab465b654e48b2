"""The sum-product rules of the random-parameter Gauss–Markov chain: each stops with a ModelError naming the node.

There is no sum-product message to (or through) a random gain or process precision in any family; under
``algorithm="bp"`` the compiler binds these rules, one per set of inputs the node's single sum-product cluster
gives each interface (a gain or precision clamped to a number is read as ``q_``), and the run stops at the
first with the error that says to use ``algorithm="vmp"``.
"""
import numpy as np
import pytest

import fgraph as fg
from fgraph.families import NormalMeanVariance, PointMass, Uninformative
from fgraph.families.gamma import Gamma
from fgraph.nodes.gauss_markov_chain import VariationalGaussMarkovChainNode
from tests.rules.tables import message

MESSAGES = {"m_out": NormalMeanVariance(np.zeros(3), np.ones(3)), "m_gain": NormalMeanVariance(0.0, 1.0),
            "m_precision": Gamma(1.0, 1.0), "m_moments": Uninformative((), (4,)), "q_gain": PointMass(0.9),
            "q_precision": PointMass(2.0)}
# the interfaces each message does not read (VariationalGaussMarkovChainNode.messages_independent_of)
UNREAD = {"out": ("gain", "precision"), "moments": ("out",)}
CASES = []
for interface in ("out", "gain", "precision", "moments"):
    for clamped in (None, "gain", "precision"):
        read = [i for i in ("out", "gain", "precision", "moments")
                if i != interface and i not in UNREAD.get(interface, ())]
        if clamped == interface or (clamped is not None and clamped not in read):
            continue
        names = [f"m_{interface}"] + [f"{'q' if i == clamped else 'm'}_{i}" for i in read]
        CASES.append(pytest.param(interface, names, id=f"{interface}-known-{clamped}" if clamped else interface))


@pytest.mark.parametrize("interface, names", CASES)
def test_sum_product_messages_say_to_use_vmp(interface, names):
    match = f"node 'node'.*no sum-product messages \\(asked for its message to '{interface}'\\).*algorithm='vmp'"
    with pytest.raises(fg.ModelError, match=match):
        message(VariationalGaussMarkovChainNode, interface, {name: MESSAGES[name] for name in names},
                batch_shape=(3,), initial_var=1.0)


def test_the_table_lists_every_sum_product_rule_of_the_node():
    """One case per rule the module registers (made in a loop): out once, moments three times, gain and precision
    twice each."""
    from tests.rule_coverage import registered

    descriptions = [d for f, d in registered().items() if f.__module__ == "fgraph.rules.gauss_markov_chain.vmp_only"]
    assert len(descriptions) == len(CASES) == 8
    for interface, names in (case.values for case in CASES):
        inputs = ", ".join(f"{name}: Distribution" for name in sorted(names))
        assert f"message VariationalGaussMarkovChainNode.{interface}({inputs})" in descriptions
