"""Table test: the switching normal's message to out, precision Σ_k E[z_k]/v_k, weighted mean Σ_k E[z_k] E[m_k]/v_k."""
import numpy as np

from fgraph.families import Categorical, NormalMeanVariance
from fgraph.nodes.switching_normal import SwitchingNormalNode
from tests.rules.tables import message


def test_out():
    # E[z] = (0.2, 0.8), E[m] = (1, −2), v = (0.5, 4): precision 0.4 + 0.2 = 0.6, weighted mean 0.4 − 0.4 = 0
    result = message(SwitchingNormalNode, "out",
                     {"q_switch": Categorical([0.2, 0.8]),
                      "q_means": (NormalMeanVariance(1.0, 3.0), NormalMeanVariance(-2.0, 0.1))},
                     interfaces=("out", "switch", "mean1", "mean2"), var=[0.5, 4.0])
    np.testing.assert_allclose([result.precision, result.mean], [0.6, 0.0], atol=1e-15)
