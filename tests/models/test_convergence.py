"""Iterations to convergence by an exponential fit (fgraph.models.convergence, Appendix E).

Known answers: on an exact curve c + a·exp(−t/τ) the step at which it has decayed by a fraction φ
is −τ log(1 − φ) (t_0.95 = τ log 20), whatever a, c and the direction of the curve.
"""
import numpy as np
import pytest

from fgraph.errors import ConvergenceWarning, DataError
from fgraph.models.convergence import fit_exponential_decay, iterations_to_fraction


def curve(T, tau, a=-30.0, c=-100.0):
    """An ELBO-like rising curve −100 − 30·exp(−t/τ) (a < 0: it rises towards c)."""
    return c + a * np.exp(-np.arange(T) / tau)


def test_exact_curve_gives_tau_log_20():
    tau = 37.0
    assert iterations_to_fraction(curve(500, tau)) == pytest.approx(tau * np.log(20.0), rel=1e-6)


def test_fit_recovers_parameters():
    a, b, c = fit_exponential_decay(5.0 + 7.0 * np.exp(-0.02 * np.arange(400)))
    assert (a, b, c) == pytest.approx((7.0, 0.02, 5.0), rel=1e-6)


def test_direction_and_scale_do_not_matter():
    rising = curve(800, 120.0)
    expected = 120.0 * np.log(20.0)
    assert iterations_to_fraction(-rising) == pytest.approx(expected, rel=1e-6)
    assert iterations_to_fraction(1e4 * rising + 3e6) == pytest.approx(expected, rel=1e-6)


def test_other_fraction():
    assert iterations_to_fraction(curve(300, 20.0), fraction=0.5) == pytest.approx(20.0 * np.log(2.0), rel=1e-6)


def test_rows_are_fitted_separately_and_skip_is_added_back():
    taus = np.array([10.0, 40.0, 90.0])
    traces = np.stack([curve(1000, tau) for tau in taus])
    np.testing.assert_allclose(iterations_to_fraction(traces), taus * np.log(20.0), rtol=1e-6)
    # skipping s steps of an exact exponential leaves an exponential with the same rate: s + τ log 20
    np.testing.assert_allclose(iterations_to_fraction(traces, skip=50), 50 + taus * np.log(20.0), rtol=1e-6)


def test_noisy_curve_is_close():
    rng = np.random.default_rng(0)
    noisy = curve(2000, 150.0) + rng.normal(0.0, 0.3, 2000)  # noise 1 % of the decay
    assert iterations_to_fraction(noisy) == pytest.approx(150.0 * np.log(20.0), rel=0.03)


def test_flat_curve_is_converged_at_once():
    assert iterations_to_fraction(np.full(10, 3.0), skip=2) == 2.0


def test_curve_not_converged_within_the_trace_gives_nan_with_warning():
    t = np.arange(50.0)
    with pytest.warns(ConvergenceWarning, match="does not decay"):
        assert np.isnan(iterations_to_fraction(np.exp(0.1 * t)))  # growing
    with pytest.warns(ConvergenceWarning, match="does not decay"):
        assert np.isnan(iterations_to_fraction(curve(50, 40.0)))  # 95 % at step 120 > 49
    assert iterations_to_fraction(curve(121, 40.0)) == pytest.approx(40.0 * np.log(20.0), rel=1e-6)


@pytest.mark.parametrize("kwargs, match", [
    ({"trace": [1.0, 2.0]}, "fewer than 4"),
    ({"trace": [1.0, np.nan, 2.0, 3.0, 4.0]}, "NaN"),
    ({"trace": np.arange(10.0), "fraction": 1.0}, "fraction"),
    ({"trace": np.arange(10.0), "skip": 8}, "skip"),
    ({"trace": np.zeros((2, 2, 5))}, "shape"),
])
def test_bad_input(kwargs, match):
    with pytest.raises(DataError, match=match):
        iterations_to_fraction(**kwargs)
