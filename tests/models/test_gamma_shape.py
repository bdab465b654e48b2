"""A random gamma shape: a ~ Gamma(ALPHA0, BETA0), x_i ~ Gamma(a, b), i = 1..N, observed.

The shape is not conjugate: its posterior (and its mean-field marginal) is
∝ Gamma(a | ALPHA0, BETA0) exp(a (N E[log b] + Σ log x_i) - N log Γ(a)), a GammaShapeLikelihood
the engine normalises on its own quadrature grid. The references here do the same computations
with scipy's adaptive quadrature over a, written out by hand:

* b known: BP gives the exact evidence ∫ Gamma(a) Π Gamma(x_i | a, b) da and VMP is exact (-F = log evidence);
* b ~ Gamma(C0, D0): hand-written CAVI, q(a) by quadrature and q(b) = Gamma(C0 + N E[a], D0 + Σ x_i).
"""
import math

import numpy as np
import pytest
from scipy import integrate, optimize
from scipy.special import digamma, gammaln

import fgraph as fg
from fgraph.nodes import Gamma, InverseGamma as InverseGammaVariable

ALPHA0, BETA0, RATE, C0, D0 = 2.0, 1.0, 1.5, 3.0, 2.0


def data(n=20, seed=0):
    return np.random.default_rng(seed).gamma(3.0, 1.0 / 1.5, size=n)


def build(x, rate=RATE):
    """``rate`` a number (known) or None (a Gamma(C0, D0) prior)."""
    with fg.Model() as model:
        a = Gamma("a", shape=ALPHA0, rate=BETA0)
        b = Gamma("b", shape=C0, rate=D0) if rate is None else rate
        Gamma("x", shape=a, rate=b, observed=x)
    return model


def shape_integrals(slope, count):
    """For q(a) ∝ a^(ALPHA0-1) exp(-(BETA0 - slope) a - count log Γ(a)): log Z and E[a], E[log a], E[log Γ(a)].

    By adaptive quadrature over a, split at the mode and scaled by the log density there.
    """
    def log_density(a):
        return (ALPHA0 - 1.0) * math.log(a) - (BETA0 - slope) * a - count * math.lgamma(a)

    mode = optimize.minimize_scalar(lambda a: -log_density(a), bounds=(1e-8, 100.0), method="bounded",
                                    options={"xatol": 1e-12}).x
    top = log_density(mode)

    def integral(statistic):
        return sum(integrate.quad(lambda a: math.exp(log_density(a) - top) * statistic(a), low, high,
                                  epsabs=0.0, epsrel=1e-12, limit=400)[0] for low, high in ((0.0, mode), (mode, np.inf)))

    total = integral(lambda a: 1.0)
    return (top + math.log(total), integral(lambda a: a) / total, integral(math.log) / total,
            integral(math.lgamma) / total)


def prior_log_normaliser():
    return gammaln(ALPHA0) - ALPHA0 * np.log(BETA0)


def log_evidence_known_rate(x):
    """log ∫ Gamma(a | ALPHA0, BETA0) Π Gamma(x_i | a, RATE) da, with Π Gamma(x_i | a, b) =
    exp(a (N log b + Σ log x) - N log Γ(a) - Σ log x - b Σ x)."""
    n = len(x)
    log_z, *_ = shape_integrals(n * np.log(RATE) + np.sum(np.log(x)), n)
    return log_z - prior_log_normaliser() - np.sum(np.log(x)) - RATE * np.sum(x)


@pytest.mark.parametrize("n", [1, 20])
@pytest.mark.parametrize("collapse", [True, False])
def test_bp_evidence_and_posterior_mean_match_quadrature(n, collapse):
    x = data(n, seed=n)
    result = fg.run(fg.compile(build(x), algorithm="bp", collapse_plates=collapse))
    assert result.plan.exact
    np.testing.assert_allclose(result.log_evidence, log_evidence_known_rate(x), rtol=0.0, atol=1e-9)
    _, mean, mean_log, _ = shape_integrals(n * np.log(RATE) + np.sum(np.log(x)), n)
    q_a = result.marginal("a")
    assert type(q_a) is fg.GammaShapeLikelihood
    np.testing.assert_allclose([q_a.mean, q_a.mean_log], [mean, mean_log], rtol=1e-9)
    for value in result.evidence_per_variable().values():
        np.testing.assert_allclose(value, result.log_evidence, atol=1e-10)


def test_vmp_with_a_known_rate_is_exact():
    """q(a) is the exact posterior (a member of its family): -F is the log evidence from the first iteration."""
    x = data()
    result = fg.infer(build(x), algorithm="vmp", iterations=3)
    np.testing.assert_allclose(-np.array(result.free_energy), log_evidence_known_rate(x), rtol=0.0, atol=1e-9)


def reference_cavi(x, iterations):
    """Mean-field q(a) q(b) by hand: q(a) by quadrature, q(b) conjugate; returns (E[a], q(b) shape and rate, F).

    Each iteration updates q(a) from q(b), then q(b) from q(a), starting from q(b) = Gamma(C0, D0): the
    order of the engine's schedule, so the two agree iteration by iteration (a and b are strongly
    coupled, and the fixed point is approached slowly).
    """
    n, sum_log_x, sum_x = len(x), np.sum(np.log(x)), np.sum(x)
    shape_b, rate_b = C0, D0  # the same initial q(b) as the engine gets
    for _ in range(iterations):
        slope = n * (digamma(shape_b) - np.log(rate_b)) + sum_log_x  # q(a) ∝ prior · exp(slope a - n log Γ(a))
        log_z, mean_a, mean_log_a, mean_log_gamma_a = shape_integrals(slope, n)
        shape_b, rate_b = C0 + n * mean_a, D0 + sum_x
    mean_b, mean_log_b = shape_b / rate_b, digamma(shape_b) - np.log(rate_b)
    log_likelihood = mean_a * n * mean_log_b - n * mean_log_gamma_a + (mean_a - 1.0) * sum_log_x - mean_b * sum_x
    log_prior_a = -prior_log_normaliser() + (ALPHA0 - 1.0) * mean_log_a - BETA0 * mean_a
    log_prior_b = C0 * np.log(D0) - gammaln(C0) + (C0 - 1.0) * mean_log_b - D0 * mean_b
    # q(a) = exp((ALPHA0 - 1) log a - (BETA0 - slope) a - n log Γ(a) - log Z)
    entropy_a = log_z - ((ALPHA0 - 1.0) * mean_log_a - (BETA0 - slope) * mean_a - n * mean_log_gamma_a)
    entropy_b = shape_b - np.log(rate_b) + gammaln(shape_b) + (1.0 - shape_b) * digamma(shape_b)
    elbo = log_likelihood + log_prior_a + log_prior_b + entropy_a + entropy_b
    return mean_a, shape_b, rate_b, -elbo


@pytest.mark.parametrize("collapse", [True, False])
def test_vmp_with_a_random_rate_equals_hand_written_cavi(collapse):
    x = data()
    plan = fg.compile(build(x, rate=None), algorithm="vmp", init={"b": fg.Gamma(C0, D0)}, collapse_plates=collapse)
    pairs = list(plan.schedule.pairs())
    assert pairs.index(("x", "shape")) < pairs.index(("x", "rate"))  # q(a), then q(b), as in the reference
    result = fg.run(plan, iterations=30)
    mean_a, shape_b, rate_b, free_energy = reference_cavi(x, iterations=30)
    assert type(result.marginal("a")) is fg.GammaShapeLikelihood
    np.testing.assert_allclose(result.marginal("a").mean, mean_a, rtol=1e-9)
    np.testing.assert_allclose([result.marginal("b").shape, result.marginal("b").rate], [shape_b, rate_b], rtol=1e-9)
    np.testing.assert_allclose(result.free_energy[-1], free_energy, rtol=1e-10)


def test_free_energy_never_increases():
    x = data(n=30, seed=4)
    # a poor initial q(b) (mean 50 instead of about 1.5) makes the first iterations move a lot
    result = fg.infer(build(x, rate=None), algorithm="vmp", init={"b": fg.Gamma(50.0, 1.0)}, iterations=40)
    trace = np.array(result.free_energy)
    assert trace[0] - trace[-1] > 1.0
    assert np.all(np.diff(trace) <= 1e-10 * np.abs(trace[1:]))


def test_collapsed_plate_equals_expanded_plate():
    x = data(n=15, seed=2)
    results = [fg.run(fg.compile(build(x, rate=None), algorithm="vmp", init={"b": fg.Gamma(C0, D0)}, collapse_plates=c),
                      iterations=10) for c in (True, False)]
    np.testing.assert_allclose(results[0].marginal("a").mean, results[1].marginal("a").mean, rtol=1e-12)
    np.testing.assert_allclose(results[0].free_energy, results[1].free_energy, rtol=1e-11)


# ------------------------------------------------------------------ the shape of inverse-gamma data
def test_inverse_gamma_shape_bp_evidence_and_exact_vmp():
    """a ~ Gamma(ALPHA0, BETA0), v_i ~ InverseGamma(a, SCALE) observed: Π_i InverseGamma(v_i | a, SCALE) =
    exp(a (N log SCALE - Σ log v) - N log Γ(a) - Σ log v - SCALE Σ 1/v), integrated against the prior by quadrature."""
    scale = 2.0
    v = 1.0 / np.random.default_rng(3).gamma(3.0, 1.0 / scale, size=12)
    with fg.Model() as model:
        a = Gamma("a", shape=ALPHA0, rate=BETA0)
        InverseGammaVariable("v", shape=a, scale=scale, observed=v)
    n = len(v)
    log_z, mean_a, _, _ = shape_integrals(n * np.log(scale) - np.sum(np.log(v)), n)
    log_evidence = log_z - prior_log_normaliser() - np.sum(np.log(v)) - scale * np.sum(1.0 / v)
    result = fg.infer(model, algorithm="bp")
    np.testing.assert_allclose(result.log_evidence, log_evidence, rtol=0.0, atol=1e-9)
    np.testing.assert_allclose(result.marginal("a").mean, mean_a, rtol=1e-9)
    vmp = fg.infer(model, algorithm="vmp", iterations=2)
    np.testing.assert_allclose(-np.array(vmp.free_energy), log_evidence, rtol=0.0, atol=1e-9)
