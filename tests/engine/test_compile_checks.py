"""Models that cannot be solved as written are refused when they are built or compiled, naming the culprit.

Each case here used to compile (and often run) and then give a wrong answer or
fail deep inside numpy when a result was read: a variable tied to two
interfaces of one node, an initial value of the wrong family, a mixture with
more switch categories than inputs, a probability vector where a one-hot
state belongs, and messages of different families meeting at a variable.
"""
import numpy as np
import pytest

import fgraph as fg
from fgraph.graph import FactorGraph
from fgraph.nodes import (
    Addition, Categorical, Dirichlet, Gamma, MarkovChain, Mixture, MixtureNode, MvAddition, MvNormal, Normal,
    NormalMeanVariance, Product, Transition,
)

A = np.array([[0.9, 0.2], [0.1, 0.8]])  # column-stochastic: A[i, j] = P(out = i | in = j)


def tied_addition(vector: bool = False):
    """s = in1 + in2 with the same x on both inputs, placed directly (Add itself builds 2x instead)."""
    with fg.Model() as model:
        if vector:
            x = MvNormal("x", mean=np.zeros(2), cov=np.eye(2))
            s = model.add_variable("s", event_shape=(2,))
            model.add_node(MvAddition, "s", {"out": s, "in1": x, "in2": x})
            MvNormal("y", mean=s, cov=np.eye(2), observed=np.array([2.0, -1.0]))
        else:
            x = Normal("x", mean=0.0, var=1.0)
            s = model.add_variable("s", observed=True)
            model.add_node(Addition, "s", {"out": s, "in1": x, "in2": x})
            model.bind(s=2.0)
    return model


def tied_product():
    """s = x · x: a Product node with x on both factors."""
    with fg.Model() as model:
        x = Normal("x", mean=1.0, var=1.0)
        s = Product("s", x, x)
        Normal("y", mean=s, var=1.0, observed=2.0)
    return model


def tied_mixture():
    """y = Mixture(z, [x, x]): the same sub-model behind both inputs."""
    with fg.Model() as model:
        z = Categorical("z", p=np.array([0.3, 0.7]))
        x = Normal("x", mean=0.0, var=1.0)
        y = Mixture("y", z, [x, x])
        Normal("o", mean=y, var=1.0, observed=1.0)
    return model


# ---------------------------------------------------------------- a variable on two interfaces of one node


def test_a_variable_on_two_interfaces_of_one_node_is_a_loop_of_the_graph():
    graph = FactorGraph(tied_addition())
    [(node, slot, interfaces)] = graph.tied_interfaces()
    assert (node.name, slot.name, interfaces) == ("s", "x", ("in1", "in2"))
    assert not graph.is_tree()


@pytest.mark.parametrize("build, node, interfaces", [
    (tied_addition, "s", "'in1' and 'in2'"),
    (lambda: tied_addition(vector=True), "s", "'in1' and 'in2'"),
    (tied_product, "s", "'a' and 'b'"),
    (tied_mixture, "y", "'in1' and 'in2'"),
], ids=["addition", "vector-addition", "product", "mixture"])
@pytest.mark.parametrize("algorithm", ["bp", "vmp"])
def test_a_variable_on_two_interfaces_of_one_node_is_refused(build, node, interfaces, algorithm):
    """Its rules would treat the two ends as independent copies: with an initial message for x, BP converged
    to x ≈ N(1.33, 0.33) for x + x = 2 (truth: x = 1) and offered log evidence -3.72 as exact. The loop is
    refused whatever the initial values."""
    model = build()
    vector = model["x"].event_shape == (2,)
    init = {"x": fg.MvNormalMeanCovariance(np.zeros(2), np.eye(2)) if vector else fg.NormalMeanVariance(0.0, 1.0)}
    with pytest.raises(fg.ModelError, match=rf"variable 'x' is connected to interfaces {interfaces} of node '{node}'"):
        fg.compile(model, algorithm=algorithm, init=init)


def test_the_error_for_a_tied_sum_says_how_to_write_it():
    with pytest.raises(fg.ModelError, match=r"Multiply\(name, 2\.0, x\)"):
        fg.compile(tied_addition())


def test_observed_values_on_two_interfaces_are_no_loop():
    """Data on two interfaces is a point mass on each: x ~ N(d, d) with d = 2 observed."""
    with fg.Model() as model:
        d = fg.Data("d", 2.0)
        Normal("x", mean=d, var=d)
    assert FactorGraph(model).tied_interfaces() == []
    result = fg.infer(model)
    assert result.marginal("x").mean == pytest.approx(2.0, rel=1e-14)
    assert result.marginal("x").var == pytest.approx(2.0, rel=1e-14)


# ---------------------------------------------------------------- initial values of the wrong family


def normal_gamma():
    with fg.Model() as model:
        t = Gamma("t", shape=2.0, rate=1.0)
        mu = Normal("mu", mean=0.0, var=1.0)
        Normal("y", mean=mu, precision=t, observed=np.array([0.5, 1.0, 1.5]))
    return model


@pytest.mark.parametrize("wrong, given, expected", [
    ("t", "UnivariateNormal", "Gamma"),
    ("mu", "Gamma", "UnivariateNormal"),
])
def test_an_init_of_the_wrong_family_is_named(wrong, given, expected):
    """A Normal for a Gamma variable used to fail at run time with "'Gamma' object has no attribute
    'second_moment'" (or the reverse), never naming the init."""
    init = {"t": fg.Gamma(2.0, 1.0), "mu": fg.NormalMeanVariance(0.0, 1.0)}
    init[wrong] = fg.Gamma(1.0, 1.0) if expected == "UnivariateNormal" else fg.NormalMeanVariance(1.0, 1.0)
    with pytest.raises(fg.ModelError, match=rf"init\['{wrong}'\] is a {given}, but variable '{wrong}' is of the "
                                            rf"family {expected}"):
        fg.compile(normal_gamma(), algorithm="vmp", init=init)


def test_an_init_of_the_wrong_family_for_loopy_bp_is_named():
    """x ~ N(0, 1) between two factors to z: loopy BP needs initial messages, here a Gamma for x."""
    with fg.Model() as model:
        x = Normal("x", mean=0.0, var=1.0)
        z = Normal("z", mean=x, var=1.0)
        model.add_node(NormalMeanVariance, "second", {"out": z, "mean": x, "var": 2.0})
        Normal("y", mean=z, var=1.0, observed=1.0)
    init = {"x": fg.Gamma(1.0, 1.0), "z": fg.NormalMeanVariance(0.0, 1.0)}
    with pytest.raises(fg.ModelError, match=r"init\['x'\] is a Gamma, but variable 'x' is of the family "
                                            r"UnivariateNormal"):
        fg.compile(model, init=init)


def test_an_init_needed_before_any_message_names_itself_when_no_rule_fits():
    """The first update reads the init before any message of its variable is typed; no rule takes a Gamma
    mean, and the missing-rule error says where that family came from."""
    with fg.Model() as model:
        x = Normal("x", mean=0.0, var=1.0)
        z = Normal("z", mean=x, var=1.0)
        Normal("y", mean=z, var=1.0, observed=1.0)
    schedule = [("z", "out"), ("x", "out"), ("y", "mean"), ("z", "mean")]
    with pytest.raises(fg.RuleNotFoundError, match=r"(?s)node 'z'.*m_mean: Gamma.*init\['x'\] is a Gamma"):
        fg.compile(model, init={"x": fg.Gamma(1.0, 1.0)}, schedule=schedule)


def test_an_init_of_the_wrong_event_shape_is_named():
    with fg.Model() as model:
        mu = MvNormal("mu", mean=np.zeros(3), cov=np.eye(3))
        MvNormal("y", mean=mu, cov=np.eye(3), observed=np.ones(3))
    with pytest.raises(fg.ModelError, match=r"init\['mu'\] has event shape \(2,\), but 'mu' has event shape \(3,\)"):
        fg.compile(model, algorithm="vmp", init={"mu": fg.MvNormalMeanCovariance(np.zeros(2), np.eye(2))})


# ---------------------------------------------------------------- a mixture needs one input per switch category


def two_inputs():
    return [Normal("a", mean=0.0, var=1.0), Normal("b", mean=1.0, var=1.0)]


@pytest.mark.parametrize("switch", [
    lambda: Categorical("z", p=np.array([0.2, 0.3, 0.5])),
    lambda: Categorical("z", p=Dirichlet("p", alpha=np.ones(3))),
    lambda: MarkovChain("z", initial=np.ones(3) / 3, transition=np.eye(3), length=1),
    lambda: fg.Data("z", np.array([0.0, 0.0, 1.0]), event_ndim=1),
    lambda: np.array([0.0, 0.0, 1.0]),
], ids=["categorical", "dirichlet-categorical", "markov-chain", "data", "constant"])
def test_a_switch_with_more_categories_than_inputs_is_refused_when_built(switch):
    """K = 3 categories and 2 inputs used to crash in numpy inside rules/mixture (broadcast (3,) against (2,))."""
    with fg.Model():
        z = switch()
        with pytest.raises(fg.ModelError, match=r"Mixture 'y': the switch has K = 3 categories but the mixture "
                                                r"has 2 inputs"):
            Mixture("y", z, two_inputs(), observed=0.5)


def test_a_mixture_node_placed_directly_is_checked_at_compile_time():
    with fg.Model() as model:
        z = Categorical("z", p=np.array([0.2, 0.3, 0.5]))
        a, b = two_inputs()
        y = model.add_variable("y")
        model.add_node(MixtureNode, "y", {"out": y, "switch": z, "in1": a, "in2": b})
        Normal("o", mean=y, var=1.0, observed=0.5)
    with pytest.raises(fg.ModelError, match=r"node 'y' \(MixtureNode\): the switch has K = 3 categories but the "
                                            r"mixture has 2 inputs"):
        fg.compile(model)


# ---------------------------------------------------------------- a categorical value is one-hot


@pytest.mark.parametrize("switch, observed, shown", [
    (np.array([0.2, 0.8]), 0.5, r"\[0\.2, 0\.8\]"),
    (np.array([[1.0, 0.0], [0.5, 0.5]]), np.array([0.5, 0.5]), r"\[0\.5, 0\.5\] at index \(1,\)"),
], ids=["vector", "batch"])
def test_a_fixed_switch_must_be_one_hot(switch, observed, shown):
    """A probability vector as a fixed switch was read as mixing weights by sum-product rules and as a
    variational q(switch) by the free energy; known weights are a prior instead."""
    with fg.Model():
        with pytest.raises(fg.ModelError, match=rf"node 'y', parameter 'switch': a fixed switch must be one-hot.*"
                                                rf"{shown}.*Categorical\('z', p=\.\.\.\)"):
            Mixture("y", switch, two_inputs(), observed=observed)


def test_a_switch_bound_as_data_must_be_one_hot():
    with fg.Model() as model:
        z = fg.Data("z", np.array([0.0, 1.0]), event_ndim=1)
        Mixture("y", z, two_inputs(), observed=0.5)
    # the second input is selected: p(y = 0.5) = N(0.5 | 1, 1)
    assert fg.infer(model).log_evidence == pytest.approx(-0.5 * np.log(2.0 * np.pi) - 0.125, rel=1e-12)
    with pytest.raises(fg.DataError, match=r"data for 'z' \(interface 'switch' of node 'y'\).*one-hot.*"
                                           r"\[0\.3, 0\.7\]"):
        fg.infer(model, data={"z": np.array([0.3, 0.7])})


def test_a_point_mass_init_of_a_categorical_variable_must_be_one_hot():
    with fg.Model() as model:
        p = Dirichlet("p", alpha=np.ones(2))
        Categorical("c", p=p, observed=np.array([0, 1, 1]))
        s = Categorical("s", p=p)
        Transition("o", s, A, observed=np.array([1]))
    init = {"p": fg.Dirichlet(np.ones(2)), "s": fg.PointMass(np.array([0.4, 0.6]), 1)}
    with pytest.raises(fg.ModelError, match=r"init\['s'\] is a point mass at \[0\.4, 0\.6\], but 's' is "
                                            r"categorical"):
        fg.compile(model, algorithm="vmp", init=init)


def test_a_point_mass_message_on_a_categorical_variable_must_be_one_hot():
    """An observed mixture output sends a point mass into each sub-model; the Transition reads it as an
    observed state of its out, and a probability vector there is refused naming the node and variable."""
    with fg.Model() as model:
        z = Categorical("z", p=np.array([0.5, 0.5]))
        s = Categorical("s", p=np.array([0.6, 0.4]))
        a = Transition("a", s, A)
        b = Categorical("b", p=np.array([0.2, 0.8]))
        Mixture("y", z, [a, b], observed=np.array([0.0, 1.0]))
    # the Transition's message to its input, which reads the point mass, before the switch's
    schedule = [("s", "out"), ("z", "out"), ("b", "out"), ("a", "out"), ("y", "in1"), ("y", "in2"), ("a", "in"),
                ("y", "switch")]
    plan = fg.compile(model, schedule=schedule)
    # one-hot y = e_2: the switch weighs p(y | a) = (A [0.6, 0.4])_2 = 0.38 against p(y | b) = 0.8
    switch = fg.run(plan).marginal("z").probabilities
    np.testing.assert_allclose(switch, np.array([0.38, 0.8]) / 1.18, rtol=1e-12)
    # a DataError raised inside the rule call passes through the engine unchanged
    with pytest.raises(fg.DataError, match=r"node 'a' \(TransitionNode\), interface 'out' receives a point mass at "
                                           r"\[0\.3, 0\.7\] for the categorical variable 'a'"):
        fg.run(plan, data={"y": np.array([0.3, 0.7])})


# ---------------------------------------------------------------- families that meet at a variable


def normal_precision(batch: tuple):
    """t ~ N(1, 1) used as the precision of y, where NormalMeanPrecision sends (and expects) a Gamma."""
    with fg.Model() as model:
        t = Normal("t", mean=1.0, var=1.0)
        Normal("y", mean=0.0, precision=t, observed=np.ones(batch))
    return model


@pytest.mark.parametrize("algorithm", ["bp", "vmp"])
@pytest.mark.parametrize("batch", [(), (3,)], ids=["scalar", "plate"])
def test_families_that_cannot_meet_are_refused_at_compile_time(algorithm, batch):
    """Under BP this compiled and failed only when a result was read: a TypeError in families/product.py
    (scalar) or "a plate reduction of Gamma messages is not supported" (plate)."""
    init = {"t": fg.NormalMeanVariance(1.0, 1.0)} if algorithm == "vmp" else None
    with pytest.raises(fg.ModelError) as error:
        fg.compile(normal_precision(batch), algorithm=algorithm, init=init)
    message = str(error.value)
    assert "variable 't': messages of different families meet" in message
    assert "node 't' (NormalMeanVariance), interface 'out' sends UnivariateNormal" in message
    assert "node 'y' (NormalMeanPrecision), interface 'precision' sends Gamma" in message
    assert ("Give 't' a prior of the family that node 'y' expects on interface 'precision' (Gamma), "
            "or connect 't' to an interface that takes a UnivariateNormal variable") in message


def test_a_gamma_as_a_mean_is_refused():
    with fg.Model() as model:
        g = Gamma("g", shape=2.0, rate=1.0)
        Normal("y", mean=g, var=1.0, observed=1.0)
    with pytest.raises(fg.ModelError, match=r"(?s)variable 'g'.*node 'g' \(GammaNode\), interface 'out' sends Gamma"
                                            r".*node 'y' \(NormalMeanVariance\), interface 'mean' sends "
                                            r"UnivariateNormal.*prior of the family that node 'y' expects on "
                                            r"interface 'mean' \(UnivariateNormal\)"):
        fg.compile(model)


def test_a_mixture_as_a_precision_is_refused():
    with fg.Model() as model:
        z = Categorical("z", p=np.array([0.5, 0.5]))
        t = Mixture("t", z, [Normal("t1", mean=1.0, var=1.0), Normal("t2", mean=2.0, var=1.0)])
        Normal("y", mean=0.0, precision=t, observed=1.0)
    # the mixture passes the Gamma it receives on to its inputs, where it meets their Normal priors
    with pytest.raises(fg.ModelError, match=r"(?s)variable 't1'.*node 't1' \(NormalMeanVariance\), interface 'out' "
                                            r"sends UnivariateNormal.*node 't' \(MixtureNode\), interface 'in1' sends "
                                            r"Gamma"):
        fg.compile(model)
