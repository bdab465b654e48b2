"""Message out of the switching normal node towards a mean ``mean_k`` (``index`` = k − 1)."""
import numpy as np

from fgraph.families import Distribution, UnivariateNormal
from fgraph.families.normal import NormalWeightedMeanPrecision
from fgraph.registry import rule
from fgraph.nodes.switching_normal import SwitchingNormalNode, switch_probabilities

# The smallest precision a message may have: a component the switch never selects sends a flat
# message, which the scalar normal family (proper only) holds as this precision, variance ~1e308.
FLAT_PRECISION = np.finfo(float).tiny


@rule(SwitchingNormalNode, "means")
def mean_field(q_out: Distribution, q_switch: Distribution, q_means: Distribution, node, index) -> UnivariateNormal:
    """exp E_q[log f] ∝ N(mean_k | E[out], v_k / E[switch_k]): precision E[switch_k] / v_k."""
    precision = np.maximum(switch_probabilities(q_switch, len(node.means))[..., index] / node.var[index],
                           FLAT_PRECISION)
    mean_out = np.asarray(q_out.mean, dtype=float)
    precision, mean_out = np.broadcast_arrays(precision, mean_out)
    return NormalWeightedMeanPrecision(precision * mean_out, precision, check=False)
