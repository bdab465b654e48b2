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
