"""`fgraph run model-comparison --quick`: the summary's numbers against independent computations.

* averaging: p(z = k | y) ∝ Π_n N(y_n | μ_k, 1 + σ²) and log p(y) in closed form;
* selection: the argmax of that posterior, and F = −log p(y, z = k̂);
* online combination: the greedy assignments recomputed in numpy, then the Dirichlet reduction;
* variational combination: coordinate ascent on q(π) Π q(z_n) in numpy.
"""
import json

import numpy as np
import pytest
from scipy.special import digamma, logsumexp

from fgraph.cli import main
from fgraph.examples import model_comparison as example


@pytest.fixture(scope="module")
def summary(tmp_path_factory):
    out = tmp_path_factory.mktemp("model-comparison")
    assert main(["run", "model-comparison", "--quick", "--out", str(out)]) == 0
    found = json.loads((out / "summary.json").read_text())
    found["_out"] = out
    return found


@pytest.fixture(scope="module")
def stream():
    _, y = example.simulate(max(example.SIZES), np.random.default_rng(example.SEED))
    return y


def log_likelihoods(y):
    var = 1.0 + 5.0
    return -0.5 * (np.log(2 * np.pi * var) + (y[:, None] - np.array([-3.0, 0.0, 4.0])) ** 2 / var)


def test_runs_every_quick_size_and_writes_the_figure(summary):
    assert summary["sizes"] == [1, 5, 10, 100]
    assert "summary.json" in summary["files"]
    pytest.importorskip("matplotlib")
    assert (summary["_out"] / "model_comparison.png").exists()


def test_averaging_equals_the_closed_form(summary, stream):
    for row in summary["rows"]:
        joint = np.log(1 / 3) + log_likelihoods(stream[: row["n"]]).sum(axis=0)
        np.testing.assert_allclose(row["averaging"]["posterior"], np.exp(joint - logsumexp(joint)), atol=1e-12)
        np.testing.assert_allclose(row["averaging"]["log_evidence"], logsumexp(joint), rtol=1e-10)


def test_selection_picks_the_most_probable_model(summary, stream):
    for row in summary["rows"]:
        joint = np.log(1 / 3) + log_likelihoods(stream[: row["n"]]).sum(axis=0)
        best = int(np.argmax(joint))
        np.testing.assert_array_equal(row["selection"]["q"], np.eye(3)[best])
        np.testing.assert_allclose(row["selection"]["free_energy"], -joint[best], rtol=1e-10)


def test_online_combination_streams_greedy_assignments(summary, stream):
    prior = np.full(3, example.ONLINE_PRIOR)
    alpha, loglik = prior.copy(), log_likelihoods(stream)
    for n, row in enumerate(loglik, start=1):
        alpha[np.argmax(np.log(alpha / alpha.sum()) + row)] += 1.0
        match = [r for r in summary["rows"] if r["n"] == n]
        if match:
            online = match[0]["online_combination"]
            reduced = alpha - prior + example.VAGUE_PRIOR
            np.testing.assert_allclose(online["counts"], alpha - prior)
            np.testing.assert_allclose(online["expected_pi"], reduced / reduced.sum(), rtol=1e-12)
        if n == 100:
            break


def test_variational_combination_matches_coordinate_ascent(summary, stream):
    for row in summary["rows"]:
        variational = row["variational_combination"]
        loglik = log_likelihoods(stream[: row["n"]])
        q_z = np.full(loglik.shape, 1 / 3)
        for _ in range(variational["iterations"]):
            alpha = 1 / 3 + q_z.sum(axis=0)
            logits = loglik + digamma(alpha) - digamma(alpha.sum())
            q_z = np.exp(logits - logsumexp(logits, axis=1, keepdims=True))
        np.testing.assert_allclose(variational["expected_pi"], alpha / alpha.sum(), atol=1e-10)
        assert variational["free_energy_never_increased"]


def test_combination_spreads_where_averaging_concentrates(summary):
    """At N = 100 averaging and selection sit on one component; both combinations keep all three."""
    last = summary["rows"][-1]
    assert max(last["averaging"]["posterior"]) > 0.99
    for method in ("online_combination", "variational_combination"):
        assert min(last[method]["expected_pi"]) > 0.1
