"""A Gauss–Markov chain with a random gain a ~ N and process precision w ~ Gamma under VMP (VB for AR(1)).

Model: a ~ N(μ_a, v_a), w ~ Gamma(α, β), x_1 ~ N(m₀, v₀), x_t ~ N(a x_{t−1}, 1/w), y_t ~ N(x_t, r), with the
structured mean field q(x_1..x_T) q(a) q(w) (Beal 2003, ch. 5; Barber 2012, §24.5). The references:

* :func:`reference_vb`, a hand-written numpy VB: a Kalman filter and RTS smoother on floats with gain E[a],
  process variance 1/E[w] and the extra precision E[w] Var[a] on x_1..x_{T−1} (the Var[a] term of
  E[log N(x_t | a x_{t−1}, 1/w)]), lag-one covariances J_{t−1} Var[x_t] from the RTS gain, then the closed-form
  updates of q(a) and q(w), in the order of the engine's schedule; its free energy is
  E_q[−log p(y, x, a, w)] − H[q(x)] − H[q(a)] − H[q(w)], with H[q(x)] from the pair and single marginals of the
  Markov chain q(x). The node must equal it at every iteration (marginals, q(a), q(w), free energy), also when
  the schedule updates q(a) and q(w) after q(x) (the free energy then reads q(x) made from the old moments).
* the unrolled graph, for a fixed gain and a random precision: ``Multiply`` (sum-product) then a
  ``NormalMeanPrecision`` per step with the structured cluster (out, mean) and the precision w of its own,
  whose fixed point is the same structured mean field. The unrolled schedule updates q(w) after each step's
  message (each step then reads q(w) with the earlier steps' new messages in it), a different coordinate
  order from the compound node's (all transitions at once), so the two agree at the fixed point, not sweep
  by sweep; the numpy VB is the sweep-by-sweep reference. A random gain has no unrolled equivalent among the
  existing nodes: a random number times a random state is the ``Product`` node, deterministic and
  sum-product only (its messages are mixtures, not the VMP message exp E_q(a)[log f]), and no node has a
  variational factor N(out | a · in, 1/w) with both a and in random.
"""
import numpy as np
import pytest
from scipy.special import digamma, gammaln

import fgraph as fg
from fgraph.nodes import Gamma, GaussMarkovChain, Multiply, Normal
from fgraph.nodes.multiplication import Multiplication
from fgraph.nodes.normal import NormalMeanPrecision

M0, V0 = 0.1, 2.0  # x_1 ~ N(m₀, v₀)
GAIN_PRIOR = (0.0, 1.0)  # a ~ N(mean, var)
PRECISION_PRIOR = (2.0, 1.0)  # w ~ Gamma(shape, rate)
START_PRECISION = (3.0, 2.0)  # the initial q(w)
START_GAIN = (0.5, 0.3)  # the initial q(a) (when the schedule reads it before updating it)
NOISE_VAR = 0.25


def simulate(steps, rho=0.8, sigma2=0.36, noise_var=NOISE_VAR, seed=1, chains=()):
    rng = np.random.default_rng(seed)
    x = np.zeros(chains + (steps,))
    x[..., 0] = rng.normal(0.0, 1.0, size=chains)
    for t in range(1, steps):
        x[..., t] = rho * x[..., t - 1] + rng.normal(0.0, np.sqrt(sigma2), size=chains)
    return x + rng.normal(0.0, np.sqrt(noise_var), size=x.shape)


# ------------------------------------------------------------------ the hand-written VB (numpy, floats)
def smoother(gain, noise_var, extra, y, r):
    """Kalman filter and RTS smoother of x_1 ~ N(m₀, v₀), x_t ~ N(gain x_{t−1}, noise_var), y_t ~ N(x_t, r), times
    exp(−extra_t x_t² / 2): smoothed means, variances and Cov(x_{t−1}, x_t) = J_{t−1} Var[x_t]."""
    steps = len(y)
    filtered_mean, filtered_var = np.empty(steps), np.empty(steps)
    mean, var = M0, V0
    for t in range(steps):
        precision = 1.0 / var + 1.0 / r + extra[t]
        mean, var = (mean / var + y[t] / r) / precision, 1.0 / precision
        filtered_mean[t], filtered_var[t] = mean, var
        mean, var = gain * mean, gain * gain * var + noise_var
    means, variances, cross = filtered_mean.copy(), filtered_var.copy(), np.zeros(steps - 1)
    for t in range(steps - 2, -1, -1):
        predicted = gain * gain * filtered_var[t] + noise_var
        smoother_gain = filtered_var[t] * gain / predicted
        means[t] = filtered_mean[t] + smoother_gain * (means[t + 1] - gain * filtered_mean[t])
        variances[t] = filtered_var[t] + smoother_gain**2 * (variances[t + 1] - predicted)
        cross[t] = smoother_gain * variances[t + 1]
    return means, variances, cross


def reference_vb(y, sweeps, states_first=False, gain=None, precision=None, drop_correction=False):
    """Structured VB for the chains ``y`` (chains, T) sharing a and w; ``gain``/``precision`` a number fixes it.

    ``states_first=False``: each sweep updates q(a), q(w), then q(x) (the engine's default schedule, which starts
    from a factorised q(x) = N(0, 1) per step); ``True``: q(x) first, from START_GAIN and START_PRECISION.
    Returns one dict per sweep: the marginals and the free energy of the state after it.
    """
    y = np.atleast_2d(y)
    chains, steps = y.shape
    states = [(np.zeros(steps), np.ones(steps), np.zeros(steps - 1)) for _ in range(chains)]
    gain_mean, gain_var = START_GAIN if gain is None else (gain, 0.0)
    shape, rate = START_PRECISION if precision is None else (np.inf, np.inf)
    history = []
    for _ in range(sweeps):
        if states_first:
            states = update_states(y, gain_mean, gain_var, shape, rate, precision, drop_correction)
        e_w = precision if precision is not None else shape / rate
        previous = sum(np.sum(v[:-1] + m[:-1] ** 2) for m, v, _ in states)
        cross = sum(np.sum(m[1:] * m[:-1] + c) for m, _, c in states)
        current = sum(np.sum(v[1:] + m[1:] ** 2) for m, v, _ in states)
        if gain is None:
            posterior_precision = 1.0 / GAIN_PRIOR[1] + e_w * previous
            gain_mean = (GAIN_PRIOR[0] / GAIN_PRIOR[1] + e_w * cross) / posterior_precision
            gain_var = 1.0 / posterior_precision
        if precision is None:
            squares = current - 2.0 * gain_mean * cross + (gain_mean**2 + gain_var) * previous
            shape = PRECISION_PRIOR[0] + 0.5 * chains * (steps - 1)
            rate = PRECISION_PRIOR[1] + 0.5 * squares
        if not states_first:
            states = update_states(y, gain_mean, gain_var, shape, rate, precision, drop_correction)
        history.append({"states": states, "gain": (gain_mean, gain_var), "precision": (shape, rate),
                        "free_energy": free_energy(y, states, gain_mean, gain_var, shape, rate, gain, precision)})
    return history


def update_states(y, gain_mean, gain_var, shape, rate, precision, drop_correction=False):
    e_w = precision if precision is not None else shape / rate
    extra = np.zeros(y.shape[-1])
    extra[:-1] = 0.0 if drop_correction else e_w * gain_var
    return [smoother(gain_mean, 1.0 / e_w, extra, chain, NOISE_VAR) for chain in y]


def free_energy(y, states, gain_mean, gain_var, shape, rate, gain, precision):
    """−ELBO of q(x) q(a) q(w): E_q[−log p(y, x | a, w)] − H[q(x)] + KL(q(a) ‖ p(a)) + KL(q(w) ‖ p(w))."""
    steps = y.shape[-1]
    if precision is None:
        e_w, e_log_w = shape / rate, digamma(shape) - np.log(rate)
    else:
        e_w, e_log_w = precision, np.log(precision)
    total = 0.0
    for chain, (m, v, c) in zip(y, states):
        second = v + m**2
        total += 0.5 * (np.log(2 * np.pi * V0) + (second[0] - 2 * M0 * m[0] + M0**2) / V0)
        squares = (np.sum(second[1:]) - 2 * gain_mean * np.sum(m[1:] * m[:-1] + c)
                   + (gain_mean**2 + gain_var) * np.sum(second[:-1]))
        total += 0.5 * (steps - 1) * (np.log(2 * np.pi) - e_log_w) + 0.5 * e_w * squares
        total += np.sum(0.5 * (np.log(2 * np.pi * NOISE_VAR) + ((chain - m) ** 2 + v) / NOISE_VAR))
        # H[q(x)] of a Markov chain: Σ_t H[q(x_{t−1}, x_t)] − Σ_{1<t<T} H[q(x_t)]
        pairs = v[:-1] * v[1:] - c**2
        total -= (np.sum(np.log(2 * np.pi * np.e) + 0.5 * np.log(pairs))
                  - np.sum(0.5 * np.log(2 * np.pi * np.e * v[1:-1])))
    if gain is None:
        mean, var = GAIN_PRIOR
        total += 0.5 * (np.log(var / gain_var) + (gain_var + (gain_mean - mean) ** 2) / var - 1.0)
    if precision is None:
        a0, b0 = PRECISION_PRIOR
        total += ((shape - a0) * digamma(shape) - gammaln(shape) + gammaln(a0) + a0 * (np.log(rate) - np.log(b0))
                  + shape * (b0 - rate) / rate)
    return total


# ------------------------------------------------------------------ the models
def compound(y, gain="random", precision="random", chains=()):
    """The chain node with a random gain (``"random"``, a variable shared by the chains, ``"per chain"``) or a
    number, and likewise the precision."""
    steps = np.shape(y)[-1]
    with fg.Model() as model:
        parameters = {}
        per_chain = chains + (1,)
        if gain in ("random", "per chain"):
            parameters["gain"] = Normal("a", mean=GAIN_PRIOR[0], var=GAIN_PRIOR[1],
                                        batch_shape=per_chain if gain == "per chain" else None)
        else:
            parameters["gain"] = gain
        if precision in ("random", "per chain"):
            parameters["precision"] = Gamma("w", shape=PRECISION_PRIOR[0], rate=PRECISION_PRIOR[1],
                                            batch_shape=per_chain if precision == "per chain" else None)
        else:
            parameters["precision"] = precision
        x = GaussMarkovChain("x", initial_mean=M0, initial_var=V0, length=steps, batch_shape=chains, **parameters)
        Normal("y", mean=x, var=NOISE_VAR, observed=y)
    return model


def start(y, gain=True):
    init = {"x": fg.NormalMeanVariance(np.zeros(np.shape(y)), np.ones(np.shape(y))), "w": fg.Gamma(*START_PRECISION)}
    if gain:
        init["a"] = fg.NormalMeanVariance(*START_GAIN)
    return init


STATES_FIRST = [("x", "moments"), ("y", "mean"), ("x", "out"), ("a", "out"), ("x", "gain"), ("w", "out"),
                ("x", "precision")]


def assert_equal_to_reference(result, history, gain=True, precision=True, chains=None):
    np.testing.assert_allclose(result.free_energy, [h["free_energy"] for h in history], rtol=1e-10, atol=1e-8)
    last = history[-1]
    means = np.array([m for m, _, _ in last["states"]])
    variances = np.array([v for _, v, _ in last["states"]])
    q_x = result.marginal("x")
    np.testing.assert_allclose(np.reshape(q_x.mean, means.shape), means, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(np.reshape(q_x.var, variances.shape), variances, rtol=1e-10, atol=1e-12)
    if gain:
        q_a = result.marginal("a")
        np.testing.assert_allclose([q_a.mean, q_a.var], last["gain"], rtol=1e-10, atol=1e-12)
    if precision:
        q_w = result.marginal("w")
        np.testing.assert_allclose([q_w.shape, q_w.rate], last["precision"], rtol=1e-10)


# ------------------------------------------------------------------ (2) the hand-written VB, every iteration
@pytest.mark.parametrize("steps", [2, 3, 25])
def test_random_gain_and_precision_equal_the_hand_written_vb_at_every_iteration(steps):
    y = simulate(steps)
    result = fg.infer(compound(y), algorithm="vmp", iterations=20, init=start(y, gain=False))
    assert_equal_to_reference(result, reference_vb(y, 20))


def test_states_updated_first_free_energy_reads_the_moments_the_states_were_made_from():
    """q(x) from the old q(a), q(w), then q(a), q(w) move on: the node's term adds U(q(x), q) − U(q(x), q′)."""
    y = simulate(25, seed=2)
    result = fg.infer(compound(y), algorithm="vmp", iterations=15, init=start(y), schedule=STATES_FIRST)
    assert_equal_to_reference(result, reference_vb(y, 15, states_first=True))


def test_a_fixed_precision_and_a_random_gain():
    y = simulate(20, seed=3)
    result = fg.infer(compound(y, precision=2.5), algorithm="vmp", iterations=15,
                      init={"x": start(y)["x"]})
    assert_equal_to_reference(result, reference_vb(y, 15, precision=2.5), precision=False)


def test_a_fixed_gain_and_a_random_precision():
    y = simulate(20, seed=4)
    result = fg.infer(compound(y, gain=0.8), algorithm="vmp", iterations=15, init=start(y, gain=False))
    assert_equal_to_reference(result, reference_vb(y, 15, gain=0.8), gain=False)


def test_chains_of_a_batch_share_the_gain_and_the_precision():
    """B chains, one a and one w: their messages are summed over the chains (the engine's plate reduction)."""
    y = simulate(15, seed=5, chains=(3,))
    result = fg.infer(compound(y, chains=(3,)), algorithm="vmp", iterations=12, init=start(y, gain=False))
    assert_equal_to_reference(result, reference_vb(y, 12))


def test_chains_with_a_gain_and_a_precision_each_are_separate_models():
    y = simulate(15, seed=6, chains=(3,))
    together = fg.infer(compound(y, gain="per chain", precision="per chain", chains=(3,)), algorithm="vmp",
                        iterations=12, init=start(y, gain=False))
    assert together.marginal("a").batch_shape == (3, 1)
    total = 0.0
    for chain in range(3):
        alone = fg.infer(compound(y[chain]), algorithm="vmp", iterations=12, init=start(y[chain], gain=False))
        total += np.array(alone.free_energy)
        np.testing.assert_allclose(together.marginal("x").mean[chain], alone.marginal("x").mean, rtol=1e-10)
        np.testing.assert_allclose(together.marginal("a").mean[chain, 0], alone.marginal("a").mean, rtol=1e-10)
        np.testing.assert_allclose(together.marginal("w").rate[chain, 0], alone.marginal("w").rate, rtol=1e-10)
    np.testing.assert_allclose(together.free_energy, total, rtol=1e-10)


# ------------------------------------------------------------------ (1) the unrolled graph
def unrolled(y, gain):
    """x_1 ~ N(m₀, v₀); m_t = gain · x_{t−1} (Multiply); x_t ~ N(m_t, 1/w) (NormalMeanPrecision); y_t ~ N(x_t, r)."""
    with fg.Model() as model:
        w = Gamma("w", shape=PRECISION_PRIOR[0], rate=PRECISION_PRIOR[1])
        state = Normal("x0", mean=M0, var=V0)
        Normal("y0", mean=state, var=NOISE_VAR, observed=y[0])
        for t in range(1, len(y)):
            state = Normal(f"x{t}", mean=Multiply(f"m{t}", gain, state), precision=w)
            Normal(f"y{t}", mean=state, var=NOISE_VAR, observed=y[t])
    return model


UNROLLED = {"factorization": {Multiplication: "bp", NormalMeanPrecision: [("out", "mean"), ("precision",)]}}


def test_a_random_precision_equals_the_unrolled_structured_graph_at_its_fixed_point():
    y = simulate(12, seed=7)
    steps = len(y)
    compound_result = fg.infer(compound(y, gain=0.8), algorithm="vmp", iterations=300, init=start(y, gain=False))
    init = {f"x{t}": fg.NormalMeanVariance(0.0, 1.0) for t in range(steps)}
    init.update({f"m{t}": fg.NormalMeanVariance(0.0, 1.0) for t in range(1, steps)})
    init["w"] = fg.Gamma(*START_PRECISION)
    unrolled_result = fg.infer(unrolled(y, 0.8), algorithm="vmp", iterations=300, constraints=UNROLLED, init=init)
    assert compound_result.free_energy[-1] == pytest.approx(unrolled_result.free_energy[-1], abs=1e-8)
    q_x, q_w = compound_result.marginal("x"), compound_result.marginal("w")
    np.testing.assert_allclose(q_x.mean, [unrolled_result.marginal(f"x{t}").mean for t in range(steps)], atol=1e-8)
    np.testing.assert_allclose(q_x.var, [unrolled_result.marginal(f"x{t}").var for t in range(steps)], atol=1e-8)
    np.testing.assert_allclose([q_w.shape, q_w.rate], [unrolled_result.marginal("w").shape,
                                                        unrolled_result.marginal("w").rate], rtol=1e-8)
    assert np.all(np.diff(unrolled_result.free_energy) <= 1e-9)


# ------------------------------------------------------------------ (3) the free energy never increases
@pytest.mark.parametrize("schedule", [None, STATES_FIRST])
def test_the_free_energy_never_increases(schedule):
    y = simulate(200, rho=0.95, sigma2=0.1, noise_var=NOISE_VAR, seed=8)
    result = fg.infer(compound(y), algorithm="vmp", iterations=60, init=start(y), schedule=schedule)
    changes = np.diff(result.free_energy)
    assert np.all(changes <= 1e-9 * np.abs(result.free_energy[1:]))
    assert changes[0] < -1.0  # it moves


# ------------------------------------------------------------------ (4) recovery of ρ and σ²
def test_a_long_series_recovers_the_coefficient_and_the_innovation_variance():
    """T = 5000, ρ = 0.9, σ² = 0.2, observed with noise variance 0.05: E[a] and E[1/w] within 4 posterior std."""
    rho, sigma2, steps = 0.9, 0.2, 5000
    rng = np.random.default_rng(2024)
    x = np.zeros(steps)
    x[0] = rng.normal(0.0, np.sqrt(sigma2 / (1 - rho**2)))
    for t in range(1, steps):
        x[t] = rho * x[t - 1] + rng.normal(0.0, np.sqrt(sigma2))
    y = x + rng.normal(0.0, np.sqrt(0.05), steps)
    with fg.Model() as model:
        a = Normal("a", mean=0.0, var=1.0)
        w = Gamma("w", shape=1.0, rate=1.0)
        s = GaussMarkovChain("x", a, precision=w, initial_mean=0.0, initial_var=1.0, length=steps)
        Normal("y", mean=s, var=0.05, observed=y)
    result = fg.infer(model, algorithm="vmp", iterations=200, tol=1e-9,
                      init={"x": fg.NormalMeanVariance(y, np.full(steps, 0.05)), "w": fg.Gamma(1.0, 1.0)})
    q_a, q_w = result.marginal("a"), result.marginal("w")
    assert abs(q_a.mean - rho) < 4 * np.sqrt(q_a.var)
    variance_mean = q_w.rate / (q_w.shape - 1)  # E[σ²] = E[1/w] under q(w)
    variance_std = variance_mean / np.sqrt(q_w.shape - 2)
    assert abs(variance_mean - sigma2) < 4 * variance_std
    assert np.all(np.diff(result.free_energy) <= 1e-9 * np.abs(result.free_energy[1:]))


# ------------------------------------------------------------------ errors
def test_belief_propagation_is_refused_with_the_node_named():
    y = simulate(10)
    with pytest.raises(fg.ModelError, match="node 'x'.*algorithm='vmp'"):
        fg.infer(compound(y), algorithm="bp", init=start(y))


def test_a_causal_chain_with_random_parameters_is_refused():
    with fg.Model():
        a = Normal("a", mean=0.0, var=1.0)
        with pytest.raises(fg.ModelError, match="'x'.*causal=True needs a fixed gain and precision"):
            GaussMarkovChain("x", a, 0.5, 0.0, 1.0, 10, causal=True)


@pytest.mark.parametrize("arguments, match", [
    ({"var": 0.5, "precision": 2.0}, "exactly one of var= .* or precision="),
    ({}, "exactly one of var= .* or precision="),
    ({"var": "w"}, "var must be a number"),
    ({"precision": -1.0}, "precision must be a finite number > 0"),
    ({"precision": "w", "length": 1}, "length >= 2"),
    ({"precision": "w4"}, "precision 'w4' must be a scalar variable of batch \\(\\) .* or \\(1,\\)"),
])
def test_bad_parameters_are_model_errors_naming_the_chain(arguments, match):
    with fg.Model():
        variables = {"w": Gamma("w", shape=1.0, rate=1.0), "w4": Gamma("w4", shape=1.0, rate=1.0, batch_shape=(4,))}
        arguments = {key: variables.get(value, value) if isinstance(value, str) else value
                     for key, value in arguments.items()}
        arguments.setdefault("length", 5)
        with pytest.raises(fg.ModelError, match=f"GaussMarkovChain 'x'.*{match}"):
            GaussMarkovChain("x", 0.9, initial_mean=0.0, initial_var=1.0, **arguments)


def test_a_fixed_precision_is_the_fixed_chain():
    """precision=<number> is var=1/precision: the fixed-number node, unchanged."""
    y = simulate(20, seed=9)
    by_precision = fg.infer(compound(y, gain=0.8, precision=4.0))
    with fg.Model() as model:
        x = GaussMarkovChain("x", 0.8, 0.25, M0, V0, 20)
        Normal("y", mean=x, var=NOISE_VAR, observed=y)
    by_var = fg.infer(model)
    assert by_precision.log_evidence == pytest.approx(by_var.log_evidence, rel=1e-14)
    assert type(model.nodes[0]).__name__ == "GaussMarkovChainNode"
