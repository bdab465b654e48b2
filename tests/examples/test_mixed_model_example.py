"""`fgraph run mixed-model --quick`: the summary's numbers against direct numerical computations.

p(y_n | c = c_k) = p_ab(y_n − c_k) with p_ab the density of a·b, a ~ N(0.5, 1), b ~ N(0, 1):

* with the Product node's default approximation (its quadrature over a, the
  mixture evaluated here in numpy): the averaging posterior over c and
  log p(y), and coordinate ascent for the combination;
* with adaptive quadrature of the exact density: log p(y) to within the
  approximation error;
* with moment matching, N(y_n | c_k, 1.25): averaging in closed form.
"""
import json

import numpy as np
import pytest
from scipy import integrate
from scipy.special import digamma, logsumexp

from fgraph.cli import main
from fgraph.examples import mixed_model as example
from fgraph.nodes.product import quadrature

SHIFTS = np.array([-0.2, -1.8, 0.9])


@pytest.fixture(scope="module")
def summary(tmp_path_factory):
    out = tmp_path_factory.mktemp("mixed-model")
    assert main(["run", "mixed-model", "--quick", "--out", str(out)]) == 0
    found = json.loads((out / "summary.json").read_text())
    found["_out"] = out
    return found


@pytest.fixture(scope="module")
def y(summary):
    return np.random.default_rng(example.SEED).standard_normal(example.SIZE)[: summary["n"]]


def grid_log_density(w):
    """Σ_i w_i N(w | 0, x_i²) on the node's quadrature over a ~ N(0.5, 1) (b ~ N(0, 1) has mean 0)."""
    nodes, log_weights = quadrature(0.5, 1.0)
    w = np.asarray(w)[..., None]
    return logsumexp(log_weights - 0.5 * np.log(2 * np.pi * nodes**2) - 0.5 * w**2 / nodes**2, axis=-1)


def exact_log_density(w):
    def integrand(a):
        return np.exp(-0.5 * (a - 0.5) ** 2 - 0.5 * w * w / (a * a)) / (2 * np.pi * abs(a))

    value = integrate.quad(integrand, -12.0, 0.0, epsabs=0, epsrel=1e-11, limit=400)[0]
    value += integrate.quad(integrand, 0.0, 13.0, epsabs=0, epsrel=1e-11, limit=400)[0]
    return np.log(value)


def averaging_posterior(loglik):
    joint = np.log(1 / 3) + loglik.sum(axis=0)
    return np.exp(joint - logsumexp(joint)), logsumexp(joint)


def test_quick_run_writes_summary_and_figure(summary):
    assert summary["n"] == 150 and "summary.json" in summary["files"]
    pytest.importorskip("matplotlib")
    assert (summary["_out"] / "mixed_model.png").exists()


def test_averaging_posterior_over_c_matches_direct_computation(summary, y):
    averaging = summary["results"]["grid"]["averaging"]
    posterior, log_evidence = averaging_posterior(grid_log_density(y[:, None] - SHIFTS[None, :]))
    np.testing.assert_allclose(averaging["posterior"], posterior, atol=1e-12)
    np.testing.assert_allclose(averaging["log_evidence"], log_evidence, rtol=1e-10)
    assert np.argmax(averaging["posterior"]) == 0  # c = −0.2 fits N(0, 1) data best


def test_approximation_is_close_to_the_exact_density(summary, y):
    exact = np.array([[exact_log_density(v - c) for c in SHIFTS] for v in y])
    _, exact_log_evidence = averaging_posterior(exact)
    assert abs(summary["results"]["grid"]["averaging"]["log_evidence"] - exact_log_evidence) < 1e-3


def test_combination_matches_coordinate_ascent(summary, y):
    combination = summary["results"]["grid"]["combination"]
    loglik = grid_log_density(y[:, None] - SHIFTS[None, :])
    q_z = np.full(loglik.shape, 1 / 3)
    for _ in range(combination["iterations"]):
        alpha = 1 / 3 + q_z.sum(axis=0)
        logits = loglik + digamma(alpha) - digamma(alpha.sum())
        q_z = np.exp(logits - logsumexp(logits, axis=1, keepdims=True))
    np.testing.assert_allclose(combination["expected_pi"], alpha / alpha.sum(), atol=1e-9)
    assert min(combination["expected_pi"]) > 0.005 and max(combination["expected_pi"]) < 0.95  # spread over shifts


def test_moment_matching_averaging_in_closed_form(summary, y):
    loglik = -0.5 * (np.log(2 * np.pi * 1.25) + (y[:, None] - SHIFTS[None, :]) ** 2 / 1.25)
    posterior, log_evidence = averaging_posterior(loglik)
    averaging = summary["results"]["moment_matching"]["averaging"]
    np.testing.assert_allclose(averaging["posterior"], posterior, atol=1e-12)
    np.testing.assert_allclose(averaging["log_evidence"], log_evidence, rtol=1e-10)
