"""The engine's log-sum-exp against scipy's, on the three paths it takes (floats, slices, reductions)."""
import numpy as np
import pytest
from scipy.special import logsumexp as scipy_logsumexp

from fgraph.families.base import FEW_CATEGORIES, logsumexp


def awkward(shape, rng):
    """Values over a wide range, with rows of −∞, a +∞ and a NaN."""
    a = rng.normal(size=shape) * 40.0
    flat = a.reshape(-1, shape[-1])
    if len(flat) < 4:
        return a
    flat[0] = -np.inf
    flat[1, 0] = np.inf
    flat[2, -1] = np.nan
    flat[3, 0] = -np.inf
    return a


@pytest.mark.parametrize("shape", [(5,), (3000, 2), (700, 3), (50, 40, FEW_CATEGORIES), (2000, FEW_CATEGORIES + 1)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_equals_scipy_on_every_path(shape, keepdims):
    a = awkward(shape, np.random.default_rng(len(shape) + shape[-1]))
    with np.errstate(all="ignore"):
        expected = scipy_logsumexp(a, axis=-1, keepdims=keepdims)
    found = logsumexp(a, axis=-1, keepdims=keepdims)
    assert np.shape(found) == np.shape(expected)
    np.testing.assert_allclose(found, expected, rtol=1e-13, equal_nan=True)


def test_other_axes_reduce_as_scipy():
    a = awkward((3000, 2), np.random.default_rng(5))
    with np.errstate(all="ignore"):
        np.testing.assert_allclose(logsumexp(a, axis=0), scipy_logsumexp(a, axis=0), rtol=1e-13, equal_nan=True)
