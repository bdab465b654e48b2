"""Observed plates run on sufficient statistics: the same numbers as element by element."""
import math

import numpy as np
import pytest
from scipy.stats import multivariate_normal

import fgraph as fg
from fgraph.plates import EmpiricalMoments, plate_sum
from fgraph.families import PointMass
from fgraph.nodes import Normal
from fgraph.rules.normal_mean_precision.mean import observed_plate as precision_plate
from fgraph.rules.normal_mean_variance.mean import observed_plate as variance_plate

Y = np.random.default_rng(8).normal(1.5, 2.0, size=40)


def gaussian_model(keyword):
    with fg.Model() as model:
        mu = Normal("mu", mean=0.3, var=4.0)
        Normal("y", mean=mu, observed=Y, **{keyword: 0.7})
    return model


@pytest.mark.parametrize("keyword", ["var", "precision"])
def test_bp_plate_rule_equals_the_element_wise_plate_and_the_closed_form(keyword):
    collapsed = fg.run(fg.compile(gaussian_model(keyword)))
    expanded = fg.run(fg.compile(gaussian_model(keyword), collapse_plates=False))
    assert collapsed.plan.nodes["y"].plate_rule is not None
    assert expanded.plan.nodes["y"].plate_rule is None
    noise = 0.7 if keyword == "var" else 1 / 0.7
    closed = multivariate_normal(np.full(Y.size, 0.3), 4.0 * np.ones((Y.size, Y.size)) + noise * np.eye(Y.size)).logpdf(Y)
    assert collapsed.log_evidence == pytest.approx(closed, rel=1e-12)
    assert expanded.log_evidence == pytest.approx(closed, rel=1e-12)
    for result in (collapsed, expanded):
        precision = 1 / 4.0 + Y.size / noise
        assert result.marginal("mu").mean == pytest.approx((0.3 / 4.0 + Y.sum() / noise) / precision, rel=1e-12)
        assert result.marginal("mu").var == pytest.approx(1 / precision, rel=1e-12)
    # the predictive of each observation is still available element by element
    assert collapsed.predictive("y").batch_shape == (Y.size,)


@pytest.mark.parametrize("rule, parameter, variance", [(variance_plate, 0.5, 0.5), (precision_plate, 2.0, 0.5)])
def test_plate_rules_table(rule, parameter, variance):
    """y = (1, 2, 4): ȳ = 7/3, s² = 14/9; the product of the three messages, by hand."""
    y = np.array([1.0, 2.0, 4.0])
    message = rule(EmpiricalMoments(y, 0, 1), PointMass(parameter))
    expected_scale = -np.log(2 * np.pi * variance) - 0.5 * np.log(3) - 3 * (14 / 9) / (2 * variance)
    assert message.mean == pytest.approx(7 / 3)
    assert message.var == pytest.approx(variance / 3)
    assert message.log_scale == pytest.approx(expected_scale, rel=1e-12)


@pytest.mark.parametrize("offset", [0.0, 1e3, 1e8])
def test_empirical_moments_of_scalars_match_two_pass_numpy(offset):
    """The fast one-pass moments, and the centred fallback when the spread is tiny next to the mean."""
    y = offset + np.random.default_rng(3).normal(0.0, 1.0, size=(1000,))
    moments = EmpiricalMoments(y, 0, 1)
    assert moments.count == 1000
    assert moments.value == pytest.approx(y.mean(), rel=1e-14, abs=1e-14)
    assert moments.var == pytest.approx(np.var(y), rel=1e-9)
    assert moments.second_moment == pytest.approx(np.mean(y**2), rel=1e-12)


@pytest.mark.parametrize("offset", [0.0, 1e8])
def test_empirical_moments_of_vectors_and_batches_match_numpy(offset):
    rng = np.random.default_rng(4)
    vectors = offset + rng.normal(size=(200, 3))
    moments = EmpiricalMoments(vectors, 1, 1)
    np.testing.assert_allclose(moments.value, vectors.mean(axis=0), rtol=1e-14)
    np.testing.assert_allclose(moments.cov, np.cov(vectors.T, bias=True), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(moments.second_moment, vectors.T @ vectors / 200, rtol=1e-12)
    # two plate axes and a batch axis of scalars: (10, 20) elements of a batch of 4
    batched = offset + rng.normal(size=(10, 20, 4))
    moments = EmpiricalMoments(batched, 0, 2)
    assert moments.count == 200
    np.testing.assert_allclose(moments.value, batched.mean(axis=(0, 1)), rtol=1e-14)
    np.testing.assert_allclose(moments.var, batched.var(axis=(0, 1)), rtol=1e-9)
    positive = np.abs(batched) + 1.0  # other moments are plate averages of the element-wise ones
    np.testing.assert_allclose(EmpiricalMoments(positive, 0, 2).mean_log, np.log(positive).mean(axis=(0, 1)), rtol=1e-12)


@pytest.mark.parametrize("collapse", [True, False])
def test_a_plate_with_two_observed_interfaces_gives_the_exact_free_energy(collapse):
    """Gamma factors with observed shapes a_i and outputs x_i: the energy holds Σ_i (a_i − 1) log x_i, which no
    plate average of a's and x's moments gives, so such a plate stays element-wise.

    r ~ Gamma(2, 1), a_i ~ Gamma(2, 1) observed, x_i ~ Gamma(a_i, r) observed: q(r) is exact after one update,
    so F = −log p(a, x) with p(x | a) = Π_i x_i^(a_i−1)/Γ(a_i) · Γ(2 + Σa)/(1 + Σx)^(2 + Σa) and
    p(a) = Π_i a_i e^(−a_i).
    """
    from scipy.special import gammaln
    from fgraph.nodes import Gamma

    a, x = np.array([1.0, 2.0, 5.0]), np.array([0.5, 1.2, 3.0])
    with fg.Model() as model:
        rate = Gamma("r", shape=2.0, rate=1.0)
        shape = Gamma("s", shape=2.0, rate=1.0, observed=a)
        Gamma("x", shape=shape, rate=rate, observed=x)
    result = fg.run(fg.compile(model, algorithm="vmp", collapse_plates=collapse), iterations=3, free_energy=True)
    posterior_shape = 2.0 + a.sum()
    log_likelihood = (np.sum((a - 1.0) * np.log(x) - gammaln(a)) + gammaln(posterior_shape)
                      - posterior_shape * np.log(1.0 + x.sum()))
    log_prior_of_a = np.sum(np.log(a) - a)
    np.testing.assert_allclose(result.free_energy[-1], -(log_likelihood + log_prior_of_a), rtol=1e-12)
    np.testing.assert_allclose(result.marginal("r").mean, posterior_shape / (1.0 + x.sum()), rtol=1e-12)


def test_empirical_moments_average_every_expectation_of_the_data():
    """E[log y], E[log(1 − y)], E[1/y], log Γ(y), ... of a plate are the averages of the per-element values."""
    from fgraph.families.base import expectation_names

    data = np.array([0.2, 0.5, 0.9, 0.35])
    moments = EmpiricalMoments(data, 0, 1)
    names = [name for name in expectation_names(PointMass) if name != "mean_logdet"]  # matrices only
    assert {"mean_log", "mean_log1m", "mean_inverse", "mean_log_gamma"} <= set(names)
    for name in names:
        np.testing.assert_allclose(getattr(moments, name), np.mean(getattr(PointMass(data, 0), name)), rtol=1e-14,
                                   err_msg=name)


@pytest.mark.parametrize("count", [4 * 1024, 5 * 1024 + 3, 100_003, 4 * 1024 - 1])
def test_plate_sum_of_a_long_vector_matches_the_exact_sum(count):
    """The BLAS row sums (with the partial last row) against math.fsum, the exactly rounded sum."""
    y = 1.5 + np.random.default_rng(count).normal(0.0, 2.0, size=count)
    exact = math.fsum(y)
    assert plate_sum(y) == pytest.approx(exact, rel=1e-14, abs=1e-14)
    assert type(plate_sum(y)) is np.float64
    # the moments built on it: the mean, and the variance with the second moment by the dot product
    moments = EmpiricalMoments(y, 0, 1)
    assert moments.value == pytest.approx(exact / count, rel=1e-14)
    assert moments.var == pytest.approx(math.fsum((y - exact / count) ** 2) / count, rel=1e-12)


def test_plate_sum_of_anything_else_is_numpys_sum():
    """Strided vectors, batches of scalars, vectors, other dtypes: add.reduce over the leading axis."""
    rng = np.random.default_rng(11)
    strided = rng.normal(size=2 * 9000)[::2]
    batched = rng.normal(size=(9000, 3))
    single = rng.normal(size=9000).astype(np.float32)
    for flat in (strided, batched, single):
        np.testing.assert_array_equal(plate_sum(flat), np.add.reduce(flat, axis=0))
    assert math.fsum(strided) == pytest.approx(float(plate_sum(strided)), rel=1e-14)


def test_the_plate_rule_on_floats_equals_its_array_path():
    """One plate of scalars takes the float path; the same data as a batch of one takes numpy's."""
    y = np.random.default_rng(12).normal(1.0, 2.0, size=5000)
    on_floats = variance_plate(EmpiricalMoments(y, 0, 1), PointMass(0.7))
    on_arrays = variance_plate(EmpiricalMoments(y[:, None], 0, 1), PointMass(0.7))
    assert on_arrays.batch_shape == (1,) and on_floats.batch_shape == ()
    assert float(on_floats.mean) == pytest.approx(float(on_arrays.mean[0]), rel=1e-14)
    assert float(on_floats.var) == pytest.approx(float(on_arrays.var[0]), rel=1e-15)
    assert float(on_floats.log_scale) == pytest.approx(float(on_arrays.log_scale[0]), rel=1e-13)
    # and both against the closed form: Π_i N(y_i | μ, v) at μ = ȳ, divided by N(μ | ȳ, v/N) there
    closed = np.sum(-0.5 * np.log(2 * np.pi * 0.7) - (y - y.mean()) ** 2 / (2 * 0.7)) + 0.5 * np.log(2 * np.pi * 0.7 / y.size)
    assert float(on_floats.log_scale) == pytest.approx(closed, rel=1e-12)
