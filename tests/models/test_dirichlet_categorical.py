"""Dirichlet prior, N categorical labels in a plate: exact BP evidence and posterior in closed form.

p(z_1..z_N) = B(alpha + counts) / B(alpha) with log B(alpha) = Σ log Γ(alpha_k) - log Γ(Σ alpha_k);
the posterior is Dir(alpha + counts). This pins the log-scale -log K! of each message towards p.
"""
import numpy as np
import pytest
from scipy.special import gammaln

import fgraph as fg
from fgraph.nodes import Categorical, Dirichlet

ALPHA = np.array([1.0, 2.0, 0.5, 3.0])


def log_beta(alpha):
    return np.sum(gammaln(alpha)) - gammaln(np.sum(alpha))


@pytest.mark.parametrize("encoding", ["labels", "one-hot"])
def test_plate_evidence_and_posterior(encoding):
    labels = np.random.default_rng(3).integers(0, 4, 15)
    observations = labels if encoding == "labels" else np.eye(4)[labels]
    with fg.Model() as model:
        theta = Dirichlet("theta", ALPHA)
        Categorical("z", theta, observed=observations)
    result = fg.infer(model, algorithm="bp")
    counts = np.bincount(labels, minlength=4)
    expected = log_beta(ALPHA + counts) - log_beta(ALPHA)
    np.testing.assert_allclose(result.log_evidence, expected, rtol=0, atol=1e-10)
    np.testing.assert_allclose(result.marginal("theta").alpha, ALPHA + counts, rtol=1e-12)
    np.testing.assert_allclose(result.predictive("z").probabilities[0], (ALPHA + counts) / (ALPHA + counts).sum(), rtol=1e-12)
