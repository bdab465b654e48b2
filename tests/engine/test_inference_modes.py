"""Loopy BP, form constraints, user schedules, hybrid BP/VMP and the Bethe free energy."""
import numpy as np
import pytest
from scipy.special import digamma, gammaln

import fgraph as fg
from fgraph.nodes import Gamma, Normal
from tests.graphs import loopy_gaussian_model

RNG = np.random.default_rng(5)


def chain_model(y):
    with fg.Model() as model:
        previous = Normal("x0", mean=0.0, var=1.0)
        Normal("y0", mean=previous, var=0.5, observed=y[0])
        for t in range(1, len(y)):
            previous = Normal(f"x{t}", mean=previous, var=0.2)
            Normal(f"y{t}", mean=previous, var=0.5, observed=y[t])
    return model


def test_bethe_free_energy_equals_minus_log_evidence_on_a_tree():
    y = RNG.normal(size=6)
    result = fg.infer(chain_model(y), free_energy=True)
    assert result.free_energy[-1] == pytest.approx(-result.log_evidence, rel=1e-10)


def test_evidence_is_the_same_on_every_edge_of_a_tree():
    y = RNG.normal(size=6)
    result = fg.infer(chain_model(y))
    evidences = np.array([float(v) for v in result.evidence_per_variable().values()])
    np.testing.assert_allclose(evidences, result.log_evidence, rtol=1e-12)


def test_schedule_prints_as_a_numbered_list_and_can_be_replaced():
    y = RNG.normal(size=3)
    model = chain_model(y)
    default = fg.compile(model)
    text = str(default.schedule)
    assert text.splitlines()[0].lstrip().startswith("1. ")
    assert len(text.splitlines()) == len(default.schedule)
    # run the reverse order twice: after two sweeps every message has seen its final inputs
    pairs = list(reversed(default.schedule.pairs()))
    plan = fg.compile(model, schedule=pairs * 3, init={f"x{t}": fg.NormalMeanVariance(0.0, 100.0) for t in range(3)})
    assert plan.schedule.pairs() == pairs * 3
    reference = fg.run(default)
    replaced = fg.run(plan, iterations=1)
    for t in range(3):
        assert replaced.marginal(f"x{t}").mean == pytest.approx(reference.marginal(f"x{t}").mean, rel=1e-12)
    with pytest.raises(fg.ModelError, match=r"schedule entry \('x9', 'out'\)"):
        fg.compile(model, schedule=[("x9", "out")])


def exact_posterior(y):
    # joint precision of (x, z) from the four factors
    precision = np.array([[1.0 + 1.0 + 0.5, -1.5], [-1.5, 1.5 + 1.0]])
    return np.linalg.solve(precision, np.array([0.0, y]))


@pytest.mark.parametrize("damping", [0.0, 0.5])
def test_loopy_gaussian_bp_converges_to_the_exact_means(damping):
    y = 1.7
    model = loopy_gaussian_model(y)
    plan = fg.compile(model, init={"x": fg.NormalMeanVariance(0.0, 1.0), "z": fg.NormalMeanVariance(0.0, 1.0)})
    assert not plan.exact
    result = fg.run(plan, iterations=200, damping=damping)
    means = exact_posterior(y)
    assert result.marginal("x").mean == pytest.approx(means[0], rel=1e-8)
    assert result.marginal("z").mean == pytest.approx(means[1], rel=1e-8)
    with pytest.raises(fg.ModelError, match="log_evidence is exact only"):
        result.log_evidence


def test_loopy_bp_without_initial_messages_is_rejected():
    with pytest.raises(fg.ScheduleError, match="init="):
        fg.compile(loopy_gaussian_model(1.0))


A0, B0 = 3.0, 2.0


def normal_gamma(y):
    with fg.Model() as model:
        mu = Normal("mu", mean=0.0, var=10.0)
        tau = Gamma("tau", shape=A0, rate=B0)
        Normal("y", mean=mu, precision=tau, observed=y)
    return model


def test_point_mass_form_constraint_gives_the_map_of_that_variable():
    """q(tau) = δ(tau - τ̂): variational EM, with τ̂ the mode of the Gamma belief."""
    y = RNG.normal(1.0, 0.5, size=30)
    result = fg.infer(normal_gamma(y), algorithm="vmp", iterations=300, init={"tau": fg.Gamma(A0, B0)},
                      constraints={"form": {"tau": "point_mass"}})
    tau = A0 / B0
    for _ in range(300):  # reference loop
        v = 1.0 / (1 / 10.0 + len(y) * tau)
        m = v * tau * y.sum()
        shape, rate = A0 + len(y) / 2, B0 + 0.5 * (np.sum((y - m) ** 2) + len(y) * v)
        tau = (shape - 1) / rate
    q_tau = result.marginal("tau")
    assert isinstance(q_tau, fg.PointMass)
    assert float(q_tau.value) == pytest.approx(tau, rel=1e-10)
    assert result.marginal("mu").mean == pytest.approx(m, rel=1e-10)


def test_hybrid_bp_and_vmp_equals_structured_reference():
    """Sum-product around (mu, x) nodes, mean-field around the likelihood plate and tau."""
    y = RNG.normal(2.0, 1.0, size=12)
    n = len(y)
    with fg.Model() as model:
        mu = Normal("mu", mean=0.0, var=10.0)
        x = Normal("x", mean=mu, var=1.0)
        tau = Gamma("tau", shape=A0, rate=B0)
        Normal("y", mean=x, precision=tau, observed=y)
    result = fg.infer(model, algorithm="vmp", iterations=200, init={"tau": fg.Gamma(A0, B0)},
                      constraints={"factorization": {"mu": "bp", "x": "bp"}})
    a, b = A0, B0
    for _ in range(200):  # q(mu, x) exact Gaussian given E[tau]; q(tau) conjugate
        e_tau = a / b
        precision = np.array([[0.1 + 1.0, -1.0], [-1.0, 1.0 + n * e_tau]])
        cov = np.linalg.inv(precision)
        mean = cov @ np.array([0.0, e_tau * y.sum()])
        a, b = A0 + n / 2, B0 + 0.5 * (np.sum((y - mean[1]) ** 2) + n * cov[1, 1])
    e_tau, e_log_tau = a / b, digamma(a) - np.log(b)
    elbo = (
        -0.5 * np.log(2 * np.pi * 10.0) - 0.5 * (mean[0] ** 2 + cov[0, 0]) / 10.0
        - 0.5 * np.log(2 * np.pi) - 0.5 * ((mean[1] - mean[0]) ** 2 + cov[0, 0] - 2 * cov[0, 1] + cov[1, 1])
        + 0.5 * n * (e_log_tau - np.log(2 * np.pi)) - 0.5 * e_tau * (np.sum((y - mean[1]) ** 2) + n * cov[1, 1])
        + A0 * np.log(B0) - gammaln(A0) + (A0 - 1) * e_log_tau - B0 * e_tau
        + 0.5 * np.log(np.linalg.det(2 * np.pi * np.e * cov))
        + a - np.log(b) + gammaln(a) + (1 - a) * digamma(a)
    )
    assert result.marginal("x").mean == pytest.approx(mean[1], rel=1e-10)
    assert result.marginal("mu").var == pytest.approx(cov[0, 0], rel=1e-10)
    assert result.marginal("tau").rate == pytest.approx(b, rel=1e-10)
    assert result.free_energy[-1] == pytest.approx(-elbo, rel=1e-10)
    assert np.all(np.diff(result.free_energy) <= 1e-10 * np.abs(result.free_energy[1:]))


def test_keyboard_interrupt_keeps_what_was_computed():
    y = RNG.normal(size=20)

    def interrupt(iteration, result):
        if iteration == 2:
            raise KeyboardInterrupt

    result = fg.infer(normal_gamma(y), algorithm="vmp", iterations=50, init={"tau": fg.Gamma(A0, B0)}, callback=interrupt)
    assert result.interrupted and result.iterations == 3 and len(result.free_energy) == 3
    # what was kept is exactly the state of a run of three sweeps (with a callback too: on objects, as the
    # interrupted run; without one the sweeps after the first run on floats, equal to round-off)
    reference = fg.infer(normal_gamma(y), algorithm="vmp", iterations=3, init={"tau": fg.Gamma(A0, B0)},
                         callback=lambda iteration, result: None)
    assert result.free_energy == reference.free_energy
    for name in ("mu", "tau"):
        assert result.marginal(name).mean == reference.marginal(name).mean
        assert result.marginal(name).var == reference.marginal(name).var


def test_compiling_for_some_marginals_keeps_only_the_messages_they_need():
    """A chain asked only for its last state sweeps the forward messages alone (ForneyLab-style); on a tree
    the other marginals are computed when read, equal to those of the whole schedule run as given."""
    y = RNG.normal(size=6)
    model = chain_model(y)
    plan = fg.compile(model)
    everything = fg.run(fg.compile(model, schedule=plan.schedule.pairs()))  # a given order runs as given
    last = fg.compile(model, marginals=["x5"])
    assert len(last.sweep) < len(everything.plan.sweep) == len(plan.schedule)
    assert "(when read)" in str(last)
    result = fg.run(last)
    for name in ("x5", "x2", "x0"):
        assert result.marginal(name).mean == pytest.approx(everything.marginal(name).mean, rel=1e-12)
        assert result.marginal(name).var == pytest.approx(everything.marginal(name).var, rel=1e-12)
    assert result.log_evidence == pytest.approx(everything.log_evidence, rel=1e-12)
    assert fg.run(last, free_energy=True).free_energy[-1] == pytest.approx(-everything.log_evidence, rel=1e-10)
    with pytest.raises(fg.ModelError, match="marginals: unknown variable 'x9'"):
        fg.compile(model, marginals=["x9"])


def test_an_iterative_plan_compiled_for_some_marginals_computes_those_alone():
    """Under VMP the messages a sweep leaves out would depend on the sweeps they missed: reading them is
    refused, and so is the free energy, which needs every message."""
    y = RNG.normal(size=6)
    model = chain_model(y)
    with model:  # a second component, which x5 does not need
        w = Normal("w", mean=0.0, var=1.0)
        Normal("v", mean=w, var=1.0, observed=np.ones(3))
    full = fg.infer(model, algorithm="vmp", iterations=30, init={f"x{t}": fg.NormalMeanVariance(0.0, 1.0) for t in range(6)})
    last = fg.compile(model, algorithm="vmp", marginals=["x5"], init={f"x{t}": fg.NormalMeanVariance(0.0, 1.0) for t in range(6)})
    assert len(last.sweep) < len(last.schedule) and "(not computed)" in str(last)
    result = fg.run(last, iterations=30)
    assert result.marginal("x5").mean == pytest.approx(full.marginal("x5").mean, rel=1e-12)
    assert result.marginal("x2").mean == pytest.approx(full.marginal("x2").mean, rel=1e-12)  # x5 needs x2
    with pytest.raises(fg.ModelError, match="'w' was not computed"):
        result.marginal("w")
    with pytest.raises(fg.ModelError, match="free energy needs every message"):
        fg.run(last, free_energy=True)


def test_messages_of_constants_are_computed_once_per_plan_and_data_messages_every_run():
    """A prior with fixed parameters sends the same message in every run; a prior bound as data does not."""
    with fg.Model() as model:
        fixed = Normal("fixed", mean=0.0, var=2.0)
        bound = Normal("bound", mean=fg.Data("prior_mean", 0.0), var=1.0)
        Normal("y", mean=fixed, var=1.0, observed=np.zeros(3))
        Normal("w", mean=bound, var=1.0, observed=np.zeros(3))
    plan = fg.compile(model)
    first = fg.run(plan, data={"y": np.ones(3), "w": np.ones(3)})
    second = fg.run(plan, data={"y": np.full(3, 2.0), "w": np.ones(3), "prior_mean": 1.0})
    assert first.messages("fixed", "out")[0] is second.messages("fixed", "out")[0]
    assert first.messages("bound", "out")[0].mean == 0.0 and second.messages("bound", "out")[0].mean == 1.0
    # the data-dependent posteriors follow the new data: N(0, 2) prior, three unit-variance observations
    for result, value in ((first, 1.0), (second, 2.0)):
        assert result.marginal("fixed").mean == pytest.approx(3 * value / (1 / 2.0 + 3) / 1.0)
        assert result.marginal("fixed").var == pytest.approx(1 / (1 / 2.0 + 3))


def test_the_free_energy_of_the_last_sweep_only():
    """free_energy="last": the same sweeps, one free energy, the value the every-sweep run ends with."""
    from tests.engine.test_bad_input import normal_gamma_model

    options = dict(algorithm="vmp", iterations=7, init={"tau": fg.Gamma(1.0, 1.0)})
    every = fg.infer(normal_gamma_model(), **options)
    last = fg.infer(normal_gamma_model(), free_energy="last", **options)
    assert len(every.free_energy) == 7 and len(last.free_energy) == 1
    assert last.free_energy[0] == every.free_energy[-1]
    assert last.iterations == 7 and last.converged is None
    np.testing.assert_array_equal(last.marginal("mu").mean, every.marginal("mu").mean)
