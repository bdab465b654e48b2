"""Table test of the Gamma node rules towards ``out``: Gamma(out | E[α], E[β]), log-scale 0."""
import pytest

from fgraph.families import GammaShapeLikelihood, GammaShapeScale, PointMass
from fgraph.families.gamma import Gamma
from fgraph.nodes.gamma import GammaNode
from tests.rules.tables import assert_message, gamma, message

CASES = [
    pytest.param({"q_shape": PointMass(2.0), "q_rate": PointMass(3.0)}, gamma(2.0, 3.0), id="point-masses"),
    # E[β] = 4/2
    pytest.param({"q_shape": PointMass(1.5), "q_rate": Gamma(4.0, 2.0)}, gamma(1.5, 2.0), id="mf-gamma-rate"),
    pytest.param({"q_shape": PointMass([1.0, 2.0]), "q_rate": PointMass(0.5)}, gamma([1.0, 2.0], 0.5), id="batched"),
    # ReactiveMP.jl test/rules/gamma_shape_rate/out_tests.jl: q_α = GammaShapeScale(1, 1), q_β = GammaShapeRate(1, 1)
    # -> GammaShapeRate(1, 1) (E[α] = 1, E[β] = 1)
    pytest.param({"q_shape": GammaShapeScale(1.0, 1.0), "q_rate": Gamma(1.0, 1.0)}, gamma(1.0, 1.0), id="reactivemp-mf"),
    # random shape with its own family; the Gamma member (count 0) has E[a] = 6/2
    pytest.param({"q_shape": GammaShapeLikelihood(6.0, 2.0, 0.0), "q_rate": Gamma(4.0, 2.0)}, gamma(3.0, 2.0),
                 id="mf-shape-likelihood"),
]


@pytest.mark.parametrize("inputs, expected", CASES)
def test_out(inputs, expected):
    assert_message(message(GammaNode, "out", inputs), expected)
