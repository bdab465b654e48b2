"""The port of Liu & Li's §6.1 code (fgraph_experiments.baselines.tvb_authors_gmm): with the derived update of W_k
it is the engine's fractional VB sweep for sweep; the printed update agrees with it at ω = 1 only, and is not a
fixed point of fractional VB — the derived update is the normal–Wishart of the prior times the likelihood raised to
ω, computed here from natural parameters."""
import numpy as np
import pytest

from fgraph.models.mixtures import GMMPriors, build_gmm, fit_gmm
from fgraph.models.mixtures.kmeans import kmeans_centres
from fgraph_experiments.baselines import tvb_authors_gmm as port
from fgraph_experiments.gmm_tvb import simulate

pytest.importorskip("sklearn")


def start_responsibilities(X, seed):
    """Their first E-step: the prior (α₀ = 1/2, β₀ = 1, W₀ = cov(X), ν₀ = d + 2) with its means at the k-means
    centres, written out in numpy."""
    from scipy.special import digamma

    d = X.shape[1]
    centres = kmeans_centres(X[None], 2, 25, [seed])[0]
    W0, nu0 = np.cov(X.T), d + 2.0
    log_lambda = digamma((nu0 + 1 - np.arange(1, d + 1)) / 2).sum() + d * np.log(2) + np.linalg.slogdet(W0)[1]
    diff = X[:, None, :] - centres[None]
    log_rho = 0.5 * log_lambda - 0.5 * d - 0.5 * nu0 * np.einsum("nki,ij,nkj->nk", diff, W0, diff)
    return np.exp(log_rho - np.logaddexp.reduce(log_rho, axis=1, keepdims=True))


def engine_fit(X, omega, sweeps, seed):
    priors = GMMPriors(weight_concentration=0.5, mean=X.mean(0), precision_scale=1.0, scale=np.cov(X.T), df=4.0)
    fit = fit_gmm(build_gmm(X, 2, priors, power=omega), start_responsibilities(X, seed), iterations=sweeps, tol=None)
    return {key: value[0] for key, value in fit.posteriors().items()}


def by_weight(q_alpha, *arrays):
    order = np.argsort(q_alpha)[::-1]
    return [np.asarray(a)[order] for a in (q_alpha, *arrays)]


@pytest.mark.parametrize("omega", [1.0, 0.3, 0.02])
def test_the_port_with_the_derived_update_is_the_engines_fit(omega):
    X = simulate(300, 0, 2)
    mine = port.fit_vb_gmm(X[None], omega, [5], "derived", max_iter=13, tol=-np.inf)  # 12 sweeps
    assert mine["sweeps"][0] == 12
    q = engine_fit(X, omega, 12, 5)
    alpha, mean, scale, df, beta = by_weight(q["alpha"], q["mean"], q["scale"], q["df"], q["precision_scale"])
    np.testing.assert_allclose(mine["lambda"][0], alpha, rtol=1e-9)
    # their lambda has the larger weight first (their label-switch fix), the rest is in their order: match by norm
    order = np.argsort([np.linalg.norm(m) for m in mine["rho"][0]])
    ours = np.argsort([np.linalg.norm(m) for m in mean])
    np.testing.assert_allclose(mine["rho"][0][order], mean[ours], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(mine["Phi"][0][order], scale[ours], rtol=1e-9)
    np.testing.assert_allclose(mine["nu"][0][order], df[ours], rtol=1e-9)
    np.testing.assert_allclose(mine["beta"][0][order], beta[ours], rtol=1e-9)


def test_the_printed_update_agrees_at_omega_one_only():
    X = simulate(300, 0, 2)
    printed = port.fit_vb_gmm(X[None], 1.0, [5], "printed", max_iter=13, tol=-np.inf)
    derived = port.fit_vb_gmm(X[None], 1.0, [5], "derived", max_iter=13, tol=-np.inf)
    np.testing.assert_array_equal(printed["Phi"], derived["Phi"])
    printed = port.fit_vb_gmm(X[None], 0.02, [5], "printed", max_iter=13, tol=-np.inf)
    derived = port.fit_vb_gmm(X[None], 0.02, [5], "derived", max_iter=13, tol=-np.inf)
    assert np.max(np.abs(printed["Phi"] - derived["Phi"]) / np.abs(derived["Phi"]).max()) > 1e-3


def test_the_derived_update_is_the_tempered_posterior_and_the_printed_one_is_no_fixed_point():
    """For responsibilities r, q(μ_k, Λ_k) ∝ p(μ_k, Λ_k) Π_n N(x_n | μ_k, Λ_k⁻¹)^{ω r_nk} is normal–Wishart with
    natural parameters prior + ω Σ_n r_nk (x_n, x_n x_nᵀ, 1): from them, W_k⁻¹ = W₀⁻¹ + β₀ m₀m₀ᵀ + ω Σ r x xᵀ − β m mᵀ.
    The engine's update (one sweep from the printed fixed point's responsibilities) is that; the printed fixed
    point is not (so it is not a fixed point of fractional VB), by more than 1 % in W at ω = 0.02."""
    X = simulate(400, 0, 4)
    omega, d = 0.02, 2
    fixed = port.fit_vb_gmm(X[None], omega, [3], "printed", max_iter=3000, tol=1e-12)
    q = {"alpha": fixed["lambda"][0], "mean": fixed["rho"][0], "precision_scale": fixed["beta"][0],
         "scale": fixed["Phi"][0], "df": fixed["nu"][0]}
    from fgraph.models.mixtures.gmm import log_responsibilities

    r = np.exp(log_responsibilities(q, X))  # the E-step at the printed fixed point
    m0, W0, beta0, nu0 = X.mean(0), np.cov(X.T), 1.0, d + 2.0
    w = omega * r  # (n, K)
    beta = beta0 + w.sum(0)
    nu = nu0 + w.sum(0)
    m = (beta0 * m0 + w.T @ X) / beta[:, None]
    W_inv = (np.linalg.inv(W0) + beta0 * np.outer(m0, m0))[None] + np.einsum("nk,ni,nj->kij", w, X, X) \
        - beta[:, None, None] * np.einsum("ki,kj->kij", m, m)
    tempered = np.linalg.inv(W_inv)
    # the engine's M-step from these responsibilities (one sweep; its q(θ) is read before the E-step's effect)
    priors = GMMPriors(weight_concentration=0.5, mean=m0, precision_scale=beta0, scale=W0, df=nu0)
    engine = fit_gmm(build_gmm(X, 2, priors, power=omega), r, iterations=1, tol=None)
    theta = {key: value[0] for key, value in engine.posteriors().items()}
    np.testing.assert_allclose(theta["scale"], tempered, rtol=1e-9)
    np.testing.assert_allclose(theta["mean"], m, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(theta["df"], nu, rtol=1e-12)
    # the printed state is its own update's fixed point, but not the tempered posterior of its responsibilities
    relative = np.abs(q["scale"] - tempered).max() / np.abs(tempered).max()
    assert relative > 0.01


def test_their_choice_and_interval():
    grid = np.array([0.1, 0.3, 1.0])
    assert port.grid_choice(grid, [0.96, 0.94, 0.5]) == 1  # equally close: the larger ω
    lower, upper = port.interval(np.array([65.0, 35.0]))
    from scipy import stats

    assert lower == pytest.approx(stats.beta(65, 35).ppf(0.025)) and upper == pytest.approx(stats.beta(65, 35).ppf(
        0.975))


def test_each_fit_of_a_batch_stops_on_its_own_sweep_as_alone():
    """Their stopping (ELBO change below 1e-4 in one sweep, at most 199 sweeps) per fit: a batch of fits at
    different ω stops each where that fit alone stops, and a stopped fit is the fit run that many sweeps."""
    X = simulate(300, 0, 3)
    data = np.stack([X, X[::-1], X[np.argsort(X[:, 0])]])
    omegas = np.array([1.0, 0.2, 0.02])
    batch = port.fit_vb_gmm(data, omegas, [1, 2, 3], "printed")
    assert np.all(batch["sweeps"] < 199) and len(set(batch["sweeps"].tolist())) > 1
    for r in range(3):
        alone = port.fit_vb_gmm(data[r:r + 1], omegas[r], [[1, 2, 3][r]], "printed")
        assert alone["sweeps"][0] == batch["sweeps"][r]
        np.testing.assert_allclose(alone["lambda"][0], batch["lambda"][r], rtol=1e-12)
        ran = port.fit_vb_gmm(data[r:r + 1], omegas[r], [[1, 2, 3][r]], "printed",
                              max_iter=int(batch["sweeps"][r]) + 1, tol=-np.inf)
        np.testing.assert_allclose(ran["lambda"][0], batch["lambda"][r], rtol=1e-12)
