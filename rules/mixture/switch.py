"""Message out of the mixture node towards ``switch``: the evidences of the sub-models."""
import math

import numpy as np

from fgraph.families import Distribution, PointMass, UnivariateNormal, product
from fgraph.families.base import logsumexp, stack_last
from fgraph.families.categorical import Categorical
from fgraph.families.normal import scalar_moments
from fgraph.registry import rule
from fgraph.nodes.mixture import MixtureNode


LOG_2PI = math.log(2.0 * math.pi)


def _one_normal_each(m_out: Distribution, m_inputs: tuple) -> bool:
    """Whether every message is one (unbatched) univariate normal: a few sub-models, computed on floats."""
    return all(isinstance(m, UnivariateNormal) and not m.batch_shape for m in (m_out, *m_inputs))


def _normal_evidences(m_out: UnivariateNormal, m_inputs: tuple) -> list:
    """``s_out + s_k + log N(m_out | m_k, v_out + v_k)`` for every k, on Python floats.

    The same numbers as the log-scales of the products ``μ_out · μ_in_k`` (the integral of a product
    of two normals), without a product object per sub-model: with K = 2 or 3
    sub-models numpy's per-call cost would be most of the time.
    """
    mean_out, var_out, _, _ = scalar_moments(m_out)
    scale_out = float(m_out.log_scale)
    evidences = []
    for m_in in m_inputs:
        mean_in, var_in, _, _ = scalar_moments(m_in)
        total_var = var_out + var_in
        difference = mean_out - mean_in
        evidences.append(scale_out + float(m_in.log_scale)
                         - 0.5 * (LOG_2PI + math.log(total_var) + difference * difference / total_var))
    return evidences


def _categorical_from_floats(log_evidence: list) -> Categorical:
    """``p_k ∝ exp(log_evidence_k)`` with log-scale ``log Σ_k exp(log_evidence_k)``, on floats."""
    peak = max(log_evidence)
    if math.isinf(peak):  # every sub-model impossible (or one infinitely likely): the array path says how
        log_evidence = np.array(log_evidence)
        log_total = logsumexp(log_evidence)
        return Categorical(np.exp(log_evidence - log_total), log_scale=log_total, check=False)
    log_total = peak + math.log(sum(math.exp(value - peak) for value in log_evidence))
    return Categorical.unbatched([math.exp(value - log_total) for value in log_evidence], log_total)


@rule(MixtureNode, "switch")
def sum_product(m_out: Distribution, m_inputs: Distribution) -> Categorical:
    """μ_switch(k) = ∫ μ_out(x) μ_in_k(x) dx: a categorical scaled by Σ_k of those evidences.

    Its log-probabilities are the log-evidences of the sub-models (their own
    scales included); its log-scale is their log-sum-exp.
    """
    if _one_normal_each(m_out, m_inputs):
        return _categorical_from_floats(_normal_evidences(m_out, m_inputs))
    terms = [product(m_out, m_in).log_scale for m_in in m_inputs]
    batch = np.broadcast_shapes(*(np.shape(term) for term in terms))
    if not batch:
        log_evidence = stack_last(terms)
        log_total = logsumexp(log_evidence, axis=-1)
        return Categorical(np.exp(log_evidence - log_total[..., None]), log_scale=log_total, check=False)
    return _categorical_over_a_batch(terms, batch)


def _categorical_over_a_batch(terms: list, batch: tuple) -> Categorical:
    """``p_k ∝ exp(ℓ_k)`` with log-scale ``log Σ_k exp(ℓ_k)`` for K arrays ℓ_k broadcasting to ``batch``.

    The K log-evidences are laid out as K contiguous rows, so that the maximum, the exponentials and the sum
    over k are whole-row operations (numpy's reductions along a short last axis pay per row); one transpose
    gives the ``batch + (K,)`` probabilities. An element whose every ℓ_k is −∞ has log-scale −∞ and NaN
    probabilities, as ``exp(ℓ − logsumexp(ℓ))``.
    """
    rows = np.empty((len(terms),) + batch)
    for k, term in enumerate(terms):
        rows[k] = term
    peak = rows.max(axis=0)
    peak = np.where(np.isfinite(peak), peak, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        rows -= peak
        np.exp(rows, out=rows)
        total = rows.sum(axis=0)
        rows /= total
        log_total = np.log(total) + peak
    return Categorical(np.ascontiguousarray(np.moveaxis(rows, 0, -1)), log_scale=log_total, check=False)


@rule(MixtureNode, "switch")
def sum_product_constant_inputs(m_out: Distribution, q_inputs: PointMass) -> Categorical:
    """As :func:`sum_product` with every input a constant c_k: the evidences are μ_out(c_k)."""
    return sum_product(m_out, q_inputs)


@rule(MixtureNode, "switch")
def observed_output(q_out: PointMass, m_inputs: Distribution) -> Categorical:
    """An observed output y: μ_switch(k) = μ_in_k(y), the likelihood of y under sub-model k (scales included)."""
    return sum_product(q_out, m_inputs)
