"""LinearExperts in models: a mixture of linear regressions, Bayesian multivariate regression (K = 1), and
experts whose outputs are latent, each against a hand-written numpy computation of the same thing."""
import numpy as np
import pytest
from scipy.special import digamma, gammaln, logsumexp

import fgraph as fg
from fgraph.families.matrix_normal_gamma import MatrixNormalGamma as MatrixNormalGammaFamily
from fgraph.nodes import Categorical, LinearExperts, MatrixNormalGamma, MvNormal
from fgraph.testing.cmn_reference import CMNReference

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
        expected = np.sum(gamma * (self.log_prior + self.expected_log_likelihood(q)))
        entropy = -np.sum(np.where(gamma > 0, gamma * np.log(np.where(gamma > 0, gamma, 1.0)), 0.0))
        return expected + entropy - self.kl(q)

    @staticmethod
    def kl(q):
        """Σ_k KL(q(A_k, λ_k) ‖ MNG(0, v0 I, a0, b0)): the gamma KLs and, per row, E_λ KL(N(m, V/λ) ‖ N(0, v0 I/λ))."""
        M, V, a, b = q
        D = V.shape[-1]
        lam = a[:, None] / b
        kl_gamma = ((a - A0) * digamma(a) - gammaln(a) + gammaln(A0))[:, None] + A0 * (np.log(b) - np.log(B0)) \
            + a[:, None] * (B0 - b) / b
        kl_rows = 0.5 * (np.trace(V, axis1=1, axis2=2)[:, None] / V0 + lam * np.sum(M ** 2, -1) / V0 - D
                         + D * np.log(V0) - np.linalg.slogdet(V)[1][:, None])
        return np.sum(kl_gamma + kl_rows)


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
    from fgraph.nodes.linear_experts import LinearExpertsNode
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


def conjugate_regression(x, y):
    """Bayesian multivariate linear regression with the MNG(0, v0 I, a0, b0) prior, by hand:
    (M, V, a, b) of the posterior and log p(Y) = Σ_i [a0 log b0 − a log b_i + log Γ(a) − log Γ(a0)]
    + (h/2)(log|V| − log|v0 I|) − (N h/2) log 2π."""
    N, h = y.shape
    xt = np.concatenate([x, np.ones((N, 1))], axis=1)
    D = xt.shape[1]
    precision = np.eye(D) / V0 + xt.T @ xt
    V = np.linalg.inv(precision)
    M = y.T @ xt @ V
    a = A0 + 0.5 * N
    b = B0 + 0.5 * (np.sum(y ** 2, axis=0) - np.einsum("id,de,ie->i", M, precision, M))
    log_evidence = (np.sum(A0 * np.log(B0) - a * np.log(b) + gammaln(a) - gammaln(A0))
                    + 0.5 * h * (np.linalg.slogdet(V)[1] - D * np.log(V0)) - 0.5 * N * h * LOG_2PI)
    return M, V, a, b, log_evidence


def regression_model(x, y):
    N, d = x.shape
    h = y.shape[1]
    with fg.Model() as model:
        theta = MatrixNormalGamma("theta", np.zeros((1, 1, h, d + 1)), V0, A0, B0, batch_shape=(1, 1))
        LinearExperts("y", switch=np.ones((N, 1)), input=x, parameters=theta, observed=y)
    return model


@pytest.mark.parametrize("N", [2, 30])
def test_one_expert_is_conjugate_bayesian_regression(N):
    """K = 1, a known switch: the posterior of (A, λ) and the evidence are the closed forms, by BP (exact
    on this tree) and by VMP (mean field is exact for one latent variable: −F = log p(Y))."""
    x, y, _ = data(3, N=N, d=2, h=2, K=1)
    M, V, a, b, log_evidence = conjugate_regression(x, y)
    model = regression_model(x, y)
    result = fg.infer(model)
    theta = result.marginal("theta")
    np.testing.assert_allclose(theta.matrix_mean[0, 0], M, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(theta.column_covariance[0, 0], V, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(theta.shape[0, 0], [a, a], rtol=1e-12)
    np.testing.assert_allclose(theta.rate[0, 0], b, rtol=1e-10)
    np.testing.assert_allclose(result.log_evidence, log_evidence, rtol=1e-10)
    variational = fg.infer(model, algorithm="vmp", iterations=2)
    np.testing.assert_allclose(variational.free_energy, -log_evidence, rtol=1e-10)


class LatentExpertsVB:
    """Structured VB for z_n ~ Cat(π), x1_n | z_n = k ~ N(A_k x̃_n, Λ_k⁻¹), y_n ~ N(x1_n, S), (A_k, λ_k) ~ MNG:
    q(x1 | z) q(z) q(A, λ), by hand. With ℓ = E[λ_k], μ_nk = M_k x̃_n and c_nk = ½ Σ_i (E log λ_ki − log ℓ_ki)
    − (h/2) x̃_nᵀ V_k x̃_n: q(x1 | k) = N((diag ℓ_k + S⁻¹)⁻¹ (ℓ_k ∘ μ_nk + S⁻¹ y_n), (diag ℓ_k + S⁻¹)⁻¹) and
    γ_nk ∝ π_k e^{c_nk} N(y_n | μ_nk, diag(ℓ_k)⁻¹ + S)."""

    def __init__(self, x, y, noise, prior_probabilities):
        self.regression = MixtureOfRegressionsVB(x, y, prior_probabilities)
        self.xt, self.y, self.noise = self.regression.xt, y, noise
        self.log_prior = np.log(prior_probabilities)

    def update_locals(self, q):
        M, V, a, b = q
        lam = a[:, None] / b
        log_lam = digamma(a)[:, None] - np.log(b)
        h = self.y.shape[1]
        predicted = np.einsum("kid,nd->nki", M, self.xt)
        offset = 0.5 * np.sum(log_lam - np.log(lam), -1) - 0.5 * h * np.einsum("nd,kde,ne->nk", self.xt, V, self.xt)
        noise_precision = np.linalg.inv(self.noise)
        precision = lam[:, :, None] * np.eye(h) + noise_precision  # (K, h, h)
        cov = np.linalg.inv(precision)
        mean = np.einsum("kij,nkj->nki", cov, lam[None] * predicted + (self.y @ noise_precision)[:, None, :])
        marginal_cov = np.eye(h) / lam[:, :, None] + self.noise  # (K, h, h)
        residual = self.y[:, None, :] - predicted
        log_normal = (-0.5 * h * LOG_2PI - 0.5 * np.linalg.slogdet(marginal_cov)[1][None]
                      - 0.5 * np.einsum("nki,kij,nkj->nk", residual, np.linalg.inv(marginal_cov), residual))
        logits = self.log_prior + offset + log_normal
        gamma = np.exp(logits - logsumexp(logits, axis=1, keepdims=True))
        return gamma, mean, np.broadcast_to(cov, mean.shape[:1] + cov.shape)

    def update_theta(self, gamma, mean, cov):
        """Eq. (28) with E[x1 | k] and E[x1_i² | k]: the oracle's update written again."""
        xt, D = self.xt, self.xt.shape[1]
        precision = np.eye(D) / V0 + np.einsum("nk,nd,ne->kde", gamma, xt, xt)
        V = np.linalg.inv(precision)
        M = np.einsum("nk,nki,nd->kid", gamma, mean, xt) @ V
        second = np.diagonal(cov, axis1=-2, axis2=-1) + mean ** 2
        a = A0 + 0.5 * gamma.sum(0)
        b = B0 + 0.5 * (np.einsum("nk,nki->ki", gamma, second) - np.einsum("kid,kde,kie->ki", M, precision, M))
        return M, V, a, b

    def elbo(self, gamma, mean, cov, q):
        M, V, a, b = q
        h = self.y.shape[1]
        lam = a[:, None] / b
        log_lam = digamma(a)[:, None] - np.log(b)
        predicted = np.einsum("kid,nd->nki", M, self.xt)
        second = np.diagonal(cov, axis1=-2, axis2=-1) + mean ** 2
        experts = (0.5 * np.sum(log_lam - LOG_2PI, -1)[None]
                   - 0.5 * np.sum(lam[None] * (second - 2 * mean * predicted + predicted ** 2), -1)
                   - 0.5 * h * np.einsum("nd,kde,ne->nk", self.xt, V, self.xt))
        noise_precision = np.linalg.inv(self.noise)
        outer = cov + mean[..., :, None] * mean[..., None, :]
        y = self.y[:, None, :]
        observation = (-0.5 * h * LOG_2PI - 0.5 * np.linalg.slogdet(self.noise)[1]
                       - 0.5 * (np.einsum("ij,nkij->nk", noise_precision, outer)
                                - 2 * np.einsum("nki,ij,nkj->nk", y, noise_precision, mean)
                                + np.einsum("nki,ij,nkj->nk", y, noise_precision, y)))
        entropy = 0.5 * (h * (LOG_2PI + 1.0) + np.linalg.slogdet(cov)[1])
        local = np.sum(gamma * (self.log_prior + experts + observation + entropy))
        z_entropy = -np.sum(np.where(gamma > 0, gamma * np.log(np.where(gamma > 0, gamma, 1.0)), 0.0))
        return local + z_entropy - MixtureOfRegressionsVB.kl(q)


def latent_outputs_model():
    """Experts' outputs x1 seen through y = x1 + noise (N = 30, d = 2, h = 2, K = 3), a fixed switch prior and a
    starting q(A, λ): ``(x, y, noise, probabilities, start, model, init)``."""
    x, y, rng = data(4, N=30, d=2, h=2, K=3)
    N, d = x.shape
    K, h = 3, 2
    noise = np.array([[0.3, 0.05], [0.05, 0.2]])
    probabilities = np.array([0.2, 0.3, 0.5])
    start = (rng.normal(size=(K, h, d + 1)), np.broadcast_to(0.5 * np.eye(d + 1), (K, d + 1, d + 1)).copy(),
             np.full(K, 3.0), np.full((K, h), 1.5))
    with fg.Model() as model:
        z = Categorical("z", p=probabilities, batch_shape=(N,))
        theta = MatrixNormalGamma("theta", np.zeros((K, 1, h, d + 1)), V0, A0, B0, batch_shape=(K, 1))
        x1 = LinearExperts("x1", switch=z, input=x, parameters=theta)
        MvNormal("y", mean=x1, cov=noise, observed=y)
    init = {"theta": MatrixNormalGammaFamily(start[0][:, None], start[1][:, None], start[2][:, None, None],
                                             start[3][:, None])}
    return x, y, noise, probabilities, start, model, init


def test_latent_outputs_equal_hand_written_structured_vb():
    """The experts' outputs latent, seen through y = x1 + noise: the out, switch and joint-marginal rules and
    the parameters' rule from q(x1, z), iteration by iteration against the hand-written structured VB."""
    x, y, noise, probabilities, start, model, init = latent_outputs_model()
    schedule = [("z", "out"), ("theta", "out"), ("y", "mean"), ("x1", "parameters"), ("x1", "out"),
                ("x1", "switch")]
    iterations = 10
    result = fg.infer(model, algorithm="vmp", iterations=iterations, schedule=schedule, init=init)
    reference = LatentExpertsVB(x, y, noise, probabilities)
    q, elbos = start, []
    local = reference.update_locals(q)
    for _ in range(iterations):
        q = reference.update_theta(*local)
        local = reference.update_locals(q)
        elbos.append(reference.elbo(*local, q))
    np.testing.assert_allclose(result.free_energy, -np.array(elbos), rtol=1e-10)
    assert np.all(np.diff(result.free_energy) <= 1e-9)
    gamma, mean, cov = local
    np.testing.assert_allclose(result.marginal("z").probabilities, gamma, rtol=1e-9, atol=1e-13)
    x1_marginal = result.marginal("x1")
    np.testing.assert_allclose(x1_marginal.weights, gamma, rtol=1e-9, atol=1e-13)
    np.testing.assert_allclose(x1_marginal.mean, np.einsum("nk,nki->ni", gamma, mean), rtol=1e-9, atol=1e-12)
    theta = result.marginal("theta")
    np.testing.assert_allclose(theta.matrix_mean[:, 0], q[0], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(theta.rate[:, 0], q[3], rtol=1e-9)


def test_local_updates_equal_the_cmn_reference():
    """The CMN oracle's E-step for one restart — q(x1 | z) (its step 2) and q(z) (step 5, at the same q(ω1)) — is
    the node's joint marginal of (out, switch), given the output layer's Gaussian message to x1 and the gate's to z."""
    from fgraph.families import Categorical as CategoricalFamily, GaussianLikelihood, PointMass
    from fgraph.families.mixture import Mixture
    from fgraph.nodes.linear_experts import LinearExpertsNode
    from fgraph.testing.cmn_reference import pg_mean
    rng = np.random.default_rng(6)
    N, d, K, L = 20, 3, 4, 3
    h = L - 1
    x = rng.normal(size=(N, d))
    labels = rng.integers(L, size=N)
    cmn = CMNReference(x, labels, n_experts=K, n_classes=L)
    state = cmn.initial_state(1, seed=7)
    state = dict(state, a=rng.uniform(1.5, 4.0, size=(1, K)), b=rng.uniform(0.5, 2.0, size=(1, K, h)),
                 V=np.linalg.inv(np.eye(d + 1) * 2.0 + 0.3 * np.ones((d + 1, d + 1)))[None, None]
                 * (1.0 + 0.5 * np.arange(K))[None, :, None, None])
    c1 = cmn.optimal_c1(state)
    updated = cmn.update_x1(state, c1)
    # q(z) from the same q(ω1) (c1) as q(x1 | z): the structured cluster updates both from one message to x1,
    # where the oracle refreshes c1 between its steps 2 and 5 (its step 3)
    gamma = cmn.update_gamma(updated, c1, cmn.optimal_c0(updated))["gamma"]
    # the output layer's message to x1 (the oracle's update_x1 without the experts' part)
    B = state["out_cov"] + state["out_mean"][..., :, None] * state["out_mean"][..., None, :]
    omega = pg_mean(cmn.b1, c1)[0]
    precision = np.einsum("nl,lij->nij", omega, B[0, :, :-1, :-1])
    linear = cmn.kappa1 @ state["out_mean"][0, :, :-1] - np.einsum("nl,li->ni", omega, B[0, :, :-1, -1])
    # the gate's message to z: exp gate_n(k) (the oracle's q(z) logits without the experts' and output's parts)
    gate = cmn._gate_term(updated, cmn.optimal_c0(updated))[0]
    parameters = MatrixNormalGammaFamily(state["M"][0][:, None], state["V"][0][:, None],
                                         state["a"][0][:, None, None], state["b"][0][:, None])
    from fgraph import registry
    inputs = {"m_out": GaussianLikelihood(linear, precision, np.zeros(N)),
              "m_switch": CategoricalFamily(np.exp(gate - logsumexp(gate, axis=1, keepdims=True))),
              "q_parameters": parameters, "q_input": PointMass(x, 1)}
    bound = registry.resolve(registry.MARGINAL, LinearExpertsNode, ("out", "switch"),
                             {k: type(v) for k, v in inputs.items()}, "test")
    joint = bound(inputs, LinearExpertsNode("x1", (K, N), plate_shape=(N,)))
    assert isinstance(joint, Mixture)
    for k, component in enumerate(joint.components):
        np.testing.assert_allclose(component.mean, updated["x1_mean"][0, :, k], rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(component.cov, updated["x1_cov"][0, :, k], rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(joint.weights, gamma[0], rtol=1e-9, atol=1e-13)


def test_copies_of_the_model_along_a_kept_plate_axis():
    """Parameters of batch (K, R, 1) over a plate (R, N): R independent mixtures of regressions in one graph (e.g.
    restarts), each the same as its own model run alone; the free energies add."""
    x, y, rng = data(5, N=25, h=2, K=2)
    N, d = x.shape
    K, h, R = 2, 2, 3
    ys = np.stack([y + 0.5 * r * rng.normal(size=y.shape) for r in range(R)])  # (R, N, h)
    gammas = rng.dirichlet(np.ones(K), size=(R, N))
    probabilities = np.array([0.4, 0.6])
    schedule = [("z", "out"), ("theta", "out"), ("y", "parameters"), ("y", "switch")]
    with fg.Model() as model:
        z = Categorical("z", p=probabilities, batch_shape=(R, N))
        theta = MatrixNormalGamma("theta", np.zeros((K, R, 1, h, d + 1)), V0, A0, B0, batch_shape=(K, R, 1))
        LinearExperts("y", switch=z, input=x, parameters=theta, observed=ys)
    batched = fg.infer(model, algorithm="vmp", iterations=6, schedule=schedule,
                       init={"z": fg.families.Categorical(gammas)})
    total = 0.0
    for r in range(R):
        alone = fg.infer(mixture_model(x, ys[r], K, probabilities), algorithm="vmp", iterations=6, schedule=schedule,
                         init={"z": fg.families.Categorical(gammas[r])})
        total = total + np.array(alone.free_energy)
        np.testing.assert_allclose(batched.marginal("z").probabilities[r], alone.marginal("z").probabilities,
                                   rtol=1e-10, atol=1e-14)
        np.testing.assert_allclose(batched.marginal("theta").matrix_mean[:, r, 0],
                                   alone.marginal("theta").matrix_mean[:, 0], rtol=1e-10, atol=1e-13)
        np.testing.assert_allclose(batched.marginal("theta").rate[:, r, 0], alone.marginal("theta").rate[:, 0],
                                   rtol=1e-10)
    np.testing.assert_allclose(batched.free_energy, total, rtol=1e-10)


def test_default_schedule_free_energy_is_that_of_the_state_after_the_sweep():
    """With the default order (out, switch, then parameters) the state after a sweep is q(x1, z) from the previous
    q(A, λ) and the new q(A, λ); its free energy is the hand-written VB's negative ELBO at that state."""
    x, y, noise, probabilities, start, model, init = latent_outputs_model()
    result = fg.infer(model, algorithm="vmp", iterations=5, init=init)
    assert result.schedule.pairs()[-1] == ("x1", "parameters")
    reference = LatentExpertsVB(x, y, noise, probabilities)
    q, elbos = start, []
    for _ in range(5):
        local = reference.update_locals(q)
        q = reference.update_theta(*local)
        elbos.append(reference.elbo(*local, q))
    np.testing.assert_allclose(result.free_energy, -np.array(elbos), rtol=1e-10)


class MeanFieldExpertsVB(LatentExpertsVB):
    """The same model under full mean field q(x1) q(z) q(A, λ), by hand: q(x1_n) has precision
    Σ_k γ_nk diag(ℓ_k) + S⁻¹ and weighted mean Σ_k γ_nk ℓ_k ∘ μ_nk + S⁻¹ y_n; log γ_nk = log π_k + E_q(x1)[log f̃_k];
    q(A, λ) by eq. (28) with the moments of q(x1) for every expert."""

    def update_x1(self, gamma, q):
        M, V, a, b = q
        lam = a[:, None] / b
        noise_precision = np.linalg.inv(self.noise)
        predicted = np.einsum("kid,nd->nki", M, self.xt)
        precision = np.einsum("nk,ki->ni", gamma, lam)[:, :, None] * np.eye(lam.shape[1]) + noise_precision
        cov = np.linalg.inv(precision)
        mean = np.einsum("nij,nj->ni", cov, np.einsum("nk,ki,nki->ni", gamma, lam, predicted) + self.y @ noise_precision)
        return mean, cov

    def update_gamma(self, mean, cov, q):
        K = q[0].shape[0]
        expanded = (np.repeat(mean[:, None], K, 1), np.repeat(cov[:, None], K, 1))
        per_expert = self._per_expert(*expanded, q)
        logits = self.log_prior + per_expert
        return np.exp(logits - logsumexp(logits, axis=1, keepdims=True))

    def _per_expert(self, mean, cov, q):
        """E log N(x1 | A_k x̃, Λ_k⁻¹) under q(x1 | k) (mean, cov of shape (N, K, h), (N, K, h, h)) and q(θ)."""
        M, V, a, b = q
        h = mean.shape[-1]
        lam = a[:, None] / b
        log_lam = digamma(a)[:, None] - np.log(b)
        predicted = np.einsum("kid,nd->nki", M, self.xt)
        second = np.diagonal(cov, axis1=-2, axis2=-1) + mean ** 2
        return (0.5 * np.sum(log_lam - LOG_2PI, -1)[None]
                - 0.5 * np.sum(lam[None] * (second - 2 * mean * predicted + predicted ** 2), -1)
                - 0.5 * h * np.einsum("nd,kde,ne->nk", self.xt, V, self.xt))

    def mean_field_elbo(self, mean, cov, gamma, q):
        K = q[0].shape[0]
        expanded = (np.repeat(mean[:, None], K, 1), np.repeat(cov[:, None], K, 1))
        # the structured ELBO with q(x1 | k) = q(x1) for every k counts H[q(x1)] and the observation term once
        return self.elbo(gamma, *expanded, q)


def test_full_mean_field_equals_hand_written_vb():
    """Every interface its own cluster: the mean-field rules to out and switch, the parameters from q(x1) q(z), and
    the average energy; the free energy after every sweep equals the hand-written mean-field VB's."""
    x, y, rng = data(7, N=25, d=2, h=2, K=2)
    N, d = x.shape
    K, h = 2, 2
    noise = np.array([[0.4, 0.0], [0.0, 0.25]])
    probabilities = np.array([0.35, 0.65])
    start = (rng.normal(size=(K, h, d + 1)), np.broadcast_to(0.5 * np.eye(d + 1), (K, d + 1, d + 1)).copy(),
             np.full(K, 3.0), np.full((K, h), 1.5))
    gamma = rng.dirichlet(np.ones(K), size=N)
    with fg.Model() as model:
        z = Categorical("z", p=probabilities, batch_shape=(N,))
        theta = MatrixNormalGamma("theta", np.zeros((K, 1, h, d + 1)), V0, A0, B0, batch_shape=(K, 1))
        x1 = LinearExperts("x1", switch=z, input=x, parameters=theta)
        MvNormal("y", mean=x1, cov=noise, observed=y)
    init = {"theta": MatrixNormalGammaFamily(start[0][:, None], start[1][:, None], start[2][:, None, None],
                                             start[3][:, None]), "z": fg.families.Categorical(gamma)}
    schedule = [("z", "out"), ("theta", "out"), ("y", "mean"), ("x1", "out"), ("x1", "switch"), ("x1", "parameters")]
    iterations = 8
    result = fg.infer(model, algorithm="vmp", iterations=iterations, schedule=schedule, init=init,
                      constraints={"factorization": {"x1": [("out",), ("switch",), ("parameters",)]}})
    reference = MeanFieldExpertsVB(x, y, noise, probabilities)
    q, elbos = start, []
    for _ in range(iterations):
        mean, cov = reference.update_x1(gamma, q)
        gamma = reference.update_gamma(mean, cov, q)
        q = reference.update_theta(gamma, np.repeat(mean[:, None], K, 1), np.repeat(cov[:, None], K, 1))
        elbos.append(reference.mean_field_elbo(mean, cov, gamma, q))
    np.testing.assert_allclose(result.free_energy, -np.array(elbos), rtol=1e-10)
    assert np.all(np.diff(result.free_energy) <= 1e-9)
    np.testing.assert_allclose(result.marginal("x1").mean, mean, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(result.marginal("z").probabilities, gamma, rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(result.marginal("theta").rate[:, 0], q[3], rtol=1e-10)


def test_one_expert_binary_network_equals_the_cmn_reference():
    """A CMN with one expert and two classes as a graph — LinearExperts into the Pólya-Gamma Logistic node — against
    the CMN reference's updates and ELBO from the same initial state. One engine sweep is the reference's
    q(A, Λ) update (its step 9) followed by its steps 1–7 (the gate is trivial with one expert); the free energy
    after it is minus the reference's ELBO at that state."""
    from fgraph.families import MvNormalMeanCovariance, PointMass
    from fgraph.nodes import Logistic
    rng = np.random.default_rng(8)
    N, d = 40, 2
    x = rng.normal(size=(N, d))
    labels = (x[:, 0] + 0.5 * x[:, 1] + 0.3 * rng.normal(size=N) > 0).astype(int)
    cmn = CMNReference(x, labels, n_experts=1, n_classes=2)
    state = cmn.initial_state(1, seed=9)
    with fg.Model() as model:
        theta = MatrixNormalGamma("theta", np.zeros((1, 1, 1, d + 1)), V0, A0, B0, batch_shape=(1, 1))
        x1 = LinearExperts("x1", switch=np.ones((N, 1)), input=x, parameters=theta)
        beta1 = MvNormal("beta1", mean=np.zeros(2), cov=25.0 * np.eye(2))
        # one stick: the reference's class 0 is the stick's success, σ(ψ) = p(class 0)
        Logistic("y", coefficients=beta1, input=x1, observed=(labels == 0).astype(int))
    init = {"x1": MvNormalMeanCovariance(state["x1_mean"][0, :, 0], state["x1_cov"][0, :, 0]),
            "beta1": MvNormalMeanCovariance(state["out_mean"][0, 0], state["out_cov"][0, 0]),
            "y_xi": PointMass(np.zeros(N))}
    schedule = [("theta", "out"), ("x1", "parameters"), ("y", "xi"), ("y", "input"), ("x1", "out"), ("y", "xi"),
                ("beta1", "out"), ("y", "coefficients"), ("y", "xi")]
    iterations = 8
    result = fg.infer(model, algorithm="vmp", iterations=iterations, schedule=schedule, init=init)
    elbos = []
    for _ in range(iterations):
        state = cmn.update_experts(state)
        state = cmn.update_x1(state, cmn.optimal_c1(state))
        state = cmn.update_out(state, cmn.optimal_c1(state))
        elbos.append(cmn.elbo(state)[0])
    np.testing.assert_allclose(result.free_energy, -np.array(elbos), rtol=1e-10)
    assert np.all(np.diff(result.free_energy) <= 1e-9)
    theta_q = result.marginal("theta")
    np.testing.assert_allclose(theta_q.matrix_mean[0, 0], state["M"][0, 0], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(theta_q.rate[0, 0], state["b"][0, 0], rtol=1e-9)
    np.testing.assert_allclose(result.marginal("x1").mean, state["x1_mean"][0, :, 0], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(result.marginal("beta1").mean, state["out_mean"][0, 0], rtol=1e-9, atol=1e-12)


def test_copies_of_the_model_equal_the_model_run_alone():
    """fg.Model(copies=R): restarts (a starting q(z) per copy) with data per copy; every copy equals the same
    model run alone, its free energy included, for observed and for latent expert outputs."""
    x, y, rng = data(9, N=20, h=2, K=2)
    N, d = x.shape
    K, h, R = 2, 2, 3
    ys = np.stack([y + 0.4 * r * rng.normal(size=y.shape) for r in range(R)])
    gammas = rng.dirichlet(np.ones(K), size=(R, N))
    probabilities = np.array([0.4, 0.6])
    schedule = [("z", "out"), ("theta", "out"), ("y", "parameters"), ("y", "switch")]
    with fg.Model(copies=R) as model:
        z = Categorical("z", p=probabilities, batch_shape=(N,))
        theta = MatrixNormalGamma("theta", np.zeros((K, 1, h, d + 1)), V0, A0, B0, batch_shape=(K, 1))
        LinearExperts("y", switch=z, input=x, parameters=theta, observed=fg.per_copy(ys))
    batched = fg.infer(model, algorithm="vmp", iterations=5, schedule=schedule,
                       init={"z": fg.families.Categorical(gammas)})
    assert np.array(batched.free_energy).shape == (5, R)
    for r in range(R):
        alone = fg.infer(mixture_model(x, ys[r], K, probabilities), algorithm="vmp", iterations=5, schedule=schedule,
                         init={"z": fg.families.Categorical(gammas[r])})
        np.testing.assert_allclose(np.array(batched.free_energy)[:, r], alone.free_energy, rtol=1e-10)
        copy = batched.copy(r)
        np.testing.assert_allclose(copy.marginal("z").probabilities, alone.marginal("z").probabilities,
                                   rtol=1e-10, atol=1e-14)
        np.testing.assert_allclose(copy.marginal("theta").matrix_mean, alone.marginal("theta").matrix_mean,
                                   rtol=1e-10, atol=1e-13)

    # latent outputs seen through noise, one starting q(A, λ) per copy
    noise = 0.3 * np.eye(h)
    starts = rng.normal(size=(R, K, 1, h, d + 1))
    init = MatrixNormalGammaFamily(starts, 0.5 * np.eye(d + 1), 3.0, 1.5)
    latent_schedule = [("z", "out"), ("theta", "out"), ("y", "mean"), ("x1", "parameters"), ("x1", "out"),
                       ("x1", "switch")]

    def latent_model(copies):
        with fg.Model(copies=copies) as model:
            z = Categorical("z", p=probabilities, batch_shape=(N,))
            theta = MatrixNormalGamma("theta", np.zeros((K, 1, h, d + 1)), V0, A0, B0, batch_shape=(K, 1))
            x1 = LinearExperts("x1", switch=z, input=x, parameters=theta)
            MvNormal("y", mean=x1, cov=noise, observed=y)
        return model

    batched = fg.infer(latent_model(R), algorithm="vmp", iterations=5, schedule=latent_schedule,
                       init={"theta": init})
    for r in range(R):
        alone = fg.infer(latent_model(None), algorithm="vmp", iterations=5, schedule=latent_schedule,
                         init={"theta": init[r]})
        np.testing.assert_allclose(np.array(batched.free_energy)[:, r], alone.free_energy, rtol=1e-10)
        np.testing.assert_allclose(batched.copy(r).marginal("x1").mean, alone.marginal("x1").mean,
                                   rtol=1e-10, atol=1e-12)

    # the same under full mean field, whose free energy reads the node's average energy per copy
    mean_field = {"factorization": {"x1": [("out",), ("switch",), ("parameters",)]}}
    gamma_init = fg.families.Categorical(gammas)
    order = [("z", "out"), ("theta", "out"), ("y", "mean"), ("x1", "out"), ("x1", "switch"), ("x1", "parameters")]
    batched = fg.infer(latent_model(R), algorithm="vmp", iterations=4, init={"theta": init, "z": gamma_init},
                       constraints=mean_field, schedule=order)
    for r in range(R):
        alone = fg.infer(latent_model(None), algorithm="vmp", iterations=4, constraints=mean_field, schedule=order,
                         init={"theta": init[r], "z": fg.families.Categorical(gammas[r])})
        np.testing.assert_allclose(np.array(batched.free_energy)[:, r], alone.free_energy, rtol=1e-10)
