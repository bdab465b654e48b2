"""Message out of the switching normal node towards ``out``: the switch-weighted normal."""
import numpy as np

from fgraph.families import Distribution, UnivariateNormal
from fgraph.families.normal import NormalWeightedMeanPrecision
from fgraph.registry import rule
from fgraph.nodes.switching_normal import SwitchingNormalNode, switch_probabilities


@rule(SwitchingNormalNode, "out")
def mean_field(q_switch: Distribution, q_means: Distribution, node) -> UnivariateNormal:
    """exp E_q[log f] ∝ N(out | ·) with precision Σ_k E[switch_k] / v_k, weighted mean Σ_k E[switch_k] E[mean_k] / v_k."""
    weights = switch_probabilities(q_switch, len(node.means)) / node.var
    means = np.stack(np.broadcast_arrays(*[np.asarray(q.mean, dtype=float) for q in q_means]), axis=-1)
    weights, means = np.broadcast_arrays(weights, means)
    return NormalWeightedMeanPrecision(np.sum(weights * means, axis=-1), np.sum(weights, axis=-1), check=False)
