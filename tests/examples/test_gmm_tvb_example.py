"""`fgraph run gmm-tvb`: the quick run's files, one replication's VB interval recomputed independently (scikit-learn
fit, scipy Beta quantiles), resuming skips finished replications, options and mismatched settings."""
import json

import numpy as np
import pytest
from scipy import stats

from fgraph.cli import main
from fgraph_experiments import gmm_tvb
from fgraph.store import CorruptRecordWarning


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    out = tmp_path_factory.mktemp("gmm-tvb")
    summary = gmm_tvb.run(quick=True, out=out)
    return summary, out


def test_quick_run_writes_its_files(quick):
    summary, out = quick
    for name in summary["files"]:
        assert (out / name).exists(), name
    assert {"results.md", "coverage.png", "summary.json"} <= set(summary["files"])
    assert json.loads((out / "summary.json").read_text())["settings"]["sizes"] == [200, 400]
    rows = sorted((out / "replications").glob("n*_r*.json"))
    assert len(rows) == 2 * gmm_tvb.QUICK_SETTINGS["replications"]
    text = (out / "results.md").read_text()
    for label in gmm_tvb.LABELS.values():
        assert f"| 200 | {label} |" in text and f"| 400 | {label} |" in text
    # the aggregates are the rows' means
    results = {(r["n"], r["method"]): r for r in summary["results"]}
    for N in (200, 400):
        mine = [json.loads(p.read_text()) for p in rows if json.loads(p.read_text())["n"] == N]
        for method in gmm_tvb.METHODS:
            r = results[N, method]
            assert r["replications"] == len(mine)
            assert r["coverage"] == pytest.approx(np.mean([row[method]["covers"] for row in mine]))
            assert r["mean_length"] == pytest.approx(np.mean([row[method]["length"] for row in mine]))
            assert r["mean_omega"] == pytest.approx(np.mean([row[method]["omega"] for row in mine]))
            assert r["coverage_ci"][0] <= r["coverage"] <= r["coverage_ci"][1]
        assert results[N, "vb"]["mean_omega"] == 1.0
        assert all(np.isclose(gmm_tvb.omega_grid(6, 0.1), row["tvb_grid"]["omega"], rtol=1e-14).any() for row in mine)


def test_one_replications_vb_interval_is_the_beta_marginal_of_an_independent_fit(quick):
    """Replication 1 at N = 400: the data simulated again, fitted by scikit-learn's BayesianGaussianMixture (the
    same priors: its defaults), π of the larger cluster ~ Beta(α_k, Σα − α_k) by scipy; interval and coverage
    indicator as the row records them. Both fits stop on an ELBO tolerance and VB approaches its fixed point slowly
    (scikit-learn at tol 1e-6 stops 0.16 points of α short of it); with scikit-learn run to 1e-13 the row's α is
    within 0.01 of a point (of 401), the interval's ends within 3e-5: compared to 1e-4."""
    from sklearn.mixture import BayesianGaussianMixture

    _, out = quick
    row = json.loads((out / "replications" / "n400_r0001.json").read_text())
    X = gmm_tvb.simulate(400, 0, 1)
    assert X.shape == (400, 2)
    sk = BayesianGaussianMixture(n_components=2, weight_concentration_prior_type="dirichlet_distribution",
                                 init_params="kmeans", random_state=0, tol=1e-13, max_iter=100000).fit(X)
    alpha = np.sort(sk.weight_concentration_)
    a, b = alpha[-1], alpha.sum() - alpha[-1]
    lower, upper = stats.beta.ppf([0.025, 0.975], a, b)
    assert np.sort(row["vb"]["alpha"]) == pytest.approx(alpha, abs=0.02)
    assert [row["vb"]["lower"], row["vb"]["upper"]] == pytest.approx([lower, upper], abs=1e-4)
    assert row["vb"]["length"] == pytest.approx(upper - lower, abs=1e-4)
    assert min(abs(lower - 0.65), abs(upper - 0.65)) > 1e-3  # the indicator is not decided within the tolerance
    assert row["vb"]["covers"] == bool(lower <= 0.65 <= upper)
    # and exactly the Beta quantiles of the Dirichlet the row stores
    stored = np.asarray(row["vb"]["alpha"])
    k = int(np.argmax(stored))
    exact = stats.beta.ppf([0.025, 0.975], stored[k], stored.sum() - stored[k])
    assert [row["vb"]["lower"], row["vb"]["upper"]] == pytest.approx(exact, abs=1e-12)
    # Σα = N + K α₀ (α₀ = 1/K): every point counted once at ω = 1
    assert stored.sum() == pytest.approx(400 + 1.0, rel=1e-9)
    # the TVB intervals are the Beta marginals of their own Dirichlet fits, at ω ≤ 1
    for method in ("tvb_grid", "tvb_sequential"):
        alpha_m = np.asarray(row[method]["alpha"])
        k = int(np.argmax(alpha_m))
        assert [row[method]["lower"], row[method]["upper"]] == pytest.approx(
            stats.beta.ppf([0.025, 0.975], alpha_m[k], alpha_m.sum() - alpha_m[k]), abs=1e-12)
        assert 0 < row[method]["omega"] <= 1
        assert row[method]["covers"] == (row[method]["lower"] <= 0.65 <= row[method]["upper"])


def test_the_simulation_is_the_papers():
    X = gmm_tvb.simulate(20000, 3, 0)
    first = np.linalg.norm(X - gmm_tvb.MEANS[0], axis=1) < np.linalg.norm(X - gmm_tvb.MEANS[1], axis=1)
    assert first.mean() == pytest.approx(0.65, abs=0.03)  # nearest-mean labels, a little misclassification
    assert np.array_equal(X, gmm_tvb.simulate(20000, 3, 0))
    assert not np.array_equal(X[:100], gmm_tvb.simulate(100, 3, 1))
    assert gmm_tvb.FULL_SETTINGS["sizes"] == [1000, 1500, 2000, 2500, 3000]
    assert gmm_tvb.FULL_SETTINGS["replications"] == 500 and gmm_tvb.FULL_SETTINGS["grid_size"] == 100


def _cheap(out, replications, **options):
    return gmm_tvb.run(quick=True, out=out, replications=replications, sizes=[200], sequential=False, **options)


def test_a_rerun_skips_finished_replications_and_refits_an_altered_one(tmp_path, monkeypatch):
    first = _cheap(tmp_path, 2)
    assert first["fitted_this_run"] == 2
    kept = tmp_path / "replications" / "n200_r0000.json"
    content = kept.read_bytes()
    calls = []
    original = gmm_tvb.replicate
    monkeypatch.setattr(gmm_tvb, "replicate", lambda N, r, settings: calls.append((N, r)) or original(N, r, settings))
    again = _cheap(tmp_path, 3)  # one more replication: only that one is fitted
    assert calls == [(200, 2)] and again["fitted_this_run"] == 1
    assert kept.read_bytes() == content
    assert again["results"][0]["replications"] == 3
    covers = [json.loads((tmp_path / "replications" / f"n200_r{r:04d}.json").read_text())["vb"]["covers"]
              for r in range(3)]
    assert again["results"][0]["coverage"] == pytest.approx(np.mean(covers))
    # a row altered on disk is never read: it is reported and fitted again
    row = json.loads(content)
    row["vb"]["covers"] = not row["vb"]["covers"]
    kept.write_text(json.dumps(row))
    calls.clear()
    with pytest.warns(CorruptRecordWarning, match="n200_r0000.json is truncated or altered"):
        third = _cheap(tmp_path, 3)
    assert calls == [(200, 0)] and third["fitted_this_run"] == 1
    assert json.loads(kept.read_text())["vb"] == json.loads(content)["vb"]  # the fit's, not the alteration


def test_an_interrupted_run_resumes_with_the_unfinished_replications(tmp_path, monkeypatch):
    original = gmm_tvb.replicate
    calls = []

    def failing(N, r, settings):
        calls.append(r)
        if r == 1:
            raise KeyboardInterrupt
        return original(N, r, settings)

    monkeypatch.setattr(gmm_tvb, "replicate", failing)
    with pytest.raises(KeyboardInterrupt):
        _cheap(tmp_path, 3)
    assert sorted(p.name for p in (tmp_path / "replications").glob("n*.json")) == ["n200_r0000.json"]
    calls.clear()
    monkeypatch.setattr(gmm_tvb, "replicate", lambda N, r, settings: calls.append(r) or original(N, r, settings))
    resumed = _cheap(tmp_path, 3)
    assert calls == [1, 2] and resumed["fitted_this_run"] == 2
    # the same rows as an uninterrupted run
    fresh = tmp_path / "fresh"
    _cheap(fresh, 3)
    for r in range(3):
        a = json.loads((tmp_path / "replications" / f"n200_r{r:04d}.json").read_text())
        b = json.loads((fresh / "replications" / f"n200_r{r:04d}.json").read_text())
        a.pop("seconds"), b.pop("seconds")
        assert a == b


def test_other_settings_in_a_used_directory_are_a_named_error(tmp_path):
    _cheap(tmp_path, 1)
    with pytest.raises(gmm_tvb.ReplicationsMismatchError, match="sequential"):
        gmm_tvb.run(quick=True, out=tmp_path, replications=1, sizes=[200], sequential=True)
    with pytest.raises(gmm_tvb.ReplicationsMismatchError, match="seed"):
        _cheap(tmp_path, 1, seed=5)


def test_command_line_options_reach_the_run(tmp_path, capsys):
    assert main(["run", "gmm-tvb", "--quick", "--out", str(tmp_path), "--sizes", "150", "--replications", "2",
                 "--no-sequential", "--jobs", "2", "--seed", "4"]) == 0
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["settings"]["sizes"] == [150] and summary["settings"]["replications"] == 2
    assert summary["settings"]["seed"] == 4 and not summary["settings"]["sequential"]
    assert {r["method"] for r in summary["results"]} == {"vb", "tvb_grid"}
    assert summary["jobs"] == 2 and summary["fitted_this_run"] == 2
    assert main(["run", "gmm-tvb", "--quick", "--out", str(tmp_path), "--bogus"]) == 2


def test_replications_run_replication_by_replication_across_sizes(tmp_path):
    # a study stopped part-way then has as many rows at every size (give or take one)
    from fgraph_experiments import _replications

    calls = []
    settings = {"sizes": [300, 100, 200], "replications": 2, "seed": 0}
    rows, fitted = _replications.run_replications(
        tmp_path, settings, lambda size, r, s: calls.append((size, r)) or {"size": size, "r": r},
        lambda size, r: f"n{size}_r{r}.json", "sizes", "test")
    assert calls == [(300, 0), (100, 0), (200, 0), (300, 1), (100, 1), (200, 1)] and fitted == 6
    assert [(row["size"], row["r"]) for row in rows] == sorted(calls)
