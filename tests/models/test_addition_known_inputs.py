"""Sums whose inputs are both observed: the sum is a known number (a point mass), the evidence adds up by hand.

x ~ N(0, 1) and z ~ N(1, 2) are observed; s = x + z. With y ~ N(s, 0.5) observed too, the
evidence is N(x̂ | 0, 1) N(ẑ | 1, 2) N(ŷ | x̂ + ẑ, 0.5). With s observed instead, s = x + z adds
nothing to the evidence when the data agree, and is an impossible observation when they do not.
"""
import numpy as np
import pytest
from scipy import stats

import fgraph as fg
from fgraph.nodes import Add, MvNormal, Normal

X, Z, Y = np.array([1.0, -0.5, 2.0]), np.array([2.0, 0.25, -1.0]), np.array([0.5, 0.0, 1.5])


def log_densities(x, z):
    return stats.norm(0.0, 1.0).logpdf(x) + stats.norm(1.0, np.sqrt(2.0)).logpdf(z)


def build(x, z, y=None, s=None):
    with fg.Model() as model:
        a = Normal("x", mean=0.0, var=1.0, observed=x)
        b = Normal("z", mean=1.0, var=2.0, observed=z)
        total = Add("s", a, b, observed=s)
        if y is not None:
            Normal("y", mean=total, var=0.5, observed=y)
    return model


@pytest.mark.parametrize("algorithm", ["bp", "vmp"])
def test_sum_of_observed_inputs_is_a_point_mass_and_the_evidence_adds_up(algorithm):
    result = fg.infer(build(X, Z, y=Y), algorithm=algorithm, iterations=2)
    q_s = result.marginal("s")
    assert isinstance(q_s, fg.PointMass)
    np.testing.assert_array_equal(q_s.value, X + Z)
    expected = np.sum(log_densities(X, Z) + stats.norm(X + Z, np.sqrt(0.5)).logpdf(Y))
    if algorithm == "bp":
        np.testing.assert_allclose(result.log_evidence, expected, rtol=1e-12)
    else:  # nothing is latent but s, which is known: the free energy is -log p(data) exactly
        np.testing.assert_allclose(-np.array(result.free_energy), expected, rtol=1e-12)


def test_sum_of_an_observed_input_and_a_constant():
    with fg.Model() as model:
        a = Normal("x", mean=0.0, var=1.0, observed=X)
        total = Add("s", a, 3.0)
        Normal("y", mean=total, var=0.5, observed=Y)
    result = fg.infer(model)
    np.testing.assert_array_equal(result.marginal("s").value, X + 3.0)
    expected = np.sum(stats.norm(0.0, 1.0).logpdf(X) + stats.norm(X + 3.0, np.sqrt(0.5)).logpdf(Y))
    np.testing.assert_allclose(result.log_evidence, expected, rtol=1e-12)


def test_observed_sum_equal_to_the_inputs_adds_nothing():
    # 0.1 + 0.2 is 0.30000000000000004 in floating point: equal to 0.3 up to rounding
    x, z = np.array([1.0, 0.1]), np.array([2.0, 0.2])
    result = fg.infer(build(x, z, s=np.array([3.0, 0.3])))
    np.testing.assert_allclose(result.log_evidence, np.sum(log_densities(x, z)), rtol=1e-12)


def test_observed_sum_contradicting_the_inputs_is_reported():
    result = fg.infer(build(X, Z, s=X + Z + np.array([0.0, 0.0, 1e-6])))
    with pytest.raises(fg.DataError, match=r"node 's' \(Addition\): the observed out = .* is not in1 \+ in2 .*element \(2,\)"):
        result.log_evidence
    with pytest.raises(fg.DataError, match="node 's'"):
        fg.infer(build(X, Z, s=X + Z + 1.0), algorithm="vmp", iterations=1, free_energy=True)


def test_vector_sum_of_observed_inputs():
    with fg.Model() as model:
        a = MvNormal("a", mean=np.zeros(2), cov=np.eye(2), observed=np.array([1.0, 2.0]))
        b = MvNormal("b", mean=np.ones(2), cov=2.0 * np.eye(2), observed=np.array([0.5, -1.0]))
        total = Add("s", a, b)
        MvNormal("y", mean=total, cov=0.5 * np.eye(2), observed=np.array([2.0, 0.0]))
    result = fg.infer(model)
    np.testing.assert_array_equal(result.marginal("s").value, [1.5, 1.0])
    expected = (stats.multivariate_normal(np.zeros(2), np.eye(2)).logpdf([1.0, 2.0])
                + stats.multivariate_normal(np.ones(2), 2.0 * np.eye(2)).logpdf([0.5, -1.0])
                + stats.multivariate_normal([1.5, 1.0], 0.5 * np.eye(2)).logpdf([2.0, 0.0]))
    np.testing.assert_allclose(result.log_evidence, expected, rtol=1e-12)
