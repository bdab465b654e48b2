"""Trustworthy VB for the BMLR (fgraph.models.tvb.bmlr) and fits from the data sets' statistics: the statistics'
fit against the raw arrays', the table against separate fits started by an E-step written here in numpy, blocks of
one cell against larger ones, ω and the interval against the coverage computed here from the stored posteriors,
resuming an interrupted build, the process pool and Dask against the in-process build, named errors."""
import numpy as np
import pytest
from scipy import stats

from fgraph.errors import DataError, ModelError
from fgraph.models import tvb
from fgraph.models.mixtures import (BMLRPriors, RegressionStatistics, bmlr_statistics, build_bmlr,
                                    build_bmlr_from_statistics, coefficient_sum_interval, fit_bmlr,
                                    pooled_noise_precision, random_responsibilities)
from fgraph.models.tvb import FULL, SPLIT, build_bmlr_tvb_table
from fgraph.models.tvb import bmlr as bmlr_tvb
from fgraph.models.tvb.build import plan_blocks

K, P = 2, 2
LAMBDA = 0.8


def mixture(N=24, J=20, seed=0):
    """N data sets of J responses, 65 % in the first cluster, noise of precision λ."""
    rng = np.random.default_rng(seed)
    beta = np.array([[1.0, -0.5], [-0.8, 1.2]])
    labels = np.where(rng.random(N) < 0.65, 0, 1)
    X = rng.normal(size=(N, J, P))
    y = np.einsum("njp,np->nj", X, beta[labels]) + rng.normal(size=(N, J)) / np.sqrt(LAMBDA)
    return X, y


X, Y = mixture()
PRIORS = BMLRPriors(noise_precision=LAMBDA)
SMALL = dict(grid=[0.2, 0.5, 1.0], n_bootstrap=4, priors=PRIORS, block_size=5, iterations=40, tol=None)


@pytest.fixture(scope="module")
def small_table():
    return build_bmlr_tvb_table((X, Y), K, n_jobs=1, **SMALL)


# ----------------------------------------------------------------------------------------- the statistics
def test_a_fit_from_the_statistics_equals_the_fit_from_the_raw_arrays():
    """One fit at a power, and resamples with a power per copy: every posterior and the ELBO to 1e-10."""
    statistics = bmlr_statistics(X, Y)
    assert statistics.gram.shape == (24, P, P) and statistics.cross.shape == (24, P) and statistics.responses == 20
    np.testing.assert_allclose(statistics.gram[3], X[3].T @ X[3], rtol=1e-14)
    np.testing.assert_allclose(statistics.square[3], Y[3] @ Y[3], rtol=1e-14)
    start = random_responsibilities(24, K, random_state=1)[0]
    raw = fit_bmlr(build_bmlr(X, Y, K, PRIORS, power=0.3), start, iterations=30, tol=None)
    compact = fit_bmlr(build_bmlr_from_statistics(statistics, K, PRIORS, power=0.3), start, iterations=30, tol=None)
    indices = np.random.default_rng(2).integers(0, 24, size=(3, 24))
    omegas = np.array([1.0, 0.4, 0.05])
    raw_copies = fit_bmlr(build_bmlr(X[indices], Y[indices], K, PRIORS, n_copies=3, power=omegas), start,
                          iterations=30, tol=None)
    compact_copies = fit_bmlr(build_bmlr_from_statistics(statistics, K, PRIORS, n_copies=3, power=omegas,
                                                         indices=indices), start, iterations=30, tol=None)
    for a, b in ((raw, compact), (raw_copies, compact_copies)):
        for key, value in a.posteriors().items():
            np.testing.assert_allclose(b.posteriors()[key], value, rtol=1e-10, atol=1e-10, err_msg=key)
        np.testing.assert_allclose(b.elbo, a.elbo, rtol=1e-10)
    # a shared subset of data sets is the fit of those data sets
    subset = np.arange(0, 24, 2)
    part = fit_bmlr(build_bmlr_from_statistics(statistics, K, PRIORS, indices=subset), start[subset], iterations=30,
                    tol=None)
    whole = fit_bmlr(build_bmlr(X[subset], Y[subset], K, PRIORS), start[subset], iterations=30, tol=None)
    np.testing.assert_allclose(part.posteriors()["coefficient_mean"], whole.posteriors()["coefficient_mean"],
                               rtol=1e-10)


def test_the_pooled_noise_precision_is_least_squares():
    rss = sum(np.sum((Y[n] - X[n] @ np.linalg.lstsq(X[n], Y[n], rcond=None)[0]) ** 2) for n in range(24))
    assert pooled_noise_precision(bmlr_statistics(X, Y)) == pytest.approx(24 * (20 - P) / rss, rel=1e-10)


# ----------------------------------------------------------------------------------------------- the table
def e_step(posteriors, X, y, lam):
    """Algorithm 4's q(Z) update on raw data: log ρ_nk = E[log π_k] − (λ/2) E‖y_n − X_n β_k‖² (+ const)."""
    alpha, m, S = (np.asarray(posteriors[key]) for key in ("alpha", "coefficient_mean", "coefficient_cov"))
    from scipy.special import digamma

    log_rho = np.empty(X.shape[:-2] + (len(alpha),))
    for k in range(len(alpha)):
        residual = y - np.einsum("...jp,p->...j", X, m[k])
        trace = np.einsum("...jp,pq,...jq->...", X, S[k], X)
        log_rho[..., k] = digamma(alpha[k]) - digamma(alpha.sum()) - 0.5 * lam * (np.sum(residual ** 2, -1) + trace)
    log_rho -= log_rho.max(-1, keepdims=True)
    return np.exp(log_rho) / np.exp(log_rho).sum(-1, keepdims=True)


def test_the_start_is_the_e_step_on_the_raw_data():
    """:func:`log_responsibilities` from the statistics against the E-step written above on X, y, for a q(β) with
    a covariance large enough to matter, on resampled data sets (R, n)."""
    from fgraph.models.mixtures.bmlr import log_responsibilities

    q = {"alpha": np.array([3.0, 7.0]), "coefficient_mean": np.array([[0.5, -0.2], [-0.3, 0.4]]),
         "coefficient_cov": np.array([[[0.02, 0.005], [0.005, 0.01]], [[0.001, 0.0], [0.0, 0.03]]])}
    rows = np.random.default_rng(3).integers(0, 24, size=(2, 10))
    got = np.exp(log_responsibilities(q, bmlr_statistics(X, Y).take(rows), LAMBDA))
    np.testing.assert_allclose(got, e_step(q, X[rows], Y[rows], LAMBDA), rtol=1e-10, atol=1e-14)
    assert 0.05 < got[..., 0].mean() < 0.95


def test_cells_equal_separate_fits_and_blocks_of_one(small_table):
    """Every cell is the fit of its data sets (the whole data, X₁, a resample of X₂'s data sets) at its ω, started
    from the reference's E-step on them and its q(τ) (seen after 2 sweeps, before the start is forgotten); blocks of
    one cell give the same table."""
    table = small_table
    assert table.alpha.shape == (3, 6, K) and table.coefficient_cov.shape == (3, 6, K, P, P)
    split, holdout, bootstrap = table.split[0], table.holdout[0], table.bootstrap[0]
    assert np.array_equal(np.sort(np.concatenate([split, holdout])), np.arange(24)) and split.size == 12
    assert np.isin(bootstrap, holdout).all() and bootstrap.shape == (4, 12)
    assert any(np.unique(row).size < 12 for row in bootstrap)  # drawn with replacement
    early = build_bmlr_tvb_table((X, Y), K, n_jobs=1, **dict(SMALL, iterations=2))
    np.testing.assert_array_equal(early.bootstrap, table.bootstrap)
    for current, sweeps in ((table, 40), (early, 2)):
        for i, role in [(0, FULL), (1, SPLIT), (2, 2), (0, 5), (1, 3)]:
            rows = np.arange(24) if role == FULL else split if role == SPLIT else bootstrap[role - 2]
            omega = current.grid[i]
            start = e_step(current.start, X[rows], Y[rows], LAMBDA)
            alone = fit_bmlr(build_bmlr(X[rows], Y[rows], K, PRIORS, power=omega), start, iterations=sweeps,
                             tol=None, tau=(current.start["tau_shape"], current.start["tau_rate"]))
            q = {key: value[0] for key, value in alone.posteriors().items()}
            for key in bmlr_tvb.PARAMETERS:
                np.testing.assert_allclose(getattr(current, key)[i, role], q[key], rtol=1e-8, atol=1e-10,
                                           err_msg=f"{key} at ω {omega}, role {role}, {sweeps} sweeps")
    ones = build_bmlr_tvb_table(bmlr_statistics(X, Y), K, n_jobs=1, **dict(SMALL, block_size=1))
    for key in (*bmlr_tvb.PARAMETERS, "elbo"):
        np.testing.assert_allclose(getattr(ones, key), getattr(table, key), rtol=1e-12, atol=1e-14, err_msg=key)


def test_the_selection_is_the_coverage_computed_from_the_stored_posteriors(small_table):
    """ĉ(ω): the resamples' intervals Σm ∓ z (ΣS)^{1/2} covering Σm of X₁ at the same ω; ω the closest coverage
    to 0.95 (ties: at or above, then the larger ω); the interval the whole data's at that ω."""
    table = small_table
    m, S = table.coefficient_mean, table.coefficient_cov
    centre, sd = m.sum(axis=(-2, -1)), np.sqrt(S.sum(axis=(-3, -2, -1)))
    z = stats.norm.ppf(0.975)
    for level in (0.95, 0.5):
        z = stats.norm.ppf(0.5 + level / 2)
        covered = np.abs(centre[:, 2:] - centre[:, [SPLIT]]) <= z * sd[:, 2:]
        coverage = covered.mean(axis=1)
        np.testing.assert_allclose(table.coverage("coefficient_sum", level), coverage)
        best = min(range(3), key=lambda i: (round(abs(coverage[i] - level), 12), coverage[i] < level, -table.grid[i]))
        chosen = table.select("coefficient_sum", level)
        assert chosen.index == best and chosen.omega == table.grid[best]
        np.testing.assert_allclose([chosen.interval.lower, chosen.interval.upper],
                                   [centre[best, FULL] - z * sd[best, FULL], centre[best, FULL] + z * sd[best, FULL]],
                                   rtol=1e-12)
        assert chosen.vb.lower == pytest.approx(centre[2, FULL] - z * sd[2, FULL], rel=1e-12)
    lower, upper = coefficient_sum_interval({key: value[:, FULL] for key, value in table.posteriors().items()})
    full = table.intervals("coefficient_sum")[:, FULL]
    np.testing.assert_allclose(full.lower, lower, rtol=1e-12)
    np.testing.assert_allclose(full.upper, upper, rtol=1e-12)
    # the other functionals: one component's sum, one coefficient
    one = table.intervals("coefficient_sum[1]")
    np.testing.assert_allclose(one.point, m[..., 1, :].sum(-1), rtol=1e-12)
    np.testing.assert_allclose(one.length, 2 * stats.norm.ppf(0.975) * np.sqrt(S[..., 1, :, :].sum((-2, -1))))
    coefficient = table.intervals("coefficient[0, 1]")
    np.testing.assert_allclose(coefficient.upper, m[..., 0, 1] + stats.norm.ppf(0.975) * np.sqrt(S[..., 0, 1, 1]))


def test_components_keep_the_reference_labels(small_table, monkeypatch):
    """Component k is the same cluster in every cell: cells started with the components swapped end with them
    matched back to the reference's, the same table."""
    table = small_table
    difference = np.abs(table.coefficient_mean - table.start["coefficient_mean"]).max(axis=(-2, -1))
    swapped = np.abs(table.coefficient_mean - table.start["coefficient_mean"][::-1]).max(axis=(-2, -1))
    assert np.all(difference < swapped)
    original = bmlr_tvb.log_responsibilities
    monkeypatch.setattr(bmlr_tvb, "log_responsibilities", lambda *arguments: original(*arguments)[..., ::-1])
    flipped = build_bmlr_tvb_table((X, Y), K, n_jobs=1, **SMALL)
    for key in bmlr_tvb.PARAMETERS:
        np.testing.assert_allclose(getattr(flipped, key), getattr(table, key), rtol=1e-6, atol=1e-8, err_msg=key)


# ----------------------------------------------------------------------------------------- disk, resume, pools
def test_an_interrupted_build_resumes_to_the_same_table(tmp_path, monkeypatch, small_table):
    path = tmp_path / "table"
    original = bmlr_tvb._fit_block
    calls = []

    def failing(*arguments):
        calls.append(1)
        if len(calls) == 3:
            raise RuntimeError("interrupted")
        return original(*arguments)

    monkeypatch.setattr(bmlr_tvb, "_fit_block", failing)
    with pytest.raises(RuntimeError, match="interrupted"):
        build_bmlr_tvb_table((X, Y), K, path=path, n_jobs=1, **SMALL)
    assert sorted(p.name for p in (path / "blocks").iterdir()) == ["block_00000.npz", "block_00001.npz"]
    assert not (path / "tvb_table.json").exists()  # only a finished table writes its files
    blocks = len(plan_blocks(3, 4, (24, 12, 12), 5))
    calls.clear()
    monkeypatch.setattr(bmlr_tvb, "_fit_block", lambda *arguments: (calls.append(1), original(*arguments))[1])
    resumed = build_bmlr_tvb_table((X, Y), K, path=path, n_jobs=1, **SMALL)
    assert len(calls) == blocks - 2
    for key, value in small_table._arrays().items():
        got = resumed.start[key[6:]] if key.startswith("start_") else getattr(resumed, key)
        np.testing.assert_array_equal(got, value, err_msg=key)
    assert sorted(p.name for p in path.iterdir()) == ["store.json", "store.lock", "tvb_table.json", "tvb_table.npz"]
    calls.clear()
    again = build_bmlr_tvb_table((X, Y), K, path=path, n_jobs=1, **SMALL)
    assert not calls
    assert again.select().omega == small_table.select().omega
    np.testing.assert_array_equal(bmlr_tvb.BMLRTVBTable.load(path).coefficient_cov, small_table.coefficient_cov)
    with pytest.raises(tvb.TableMismatchError, match="n_bootstrap"):
        build_bmlr_tvb_table((X, Y), K, path=path, n_jobs=1, **dict(SMALL, n_bootstrap=5))
    with pytest.raises(tvb.TableMismatchError, match="priors"):
        build_bmlr_tvb_table((X, Y), K, path=path, n_jobs=1, **dict(SMALL, priors=BMLRPriors(noise_precision=2.0)))
    with pytest.raises(tvb.TableMismatchError, match="data_sha256"):
        build_bmlr_tvb_table((X, Y + 1.0), K, path=path, n_jobs=1, **SMALL)


def test_the_process_pool_and_dask_build_the_same_table(small_table):
    pooled = build_bmlr_tvb_table((X, Y), K, n_jobs=2, **SMALL)
    for key in (*bmlr_tvb.PARAMETERS, "elbo"):
        np.testing.assert_array_equal(getattr(pooled, key), getattr(small_table, key), err_msg=key)
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(processes=False, n_workers=1, threads_per_worker=1, dashboard_address=None) \
            as cluster, distributed.Client(cluster) as client:
        on_dask = build_bmlr_tvb_table((X, Y), K, client=client, **SMALL)
    for key in (*bmlr_tvb.PARAMETERS, "elbo"):
        np.testing.assert_array_equal(getattr(on_dask, key), getattr(small_table, key), err_msg=key)


# ------------------------------------------------------------------------------------------------------ errors
def test_bad_input_is_a_named_error(small_table):
    statistics = bmlr_statistics(X, Y)
    with pytest.raises(tvb.GridError, match="empty"):
        build_bmlr_tvb_table(statistics, K, grid=[])
    for grid in ([0.5, 1.5], [0.0, 1.0]):
        with pytest.raises(tvb.PowerRangeError, match=r"\(0, 1\]"):
            build_bmlr_tvb_table(statistics, K, grid=grid)
    for B in (0, 2.5, True):
        with pytest.raises(tvb.BootstrapCountError, match="B must be an integer >= 1"):
            build_bmlr_tvb_table(statistics, K, n_bootstrap=B)
    with pytest.raises(DataError, match="two halves"):
        build_bmlr_tvb_table(statistics.take(np.arange(3)), K)
    with pytest.raises(DataError, match="statistics"):
        build_bmlr_tvb_table(X, K)
    with pytest.raises(tvb.TVBError, match="resampling"):
        build_bmlr_tvb_table(statistics, K, resampling="fresh")
    with pytest.raises(tvb.TVBError, match="priors"):
        build_bmlr_tvb_table(statistics, K, priors={"noise_precision": 1.0})
    with pytest.raises(tvb.TVBError, match="n_jobs"):
        build_bmlr_tvb_table(statistics, K, grid=[1.0], n_bootstrap=1, n_jobs=0)
    for spec in ("coefficient_total", "coefficient[0]", "coefficient_sum[first]", 3):
        with pytest.raises(tvb.UnknownFunctionalError):
            small_table.select(spec)
    with pytest.raises(tvb.FunctionalError, match="component 2 does not exist"):
        small_table.intervals("coefficient_sum[2]")
    with pytest.raises(tvb.FunctionalError, match="coefficient 2 does not exist"):
        small_table.intervals("coefficient[0, 2]")
    with pytest.raises(tvb.TVBError, match="level"):
        small_table.select(level=1.0)
    with pytest.raises(tvb.TVBError, match="point"):
        small_table.coverage(point="half")
    # the statistics and the indices
    bad = RegressionStatistics(statistics.gram.copy(), statistics.cross, statistics.square, 20)
    bad.gram[4, 0, 0] = np.nan
    with pytest.raises(DataError, match="NaN or infinite values in 1 data sets .first at index 4"):
        build_bmlr_from_statistics(bad, K)
    with pytest.raises(DataError, match="J must be an integer"):
        build_bmlr_from_statistics(RegressionStatistics(statistics.gram, statistics.cross, statistics.square, 0), K)
    with pytest.raises(DataError, match="shapes"):
        build_bmlr_from_statistics(RegressionStatistics(statistics.gram, statistics.cross[:, :1], statistics.square,
                                                        20), K)
    with pytest.raises(DataError, match="0 .. N − 1 = 23"):
        build_bmlr_from_statistics(statistics, K, indices=np.array([0, 24]))
    with pytest.raises(DataError, match="R = n_copies = 2"):
        build_bmlr_from_statistics(statistics, K, n_copies=2, indices=np.zeros((3, 5), dtype=int))
    with pytest.raises(DataError, match="integers"):
        build_bmlr_from_statistics(statistics, K, indices=np.array([0.5, 1.0]))
    with pytest.raises(ModelError, match="power"):
        build_bmlr_from_statistics(statistics, K, power=1.5)
    with pytest.raises(DataError, match="more responses than covariates"):
        pooled_noise_precision(bmlr_statistics(X[:, :2], Y[:, :2]))
