"""Messages out of the Bernoulli node towards ``out``."""
from fgraph.families import Bernoulli, Beta, Distribution, PointMass
from fgraph.registry import rule
from fgraph.nodes.bernoulli import BernoulliNode


@rule(BernoulliNode, "out")
def sum_product(m_p: Beta) -> Bernoulli:
    """∫ p^x (1-p)^(1-x) Beta(p | a, b) dp = E[p]^x (1 - E[p])^(1-x): Bernoulli(a / (a + b)).

    It sums to one over x in {0, 1}, so its log-scale is 0.
    """
    return Bernoulli(m_p.mean, check=False)


@rule(BernoulliNode, "out")
def from_point_mass(q_p: PointMass) -> Bernoulli:
    """With p fixed the message is the factor itself, Bernoulli(out | p) (log-scale 0)."""
    return Bernoulli(q_p.value, check=False)


@rule(BernoulliNode, "out")
def mean_field(q_p: Distribution) -> Bernoulli:
    """exp E_q[log f] = exp(x E[log p] + (1-x) E[log(1-p)]), normalised over x."""
    return Bernoulli.from_natural((q_p.mean_log, q_p.mean_log1m))
