"""Initial values a node type declares (``FactorNode.default_initial``) for variables the schedule needs first.

The model of unknown mean and precision under VMP updates ``mu`` from q(τ)
before anything has computed q(τ), so it asks for ``init={"tau": ...}``.
Declaring a default on the node that reads τ (``NormalMeanPrecision``'s
``precision`` interface) makes the run the same as the one given that init;
a user's init still wins, a wrong default is named, and a remembered plan
keeps its defaults whatever init a later call passes.
"""
import numpy as np
import pytest

import fgraph as fg
from fgraph.errors import ModelError, ScheduleError
from fgraph.nodes import Gamma, Normal
from fgraph.nodes.normal import NormalMeanPrecision

DATA = np.random.default_rng(7).normal(1.0, 0.5, size=25)
START = fg.Gamma(2.0, 0.5)


def normal_gamma():
    with fg.Model() as model:
        mu = Normal("mu", mean=0.0, var=10.0)
        tau = Gamma("tau", shape=2.0, rate=1.0)
        Normal("y", mean=mu, precision=tau, observed=DATA)
    return model


def summary(result):
    mu, tau = result.marginal("mu"), result.marginal("tau")
    return [float(mu.mean), float(mu.var), float(tau.shape), float(tau.rate)] + list(result.free_energy)


def test_without_a_declared_value_the_schedule_asks_for_one():
    with pytest.raises(ScheduleError, match=r"init=\{'tau'"):
        fg.infer(normal_gamma(), algorithm="vmp", iterations=3)


@pytest.mark.parametrize("declared", [START, lambda variable: START], ids=["value", "callable"])
def test_a_declared_initial_value_stands_in_for_the_users(monkeypatch, declared):
    model = normal_gamma()
    given = summary(fg.infer(model, algorithm="vmp", iterations=5, init={"tau": START}))
    monkeypatch.setattr(NormalMeanPrecision, "default_initial", {"precision": declared})
    assert summary(fg.infer(normal_gamma(), algorithm="vmp", iterations=5)) == given


def test_the_callable_receives_the_variable(monkeypatch):
    seen = []

    def declared(variable):
        seen.append((variable.name, variable.batch_shape, variable.event_shape))
        return START

    monkeypatch.setattr(NormalMeanPrecision, "default_initial", {"precision": declared})
    fg.infer(normal_gamma(), algorithm="vmp", iterations=2)
    assert seen and set(seen) == {("tau", (), ())}


def test_a_users_initial_value_wins(monkeypatch):
    other = fg.Gamma(9.0, 0.5)
    expected = summary(fg.infer(normal_gamma(), algorithm="vmp", iterations=1, init={"tau": other}))
    monkeypatch.setattr(NormalMeanPrecision, "default_initial", {"precision": START})
    model = normal_gamma()
    assert summary(fg.infer(model, algorithm="vmp", iterations=1, init={"tau": other})) == expected
    # one sweep depends on the start: the declared value gives another answer, so the check can fail
    assert summary(fg.infer(model, algorithm="vmp", iterations=1)) != expected


def test_a_remembered_plan_keeps_its_declared_values_whatever_init_comes_next(monkeypatch):
    monkeypatch.setattr(NormalMeanPrecision, "default_initial", {"precision": START})
    model = normal_gamma()
    plan = fg.compile(model, algorithm="vmp")
    assert fg.compile(model, algorithm="vmp") is plan  # the same (empty) user init: the same plan
    assert plan.init.get("tau") is START and "tau" not in plan.init and len(plan.init) == 0
    # another init of the same families is swapped into the remembered plan (a copy): the defaults stay behind it
    init = {"mu": fg.NormalMeanVariance(0.0, 1.0)}
    with_mu = fg.compile(model, algorithm="vmp", init=init)
    swapped = fg.compile(model, algorithm="vmp", init={"mu": fg.NormalMeanVariance(0.5, 2.0)})
    assert swapped is not with_mu and swapped.init["mu"] is not with_mu.init["mu"]
    assert swapped.init.get("tau") is START and dict(swapped.init).keys() == {"mu"}
    expected = summary(fg.run(fg.compile(normal_gamma(), algorithm="vmp", init={"mu": fg.NormalMeanVariance(0.5, 2.0)}),
                              iterations=3))
    assert summary(fg.run(swapped, iterations=3)) == expected


def test_a_declared_value_of_the_wrong_shape_is_named(monkeypatch):
    monkeypatch.setattr(NormalMeanPrecision, "default_initial", {"precision": fg.Gamma(np.ones(3), np.ones(3))})
    with pytest.raises(ModelError, match=r"node 'y' \(NormalMeanPrecision\) declares for its interface 'precision' "
                                         r"\(variable 'tau'\) has batch shape \(3,\)"):
        fg.infer(normal_gamma(), algorithm="vmp", iterations=1)


def test_a_declared_value_of_the_wrong_family_is_named(monkeypatch):
    monkeypatch.setattr(NormalMeanPrecision, "default_initial", {"precision": fg.NormalMeanVariance(1.0, 1.0)})
    with pytest.raises(ModelError, match="tau"):
        fg.infer(normal_gamma(), algorithm="vmp", iterations=1)
