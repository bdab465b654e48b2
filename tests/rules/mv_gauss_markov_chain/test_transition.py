"""Table test of the chain's message to a random transition (F, λ): the matrix-normal–gamma regression message.

From the two-slice marginals q(x_{t−1}, x_t) (the joint marginal of ``(out, pairs)``), with S_xx = Σ_t E[x_{t−1}
x_{t−1}ᵀ], S_yx = Σ_t E[(x_t − c_t) x_{t−1}ᵀ], S_yy = Σ_t E[(x_t − c_t)(x_t − c_t)ᵀ] over t = 2..T and n = T − 1:

    η = (−½ S_xx, S_yx, −½ diag S_yy, ½ n),     κ = (d/2)(d − n) log 2π.

Checked against sums written out from the pair moments; for an observed path against LinearExperts' message to its
parameters (one expert, input x_{t−1}, output x_t, no intercept), the form the message shares; for d = 1
against the scalar chain's messages to its gain and precision (whose lag-one moments come from its own closed
form, the covariance of a tridiagonal precision); chains sharing (F, λ) or each their own.
"""
import numpy as np
import pytest
from scipy.special import digamma

import fgraph as fg
from fgraph.families import MvNormalMeanCovariance, NormalMeanVariance, PointMass, Uninformative
from fgraph.families.gamma import Gamma
from fgraph.families.matrix_normal_gamma import MatrixNormalGamma, MatrixNormalGammaLikelihood
from fgraph.nodes.gauss_markov_chain import VariationalGaussMarkovChainNode
from fgraph.nodes.linear_experts import LinearExpertsNode
from fgraph.nodes.mv_gauss_markov_chain import VariationalMvGaussMarkovChainNode
from tests.rules.mv_gauss_markov_chain.test_structured import Q_FV, as_message, incoming, inputs
from tests.rules.tables import message

LOG_2PI = np.log(2 * np.pi)
M0, P0 = np.array([0.3, -0.2]), np.array([[2.0, 0.4], [0.4, 1.0]])


def random_pairs(rng, chains, steps, d=2):
    """Two-slice marginals of batch chains + (T,), event (2d,): any symmetric positive definite pair covariances."""
    roots = rng.normal(size=chains + (steps, 2 * d, 2 * d))
    return MvNormalMeanCovariance(rng.normal(size=chains + (steps, 2 * d)),
                                  roots @ np.swapaxes(roots, -1, -2) + 0.1 * np.eye(2 * d))


def written_out(pairs, offset=None, d=2):
    """(η, κ) of one chain, by a loop over its steps."""
    steps = pairs.mean.shape[0]
    c = np.zeros((steps, d)) if offset is None else offset
    S_xx, S_yx, S_yy = np.zeros((d, d)), np.zeros((d, d)), np.zeros((d, d))
    for t in range(1, steps):
        mean, cov = pairs.mean[t], pairs.cov[t]
        previous, current = mean[:d], mean[d:] - c[t]
        S_xx += cov[:d, :d] + np.outer(previous, previous)
        S_yx += cov[d:, :d] + np.outer(current, previous)
        S_yy += cov[d:, d:] + np.outer(current, current)
    n = steps - 1
    return (-0.5 * S_xx, S_yx, -0.5 * np.diag(S_yy), np.full(d, 0.5 * n)), 0.5 * d * (d - n) * LOG_2PI


def assert_likelihood(result, eta, coefficient):
    assert isinstance(result, MatrixNormalGammaLikelihood)
    for actual, wanted in zip(result.natural_parameters(), eta):
        np.testing.assert_allclose(actual, wanted, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(result.log_scale, coefficient, rtol=1e-12)


def transition_message(pairs, **node):
    node = dict(initial_mean=M0, initial_cov=P0) | node
    return message(VariationalMvGaussMarkovChainNode, "transition",
                   {"m_transition": Q_FV, "q_out_pairs": pairs}, **node)


@pytest.mark.parametrize("steps", [2, 5])
def test_sums_of_the_pair_moments(steps):
    pairs = random_pairs(np.random.default_rng(steps), (), steps)
    result = transition_message(pairs, batch_shape=(steps,))
    assert result.batch_shape == ()
    assert_likelihood(result, *written_out(pairs))


def test_a_control_input_is_subtracted_from_the_target():
    rng = np.random.default_rng(2)
    pairs = random_pairs(rng, (), 6)
    offset = np.vstack([np.zeros((1, 2)), rng.normal(size=(5, 2))])
    assert_likelihood(transition_message(pairs, batch_shape=(6,), offset=offset), *written_out(pairs, offset))


def test_chains_sum_into_a_shared_transition_and_not_into_their_own():
    pairs = random_pairs(np.random.default_rng(3), (3,), 4)
    shared = transition_message(pairs, batch_shape=(3, 4))
    own = transition_message(pairs, batch_shape=(3, 4), transition_batch=(3, 1))
    assert shared.batch_shape == () and own.batch_shape == (3, 1)
    singles = [written_out(MvNormalMeanCovariance(pairs.mean[b], pairs.cov[b])) for b in range(3)]
    for j in range(4):
        np.testing.assert_allclose(own.natural_parameters()[j][:, 0], [s[0][j] for s in singles], rtol=1e-12)
        np.testing.assert_allclose(shared.natural_parameters()[j], sum(s[0][j] for s in singles), rtol=1e-12)
    np.testing.assert_allclose(own.log_scale[:, 0], [s[1] for s in singles], rtol=1e-12)
    # the shared coefficient counts 3 (T − 1) transitions: (d/2)(d − 9) log 2π
    np.testing.assert_allclose(shared.log_scale, 0.5 * 2 * (2 - 9) * LOG_2PI, rtol=1e-12)


def test_an_observed_path_sends_the_linear_experts_message():
    """A point-mass path: the message of one linear expert (no intercept) regressing x_2..x_T on x_1..x_{T−1},
    i.e. Π_t N(x_t | F x_{t−1}, diag(λ)⁻¹) itself, coefficient included."""
    steps = 7
    path = np.random.default_rng(4).normal(size=(steps, 2))
    pairs = MvNormalMeanCovariance(np.concatenate([np.vstack([path[:1], path[:-1]]), path], axis=-1),
                                   np.zeros((steps, 4, 4)), check=False)
    chain = transition_message(pairs, batch_shape=(steps,))
    expert = message(LinearExpertsNode, "parameters",
                     {"q_out": PointMass(path[1:], 1), "q_switch": PointMass(np.ones((steps - 1, 1)), 1),
                      "q_input": PointMass(path[:-1], 1)}, batch_shape=(1, steps - 1), plate_shape=(steps - 1,),
                     intercept=False)
    assert_likelihood(chain, tuple(e[0, 0] for e in expert.natural_parameters()), expert.log_scale[0, 0])
    # and the factor itself at a point (F, λ): exp(κ) h exp(⟨η, T(F, λ)⟩) = Π_t N(x_t | F x_{t−1}, diag(λ)⁻¹)
    F, lam = np.array([[0.7, 0.2], [-0.1, 0.9]]), np.array([1.5, 0.6])
    statistics = (np.einsum("i,ij,ik->jk", lam, F, F), lam[:, None] * F, lam, np.log(lam))
    log_factor = chain.log_scale - 2 * LOG_2PI + MatrixNormalGamma.inner(chain.natural_parameters(), statistics)
    residual = path[1:] - path[:-1] @ F.T
    expected = np.sum(-0.5 * LOG_2PI + 0.5 * np.log(lam) - 0.5 * lam * residual**2)
    np.testing.assert_allclose(log_factor, expected, rtol=1e-12)


def test_one_dimensional_states_have_the_scalar_chains_statistics():
    """d = 1: the chain posterior under MNG(M, V, α, β) has the tridiagonal precision of the scalar chain with
    E[a] = M, E[w] = ℓ (off-diagonal κ = −ℓ M), so the scalar chain's messages to its gain and precision, read off
    the same marginals with its own closed-form lag-one covariance, carry the same sums: precision E[w] S_xx and
    weighted mean E[w] S_xy to the gain, rate ½ (S_yy − 2 E[a] S_xy + E[a²] S_xx) to the precision."""
    rng = np.random.default_rng(5)
    steps = 12
    xi, W, kappa = incoming(rng, steps, d=1)
    q = MatrixNormalGamma([[0.7]], [[0.1]], [3.0], [2.0])
    ell = 1.5
    node = dict(batch_shape=(steps,), initial_mean=[0.1], initial_cov=[[2.0]])
    m_out = as_message(xi, W, kappa)
    pairs = message(VariationalMvGaussMarkovChainNode, "pairs", inputs(m_out, q), **node)
    chain = message(VariationalMvGaussMarkovChainNode, "transition", {"m_transition": q, "q_out_pairs": pairs},
                    **node)
    minus_half_xx, xy, minus_half_yy, _ = (np.ravel(e)[0] for e in chain.natural_parameters())
    # the scalar chain reads the marginals q(x_t) and the moments (E[a], Var[a], E[w], E[log w])
    marginals = NormalMeanVariance(pairs.mean[:, 1], pairs.cov[:, 1, 1])
    moments = PointMass(np.array([0.7, 0.1 / ell, ell, digamma(3.0) - np.log(2.0)]), 1)
    q_gain, q_precision = NormalMeanVariance(0.7, 0.1 / ell), Gamma(3.0, 2.0)
    gain = message(VariationalGaussMarkovChainNode, "gain", {"m_gain": NormalMeanVariance(0.0, 1.0), "q_out": marginals,
                   "q_precision": q_precision, "q_moments": moments}, batch_shape=(steps,), initial_var=2.0)
    precision = message(VariationalGaussMarkovChainNode, "precision",
                        {"m_precision": Gamma(1.0, 1.0), "q_out": marginals, "q_gain": q_gain, "q_moments": moments},
                        batch_shape=(steps,), initial_var=2.0)
    np.testing.assert_allclose(gain.precision, ell * (-2.0 * minus_half_xx), rtol=1e-11)
    np.testing.assert_allclose(gain.weighted_mean, ell * xy, rtol=1e-11)
    second_gain = 0.7**2 + 0.1 / ell
    np.testing.assert_allclose(precision.rate, -minus_half_yy - 0.7 * xy - second_gain * minus_half_xx, rtol=1e-11)
    np.testing.assert_allclose(precision.shape, 1.0 + 0.5 * (steps - 1), rtol=1e-12)


def test_the_sum_product_message_is_an_error_that_says_vmp():
    messages = {"m_transition": Q_FV, "m_out": MvNormalMeanCovariance(np.zeros((3, 2)), np.eye(2)),
                "m_pairs": Uninformative((3,), (4,))}
    with pytest.raises(fg.ModelError, match="node 'node'.*message to 'transition'.*algorithm='vmp'"):
        message(VariationalMvGaussMarkovChainNode, "transition", messages, batch_shape=(3,), initial_mean=M0,
                initial_cov=P0)
