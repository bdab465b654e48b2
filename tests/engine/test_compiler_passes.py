"""The compiler's passes, each on its own: factorisation (:mod:`fgraph.factorise`) and the families of messages
(:mod:`fgraph.message_families`), with hand-worked expectations; ``fgraph.plan`` runs them in order (its checks
are tested through ``fg.compile`` in ``test_compile_checks.py`` and ``test_bad_input.py``)."""
from __future__ import annotations

import numpy as np
import pytest

import fgraph as fg
from fgraph.constraints import Constraints
from fgraph.errors import ModelError
from fgraph.factorise import NodeTemplates, inputs_for, plan_node
from fgraph.families import Gamma, NormalMeanVariance, PointMass
from fgraph.families.normal import NormalWeightedMeanPrecision, UnivariateNormal
from fgraph.families.pointmass import Uninformative
from fgraph.graph import FactorGraph
from fgraph.message_families import family_of_product
from fgraph.nodes import Gamma as GammaNode
from fgraph.nodes import Normal


def normal_gamma_graph():
    with fg.Model() as model:
        mu = Normal("mu", mean=0.0, var=10.0)
        tau = GammaNode("tau", shape=1.0, rate=1.0)
        Normal("y", mean=mu, precision=tau, observed=np.array([0.5, 1.5, 1.0]))
    return FactorGraph(model)


@pytest.mark.parametrize("algorithm, clusters, sum_product", [
    ("bp", [("mean", "precision")], True),  # one sum-product cluster of the latent interfaces
    ("vmp", [("mean",), ("precision",)], False),  # mean field: each its own cluster, the average energy
])
def test_a_node_is_factorised_by_the_algorithm(algorithm, clusters, sum_product):
    graph = normal_gamma_graph()
    node = graph.node("y")
    node_plan = plan_node(node, graph.node_sockets["y"], Constraints.coerce(None), algorithm, {})
    assert [tuple(c) for c in node_plan.clusters] == clusters
    assert node_plan.sum_product is sum_product
    assert node_plan.cluster_of["mean"] == clusters[0]


def test_structured_clusters_and_a_point_mass_form_split_the_interfaces():
    graph = normal_gamma_graph()
    sockets = graph.node_sockets["y"]
    given = Constraints.coerce({"factorization": {"y": [("mean", "precision")]}})
    assert [tuple(c) for c in plan_node(graph.node("y"), sockets, given, "vmp", {}).clusters] == [("mean", "precision")]
    # a variable constrained to a point mass leaves its cluster: the node reads its marginal (q_precision)
    split = plan_node(graph.node("y"), sockets, given, "vmp", {"tau": "point_mass"})
    assert [tuple(c) for c in split.clusters] == [("mean",), ("precision",)]


@pytest.mark.parametrize("algorithm, expected", [
    ("bp", [("q_out", "clamp"), ("m_precision", "m")]),  # the other member of its cluster: its message
    ("vmp", [("q_out", "clamp"), ("q_precision", "q")]),  # another cluster: its marginal
])
def test_the_inputs_of_a_message_follow_the_clusters(algorithm, expected):
    graph = normal_gamma_graph()
    node_plan = plan_node(graph.node("y"), graph.node_sockets["y"], Constraints.coerce(None), algorithm, {})
    inputs = inputs_for(node_plan.sockets, "mean", node_plan.clusters, node_plan.cluster_of)
    assert [(item.name, item.kind) for item in inputs] == expected


def test_identical_nodes_share_one_template():
    with fg.Model() as model:
        x = Normal("x1", mean=0.0, var=1.0)
        for t in range(2, 60):
            x = Normal(f"x{t}", mean=x, var=0.5)
            Normal(f"y{t}", mean=x, var=0.3, observed=0.1 * t)
    graph = FactorGraph(model)
    templates = NodeTemplates(Constraints.coerce(None), "bp", {})
    plans = {node.name: templates.plan(node, graph.node_sockets[node.name]) for node in graph.nodes}
    # three signatures: the first prior (constants only), the steps of the chain, the observations
    assert len(templates.templates) == 3
    assert plans["x7"][1] is plans["x30"][1]  # one recipe for every step
    assert plans["x7"][0].clusters is plans["x30"][0].clusters


@pytest.mark.parametrize("families, expected", [
    ([NormalMeanVariance, NormalWeightedMeanPrecision], UnivariateNormal),  # one family, two parameterisations
    ([Gamma, PointMass], PointMass),  # a point mass fixes the value
    ([Uninformative, None, Gamma], Gamma),  # flat and untyped messages change nothing
    ([Uninformative], Uninformative),
])
def test_the_family_of_a_product(families, expected):
    assert family_of_product(families, "here") is expected


def test_families_that_do_not_meet_are_named_where():
    with pytest.raises(ModelError, match=r"variable 'v': messages of different families \(Gamma, UnivariateNormal\)"):
        family_of_product([NormalMeanVariance, Gamma], "variable 'v'")
