"""Messages out of the Gamma node towards ``out``."""
from fgraph.families import Distribution, PointMass
from fgraph.families.gamma import Gamma
from fgraph.registry import rule
from fgraph.nodes.gamma import GammaNode
from fgraph.float_twins import GAMMA, float_rule


@rule(GammaNode, "out")
def from_shape_and_rate(q_shape: PointMass, q_rate: Distribution) -> Gamma:
    """Gamma(out | α, E[β]); with a point-mass rate this is the factor itself (sum-product)."""
    return Gamma(q_shape.value, q_rate.mean, check=False)


@rule(GammaNode, "out")
def mean_field(q_shape: Distribution, q_rate: Distribution) -> Gamma:
    """exp E_q[log Gamma(out | a, β)] ∝ out^(E[a] - 1) exp(-E[β] out) = Gamma(out | E[a], E[β]) (random shape)."""
    return Gamma(q_shape.mean, q_rate.mean, check=False)


@float_rule(from_shape_and_rate, GAMMA, q_shape=("value",), q_rate=("mean",))
def _from_shape_and_rate_on_floats(shape: float, rate_mean: float) -> tuple:
    """:func:`from_shape_and_rate` on one element, as ``(a, b, log-scale)`` (:mod:`fgraph.floats`)."""
    return shape, rate_mean, 0.0


@float_rule(mean_field, GAMMA, q_shape=("mean",), q_rate=("mean",))
def _mean_field_on_floats(shape_mean: float, rate_mean: float) -> tuple:
    """:func:`mean_field` on one element, as ``(a, b, log-scale)`` (:mod:`fgraph.floats`)."""
    return shape_mean, rate_mean, 0.0
