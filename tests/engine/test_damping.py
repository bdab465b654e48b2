"""Damping: each update mixes the natural parameters of the new and the previous message.

With damping d, an update replaces the outgoing message's natural parameters
η_old by (1 − d) η_new + d η_old (``fg.run(..., damping=d)``). At d = 0.3
the two weights differ, so the tests below see which message gets which
weight; a damped run takes another path to the same fixed point.
"""
import numpy as np
import pytest

import fgraph as fg
from fgraph.nodes import Gamma, Normal
from tests.graphs import loopy_gaussian_model

DAMPING = 0.3
M0, V0, A0, B0 = 0.0, 10.0, 3.0, 2.0


def normal_gamma(y):
    with fg.Model() as model:
        mu = Normal("mu", mean=M0, var=V0)
        tau = Gamma("tau", shape=A0, rate=B0)
        Normal("y", mean=mu, precision=tau, observed=y)
    return model


def data():
    return np.random.default_rng(0).normal(1.0, 0.5, size=10)


def hand_written_sweeps(y, damping):
    """Two VMP sweeps in the engine's order (mu's message, then tau's), the second damped, by hand.

    The message from the likelihood to mu is N(mu | ȳ, 1/(N E[τ])): natural parameters
    (E[τ] Σy, −N E[τ]/2); the message to tau is Gamma(1 + N/2, ½ Σ E[(y − mu)²]): natural
    parameters (N/2, −rate). Returns the damped messages' (precision, precision · mean) and rate,
    and the marginals (mean and variance of mu, shape and rate of tau) after the second sweep.
    """
    n, s1, s2 = len(y), y.sum(), np.sum(y**2)

    def to_mu(e_tau):
        return n * e_tau, e_tau * s1  # precision, precision · mean

    def to_tau_rate(mean, var):
        return 0.5 * (s2 - 2 * mean * s1 + n * (mean**2 + var))

    def q_mu(precision, weighted):
        total = 1 / V0 + precision
        return (M0 / V0 + weighted) / total, 1 / total

    # sweep 1: nothing to damp against yet; q(tau) starts at its prior
    p1, w1 = to_mu(A0 / B0)
    m1, v1 = q_mu(p1, w1)
    r1 = to_tau_rate(m1, v1)
    # sweep 2: each new message mixed with the one it replaces
    p_new, w_new = to_mu((A0 + n / 2) / (B0 + r1))
    p2, w2 = (1 - damping) * p_new + damping * p1, (1 - damping) * w_new + damping * w1
    m2, v2 = q_mu(p2, w2)
    r2 = (1 - damping) * to_tau_rate(m2, v2) + damping * r1
    return (p2, w2, r2), (m2, v2, A0 + n / 2, B0 + r2)


@pytest.mark.parametrize("collapse", [True, False])
def test_one_damped_update_is_the_convex_combination_of_natural_parameters(collapse):
    y = data()
    plan = fg.compile(normal_gamma(y), algorithm="vmp", init={"tau": fg.Gamma(A0, B0)}, collapse_plates=collapse)
    result = fg.run(plan, iterations=2, damping=DAMPING)
    (precision, weighted, rate), (mean, var, shape, tau_rate) = hand_written_sweeps(y, DAMPING)
    # the damped messages themselves (a plate's messages add up to the one the hand computation uses)
    to_mu, _ = result.messages("y", "mean")
    to_tau, _ = result.messages("y", "precision")
    np.testing.assert_allclose(np.sum(to_mu.natural_parameters()[0]), weighted, rtol=1e-12)
    np.testing.assert_allclose(np.sum(to_mu.natural_parameters()[1]), -precision / 2, rtol=1e-12)
    np.testing.assert_allclose(-np.sum(to_tau.natural_parameters()[1]), rate, rtol=1e-12)
    # and the marginals they make
    np.testing.assert_allclose([result.marginal("mu").mean, result.marginal("mu").var], [mean, var], rtol=1e-12)
    np.testing.assert_allclose([result.marginal("tau").shape, result.marginal("tau").rate], [shape, tau_rate],
                               rtol=1e-12)


def test_the_hand_written_sweeps_tell_the_weights_apart():
    """The reference itself: at d = 0.3, swapping the weights or not damping gives other numbers."""
    y = data()
    damped = np.array(hand_written_sweeps(y, DAMPING)[1])
    for other in (1 - DAMPING, 0.0):
        assert np.max(np.abs(np.array(hand_written_sweeps(y, other)[1]) / damped - 1)) > 1e-2


def test_a_damped_run_takes_another_path_to_the_same_fixed_point():
    y = data()
    plan = fg.compile(normal_gamma(y), algorithm="vmp", init={"tau": fg.Gamma(A0, B0)})
    plain = fg.run(plan, iterations=300)
    damped = fg.run(plan, iterations=300, damping=DAMPING)
    assert abs(damped.free_energy[1] - plain.free_energy[1]) > 1e-4
    assert damped.free_energy[-1] == pytest.approx(plain.free_energy[-1], rel=1e-12)
    for name, attributes in (("mu", ("mean", "var")), ("tau", ("shape", "rate"))):
        for attribute in attributes:
            assert getattr(damped.marginal(name), attribute) == pytest.approx(
                getattr(plain.marginal(name), attribute), rel=1e-10)


def test_damped_loopy_bp_moves_slower_and_converges_to_the_exact_means():
    y = 1.7
    # the joint precision of (x, z) from the four factors
    exact = np.linalg.solve(np.array([[1.0 + 1.0 + 0.5, -1.5], [-1.5, 1.5 + 1.0]]), np.array([0.0, y]))
    plan = fg.compile(loopy_gaussian_model(y), init={"x": fg.NormalMeanVariance(0.0, 1.0), "z": fg.NormalMeanVariance(0.0, 1.0)})
    traces = {}
    for damping in (0.0, DAMPING):
        trace = []
        result = fg.run(plan, iterations=200, damping=damping,
                        callback=lambda iteration, r, trace=trace: trace.append(r.marginal("x").mean))
        traces[damping] = np.array(trace)
        np.testing.assert_allclose([result.marginal("x").mean, result.marginal("z").mean], exact, rtol=1e-8)
    # the first sweep has nothing to damp against; from the second on the paths differ
    assert traces[0.0][0] == pytest.approx(traces[DAMPING][0], rel=1e-14)
    assert abs(traces[0.0][1] - traces[DAMPING][1]) > 1e-3
