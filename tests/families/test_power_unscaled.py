"""``power_unscaled``: the density of ``power`` with log-scale zero, and the sums of the natural parameters a
message was given carried over, times the exponent (scalar or one per copy)."""
import numpy as np
import pytest

from fgraph.families import Categorical, Dirichlet, Gamma
from fgraph.families.base import batch_total

RNG = np.random.default_rng(2)


@pytest.mark.parametrize("make", [
    lambda: Categorical(RNG.dirichlet(np.ones(3), size=(4, 5))),
    lambda: Dirichlet(RNG.uniform(0.5, 3.0, size=(4, 5, 3))),
    lambda: Gamma(RNG.uniform(1.0, 3.0, size=(4, 5)), RNG.uniform(0.5, 2.0, size=(4, 5))),
], ids=["categorical", "dirichlet", "gamma"])
@pytest.mark.parametrize("exponent", [0.4, np.array([0.2, 0.5, 0.7, 1.0]).reshape(4, 1)], ids=["scalar", "per-copy"])
def test_the_same_density_as_power_with_zero_log_scale(make, exponent):
    message = make()
    scaled, unscaled = message.power(exponent), message.power_unscaled(exponent)
    for a, b in zip(scaled.natural_parameters(), unscaled.natural_parameters()):
        np.testing.assert_allclose(b, a, rtol=1e-13, atol=1e-13)
    np.testing.assert_array_equal(unscaled.log_scale, 0.0)
    assert np.any(np.asarray(scaled.log_scale) != 0.0)  # power itself does carry a log-scale


@pytest.mark.parametrize("exponent", [0.4, np.array([0.2, 0.5, 0.7, 1.0]).reshape(4, 1)], ids=["scalar", "per-copy"])
def test_given_sums_are_carried_over_times_the_exponent(exponent):
    alpha = RNG.uniform(0.5, 3.0, size=(4, 5, 3))
    message = Dirichlet(alpha)
    message.with_natural_parameter_totals((batch_total(alpha - 1.0, 1, keep=1),), 1)  # per copy (first axis)
    powered = message.power_unscaled(exponent)
    assert powered.knows_natural_parameter_totals()
    (total,) = powered.natural_parameter_totals(1)
    np.testing.assert_allclose(total, batch_total(powered.natural_parameters()[0], 1, keep=1), rtol=1e-13)


def test_an_exponent_varying_over_the_summed_axes_drops_the_sums():
    message = Dirichlet(RNG.uniform(0.5, 3.0, size=(4, 5, 3)))
    message.with_natural_parameter_totals((batch_total(message.natural_parameters()[0], 1, keep=1),), 1)
    exponent = RNG.uniform(0.1, 1.0, size=(4, 5))  # one per element: the given sums no longer hold
    powered = message.power_unscaled(exponent)
    assert not powered.knows_natural_parameter_totals()
    (total,) = powered.natural_parameter_totals(1)
    np.testing.assert_allclose(total, (exponent[..., None] * message.natural_parameters()[0]).sum(1), rtol=1e-13)
