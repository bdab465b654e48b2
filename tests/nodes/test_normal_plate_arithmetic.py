"""The per-element arithmetic of the normal nodes over a plate: values, reuse and what it allocates.

``expected_squared_difference`` (and its sum over a plate,
``squared_difference_total``) is read twice per sweep for the same pair of
marginals (the message to the precision and the average energy), so it is
kept on the marginal of the mean; these tests check it against the formula
written out, and that a different pair never gets a kept value. Over a plate
around a global mean the message to the precision and the energy read only
the sum: no N-element residual is made unless asked for.
"""
import tracemalloc

import numpy as np
import pytest

from fgraph.families import NormalMeanVariance, PointMass
from fgraph.families.gamma import Gamma
from fgraph.plates import EmpiricalMoments
from fgraph.nodes.normal import _normal_mean_precision_energy, expected_squared_difference

LOG_2PI = np.log(2 * np.pi)


def test_expected_squared_difference_against_the_formula():
    y = np.array([0.5, -1.0, 2.0, 3.5])
    q_mu = NormalMeanVariance(1.2, 0.3)
    np.testing.assert_allclose(expected_squared_difference(PointMass(y), q_mu), (y - 1.2) ** 2 + 0.3, rtol=1e-15)
    # both random: E[(x - m)^2] = (E x - E m)^2 + Var x + Var m
    assert expected_squared_difference(NormalMeanVariance(2.0, 0.5), q_mu) == pytest.approx(0.8**2 + 0.8, rel=1e-15)
    # the plate average of the data's squared residuals
    assert expected_squared_difference(EmpiricalMoments(y, 0, 1), q_mu) == pytest.approx(np.mean((y - 1.2) ** 2) + 0.3,
                                                                                           rel=1e-14)


def test_a_kept_value_serves_only_its_own_pair():
    y, z = PointMass(np.array([1.0, 2.0, 3.0])), PointMass(np.array([-1.0, 0.0, 4.0]))
    first, second = NormalMeanVariance(0.0, 1.0), NormalMeanVariance(2.0, 1.0)
    a = expected_squared_difference(y, first)
    assert expected_squared_difference(y, first) is a  # the same pair: computed once
    np.testing.assert_allclose(expected_squared_difference(z, first), (z.value - 0.0) ** 2 + 1.0)
    np.testing.assert_allclose(expected_squared_difference(y, second), (y.value - 2.0) ** 2 + 1.0)
    np.testing.assert_allclose(expected_squared_difference(y, first), (y.value - 0.0) ** 2 + 1.0)


def test_energy_of_a_plate_against_the_formula():
    y = np.array([0.5, -1.0, 2.0])
    q_mu, q_tau = NormalMeanVariance(0.7, 0.2), Gamma(3.0, 2.0)
    from scipy.special import digamma
    expected = 0.5 * (LOG_2PI - (digamma(3.0) - np.log(2.0)) + 1.5 * ((y - 0.7) ** 2 + 0.2))
    np.testing.assert_allclose(_normal_mean_precision_energy(PointMass(y), q_mu, q_tau), expected, rtol=1e-14)


def peak_arrays(function, size: int) -> float:
    """The most memory a call holds at once beyond what it started with, in arrays of ``size`` float64.

    numpy reports its buffers to tracemalloc, so every temporary counts while
    it lives: a fused expression over a plate peaks at one array, the same
    expression written plainly at two or three.
    """
    tracemalloc.start()
    try:
        start, _ = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        kept = function()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    del kept
    return (peak - start) / (8 * size)


def test_the_squared_residual_is_one_array_over_the_plate():
    n = 200_000
    y = PointMass(np.random.default_rng(0).normal(size=n))
    q_mu, q_tau = NormalMeanVariance(0.3, 0.1), Gamma(3.0, 2.0)
    assert 1.0 <= peak_arrays(lambda: expected_squared_difference(y, q_mu), n) < 1.01
    # read again for the energy: nothing new over the plate for the residual, one array for the energy itself
    assert peak_arrays(lambda: expected_squared_difference(y, q_mu), n) < 0.01
    assert 1.0 <= peak_arrays(lambda: _normal_mean_precision_energy(y, q_mu, q_tau), n) < 1.01


def test_the_message_to_the_precision_over_a_plate_is_made_from_sums():
    """``Gamma(3/2, S/2)`` over a plate around a global mean: one difference and one ``dot``, no N-element message.

    The sums of its natural parameters, ``(N/2, -Σ S_i/2)``, are what the
    reduction and the check read; the per-element ``-S/2`` is made, once, only
    when asked, and agrees with the sums.
    """
    from fgraph.families.gamma import GammaNatural
    from fgraph.rules.normal_mean_precision.precision import mean_field

    n = 200_000
    values = np.random.default_rng(1).normal(size=n)
    y = PointMass(values)
    q_mu = NormalMeanVariance(0.3, 0.1)
    holder = {}
    assert 1.0 <= peak_arrays(lambda: holder.setdefault("message", mean_field(y, q_mu)), n) < 1.01  # y - E[mu]
    message = holder["message"]
    assert isinstance(message, GammaNatural) and message.batch_shape == (n,)
    assert "_natural_parameters" not in message.__dict__  # nothing per element yet
    squared = (values - 0.3) ** 2 + 0.1
    shape_total, minus_rate_total = message.natural_parameter_totals()
    assert shape_total == 0.5 * n
    assert minus_rate_total == pytest.approx(-0.5 * np.sum(squared), rel=1e-13)
    # asked for its elements: the residuals (kept on q_mu) and -S/2
    assert peak_arrays(message.natural_parameters, n) < 2.01
    np.testing.assert_array_equal(message.natural_parameters()[1], -0.5 * expected_squared_difference(y, q_mu))
    np.testing.assert_allclose(message.rate, 0.5 * squared, rtol=1e-14)
    assert float(np.unique(message.shape)[0]) == 1.5
    assert message.natural_parameters() is message.natural_parameters()  # formed once


def test_the_residual_total_is_kept_per_pair_of_marginals():
    """``Σ_i E[(y_i - mu)²]`` is kept on q(mu) for its q(y): a new q(mu) or another q(y) is computed afresh."""
    from fgraph.nodes.normal import squared_difference_total

    y, z = PointMass(np.array([1.0, 2.0, 3.0])), PointMass(np.array([-1.0, 0.0, 4.0]))
    first, second = NormalMeanVariance(0.5, 2.0), NormalMeanVariance(2.0, 1.0)
    # 0.25 + 2.25 + 6.25 + 3 * 2
    assert squared_difference_total(y, first) == pytest.approx(14.75, rel=1e-15)
    assert squared_difference_total(z, first) == pytest.approx(2.25 + 0.25 + 12.25 + 6.0, rel=1e-15)
    assert squared_difference_total(y, second) == pytest.approx(1.0 + 0.0 + 1.0 + 3.0, rel=1e-15)
    assert squared_difference_total(y, first) == pytest.approx(14.75, rel=1e-15)
    # a random q(y) per element: its variances add, Σ Var[y_i]
    q_y = NormalMeanVariance(np.array([1.0, 2.0]), np.array([0.5, 0.25]))
    assert squared_difference_total(q_y, first) == pytest.approx(0.25 + 2.25 + 0.75 + 2 * 2.0, rel=1e-15)


def test_the_energy_total_over_a_plate_is_the_sum_of_the_energies():
    from scipy.special import digamma

    from fgraph.nodes.normal import _normal_mean_precision_energy_total

    y = np.array([0.5, -1.0, 2.0, 4.0])
    q_mu, q_tau = NormalMeanVariance(0.7, 0.2), Gamma(3.0, 2.0)
    per_element = 0.5 * (LOG_2PI - (digamma(3.0) - np.log(2.0)) + 1.5 * ((y - 0.7) ** 2 + 0.2))
    total, count = _normal_mean_precision_energy_total(PointMass(y), q_mu, q_tau)
    assert count == 4 and total == pytest.approx(np.sum(per_element), rel=1e-14)
    # a batched mean or precision has no shortcut
    assert _normal_mean_precision_energy_total(PointMass(y), NormalMeanVariance(np.zeros(4), np.ones(4)), q_tau) is None


def test_a_gamma_from_its_natural_parameters_is_the_same_gamma():
    from scipy.special import digamma, gammaln

    from fgraph.families.gamma import GammaNatural
    from fgraph.families.product import product

    shape, rate = np.array([1.5, 3.0, 0.7]), np.array([0.2, 4.0, 1.1])
    natural, plain = GammaNatural(shape - 1.0, -rate), Gamma(shape, rate)
    np.testing.assert_allclose(natural.shape, shape, rtol=1e-15)
    np.testing.assert_allclose(natural.rate, rate, rtol=1e-15)
    np.testing.assert_allclose(natural.mean, shape / rate, rtol=1e-15)
    np.testing.assert_allclose(natural.mean_log, digamma(shape) - np.log(rate), rtol=1e-14)
    np.testing.assert_allclose(natural.entropy(), plain.entropy(), rtol=1e-14)
    np.testing.assert_allclose(natural.log_partition(), gammaln(shape) - shape * np.log(rate), rtol=1e-14)
    both = product(natural, Gamma(2.0, 1.0))
    np.testing.assert_allclose(both.shape, shape + 1.0, rtol=1e-15)
    np.testing.assert_allclose(both.rate, rate + 1.0, rtol=1e-15)
    np.testing.assert_allclose(both.log_scale, product(plain, Gamma(2.0, 1.0)).log_scale, rtol=1e-13)
