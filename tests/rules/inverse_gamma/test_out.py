"""Table test of the InverseGamma node rule towards ``out``: InverseGamma(out | E[α], E[β]), log-scale 0."""
import pytest

from fgraph.families import Beta, GammaShapeLikelihood, PointMass
from fgraph.families.gamma import Gamma
from fgraph.nodes.inverse_gamma import InverseGammaNode
from tests.rules.tables import assert_message, inverse_gamma, message

CASES = [
    # ReactiveMP.jl test/rules/gamma_inverse/out_tests.jl: (PointMass(1), PointMass(2)) -> GammaInverse(1, 2) and
    # (PointMass(3), PointMass(3)) -> GammaInverse(3, 3) (GammaInverse(α, θ) has scale θ: our parametrisation)
    pytest.param({"q_shape": PointMass(1.0), "q_scale": PointMass(2.0)}, inverse_gamma(1.0, 2.0), id="reactivemp-point-masses"),
    pytest.param({"q_shape": PointMass(3.0), "q_scale": PointMass(3.0)}, inverse_gamma(3.0, 3.0), id="reactivemp-equal"),
    # ReactiveMP: (q_α = Gamma(1, 1), q_θ = Beta(1, 1)) -> GammaInverse(1, 0.5): E[α] = 1, E[θ] = 1/2
    pytest.param({"q_shape": Gamma(1.0, 1.0), "q_scale": Beta(1.0, 1.0)}, inverse_gamma(1.0, 0.5), id="reactivemp-mf"),
    # E[β] = 4/2
    pytest.param({"q_shape": PointMass(2.5), "q_scale": Gamma(4.0, 2.0)}, inverse_gamma(2.5, 2.0), id="mf-gamma-scale"),
    # the shape's own family, Gamma member (count 0): E[α] = 6/3
    pytest.param({"q_shape": GammaShapeLikelihood(6.0, 3.0, 0.0), "q_scale": PointMass(1.0)}, inverse_gamma(2.0, 1.0),
                 id="mf-shape-likelihood"),
    pytest.param({"q_shape": PointMass([1.0, 2.0]), "q_scale": PointMass(0.5)}, inverse_gamma([1.0, 2.0], 0.5), id="batched"),
]


@pytest.mark.parametrize("inputs, expected", CASES)
def test_out(inputs, expected):
    assert_message(message(InverseGammaNode, "out", inputs), expected)
