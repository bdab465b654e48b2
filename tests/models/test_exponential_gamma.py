"""Gamma prior on the rate of N exponential observations: BP against the conjugate closed form.

    p(x) = ∫ Gamma(λ | a, b) Π λ e^{−λ x_i} dλ = b^a Γ(a + N) / (Γ(a) (b + Σx)^{a + N}),
    p(λ | x) = Gamma(λ | a + N, b + Σx).
"""
import numpy as np
import pytest
from scipy import integrate, stats
from scipy.special import gammaln

import fgraph as fg
from fgraph.errors import ModelError
from fgraph.nodes import Exponential, Gamma


def closed_form_log_evidence(a, b, x):
    n = x.size
    return a * np.log(b) + gammaln(a + n) - gammaln(a) - (a + n) * np.log(b + x.sum())


def build(a, b, x):
    with fg.Model() as model:
        rate = Gamma("rate", shape=a, rate=b)
        Exponential("x", rate=rate, observed=x)
    return model


@pytest.mark.parametrize("a, b, n", [(1.0, 1.0, 1), (2.0, 0.5, 10), (0.7, 3.0, 200)])
def test_bp_evidence_and_posterior_match_closed_form(a, b, n):
    x = np.random.default_rng(n).exponential(scale=0.8, size=n)
    result = fg.infer(build(a, b, x), algorithm="bp")
    np.testing.assert_allclose(result.log_evidence, closed_form_log_evidence(a, b, x), rtol=0, atol=1e-10)
    posterior = result.marginal("rate")
    np.testing.assert_allclose(posterior.shape, a + n, rtol=1e-12)
    np.testing.assert_allclose(posterior.rate, b + x.sum(), rtol=1e-12)


def test_closed_form_against_quadrature():
    a, b, x = 2.0, 0.5, np.array([0.3, 1.2, 0.05])
    prior = stats.gamma(a=a, scale=1.0 / b)
    evidence, _ = integrate.quad(lambda rate: prior.pdf(rate) * np.prod(rate * np.exp(-rate * x)), 0.0, np.inf)
    np.testing.assert_allclose(closed_form_log_evidence(a, b, x), np.log(evidence), rtol=1e-9)


def test_evidence_is_the_same_on_every_variable():
    x = np.random.default_rng(0).exponential(size=25)
    result = fg.infer(build(1.5, 2.0, x), algorithm="bp")
    for value in result.evidence_per_variable().values():
        np.testing.assert_allclose(value, result.log_evidence, atol=1e-10)


def test_vmp_is_exact_for_this_conjugate_model():
    a, b = 3.0, 1.0
    x = np.random.default_rng(1).exponential(scale=2.0, size=30)
    result = fg.infer(build(a, b, x), algorithm="vmp", iterations=3)
    trace = np.array(result.free_energy)
    assert np.all(np.diff(trace) <= 1e-10)
    np.testing.assert_allclose(-trace[-1], closed_form_log_evidence(a, b, x), atol=1e-10)
    np.testing.assert_allclose(result.marginal("rate").shape, a + x.size)
    np.testing.assert_allclose(result.marginal("rate").rate, b + x.sum())


def test_rebinding_data_reuses_the_plan():
    a, b = 2.0, 1.0
    first, second = np.full(5, 0.5), np.array([0.1, 0.2, 0.3, 0.4, 5.0])
    model = build(a, b, first)
    plan = fg.compile(model, algorithm="bp")
    for x in (first, second):
        result = fg.run(plan, data={"x": x})
        np.testing.assert_allclose(result.log_evidence, closed_form_log_evidence(a, b, x), atol=1e-10)


def test_invalid_inputs_are_reported():
    with pytest.raises(ModelError, match="rate"):
        with fg.Model():
            Exponential("x", rate=-1.0, observed=np.ones(3))
    with pytest.raises(ValueError, match="strictly positive"):
        with fg.Model():
            Exponential("x", rate=1.0, observed=np.array([1.0, -2.0]))


def test_rebound_data_outside_the_support_names_the_node():
    model = build(2.0, 1.0, np.ones(3))
    for bad in (np.array([1.0, 0.0, 2.0]), np.array([1.0, -2.0, 2.0])):
        with pytest.raises(fg.DataError, match="data for 'x' \\(interface 'out' of node 'x'\\): out must be strictly positive"):
            fg.infer(model, data={"x": bad})
