"""Runs on floats (:mod:`fgraph.floats`) equal runs on objects, and keep what a run promises.

Every model below is run as a user runs it (its sweeps after the first on floats) and with every sweep
on objects (``FGRAPH_SWEEPS=interpreted``): free energies, iterations and marginals must agree to
round-off. Then what a run promises beside its numbers: the tolerance, the free energy of the last
sweep only, an interruption, a failure named on objects, and the compared mode catching a twin that
differs from its rule.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import digamma as scipy_digamma

import fgraph as fg
import fgraph.codegen as codegen
import fgraph.float_source as float_source
import fgraph.float_twins as float_twins
import fgraph.floats as floats
import fgraph.float_math as float_math
from fgraph import jit
from fgraph.nodes import Gamma, Normal
from tests.graphs import normal_gamma

RNG = np.random.default_rng(5)
Y = RNG.normal(1.5, 0.6, size=200)
Z = RNG.normal(-0.5, 0.6, size=120)


def two_groups_one_precision():
    with fg.Model() as model:
        tau = Gamma("tau", shape=1.0, rate=1.0)
        first = Normal("m1", mean=0.0, var=4.0)
        second = Normal("m2", mean=0.0, var=4.0)
        Normal("y1", mean=first, precision=tau, observed=Y)
        Normal("y2", mean=second, precision=tau, observed=Z)
    return model


def scalar_chain():
    with fg.Model() as model:
        x = Normal("x1", mean=0.0, var=1.0)
        for t in range(2, 6):
            x = Normal(f"x{t}", mean=x, var=0.5)
            Normal(f"y{t}", mean=x, var=0.3, observed=float(Y[t]))
    return model


def hierarchical_precision():
    """A precision whose rate has a gamma prior of its own (every message still one normal or gamma)."""
    with fg.Model() as model:
        mu = Normal("mu", mean=0.0, var=10.0)
        rate = Gamma("b", shape=1.0, rate=1.0)
        tau = Gamma("tau", shape=2.0, rate=rate)
        Normal("y", mean=mu, precision=tau, observed=Y)
    return model


MODELS = {"normal-gamma": (lambda: normal_gamma(Y), {"tau": fg.Gamma(2.0, 0.5)}),
          "two groups, one precision": (two_groups_one_precision, {"tau": fg.Gamma(1.0, 1.0),
                                                                   "m1": fg.NormalMeanVariance(0.0, 4.0),
                                                                   "m2": fg.NormalMeanVariance(0.0, 4.0)}),
          "hierarchical precision": (hierarchical_precision, {"tau": fg.Gamma(2.0, 1.0), "b": fg.Gamma(1.0, 1.0)}),
          "scalar chain, mean field": (scalar_chain, {f"x{t}": fg.NormalMeanVariance(0.0, 1.0) for t in range(1, 6)})}


def _runs(monkeypatch, build, init, **options):
    """The run as a user makes it (whether its sweeps went on floats), and the same run on objects."""
    made = []
    original = floats.float_run

    def spy(engine):
        runner = original(engine)
        made.append(runner is not None)
        return runner

    monkeypatch.setattr(floats, "float_run", spy)
    monkeypatch.setattr(codegen, "MODE", "auto")
    on_floats = fg.infer(build(), algorithm="vmp", init=init, **options)
    monkeypatch.setattr(codegen, "MODE", "interpreted")
    on_objects = fg.infer(build(), algorithm="vmp", init=init, **options)
    return on_floats, on_objects, made


@pytest.mark.parametrize("name", MODELS)
def test_a_run_on_floats_equals_the_run_on_objects(name, monkeypatch):
    build, init = MODELS[name]
    on_floats, on_objects, made = _runs(monkeypatch, build, init, iterations=30)
    assert made == [True]
    assert on_floats.iterations == on_objects.iterations == 30
    np.testing.assert_allclose(on_floats.free_energy, on_objects.free_energy, rtol=1e-12)
    for variable, q in on_objects.marginals.items():
        other = on_floats.marginal(variable)
        assert type(other).__name__ == type(q).__name__ or {type(other).__name__, type(q).__name__} <= {
            "NormalMeanVariance", "NormalWeightedMeanPrecision", "NormalMeanPrecision"}
        np.testing.assert_allclose([other.mean, other.var], [q.mean, q.var], rtol=1e-12)


def test_the_tolerance_and_the_last_free_energy_as_on_objects(monkeypatch):
    """A run judged by ``tol`` stops after the same sweep; ``free_energy="last"`` gives the every-sweep run's
    last value (the same code computes both)."""
    build, init = MODELS["two groups, one precision"]
    on_floats, on_objects, made = _runs(monkeypatch, build, init, iterations=200, tol=1e-10)
    assert made == [True] and on_floats.converged and on_objects.converged
    assert on_floats.iterations == on_objects.iterations < 200
    monkeypatch.setattr(codegen, "MODE", "auto")
    every = fg.infer(build(), algorithm="vmp", init=init, iterations=9)
    last = fg.infer(build(), algorithm="vmp", init=init, iterations=9, free_energy="last")
    assert len(last.free_energy) == 1 and last.free_energy[0] == every.free_energy[-1]


def test_an_interrupted_run_on_floats_keeps_its_complete_sweeps(monkeypatch):
    """Ctrl-C during a run on floats: the result is the state after the last complete sweep (its messages
    written back as objects, its free-energy trace), the run of that many sweeps."""
    calls = {"count": 0}
    original = float_source.digamma

    def interrupting(x):
        calls["count"] += 1
        if calls["count"] == 40:
            raise KeyboardInterrupt
        return original(x)

    monkeypatch.setattr(float_source, "digamma", interrupting)  # read when the run's code is made
    monkeypatch.setattr(codegen, "MODE", "auto")
    build, init = MODELS["normal-gamma"]
    with jit.compiled_loops(False):  # the run in Python (test_float_kernels interrupts the compiled one)
        result = fg.infer(build(), algorithm="vmp", init=init, iterations=50)
    assert result.interrupted and 1 < result.iterations < 50
    assert len(result.free_energy) == result.iterations
    monkeypatch.setattr(codegen, "MODE", "interpreted")
    reference = fg.infer(build(), algorithm="vmp", init=init, iterations=result.iterations)
    np.testing.assert_allclose(result.free_energy, reference.free_energy, rtol=1e-12)
    np.testing.assert_allclose(result.marginal("mu").mean, reference.marginal("mu").mean, rtol=1e-12)


def test_a_twin_that_differs_from_its_rule_is_caught_in_the_compared_mode(monkeypatch):
    from fgraph.rules.normal_mean_precision.precision import mean_field

    build, init = MODELS["normal-gamma"]
    monkeypatch.setattr(codegen, "MODE", "compared")
    fg.infer(build(), algorithm="vmp", init=init, iterations=5)  # the honest twins agree
    honest = float_twins.FLOAT_RULES[mean_field]
    off = float_twins.FloatTwin(lambda *e: (lambda a, b, s: (a, b * (1 + 1e-6), s))(*honest.function(*e)),
                           honest.reads, honest.output)
    monkeypatch.setitem(float_twins.FLOAT_RULES, mean_field, off)
    with jit.compiled_loops(False), pytest.raises(codegen.GeneratedSweepMismatch, match="run on floats"):
        fg.infer(build(), algorithm="vmp", init=init, iterations=5)  # (a lambda twin: no compiled form)


def test_no_run_on_floats_where_a_run_needs_objects(monkeypatch):
    """Damping, a callback or a progress bar keep a run on objects; so does a message without a float form."""
    build, init = MODELS["normal-gamma"]
    calls = []
    monkeypatch.setattr(floats, "float_run", lambda engine: calls.append(engine) or None)
    monkeypatch.setattr(codegen, "MODE", "auto")
    fg.infer(build(), algorithm="vmp", init=init, iterations=4, damping=0.2)
    fg.infer(build(), algorithm="vmp", init=init, iterations=4, callback=lambda iteration, result: None)
    assert calls == []
    fg.infer(build(), algorithm="vmp", init=init, iterations=4)
    assert len(calls) == 1


def test_a_sweep_too_long_for_generated_code_stays_on_objects(monkeypatch):
    build, init = MODELS["scalar chain, mean field"]
    on_floats, _, made = _runs(monkeypatch, build, init, iterations=5)
    assert made == [True]
    monkeypatch.setattr(codegen, "MAX_GENERATED_STEPS", 3)
    on_objects, reference, made = _runs(monkeypatch, build, init, iterations=5)
    assert made == [False]
    assert on_objects.free_energy == reference.free_energy  # the same path: the same numbers


@pytest.mark.parametrize("x", [1e-3, 0.05, 0.5, 1.0, 1.5, 2.0, 5.9, 6.0, 7.5, 30.0, 1e3, 1e6])
def test_digamma_on_floats(x):
    assert float_math.digamma(x) == pytest.approx(float(scipy_digamma(x)), rel=4e-15, abs=4e-15)
    assert math.isfinite(float_math.digamma(x))


def test_a_nan_on_floats_is_named_by_the_same_sweep_on_objects(monkeypatch):
    """A float twin that gives NaN stops the run at the sweep before; that sweep is made again on objects,
    and a NaN there too would name the node, else the run says that floats and objects disagreed."""
    from fgraph.rules.normal_mean_precision.precision import mean_field

    honest = float_twins.FLOAT_RULES[mean_field]
    monkeypatch.setitem(float_twins.FLOAT_RULES, mean_field,
                        float_twins.FloatTwin(lambda *e: (math.nan, 1.0, 0.0), honest.reads, honest.output))
    monkeypatch.setattr(codegen, "MODE", "auto")
    build, init = MODELS["normal-gamma"]
    with pytest.raises(fg.NumericalError, match="floats"):
        fg.infer(build(), algorithm="vmp", init=init, iterations=5)
