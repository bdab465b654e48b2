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
from tests.models.cmn_reference import STATE_KEYS, CMNReference, Priors

R = 3


class MomentOutputReference(CMNReference):
    """The reference with the output y | x1 ~ Softmax under the moment approximation: label y with one-hot c gives
    N(ψ1_l; m_l, v_l), m = ψ(α + c), v = ψ₁(α + c) (digamma, trigamma: Appendix A, written out here)."""

    def __init__(self, x0, y, n_experts, alpha=0.1, priors=Priors()):
        super().__init__(x0, y, n_experts, priors=priors)
        shapes = alpha + np.eye(self.L)[self.y]
        self.m, self.v = digamma(shapes), polygamma(1, shapes)  # (N, L)
        self.n_out = self.L
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
