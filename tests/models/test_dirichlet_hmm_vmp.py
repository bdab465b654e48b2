"""HMM with a MatrixDirichlet transition matrix learnt by structured VMP.

Factorisation at every transition node: q(out, in) q(matrix), i.e. the
states keep their chain structure and only the matrix is separated:
q(s_0..s_T-1) q(A). The reference below is the textbook variational Bayes
EM for HMMs, written independently of the engine: forward-backward with
Ã = exp E[log A], then q(A) = MatrixDirichlet(alpha0 + Σ_t E[s_t s_{t-1}ᵀ]).
Its free energy, for q(s) the forward-backward posterior under Ã, is

    F(q(A)) = KL(q(A) || p(A)) - log Σ_paths π0[s_0] Π_t Ã[s_t, s_{t-1}] Π_t B[y_t, s_t].

The engine updates the matrix message of each transition node in turn (each
one sees q(A) with the messages before it already updated), so its
iterates differ from the reference's batch update; the fixed point, and
the free energy there, are the same.
"""
import numpy as np
import pytest
from scipy.special import digamma, gammaln

import fgraph as fg
from fgraph.nodes import Categorical, MatrixDirichlet, Transition


def build(initial, alpha0, emission, labels):
    with fg.Model() as model:
        MatrixDirichlet("A", alpha0)
        states = [Categorical("s0", initial)]
        for t in range(1, len(labels)):
            states.append(Transition(f"s{t}", states[-1], model["A"]))
        for t, label in enumerate(labels):
            Transition(f"y{t}", states[t], emission, observed=label)
    constraints = {"factorization": {f"s{t}": [("out", "in"), ("matrix",)] for t in range(1, len(labels))}}
    return model, constraints


# ------------------------------------------------------------------ reference
def log_beta_columns(alpha):
    return np.sum(gammaln(alpha), axis=0) - gammaln(np.sum(alpha, axis=0))


def kl_matrix_dirichlet(alpha, alpha0):
    """KL(MatrixDirichlet(alpha) || MatrixDirichlet(alpha0)), a sum of Dirichlet KLs over columns."""
    mean_log = digamma(alpha) - digamma(np.sum(alpha, axis=0))
    return float(np.sum(log_beta_columns(alpha0) - log_beta_columns(alpha)) + np.sum((alpha - alpha0) * mean_log))


def forward_backward(initial, a_tilde, emission, labels):
    """Scaled forward-backward; returns log Z, state marginals (T, K) and Σ_t E[s_t s_{t-1}ᵀ] (K, K)."""
    length, num_states = len(labels), len(initial)
    likelihood = emission[labels]  # (T, K)
    forward, scale = np.zeros((length, num_states)), np.zeros(length)
    backward = np.ones((length, num_states))
    forward[0] = initial * likelihood[0]
    scale[0] = forward[0].sum()
    forward[0] /= scale[0]
    for t in range(1, length):
        forward[t] = (a_tilde @ forward[t - 1]) * likelihood[t]
        scale[t] = forward[t].sum()
        forward[t] /= scale[t]
    for t in range(length - 2, -1, -1):
        backward[t] = a_tilde.T @ (likelihood[t + 1] * backward[t + 1]) / scale[t + 1]
    counts = sum(a_tilde * np.outer(likelihood[t] * backward[t], forward[t - 1]) / scale[t] for t in range(1, length))
    return np.log(scale).sum(), forward * backward, counts


def reference_free_energy(alpha, alpha0, initial, emission, labels):
    a_tilde = np.exp(digamma(alpha) - digamma(np.sum(alpha, axis=0)))
    log_z, _, _ = forward_backward(initial, a_tilde, emission, labels)
    return kl_matrix_dirichlet(alpha, alpha0) - log_z


def reference_vb(initial, alpha0, emission, labels, iterations):
    alpha = alpha0.copy()
    for _ in range(iterations):
        a_tilde = np.exp(digamma(alpha) - digamma(np.sum(alpha, axis=0)))
        _, marginals, counts = forward_backward(initial, a_tilde, emission, labels)
        alpha = alpha0 + counts
    a_tilde = np.exp(digamma(alpha) - digamma(np.sum(alpha, axis=0)))
    _, marginals, _ = forward_backward(initial, a_tilde, emission, labels)
    return alpha, marginals, reference_free_energy(alpha, alpha0, initial, emission, labels)


# ------------------------------------------------------------------ tiny case
TINY_INITIAL = np.array([0.6, 0.4])
TINY_ALPHA0 = np.array([[2.0, 1.0], [1.0, 3.0]])
TINY_EMISSION = np.array([[0.8, 0.3], [0.2, 0.7]])
TINY_LABELS = np.array([0, 0, 1, 1])


def test_tiny_case_matches_the_reference_fixed_point():
    """A fixed number of sweeps, not ``tol=``: near the fixed point the free energy is flat to second order in q(A),
    so a change of F below 1e-14 leaves q(A) about 1e-9 from it."""
    model, constraints = build(TINY_INITIAL, TINY_ALPHA0, TINY_EMISSION, TINY_LABELS)
    result = fg.infer(model, algorithm="vmp", constraints=constraints, init={"A": fg.MatrixDirichlet(TINY_ALPHA0)},
                      iterations=100)
    alpha, marginals, free_energy = reference_vb(TINY_INITIAL, TINY_ALPHA0, TINY_EMISSION, TINY_LABELS, 200)
    np.testing.assert_allclose(result.marginal("A").alpha, alpha, rtol=1e-10)
    for t in range(len(TINY_LABELS)):
        np.testing.assert_allclose(result.marginal(f"s{t}").probabilities, marginals[t], rtol=0, atol=1e-10)
    np.testing.assert_allclose(result.free_energy[-1], free_energy, rtol=1e-10)


def test_free_energy_is_the_reference_bound_at_every_iteration():
    """After a forward-backward pass under the current q(A), the engine's Bethe free energy is F(q(A)) exactly.

    The default schedule ends a sweep with the backward pass interleaved with the
    matrix updates, so its forward messages still use the previous Ã; repeating
    the forward and backward passes at the end of the sweep makes the beliefs
    consistent with the q(A) the sweep produced.
    """
    model, constraints = build(TINY_INITIAL, TINY_ALPHA0, TINY_EMISSION, TINY_LABELS)
    init = {"A": fg.MatrixDirichlet(TINY_ALPHA0)}
    plan = fg.compile(model, algorithm="vmp", constraints=constraints, init=init)
    length = len(TINY_LABELS)
    schedule = plan.schedule.pairs()
    schedule += [(f"s{t}", "out") for t in range(1, length)] + [(f"s{t}", "in") for t in range(length - 1, 0, -1)]
    plan = fg.compile(model, algorithm="vmp", constraints=constraints, init=init, schedule=schedule)
    matrices = []
    result = fg.run(plan, iterations=8,
                    callback=lambda iteration, result: matrices.append(result.marginal("A").alpha.copy()))
    expected = [reference_free_energy(alpha, TINY_ALPHA0, TINY_INITIAL, TINY_EMISSION, TINY_LABELS) for alpha in matrices]
    np.testing.assert_allclose(result.free_energy, expected, rtol=1e-12)
    assert not np.allclose(matrices[0], matrices[-1])  # q(A) did move


# ------------------------------------------------------------------ larger cases
def random_case(seed, num_states=3, num_symbols=3, length=15):
    rng = np.random.default_rng(seed)
    initial = rng.dirichlet(np.ones(num_states))
    emission = rng.dirichlet(np.ones(num_symbols), num_states).T
    alpha0 = rng.uniform(0.5, 2.0, (num_states, num_states))
    labels = rng.integers(0, num_symbols, length)
    return initial, alpha0, emission, labels


@pytest.mark.parametrize("seed", [0, 1])
def test_free_energy_never_increases(seed):
    initial, alpha0, emission, labels = random_case(seed)
    model, constraints = build(initial, alpha0, emission, labels)
    result = fg.infer(model, algorithm="vmp", constraints=constraints, init={"A": fg.MatrixDirichlet(alpha0)},
                      iterations=30)
    free_energy = np.array(result.free_energy)
    assert np.all(np.diff(free_energy) <= 1e-9 * np.abs(free_energy[1:])), np.diff(free_energy)
    # the first value is already that of a state with an updated q(A): the run descends from the prior's bound
    start = reference_free_energy(alpha0, alpha0, initial, emission, labels)
    assert free_energy[0] < start and free_energy[-1] < start - 1.0


def test_larger_case_reaches_the_reference_fixed_point():
    initial, alpha0, emission, labels = random_case(0)
    model, constraints = build(initial, alpha0, emission, labels)
    result = fg.infer(model, algorithm="vmp", constraints=constraints, init={"A": fg.MatrixDirichlet(alpha0)},
                      iterations=150)  # a fixed number of sweeps: see the tiny case
    alpha, marginals, free_energy = reference_vb(initial, alpha0, emission, labels, 300)
    np.testing.assert_allclose(result.marginal("A").alpha, alpha, rtol=1e-9)
    np.testing.assert_allclose(result.marginal("s7").probabilities, marginals[7], rtol=0, atol=1e-9)
    np.testing.assert_allclose(result.free_energy[-1], free_energy, rtol=1e-10)


def test_mean_field_is_monotone_and_looser_than_structured():
    """Fully factorised q(s_0) .. q(s_T-1) q(A) (mean-field rules): F never increases, and it stays above
    the structured free energy, whose family of q contains the mean-field one."""
    initial, alpha0, emission, labels = random_case(0, length=10)
    model, constraints = build(initial, alpha0, emission, labels)
    init = {"A": fg.MatrixDirichlet(alpha0)}
    init.update({f"s{t}": fg.Categorical(np.full(3, 1.0 / 3.0)) for t in range(len(labels))})
    mean_field = np.array(fg.infer(model, algorithm="vmp", init=init, iterations=30).free_energy)
    assert np.all(np.diff(mean_field) <= 1e-9 * np.abs(mean_field[1:])), np.diff(mean_field)
    structured = fg.infer(model, algorithm="vmp", constraints=constraints, init={"A": fg.MatrixDirichlet(alpha0)},
                          iterations=30).free_energy
    assert structured[-1] < mean_field[-1]
