"""Messages out of LinearExperts towards ``switch``: ∫ f̃_k(y) m_out(y) dy per expert (a categorical).

With f̃_k(y) = N(y | μ_k, D_k⁻¹) exp(c_k), D_k = diag(E[λ_k]) (see :mod:`fgraph.nodes.linear_experts`), and
the incoming message in natural form m̄(y) = exp(κ) h(y) exp(ξᵀy − ½ yᵀWy) (κ = −A(ξ, W) for a
normalised density, 0 for a :class:`~fgraph.families.mvnormal.GaussianLikelihood`, h(y) = (2π)^{−h/2}):

    log ∫ f̃_k m̄ = c_k + κ − A(D_k μ_k, D_k) + A(D_k μ_k + ξ, D_k + W) − (h/2) log 2π,
    A(ξ, P) = ½ ξᵀP⁻¹ξ − ½ log|P|.

The categorical's probabilities are these normalised over k and its log-scale their log-sum-exp.
"""
import numpy as np

from fgraph.families import Categorical, Distribution, MultivariateNormal, PointMass
from fgraph.families.base import logsumexp
from fgraph.families.linalg import cholesky_factor, triangular_solve_vector
from fgraph.registry import rule
from fgraph.nodes.linear_experts import (
    LOG_2PI,
    LinearExpertsNode,
    expected_factor,
    log_expected_factor_at,
)


def gaussian_log_partition(weighted_mean, precision):
    """A(ξ, P) = ½ ξᵀP⁻¹ξ − ½ log|P| over the last axes."""
    factor = cholesky_factor(precision)
    whitened = triangular_solve_vector(factor, weighted_mean)
    return 0.5 * np.sum(whitened * whitened, axis=-1) - np.sum(np.log(np.diagonal(factor, axis1=-2, axis2=-1)), -1)


def log_evidence_per_expert(m_out: MultivariateNormal, q_parameters, q_input, node) -> tuple:
    """log ∫ f̃_k(y) m̄_out(y) dy (``plate + (K,)``), with the pieces the joint marginal reuses:
    the components' natural parameters (ξ_k + ξ, D_k + W), ``plate + (K, h)``, ``plate + (K, h, h)``.

    Kept on the message for q(θ) and the input: the switch's message and the joint marginal read it."""
    return m_out.derived_with(f"_log_evidence_per_expert_{id(node)}", (q_parameters, q_input),
                              lambda: _log_evidence_per_expert(m_out, q_parameters, q_input, node))


def _log_evidence_per_expert(m_out: MultivariateNormal, q_parameters, q_input, node) -> tuple:
    predicted, precision, offset = expected_factor(q_parameters, q_input, node)
    h = precision.shape[-1]
    own = precision[..., :, None] * np.eye(h)  # D_k, (K, h, h)
    own_weighted = precision * predicted  # D_k μ_k, plate + (K, h)
    coefficient = np.asarray(m_out.normalised().log_coefficient())
    weighted_mean = np.asarray(m_out.weighted_mean)[..., None, :]
    joint_weighted = own_weighted + weighted_mean
    joint_precision = own + np.asarray(m_out.precision)[..., None, :, :]
    own_partition = 0.5 * np.sum(own_weighted * predicted, axis=-1) - 0.5 * np.sum(np.log(precision), axis=-1)
    log_z = (offset + coefficient[..., None] - own_partition + gaussian_log_partition(joint_weighted, joint_precision)
             - 0.5 * h * LOG_2PI)
    return log_z, joint_weighted, joint_precision


def _categorical(log_values) -> Categorical:
    log_norm = logsumexp(log_values, axis=-1)
    return Categorical(np.exp(log_values - log_norm[..., None]), log_scale=log_norm, check=False)


@rule(LinearExpertsNode, "switch")
def structured(m_out: MultivariateNormal, q_parameters: Distribution, q_input: PointMass, node) -> Categorical:
    """∝ ∫ f̃_k(y) m_out(y) dy (module docstring), log-scale the log of their sum."""
    return _categorical(log_evidence_per_expert(m_out, q_parameters, q_input, node)[0])


@rule(LinearExpertsNode, "switch")
def mean_field(q_out: Distribution, q_parameters: Distribution, q_input: PointMass, node) -> Categorical:
    """∝ exp E_q(y)[log f̃_k(y)] = c_k + ½ Σ_i log E[λ_ki] − (h/2) log 2π − ½ Σ_i E[λ_ki] E[(y_i − μ_ki)²]
    (mean field: q(y) independent of z)."""
    predicted, precision, offset = expected_factor(q_parameters, q_input, node)
    mean = np.asarray(q_out.mean, dtype=float)[..., None, :]
    squares = np.diagonal(np.asarray(q_out.second_moment, dtype=float), axis1=-2, axis2=-1)[..., None, :]
    expected_error = squares - 2.0 * mean * predicted + predicted * predicted
    return _categorical(offset + 0.5 * np.sum(np.log(precision), axis=-1) - 0.5 * precision.shape[-1] * LOG_2PI
                        - 0.5 * np.sum(precision * expected_error, axis=-1))


@rule(LinearExpertsNode, "switch")
def from_known_out(q_out: PointMass, q_parameters: Distribution, q_input: PointMass, node) -> Categorical:
    """∝ f̃_k(y) at the known y: log f̃_k(y) = log N(y | M_k x̃, diag(E[λ_k])⁻¹) + c_k, log-scale their log-sum-exp."""
    predicted, precision, offset = expected_factor(q_parameters, q_input, node)
    return _categorical(log_expected_factor_at(np.asarray(q_out.value, dtype=float), predicted, precision, offset))
