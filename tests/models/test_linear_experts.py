"""LinearExperts in models: a mixture of linear regressions, Bayesian multivariate regression (K = 1), and
experts whose outputs are latent, each against a hand-written numpy computation of the same thing."""
import numpy as np
import pytest
from scipy.special import digamma, gammaln, logsumexp

import fgraph as fg
from fgraph.families.matrix_normal_gamma import MatrixNormalGamma as MatrixNormalGammaFamily
from nodes import Categorical, LinearExperts, MatrixNormalGamma, MvNormal
from tests.models.cmn_reference import CMNReference

LOG_2PI = np.log(2.0 * np.pi)
V0, A0, B0 = 10.0, 2.0, 1.0  # the priors of eq. (4) of the CMN paper


# ----------------------------------------------------------------------------- a hand-written VB
class MixtureOfRegressionsVB:
    """Mean-field VB for z_n ~ Cat(π), y_n | z_n = k ~ N(A_k x̃_n, Λ_k⁻¹), (A_k, λ_k) ~ MNG(0, v0 I, a0, b0).

    q(z) q(A, λ), one update each per iteration (q(z) first), written from the textbook formulas.
    """

    def __init__(self, x, y, prior_probabilities):
        self.xt = np.concatenate([x, np.ones((len(x), 1))], axis=1)
        self.y = y
        self.log_prior = np.log(prior_probabilities)
        self.D, self.h = self.xt.shape[1], y.shape[1]

    def expected_log_likelihood(self, q):
        """E_q(θ)[log N(y_n | A_k x̃_n, Λ_k⁻¹)], (N, K)."""
        M, V, a, b = q
        lam = a[:, None] / b
        log_lam = digamma(a)[:, None] - np.log(b)
        predicted = np.einsum("kid,nd->nki", M, self.xt)
        spread = np.einsum("nd,kde,ne->nk", self.xt, V, self.xt)
        return (0.5 * np.sum(log_lam - LOG_2PI, -1)[None]
                - 0.5 * np.sum(lam[None] * (self.y[:, None, :] - predicted) ** 2, -1) - 0.5 * self.h * spread)

    def update_z(self, q):
        logits = self.log_prior + self.expected_log_likelihood(q)
        return np.exp(logits - logsumexp(logits, axis=1, keepdims=True))

    def update_theta(self, gamma):
        """Eq. (28): V⁻¹ = I/v0 + Σ γ x̃x̃ᵀ, M = Σ γ y x̃ᵀ V, a = a0 + Σγ/2, b = b0 + ½(Σ γ y² − diag(M V⁻¹ Mᵀ))."""
        precision = np.eye(self.D) / V0 + np.einsum("nk,nd,ne->kde", gamma, self.xt, self.xt)
        V = np.linalg.inv(precision)
        M = np.einsum("nk,ni,nd->kid", gamma, self.y, self.xt) @ V
        a = A0 + 0.5 * gamma.sum(0)
        b = B0 + 0.5 * (np.einsum("nk,ni->ki", gamma, self.y ** 2) - np.einsum("kid,kde,kie->ki", M, precision, M))
        return M, V, a, b

    def elbo(self, gamma, q):
        M, V, a, b = q
        lam = a[:, None] / b
        expected = np.sum(gamma * (self.log_prior + self.expected_log_likelihood(q)))
        entropy = -np.sum(np.where(gamma > 0, gamma * np.log(gamma), 0.0))
        kl_gamma = ((a - A0) * digamma(a) - gammaln(a) + gammaln(A0))[:, None] + A0 * (np.log(b) - np.log(B0)) \
            + a[:, None] * (B0 - b) / b
        kl_rows = 0.5 * (np.trace(V, axis1=1, axis2=2)[:, None] / V0 + lam * np.sum(M ** 2, -1) / V0 - self.D
                         + self.D * np.log(V0) - np.linalg.slogdet(V)[1][:, None])
        return expected + entropy - np.sum(kl_gamma + kl_rows)


def data(seed, N=40, d=2, h=2, K=2):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(N, d))
    truth = rng.normal(size=(K, h, d + 1)) * 2.0
    labels = rng.integers(K, size=N)
    y = np.einsum("nid,nd->ni", truth[labels], np.concatenate([x, np.ones((N, 1))], 1)) + 0.3 * rng.normal(size=(N, h))
    return x, y, rng


def mixture_model(x, y, K, probabilities):
    N, d = x.shape
    h = y.shape[1]
    with fg.Model() as model:
        z = Categorical("z", p=probabilities, batch_shape=(N,))
        theta = MatrixNormalGamma("theta", np.zeros((K, 1, h, d + 1)), V0, A0, B0, batch_shape=(K, 1))
        LinearExperts("y", switch=z, input=x, parameters=theta, observed=y)
    return model


@pytest.mark.parametrize("K, h", [(2, 2), (3, 1)])
def test_mixture_of_regressions_equals_hand_written_vb(K, h):
    """Each sweep updates q(A, λ) from q(z), then q(z) from q(A, λ): the free energy after it is the
    negative ELBO of the hand-written VB at the same (q(z), q(A, λ)), iteration by iteration."""
    x, y, rng = data(1, h=h, K=K)
    N, d = x.shape
    probabilities = np.arange(1.0, K + 1.0) / np.sum(np.arange(1.0, K + 1.0))
    model = mixture_model(x, y, K, probabilities)
    gamma = rng.dirichlet(np.ones(K), size=N)
    iterations = 12
    # the parameters first, so that the switch's message (whose scale the node's free-energy term reads)
    # is always computed from the current q(A, λ)
    schedule = [("z", "out"), ("theta", "out"), ("y", "parameters"), ("y", "switch")]
    result = fg.infer(model, algorithm="vmp", iterations=iterations, schedule=schedule,
                      init={"z": fg.families.Categorical(gamma)})
    reference = MixtureOfRegressionsVB(x, y, probabilities)
    elbos = []
    for _ in range(iterations):
        q = reference.update_theta(gamma)
        gamma = reference.update_z(q)
        elbos.append(reference.elbo(gamma, q))
    np.testing.assert_allclose(result.free_energy, -np.array(elbos), rtol=1e-10)
    assert np.all(np.diff(result.free_energy) <= 1e-9)
    np.testing.assert_allclose(result.marginal("z").probabilities, gamma, rtol=1e-10, atol=1e-13)
    theta = result.marginal("theta")
    np.testing.assert_allclose(theta.matrix_mean[:, 0], q[0], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(theta.column_covariance[:, 0], q[1], rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(theta.shape[:, 0], np.broadcast_to(q[2][:, None], (K, h)), rtol=1e-12)
    np.testing.assert_allclose(theta.rate[:, 0], q[3], rtol=1e-10)


def test_parameters_update_equals_the_cmn_reference():
    """Given q(x1 | z) and q(z), the node's q(A, Λ) is the CMN oracle's update_experts (eq. 28)."""
    x, y, rng = data(2, N=25, d=3, h=2, K=3)
    N, d = x.shape
    K, h = 3, 2
    labels = rng.integers(3, size=N)
    cmn = CMNReference(x, labels, n_experts=K, n_classes=h + 1)
    state = cmn.initial_state(1, seed=3)
    gamma = rng.dirichlet(np.ones(K), size=N)
    state = dict(state, gamma=gamma[None], x1_mean=rng.normal(size=(1, N, K, h)))
    expected = cmn.update_experts(state)
    # the same update through the node: q(x1, z) as the joint marginal, the prior times the plate's message
    from fgraph.families import MvNormalMeanCovariance, PointMass
    from fgraph.families.mixture import Mixture
    from fgraph.families.product import product
    from tests.rules.tables import message
    from nodes.linear_experts import LinearExpertsNode
    joint = Mixture.create(np.log(gamma), [MvNormalMeanCovariance(state["x1_mean"][0, :, k], state["x1_cov"][0, :, k])
                                           for k in range(K)])
    sent = message(LinearExpertsNode, "parameters", {"q_out_switch": joint, "q_input": PointMass(x, 1)},
                   batch_shape=(K, N), plate_shape=(N,))
    prior = MatrixNormalGammaFamily(np.zeros((K, 1, h, d + 1)), V0 * np.eye(d + 1), A0, B0)
    posterior = product(prior, sent)
    np.testing.assert_allclose(posterior.matrix_mean[:, 0], expected["M"][0], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(posterior.column_covariance[:, 0], expected["V"][0], rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(posterior.shape[:, 0], np.broadcast_to(expected["a"][0][:, None], (K, h)), rtol=1e-12)
    np.testing.assert_allclose(posterior.rate[:, 0], expected["b"][0], rtol=1e-10)
