"""The CMN baselines in JAX (fgraph_experiments.baselines), checked against numpy and scipy.

Skipped without the ``baselines`` extra (JAX, optax, NumPyro, ArviZ).
* the network's pieces equal numpy evaluations: stick-breaking log-probabilities equal the CAVI
  reference's, the NumPyro model's log joint equals a sum of scipy densities (priors, the expert
  mixture over z, the output), the Monte Carlo class probabilities equal a numpy loop with the same
  draws, and the gated-mean network equals a numpy forward pass;
* maximum likelihood: the first loss equals the numpy negative log-likelihood at the initial
  parameters, the loss falls, a separable problem is learnt, restarts in one vmapped program equal
  separate runs with the same keys, probabilities sum to 1;
* black-box VI: the ELBO rises on average, restarts equal separate runs, the InferenceData holds
  the pointwise log-likelihoods;
* NUTS on a one-expert model agrees with a long BBVI run within the posterior spread.
"""
import numpy as np
import pytest

pytest.importorskip("jax")
pytest.importorskip("optax")
pytest.importorskip("numpyro")
pytest.importorskip("arviz")

from scipy import stats  # noqa: E402
from scipy.special import logsumexp  # noqa: E402

from fgraph.errors import DataError, ModelError  # noqa: E402
from fgraph_experiments.baselines import network  # noqa: E402
from fgraph_experiments.baselines.mle import fit_mle, initial_parameters  # noqa: E402
from fgraph_experiments.baselines.network import CMNPriors, jax, jnp  # noqa: E402
from fgraph.testing.cmn_reference import stick_log_probabilities as numpy_stick  # noqa: E402


def random_parameters(rng, K, L, D):
    h = L - 1
    return {
        "beta0": rng.standard_normal((K - 1, D)),
        "A": rng.standard_normal((K, h, D)),
        "lam": rng.gamma(2.0, 1.0, (K, h)),
        "beta1": rng.standard_normal((L - 1, h + 1)),
    }


def separable(n=40, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, 2))
    return x, (x[:, 0] - 0.5 * x[:, 1] > 0).astype(int)


# ----------------------------------------------------------------------------- the network
@pytest.mark.parametrize("n_classes", [1, 2, 5])
def test_stick_log_probabilities_equal_the_reference(n_classes):
    psi = np.random.default_rng(1).standard_normal((7, n_classes - 1)) * 3
    np.testing.assert_allclose(network.stick_log_probabilities(jnp.asarray(psi)), numpy_stick(psi), rtol=1e-13)


def test_numpyro_log_joint_equals_scipy():
    from numpyro.infer.util import log_density

    rng = np.random.default_rng(2)
    N, d, K, L = 6, 2, 3, 3
    h, D = L - 1, d + 1
    x0 = rng.standard_normal((N, d))
    x0t = np.concatenate([x0, np.ones((N, 1))], 1)
    y = rng.integers(0, L, N)
    theta = random_parameters(rng, K, L, D)
    x1 = rng.standard_normal((N, h))
    priors = CMNPriors(v0=10.0, a0=2.0, b0=1.5, sigma0=5.0, sigma1=3.0)
    value, _ = log_density(network.numpyro_model, (jnp.asarray(x0t), jnp.asarray(y)),
                           {"n_experts": K, "n_classes": L, "priors": priors},
                           {**{k: jnp.asarray(v) for k, v in theta.items()}, "x1": jnp.asarray(x1)})
    lam = theta["lam"]
    expected = (stats.norm.logpdf(theta["beta0"], 0, 5.0).sum() + stats.norm.logpdf(theta["beta1"], 0, 3.0).sum()
                + stats.gamma.logpdf(lam, 2.0, scale=1 / 1.5).sum()
                + stats.norm.logpdf(theta["A"], 0, np.sqrt(10.0 / lam)[..., None]).sum())
    log_gate = numpy_stick(x0t @ theta["beta0"].T)  # (N, K)
    for n in range(N):
        per_expert = [log_gate[n, k] + stats.norm.logpdf(x1[n], theta["A"][k] @ x0t[n], 1 / np.sqrt(lam[k])).sum()
                      for k in range(K)]
        psi = theta["beta1"][:, :-1] @ x1[n] + theta["beta1"][:, -1]
        expected += logsumexp(per_expert) + numpy_stick(psi)[y[n]]
    assert float(value) == pytest.approx(expected, rel=1e-12)


def test_monte_carlo_class_probabilities_equal_a_numpy_loop():
    rng = np.random.default_rng(3)
    N, d, K, L, S = 4, 3, 3, 4, 5
    D, h = d + 1, L - 1
    x0t = np.concatenate([rng.standard_normal((N, d)), np.ones((N, 1))], 1)
    theta = random_parameters(rng, K, L, D)
    noise = rng.standard_normal((S, N, K, h))
    result = np.exp(network.log_class_probabilities({k: jnp.asarray(v) for k, v in theta.items()},
                                                    jnp.asarray(x0t), jnp.asarray(noise)))
    expected = np.zeros((N, L))
    gate = np.exp(numpy_stick(x0t @ theta["beta0"].T))
    for s in range(S):
        for n in range(N):
            for k in range(K):
                x1 = theta["A"][k] @ x0t[n] + noise[s, n, k] / np.sqrt(theta["lam"][k])
                expected[n] += gate[n, k] * np.exp(numpy_stick(theta["beta1"][:, :-1] @ x1 + theta["beta1"][:, -1])) / S
    np.testing.assert_allclose(result, expected, rtol=1e-12)
    np.testing.assert_allclose(result.sum(1), 1.0, rtol=1e-12)


def test_gated_mean_network_equals_numpy():
    rng = np.random.default_rng(4)
    N, d, K, L = 5, 2, 4, 3
    x0t = np.concatenate([rng.standard_normal((N, d)), np.ones((N, 1))], 1)
    theta = random_parameters(rng, K, L, d + 1)
    gate = np.exp(numpy_stick(x0t @ theta["beta0"].T))
    x1 = np.einsum("nk,kid,nd->ni", gate, theta["A"], x0t)
    expected = numpy_stick(x1 @ theta["beta1"][:, :-1].T + theta["beta1"][:, -1])
    result = network.gated_mean_log_probabilities({k: jnp.asarray(v) for k, v in theta.items()}, jnp.asarray(x0t))
    np.testing.assert_allclose(result, expected, rtol=1e-12)


@pytest.mark.parametrize("args, error, match", [
    (dict(x0=np.zeros((3, 2)), y=[0, 1, 2], n_experts=0), ModelError, "n_experts"),
    (dict(x0=np.zeros((3, 2)), y=[0, 0, 0], n_experts=2), ModelError, "n_classes"),
    (dict(x0=np.zeros((3, 2)), y=[0, 1, 3], n_experts=2, n_classes=3), DataError, "outside"),
    (dict(x0=np.array([[0.0, np.nan], [1, 1]]), y=[0, 1], n_experts=2), DataError, "NaN"),
    (dict(x0=np.zeros((3, 2)), y=[0, 1], n_experts=2), DataError, "y must be"),
])
def test_bad_input(args, error, match):
    with pytest.raises(error, match=match):
        network.prepare_data(**args)


@pytest.mark.parametrize("options, error, match", [
    (dict(x_test=np.zeros((2, 3))), DataError, "x_test has 3 features"),
    (dict(steps=0), ValueError, "steps"),
    (dict(n_restarts=0), ValueError, "n_restarts"),
    (dict(keys=np.zeros((2, 3), np.uint32)), ValueError, "keys"),
])
def test_bad_options_fail_before_fitting(options, error, match):
    from fgraph_experiments.baselines.bbvi import fit_bbvi

    x, y = separable(10)
    for fit in (fit_mle, fit_bbvi):
        with pytest.raises(error, match=match):
            fit(x, y, n_experts=2, **options)


# ----------------------------------------------------------------------------- maximum likelihood
def test_mle_first_loss_is_the_numpy_negative_log_likelihood_and_the_loss_falls():
    x, y = separable()
    keys = jax.random.split(jax.random.PRNGKey(5), 2)
    fit = fit_mle(x, y, n_experts=3, steps=200, keys=keys)
    x0t = np.concatenate([x, np.ones((len(x), 1))], 1)
    for r in range(2):
        start = {k: np.asarray(v) for k, v in initial_parameters(keys[r], 2, 3, 2).items()}
        gate = np.exp(numpy_stick(x0t @ start["beta0"].T))
        x1 = np.einsum("nk,kid,nd->ni", gate, start["A"], x0t)
        log_p = numpy_stick(x1 @ start["beta1"][:, :-1].T + start["beta1"][:, -1])
        assert fit.trace[r, 0] == pytest.approx(-log_p[np.arange(len(y)), y].sum(), rel=1e-12)
        assert fit.trace[r, -1] < 0.5 * fit.trace[r, 0]
        assert np.mean(np.diff(fit.trace[r]) < 0) > 0.9
    assert fit.trace.shape == (2, 200) and fit.seconds_per_step > 0


def test_mle_learns_a_separable_problem():
    x, y = separable()
    fit = fit_mle(x, y, n_experts=2, steps=1500, n_restarts=2, seed=0)
    assert np.all((fit.probabilities.argmax(-1) == y).mean(1) >= 0.95)
    np.testing.assert_allclose(fit.probabilities.sum(-1), 1.0, rtol=1e-12)
    # the log-likelihoods are those of the returned probabilities (test inputs default to training)
    np.testing.assert_allclose(fit.log_likelihood[:, 0], np.log(fit.probabilities[:, np.arange(len(y)), y]), atol=1e-14)
    np.testing.assert_allclose(-fit.log_likelihood.sum((1, 2)), fit.trace[:, -1], rtol=0.01)


def test_mle_restarts_equal_separate_runs():
    x, y = separable(30, seed=1)
    keys = jax.random.split(jax.random.PRNGKey(7), 3)
    x_test = np.random.default_rng(2).standard_normal((5, 2))
    batch = fit_mle(x, y, n_experts=3, steps=50, keys=keys, x_test=x_test)
    for r in range(3):
        alone = fit_mle(x, y, n_experts=3, steps=50, keys=keys[r:r + 1], x_test=x_test)
        np.testing.assert_allclose(batch.trace[r], alone.trace[0], rtol=1e-10)
        np.testing.assert_allclose(batch.probabilities[r], alone.probabilities[0], rtol=1e-10)
        np.testing.assert_allclose(batch.params["A"][r], alone.params["A"][0], rtol=1e-10)
    assert not np.allclose(batch.trace[0], batch.trace[1])  # the keys matter


# ----------------------------------------------------------------------------- black-box VI
@pytest.fixture(scope="module")
def bbvi_pair():
    """Two BBVI restarts in one program (short run; few particles keep the compile short)."""
    from fgraph_experiments.baselines.bbvi import fit_bbvi

    x, y = separable(30, seed=3)
    keys = jax.random.split(jax.random.PRNGKey(11), 2)
    options = dict(n_experts=2, steps=300, num_particles=2, posterior_draws=8, x1_draws=4, x_test=x[:7])
    return x, y, keys, options, fit_bbvi(x, y, keys=keys, **options)


def test_bbvi_elbo_rises_and_predicts(bbvi_pair):
    x, y, _, _, fit = bbvi_pair
    first, last = fit.trace[:, :30].mean(1), fit.trace[:, -30:].mean(1)
    assert np.all(last > first + 0.2 * np.abs(first))  # noisy per step, clearly higher on average
    np.testing.assert_allclose(fit.probabilities.sum(-1), 1.0, rtol=1e-12)
    assert fit.probabilities.shape == (2, 7, 2) and np.all((fit.probabilities.argmax(-1) == y[:7]).mean(1) >= 5 / 7)
    assert fit.log_likelihood.shape == (2, 8, 30) and np.all(fit.log_likelihood < 0)
    np.testing.assert_array_equal(fit.inference_data.log_likelihood["y"].values, fit.log_likelihood)


def test_bbvi_restarts_equal_separate_runs(bbvi_pair):
    from fgraph_experiments.baselines.bbvi import fit_bbvi

    x, y, keys, options, batch = bbvi_pair
    alone = fit_bbvi(x, y, keys=keys[1:], **options)
    np.testing.assert_allclose(batch.trace[1], alone.trace[0], rtol=1e-8)
    np.testing.assert_allclose(batch.params["A_loc"][1], alone.params["A_loc"][0], rtol=1e-8)
    np.testing.assert_allclose(batch.probabilities[1], alone.probabilities[0], rtol=1e-8)
    assert not np.allclose(batch.trace[0], batch.trace[1])


# ----------------------------------------------------------------------------- NUTS
def _hermite_output_probability(lam, A, beta1, x0t, label, nodes=40):
    """p(y = label | x0, θ) for one expert, h = 1, L = 2, by Gauss–Hermite over x1 ~ N(A x̃0, 1/λ).

    θ arrays carry a leading draw axis: lam (M,), A (M, D), beta1 (M, 2); x0t (N, D) → (M, N)."""
    t, w = np.polynomial.hermite.hermgauss(nodes)
    mean = A @ x0t.T  # (M, N)
    x1 = mean[..., None] + np.sqrt(2.0 / lam)[:, None, None] * t  # (M, N, nodes)
    psi = beta1[:, 0, None, None] * x1 + beta1[:, 1, None, None]
    log_p = numpy_stick(psi[..., None])[..., label]  # (M, N, nodes)
    return np.exp(log_p) @ w / np.sqrt(np.pi)


def test_nuts_predictive_matches_importance_sampling_from_the_prior():
    """One expert, one input, two classes, ten points: θ = (λ, A, β1) has 5 dimensions, so the exact
    posterior predictive is reachable by self-normalised importance sampling from the prior, with
    the likelihood of each point integrated over x1 by Gauss–Hermite quadrature. NUTS must agree
    within 4 combined Monte Carlo standard errors (NUTS's from ArviZ's effective sample size of the
    per-draw predictive, importance sampling's from the weights' effective sample size)."""
    import arviz

    from fgraph_experiments.baselines.nuts import fit_nuts

    rng = np.random.default_rng(0)
    x = rng.standard_normal((10, 1))
    y = (x[:, 0] + 0.3 * rng.standard_normal(10) > 0).astype(int)
    x_test = np.array([[-1.5], [0.0], [1.5]])
    fit = fit_nuts(x, y, n_experts=1, num_warmup=300, num_samples=250, num_chains=4, x1_draws=64, x_test=x_test)
    x0t = np.concatenate([x, np.ones((10, 1))], 1)
    xt_test = np.concatenate([x_test, np.ones((3, 1))], 1)

    # NUTS: the predictive of class 0 per draw, by quadrature
    C, S = fit.params["lam"].shape[:2]
    lam, A, beta1 = (fit.params[k].reshape(C * S, -1) for k in ("lam", "A", "beta1"))
    per_draw = _hermite_output_probability(lam[:, 0], A, beta1, xt_test, 0).reshape(C, S, 3)
    nuts_mean = per_draw.mean((0, 1))
    nuts_se = per_draw.std((0, 1)) / np.sqrt([arviz.ess(per_draw[:, :, i]) for i in range(3)])
    # the returned probabilities (Monte Carlo over x1 with 64 draws) agree with the quadrature
    np.testing.assert_allclose(fit.probabilities[0, :, 0], nuts_mean, atol=0.01)

    # importance sampling from the prior (eq. 4 with one expert)
    M, p = 200_000, CMNPriors()
    lam_p = rng.gamma(p.a0, 1.0 / p.b0, M)
    A_p = rng.standard_normal((M, 2)) * np.sqrt(p.v0 / lam_p)[:, None]
    beta1_p = rng.standard_normal((M, 2)) * p.sigma1
    log_w = np.zeros(M)
    for label in (0, 1):
        points = y == label
        log_w += np.log(_hermite_output_probability(lam_p, A_p, beta1_p, x0t[points], label)).sum(1)
    w = np.exp(log_w - log_w.max())
    w /= w.sum()
    values = _hermite_output_probability(lam_p, A_p, beta1_p, xt_test, 0)  # (M, 3)
    is_mean = w @ values
    is_se = np.sqrt(w ** 2 @ (values - is_mean) ** 2)
    assert 1.0 / np.sum(w ** 2) > 2000  # enough effective draws for the comparison to mean something
    np.testing.assert_array_less(np.abs(nuts_mean - is_mean), 4 * np.sqrt(nuts_se ** 2 + is_se ** 2))
    assert fit.extra["divergences"].sum() <= 5
    np.testing.assert_allclose(fit.probabilities.sum(-1), 1.0, rtol=1e-12)
    assert fit.inference_data.log_likelihood["y"].shape == (4, 250, 10)
