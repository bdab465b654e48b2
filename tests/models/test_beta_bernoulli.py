"""Beta prior, N Bernoulli observations in a plate: exact BP evidence and posterior in closed form.

p(x_1..x_N) = ∫ Π_n p^x_n (1-p)^(1-x_n) Beta(p | a, b) dp = B(a + k, b + N - k) / B(a, b), k = Σ x_n,
and the posterior is Beta(a + k, b + N - k).
"""
import numpy as np
import pytest
from scipy.special import betaln

import fgraph as fg
from fgraph.nodes import Bernoulli, Beta

A, B = 2.0, 3.0


@pytest.mark.parametrize("data", [
    np.random.default_rng(0).integers(0, 2, 25),
    np.array([1]),
    np.zeros(7, dtype=int),
    np.ones(40, dtype=int),
], ids=["random-25", "single", "all-zero", "all-one"])
def test_plate_evidence_and_posterior(data):
    with fg.Model() as model:
        p = Beta("p", a=A, b=B)
        Bernoulli("x", p=p, observed=data)
    result = fg.infer(model, algorithm="bp")
    assert result.plan.exact
    n, k = data.size, data.sum()
    expected = betaln(A + k, B + n - k) - betaln(A, B)
    np.testing.assert_allclose(result.log_evidence, expected, rtol=0, atol=1e-10)
    np.testing.assert_allclose(result.evidence_per_variable()["p"], expected, rtol=0, atol=1e-10)
    posterior = result.marginal("p")
    np.testing.assert_allclose([posterior.a, posterior.b], [A + k, B + n - k], rtol=1e-12)
    # posterior predictive of each observation: Bernoulli(E[p])
    np.testing.assert_allclose(result.predictive("x").p, (A + k) / (A + B + n), rtol=1e-12)


def test_unrolled_observations_agree_with_the_plate():
    data = np.array([1, 0, 1, 1, 0, 1])
    with fg.Model() as model:
        p = Beta("p", a=A, b=B)
        for n, x in enumerate(data):
            Bernoulli(f"x{n}", p=p, observed=x)
    result = fg.infer(model, algorithm="bp")
    np.testing.assert_allclose(result.log_evidence, betaln(A + 4, B + 2) - betaln(A, B), rtol=0, atol=1e-10)
    np.testing.assert_allclose([result.marginal("p").a, result.marginal("p").b], [A + 4, B + 2], rtol=1e-12)


def test_vmp_is_exact_for_this_conjugate_model():
    """With only p latent, mean-field is no restriction: -F equals the log evidence and q(p) the posterior."""
    data = np.array([1, 0, 1, 1, 0, 1, 1])
    with fg.Model() as model:
        p = Beta("p", a=A, b=B)
        Bernoulli("x", p=p, observed=data)
    result = fg.infer(model, algorithm="vmp", iterations=2)
    np.testing.assert_allclose(-result.free_energy[-1], betaln(A + 5, B + 2) - betaln(A, B), rtol=1e-12)
    np.testing.assert_allclose([result.marginal("p").a, result.marginal("p").b], [A + 5, B + 2], rtol=1e-12)
