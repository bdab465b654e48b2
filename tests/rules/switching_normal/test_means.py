"""Table test: the switching normal's message to a mean, N(mean_k | E[out], v_k / E[switch_k])."""
import numpy as np

from fgraph.families import Categorical, NormalMeanVariance, PointMass
from fgraph.nodes.switching_normal import SwitchingNormalNode
from tests.rules.tables import message


def test_means_from_a_latent_output():
    # E[out] = 0.7, E[switch] = (0.25, 0.75), v = (0.5, 2): to mean_2 precision 0.75 / 2 = 0.375, mean 0.7
    result = message(SwitchingNormalNode, "means",
                     {"q_out": NormalMeanVariance(0.7, 3.0), "q_switch": Categorical([0.25, 0.75]),
                      "q_means": (NormalMeanVariance(0.0, 1.0), NormalMeanVariance(5.0, 1.0))},
                     interfaces=("out", "switch", "mean1", "mean2"), var=[0.5, 2.0], index=1)
    np.testing.assert_allclose([result.mean, result.precision], [0.7, 0.375], rtol=1e-12)


def test_a_component_never_selected_sends_a_flat_message():
    result = message(SwitchingNormalNode, "means",
                     {"q_out": PointMass(np.array([1.0, -2.0])), "q_switch": Categorical(np.array([[1.0, 0.0], [0.6, 0.4]])),
                      "q_means": (NormalMeanVariance(0.0, 1.0), NormalMeanVariance(0.0, 1.0))},
                     interfaces=("out", "switch", "mean1", "mean2"), var=0.5, index=1)
    np.testing.assert_allclose(result.precision, [np.finfo(float).tiny, 0.8], rtol=1e-12)
    np.testing.assert_allclose(result.mean[1], -2.0, rtol=1e-12)
