"""Table test of the mixture rules towards an input ``in_k``.

* sum-product: ``μ_out`` scaled by ``μ_switch(k)``: log-scale ``s_out + s_switch + log p_k``,
  so that the belief on the k-th sub-model's edge is its conditional posterior
  ``p(s | y, m = k)`` with log-scale ``log p(y, m = k)``. (The exact sum-product
  message also holds ``Σ_{j≠k} μ_switch(j) Z_j``, a constant in ``in_k``: the
  other sub-models' evidence; conditioning on ``m = k`` drops it, Table 1 of
  van Erp et al. 2023.)
* point-mass or variational switch: ``μ_out`` itself (its scale included).

The same messages serve when the other inputs are constants (grouped as ``q_inputs``).
"""
import math

import numpy as np
import pytest

from fgraph.families import Categorical, Mixture, NormalMeanVariance, PointMass, UnivariateNormal
from tests.rules.mixture.harness import mixture_message
from tests.rules.mixture.test_switch import log_normal

OUT = NormalMeanVariance(0.5, 2.0, log_scale=0.3)
SWITCH = Categorical([0.2, 0.5, 0.3], log_scale=0.1)
INPUTS = {"m_in1": NormalMeanVariance(-1.0, 1.0, log_scale=-0.2), "m_in2": NormalMeanVariance(2.0, 0.5, log_scale=0.7),
          "m_in3": NormalMeanVariance(0.0, 4.0)}


def others(k: int) -> dict:
    return {name: m for name, m in INPUTS.items() if name != f"m_in{k}"}


@pytest.mark.parametrize("k, p", [(1, 0.2), (2, 0.5), (3, 0.3)])
def test_sum_product(k, p):
    result = mixture_message(f"in{k}", dict(others(k), m_out=OUT, m_switch=SWITCH), 3, expected_rule="sum_product")
    assert isinstance(result, UnivariateNormal)
    np.testing.assert_allclose([result.mean, result.var], [0.5, 2.0], rtol=1e-13)
    np.testing.assert_allclose(result.log_scale, 0.3 + 0.1 + math.log(p), rtol=0, atol=1e-13)


def test_sum_product_belief_scale_is_the_joint_evidence_of_the_branch():
    """``∫ μ_in_k · (message to in_k) = p_k e^{s_switch} ∫ μ_out μ_in_k``, the k-th term of the switch's evidence."""
    k = 2
    result = mixture_message(f"in{k}", dict(others(k), m_out=OUT, m_switch=SWITCH), 3)
    belief = result * INPUTS["m_in2"]
    expected = math.log(0.5) + 0.1 + 0.3 + 0.7 + log_normal(0.5, 2.0, 2.5)
    np.testing.assert_allclose(belief.log_scale, expected, rtol=0, atol=1e-12)


def test_sum_product_zero_probability():
    switch = Categorical([0.0, 1.0])
    result = mixture_message("in1", {"m_out": OUT, "m_switch": switch, "m_in2": INPUTS["m_in2"]}, 2)
    assert result.log_scale == -np.inf
    np.testing.assert_allclose([result.mean, result.var], [0.5, 2.0])


def test_sum_product_mixture_out_message():
    """A mixture message on ``out`` (a nested mixture downstream) is passed on, scaled."""
    out = Mixture.create(np.log([0.4, 0.6]), [NormalMeanVariance(-1.0, 0.5), NormalMeanVariance(1.0, 0.3)], 0.2)
    result = mixture_message("in2", {"m_out": out, "m_switch": Categorical([0.25, 0.75]), "m_in1": INPUTS["m_in1"]}, 2)
    assert isinstance(result, Mixture)
    np.testing.assert_allclose(result.weights, [0.4, 0.6])
    np.testing.assert_allclose(result.log_scale, 0.2 + math.log(0.75), rtol=0, atol=1e-13)


def test_sum_product_beside_constants():
    result = mixture_message("in3", {"m_out": OUT, "m_switch": SWITCH, "q_in1": PointMass(0.0),
                                     "q_in2": PointMass(1.0)}, 3, expected_rule="sum_product_beside_constants")
    np.testing.assert_allclose([result.mean, result.var], [0.5, 2.0])
    np.testing.assert_allclose(result.log_scale, 0.3 + 0.1 + math.log(0.3), rtol=0, atol=1e-13)


def test_sum_product_beside_a_constant_and_a_sub_model():
    result = mixture_message("in3", {"m_out": OUT, "m_switch": SWITCH, "q_in1": PointMass(0.0),
                                     "m_in2": INPUTS["m_in2"]}, 3, expected_rule="sum_product")
    np.testing.assert_allclose(result.log_scale, 0.3 + 0.1 + math.log(0.3), rtol=0, atol=1e-13)


def test_sum_product_batched():
    switch = Categorical([[0.2, 0.8], [0.6, 0.4]], log_scale=[0.0, -1.0])
    out = NormalMeanVariance([0.0, 1.0], [1.0, 3.0], log_scale=[0.5, 0.25])
    result = mixture_message("in2", {"m_out": out, "m_switch": switch, "m_in1": INPUTS["m_in1"]}, 2)
    assert result.batch_shape == (2,)
    np.testing.assert_allclose(result.mean, [0.0, 1.0])
    np.testing.assert_allclose(result.var, [1.0, 3.0])
    np.testing.assert_allclose(result.log_scale, [0.5 + math.log(0.8), 0.25 - 1.0 + math.log(0.4)], rtol=0, atol=1e-13)


@pytest.mark.parametrize("switch", [PointMass([0.0, 1.0, 0.0], 1), Categorical([0.2, 0.5, 0.3], log_scale=0.1)],
                         ids=["point-mass", "variational"])
@pytest.mark.parametrize("k", [1, 2, 3])
def test_conditional(switch, k):
    """Every sub-model sees ``μ_out`` unchanged, scale included (its belief: the conditional posterior)."""
    result = mixture_message(f"in{k}", dict(others(k), m_out=OUT, q_switch=switch), 3, expected_rule="conditional")
    np.testing.assert_allclose([result.mean, result.var, result.log_scale], [0.5, 2.0, 0.3], rtol=1e-13)


@pytest.mark.parametrize("switch", [PointMass([1.0, 0.0], 1), Categorical([0.7, 0.3])], ids=["point-mass", "variational"])
def test_conditional_beside_constants(switch):
    result = mixture_message("in1", {"m_out": OUT, "q_switch": switch, "q_in2": PointMass(1.0)}, 2,
                             expected_rule="conditional_beside_constants")
    np.testing.assert_allclose([result.mean, result.var, result.log_scale], [0.5, 2.0, 0.3], rtol=1e-13)


@pytest.mark.parametrize("k, p", [(1, 0.2), (2, 0.5), (3, 0.3)])
def test_sum_product_observed_output(k, p):
    """``out`` observed at y: the k-th sub-model receives δ(in_k − y) scaled by ``μ_switch(k)``."""
    result = mixture_message(f"in{k}", dict(others(k), q_out=PointMass(0.7), m_switch=SWITCH), 3,
                             expected_rule="sum_product_observed_output")
    assert isinstance(result, PointMass)
    assert result.value == 0.7
    np.testing.assert_allclose(result.log_scale, 0.1 + math.log(p), rtol=0, atol=1e-13)


@pytest.mark.parametrize("switch", [PointMass([0.0, 1.0, 0.0], 1), Categorical([0.2, 0.5, 0.3], log_scale=0.1)],
                         ids=["point-mass", "variational"])
def test_conditional_observed_output(switch):
    result = mixture_message("in2", dict(others(2), q_out=PointMass(0.7), q_switch=switch), 3,
                             expected_rule="conditional_observed_output")
    assert isinstance(result, PointMass) and result.value == 0.7 and result.log_scale == 0.0
