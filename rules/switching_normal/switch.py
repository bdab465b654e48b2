"""Message out of the switching normal node towards ``switch``: the expected log-likelihood of each component."""
from fgraph.families import Distribution
from fgraph.families.categorical import Categorical
from fgraph.registry import rule
from fgraph.nodes.switching_normal import SwitchingNormalNode, expected_log_likelihoods


@rule(SwitchingNormalNode, "switch")
def mean_field(q_out: Distribution, q_means: Distribution, node) -> Categorical:
    """exp E_q[log f] for switch = e_k: log μ(k) = E[log N(out | mean_k, v_k)], normalised over k."""
    return Categorical.from_natural((expected_log_likelihoods(q_out, q_means, node.var),))
