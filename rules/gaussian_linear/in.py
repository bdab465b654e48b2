"""Messages out of the Gaussian linear transition N(out | a in, v) towards ``in``.

As a function of ``in`` these messages are likelihoods: N(y | a in, v) =
N(in | y/a, v/a²) / |a|, so they carry log-scale -log|a|.
"""
import numpy as np

from fgraph.families import Distribution, PointMass, UnivariateNormal
from fgraph.families.normal import NormalMeanVariance
from fgraph.registry import rule
from fgraph.nodes.gaussian_linear import GaussianLinear


@rule(GaussianLinear, "in")
def sum_product(m_out: UnivariateNormal, q_var: PointMass, node) -> UnivariateNormal:
    """∫ N(out | a in, v) m(out) dout = N(a in | μ_m, v_m + v) = N(in | μ_m/a, (v_m + v)/a²) / |a|."""
    gain = node.gain
    return NormalMeanVariance(
        m_out.mean / gain, (m_out.var + q_var.value) / gain**2, log_scale=-np.log(np.abs(gain)), check=False
    )


@rule(GaussianLinear, "in")
def mean_field(q_out: Distribution, q_var: PointMass, node) -> UnivariateNormal:
    """exp E_q[log N(out | a in, v)] ∝ N(in | E[out]/a, v/a²).

    The log-scale -log|a| makes it the exact sum-product message when ``out``
    is observed (a point mass); for other marginals it is irrelevant (VMP).
    """
    gain = node.gain
    return NormalMeanVariance(q_out.mean / gain, q_var.value / gain**2, log_scale=-np.log(np.abs(gain)), check=False)
