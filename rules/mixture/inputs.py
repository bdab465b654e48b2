"""Messages out of the mixture node towards an input ``in_k`` (``index`` = k − 1)."""
import numpy as np

from fgraph.families import Distribution, PointMass
from fgraph.families.categorical import Categorical
from fgraph.registry import rule
from fgraph.nodes.mixture import MixtureNode


@rule(MixtureNode, "inputs", output=lambda families: families["m_out"])
def sum_product(m_out: Distribution, m_switch: Categorical, m_inputs: Distribution, index) -> Distribution:
    """μ_out scaled by μ_switch(k): on the k-th sub-model the belief is p(s | y, m = k), its scale log p(y, m = k).

    The exact sum-product message also carries a constant Σ_{j≠k} μ_switch(j) Z_j
    (the other sub-models' evidence, flat in in_k), which would make it
    improper; conditioning on m = k drops it (van Erp et al. 2023, Table 1).
    """
    with np.errstate(divide="ignore"):
        weight = np.log(m_switch.probabilities[..., index])
    return m_out.with_log_scale(m_out.log_scale + m_switch.log_scale + weight)


@rule(MixtureNode, "inputs", output=lambda families: families["m_out"])
def conditional(m_out: Distribution, q_switch: Distribution, m_inputs: Distribution) -> Distribution:
    """With a point-mass or variational switch, each sub-model sees μ_out (its conditional posterior)."""
    return m_out


# When every other input is a constant, the engine groups them as q_inputs
# (clamped interfaces arrive as point masses); the messages above do not read
# the other inputs, so the same messages serve.
@rule(MixtureNode, "inputs", output=lambda families: families["m_out"])
def sum_product_beside_constants(m_out: Distribution, m_switch: Categorical, q_inputs: PointMass, index) -> Distribution:
    """As :func:`sum_product`, the other inputs being constants."""
    return sum_product(m_out, m_switch, q_inputs, index)


@rule(MixtureNode, "inputs", output=lambda families: families["m_out"])
def conditional_beside_constants(m_out: Distribution, q_switch: Distribution, q_inputs: PointMass) -> Distribution:
    """As :func:`conditional`, the other inputs being constants."""
    return conditional(m_out, q_switch, q_inputs)


# An observed output: the rules above with the point mass at y in place of μ_out.
@rule(MixtureNode, "inputs")
def sum_product_observed_output(q_out: PointMass, m_switch: Categorical, m_inputs: Distribution, index) -> PointMass:
    """δ(in_k − y) scaled by μ_switch(k): the k-th sub-model, had it been selected, produced y."""
    return sum_product(q_out, m_switch, m_inputs, index)


@rule(MixtureNode, "inputs")
def conditional_observed_output(q_out: PointMass, q_switch: Distribution, m_inputs: Distribution) -> PointMass:
    """With a point-mass or variational switch, each sub-model sees the observation itself."""
    return q_out
