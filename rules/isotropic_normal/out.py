"""Messages out of IsotropicNormal towards ``out``: N(out | E[mean], (E[τ] I)⁻¹)."""
import numpy as np

from fgraph.families import Distribution, MultivariateNormal, MvNormalMeanPrecision
from fgraph.registry import rule
from fgraph.nodes.isotropic_normal import IsotropicNormalNode


def isotropic_message(centre, precision) -> MvNormalMeanPrecision:
    """N(x | centre, (τ I)⁻¹) for ``centre`` (``batch + (d,)``) and τ (``batch``), broadcast together."""
    centre = np.asarray(centre, dtype=float)
    precision = np.asarray(precision, dtype=float)
    dimension = centre.shape[-1]
    batch = np.broadcast_shapes(centre.shape[:-1], precision.shape)
    return MvNormalMeanPrecision(np.broadcast_to(centre, batch + (dimension,)),
                                 np.broadcast_to(precision, batch)[..., None, None] * np.eye(dimension), check=False)


@rule(IsotropicNormalNode, "out")
def mean_field(q_mean: Distribution, q_precision: Distribution) -> MultivariateNormal:
    """exp E_q[log N(out | mean, τ⁻¹ I)] ∝ N(out | E[mean], (E[τ] I)⁻¹); exact (log-scale 0) for a clamped mean and
    precision."""
    return isotropic_message(q_mean.mean, q_precision.mean)
