"""Entropy weights (``fg.entropy_weight``): −τ H[q(x)] in the free energy and the coordinate step q ∝ (Π μ)^{1/τ}.

Model: mu ~ N(m0, v0), tau ~ Gamma(a0, b0), y_i ~ N(mu, 1/tau) under VMP, with the entropy of q(mu) weighted by
τ_μ. The reference below is the closed-form CAVI of the objective
E[log p(y | mu, tau)] + E[log p(mu)] + E[log p(tau)] + τ_μ H[q(mu)] + H[q(tau)]:
q(mu) = N(m, v) with precision (1/v0 + N E[tau]) / τ_μ and mean (m0/v0 + E[tau] Σ y) / (1/v0 + N E[tau]).
"""
import numpy as np
import pytest
from scipy.special import digamma, gammaln

import fgraph as fg
from fgraph.errors import ModelError
from fgraph.nodes import Gamma, Normal

M0, V0, A0, B0 = 0.5, 4.0, 2.0, 3.0
Y = np.random.default_rng(1).normal(1.3, 0.7, size=30)


def build(weight=None, copies=None):
    with fg.Model(**({"copies": copies} if copies else {})) as model:
        mu = Normal("mu", mean=M0, var=V0)
        tau = Gamma("tau", shape=A0, rate=B0)
        Normal("y", mean=mu, precision=tau, observed=Y)
    if weight is not None:
        fg.entropy_weight(mu, weight)
    return model


def reference(weight, sweeps):
    """(m, v, a, b, −objective) after each sweep of the default order: q(mu) then q(tau)."""
    n, total = len(Y), Y.sum()
    a, b, out = A0, B0, []
    for _ in range(sweeps):
        e_tau, e_log_tau = a / b, digamma(a) - np.log(b)
        precision = 1.0 / V0 + n * e_tau
        m = (M0 / V0 + e_tau * total) / precision
        v = weight / precision
        a, b = A0 + n / 2.0, B0 + 0.5 * (np.sum((Y - m) ** 2) + n * v)
        e_tau, e_log_tau = a / b, digamma(a) - np.log(b)
        expected_log_lik = 0.5 * n * (e_log_tau - np.log(2 * np.pi)) - 0.5 * e_tau * (np.sum((Y - m) ** 2) + n * v)
        expected_log_mu = -0.5 * np.log(2 * np.pi * V0) - 0.5 * ((m - M0) ** 2 + v) / V0
        expected_log_tau = A0 * np.log(B0) - gammaln(A0) + (A0 - 1) * e_log_tau - B0 * e_tau
        entropy_mu = 0.5 * np.log(2 * np.pi * np.e * v)
        entropy_tau = a - np.log(b) + gammaln(a) + (1 - a) * digamma(a)
        out.append((m, v, a, b, -(expected_log_lik + expected_log_mu + expected_log_tau + weight * entropy_mu
                                   + entropy_tau)))
    return out


@pytest.mark.parametrize("weight", [1.0, 0.5, 0.05])
def test_the_weighted_objective_and_its_coordinate_steps(weight):
    result = fg.infer(build(weight), algorithm="vmp", iterations=20, init={"tau": fg.Gamma(A0, B0)},
                      schedule=[("mu", "out"), ("y", "mean"), ("tau", "out"), ("y", "precision")])
    expected = reference(weight, 20)
    np.testing.assert_allclose(result.free_energy, [state[4] for state in expected], rtol=1e-12)
    m, v, a, b, _ = expected[-1]
    np.testing.assert_allclose([result.marginal("mu").mean, result.marginal("mu").var], [m, v], rtol=1e-12)
    np.testing.assert_allclose([result.marginal("tau").shape, result.marginal("tau").rate], [a, b], rtol=1e-12)
    assert np.all(np.diff(result.free_energy) <= 1e-12)


def test_one_weight_per_copy_equals_separate_runs():
    weights = np.array([1.0, 0.3, 0.01])
    schedule = [("mu", "out"), ("y", "mean"), ("tau", "out"), ("y", "precision")]
    together = fg.infer(build(fg.per_copy(weights), copies=3), algorithm="vmp", iterations=15,
                        init={"tau": fg.Gamma(A0, B0)}, schedule=schedule)
    for c, weight in enumerate(weights):
        alone = fg.infer(build(float(weight)), algorithm="vmp", iterations=15, init={"tau": fg.Gamma(A0, B0)},
                         schedule=schedule)
        np.testing.assert_allclose(np.array(together.free_energy)[:, c], alone.free_energy, rtol=1e-12)
        np.testing.assert_allclose(together.marginal("mu").var[c], alone.marginal("mu").var, rtol=1e-12)


def test_bad_weights_are_named_errors():
    with fg.Model() as model:
        mu = Normal("mu", mean=0.0, var=1.0)
        y = Normal("y", mean=mu, var=1.0, observed=np.zeros(3))
    with pytest.raises(ModelError, match="observed"):
        fg.entropy_weight(y, 0.5)
    with pytest.raises(ModelError, match=r"in \(0, 1\]"):
        fg.entropy_weight(mu, 0.0)
    with pytest.raises(ModelError, match="needs a model with copies"):
        fg.entropy_weight(mu, fg.per_copy(np.array([0.5, 0.5])))
    assert model["mu"].entropy_weight == 1.0
