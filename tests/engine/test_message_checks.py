"""Every message a rule makes is checked: NaN or +inf anywhere in its parameters is refused, naming the node.

A message's parameters may be views broadcast over a plate (one value shared by its elements) or a few
probabilities; both are checked as cheaply as they are stored, and still found. ``-inf`` (a probability of
zero) and finite values too large to sum are legitimate and pass. Each case goes through ``fg.infer`` with a
node of the test's own whose rule returns the message under test.
"""
from __future__ import annotations

import numpy as np
import pytest

import fgraph as fg
from fgraph.errors import NumericalError
from fgraph.families import Categorical, NormalMeanVariance
from fgraph.families.normal import UnivariateNormal
from fgraph.node import FactorNode
from fgraph.nodes import Normal, Transition

EMITTED = {}  # what the emitters' rules return, set by each test


class NormalEmitter(FactorNode):
    """A plate of factors whose messages to ``out`` are ``EMITTED["normal"]``."""

    interfaces = ("out",)
    event_ndims = {"out": 0}


class CategoricalEmitter(FactorNode):
    """A plate of factors whose messages to ``out`` are ``EMITTED["categorical"]``."""

    interfaces = ("out",)
    event_ndims = {"out": 1}


@fg.rule(NormalEmitter, "out")
def _normal_emitter_out() -> UnivariateNormal:
    return EMITTED["normal"]


@fg.rule(CategoricalEmitter, "out")
def _categorical_emitter_out() -> Categorical:
    return EMITTED["categorical"]


def _normal_plate(message, size: int = 10):
    EMITTED["normal"] = message
    with fg.Model() as model:
        x = fg.random_variable(NormalEmitter, "x", {}, batch_shape=(size,))
        Normal("y", mean=x, var=1.0, observed=np.zeros(size))
    return model


def _categorical(probabilities):
    probabilities = np.asarray(probabilities, dtype=float)
    categories = probabilities.shape[-1]
    EMITTED["categorical"] = Categorical(probabilities, check=False)
    with fg.Model() as model:
        s = fg.random_variable(CategoricalEmitter, "s", {}, event_shape=(categories,))
        Transition("o", s, np.full((2, categories), 0.5), observed=np.array([1.0, 0.0]))
    return model


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_a_nan_or_inf_broadcast_over_a_plate_is_refused(bad):
    shared = np.broadcast_to(bad, (10,))  # one value for the ten elements (a stride-0 view)
    message = NormalMeanVariance(shared, np.ones(10), check=False)
    with pytest.raises(NumericalError, match=r"node 'x' \(NormalEmitter\), interface 'out'.*NaN or infinite"):
        fg.infer(_normal_plate(message))


def test_finite_values_broadcast_over_a_plate_pass():
    message = NormalMeanVariance(np.broadcast_to(2.0, (10,)), np.broadcast_to(1.0, (10,)), check=False)
    result = fg.infer(_normal_plate(message))
    np.testing.assert_allclose(result.marginal("x").mean, np.full(10, 1.0))  # (2 + 0) / 2 in every element


@pytest.mark.parametrize("repeat", [1, 20], ids=["three categories", "sixty categories"])
@pytest.mark.parametrize("probabilities, refused", [
    ([0.2, 0.3, 0.5], False), ([0.2, np.nan, 0.5], True), ([np.inf, 0.3, 0.2], True), ([0.0, 0.5, 0.5], False),
    ([np.inf, np.inf, 0.0], True),
])
def test_a_few_probabilities_are_judged_as_many(probabilities, refused, repeat):
    """A categorical message of three probabilities or of sixty: NaN and +inf refused, a zero (log p = −inf)
    accepted, however many categories."""
    p = np.repeat(np.asarray(probabilities, dtype=float), repeat)
    with np.errstate(invalid="ignore"):
        p = p / np.sum(p) if np.all(np.isfinite(p)) else p
    if refused:
        with pytest.raises(NumericalError, match=r"node 's' \(CategoricalEmitter\)"):
            fg.infer(_categorical(p))
    else:
        result = fg.infer(_categorical(p))
        np.testing.assert_allclose(result.marginal("s").probabilities, p, atol=1e-15)


def test_finite_parameters_too_large_to_sum_pass():
    """Elements whose sum overflows are looked at one by one: each is finite, so the message passes."""
    with np.errstate(over="ignore"):
        message = NormalMeanVariance(np.full(10, 1e308), np.ones(10), check=False)  # ξ = 1e308 in each element
        result = fg.infer(_normal_plate(message))
        np.testing.assert_allclose(result.marginal("x").mean, np.full(10, 0.5e308))
