"""Rule resolution: most specific family wins, ties are reported, duplicates are refused."""
import pytest

import fgraph as fg
from fgraph import registry
from fgraph.families import Distribution, ExponentialFamily, NormalMeanVariance, PointMass, UnivariateNormal
from fgraph.node import FactorNode
from fgraph.registry import rule


class Probe(FactorNode):
    interfaces = ("out", "a", "b")
    event_ndims = {"out": 0, "a": 0, "b": 0}


@rule(Probe, "out")
def _general(m_a: Distribution, m_b: Distribution) -> UnivariateNormal:
    return NormalMeanVariance(0.0, 1.0)


@rule(Probe, "out")
def _specific(m_a: UnivariateNormal, m_b: Distribution) -> UnivariateNormal:
    return NormalMeanVariance(1.0, 1.0)


@rule(Probe, "out")
def _other_specific(m_a: Distribution, m_b: UnivariateNormal) -> UnivariateNormal:
    return NormalMeanVariance(2.0, 1.0)


def resolve(**families):
    return registry.resolve(registry.MESSAGE, Probe, "out", families, "node 'probe'")


def test_the_most_specific_rule_wins():
    assert resolve(m_a=UnivariateNormal, m_b=PointMass).function is _specific
    assert resolve(m_a=PointMass, m_b=UnivariateNormal).function is _other_specific
    assert resolve(m_a=PointMass, m_b=PointMass).function is _general


def test_an_ambiguous_choice_is_reported_with_the_candidates():
    with pytest.raises(fg.AmbiguousRuleError, match="node 'probe'.*several message rules fit 'out'"):
        resolve(m_a=UnivariateNormal, m_b=UnivariateNormal)


def test_a_second_rule_with_identical_inputs_is_refused():
    with pytest.raises(ValueError, match="same inputs"):
        @rule(Probe, "out")
        def _impostor(m_a: UnivariateNormal, m_b: Distribution) -> UnivariateNormal:
            return NormalMeanVariance(9.0, 1.0)
    assert resolve(m_a=UnivariateNormal, m_b=PointMass).function is _specific


def test_rules_need_named_and_annotated_inputs():
    with pytest.raises(TypeError, match="must be named m_<interface>"):
        @rule(Probe, "a")
        def _bad_name(x: Distribution) -> UnivariateNormal:
            return NormalMeanVariance(0.0, 1.0)
    with pytest.raises(TypeError, match="needs a family annotation"):
        @rule(Probe, "a")
        def _no_annotation(m_out) -> UnivariateNormal:
            return NormalMeanVariance(0.0, 1.0)


def test_missing_rule_lists_the_rules_of_the_node():
    with pytest.raises(fg.RuleNotFoundError, match=r"(?s)interface 'b' of Probe.*Probe\.out\(m_a: Distribution"):
        registry.resolve(registry.MESSAGE, Probe, "b", {"m_out": ExponentialFamily}, "node 'probe'")


def test_a_point_mass_message_is_served_by_the_rule_for_a_clamped_interface():
    """No ``m_out: PointMass`` rule: the compiler hands the point mass to the ``q_out`` rule, inputs renamed."""
    from fgraph.message_families import resolve_message_rule
    from fgraph.nodes.normal import NormalMeanVariance as NormalNode

    registry.load_rule_packages()
    node = NormalNode("y")
    bound = resolve_message_rule(node, "mean", {"m_out": PointMass, "q_var": PointMass}, None)
    assert bound.input_names == ("m_out", "q_var") and "point_masses_as_clamped" in bound.name
    message = bound({"m_out": PointMass(1.5, log_scale=-0.7), "q_var": PointMass(2.0)}, node)
    # N(y | mean, v) as a function of the mean: N(mean | 1.5, 2), integrating to one (the engine adds the −0.7)
    assert (float(message.mean), float(message.var), float(message.log_scale)) == (1.5, 2.0, 0.0)
    # no rule either way: the error names the inputs as the node has them
    from fgraph.families.gamma import Gamma

    with pytest.raises(fg.RuleNotFoundError, match="m_out: PointMass, m_var: Gamma"):
        resolve_message_rule(node, "mean", {"m_out": PointMass, "m_var": Gamma}, None)


class DerivedProbe(Probe):
    """A node type that registers nothing of its own: it is served by Probe's rules."""


def test_rules_of_lists_every_registration_of_a_node_type_and_of_its_bases():
    listed = registry.rules_of(DerivedProbe)
    assert {r.function for r in listed} == {_general, _specific, _other_specific}
    specific = next(r for r in listed if r.function is _specific)
    assert (specific.kind, specific.node_type, specific.target, specific.operator) == (registry.MESSAGE, Probe, "out", None)
    assert specific.inputs == ("m_a", "m_b") and specific.families == (UnivariateNormal, Distribution)
    assert specific.output is UnivariateNormal
    assert specific.name == f"{__name__}._specific"


def test_node_types_lists_the_project_nodes_with_their_rules_and_energies():
    from fgraph.nodes.normal import NormalMeanVariance as NormalNode
    from fgraph.rules.normal_mean_variance import out

    types = registry.node_types()
    assert NormalNode in types and Probe in types and DerivedProbe not in types
    listed = registry.rules_of(NormalNode)
    assert any(r.function is out.sum_product and r.target == "out" and r.inputs == ("m_mean", "q_var") for r in listed)
    assert any(r.kind == registry.ENERGY and r.target is None for r in listed)


def test_rules_of_names_a_node_class():
    with pytest.raises(TypeError, match="expected a node class"):
        registry.rules_of("Normal")
