"""Table tests of the Markov-chain rules with a random transition matrix (structured VMP), against enumeration.

With Ã = exp E_q[log A] (the matrix itself for a point mass) and incoming messages exp(s_t) p_t(z_t),
every quantity is a sum over the K^T paths of the weight

    w(z) = π(z_1) Π_{t≥2} Ã[z_t, z_{t−1}] Π_t exp(s_t) p_t(z_t),

written below as a loop over the paths, never with the forward–backward recursion:

* the message to z_t: Σ over paths with z_t = k of w(z) / (exp(s_t) p_t(k)), normalised, its log-mass the
  log-scale;
* the message to ``pairs``: the two-slice marginals ξ_t[i, j] = Σ_{z_t = i, z_{t−1} = j} w(z) / Σ w for
  t ≥ 2, ``diag q(z_1)`` at t = 1, with log-scale log Σ w at every step; the joint marginal of the cluster
  ``(out, pairs)`` is the same table.

Hand value used in the cases: α = [[1, 2], [1, 1]] gives E[log A] = [[ψ(1) − ψ(2), ψ(2) − ψ(3)],
[ψ(1) − ψ(2), ψ(1) − ψ(3)]] = [[−1, −1/2], [−1, −3/2]], so Ã = [[e⁻¹, e^−½], [e⁻¹, e^−3/2]] (columns
summing to 0.74 and 0.83: sub-stochastic).
"""
import itertools

import numpy as np
import pytest
from scipy.special import digamma

from fgraph import registry
from fgraph.errors import ModelError
from fgraph.families import Categorical, Contingency, MatrixDirichlet, PointMass
from fgraph.families.pointmass import Uninformative
from fgraph.nodes.markov_chain import MarkovChainNode
from tests.rules.tables import message

ALPHA = np.array([[1.0, 2.0], [1.0, 1.0]])
A_TILDE = np.exp([[-1.0, -0.5], [-1.0, -1.5]])


def enumerated(initial, matrix, probabilities, scales):
    """(message probabilities (T, K), message log-scales (T,), two-slice tables (T, K, K), log Σ w) of one chain."""
    steps, count = probabilities.shape
    totals, pairs, mass = np.zeros((steps, count)), np.zeros((steps, count, count)), 0.0
    for path in itertools.product(range(count), repeat=steps):
        weight = initial[path[0]] * np.prod([matrix[path[u], path[u - 1]] for u in range(1, steps)])
        emitted = [np.exp(scales[s]) * probabilities[s, path[s]] for s in range(steps)]
        full = weight * np.prod(emitted)
        mass += full
        for t in range(steps):
            totals[t, path[t]] += weight * np.prod(emitted[:t] + emitted[t + 1:])
            if t == 0:
                pairs[0, path[0], path[0]] += full
            else:
                pairs[t, path[t], path[t - 1]] += full
    per_step = totals.sum(axis=1)
    return totals / per_step[:, None], np.log(per_step), pairs / mass, np.log(mass)


def inputs_for(probabilities, scales, q_transition):
    batch = scales.shape
    count = probabilities.shape[-1]
    return {"m_out": Categorical(probabilities, log_scale=scales), "m_pairs": Uninformative(batch, (count, count)),
            "q_transition": q_transition}


def joint_marginal(inputs, batch_shape, initial):
    """The marginal rule of the cluster (out, pairs), resolved through the registry as the compiler does."""
    node = MarkovChainNode("node", batch_shape, initial=initial)
    families = {name: type(value) for name, value in inputs.items()}
    bound = registry.resolve(registry.MARGINAL, MarkovChainNode, ("out", "pairs"), families, "table test")
    result = bound(inputs, node)
    assert isinstance(result, bound.output_family)
    return result


RNG = np.random.default_rng(5)
CASES = [
    # (initial, q(A), the matrix Ã it stands for, probabilities (T, K), scales (T,))
    pytest.param(np.array([0.7, 0.3]), MatrixDirichlet(ALPHA), A_TILDE,
                 np.array([[0.5, 0.5], [0.9, 0.1], [0.2, 0.8]]), np.array([0.0, -1.0, 0.5]), id="dirichlet-two-states"),
    pytest.param(np.array([0.7, 0.3]), MatrixDirichlet(ALPHA), A_TILDE, np.array([[0.3, 0.7]]), np.array([0.4]),
                 id="one-step"),
    pytest.param(np.array([1.0, 0.0]), MatrixDirichlet(ALPHA), A_TILDE, np.array([[0.6, 0.4], [0.1, 0.9]]),
                 np.array([0.0, 0.0]), id="two-steps-certain-start"),
    pytest.param(np.array([0.2, 0.5, 0.3]), PointMass(np.array([[0.6, 0.0, 0.1], [0.3, 0.7, 0.2], [0.1, 0.3, 0.7]]), 2),
                 np.array([[0.6, 0.0, 0.1], [0.3, 0.7, 0.2], [0.1, 0.3, 0.7]]),
                 np.array([[0.1, 0.6, 0.3], [0.0, 0.5, 0.5], [0.3, 0.3, 0.4], [1.0, 0.0, 0.0]]),
                 np.array([0.2, 0.0, -3.0, 1.0]), id="known-matrix-with-zeros"),
    pytest.param(np.array([0.1, 0.2, 0.3, 0.4]), MatrixDirichlet(RNG.uniform(0.5, 3.0, (4, 4))), None,
                 RNG.dirichlet(np.ones(4), 5), RNG.normal(size=5), id="four-states-dirichlet"),
]


def tilde(q_transition, given):
    """Ã of a case: given by hand, or ψ(α) − ψ(Σ_i α) written out for a random α."""
    if given is not None:
        return given
    alpha = q_transition.alpha
    return np.exp(digamma(alpha) - digamma(alpha.sum(axis=0)))


@pytest.mark.parametrize("initial, q_transition, matrix, probabilities, scales", CASES)
def test_out(initial, q_transition, matrix, probabilities, scales):
    result = message(MarkovChainNode, "out", inputs_for(probabilities, scales, q_transition),
                     batch_shape=scales.shape, initial=initial)
    expected_p, expected_scale, _, _ = enumerated(initial, tilde(q_transition, matrix), probabilities, scales)
    assert isinstance(result, Categorical) and result.batch_shape == scales.shape
    np.testing.assert_allclose(result.probabilities, expected_p, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(result.log_scale, expected_scale, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("initial, q_transition, matrix, probabilities, scales", CASES)
def test_pairs_and_the_joint_marginal(initial, q_transition, matrix, probabilities, scales):
    _, _, expected_pairs, log_mass = enumerated(initial, tilde(q_transition, matrix), probabilities, scales)
    inputs = inputs_for(probabilities, scales, q_transition)
    result = message(MarkovChainNode, "pairs", inputs, batch_shape=scales.shape, initial=initial)
    assert isinstance(result, Contingency) and result.batch_shape == scales.shape
    np.testing.assert_allclose(result.probabilities, expected_pairs, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(result.log_scale, np.full(scales.shape, log_mass), rtol=1e-12, atol=1e-12)
    joint = joint_marginal(inputs, scales.shape, initial)
    np.testing.assert_allclose(joint.probabilities, expected_pairs, rtol=1e-12, atol=1e-15)


def test_the_hand_case_of_two_steps():
    """T = 2, π = (1, 0), p_1 = (0.6, 0.4), p_2 = (0.1, 0.9): every path starts in state 0, w(0, i) = 0.6 e⁻¹ p_2(i).

    To z_1: (1, 0) with mass Σ_i Ã[i, 0] p_2(i) = e⁻¹ (0.1 + 0.9) = e⁻¹. ξ_2[i, 0] = p_2(i), ξ_2[:, 1] = 0.
    """
    inputs = inputs_for(np.array([[0.6, 0.4], [0.1, 0.9]]), np.zeros(2), MatrixDirichlet(ALPHA))
    out = message(MarkovChainNode, "out", inputs, batch_shape=(2,), initial=np.array([1.0, 0.0]))
    np.testing.assert_allclose(out.probabilities[0], [1.0, 0.0], atol=1e-15)
    np.testing.assert_allclose(out.log_scale[0], -1.0, rtol=1e-14)
    # to z_2: π-weighted column 0 of Ã after p_1(0) = 0.6: e⁻¹ (1, 1) · 0.6, normalised (½, ½), log 1.2 e⁻¹
    np.testing.assert_allclose(out.probabilities[1], [0.5, 0.5], atol=1e-15)
    np.testing.assert_allclose(out.log_scale[1], np.log(1.2) - 1.0, rtol=1e-14)
    pairs = message(MarkovChainNode, "pairs", inputs, batch_shape=(2,), initial=np.array([1.0, 0.0]))
    np.testing.assert_allclose(pairs.probabilities, [[[1.0, 0.0], [0.0, 0.0]], [[0.1, 0.0], [0.9, 0.0]]], atol=1e-15)
    np.testing.assert_allclose(pairs.log_scale, np.log(0.6) - 1.0, rtol=1e-14)  # Σ w = 0.6 e⁻¹ (0.1 + 0.9)


@pytest.mark.parametrize("per_chain", [False, True], ids=["shared-matrix", "matrix-per-chain"])
def test_a_batch_of_chains(per_chain):
    """Batch (3, T) with a start per chain; q(A) shared (batch ()) or one per chain (batch (3, 1)): every chain
    against its own enumeration."""
    rng = np.random.default_rng(8)
    steps = 4
    initial = rng.dirichlet(np.ones(3), size=3)
    alpha = rng.uniform(0.5, 3.0, (3, 1, 3, 3) if per_chain else (3, 3))
    probabilities = rng.dirichlet(np.ones(3), size=(3, steps))
    scales = rng.normal(size=(3, steps))
    inputs = inputs_for(probabilities, scales, MatrixDirichlet(alpha))
    out = message(MarkovChainNode, "out", inputs, batch_shape=(3, steps), initial=initial)
    pairs = message(MarkovChainNode, "pairs", inputs, batch_shape=(3, steps), initial=initial)
    joint = joint_marginal(inputs, (3, steps), initial)
    for chain in range(3):
        chain_alpha = alpha[chain, 0] if per_chain else alpha
        matrix = np.exp(digamma(chain_alpha) - digamma(chain_alpha.sum(axis=0)))
        expected_p, expected_scale, expected_pairs, log_mass = enumerated(initial[chain], matrix,
                                                                          probabilities[chain], scales[chain])
        np.testing.assert_allclose(out.probabilities[chain], expected_p, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(out.log_scale[chain], expected_scale, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(pairs.probabilities[chain], expected_pairs, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(pairs.log_scale[chain], log_mass, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(joint.probabilities[chain], expected_pairs, rtol=1e-12, atol=1e-15)


def test_a_long_chain_neither_underflows_nor_loses_its_scale():
    """T = 10⁴ with a sub-stochastic Ã whose columns are all c π: the weight of every path factorises, so
    log Σ w = log π·p_1 + Σ_{t≥2} (log c + log π·p_t) + Σ_t s_t, and every ξ_t = outer(q_t, q_{t−1}) with
    q_t ∝ π p_t (the states are independent)."""
    rng = np.random.default_rng(2)
    steps, prior, c = 10**4, np.array([0.3, 0.7]), 0.6
    probabilities = rng.dirichlet([0.5, 0.5], size=steps)
    scales = rng.normal(size=steps)
    q_transition = PointMass(c * np.column_stack([prior, prior]), 2)
    inputs = inputs_for(probabilities, scales, q_transition)
    pairs = message(MarkovChainNode, "pairs", inputs, batch_shape=(steps,), initial=prior)
    per_step = np.log(probabilities @ prior) + scales
    np.testing.assert_allclose(pairs.log_scale, per_step.sum() + (steps - 1) * np.log(c), rtol=1e-12)
    states = probabilities * prior / (probabilities @ prior)[:, None]
    np.testing.assert_allclose(pairs.probabilities[1:], states[1:, :, None] * states[:-1, None, :], rtol=0, atol=1e-12)
    out = message(MarkovChainNode, "out", inputs, batch_shape=(steps,), initial=prior)
    np.testing.assert_allclose(out.probabilities, np.broadcast_to(prior, (steps, 2)), rtol=0, atol=1e-12)
    np.testing.assert_allclose(out.log_scale + per_step, pairs.log_scale, rtol=1e-12)


@pytest.mark.parametrize("interface, others", [("out", ("m_pairs", "m_transition")),
                                               ("pairs", ("m_out", "m_transition"))])
def test_sum_product_is_refused(interface, others):
    """A "bp" cluster holding the random matrix: no rule computes it; the error says to use algorithm='vmp'."""
    inputs = {"m_out": Categorical(np.full((3, 2), 0.5)), "m_pairs": Uninformative((3,), (2, 2)),
              "m_transition": MatrixDirichlet(ALPHA)}
    with pytest.raises(ModelError, match="Use algorithm='vmp'"):
        message(MarkovChainNode, interface, inputs, batch_shape=(3,), initial=np.array([0.5, 0.5]))
