"""Messages out of the mixture node towards ``out``."""
import math

import numpy as np

from fgraph.families import Distribution, Mixture, PointMass, product
from fgraph.families.base import logsumexp, stack_last
from fgraph.families.categorical import Categorical
from fgraph.registry import rule
from fgraph.nodes.mixture import MixtureNode


def _input_scales(m_inputs: tuple) -> np.ndarray:
    return stack_last([m.log_scale for m in m_inputs])


@rule(MixtureNode, "out", output=lambda families: Mixture.of(families["m_inputs"]))
def sum_product(m_switch: Categorical, m_inputs: Distribution, m_out: Distribution) -> Mixture:
    """μ_out(x) = Σ_k μ_switch(k) μ_in_k(x): weights p_k · exp(scale of μ_in_k) (model averaging)."""
    probabilities = m_switch.probabilities
    if probabilities.ndim == 1 and all(type(m.log_scale) is np.float64 for m in m_inputs):
        log_weights, log_norm = _log_weights_from_floats(probabilities.tolist(), [float(m.log_scale) for m in m_inputs])
        if log_norm is not None:
            return Mixture.from_floats(log_weights, m_inputs, float(m_switch.log_scale) + log_norm, log_norm)
        log_weights = np.array(log_weights)
    else:
        with np.errstate(divide="ignore"):
            log_weights = np.log(probabilities) + _input_scales(m_inputs)
    log_norm = logsumexp(log_weights, axis=-1)
    return Mixture.create(log_weights, m_inputs, m_switch.log_scale + log_norm, log_norm)


def _log_weights_from_floats(probabilities: list, scales: list) -> tuple:
    """``log p_k + s_k`` for one switch (``log 0 = -inf``) and their log-sum-exp, on Python floats.

    The same numbers as the array expression of :func:`sum_product` for one
    mixture of a few sub-models, without the fixed cost of ``np.errstate``
    and of numpy calls on K = 2 or 3 entries. The log-sum-exp is ``None``
    when the largest term is not finite (every weight zero, an infinite
    scale, NaN): :func:`~fgraph.families.base.logsumexp` says what those give.
    """
    log_weights = [(math.log(p) if p != 0.0 else -math.inf) + s for p, s in zip(probabilities, scales)]
    peak = max(log_weights)
    if not math.isfinite(peak) or any(value != value for value in log_weights):
        return log_weights, None
    total = 0.0
    for value in log_weights:
        total += math.exp(value - peak)
    return log_weights, peak + math.log(total)


@rule(MixtureNode, "out", output=lambda families: Mixture.of(families["m_inputs"]))
def selected(q_switch: PointMass, m_inputs: Distribution, m_out: Distribution) -> Mixture:
    """A point-mass switch at k passes μ_in_k on (model selection)."""
    with np.errstate(divide="ignore"):
        log_weights = np.log(q_switch.value) + _input_scales(m_inputs)
    return Mixture.create(log_weights, m_inputs, logsumexp(log_weights, axis=-1))


@rule(MixtureNode, "out", output=lambda families: Mixture.of(families["m_inputs"]))
def variational(q_switch: Categorical, m_inputs: Distribution, m_out: Distribution) -> Mixture:
    """A variational switch: weights q_k / Z_k, so that the belief at ``out`` is Σ_k q_k p(x | y, m = k).

    ``Z_k = ∫ μ̄_in_k μ̄_out`` (normalised messages) is the normaliser of the
    k-th conditional posterior; dividing by it makes q(switch), not the
    evidences a second time, weight the sub-models' posteriors (eq. 16 of
    van Erp et al. 2023).
    """
    normalisers = stack_last([product(m_out.normalised(), m.normalised()).log_scale for m in m_inputs])
    q = q_switch.probabilities
    with np.errstate(divide="ignore"):
        log_weights = np.log(q) - normalisers
    # log-scale chosen so that the node's free-energy term is Σ_k q_k F_k (eq. 12 of van Erp et al.):
    # Σ_k q_k (s_k + log Z_k) + log Σ_k q_k / Z_k, with s_k the scales of the inputs
    expected = np.sum(np.where(q > 0, q * (_input_scales(m_inputs) + normalisers), 0.0), axis=-1)
    return Mixture.create(log_weights, m_inputs, expected + logsumexp(log_weights, axis=-1))


# Every input a constant: the engine groups them as q_inputs (point masses);
# the messages are the same, a mixture of point masses at the constants.
@rule(MixtureNode, "out", output=lambda families: Mixture.of(families["q_inputs"]))
def sum_product_constant_inputs(m_switch: Categorical, q_inputs: PointMass, m_out: Distribution) -> Mixture:
    """As :func:`sum_product`, the inputs being constants."""
    return sum_product(m_switch, q_inputs, m_out)


@rule(MixtureNode, "out", output=lambda families: Mixture.of(families["q_inputs"]))
def selected_constant_inputs(q_switch: PointMass, q_inputs: PointMass, m_out: Distribution) -> Mixture:
    """As :func:`selected`, the inputs being constants."""
    return selected(q_switch, q_inputs, m_out)


@rule(MixtureNode, "out", output=lambda families: Mixture.of(families["q_inputs"]))
def variational_constant_inputs(q_switch: Categorical, q_inputs: PointMass, m_out: Distribution) -> Mixture:
    """As :func:`variational`, the inputs being constants."""
    return variational(q_switch, q_inputs, m_out)
