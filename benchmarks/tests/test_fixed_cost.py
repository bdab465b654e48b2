"""The fixed-cost and unrolled-chain benchmarks run end to end on tiny sizes, and ours agrees with the peers.

Benchmarks are not tests (nothing here is timed); these run their code paths
so that a benchmark whose answer drifts from its peer's is noticed, and check
the peers themselves against closed forms.
"""
import math

import numpy as np
import pytest

from benchmarks import overhead, unrolled


def test_unrolled_chain_agrees_with_the_kalman_smoother():
    reports = unrolled.run([12, 30], repeats=1)
    headline = unrolled.summary(reports, quick=True)
    assert headline["agree"] and all(report["agree"] for report in reports)
    assert headline["params"]["T"] == 30 and set(headline["per_T"]) == {"12", "30"}
    assert headline["messages"] == 3 * 30 - 1


def test_the_kalman_smoother_is_the_exact_posterior():
    """Oracle for the peer: the joint Gaussian of (x, y) written out densely, for T = 6."""
    y = unrolled.simulate(6)
    length = len(y)
    # x = L w with w ~ N(0, diag(v0, q, ..., q)) plus the mean: cov(x)_{st} = v0 + q (min(s, t) - 1)
    steps = np.arange(length)
    prior_cov = unrolled.INITIAL_VAR + unrolled.STEP_VAR * np.minimum.outer(steps, steps)
    prior_mean = np.full(length, unrolled.INITIAL_MEAN)
    observation_cov = prior_cov + unrolled.NOISE_VAR * np.eye(length)
    gain = prior_cov @ np.linalg.inv(observation_cov)
    posterior_mean = prior_mean + gain @ (y - prior_mean)
    posterior_cov = prior_cov - gain @ prior_cov
    residual = y - prior_mean
    log_evidence = -0.5 * (length * math.log(2 * math.pi) + np.linalg.slogdet(observation_cov)[1]
                           + residual @ np.linalg.solve(observation_cov, residual))
    peer = unrolled.kalman_smoother(y)
    np.testing.assert_allclose(peer["mean"], posterior_mean, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(peer["var"], np.diag(posterior_cov), rtol=1e-12)
    assert peer["log_evidence"] == pytest.approx(log_evidence, rel=1e-12)


def test_unrolled_reports_disagreement():
    quality = {"max_abs_diff_mean": 0.0, "max_abs_diff_var": 1e-3, "rel_diff_log_evidence": 0.0}
    assert not unrolled.agrees(quality)


def test_overhead_agrees_with_the_closed_form():
    report = overhead.run(quick=True, calls=3, import_runs=1)
    assert report["agree"]
    mean, var, log_evidence = report["quality"]["ours"]
    # oracle: x | y ~ N(m0 + v0 (y - m0) / (v0 + r), v0 r / (v0 + r)), y ~ N(m0, v0 + r)
    m0, v0, r, y = overhead.PRIOR_MEAN, overhead.PRIOR_VAR, overhead.NOISE_VAR, overhead.OBSERVATION
    assert mean == pytest.approx(m0 + v0 * (y - m0) / (v0 + r), rel=1e-12)
    assert var == pytest.approx(v0 * r / (v0 + r), rel=1e-12)
    assert log_evidence == pytest.approx(-0.5 * math.log(2 * math.pi * (v0 + r)) - 0.5 * (y - m0) ** 2 / (v0 + r),
                                         rel=1e-12)
    assert report["import_fgraph_s"] > 0 and report["import_numpy_s"] > 0
    assert not overhead.agrees((1.0, 0.4, -1.5), (1.0 + 1e-9, 0.4, -1.5))
