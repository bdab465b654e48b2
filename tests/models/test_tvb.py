"""Trustworthy VB for the Gaussian mixture (fgraph.models.tvb): credible intervals against closed forms computed
here with scipy, the TVB table against separate fits and plain VB, resuming an interrupted build, the process pool
and Dask against the in-process build, Algorithm 1 against Algorithm 2, named errors."""
import numpy as np
import pytest
from scipy import stats

from fgraph.errors import DataError
from fgraph.models import tvb
from fgraph.models.mixtures.gmm import GMMPriors, build_gmm, fit_gmm, log_responsibilities
from fgraph.models.tvb import gmm as gmm_tvb
from fgraph.models.tvb.build import align_components, plan_blocks

pytest.importorskip("sklearn")


def two_clusters(N=120, separation=3.0, weight=0.65, seed=0):
    """N points of 0.65 N((0, 0), I) + 0.35 N((s, s), I), the paper's §6.1 design."""
    rng = np.random.default_rng(seed)
    first = rng.random(N) < weight
    return np.where(first[:, None], rng.normal(0.0, 1.0, (N, 2)), rng.normal(separation, 1.0, (N, 2)))


PRIORS = GMMPriors(weight_concentration=1.0)
SMALL = dict(grid=[0.1, 0.4, 1.0], n_bootstrap=4, priors=PRIORS, block_size=5, iterations=150, tol=None)


@pytest.fixture(scope="module")
def small_table():
    return tvb.build_tvb_table(two_clusters(), 2, n_jobs=1, **SMALL)


def a_posterior(seed=0, K=3, d=2, leading=(4,)):
    """Posterior parameters of valid shapes and values (alpha, m, β, W, ν), leading axes first."""
    rng = np.random.default_rng(seed)
    factor = rng.normal(size=leading + (K, d, d))
    return {"alpha": rng.uniform(0.5, 40.0, leading + (K,)), "mean": rng.normal(size=leading + (K, d)),
            "precision_scale": rng.uniform(1.0, 30.0, leading + (K,)),
            "scale": factor @ np.swapaxes(factor, -1, -2) / d + 0.2 * np.eye(d),
            "df": rng.uniform(d + 0.5, 40.0, leading + (K,))}


# ------------------------------------------------------------------------------------------ credible intervals
def test_weight_intervals_are_beta_quantiles():
    q = a_posterior()
    for level in (0.95, 0.8):
        for k in range(3):
            got = tvb.credible_intervals(q, f"weight[{k}]", level)
            a, b = q["alpha"][:, k], q["alpha"].sum(-1) - q["alpha"][:, k]
            np.testing.assert_allclose(got.lower, stats.beta.ppf((1 - level) / 2, a, b), rtol=1e-10)
            np.testing.assert_allclose(got.upper, stats.beta.ppf((1 + level) / 2, a, b), rtol=1e-10)
            np.testing.assert_allclose(got.point, a / (a + b), rtol=1e-12)
    one = tvb.credible_intervals({key: value[2] for key, value in q.items()}, "weight[1]")  # no leading axes
    a = q["alpha"][2, 1]
    np.testing.assert_allclose([one.lower, one.upper], stats.beta(a, q["alpha"][2].sum() - a).ppf([0.025, 0.975]))
    largest = tvb.credible_intervals(q, "weight[largest]")
    k = np.argmax(q["alpha"], axis=-1)
    a = q["alpha"][np.arange(4), k]
    np.testing.assert_allclose(largest.lower, stats.beta.ppf(0.025, a, q["alpha"].sum(-1) - a), rtol=1e-10)


def test_mean_intervals_are_multivariate_t_marginals():
    """μ_k ~ St(ν_k − d + 1, m_k, W_k⁻¹ / (β_k (ν_k − d + 1))) (Murphy 2007): the interval of μ_kj holds 2.5 % of
    scipy's multivariate t on either side (its cdf with the other coordinate free), that of aᵀμ_k is scipy's
    univariate t with the projected scale, and draws of (μ, Λ) from the normal–Wishart fall inside 95 % of the time."""
    q = a_posterior(seed=1, leading=(2,))
    d = 2
    for i in range(2):
        for k in range(3):
            dof = q["df"][i, k] - d + 1
            shape = np.linalg.inv(q["scale"][i, k]) / (q["precision_scale"][i, k] * dof)
            t = stats.multivariate_t(loc=q["mean"][i, k], shape=shape, df=dof)
            for j in range(d):
                got = tvb.credible_intervals(q, f"mean[{k}, {j}]")[i]
                bound = np.full(d, np.inf)
                bound[j] = got.upper
                assert abs(t.cdf(bound, random_state=0) - 0.975) < 2e-3
                bound[j] = got.lower
                assert abs(t.cdf(bound, random_state=0) - 0.025) < 2e-3
                np.testing.assert_allclose(got.point, q["mean"][i, k, j])
            a = np.array([1.0, -2.0])
            got = tvb.MeanProjection(k, a).intervals(q, 0.9)[i]
            expected = stats.t(df=dof, loc=a @ q["mean"][i, k], scale=np.sqrt(a @ shape @ a))
            np.testing.assert_allclose([got.lower, got.upper], expected.ppf([0.05, 0.95]), rtol=1e-10)
            total = tvb.credible_intervals(q, f"mean_sum[{k}]")[i]
            expected = stats.t(df=dof, loc=q["mean"][i, k].sum(), scale=np.sqrt(shape.sum()))
            np.testing.assert_allclose([total.lower, total.upper], expected.ppf([0.025, 0.975]), rtol=1e-10)
    # draws of the normal–Wishart, independently of the t: Λ ~ W(W, ν), μ | Λ ~ N(m, (β Λ)⁻¹)
    rng = np.random.default_rng(3)
    i, k, S = 0, 1, 20000
    precisions = stats.wishart(df=q["df"][i, k], scale=q["scale"][i, k]).rvs(S, random_state=rng)
    covariances = np.linalg.inv(q["precision_scale"][i, k] * precisions)
    means = q["mean"][i, k] + np.einsum("sij,sj->si", np.linalg.cholesky(covariances), rng.normal(size=(S, d)))
    for values, got in ((means[:, 0], tvb.credible_intervals(q, f"mean[{k}, 0]")[i]),
                        (means.sum(1), tvb.credible_intervals(q, f"mean_sum[{k}]")[i])):
        inside = np.mean((got.lower <= values) & (values <= got.upper))
        assert abs(inside - 0.95) < 4 * np.sqrt(0.95 * 0.05 / S)


def test_monte_carlo_intervals_approach_the_closed_forms():
    q = a_posterior(seed=2, leading=(3,))
    S = 40000
    weight = tvb.MonteCarlo(lambda theta: theta["weights"][..., 0], n_samples=S, seed=1)
    got, expected = weight.intervals(q, 0.9), tvb.Weight(0).intervals(q, 0.9)
    np.testing.assert_allclose(got.point, expected.point, rtol=1e-12)  # h at the posterior mean
    np.testing.assert_allclose(got.lower, expected.lower, atol=0.01)
    np.testing.assert_allclose(got.upper, expected.upper, atol=0.01)
    total = tvb.functional(lambda theta: theta["means"][..., 2, :].sum(-1))
    total = tvb.MonteCarlo(total.h, n_samples=S, seed=2)
    got, expected = total.intervals(q, 0.95), tvb.credible_intervals(q, "mean_sum[2]")
    np.testing.assert_allclose(got.point, expected.point, rtol=1e-12)
    width = expected.upper - expected.lower
    np.testing.assert_allclose(got.lower, expected.lower, atol=0.03 * width.max())
    np.testing.assert_allclose(got.upper, expected.upper, atol=0.03 * width.max())
    # the same seed gives the same intervals; a functional of no closed form (a ratio of weights) runs
    np.testing.assert_array_equal(total.intervals(q, 0.95).lower, got.lower)
    ratio = tvb.MonteCarlo(lambda theta: theta["weights"][..., 0] / theta["weights"][..., 1], n_samples=2000)
    assert np.all(ratio.intervals(q, 0.95).length > 0)


# ---------------------------------------------------------------------------------------------------- the table
def test_table_layout_and_cells_equal_separate_fits(small_table):
    """Roles (whole data, X₁, resamples of X₂) hold the data they say, and a cell of a block equals the same
    fractional fit alone, sweep for sweep, from the same start (the E-step of the reference fit on the cell's
    data)."""
    table, X = small_table, two_clusters()
    N = len(X)
    assert table.alpha.shape == (3, 6, 2) and table.scale.shape == (3, 6, 2, 2, 2) and table.mean.shape == (3, 6, 2, 2)
    assert np.all(table.iterations == 150)  # tol=None: exactly `iterations` sweeps
    np.testing.assert_array_equal(np.sort(np.concatenate([table.split[0], table.holdout[0]])), np.arange(N))
    assert table.split.shape == (1, N // 2) and table.bootstrap.shape == (1, 4, N - N // 2)
    assert np.isin(table.bootstrap, table.holdout).all()
    # the weights count ω × (points of the cell) in all
    sizes = np.array([N, N // 2] + [N - N // 2] * 4)
    np.testing.assert_allclose(table.alpha.sum(-1), 2 * 1.0 + table.grid[:, None] * sizes, rtol=1e-10)
    centre = X.mean(0)
    priors = PRIORS.resolved(X, 2)
    centred = GMMPriors(priors.weight_concentration, priors.mean - centre, 1.0, priors.scale, priors.df)
    start = dict(table.start, mean=table.start["mean"] - centre)
    for i, role in ((0, tvb.FULL), (1, tvb.SPLIT), (2, 3), (0, 5)):
        rows = {tvb.FULL: np.arange(N), tvb.SPLIT: table.split[0]}[role] if role < 2 else table.bootstrap[0, role - 2]
        data = X[rows] - centre
        fit = fit_gmm(build_gmm(data, 2, centred, power=float(table.grid[i])),
                      np.exp(log_responsibilities(start, data)), iterations=150, tol=None)
        q = {key: value[0] for key, value in fit.posteriors().items()}
        np.testing.assert_allclose(table.alpha[i, role], q["alpha"], rtol=1e-10)
        np.testing.assert_allclose(table.mean[i, role], q["mean"] + centre, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(table.scale[i, role], q["scale"], rtol=1e-10)
        np.testing.assert_allclose(table.df[i, role], q["df"], rtol=1e-10)
        np.testing.assert_allclose(table.precision_scale[i, role], q["precision_scale"], rtol=1e-10)
        np.testing.assert_allclose(table.elbo[i, role], fit.elbo[-1, 0], rtol=1e-10)


def test_omega_one_is_the_plain_vb_interval():
    """At ω = 1 the whole-data cell is plain VB: the intervals are the closed forms (scipy) of scikit-learn-style
    VB from the same start (BayesianGMM, k-means start of the same random_state)."""
    from fgraph.models.mixtures import BayesianGMM

    X = two_clusters(seed=4)
    table = tvb.build_tvb_table(X, 2, grid=[0.3, 1.0], n_bootstrap=2, priors=PRIORS, n_jobs=1, tol=1e-10,
                                random_state=7)
    plain = BayesianGMM(n_components=2, weight_concentration_prior=1.0, tol=1e-10, max_iter=5000,
                        random_state=7).fit(X)
    for k in range(2):
        selection = table.select(f"weight[{k}]")
        a = plain.weight_concentration_[k]
        expected = stats.beta(a, plain.weight_concentration_.sum() - a).ppf([0.025, 0.975])
        np.testing.assert_allclose([selection.vb.lower, selection.vb.upper], expected, rtol=1e-6)
        for j in range(2):
            vb = table.select(f"mean[{k}, {j}]").vb
            dof = plain.degrees_of_freedom_[k] - 1
            scale = np.sqrt(np.linalg.inv(plain.scale_[k])[j, j] / (plain.mean_precision_[k] * dof))
            expected = stats.t(df=dof, loc=plain.means_[k, j], scale=scale).ppf([0.025, 0.975])
            np.testing.assert_allclose([vb.lower, vb.upper], expected, rtol=1e-6, atol=1e-6)
    # ω < 1 widens every interval
    intervals = table.intervals("weight[0]")
    assert np.all(intervals.length[0] > intervals.length[1])


def test_coverage_is_the_fraction_of_resample_intervals_covering_the_split_estimate(small_table):
    table = small_table
    for spec in ("weight[0]", "mean_sum[1]", tvb.MonteCarlo(lambda t: t["means"][..., 0, 1], n_samples=500)):
        intervals = table.intervals(spec, 0.9)
        for i in range(3):
            point = intervals.point[i, tvb.SPLIT]
            expected = np.mean([intervals.lower[i, 2 + b] <= point <= intervals.upper[i, 2 + b] for b in range(4)])
            assert table.coverage(spec, 0.9)[i] == expected
            point = intervals.point[i, tvb.FULL]
            expected = np.mean([intervals.lower[i, 2 + b] <= point <= intervals.upper[i, 2 + b] for b in range(4)])
            assert table.coverage(spec, 0.9, point="full")[i] == expected


def test_selection_rules():
    """Eq. (6): the closest coverage, ties to coverage at or above the level, then to the largest ω (or to the largest
    ω alone, ``ties="largest"``); Algorithm 1's rule on the grid: the largest ω whose coverage is above the level or within ε below it."""
    grid = np.array([0.01, 0.1, 0.3, 0.6, 1.0])
    assert tvb.choose_omega(grid, np.array([1.0, 1.0, 0.96, 0.94, 0.7]), 0.95, "closest", 1e-6) == (2, True)
    assert tvb.choose_omega(grid, np.array([1.0, 0.95, 0.95, 0.9, 0.7]), 0.95, "closest", 1e-6) == (2, True)
    assert tvb.choose_omega(grid, np.array([1.0, 0.97, 0.93, 0.9, 0.7]), 0.95, "closest", 1e-6)[0] == 1
    assert tvb.choose_omega(grid, np.array([1.0, 0.99, 0.94, 0.9, 0.7]), 0.95, "closest", 1e-6) == (2, False)
    assert tvb.choose_omega(grid, np.array([1.0, 0.99, 0.97, 0.94, 0.7]), 0.95, "sequential", 1e-6) == (2, True)
    assert tvb.choose_omega(grid, np.array([1.0, 0.99, 0.97, 0.94, 0.7]), 0.95, "sequential", 0.02) == (3, True)
    assert tvb.choose_omega(grid, np.array([0.5, 0.6, 0.7, 0.8, 0.9]), 0.95, "sequential", 1e-6) == (0, False)
    # Liu & Li's code: ties to the largest ω alone, below the level or not
    assert tvb.choose_omega(grid, np.array([1.0, 1.0, 0.96, 0.94, 0.7]), 0.95, ties="largest") == (3, False)
    assert tvb.choose_omega(grid, np.array([1.0, 0.95, 0.95, 0.9, 0.7]), 0.95, ties="largest") == (2, True)
    assert tvb.choose_omega(grid, np.array([1.0, 0.97, 0.93, 0.9, 0.7]), 0.95, ties="largest")[0] == 2
    with pytest.raises(tvb.TVBError, match="ties"):
        tvb.choose_omega(grid, np.array([1.0, 0.97, 0.93, 0.9, 0.7]), 0.95, ties="smallest")


def test_components_are_matched_to_the_reference():
    """Every cell's components are permuted to the closest reference means (in the metric W₀), all parameters
    together."""
    rng = np.random.default_rng(0)
    q = a_posterior(seed=4, K=4, leading=(5,))
    reference = np.array([[0.0, 0.0], [5.0, 0.0], [0.0, 5.0], [5.0, 5.0]])
    q["mean"] = reference + 0.1 * rng.normal(size=(5, 4, 2))
    orders = np.array([rng.permutation(4) for _ in range(5)])
    shuffled = {key: value[np.arange(5)[:, None], orders] for key, value in q.items()}
    aligned = align_components(shuffled, reference, np.eye(2))
    for key in q:
        np.testing.assert_array_equal(aligned[key], q[key], err_msg=key)
    many = np.array([[10.0 * k, 0.0] for k in range(8)])  # K > 6: the assignment solver
    posterior = a_posterior(seed=5, K=8, leading=(2,))
    posterior["mean"] = np.broadcast_to(many[::-1] + 0.1, (2, 8, 2)).copy()
    matched = align_components(posterior, many, np.eye(2))
    np.testing.assert_allclose(matched["mean"], np.broadcast_to(many + 0.1, (2, 8, 2)))
    np.testing.assert_array_equal(matched["alpha"], posterior["alpha"][:, ::-1])


# ----------------------------------------------------------------------------------------- disk, resume, pools
def test_an_interrupted_build_resumes_without_recomputing_finished_blocks(tmp_path, monkeypatch):
    X = two_clusters()
    path = tmp_path / "table"
    original = gmm_tvb._fit_block
    calls = []

    def failing(*arguments):
        calls.append(1)
        if len(calls) == 3:
            raise RuntimeError("interrupted")
        return original(*arguments)

    monkeypatch.setattr(gmm_tvb, "_fit_block", failing)
    with pytest.raises(RuntimeError, match="interrupted"):
        tvb.build_tvb_table(X, 2, path=path, n_jobs=1, **SMALL)
    assert sorted(p.name for p in (path / "blocks").iterdir()) == ["block_00000.npz", "block_00001.npz"]
    assert not (path / "tvb_table.json").exists()  # only a finished table writes its files
    blocks = len(plan_blocks(3, 4, (120, 60, 60), 5))
    calls.clear()
    monkeypatch.setattr(gmm_tvb, "_fit_block", lambda *arguments: (calls.append(1), original(*arguments))[1])
    resumed = tvb.build_tvb_table(X, 2, path=path, n_jobs=1, **SMALL)
    assert len(calls) == blocks - 2
    uninterrupted = tvb.build_tvb_table(X, 2, n_jobs=1, **SMALL)
    for key, value in uninterrupted._arrays().items():
        np.testing.assert_array_equal(getattr(resumed, key, None) if not key.startswith("start_")
                                      else resumed.start[key[6:]], value, err_msg=key)
    # finished: npz + JSON, no pickle, no blocks left; loading or calling again computes nothing
    assert sorted(p.name for p in path.iterdir()) == ["store.json", "store.lock", "tvb_table.json", "tvb_table.npz"]
    with np.load(path / "tvb_table.npz", allow_pickle=False) as stored:
        np.testing.assert_array_equal(stored["alpha"], uninterrupted.alpha)
    calls.clear()
    again = tvb.build_tvb_table(X, 2, path=path, n_jobs=1, **SMALL)
    loaded = tvb.TVBTable.load(path)
    assert not calls
    for table in (again, loaded):
        np.testing.assert_array_equal(table.scale, uninterrupted.scale)
        assert table.select("weight[0]").omega == uninterrupted.select("weight[0]").omega
    with pytest.raises(tvb.TableMismatchError, match="n_bootstrap"):
        tvb.build_tvb_table(X, 2, path=path, n_jobs=1, **dict(SMALL, n_bootstrap=5))
    with pytest.raises(tvb.TableMismatchError, match="data_sha256"):
        tvb.build_tvb_table(X + 1.0, 2, path=path, n_jobs=1, **SMALL)


def test_the_process_pool_and_dask_build_the_same_table(small_table, capsys):
    """Blocks in two worker processes, on an in-process Dask cluster (a Client, and its scheduler address): the
    numbers of the in-process build; with progress=True a bar over the blocks."""
    X = two_clusters()
    pooled = tvb.build_tvb_table(X, 2, n_jobs=2, progress=True, **SMALL)
    assert "TVB table" in capsys.readouterr().err
    for key in ("alpha", "mean", "precision_scale", "scale", "df", "elbo"):
        np.testing.assert_array_equal(getattr(pooled, key), getattr(small_table, key), err_msg=key)
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(processes=False, n_workers=1, threads_per_worker=1, dashboard_address=None) \
            as cluster, distributed.Client(cluster) as client:
        on_dask = tvb.build_tvb_table(X, 2, client=client, **SMALL)
        by_address = tvb.build_tvb_table(X, 2, client=cluster.scheduler_address, **SMALL)
    for table in (on_dask, by_address):
        for key in ("alpha", "mean", "precision_scale", "scale", "df", "elbo"):
            np.testing.assert_array_equal(getattr(table, key), getattr(pooled, key), err_msg=key)


def test_per_omega_resampling_draws_a_split_for_every_omega():
    X = two_clusters(N=60)
    table = tvb.build_tvb_table(X, 2, n_jobs=1, resampling="per_omega", **dict(SMALL, n_bootstrap=2))
    assert table.split.shape == (3, 30) and table.bootstrap.shape == (3, 2, 30)
    assert not np.array_equal(table.split[0], table.split[1])
    for i in range(3):
        assert np.isin(table.bootstrap[i], table.holdout[i]).all()
    # the first ω's split is the common one of the same seed
    common = tvb.build_tvb_table(X, 2, n_jobs=1, **dict(SMALL, n_bootstrap=2))
    np.testing.assert_array_equal(table.split[0], common.split[0])
    np.testing.assert_allclose(table.alpha[0], common.alpha[0], rtol=1e-12)


# ------------------------------------------------------------------------------------------------ Algorithm 1
def test_sequential_and_grid_search_agree_within_the_grid_resolution():
    """Algorithm 1 with the table's split and resamples (redraw=False, same seed) stops at an ω between the
    grid's choice by the same rule and the next grid value above it, and its coverage at ω = 1 is the table's."""
    X = two_clusters(N=600, separation=2.5, seed=2)
    grid = tvb.omega_grid(10, 0.1)
    options = dict(n_bootstrap=20, priors=PRIORS, tol=1e-6)
    table = tvb.build_tvb_table(X, 2, grid=grid, n_jobs=1, block_size=128, **options)
    coverage = table.coverage("weight[largest]")
    assert coverage[-1] < 0.95  # plain VB under-covers here
    chosen = table.select("weight[largest]", rule="sequential")
    assert chosen.reached and chosen.omega < 1.0
    sequential = tvb.sequential_tvb(X, 2, "weight[largest]", redraw=False, **options)
    assert sequential.reached and len(sequential.omegas) > 2
    assert sequential.coverages[0] == coverage[-1]
    assert chosen.omega <= sequential.omega < grid[chosen.index + 1]
    assert np.all(np.diff(sequential.omegas) < 0)  # Algorithm 1 only bends further until it covers
    # closest (eq. 6) picks a grid value of coverage 0.95 here too, and its interval is wider than plain VB's
    closest = table.select("weight[largest]")
    assert closest.coverage[closest.index] == 0.95
    assert closest.interval.length > closest.vb.length
    # the reported interval is the whole-data fit's at the chosen ω
    expected = tvb.build_tvb_table(X, 2, grid=[sequential.omega], n_jobs=1, **dict(options, n_bootstrap=1))
    got = expected.intervals("weight[largest]")[0, tvb.FULL]
    np.testing.assert_allclose([sequential.interval.lower, sequential.interval.upper], [got.lower, got.upper],
                               rtol=1e-5)


class Never(tvb.Functional):
    """A functional whose intervals never cover its point estimate: the coverage is 0 at every ω."""

    name = "never"

    def intervals(self, posteriors, level):
        shape = np.shape(posteriors["alpha"])[:-1]
        return tvb.Intervals(np.zeros(shape), np.zeros(shape), np.ones(shape))


def test_sequential_steps_stay_in_omega_and_redraw_the_split(monkeypatch):
    """η steps by κ_k (ĉ − (1 − α)) and stops at log δ (Ω = [δ, 1]); without reaching the level it returns the last
    updated ω; every iteration draws a new split and new resamples unless redraw=False."""
    X = two_clusters(N=40, seed=5)
    draws = []
    original = gmm_tvb.draw_split
    monkeypatch.setattr(gmm_tvb, "draw_split", lambda *arguments: (draws.append(1), original(*arguments))[1])
    result = tvb.sequential_tvb(X, 2, Never(), n_bootstrap=2, step=1.0, max_iter=3, lower=0.2, priors=PRIORS,
                                tol=1e-6)
    first = np.exp(-0.95)  # κ₀ = 1, ĉ = 0
    np.testing.assert_allclose(result.omegas, [1.0, first, max(0.2, first * np.exp(-0.95 / 2))])
    assert not result.reached and np.isclose(result.omega, 0.2) and len(draws) == 3
    np.testing.assert_array_equal(result.coverages, 0.0)
    draws.clear()
    result = tvb.sequential_tvb(X, 2, Never(), n_bootstrap=2, step=lambda k: 100.0, max_iter=2, lower=0.01,
                                redraw=False, priors=PRIORS, tol=1e-6)
    np.testing.assert_allclose(result.omegas, [1.0, 0.01])
    assert len(draws) == 1


def test_components_of_every_cell_keep_the_reference_labels(small_table, monkeypatch):
    """Cells started with the components swapped end with them matched back: the same table."""
    original = gmm_tvb.log_responsibilities
    monkeypatch.setattr(gmm_tvb, "log_responsibilities", lambda q, X: original(q, X)[..., ::-1])
    swapped = tvb.build_tvb_table(two_clusters(), 2, n_jobs=1, **SMALL)
    for key in ("alpha", "mean", "precision_scale", "scale", "df"):
        np.testing.assert_allclose(getattr(swapped, key), getattr(small_table, key), rtol=1e-8, atol=1e-10,
                                   err_msg=key)


# ------------------------------------------------------------------------------------------------------ errors
def test_bad_input_is_a_named_error(small_table):
    X = two_clusters(N=40)
    with pytest.raises(tvb.GridError, match="empty"):
        tvb.build_tvb_table(X, 2, grid=[])
    with pytest.raises(tvb.GridError):
        tvb.omega_grid(0)
    for grid in ([0.5, 1.5], [0.0, 0.5], [-0.1], [np.nan]):
        with pytest.raises(tvb.PowerRangeError, match=r"\(0, 1\]"):
            tvb.build_tvb_table(X, 2, grid=grid)
    with pytest.raises(tvb.PowerRangeError):
        tvb.omega_grid(10, 0.0)
    with pytest.raises(tvb.PowerRangeError):
        tvb.sequential_tvb(X, 2, "weight[0]", lower=0.0)
    for B in (0, -3, 2.5, True):
        with pytest.raises(tvb.BootstrapCountError, match="B must be an integer >= 1"):
            tvb.build_tvb_table(X, 2, n_bootstrap=B)
        with pytest.raises(tvb.BootstrapCountError):
            tvb.sequential_tvb(X, 2, "weight[0]", n_bootstrap=B)
    for spec in ("variance[0]", "weight", "mean[0]", "weight[first]", 42, None):
        with pytest.raises(tvb.UnknownFunctionalError, match="unknown functional|component must be"):
            small_table.select(spec)
    with pytest.raises(tvb.UnknownFunctionalError):
        tvb.sequential_tvb(X, 2, "entropy[0]")
    with pytest.raises(tvb.FunctionalError, match="component 5 does not exist"):
        small_table.intervals("weight[5]")
    with pytest.raises(tvb.FunctionalError, match="coordinate 2 does not exist"):
        small_table.intervals("mean[0, 2]")
    with pytest.raises(tvb.FunctionalError, match="returned shape"):
        small_table.intervals(tvb.MonteCarlo(lambda theta: theta["weights"], n_samples=10))
    for level in (0.0, 1.0, 95):
        with pytest.raises(tvb.TVBError, match="level"):
            small_table.select("weight[0]", level=level)
    with pytest.raises(tvb.TVBError, match="rule"):
        small_table.select("weight[0]", rule="best")
    with pytest.raises(tvb.TVBError, match="n_jobs"):
        tvb.build_tvb_table(X, 2, grid=[1.0], n_bootstrap=1, n_jobs=0)
    with pytest.raises(DataError, match="two halves"):
        tvb.build_tvb_table(X[:3], 2)
    bad = X.copy()
    bad[3, 0] = np.nan
    with pytest.raises(DataError, match="NaN"):
        tvb.build_tvb_table(bad, 2)
    assert issubclass(tvb.UnknownFunctionalError, LookupError) and issubclass(tvb.TVBError, ValueError)


# ------------------------------------------------------------------------ Liu & Li's choices, as named options
def test_kmeans_centres_are_scikit_learns_and_each_data_set_keeps_its_own():
    """The batched k-means finds scikit-learn's centres (best of many starts) on every data set, and a data set's
    centres depend on its data and seed alone, not on the data sets beside it."""
    from sklearn.cluster import KMeans

    from fgraph.models.mixtures.kmeans import kmeans_centres

    data = np.stack([two_clusters(N=80, seed=seed) for seed in range(4)])
    centres = kmeans_centres(data, 2, 10, seeds=[7, 8, 9, 10])
    for r in range(4):
        expected = KMeans(2, n_init=10, random_state=0).fit(data[r]).cluster_centers_
        np.testing.assert_allclose(np.sort(centres[r], axis=0), np.sort(expected, axis=0), rtol=1e-10)
    alone = kmeans_centres(data[2:3], 2, 10, seeds=[9])
    np.testing.assert_array_equal(alone[0], centres[2])
    with pytest.raises(Exception, match="one seed per data set"):
        kmeans_centres(data, 2, 10, seeds=[1])


def test_the_prior_scale_may_be_the_data_covariance():
    """GMMPriors(scale="covariance") is W₀ = cov(X) (Liu & Li's code); another string is a named error."""
    from fgraph.errors import ModelError

    X = two_clusters(N=60, seed=2)
    resolved = GMMPriors(scale="covariance", df=4.0).resolved(X, 2)
    np.testing.assert_allclose(resolved.scale, np.cov(X.T), rtol=1e-12)
    assert resolved.df == 4.0
    np.testing.assert_allclose(GMMPriors().resolved(X, 2).scale, np.linalg.inv(np.cov(X.T)), rtol=1e-10)
    with pytest.raises(ModelError, match="'covariance'"):
        GMMPriors(scale="precision").resolved(X, 2)


def test_kmeans_starts_and_the_authors_stopping_give_the_fits_of_liu_and_lis_code():
    """With ``start="kmeans"`` every cell starts as Liu & Li's vb_gmm starts: the E-step of the prior with its
    means at the cell's k-means centres — computed here by hand (scikit-learn's k-means, the E-step in numpy) —
    and with their stopping (at most 199 sweeps, ELBO change < 1e-4 in one sweep) a cell equals that fit alone."""
    from scipy.special import digamma
    from sklearn.cluster import KMeans

    from fgraph.models.mixtures.gmm import fit_gmm_copies

    X = two_clusters(N=100, seed=3)
    priors = GMMPriors(scale="covariance", df=4.0)
    table = tvb.build_tvb_table(X, 2, grid=[0.2, 1.0], n_bootstrap=2, priors=priors, n_jobs=1, start="kmeans",
                                iterations=199, tol=1e-4, check_every=1, seed=3)
    assert table.metadata["start"] == "kmeans" and table.metadata["check_every"] == 1
    assert np.all(table.iterations <= 199) and np.all(table.iterations < 199)  # all settled, one sweep apart
    resolved = priors.resolved(X, 2)
    centre = X.mean(0)
    W0, nu0, beta0, alpha0 = resolved.scale, resolved.df, resolved.precision_scale, resolved.weight_concentration
    d = 2
    for i, role in ((0, tvb.FULL), (1, tvb.SPLIT), (1, 3)):
        rows = {tvb.FULL: np.arange(len(X)), tvb.SPLIT: table.split[0]}.get(role)
        rows = table.bootstrap[0, role - 2] if rows is None else rows
        data = X[rows] - centre
        c = KMeans(2, n_init=25, random_state=0).fit(data).cluster_centers_
        log_lambda = digamma((nu0 + 1 - np.arange(1, d + 1)) / 2).sum() + d * np.log(2) + np.linalg.slogdet(W0)[1]
        difference = data[:, None, :] - c[None]
        log_rho = (digamma(alpha0) - digamma(alpha0.sum()) + 0.5 * log_lambda - 0.5 * d / beta0
                   - 0.5 * nu0 * np.einsum("nki,ij,nkj->nk", difference, W0, difference))
        r = np.exp(log_rho - np.logaddexp.reduce(log_rho, axis=1, keepdims=True))
        centred = GMMPriors(alpha0, resolved.mean - centre, beta0, W0, nu0)
        fit = fit_gmm_copies(data, 2, r[None], centred, power=float(table.grid[i]), iterations=199, tol=1e-4,
                             check_every=1)
        assert table.iterations[i, role] == fit.iterations[0]
        # the table's components are matched to the reference fit's: compare them in order of weight
        mine, theirs = np.argsort(table.alpha[i, role]), np.argsort(fit.posteriors["alpha"][0])
        np.testing.assert_allclose(table.alpha[i, role][mine], fit.posteriors["alpha"][0][theirs], rtol=1e-8)
        np.testing.assert_allclose(table.mean[i, role][mine], fit.posteriors["mean"][0][theirs] + centre, rtol=1e-8)
        np.testing.assert_allclose(table.scale[i, role][mine], fit.posteriors["scale"][0][theirs], rtol=1e-8)


def test_sequential_steps_decay_as_asked(monkeypatch):
    """κ_k = κ₀ / (k + 1)^decay (Liu & Li's code: κ₀ = 1, decay 0.51); a decay outside (1/2, 1] is a named error."""
    X = two_clusters(N=40, seed=5)
    result = tvb.sequential_tvb(X, 2, Never(), n_bootstrap=2, step=1.0, decay=0.51, max_iter=3, lower=1e-3,
                                priors=PRIORS, tol=1e-6)
    eta = [0.0, -0.95, -0.95 - 0.95 / 2 ** 0.51]
    np.testing.assert_allclose(result.omegas, np.exp(eta))
    np.testing.assert_allclose(result.omega, np.exp(eta[-1] - 0.95 / 3 ** 0.51))
    for decay in (0.5, 1.2, True):
        with pytest.raises(tvb.TVBError, match="decay"):
            tvb.sequential_tvb(X, 2, "weight[0]", decay=decay)
    with pytest.raises(tvb.TVBError, match="start"):
        tvb.sequential_tvb(X, 2, "weight[0]", start="random")


def test_bad_choices_of_the_authors_options_are_named_errors():
    from fgraph.errors import DataError, ModelError
    from fgraph.models.mixtures.gmm import fit_gmm_copies
    from fgraph.models.mixtures.kmeans import kmeans_centres

    X = two_clusters(N=40, seed=5)
    with pytest.raises(tvb.TVBError, match="start must be"):
        tvb.build_tvb_table(X, 2, grid=[1.0], n_bootstrap=1, n_jobs=1, start="random")
    for name in ("kmeans_starts", "batch_size", "check_every"):
        with pytest.raises(tvb.TVBError, match=name):
            tvb.build_tvb_table(X, 2, grid=[1.0], n_bootstrap=1, n_jobs=1, **{name: 0})
    with pytest.raises(ModelError, match="batch_size"):
        fit_gmm_copies(X, 2, np.full((2, 40, 2), 0.5), power=1.0, batch_size=0)
    with pytest.raises(DataError, match=r"\(R, n, d\)"):
        kmeans_centres(X, 2, 3, seeds=[0])
    with pytest.raises(DataError, match="cannot seed K = 5"):
        kmeans_centres(X[None, :4], 5, 3, seeds=[0])
    with pytest.raises(ModelError, match="n_starts"):
        kmeans_centres(X[None], 2, 0, seeds=[0])
