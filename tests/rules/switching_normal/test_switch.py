"""Table test: the switching normal's message to the switch, E[log N(out | mean_k, v_k)] by hand."""
import math

import numpy as np

from fgraph.families import NormalMeanVariance, PointMass
from fgraph.nodes.switching_normal import SwitchingNormalNode
from tests.rules.tables import message


def test_switch_from_an_observed_output():
    # y = 1; mean_1 ~ N(0.5, 0.2), mean_2 ~ N(-1, 0.01); v = (0.5, 2.0)
    # E[(y − m1)²] = (1 − 0.5)² + 0.2 = 0.45; E[(y − m2)²] = 4 + 0.01 = 4.01
    # log μ(1) = −½ log(2π·0.5) − 0.45 / 1.0; log μ(2) = −½ log(2π·2) − 4.01 / 4
    logits = np.array([-0.5 * math.log(math.pi) - 0.45, -0.5 * math.log(4 * math.pi) - 1.0025])
    result = message(SwitchingNormalNode, "switch",
                     {"q_out": PointMass(1.0), "q_means": (NormalMeanVariance(0.5, 0.2), NormalMeanVariance(-1.0, 0.01))},
                     interfaces=("out", "switch", "mean1", "mean2"), var=[0.5, 2.0])
    np.testing.assert_allclose(result.probabilities, np.exp(logits) / np.exp(logits).sum(), rtol=1e-12)


def test_switch_from_a_latent_output_in_a_batch():
    # E[out²] = m² + v for q(out) = N(m, v): rows (m, v) = (0, 1) and (2, 0.5); means known: 1 and −1; v_k = 1
    # E[(out − 1)²] = (0, 1): 1 + 1 = 2;  (2, 0.5): 1 + 0.5 = 1.5
    # E[(out + 1)²] = (0, 1): 1 + 1 = 2;  (2, 0.5): 9 + 0.5 = 9.5
    result = message(SwitchingNormalNode, "switch",
                     {"q_out": NormalMeanVariance(np.array([0.0, 2.0]), np.array([1.0, 0.5])),
                      "q_means": (PointMass(1.0), PointMass(-1.0))},
                     interfaces=("out", "switch", "mean1", "mean2"), var=1.0)
    expected = np.array([[0.5, 0.5], [1.0, math.exp(-4.0)]])  # differences of −½ E[...]: 0 and −4
    np.testing.assert_allclose(result.probabilities, expected / expected.sum(axis=1, keepdims=True), rtol=1e-12)
