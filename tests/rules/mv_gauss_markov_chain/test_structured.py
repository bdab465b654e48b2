"""Table test of the chain with a random transition (F, λ): messages to ``out`` and ``pairs`` and the joint marginal,
against dense Gaussian algebra on the stacked states.

With q(F, λ) = MNG(M, V, α, β) (ℓ = E[λ] = α/β), exp E_q[log f] is an unnormalised Gaussian in x_1..x_T written
out here term by term:

    log N(x_1 | m₀, P₀) + Σ_{t≥2} [½ Σ_i E[log λ_i] − (d/2) log 2π
        − ½ (x_t − c_t)ᵀ L (x_t − c_t) + (x_t − c_t)ᵀ L M x_{t−1} − ½ x_{t−1}ᵀ (Σ_i (V + ℓ_i m_i m_iᵀ)) x_{t−1}],

L = diag(ℓ) (E[Λ] = L, E[ΛF] = L M, E[FᵀΛF] = Σ_i E[λ_i f_i f_iᵀ]); precision Λ_f, linear term h_f, constant c_f.
The incoming μ_s = exp(κ_s) h(x) exp(ξ_sᵀx − ½ xᵀW_s x) add a block-diagonal information. The message to x_t is
the integral of the product over every other state (Schur complement, dense log-determinants); the joint's
dense inverse gives the two-slice marginals and its integral log Z'. No recursion.
"""
import numpy as np
import pytest
from scipy.special import digamma

import fgraph as fg
from fgraph import registry
from fgraph.families import (GaussianLikelihood, MvNormalMeanCovariance, MvNormalWeightedMeanPrecision,
                             NormalMeanVariance, PointMass, Uninformative)
from fgraph.families.matrix_normal_gamma import MatrixNormalGamma
from fgraph.nodes.gauss_markov_chain import VariationalGaussMarkovChainNode
from fgraph.nodes.mv_gauss_markov_chain import VariationalMvGaussMarkovChainNode
from tests.rules.tables import message

LOG_2PI = np.log(2 * np.pi)
M0, P0 = np.array([0.3, -0.2]), np.array([[2.0, 0.4], [0.4, 1.0]])
Q_FV = MatrixNormalGamma(np.array([[0.9, 0.2], [-0.1, 0.8]]), np.array([[0.4, 0.1], [0.1, 0.3]]),
                         np.array([3.0, 2.0]), np.array([1.5, 0.5]))


def expected_factor(q, steps, offset=None, m0=M0, P0=P0):
    """(Λ_f (T d, T d), h_f (T d,), c_f) of exp E_q[log f], written from E[Λ], E[ΛF], E[FᵀΛF] of q(F, λ)."""
    M, V = q.matrix_mean, q.column_covariance
    ell = q.shape / q.rate
    log_ell = digamma(q.shape) - np.log(q.rate)
    d = len(ell)
    L = np.diag(ell)
    FtLF = sum(V + ell[i] * np.outer(M[i], M[i]) for i in range(d))
    c = np.zeros((steps, d)) if offset is None else offset
    precision = np.zeros((steps, d, steps, d))
    linear = np.zeros((steps, d))
    P0_inv = np.linalg.inv(P0)
    precision[0, :, 0, :] += P0_inv
    linear[0] += P0_inv @ m0
    constant = -0.5 * (d * LOG_2PI + np.linalg.slogdet(P0)[1] + m0 @ P0_inv @ m0)
    for t in range(1, steps):
        precision[t, :, t, :] += L
        precision[t - 1, :, t - 1, :] += FtLF
        precision[t, :, t - 1, :] -= L @ M
        precision[t - 1, :, t, :] -= (L @ M).T
        linear[t] += L @ c[t]
        linear[t - 1] -= M.T @ L @ c[t]
        constant += 0.5 * np.sum(log_ell) - 0.5 * d * LOG_2PI - 0.5 * c[t] @ L @ c[t]
    return precision.reshape(steps * d, steps * d), linear.reshape(-1), constant


def gaussian_integral(precision, linear, constant):
    """log ∫ exp(−½ zᵀΛz + hᵀz + c) dz."""
    return constant + 0.5 * linear @ np.linalg.solve(precision, linear) + 0.5 * len(linear) * LOG_2PI \
        - 0.5 * np.linalg.slogdet(precision)[1]


def dense(q, xi, W, kappa, offset=None, m0=M0, P0=P0):
    """Messages to every x_t (mean, cov, log-scale), the pair marginals (means (T − 1, 2d), covariances) and log Z'."""
    steps, d = xi.shape
    Lf, hf, cf = expected_factor(q, steps, offset, m0, P0)
    incoming = np.zeros((steps, d, steps, d))
    for s in range(steps):
        incoming[s, :, s, :] = W[s]
    incoming = incoming.reshape(steps * d, steps * d)
    total_constant = cf + np.sum(kappa) - 0.5 * steps * d * LOG_2PI
    joint_precision, joint_linear = Lf + incoming, hf + xi.reshape(-1)
    log_z = gaussian_integral(joint_precision, joint_linear, total_constant)
    cov = np.linalg.inv(joint_precision)
    mean = cov @ joint_linear
    pair_means = np.array([mean[(t - 1) * d:(t + 1) * d] for t in range(1, steps)])
    pair_covs = np.array([cov[(t - 1) * d:(t + 1) * d, (t - 1) * d:(t + 1) * d] for t in range(1, steps)])
    means, covs, scales = [], [], []
    for t in range(steps):
        block = slice(t * d, (t + 1) * d)
        others = np.r_[0:t * d, (t + 1) * d:steps * d]
        precision = Lf + incoming
        linear = hf + xi.reshape(-1)
        precision[block, block] -= W[t]
        linear[block] -= xi[t]
        constant = total_constant - kappa[t] + 0.5 * d * LOG_2PI
        Loo, Lto = precision[np.ix_(others, others)], precision[block][:, others]
        message_precision = precision[block, block] - Lto @ np.linalg.solve(Loo, Lto.T)
        message_linear = linear[block] - Lto @ np.linalg.solve(Loo, linear[others])
        message_constant = constant + 0.5 * linear[others] @ np.linalg.solve(Loo, linear[others]) \
            + 0.5 * len(others) * LOG_2PI - 0.5 * np.linalg.slogdet(Loo)[1]
        message_cov = np.linalg.inv(message_precision)
        means.append(message_cov @ message_linear)
        covs.append(message_cov)
        scales.append(gaussian_integral(message_precision, message_linear, message_constant))
    return np.array(means), np.array(covs), np.array(scales), pair_means, pair_covs, log_z


def incoming(rng, steps, d=2, rank=None):
    """Incoming messages: proper normals, or rank-deficient likelihoods (a partial observation) of rank ``rank``."""
    xi = rng.normal(size=(steps, d))
    roots = rng.normal(size=(steps, d, rank or d))
    W = roots @ np.swapaxes(roots, -1, -2) + (0.0 if rank else 0.3 * np.eye(d))
    kappa = rng.normal(size=steps)
    return xi, W, kappa


def as_message(xi, W, kappa):
    """exp(κ) h(x) exp(ξᵀx − ½ xᵀWx) as a family member (a normal, or a GaussianLikelihood when W is singular)."""
    if np.any(np.linalg.matrix_rank(W) < W.shape[-1]):
        return GaussianLikelihood(xi, W, kappa)
    result = MvNormalWeightedMeanPrecision(xi, W, check=False)
    return result.with_log_scale(kappa + result.log_partition())


def joint_marginal(inputs, **attributes):
    """The marginal rule of the cluster (out, pairs), resolved through the registry as the compiler does (the
    helper of ``tests/rules/tables.py`` makes nodes without a batch, which a chain cannot be)."""
    node = VariationalMvGaussMarkovChainNode("node", attributes.pop("batch_shape"), **attributes)
    families = {name: type(value) for name, value in inputs.items()}
    bound = registry.resolve(registry.MARGINAL, VariationalMvGaussMarkovChainNode, ("out", "pairs"), families,
                             "table test")
    result = bound(inputs, node)
    assert isinstance(result, bound.output_family)
    return result


def inputs(m_out, q=Q_FV):
    return {"m_out": m_out, "m_pairs": Uninformative(m_out.batch_shape, (2 * m_out.event_shape[0],)),
            "q_transition": q}


@pytest.mark.parametrize("steps", [2, 3, 6])
@pytest.mark.parametrize("rank", [None, 1])
def test_out_and_pairs(steps, rank):
    rng = np.random.default_rng(steps + 10 * (rank or 0))
    xi, W, kappa = incoming(rng, steps, rank=rank)
    m_out = as_message(xi, W, kappa)
    np.testing.assert_allclose(m_out.log_coefficient(), kappa, rtol=1e-12)  # the messages the dense algebra reads
    means, covs, scales, pair_means, pair_covs, log_z = dense(Q_FV, xi, W, kappa)
    node = dict(batch_shape=(steps,), initial_mean=M0, initial_cov=P0)
    out = message(VariationalMvGaussMarkovChainNode, "out", inputs(m_out), **node)
    np.testing.assert_allclose(out.mean, means, rtol=1e-10, atol=1e-11)
    np.testing.assert_allclose(out.cov, covs, rtol=1e-10, atol=1e-11)
    np.testing.assert_allclose(out.log_scale, scales, rtol=1e-10, atol=1e-10)
    pairs = message(VariationalMvGaussMarkovChainNode, "pairs", dict(inputs(m_out), m_pairs=Uninformative()),
                    **node)
    np.testing.assert_allclose(pairs.mean[1:], pair_means, rtol=1e-10, atol=1e-11)
    np.testing.assert_allclose(pairs.cov[1:], pair_covs, rtol=1e-10, atol=1e-11)
    np.testing.assert_allclose(pairs.log_scale, log_z, rtol=1e-11)
    # element 1 (no predecessor): q(x_1) and an independent copy of it
    single = pair_covs[0][:2, :2]
    np.testing.assert_allclose(pairs.cov[0], np.block([[single, np.zeros((2, 2))], [np.zeros((2, 2)), single]]),
                               rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(pairs.mean[0], np.tile(pair_means[0][:2], 2), rtol=1e-10, atol=1e-12)
    joint = joint_marginal(inputs(m_out), **node)
    np.testing.assert_allclose(joint.cov[1:], pair_covs, rtol=1e-10, atol=1e-11)
    np.testing.assert_allclose(joint.mean[1:], pair_means, rtol=1e-10, atol=1e-11)


def test_a_control_input():
    rng = np.random.default_rng(4)
    steps = 5
    xi, W, kappa = incoming(rng, steps)
    offset = np.vstack([np.zeros((1, 2)), rng.normal(size=(steps - 1, 2))])
    means, _, scales, pair_means, _, _ = dense(Q_FV, xi, W, kappa, offset=offset)
    node = dict(batch_shape=(steps,), initial_mean=M0, initial_cov=P0, offset=offset)
    out = message(VariationalMvGaussMarkovChainNode, "out", inputs(as_message(xi, W, kappa)), **node)
    np.testing.assert_allclose(out.mean, means, rtol=1e-10, atol=1e-11)
    np.testing.assert_allclose(out.log_scale, scales, rtol=1e-10, atol=1e-10)
    pairs = message(VariationalMvGaussMarkovChainNode, "pairs", inputs(as_message(xi, W, kappa)), **node)
    np.testing.assert_allclose(pairs.mean[1:], pair_means, rtol=1e-10, atol=1e-11)


@pytest.mark.parametrize("per_chain", [False, True])
def test_chains_of_a_batch(per_chain):
    """Batch (2, 4) with a start each: one (F, λ) for both chains, or one each (batch (2, 1)); chain by chain dense."""
    rng = np.random.default_rng(5)
    parts = [incoming(rng, 4) for _ in range(2)]
    xi, W, kappa = (np.stack(p) for p in zip(*parts))
    starts = (np.array([M0, -M0]), np.array([P0, 0.5 * np.eye(2)]))
    second = MatrixNormalGamma(np.array([[0.5, -0.3], [0.2, 1.1]]), np.eye(2) * 0.2, np.array([5.0, 1.5]),
                               np.array([2.0, 1.0]))
    if per_chain:
        q = MatrixNormalGamma(*(np.stack([a, b])[:, None] for a, b in zip(
            (Q_FV.matrix_mean, Q_FV.column_covariance, Q_FV.shape, Q_FV.rate),
            (second.matrix_mean, second.column_covariance, second.shape, second.rate))))
        chain_qs, batches = [Q_FV, second], {"transition_batch": (2, 1)}
    else:
        q, chain_qs, batches = Q_FV, [Q_FV, Q_FV], {}
    node = dict(batch_shape=(2, 4), initial_mean=starts[0], initial_cov=starts[1], **batches)
    out = message(VariationalMvGaussMarkovChainNode, "out", inputs(as_message(xi, W, kappa), q), **node)
    pairs = message(VariationalMvGaussMarkovChainNode, "pairs", inputs(as_message(xi, W, kappa), q), **node)
    for chain in range(2):
        means, covs, scales, _, pair_covs, log_z = dense(
            chain_qs[chain], xi[chain], W[chain], kappa[chain], m0=starts[0][chain], P0=starts[1][chain])
        np.testing.assert_allclose(out.mean[chain], means, rtol=1e-10, atol=1e-11)
        np.testing.assert_allclose(out.cov[chain], covs, rtol=1e-10, atol=1e-11)
        np.testing.assert_allclose(out.log_scale[chain], scales, rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(pairs.cov[chain, 1:], pair_covs, rtol=1e-10, atol=1e-11)
        np.testing.assert_allclose(pairs.log_scale[chain], log_z, rtol=1e-11)


def test_one_dimensional_states_give_the_scalar_chains_message():
    """d = 1: the message of the scalar chain with a random gain and precision whose moments
    (E[a], Var[a], E[w], E[log w]) are (M, V/ℓ, ℓ, E[log λ]): the same F̄, Q̄ and extra precision ℓ Var[a] = V."""
    rng = np.random.default_rng(6)
    steps = 300
    means, variances, scales = rng.normal(size=steps), rng.uniform(0.1, 2.0, size=steps), rng.normal(size=steps)
    q = MatrixNormalGamma([[0.85]], [[0.05]], [4.0], [1.5])
    ell, log_ell = 4.0 / 1.5, digamma(4.0) - np.log(1.5)
    vector = message(VariationalMvGaussMarkovChainNode, "out",
                     inputs(MvNormalMeanCovariance(means[:, None], variances[:, None, None], log_scale=scales), q),
                     batch_shape=(steps,), initial_mean=[0.1], initial_cov=[[2.0]])
    scalar = message(VariationalGaussMarkovChainNode, "out",
                     {"m_out": NormalMeanVariance(means, variances, log_scale=scales),
                      "q_moments": PointMass(np.array([0.85, 0.05 / ell, ell, log_ell]), 1)},
                     batch_shape=(steps,), initial_mean=0.1, initial_var=2.0)
    np.testing.assert_allclose(vector.mean[:, 0], scalar.mean, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(vector.cov[:, 0, 0], scalar.var, rtol=1e-10)
    np.testing.assert_allclose(vector.log_scale, scalar.log_scale, rtol=1e-10)


@pytest.mark.parametrize("interface", ["out", "pairs"])
def test_the_sum_product_messages_are_errors_that_say_vmp(interface):
    messages = {"m_out": MvNormalMeanCovariance(np.zeros((3, 2)), np.eye(2)), "m_pairs": Uninformative((3,), (4,)),
                "m_transition": Q_FV}
    with pytest.raises(fg.ModelError, match=f"node 'node'.*message to '{interface}'.*algorithm='vmp'"):
        message(VariationalMvGaussMarkovChainNode, interface, messages, batch_shape=(3,), initial_mean=M0,
                initial_cov=P0)
