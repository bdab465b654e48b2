"""The core is built for what comes next; each extension point is shown by a small model.

1. plates with global parameters tied by reductions (plated == unrolled);
2. structured posteriors over a cluster of edges, q(out, mean) q(precision);
3. several operators for one factor type, selectable per node;
4. compound nodes that run a recursion over a whole sequence (== unrolled graph);
5. online updates: yesterday's posterior becomes today's prior, by re-binding data.
"""
import numpy as np
import pytest
from scipy.special import digamma, gammaln

import fgraph as fg
from fgraph.families import NormalMeanVariance as NormalMessage, UnivariateNormal, product
from fgraph.node import FactorNode
from fgraph.registry import rule
from fgraph.nodes import Gamma, Normal

RNG = np.random.default_rng(42)


# ----------------------------------------------------------------- 1. plates
def test_plated_model_equals_unrolled_model():
    y = RNG.normal(0.3, 1.0, size=6)
    with fg.Model() as plated:
        mu = Normal("mu", mean=0.0, var=2.0)
        x = Normal("x", mean=mu, var=0.5, batch_shape=(6,))
        Normal("y", mean=x, var=0.25, observed=y)
    with fg.Model() as unrolled:
        mu = Normal("mu", mean=0.0, var=2.0)
        for i in range(6):
            x_i = Normal(f"x{i}", mean=mu, var=0.5)
            Normal(f"y{i}", mean=x_i, var=0.25, observed=y[i])
    a, b = fg.infer(plated), fg.infer(unrolled)
    assert a.log_evidence == pytest.approx(b.log_evidence, rel=1e-12)
    assert a.marginal("mu").mean == pytest.approx(b.marginal("mu").mean, rel=1e-12)
    for i in range(6):
        assert a.marginal("x").mean[i] == pytest.approx(b.marginal(f"x{i}").mean, rel=1e-12)
        assert a.marginal("x").var[i] == pytest.approx(b.marginal(f"x{i}").var, rel=1e-12)
    # the plate is one node with batched arrays, not six objects
    assert len(plated.nodes) == 3


# ------------------------------------------------------------ 2. structured
A, B, V_X, V_Y = 2.0, 1.0, 10.0, 1.0


def reference_structured(y, iterations=400):
    """Hand-written CAVI with q(x_i, z_i) joint Gaussian and q(tau) Gamma."""
    m = len(y)
    a, b = A, B
    for _ in range(iterations):
        e_tau = a / b
        precision = np.array([[1 / V_X + e_tau, -e_tau], [-e_tau, e_tau + 1 / V_Y]])
        cov = np.linalg.inv(precision)
        means = np.stack([np.zeros(m), y / V_Y], axis=1) @ cov  # cov is symmetric
        diff_sq = np.sum((means[:, 1] - means[:, 0]) ** 2) + m * (cov[0, 0] - 2 * cov[0, 1] + cov[1, 1])
        a, b = A + m / 2, B + 0.5 * diff_sq
    e_tau, e_log_tau = a / b, digamma(a) - np.log(b)
    second_x = means[:, 0] ** 2 + cov[0, 0]
    second_z = means[:, 1] ** 2 + cov[1, 1]
    elbo = (
        np.sum(-0.5 * np.log(2 * np.pi * V_X) - 0.5 * second_x / V_X)
        + m * 0.5 * (e_log_tau - np.log(2 * np.pi)) - 0.5 * e_tau * diff_sq
        + np.sum(-0.5 * np.log(2 * np.pi * V_Y) - 0.5 * (y**2 - 2 * y * means[:, 1] + second_z) / V_Y)
        + A * np.log(B) - gammaln(A) + (A - 1) * e_log_tau - B * e_tau
        + m * 0.5 * np.log(np.linalg.det(2 * np.pi * np.e * cov))
        + a - np.log(b) + gammaln(a) + (1 - a) * digamma(a)
    )
    return means, cov, a, b, -elbo


def test_structured_cluster_matches_hand_written_structured_cavi():
    y = RNG.normal(0.0, 2.0, size=5)
    with fg.Model() as model:
        x = Normal("x", mean=0.0, var=V_X, batch_shape=(5,))
        tau = Gamma("tau", shape=A, rate=B)
        z = Normal("z", mean=x, precision=tau)
        Normal("y", mean=z, var=V_Y, observed=y)
    result = fg.infer(
        model, algorithm="vmp", iterations=400, init={"tau": fg.Gamma(A, B)},
        constraints={"factorization": {"z": [("out", "mean"), ("precision",)]}},
    )
    means, cov, a, b, free_energy = reference_structured(y)
    np.testing.assert_allclose(result.marginal("x").mean, means[:, 0], rtol=1e-9)
    np.testing.assert_allclose(result.marginal("z").mean, means[:, 1], rtol=1e-9)
    np.testing.assert_allclose(result.marginal("x").var, cov[0, 0], rtol=1e-9)
    assert result.marginal("tau").rate == pytest.approx(b, rel=1e-9)
    assert result.free_energy[-1] == pytest.approx(free_energy, rel=1e-9)
    # and the structured posterior is a better (lower) bound than mean-field
    mean_field = fg.infer(
        model, algorithm="vmp", iterations=400, init={"tau": fg.Gamma(A, B), "z": fg.NormalMeanVariance(0.0, 10.0)}
    )
    assert result.free_energy[-1] < mean_field.free_energy[-1]


# ------------------------------------------------------------- 3. operators
class NoisyChannel(FactorNode):
    """f(out, in) = N(out | in, 1), with a second operator that deliberately inflates the noise."""

    interfaces = ("out", "in")
    event_ndims = {"out": 0, "in": 0}


@rule(NoisyChannel, "out")
def _noisy_exact(m_in: UnivariateNormal) -> UnivariateNormal:
    return NormalMessage(m_in.mean, m_in.var + 1.0, check=False)


@rule(NoisyChannel, "out", operator="inflated")
def _noisy_inflated(m_in: UnivariateNormal) -> UnivariateNormal:
    return NormalMessage(m_in.mean, m_in.var + 4.0, check=False)


def _channel_model(operator=None):
    with fg.Model() as model:
        source = Normal("source", mean=1.0, var=1.0)
        fg.random_variable(NoisyChannel, "received", {"in": source}, operator=operator)
    return model


def test_operator_is_selected_per_node():
    assert fg.infer(_channel_model()).marginal("received").var == pytest.approx(2.0)
    assert fg.infer(_channel_model("inflated")).marginal("received").var == pytest.approx(5.0)
    chosen = fg.infer(_channel_model(), constraints={"operator": {"received": "inflated"}})
    assert chosen.marginal("received").var == pytest.approx(5.0)
    with pytest.raises(fg.RuleNotFoundError, match="no operator 'laplace'"):
        fg.infer(_channel_model("laplace"))


# -------------------------------------------------------- 4. compound nodes
class RandomWalk(FactorNode):
    """A whole random walk in one node: x_1 ~ N(m0, v0), x_t ~ N(x_{t-1}, q); interface x has batch (T,)."""

    interfaces = ("x",)
    event_ndims = {"x": 0}
    couples_batch = True


@rule(RandomWalk, "x")
def _random_walk_x(m_x: UnivariateNormal, node) -> UnivariateNormal:
    """Message to every x_t from all other time steps: forward (Kalman) times backward recursion."""
    steps = node.batch_shape[0]
    forward = [NormalMessage(node.m0, node.v0)]
    for t in range(steps - 1):
        filtered = product(forward[t], m_x[t])
        forward.append(NormalMessage(filtered.mean, filtered.var + node.q, log_scale=filtered.log_scale))
    backward = [None] * steps
    for t in range(steps - 2, -1, -1):
        smoothed = m_x[t + 1] if backward[t + 1] is None else product(m_x[t + 1], backward[t + 1])
        backward[t] = NormalMessage(smoothed.mean, smoothed.var + node.q, log_scale=smoothed.log_scale)
    out = [f if b is None else product(f, b) for f, b in zip(forward, backward)]
    return NormalMessage(
        np.array([o.mean for o in out]), np.array([o.var for o in out]),
        log_scale=np.array([float(o.log_scale) for o in out]), check=False,
    )


def test_compound_chain_equals_unrolled_graph():
    steps, m0, v0, q, r = 7, 0.5, 2.0, 0.3, 0.8
    y = np.cumsum(RNG.normal(0, np.sqrt(q), size=steps)) + RNG.normal(0, np.sqrt(r), size=steps)
    with fg.Model() as compound:
        x = compound.add_variable("x", batch_shape=(steps,))
        compound.add_node(RandomWalk, "walk", {"x": x}, batch_shape=(steps,), m0=m0, v0=v0, q=q)
        Normal("y", mean=x, var=r, observed=y)
    with fg.Model() as unrolled:
        previous = Normal("x0", mean=m0, var=v0)
        Normal("y0", mean=previous, var=r, observed=y[0])
        for t in range(1, steps):
            previous = Normal(f"x{t}", mean=previous, var=q)
            Normal(f"y{t}", mean=previous, var=r, observed=y[t])
    a, b = fg.infer(compound), fg.infer(unrolled)
    assert a.log_evidence == pytest.approx(b.log_evidence, rel=1e-12)
    for t in range(steps):
        assert a.marginal("x").mean[t] == pytest.approx(b.marginal(f"x{t}").mean, rel=1e-10)
        assert a.marginal("x").var[t] == pytest.approx(b.marginal(f"x{t}").var, rel=1e-10)
    np.testing.assert_allclose(a.evidence_per_variable()["x"], b.log_evidence, rtol=1e-12)


# --------------------------------------------------------------- 5. online
def test_online_updates_rebind_the_prior_and_equal_batch_inference():
    y = RNG.normal(1.0, 1.0, size=40)
    with fg.Model() as model:
        mu = Normal("mu", mean=fg.Data("prior_mean", 0.0), var=fg.Data("prior_var", 5.0))
        Normal("y", mean=mu, var=1.0, observed=True, batch_shape=(10,))
    plan = fg.compile(model)
    prior_mean, prior_var, log_evidence = 0.0, 5.0, 0.0
    for day in range(4):
        result = fg.run(plan, data={"prior_mean": prior_mean, "prior_var": prior_var, "y": y[day * 10:(day + 1) * 10]})
        log_evidence += result.log_evidence  # log p(y_day | y_before)
        posterior = result.marginal("mu")
        prior_mean, prior_var = float(posterior.mean), float(posterior.var)
    with fg.Model() as batch:
        mu = Normal("mu", mean=0.0, var=5.0)
        Normal("y", mean=mu, var=1.0, observed=y)
    everything = fg.infer(batch)
    assert prior_mean == pytest.approx(float(everything.marginal("mu").mean), rel=1e-12)
    assert prior_var == pytest.approx(float(everything.marginal("mu").var), rel=1e-12)
    assert log_evidence == pytest.approx(everything.log_evidence, rel=1e-12)
