"""Table test of the mixture rules towards ``out``.

* sum-product (model averaging): ``μ_out(x) = Σ_k μ_switch(k) μ_in_k(x)``, a mixture with
  weights ``∝ p_k exp(s_k)`` and ``log_scale = s_switch + log Σ_k p_k exp(s_k)``;
* a point-mass switch at k (model selection): ``μ_in_k`` with its scale ``s_k``;
* a variational switch ``q`` (model combination): weights ``∝ q_k / Z_k`` with
  ``Z_k = ∫ μ̄_out μ̄_in_k`` so that the belief at ``out`` is ``Σ_k q_k p(x | y, m = k)``,
  and ``log_scale = Σ_k q_k (s_k + log Z_k) + log Σ_k q_k / Z_k`` (the node's free-energy
  term is then ``Σ_k q_k F_k``, eq. 12 of van Erp et al. 2023).

Expected values come from the Gaussian formulas written out in the cases.
The sum-product rule is also checked against numerical integration of the
factor ``Π_k (c_k δ(out − in_k))^{switch_k}`` (see ``harness``).
"""
import math

import numpy as np
import pytest

from fgraph.families import Categorical, Mixture, NormalMeanVariance, PointMass, UnivariateNormal
from tests.rules.mixture.harness import mixture_message, numerical_log_integral, numerical_out_density
from tests.rules.mixture.test_switch import log_normal


def assert_mixture(result, weights, means, variances, log_scale):
    assert isinstance(result, Mixture)
    np.testing.assert_allclose(result.weights, weights, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose([np.asarray(c.mean) for c in result.components], means, rtol=1e-12)
    np.testing.assert_allclose([np.asarray(c.var) for c in result.components], variances, rtol=1e-12)
    np.testing.assert_allclose(result.log_scale, log_scale, rtol=0, atol=1e-12)
    assert all(np.all(c.log_scale == 0.0) for c in result.components)


def softmax(log_weights):
    log_weights = np.asarray(log_weights, dtype=float)
    w = np.exp(log_weights - np.max(log_weights))
    return w / w.sum()


IN1 = NormalMeanVariance(-1.0, 1.0, log_scale=-0.2)
IN2 = NormalMeanVariance(2.0, 0.5, log_scale=0.7)
IN3 = NormalMeanVariance(0.5, 3.0, log_scale=0.0)
OUT = NormalMeanVariance(0.3, 2.0, log_scale=0.4)


# ------------------------------------------------------------ sum-product
def test_sum_product_two_inputs():
    switch = Categorical([0.3, 0.7], log_scale=0.25)
    result = mixture_message("out", {"m_switch": switch, "m_in1": IN1, "m_in2": IN2, "m_out": OUT}, 2,
                             expected_rule="sum_product")
    assert isinstance(result, Mixture.of(UnivariateNormal))
    log_weights = [math.log(0.3) - 0.2, math.log(0.7) + 0.7]
    assert_mixture(result, softmax(log_weights), [-1.0, 2.0], [1.0, 0.5],
                   0.25 + math.log(0.3 * math.exp(-0.2) + 0.7 * math.exp(0.7)))


def test_sum_product_does_not_read_the_out_message():
    switch = Categorical([0.2, 0.5, 0.3])
    inputs = {"m_switch": switch, "m_in1": IN1, "m_in2": IN2, "m_in3": IN3}
    first = mixture_message("out", dict(inputs, m_out=OUT), 3)
    second = mixture_message("out", dict(inputs, m_out=NormalMeanVariance(-4.0, 0.1, log_scale=3.0)), 3)
    np.testing.assert_allclose(first.log_weights, second.log_weights)
    np.testing.assert_allclose(first.log_scale, second.log_scale)
    log_weights = np.log([0.2, 0.5, 0.3]) + np.array([-0.2, 0.7, 0.0])
    assert_mixture(first, softmax(log_weights), [-1.0, 2.0, 0.5], [1.0, 0.5, 3.0],
                   math.log(0.2 * math.exp(-0.2) + 0.5 * math.exp(0.7) + 0.3))


def test_sum_product_with_a_zero_probability_model():
    switch = Categorical([0.0, 1.0], log_scale=-0.5)
    result = mixture_message("out", {"m_switch": switch, "m_in1": IN1, "m_in2": IN2, "m_out": OUT}, 2)
    assert result.log_weights[0] == -np.inf
    assert_mixture(result, [0.0, 1.0], [-1.0, 2.0], [1.0, 0.5], -0.5 + 0.7)


def test_sum_product_constant_inputs():
    """Every input a constant: a mixture of point masses at the constants."""
    switch = Categorical([0.25, 0.75], log_scale=0.1)
    result = mixture_message("out", {"m_switch": switch, "q_in1": PointMass(-1.0), "q_in2": PointMass(2.0),
                                     "m_out": OUT}, 2, expected_rule="sum_product_constant_inputs")
    assert isinstance(result, Mixture.of(PointMass))
    np.testing.assert_allclose(result.weights, [0.25, 0.75], rtol=1e-13)
    np.testing.assert_allclose([c.value for c in result.components], [-1.0, 2.0])
    np.testing.assert_allclose(result.log_scale, 0.1, rtol=0, atol=1e-13)
    np.testing.assert_allclose(result.mean, 0.25 * -1.0 + 0.75 * 2.0)


def test_sum_product_batched():
    switch = Categorical([[0.3, 0.7], [0.9, 0.1]], log_scale=[0.0, 0.5])
    in2 = NormalMeanVariance([2.0, -2.0], [0.5, 1.5], log_scale=[0.7, -0.3])
    result = mixture_message("out", {"m_switch": switch, "m_in1": IN1, "m_in2": in2, "m_out": OUT}, 2)
    assert result.batch_shape == (2,)
    log_weights = np.log([[0.3, 0.7], [0.9, 0.1]]) + np.array([[-0.2, 0.7], [-0.2, -0.3]])
    np.testing.assert_allclose(result.weights, np.exp(log_weights) / np.exp(log_weights).sum(-1, keepdims=True),
                               rtol=1e-12)
    np.testing.assert_allclose(result.log_scale, [0.0, 0.5] + np.log(np.exp(log_weights).sum(-1)), rtol=0, atol=1e-12)
    weights = np.exp(log_weights) / np.exp(log_weights).sum(-1, keepdims=True)
    np.testing.assert_allclose(result.mean, np.sum(weights * np.array([[-1.0, 2.0], [-1.0, -2.0]]), -1), rtol=1e-12)


@pytest.mark.parametrize("probabilities", [[0.2, 0.5, 0.3], [0.0, 0.6, 0.4], [1.0, 0.0, 0.0]])
def test_sum_product_one_switch_on_floats_matches_the_batched_arrays(probabilities):
    """One switch takes a path on Python floats; a batch of one takes the array path: the same message."""
    inputs = [IN1, IN2, NormalMeanVariance(0.5, 3.0, log_scale=-1.5)]
    named = {f"m_in{k + 1}": m for k, m in enumerate(inputs)}
    one = mixture_message("out", dict(named, m_switch=Categorical(probabilities, log_scale=0.3), m_out=OUT), 3)
    batch = mixture_message("out", dict(named, m_switch=Categorical([probabilities], log_scale=[0.3]), m_out=OUT), 3)
    assert one.batch_shape == () and batch.batch_shape == (1,)
    np.testing.assert_allclose(one.log_weights, batch.log_weights[0], rtol=1e-15, atol=0)
    np.testing.assert_allclose(one.log_scale, batch.log_scale[0], rtol=1e-15, atol=0)
    with np.errstate(divide="ignore"):
        log_weights = np.log(probabilities) + np.array([-0.2, 0.7, -1.5])
    np.testing.assert_allclose(one.weights, softmax(log_weights), rtol=1e-13, atol=1e-300)
    np.testing.assert_allclose(one.log_scale, 0.3 + np.log(np.sum(np.exp(log_weights))), rtol=0, atol=1e-13)


@pytest.mark.parametrize("switch, inputs", [
    (Categorical([0.3, 0.7], log_scale=0.25), [IN1, IN2]),
    (Categorical([0.2, 0.5, 0.3], log_scale=-0.4), [IN1, IN2, IN3]),
    (Categorical([0.6, 0.4]), [IN3, Mixture.create(np.log([0.4, 0.6]), [NormalMeanVariance(-1.0, 0.5),
                                                                           NormalMeanVariance(1.0, 0.3)], 0.2)]),
], ids=["two", "three", "nested-mixture"])
def test_sum_product_against_numerical_integration(switch, inputs):
    """``log μ_out(t) = log_scale + logpdf(t)`` pointwise, and ``log_scale = log ∫ μ_out``."""
    named = {f"m_in{k + 1}": m for k, m in enumerate(inputs)}
    result = mixture_message("out", dict(named, m_switch=switch, m_out=OUT), len(inputs))
    density = numerical_out_density(switch, inputs)
    for t in (-2.5, -1.0, 0.0, 0.7, 2.0, 4.0):
        np.testing.assert_allclose(result.log_scale + result.logpdf(t), math.log(density(t)), rtol=0, atol=1e-9)
    log_integral = numerical_log_integral(density, -40.0, 40.0, [-1.0, 0.5, 1.0, 2.0])
    np.testing.assert_allclose(result.log_scale, log_integral, rtol=0, atol=1e-9)


# ------------------------------------------------------------ selection
def test_selected_passes_the_chosen_input_with_its_scale():
    result = mixture_message("out", {"q_switch": PointMass([0.0, 1.0, 0.0], 1), "m_in1": IN1, "m_in2": IN2,
                                     "m_in3": IN3, "m_out": OUT}, 3, expected_rule="selected")
    assert_mixture(result, [0.0, 1.0, 0.0], [-1.0, 2.0, 0.5], [1.0, 0.5, 3.0], 0.7)
    np.testing.assert_allclose(result.mean, 2.0)
    np.testing.assert_allclose(result.var, 0.5)


def test_selected_constant_inputs():
    result = mixture_message("out", {"q_switch": PointMass([1.0, 0.0], 1), "q_in1": PointMass(-1.0),
                                     "q_in2": PointMass(2.0), "m_out": OUT}, 2, expected_rule="selected_constant_inputs")
    np.testing.assert_allclose(result.weights, [1.0, 0.0])
    np.testing.assert_allclose(result.mean, -1.0)
    np.testing.assert_allclose(result.log_scale, 0.0)


# ------------------------------------------------------------ variational switch
def test_variational_weights_and_scale():
    q = np.array([0.35, 0.65])
    result = mixture_message("out", {"q_switch": Categorical(q), "m_in1": IN1, "m_in2": IN2, "m_out": OUT}, 2,
                             expected_rule="variational")
    # Z_k = ∫ N(x | 0.3, 2) N(x | m_k, v_k) dx = N(0.3 | m_k, 2 + v_k)
    log_z = np.array([log_normal(0.3, -1.0, 3.0), log_normal(0.3, 2.0, 2.5)])
    scales = np.array([-0.2, 0.7])
    log_weights = np.log(q) - log_z
    expected_scale = np.sum(q * (scales + log_z)) + np.log(np.sum(q / np.exp(log_z)))
    assert_mixture(result, softmax(log_weights), [-1.0, 2.0], [1.0, 0.5], expected_scale)


def test_variational_belief_is_the_q_weighted_conditional_posteriors():
    """``μ_out · m_out`` normalised equals ``Σ_k q_k N(x | posterior of branch k)``."""
    q = np.array([0.2, 0.5, 0.3])
    result = mixture_message("out", {"q_switch": Categorical(q), "m_in1": IN1, "m_in2": IN2, "m_in3": IN3,
                                     "m_out": OUT}, 3)
    belief = result * OUT
    posterior_precision = 1 / np.array([1.0, 0.5, 3.0]) + 1 / 2.0
    posterior_mean = (np.array([-1.0, 2.0, 0.5]) / np.array([1.0, 0.5, 3.0]) + 0.3 / 2.0) / posterior_precision
    np.testing.assert_allclose(belief.weights, q, rtol=1e-12)
    np.testing.assert_allclose([c.mean for c in belief.components], posterior_mean, rtol=1e-12)
    np.testing.assert_allclose([c.var for c in belief.components], 1 / posterior_precision, rtol=1e-12)
    # log-scale of the belief: s_out + Σ_k q_k (s_k + log Z_k)
    log_z = np.array([log_normal(0.3, m, 2.0 + v) for m, v in [(-1.0, 1.0), (2.0, 0.5), (0.5, 3.0)]])
    np.testing.assert_allclose(belief.log_scale, 0.4 + np.sum(q * (np.array([-0.2, 0.7, 0.0]) + log_z)),
                               rtol=0, atol=1e-12)


def test_variational_with_a_zero_probability_model():
    q = np.array([0.0, 1.0])
    result = mixture_message("out", {"q_switch": Categorical(q), "m_in1": IN1, "m_in2": IN2, "m_out": OUT}, 2)
    log_z2 = log_normal(0.3, 2.0, 2.5)
    assert result.log_weights[0] == -np.inf
    np.testing.assert_allclose(result.log_scale, (0.7 + log_z2) - log_z2, rtol=0, atol=1e-12)


def test_variational_constant_inputs():
    q = np.array([0.4, 0.6])
    result = mixture_message("out", {"q_switch": Categorical(q), "q_in1": PointMass(-1.0), "q_in2": PointMass(2.0),
                                     "m_out": OUT}, 2, expected_rule="variational_constant_inputs")
    # Z_k = N(c_k | 0.3, 2): the out message evaluated at the constant
    log_z = np.array([log_normal(-1.0, 0.3, 2.0), log_normal(2.0, 0.3, 2.0)])
    np.testing.assert_allclose(result.weights, softmax(np.log(q) - log_z), rtol=1e-12)
    np.testing.assert_allclose(result.log_scale, np.sum(q * log_z) + np.log(np.sum(q / np.exp(log_z))), rtol=0,
                               atol=1e-12)
    belief = result * OUT  # point masses at the constants with weights q
    np.testing.assert_allclose(belief.weights, q, rtol=1e-12)
