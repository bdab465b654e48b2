"""The Bayesian Gaussian mixture as a graph (fgraph.models.mixtures.gmm) against scikit-learn and a numpy VB (Bishop §10.2)."""
import numpy as np
import pytest

from fgraph.errors import DataError, ModelError
from fgraph.models.mixtures.gmm import (GMMPriors, build_gmm, fit_gmm, fit_gmm_copies, initial_responsibilities,
                                        log_responsibilities, predictive_log_density, sklearn_lower_bound_offset)
from fgraph.testing import gmm_reference as reference

sklearn = pytest.importorskip("sklearn")
from sklearn.mixture import BayesianGaussianMixture  # noqa: E402


def three_clusters(seed=1, d=2):
    rng = np.random.default_rng(seed)
    centres = np.array([[0.0, 0.0, 0.0], [4.0, 1.0, -1.0], [0.0, 5.0, 2.0]])[:, :d]
    sizes = (60, 50, 40)
    return np.concatenate([rng.multivariate_normal(c, 0.6 * np.eye(d) + 0.3, size=s) for c, s in zip(centres, sizes)])


def sklearn_fit(X, r0, K, **priors):
    """scikit-learn's fixed point from the responsibilities r0 (its M-step from them, then E and M steps)."""
    class FromResponsibilities(BayesianGaussianMixture):
        def _initialize_parameters(self, X, random_state, xp=None):
            self._initialize(X, r0)

    model = FromResponsibilities(n_components=K, weight_concentration_prior_type="dirichlet_distribution",
                                 covariance_type="full", reg_covar=0.0, tol=1e-13, max_iter=5000, **priors)
    return model.fit(X)


def reference_prior(network) -> reference.Prior:
    p = network.priors
    return reference.Prior(np.asarray(p.weight_concentration), p.mean, p.precision_scale, p.scale, p.df)


@pytest.mark.parametrize("d, K, seed, init", [(2, 3, 1, "random"), (3, 3, 2, "kmeans"), (1, 2, 3, "random"),
                                              (2, 4, 4, "random")])
def test_the_fixed_point_is_scikit_learns(d, K, seed, init):
    """Same priors (scikit-learn's defaults), same starting responsibilities: responsibilities and every posterior
    parameter agree to 1e-6 and the ELBO is scikit-learn's lower bound plus the documented constant."""
    X = three_clusters(seed, d) if d > 1 else three_clusters(seed, 2)[:, :1]
    r0 = initial_responsibilities(X, K, init, random_state=seed)[0]
    expected = sklearn_fit(X, r0, K)
    network = build_gmm(X, K)
    fit = fit_gmm(network, r0, iterations=5000, tol=1e-12)
    assert fit.converged
    q = {key: value[0] for key, value in fit.posteriors().items()}
    np.testing.assert_allclose(q["responsibilities"], expected.predict_proba(X), atol=1e-6)
    np.testing.assert_allclose(q["alpha"], expected.weight_concentration_, rtol=1e-6)
    np.testing.assert_allclose(q["precision_scale"], expected.mean_precision_, rtol=1e-6)
    np.testing.assert_allclose(q["mean"], expected.means_, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(q["df"], expected.degrees_of_freedom_, rtol=1e-6)
    np.testing.assert_allclose(q["df"][:, None, None] * q["scale"], expected.precisions_, rtol=1e-6, atol=1e-6)
    offset = sklearn_lower_bound_offset(network.priors, len(X))
    np.testing.assert_allclose(fit.elbo[-1, 0], expected.lower_bound_ + offset, rtol=1e-9, atol=1e-6)
    assert np.all(np.diff(fit.elbo[:, 0]) >= -1e-9 * np.abs(fit.elbo[:, 0]).max())


def test_every_sweep_equals_a_numpy_vb_and_the_elbo_never_decreases():
    X = three_clusters(5)
    K = 3
    r0 = initial_responsibilities(X, K, "random", random_state=0)[0]
    priors = GMMPriors(weight_concentration=0.5, mean=np.array([1.0, 1.0]), precision_scale=0.3,
                       scale=np.array([[0.4, 0.1], [0.1, 0.7]]), df=3.5)
    network = build_gmm(X, K, priors)
    states = []

    def record(iteration, result):
        states.append((result.marginal("theta"), result.marginal("pi"), result.marginal("z")))

    from fgraph.models.mixtures import gmm
    original = gmm.fg.infer
    try:  # record the state after every sweep
        gmm.fg.infer = lambda *args, **kwargs: original(*args, callback=record, **kwargs)
        fit = fit_gmm(network, r0, iterations=40, tol=None)
    finally:
        gmm.fg.infer = original
    expected = reference.run(X, r0, reference_prior(network), 40)
    for (q_theta, q_pi, q_z), (q, r, elbo), value in zip(states, expected, fit.elbo[:, 0]):
        np.testing.assert_allclose(np.ravel(q_pi.alpha), q["alpha"], rtol=1e-10)
        np.testing.assert_allclose(q_theta.location[0, :, 0], q["mean"], rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(q_theta.scale[0, :, 0], q["scale"], rtol=1e-9)
        np.testing.assert_allclose(q_theta.df[0, :, 0], q["df"], rtol=1e-12)
        np.testing.assert_allclose(q_theta.precision_scale[0, :, 0], q["precision_scale"], rtol=1e-12)
        np.testing.assert_allclose(q_z.probabilities.reshape(r.shape), r, atol=1e-10)
        np.testing.assert_allclose(value, elbo, rtol=1e-11)
    assert np.all(np.diff(fit.elbo[:, 0]) >= -1e-9)


def test_restarts_are_copies_of_one_graph():
    """R starts in one run (fg.Model(copies=R)): each copy equals the same start fitted alone, sweep for sweep."""
    X = three_clusters(6)
    K, R = 3, 3
    starts = initial_responsibilities(X, K, "random", random_state=4, n_copies=R)
    together = fit_gmm(build_gmm(X, K, n_copies=R), starts, iterations=25, tol=None)
    for r in range(R):
        alone = fit_gmm(build_gmm(X, K), starts[r], iterations=25, tol=None)
        np.testing.assert_allclose(together.elbo[:, r], alone.elbo[:, 0], rtol=1e-12)
        for key, value in together.posteriors().items():
            np.testing.assert_allclose(value[r], alone.posteriors()[key][0], rtol=1e-10, atol=1e-12)
        assert np.all(np.diff(together.elbo[:, r]) >= -1e-9)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_initial_responsibilities_are_scikit_learns():
    """The same random_state gives the starts of scikit-learn's n_init restarts (here k-means and random)."""
    X = three_clusters(7)
    for method in ("kmeans", "random", "random_from_data", "k-means++"):
        starts = initial_responsibilities(X, 3, method, random_state=11, n_copies=2)
        seen = []

        class Recording(BayesianGaussianMixture):
            def _initialize(self, X, resp):
                seen.append(resp.copy())
                super()._initialize(X, resp)

        Recording(n_components=3, init_params=method, n_init=2, max_iter=1, random_state=11).fit(X)
        np.testing.assert_allclose(starts, np.array(seen), rtol=1e-15)


def test_predictive_density_against_monte_carlo():
    """p(x | data) = E_q[Σ_k π_k N(x | μ_k, Λ_k⁻¹)], by drawing (π, μ, Λ) from q."""
    from fgraph.families.normal_wishart import NormalWishart

    X = three_clusters(8)
    fit = fit_gmm(build_gmm(X, 3), initial_responsibilities(X, 3, "kmeans", random_state=0)[0], iterations=200)
    q = {key: value[0] for key, value in fit.posteriors().items()}
    points = np.array([[0.0, 0.0], [2.0, 3.0], [4.0, 1.0]])
    rng = np.random.default_rng(0)
    S = 200_000
    weights = rng.dirichlet(q["alpha"], size=S)
    means, precisions = NormalWishart(q["mean"], q["precision_scale"], q["scale"], q["df"]).sample(rng, S)
    log_det = np.linalg.slogdet(precisions)[1]  # (S, K)
    for x, value in zip(points, predictive_log_density(q, points)):
        difference = x - means  # (S, K, d)
        log_normal = (0.5 * log_det - np.log(2 * np.pi)
                      - 0.5 * np.einsum("ski,skij,skj->sk", difference, precisions, difference))
        densities = np.sum(weights * np.exp(log_normal), axis=1)
        error = densities.std() / np.sqrt(S)
        assert abs(np.exp(value) - densities.mean()) < 5 * error, (np.exp(value), densities.mean(), error)
        assert error < 0.05 * densities.mean()
    # and the responsibilities of the training points are the fit's
    np.testing.assert_allclose(np.exp(log_responsibilities(q, X)), q["responsibilities"], atol=1e-8)


def test_bad_input_is_a_named_error_before_any_graph():
    X = three_clusters(9)
    with pytest.raises(ModelError, match="n_components must be an integer >= 1"):
        build_gmm(X, 0)
    with pytest.raises(DataError, match=r"N = 2 points cannot fill K = 3"):
        build_gmm(X[:2], 3)
    with pytest.raises(ModelError, match="W₀ must be positive definite"):
        build_gmm(X, 2, GMMPriors(scale=np.array([[1.0, 1.0], [1.0, 1.0]])))
    with pytest.raises(ModelError, match=r"ν₀ must be greater than d − 1 = 1"):
        build_gmm(X, 2, GMMPriors(df=1.0))
    bad = X.copy()
    bad[5, 1] = np.nan
    with pytest.raises(DataError, match=r"NaN or infinite values in 1 rows \(first at index \(5,\)\)"):
        build_gmm(bad, 2)
    with pytest.raises(ModelError, match="power"):
        build_gmm(X, 2, power=0.0)
    with pytest.raises(ModelError, match="W₀ is the inverse of the data's covariance, which is singular"):
        build_gmm(np.column_stack([X[:, 0], np.ones(len(X))]), 2)


def test_latent_points_observed_through_noise():
    """x latent (the node's message to ``out``), y = x + N(0, s I) observed: the free energy never increases, and as
    s → 0 the fit is the one with x observed."""
    import fgraph as fg
    from fgraph.nodes import Categorical, Dirichlet, GaussianMixture, MvNormal, NormalWishart

    X = three_clusters(3)
    N, K = len(X), 3
    observed = build_gmm(X, K)
    p = observed.priors
    r0 = initial_responsibilities(X, K, "random", random_state=1)[0]
    expected = fit_gmm(observed, r0, iterations=300, tol=1e-10).posteriors()
    schedule = [("pi", "out"), ("z", "p"), ("theta", "out"), ("x", "parameters"), ("z", "out"), ("x", "switch"),
                ("y", "mean"), ("x", "out")]
    for noise, tolerance in ((1e-6, 1e-5), (0.3, None)):
        with fg.Model() as model:
            pi = Dirichlet("pi", p.weight_concentration)
            z = Categorical("z", p=pi, batch_shape=(N,))
            theta = NormalWishart("theta", p.mean, p.precision_scale, p.scale, p.df, batch_shape=(K, 1))
            x = GaussianMixture("x", switch=z, parameters=theta, batch_shape=(N,))
            MvNormal("y", mean=x, cov=noise * np.eye(2), observed=X)
        start = fg.MvNormalMeanCovariance(X, np.broadcast_to(noise * np.eye(2), (N, 2, 2)))
        result = fg.infer(model, algorithm="vmp", schedule=schedule, iterations=300, tol=1e-10,
                          init={"z": fg.Categorical(r0), "x": start})
        free_energy = np.array(result.free_energy)
        assert np.all(np.diff(free_energy) <= 1e-10 * np.abs(free_energy).max())
        if tolerance is not None:
            q = result.marginal("theta")
            np.testing.assert_allclose(q.location[:, 0], expected["mean"][0], rtol=tolerance)
            np.testing.assert_allclose(q.df[:, 0], expected["df"][0], rtol=tolerance)
            np.testing.assert_allclose(result.marginal("z").probabilities, expected["responsibilities"][0],
                                       atol=tolerance)


def test_node_powers_per_copy_are_tempered_vb_and_equal_separate_fits():
    """power=ω on the likelihood and the switch's prior (one ω per copy of one graph): every copy equals the same ω
    fitted alone and a numpy VB of the objective ω E[log p(X, Z | θ, π)] + E[log p(θ, π)] − E[log q]
    (the engine's node power: tempered messages, q(Z) ∝ ρ^ω), sweep for sweep; the free energy never increases."""
    X = three_clusters(10)
    K = 3
    omegas = np.array([1.0, 0.5, 0.1, 0.01])
    r0 = initial_responsibilities(X, K, "random", random_state=3)[0]
    together = fit_gmm(build_gmm(X, K, n_copies=len(omegas), power=omegas, objective="tempered"), r0, iterations=30,
                       tol=None)
    prior = reference_prior(build_gmm(X, K))
    for c, omega in enumerate(omegas):
        alone = fit_gmm(build_gmm(X, K, power=float(omega), objective="tempered"), r0, iterations=30, tol=None)
        np.testing.assert_allclose(together.elbo[:, c], alone.elbo[:, 0], rtol=1e-12)
        expected = reference.run(X, r0, prior, 30, omega=omega, temper=omega, z_entropy=1.0)
        np.testing.assert_allclose(together.elbo[:, c], [state[2] for state in expected], rtol=1e-10)
        q, r, _ = expected[-1]
        posterior = {key: value[c] for key, value in together.posteriors().items()}
        np.testing.assert_allclose(posterior["responsibilities"], r, atol=1e-10)
        np.testing.assert_allclose(posterior["scale"], q["scale"], rtol=1e-9)
        np.testing.assert_allclose(posterior["alpha"], q["alpha"], rtol=1e-10)
        assert np.all(np.diff(together.elbo[:, c]) >= -1e-9)


def algorithm_3(X, r0, prior, omega, sweeps):
    """Algorithm 3 of the TVB paper written out, one sweep = steps 3–5 (q(π), q(μ | Λ), q(Λ) from r) then step 2
    (r from them): r_nk ∝ ρ_nk (untempered), α_k = α₀ + ωN_k, β_k = β₀ + ωN_k, m_k = (β₀m₀ + ωN_k x̄_k)/β_k,
    ν_k = ν₀ + ωN_k, W_k⁻¹ = W₀⁻¹ + ωN_k S_k + β₀ωN_k/(β₀ + ωN_k) (x̄_k − m₀)(x̄_k − m₀)ᵀ; and the ELBO of eq. (50)."""
    from scipy.special import digamma, gammaln, multigammaln

    N, d = X.shape
    W0_inv = np.linalg.inv(prior.scale)
    r, out = r0, []
    for _ in range(sweeps):
        Nk = r.sum(0)
        xbar = (r.T @ X) / Nk[:, None]
        S = np.einsum("nk,nki,nkj->kij", r, X[:, None] - xbar, X[:, None] - xbar) / Nk[:, None, None]
        alpha = prior.alpha + omega * Nk
        beta = prior.beta + omega * Nk
        m = (prior.beta * prior.mean + omega * Nk[:, None] * xbar) / beta[:, None]
        nu = prior.df + omega * Nk
        dx = xbar - prior.mean
        W = np.linalg.inv(W0_inv + omega * Nk[:, None, None] * S
                          + (prior.beta * omega * Nk / (prior.beta + omega * Nk))[:, None, None]
                          * dx[:, :, None] * dx[:, None])
        # step 2, eq. (17) and (49)
        e_log_pi = digamma(alpha) - digamma(alpha.sum())
        e_log_det = sum(digamma((nu + 1 - j) / 2) for j in range(1, d + 1)) + d * np.log(2) + np.linalg.slogdet(W)[1]
        diff = X[:, None] - m
        e_quad = d / beta + nu * np.einsum("nki,kij,nkj->nk", diff, W, diff)
        log_rho = e_log_pi + 0.5 * e_log_det - 0.5 * e_quad
        r = np.exp(log_rho - np.logaddexp.reduce(log_rho, axis=1, keepdims=True))
        # the ELBO (50)–(51) at this state, term by term as the appendix writes it
        Nk = r.sum(0)
        xbar = (r.T @ X) / Nk[:, None]
        S = np.einsum("nk,nki,nkj->kij", r, X[:, None] - xbar, X[:, None] - xbar) / Nk[:, None, None]
        log_b = lambda W_, nu_: (-0.5 * nu_ * np.linalg.slogdet(W_)[1] - 0.5 * nu_ * d * np.log(2)  # noqa: E731
                                 - multigammaln(0.5 * nu_, d))
        e_lik = 0.5 * omega * np.sum(Nk * (e_log_det - d / beta - nu * np.einsum("kij,kji->k", S, W)
                                           - nu * np.einsum("ki,kij,kj->k", xbar - m, W, xbar - m)
                                           - d * np.log(2 * np.pi)))
        e_z = omega * np.sum(r * e_log_pi)
        e_pi = gammaln(prior.alpha.sum()) - gammaln(prior.alpha).sum() + np.sum((prior.alpha - 1) * e_log_pi)
        e_qz = omega * np.sum(r * np.log(r))
        e_qpi = gammaln(alpha.sum()) - gammaln(alpha).sum() + np.sum((alpha - 1) * e_log_pi)
        dm = m - prior.mean
        e_theta = (0.5 * np.sum(d * np.log(prior.beta / (2 * np.pi)) + e_log_det - d * prior.beta / beta
                                - prior.beta * nu * np.einsum("ki,kij,kj->k", dm, W, dm))
                   + 0.5 * (prior.df - d - 1) * e_log_det.sum() - 0.5 * np.sum(nu * np.einsum("ij,kji->k", W0_inv, W))
                   + len(nu) * log_b(prior.scale, prior.df))
        e_qtheta = np.sum(0.5 * e_log_det + 0.5 * d * np.log(beta / (2 * np.pi)) - 0.5 * d
                          + 0.5 * (nu - d - 1) * e_log_det - 0.5 * nu * d
                          + np.array([log_b(W[k], nu[k]) for k in range(len(nu))]))
        out.append(({"alpha": alpha, "precision_scale": beta, "mean": m, "df": nu, "scale": W}, r,
                    e_lik + e_z + e_pi + e_theta - e_qz - e_qpi - e_qtheta))
    return out


def test_fractional_vb_is_algorithm_3_and_a_batch_of_omegas_equals_separate_fits():
    """power=ω with the entropy of q(Z) weighted by ω (the paper's eq. 16): every sweep is Algorithm 3 written out by
    hand — posteriors, responsibilities and the ELBO of eq. (50) — for every ω of a batch of copies, each copy
    equals the same ω fitted alone, and the ELBO never decreases."""
    X = three_clusters(11)
    K = 3
    omegas = np.array([1.0, 0.6, 0.05, 0.002])
    r0 = initial_responsibilities(X, K, "random", random_state=2)[0]
    together = fit_gmm(build_gmm(X, K, n_copies=len(omegas), power=omegas), r0, iterations=30, tol=None)
    prior = reference_prior(build_gmm(X, K))
    for c, omega in enumerate(omegas):
        expected = algorithm_3(X, r0, prior, omega, 30)
        np.testing.assert_allclose(together.elbo[:, c], [state[2] for state in expected], rtol=1e-10)
        q, r, _ = expected[-1]
        posterior = {key: value[c] for key, value in together.posteriors().items()}
        np.testing.assert_allclose(posterior["responsibilities"], r, atol=1e-10)
        for key in ("alpha", "precision_scale", "mean", "df", "scale"):
            np.testing.assert_allclose(posterior[key], q[key], rtol=1e-9, atol=1e-12)
        assert np.all(np.diff(together.elbo[:, c]) >= -1e-9 * np.abs(together.elbo[:, c]).max())
        alone = fit_gmm(build_gmm(X, K, power=float(omega)), r0, iterations=30, tol=None)
        np.testing.assert_allclose(together.elbo[:, c], alone.elbo[:, 0], rtol=1e-12)
        # the numpy VB of the module with the paper's weights agrees too (a second, independent write-up)
        other = reference.run(X, r0, prior, 30, omega=omega, temper=1.0, z_entropy=omega)
        np.testing.assert_allclose(together.elbo[:, c], [state[2] for state in other], rtol=1e-10)


def test_omega_to_zero_returns_the_prior_and_the_printed_update_is_not_a_fixed_point():
    """ω → 0: q(π), q(μ, Λ) tend to the prior. And the W_k⁻¹ update as printed in Algorithm 3 (β₀N_k/(β₀ + N_k),
    without ω) moves away from the fractional fixed point and lowers the objective (16) for ω < 1, while the
    update with ω (its derivation, eq. 47) leaves it where it is."""
    X = three_clusters(12)
    K = 3
    network = build_gmm(X, K, power=1e-9)
    fit = fit_gmm(network, initial_responsibilities(X, K, "kmeans", random_state=0)[0], iterations=50, tol=1e-12)
    q = {key: value[0] for key, value in fit.posteriors().items()}
    p = network.priors
    np.testing.assert_allclose(q["alpha"], p.weight_concentration, rtol=1e-6)
    np.testing.assert_allclose(q["precision_scale"], p.precision_scale, rtol=1e-6)
    np.testing.assert_allclose(q["df"], p.df, rtol=1e-6)
    np.testing.assert_allclose(q["mean"], np.broadcast_to(p.mean, (K, 2)), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(q["scale"], np.broadcast_to(p.scale, (K, 2, 2)), rtol=1e-6)

    omega = 0.3
    network = build_gmm(X, K, power=omega)
    fit = fit_gmm(network, initial_responsibilities(X, K, "kmeans", random_state=0)[0], iterations=2000, tol=1e-13)
    q = {key: value[0] for key, value in fit.posteriors().items()}
    r = q["responsibilities"]
    prior = reference_prior(network)
    at_fixed_point = reference.elbo(X, r, q, prior, omega, z_entropy=omega)
    np.testing.assert_allclose(at_fixed_point, fit.elbo[-1, 0], rtol=1e-10)
    derived = reference.m_step(X, r, prior, omega)
    np.testing.assert_allclose(derived["scale"], q["scale"], rtol=1e-6, atol=1e-9)
    Nk = r.sum(0)
    xbar = (r.T @ X) / Nk[:, None]
    printed = dict(derived)
    printed["scale"] = np.linalg.inv(np.linalg.inv(derived["scale"]) + (
        (prior.beta * Nk / (prior.beta + Nk)) - (prior.beta * omega * Nk / (prior.beta + omega * Nk)))[:, None, None]
        * np.einsum("ki,kj->kij", xbar - prior.mean, xbar - prior.mean))
    assert np.max(np.abs(printed["scale"] - q["scale"]) / np.abs(q["scale"]).max()) > 1e-3
    assert reference.elbo(X, r, printed, prior, omega, z_entropy=omega) < at_fixed_point - 1e-3


def test_resamples_and_powers_per_copy_equal_separate_fits():
    """A data set per copy (bootstrap resamples, (R, N, d)) and a power per copy, one graph: each copy equals its
    own fit alone (the layout of a TVB table: ω values × resamples)."""
    X = three_clusters(13)
    K, R = 2, 3
    rng = np.random.default_rng(0)
    resamples = X[rng.integers(0, len(X), size=(R, len(X)))]
    omegas = np.array([1.0, 0.2, 0.5])
    r0 = initial_responsibilities(X, K, "random", random_state=1, n_copies=R)
    priors = GMMPriors(mean=X.mean(0), scale=np.linalg.inv(np.cov(X.T)))  # shared by every copy
    together = fit_gmm(build_gmm(resamples, K, priors, n_copies=R, power=omegas), r0, iterations=20, tol=None)
    for c in range(R):
        alone = fit_gmm(build_gmm(resamples[c], K, priors, power=float(omegas[c])), r0[c], iterations=20, tol=None)
        np.testing.assert_allclose(together.elbo[:, c], alone.elbo[:, 0], rtol=1e-12)
        for key, value in together.posteriors().items():
            np.testing.assert_allclose(value[c], alone.posteriors()[key][0], rtol=1e-10, atol=1e-12)


def _copies_case():
    X = three_clusters(13)
    K, R = 2, 5
    rng = np.random.default_rng(3)
    resamples = X[rng.integers(0, len(X), size=(R, len(X)))]
    omegas = np.array([1.0, 0.002, 0.3, 0.05, 0.7])
    r0 = initial_responsibilities(X, K, "random", random_state=2, n_copies=R)
    priors = GMMPriors(mean=X.mean(0), scale=np.linalg.inv(np.cov(X.T)))
    return resamples, K, r0, omegas, priors


def test_copies_that_settle_leave_and_each_copy_equals_its_fit_alone():
    """fit_gmm_copies: copies stop after different numbers of sweeps (checked every 4), and each equals the same
    function on that copy alone and a plain fit_gmm of that many sweeps; over its last round of 4 sweeps the ELBO
    changed by less than tol, over every earlier round by more."""
    resamples, K, r0, omegas, priors = _copies_case()
    tol, every = 1e-6, 4
    together = fit_gmm_copies(resamples, K, r0, priors, power=omegas, iterations=400, tol=tol, check_every=every)
    assert together.converged.all() and len(set(together.iterations.tolist())) > 1  # they settled at different sweeps
    assert np.all(together.iterations % every == 0)
    for c in range(len(omegas)):
        alone = fit_gmm_copies(resamples[c:c + 1], K, r0[c:c + 1], priors, power=omegas[c], iterations=400, tol=tol,
                               check_every=every)
        assert alone.iterations[0] == together.iterations[c]
        plain = fit_gmm(build_gmm(resamples[c], K, priors, power=float(omegas[c])), r0[c],
                        iterations=int(together.iterations[c]), tol=None)
        trace = plain.elbo[:, 0]
        assert together.elbo[c] == pytest.approx(trace[-1], rel=1e-12)
        changes = np.abs(np.diff(trace[every - 1::every]))  # the change over each round after the first
        assert changes[-1] < tol and np.all(changes[:-1] >= tol)
        for key, value in together.posteriors.items():
            np.testing.assert_allclose(value[c], alone.posteriors[key][0], rtol=1e-10, atol=1e-12)
            np.testing.assert_allclose(value[c], plain.posteriors()[key][0], rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("iterations, every, tol", [(400, 4, 1e-6), (23, 5, 1e-3)])
def test_a_batch_smaller_than_the_copies_refills_and_changes_no_copy(iterations, every, tol):
    """With at most ``batch_size`` copies in the graph, the waiting ones join as others settle: every copy stops
    after the same sweeps with the same posteriors as when all run at once (23 sweeps checked every 5: copies
    whose last round is shorter run it apart)."""
    resamples, K, r0, omegas, priors = _copies_case()
    together = fit_gmm_copies(resamples, K, r0, priors, power=omegas, iterations=iterations, tol=tol,
                              check_every=every)
    for batch in (1, 2):
        refilled = fit_gmm_copies(resamples, K, r0, priors, power=omegas, iterations=iterations, tol=tol,
                                  check_every=every, batch_size=batch)
        np.testing.assert_array_equal(refilled.iterations, together.iterations)
        np.testing.assert_array_equal(refilled.converged, together.converged)
        np.testing.assert_allclose(refilled.elbo, together.elbo, rtol=1e-12)
        for key, value in together.posteriors.items():
            np.testing.assert_allclose(refilled.posteriors[key], value, rtol=1e-10, atol=1e-12)
    if iterations == 23:  # some settle early, the others run into the cap: copies join mid-way and end apart
        assert (together.iterations < iterations).any() and (together.iterations == iterations).any()


def test_copies_without_a_tolerance_run_every_sweep_and_equal_one_long_fit():
    resamples, K, r0, omegas, priors = _copies_case()
    rounds = fit_gmm_copies(resamples, K, r0, priors, power=omegas, iterations=23, tol=None, check_every=5)
    assert np.all(rounds.iterations == 23) and not rounds.converged.any()
    long = fit_gmm(build_gmm(resamples, K, priors, n_copies=len(omegas), power=omegas), r0, iterations=23, tol=None)
    np.testing.assert_allclose(rounds.elbo, long.elbo[-1], rtol=1e-12)
    for key, value in long.posteriors().items():
        np.testing.assert_allclose(rounds.posteriors[key], value, rtol=1e-10, atol=1e-12)
