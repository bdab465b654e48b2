"""A product with a nearly flat normal message (variance ~1e308, what a never-selected component sends) keeps a
finite, exact log-scale instead of overflowing to −∞."""
import math

import numpy as np

from fgraph.families import NormalMeanVariance
from fgraph.families.normal import NormalWeightedMeanPrecision

TINY = np.finfo(float).tiny


def test_a_flat_message_times_a_normal_has_the_exact_log_scale():
    flat = NormalWeightedMeanPrecision(np.array([0.3 * TINY, 0.0]), np.array([TINY, TINY]))
    normal = NormalMeanVariance(np.array([1.0, -2.0]), np.array([0.5, 2.0]))
    with np.errstate(over="raise", divide="raise", invalid="raise"):
        product = flat * normal
    expected = -0.5 * (math.log(2 * math.pi) + math.log(1 / TINY + 0.5)) - 0.5 * (0.3 - 1.0) ** 2 * TINY
    assert np.all(np.isfinite(product.log_scale))
    np.testing.assert_allclose(product.log_scale[0], expected, rtol=1e-12)
    np.testing.assert_allclose(product.mean, normal.mean, rtol=1e-12)


def test_unbatched_flat_products_too():
    flat = NormalWeightedMeanPrecision(0.0, TINY)
    product = flat * NormalMeanVariance(1.0, 0.5)
    assert math.isfinite(float(product.log_scale))
    np.testing.assert_allclose(float(product.log_scale), -0.5 * (math.log(2 * math.pi) - math.log(TINY)), rtol=1e-12)
