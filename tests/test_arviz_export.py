"""``result.to_arviz()``: posterior draws, observed data and pointwise log-likelihoods as ``arviz.InferenceData``.

Oracles: the closed-form posterior of a conjugate normal mean (draw moments within a few Monte Carlo standard
errors), scipy.stats log densities at every draw, and WAIC computed by hand from the exported log-likelihood
matrix (lppd − p_waic, with ArviZ's variance over the draws, ddof 0).
"""
import sys
import warnings

import numpy as np
import pytest
from scipy import stats
from scipy.special import logsumexp

import fgraph as fg
from fgraph.errors import ModelError
from fgraph.families.pointmass import PointMass
from fgraph.nodes import Bernoulli, Beta, Categorical, Dirichlet, Gamma, MvNormal, Normal
from fgraph.nodes.logistic import Logistic

az = pytest.importorskip("arviz")
warnings.filterwarnings("ignore", category=FutureWarning, module="arviz")

Y = np.random.default_rng(7).normal(1.0, 2.0, size=20)
PRIOR_VAR, NOISE_VAR = 10.0, 4.0


def normal_mean_result():
    with fg.Model() as model:
        mu = Normal("mu", mean=0.0, var=PRIOR_VAR)
        Normal("y", mean=mu, var=NOISE_VAR, observed=Y)
    return fg.infer(model)


def test_draws_of_a_conjugate_normal_mean_have_the_closed_form_moments():
    draws = 20000
    idata = normal_mean_result().to_arviz(draws=draws, seed=0)
    precision = 1.0 / PRIOR_VAR + len(Y) / NOISE_VAR
    mean, var = Y.sum() / NOISE_VAR / precision, 1.0 / precision
    samples = idata.posterior["mu"].values
    assert samples.shape == (1, draws)
    # 20000 draws: the mean's standard error is sqrt(var / 20000), the variance's relative one sqrt(2 / 20000) = 1%
    assert abs(samples.mean() - mean) < 4.0 * np.sqrt(var / draws)
    assert abs(samples.var() / var - 1.0) < 0.04
    np.testing.assert_array_equal(idata.observed_data["y"].values, Y)


def test_the_log_likelihood_is_scipys_at_every_draw_and_waic_is_the_hand_computed_one():
    idata = normal_mean_result().to_arviz(draws=500, seed=1)
    mu = idata.posterior["mu"].values[0]
    log_likelihood = idata.log_likelihood["y"].values[0]
    np.testing.assert_allclose(log_likelihood, stats.norm.logpdf(Y[None, :], mu[:, None], np.sqrt(NOISE_VAR)),
                               rtol=1e-12, atol=1e-12)
    lppd = logsumexp(log_likelihood, axis=0) - np.log(len(mu))
    p_waic = log_likelihood.var(axis=0)
    assert az.waic(idata).elpd_waic == pytest.approx(np.sum(lppd - p_waic), rel=1e-10)
    assert np.isfinite(az.loo(idata).elpd_loo)


def test_a_seed_repeats_the_draws_and_chains_add_an_axis():
    result = normal_mean_result()
    first, again = result.to_arviz(draws=50, seed=3), result.to_arviz(draws=50, seed=3)
    np.testing.assert_array_equal(first.posterior["mu"].values, again.posterior["mu"].values)
    assert result.to_arviz(draws=50, seed=3, chains=3).posterior["mu"].shape == (3, 50)
    idata = result.to_arviz(draws=10, seed=0, observed=False, log_likelihood=False)
    assert set(idata.groups()) == {"posterior"}


def test_normal_with_unknown_precision_by_vmp():
    with fg.Model() as model:
        mu = Normal("mu", mean=0.0, var=PRIOR_VAR)
        tau = Gamma("tau", shape=1.0, rate=1.0)
        Normal("y", mean=mu, precision=tau, observed=Y)
    result = fg.infer(model, algorithm="vmp", iterations=50, init={"tau": fg.Gamma(1.0, 1.0)})
    idata = result.to_arviz(draws=300, seed=2, chains=2)
    mu, tau = idata.posterior["mu"].values, idata.posterior["tau"].values
    assert mu.shape == tau.shape == (2, 300)
    expected = stats.norm.logpdf(Y, mu[..., None], 1.0 / np.sqrt(tau[..., None]))
    np.testing.assert_allclose(idata.log_likelihood["y"].values, expected, rtol=1e-12, atol=1e-12)
    assert np.isfinite(az.loo(idata).elpd_loo)


def test_a_point_mass_marginal_is_left_out_with_a_warning_and_its_estimate_enters_the_log_likelihood():
    with fg.Model() as model:
        mu = Normal("mu", mean=0.0, var=PRIOR_VAR)
        tau = Gamma("tau", shape=2.0, rate=0.5)
        Normal("y", mean=mu, precision=tau, observed=Y)
    result = fg.infer(model, algorithm="vmp", iterations=30, constraints={"form": {"tau": "point_mass"}},
                      init={"tau": fg.Gamma(2.0, 0.5)})
    with pytest.warns(UserWarning, match="'tau' is left out of the posterior group: its marginal is a point mass"):
        idata = result.to_arviz(draws=100, seed=0)
    assert list(idata.posterior.data_vars) == ["mu"]
    estimate = float(result.marginal("tau").value)
    expected = stats.norm.logpdf(Y, idata.posterior["mu"].values[0][:, None], 1.0 / np.sqrt(estimate))
    np.testing.assert_allclose(idata.log_likelihood["y"].values[0], expected, rtol=1e-12)


def test_bernoulli_and_categorical_observations():
    flips = np.array([1, 0, 1, 1, 0, 1.0])
    with fg.Model() as model:
        p = Beta("p", a=1.0, b=1.0)
        Bernoulli("x", p=p, observed=flips)
    idata = fg.infer(model).to_arviz(draws=200, seed=0)
    p = idata.posterior["p"].values[0]
    np.testing.assert_allclose(idata.log_likelihood["x"].values[0], stats.bernoulli.logpmf(flips, p[:, None]),
                               rtol=1e-12)
    labels = np.array([0, 1, 2, 2, 1])
    with fg.Model() as model:
        q = Dirichlet("q", alpha=np.ones(3))
        Categorical("c", p=q, observed=labels)
    idata = fg.infer(model).to_arviz(draws=200, seed=0)
    q = idata.posterior["q"].values[0]
    assert q.shape == (200, 3)
    np.testing.assert_allclose(idata.log_likelihood["c"].values[0], np.log(q[:, labels]), rtol=1e-12)


def test_a_plate_of_local_means_keeps_its_named_axis():
    data = np.random.default_rng(3).normal(size=5)
    with fg.Model() as model:
        mu = Normal("mu", mean=0.0, var=PRIOR_VAR)
        x = Normal("x", mean=mu, var=1.0, batch_shape=(5,))
        Normal("obs", mean=x, var=0.5, observed=data)
    idata = fg.infer(model).to_arviz(draws=100, seed=0)
    assert idata.posterior["x"].dims == ("chain", "draw", "x_dim_0")
    assert idata.log_likelihood["obs"].dims == ("chain", "draw", "obs_dim_0")
    assert idata.observed_data["obs"].dims == ("obs_dim_0",)
    x = idata.posterior["x"].values[0]
    np.testing.assert_allclose(idata.log_likelihood["obs"].values[0], stats.norm.logpdf(data, x, np.sqrt(0.5)),
                               rtol=1e-12)


def test_a_multivariate_normal_observation():
    cov = np.array([[1.0, 0.3], [0.3, 0.5]])
    data = np.random.default_rng(4).multivariate_normal([1.0, -1.0], cov, size=8)
    with fg.Model() as model:
        mu = MvNormal("mu", mean=np.zeros(2), cov=4.0 * np.eye(2))
        MvNormal("y", mean=mu, cov=cov, observed=data)
    idata = fg.infer(model).to_arviz(draws=50, seed=0)
    mu = idata.posterior["mu"].values[0]
    assert mu.shape == (50, 2) and idata.log_likelihood["y"].shape == (1, 50, 8)
    expected = np.array([stats.multivariate_normal(m, cov).logpdf(data) for m in mu])
    np.testing.assert_allclose(idata.log_likelihood["y"].values[0], expected, rtol=1e-10)


def test_an_observing_node_without_an_exact_log_density_gives_no_log_likelihood_group_and_says_which():
    rows = np.random.default_rng(5).normal(size=(12, 2))
    labels = (rows[:, 0] > 0).astype(float)
    with fg.Model() as model:
        beta = MvNormal("beta", mean=np.zeros(3), cov=4.0 * np.eye(3))
        Logistic("y", beta, rows, observed=labels)
    result = fg.infer(model, algorithm="vmp", iterations=10, init={"y_xi": PointMass(0.0)})
    with pytest.warns(UserWarning, match=r"no log_likelihood group .*node 'y' \(LogisticNode\)"):
        idata = result.to_arviz(draws=20, seed=0)
    assert "log_likelihood" not in idata.groups() and "beta" in idata.posterior


def test_bad_options_and_models_with_copies_are_refused():
    result = normal_mean_result()
    for options in ({"draws": 0}, {"draws": 2.5}, {"chains": -1}, {"seed": "x"}):
        with pytest.raises(ModelError, match=f"to_arviz: {next(iter(options))}="):
            result.to_arviz(**options)
    with fg.Model(copies=2) as model:
        mu = Normal("mu", mean=0.0, var=PRIOR_VAR)
        Normal("y", mean=mu, var=NOISE_VAR, observed=Y)
    with pytest.raises(ModelError, match="exports a model without copies"):
        fg.infer(model).to_arviz()


def test_without_arviz_the_error_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "arviz", None)  # `import arviz` raises ImportError
    with pytest.raises(ImportError, match=r'pip install "fgraph-mp\[arviz\]"'):
        normal_mean_result().to_arviz()
