"""Pólya-Gamma quantities against Monte Carlo (``polyagamma``), quadrature of its density and 80-digit arithmetic.

Three independent oracles:

* draws of ``PG(b, c)`` from the ``polyagamma`` package (its own samplers) give
  the mean and variance to within 5 Monte Carlo standard errors;
* the density ``polyagamma_pdf`` (an alternating series, independent of the
  tilting identity) gives ``KL(PG(b, c) ‖ PG(b, 0)) = ∫ q log(q/p) dω`` by
  quadrature, without using the closed form of the tilt;
* ``decimal`` arithmetic at 80 digits evaluates the closed forms
  ``b tanh(c/2)/(2c)``, ``log cosh(c/2)`` and ``b log cosh u − b u tanh(u)/2``
  with no cancellation to speak of, so the series below the switch points
  and the closed forms above them are both checked to ~1e-15.
"""
import warnings
from decimal import Decimal, getcontext

import numpy as np
import pytest
from polyagamma import polyagamma_pdf, random_polyagamma
from scipy import integrate

from fgraph.families import polya_gamma as pg
from fgraph.families.polya_gamma import PolyaGamma

getcontext().prec = 80  # the KL at c = 1e-9 is ~1e-38 left of terms ~1e-19: 80 digits keep 40


def _exact(c):
    """(tanh(u)/u, log cosh u, log cosh u − u tanh(u)/2) at u = |c|/2 in 80-digit decimals (c = 0 excluded)."""
    u = abs(Decimal(repr(float(c)))) / 2
    e_plus, e_minus = u.exp(), (-u).exp()
    tanh = (e_plus - e_minus) / (e_plus + e_minus)
    log_cosh = ((e_plus + e_minus) / 2).ln()
    return float(tanh / u), float(log_cosh), float(log_cosh - u * tanh / 2)


MC_CASES = [(1.0, 0.0), (1.0, 1.5), (2.5, 4.0), (1.0, 50.0), (3.0, 0.3), (0.5, 10.0)]


@pytest.mark.parametrize("b, c", MC_CASES, ids=[f"b={b}-c={c}" for b, c in MC_CASES])
def test_mean_and_variance_agree_with_monte_carlo(b, c):
    draws = random_polyagamma(h=b, z=c, size=200_000, random_state=np.random.default_rng(int(10 * b + c)))
    count = draws.size
    # E[ω]: the standard error of a sample mean; Var[ω]: that of the mean of the squared deviations
    assert abs(draws.mean() - pg.mean(b, c)) < 5.0 * draws.std() / np.sqrt(count)
    squared = (draws - draws.mean()) ** 2
    assert abs(squared.mean() - pg.variance(b, c)) < 5.0 * squared.std() / np.sqrt(count)


def test_prior_moments_are_b_over_4_and_b_over_24():
    # PG(b, 0) is a sum of gammas: E = b/4 and Var = b/24 (Polson, Scott and Windle 2013)
    b = np.array([0.5, 1.0, 7.0])
    np.testing.assert_allclose(pg.mean(b, 0.0), b / 4, rtol=1e-15)
    np.testing.assert_allclose(pg.variance(b, 0.0), b / 24, rtol=1e-15)


@pytest.mark.parametrize("switch", [pg.MEAN_SERIES_BELOW, pg.KL_SERIES_BELOW, pg.VARIANCE_SERIES_BELOW, 2.0])
def test_mean_log_cosh_and_kl_are_accurate_on_both_sides_of_every_switch(switch):
    c = switch * np.array([0.5, 1.0 - 1e-9, 1.0, 1.0 + 1e-9, 2.0])
    expected = np.array([_exact(value) for value in c])
    np.testing.assert_allclose(pg.mean(1.0, c), expected[:, 0] / 4, rtol=2e-16)
    np.testing.assert_allclose(pg.log_cosh_half(c), expected[:, 1], rtol=1e-15)
    np.testing.assert_allclose(pg.kl_from_prior(1.0, c), expected[:, 2], rtol=1e-14)


def test_small_c_keeps_its_digits():
    # log cosh(c/2) ≈ c²/8 and KL ≈ c⁴/192: a naive log(cosh) or a difference of the closed forms has none left
    c = np.array([1e-9, 1e-6, 1e-3])
    expected = np.array([_exact(value) for value in c])
    np.testing.assert_allclose(pg.log_cosh_half(c), expected[:, 1], rtol=1e-15)
    np.testing.assert_allclose(pg.kl_from_prior(2.0, c), 2.0 * expected[:, 2], rtol=1e-14)
    np.testing.assert_allclose(pg.mean(2.0, c), 2.0 * expected[:, 0] / 4, rtol=2e-16)


def test_variance_switch_is_continuous_and_large_c_does_not_overflow():
    # the series of (sinh c − c)/c³ and the closed form meet at c = 1 to rounding (slope there ≈ −0.0125)
    below, above = pg.variance(1.0, np.nextafter(1.0, 0.0)), pg.variance(1.0, 1.0)
    assert below == pytest.approx(above, rel=1e-14)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        large = np.array([800.0, 1e6])
        np.testing.assert_allclose(pg.variance(1.0, large), 2.0 / (4.0 * large**3), rtol=1e-15)  # tanh → 1
        np.testing.assert_allclose(pg.mean(1.0, large), 1.0 / (2.0 * large), rtol=1e-15)
        np.testing.assert_allclose(pg.log_cosh_half(large), large / 2 - np.log(2.0), rtol=1e-15)


@pytest.mark.parametrize("b, c", [(1.0, 2.0), (2.5, 10.0), (1.0, 0.5), (0.7, 4.0)])
def test_kl_equals_quadrature_of_the_density_ratio(b, c):
    """∫ q log(q/p) dω with q = PG(b, c), p = PG(b, 0), both from the package's density (no tilting identity)."""
    def integrand(w):
        q, p = polyagamma_pdf(w, h=b, z=c), polyagamma_pdf(w, h=b, z=0.0)
        return 0.0 if q <= 0.0 or p <= 0.0 else q * np.log(q / p)  # the series' tails round to 0 or below

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected, _ = integrate.quad(integrand, 0.0, np.inf, limit=400, epsabs=0.0, epsrel=1e-12)
    assert pg.kl_from_prior(b, c) == pytest.approx(expected, rel=1e-11)


def test_kl_is_non_negative_zero_at_zero_and_even():
    c = np.linspace(0.0, 30.0, 1001)
    kl = pg.kl_from_prior(1.5, c)
    assert np.all(kl[1:] > 0.0)
    assert kl[0] == 0.0
    np.testing.assert_array_equal(pg.kl_from_prior(1.5, -c), kl)


def test_batches_broadcast_and_the_class_reads_the_same():
    b = np.array([[1.0], [2.0]])
    c = np.array([0.0, 0.5, 3.0])
    q = PolyaGamma(b, c)
    assert q.mean().shape == q.variance().shape == q.kl_from_prior().shape == (2, 3)
    np.testing.assert_array_equal(q.mean()[1], 2.0 * q.mean()[0])
    np.testing.assert_array_equal(q.mean(), pg.mean(b, c))
    np.testing.assert_array_equal(q.variance(), pg.variance(b, c))
    np.testing.assert_array_equal(q.kl_from_prior(), pg.kl_from_prior(b, c))
    assert repr(PolyaGamma(1.0, 2.0)) == "PolyaGamma(b=1, c=2)"
