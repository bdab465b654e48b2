"""Generated sweeps equal interpreted ones, to the bit.

Every model below (BP on trees, loopy BP with damping, mean-field and structured VMP, mixtures, plates
collapsed or not, models with copies and per-copy powers, compound chains, a given schedule, point-mass
form constraints) is run with
its sweeps generated from the first (:mod:`fgraph.codegen`) and interpreted (``Engine.update`` for every
step, the reference); every message, marginal, free energy and evidence must be the same numbers. The
library's tests also run in CI with every sweep run both ways and compared (``FGRAPH_SWEEPS=compared``, see
``.ci/run``).
"""
from __future__ import annotations

import sys

import numpy as np
import pytest

import fgraph as fg
import fgraph.codegen as codegen
from fgraph.models.mixtures.gmm import gmm_schedule
from fgraph.nodes import Categorical, MvNormal, Normal, Transition
from fgraph.nodes.dot import Dot
import tests.engine.test_on_demand as on_demand
from tests.engine.test_on_demand import MODELS as EXACT_MODELS
from tests.graphs import loopy_gaussian_model, normal_gamma

RNG = np.random.default_rng(11)
Y = RNG.normal(1.0, 0.7, size=30)


def gaussian_mixture():
    """The Bayesian GMM of fgraph.models (two copies, fractional power 0.7, its own schedule)."""
    from fgraph.models.mixtures.gmm import build_gmm

    x = np.concatenate([RNG.normal(-2.0, 0.5, size=(15, 2)), RNG.normal(2.0, 0.5, size=(15, 2))])
    return build_gmm(x, 2, n_copies=2, power=0.7).model


def regression_with_copies():
    X = RNG.normal(size=(20, 3))
    with fg.Model(copies=2) as model:
        w = MvNormal("w", mean=np.zeros(3), cov=np.eye(3))
        Normal("y", mean=Dot("f", X, w), var=fg.per_copy([0.3, 1.5]), observed=X @ np.ones(3))
    return model


def hidden_markov():
    with fg.Model() as model:
        s = Categorical("s0", p=np.array([0.5, 0.5]))
        for t in range(1, 5):
            s = Transition(f"s{t}", s, np.array([[0.9, 0.2], [0.1, 0.8]]))
            Transition(f"o{t}", s, np.array([[0.7, 0.1], [0.3, 0.9]]), observed=np.eye(2)[t % 2])
    return model


CASES = {name: (build, {}) for name, build in EXACT_MODELS.items()}
CASES.update({
    "hidden Markov": (hidden_markov, {}),
    "loopy BP, damped": (loopy_gaussian_model, {"iterations": 15, "damping": 0.3,
                                                "init": {"x": fg.NormalMeanVariance(0.0, 1.0)}}),
    "VMP normal-gamma": (lambda: normal_gamma(Y), {"algorithm": "vmp", "init": {"tau": fg.Gamma(2.0, 1.0)},
                                                   "iterations": 8}),
    "VMP, plate not collapsed": (lambda: normal_gamma(Y), {"algorithm": "vmp", "init": {"tau": fg.Gamma(2.0, 1.0)},
                                                          "iterations": 8, "collapse_plates": False}),
    "Gaussian mixture": (gaussian_mixture, {"algorithm": "vmp", "iterations": 6, "schedule": gmm_schedule(),
                                            "init": {"z": fg.Categorical(np.where(np.arange(30)[:, None] < 15,
                                                                                  [0.9, 0.1], [0.1, 0.9]))}}),
    "structured": (lambda: normal_gamma(Y), {"algorithm": "vmp", "init": {"tau": fg.Gamma(2.0, 1.0)},
                                             "constraints": {"factorization": {"y": [("out", "mean"), ("precision",)]}},
                                             "iterations": 6}),
    "point mass": (lambda: normal_gamma(Y), {"algorithm": "vmp", "init": {"tau": fg.Gamma(2.0, 1.0)},
                                             "constraints": {"form": {"tau": "point_mass"}}, "iterations": 6}),
    "copies": (regression_with_copies, {}),
})


def everything(build, options: dict, interpreted: bool, monkeypatch) -> dict:
    """Every number a run gives: messages on every interface, marginals, free energies, evidence."""
    monkeypatch.setattr(codegen, "MODE", "interpreted" if interpreted else "generated")
    for module in (on_demand, sys.modules[__name__]):  # the builders draw their data: the same draws both times
        monkeypatch.setattr(module, "RNG", np.random.default_rng(11))
    options = dict(options)
    compile_options = {key: options.pop(key) for key in ("algorithm", "init", "constraints", "collapse_plates",
                                                          "schedule") if key in options}
    plan = fg.compile(build(), **compile_options)
    free_energy = not plan.exact or None
    result = fg.run(plan, free_energy=free_energy, **options)
    numbers = {"free energy": [np.asarray(f).tolist() for f in result.free_energy]}
    for name, q in result.marginals.items():
        numbers[name] = _parameters(q)
    if plan.exact:
        numbers["log evidence"] = np.asarray(result.log_evidence).tolist()
    for node, sockets in plan.graph.node_sockets.items():
        for interface, socket in sockets.items():
            if not socket.clamped:
                numbers[f"{node}.{interface}"] = _parameters(result.messages(node, interface)[0])
    return numbers


def _parameters(distribution) -> list:
    return codegen.message_numbers(distribution)


@pytest.mark.parametrize("case", CASES)
def test_generated_sweeps_equal_interpreted_ones(case, monkeypatch):
    build, options = CASES[case]
    generated = everything(build, options, False, monkeypatch)
    interpreted = everything(build, options, True, monkeypatch)
    assert generated == interpreted


def test_the_generated_source_reads_as_the_schedule():
    plan = fg.compile(normal_gamma(Y), algorithm="vmp", init={"tau": fg.Gamma(2.0, 1.0)})
    source = plan.source()
    assert source.startswith("def sweep(engine, damping):")
    for k, step in enumerate(plan.sweep):
        assert f"# {k + 1}. {step.describe()}" in source


def test_a_plan_turns_hot_within_a_run_without_changing_its_numbers(monkeypatch):
    """By default a plan's sweep is generated once the plan is hot (``codegen.HOT_SWEEPS`` sweeps): a run that
    crosses that line gives the interpreted run's numbers."""
    options = {"algorithm": "vmp", "init": {"tau": fg.Gamma(2.0, 1.0)}, "iterations": codegen.HOT_SWEEPS + 20,
               "free_energy": True}
    monkeypatch.setattr(codegen, "MODE", "auto")
    hot = fg.infer(normal_gamma(Y), **options)
    monkeypatch.setattr(codegen, "MODE", "interpreted")
    interpreted = fg.infer(normal_gamma(Y), **options)
    assert hot.free_energy == interpreted.free_energy
    assert hot.marginal("mu").mean == interpreted.marginal("mu").mean


def test_the_compared_mode_refuses_a_generated_sweep_that_differs(monkeypatch):
    """``FGRAPH_SWEEPS=compared`` runs each sweep generated and interpreted; a generated message off by one
    ulp, or a generated sweep that fails where the interpreted one does not, is reported with its step."""
    honest = codegen.sweep_function

    def off_by_one_ulp(plan, steady):
        kernel = honest(plan, steady)

        def sweep(engine, damping):
            kernel(engine, damping)
            socket = plan.sweep[-1].socket
            message = engine.state.outbound[socket.index]
            engine.state.outbound[socket.index] = message.with_log_scale(np.nextafter(message.log_scale, np.inf))
        return sweep

    monkeypatch.setattr(codegen, "MODE", "compared")
    options = {"algorithm": "vmp", "init": {"tau": fg.Gamma(2.0, 1.0)}, "iterations": 3}
    assert fg.infer(normal_gamma(Y), **options).iterations == 3
    monkeypatch.setattr(codegen, "sweep_function", off_by_one_ulp)
    with pytest.raises(codegen.GeneratedSweepMismatch, match="y .*precision"):
        fg.infer(normal_gamma(Y), **options)

    def failing(plan, steady):
        def sweep(engine, damping):
            raise ValueError("a rule failed")
        return sweep

    monkeypatch.setattr(codegen, "sweep_function", failing)
    with pytest.raises(codegen.GeneratedSweepMismatch, match="raised ValueError"):
        fg.infer(normal_gamma(Y), **options)


def test_an_unknown_sweep_mode_is_named_with_the_modes_there_are():
    """``FGRAPH_SWEEPS`` is read when fgraph is imported: a misspelt mode is an error naming the variable
    and every mode, not a silent default."""
    import os
    import subprocess

    environment = dict(os.environ, FGRAPH_SWEEPS="compare")
    completed = subprocess.run([sys.executable, "-c", "import fgraph"], capture_output=True, text=True,
                               env=environment)
    assert completed.returncode != 0
    assert "FGRAPH_SWEEPS must be 'auto', 'generated', 'interpreted' or 'compared', got 'compare'" in completed.stderr
