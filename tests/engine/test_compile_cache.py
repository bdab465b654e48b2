"""Compiled plans are remembered per model structure: a remembered plan computes what a fresh one does.

``fg.compile`` (and so ``fg.infer``) keeps the plan of a model under the
options it was compiled with; running the same model again skips the
compiler. These tests check that the remembered plan gives the numbers of a
fresh compilation, that data and initial values are always read afresh, and
that any change to the structure, the options or the rules compiles anew.
Oracles: conjugate closed forms (Normal–Normal posterior and evidence) and
fresh compilations through :func:`fgraph.plan.compile_model`, which never
consults the memo.
"""
import math

import numpy as np
import pytest

import fgraph as fg
from fgraph.node import FactorNode
from fgraph.plan import compile_model
from fgraph.nodes import Categorical, Normal, Transition
from tests.graphs import normal_gamma

PRIOR_MEAN, PRIOR_VAR, NOISE_VAR = 0.3, 2.0, 0.5


def normal_normal(y, prior_mean=PRIOR_MEAN):
    """x ~ N(prior_mean, PRIOR_VAR), y_i ~ N(x, NOISE_VAR) for i < len(y) (one plated node)."""
    with fg.Model() as model:
        x = Normal("x", mean=prior_mean, var=PRIOR_VAR)
        Normal("y", mean=x, var=NOISE_VAR, observed=np.asarray(y, dtype=float))
    return model


def conjugate_posterior(y, prior_mean=PRIOR_MEAN, prior_var=PRIOR_VAR):
    """Posterior mean and variance of x, and log p(y) = log N(y | m 1, v 1 1ᵀ + r I) (closed form)."""
    y = np.asarray(y, dtype=float)
    precision = 1.0 / prior_var + len(y) / NOISE_VAR
    var = 1.0 / precision
    mean = var * (prior_mean / prior_var + y.sum() / NOISE_VAR)
    covariance = prior_var * np.ones((len(y), len(y))) + NOISE_VAR * np.eye(len(y))
    residual = y - prior_mean
    _, logdet = np.linalg.slogdet(covariance)
    log_evidence = -0.5 * (len(y) * math.log(2 * math.pi) + logdet + residual @ np.linalg.solve(covariance, residual))
    return mean, var, log_evidence


def gaussian_chain(y):
    with fg.Model() as model:
        state = Normal("x0", mean=0.0, var=1.0)
        Normal("y0", mean=state, var=0.5, observed=y[0])
        for t in range(1, len(y)):
            state = Normal(f"x{t}", mean=state, var=0.2)
            Normal(f"y{t}", mean=state, var=0.5, observed=y[t])
    return model


def hidden_markov(labels):
    transition = np.array([[0.8, 0.3], [0.2, 0.7]])
    emission = np.array([[0.9, 0.2], [0.1, 0.8]])
    with fg.Model() as model:
        state = Categorical("s0", p=np.array([0.6, 0.4]))
        Transition("o0", state, emission, observed=labels[0])
        for t in range(1, len(labels)):
            state = Transition(f"s{t}", state, transition)
            Transition(f"o{t}", state, emission, observed=labels[t])
    return model


def summary(result) -> dict:
    """Every number a run produced: marginals' parameters, free-energy trace, evidence where exact."""
    numbers = {"free_energy": list(result.free_energy)}
    for name, q in result.marginals.items():
        numbers[name] = [np.asarray(p).tolist() for p in q.natural_parameters()]
    if result.plan.exact:
        numbers["log_evidence"] = result.log_evidence
    return numbers


RNG = np.random.default_rng(11)
CASES = {
    "bp chain": (lambda: gaussian_chain(RNG.normal(size=5)), {}),
    "bp plate": (lambda: normal_normal(RNG.normal(size=4)), {}),
    "vmp normal-gamma": (lambda: normal_gamma(RNG.normal(1.0, 0.5, size=30)),
                         {"algorithm": "vmp", "init": {"tau": fg.Gamma(2.0, 1.0)}}),
    "vmp element-wise plate": (lambda: normal_gamma(RNG.normal(1.0, 0.5, size=30)),
                               {"algorithm": "vmp", "init": {"tau": fg.Gamma(2.0, 1.0)}, "collapse_plates": False}),
    "bp hmm": (lambda: hidden_markov([0, 1, 1, 0, 1]), {}),
    "structured": (lambda: normal_gamma(RNG.normal(1.0, 0.5, size=30)),
                   {"algorithm": "vmp", "init": {"tau": fg.Gamma(2.0, 1.0)},
                    "constraints": {"factorization": {"y": [("out", "mean"), ("precision",)]}}}),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_remembered_plan_computes_what_a_fresh_compilation_does(case):
    build, options = CASES[case]
    model = build()
    first = fg.compile(model, **options)
    again = fg.compile(model, **options)
    assert again is first  # the second compilation was skipped
    fresh = compile_model(model, options.get("algorithm", "bp"), options.get("constraints"), None,
                          options.get("init"), options.get("collapse_plates", True), None)
    assert fresh is not first
    for _ in range(2):  # the second run of the remembered plan reuses what its first run kept (constants)
        assert summary(fg.run(again, iterations=4 if not first.exact else None)) == summary(
            fg.run(fresh, iterations=4 if not fresh.exact else None))


def test_rebinding_data_to_a_remembered_plan_reads_the_new_data():
    first_y, second_y = np.array([0.4, -1.2, 2.0]), np.array([3.1, 2.2, 2.9])
    model = normal_normal(first_y)
    for y in (first_y, second_y, first_y):
        result = fg.infer(model, data={"y": y})
        mean, var, log_evidence = conjugate_posterior(y)
        assert result.plan is fg.compile(model)
        assert float(result.marginal("x").mean) == pytest.approx(mean, rel=1e-12)
        assert float(result.marginal("x").var) == pytest.approx(var, rel=1e-12)
        assert result.log_evidence == pytest.approx(log_evidence, rel=1e-12)


def test_a_hyper_parameter_bound_as_data_is_read_afresh():
    y = np.array([0.4, -1.2, 2.0])
    with fg.Model() as model:
        x = Normal("x", mean=fg.Data("m0", 0.0), var=PRIOR_VAR)
        Normal("y", mean=x, var=NOISE_VAR, observed=y)
    for prior_mean in (0.0, 5.0, -2.5):
        result = fg.infer(model, data={"m0": prior_mean})
        mean, var, log_evidence = conjugate_posterior(y, prior_mean=prior_mean)
        assert float(result.marginal("x").mean) == pytest.approx(mean, rel=1e-12)
        assert result.log_evidence == pytest.approx(log_evidence, rel=1e-12)


def test_adding_a_factor_compiles_anew():
    y = np.array([0.4, -1.2, 2.0])
    model = normal_normal(y)
    before = fg.infer(model)
    with model:
        Normal("z", mean=model["x"], var=NOISE_VAR, observed=1.5)
    after = fg.infer(model)
    assert after.plan is not before.plan
    mean, var, log_evidence = conjugate_posterior(np.append(y, 1.5))
    assert float(after.marginal("x").mean) == pytest.approx(mean, rel=1e-12)
    assert after.log_evidence == pytest.approx(log_evidence, rel=1e-12)


def test_a_constant_changed_in_the_callers_array_does_not_reach_the_model():
    prior_mean = np.array(PRIOR_MEAN)
    y = np.array([0.4, -1.2, 2.0])
    model = normal_normal(y, prior_mean=prior_mean)
    fg.infer(model)
    prior_mean[...] = 7.0  # the model keeps the value it was built with, before and after compiling
    mean, _, log_evidence = conjugate_posterior(y)
    result = fg.infer(model)
    assert float(result.marginal("x").mean) == pytest.approx(mean, rel=1e-12)
    assert result.log_evidence == pytest.approx(log_evidence, rel=1e-12)


def test_options_are_part_of_the_key_and_equal_options_share_the_plan():
    model = normal_gamma(RNG.normal(1.0, 0.5, size=20))
    init = {"tau": fg.Gamma(2.0, 1.0)}
    vmp = fg.compile(model, algorithm="vmp", init=init)
    assert fg.compile(model, algorithm="vmp", init=dict(init)) is vmp
    assert fg.compile(model, algorithm="vmp", init=init, collapse_plates=False) is not vmp
    structured = {"factorization": {"y": [("out", "mean"), ("precision",)]}}
    with_constraints = fg.compile(model, algorithm="vmp", init=init, constraints=structured)
    assert with_constraints is not vmp
    assert fg.compile(model, algorithm="vmp", init=init,
                      constraints={"factorization": {"y": [("out", "mean"), ("precision",)]}}) is with_constraints
    assert fg.compile(model, algorithm="vmp", init=init,
                      constraints=fg.Constraints(factorization={"y": "mf"})) is not vmp
    reordered = list(reversed(vmp.schedule.pairs()))
    both = dict(init, mu=fg.NormalMeanVariance(0.0, 1.0))
    scheduled = fg.compile(model, algorithm="vmp", init=both, schedule=reordered)
    assert scheduled.schedule.pairs() == reordered
    assert fg.compile(model, algorithm="vmp", init=both) is not scheduled
    assert fg.compile(model, algorithm="vmp", init=init, marginals=["mu"]) is not vmp


def test_another_initial_value_of_the_same_family_is_used_by_the_remembered_plan():
    model = normal_gamma(RNG.normal(1.0, 0.5, size=20))
    runs = {}
    for shape, rate in ((2.0, 1.0), (9.0, 0.5)):
        init = {"tau": fg.Gamma(shape, rate)}
        remembered = fg.infer(model, algorithm="vmp", init=init, iterations=1)
        fresh = fg.run(compile_model(model, "vmp", None, None, init), iterations=1)
        assert summary(remembered) == summary(fresh)
        runs[shape] = summary(remembered)
    assert runs[2.0] != runs[9.0]  # one sweep depends on the initial q(tau): the second was not stale


def test_an_initial_value_of_another_family_compiles_anew():
    model = normal_gamma(RNG.normal(1.0, 0.5, size=20))
    first = fg.compile(model, algorithm="vmp", init={"tau": fg.Gamma(2.0, 1.0)})
    other = fg.compile(model, algorithm="vmp", init={"tau": fg.GammaShapeScale(2.0, 1.0)})
    assert other is not first and type(other.init["tau"]) is fg.GammaShapeScale


def test_a_point_mass_initial_value_is_checked_every_time():
    with fg.Model() as model:
        state = Categorical("s", p=np.array([0.6, 0.4]))
        Transition("o", state, np.array([[0.9, 0.2], [0.1, 0.8]]), observed=1)
    fg.compile(model, init={"s": fg.PointMass(np.array([1.0, 0.0]), 1)})
    with pytest.raises(fg.ModelError, match="one-hot"):
        fg.compile(model, init={"s": fg.PointMass(np.array([0.5, 0.5]), 1)})


def test_registering_a_rule_compiles_anew():
    class Probe(FactorNode):
        interfaces = ("out",)

    model = normal_normal([0.1, 0.2])
    first = fg.compile(model)

    @fg.rule(Probe, "out")
    def _(node) -> fg.Uninformative:
        return fg.Uninformative(node.batch_shape)

    assert fg.compile(model) is not first
    assert fg.compile(model) is fg.compile(model)


def _rules_of(plan) -> tuple:
    steps = [(step.node.name, step.interface, [bound.name for bound in step.rules]) for step in plan.schedule]
    marginals = {(name, cluster): [bound.name for bound in rules]
                 for name, node_plan in plan.nodes.items() for cluster, rules in node_plan.marginal_rules.items()}
    return steps, marginals


@pytest.mark.parametrize("case", list(CASES) + ["bp mixture"])
def test_a_plan_typed_without_initial_values_binds_the_rules_of_the_full_two_iteration_walk(case, monkeypatch):
    """Without initial values the compiler types the first iteration only; the walk of both must agree."""
    if case == "bp mixture":
        def build():
            from fgraph.nodes import Mixture

            with fg.Model() as model:
                switch = Categorical("m", p=np.array([0.3, 0.7]))
                first, second = Normal("a", mean=0.0, var=1.0), Normal("b", mean=2.0, var=3.0)
                Mixture("y", switch, [first, second], observed=0.8)
            return model
        options = {}
    else:
        build, options = CASES[case]
    model = build()
    arguments = (model, options.get("algorithm", "bp"), options.get("constraints"), None, options.get("init"),
                 options.get("collapse_plates", True), None)
    shortened = compile_model(*arguments)
    from fgraph.message_families import FamilyTracker

    original = FamilyTracker.__init__

    def with_full_walk(self, plan):
        original(self, plan)
        self.init_used.append("(the full walk)")  # as if an initial value had been used: no shortcut

    monkeypatch.setattr(FamilyTracker, "__init__", with_full_walk)
    full = compile_model(*arguments)
    assert _rules_of(shortened) == _rules_of(full)
    assert all(len(step.rules) == 2 for step in shortened.schedule)


def test_identical_nodes_share_one_resolution_and_per_message_rules_stay_apart():
    """The steps of an unrolled chain bind the registry's rule objects (one resolution per kind of step);
    a rule made for one message (a point mass read as a clamped value) is made per step and names its
    own variable when it refuses a value."""
    plan = fg.compile(gaussian_chain(RNG.normal(size=40)))
    rules = [step.rules[0] for step in plan.schedule]
    assert len({id(rule) for rule in rules}) == len({rule.name for rule in rules}) < 6

    matrix = np.array([[0.7, 0.2], [0.3, 0.8]])
    with fg.Model() as model:
        for k in (1, 2):
            z = Categorical(f"z{k}", p=np.array([0.5, 0.5]))
            s = Categorical(f"s{k}", p=np.array([0.6, 0.4]))
            a = Transition(f"a{k}", s, matrix)
            b = Categorical(f"b{k}", p=np.array([0.2, 0.8]))
            from fgraph.nodes import Mixture

            Mixture(f"y{k}", z, [a, b], observed=np.array([0.0, 1.0]))
    schedule = [(f"{name}{k}", interface) for k in (1, 2) for name, interface in
                [("s", "out"), ("z", "out"), ("b", "out"), ("a", "out"), ("y", "in1"), ("y", "in2"), ("a", "in"),
                 ("y", "switch")]]
    plan = fg.compile(model, schedule=schedule)
    readers = {step.node.name: step.rules[0].function for step in plan.schedule if step.interface == "in"}
    assert readers["a1"] is not readers["a2"]
    assert readers["a1"].one_hot_inputs == {"m_out": "a1"} and readers["a2"].one_hot_inputs == {"m_out": "a2"}
    with pytest.raises(fg.DataError, match="categorical variable 'a2'"):
        fg.run(plan, data={"y2": np.array([0.3, 0.7])})


def test_a_model_remembers_the_latest_few_plans():
    from fgraph.inference import REMEMBERED_PLANS

    model = normal_gamma(RNG.normal(1.0, 0.5, size=10))
    init = {"tau": fg.Gamma(2.0, 1.0)}
    plans = [fg.compile(model, algorithm="vmp", init=init, marginals=["mu"] * (k + 1))
             for k in range(REMEMBERED_PLANS + 2)]
    assert len(model.compiled_plans) == REMEMBERED_PLANS
    assert fg.compile(model, algorithm="vmp", init=init, marginals=["mu"] * (REMEMBERED_PLANS + 2)) is plans[-1]
    assert fg.compile(model, algorithm="vmp", init=init, marginals=["mu"]) is not plans[0]


def test_a_compiled_plan_is_sealed_and_runs_without_changing():
    """A run reads its plan and never changes it: the plan's attributes cannot be set once compiled, also on
    the copy made for another init."""
    model = normal_gamma(RNG.normal(1.0, 0.5, size=10))
    plan = fg.compile(model, algorithm="vmp", init={"tau": fg.Gamma(2.0, 1.0)})
    fg.run(plan, iterations=3)
    with pytest.raises(AttributeError, match="a compiled plan is not changed"):
        plan.exact = True
    other = fg.compile(model, algorithm="vmp", init={"tau": fg.Gamma(3.0, 1.0)})
    assert other is not plan
    with pytest.raises(AttributeError, match="a compiled plan is not changed"):
        other.schedule = plan.schedule


def test_what_a_compiled_plan_holds_is_read_only():
    """The steps of a compiled plan, how each message is made and the node plans cannot be changed either
    (a schedule given with repeated steps too); the plan runs as before."""
    model = normal_gamma(RNG.normal(1.0, 0.5, size=10))
    plan = fg.compile(model, algorithm="vmp", init={"tau": fg.Gamma(2.0, 1.0)},
                      constraints={"factorization": {"y": [("out", "mean"), ("precision",)]}})
    step = plan.schedule[1]
    for target, name, value in [(step, "rules", ()), (step, "inputs", ()), (step.binding, "exponent", 2.0),
                                (plan.nodes["y"], "clusters", []), (plan.nodes["y"], "energy", None)]:
        with pytest.raises(AttributeError, match="of a compiled plan is not changed"):
            setattr(target, name, value)
    with pytest.raises(TypeError):
        step.rules[0] = step.rules[1]
    with pytest.raises(TypeError):
        plan.nodes["y"].marginal_rules[("out", "mean")] = None
    with pytest.raises(TypeError):
        plan.nodes["y"].cluster_of["precision"] = ("out", "mean", "precision")
    with pytest.raises(AttributeError):
        plan.schedule.steps.append(step)
    repeated = fg.compile(model, algorithm="vmp", init={"tau": fg.Gamma(2.0, 1.0)},
                          schedule=plan.schedule.pairs() * 2)
    with pytest.raises(AttributeError, match="of a compiled plan is not changed"):
        repeated.schedule[0].binding = None
    assert fg.run(repeated, iterations=2).iterations == 2


def test_a_number_changed_in_place_between_runs_is_read_afresh():
    """A run reads the data bound to a variable as they are now: one number bound as an array and changed
    in place gives the posterior of the new number (the message of a datum is reused only for the same bits)."""
    datum = np.array(1.1)
    with fg.Model() as model:
        x = Normal("x", mean=0.3, var=2.0)
        Normal("y", mean=x, var=0.5, observed=datum)
    first = fg.infer(model).marginal("x").mean
    datum[...] = -4.0
    second = fg.infer(model).marginal("x").mean
    precision = 1.0 / 2.0 + 1.0 / 0.5
    assert first == pytest.approx((0.3 / 2.0 + 1.1 / 0.5) / precision, rel=1e-14)
    assert second == pytest.approx((0.3 / 2.0 - 4.0 / 0.5) / precision, rel=1e-14)
