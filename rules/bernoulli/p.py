"""Messages out of the Bernoulli node towards ``p``."""
from fgraph.families.special import betaln

from fgraph.families import Beta, Distribution, PointMass
from fgraph.registry import rule
from fgraph.nodes.bernoulli import BernoulliNode


@rule(BernoulliNode, "p")
def from_observation(q_out: PointMass) -> Beta:
    """The likelihood p^x (1-p)^(1-x) of an observed x as the scaled density Beta(p | 1 + x, 2 - x).

    Its integral over p in [0, 1] is B(1 + x, 2 - x) (= 1/2 for x in {0, 1}),
    the log-scale.
    """
    x = q_out.value
    a, b = 1.0 + x, 2.0 - x
    return Beta(a, b, log_scale=betaln(a, b), check=False)


@rule(BernoulliNode, "p")
def mean_field(q_out: Distribution) -> Beta:
    """exp E_q[log f] = p^E[x] (1-p)^(1-E[x]) ∝ Beta(p | 1 + E[x], 2 - E[x])."""
    x = q_out.mean
    return Beta(1.0 + x, 2.0 - x, check=False)
