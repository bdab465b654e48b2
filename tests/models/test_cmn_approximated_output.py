"""The CMN with its output under a Gaussian likelihood approximation (``build_cmn(..., output="moment")``): a
softmax output whose labels are pseudo-observations of the L logits, so the output layer is Gaussian regression on
x1. Oracle: the numpy CAVI reference with that output (κ1 → m/v, E[ω1] → 1/v, the Gaussian output energy, L
output vectors), per restart and iteration; the ELBO never decreases; restarts in worker processes equal one
process; a bad output is named."""
import numpy as np
import pytest
from scipy.special import digamma, polygamma

from fgraph.datasets import load_dataset
from fgraph.errors import ModelError
from fgraph.models.cmn import build_cmn, cmn_schedule, fit_cmn
from fgraph.testing.cmn_reference import STATE_KEYS, CMNReference, Priors

R = 3


class MomentOutputReference(CMNReference):
    """The reference with the output y | x1 ~ Softmax under the moment approximation: label y with one-hot c gives
    N(ψ1_l; m_l, v_l), m = ψ(α + c), v = ψ₁(α + c) (digamma, trigamma: Appendix A, written out here)."""

    def __init__(self, x0, y, n_experts, alpha=0.1, priors=Priors()):
        super().__init__(x0, y, n_experts, priors=priors)
        shapes = alpha + np.eye(self.L)[self.y]
        self.m, self.v = digamma(shapes), polygamma(1, shapes)  # (N, L)
        self.n_out = self.L
        self.out_prior_mean = np.zeros((self.L, self.H))  # a softmax output's coefficients: no sticks, no bias
        self.kappa1 = self.m / self.v

    def output_omega(self, c1):
        return np.broadcast_to(1.0 / self.v, np.shape(c1))

    def output_term(self, psi_mean, psi_square, c1):
        """Σ_n Σ_l E[log N(ψ1_l; m_l, v_l)] = Σ (m/v) E[ψ] − E[ψ²]/(2v) − ½ log 2πv − m²/(2v)."""
        return np.sum(self.kappa1 * psi_mean - 0.5 * psi_square / self.v - 0.5 * np.log(2 * np.pi * self.v)
                      - 0.5 * self.m ** 2 / self.v, (1, 2))


def small_problem(seed=11, N=30, d=2, L=3):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(N, d)), rng.integers(L, size=N)


@pytest.mark.parametrize("K", [1, 4])
def test_the_graph_equals_the_reference_per_restart_and_iteration(K):
    x, labels = small_problem()
    network = build_cmn(x, labels, K, n_restarts=R, output="moment", alpha_epsilon=0.2)
    assert network.n_outputs == 3 and all(step != ("y", "xi") for step in cmn_schedule(K, 3, output="moment"))
    fit = fit_cmn(network, iterations=6, seed=7)
    cmn = MomentOutputReference(x, labels, n_experts=K, alpha=0.2)
    state = cmn.initial_state(R, seed=7)
    for t in range(6):
        if K == 1:  # q(A, Λ) first with one expert (cmn_schedule); the reference's iteration order otherwise
            state = cmn.update_experts(state)
            state = cmn.update_x1(state, cmn.optimal_c1(state))
            state = cmn.update_out(state, cmn.optimal_c1(state))
        else:
            state = cmn.iterate_joint_e_step(state)
        np.testing.assert_allclose(fit.elbo[t], cmn.elbo(state), rtol=1e-9)
    final = fit.posteriors()
    for key in STATE_KEYS:
        np.testing.assert_allclose(final[key], state[key], rtol=1e-8, atol=1e-10, err_msg=key)


def test_the_elbo_never_decreases_on_breast_cancer_and_workers_equal_one_process():
    data = load_dataset("breast_cancer")
    rows = np.random.default_rng(0).choice(len(data.y), size=100, replace=False)
    x = (data.X - data.X.mean(0)) / data.X.std(0)
    network = build_cmn(x[rows], data.y[rows], n_experts=5, n_restarts=4, output="variational")
    fit = fit_cmn(network, iterations=15, seed=2)
    rises = np.diff(fit.elbo, axis=0)
    assert np.all(rises >= -1e-9 * np.abs(fit.elbo[1:])), rises.min()
    assert np.all(fit.elbo[-1] - fit.elbo[0] > 1.0)
    workers = fit_cmn(network, iterations=15, seed=2, n_jobs=2)
    np.testing.assert_allclose(workers.elbo, fit.elbo, rtol=1e-10)


def test_a_bad_output_is_named():
    x, labels = small_problem()
    with pytest.raises(ModelError, match="output must be 'stick-breaking' or one of laplace"):
        build_cmn(x, labels, 3, output="probit")


class SoftmaxPredictiveReference(MomentOutputReference):
    """The reference's predictive by plain Monte Carlo over q(β0) q(A, Λ) q(β1) and x1, with a softmax output."""

    def predict_proba(self, state, x_new, n_samples=4000, seed=0):
        from scipy.special import softmax

        from fgraph.testing.cmn_reference import stick_log_probabilities
        xt = np.concatenate([x_new, np.ones((len(x_new), 1))], axis=1)
        rng = np.random.default_rng(seed)
        R = self.check_state(state)
        total = np.zeros((R, len(xt), self.L))
        for _ in range(n_samples // 100):
            S = 100
            beta0 = state["gate_mean"] + np.einsum("rjde,srje->srjd", np.linalg.cholesky(state["gate_cov"]),
                                                   rng.standard_normal((S, R, self.K - 1, self.D)))
            gate = np.exp(stick_log_probabilities(np.einsum("srjd,nd->srnj", beta0, xt)))  # (S, R, N, K)
            lam = rng.gamma(state["a"][..., None], 1.0 / state["b"], size=(S, R, self.K, self.h))
            A = state["M"] + np.einsum("rkde,srkie->srkid", np.linalg.cholesky(state["V"]),
                                       rng.standard_normal((S, R, self.K, self.h, self.D))) / np.sqrt(lam)[..., None]
            x1 = (np.einsum("srkid,nd->srnki", A, xt)
                  + rng.standard_normal((S, R, len(xt), self.K, self.h)) / np.sqrt(lam)[:, :, None])
            beta1 = state["out_mean"] + np.einsum("rlij,srlj->srli", np.linalg.cholesky(state["out_cov"]),
                                                  rng.standard_normal((S, R, self.L, self.H)))
            psi = np.einsum("srli,srnki->srnkl", beta1[..., :-1], x1) + beta1[:, :, None, None, :, -1]
            total += np.einsum("srnk,srnkl->rnl", gate, softmax(psi, axis=-1))
        return total / (n_samples // 100 * 100)


def test_the_predictive_and_the_classifier_with_an_approximated_output():
    """predictive_log_proba(output="moment") against the reference's plain Monte Carlo predictive; the classifier
    fits the same network and predicts with it; a bad output is named."""
    pytest.importorskip("sklearn")
    from fgraph.models.cmn import CMNClassifier, predictive_log_proba

    x, labels = small_problem(N=12)  # few points: q(β1) is wide, and ignoring its spread would be off by 0.14
    network = build_cmn(x, labels, 3, n_restarts=2, output="moment", alpha_epsilon=0.2)
    fit = fit_cmn(network, iterations=8, seed=3)
    posteriors = fit.posteriors()
    x_new = 2.0 * np.random.default_rng(5).normal(size=(6, 2))
    ours = np.exp(predictive_log_proba(posteriors, x_new, n_samples=128, output="moment"))
    np.testing.assert_allclose(ours.sum(-1), 1.0, rtol=1e-12)
    reference = SoftmaxPredictiveReference(x, labels, n_experts=3, alpha=0.2)
    state = {key: np.asarray(value) for key, value in posteriors.items()}
    expected = reference.predict_proba(state, x_new, n_samples=20000)
    # ours: 256 common draws of the logits per point of x1 (standard error up to 0.03); the reference's 2 · 10⁴
    np.testing.assert_allclose(ours, expected, atol=0.05)
    classifier = CMNClassifier(n_experts=3, n_restarts=2, max_iter=8, tol=1e-300, random_state=3, output="moment",
                               alpha_epsilon=0.2, n_predictive_samples=128).fit(x, labels)
    np.testing.assert_allclose(classifier.elbo_, fit.elbo, rtol=1e-10)
    best = fit.best_restart
    same_points = np.exp(predictive_log_proba(posteriors, x_new, n_samples=128, random_state=3, output="moment"))
    np.testing.assert_allclose(classifier.predict_proba(x_new), same_points[best], rtol=1e-10)
    with pytest.raises(ValueError, match="output must be 'stick-breaking' or one of"):
        CMNClassifier(output="softmax").fit(x, labels)


def test_the_pointwise_log_likelihood_with_a_softmax_output_by_hand():
    """log p(y_n | x0_n, θ) for one posterior draw θ, written out point by point: Σ_k gate_k (1/S) Σ_s softmax_y(ψ)."""
    from scipy.special import softmax

    from fgraph.models.cmn import log_likelihood_given_draws, posterior_draws
    from fgraph.testing.cmn_reference import stick_log_probabilities

    x, labels = small_problem(N=10)
    fit = fit_cmn(build_cmn(x, labels, 3, output="laplace"), iterations=4, seed=1)
    draws = posterior_draws(fit.posteriors(), 2, random_state=0)
    assert draws["beta1"].shape == (1, 2, 3, 3)  # L = 3 output vectors under the approximation
    noise = np.random.default_rng(2).standard_normal((5, 10, 3, 2))
    values = log_likelihood_given_draws(draws, x, labels, noise, output="laplace")  # (1, 2, 10)
    xt = np.column_stack([x, np.ones(10)])
    for m in range(2):
        beta0, A, lam, beta1 = (draws[key][0, m] for key in ("beta0", "A", "lam", "beta1"))
        for n in range(10):
            gate = np.exp(stick_log_probabilities(beta0 @ xt[n]))  # (K,)
            total = 0.0
            for k in range(3):
                for s in range(5):
                    x1 = A[k] @ xt[n] + noise[s, n, k] / np.sqrt(lam[k])
                    total += gate[k] * softmax(beta1[:, :-1] @ x1 + beta1[:, -1])[labels[n]] / 5
            assert values[0, m, n] == pytest.approx(np.log(total), rel=1e-10)
