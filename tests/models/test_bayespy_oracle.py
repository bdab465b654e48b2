"""Fixed points and bounds of the models fgraph shares with BayesPy, against BayesPy.

BayesPy implements variational message passing independently of fgraph. For
each model below both get the same priors and the same starting point
(fgraph's ``init`` is the prior of the variable read first; BayesPy
initialises every node from its prior), both iterate to convergence, and the
converged posteriors must agree, as must the bounds: BayesPy's lower bound L
is ``E_q[log p(y, θ)] + H[q]`` with every normalising constant included, so
fgraph's free energy must be ``F = −L`` exactly (no constant differs).

* Normal–Gamma: ``mu ~ N(m0, v0)``, ``tau ~ Gamma(a0, b0)``,
  ``y_i ~ N(mu, 1/tau)``, q(mu) q(tau). The fixed point is unique.
* Gaussian mixture with Dirichlet weights: ``π ~ Dir(α)``,
  ``z_n ~ Cat(π)``, ``y_n ~ N(c_k, s²)`` given ``z_n = k``, with fixed
  component means c_k (in fgraph, constants as the mixture node's inputs, or
  a prior N(c_k, v) per observation whose evidence N(y_n | c_k, s² + v) the
  sub-model computes exactly by sum-product); q(π) Π q(z_n). Component means
  with a prior shared by all observations are not compared: fgraph's mixture
  node, with a variational switch, sends every sub-model the unweighted
  observation (model combination, van Erp et al. 2023), which is not the
  Gaussian-mixture update BayesPy makes.
* Categorical HMM with a Dirichlet prior on each column of the transition
  matrix and a fixed emission matrix: q(z_1..z_T) q(A), the chain kept whole
  (fgraph: the structured factorisation ``[("out", "in"), ("matrix",)]`` at
  every transition node; BayesPy: ``CategoricalMarkovChain``).
  BayesPy's transition matrices are row-stochastic, ``A_bp[i, j] = P(z_t = j
  | z_{t−1} = i)``, the transpose of fgraph's column-stochastic ones.

The multivariate Normal–Wishart model is compared in
``tests/models/test_mvnormal_wishart.py``.
"""
import numpy as np
import pytest

import fgraph as fg
from fgraph.nodes import Categorical, Dirichlet, Gamma, MatrixDirichlet, Mixture, Normal, Transition

bayespy = pytest.importorskip("bayespy")
from bayespy.inference import VB  # noqa: E402
from bayespy import nodes as bp  # noqa: E402


# ------------------------------------------------------------------ Normal–Gamma
M0, V0, A0, B0 = 0.5, 4.0, 2.0, 3.0


def test_normal_gamma():
    y = np.random.default_rng(1).normal(1.3, 0.7, size=40)
    with fg.Model() as model:
        mu = Normal("mu", mean=M0, var=V0)
        tau = Gamma("tau", shape=A0, rate=B0)
        Normal("y", mean=mu, precision=tau, observed=y)
    result = fg.infer(model, algorithm="vmp", init={"tau": fg.Gamma(A0, B0)}, iterations=100)

    reference_mu = bp.GaussianARD(M0, 1.0 / V0)  # BayesPy's second argument is a precision
    reference_tau = bp.Gamma(A0, B0)  # shape, rate
    observations = bp.GaussianARD(reference_mu, reference_tau, plates=(len(y),))
    observations.observe(y)
    vb = VB(observations, reference_mu, reference_tau)
    vb.update(repeat=100, tol=-np.inf, verbose=False)

    mean, second_moment = reference_mu.u
    e_tau, e_log_tau = reference_tau.u
    q_mu, q_tau = result.marginal("mu"), result.marginal("tau")
    np.testing.assert_allclose([q_mu.mean, q_mu.var], [mean, second_moment - mean**2], rtol=1e-10)
    np.testing.assert_allclose([q_tau.mean, q_tau.mean_log], [e_tau, e_log_tau], rtol=1e-10)
    np.testing.assert_allclose(result.free_energy[-1], -vb.compute_lowerbound(), rtol=1e-10)


# ------------------------------------------------------------------ Gaussian mixture, Dirichlet weights
ALPHA = np.array([1.0, 2.0, 1.5])
CENTRES = np.array([-2.0, 0.5, 3.0])
NOISE_VAR, SPREAD = 0.8, 0.5


def mixture_data():
    rng = np.random.default_rng(3)
    labels = rng.choice(3, size=30, p=[0.5, 0.2, 0.3])
    return rng.normal(CENTRES[labels], np.sqrt(NOISE_VAR + SPREAD))


@pytest.mark.parametrize("components", ["constants", "sub-model-priors"])
def test_gaussian_mixture_with_dirichlet_weights(components):
    y = mixture_data()
    n = len(y)
    with fg.Model() as model:
        weights = Dirichlet("weights", alpha=ALPHA)
        z = Categorical("z", p=weights, batch_shape=(n,))
        if components == "constants":
            x = Mixture("x", z, list(CENTRES))
            exact = ["y", "x"]
        else:
            x = Mixture("x", z, [Normal(f"x{k}", mean=c, var=SPREAD, batch_shape=(n,)) for k, c in enumerate(CENTRES)])
            exact = ["y"] + [f"x{k}" for k in range(3)]
        Normal("y", mean=x, var=NOISE_VAR, observed=y)
    result = fg.infer(model, algorithm="vmp", constraints={"factorization": {name: "bp" for name in exact}},
                      init={"weights": fg.Dirichlet(ALPHA), "z": fg.Categorical(np.ones(3) / 3)},
                      iterations=120)

    # the marginal likelihood of y_n under component k: N(c_k, s²) or, through the sub-model, N(c_k, s² + v)
    variance = NOISE_VAR + (SPREAD if components == "sub-model-priors" else 0.0)
    reference_weights = bp.Dirichlet(ALPHA)
    reference_z = bp.Categorical(reference_weights, plates=(n,))
    observations = bp.Mixture(reference_z, bp.GaussianARD, CENTRES, 1.0 / variance)
    observations.observe(y)
    vb = VB(observations, reference_z, reference_weights)
    vb.update(repeat=200, tol=-np.inf, verbose=False)

    q_pi = result.marginal("weights")
    np.testing.assert_allclose(q_pi.mean_log, reference_weights.u[0], rtol=1e-9)
    np.testing.assert_allclose(q_pi.alpha, reference_weights.phi[0], rtol=1e-9)
    np.testing.assert_allclose(result.marginal("z").probabilities, reference_z.u[0], rtol=0, atol=1e-10)
    np.testing.assert_allclose(result.free_energy[-1], -vb.compute_lowerbound(), rtol=1e-10)


# ------------------------------------------------------------------ categorical HMM, Dirichlet transitions
def hmm_case():
    rng = np.random.default_rng(0)
    initial = rng.dirichlet(np.ones(3))
    emission = rng.dirichlet(np.ones(3), 3).T  # P(label = l | z = k) in column k
    alpha0 = rng.uniform(0.5, 2.0, (3, 3))  # column j: the prior of P(z_t = · | z_{t−1} = j)
    labels = rng.integers(0, 3, 15)
    return initial, alpha0, emission, labels


def test_categorical_hmm_with_dirichlet_transitions():
    initial, alpha0, emission, labels = hmm_case()
    length = len(labels)
    with fg.Model() as model:
        MatrixDirichlet("A", alpha0)
        states = [Categorical("s0", initial)]
        for t in range(1, length):
            states.append(Transition(f"s{t}", states[-1], model["A"]))
        for t, label in enumerate(labels):
            Transition(f"y{t}", states[t], emission, observed=label)
    constraints = {"factorization": {f"s{t}": [("out", "in"), ("matrix",)] for t in range(1, length)}}
    result = fg.infer(model, algorithm="vmp", constraints=constraints, init={"A": fg.MatrixDirichlet(alpha0)},
                      iterations=60)

    reference_a = bp.Dirichlet(alpha0.T, plates=(3,))  # row i of BayesPy's matrix is column i of ours
    reference_z = bp.CategoricalMarkovChain(initial, reference_a, states=length)
    observations = bp.Mixture(reference_z, bp.Categorical, emission.T)
    observations.observe(labels)
    vb = VB(observations, reference_z, reference_a)
    vb.update(repeat=150, tol=-np.inf, verbose=False)

    np.testing.assert_allclose(result.marginal("A").alpha, reference_a.phi[0].T, rtol=1e-8)
    # BayesPy's moments of the chain: E[z_1] and the pairs E[z_{t−1} z_tᵀ] (previous state first)
    first, pairs = reference_z.u
    state_marginals = np.concatenate([first[None], pairs.sum(axis=-2)])
    for t in range(length):
        np.testing.assert_allclose(result.marginal(f"s{t}").probabilities, state_marginals[t], rtol=0, atol=1e-9)
    np.testing.assert_allclose(result.free_energy[-1], -vb.compute_lowerbound(), rtol=1e-10)
