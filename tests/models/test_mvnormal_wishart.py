"""Mean-field VMP for a Gaussian with unknown mean vector and Wishart precision, against BayesPy.

μ ~ N(m0, V0), Λ ~ Wishart(ν, S), y_i ~ N(μ, Λ^-1) for i = 1..N observed, q(μ, Λ) = q(μ) q(Λ).
BayesPy implements the same mean-field updates independently; at the (unique) fixed point the
marginals must agree and fgraph's free energy must equal minus BayesPy's lower bound, which checks
the MvNormalMeanCovariance, MvNormalMeanPrecision and Wishart average energies and the rules
towards mean and precision.
"""
import numpy as np
import pytest

import fgraph as fg
from fgraph.nodes import MvNormal, Wishart

bayespy = pytest.importorskip("bayespy")

M0 = np.zeros(2)
V0 = np.array([[4.0, 1.0], [1.0, 3.0]])
DF = 4.0
SCALE = np.array([[0.5, 0.1], [0.1, 0.8]])


def test_mean_field_fixed_point_matches_bayespy():
    from bayespy.inference import VB
    from bayespy.nodes import Gaussian as BayesPyGaussian
    from bayespy.nodes import Wishart as BayesPyWishart

    rng = np.random.default_rng(2)
    y = rng.multivariate_normal([1.0, -1.0], [[1.0, 0.4], [0.4, 0.5]], size=12)
    with fg.Model() as model:
        mu = MvNormal("mu", mean=M0, cov=V0)
        precision = Wishart("precision", df=DF, scale=SCALE)
        MvNormal("y", mean=mu, precision=precision, observed=y)
    result = fg.infer(model, algorithm="vmp", init={"precision": fg.Wishart(DF, SCALE)}, iterations=100)
    assert np.all(np.diff(result.free_energy) <= 1e-12), "the VMP free energy must not increase"

    # BayesPy: Gaussian(mean, precision), Wishart(n, V) with E[Λ] = n V^-1
    reference_mu = BayesPyGaussian(M0, np.linalg.inv(V0))
    reference_precision = BayesPyWishart(DF, np.linalg.inv(SCALE))
    observations = BayesPyGaussian(reference_mu, reference_precision, plates=(len(y),))
    observations.observe(y)
    vb = VB(observations, reference_mu, reference_precision)
    vb.update(repeat=200, tol=1e-15, verbose=False)

    q_mu, q_precision = result.marginal("mu"), result.marginal("precision")
    mean, second_moment = reference_mu.u
    np.testing.assert_allclose(q_mu.mean, mean, rtol=1e-7)
    np.testing.assert_allclose(q_mu.cov, second_moment - np.outer(mean, mean), rtol=1e-6, atol=1e-10)
    np.testing.assert_allclose(q_precision.mean, reference_precision.u[0], rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(q_precision.mean_logdet, reference_precision.u[1], rtol=1e-7)
    np.testing.assert_allclose(q_precision.df, DF + len(y), rtol=1e-12)
    np.testing.assert_allclose(result.free_energy[-1], -vb.compute_lowerbound(), rtol=1e-9)
