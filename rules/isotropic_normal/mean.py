"""Messages out of IsotropicNormal towards ``mean``: N(mean | E[out], (E[τ] I)⁻¹) (the factor is symmetric)."""
from fgraph.families import Distribution, MultivariateNormal
from fgraph.registry import rule
from fgraph.nodes.isotropic_normal import IsotropicNormalNode
from fgraph.rules.isotropic_normal.out import isotropic_message


@rule(IsotropicNormalNode, "mean")
def mean_field(q_out: Distribution, q_precision: Distribution) -> MultivariateNormal:
    """exp E_q[log N(out | mean, τ⁻¹ I)] ∝ N(mean | E[out], (E[τ] I)⁻¹); exact (log-scale 0) for a clamped out and
    precision."""
    return isotropic_message(q_out.mean, q_precision.mean)
