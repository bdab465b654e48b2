"""The quick paths of the VMP part of benchmarks/core.py and of benchmarks/mixture.py, on small sizes.

Benchmarks are not timed here; these tests check that ours and every peer
agree (the ``agree`` field) and that the check would notice if they did not.
"""
import math

import numpy as np
import pytest

from benchmarks import core, mixture


@pytest.fixture(scope="module")
def vmp_report():
    return core.run_vmp(quick=True, size=500, repeats=1)


def test_vmp_benchmark_agrees_with_every_peer(vmp_report):
    assert vmp_report["agree"] is True
    assert vmp_report["ratio"] > 0 and vmp_report["ratio_uncollapsed"] > 0
    differences = vmp_report["quality"]["relative_differences"]
    assert differences["ours_vs_numpy"]["F_every_iteration"] < 1e-12
    assert differences["uncollapsed_vs_bayespy"]["F"] < 1e-12


def test_vmp_numpy_peer_against_the_conjugate_update_written_out():
    # one iteration by hand: q(mu) from E[tau] = a0/b0, then q(tau), then F = E[-log p] - H[q]
    y = np.array([1.5, 2.5, 1.0, 3.0])
    n, s1, s2 = 4, y.sum(), (y**2).sum()
    e_tau = core.PRIOR_SHAPE / core.PRIOR_RATE
    precision = 1 / core.PRIOR_VAR + n * e_tau
    m, v = (core.PRIOR_MEAN / core.PRIOR_VAR + e_tau * s1) / precision, 1 / precision
    a, b = core.PRIOR_SHAPE + n / 2, core.PRIOR_RATE + 0.5 * (s2 - 2 * m * s1 + n * (m * m + v))
    from scipy.special import digamma, gammaln
    e_log_tau = digamma(a) - np.log(b)
    expected_log_joint = (
        -0.5 * n * np.log(2 * np.pi) + 0.5 * n * e_log_tau - 0.5 * (a / b) * (s2 - 2 * m * s1 + n * (m * m + v))
        - 0.5 * np.log(2 * np.pi * core.PRIOR_VAR) - ((m - core.PRIOR_MEAN) ** 2 + v) / (2 * core.PRIOR_VAR)
        + core.PRIOR_SHAPE * np.log(core.PRIOR_RATE) - gammaln(core.PRIOR_SHAPE)
        + (core.PRIOR_SHAPE - 1) * e_log_tau - core.PRIOR_RATE * a / b
    )
    entropy = 0.5 * np.log(2 * np.pi * np.e * v) + a - np.log(b) + gammaln(a) + (1 - a) * digamma(a)
    peer = core.vmp_numpy(y)
    assert peer["trace"][0] == pytest.approx(-(expected_log_joint + entropy), rel=1e-13)


def test_vmp_benchmark_notices_a_disagreement(monkeypatch):
    honest = core.vmp_numpy

    def off_by_a_little(data):
        result = honest(data)
        result["trace"] = [value * (1 + 1e-7) for value in result["trace"]]
        return result

    monkeypatch.setattr(core, "vmp_numpy", off_by_a_little)
    assert core.run_vmp(quick=True, size=300, repeats=1)["agree"] is False


@pytest.mark.parametrize("size", [1000, 20000])
def test_mixture_benchmark_agrees_with_both_peers(size):
    report = mixture.run(quick=True, size=size, repeats=3)
    assert report["agree"] is True
    assert report["quality"]["vs_peer_vectorised"]["agree_1e-9"] is True


def test_mixture_strong_peer_equals_the_vectorised_one():
    data = np.random.default_rng(5).normal(1.0, 2.0, size=777)
    strong, vectorised = mixture.peer(data), mixture.peer_vectorised(data)
    for key in ("model_probabilities", "component_means", "component_vars"):
        np.testing.assert_allclose(strong[key], vectorised[key], rtol=1e-12)
    assert strong["log_evidence"] == pytest.approx(vectorised["log_evidence"], rel=1e-14)
    assert math.isclose(strong["var"], vectorised["var"], rel_tol=1e-12)


def test_mixture_benchmark_notices_a_disagreement(monkeypatch):
    honest = mixture.peer

    def wrong_prior(data):
        result = honest(data)
        result["model_probabilities"] = [p * 1.001 for p in result["model_probabilities"]]
        return result

    monkeypatch.setattr(mixture, "peer", wrong_prior)
    assert mixture.run(quick=True, size=500, repeats=1)["agree"] is False
