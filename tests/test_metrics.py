"""fgraph.metrics against small cases worked out by hand."""
import numpy as np
import pytest

from fgraph import metrics
from fgraph.errors import DataError, FgraphError

# four binary predictions: top classes 0, 1, 0, 1 with confidences .7, .6, .9, .8; truth 0, 0, 1, 1
P4 = np.array([[0.7, 0.3], [0.4, 0.6], [0.9, 0.1], [0.2, 0.8]])
Y4 = np.array([0, 0, 1, 1])


def test_accuracy_counts_arg_max_hits():
    assert metrics.accuracy(P4, Y4) == 0.5  # right on rows 0 and 3
    # ties go to the first class
    assert metrics.accuracy([[0.5, 0.5]], [0]) == 1.0
    assert metrics.accuracy([[0.5, 0.5]], [1]) == 0.0


def test_log_predictive_density_is_the_mean_log_probability_of_the_truth():
    expected = (np.log(0.7) + np.log(0.4) + np.log(0.1) + np.log(0.8)) / 4  # = −0.949674
    assert metrics.log_predictive_density(P4, Y4) == pytest.approx(expected, rel=1e-14)
    assert expected == pytest.approx(-0.949674, abs=1e-6)


def test_log_predictive_density_clips_zero_probabilities_at_the_floor():
    p = np.array([[1.0, 0.0], [0.5, 0.5]])
    assert metrics.log_predictive_density(p, [1, 0]) == pytest.approx((np.log(1e-12) + np.log(0.5)) / 2)
    assert metrics.log_predictive_density(p, [1, 0], floor=1e-3) == pytest.approx((np.log(1e-3) + np.log(0.5)) / 2)
    assert metrics.log_predictive_density(p, [1, 0], floor=0.0) == -np.inf


def test_expected_calibration_error_with_twenty_bins():
    # every point alone in its bin: |1 − .7|, |0 − .6|, |0 − .9|, |1 − .8| averaged
    assert metrics.expected_calibration_error(P4, Y4) == pytest.approx((0.3 + 0.6 + 0.9 + 0.2) / 4)


def test_expected_calibration_error_with_two_bins_pools_the_points():
    # all four confidences in (0.5, 1]: accuracy 1/2, mean confidence 0.75
    assert metrics.expected_calibration_error(P4, Y4, n_bins=2) == pytest.approx(0.25)
    # a confidence of exactly 0.5 belongs to the first bin (0, 0.5]
    diagram = metrics.reliability_diagram([[0.5, 0.5]], [1], n_bins=2)
    np.testing.assert_array_equal(diagram.count, [1, 0])
    assert diagram.expected_calibration_error == pytest.approx(0.5)


def test_reliability_diagram_for_three_classes():
    p = np.array([[0.2, 0.5, 0.3], [0.1, 0.1, 0.8], [0.85, 0.1, 0.05]])
    y = np.array([1, 0, 0])  # right, wrong, right
    diagram = metrics.reliability_diagram(p, y, n_bins=10)
    np.testing.assert_allclose(diagram.edges, np.arange(11) / 10)
    # .5 in (.4, .5], .8 in (.7, .8], .85 in (.8, .9]
    np.testing.assert_array_equal(diagram.count, [0, 0, 0, 0, 1, 0, 0, 1, 1, 0])
    filled = diagram.count > 0
    np.testing.assert_allclose(diagram.confidence[filled], [0.5, 0.8, 0.85])
    np.testing.assert_allclose(diagram.accuracy[filled], [1.0, 0.0, 1.0])
    assert np.all(np.isnan(diagram.confidence[~filled])) and np.all(np.isnan(diagram.accuracy[~filled]))
    assert metrics.expected_calibration_error(p, y, n_bins=10) == pytest.approx((0.5 + 0.8 + 0.15) / 3)


def test_bins_are_weighted_by_their_counts():
    # bin (.8, .9] holds two right answers at .9 (gap .1), bin (.5, .6] one wrong answer at .6 (gap .6)
    p = np.array([[0.9, 0.1], [0.1, 0.9], [0.6, 0.4]])
    y = np.array([0, 1, 1])
    assert metrics.expected_calibration_error(p, y, n_bins=10) == pytest.approx((2 * 0.1 + 0.6) / 3)


def test_a_perfectly_calibrated_predictor_has_zero_error():
    # confidence 0.75 on every point, right on exactly three quarters of them
    p = np.tile([0.75, 0.25], (8, 1))
    y = np.array([0, 0, 0, 1, 0, 0, 0, 1])
    assert metrics.expected_calibration_error(p, y) == pytest.approx(0.0, abs=1e-15)


@pytest.mark.parametrize("probabilities, y, match", [
    ([[0.6, 0.6]], [0], "sum to 1"),
    ([[0.5, 0.5]], [2], r"0\.\.1"),
    ([[0.5, 0.5]], [0, 1], "shape"),
    ([0.5, 0.5], [0], "2-D"),
    ([[np.nan, 1.0]], [0], "finite"),
    ([[1.5, -0.5]], [0], "non-negative"),
    ([[0.5, 0.5]], [0.5], "whole-number"),
])
def test_bad_input_is_named(probabilities, y, match):
    for score in (metrics.accuracy, metrics.log_predictive_density, metrics.expected_calibration_error):
        with pytest.raises(DataError, match=match):
            score(probabilities, y)
    assert issubclass(DataError, FgraphError) and issubclass(DataError, ValueError)


def test_bad_options_are_named():
    with pytest.raises(DataError, match="n_bins"):
        metrics.reliability_diagram(P4, Y4, n_bins=0)
    with pytest.raises(DataError, match="floor"):
        metrics.log_predictive_density(P4, Y4, floor=1.0)
