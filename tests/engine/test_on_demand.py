"""A run computes what is read and what that needs: on a tree, the sweep goes towards the evidence readers
and every other message is computed when a reading asks for it.

The held-equal test: every exact model below is run twice, once as compiled (the sweep towards the
readers, the rest on demand) and once with its whole schedule given as the order (a given order runs
every step, as written); every marginal, the evidence at every variable, the log evidence, the free
energy and the messages on every interface must agree to round-off.
"""
from __future__ import annotations

import numpy as np
import pytest

import fgraph as fg
from fgraph.families import NormalMeanVariance, PointMass, UnivariateNormal
from fgraph.node import FactorNode
from fgraph.nodes import (Categorical, Dot, GaussMarkovChain, Linear, MarkovChain, Mixture, MvNormal, Normal,
                          Transition)
from fgraph.registry import rule
from tests.graphs import unrolled_gauss_markov_chain

RNG = np.random.default_rng(7)
X = RNG.normal(size=(30, 3))
Y = X @ np.array([0.5, -1.0, 2.0]) + RNG.normal(0.0, 0.3, 30)
TRANSITION = np.array([[0.8, 0.3], [0.2, 0.7]])
EMISSION = np.array([[0.9, 0.2], [0.1, 0.8]])


def regression():
    with fg.Model() as model:
        w = MvNormal("w", mean=np.zeros(3), cov=np.eye(3) * 2.0)
        f = Dot("f", X, w)
        Normal("y", mean=f, var=0.09, observed=Y)
    return model


def chain():
    return unrolled_gauss_markov_chain(RNG.normal(size=8), 0.9, 0.3, 0.0, 1.0, 0.5)


def branching_tree():
    """A root with two children, each with a child of its own and observations: no chain, a tree."""
    with fg.Model() as model:
        root = Normal("root", mean=0.0, var=4.0)
        for side, gain in (("a", 0.5), ("b", -1.5)):
            child = Linear(f"{side}1", root, gain, 0.4)
            grandchild = Normal(f"{side}2", mean=child, var=0.7)
            Normal(f"y_{side}", mean=grandchild, var=0.2, observed=RNG.normal(size=4))
    return model


def hidden_markov_unrolled():
    with fg.Model() as model:
        state = Categorical("s0", p=np.array([0.6, 0.4]))
        Transition("o0", state, EMISSION, observed=np.array([1.0, 0.0]))
        for t in range(1, 6):
            state = Transition(f"s{t}", state, TRANSITION)
            Transition(f"o{t}", state, EMISSION, observed=np.eye(2)[t % 2])
    return model


def compound_chains():
    with fg.Model() as model:
        z = MarkovChain("z", np.array([0.7, 0.3]), TRANSITION, 6)
        Transition("o", z, EMISSION, observed=np.eye(2)[[0, 1, 1, 0, 0, 1]])
        x = GaussMarkovChain("x", 0.8, var=0.3, initial_mean=1.0, initial_var=2.0, length=6)
        Normal("v", mean=x, var=0.5, observed=RNG.normal(size=6))
    return model


def model_averaging():
    with fg.Model() as model:
        inputs = [Normal(f"x{k}", mean=m, var=v) for k, (m, v) in enumerate([(-1.0, 1.0), (0.5, 0.5), (2.0, 4.0)])]
        switch = Categorical("z", p=np.array([0.5, 0.3, 0.2]))
        x = Mixture("x", switch, inputs)
        Normal("y", mean=x, var=4.0, observed=RNG.normal(1.0, 0.5, 20))
    return model


def with_copies():
    with fg.Model(copies=3) as model:
        w = MvNormal("w", mean=np.zeros(3), cov=np.eye(3))
        f = Dot("f", X, w)
        Normal("y", mean=f, var=fg.per_copy([0.1, 0.5, 2.0]), observed=Y)
    return model


MODELS = {"regression": regression, "chain": chain, "branching tree": branching_tree,
          "hidden Markov, unrolled": hidden_markov_unrolled, "compound chains": compound_chains,
          "model averaging": model_averaging, "copies": with_copies}


def numbers(distribution) -> list:
    """The parameters of a marginal or message as arrays (mixtures: weights and components)."""
    if hasattr(distribution, "components"):
        return [np.asarray(distribution.weights)] + [a for c in distribution.components for a in numbers(c)]
    if hasattr(distribution, "natural_parameters"):
        return [np.asarray(p) for p in distribution.natural_parameters()] + [np.asarray(distribution.log_scale)]
    return [np.asarray(distribution.value)]


def assert_same(first, second):
    for a, b in zip(numbers(first), numbers(second), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-11, atol=1e-12)


@pytest.mark.parametrize("build", MODELS.values(), ids=MODELS.keys())
def test_what_is_computed_when_read_equals_the_whole_schedule(build):
    model = build()
    plan = fg.compile(model)
    assert plan.exact
    whole = fg.run(fg.compile(model, schedule=plan.schedule.pairs()))
    assert len(whole.plan.sweep) == len(plan.schedule) >= len(plan.sweep)
    # one reading at a time, each completing what it needs
    lazy = fg.run(plan)
    np.testing.assert_allclose(lazy.log_evidence, whole.log_evidence, rtol=1e-12)
    for name in sorted(whole.marginals):
        assert_same(lazy.marginal(name), whole.marginal(name))
    for name, evidence in whole.evidence_per_variable().items():
        np.testing.assert_allclose(fg.run(plan).evidence_per_variable()[name], evidence, rtol=1e-11, atol=1e-12)
    for node, sockets in plan.graph.node_sockets.items():
        for interface, socket in sockets.items():
            if not socket.clamped:
                fresh = fg.run(plan)  # a message read first, before any marginal
                for ours, theirs in zip(fresh.messages(node, interface), whole.messages(node, interface)):
                    assert_same(ours, theirs)
    np.testing.assert_allclose(fg.run(plan, free_energy=True).free_energy[-1],
                               fg.run(whole.plan, free_energy=True).free_energy[-1], rtol=1e-11)


def test_a_regression_sweeps_towards_its_weights_and_reads_its_predictions_on_demand():
    """w ~ N(0, 2I), f_n = x_nᵀw, y_n ~ N(f_n, 0.09): the N predictions are left out of the sweep and,
    when read, are the closed form N(x_nᵀμ, x_nᵀΣx_n); w and the evidence are the closed form too."""
    result = fg.infer(regression())
    assert len(result.plan.sweep) == 3 and "1 more when read" in result.summary()
    precision = np.eye(3) / 2.0 + X.T @ X / 0.09
    cov = np.linalg.inv(precision)
    mean = cov @ (X.T @ Y / 0.09)
    np.testing.assert_allclose(result.marginal("w").mean, mean, rtol=1e-10)
    np.testing.assert_allclose(result.marginal("w").cov, cov, rtol=1e-10)
    q_f = result.marginal("f")
    np.testing.assert_allclose(q_f.mean, X @ mean, rtol=1e-10)
    np.testing.assert_allclose(q_f.var, np.einsum("nd,de,ne->n", X, cov, X), rtol=1e-10)
    marginal_cov = 2.0 * X @ X.T + 0.09 * np.eye(len(Y))
    sign, log_det = np.linalg.slogdet(marginal_cov)
    exact = -0.5 * (len(Y) * np.log(2 * np.pi) + log_det + Y @ np.linalg.solve(marginal_cov, Y))
    np.testing.assert_allclose(result.log_evidence, exact, rtol=1e-12)


class Tripwire(FactorNode):
    """out ~ N(in, 1) for a data ``in``; its message stops the run while ``TRIPPED`` holds True."""

    interfaces = ("out", "in")
    event_ndims = {"out": 0, "in": 0}


TRIPPED = [False]


@rule(Tripwire, "out")
def _tripwire_out(q_in: PointMass) -> UnivariateNormal:
    if TRIPPED[0]:
        raise KeyboardInterrupt
    return NormalMeanVariance(q_in.value, 1.0)


def test_a_run_interrupted_after_a_reading_computes_again_from_the_state_it_kept():
    """A callback reads every marginal after the first sweep (computing the on-demand messages), then the
    second sweep is interrupted: the run returns to the state after the first sweep, which holds none of
    them, and a reading computes them again from it."""
    with fg.Model() as model:
        root = fg.random_variable(Tripwire, "root", {"in": fg.Data("centre", 0.5)})
        leaf = Linear("leaf", root, 2.0, 0.3)
        Normal("y", mean=leaf, var=0.2, observed=np.array([1.0, 1.4]))

    def read_then_trip(iteration, result):
        result.marginals
        TRIPPED[0] = True

    try:
        result = fg.infer(model, iterations=3, callback=read_then_trip)
    finally:
        TRIPPED[0] = False
    assert result.interrupted and result.iterations == 1
    reference = fg.infer(model)
    assert reference.plan.on_demand
    for name in ("root", "leaf"):
        assert_same(result.marginal(name), reference.marginal(name))
