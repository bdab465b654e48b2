"""A Gaussian shifted by a switched constant, y_n = x_n + c, c ∈ {c_1, c_2, c_3} chosen by one switch.

Belief propagation must give p(z = k | y) ∝ Π_n N(y_n | μ + c_k, v), exactly
(a mixture of point masses passes through the addition node).
"""
import numpy as np
from scipy.special import logsumexp

import fgraph as fg
from fgraph.nodes import Add, Categorical, Mixture, Normal

SHIFTS = np.array([-1.0, 0.5, 2.0])


def test_switch_posterior_and_evidence_are_exact():
    y = np.array([0.3, 1.1, 0.8, -0.2])
    with fg.Model() as model:
        z = Categorical("z", p=np.array([0.2, 0.5, 0.3]))
        c = Mixture("c", z, list(SHIFTS), batch_shape=(y.size,))
        x = Normal("x", mean=0.1, var=0.8, batch_shape=(y.size,))
        Add("y", x, c, observed=y)
    result = fg.infer(model, algorithm="bp")
    joint = np.log([0.2, 0.5, 0.3]) + (
        -0.5 * (np.log(2 * np.pi * 0.8) + (y[:, None] - 0.1 - SHIFTS[None, :]) ** 2 / 0.8)).sum(axis=0)
    np.testing.assert_allclose(result.marginal("z").probabilities, np.exp(joint - logsumexp(joint)), rtol=1e-12)
    np.testing.assert_allclose(result.log_evidence, logsumexp(joint), rtol=1e-12)
