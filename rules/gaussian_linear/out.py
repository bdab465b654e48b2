"""Messages out of the Gaussian linear transition N(out | a in, v) towards ``out``."""
from fgraph.families import Distribution, PointMass, UnivariateNormal
from fgraph.families.normal import NormalMeanVariance
from fgraph.registry import rule
from fgraph.nodes.gaussian_linear import GaussianLinear


@rule(GaussianLinear, "out")
def sum_product(m_in: UnivariateNormal, q_var: PointMass, node) -> UnivariateNormal:
    """∫ N(out | a in, v) m(in) din = N(out | a μ, a² v_in + v); integrates to one in ``out``."""
    gain = node.gain
    return NormalMeanVariance(gain * m_in.mean, gain**2 * m_in.var + q_var.value, check=False)


@rule(GaussianLinear, "out")
def mean_field(q_in: Distribution, q_var: PointMass, node) -> UnivariateNormal:
    """exp E_q[log N(out | a in, v)] ∝ N(out | a E[in], v); exact (log-scale 0) for a clamped ``in``."""
    return NormalMeanVariance(node.gain * q_in.mean, q_var.value, check=False)
