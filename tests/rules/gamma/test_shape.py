"""Table test of the Gamma node rules towards ``shape``: exp(κ) exp(a c - log Γ(a)), a GammaShapeLikelihood.

c = E[log β] + E[log out] and κ = -E[log out] - E[β] E[out]: the message is
GammaShapeLikelihood(alpha=1, beta=-c, count=1) with log-scale κ + log ∫ exp(a c - log Γ(a)) da (the
integral by adaptive quadrature in ``assert_gamma_shape_likelihood``). For a clamped out and rate it
is the exact sum-product message, the likelihood of the shape.
"""
import math

import numpy as np
import pytest
from scipy.special import gammaln

from fgraph.families import GammaShapeLikelihood, GammaShapeScale, PointMass, product
from fgraph.families.gamma import Gamma
from fgraph.plates import EmpiricalMoments
from fgraph.registry import PLATE, resolve
from fgraph.nodes.gamma import GammaNode
from tests.rules.quadrature import DensityFactor, log_message
from tests.rules.tables import assert_gamma_shape_likelihood, message

EULER = np.euler_gamma

CASES = [
    # x = 2, β = 3: c = log 6, κ = -log 2 - 6
    pytest.param({"q_out": PointMass(2.0), "q_rate": PointMass(3.0)}, (1.0, -math.log(6.0), 1.0, -math.log(2.0) - 6.0),
                 id="observed"),
    # ReactiveMP.jl test/rules/gamma_shape_rate/a_tests.jl: q_out = Gamma(1, 1), q_β = Gamma(1, 1) ->
    # GammaShapeLikelihood(1, -2γ): E[log] = ψ(1) = -γ each; κ = γ - 1 · 1
    pytest.param({"q_out": Gamma(1.0, 1.0), "q_rate": Gamma(1.0, 1.0)}, (1.0, 2.0 * EULER, 1.0, EULER - 1.0),
                 id="reactivemp-gammas"),
    # ReactiveMP: q_out = PointMass(1), q_β = Gamma(1, 1) -> GammaShapeLikelihood(1, -γ); κ = 0 - 1
    pytest.param({"q_out": PointMass(1.0), "q_rate": Gamma(1.0, 1.0)}, (1.0, EULER, 1.0, -1.0),
                 id="reactivemp-observed"),
    # q_out = GammaShapeScale(2, 0.5): E[out] = 1, E[log out] = ψ(2) + log 0.5 = 1 - γ - log 2; β = 2 fixed
    pytest.param({"q_out": GammaShapeScale(2.0, 0.5), "q_rate": PointMass(2.0)},
                 (1.0, -(math.log(2.0) + 1.0 - EULER - math.log(2.0)), 1.0, -(1.0 - EULER - math.log(2.0)) - 2.0),
                 id="mf-gamma-out"),
    pytest.param({"q_out": PointMass([0.5, 4.0]), "q_rate": PointMass(1.0)},
                 (1.0, -np.log([0.5, 4.0]), 1.0, -np.log([0.5, 4.0]) - np.array([0.5, 4.0])), id="batched"),
]


@pytest.mark.parametrize("inputs, expected", CASES)
def test_shape(inputs, expected):
    assert_gamma_shape_likelihood(message(GammaNode, "shape", inputs), *expected)


def test_clamped_message_is_the_factor_as_a_function_of_the_shape():
    """log μ(a) = log Gamma(x | a, β) for every a: the quadrature harness evaluates the factor (nothing to integrate)."""
    result = message(GammaNode, "shape", {"q_out": PointMass(0.8), "q_rate": PointMass(2.5)})
    factor = DensityFactor(lambda v: math.exp(v["shape"] * math.log(v["rate"]) + (v["shape"] - 1.0) * math.log(v["out"])
                                              - v["rate"] * v["out"] - math.lgamma(v["shape"])))
    points = np.array([0.2, 1.0, 2.5, 6.0])
    expected = log_message(factor, "shape", {"out": PointMass(0.8), "rate": PointMass(2.5)}, points)
    np.testing.assert_allclose(result.log_scale + result.logpdf(points), expected, rtol=0.0, atol=1e-10)


def test_variational_message_is_the_expected_log_factor_up_to_a_constant():
    """log ν(a₁) - log ν(a₂) = E_q[log Gamma(out | a₁, β)] - E_q[log Gamma(out | a₂, β)] (closed-form expectations)."""
    q_out, q_rate = Gamma(3.0, 2.0), Gamma(4.0, 0.5)
    result = message(GammaNode, "shape", {"q_out": q_out, "q_rate": q_rate})
    mean_log_out, mean_log_rate = 1.5 - EULER - math.log(2.0), 11.0 / 6.0 - EULER + math.log(2.0)  # ψ(3), ψ(4)

    def expected_log(a):  # E_q[log Gamma(out | a, β)] without the terms free of a
        return a * (mean_log_rate + mean_log_out) - gammaln(a)

    for a1, a2 in [(0.5, 2.0), (1.5, 7.0)]:
        np.testing.assert_allclose(result.logpdf(a1) - result.logpdf(a2), expected_log(a1) - expected_log(a2),
                                   rtol=0.0, atol=1e-10)


@pytest.mark.parametrize("count", [1, 4])
def test_observed_plate_rule_is_the_product_of_the_messages(count):
    """Π_i Gamma(x_i | a, β): alpha 1, beta -N (log β + mean log x), count N, κ = -N (mean log x) - β Σ x_i."""
    x = np.random.default_rng(count).gamma(2.0, 0.5, size=count)
    bound = resolve(PLATE, GammaNode, "shape", {"q_out": EmpiricalMoments, "q_rate": PointMass}, "test")
    result = bound({"q_out": EmpiricalMoments(x, 0, 1), "q_rate": PointMass(1.5)}, GammaNode("node", (count,)))
    assert_gamma_shape_likelihood(result, 1.0, -count * math.log(1.5) - np.sum(np.log(x)), count,
                                  -np.sum(np.log(x)) - 1.5 * np.sum(x))
    expected = message(GammaNode, "shape", {"q_out": PointMass(x[0]), "q_rate": PointMass(1.5)})
    for value in x[1:]:
        expected = product(expected, message(GammaNode, "shape", {"q_out": PointMass(value), "q_rate": PointMass(1.5)}))
    np.testing.assert_allclose(result.log_scale, expected.log_scale, rtol=0.0, atol=1e-10)


def test_posterior_with_a_gamma_prior_is_normalised_and_has_its_moments():
    """Gamma(2, 1) prior times the likelihood of x = (0.5, 1.5, 2.5) with β = 1: the product's moments by quadrature."""
    prior = Gamma(2.0, 1.0)
    x = np.array([0.5, 1.5, 2.5])
    messages = [message(GammaNode, "shape", {"q_out": PointMass(value), "q_rate": PointMass(1.0)}) for value in x]
    posterior = prior
    for m in messages:
        posterior = product(posterior, m)
    assert type(posterior) is GammaShapeLikelihood
    # prior (α - 1, -β) = (1, -1) plus three (0, log x_i, -1): alpha 2, beta 1 - Σ log x_i, count 3;
    # κ = log κ_prior (-log Γ(2) + 2 log 1 = 0) + Σ(-log x_i - x_i)
    assert_gamma_shape_likelihood(posterior, 2.0, 1.0 - np.sum(np.log(x)), 3.0, -np.sum(np.log(x)) - np.sum(x))
