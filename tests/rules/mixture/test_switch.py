"""Table test of the mixture rule towards ``switch``: the evidences of the sub-models.

    μ_switch(k) = ∫ μ_out(x) μ_in_k(x) dx
                = exp(s_out + s_k) N(μ_out | m_k, v_out + v_k)     (Gaussian messages)
                = exp(s_out) μ̄_out(c_k)                            (a constant input c_k)

returned as a Categorical with ``p_k ∝ μ_switch(k)`` and
``log_scale = log Σ_k μ_switch(k)`` (van Erp et al. 2023, Table 1 and eq. 42).
The expected values below are written with :func:`log_normal`, the Gaussian
log-density formula, never by calling a rule; each case is also checked
against numerical integration of the factor (``harness.numerical_switch_message``).
"""
import math

import numpy as np
import pytest

from fgraph.families import Categorical, Mixture, NormalMeanPrecision, NormalMeanVariance, PointMass
from tests.rules.mixture.harness import mixture_message, numerical_switch_message


def log_normal(x, mean, var):
    """``log N(x | mean, var)``."""
    x, mean, var = (np.asarray(a, dtype=float) for a in (x, mean, var))
    return -0.5 * np.log(2 * np.pi * var) - 0.5 * (x - mean) ** 2 / var


def categorical_from_log(log_evidence):
    """The expected Categorical from unnormalised log-probabilities (axis −1)."""
    log_evidence = np.asarray(log_evidence, dtype=float)
    peak = log_evidence.max(axis=-1, keepdims=True)
    total = np.log(np.exp(log_evidence - peak).sum(axis=-1)) + peak[..., 0]
    return np.exp(log_evidence - total[..., None]), total


def mixture_of_two(log_scale):
    """0.4 N(−1, 0.5) + 0.6 N(1, 0.3), scaled."""
    return Mixture.create(np.log([0.4, 0.6]), [NormalMeanVariance(-1.0, 0.5), NormalMeanVariance(1.0, 0.3)], log_scale)


CASES = [
    pytest.param(
        {"m_out": NormalMeanVariance(0.5, 2.0, log_scale=0.3),
         "m_in1": NormalMeanVariance(-1.0, 1.0, log_scale=-0.2),
         "m_in2": NormalMeanVariance(2.0, 0.5, log_scale=0.7)},
        [0.3 - 0.2 + log_normal(0.5, -1.0, 3.0), 0.3 + 0.7 + log_normal(0.5, 2.0, 2.5)],
        "sum_product", id="two-normals-scaled"),
    pytest.param(
        {"m_out": NormalMeanVariance(0.0, 1.0),
         "m_in1": NormalMeanVariance(0.0, 1.0),
         "m_in2": NormalMeanPrecision(1.0, 4.0),  # variance 0.25
         "m_in3": NormalMeanVariance(-3.0, 9.0)},
        [log_normal(0.0, 0.0, 2.0), log_normal(0.0, 1.0, 1.25), log_normal(0.0, -3.0, 10.0)],
        "sum_product", id="three-normals"),
    # every input a constant c_k: the evidences are μ_out(c_k)
    pytest.param(
        {"m_out": NormalMeanVariance(1.0, 2.0, log_scale=0.5),
         "q_in1": PointMass(0.0), "q_in2": PointMass(1.5), "q_in3": PointMass(3.0)},
        [0.5 + log_normal(0.0, 1.0, 2.0), 0.5 + log_normal(1.5, 1.0, 2.0), 0.5 + log_normal(3.0, 1.0, 2.0)],
        "sum_product_constant_inputs", id="constants"),
    # a constant beside a sub-model
    pytest.param(
        {"m_out": NormalMeanVariance(1.0, 2.0, log_scale=-0.1),
         "q_in1": PointMass(0.2),
         "m_in2": NormalMeanVariance(1.0, 1.0, log_scale=0.4)},
        [-0.1 + log_normal(0.2, 1.0, 2.0), -0.1 + 0.4 + log_normal(1.0, 1.0, 3.0)],
        "sum_product", id="constant-and-normal"),
    # a nested mixture on an input: its evidence is the weighted sum of its components' evidences
    pytest.param(
        {"m_out": NormalMeanVariance(0.2, 1.5, log_scale=0.1),
         "m_in1": mixture_of_two(0.2),
         "m_in2": NormalMeanVariance(0.0, 1.0)},
        [0.1 + 0.2 + np.log(0.4 * np.exp(log_normal(0.2, -1.0, 2.0)) + 0.6 * np.exp(log_normal(0.2, 1.0, 1.8))),
         0.1 + log_normal(0.2, 0.0, 2.5)],
        "sum_product", id="nested-mixture-input"),
    # a mixture on out (the output feeds another mixture or a mixture-valued likelihood)
    pytest.param(
        {"m_out": mixture_of_two(-0.3),
         "m_in1": NormalMeanVariance(0.0, 1.0, log_scale=0.2),
         "m_in2": NormalMeanVariance(2.0, 0.5)},
        [-0.3 + 0.2 + np.log(0.4 * np.exp(log_normal(0.0, -1.0, 1.5)) + 0.6 * np.exp(log_normal(0.0, 1.0, 1.3))),
         -0.3 + np.log(0.4 * np.exp(log_normal(2.0, -1.0, 1.0)) + 0.6 * np.exp(log_normal(2.0, 1.0, 0.8)))],
        "sum_product", id="mixture-out"),
]


@pytest.mark.parametrize("inputs, log_evidence, rule_name", CASES)
def test_switch(inputs, log_evidence, rule_name):
    count = sum(name.startswith(("m_in", "q_in")) for name in inputs)
    result = mixture_message("switch", inputs, count, expected_rule=rule_name)
    assert isinstance(result, Categorical)
    p, log_scale = categorical_from_log(log_evidence)
    np.testing.assert_allclose(result.probabilities, p, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(result.log_scale, log_scale, rtol=0, atol=1e-12)


@pytest.mark.parametrize("inputs, log_evidence, rule_name", CASES)
def test_switch_against_numerical_integration(inputs, log_evidence, rule_name):
    """``log μ_switch(k) = log_scale + log p_k`` equals the integral of the factor against the messages."""
    count = sum(name.startswith(("m_in", "q_in")) for name in inputs)
    result = mixture_message("switch", inputs, count)
    m_inputs = [inputs.get(f"m_in{k + 1}", inputs.get(f"q_in{k + 1}")) for k in range(count)]
    numerical = numerical_switch_message(inputs["m_out"], m_inputs)
    np.testing.assert_allclose(result.log_scale + np.log(result.probabilities), numerical, rtol=0, atol=1e-9)


def test_switch_batched():
    """Batch (2,): an unbatched input broadcasts against batched ones, element by element."""
    inputs = {
        "m_out": NormalMeanVariance([0.0, 1.0], [1.0, 2.0], log_scale=[0.1, -0.1]),
        "m_in1": NormalMeanVariance(0.0, 1.0),
        "m_in2": NormalMeanVariance([1.0, -1.0], 0.5, log_scale=[0.0, 0.2]),
    }
    result = mixture_message("switch", inputs, 2)
    assert result.batch_shape == (2,)
    log_evidence = np.array([
        [0.1 + log_normal(0.0, 0.0, 2.0), 0.1 + log_normal(0.0, 1.0, 1.5)],
        [-0.1 + log_normal(1.0, 0.0, 3.0), -0.1 + 0.2 + log_normal(1.0, -1.0, 2.5)],
    ])
    p, log_scale = categorical_from_log(log_evidence)
    np.testing.assert_allclose(result.probabilities, p, rtol=1e-12)
    np.testing.assert_allclose(result.log_scale, log_scale, rtol=0, atol=1e-12)
    for b in range(2):
        numerical = numerical_switch_message(inputs["m_out"][b], [inputs["m_in1"], inputs["m_in2"][b]])
        np.testing.assert_allclose(result.log_scale[b] + np.log(result.probabilities[b]), numerical, rtol=0, atol=1e-9)


def test_switch_with_an_impossible_branch():
    """A sub-model of zero evidence (log-scale −inf) gets probability 0; the total stays finite."""
    inputs = {
        "m_out": NormalMeanVariance(0.0, 1.0),
        "m_in1": NormalMeanVariance(0.0, 1.0, log_scale=-np.inf),
        "m_in2": NormalMeanVariance(1.0, 1.0),
    }
    with np.errstate(invalid="ignore"):
        result = mixture_message("switch", inputs, 2)
    np.testing.assert_allclose(result.probabilities, [0.0, 1.0])
    np.testing.assert_allclose(result.log_scale, log_normal(0.0, 1.0, 2.0), rtol=0, atol=1e-12)


def test_switch_permutes_with_its_inputs():
    """Swapping two inputs swaps their probabilities and keeps the scale."""
    a, b = NormalMeanVariance(-1.0, 1.0, log_scale=0.3), NormalMeanVariance(2.0, 0.5)
    out = NormalMeanVariance(0.5, 2.0)
    forward = mixture_message("switch", {"m_out": out, "m_in1": a, "m_in2": b}, 2)
    backward = mixture_message("switch", {"m_out": out, "m_in1": b, "m_in2": a}, 2)
    np.testing.assert_allclose(forward.probabilities, backward.probabilities[::-1], rtol=1e-13)
    np.testing.assert_allclose(forward.log_scale, backward.log_scale, rtol=0, atol=1e-13)
    assert math.isclose(float(forward.probabilities.sum()), 1.0)


def test_switch_from_an_observed_output():
    """``out`` observed at y: ``μ_switch(k) = ∫ δ(x − y) μ_in_k(x) dx = e^{s_k} μ̄_in_k(y)``, a nested mixture included."""
    inputs = {"q_out": PointMass(0.7),
              "m_in1": NormalMeanVariance(0.0, 1.0, log_scale=0.2),
              "m_in2": NormalMeanPrecision(2.0, 0.5),  # variance 2
              "m_in3": mixture_of_two(-0.4)}
    result = mixture_message("switch", inputs, 3, expected_rule="observed_output")
    p, log_scale = categorical_from_log([
        0.2 + log_normal(0.7, 0.0, 1.0),
        log_normal(0.7, 2.0, 2.0),
        -0.4 + np.log(0.4 * np.exp(log_normal(0.7, -1.0, 0.5)) + 0.6 * np.exp(log_normal(0.7, 1.0, 0.3))),
    ])
    np.testing.assert_allclose(result.probabilities, p, rtol=1e-12)
    np.testing.assert_allclose(result.log_scale, log_scale, rtol=0, atol=1e-12)


def test_switch_on_floats_equals_the_batched_path():
    """Unbatched normal messages take a path on Python floats; a batch of one takes the array path: same numbers."""
    out, inputs = NormalMeanVariance(0.4, 1.7, log_scale=-0.6), [
        NormalMeanVariance(-1.0, 0.8, log_scale=0.25), NormalMeanPrecision(2.0, 3.0), NormalMeanVariance(0.3, 5.0)]
    single = mixture_message("switch", {"m_out": out, **{f"m_in{k + 1}": m for k, m in enumerate(inputs)}}, 3)
    batched = mixture_message("switch", {"m_out": out.broadcast_to((1,)),
                                         **{f"m_in{k + 1}": m.broadcast_to((1,)) for k, m in enumerate(inputs)}}, 3)
    assert single.batch_shape == () and batched.batch_shape == (1,)
    np.testing.assert_allclose(single.probabilities, batched.probabilities[0], rtol=1e-14)
    np.testing.assert_allclose(single.log_scale, batched.log_scale[0], rtol=1e-15)
