"""An unrolled model, one node per step, built and compiled as any model is.

An unrolled model repeats one statement thousands of times. Building it
takes the one path every statement takes (numbers checked once per
interface, see ``Model._constant``): a refused statement raises its error
and leaves the model as it was. Compiling plans its identical nodes from one
template per signature:

* an unrolled chain gives its compound node's posterior and evidence, and
  unrolled VMP (with or without a node of another factorisation) the
  numbers of one node over the plate;
* the evidence readers and the tree test from a union-find over the nodes
  agree with a labelled search written here and with the forest count
  ``E = V - components``.

Oracles: the compound node and the plate (the chain against a Kalman smoother is
benchmarks/tests/test_unrolled.py).
"""
import numpy as np
import pytest

import fgraph as fg
from fgraph.graph import FactorGraph
from fgraph.nodes import Gamma, Normal
from fgraph.nodes.normal import NormalMeanVariance

RNG = np.random.default_rng(20261123)


def chain(y, step_var=0.5):
    with fg.Model() as model:
        state = Normal("x1", mean=0.0, var=1.0)
        Normal("y1", mean=state, var=1.0, observed=y[0])
        for t in range(2, len(y) + 1):
            state = Normal(f"x{t}", mean=state, var=step_var)
            Normal(f"y{t}", mean=state, var=1.0, observed=y[t - 1])
    return model


def branching_tree():
    """A root with two branches of different lengths, a variable of degree four, observations on leaves."""
    with fg.Model() as model:
        root = Normal("root", mean=0.5, var=2.0)
        left = Normal("left", mean=root, var=1.0)
        right = Normal("right", mean=root, var=0.3)
        Normal("obs_root", mean=root, var=1.0, observed=0.2)
        deeper = Normal("deeper", mean=left, var=0.7)
        Normal("obs_left", mean=deeper, var=1.0, observed=-0.4)
        Normal("obs_right", mean=right, var=0.2, observed=1.3)
        Normal("obs_right_again", mean=right, var=0.2, observed=1.1)
    return model


def unrolled_normal_gamma(y):
    """mu ~ N(0, 10), tau ~ Gamma(2, 1), y_i ~ N(mu, 1/tau) as one node per observation (loopy: VMP)."""
    with fg.Model() as model:
        mu = Normal("mu", mean=0.0, var=10.0)
        tau = Gamma("tau", shape=2.0, rate=1.0)
        for i, value in enumerate(y):
            Normal(f"y{i}", mean=mu, precision=tau, observed=value)
    return model


# ----------------------------------------------------------------------------- building
def _describe_model(model):
    """Everything a build leaves in a model, in plain values (constants by value and rank)."""
    def target(value):
        if isinstance(value, fg.model.Variable):
            return ("variable", value.name, value.batch_shape, value.event_shape, value.observed)
        return ("constant", value.value.tolist(), value.value.flags.writeable, value.event_ndim, value.batch_shape)

    return {
        "variables": [(v.name, v.batch_shape, v.event_shape, v.observed) for v in model.variables.values()],
        "nodes": [(type(n).__name__, n.name, n.batch_shape, n.power, n.interfaces, n.attributes) for n in model.nodes],
        "connections": {name: {i: target(t) for i, t in c.items()} for name, c in model.connections.items()},
        "data": {name: (value.tolist(), value.dtype, value.shape) for name, value in model.data.items()},
        "readers": {name: [(t.__name__, n, i) for t, n, i in r] for name, r in model._readers.items()},
        "version": model.structure_version,
    }


BAD_STATEMENTS = [
    # (statement after a good x ~ N(0, 1) and y ~ N(x, 1) observed 0.5, error, message)
    (lambda x: Normal("x", mean=x, var=1.0), fg.ModelError, "variable 'x' is defined twice"),
    (lambda x: Normal("z", mean=x, var=1.0, observed=float("nan")), fg.DataError, "NaN or infinite"),
    (lambda x: Normal("z", mean=x, var=1.0, power=1.5), fg.ModelError, "power must lie in"),
    (lambda x: Normal("z", mean=x, var=-1.0), fg.ModelError, "strictly positive"),
    (lambda x: Gamma("z", shape=2.0, rate=1.0, observed=-0.5), fg.DataError, "strictly positive"),
    (lambda x: Normal("z", mean="x", var=1.0), fg.ModelTypeError, "pass the variable object"),
]


@pytest.mark.parametrize("statement, error, message", BAD_STATEMENTS)
def test_a_refused_statement_raises_and_leaves_the_model_unchanged(statement, error, message):
    with fg.Model() as model:
        x = Normal("x", mean=0.0, var=1.0)
        Normal("y", mean=x, var=1.0, observed=0.5)
        Gamma("g", shape=2.0, rate=1.0, observed=1.5)  # the Gamma numbers known: checked once already
        before = _describe_model(model)
        with pytest.raises(error, match=message):
            statement(x)
        after = _describe_model(model)
        assert after.pop("version") >= before.pop("version")  # plans compiled before are not trusted
        assert after == before


def test_a_placeholder_bound_outside_the_support_of_its_interface_is_refused():
    with fg.Model():
        x = Normal("x", mean=0.0, var=1.0)
        variance = fg.Data("v", -1.0)  # a valid mean, not a valid variance
        Normal("y", mean=variance, var=1.0, observed=0.5)
        with pytest.raises(fg.DataError, match="data for 'v' .*'var'.*strictly positive"):
            Normal("z", mean=x, var=variance)


def test_equal_numbers_share_one_read_only_constant_and_signed_zeros_do_not():
    with fg.Model() as model:
        a = Normal("a", mean=0.0, var=1.0)
        Normal("b", mean=a, var=1)
        Normal("c", mean=a, var=1.0)
        Normal("d", mean=-0.0, var=1.0)
    constants = {name: model.connections[name] for name in "abcd"}
    assert constants["b"]["var"] is constants["c"]["var"] is constants["a"]["var"]
    assert not constants["a"]["var"].value.flags.writeable
    assert constants["d"]["mean"] is not constants["a"]["mean"]
    assert np.signbit(constants["d"]["mean"].value) and not np.signbit(constants["a"]["mean"].value)


# ---------------------------------------------------------------------------- compiling
def _numbers(result) -> tuple:
    numbers = {name: (np.asarray(q.mean).tolist(), np.asarray(q.var).tolist()) for name, q in result.marginals.items()}
    return numbers, result.log_evidence if result.exact else result.free_energy[-1]


def test_an_unrolled_chain_equals_its_compound_node():
    """The nodes of an unrolled chain, planned from one template per signature, give the compound node's
    posterior and evidence (its oracle is benchmarks/tests/test_unrolled.py's Kalman smoother)."""
    from fgraph.nodes import GaussMarkovChain
    from tests.graphs import unrolled_gauss_markov_chain

    y = RNG.normal(size=9)
    unrolled = fg.infer(unrolled_gauss_markov_chain(y, 0.8, 0.3, 0.5, 2.0, 0.6))
    with fg.Model() as model:
        x = GaussMarkovChain("x", 0.8, var=0.3, initial_mean=0.5, initial_var=2.0, length=len(y))
        Normal("y", mean=x, var=0.6, observed=y)
    compound = fg.infer(model)
    np.testing.assert_allclose(unrolled.log_evidence, compound.log_evidence, rtol=1e-12)
    q = compound.marginal("x")
    for t in range(len(y)):
        np.testing.assert_allclose(unrolled.marginal(f"x{t}").mean, q.mean[t], rtol=1e-11, atol=1e-14)
        np.testing.assert_allclose(unrolled.marginal(f"x{t}").var, q.var[t], rtol=1e-11)


@pytest.mark.parametrize("factorization", [None, {"y2": "mf", "mu": "bp"}])
def test_unrolled_vmp_equals_the_plate(factorization):
    """One node per observation (one template for all of them, or a node with its own factorisation) against
    one node over the plate: the same mean-field updates, the same numbers."""
    from tests.graphs import normal_gamma

    y = RNG.normal(1.0, 0.5, size=5)
    options = {"algorithm": "vmp", "init": {"tau": fg.Gamma(2.0, 1.0)}, "iterations": 6}
    constraints = None if factorization is None else {"factorization": factorization}
    unrolled = _numbers(fg.infer(unrolled_normal_gamma(y), constraints=constraints, **options))
    plate = _numbers(fg.infer(normal_gamma(y), **options))
    np.testing.assert_allclose(unrolled[1], plate[1], rtol=1e-12)
    for name in ("mu", "tau"):
        np.testing.assert_allclose(unrolled[0][name], plate[0][name], rtol=1e-12)


def test_nodes_whose_clamped_interfaces_differ_read_their_own_inputs():
    """x1 (mean clamped), x_t (mean latent) and y_t (out observed) are three signatures of one node type."""
    model = chain(RNG.normal(size=4))
    steps = {(step.node.name, step.interface): [i.name for i in step.inputs] for step in fg.compile(model).schedule}
    assert steps[("x1", "out")] == ["q_mean", "q_var"]
    assert steps[("x2", "out")] == ["m_mean", "q_var"] and steps[("x2", "mean")] == ["m_out", "q_var"]
    assert steps[("y2", "mean")] == ["q_out", "q_var"]


def test_a_chain_grown_after_compiling_is_compiled_anew():
    y = RNG.normal(size=6)
    model = chain(y[:5])
    before = fg.compile(model)
    with model:
        Normal("x6", mean=model["x5"], var=0.5)
        Normal("y6", mean=model["x6"], var=1.0, observed=y[5])
    after = fg.compile(model)
    assert after is not before and len(after.schedule) == len(before.schedule) + 3
    fresh = fg.compile(chain(y))
    assert str(after) == str(fresh)
    assert _numbers(fg.run(after)) == _numbers(fg.run(fresh))


# ------------------------------------------------------------------- components and trees
def two_chains_and_a_number():
    with fg.Model() as model:
        a = Normal("a1", mean=0.0, var=1.0)
        Normal("a2", mean=a, var=1.0, observed=0.3)
        model.add_node(NormalMeanVariance, "all_clamped", {"out": 0.1, "mean": 0.0, "var": 1.0})
        b = Normal("b1", mean=1.0, var=2.0)
        c = Normal("b2", mean=b, var=1.0)
        Normal("b3", mean=c, var=1.0, observed=0.7)
    return model


def plate_model():
    """The reader is the variable of smallest batch, here declared after a plated latent variable."""
    with fg.Model() as model:
        z = Normal("z", mean=0.0, var=1.0, batch_shape=(3,))
        Normal("y", mean=z, var=1.0, observed=RNG.normal(size=3))
        g = Normal("g", mean=0.0, var=1.0)
        model.add_node(NormalMeanVariance, "link", {"out": z, "mean": g, "var": 2.0})
        s = Normal("s", mean=0.0, var=1.0)
        Normal("w", mean=s, var=1.0, observed=RNG.normal(size=3))
    return model


def loopy():
    from tests.graphs import loopy_gaussian_model

    return loopy_gaussian_model()


def ring():
    """Two factors joined by two variables, each on exactly two interfaces (plain edges): a cycle."""
    with fg.Model() as model:
        a, b = model.add_variable("a"), model.add_variable("b")
        model.add_node(NormalMeanVariance, "g1", {"out": a, "mean": b, "var": 1.0})
        model.add_node(NormalMeanVariance, "g2", {"out": b, "mean": a, "var": 2.0})
    return model


def mixture_and_chains():
    """Two components: a model average (whose inputs' branches cannot read the evidence) and two compound
    chains observed together, with a plain variable beside them."""
    from fgraph.nodes import Categorical, MarkovChain, Mixture, Transition

    with fg.Model() as model:
        inputs = [Normal(f"x{k}", mean=float(k), var=1.0) for k in range(3)]
        x = Mixture("x", Categorical("z", p=np.array([0.5, 0.3, 0.2])), inputs)
        Normal("y", mean=x, var=4.0, observed=RNG.normal(size=4))
        s = MarkovChain("s", np.array([0.6, 0.4]), np.array([[0.9, 0.2], [0.1, 0.8]]), 5)
        Transition("o", s, np.array([[0.7, 0.1], [0.3, 0.9]]), observed=np.eye(2)[[0, 1, 1, 0, 1]])
    return model


GRAPHS = {"chain": lambda: chain(RNG.normal(size=5)), "branching tree": branching_tree,
          "two components": two_chains_and_a_number, "plates": plate_model, "loopy": loopy,
          "unrolled VMP": lambda: unrolled_normal_gamma(RNG.normal(size=3)), "ring": ring,
          "mixture and chains": mixture_and_chains}


def labelled_readers(graph, prefer=()):
    """The evidence readers from the labelled graph (the oracle): per connected component, in the order of
    its first node, the variable outside every mixture input's branch (what the input reaches without
    passing through its mixture node) of smallest batch, a preferred one of that batch first, then the
    first declared; with the batch shape of the component's first compound node."""
    neighbours = graph.neighbours()
    branch = set()
    for node in graph.nodes:
        for interface in node.conditional_interfaces():
            slot = graph.node_sockets[node.name][interface].slot
            if slot is None or slot.kind == "observed":
                continue
            reached, frontier = {("variable", slot.name)}, [("variable", slot.name)]
            while frontier:
                for vertex in neighbours[frontier.pop()]:
                    if vertex != ("node", node.name) and vertex not in reached:
                        reached.add(vertex)
                        frontier.append(vertex)
            branch |= {name for kind, name in reached if kind == "variable"}
    order = {node.name: k for k, node in enumerate(graph.nodes)}
    components = sorted(graph.connected_components(),
                        key=lambda c: min(order[name] for kind, name in c if kind == "node"))
    readers = []
    for component in components:
        slots = [graph.slots[name] for kind, name in component if kind == "variable"
                 and graph.slots[name].kind != "observed"]
        if not slots:
            continue
        reader = min(slots, key=lambda s: (s.name in branch, int(np.prod(s.variable.batch_shape)),
                                           s.name not in prefer, s.index))
        compound = [graph.node(name) for kind, name in component if kind == "node"
                    and type(graph.node(name)).couples_batch]
        readers.append((reader.name, min(compound, key=lambda n: order[n.name]).batch_shape if compound else None))
    return readers


@pytest.mark.parametrize("case", GRAPHS)
def test_evidence_readers_and_the_tree_test_equal_the_labelled_search(case):
    model = GRAPHS[case]()
    graph = FactorGraph(model)
    assert [(slot.name, coupled) for slot, coupled in graph.evidence_readers()] == labelled_readers(graph)
    for name in [slot.name for slot in graph.latent_slots][::2]:
        assert [(slot.name, coupled) for slot, coupled in graph.evidence_readers(prefer={name})] \
            == labelled_readers(graph, prefer={name})
    neighbours = graph.neighbours()
    edges = sum(len(adjacent) for adjacent in neighbours.values()) // 2
    forest = edges == len(neighbours) - len(graph.connected_components())
    assert graph.is_tree() == (forest and not graph.tied_interfaces())
    expected = {"chain": True, "branching tree": True, "two components": True, "plates": True, "loopy": False,
                "unrolled VMP": False, "ring": False, "mixture and chains": True}
    assert graph.is_tree() is expected[case]


def test_one_reader_per_component_the_smallest_variable_first_declared():
    assert [slot.name for slot, _ in FactorGraph(two_chains_and_a_number()).evidence_readers()] == ["a1", "b1"]
    assert [slot.name for slot, _ in FactorGraph(plate_model()).evidence_readers()] == ["g", "s"]


# ----------------------------------------------------------------------------- ordering
def _ordered_by_dependency_sets(steps):
    """The default order computed on :func:`message_dependencies`' sets and the pairs (slot, socket) as keys."""
    from fgraph.schedule import _break_cycles, _topological_order, message_dependencies

    key = {s.socket.index: (s.socket.slot.index, s.socket.index) for s in steps}
    parents = message_dependencies(steps)
    order = _topological_order(parents, key)
    if order is None:
        order = _topological_order(_break_cycles(parents, key), key)
    return order


@pytest.mark.parametrize("case", GRAPHS)
def test_the_positional_order_equals_the_order_on_dependency_sets(case):
    from fgraph.schedule import default_order

    options = {"unrolled VMP": {"algorithm": "vmp", "init": {"tau": fg.Gamma(2.0, 1.0)}},
               "loopy": {"init": {"x": fg.NormalMeanVariance(0.0, 1.0), "z": fg.NormalMeanVariance(0.0, 1.0)}},
               "ring": {"init": {"a": fg.NormalMeanVariance(0.0, 1.0), "b": fg.NormalMeanVariance(0.0, 1.0)}},
               }.get(case, {})
    steps = list(fg.compile(GRAPHS[case](), **options).schedule)
    shuffled = [steps[k] for k in RNG.permutation(len(steps))]  # the order must not depend on the input order
    for given in (steps, shuffled):
        assert [s.socket.index for s in default_order(given)] == _ordered_by_dependency_sets(given)


@pytest.mark.parametrize("case", GRAPHS)
def test_positional_parents_are_the_dependency_sets(case):
    from fgraph.schedule import _positional_parents, message_dependencies

    options = {"unrolled VMP": {"algorithm": "vmp", "init": {"tau": fg.Gamma(2.0, 1.0)}},
               "loopy": {"init": {"x": fg.NormalMeanVariance(0.0, 1.0), "z": fg.NormalMeanVariance(0.0, 1.0)}},
               "ring": {"init": {"a": fg.NormalMeanVariance(0.0, 1.0), "b": fg.NormalMeanVariance(0.0, 1.0)}},
               }.get(case, {})
    steps = list(fg.compile(GRAPHS[case](), **options).schedule)
    position = {step.socket.index: k for k, step in enumerate(steps)}
    positional = _positional_parents(steps, position)
    expected = message_dependencies(steps)
    assert {step.socket.index: {steps[p].socket.index for p in parents} for step, parents in zip(steps, positional)} \
        == expected
    # sum-product messages read others (the comparison is not between empty sets); mean-field ones read none
    assert any(expected.values()) is (case != "unrolled VMP")


def test_a_schedule_that_never_updates_a_message_is_refused():
    """Counting the messages written stands in for looking at every socket: a missing one is still named."""
    model = chain(RNG.normal(size=4))
    pairs = fg.compile(model).schedule.pairs()
    with pytest.raises(fg.ScheduleError, match=r"never updates the messages into variable\(s\) \['x1'\]"):
        fg.compile(model, schedule=[pair for pair in pairs if pair != ("x2", "mean")])
    repeated = pairs + [pairs[0]]  # a repeated update counts once: nothing missing
    assert len(fg.compile(model, schedule=repeated).schedule) == len(pairs) + 1
