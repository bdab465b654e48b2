"""Message out of the mixture node towards ``switch``: the evidences of the sub-models."""
import numpy as np

from fgraph.families import Distribution, PointMass, product
from fgraph.families.base import logsumexp, stack_last
from fgraph.families.categorical import Categorical
from fgraph.registry import rule
from nodes.mixture import MixtureNode


def evidence_per_input(m_out: Distribution, m_inputs: tuple) -> np.ndarray:
    """``log ∫ μ_out μ_in_k`` for every k (scales included), shape ``batch + (K,)``."""
    terms = [product(m_out, m_in).log_scale for m_in in m_inputs]
    return stack_last(terms)


@rule(MixtureNode, "switch")
def sum_product(m_out: Distribution, m_inputs: Distribution) -> Categorical:
    """μ_switch(k) = ∫ μ_out(x) μ_in_k(x) dx: a categorical scaled by Σ_k of those evidences.

    Its log-probabilities are the log-evidences of the sub-models (their own
    scales included); its log-scale is their log-sum-exp.
    """
    log_evidence = evidence_per_input(m_out, m_inputs)
    log_total = logsumexp(log_evidence, axis=-1)
    return Categorical(np.exp(log_evidence - log_total[..., None]), log_scale=log_total, check=False)


@rule(MixtureNode, "switch")
def sum_product_constant_inputs(m_out: Distribution, q_inputs: PointMass) -> Categorical:
    """As :func:`sum_product` with every input a constant c_k: the evidences are μ_out(c_k)."""
    return sum_product(m_out, q_inputs)


@rule(MixtureNode, "switch")
def observed_output(q_out: PointMass, m_inputs: Distribution) -> Categorical:
    """An observed output y: μ_switch(k) = μ_in_k(y), the likelihood of y under sub-model k (scales included)."""
    return sum_product(q_out, m_inputs)
