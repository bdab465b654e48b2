"""The engine's fast paths against its reference paths.

* Caches of marginals kept while the messages around a variable stay the
  same object, dropped as soon as one changes.
* A plate of N messages checked and reduced through the sums of its natural
  parameters; a plate's average energy summed by the node
  (``batch_total``) instead of per element.
* The element-wise Normal-Gamma VMP against the same updates written by
  hand in numpy, iteration by iteration, and the passes it makes over N.
"""
import math

import numpy as np
import pytest

import fgraph as fg
from fgraph import engine as engine_module
from fgraph.equality import EqualityNode
from fgraph.node import FactorNode
from fgraph.errors import NumericalError
from fgraph.families import NormalMeanVariance, UnivariateNormal
from fgraph.families.gamma import Gamma, GammaNaturalOnDemand
from fgraph.nodes import Gamma as GammaVariable
from fgraph.nodes import Normal


def normal_gamma(n=300, seed=3):
    y = np.random.default_rng(seed).normal(1.5, 0.8, size=n)
    with fg.Model() as model:
        mu = Normal("mu", mean=0.0, var=10.0)
        tau = GammaVariable("tau", shape=2.0, rate=1.0)
        Normal("y", mean=mu, precision=tau, observed=y)
    return model, {"tau": fg.Gamma(2.0, 1.0)}


def run(build, collapse, iterations=12):
    model, init = build()
    plan = fg.compile(model, algorithm="vmp", init=init, collapse_plates=collapse)
    result = fg.run(plan, iterations=iterations, free_energy=True)
    names = [slot.name for slot in plan.graph.latent_slots]
    moments = {name: (np.asarray(result.marginal(name).mean).tolist(),) for name in names}
    return moments, list(result.free_energy)


def test_a_message_set_again_keeps_the_marginal_and_a_new_one_replaces_it():
    model, init = normal_gamma()
    plan = fg.compile(model, algorithm="vmp", init=init)
    engine = engine_module.Engine(plan, {"y": model.data["y"]})
    engine.sweep()
    engine.sweep()
    slot = plan.graph.slots["mu"]
    prior_step = next(step for step in plan.schedule if step.node.name == "mu")
    kept = engine.state.marginal(slot)
    engine.update(prior_step)  # a prior of constants: the same message object again
    assert engine.state.marginal(slot) is kept
    # another message on the same socket: the cached marginal must go
    other = NormalMeanVariance(3.0, 0.5)
    engine.state.set_outbound(prior_step.socket, other)
    fresh = engine.state.marginal(slot)
    assert fresh is not kept
    likelihood = engine.state.outbound[next(s for s in slot.sockets if s is not prior_step.socket).index]
    expected = (3.0 / 0.5 + float(likelihood.weighted_mean)) / (1 / 0.5 + float(likelihood.precision))
    assert float(fresh.mean) == pytest.approx(expected, rel=1e-14)
    assert float(fresh.mean) != pytest.approx(float(kept.mean), rel=1e-6)


def test_the_summed_energy_equals_the_sum_of_the_per_element_energies():
    """A plate of N observations whose free energy reads the registered sum of its energies (the plate not
    collapsed: one message per element) against the same model with one node per observation, whose
    energies are one number each."""
    model, init = normal_gamma(n=40)
    y = model.data["y"]
    with fg.Model() as unrolled:
        mu = Normal("mu", mean=0.0, var=10.0)
        tau = GammaVariable("tau", shape=2.0, rate=1.0)
        for i, value in enumerate(y):
            Normal(f"y{i}", mean=mu, precision=tau, observed=float(value))
    plate = fg.run(fg.compile(model, algorithm="vmp", init=init, collapse_plates=False), iterations=12,
                   free_energy=True)
    per_element = fg.infer(unrolled, algorithm="vmp", init=init, iterations=12, free_energy=True)
    np.testing.assert_allclose(plate.free_energy, per_element.free_energy, rtol=1e-12)
    assert float(plate.marginal("mu").mean) == pytest.approx(float(per_element.marginal("mu").mean), rel=1e-12)


def test_an_energy_total_is_registered_for_its_energy():
    """The normal's plate sum is found through the registry (fg.energy_total), as any node's would be; the
    prior's energy has none."""
    from fgraph import registry

    model, init = normal_gamma(n=40)
    plan = fg.compile(model, algorithm="vmp", init=init, collapse_plates=False)
    total = registry.total_of(plan.nodes["y"].energy.function)
    assert total is not None and total.per_copy is False
    assert registry.total_of(plan.nodes["mu"].energy.function) is None


# ------------------------------------------------------------ plate sums
class PlateEmitter(FactorNode):
    """A plate of 500 factors whose messages to ``out`` are the means of ``PLATE_MEANS`` (unit variance)."""

    interfaces = ("out",)
    event_ndims = {"out": 0}


PLATE_MEANS = {"values": np.ones(500)}


@fg.rule(PlateEmitter, "out")
def _plate_emitter_out() -> UnivariateNormal:
    return NormalMeanVariance(PLATE_MEANS["values"], np.ones(500), check=False)


def _plate_of_emitted_messages(means):
    PLATE_MEANS["values"] = means
    with fg.Model() as model:
        x = fg.random_variable(PlateEmitter, "x", {}, batch_shape=(500,))
        Normal("y", mean=x, var=1.0, observed=np.zeros(500))
    return model


def test_a_plate_message_with_a_nan_is_still_refused():
    """A plate's message is checked through the sums of its natural parameters; a NaN in one element of 500
    makes them NaN and the run names the node; finite elements whose sums overflow are looked at one by one,
    and pass."""
    means = np.ones(500)
    means[123] = np.nan
    with pytest.raises(NumericalError, match=r"node 'x' \(PlateEmitter\), interface 'out'.*NaN or infinite parameters"):
        fg.infer(_plate_of_emitted_messages(means))
    with np.errstate(over="ignore"):
        result = fg.infer(_plate_of_emitted_messages(np.full(500, 1e306)))
        assert np.all(result.marginal("x").mean == 0.5e306)


def test_the_reduction_reads_the_sums_a_message_carries():
    y, w = np.array([0.5, 1.5, -2.0, 4.0]), 2.5
    plain = NormalMeanVariance(y, np.full(4, 1 / w))
    told = NormalMeanVariance(y, np.full(4, 1 / w)).with_natural_parameter_totals((w * y.sum(), -0.5 * w * 4))
    prior = NormalMeanVariance(0.0, 10.0)

    def belief(message):
        node = EqualityNode([(), (4,)], (), scaled=False)
        node.set_messages([prior, message])
        return node.total()

    a, b = belief(plain), belief(told)
    assert float(a.precision) == pytest.approx(0.1 + 4 * w, rel=1e-15)
    assert float(a.mean) == pytest.approx(w * y.sum() / (0.1 + 4 * w), rel=1e-14)
    assert float(b.mean) == pytest.approx(float(a.mean), rel=1e-14)
    # the sums are what it reads: a message told other sums gives another belief
    wrong = NormalMeanVariance(y, np.full(4, 1 / w)).with_natural_parameter_totals((0.0, -0.5 * w * 4))
    assert float(belief(wrong).mean) == 0.0


def test_a_gamma_plate_on_demand_forms_its_elements_once_and_checks_their_shape():
    calls = []

    def elements():
        calls.append(1)
        return np.array([-1.0, -2.0, -3.0])

    message = GammaNaturalOnDemand(0.5, elements, (3,), (1.5, -6.0))
    assert message.natural_parameter_totals() == (1.5, -6.0) and not calls
    np.testing.assert_array_equal(message.rate, [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(message.shape, [1.5, 1.5, 1.5])
    np.testing.assert_allclose(message.entropy(), Gamma(1.5, np.array([1.0, 2.0, 3.0])).entropy(), rtol=1e-15)
    assert len(calls) == 1
    bad = GammaNaturalOnDemand(0.5, lambda: np.zeros(2), (3,), (1.5, 0.0))
    with pytest.raises(ValueError, match="shape"):
        bad.natural_parameters()


def test_batch_total_of_a_broadcast_value_is_its_length_times_the_value():
    from fgraph.families.base import batch_total

    assert batch_total(np.broadcast_to(2.5, (1000,))) == 2500.0
    assert batch_total(np.arange(6.0).reshape(3, 2), event_ndim=1).tolist() == [6.0, 9.0]
    assert batch_total(np.float64(3.0)) == 3.0
    assert math.isnan(batch_total(np.array([1.0, np.nan])))
