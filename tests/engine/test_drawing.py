"""model.draw(): the factor graph as DOT text (and a graphviz object where Graphviz is installed)."""
import re
import shutil

import numpy as np
import pytest

import fgraph as fg
from fgraph import drawing
from fgraph.nodes import Gamma, Normal


def hierarchy():
    with fg.Model("hierarchy") as model:
        mu = Normal("mu", mean=0.0, var=10.0)
        tau = Gamma("tau", shape=1.0, rate=2.5)
        Normal("y", mean=mu, precision=tau, observed=np.ones(50))
        Normal("z", mean=mu, var=1.0)
    return model


def test_factors_are_boxes_and_variables_edges_with_their_shapes():
    text = drawing.to_dot(hierarchy())
    boxes = dict(re.findall(r'(f\d+) \[shape=box, style=rounded, label="([^"]*)"\]', text))
    assert sorted(boxes.values()) == ["mu\\nNormalMeanVariance", "tau\\nGammaNode", "y\\nNormalMeanPrecision",
                                      "z\\nNormalMeanVariance"]
    by_name = {label.split("\\n")[0]: factor for factor, label in boxes.items()}
    # tau joins two factors: one edge between them
    assert f'{by_name["tau"]} -- {by_name["y"]} [label="tau"];' in text
    # mu joins three: an equality node with an edge to each
    equality = re.search(r'(eq_\d+) \[shape=box[^\]]*label="="\]', text).group(1)
    assert sorted(re.findall(rf'(f\d+) -- {equality} \[label="mu"\]', text)) == sorted(
        [by_name["mu"], by_name["y"], by_name["z"]])
    # one-ended variables: filled when observed, empty when latent, with the plate in the label
    observed = re.search(rf'{by_name["y"]} -- (v_\d+) \[label="y\[50\]"\]', text).group(1)
    latent = re.search(rf'{by_name["z"]} -- (v_\d+) \[label="z"\]', text).group(1)
    assert re.search(rf'{observed} \[[^\]]*fillcolor=black', text)
    assert re.search(rf'{latent} \[[^\]]*fillcolor=white', text)
    # the plate is a box around its factor, with its size; constants are grey text on dotted edges
    assert re.search(r'label="plate \[50\]";[^}]*' + by_name["y"] + ";", text)
    assert re.search(r'label="rate = 2.5"\];\n  ' + by_name["tau"] + r' -- c\d+ \[style=dotted', text)


def test_copies_are_in_the_title_and_names_are_quoted():
    with fg.Model('a "quoted" name', copies=4) as model:
        Normal("x", mean=0.0, var=1.0, batch_shape=(3,))
    text = drawing.to_dot(model)
    assert text.startswith('graph "a \\"quoted\\" name" {') and 'label="copies [4]"' in text
    assert 'label="plate [3]"' in text


def test_draw_returns_dot_text_without_graphviz(monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    model = hierarchy()
    assert model.draw() == drawing.to_dot(model)


def test_draw_renders_with_graphviz():
    graphviz = pytest.importorskip("graphviz")
    if shutil.which("dot") is None:
        pytest.skip("Graphviz's dot program is not installed")
    drawn = hierarchy().draw()
    assert isinstance(drawn, graphviz.Source)
    svg = drawn.pipe(format="svg").decode()
    assert svg.lstrip().startswith("<?xml") and "NormalMeanPrecision" in svg and "plate [50]" in svg


EDGE = re.compile(r'  (\S+) -- (\S+) \[label="([^"]*)"(?:, taillabel="([^"]*)")?(?:, headlabel="([^"]*)")?\];')


def rules_at_ends(text):
    """``{(factor name, variable label): rule label}`` for every labelled factor end of the DOT ``text``."""
    factors = {factor: label.split("\\n")[0]
               for factor, label in re.findall(r'(f\d+) \[shape=box, style=rounded, label="([^"]*)"\]', text)}
    found = {}
    for tail, head, variable, tail_rule, head_rule in EDGE.findall(text):
        for end, rule in ((tail, tail_rule), (head, head_rule)):
            if rule:
                assert end in factors, f"a rule label on {end}, which is not a factor"
                found[(factors[end], variable)] = rule
    return found


def test_a_bp_result_draws_the_rule_of_every_message_at_the_factor_it_leaves():
    with fg.Model("bp") as model:
        mu = Normal("mu", mean=0.0, var=10.0)
        Normal("y", mean=mu, var=0.25, observed=np.ones(5))
        Normal("z", mean=mu, var=1.0)
    result = fg.infer(model, algorithm="bp")
    text = drawing.to_dot(model, result.plan)
    assert result.draw() == text or result.draw().source == text
    assert rules_at_ends(text) == {
        ("mu", "mu"): "1. normal_mean_variance.out.mean_field",
        ("y", "mu"): "2. normal_mean_variance.mean.observed_plate",
        ("z", "mu"): "3. message_families._flat_message",
        ("z", "z"): "4. normal_mean_variance.out.sum_product (when read)",
    }
    # the factor's end at the data sends nothing: the edge to the observed end carries no rule
    assert re.search(r'-- v_\d+ \[label="y\[5\]"\];', text)


def test_a_vmp_result_draws_its_mean_field_rules_on_both_ends_of_an_edge():
    model = hierarchy()
    result = fg.infer(model, algorithm="vmp", iterations=3,
                      init={"tau": fg.Gamma(1.0, 1.0), "z": fg.NormalMeanVariance(0.0, 1.0)})
    text = drawing.to_dot(model, result.plan)
    assert rules_at_ends(text) == {
        ("mu", "mu"): "1. normal_mean_variance.out.mean_field",
        ("y", "mu"): "2. normal_mean_precision.mean.mean_field",
        ("z", "mu"): "3. normal_mean_variance.mean.mean_field",
        ("tau", "tau"): "4. gamma.out.from_shape_and_rate",
        ("y", "tau"): "5. normal_mean_precision.precision.mean_field",
        ("z", "z"): "6. normal_mean_variance.out.mean_field",
    }
    # tau's edge joins two factors: the rule leaving tau at its tail, the one leaving y at its head
    assert re.search(r'(f\d+) -- (f\d+) \[label="tau", taillabel="4\. gamma[^"]*", headlabel="5\. normal_mean_precision',
                     text)
    assert "taillabel" not in drawing.to_dot(model)  # the model alone has no rules


def test_a_plan_draws_only_the_model_it_was_compiled_from():
    result = fg.infer(hierarchy(), algorithm="vmp", iterations=2,
                      init={"tau": fg.Gamma(1.0, 1.0), "z": fg.NormalMeanVariance(0.0, 1.0)})
    with pytest.raises(fg.ModelError, match="compiled from model 'hierarchy'.*result.draw"):
        drawing.to_dot(hierarchy(), result.plan)


def test_rule_names_lose_the_project_prefix_only():
    assert drawing.rule_label("fgraph.rules.gamma.out.from_shape_and_rate") == "gamma.out.from_shape_and_rate"
    assert drawing.rule_label("fgraph.message_families._flat_message") == "message_families._flat_message"
    assert drawing.rule_label("mypackage.rules.out") == "mypackage.rules.out"
