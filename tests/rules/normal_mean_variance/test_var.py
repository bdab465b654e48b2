"""Table test of the NormalMeanVariance rules towards ``var``: exp(-½ log 2π) v^(-1/2) exp(-(S/2)/v), S = E[(out - mean)²].

The message is the non-integrable InverseGammaLikelihood with shape -1/2, scale S/2 and
coefficient (log-scale) -½ log 2π, exactly exp E_q[log N(out | mean, v)]. ReactiveMP writes the
same message as the improper GammaInverse(-0.5, S/2); the cases marked so are its inputs and
outputs from ReactiveMP.jl test/rules/normal_mean_variance/var_tests.jl.
"""
import math

import numpy as np
import pytest
from scipy import integrate

from fgraph.families import (
    InverseGamma,
    MvNormalMeanCovariance,
    MvNormalMeanPrecision,
    NormalMeanPrecision,
    NormalMeanVariance,
    NormalWeightedMeanPrecision,
    PointMass,
    product,
)
from fgraph.plates import EmpiricalMoments
from fgraph.registry import resolve, PLATE
from fgraph.nodes.normal import NormalMeanVariance as Node
from tests.rules.quadrature import DensityFactor, log_message, normal_pdf
from tests.rules.tables import assert_message, inverse_gamma, inverse_gamma_likelihood, message

KAPPA = -0.5 * math.log(2.0 * math.pi)

CASES = [
    # S = (3 - 1)² = 4
    pytest.param({"q_out": PointMass(3.0), "q_mean": PointMass(1.0)}, inverse_gamma_likelihood(-0.5, 2.0, KAPPA),
                 id="point-masses"),
    # ReactiveMP: (PointMass(-1), PointMass(2)) -> GammaInverse(-0.5, 4.5): S = 9
    pytest.param({"q_out": PointMass(-1.0), "q_mean": PointMass(2.0)}, inverse_gamma_likelihood(-0.5, 4.5, KAPPA),
                 id="reactivemp-point-masses"),
    # ReactiveMP: (NormalMeanVariance(-1, 2), PointMass(2)) -> GammaInverse(-0.5, 5.5): S = 9 + 2
    pytest.param({"q_out": NormalMeanVariance(-1.0, 2.0), "q_mean": PointMass(2.0)},
                 inverse_gamma_likelihood(-0.5, 5.5, KAPPA), id="reactivemp-normal-out"),
    # ReactiveMP: (PointMass(3), NormalMeanPrecision(1, 4)) -> GammaInverse(-0.5, 2.125): S = 4 + 1/4
    pytest.param({"q_out": PointMass(3.0), "q_mean": NormalMeanPrecision(1.0, 4.0)},
                 inverse_gamma_likelihood(-0.5, 2.125, KAPPA), id="reactivemp-precision-mean"),
    # ReactiveMP: (NormalWeightedMeanPrecision(2, 4), PointMass(1)) -> GammaInverse(-0.5, 0.25): mean 1/2, var 1/4
    pytest.param({"q_out": NormalWeightedMeanPrecision(2.0, 4.0), "q_mean": PointMass(1.0)},
                 inverse_gamma_likelihood(-0.5, 0.25, KAPPA), id="reactivemp-weighted-out"),
    # ReactiveMP: (NormalMeanVariance(2, 4), NormalMeanVariance(-1, 2)) -> GammaInverse(-0.5, 7.5): S = 9 + 4 + 2
    pytest.param({"q_out": NormalMeanVariance(2.0, 4.0), "q_mean": NormalMeanVariance(-1.0, 2.0)},
                 inverse_gamma_likelihood(-0.5, 7.5, KAPPA), id="reactivemp-normals"),
    # ReactiveMP: (NormalMeanPrecision(3, 3), NormalMeanPrecision(1, 4)) -> GammaInverse(-0.5, 55/24): S = 4 + 1/3 + 1/4
    pytest.param({"q_out": NormalMeanPrecision(3.0, 3.0), "q_mean": NormalMeanPrecision(1.0, 4.0)},
                 inverse_gamma_likelihood(-0.5, 55.0 / 24.0, KAPPA), id="reactivemp-precisions"),
    pytest.param({"q_out": PointMass([3.0, 0.0, 1.0]), "q_mean": PointMass(1.0)},
                 inverse_gamma_likelihood(-0.5, [2.0, 0.5, 0.0], KAPPA), id="batched"),
    # joint q(out, mean), ReactiveMP: MvNormalMeanCovariance([2, 3], [[2, -0.1], [-0.1, 3]]) -> 3.1:
    # S = (2 - 3)² + 2 + 0.2 + 3 = 6.2
    pytest.param({"q_out_mean": MvNormalMeanCovariance([2.0, 3.0], [[2.0, -0.1], [-0.1, 3.0]])},
                 inverse_gamma_likelihood(-0.5, 3.1, KAPPA), id="reactivemp-structured"),
    # ReactiveMP: MvNormalMeanPrecision([4, 1], [[4, 1], [1, 9]]) -> 33/7: covariance [[9, -1], [-1, 4]] / 35,
    # S = 9 + (9 + 2 + 4) / 35 = 66/7
    pytest.param({"q_out_mean": MvNormalMeanPrecision([4.0, 1.0], [[4.0, 1.0], [1.0, 9.0]])},
                 inverse_gamma_likelihood(-0.5, 33.0 / 7.0, KAPPA), id="reactivemp-structured-precision"),
]


@pytest.mark.parametrize("inputs, expected", CASES)
def test_var(inputs, expected):
    assert_message(message(Node, "var", inputs), expected)


def test_clamped_message_is_the_factor_itself():
    """log μ(v) = log N(y | m, v) at every v, by the quadrature harness (nothing to integrate: a pointwise check)."""
    result = message(Node, "var", {"q_out": PointMass(1.7), "q_mean": PointMass(0.2)})
    points = np.array([0.05, 0.4, 1.0, 3.0, 20.0])
    factor = DensityFactor(lambda v: normal_pdf(v["out"], v["mean"], v["var"]))
    expected = log_message(factor, "var", {"out": PointMass(1.7), "mean": PointMass(0.2)}, points)
    np.testing.assert_allclose(result.log_value(points), expected, rtol=0.0, atol=1e-12)


def test_clamped_message_times_a_prior_gives_the_evidence():
    """The message does not integrate, but times an InverseGamma(a, b) prior its scale is ∫ N(y | m, v) IG(v) dv."""
    prior = InverseGamma(2.5, 1.5)
    result = product(message(Node, "var", {"q_out": PointMass(1.7), "q_mean": PointMass(0.2)}), prior)
    assert type(result) is InverseGamma
    np.testing.assert_allclose([result.shape, result.scale], [3.0, 1.5 + 0.5 * 1.5**2], rtol=1e-12)

    def integrand(v):
        return normal_pdf(1.7, 0.2, v) * math.exp(float(prior.logpdf(v)))

    evidence, _ = integrate.quad(integrand, 0.0, np.inf, epsabs=0.0, epsrel=1e-12, limit=200)
    np.testing.assert_allclose(result.log_scale, math.log(evidence), rtol=0.0, atol=1e-10)


def test_variational_message_is_the_expected_log_factor_up_to_a_constant():
    """log ν(v₁) - log ν(v₂) = E_q[log N(out | mean, v₁)] - E_q[log N(out | mean, v₂)], E_q by quadrature over out."""
    q_out, q_mean = NormalMeanVariance(0.4, 1.3), PointMass(-0.5)
    result = message(Node, "var", {"q_out": q_out, "q_mean": q_mean})

    def expected_log(v):
        value, _ = integrate.quad(lambda x: math.log(normal_pdf(x, -0.5, v)) * normal_pdf(x, 0.4, 1.3), -20.0, 20.0,
                                  epsabs=1e-13, epsrel=1e-13)
        return value

    for v1, v2 in [(0.3, 2.0), (1.0, 7.0)]:
        np.testing.assert_allclose(result.log_value(v1) - result.log_value(v2), expected_log(v1) - expected_log(v2),
                                   rtol=0.0, atol=1e-10)


def test_batched_equals_elementwise():
    q_out = NormalMeanVariance(np.array([0.5, -1.0, 2.0]), np.array([1.0, 0.2, 3.0]))
    q_mean = NormalMeanVariance(np.array([0.0, 1.0, -2.0]), 0.5)
    batched = message(Node, "var", {"q_out": q_out, "q_mean": q_mean})
    for i in range(3):
        single = message(Node, "var", {"q_out": q_out[i], "q_mean": q_mean[i]})
        np.testing.assert_allclose([batched.shape[i], batched.scale[i], batched.log_scale[i]],
                                   [single.shape, single.scale, single.log_scale], rtol=1e-14)


@pytest.mark.parametrize("count", [2, 3, 7])
def test_observed_plate_rule_is_the_product_of_the_messages(count):
    """Π_i N(y_i | m, v): InverseGamma in v with shape N/2 - 1, scale Σ(y_i - m)²/2, coefficient -N/2 log 2π."""
    y = np.random.default_rng(count).normal(0.5, 1.5, size=count)
    bound = resolve(PLATE, Node, "var", {"q_out": EmpiricalMoments, "q_mean": PointMass}, "test")
    result = bound({"q_out": EmpiricalMoments(y, 0, 1), "q_mean": PointMass(0.2)}, Node("node", (count,)))
    elements = [message(Node, "var", {"q_out": PointMass(value), "q_mean": PointMass(0.2)}) for value in y]
    expected = elements[0]
    for element in elements[1:]:
        expected = product(expected, element)
    assert type(result) is type(expected)  # a likelihood for N = 2, a proper inverse gamma from N = 3
    squares = 0.5 * np.sum((y - 0.2) ** 2)
    np.testing.assert_allclose([result.shape, result.scale], [count / 2.0 - 1.0, squares], rtol=1e-12)
    np.testing.assert_allclose([result.shape, result.scale, result.log_scale],
                               [expected.shape, expected.scale, expected.log_scale], rtol=1e-11)
    if count >= 3:
        assert_message(result, inverse_gamma(count / 2.0 - 1.0, squares, float(expected.log_scale)))
