"""The Gaussian-process prior node: average energy against the dense formula and the density, constructor checks."""
import numpy as np
import pytest
from scipy.stats import multivariate_normal

import fgraph as fg
from fgraph.errors import DataError, ModelError
from fgraph.families import MvNormalMeanCovariance, PointMass
from fgraph.families.kernels import ExponentiatedQuadratic, Matern52
from fgraph.nodes import GaussianProcess
from fgraph.nodes.gaussian_process import GaussianProcessNode
from tests.rules.tables import energy

RNG = np.random.default_rng(5)
POINTS = RNG.normal(size=(6, 2))
KERNEL = Matern52(1.3, 0.8)


def test_energy_with_point_masses_is_minus_the_log_density():
    out, mean = RNG.normal(size=6), RNG.normal(size=6)
    result = energy(GaussianProcessNode, {"q_out": PointMass(out, 1), "q_mean": PointMass(mean, 1)},
                    kernel=KERNEL, points=POINTS)
    np.testing.assert_allclose(result, -multivariate_normal(mean, KERNEL(POINTS)).logpdf(out), rtol=1e-11)


def test_energy_of_a_gaussian_marginal_equals_the_dense_formula():
    spread = RNG.normal(size=(6, 6))
    q_out = MvNormalMeanCovariance(RNG.normal(size=6), spread @ spread.T / 6 + 0.1 * np.eye(6))
    mean = RNG.normal(size=6)
    K = KERNEL(POINTS)
    inverse = np.linalg.inv(K)
    difference = q_out.mean - mean
    expected = 0.5 * (6 * np.log(2 * np.pi) + np.linalg.slogdet(K)[1] + np.trace(inverse @ q_out.cov)
                      + difference @ inverse @ difference)
    result = energy(GaussianProcessNode, {"q_out": q_out, "q_mean": PointMass(mean, 1)}, kernel=KERNEL, points=POINTS)
    np.testing.assert_allclose(result, expected, rtol=1e-10)


def test_constructor_broadcasts_a_number_and_checks_its_arguments():
    with fg.Model():
        f = GaussianProcess("f", POINTS, KERNEL, mean=0.5)
        assert f.event_shape == (6,)
        g = GaussianProcess("g", POINTS, KERNEL, mean=np.zeros((3, 6)))
        assert g.batch_shape == (3,) and g.event_shape == (6,)
    with fg.Model(), pytest.raises(ModelError, match="kernel must be a kernel"):
        GaussianProcess("f", POINTS, "rbf")
    with fg.Model(), pytest.raises(ModelError, match="mean has 4 values for 6 inputs"):
        GaussianProcess("f", POINTS, KERNEL, mean=np.zeros(4))
    with fg.Model(), pytest.raises(DataError, match="not finite"):
        GaussianProcess("f", np.where(POINTS > 1.0, np.nan, POINTS), KERNEL)
    with fg.Model(), pytest.raises(DataError, match="expects 3"):
        GaussianProcess("f", POINTS, ExponentiatedQuadratic(1.0, [1.0, 1.0, 1.0]))
    with fg.Model(), pytest.raises(ModelError, match="jitter"):
        GaussianProcess("f", POINTS, KERNEL, jitter=-1.0)
